"""Background pedestrians giving way to the scenario's pedestrians: stopping before the stretch a scenario pedestrian
walks in the next :data:`CLAIM_S`, stepping sideways out of one along its heading, drifting back home when clear.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from shapely.geometry import Point

from simready.sim.core.scene import Scene
from simready.sim.behavior.walkers.kerb import COMMIT_DECEL_MPS2
from simready.sim.behavior.walkers.spacing import home_d

F = NDArray[np.float64]

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
    home = home_d(scene)
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
