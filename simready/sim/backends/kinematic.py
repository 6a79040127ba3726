"""``kinematic-v1``: deterministic path following (SPEC §8).

Each actor integrates its commanded acceleration exactly (constant over the
tick, stopping at rest rather than reversing), within its class's limits and
μ·g, along its reference path; lateral offsets follow their profiles; the
pose and twist come from :func:`simready.sim.kinematics.path_bodies` (a
kinematic bicycle with a simple body-slip model). Contacts are footprint
overlaps between actors; there is no collision response. One integration
step per tick: ``substep_s == dt``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from simready.sim.backend import Backend, StepOutcome
from simready.sim.controllers.longitudinal import integrate
from simready.sim.kinematics import footprint_contacts, path_bodies
from simready.sim.state import PathCoords, SimState, frozen, ro


class KinematicBackend(Backend):
    name: ClassVar[str] = "kinematic-v1"

    def start(self, state: SimState) -> StepOutcome:
        return StepOutcome(state.bodies, state.coords, state.world.contacts, {})

    def advance(self, state: SimState, route, plan) -> StepOutcome:  # type: ignore[no-untyped-def]
        scene = self.scene
        c = state.coords
        present = state.bodies.present
        u1, v1 = integrate(c.u, c.v, plan.accel, scene.dt)
        accel = plan.accel
        if not present.all():
            u1 = np.where(present, u1, c.u)
            v1 = np.where(present, v1, c.v)
            accel = np.where(present, accel, 0.0)
        bodies, yaw, slip = path_bodies(scene, route.paths, u1, plan.d_ref, plan.d_rate, plan.d_acc, v1, accel, present)
        if not present.all():
            keep = ~present
            pos, quat, vel, omega = (np.array(x) for x in (bodies.pos, bodies.quat, bodies.vel, bodies.omega))
            pos[keep], quat[keep] = state.bodies.pos[keep], state.bodies.quat[keep]
            vel[keep], omega[keep] = 0.0, 0.0
            yaw = np.where(keep, c.yaw, yaw)
            bodies = type(bodies)(frozen(pos), frozen(quat), frozen(vel), frozen(omega), present)
        coords = PathCoords(c.path_keys, ro(u1), frozen(plan.d_ref), frozen(plan.d_rate), ro(v1), frozen(accel), ro(np.asarray(yaw)))
        contacts = footprint_contacts(scene, bodies.pos[:, :2], yaw, present)
        extras = {"accel_mps2": accel, "throttle": plan.throttle, "brake": plan.brake,
                  "steer_rad": np.zeros(len(u1)), "slip_rad": slip}
        return StepOutcome(bodies, coords, contacts, extras)
