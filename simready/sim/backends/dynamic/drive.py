"""The agents' drive and support model in ``dynamic-v1`` (:func:`agent_drive`, ``agent_model`` "drive-1").

The agents (other moving vehicles) are rigid bodies like the ego, but driven
by a simpler model than its tyres: once a tick (a 50 Hz controller) a
horizontal force and a yaw torque that bring the body to the end-of-tick
velocity and heading its path controller plans, with a correction of the
position and heading error, limited to what tyres deliver (μ·m·g, and
μ·m·g·wheelbase/2 of yaw torque); free of contact they follow their paths to
millimetres, and a harder contact pushes them. The road carries them through
a support force (gravity balanced, height and tilt driven back to the
ground's) rather than through contacts with the ground colliders, which cost
a convex solve per wheel every substep: with four agents on the ground,
stepping cost 3.8× the ego-only world, with the support model 1.1×. They
still collide with the ego, with each other and with every static collider
that is not ground (kerbs, poles, buildings).

A parked vehicle, once woken, is held by its parking brake: this model
braking at μ·g. After any contact between actors the drivers involved brake
to a standstill (:mod:`simready.sim.behavior.impact`); here that means an agent's
drive model brakes along the body's own motion rather than steering back to
its path.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from simready.sim.core import constants as C
from simready.sim.backends.dynamic.chassis import Chassis
from simready.sim.core.scene import Scene
from simready.sim.core.state import Bodies, SimState

if TYPE_CHECKING:
    from simready.sim.controllers.planner import Plan

#: The agent drive model corrects a position error over this time (s) and a heading error over this one (s).
DRIVE_POSITION_TAU_S = 0.25
DRIVE_YAW_TAU_S = 0.25
#: The agents' support brings the origin to the ground height and the up axis to the vertical over this time (s).
SUPPORT_TAU_S = 0.1


def agent_drive(scene: Scene, ch: Chassis, body: int, i: int, state: SimState, kin: Bodies, yaw: np.ndarray, plan: Plan,
                stop: bool) -> tuple[float, ...]:
    """The agent drive model: this tick's force (N) and torque (N·m) on vehicle ``i`` (world frame).

    ``ch``, ``body``: its chassis and PyBullet body; ``kin``, ``yaw``: the
    end-of-tick state its path controller plans; ``stop``: brake to a
    standstill instead (after a crash, or a parked vehicle's brake). Returns
    ``(body, force xyz, torque xyz, centre of mass xyz, velocity xyz)``, held
    for the tick (a 50 Hz controller) and applied at the centre of mass,
    carried along at that velocity, every substep.

    * **Tyres** (horizontal force, yaw torque). Following its path, the
      body's origin velocity is driven to the path controller's end-of-tick
      velocity plus a correction of the position error over
      :data:`DRIVE_POSITION_TAU_S`, and its yaw rate to the path's plus a
      heading correction over :data:`DRIVE_YAW_TAU_S`. Stopping (after a
      crash, or a parked vehicle's brake) the velocity is driven towards
      zero along the body's own motion at the planner's braking (μ·g for a
      parked car) and the yaw rate towards zero. Either way the force is
      limited to the friction circle μ·m·g and the yaw torque to
      μ·m·g·wheelbase/2: what tyres can deliver, so a harder contact pushes
      the body.
    * **Support** (vertical force, roll and pitch torques). The road carries
      the agent instead of a contact with the ground colliders (each
      vehicle–ground contact costs a convex solve every substep, most of
      the physics): gravity is balanced, the origin's height is driven to
      the ground height under it and the body's up axis to the vertical,
      both over :data:`SUPPORT_TAU_S`. A crash that lifts or tilts the
      body is thus undone like by a stiff, damped suspension.
    """
    return agent_drives(scene, [(i, ch, body, stop)], state, kin, yaw, plan)[0]


def agent_drives(scene: Scene, agents: list[tuple[int, Chassis, int, bool]], state: SimState, kin: Bodies,
                 yaw: np.ndarray, plan: Plan) -> list[tuple[float, ...]]:
    """The drive model (:func:`agent_drive`) for every agent of a tick at once: ``agents`` lists ``(i, chassis, body, stop)``.

    The same operations in the same order on the same floats (so the same bits), with what every agent reads
    taken out of the tick's arrays once (``tolist`` of whole arrays) instead of row by row, the ground heights by
    :meth:`~simready.sim.core.scene.GroundModel.at_point` (``at``'s cells in scalar arithmetic).
    """
    if not agents:
        return []
    dt = scene.dt
    b = state.bodies
    mu_g = state.world.friction * C.GRAVITY_MPS2
    g = C.GRAVITY_MPS2
    pos_l, vel_l, om_l, quat_l = b.pos.tolist(), b.vel.tolist(), b.omega.tolist(), b.quat.tolist()
    kp, kv, ko = kin.pos.tolist(), kin.vel.tolist(), kin.omega.tolist()
    yaw_l, cyaw = np.asarray(yaw, dtype=np.float64).tolist(), np.asarray(state.coords.yaw, dtype=np.float64).tolist()
    # The ground height under each agent: GroundModel.at's cell, in its scalar form (the same operations).
    at_point = scene.ground.at_point
    ground = [at_point(pos_l[ag[0]][0], pos_l[ag[0]][1]) for ag in agents]
    parked = scene.actors.parked
    matrix = p.getMatrixFromQuaternion
    two_pi, pi = 2 * math.pi, math.pi
    out: list[tuple[float, ...]] = []
    for (i, ch, body, stop), zg in zip(agents, ground):
        x, y, z = pos_l[i]
        vx, vy, vz = vel_l[i]
        wx, wy, wz = om_l[i]
        if stop:
            decel = mu_g if parked[i] else min(max(-float(plan.accel[i]), 0.0), mu_g) or mu_g
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
            head = (yaw_l[i] - (cyaw[i] + 0.5 * (wz + wt) * dt) + pi) % two_pi - pi
            w_des = wt + head / DRIVE_YAW_TAU_S
        acc = math.hypot(ax, ay)
        if acc > mu_g:
            ax, ay = ax * mu_g / acc, ay * mu_g / acc
        az = g + ((zg - z) / SUPPORT_TAU_S - vz) / dt
        R = matrix(quat_l[i])
        dwx, dwy, dwz = R[5] / SUPPORT_TAU_S - wx, -R[2] / SUPPORT_TAU_S - wy, w_des - wz
        rx = (R[0] * dwx + R[3] * dwy + R[6] * dwz) / dt
        ry = (R[1] * dwx + R[4] * dwy + R[7] * dwz) / dt
        rz = (R[2] * dwx + R[5] * dwy + R[8] * dwz) / dt
        i00, i01, i02, i10, i11, i12, i20, i21, i22 = ch.inertia_flat
        ix, iy, iz = (i00 * rx + i01 * ry + i02 * rz, i10 * rx + i11 * ry + i12 * rz,
                      i20 * rx + i21 * ry + i22 * rz)
        tqx, tqy, tqz = (R[0] * ix + R[1] * iy + R[2] * iz, R[3] * ix + R[4] * iy + R[5] * iz,
                         R[6] * ix + R[7] * iy + R[8] * iz)
        m = ch.mass
        limit = m * mu_g * 0.5 * ch.wheelbase
        tqz = max(min(tqz, limit), -limit)
        cx, cy, cz = ch.com_xyz
        out.append((body, m * ax, m * ay, m * az, tqx, tqy, tqz, x + R[0] * cx + R[1] * cy + R[2] * cz,
                    y + R[3] * cx + R[4] * cy + R[5] * cz, z + R[6] * cx + R[7] * cy + R[8] * cz, vx, vy, vz))
    return out
