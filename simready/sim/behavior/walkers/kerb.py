"""The kerb decision of a background pedestrian: step off on its phase (or its pedestrian signal's green) and in an
accepted gap, decided before the kerb, committed within its stopping distance of it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray
from shapely.geometry import LineString, Point

from simready.sim.core import constants as C
from simready.sim.core.scene import SIGNAL_CODES, Scene
from simready.sim.core.scene.signals import state_codes
from simready.sim.core.state import PedMemory, with_changes


RED = SIGNAL_CODES["red"]
GREEN = SIGNAL_CODES["green"]
#: A pedestrian's phase must last this long beyond the time it needs to cross (s).
PHASE_MARGIN_S = 1.0
#: The deceleration with which a pedestrian on a clear way could still stop before the kerb (m/s²): nearer, it goes.
COMMIT_DECEL_MPS2 = 1.5
#: Step along a walk path when finding where its crossing leaves the roadway (m).
CROSSING_STEP_M = 0.25

#: A background pedestrian accepts a gap when no vehicle reaches its crossing within the time it needs to cross
#: plus this (s).
GAP_MARGIN_S = 2.0
#: Vehicles slower than this do not count for the gap (m/s): a stopped one sees the pedestrian step off.
GAP_MIN_SPEED_MPS = 0.3

#: A background pedestrian judges the gap by the vehicles it can see within this distance (m, centre to centre).
SIGHT_M = 120.0

#: ``(signal columns, u where the crossing leaves the roadway, the crossing's centre line as points, indices of the
#: template's pedestrian signals over its crosswalk)``.
Crossing = tuple[tuple[int, ...], float, tuple[tuple[float, float], ...], tuple[int, ...]]


def crossing(scene: Scene, path: object) -> Crossing | None:
    """``(signal columns, u where the crossing leaves the roadway)`` of a walk path's first crossing; None when it
    never enters the roadway. The columns are those of the signals controlling a lane the crossing runs over."""
    kerb = scene.kerb_u(path)  # type: ignore[arg-type]
    if not math.isfinite(kerb) or scene.kerb_regions is None:
        return None
    length = float(path.length_m)  # type: ignore[attr-defined]
    u = kerb
    pts = [path.point_at(kerb)]  # type: ignore[attr-defined]
    while u < length:
        u = min(u + CROSSING_STEP_M, length)
        p = path.point_at(u)  # type: ignore[attr-defined]
        pts.append(p)
        if not scene.kerb_regions.contains(Point(p)):
            break
    line = LineString([(float(x), float(y)) for x, y in pts]) if len(pts) > 1 else Point(pts[0])
    graph = scene.template.lane_graph
    cols = set()
    for lane in sorted(graph.lanes):
        g = graph.lanes[lane]
        if g.kind not in ("driving", "turn"):
            continue
        hit = scene.signals.stop_lines.get(lane) or scene.signals.side_stop_lines.get(lane)
        if hit is not None and LineString(np.asarray(g.points)).intersects(line):
            cols.add(hit[1])
    t = scene.template
    used = {r.id for r in t.regions if r.type == "crosswalk" and r.shape.intersects(line)}
    heads = tuple(k for k, sig in enumerate(t.pedestrian_signals) if used & set(sig.crosswalks))
    return tuple(sorted(cols)), u, tuple((float(x), float(y)) for x, y in pts), heads


_CROSS_U: dict[tuple[object, ...], float | None] = {}


def crossing_u(path: object, segment: tuple[tuple[float, float], ...]) -> float | None:
    """u at which a lane path first runs over a crossing's centre line (None: it does not), cached."""
    key = (path.key, segment)  # type: ignore[attr-defined]
    if key in _CROSS_U:
        return _CROSS_U[key]
    if len(_CROSS_U) > 20000:
        _CROSS_U.clear()
    out = None
    if len(segment) > 1 and path.key[0] == "lanes":  # type: ignore[attr-defined]
        hit = LineString(np.asarray(path.points)).intersection(LineString(segment))  # type: ignore[attr-defined]
        if not hit.is_empty:
            pts = [c for g in getattr(hit, "geoms", [hit]) for c in g.coords]
            out = min(path.project(float(x), float(y))[0] for x, y in pts)  # type: ignore[attr-defined]
    _CROSS_U[key] = out
    return out


def gap_hazard(view, i: int, cross: Crossing, horizon_s: float) -> bool:  # type: ignore[no-untyped-def]
    """A moving lane-bound actor (vehicle or cyclist) that pedestrian ``i`` can see reaches its crossing within
    ``horizon_s`` at its speed along its own path, or one (seen or not) is on it.

    Seeing is :meth:`simready.sim.core.sight.TickView.visible` (buildings, vehicles and the manifest's occluders block
    the sight line) within :data:`SIGHT_M`: a vehicle hidden behind a parked van or a queue does not count until
    it shows (it then stops the pedestrian at the kerb if it has not committed; vehicles stop for pedestrians in
    their corridor).
    """
    a = view.scene.actors
    paths = view.table.paths
    u, v, present = view.u_py, view.v, view.present_py
    due: list[int] = []
    for j in np.flatnonzero(a.lane_bound).tolist():
        if j == i or not present[j]:
            continue
        u_c = crossing_u(paths[j], cross[2])
        if u_c is None:
            continue
        hl = float(a.hl[j])
        front, rear = u[j] + hl, u[j] - hl
        if rear > u_c + 1.5:
            continue  # past it
        if front >= u_c - 1.5:
            return True  # on it
        vj = float(v[j])
        if vj > GAP_MIN_SPEED_MPS and (u_c - 1.5 - front) / vj < horizon_s and not _stops_at_red(view, j, front, u_c):
            due.append(j)
    if not due:
        return False
    xy = view.xy
    near = [j for j in due if math.hypot(*(xy[j] - xy[i])) <= SIGHT_M]
    if not near:
        return False
    return bool(view.visible(np.full(len(near), i, dtype=np.int64), np.array(near, dtype=np.int64)).any())


def _stops_at_red(view, j: int, front: float, u_c: float) -> bool:  # type: ignore[no-untyped-def]
    """Lane-bound actor ``j`` obeys signals and has a stop line showing red between its front and the crossing
    that it can still stop at with its comfortable deceleration (the pedestrian trusts it to)."""
    scene = view.scene
    a = scene.actors
    if not a.obey_signals[j]:
        return False
    path = view.table.paths[j]
    row = scene.signals.states[min(view.tick, len(scene.signals.states) - 1)]
    side = scene.signals.side_stop_lines if a.background[j] else {}
    vj = max(float(view.v[j]), 0.0)
    brake = vj * vj / (2.0 * float(a.decel_comfort[j]))
    for lane, u0 in zip(path.lanes, path.lane_u0):
        hit = scene.signals.stop_lines.get(lane) or side.get(lane)
        if hit is None:
            continue
        u_stop = u0 + hit[0]
        if front <= u_stop <= u_c and row[hit[1]] == RED and brake < u_stop - front:
            return True
    return False


def phase_open(scene: Scene, tick: int, cols: tuple[int, ...], need_s: float, heads: tuple[int, ...] = ()) -> bool:
    """Whether the pedestrian's phase lasts from ``tick`` for ``need_s`` seconds (to the end of the rollout at
    most): every pedestrian signal of ``heads`` green where the crosswalk has one, else every vehicle signal of
    ``cols`` red."""
    k = int(math.ceil(need_s / scene.dt))
    if heads:
        states = pedestrian_states(scene)
        window = states[tick:min(tick + k + 1, len(states))][:, list(heads)]
        return bool((window == GREEN).all())
    if not cols:
        return True
    states = scene.signals.states
    window = states[tick:min(tick + k + 1, len(states))][:, list(cols)]
    return bool((window == RED).all())


_PED_STATES: dict[int, tuple[Scene, NDArray[np.int8]]] = {}


def pedestrian_states(scene: Scene) -> NDArray[np.int8]:
    """(ticks + 1, P) the template's pedestrian signals' states (:data:`~simready.sim.core.scene.SIGNAL_CODES`) per tick,
    on the signal table's clock; built once per scene."""
    hit = _PED_STATES.get(id(scene))
    if hit is None or hit[0] is not scene:
        m = scene.manifest
        t = (np.arange(m.warmup_ticks + m.clip_ticks + 1) - m.warmup_ticks) * m.dt
        cols = [state_codes(sig, t) for sig in scene.template.pedestrian_signals]
        states = np.stack(cols, axis=1) if cols else np.zeros((len(t), 0), dtype=np.int8)
        if len(_PED_STATES) > 16:
            _PED_STATES.clear()
        hit = _PED_STATES[id(scene)] = (scene, states)
    return hit[1]


def update(view, i: int, mem: PedMemory, path, perceive: bool, cross: Crossing | None) -> tuple[PedMemory, float]:  # type: ignore[no-untyped-def]
    """One tick of a background pedestrian's kerb decision (see the module docstring): the new memory and the
    stopping gap it imposes (inf: none). Re-evaluated on perception ticks, held in between."""
    if mem.mode == "committed" or not math.isfinite(mem.kerb_u) or cross is None:
        return mem, math.inf
    u = float(view.u[i])
    if u > mem.kerb_u + 0.3:
        return replace(mem, mode="committed", hazard_since=None, clear_since=None, seen=False), math.inf
    scene = view.scene
    tick = view.tick
    v = max(float(view.v[i]), 0.0)
    to_kerb = mem.kerb_u - u
    if perceive:
        a = scene.actors
        near = to_kerb < C.KERB_LOOKAHEAD_M + v * v / (2.0 * float(a.decel_comfort[i]))
        cruise = max(float(a.cruise[i]), 0.5)
        need = (cross[1] - u) / cruise + mem.reaction_delay_s + PHASE_MARGIN_S
        across = (cross[1] - mem.kerb_u) / cruise + GAP_MARGIN_S
        blocked = bool(near and (not phase_open(scene, tick, cross[0], need, cross[3])
                                 or gap_hazard(view, i, cross, across)))
    else:
        blocked = mem.seen
    mode = mem.mode
    if blocked:
        hazard_since = mem.hazard_since if mem.hazard_since is not None else tick
        clear_since = None
        mode = "wait"
    else:
        hazard_since = None
        clear_since = mem.clear_since if mem.clear_since is not None else tick
        delay_ticks = int(round(mem.reaction_delay_s / scene.dt))
        if mode == "wait" and tick - clear_since >= delay_ticks:
            mode = "walk"
        if mode == "walk" and perceive and v > 0.0 and to_kerb < v * v / (2.0 * COMMIT_DECEL_MPS2):
            mode = "committed"
    if (mode, hazard_since, clear_since, blocked) == (mem.mode, mem.hazard_since, mem.clear_since, mem.seen):
        new = mem
    else:
        new = with_changes(mem, mode=mode, hazard_since=hazard_since, clear_since=clear_since, seen=blocked)
    return new, (to_kerb - 0.2 if mode == "wait" else math.inf)
