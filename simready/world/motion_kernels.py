"""Compiled steps of :meth:`simready.world.motion.PoseTrack.sample` for a track turning about z only (numba):
the interval lookup, the position and velocity Hermites, the yaw Hermite and the presence rule in one pass
over the query times, and the rotation's quaternion from the yaw half-angle's sine and cosine in another,
instead of some forty small numpy passes per call (a LiDAR sweep samples tracks at every column's time).

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
def planar_hermites(t: np.ndarray, ts: np.ndarray, seg: np.ndarray, present: np.ndarray, eps: float,
                    phi: int, q0: int, h_col: int) -> tuple[np.ndarray, ...]:
    """Per query time (``t`` inside ``[ts[0], ts[-1]]``): position (M, 3), velocity (M, 3), angular velocity
    (M, 3) (z only), presence (M,), the yaw half-angle (M,) and the interval's start quaternion z and w (M,)
    each. ``seg``: the track's segment table (columns ``phi``, ``q0``, ``h_col`` as in
    :mod:`simready.world.motion`)."""
    m = t.shape[0]
    n = ts.shape[0]
    pos = np.empty((m, 3))
    vel = np.empty((m, 3))
    ang = np.zeros((m, 3))
    pres = np.empty(m, np.bool_)
    half = np.empty(m)
    qz = np.empty(m)
    qw = np.empty(m)
    for k in range(m):
        tk = t[k]
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
        for a in range(3):
            c0, c1, c2, c3 = seg[i, a], seg[i, 3 + a], seg[i, 6 + a], seg[i, 9 + a]
            pos[k, a] = c0 + s * (c1 + s * (c2 + s * c3))
            vel[k, a] = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h
        c1, c2, c3 = seg[i, phi + 2], seg[i, phi + 5], seg[i, phi + 8]
        half[k] = 0.5 * (s * (c1 + s * (c2 + s * c3)))
        ang[k, 2] = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h
        qz[k] = seg[i, q0 + 2]
        qw[k] = seg[i, q0 + 3]
        p0, p1 = present[i], present[i + 1]
        if tk - ts[i] <= eps:
            pres[k] = p0
        elif ts[i + 1] - tk <= eps:
            pres[k] = p1
        else:
            pres[k] = p0 and p1
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
