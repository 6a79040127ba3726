"""Compiled kernels of ``dynamic-v1``'s tick (numba): the agents' drive model over all agents at once, the ground under
them, the moved bodies' rows.

Bits: each kernel repeats the Python reference's IEEE operations in the
same order (``fastmath`` off: no reassociation, no fused multiply-add), so
its floats are the reference's (tested against it). Two operations are
rebuilt rather than taken from numba, because numba's own differ in the
last bit: :func:`py_hypot` is CPython's ``math.hypot`` of two floats (its
compensated sum and corrected square root, not the C library's
``hypot``), and :func:`bullet_matrix` is Bullet's quaternion-to-matrix
arithmetic (what ``p.getMatrixFromQuaternion`` returns). ``%`` is
numba's, which follows Python's float modulo (the sign of the divisor).

The compiled code is cached beside this module (``cache=True``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.sim.core import kernels as core_kernels
from simready.sim.core.kernels import _segment, bodies_verdict, contact_pairs, project_near
from simready.sim.core.cache_stamp import stamp_callees

# The cached kernels here carry compiled copies of the core kernels they call: their cache follows those too.
stamp_callees(__file__, (core_kernels.__file__,))

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)

#: Veltkamp's splitter for a double: 2**27 + 1.
_SPLIT = 134217729.0


@numba.njit(**_JIT)
def py_hypot(a: float, b: float) -> float:
    """``math.hypot(a, b)`` as CPython 3.11 computes it (``vector_norm`` of two coordinates), the same bits.

    Lossless scaling by a power of two, exact squares by Veltkamp–Dekker
    splitting, compensated summation, then one differential correction of
    the square root.
    """
    x0, x1 = abs(a), abs(b)
    if math.isnan(x0) or math.isnan(x1):
        if math.isinf(x0) or math.isinf(x1):
            return math.inf
        return math.nan
    big = x1 if x1 > x0 else x0
    if math.isinf(big):
        return big
    if big == 0.0:
        return big
    max_e = math.frexp(big)[1]
    csum, frac1, frac2, frac3 = 1.0, 0.0, 0.0, 0.0
    if max_e >= -1023:
        scale = math.ldexp(1.0, -max_e)
        for k in range(2):
            x = (x0 if k == 0 else x1) * scale
            t = x * _SPLIT
            hi = t - (t - x)
            lo = x - hi
            x = hi * hi
            old = csum
            csum += x
            frac1 += (old - csum) + x
            x = 2.0 * hi * lo
            old = csum
            csum += x
            frac2 += (old - csum) + x
            frac3 += lo * lo
        h = math.sqrt(csum - 1.0 + (frac1 + frac2 + frac3))
        t = h * _SPLIT
        hi = t - (t - h)
        lo = h - hi
        x = -hi * hi
        old = csum
        csum += x
        frac1 += (old - csum) + x
        x = -2.0 * hi * lo
        old = csum
        csum += x
        frac2 += (old - csum) + x
        x = -lo * lo
        old = csum
        csum += x
        frac3 += (old - csum) + x
        x = csum - 1.0 + (frac1 + frac2 + frac3)
        return (h + x / (2.0 * h)) / scale
    # Scaling would overflow (subnormal inputs): divide by the largest instead.
    for k in range(2):
        x = (x0 if k == 0 else x1) / big
        x = x * x
        old = csum
        csum += x
        frac1 += (old - csum) + x
    return big * math.sqrt(csum - 1.0 + frac1)


@numba.njit(**_JIT)
def bullet_matrix(q: np.ndarray, out: np.ndarray) -> None:
    """Bullet's ``btMatrix3x3::setRotation`` of quaternion ``q`` = [x, y, z, w] into ``out`` (9 floats, row-major):
    ``p.getMatrixFromQuaternion``'s operations in its order (double precision, no SIMD)."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    s = 2.0 / (x * x + y * y + z * z + w * w)
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    out[0], out[1], out[2] = 1.0 - (yy + zz), xy - wz, xz + wy
    out[3], out[4], out[5] = xy + wz, 1.0 - (xx + zz), yz - wx
    out[6], out[7], out[8] = xz - wy, yz + wx, 1.0 - (xx + yy)


@numba.njit(inline="always", **_JIT)
def ground_under(heights: np.ndarray, x0: float, y0: float, scale: float, pos: np.ndarray, idx: np.ndarray,
                 out: np.ndarray) -> bool:
    """The ground height under the origins of bodies ``idx`` (rows of ``pos``) into ``out``:
    :meth:`simready.sim.core.scene.GroundModel.at_point`'s operations (``scale`` its 1 / raster), so its cells.

    False (``out`` incomplete) where a coordinate is not finite: the caller asks ``at_point`` then (its fallback).
    """
    nx, ny = heights.shape
    for k in range(len(idx)):
        i = idx[k]
        fx, fy = (pos[i, 0] - x0) * scale, (pos[i, 1] - y0) * scale
        if not (math.isfinite(fx) and math.isfinite(fy)):
            return False
        # min(max(int(f), 0), n - 1), without converting a float beyond the integer range.
        a = nx - 1 if fx >= nx - 1 else (0 if fx <= 0.0 else int(fx))
        b = ny - 1 if fy >= ny - 1 else (0 if fy <= 0.0 else int(fy))
        out[k] = heights[a, b]
    return True


@numba.njit(inline="always", **_JIT)
def agent_drive_rows(idx: np.ndarray, stop: np.ndarray, parked: np.ndarray, accel: np.ndarray, pos: np.ndarray,
                     vel: np.ndarray, omega: np.ndarray, quat: np.ndarray, kpos: np.ndarray, kvel: np.ndarray,
                     komega: np.ndarray, yaw: np.ndarray, cyaw: np.ndarray, ground: np.ndarray, mass: np.ndarray,
                     wheelbase: np.ndarray, inertia: np.ndarray, com: np.ndarray, mu_g: float, g: float, dt: float,
                     pos_tau: float, yaw_tau: float, support_tau: float, out: np.ndarray) -> None:
    """:func:`simready.sim.backends.dynamic.drive.agent_drives`' arithmetic for agents ``idx``, row ``k`` of ``out``:
    force xyz (N), torque xyz (N·m), centre of mass xyz (m), velocity xyz (m/s).

    ``stop``, ``ground``, ``mass``, ``wheelbase``, ``inertia`` (k, 9), ``com``
    (k, 3): per listed agent; ``parked``, ``accel``, the body rows, ``yaw``
    and ``cyaw``: per actor.
    """
    two_pi, pi = 2 * math.pi, math.pi
    R = np.empty(9)
    for k in range(len(idx)):
        i = idx[k]
        x, y, z = pos[i, 0], pos[i, 1], pos[i, 2]
        vx, vy, vz = vel[i, 0], vel[i, 1], vel[i, 2]
        wx, wy, wz = omega[i, 0], omega[i, 1], omega[i, 2]
        if stop[k]:
            if parked[i]:
                decel = mu_g
            else:
                # min(max(-a, 0.0), mu_g) or mu_g, with Python's min/max (the first of equals) and truth.
                t = -accel[i]
                t = 0.0 if 0.0 > t else t
                t = mu_g if mu_g < t else t
                decel = t if t != 0.0 else mu_g
            speed = py_hypot(vx, vy)
            if speed > 0.0:
                keep = 1.0 - decel * dt / speed
                keep = 0.0 if 0.0 > keep else keep
            else:
                keep = 0.0
            ax, ay = (keep - 1.0) * vx / dt, (keep - 1.0) * vy / dt
            w_des = 0.0
        else:
            tx, ty = kvel[i, 0], kvel[i, 1]
            px, py = kpos[i, 0], kpos[i, 1]
            ex = px - (x + 0.5 * (vx + tx) * dt)
            ey = py - (y + 0.5 * (vy + ty) * dt)
            ax = (tx + ex / pos_tau - vx) / dt
            ay = (ty + ey / pos_tau - vy) / dt
            wt = komega[i, 2]
            head = (yaw[i] - (cyaw[i] + 0.5 * (wz + wt) * dt) + pi) % two_pi - pi
            w_des = wt + head / yaw_tau
        acc = py_hypot(ax, ay)
        if acc > mu_g:
            ax, ay = ax * mu_g / acc, ay * mu_g / acc
        az = g + ((ground[k] - z) / support_tau - vz) / dt
        bullet_matrix(quat[i], R)
        dwx, dwy, dwz = R[5] / support_tau - wx, -R[2] / support_tau - wy, w_des - wz
        rx = (R[0] * dwx + R[3] * dwy + R[6] * dwz) / dt
        ry = (R[1] * dwx + R[4] * dwy + R[7] * dwz) / dt
        rz = (R[2] * dwx + R[5] * dwy + R[8] * dwz) / dt
        ix = inertia[k, 0] * rx + inertia[k, 1] * ry + inertia[k, 2] * rz
        iy = inertia[k, 3] * rx + inertia[k, 4] * ry + inertia[k, 5] * rz
        iz = inertia[k, 6] * rx + inertia[k, 7] * ry + inertia[k, 8] * rz
        tqx = R[0] * ix + R[1] * iy + R[2] * iz
        tqy = R[3] * ix + R[4] * iy + R[5] * iz
        tqz = R[6] * ix + R[7] * iy + R[8] * iz
        m = mass[k]
        limit = m * mu_g * 0.5 * wheelbase[k]
        tqz = limit if limit < tqz else tqz
        tqz = -limit if -limit > tqz else tqz
        cx, cy, cz = com[k, 0], com[k, 1], com[k, 2]
        out[k, 0], out[k, 1], out[k, 2] = m * ax, m * ay, m * az
        out[k, 3], out[k, 4], out[k, 5] = tqx, tqy, tqz
        out[k, 6] = x + R[0] * cx + R[1] * cy + R[2] * cz
        out[k, 7] = y + R[3] * cx + R[4] * cy + R[5] * cz
        out[k, 8] = z + R[6] * cx + R[7] * cy + R[8] * cz
        out[k, 9], out[k, 10], out[k, 11] = vx, vy, vz


@numba.njit(**_JIT)
def body_frames(raw: np.ndarray, quat: np.ndarray, rot: np.ndarray) -> None:
    """Each read body's orientation: ``raw`` rows are PyBullet's reads (centre of mass xyz, the body quaternion
    [x, y, z, w] already composed with the inertial frame, linear and angular velocity); ``quat`` gets the
    quaternion with w ≥ 0 (negated otherwise) and ``rot`` its rotation matrix (:func:`bullet_matrix`)."""
    for k in range(raw.shape[0]):
        if raw[k, 6] < 0:
            for c in range(4):
                quat[k, c] = -raw[k, 3 + c]
        else:
            for c in range(4):
                quat[k, c] = raw[k, 3 + c]
        bullet_matrix(quat[k], rot[k])


@numba.njit(inline="always", **_JIT)
def body_rows(raw: np.ndarray, quat: np.ndarray, rot: np.ndarray, lever: np.ndarray, table: np.ndarray) -> None:
    """The moved bodies' rows from their reads (:func:`body_frames`) and lever arms ``lever`` (n, 3, 1: origin to
    centre of mass, world): ``table`` row = origin xyz, quaternion, origin velocity, angular velocity, heading,
    forward speed (≥ 0) and slip angle (rad), the scalar model's operations in its order."""
    two_pi, pi = 2 * math.pi, math.pi
    for k in range(raw.shape[0]):
        rx, ry, rz = lever[k, 0, 0], lever[k, 1, 0], lever[k, 2, 0]
        wx, wy, wz = raw[k, 10], raw[k, 11], raw[k, 12]
        table[k, 0] = raw[k, 0] - rx
        table[k, 1] = raw[k, 1] - ry
        table[k, 2] = raw[k, 2] - rz
        for c in range(4):
            table[k, 3 + c] = quat[k, c]
        vx = raw[k, 7] - (wy * rz - wz * ry)
        vy = raw[k, 8] - (wz * rx - wx * rz)
        table[k, 7], table[k, 8] = vx, vy
        table[k, 9] = raw[k, 9] - (wx * ry - wy * rx)
        table[k, 10], table[k, 11], table[k, 12] = wx, wy, wz
        heading = math.atan2(rot[k, 3], rot[k, 0])
        vdir = math.atan2(vy, vx) if py_hypot(vx, vy) > 0.1 else heading
        speed = vx * math.cos(heading) + vy * math.sin(heading)
        table[k, 13] = heading
        table[k, 14] = 0.0 if 0.0 > speed else speed
        table[k, 15] = (vdir - heading + pi) % two_pi - pi


@numba.njit(**_JIT)
def thrown_rows(table: np.ndarray, thrown: np.ndarray, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray,
                omega: np.ndarray, yaw: np.ndarray, u: np.ndarray, d: np.ndarray, speed: np.ndarray,
                prev_u: np.ndarray, prev_d: np.ndarray) -> None:
    """The thrown road users' rows (:meth:`.thrown.ThrownBodies._read_thrown`): their bodies' rows (:func:`body_rows`
    of their reads, ``table``) at actors ``thrown``, where they stay on their paths (``prev_u``, ``prev_d``) at no
    speed (:meth:`.backend.DynamicBackend.advance`'s struck road users)."""
    for k in range(len(thrown)):
        i = thrown[k]
        _body_row(table, k, i, pos, quat, vel, omega)
        yaw[i] = table[k, 13]
        u[i], d[i], speed[i] = prev_u[i], prev_d[i], 0.0


@numba.njit(**_JIT)
def _body_row(table: np.ndarray, k: int, i: int, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray,
              omega: np.ndarray) -> None:
    """Row ``k`` of :func:`body_rows`' ``table`` into actor ``i``'s origin, quaternion, velocity and angular velocity."""
    for c in range(3):
        pos[i, c] = table[k, c]
        vel[i, c] = table[k, 7 + c]
        omega[i, c] = table[k, 10 + c]
    for c in range(4):
        quat[i, c] = table[k, 3 + c]


@numba.njit(inline="always", **_JIT)
def scatter_rows(table: np.ndarray, sel: np.ndarray, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray,
                 omega: np.ndarray, yaw: np.ndarray, speed: np.ndarray, slip: np.ndarray, x: np.ndarray,
                 y: np.ndarray) -> None:
    """The moved bodies' rows (:func:`body_rows`) into the per-actor arrays at actors ``sel``: origin, quaternion,
    velocity, angular velocity, heading, forward speed, slip angle (copies, no arithmetic); ``x``, ``y`` get the
    origins' coordinates in ``sel``'s order."""
    for k in range(len(sel)):
        i = sel[k]
        _body_row(table, k, i, pos, quat, vel, omega)
        yaw[i], speed[i], slip[i] = table[k, 13], table[k, 14], table[k, 15]
        x[k], y[k] = table[k, 0], table[k, 1]


@numba.njit(inline="always", **_JIT)
def place_rows(table: np.ndarray, sel: np.ndarray, stand: np.ndarray, prev_pos: np.ndarray, prev_quat: np.ndarray,
               prev_yaw: np.ndarray, prev_u: np.ndarray, prev_d: np.ndarray, cum: np.ndarray, base: np.ndarray,
               last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, window: int, pos: np.ndarray, quat: np.ndarray,
               vel: np.ndarray, omega: np.ndarray, yaw: np.ndarray, u: np.ndarray, d: np.ndarray, speed: np.ndarray,
               slip: np.ndarray) -> None:
    """The end of a tick's rows, in the per-actor arrays (copies, and the projection's own operations):

    * the actors ``stand`` (sleeping parked vehicles) stand where they stood: the previous pose (``prev_pos``,
      ``prev_quat``), heading and path coordinates (``prev_yaw``, ``prev_u``, ``prev_d``), at rest;
    * the moved bodies' rows (:func:`body_rows`) scattered to actors ``sel`` (:func:`scatter_rows`), and each of them
      projected back onto its path near its previous arc length
      (:func:`simready.sim.core.kernels.project_near` over the path table's arrays ``cum`` … ``dirs``), into ``u``, ``d``.
    """
    n = len(sel)
    px, py, hints, pu, pd = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    place_rows_into(table, sel, stand, prev_pos, prev_quat, prev_yaw, prev_u, prev_d, cum, base, last, pts, dirs,
                    window, pos, quat, vel, omega, yaw, u, d, speed, slip, px, py, hints, pu, pd)


@numba.njit(inline="always", **_JIT)
def place_rows_into(table: np.ndarray, sel: np.ndarray, stand: np.ndarray, prev_pos: np.ndarray,
                    prev_quat: np.ndarray, prev_yaw: np.ndarray, prev_u: np.ndarray, prev_d: np.ndarray,
                    cum: np.ndarray, base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray,
                    window: int, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray,
                    yaw: np.ndarray, u: np.ndarray, d: np.ndarray, speed: np.ndarray, slip: np.ndarray,
                    px: np.ndarray, py: np.ndarray, hints: np.ndarray, pu: np.ndarray, pd: np.ndarray) -> None:
    """:func:`place_rows` with its scratch given (``px`` … ``pd``: at least ``len(sel)`` each), so that it allocates
    nothing."""
    for k in range(len(stand)):
        i = stand[k]
        for c in range(3):
            pos[i, c] = prev_pos[i, c]
            vel[i, c] = 0.0
            omega[i, c] = 0.0
        for c in range(4):
            quat[i, c] = prev_quat[i, c]
        yaw[i], u[i], d[i], speed[i] = prev_yaw[i], prev_u[i], prev_d[i], 0.0
    n = len(sel)
    if n == 0:
        return
    scatter_rows(table, sel, pos, quat, vel, omega, yaw, speed, slip, px, py)
    for k in range(n):
        hints[k] = prev_u[sel[k]]
    project_near(cum, base, last, pts, dirs, sel, px, py, hints, window, pu, pd)
    for k in range(n):
        u[sel[k]] = pu[k]
        d[sel[k]] = pd[k]


#: Slots of :func:`ego_steer_setup`'s per-rollout constants ``k``: the steering's (preview distance floor and gain,
#: rear axle to origin, wheelbase, steering limit, the largest change in a tick) and the tyre model's
#: (:func:`~.chassis.tyre_setup`'s mass, axle distances, cornering stiffness per axle, axle loads, g, substep).
(E_PREVIEW_MIN, E_PREVIEW_GAIN, E_LR, E_WHEELBASE, E_MAX_STEER, E_STEP, E_MASS, E_LF, E_LR_AXLE, E_KF, E_KR, E_FZ_F,
 E_FZ_R, E_G, E_H) = range(15)


@numba.njit(inline="always", **_JIT)
def ego_steer_setup(e: int, crashed: bool, prev: float, friction: float, k: np.ndarray, u: np.ndarray,
                    d_ref: np.ndarray, v: np.ndarray, pos: np.ndarray, yaw: np.ndarray, cum: np.ndarray,
                    base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, setup: np.ndarray) -> float:
    """The ego's steering angle for the tick (:meth:`~.backend.DynamicBackend._steer`: pure pursuit of its path a
    preview distance ahead, :func:`simready.sim.controllers.lateral.preview_steer`, limited in angle and rate; straight
    after a crash) and the tyre constants under it into ``setup`` (:func:`~.chassis.tyre_setup`), their operations in
    their order: the path point is ``Polyline.point_at``'s (a NaN arc length on the last segment), ``math.hypot``
    CPython's (:func:`py_hypot`), Python's ``min``/``max`` the first of equals."""
    if crashed:
        want = 0.0
    else:
        gain = k[E_PREVIEW_GAIN] * v[e]
        look = gain if gain > k[E_PREVIEW_MIN] else k[E_PREVIEW_MIN]
        x, y, psi = pos[e, 0], pos[e, 1], yaw[e]
        rear_x, rear_y = x - math.cos(psi) * k[E_LR], y - math.sin(psi) * k[E_LR]
        s = u[e] + look
        b = base[e]
        i = b + (last[e] if s != s else _segment(cum, b, last[e], s))
        dx, dy = dirs[i, 0], dirs[i, 1]
        along = s - cum[i]
        bx, by = pts[i, 0] + dx * along, pts[i, 1] + dy * along
        t = d_ref[e]
        ddx, ddy = (bx - dy * t) - rear_x, (by + dx * t) - rear_y
        dist = py_hypot(ddx, ddy)
        if dist < 1e-6:
            want = 0.0
        else:
            alpha = math.atan2(ddy, ddx) - psi
            alpha = (alpha + math.pi) % (2 * math.pi) - math.pi
            want = math.atan2(2.0 * k[E_WHEELBASE] * math.sin(alpha), dist)
        limit = k[E_MAX_STEER]
        want = limit if limit < want else want
        want = -limit if -limit > want else want
    step = k[E_STEP]
    delta = want - prev
    delta = step if step < delta else delta
    delta = -step if -step > delta else delta
    steer = prev + delta
    m = k[E_MASS]
    setup[0], setup[1], setup[2] = m, k[E_LF], k[E_LR_AXLE]
    setup[3], setup[4] = k[E_KF], k[E_KR]
    setup[5], setup[6] = friction * k[E_FZ_F], friction * k[E_FZ_R]
    setup[7], setup[8] = math.cos(steer), math.sin(steer)
    setup[9], setup[10] = friction * m * k[E_G], k[E_H]
    return steer


@numba.njit(**_JIT)
def finish_rows(reads: np.ndarray, frame_quat: np.ndarray, frame_rot: np.ndarray, lever: np.ndarray, sel: np.ndarray,
                stand: np.ndarray, prev_pos: np.ndarray, prev_quat: np.ndarray, prev_yaw: np.ndarray,
                prev_u: np.ndarray, prev_d: np.ndarray, cum: np.ndarray, base: np.ndarray, last: np.ndarray,
                pts: np.ndarray, dirs: np.ndarray, window: int, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray,
                omega: np.ndarray, yaw: np.ndarray, u: np.ndarray, d: np.ndarray, speed: np.ndarray, slip: np.ndarray,
                present: np.ndarray, reach2: np.ndarray, hl: np.ndarray, hw: np.ndarray, pairs: np.ndarray,
                max_speed: float, lo_x: float, hi_x: float, lo_y: float, hi_y: float, max_abs_z: float,
                leaves: np.ndarray, lengths: np.ndarray) -> tuple[int, int]:
    """The end of a dynamic tick in one call: the moved bodies' rows from their reads and frames (:func:`body_rows`),
    placed with the standing ones into the per-actor arrays (:func:`place_rows`), then the footprint overlaps of
    the final poses into ``pairs`` (:func:`simready.sim.core.kernels.contact_pairs`, what
    :func:`simready.sim.core.kinematics.footprint_contacts` returns) and the engine's verdict on the final bodies
    (:func:`simready.sim.core.kernels.state_ok` without and with the bounds, and nobody on a path leaving the map past
    its end: the bits of :func:`simready.sim.core.kernels.pack_step_walk_ok`'s). Returns the number of pairs and
    the verdict."""
    n = len(sel)
    table = np.empty((reads.shape[0], 16))
    px, py, hints, pu, pd = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    out: tuple[int, int] = finish_rows_into(reads, frame_quat, frame_rot, lever, sel, stand, prev_pos, prev_quat,
                                            prev_yaw, prev_u, prev_d, cum, base, last, pts, dirs, window, pos, quat,
                                            vel, omega, yaw, u, d, speed, slip, present, reach2, hl, hw, pairs,
                                            max_speed, lo_x, hi_x, lo_y, hi_y, max_abs_z, leaves, lengths, table, px,
                                            py, hints, pu, pd)
    return out


@numba.njit(**_JIT)
def finish_rows_into(reads: np.ndarray, frame_quat: np.ndarray, frame_rot: np.ndarray, lever: np.ndarray,
                     sel: np.ndarray, stand: np.ndarray, prev_pos: np.ndarray, prev_quat: np.ndarray,
                     prev_yaw: np.ndarray, prev_u: np.ndarray, prev_d: np.ndarray, cum: np.ndarray, base: np.ndarray,
                     last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, window: int, pos: np.ndarray,
                     quat: np.ndarray, vel: np.ndarray, omega: np.ndarray, yaw: np.ndarray, u: np.ndarray,
                     d: np.ndarray, speed: np.ndarray, slip: np.ndarray, present: np.ndarray, reach2: np.ndarray,
                     hl: np.ndarray, hw: np.ndarray, pairs: np.ndarray, max_speed: float, lo_x: float, hi_x: float,
                     lo_y: float, hi_y: float, max_abs_z: float, leaves: np.ndarray, lengths: np.ndarray,
                     table: np.ndarray, px: np.ndarray, py: np.ndarray, hints: np.ndarray, pu: np.ndarray,
                     pd: np.ndarray) -> tuple[int, int]:
    """:func:`finish_rows` with its scratch given (``table``: ``len(reads)`` × 16; ``px`` … ``pd``: ``len(sel)``
    each), for a caller that calls it every tick (:func:`~.ticks.run_dynamic_ticks`): allocated in each call, they were
    six allocations a tick."""
    body_rows(reads, frame_quat, frame_rot, lever, table)
    place_rows_into(table, sel, stand, prev_pos, prev_quat, prev_yaw, prev_u, prev_d, cum, base, last, pts, dirs,
                    window, pos, quat, vel, omega, yaw, u, d, speed, slip, px, py, hints, pu, pd)
    m = contact_pairs(pos, yaw, present, reach2, hl, hw, pairs) if pos.shape[0] >= 2 else 0
    return m, bodies_verdict(pos, quat, vel, omega, present, max_speed, lo_x, hi_x, lo_y, hi_y, max_abs_z, u, hl, leaves,
                             lengths)


#: :func:`check_flags`' bits: the segment between the ego's centres of mass may meet a static collider (cast the
#: ray), and a rollout check may find something this tick (take the Python check).
CHECK_RAY, CHECK_FIND = 1, 2


@numba.njit(**_JIT)
def check_flags(p0: np.ndarray, p1: np.ndarray, boxes: np.ndarray, pos: np.ndarray, omega: np.ndarray,
                heights: np.ndarray, x0: float, y0: float, scale: float, below: float, rate_max: float,
                e_before: float, e_after: float, gain: float, slack: float) -> int:
    """Which of the ego's rollout checks (:class:`~.checks.RolloutChecks`) a tick needs in Python: :data:`CHECK_RAY`
    where the box around the segment ``p0`` → ``p1`` (its centres of mass before and after the tick) meets one of
    ``boxes`` (k, 6: the lower and upper corners of the static colliders other than the ground; a ray that meets none
    of them crosses none, :func:`~.checks.crossed_collider`), :data:`CHECK_FIND` where a finding is possible: the
    origin ``pos`` more than ``below`` under the ground (:meth:`simready.sim.core.scene.GroundModel.at_point`'s cell,
    ``scale`` its 1 / raster; a coordinate that is not finite is left to Python), an angular rate in ``omega`` above
    ``rate_max`` (or not finite), or the energy ``e_after`` above ``e_before · gain + slack`` (NaN: not compared).
    The same comparisons as the Python check, so where neither bit is set it notes nothing."""
    out = 0
    lo_x, hi_x = (p0[0], p1[0]) if p0[0] <= p1[0] else (p1[0], p0[0])
    lo_y, hi_y = (p0[1], p1[1]) if p0[1] <= p1[1] else (p1[1], p0[1])
    lo_z, hi_z = (p0[2], p1[2]) if p0[2] <= p1[2] else (p1[2], p0[2])
    if not (math.isfinite(lo_x) and math.isfinite(hi_x) and math.isfinite(lo_y) and math.isfinite(hi_y)
            and math.isfinite(lo_z) and math.isfinite(hi_z)):
        out |= CHECK_RAY
    else:
        for k in range(boxes.shape[0]):
            if (hi_x >= boxes[k, 0] and lo_x <= boxes[k, 3] and hi_y >= boxes[k, 1] and lo_y <= boxes[k, 4]
                    and hi_z >= boxes[k, 2] and lo_z <= boxes[k, 5]):
                out |= CHECK_RAY
                break
    fx, fy = (pos[0] - x0) * scale, (pos[1] - y0) * scale
    if not (abs(fx) < 1e15 and abs(fy) < 1e15):
        return out | CHECK_FIND  # not finite, or beyond an integer cell here: Python's check
    nx, ny = heights.shape
    i, j = int(fx), int(fy)
    i = 0 if 0 > i else i
    i = nx - 1 if nx - 1 < i else i
    j = 0 if 0 > j else j
    j = ny - 1 if ny - 1 < j else j
    if pos[2] < heights[i, j] - below:
        return out | CHECK_FIND
    for c in range(3):
        if not abs(omega[c]) <= rate_max:
            return out | CHECK_FIND
    if e_after > e_before * gain + slack:
        return out | CHECK_FIND
    return out
