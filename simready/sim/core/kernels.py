"""Compiled per-actor kernels of the tick (numba): bodies on their paths, footprint contacts, integration,
lane lookup, the divergence predicate, and the swept time-to-collision the metrics evaluate.

Why compiled: these loops run every tick for every actor (the metrics: for
every pair of every recorded tick). As Python they
cost ~60 µs a tick for ten actors, most of it interpreter overhead on a
few hundred float operations; compiled, a call costs ~1–2 µs, most of it
the dispatch.

Bits: each kernel repeats the reference's IEEE operations in the same
order (:func:`simready.sim.core.kinematics.path_bodies_np`,
:func:`simready.sim.controllers.longitudinal.integrate`, and the vectorized
forms kept as bit references in ``tests/test_sim_fastpath.py``), with
``fastmath`` off (no reassociation, no fused multiply-add) and numpy's
error model (division gives inf/NaN instead of raising). numba's
``sin``, ``cos`` and ``hypot`` return numpy's bits here (tested); its
``atan2`` does not always, so the two arctangents of the body model stay
numpy calls between :func:`place_on_paths` and :func:`pack_bodies`.

The compiled code is cached beside this module (``cache=True``): the
first import on a machine compiles it (a few seconds), later processes
load it.
"""

from __future__ import annotations

import math

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)

#: Rows of :func:`place_on_paths`' output.
X, Y, Z, YAW_C, OMEGA, BIG_V, VX, VY = range(8)
#: Flags :func:`place_on_paths` returns.
FINITE, LATERAL = 1, 2


@numba.njit(**_JIT)
def _segment(cum: np.ndarray, b: int, last: int, u: float) -> int:
    """Segment (0..last) holding ``u`` on the row starting at ``b``: ``#{j in 1..last : cum[b+j] ≤ u}``.

    ``cum`` is non-decreasing along a row, so this is a binary search; NaN
    compares false everywhere and lands on segment 0, as the full search does.
    """
    lo, hi = 0, last
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cum[b + mid] <= u:
            lo = mid
        else:
            hi = mid - 1
    return lo


@numba.njit(**_JIT)
def place_on_paths(cum: np.ndarray, base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray,
                   psi: np.ndarray, dpsi: np.ndarray, heights: np.ndarray, g_x0: float, g_y0: float, g_inv: float,
                   u: np.ndarray, d: np.ndarray, d_rate: np.ndarray, v: np.ndarray, out: np.ndarray) -> int:
    """Fill ``out`` (8, N) with each body's x, y, ground z, chord heading, yaw rate, max(v, 1), vx, vy.

    Returns :data:`FINITE` when every velocity (and speed) is finite, plus
    :data:`LATERAL` when some lateral rate ``d_rate`` is non-zero (or NaN).

    Units: metres, radians, m/s. The ground z is the raster cell's height
    (indices truncated, then clamped to the raster); the caller handles
    the non-finite case (then the cell is undefined).
    """
    nx, ny = heights.shape[0] - 1, heights.shape[1] - 1
    s_vx = 0.0
    s_vy = 0.0
    s_v = 0.0
    lateral = False
    for i in range(u.shape[0]):
        b = base[i]
        k = b + _segment(cum, b, last[i], u[i])
        tx, ty = dirs[k, 0], dirs[k, 1]
        al = u[i] - cum[k]
        di, dri, vi = d[i], d_rate[i], v[i]
        x = (pts[k, 0] + tx * al) + (-ty) * di
        y = (pts[k, 1] + ty * al) + tx * di
        out[X, i] = x
        out[Y, i] = y
        fx, fy = (x - g_x0) * g_inv, (y - g_y0) * g_inv
        if -1e18 < fx < 1e18 and -1e18 < fy < 1e18:
            gi, gj = int(fx), int(fy)
            gi = 0 if gi < 0 else nx if gi > nx else gi
            gj = 0 if gj < 0 else ny if gj > ny else gj
            out[Z, i] = heights[gi, gj]
        else:
            out[Z, i] = np.nan
        rate = dpsi[k]
        out[YAW_C, i] = psi[k] + rate * al
        out[OMEGA, i] = vi * rate
        out[BIG_V, i] = vi if vi >= 1.0 else 1.0 if vi < 1.0 else vi
        vx = tx * vi - ty * dri
        vy = ty * vi + tx * dri
        out[VX, i] = vx
        out[VY, i] = vy
        s_vx += vx
        s_vy += vy
        s_v += vi
        lateral = lateral or dri != 0.0
    return (FINITE if math.isfinite(s_vx + s_vy + s_v) else 0) | (LATERAL if lateral else 0)


@numba.njit(inline="always", **_JIT)
def pack_bodies(placed: np.ndarray, yaw: np.ndarray, heading_v: np.ndarray, d_rate: np.ndarray, d_acc: np.ndarray,
                v: np.ndarray, a: np.ndarray, lateral: bool, big: np.ndarray, slip: np.ndarray) -> None:
    """Fill ``big`` (13·N: pos (N, 3), quat (N, 4), vel (N, 3), omega (N, 3), in that order) and ``slip`` (N,).

    ``yaw``: the body headings (chord heading + atan2(ḋ, max(v, 1))), rad;
    ``heading_v``: atan2(vy, vx), the velocity direction, rad. With a
    lateral manoeuvre (``lateral``) the yaw rate gains the rate of that
    arctangent, ``(d̈·V − ḋ·V̇) / (V² + ḋ²)`` with V = max(v, 1) (V̇ = a above 1 m/s).
    The slip angle is the velocity direction minus the heading, wrapped to
    [−π, π), and 0 for a body at rest (|v| ≤ 1e-9 m/s).
    """
    n = yaw.shape[0]
    two_pi, pi = 2 * np.pi, np.pi
    for i in range(n):
        omega = placed[OMEGA, i]
        if lateral:
            b_, dri = placed[BIG_V, i], d_rate[i]
            bvd = a[i] if v[i] > 1.0 else 0.0
            omega = omega + (d_acc[i] * b_ - dri * bvd) / (b_ * b_ + dri * dri)
        vx, vy = placed[VX, i], placed[VY, i]
        if math.hypot(vx, vy) > 1e-9:
            slip[i] = ((heading_v[i] - yaw[i]) + pi) % two_pi - pi
        else:
            slip[i] = 0.0
        half = 0.5 * yaw[i]
        p, q, w, o = 3 * i, 3 * n + 4 * i, 7 * n + 3 * i, 10 * n + 3 * i
        big[p], big[p + 1], big[p + 2] = placed[X, i], placed[Y, i], placed[Z, i]
        big[q], big[q + 1], big[q + 2], big[q + 3] = 0.0, 0.0, math.sin(half), math.cos(half)
        big[w], big[w + 1], big[w + 2] = vx, vy, 0.0
        big[o], big[o + 1], big[o + 2] = 0.0, 0.0, omega


@numba.njit(inline="always", **_JIT)
def walk_heights(rows: np.ndarray, first: np.ndarray, z_start: np.ndarray, step_u: np.ndarray, step_dh: np.ndarray,
                 inv_ramp: float, u: np.ndarray, v: np.ndarray, present: np.ndarray, big: np.ndarray) -> None:
    """Overwrite z and vz in ``big`` (13·N, as :func:`pack_bodies` fills it) for the walkers ``rows`` that are present.

    Walker r (actor ``rows[r]``) starts its route at height ``z_start[r]``
    (m) and meets the height changes ``step_dh[first[r]:first[r+1]]`` (m) at
    arc lengths ``step_u[...]`` (m). Each change is a smoothstep
    ``S(x) = x²(3 − 2x)``, ``x = (u − u_k)·inv_ramp + ½`` clamped to [0, 1]
    (``inv_ramp``: 1 / ramp length, 1/m), so z(u) = z_start + Σ Δh·S and
    vz = v·dz/du = v·Σ Δh·6x(1 − x)·inv_ramp (m/s): the height is C¹ in u
    and the vertical velocity is its exact time derivative. A NaN ``u``
    compares false in both branches and leaves z at ``z_start``.
    """
    n = u.shape[0]
    for r in range(rows.shape[0]):
        i = rows[r]
        if not present[i]:
            continue
        z = z_start[r]
        dz = 0.0
        for k in range(first[r], first[r + 1]):
            x = (u[i] - step_u[k]) * inv_ramp + 0.5
            if x >= 1.0:
                z = z + step_dh[k]
            elif x > 0.0:
                z = z + step_dh[k] * (x * x * (3.0 - 2.0 * x))
                dz = dz + step_dh[k] * (6.0 * x * (1.0 - x)) * inv_ramp
        big[3 * i + 2] = z
        big[7 * n + 3 * i + 2] = v[i] * dz


@numba.njit(**_JIT)
def _sat_axis(k: int, ci: float, si: float, cj: float, sj: float) -> tuple[float, float]:
    """Separating axis k (0–3) of rectangles i and j with headings (cos, sin): i's x, i's y, j's x, j's y axis."""
    if k == 0:
        return ci, si
    if k == 1:
        return -si, ci
    if k == 2:
        return cj, sj
    return -sj, cj


@numba.njit(**_JIT)
def _overlap(dx: float, dy: float, yaw_i: float, hl_i: float, hw_i: float, yaw_j: float, hl_j: float,
             hw_j: float) -> bool:
    """Separating-axis test of two rectangles (half-lengths along their headings, m), j offset by (dx, dy) from i."""
    ci, si, cj, sj = math.cos(yaw_i), math.sin(yaw_i), math.cos(yaw_j), math.sin(yaw_j)
    for k in range(4):
        ax, ay = _sat_axis(k, ci, si, cj, sj)
        ri = hl_i * abs(ci * ax + si * ay) + hw_i * abs(-si * ax + ci * ay)
        rj = hl_j * abs(cj * ax + sj * ay) + hw_j * abs(-sj * ax + cj * ay)
        if abs(dx * ax + dy * ay) >= ri + rj:
            return False
    return True


@numba.njit(inline="always", **_JIT)
def contact_pairs(xy: np.ndarray, yaw: np.ndarray, present: np.ndarray, reach2: np.ndarray, hl: np.ndarray,
                  hw: np.ndarray, out: np.ndarray) -> int:
    """Pairs (i < j) of present actors whose footprints overlap, written to ``out`` (M, 2); returns M.

    ``xy``: (N, ≥ 2) positions (m; columns past the second are ignored).
    The bounding circles (``reach2``: squared sum of radii, m²) filter the
    pairs; the survivors get the four-axis separating-axis test. A NaN
    position fails the circle test, so it touches nothing.
    """
    n = xy.shape[0]
    m = 0
    for i in range(n):
        if not present[i]:
            continue
        for j in range(i + 1, n):
            if not present[j]:
                continue
            dx = xy[j, 0] - xy[i, 0]
            dy = xy[j, 1] - xy[i, 1]
            if dx * dx + dy * dy < reach2[i, j] and _overlap(dx, dy, yaw[i], hl[i], hw[i], yaw[j], hl[j], hw[j]):
                out[m, 0] = i
                out[m, 1] = j
                m += 1
    return m


@numba.njit(**_JIT)
def integrate_one(u: float, v: float, a: float, dt: float) -> tuple[float, float]:
    """One tick of constant acceleration ``a`` (m/s²) along the path, stopping at rest rather than reversing:
    the new (u, v) (m, m/s).

    The operations of :func:`simready.sim.controllers.longitudinal.integrate`
    one for one; ``max(vn, 0)`` keeps NaN and turns −0.0 into +0.0 as
    ``np.maximum(vn, 0.0)`` does.
    """
    vn = v + a * dt
    if vn < 0.0:
        du = v * v / (-2.0 * a) if a < 0.0 else 0.0
    else:
        du = v * dt + 0.5 * a * dt * dt
    return u + du, (vn if vn > 0.0 else 0.0 if vn <= 0.0 else vn)


@numba.njit(inline="always", **_JIT)
def advance_place(u: np.ndarray, v: np.ndarray, a: np.ndarray, present: np.ndarray, dt: float, cum: np.ndarray,
                  base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, psi: np.ndarray,
                  dpsi: np.ndarray, heights: np.ndarray, g_x0: float, g_y0: float, g_inv: float, d: np.ndarray,
                  d_rate: np.ndarray, u1: np.ndarray, v1: np.ndarray, a1: np.ndarray, placed: np.ndarray) -> int:
    """One tick along the paths: :func:`integrate_one` for present actors (absent ones keep u and v, with a = 0), then
    :func:`place_on_paths` at the new (u, d); returns its flags.

    The same values as integrating everyone and then masking with
    ``np.where(present, new, old)``: an absent actor's integration was
    discarded there, so it is skipped here.
    """
    for i in range(u.shape[0]):
        if present[i]:
            u1[i], v1[i] = integrate_one(u[i], v[i], a[i], dt)
            a1[i] = a[i]
        else:
            u1[i], v1[i], a1[i] = u[i], v[i], 0.0
    flags: int = place_on_paths(cum, base, last, pts, dirs, psi, dpsi, heights, g_x0, g_y0, g_inv, u1, d, d_rate, v1,
                                placed)
    return flags


@numba.njit(**_JIT)
def advance_place_lanes(u: np.ndarray, v: np.ndarray, a: np.ndarray, present: np.ndarray, dt: float, cum: np.ndarray,
                        base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, psi: np.ndarray,
                        dpsi: np.ndarray, heights: np.ndarray, g_x0: float, g_y0: float, g_inv: float, d: np.ndarray,
                        d_rate: np.ndarray, seg_lane: np.ndarray, lane_u0: np.ndarray, u1: np.ndarray, v1: np.ndarray,
                        a1: np.ndarray, placed: np.ndarray, lane: np.ndarray, s: np.ndarray) -> int:
    """:func:`advance_place`, then :func:`lanes_at` of the new arc lengths ``u1`` into ``lane`` and ``s``, in one
    call: the values of the two calls in turn (the lane lookup reads ``u1`` only)."""
    flags: int = advance_place(u, v, a, present, dt, cum, base, last, pts, dirs, psi, dpsi, heights, g_x0, g_y0, g_inv,
                               d, d_rate, u1, v1, a1, placed)
    lanes_at(cum, base, last, seg_lane, lane_u0, u1, lane, s)
    return flags


@numba.njit(inline="always", **_JIT)
def pack_step(placed: np.ndarray, yaw: np.ndarray, heading_v: np.ndarray, d_rate: np.ndarray, d_acc: np.ndarray,
              v: np.ndarray, a: np.ndarray, lateral: bool, present: np.ndarray, prev_pos: np.ndarray,
              prev_quat: np.ndarray, prev_yaw: np.ndarray, reach2: np.ndarray, hl: np.ndarray, hw: np.ndarray,
              big: np.ndarray, slip: np.ndarray, pairs: np.ndarray) -> int:
    """:func:`pack_bodies`, then absent actors back at their previous pose (``prev_*``) at rest, then
    :func:`contact_pairs` of the result into ``pairs``; returns the number of pairs.

    ``yaw`` is updated in place for absent actors (their previous heading);
    their slip angle stays what the packing computed.
    """
    pack_bodies(placed, yaw, heading_v, d_rate, d_acc, v, a, lateral, big, slip)
    n = yaw.shape[0]
    for i in range(n):
        if not present[i]:
            p, q, w, o = 3 * i, 3 * n + 4 * i, 7 * n + 3 * i, 10 * n + 3 * i
            for k in range(3):
                big[p + k] = prev_pos[i, k]
                big[w + k] = 0.0
                big[o + k] = 0.0
            for k in range(4):
                big[q + k] = prev_quat[i, k]
            yaw[i] = prev_yaw[i]
    n_pairs: int = contact_pairs(big[:3 * n].reshape((n, 3)), yaw, present, reach2, hl, hw, pairs)
    return n_pairs


@numba.njit(inline="always", **_JIT)
def pack_step_walk(placed: np.ndarray, yaw: np.ndarray, heading_v: np.ndarray, d_rate: np.ndarray, d_acc: np.ndarray,
                   v: np.ndarray, a: np.ndarray, lateral: bool, present: np.ndarray, prev_pos: np.ndarray,
                   prev_quat: np.ndarray, prev_yaw: np.ndarray, reach2: np.ndarray, hl: np.ndarray, hw: np.ndarray,
                   w_rows: np.ndarray, w_first: np.ndarray, w_z_start: np.ndarray, w_step_u: np.ndarray,
                   w_step_dh: np.ndarray, inv_ramp: float, u: np.ndarray, big: np.ndarray, slip: np.ndarray,
                   pairs: np.ndarray) -> int:
    """:func:`pack_step`, then :func:`walk_heights` of the walkers ``w_*`` (none: ``w_rows`` empty) at ``u``, in
    one call: the values of the two calls in turn (the walkers' heights do not enter the contacts, which read x, y
    and the heading only)."""
    m: int = pack_step(placed, yaw, heading_v, d_rate, d_acc, v, a, lateral, present, prev_pos, prev_quat, prev_yaw,
                       reach2, hl, hw, big, slip, pairs)
    walk_heights(w_rows, w_first, w_z_start, w_step_u, w_step_dh, inv_ramp, u, v, present, big)
    return m


#: Bits of :func:`pack_step_walk_ok`'s verdict: the stepped state passes :func:`state_ok` without / with the bounds;
#: no present actor on a path that leaves the map has its front past the path's end.
OK_STATE, OK_BOUNDS, OK_STAYS = 1, 2, 4


@numba.njit(**_JIT)
def pack_step_walk_ok(placed: np.ndarray, yaw: np.ndarray, heading_v: np.ndarray, d_rate: np.ndarray,
                      d_acc: np.ndarray, v: np.ndarray, a: np.ndarray, lateral: bool, present: np.ndarray,
                      prev_pos: np.ndarray, prev_quat: np.ndarray, prev_yaw: np.ndarray, reach2: np.ndarray,
                      hl: np.ndarray, hw: np.ndarray, w_rows: np.ndarray, w_first: np.ndarray, w_z_start: np.ndarray,
                      w_step_u: np.ndarray, w_step_dh: np.ndarray, inv_ramp: float, u: np.ndarray, big: np.ndarray,
                      slip: np.ndarray, pairs: np.ndarray, max_speed: float, lo_x: float, hi_x: float, lo_y: float,
                      hi_y: float, max_abs_z: float, leaves: np.ndarray, lengths: np.ndarray) -> tuple[int, int]:
    """:func:`pack_step_walk`, then the engine's divergence predicate (:func:`state_ok`) of the packed bodies and its
    leaving-the-map test, in one call: ``(number of pairs, verdict)`` with :data:`OK_STATE` set when the bodies pass
    without the bounds check, :data:`OK_BOUNDS` when they pass with it, and :data:`OK_STAYS` when no present actor
    whose path ``leaves`` the map has ``u + hl > length`` (the packed values are those of :func:`pack_step_walk`)."""
    m: int = pack_step_walk(placed, yaw, heading_v, d_rate, d_acc, v, a, lateral, present, prev_pos, prev_quat,
                            prev_yaw, reach2, hl, hw, w_rows, w_first, w_z_start, w_step_u, w_step_dh, inv_ramp, u, big,
                            slip, pairs)
    n = yaw.shape[0]
    return m, bodies_verdict(big[:3 * n].reshape((n, 3)), big[3 * n:7 * n].reshape((n, 4)),
                             big[7 * n:10 * n].reshape((n, 3)), big[10 * n:].reshape((n, 3)), present, max_speed, lo_x,
                             hi_x, lo_y, hi_y, max_abs_z, u, hl, leaves, lengths)


@numba.njit(inline="always", **_JIT)
def bodies_verdict(pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray, present: np.ndarray,
                   max_speed: float, lo_x: float, hi_x: float, lo_y: float, hi_y: float, max_abs_z: float,
                   u: np.ndarray, hl: np.ndarray, leaves: np.ndarray, lengths: np.ndarray) -> int:
    """The engine's verdict on a tick's bodies: :data:`OK_STATE` when they pass :func:`state_ok` without the bounds
    check, :data:`OK_BOUNDS` too when they pass with it, and :data:`OK_STAYS` when no present actor whose path
    ``leaves`` the map has ``u + hl > length``."""
    verdict = 0
    if state_ok(pos, quat, vel, omega, present, max_speed, False, lo_x, hi_x, lo_y, hi_y, max_abs_z):
        verdict = OK_STATE
        if state_ok(pos, quat, vel, omega, present, max_speed, True, lo_x, hi_x, lo_y, hi_y, max_abs_z):
            verdict = OK_STATE | OK_BOUNDS
    stays = True
    for i in range(pos.shape[0]):
        if leaves[i] and present[i] and u[i] + hl[i] > lengths[i]:
            stays = False
    if stays:
        verdict |= OK_STAYS
    return verdict


@numba.njit(inline="always", **_JIT)
def state_ok(pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray, present: np.ndarray,
             max_speed: float, check_bounds: bool, lo_x: float, hi_x: float, lo_y: float, hi_y: float,
             max_abs_z: float) -> bool:
    """Whether a state can be continued: every value finite, every horizontal speed ≤ ``max_speed`` (m/s) and,
    with ``check_bounds``, every present body inside the box (m; |z| ≤ ``max_abs_z``).

    The predicate of :func:`simready.sim.engine.divergence.divergence_reason` (which
    words the reason when this is False); NaN fails every comparison here.
    """
    n = pos.shape[0]
    for i in range(n):
        for k in range(3):
            if not (math.isfinite(pos[i, k]) and math.isfinite(vel[i, k]) and math.isfinite(omega[i, k])):
                return False
        for k in range(4):
            if not math.isfinite(quat[i, k]):
                return False
        if math.hypot(vel[i, 0], vel[i, 1]) > max_speed:
            return False
        if check_bounds and present[i]:
            x, y = pos[i, 0], pos[i, 1]
            if x < lo_x or x > hi_x or y < lo_y or y > hi_y or abs(pos[i, 2]) > max_abs_z:
                return False
    return True


@numba.njit(**_JIT)
def lanes_at(cum: np.ndarray, base: np.ndarray, last: np.ndarray, seg_lane: np.ndarray, lane_u0: np.ndarray,
             u: np.ndarray, lane: np.ndarray, s: np.ndarray) -> None:
    """Each actor's lane index (−1 off the lane graph) and its arc length on that lane, ``s = u − u0`` (m, NaN off it)."""
    for i in range(u.shape[0]):
        b = base[i]
        li = seg_lane[b + _segment(cum, b, last[i], u[i])]
        lane[i] = li
        s[i] = u[i] - lane_u0[i, li] if li >= 0 else np.nan


@numba.njit(**_JIT)
def project_near(cum: np.ndarray, base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray,
                 rows: np.ndarray, xs: np.ndarray, ys: np.ndarray, hints: np.ndarray, window: int,
                 out_u: np.ndarray, out_d: np.ndarray) -> None:
    """``(u, d)`` of points ``(xs[n], ys[n])`` on the paths of actors ``rows[n]``, each searched near ``hints[n]``:
    :meth:`simready.sim.core.reference_paths.ReferencePath.project_near` for many bodies in one call, the same operations
    (its ``bisect_right`` over the path's arc lengths, its ``min``/``max`` clamps, strict ``<`` between candidates)."""
    for n in range(rows.shape[0]):
        r = rows[n]
        b = base[r]
        L = last[r]
        x, y, h = xs[n], ys[n], hints[n]
        lo, hi = 0, L + 2
        while lo < hi:
            mid = (lo + hi) // 2
            if h < cum[b + mid]:
                hi = mid
            else:
                lo = mid + 1
        i = lo - 1
        if i < 0:
            i = 0
        if i > L:
            i = L
        found = False
        best_d2, best_u, best_d = 0.0, 0.0, 0.0
        k0 = i - 2 if i - 2 > 0 else 0
        k1 = i + window if i + window < L else L
        for k in range(k0, k1 + 1):
            px, py = pts[b + k, 0], pts[b + k, 1]
            dx, dy = dirs[b + k, 0], dirs[b + k, 1]
            along = (x - px) * dx + (y - py) * dy
            seg_len = cum[b + k + 1] - cum[b + k]
            lo_c = -np.inf if k == 0 else 0.0
            hi_c = np.inf if k == L else seg_len
            m = lo_c if lo_c > along else along
            a = hi_c if hi_c < m else m
            fx, fy = px + dx * a, py + dy * a
            d2 = (x - fx) * (x - fx) + (y - fy) * (y - fy)
            if not found or d2 < best_d2:
                found = True
                best_d2, best_u, best_d = d2, cum[b + k] + a, dx * (y - fy) - dy * (x - fx)
        out_u[n] = best_u
        out_d[n] = best_d


# planner_kernels keeps its own two copies of these: numba's on-disk cache of a function is not
# invalidated when a compiled function it calls from another module changes.
@numba.njit(**_JIT)
def _minimum(x: float, y: float) -> float:
    """``np.minimum`` of two floats: NaN if either is NaN."""
    return x if (x <= y or x != x) else y


@numba.njit(**_JIT)
def _maximum(x: float, y: float) -> float:
    """``np.maximum`` of two floats: NaN if either is NaN."""
    return x if (x >= y or x != x) else y


@numba.njit(**_JIT)
def swept_pairs(p1: np.ndarray, v1: np.ndarray, yaw1: np.ndarray, hl1: np.ndarray, hw1: np.ndarray, p2: np.ndarray,
                v2: np.ndarray, yaw2: np.ndarray, hl2: np.ndarray, hw2: np.ndarray, horizon_s: float,
                ttc: np.ndarray, sep: np.ndarray) -> None:
    """Swept time-to-collision (s) and separating-axis gap (m) of K rectangle pairs (see :mod:`simready.sim.core.geometry`).

    ``p*``, ``v*``: (K, 2) centres (m) and velocities (m/s); the rest (K,).
    Per pair and axis (the four edge normals) the operations of the
    vectorized form, in its order: NaN propagates through the minima and
    maxima as numpy's does, and a NaN start time gives inf.
    """
    for k in range(ttc.shape[0]):
        c1, s1, c2, s2 = math.cos(yaw1[k]), math.sin(yaw1[k]), math.cos(yaw2[k]), math.sin(yaw2[k])
        dx, dy = p2[k, 0] - p1[k, 0], p2[k, 1] - p1[k, 1]
        dvx, dvy = v2[k, 0] - v1[k, 0], v2[k, 1] - v1[k, 1]
        gap = -np.inf
        lo_max = -np.inf
        hi_min = np.inf
        for j in range(4):
            ax, ay = _sat_axis(j, c1, s1, c2, s2)
            r = (hl1[k] * abs(ax * c1 + ay * s1) + hw1[k] * abs(ax * -s1 + ay * c1)) + (
                hl2[k] * abs(ax * c2 + ay * s2) + hw2[k] * abs(ax * -s2 + ay * c2))
            c0 = dx * ax + dy * ay
            abs_c0 = abs(c0)
            gap = abs_c0 - r if j == 0 else _maximum(gap, abs_c0 - r)
            cd = dvx * ax + dvy * ay
            if cd != 0.0:
                t_a = (-r - c0) / cd
                t_b = (r - c0) / cd
                lo, hi = _minimum(t_a, t_b), _maximum(t_a, t_b)
            elif abs_c0 < r:
                lo, hi = -np.inf, np.inf
            else:
                lo, hi = np.inf, -np.inf
            lo_max = lo if j == 0 else _maximum(lo_max, lo)
            hi_min = hi if j == 0 else _minimum(hi_min, hi)
        start = _maximum(lo_max, 0.0)
        end = _minimum(hi_min, horizon_s)
        ttc[k] = start if start <= end else np.inf
        sep[k] = gap
