"""Compiled kernels of the planner and its perception (numba): obstacle gaps and accelerations, lane gaps, sight lines.

Why compiled: the planner runs every tick for every actor, and its
perception (leaders, pedestrians in a corridor, sight lines) at the
perception rate. As numpy on arrays of ten actors, or as Python loops,
each of these costs tens of µs, nearly all of it per-call and interpreter
overhead on a few hundred float operations; compiled, a call costs a few
µs, most of it the dispatch of its arguments.

Bits: each kernel repeats the reference's IEEE operations in the same
order — the vectorized forms kept in ``tests/test_planner_fastpath.py`` —
with ``fastmath`` off (no reassociation, no fused multiply-add) and
numpy's error model (division gives inf/NaN instead of raising).
``np.minimum``/``np.maximum`` are written out with their NaN propagation
(:func:`_minimum`, :func:`_maximum`); elsewhere ``x if x < y else y``
matches them because no NaN reaches it. numba's ``sin`` and ``cos`` return
numpy's (and ``math``'s) bits here (tested). Constants of
:mod:`simready.sim.core.constants` come in as arguments: a compiled constant
would outlive an edit of that module in the cache.

The compiled code is cached beside this module (``cache=True``): the
first import on a machine compiles it (a few seconds), later processes
load it.
"""

from __future__ import annotations

import math

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)

#: Rows of the per-actor constants (:attr:`~simready.sim.controllers.planner.RouteTable.consts`); booleans as 0/1.
HL, S0, TIME_GAP, ACCEL_MAX, IDM_ROOT2, DECEL_COMFORT, DECEL_MAX, PARKED, OBEYS = range(9)
#: Rows of the per-tick references the goals and the Python-side obstacles fill: speed reference (m/s),
#: feed-forward (m/s²), commanded acceleration (m/s², NaN coast, inf none), gap-verb command (m/s², inf
#: none), nearest stationary obstacle found outside the kernel (m, inf none).
V_REF, A_FF, COMMANDED, GAP_CMD, FIXED_GAP = range(5)
#: Signal codes (:data:`simready.sim.core.scene.SIGNAL_NAMES`) that stop, and amber.
AMBER, RED, RED_AMBER = 1, 2, 3


@numba.njit(**_JIT)
def _minimum(x: float, y: float) -> float:
    """``np.minimum`` of two floats: NaN if either is NaN."""
    return x if (x <= y or x != x) else y


@numba.njit(**_JIT)
def _maximum(x: float, y: float) -> float:
    """``np.maximum`` of two floats: NaN if either is NaN."""
    return x if (x >= y or x != x) else y


@numba.njit(**_JIT)
def rest_clamp(v: float, a: float) -> float:
    """An actor at rest (v ≤ 0 m/s) cannot be braked backwards: its negative acceleration (m/s²) becomes 0."""
    return 0.0 if (v <= 0.0 and a < 0.0) else a


@numba.njit(**_JIT)
def _obstacle_gaps(consts: np.ndarray, fixed: np.ndarray, u: np.ndarray, v: np.ndarray, present: np.ndarray,
                   lane: np.ndarray, s: np.ndarray, lane_u0: np.ndarray, leaders: np.ndarray, percepts: np.ndarray,
                   xy: np.ndarray, yaw: np.ndarray, stop_u: np.ndarray, stop_col: np.ndarray, codes: np.ndarray,
                   amber2: float, standoff: float, ped_radius: float, gap: np.ndarray, v_obs: np.ndarray) -> None:
    """Nearest obstacle gap (m) and its speed (m/s) per actor, into ``gap`` and ``v_obs``.

    In the planner's order, each replacing the gap only when strictly
    nearer: the leader (bumper to bumper along the follower's path), the
    stop line of a stopping signal (amber: if ``v² ≤ amber2·g``) less
    ``standoff`` plus s0, each perceived pedestrian still ahead, then
    ``fixed`` (junction waits, route ends, kerbs: stationary).
    """
    n = u.shape[0]
    hl = consts[HL]
    for i in range(n):
        gap[i] = np.inf
        v_obs[i] = 0.0
        j = leaders[i]
        if j < 0 or lane[j] < 0:
            continue
        u_j = lane_u0[i, lane[j]] + s[j]
        g = u_j - u[i] - (hl[i] + hl[j])
        if g < gap[i] and present[j] and u_j > u[i] and math.isfinite(g):
            gap[i] = g
            v_obs[i] = v[j]
    if stop_u.shape[1] > 0:
        for i in range(n):
            best = np.inf
            for k in range(stop_u.shape[1]):
                col = stop_col[i, k]
                code = codes[col] if col >= 0 else 0
                g = stop_u[i, k] - u[i] - hl[i]
                stop = code == RED or code == RED_AMBER or (code == AMBER and v[i] * v[i] <= amber2 * _maximum(g, 1e-6))
                if stop and g > 0.0 and consts[OBEYS, i] != 0.0 and g < best:
                    best = g
            b = best + (consts[S0, i] - standoff)
            if b < gap[i]:
                gap[i] = b
                v_obs[i] = 0.0
    for k in range(percepts.shape[0]):
        i, j = percepts[k, 0], percepts[k, 1]
        if not present[j]:
            continue
        dx = (xy[j, 0] - xy[i, 0]) * math.cos(yaw[i]) + (xy[j, 1] - xy[i, 1]) * math.sin(yaw[i])
        g = dx - hl[i] - ped_radius
        if dx > 0.0 and g < gap[i]:
            gap[i] = g
            v_obs[i] = 0.0
    for i in range(n):
        if fixed[i] < gap[i]:
            gap[i] = fixed[i]
            v_obs[i] = 0.0


@numba.njit(**_JIT)
def accelerations(consts: np.ndarray, refs: np.ndarray, u: np.ndarray, v: np.ndarray, present: np.ndarray,
                  lane: np.ndarray, s: np.ndarray, lane_u0: np.ndarray, leaders: np.ndarray, percepts: np.ndarray,
                  xy: np.ndarray, yaw: np.ndarray, stop_u: np.ndarray, stop_col: np.ndarray, codes: np.ndarray,
                  dt: float, fg: float, stand: float, k_track: float, amber2: float, standoff: float,
                  ped_radius: float, a_des: np.ndarray, accel: np.ndarray) -> None:
    """Each actor's desired acceleration (m/s², NaN = coast) into ``a_des``, and ``accel`` = a_des with coast as 0
    and no braking at rest (the ego's is replaced by its actuation afterwards).

    ``consts`` (9, N) and ``refs`` (5, N): rows named at the top of this
    module. ``lane``/``s``: each actor's lane index (−1 off the graph) and
    s on it; ``lane_u0`` (N, L): where each lane starts on each path (NaN
    unused); ``leaders`` (N,): perceived leader (−1 none); ``percepts``
    (K, 2): (vehicle, pedestrian) pairs; ``stop_u``/``stop_col`` (N, M):
    stop lines ahead and their signal columns (−1 padded); ``codes``: this
    tick's signal codes. ``fg``: μ·g (m/s²); ``stand``: standstill speed;
    ``k_track``: speed-tracking gain (1/s).

    Per actor: min(speed tracking or the gap verb, IDM to the nearest
    obstacle), rest handling, limits, then commands (brake, coast) and
    parked or absent actors (0).
    """
    n = u.shape[0]
    gap, v_obs = np.empty(n), np.empty(n)
    _obstacle_gaps(consts, refs[FIXED_GAP], u, v, present, lane, s, lane_u0, leaders, percepts, xy, yaw, stop_u,
                   stop_col, codes, amber2, standoff, ped_radius, gap, v_obs)
    for i in range(n):
        vi, g, vo, vr = v[i], gap[i], v_obs[i], refs[V_REF, i]
        amax, s0 = consts[ACCEL_MAX, i], consts[S0, i]
        gc = refs[GAP_CMD, i]
        a_track = gc if math.isfinite(gc) else refs[A_FF, i] + k_track * (vr - vi)
        x = vi * consts[TIME_GAP, i] + vi * (vi - vo) / consts[IDM_ROOT2, i]
        s_star = s0 + (0.0 if 0.0 > x else x)
        ratio = s_star / g if g > 0.0 else 1e3
        if not ratio < 1e3:
            ratio = 1e3
        a_idm = amax * (1.0 - ratio * ratio)
        a = a_track if a_track < a_idm else a_idm
        closing_in = vi < 0.5 and g < s0 + 1.0 and vo < 0.1
        if vi < stand and closing_in and not a < 0.0:
            a = 0.0
        resting = (a < 0.0 and closing_in) or (a <= 0.0 and vi < stand) or (vr <= 0.0 and vi < stand)
        if resting:
            m = -vi / dt
            a = a if a < m else m
        elif vr <= 0.0:
            m = -vi / dt
            lo = -consts[DECEL_COMFORT, i]
            m = m if m > lo else lo
            a = a if a < m else m
        dm = consts[DECEL_MAX, i]
        lo = -(dm if dm < fg else fg)
        a = a if a > lo else lo
        a = a if a < amax else amax
        c = refs[COMMANDED, i]
        if c != np.inf:
            a = c
        if consts[PARKED, i] != 0.0 or not present[i]:
            a = 0.0
        a_des[i] = a
        accel[i] = rest_clamp(vi, 0.0 if a != a else a)


@numba.njit(**_JIT)
def lane_gaps(lane: np.ndarray, s: np.ndarray, u: np.ndarray, present: np.ndarray, lane_bound: np.ndarray,
              lane_u0: np.ndarray, hl: np.ndarray, gaps: np.ndarray, leaders: np.ndarray, sibling_u0: np.ndarray,
              aware: np.ndarray, window: float) -> None:
    """``gaps`` (N, N): bumper-to-bumper gap (m) from follower i to j ahead on i's path (inf where j is not ahead);
    ``leaders`` (N,): the nearest such j per row, the first of equals (−1: none).

    j is ahead of i when both are present, lane-bound and on the lane
    graph, j ≠ i, and j's position on i's path (where j's lane starts on
    it plus j's s) is finite and beyond i's u. The gap cannot be NaN
    there, so the row minimum is ``np.argmin``'s.

    An ``aware`` follower i (background traffic) also has j ahead when j is
    less than ``window`` into a lane that diverges from i's path: j's
    position on i's path is then where that lane starts (``sibling_u0``,
    the end of the lane both leave) plus j's s.
    """
    n = u.shape[0]
    for i in range(n):
        on_i = lane[i] >= 0 and present[i] and lane_bound[i]
        best, best_g = -1, np.inf
        for j in range(n):
            g = np.inf
            if on_i and j != i and lane[j] >= 0 and present[j] and lane_bound[j]:
                big = lane_u0[i, lane[j]] + s[j]
                if not math.isfinite(big) and aware[i] and s[j] < window:
                    big = sibling_u0[i, lane[j]] + s[j]
                if math.isfinite(big) and big > u[i]:
                    g = big - u[i] - (hl[i] + hl[j])
            gaps[i, j] = g
            if g < best_g:
                best, best_g = j, g
        leaders[i] = best


@numba.njit(**_JIT)
def _corners(xy: np.ndarray, yaw: np.ndarray, hl: np.ndarray, hw: np.ndarray, live: np.ndarray) -> np.ndarray:
    """(N, 4, 2) footprint corners of the ``live`` actors (counter-clockwise from front-left; others unset).

    The compiled twin of :func:`simready.world.frames.footprint_corners` (the definition): corner k is
    ``c + sl_k·(hl·u) + sw_k·(hw·n)``, u = (cos, sin), n = (−sin, cos), the same operations in the same
    order; edge k runs from corner k to corner k + 1 (mod 4).
    """
    n = xy.shape[0]
    out = np.empty((n, 4, 2))
    sl = (1.0, -1.0, -1.0, 1.0)
    sw = (1.0, 1.0, -1.0, -1.0)
    for k in range(n):
        if not live[k]:
            continue
        c, s = math.cos(yaw[k]), math.sin(yaw[k])
        for q in range(4):
            out[k, q, 0] = xy[k, 0] + sl[q] * (hl[k] * c) + sw[q] * (hw[k] * -s)
            out[k, q, 1] = xy[k, 1] + sl[q] * (hl[k] * s) + sw[q] * (hw[k] * c)
    return out


@numba.njit(**_JIT)
def _crosses(ax: float, ay: float, bx: float, by: float, e0x: float, e0y: float, e1x: float, e1y: float) -> bool:
    """Whether sight line a→b crosses edge e0→e1: strictly inside the line, anywhere on the edge (ends included)."""
    dx, dy = bx - ax, by - ay
    ex, ey = e1x - e0x, e1y - e0y
    wx, wy = e0x - ax, e0y - ay
    denom = dx * ey - dy * ex
    t = (wx * ey - wy * ex) / denom
    s = (wx * dy - wy * dx) / denom
    return denom != 0.0 and t > 0.0 and t < 1.0 and s >= 0.0 and s <= 1.0


@numba.njit(**_JIT)
def _blocked(ax: float, ay: float, bx: float, by: float, e0: np.ndarray, e1: np.ndarray, corners: np.ndarray,
             live: np.ndarray, o: int, t: int) -> bool:
    """Whether line a→b crosses a static edge or an edge of a live occluder other than observer o and target t."""
    for m in range(e0.shape[0]):
        if _crosses(ax, ay, bx, by, e0[m, 0], e0[m, 1], e1[m, 0], e1[m, 1]):
            return True
    for k in range(live.shape[0]):
        if not live[k] or k == o or k == t:
            continue
        for q in range(4):
            r = (q + 1) % 4
            if _crosses(ax, ay, bx, by, corners[k, q, 0], corners[k, q, 1], corners[k, r, 0], corners[k, r, 1]):
                return True
    return False


@numba.njit(**_JIT)
def _seen(o: int, t: int, xy: np.ndarray, yaw: np.ndarray, hl: np.ndarray, present: np.ndarray, e0: np.ndarray,
          e1: np.ndarray, corners: np.ndarray, live: np.ndarray, eye_fraction: float) -> bool:
    """Whether t is visible to o: both present and one of the three lines from o's eye
    (``eye_fraction`` of its half length ahead) to t's centre and ±0.8 half lengths along t is unblocked."""
    if not (present[o] and present[t]):
        return False
    r = eye_fraction * hl[o]
    ex, ey = xy[o, 0] + math.cos(yaw[o]) * r, xy[o, 1] + math.sin(yaw[o]) * r
    ct, st = math.cos(yaw[t]), math.sin(yaw[t])
    for off in (0.0, 0.8, -0.8):
        m = off * hl[t]
        if not _blocked(ex, ey, xy[t, 0] + ct * m, xy[t, 1] + st * m, e0, e1, corners, live, o, t):
            return True
    return False


@numba.njit(**_JIT)
def sight_lines(xy: np.ndarray, yaw: np.ndarray, hl: np.ndarray, hw: np.ndarray, present: np.ndarray,
                occluder: np.ndarray, e0: np.ndarray, e1: np.ndarray, observers: np.ndarray, targets: np.ndarray,
                eye_fraction: float, out: np.ndarray) -> None:
    """``out[k]``: whether ``targets[k]`` is visible to ``observers[k]``.

    Occluders: the static edges ``e0``→``e1`` (M, 2) and the footprints of
    present ``occluder`` actors (vehicles and actor occluders), the
    observer's and target's own excepted.
    """
    live = present & occluder
    corners = _corners(xy, yaw, hl, hw, live)
    for k in range(observers.shape[0]):
        out[k] = _seen(observers[k], targets[k], xy, yaw, hl, present, e0, e1, corners, live, eye_fraction)


@numba.njit(**_JIT)
def sight_rows(pos: np.ndarray, yaw: np.ndarray, hl: np.ndarray, hw: np.ndarray, present: np.ndarray,
               occluder: np.ndarray, e0: np.ndarray, e1: np.ndarray, observers: np.ndarray, targets: np.ndarray,
               eye_fraction: float, out: np.ndarray) -> None:
    """:func:`sight_lines` of each recorded row ``r`` (positions ``pos[r, :, :2]``, headings ``yaw[r]``, presence
    ``present[r]``) into ``out[r]``: the same test row by row, in one call."""
    for r in range(pos.shape[0]):
        sight_lines(pos[r, :, :2], yaw[r], hl, hw, present[r], occluder, e0, e1, observers, targets, eye_fraction,
                    out[r])


@numba.njit(**_JIT)
def corridor_pedestrians(xy: np.ndarray, vel: np.ndarray, yaw: np.ndarray, v: np.ndarray, present: np.ndarray,
                         lane_bound: np.ndarray, avoids: np.ndarray, yields: np.ndarray, is_ped: np.ndarray,
                         hl: np.ndarray, hw: np.ndarray,
                         decel_comfort: np.ndarray, occluder: np.ndarray, e0: np.ndarray, e1: np.ndarray,
                         lookahead: float, half_margin: float, ped_radius: float, eye_fraction: float,
                         out: np.ndarray) -> int:
    """(vehicle, pedestrian) pairs, vehicle-major, into ``out`` (≥ N², 2); returns how many.

    A present lane-bound vehicle that ``avoids`` collisions or ``yields`` pairs with a
    present pedestrian within its comfortable stopping distance plus
    ``lookahead`` and its half length, not more than 0.5 m behind its
    front, and inside its corridor (half width + ``half_margin`` +
    ``ped_radius``) or — if it ``yields`` — crossing into it before the
    vehicle arrives (lateral speed held, arrival at max(v, 0.5)); and sees
    it (:func:`sight_lines`).
    """
    n = xy.shape[0]
    live = present & occluder
    corners = _corners(xy, yaw, hl, hw, live)
    m = 0
    for i in range(n):
        if not (lane_bound[i] and present[i] and (avoids[i] or yields[i])):
            continue
        vi = v[i]
        reach = vi * vi / (2.0 * decel_comfort[i]) + lookahead + hl[i]
        c, s = math.cos(yaw[i]), math.sin(yaw[i])
        half = hw[i] + half_margin + ped_radius
        for j in range(n):
            if not (is_ped[j] and present[j]):
                continue
            rx, ry = xy[j, 0] - xy[i, 0], xy[j, 1] - xy[i, 1]
            if not rx * rx + ry * ry < reach * reach:
                continue
            dx = rx * c + ry * s
            dy = -rx * s + ry * c
            ahead = dx - hl[i]
            if not ahead > -0.5:
                continue
            inside = abs(dy) < half
            if not inside and yields[i]:
                vlat = -vel[j, 0] * s + vel[j, 1] * c
                future = dy + vlat * (_maximum(ahead, 0.0) / _maximum(vi, 0.5))
                inside = _minimum(dy, future) < half and _maximum(dy, future) > -half
            if inside and _seen(i, j, xy, yaw, hl, present, e0, e1, corners, live, eye_fraction):
                out[m, 0] = i
                out[m, 1] = j
                m += 1
    return m
