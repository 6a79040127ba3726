"""dynamic-v1's compiled drive kernel against the scalar Python model it replaced: the same bits."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p

from simready.sim.backends.dynamic.drive import DRIVE_POSITION_TAU_S, DRIVE_YAW_TAU_S, SUPPORT_TAU_S
from simready.sim.backends.dynamic.kernels import (
    agent_drive_rows,
    body_frames,
    body_rows,
    bullet_matrix,
    ground_under,
    py_hypot,
)
from simready.sim.core.scene import GROUND_RASTER_M, GroundModel


def test_py_hypot_is_math_hypot() -> None:
    rng = np.random.default_rng(7)
    n = 200_000
    x = rng.normal(size=n) * 10 ** rng.uniform(-8, 8, n)
    y = rng.normal(size=n) * 10 ** rng.uniform(-8, 8, n)
    x[:100] *= 1e-310  # subnormal coordinates: the divide-by-max path
    y[100:200] = 0.0
    x[200:210], y[205:215] = np.inf, np.nan
    for a, b in zip(x.tolist(), y.tolist()):
        want, got = math.hypot(a, b), py_hypot(a, b)
        assert got == want or (math.isnan(got) and math.isnan(want)), (a, b)
    # numba's own hypot (the C library's) differs from Python's on some of these: why the kernel has its own.
    assert (np.hypot(x, y) != np.array([math.hypot(a, b) for a, b in zip(x.tolist(), y.tolist())])).any()


def test_bullet_matrix_is_pybullets() -> None:
    rng = np.random.default_rng(8)
    q = rng.normal(size=(20_000, 4))
    q[::2] /= np.linalg.norm(q[::2], axis=1)[:, None]
    out = np.empty(9)
    for row in q:
        bullet_matrix(row, out)
        assert tuple(out.tolist()) == p.getMatrixFromQuaternion(row.tolist())


def _reference(idx, stop, parked, accel, pos, vel, omega, quat, kpos, kvel, komega, yaw, cyaw, ground, mass, wheelbase,
               inertia, com, mu_g, g, dt):
    """The scalar drive model as ``agent_drives`` computed it before the kernel (Python floats, PyBullet's matrix)."""
    pos_l, vel_l, om_l, quat_l = pos.tolist(), vel.tolist(), omega.tolist(), quat.tolist()
    kp, kv, ko = kpos.tolist(), kvel.tolist(), komega.tolist()
    yaw_l, cyaw_l = yaw.tolist(), cyaw.tolist()
    two_pi, pi = 2 * math.pi, math.pi
    rows = []
    for k, i in enumerate(idx.tolist()):
        x, y, z = pos_l[i]
        vx, vy, vz = vel_l[i]
        wx, wy, wz = om_l[i]
        if stop[k]:
            decel = mu_g if parked[i] else min(max(-float(accel[i]), 0.0), mu_g) or mu_g
            speed = math.hypot(vx, vy)
            keep = max(1.0 - decel * dt / speed, 0.0) if speed > 0.0 else 0.0
            ax, ay = (keep - 1.0) * vx / dt, (keep - 1.0) * vy / dt
            w_des = 0.0
        else:
            tx, ty = kv[i][0], kv[i][1]
            px, py = kp[i][0], kp[i][1]
            ex = px - (x + 0.5 * (vx + tx) * dt)
            ey = py - (y + 0.5 * (vy + ty) * dt)
            ax = (tx + ex / DRIVE_POSITION_TAU_S - vx) / dt
            ay = (ty + ey / DRIVE_POSITION_TAU_S - vy) / dt
            wt = ko[i][2]
            head = (yaw_l[i] - (cyaw_l[i] + 0.5 * (wz + wt) * dt) + pi) % two_pi - pi
            w_des = wt + head / DRIVE_YAW_TAU_S
        acc = math.hypot(ax, ay)
        if acc > mu_g:
            ax, ay = ax * mu_g / acc, ay * mu_g / acc
        az = g + ((float(ground[k]) - z) / SUPPORT_TAU_S - vz) / dt
        R = p.getMatrixFromQuaternion(quat_l[i])
        dwx, dwy, dwz = R[5] / SUPPORT_TAU_S - wx, -R[2] / SUPPORT_TAU_S - wy, w_des - wz
        rx = (R[0] * dwx + R[3] * dwy + R[6] * dwz) / dt
        ry = (R[1] * dwx + R[4] * dwy + R[7] * dwz) / dt
        rz = (R[2] * dwx + R[5] * dwy + R[8] * dwz) / dt
        i00, i01, i02, i10, i11, i12, i20, i21, i22 = inertia[k].tolist()
        ix, iy, iz = (i00 * rx + i01 * ry + i02 * rz, i10 * rx + i11 * ry + i12 * rz, i20 * rx + i21 * ry + i22 * rz)
        tqx, tqy, tqz = (R[0] * ix + R[1] * iy + R[2] * iz, R[3] * ix + R[4] * iy + R[5] * iz,
                         R[6] * ix + R[7] * iy + R[8] * iz)
        m = float(mass[k])
        limit = m * mu_g * 0.5 * float(wheelbase[k])
        tqz = max(min(tqz, limit), -limit)
        cx, cy, cz = com[k].tolist()
        rows.append([m * ax, m * ay, m * az, tqx, tqy, tqz, x + R[0] * cx + R[1] * cy + R[2] * cz,
                     y + R[3] * cx + R[4] * cy + R[5] * cz, z + R[6] * cx + R[7] * cy + R[8] * cz, vx, vy, vz])
    return rows


def test_agent_drive_rows_match_the_scalar_model() -> None:
    rng = np.random.default_rng(9)
    n = 12
    for trial in range(300):
        pos = rng.normal(size=(n, 3)) * [50.0, 50.0, 0.3]
        vel = rng.normal(size=(n, 3)) * [8.0, 8.0, 0.2]
        vel[trial % n, :2] = 0.0  # a body at rest (the stop branch's zero speed)
        omega = rng.normal(size=(n, 3)) * 0.3
        quat = rng.normal(size=(n, 4)) * [0.05, 0.05, 1.0, 1.0]
        quat /= np.linalg.norm(quat, axis=1)[:, None]
        kpos = pos + rng.normal(size=(n, 3)) * 0.2
        kvel = vel + rng.normal(size=(n, 3))
        komega = omega + rng.normal(size=(n, 3)) * 0.1
        yaw, cyaw = rng.uniform(-4.0, 4.0, n), rng.uniform(-4.0, 4.0, n)
        parked = rng.random(n) < 0.3
        accel = rng.normal(size=n) * 3.0
        accel[trial % n] = 0.0  # no braking demand: μ·g
        idx = rng.permutation(n)[: rng.integers(1, n)].astype(np.int64)
        k = len(idx)
        stop = rng.random(k) < 0.4
        ground = rng.normal(size=k) * 0.2
        mass = rng.uniform(800.0, 3000.0, k)
        wheelbase = rng.uniform(2.0, 3.5, k)
        inertia = rng.normal(size=(k, 9)) * 300.0
        com = rng.normal(size=(k, 3)) * 0.3
        mu_g = float(rng.uniform(0.2, 1.0)) * 9.81
        out = np.empty((k, 12))
        args = (idx, stop, parked, accel, pos, vel, omega, quat, kpos, kvel, komega, yaw, cyaw, ground, mass, wheelbase,
                inertia, com, mu_g, 9.81, 0.02)
        agent_drive_rows(*args, DRIVE_POSITION_TAU_S, DRIVE_YAW_TAU_S, SUPPORT_TAU_S, out)
        assert out.tolist() == _reference(*args)


def test_body_rows_match_the_scalar_reads() -> None:
    """The moved bodies' rows (:meth:`DynamicBackend._read_frames`' and :func:`finish_rows`' kernels) against the per-body Python arithmetic
    they replaced: the quaternion's sign, PyBullet's matrix, origin and its velocity from the lever arm, heading,
    forward speed and slip."""
    rng = np.random.default_rng(10)
    for trial in range(200):
        n = int(rng.integers(1, 9))
        reads = rng.normal(size=(n, 13)) * ([30.0] * 3 + [1.0] * 4 + [6.0] * 3 + [0.5] * 3)
        reads[:, 3:7] /= np.linalg.norm(reads[:, 3:7], axis=1)[:, None]
        reads[trial % n, 7:9] *= 1e-3  # crawling: the heading stands in for the direction of motion
        coms = rng.normal(size=(n, 3, 1)) * 0.4
        quat, rot, table = np.empty((n, 4)), np.empty((n, 9)), np.empty((n, 16))
        body_frames(reads, quat, rot)
        levers = rot.reshape(n, 3, 3) @ coms
        body_rows(reads, quat, rot, levers, table)
        # The reference: each body's floats as the backend computed them one by one.
        raw = []
        for row in reads.tolist():
            q = tuple(row[3:7])
            if q[3] < 0:
                q = tuple(-x for x in q)
            raw.append((row[0:3], q, row[7:10], row[10:13], p.getMatrixFromQuaternion(q)))
        ref_levers = (np.array([r[4] for r in raw]).reshape(-1, 3, 3) @ coms).tolist()
        assert levers.tolist() == ref_levers
        rows = []
        for (com_w, q, lin, (wx, wy, wz), R), ((rx,), (ry,), (rz,)) in zip(raw, ref_levers):
            bp = [com_w[0] - rx, com_w[1] - ry, com_w[2] - rz]
            bv = [lin[0] - (wy * rz - wz * ry), lin[1] - (wz * rx - wx * rz), lin[2] - (wx * ry - wy * rx)]
            heading = math.atan2(R[3], R[0])
            vx, vy = bv[0], bv[1]
            vdir = math.atan2(vy, vx) if math.hypot(vx, vy) > 0.1 else heading
            rows.append([*bp, *q, *bv, wx, wy, wz, heading, max(vx * math.cos(heading) + vy * math.sin(heading), 0.0),
                         (vdir - heading + math.pi) % (2 * math.pi) - math.pi])
        assert table.tolist() == rows


def test_ground_under_is_at_point() -> None:
    """The compiled ground look-up gives ``GroundModel.at_point``'s heights (its cells: inside, on the edges, far
    outside on every side, beyond the integer range), and refuses a point that is not finite."""
    rng = np.random.default_rng(9)
    gm = GroundModel(x0=-12.3, y0=4.56, heights=rng.normal(size=(37, 53)))
    n = 20_000
    pos = np.zeros((n, 3))
    pos[:, 0] = gm.x0 + rng.uniform(-2.0, 6.0, n)
    pos[:, 1] = gm.y0 + rng.uniform(-2.0, 7.0, n)
    pos[:50, 0] = gm.x0 + np.arange(50) * GROUND_RASTER_M  # cell boundaries
    pos[50:60, 0], pos[60:70, 1] = 1e300, -1e300
    pos[70:80, 0] = np.nextafter(gm.x0, -np.inf)
    idx = rng.permutation(n).astype(np.int64)
    out = np.empty(n)
    assert ground_under(gm.heights, gm.x0, gm.y0, 1.0 / GROUND_RASTER_M, pos, idx, out)
    want = [gm.at_point(pos[i, 0], pos[i, 1]) for i in idx.tolist()]
    assert out.tolist() == want
    pos[idx[3], 1] = np.nan
    assert not ground_under(gm.heights, gm.x0, gm.y0, 1.0 / GROUND_RASTER_M, pos, idx, out)


def test_ego_steer_setup_is_the_backends_steer_and_tyre_setup() -> None:
    """kernels.ego_steer_setup (the compiled tick's) gives the bits of DynamicBackend._steer and tyre_setup: states
    along a rollout, each with random positions, headings, speeds, offsets and previous angles (some far off the
    path, some crashed, a NaN speed)."""
    from dataclasses import replace

    from simready.sim.backends.dynamic.kernels import ego_steer_setup
    from simready.sim.core.scene import build_scene
    from simready.sim.engine import Engine
    from simready.testing import demo
    from tests.fixtures.sim import catalog, template

    tpl = template()
    scene = build_scene(demo.bench_manifest(tpl, catalog(), clip_s=7.0), tpl, backend="dynamic-v1", catalog=catalog())
    engine = Engine(scene)
    rng = np.random.default_rng(11)
    checked = 0
    try:
        backend = engine.backend
        e = scene.actors.ego
        assert e is not None
        while engine.step():
            if engine.state.tick % 25:
                continue
            route = engine.route
            cum, base, last, pts, dirs = route.paths.kernel_arrays[:5]
            for trial in range(6):
                s = engine.state
                n = len(s.coords.u)
                pos = np.array(s.bodies.pos)
                pos[:, :2] += rng.normal(0, 3.0 if trial else 0.0, (n, 2))
                yaw = np.array(s.coords.yaw) + rng.normal(0, 0.5, n)
                v = np.abs(np.array(s.coords.v) + rng.normal(0, 3.0, n))
                if trial == 5:
                    v[e] = np.nan
                d_ref = rng.normal(0, 1.0, n)
                u = np.array(s.coords.u) + rng.normal(0, 5.0, n)
                prev = float(rng.normal(0, 0.3))
                crashed = trial == 4
                friction = float(rng.uniform(0.3, 1.0))
                state = s.evolve(bodies=replace(s.bodies, pos=pos),
                                 coords=replace(s.coords, yaw=yaw, v=v, u=u),
                                 control=replace(s.control, steer_rad=prev))
                plan = type("P", (), {"d_ref": d_ref})()
                want = backend._steer(state, route, plan, crashed)  # type: ignore[attr-defined]
                want_setup = backend._tyre_setup(want, friction)  # type: ignore[attr-defined]
                setup = np.zeros(11)
                got = ego_steer_setup(e, crashed, prev, friction, backend._ego_k, u, d_ref, v, pos, yaw,  # type: ignore[attr-defined]
                                      cum, base, last, pts, dirs, setup)
                assert got == want or (math.isnan(got) and math.isnan(want))
                assert setup.tobytes() == np.array(want_setup).tobytes() or math.isnan(want)
                checked += 1
    finally:
        engine.close()
    assert checked > 50
