"""The truth of a scenario condition (SPEC §6) on one tick's snapshot: signals, collisions, distances, times to
collision, headways, sight, regions reached, speeds, standstills and their ``not`` / ``and`` / ``or``.

Conditions on an absent actor are false.
"""

from __future__ import annotations

import math

import numpy as np

from simready.scenario.manifest import (
    AndCondition,
    Circle,
    CollisionCondition,
    Condition,
    DistanceCondition,
    HeadwayCondition,
    LaneWindow,
    NotCondition,
    OrCondition,
    ReachesCondition,
    Region,
    SignalCondition,
    SpeedCondition,
    StandstillCondition,
    TtcCondition,
    VisibleCondition,
)
from simready.sim.core import geometry as geo
from simready.sim.core.scene import SIGNAL_CODES, lane_window_contains
from simready.sim.core.sight import TickView
from simready.sim.core.state import SimState


def _cmp(value: float, op: str, threshold: float) -> bool:
    return value < threshold if op == "lt" else value > threshold


def _along_lane(view: TickView, i: int, j: int) -> float:
    lane, s = view.lanes
    u0 = view.table.lane_u0
    if lane[j] >= 0 and np.isfinite(u0[i, lane[j]]):
        return abs(float(u0[i, lane[j]] + s[j] - view.u[i]))
    if lane[i] >= 0 and np.isfinite(u0[j, lane[i]]):
        return abs(float(u0[j, lane[i]] + s[i] - view.u[j]))
    return math.inf


def _reaches(view: TickView, i: int, region: Region) -> bool:
    x, y = (float(c) for c in view.xy[i])
    if isinstance(region, Circle):
        return math.hypot(x - region.x, y - region.y) <= region.r
    if isinstance(region, LaneWindow):
        return lane_window_contains(view.scene, region, (x, y))
    poly = np.array([[p.x, p.y] for p in region.points])
    return bool(geo.point_in_polygon(np.array([x]), np.array([y]), poly)[0])


def evaluate(cond: Condition, view: TickView, state: SimState) -> bool:
    """Truth of a (possibly composite) condition on this tick's snapshot."""
    if isinstance(cond, NotCondition):
        return not evaluate(cond.of, view, state)
    if isinstance(cond, AndCondition):
        return all(evaluate(c, view, state) for c in cond.of)
    if isinstance(cond, OrCondition):
        return any(evaluate(c, view, state) for c in cond.of)
    idx = view.scene.actors.index
    present = view.present
    if isinstance(cond, SignalCondition):
        col = view.scene.signals.column(cond.signal)
        return int(view.scene.signals.states[view.tick, col]) == SIGNAL_CODES[cond.state]
    if isinstance(cond, CollisionCondition):
        a = idx[cond.a]
        b = idx[cond.b] if cond.b is not None else None
        return any((a in pair) and (b is None or b in pair) for pair in state.world.contacts)
    if isinstance(cond, (DistanceCondition, TtcCondition, HeadwayCondition, VisibleCondition)):
        a = idx[cond.a]
        b = idx[cond.to] if isinstance(cond, VisibleCondition) else idx[cond.b]
        if not (present[a] and present[b]):
            return False
        if isinstance(cond, VisibleCondition):
            return view.visible_pair(b, a)
        if isinstance(cond, DistanceCondition):
            value = view.centre_distance(a, b) if cond.metric == "euclidean" else _along_lane(view, a, b)
            return _cmp(value, cond.op, cond.value_m)
        if isinstance(cond, TtcCondition):
            return _cmp(view.ttc(a, b), cond.op, cond.value_s)
        gap = float(view.lane_gaps[a, b])
        v = float(view.v[a])
        return _cmp(gap / v if v > 0 and math.isfinite(gap) else math.inf, cond.op, cond.value_s)
    i = idx[cond.actor]
    if not present[i]:
        return False
    if isinstance(cond, ReachesCondition):
        return _reaches(view, i, cond.region)
    if isinstance(cond, SpeedCondition):
        return _cmp(float(view.v[i]), cond.op, cond.value_mps)
    if isinstance(cond, StandstillCondition):
        return state.control.standstill[i] * view.scene.dt >= cond.for_s - 1e-9
    raise TypeError(f"unhandled condition {type(cond).__name__}")
