"""``kinematic-v1``: deterministic path following (SPEC §8).

Each actor integrates its commanded acceleration exactly (constant over the
tick, stopping at rest rather than reversing), within its class's limits and
μ·g, along its reference path; lateral offsets follow their profiles; the
pose and twist come from :func:`simready.sim.core.kinematics.step_on_paths` (a
kinematic bicycle with a simple body-slip model). Contacts are footprint
overlaps between actors. Two vehicles whose footprints meet stop at
contact (:meth:`KinematicBackend._stop_at_contact`): both are put back along
their tick's step to the last pose where the footprints do not overlap
(bisection), at rest, and the contact is a ``collision`` event (whose
post-crash stop then holds them), so no vehicle passes through another. A
struck pedestrian or cyclist is carried by the vehicle
(:mod:`simready.sim.behavior.impact`, without the vehicle's impulse). One
integration step per tick: ``substep_s == dt``.

The step runs in the compiled kernels of :mod:`simready.sim.core.kernels`, which
repeat the vectorized laws' floating-point operations one for one
(:func:`~simready.sim.controllers.longitudinal.integrate`,
:func:`~simready.sim.core.kinematics.path_bodies_np`), so traces are the bits the
vectorized form gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from simready.sim.behavior import impact
from simready.sim.backend import Backend, StepOutcome
from simready.sim.core.kinematics import footprint_contacts, PathStep, step_on_paths
from simready.sim.core.state import Bodies, PathCoords, SimState, frozen, ro, with_changes

if TYPE_CHECKING:
    from simready.sim.controllers.planner import Plan, RouteTable


_F8 = np.dtype(np.float64)


def _read_only(x: object) -> bool:
    """Whether ``x`` is already what :func:`frozen` would return for it: a read-only float64 array (no copy)."""
    return type(x) is np.ndarray and x.dtype is _F8 and not x.flags.writeable


class KinematicBackend(Backend):
    name: ClassVar[str] = "kinematic-v1"
    _zero_steer: np.ndarray | None = None

    def _zeros(self, n: int) -> np.ndarray:
        """A read-only (n,) zeros array, shared by every step (no actor steers here)."""
        z = self._zero_steer
        if z is None or len(z) != n:
            z = self._zero_steer = np.zeros(n)
            z.flags.writeable = False
        return z

    def start(self, state: SimState) -> StepOutcome:
        return StepOutcome(state.bodies, state.coords, state.world.contacts, {})

    def advance(self, state: SimState, route: RouteTable, plan: Plan) -> StepOutcome:
        c = state.coords
        step = step_on_paths(self.scene, route.paths, state.bodies, c.yaw, c.u, c.v, plan.accel, plan.d_ref,
                             plan.d_rate, plan.d_acc)
        # PathCoords has no __post_init__: filling a copy of c's fields is what its __init__ would build.
        d_ref, d_rate = plan.d_ref, plan.d_rate
        coords = with_changes(c, u=ro(step.u), d=d_ref if _read_only(d_ref) else frozen(d_ref),
                              d_rate=d_rate if _read_only(d_rate) else frozen(d_rate), v=ro(step.v), a=ro(step.accel),
                              yaw=ro(step.yaw))
        zeros = self._zero_steer
        if zeros is None or len(zeros) != len(c.u):
            zeros = self._zeros(len(c.u))
        extras = {"accel_mps2": step.accel, "throttle": plan.throttle, "brake": plan.brake, "steer_rad": zeros,
                  "slip_rad": step.slip}
        struck = state.control.struck
        if not step.contacts and not struck:
            # No contact and nobody carried (most ticks): nothing below applies. StepOutcome has no __post_init__:
            # filling its fields is what its (frozen) __init__ does, cheaper.
            out = object.__new__(StepOutcome)
            out.__dict__.update(bodies=step.bodies, coords=coords, contacts=step.contacts, extras=extras, impacts=None,
                                struck=None, woken=None, ok=step.ok)
            return out
        a = self.scene.actors
        if any(j >= 0 and a.is_vehicle[i] and a.is_vehicle[j] for i, j in step.contacts - state.world.contacts):
            step, coords = self._stop_at_contact(state, step, coords)
        hit = impact.new_strikes(self.scene, step.contacts, state.world.contacts, struck, state.bodies.present)
        if not struck and not hit:
            return StepOutcome(step.bodies, coords, step.contacts, extras)
        return self._carry(state, step, coords, extras, hit)

    def _stop_at_contact(self, state: SimState, step: PathStep, coords: PathCoords) -> tuple[PathStep, PathCoords]:
        """Vehicles whose footprints began to overlap this tick, back to where they touch, at rest.

        For each such pair the fraction f of the tick's step (the same for
        both) is bisected to the largest that leaves the footprints apart; a
        vehicle in several pairs takes the smallest. Position, height and
        path position are interpolated by f, the heading and the quaternion
        (normalised) likewise; velocity, angular velocity and speed are 0.
        """
        a = self.scene.actors
        b0, b1 = state.bodies, step.bodies
        y0, y1 = state.coords.yaw, step.yaw
        turn = (np.asarray(y1) - np.asarray(y0) + np.pi) % (2.0 * np.pi) - np.pi
        frac: dict[int, float] = {}
        for i, j in sorted(step.contacts - state.world.contacts):
            if j < 0 or not (a.is_vehicle[i] and a.is_vehicle[j]):
                continue
            only = np.zeros(len(a), dtype=bool)
            only[[i, j]] = True
            lo, hi = 0.0, 1.0
            for _ in range(20):
                mid = 0.5 * (lo + hi)
                xy = np.asarray(b0.pos)[:, :2] + mid * (np.asarray(b1.pos)[:, :2] - np.asarray(b0.pos)[:, :2])
                if footprint_contacts(self.scene, xy, np.asarray(y0) + mid * turn, only):
                    hi = mid
                else:
                    lo = mid
            for k in (i, j):
                frac[k] = min(frac.get(k, 1.0), lo)
        pos, quat, vel, omega = (np.array(x) for x in (b1.pos, b1.quat, b1.vel, b1.omega))
        yaw, u, v = np.array(step.yaw), np.array(coords.u), np.array(coords.v)
        for k, f in sorted(frac.items()):
            pos[k] = b0.pos[k] + f * (b1.pos[k] - b0.pos[k])
            q0, q1 = np.asarray(b0.quat[k]), np.asarray(b1.quat[k])
            q = (1.0 - f) * q0 + f * (q1 if float(q0 @ q1) >= 0.0 else -q1)
            quat[k] = q / np.linalg.norm(q)
            yaw[k] = float(y0[k]) + f * float(turn[k])
            u[k] = float(state.coords.u[k]) + f * (float(u[k]) - float(state.coords.u[k]))
            vel[k], omega[k], v[k] = 0.0, 0.0, 0.0
        bodies = Bodies(ro(pos), ro(quat), ro(vel), ro(omega), b1.present)
        return step._replace(bodies=bodies, yaw=ro(yaw), ok=0), with_changes(coords, u=ro(u), v=ro(v), yaw=ro(yaw))

    def _carry(self, state: SimState, step: PathStep, coords: PathCoords, extras: dict[str, np.ndarray],
               hit: list[tuple[int, int]]) -> StepOutcome:
        """Struck road users ride with the vehicle that struck them (:mod:`simready.sim.behavior.impact`; no impulse here)."""
        b = step.bodies
        pos, quat, vel, omega, yaw = (np.array(x) for x in (b.pos, b.quat, b.vel, b.omega, step.yaw))
        struck = impact.carry(state.control.struck, state.bodies.pos, state.bodies.quat, pos, quat, vel, omega, yaw)
        if hit:
            new = list(struck) + [impact.strike(user, vehicle, pos, yaw) for user, vehicle in hit]
            struck = impact.carry(tuple(sorted(new)), state.bodies.pos, state.bodies.quat, pos, quat, vel, omega, yaw)
        u, v = np.array(coords.u), np.array(coords.v)
        for i in impact.struck_actors(struck):
            u[i], v[i] = state.coords.u[i], 0.0
        coords = with_changes(coords, u=ro(u), v=ro(v), yaw=ro(yaw))
        bodies = Bodies(ro(pos), ro(quat), ro(vel), ro(omega), b.present)
        impacts = {(min(pair), max(pair)): (float(pos[pair[0], 0]), float(pos[pair[0], 1])) for pair in hit}
        return StepOutcome(bodies, coords, step.contacts, extras, impacts=impacts, struck=struck)
