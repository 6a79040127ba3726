"""``kinematic-v1``: deterministic path following (SPEC §8).

Each actor integrates its commanded acceleration exactly (constant over the
tick, stopping at rest rather than reversing), within its class's limits and
μ·g, along its reference path; lateral offsets follow their profiles; the
pose and twist come from :func:`simready.sim.kinematics.path_bodies` (a
kinematic bicycle with a simple body-slip model). Contacts are footprint
overlaps between actors; there is no collision response. One integration
step per tick: ``substep_s == dt``.

The step runs as per-actor scalar loops that repeat the vectorized laws'
floating-point operations one for one (:func:`~simready.sim.controllers.longitudinal.integrate`,
:func:`~simready.sim.kinematics.path_bodies_np`), so traces are the bits the
vectorized form gives.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from simready.sim.backend import Backend, StepOutcome
from simready.sim.kinematics import bodies_on_paths, footprint_contacts_py
from simready.sim.state import SimState, frozen, ro, with_changes


def integrate_py(u: list[float], v: list[float], a: list[float], dt: float) -> tuple[list[float], list[float]]:
    """:func:`simready.sim.controllers.longitudinal.integrate` on Python lists, operation for operation."""
    u1, v1 = [], []
    for ui, vi, ai in zip(u, v, a):
        vn = vi + ai * dt
        if vn < 0.0:
            du = vi * vi / (-2.0 * ai) if ai < 0.0 else 0.0
        else:
            du = vi * dt + 0.5 * ai * dt * dt
        u1.append(ui + du)
        # np.maximum(vn, 0.0): NaN propagates, −0.0 gives the second operand's +0.0.
        v1.append(vn if vn > 0.0 else 0.0 if vn <= 0.0 else vn)
    return u1, v1


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
        a_l = accel.tolist()
        u_l, v_l = c.u.tolist(), c.v.tolist()
        u1, v1 = integrate_py(u_l, v_l, a_l, scene.dt)
        pres = present.tolist()
        all_present = all(pres)
        if not all_present:
            u1 = [x if p else x0 for x, x0, p in zip(u1, u_l, pres)]
            v1 = [x if p else x0 for x, x0, p in zip(v1, v_l, pres)]
            a_l = [x if p else 0.0 for x, p in zip(a_l, pres)]
            accel = np.array(a_l, dtype=np.float64)
        bodies, yaw, slip, (xs, ys, yaw_l) = bodies_on_paths(scene, route.paths, u1, plan.d_ref, plan.d_rate, plan.d_acc,
                                                             v1, a_l, present)
        if not all_present:
            keep = ~present
            pos, quat, vel, omega = (np.array(x) for x in (bodies.pos, bodies.quat, bodies.vel, bodies.omega))
            pos[keep], quat[keep] = state.bodies.pos[keep], state.bodies.quat[keep]
            vel[keep], omega[keep] = 0.0, 0.0
            yaw = np.where(keep, c.yaw, yaw)
            bodies = type(bodies)(frozen(pos), frozen(quat), frozen(vel), frozen(omega), present)
            xs, ys, yaw_l = pos[:, 0].tolist(), pos[:, 1].tolist(), yaw.tolist()
        # PathCoords has no __post_init__: filling a copy of c's fields is what its __init__ would build.
        coords = with_changes(c, u=ro(np.array(u1, dtype=np.float64)), d=frozen(plan.d_ref), d_rate=frozen(plan.d_rate),
                              v=ro(np.array(v1, dtype=np.float64)), a=frozen(accel), yaw=ro(yaw))
        contacts = footprint_contacts_py(scene, xs, ys, yaw_l, present)
        extras = {"accel_mps2": accel, "throttle": plan.throttle, "brake": plan.brake,
                  "steer_rad": self._zeros(len(u1)), "slip_rad": slip}
        return StepOutcome(bodies, coords, contacts, extras)
