"""Compiled steps of :meth:`simready.world.motion.PoseTrack.sample` for a track turning about z only (numba):
the interval lookup, the position and velocity Hermites, the yaw Hermite and the presence rule in one pass
over the query times, and the rotation's quaternion from the yaw half-angle's sine and cosine in another,
instead of some forty small numpy passes per call (a LiDAR sweep samples tracks at every column's time); for a
track that also rolls or pitches, :func:`spatial_hermites` and :func:`spatial_rotations` likewise (the rotation
vector's Hermite, its exponential and the left Jacobian), numpy's einsum left to rotate the angular velocity.

Bits: the numpy expressions of ``PoseTrack.sample`` and ``PoseTrack._planar_rotation`` in their order and
precision, ``fastmath`` off (no fused products); the sine and cosine stay numpy's (``np.sin`` / ``np.cos`` may
use other implementations than the compiled code's libm). Tested bit for bit against the numpy path
(tests/test_motion_kernels.py). Cached beside this module (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)


@numba.njit(**_JIT)
def _interval(tk: float, ts: np.ndarray, seg: np.ndarray, h_col: int) -> tuple[int, float, float]:
    """The interval of a query time (``np.searchsorted(ts, tk, side="right") - 1`` clipped to the intervals), its
    length h and the time's position s in it (clipped to [0, 1]), as ``PoseTrack._hermite`` computes them."""
    n = ts.shape[0]
    lo, hi = 0, n  # first index whose time is > tk (searchsorted, side="right")
    while lo < hi:
        mid = (lo + hi) // 2
        if ts[mid] > tk:
            hi = mid
        else:
            lo = mid + 1
    i = min(max(lo - 1, 0), n - 2)
    h = seg[i, h_col]
    s = (tk - ts[i]) / h
    s = 0.0 if s < 0.0 else (1.0 if s > 1.0 else s)
    return i, h, s


@numba.njit(**_JIT)
def _present(tk: float, ts: np.ndarray, present: np.ndarray, i: int, eps: float) -> bool:
    """Presence at a query time in interval ``i``: an end's own within ``eps`` of it, else both ends'."""
    p0, p1 = present[i], present[i + 1]
    if tk - ts[i] <= eps:
        return bool(p0)
    if ts[i + 1] - tk <= eps:
        return bool(p1)
    return bool(p0 and p1)


@numba.njit(**_JIT)
def planar_hermites(t: np.ndarray, ts: np.ndarray, seg: np.ndarray, present: np.ndarray, eps: float,
                    phi: int, q0: int, h_col: int) -> tuple[np.ndarray, ...]:
    """Per query time (``t`` inside ``[ts[0], ts[-1]]``): position (M, 3), velocity (M, 3), angular velocity
    (M, 3) (z only), presence (M,), the yaw half-angle (M,) and the interval's start quaternion z and w (M,)
    each. ``seg``: the track's segment table (columns ``phi``, ``q0``, ``h_col`` as in
    :mod:`simready.world.motion`)."""
    m = t.shape[0]
    pos = np.empty((m, 3))
    vel = np.empty((m, 3))
    ang = np.zeros((m, 3))
    pres = np.empty(m, np.bool_)
    half = np.empty(m)
    qz = np.empty(m)
    qw = np.empty(m)
    for k in range(m):
        tk = t[k]
        i, h, s = _interval(tk, ts, seg, h_col)
        for a in range(3):
            c0, c1, c2, c3 = seg[i, a], seg[i, 3 + a], seg[i, 6 + a], seg[i, 9 + a]
            pos[k, a] = c0 + s * (c1 + s * (c2 + s * c3))
            vel[k, a] = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h
        c1, c2, c3 = seg[i, phi + 2], seg[i, phi + 5], seg[i, phi + 8]
        half[k] = 0.5 * (s * (c1 + s * (c2 + s * c3)))
        ang[k, 2] = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h
        qz[k] = seg[i, q0 + 2]
        qw[k] = seg[i, q0 + 3]
        pres[k] = _present(tk, ts, present, i, eps)
    return pos, vel, ang, pres, half, qz, qw


@numba.njit(**_JIT)
def planar_quaternions(sz: np.ndarray, cz: np.ndarray, qz: np.ndarray, qw: np.ndarray) -> np.ndarray:
    """(M, 4) ``q0 ⊗ (z, ψ)`` normalized: z = qw·sz + qz·cz, w = qw·cz − qz·sz, divided by sqrt(z² + w²)."""
    m = sz.shape[0]
    quat = np.zeros((m, 4))
    for k in range(m):
        z = qw[k] * sz[k] + qz[k] * cz[k]
        w = qw[k] * cz[k] - qz[k] * sz[k]
        nrm = np.sqrt(z * z + w * w)
        quat[k, 0] = 0.0 / nrm
        quat[k, 1] = 0.0 / nrm
        quat[k, 2] = z / nrm
        quat[k, 3] = w / nrm
    return quat


@numba.njit(**_JIT)
def pose_matrices(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(N, 4, 4) transforms from (N, 3) positions and (N, 4) quaternions ``[x, y, z, w]``:
    :func:`simready.world.frames.batch_pose_matrices`'s numpy steps in one pass (the quaternion divided by
    its norm, the norm's squares summed in order as numpy's row reduction sums four, measured)."""
    n = p.shape[0]
    T = np.zeros((n, 4, 4))
    for k in range(n):
        a0, a1, a2, a3 = q[k, 0], q[k, 1], q[k, 2], q[k, 3]
        nrm = np.sqrt(((a0 * a0 + a1 * a1) + a2 * a2) + a3 * a3)
        x, y, z, w = a0 / nrm, a1 / nrm, a2 / nrm, a3 / nrm
        T[k, 0, 0] = 1 - 2 * (y * y + z * z)
        T[k, 0, 1] = 2 * (x * y - z * w)
        T[k, 0, 2] = 2 * (x * z + y * w)
        T[k, 1, 0] = 2 * (x * y + z * w)
        T[k, 1, 1] = 1 - 2 * (x * x + z * z)
        T[k, 1, 2] = 2 * (y * z - x * w)
        T[k, 2, 0] = 2 * (x * z - y * w)
        T[k, 2, 1] = 2 * (y * z + x * w)
        T[k, 2, 2] = 1 - 2 * (x * x + y * y)
        T[k, 0, 3] = p[k, 0]
        T[k, 1, 3] = p[k, 1]
        T[k, 2, 3] = p[k, 2]
        T[k, 3, 3] = 1.0
    return T


@numba.njit(**_JIT)
def planar_window_samples(lin: np.ndarray, t0: float, t1: float, rows: np.ndarray, ts_cat: np.ndarray,
                         ts_off: np.ndarray, seg_cat: np.ndarray, seg_off: np.ndarray, present_cat: np.ndarray,
                         eps: float, phi: int, q0: int, h_col: int) -> tuple[np.ndarray, ...]:
    """Several planar tracks sampled over one window at once, before the sine and cosine (the sampling of
    :meth:`simready.raycast.geometry.SceneGeometry.swept_bounds`): track ``rows[j]`` (its times ``ts_cat[ts_off[r]:ts_off[r + 1]]``, segments and
    presence likewise) is sampled at the window's times ``lin`` merged with its ticks strictly inside
    (``t0``, ``t1``) (the values ``np.sort`` of their concatenation gives), every time strictly inside the track
    (the caller checks: ``np.clip`` leaves them as they are), by
    :func:`planar_hermites`. Returns (each track's first sample, (J + 1,); the
    sample times; then ``planar_hermites``' arrays over all samples, track after track)."""
    n_j = rows.shape[0]
    n_l = lin.shape[0]
    off = np.empty(n_j + 1, np.int64)
    off[0] = 0
    for j in range(n_j):
        r = rows[j]
        c = 0
        for i in range(ts_off[r], ts_off[r + 1]):
            if ts_cat[i] > t0 and ts_cat[i] < t1:
                c += 1
        off[j + 1] = off[j] + n_l + c
    m = off[n_j]
    t = np.empty(m)
    pos = np.empty((m, 3))
    vel = np.empty((m, 3))
    ang = np.empty((m, 3))
    pres = np.empty(m, np.bool_)
    half = np.empty(m)
    qz = np.empty(m)
    qw = np.empty(m)
    for j in range(n_j):
        r = rows[j]
        a, b = ts_off[r], ts_off[r + 1]
        # Merge the ascending window times with the ticks inside the window (ascending).
        k = off[j]
        li = 0
        for i in range(a, b):
            x = ts_cat[i]
            if x > t0 and x < t1:
                while li < n_l and lin[li] <= x:
                    t[k] = lin[li]
                    k += 1
                    li += 1
                t[k] = x
                k += 1
        while li < n_l:
            t[k] = lin[li]
            k += 1
            li += 1
        s, e = off[j], off[j + 1]
        p_, v_, w_, pr_, h_, z_, q_ = planar_hermites(t[s:e], ts_cat[a:b], seg_cat[seg_off[r]:seg_off[r + 1]],
                                                      present_cat[a:b], eps, phi, q0, h_col)
        pos[s:e] = p_
        vel[s:e] = v_
        ang[s:e] = w_
        pres[s:e] = pr_
        half[s:e] = h_
        qz[s:e] = z_
        qw[s:e] = q_
    return off, t, pos, vel, ang, pres, half, qz, qw



@numba.njit(**_JIT)
def planar_poses(pos: np.ndarray, sz: np.ndarray, cz: np.ndarray, qz: np.ndarray, qw: np.ndarray) -> np.ndarray:
    """(M, 4, 4) ``T_world_body`` of planar samples from their positions and the sines and cosines (numpy's) of
    their yaw half-angles: :func:`planar_quaternions` then :func:`pose_matrices`, what ``PoseTrack.sample``
    then ``TrackSample.matrices`` do, in one call."""
    T: np.ndarray = pose_matrices(pos, planar_quaternions(sz, cz, qz, qw))
    return T


@numba.njit(**_JIT)
def spatial_hermites(t: np.ndarray, ts: np.ndarray, seg: np.ndarray, present: np.ndarray, eps: float,
                     phi: int, h_col: int, small_rad: float, twists: bool) -> tuple[np.ndarray, ...]:
    """The first pass of a 3-D track's sampling (``PoseTrack.sample`` / ``poses_at`` of a track that also rolls
    or pitches), before the sines and cosines: per query time (``t`` inside ``[ts[0], ts[-1]]``) its interval
    (M,), position (M, 3), the rotation vector φ (M, 3), its angle θ = |φ| (M,), θ where it is at least
    ``small_rad`` else 1 (M,: the angle the closed forms take), and with ``twists`` the velocity (M, 3), φ'
    (M, 3) and presence (M,) (empty arrays without). ``seg``: the track's segment table (columns ``phi`` and
    ``h_col`` as in :mod:`simready.world.motion`)."""
    m = t.shape[0]
    mt = m if twists else 0
    idx = np.empty(m, np.int64)
    pos = np.empty((m, 3))
    rot = np.empty((m, 3))
    theta = np.empty(m)
    closed = np.empty(m)
    vel = np.empty((mt, 3))
    dphi = np.empty((mt, 3))
    pres = np.empty(mt, np.bool_)
    for k in range(m):
        tk = t[k]
        i, h, s = _interval(tk, ts, seg, h_col)
        idx[k] = i
        for a in range(3):
            c0, c1, c2, c3 = seg[i, a], seg[i, 3 + a], seg[i, 6 + a], seg[i, 9 + a]
            pos[k, a] = c0 + s * (c1 + s * (c2 + s * c3))
            r1, r2, r3 = seg[i, phi + a], seg[i, phi + 3 + a], seg[i, phi + 6 + a]
            rot[k, a] = s * (r1 + s * (r2 + s * r3))
            if twists:
                vel[k, a] = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h
                dphi[k, a] = r1 + s * (2.0 * r2 + 3.0 * s * r3)
        th = np.sqrt((rot[k, 0] * rot[k, 0] + rot[k, 1] * rot[k, 1]) + rot[k, 2] * rot[k, 2])
        theta[k] = th
        closed[k] = 1.0 if th < small_rad else th
        if twists:
            pres[k] = _present(tk, ts, present, i, eps)
    return idx, pos, rot, theta, closed, vel, dphi, pres


@numba.njit(**_JIT)
def spatial_rotations(idx: np.ndarray, seg: np.ndarray, q0: int, rot: np.ndarray, theta: np.ndarray,
                      closed: np.ndarray, sin_half: np.ndarray, cos_half: np.ndarray, small_rad: float,
                      dphi: np.ndarray, cos_closed: np.ndarray, sin_closed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The second pass (after :func:`spatial_hermites` and numpy's sines and cosines: ``sin_half`` =
    sin(closed/2), ``cos_half`` = cos(θ/2), ``cos_closed`` / ``sin_closed`` = cos / sin of closed): the quaternion
    ``q0 ⊗ Exp(φ)`` normalized (M, 4) and, given φ' (``dphi``, (M, 3); (0, 3): none), ``J_l(φ)·φ'`` (M, 3)
    before it is rotated into the world (numpy's einsum, whose order of sums is its own)."""
    m = idx.shape[0]
    quat = np.empty((m, 4))
    twists = dphi.shape[0] == m and m > 0
    jl = np.empty((m if twists else 0, 3))
    for k in range(m):
        i = idx[k]
        th = theta[k]
        t = closed[k]
        small = th < small_rad
        hs = 0.5 - th * th / 48.0 if small else sin_half[k] / t
        bx, by, bz, bw = rot[k, 0] * hs, rot[k, 1] * hs, rot[k, 2] * hs, cos_half[k]
        ax, ay, az, aw = seg[i, q0], seg[i, q0 + 1], seg[i, q0 + 2], seg[i, q0 + 3]
        x = aw * bx + ax * bw + ay * bz - az * by
        y = aw * by - ax * bz + ay * bw + az * bx
        z = aw * bz + ax * by - ay * bx + az * bw
        w = aw * bw - ax * bx - ay * by - az * bz
        nrm = np.sqrt(((x * x + y * y) + z * z) + w * w)
        quat[k, 0] = x / nrm
        quat[k, 1] = y / nrm
        quat[k, 2] = z / nrm
        quat[k, 3] = w / nrm
        if twists:
            t2 = th * th
            a = 0.5 - t2 / 24.0 if small else (1.0 - cos_closed[k]) / (t * t)
            b = 1.0 / 6.0 - t2 / 120.0 if small else (t - sin_closed[k]) / (t * t * t)
            p0, p1, p2 = rot[k, 0], rot[k, 1], rot[k, 2]
            d0, d1, d2 = dphi[k, 0], dphi[k, 1], dphi[k, 2]
            c0, c1, c2 = p1 * d2 - p2 * d1, p2 * d0 - p0 * d2, p0 * d1 - p1 * d0
            e0, e1, e2 = p1 * c2 - p2 * c1, p2 * c0 - p0 * c2, p0 * c1 - p1 * c0
            jl[k, 0] = d0 + a * c0 + b * e0
            jl[k, 1] = d1 + a * c1 + b * e1
            jl[k, 2] = d2 + a * c2 + b * e2
    return quat, jl
