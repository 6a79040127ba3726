"""``kinematic-v1``: deterministic path following (SPEC §8).

Each actor integrates its commanded acceleration exactly (constant over the
tick, stopping at rest rather than reversing), within its class's limits and
μ·g, along its reference path; lateral offsets follow their profiles; the
pose and twist come from :func:`simready.sim.kinematics.path_bodies` (a
kinematic bicycle with a simple body-slip model). Contacts are footprint
overlaps between actors; there is no collision response. One integration
step per tick: ``substep_s == dt``.

The step runs in the compiled kernels of :mod:`simready.sim.kernels`, which
repeat the vectorized laws' floating-point operations one for one
(:func:`~simready.sim.controllers.longitudinal.integrate`,
:func:`~simready.sim.kinematics.path_bodies_np`), so traces are the bits the
vectorized form gives.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from simready.sim import kernels
from simready.sim.backend import Backend, StepOutcome
from simready.sim.kinematics import footprint_contacts, path_bodies
from simready.sim.state import SimState, frozen, ro, with_changes


class KinematicBackend(Backend):
    name: ClassVar[str] = "kinematic-v1"

    def _zeros(self, n: int) -> np.ndarray:
        """A read-only (n,) zeros array, shared by every step (no actor steers here)."""
        z = getattr(self, "_zero_steer", None)
        if z is None or len(z) != n:
            z = self._zero_steer = np.zeros(n)
            z.flags.writeable = False
        return z

    def start(self, state: SimState) -> StepOutcome:
        return StepOutcome(state.bodies, state.coords, state.world.contacts, {})

    def advance(self, state: SimState, route, plan) -> StepOutcome:  # type: ignore[no-untyped-def]
        scene = self.scene
        c = state.coords
        present = state.bodies.present
        accel = plan.accel
        n = len(c.u)
        u1, v1 = np.empty(n), np.empty(n)
        kernels.integrate(c.u, c.v, np.ascontiguousarray(accel, dtype=np.float64), scene.dt, u1, v1)
        all_present = bool(present.all())
        if not all_present:
            u1 = np.where(present, u1, c.u)
            v1 = np.where(present, v1, c.v)
            accel = np.where(present, accel, 0.0)
        bodies, yaw, slip = path_bodies(scene, route.paths, u1, plan.d_ref, plan.d_rate, plan.d_acc, v1, accel, present)
        if not all_present:
            keep = ~present
            pos, quat, vel, omega = (np.array(x) for x in (bodies.pos, bodies.quat, bodies.vel, bodies.omega))
            pos[keep], quat[keep] = state.bodies.pos[keep], state.bodies.quat[keep]
            vel[keep], omega[keep] = 0.0, 0.0
            yaw = np.where(keep, c.yaw, yaw)
            bodies = type(bodies)(frozen(pos), frozen(quat), frozen(vel), frozen(omega), present)
        # PathCoords has no __post_init__: filling a copy of c's fields is what its __init__ would build.
        coords = with_changes(c, u=ro(u1), d=frozen(plan.d_ref), d_rate=frozen(plan.d_rate), v=ro(v1), a=frozen(accel),
                              yaw=ro(yaw))
        contacts = footprint_contacts(scene, bodies.pos, yaw, present)
        extras = {"accel_mps2": accel, "throttle": plan.throttle, "brake": plan.brake,
                  "steer_rad": self._zeros(n), "slip_rad": slip}
        return StepOutcome(bodies, coords, contacts, extras)
