"""Background pedestrians in the simulator (SPEC §20): the kerb on their phase or an accepted gap, and keeping apart.

Background pedestrians (tag ``background``, :mod:`simready.scenario.traffic_walkers`)
walk their walkable routes like any pedestrian, with two rules of their own
(the scenario's pedestrians keep :mod:`simready.sim.controllers.pedestrian`'s,
so samples without background pedestrians are unchanged):

* **the kerb**: at a crosswalk under a pedestrian signal (the template's
  ``pedestrian_signals``, imported from OpenDRIVE pedestrian lights) it steps
  off only while that signal is green until it can have crossed (the time
  below); elsewhere, at a crossing whose roadway lanes a signal controls (a lane
  of the crossing with a stop line, the map's own or carried across, see
  :class:`simready.sim.core.scene.SignalTable`) it steps off only on its phase:
  every such signal red from now until it can have crossed (its remaining
  walk to the far kerb at its cruise speed, plus its reaction delay, plus
  :data:`PHASE_MARGIN_S`) — the signal programs are known ahead, as a
  pedestrian countdown shows them; and, signalised or not, only when no
  vehicle or cyclist is on the crossing or reaches it, at its speed along its
  own path, within the accepted gap: the time the pedestrian needs to cross
  plus :data:`GAP_MARGIN_S` (:func:`gap_hazard`; one due at a red light before
  the crossing that it can still stop at comfortably does not count). It decides within
  :data:`~simready.sim.core.constants.KERB_LOOKAHEAD_M` plus its stopping distance
  of the kerb, stops at once (the decision is made before the kerb, so no
  reaction delay), and resumes its reaction delay after the way is clear;
  once it is within its stopping distance of the kerb on a clear way it goes
  (``committed``), so it never stops in the roadway;
* **keeping apart**: it walks :data:`~simready.scenario.traffic_walkers.PED_KEEP_RIGHT_M`
  right of its route's line (``walk.keep_right_m``), so two walking towards
  each other pass, and stops behind a pedestrian ahead on its own walk path
  (:func:`walker_gaps`); two that have each other ahead (crossing or merging
  paths) settle it by id, the later one waits (both, while either is off its
  own offset); after a turn back at a dead end (:class:`Turner`) it is on the
  far side of its new line and drifts back at :data:`RETURN_RATE_MPS`, not
  into a pedestrian beside it;
* **giving way to the scenario's pedestrians** (:func:`yield_to_scenario`):
  the scenario's pedestrians never react to background ones (their timing
  serves the scenario's relation), so a background pedestrian keeps out of
  the stretch a scenario pedestrian walks in the next :data:`CLAIM_S`: it
  stops before a claim crossing its path, and steps sideways (at
  :data:`SIDESTEP_RATE_MPS`, at most :data:`SIDESTEP_MAX_M` off its line, not
  from a sidewalk into the roadway) out of one along its heading — head-on or
  overtaken — or round a scenario pedestrian standing in its way.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray
from shapely.geometry import LineString, Point

from simready.scenario.traffic_walkers import ped_route, road_of
from simready.sim.core import constants as C
from simready.sim.core.reference_paths import ReferencePath, split_walk_key
from simready.sim.core.scene import SIGNAL_CODES, Scene, expand_walk
from simready.sim.core.state import PedMemory, SimState, frozen, with_changes

F = NDArray[np.float64]

RED = SIGNAL_CODES["red"]
GREEN = SIGNAL_CODES["green"]
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
        cols = [np.array([SIGNAL_CODES[sig.state_at(float(x))] for x in t], dtype=np.int8)
                for sig in scene.template.pedestrian_signals]
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
    home = _home_d(view.scene)
    d_now = view.state.coords.d
    for i, found in ahead.items():
        best = math.inf
        for j, along in found.items():
            # Each has the other ahead (crossing or merging paths): the later id waits, the earlier walks on -- unless
            # either is off its own offset (drifting back after a turn at a dead end, head-on on the other's side of
            # the line): then both wait until it has drifted clear.
            if i < j and i in ahead.get(j, {}) and not (_off_home(home, d_now, i) or _off_home(home, d_now, j)):
                continue
            g = along - float(a.hl[i] + a.hl[j]) - FOLLOW_GAP_M
            if g < best:
                best = g
        if best < fixed[i]:
            fixed[i] = best


def _off_home(home: dict[int, float], d: F, i: int) -> bool:
    return i in home and bool(d[i] != home[i])


#: Segments of a walk path searched around a pedestrian's own when projecting another onto it (:func:`_project_pairs`).
PROJECT_WINDOW = 16


def _project_pairs(table, u: F, i: NDArray[np.int64], xy: F) -> tuple[F, F]:  # type: ignore[no-untyped-def]
    """``(u, d)`` of each point ``xy[k]`` projected onto actor ``i[k]``'s path, among the segments from two before
    its own to :data:`PROJECT_WINDOW` after it (the closest; the last segment extends beyond the path's end).

    The first segment does not extend back beyond the path's start: a point behind the start is behind every walker
    on the path (u ≥ 0) anyway, and after a turn back at a dead end (:class:`Turner`) the path starts with a stub
    running the other way, whose extension would lie along the walk back and tie with it (a pedestrian ahead on the
    way back then projected behind the start, unseen)."""
    first = table.locate(u)[i] - table.base[i]
    last = table.nseg[i] - 1
    seg = np.clip(first[:, None] - 2 + np.arange(PROJECT_WINDOW + 2)[None, :], 0, last[:, None])
    flat = table.base[i][:, None] + seg
    p0, dr = table.pts[flat], table.dirs[flat]
    rel = xy[:, None, :] - p0
    along = rel[..., 0] * dr[..., 0] + rel[..., 1] * dr[..., 1]
    length = table.cum[flat + 1] - table.cum[flat]
    lo = 0.0
    hi = np.where(seg == last[:, None], np.inf, length)
    a = np.minimum(np.maximum(along, lo), hi)
    fx, fy = p0[..., 0] + dr[..., 0] * a, p0[..., 1] + dr[..., 1] * a
    dist2 = (xy[:, None, 0] - fx) ** 2 + (xy[:, None, 1] - fy) ** 2
    best = np.argmin(dist2, axis=1)
    r = np.arange(len(i))
    pick = flat[r, best]
    side = dr[r, best, 0] * (xy[:, 1] - fy[r, best]) - dr[r, best, 1] * (xy[:, 0] - fx[r, best])
    return table.cum[pick] + a[r, best], side


# --- yielding to the scenario's pedestrians ------------------------------------------------------------------

#: A scenario pedestrian claims the stretch of its own walk path it covers in this time (s) ...
CLAIM_S = 2.0
#: ... but at least this much ahead of its body (m), and this much behind its centre.
CLAIM_MIN_M = 1.0
CLAIM_BEHIND_M = 0.3
#: Step along a claim when sampling it (m).
CLAIM_STEP_M = 0.2
#: Between a background pedestrian's body and a scenario pedestrian's claimed walk (m, beyond both radii).
YIELD_MARGIN_M = 0.15
#: Only scenario pedestrians within this of a background pedestrian are looked at (m, centre to centre; nearer
#: still, only those whose claim its look can reach).
YIELD_RADIUS_M = 8.0
#: How far ahead on its own walk path a background pedestrian looks for a claim to stop before (m, + its
#: stopping distance at :data:`COMMIT_DECEL_MPS2`).
YIELD_LOOKAHEAD_M = 1.5
#: Sidestep: lateral speed (m/s), most offset from its route's line (m; never into the roadway from a sidewalk).
SIDESTEP_RATE_MPS = 0.8
SIDESTEP_MAX_M = 1.5
#: Lateral speed (m/s) at which a background pedestrian drifts back to its own offset where no scenario pedestrian is
#: about (after a turn back at a dead end it is on the far side of its new route's line, :class:`Turner`).
RETURN_RATE_MPS = 0.5
#: A claim running at least this close to parallel to a background pedestrian's heading (|cos|) is sidestepped;
#: a crossing claim is walked out of along the path.
SIDESTEP_PARALLEL_COS = 0.5


def _claim(view, j: int) -> F:  # type: ignore[no-untyped-def]
    """(K, 2) points of scenario pedestrian ``j``'s claimed walk (see :data:`CLAIM_S`), at its lateral offset."""
    a = view.scene.actors
    path = view.table.paths[j]
    u = float(view.u[j])
    ahead = max(max(float(view.v[j]), 0.0) * CLAIM_S, CLAIM_MIN_M) + float(a.hl[j])
    lo, hi = max(u - CLAIM_BEHIND_M, 0.0), min(u + ahead, float(path.length_m))
    us = np.append(np.arange(lo, hi, CLAIM_STEP_M), hi)
    x, y, yaw = path.xy_yaw(us)
    d = float(view.state.coords.d[j])
    return np.stack([x - d * np.sin(yaw), y + d * np.cos(yaw)], axis=1)


def _home_d(scene: Scene) -> dict[int, float]:
    """Per background pedestrian, its own lateral offset from its route's line (−``walk.keep_right_m``)."""
    hit = _HOME.get(id(scene))
    if hit is None or hit[0] is not scene:
        a = scene.actors
        out = {}
        for actor in scene.manifest.actors:
            i = a.index[actor.id]
            if a.background[i] and a.is_ped[i]:
                out[i] = -float(actor.walk.keep_right_m) if actor.walk is not None else 0.0
        if len(_HOME) > 32:
            _HOME.clear()
        hit = _HOME[id(scene)] = (scene, out)
    return hit[1]


_HOME: dict[int, tuple[Scene, dict[int, float]]] = {}


def yield_to_scenario(view, walkers: tuple[int, ...], fixed: F) -> dict[int, float]:  # type: ignore[no-untyped-def]
    """Background pedestrians give way to the scenario's pedestrians (whose programmed walk is untouched).

    Each scenario pedestrian claims the stretch of its walk path ahead of it
    (:data:`CLAIM_S` at its speed, at least :data:`CLAIM_MIN_M` past its body).
    A background pedestrian whose body is within both radii plus
    :data:`YIELD_MARGIN_M` of a claim stands and steps sideways out of it when
    the claim runs along its own heading (head-on or overtaking), or walks on
    out of it when the claim crosses its path; one outside every claim stops
    before its own path enters one (within :data:`YIELD_LOOKAHEAD_M` plus its
    stopping distance), and drifts back to its own offset when that is clear.
    Stateless beyond the offset ``d`` itself (part of the state), so
    checkpoints and replays need nothing new.

    Gaps go into ``fixed``; returns the next tick's lateral offset of each
    background pedestrian that moves sideways (empty: none does).
    """
    scene = view.scene
    a = scene.actors
    present = view.present
    scenario = [j for j in np.flatnonzero(a.is_ped & ~a.background & present).tolist()]
    out: dict[int, float] = {}
    home = _home_d(scene)
    d_now = view.state.coords.d
    if not scenario:
        # Only the drift back to its own offset (after a turn back at a dead end, :class:`Turner`).
        step = RETURN_RATE_MPS * scene.dt
        peds = None
        for i in walkers:
            if present[i] and i in home and d_now[i] != home[i]:
                d_i, h = float(d_now[i]), home[i]
                d_next = h if abs(h - d_i) <= step else d_i + math.copysign(step, h - d_i)
                if peds is None:
                    peds = np.flatnonzero(a.is_ped & present)
                if _drift_clear(view, i, d_next, peds):
                    out[i] = d_next
        return out
    xy = view.xy
    claims: dict[int, F] = {}
    step = SIDESTEP_RATE_MPS * scene.dt
    live = np.array([i for i in walkers if present[i]], dtype=np.int64)
    if not len(live):
        return out
    # (walkers, scenario pedestrians) within the radius, found at once; the walkers near none only drift home.
    # A claim reaches its own length (plus the part behind) from its pedestrian, the walker's look its own from it:
    # beyond both plus the two radii and the margin, nothing can meet.
    sc = np.array(scenario, dtype=np.int64)
    v = np.maximum(view.v, 0.0)
    reach = np.maximum(v[sc] * CLAIM_S, CLAIM_MIN_M) + a.hl[sc] + CLAIM_BEHIND_M + a.radius[sc]
    look = YIELD_LOOKAHEAD_M + v[live] ** 2 / (2.0 * COMMIT_DECEL_MPS2) + 2.0 * a.radius[live]
    limit = np.minimum(reach[None, :] + look[:, None] + YIELD_MARGIN_M + 0.5, YIELD_RADIUS_M)
    close = np.hypot(xy[live, None, 0] - xy[None, sc, 0], xy[live, None, 1] - xy[None, sc, 1]) < limit
    # Only walkers near a scenario pedestrian or off their own offset have anything to do.
    away = np.array([d_now[i] != home.get(i, d_now[i]) for i in live.tolist()], dtype=bool) if home else False
    busy = np.flatnonzero(close.any(axis=1) | away).tolist()
    for row in busy:
        i = int(live[row])
        near = [scenario[k] for k in np.flatnonzero(close[row]).tolist()]
        d_i = float(d_now[i])
        target = home.get(i, d_i)
        if near:
            for j in near:
                if j not in claims:
                    claims[j] = _claim(view, j)
            target = _give_way(view, i, near, claims, d_i, target, fixed, step)
        if target != d_i:
            out[i] = d_i + max(min(target - d_i, step), -step)
    return out


def _drift_clear(view, i: int, d_next: float, peds: NDArray[np.int64]) -> bool:  # type: ignore[no-untyped-def]
    """Background pedestrian ``i`` stepping to offset ``d_next`` comes nearer to no pedestrian that it would then be
    within :data:`YIELD_MARGIN_M` of (bodies as discs): it does not drift sideways into one beside it."""
    a = view.scene.actors
    xy = view.xy
    others = peds[peds != i]
    if not len(others):
        return True
    nx, ny = view.table.paths[i].point_at(float(view.u[i]), d_next)
    now = np.hypot(xy[others, 0] - xy[i, 0], xy[others, 1] - xy[i, 1])
    then = np.hypot(xy[others, 0] - nx, xy[others, 1] - ny)
    return not bool(((then < a.radius[others] + a.radius[i] + YIELD_MARGIN_M) & (then < now)).any())


def _give_way(view, i: int, near: list[int], claims: dict[int, F], d_i: float, home: float, fixed: F,  # type: ignore[no-untyped-def]
              step: float) -> float:
    """Background pedestrian ``i``'s gap (into ``fixed``) and lateral target among the claims of ``near``."""
    scene = view.scene
    a = scene.actors
    path = view.table.paths[i]
    u_i = float(view.u[i])
    ri = float(a.radius[i])
    v = max(float(view.v[i]), 0.0)
    look = YIELD_LOOKAHEAD_M + v * v / (2.0 * COMMIT_DECEL_MPS2) + ri
    # Its own walk from its centre on, at its present offset: the first point too close to a claim.
    end = min(u_i + look, float(path.length_m))
    us = np.arange(u_i, end, CLAIM_STEP_M) if end > u_i else np.array([u_i])
    x, y, yaw = path.xy_yaw(us)
    pts = np.stack([x - d_i * np.sin(yaw), y + d_i * np.cos(yaw)], axis=1)
    first = None  # (index on its walk, j, index on the claim, r)
    for j in near:
        r = ri + float(a.radius[j]) + YIELD_MARGIN_M
        c = claims[j]
        dist = np.hypot(pts[:, None, 0] - c[None, :, 0], pts[:, None, 1] - c[None, :, 1])
        close = np.flatnonzero(dist.min(axis=1) < r)
        if len(close) and (first is None or close[0] < first[0]):
            first = (int(close[0]), j, int(np.argmin(dist[close[0]])), r)
    if first is None:
        # Back towards its own offset only where that is clear of every claim.
        if home != d_i:
            back = np.asarray(path.point_at(u_i, d_i + max(min(home - d_i, step), -step)))
            for j in near:
                r = ri + float(a.radius[j]) + YIELD_MARGIN_M + 0.1
                if np.hypot(*(claims[j] - back).T).min() < r:
                    return d_i
        return home
    k, j, m, r = first
    c = claims[j]
    hx, hy = math.cos(float(yaw[k])), math.sin(float(yaw[k]))
    seg = c[min(m + 1, len(c) - 1)] - c[max(m - 1, 0)]
    norm = math.hypot(float(seg[0]), float(seg[1]))
    cos = abs(float(seg[0]) * hx + float(seg[1]) * hy) / norm if norm > 1e-9 else 1.0
    standing = float(view.v[j]) < 0.1
    # It stands (before the claim, or where it is when already in it) ...
    g = max(float(us[k] - u_i) - CLAIM_STEP_M, 0.0)
    if k == 0 and not standing and cos < SIDESTEP_PARALLEL_COS:
        return d_i  # in a claim that crosses its path: it walks on out of it
    if g < fixed[i]:
        fixed[i] = g
    if not standing and cos < SIDESTEP_PARALLEL_COS:
        return d_i  # a moving claim crossing its path ahead: it waits for it to pass
    # ... and steps sideways out of a claim along its heading (or round a scenario pedestrian standing in its way),
    # away from the claim's line (right when on it).
    side = hx * (float(c[m][1]) - float(pts[k][1])) - hy * (float(c[m][0]) - float(pts[k][0]))  # +: claim to its left
    d_line = d_i + side
    target = d_line - r - 0.05 if side >= -1e-6 else d_line + r + 0.05
    return _in_reach(scene, path, u_i, d_i, target)


def _in_reach(scene: Scene, path, u: float, d_now: float, target: float) -> float:  # type: ignore[no-untyped-def]
    """``target`` capped at :data:`SIDESTEP_MAX_M` and, for a pedestrian off the roadway, short of it."""
    target = max(min(target, SIDESTEP_MAX_M), -SIDESTEP_MAX_M)
    roads = scene.kerb_regions
    if roads is None or roads.contains(Point(path.point_at(u, d_now))):
        return target
    step = 0.1 if target > d_now else -0.1
    best = d_now
    d = d_now
    while (d + step - target) * step <= 1e-9:
        d += step
        if roads.contains(Point(path.point_at(u, d))):
            break
        best = d
    if abs(target - best) < abs(step):
        best = target if not roads.contains(Point(path.point_at(u, target))) else best
    return best


# --- keeping walking: a new route at the route's end ----------------------------------------------------------

#: A background pedestrian this near its route's end (m, along its path) turns onto a new route.
TURN_AT_END_M = 1.5
#: A new route after a turn is at least this long (m; or to a dead end).
TURN_ROUTE_M = 60.0
#: A new route's first nodes are skipped while the walk from the walker's place would turn back at them by more than
#: this angle's cosine (a fold: a dead end's node behind it, :func:`_unfold`).
FOLD_COS = -0.5


def turn_seed(sample_id: str, actor_id: str, turn: int) -> int:
    """The seed of pedestrian ``actor_id``'s ``turn``-th new route: a function of its id and the count of its turns
    (not a shared stream: no other actor's draws move it, and the brake and coast branches share it)."""
    digest = hashlib.sha256(f"{sample_id}/walk_turn/{actor_id}/{turn}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class Turner:
    """Background pedestrians keep walking (SPEC §20): one that comes within :data:`TURN_AT_END_M` of its route's
    end turns onto a new route of the walkable graph from the route's last node, on from there as the spawner's
    (:func:`simready.scenario.traffic_walkers.ped_route`: not back the way it came unless at a dead end, at most
    one crossing, walked to its far side, at least :data:`TURN_ROUTE_M` long), drawn from a generator seeded by
    :func:`turn_seed`. It keeps its place, speed, lateral offset and walking parameters (turning back, the route's
    first nodes behind it, :func:`_unfold`, it walks back from where it is, its offset taken from the line back: the
    same place, on that line's other side, whence it drifts home at :data:`RETURN_RATE_MPS`); its kerb memory starts
    afresh on the new path (``walk``, no hazard, the new path's kerb) and ``turns`` counts up, so a checkpoint
    holds all the turn needs (restore ≡ continue). Scenario pedestrians keep their routes and stop at the end."""

    def __init__(self, scene: Scene) -> None:
        a = scene.actors
        self.rows = np.array([i for i in range(len(a)) if a.background[i] and a.is_ped[i]], dtype=np.int64)
        self._road: object = None
        self._road_done = False

    def _road_shape(self, scene: Scene) -> object:
        if not self._road_done:
            self._road, self._road_done = road_of(scene.template), True
        return self._road

    def step(self, scene: Scene, state: SimState, paths: Sequence[ReferencePath]) -> SimState:
        """``state`` with the background pedestrians at their route's end on new routes (the same object when
        none is)."""
        rows = self.rows
        present = state.bodies.present
        u = state.coords.u
        keys = state.coords.path_keys
        due = [i for i in rows.tolist() if present[i] and keys[i][0] == "walk"
               and paths[i].length_m - float(u[i]) <= TURN_AT_END_M]
        if not due:
            return state
        graph = scene.template.walk_graph
        new_keys, u_new = list(keys), np.array(u)
        d_old = state.coords.d
        d_new = np.array(d_old)
        peds = list(state.control.peds)
        changed = False
        for i in due:
            mem = peds[i]
            assert mem is not None
            path = paths[i]
            _, _, nodes = split_walk_key(keys[i])
            nodes = _expanded(scene, nodes)
            last = nodes[-1]
            came = nodes[-2] if len(nodes) > 1 else last
            rng = np.random.default_rng(turn_seed(scene.manifest.sample_id, scene.actors.ids[i], mem.turns))
            route, _ = ped_route(rng, graph, self._road_shape(scene), last, came, TURN_ROUTE_M, 0.0)
            if len(set(route)) < 2:
                continue  # an isolated node: it stays
            x, y = path.point_at(float(u[i]))
            nodes_new, folded = _unfold(scene, (x, y), tuple(route))
            new = scene.walk_path((x, y), nodes_new)
            new_keys[i] = new.key
            u_new[i] = 0.0
            if folded:
                # It stays where it is: its offset from the new line is where its body is, across a line that now
                # runs the other way (it drifts back to its own side at RETURN_RATE_MPS, yield_to_scenario).
                wx, wy = path.point_at(float(u[i]), float(d_old[i]))
                yaw0 = float(new.xy_yaw(0.0)[2])
                d_new[i] = math.cos(yaw0) * (wy - y) - math.sin(yaw0) * (wx - x)
            peds[i] = PedMemory("walk", None, None, scene.kerb_u(new), mem.stop_draw, mem.reaction_delay_s, False,
                                mem.turns + 1)
            changed = True
        if not changed:
            return state
        if (d_new != d_old).any():
            coords = with_changes(state.coords, path_keys=tuple(new_keys), u=frozen(u_new), d=frozen(d_new))
        else:
            coords = with_changes(state.coords, path_keys=tuple(new_keys), u=frozen(u_new))
        control = with_changes(state.control, peds=tuple(peds))
        return state.evolve(coords=coords, control=control)


def _expanded(scene: Scene, nodes: tuple[str, ...]) -> tuple[str, ...]:
    return expand_walk(scene.template, nodes)


def _unfold(scene: Scene, start: tuple[float, float], route: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """``route`` without the leading nodes at which a walk from ``start`` would fold back (turn by more than
    :data:`FOLD_COS`'s angle), and whether any was dropped: a walker turning back at a dead end walks back from
    where it is rather than on to the dead end's node first and back over its own steps (a stub on which the
    offset it keeps right of its line lay on the other side of the line back)."""
    nodes = _expanded(scene, route)
    xy = scene.template.walk_graph.nodes
    k = 0
    here = start
    while k < len(nodes) - 1:
        p0, p1 = xy[nodes[k]], xy[nodes[k + 1]]
        ax, ay = p0[0] - here[0], p0[1] - here[1]
        bx, by = p1[0] - p0[0], p1[1] - p0[1]
        na, nb = math.hypot(ax, ay), math.hypot(bx, by)
        if na < 1e-3 or nb < 1e-3 or (ax * bx + ay * by) / (na * nb) >= FOLD_COS:
            break
        k += 1
    return (tuple(nodes[k:]), True) if k else (route, False)
