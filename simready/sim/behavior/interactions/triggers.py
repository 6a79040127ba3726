"""When a trigger is due (SPEC §6): ``at``, ``after``, ``when`` and ``arrival``, each answering fire, skip or wait."""

from __future__ import annotations

import math

from simready.scenario.manifest import AfterTrigger, ArrivalTrigger, AtTrigger, Interaction, Trigger, WhenTrigger
from simready.sim.behavior.interactions.conditions import evaluate
from simready.sim.behavior.interactions.verbs import speed_target
from simready.sim.core.profiles import duration_s
from simready.sim.core.scene import at_tick
from simready.sim.core.sight import TickView
from simready.sim.core.state import InteractionState, SimState


def _distance_to(view: TickView, i: int, point: tuple[float, float]) -> float:
    """Along-path distance from actor i to ``point`` when the point lies on its path ahead, else straight-line."""
    path = view.table.paths[i]
    u_p, d_p = path.project(*point)
    if abs(d_p) < 3.0 and u_p >= view.u[i]:
        return float(u_p - view.u[i])
    return float(math.hypot(point[0] - view.xy[i, 0], point[1] - view.xy[i, 1]))


def _travel_time(distance_m: float, v0: float, v1: float, ramp_s: float) -> float:
    """Time to cover a distance while the speed ramps from v0 to v1 over ``ramp_s`` (linear ramp), then holds."""
    ramp_m = 0.5 * (v0 + v1) * ramp_s
    if distance_m <= ramp_m and ramp_s > 0:
        acc = (v1 - v0) / ramp_s
        if abs(acc) < 1e-9:
            return distance_m / max(v0, 1e-9)
        disc = v0 * v0 + 2 * acc * distance_m
        return (-v0 + math.sqrt(max(disc, 0.0))) / acc
    return ramp_s + (distance_m - ramp_m) / v1 if v1 > 0 else math.inf


def _arrival_due(trig: ArrivalTrigger, inter: Interaction, view: TickView) -> bool:
    idx = view.scene.actors.index
    i, j = idx[trig.of], idx[trig.sync_with]
    if trig.at is not None:
        point = (trig.at.x, trig.at.y)
    else:
        assert trig.conflict_point is not None  # an arrival trigger names a point or a conflict point
        point = view.scene.conflict_points[trig.conflict_point]
    v_sync = float(view.v[j])
    if v_sync < 0.1 or not view.present[j]:
        return False
    t_sync = _distance_to(view, j, point) / v_sync
    d_of = _distance_to(view, i, point)
    v0 = float(view.v[i])
    if inter.speed is not None and inter.speed.mode in ("absolute", "delta", "factor"):
        v1 = speed_target(inter.speed, v0)
        assert inter.dynamics is not None  # a speed verb is shaped
        ramp = duration_s(inter.dynamics.shape, inter.dynamics.constraint, inter.dynamics.value, v0, v1)
        t_of = _travel_time(d_of, v0, v1, ramp)
    else:
        t_of = d_of / v0 if v0 > 0.1 else math.inf
    if trig.ttc_s is not None:
        target = trig.ttc_s
    else:
        assert trig.delta_t_s is not None  # the trigger gives one of the two
        target = -trig.delta_t_s
    return math.isfinite(t_of) and t_sync - t_of <= target + 1e-9


def due(trig: Trigger, inter: Interaction, view: TickView, state: SimState, inter_state: InteractionState,
         fired_at: dict[str, int]) -> tuple[str | None, str]:
    """``('fire' | 'skip' | None, reason)`` for a trigger at this tick."""
    tick = view.tick
    if isinstance(trig, AtTrigger):
        return ("fire", "at") if tick >= at_tick(view.scene, trig) else (None, "")
    if isinstance(trig, AfterTrigger):
        if trig.id in fired_at:
            due = fired_at[trig.id] + int(round(trig.delay_s / view.scene.dt))
            return ("fire", f"after {trig.id}") if tick >= due else (None, "")
        status = inter_state.status[trig.id][0]
        if status in ("skipped", "rejected"):
            return "skip", f"{trig.id} was {status}"
        return None, ""
    if isinstance(trig, WhenTrigger):
        if evaluate(trig.condition, view, state):
            return "fire", "condition"
        if view.t_s >= trig.by_latest_s - 1e-9:
            return ("fire", "by_latest") if trig.if_never == "fire" else ("skip", "by_latest")
        return None, ""
    if isinstance(trig, ArrivalTrigger):
        return ("fire", "arrival") if _arrival_due(trig, inter, view) else (None, "")
    raise TypeError(type(trig).__name__)
