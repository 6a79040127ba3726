"""Background pedestrians in the simulator (SPEC §20): the kerb on their phase or an accepted gap, and keeping apart.

Background pedestrians (tag ``background``, :mod:`simready.scenario.traffic_walkers`)
walk their walkable routes like any pedestrian, with two rules of their own
(the scenario's pedestrians keep :mod:`simready.sim.controllers.pedestrian`'s,
so samples without background pedestrians are unchanged):

* **the kerb**: at a crossing whose roadway lanes a signal controls (a lane
  of the crossing with a stop line, the map's own or carried across, see
  :class:`simready.sim.scene.SignalTable`) it steps off only on its phase:
  every such signal red from now until it can have crossed (its remaining
  walk to the far kerb at its cruise speed, plus its reaction delay, plus
  :data:`PHASE_MARGIN_S`) — the signal programs are known ahead, as a
  pedestrian countdown shows them; and, signalised or not, only when no
  vehicle or cyclist is on the crossing or reaches it, at its speed along its
  own path, within the accepted gap: the time the pedestrian needs to cross
  plus :data:`GAP_MARGIN_S` (:func:`gap_hazard`). It decides within
  :data:`~simready.sim.constants.KERB_LOOKAHEAD_M` plus its stopping distance
  of the kerb, stops at once (the decision is made before the kerb, so no
  reaction delay), and resumes its reaction delay after the way is clear;
  once it is within its stopping distance of the kerb on a clear way it goes
  (``committed``), so it never stops in the roadway;
* **keeping apart**: it walks :data:`~simready.scenario.traffic_walkers.PED_KEEP_RIGHT_M`
  right of its route's line (``walk.keep_right_m``), so two walking towards
  each other pass, and stops behind a pedestrian ahead on its own walk path
  (:func:`walker_gaps`); two that have each other ahead (crossing or merging
  paths) settle it by id, the later one waits.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray
from shapely.geometry import LineString, Point

from simready.sim import constants as C
from simready.sim.scene import SIGNAL_CODES, Scene
from simready.sim.state import PedMemory, with_changes

F = NDArray[np.float64]

RED = SIGNAL_CODES["red"]
#: A pedestrian's phase must last this long beyond the time it needs to cross (s).
PHASE_MARGIN_S = 1.0
#: The deceleration with which a pedestrian on a clear way could still stop before the kerb (m/s²): nearer, it goes.
COMMIT_DECEL_MPS2 = 1.5
#: Step along a walk path when finding where its crossing leaves the roadway (m).
CROSSING_STEP_M = 0.25
#: A pedestrian stops behind another this far ahead of it on its walk path or nearer (m, centre to centre) ...
FOLLOW_LOOKAHEAD_M = 3.0
#: ... when their sides come within this of each other across its path (m).
FOLLOW_MARGIN_M = 0.25
#: The gap it keeps to the one ahead beyond the IDM's standstill gap (m).
FOLLOW_GAP_M = 0.2

#: A background pedestrian accepts a gap when no vehicle reaches its crossing within the time it needs to cross
#: plus this (s).
GAP_MARGIN_S = 2.0
#: Vehicles slower than this do not count for the gap (m/s): a stopped one sees the pedestrian step off.
GAP_MIN_SPEED_MPS = 0.3

#: ``(signal columns, u where the crossing leaves the roadway, the crossing's centre line as points)``.
Crossing = tuple[tuple[int, ...], float, tuple[tuple[float, float], ...]]


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
    return tuple(sorted(cols)), u, tuple((float(x), float(y)) for x, y in pts)


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
    """A moving lane-bound actor (vehicle or cyclist) reaches pedestrian ``i``'s crossing within ``horizon_s`` at
    its speed along its own path, or is on it."""
    a = view.scene.actors
    paths = view.table.paths
    u, v, present = view.u_py, view.v, view.present_py
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
        if vj > GAP_MIN_SPEED_MPS and (u_c - 1.5 - front) / vj < horizon_s:
            return True
    return False


def phase_open(scene: Scene, tick: int, cols: tuple[int, ...], need_s: float) -> bool:
    """Whether every signal of ``cols`` is red from ``tick`` for ``need_s`` seconds (to the end of the rollout at most)."""
    if not cols:
        return True
    states = scene.signals.states
    k = int(math.ceil(need_s / scene.dt))
    window = states[tick:min(tick + k + 1, len(states))][:, list(cols)]
    return bool((window == RED).all())


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
        blocked = bool(near and (not phase_open(scene, tick, cross[0], need) or gap_hazard(view, i, cross, across)))
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


def walker_gaps(view, walkers: tuple[int, ...], fixed: F) -> None:  # type: ignore[no-untyped-def]
    """Gaps (m) into ``fixed`` to the nearest pedestrian ahead on each background pedestrian's own walk path (within
    :data:`FOLLOW_LOOKAHEAD_M` along it, sides closer than :data:`FOLLOW_MARGIN_M` across it)."""
    a = view.scene.actors
    present = view.present
    mine = [i for i in walkers if present[i]]
    if not mine:
        return
    peds = np.flatnonzero(a.is_ped & present)
    if len(peds) < 2:
        return
    xy = view.xy
    idx = np.array(mine)
    dx = xy[peds, 0][None, :] - xy[idx, 0][:, None]
    dy = xy[peds, 1][None, :] - xy[idx, 1][:, None]
    dist2 = dx * dx + dy * dy
    close = dist2 < FOLLOW_LOOKAHEAD_M ** 2
    close &= peds[None, :] != idx[:, None]
    if not close.any():
        return
    rows, cols = np.nonzero(close)
    pi, pj = idx[rows], peds[cols]
    u_j, d_j = _project_pairs(view.table, view.u, pi, xy[pj])
    along = u_j - view.u[pi]
    hit = (along > 0.0) & (along < FOLLOW_LOOKAHEAD_M) & (np.abs(d_j - view.state.coords.d[pi]) < a.hw[pi] + a.hw[pj] + FOLLOW_MARGIN_M)
    ahead: dict[int, dict[int, float]] = {}
    for i, j, g in zip(pi[hit].tolist(), pj[hit].tolist(), along[hit].tolist()):
        ahead.setdefault(i, {})[j] = g
    for i, found in ahead.items():
        best = math.inf
        for j, along in found.items():
            # Each has the other ahead (crossing or merging paths): the later id waits, the earlier walks on.
            if i < j and i in ahead.get(j, {}):
                continue
            g = along - float(a.hl[i] + a.hl[j]) - FOLLOW_GAP_M
            if g < best:
                best = g
        if best < fixed[i]:
            fixed[i] = best


#: Segments of a walk path searched around a pedestrian's own when projecting another onto it (:func:`_project_pairs`).
PROJECT_WINDOW = 16


def _project_pairs(table, u: F, i: NDArray[np.int64], xy: F) -> tuple[F, F]:  # type: ignore[no-untyped-def]
    """``(u, d)`` of each point ``xy[k]`` projected onto actor ``i[k]``'s path, among the segments from two before
    its own to :data:`PROJECT_WINDOW` after it (the closest; the end segments extend beyond the path's ends)."""
    first = table.locate(u)[i] - table.base[i]
    last = table.nseg[i] - 1
    seg = np.clip(first[:, None] - 2 + np.arange(PROJECT_WINDOW + 2)[None, :], 0, last[:, None])
    flat = table.base[i][:, None] + seg
    p0, dr = table.pts[flat], table.dirs[flat]
    rel = xy[:, None, :] - p0
    along = rel[..., 0] * dr[..., 0] + rel[..., 1] * dr[..., 1]
    length = table.cum[flat + 1] - table.cum[flat]
    lo = np.where(seg == 0, -np.inf, 0.0)
    hi = np.where(seg == last[:, None], np.inf, length)
    a = np.minimum(np.maximum(along, lo), hi)
    fx, fy = p0[..., 0] + dr[..., 0] * a, p0[..., 1] + dr[..., 1] * a
    dist2 = (xy[:, None, 0] - fx) ** 2 + (xy[:, None, 1] - fy) ** 2
    best = np.argmin(dist2, axis=1)
    r = np.arange(len(i))
    pick = flat[r, best]
    side = dr[r, best, 0] * (xy[:, 1] - fy[r, best]) - dr[r, best, 1] * (xy[:, 0] - fx[r, best])
    return table.cum[pick] + a[r, best], side
