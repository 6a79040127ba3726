"""Shared helper for the vehicle tests (no tests here): a catalog entry driven in a steady turn by dynamic-v1's
chassis and tyre model (:mod:`simready.sim.backends.dynamic.chassis`)."""

from __future__ import annotations

import math
from typing import Any

import pybullet as p

from simready.sim import constants as C
from simready.sim.backends.dynamic.chassis import Chassis, tyre_forces, tyre_setup

#: The steady turn's lateral acceleration (m/s²): low, so the linear tyres stay far from the friction limit.
LATERAL_MPS2 = 1.0


def steady_turn_radius(entry: Any, steer_rad: float, seconds: float = 12.0) -> float:
    """The rear axle's turn radius (m) of ``entry`` at a constant steering angle, at the speed that makes the
    kinematic turn (wheelbase / tan δ) take :data:`LATERAL_MPS2`; on a frictionless plane, so dynamic-v1's tyre
    forces (applied every 5 ms as the backend does) are the only horizontal forces. The body is a box of the
    entry's length and width with its mass, centre of mass and principal inertia."""
    ch = Chassis.of(entry)
    speed = math.sqrt(LATERAL_MPS2 * ch.wheelbase / math.tan(steer_rad))
    h = 0.005
    client = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, -C.GRAVITY_MPS2, physicsClientId=client)
        p.setPhysicsEngineParameter(fixedTimeStep=h, numSubSteps=0, physicsClientId=client)
        plane = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=client), physicsClientId=client)
        p.changeDynamics(plane, -1, lateralFriction=0.0, physicsClientId=client)
        length, width, height = entry.dimensions_m.as_extents()
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[length / 2, width / 2, height / 4],
                                       collisionFramePosition=[0, 0, height / 4], physicsClientId=client)
        body = p.createMultiBody(ch.mass, shape, -1, [0, 0, float(ch.com[2]) + 0.001], [0, 0, 0, 1],
                                 baseInertialFramePosition=ch.com.tolist(), useMaximalCoordinates=True,
                                 physicsClientId=client)
        p.changeDynamics(body, -1, mass=ch.mass, localInertiaDiagonal=ch.inertia_diag.tolist(), lateralFriction=0.0,
                         linearDamping=0.0, angularDamping=0.0, activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING,
                         physicsClientId=client)
        setup = tyre_setup(ch, steer_rad, 0.9, h)
        for _ in range(int(seconds / h)):
            (vx, vy, _), _ = p.getBaseVelocity(body, physicsClientId=client)
            tyre_forces(client, body, steer_rad, 2.0 * (speed - math.hypot(vx, vy)), setup)
            p.stepSimulation(physicsClientId=client)
        (vx, vy, _), (_, _, wz) = p.getBaseVelocity(body, physicsClientId=client)
    finally:
        p.disconnect(client)
    r_com = math.hypot(vx, vy) / abs(wz)
    return math.sqrt(r_com**2 - ch.lr**2)
