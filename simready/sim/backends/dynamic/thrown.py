"""Struck road users (:mod:`simready.sim.behavior.impact`): a pedestrian or cyclist a vehicle strikes becomes a rigid
body (its certified mass, inertia and collision pieces, moved out of the vehicle's footprint) that takes the
impulse, is thrown, falls and slides with friction to rest.
"""

from __future__ import annotations

import math

import numpy as np
import pybullet as p

from simready.sim.behavior import impact
from simready.sim.backends.dynamic.chassis import Chassis
from simready.sim.backends.dynamic.pieces import asset_pieces
from simready.sim.backends.dynamic.pool import BODY_FILTER
from simready.sim.core.state import Bodies, SimState
from simready.sim.backends.dynamic.exchange import BodyExchange, cross


class ThrownBodies(BodyExchange):
    """The struck road users' rigid bodies: created at the strike, read back every tick until at rest."""

    def _strike(self, state: SimState, contacts: set[tuple[int, int]], struck: tuple[impact.Struck, ...], pos: np.ndarray,
                quat: np.ndarray, vel: np.ndarray, omega: np.ndarray,
                yaw: np.ndarray) -> tuple[tuple[impact.Struck, ...], list[tuple[int, int]]]:
        """Strike the road users newly touched by a vehicle (:mod:`simready.sim.behavior.impact`): each becomes a thrown body
        (:meth:`_throw`); rows are written in place."""
        hit = impact.new_strikes(self.scene, frozenset(contacts), state.world.contacts, struck, state.bodies.present)
        if not hit:
            return struck, hit
        new = list(struck)
        for user, vehicle in hit:
            self._throw(user, vehicle, pos, quat, vel, omega, yaw)
            new.append((user, vehicle, 0.0, 0.0, 0.0, 0.0))
        return tuple(sorted(new)), hit

    def _throw(self, user: int, vehicle: int, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray,
               yaw: np.ndarray) -> None:
        """Road user ``user`` struck by ``vehicle`` this tick: the vehicle's impulse, the road user out of its
        footprint and a rigid body with the impact's twist (:func:`~simready.sim.behavior.impact.thrown_twist`)."""
        a = self.scene.actors
        m_v = self.chassis[vehicle].mass if self._dynamic(vehicle) else math.inf
        m_r = self._masses[user]
        v_user = vel[user].copy()
        v_vehicle = vel[vehicle].copy() if self._dynamic(vehicle) else np.zeros(3)
        if self._dynamic(vehicle):
            dv = impact.impact_dv(m_v, m_r, vel[vehicle], v_user)
            lin, ang = self.world.call(p.getBaseVelocity, self.actor_body[vehicle])
            self.world.call(p.resetBaseVelocity, self.actor_body[vehicle], [lin[0] + dv[0], lin[1] + dv[1], lin[2]], ang)
            vel[vehicle, :2] += dv
        dx, dy = impact.push_out((float(pos[user, 0]), float(pos[user, 1])), float(yaw[user]),
                                 (float(a.hl[user]), float(a.hw[user])), (float(pos[vehicle, 0]), float(pos[vehicle, 1])),
                                 float(yaw[vehicle]), (float(a.hl[vehicle]), float(a.hw[vehicle])))
        pos[user, 0] += dx
        pos[user, 1] += dy
        ch = self._road_user_chassis(user)
        R = np.array(p.getMatrixFromQuaternion(quat[user].tolist())).reshape(3, 3)
        inertia_w = R @ np.asarray(ch.inertia) @ R.T
        arm = R @ ch.com
        if math.isinf(m_v):
            v_com, w = np.array([0.0, 0.0, float(v_user[2])]), np.zeros(3)
        else:
            v_com, w = impact.thrown_twist(m_v, m_r, v_vehicle, v_user, inertia_w, float(arm[2]))
        # The spin must not drive the body's sole into the road: the sole's corners leave it (the swept legs lift off).
        hl, hw = float(a.hl[user]), float(a.hw[user])
        lift = max(-float(cross(w, R @ np.array([sx * hl, sy * hw, 0.0]) - arm)[2]) for sx in (-1.0, 1.0) for sy in (-1.0, 1.0))
        v_com[2] = max(float(v_com[2]), lift)
        omega[user] = w
        vel[user] = v_com - cross(w, arm)
        self._create_thrown(user, Bodies(pos, quat, vel, omega, np.ones(len(a), dtype=bool)))

    def _road_user_chassis(self, i: int) -> Chassis:
        """The mass properties of road user ``i``'s body: its catalog entry's (cached)."""
        ch = self.chassis.get(i)
        if ch is None:
            ch = self.chassis[i] = Chassis.of(self.catalog.entry(self.scene.actors.asset_ids[i]))
        return ch

    def _create_thrown(self, i: int, bodies: Bodies) -> None:
        """Road user ``i``'s rigid body (its catalog collision pieces, mass, centre of mass and inertia), at the pose and
        twist of ``bodies``, sliding with :data:`~simready.sim.behavior.impact.BODY_ROAD_FRICTION` on the road."""
        w = self.world
        ch = self._road_user_chassis(i)
        asset = self.scene.actors.asset_ids[i]
        body = w.call(p.createMultiBody, ch.mass, w.shape(asset, asset_pieces(self.catalog, asset)), -1,
                      [0.0, 0.0, -100.0 - i], [0.0, 0.0, 0.0, 1.0], baseInertialFramePosition=ch.com.tolist(),
                      baseInertialFrameOrientation=ch.inertial_quat.tolist(), useMaximalCoordinates=True)
        # Combined friction is the product of the two bodies' (the road's is PyBullet's default, 0.5).
        w.call(p.changeDynamics, body, -1, mass=ch.mass, localInertiaDiagonal=ch.inertia_diag.tolist(),
               lateralFriction=impact.BODY_ROAD_FRICTION / 0.5, spinningFriction=impact.BODY_ROLLING_M / 0.5,
               rollingFriction=impact.BODY_ROLLING_M / 0.5,
               restitution=ch.restitution, linearDamping=0.0, angularDamping=impact.BODY_ANGULAR_DAMPING,
               activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING)
        w.call(p.setCollisionFilterGroupMask, body, -1, *BODY_FILTER)
        self.thrown[i] = body
        self.actor_body[i] = body
        self._com_stacks.clear()  # the bodies read per list of vehicles (:meth:`_read_specs`)
        self._layout = None  # and the tick's lists of them (:meth:`~.backend.DynamicBackend._hand_over`)
        self._roles = None  # the bodies' roles in a contact (:meth:`~.backend.DynamicBackend._contact_points`)
        self.body_actor[body] = i
        q = bodies.quat[i]
        R = np.array(p.getMatrixFromQuaternion(q.tolist())).reshape(3, 3)
        q_in = p.multiplyTransforms([0, 0, 0], q.tolist(), [0, 0, 0], ch.inertial_quat.tolist())[1]
        w.call(p.resetBasePositionAndOrientation, body, (bodies.pos[i] + R @ ch.com).tolist(), list(q_in))
        w.call(p.resetBaseVelocity, body, (bodies.vel[i] + cross(bodies.omega[i], R @ ch.com)).tolist(),
               bodies.omega[i].tolist())

    def _read_thrown(self, state: SimState, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray,
                     yaw: np.ndarray) -> tuple[impact.Struck, ...]:
        """The thrown bodies' rows (written in place) and the struck records with the strikers of bodies now at rest
        replaced by −1 (their contact with the striker ends)."""
        out = []
        for rec in state.control.struck:
            i = rec[0]
            if i not in self.thrown:
                out.append(rec)
                continue
            bp, bq, bv, bo, R, _ = self._read(i)
            pos[i], quat[i], vel[i], omega[i] = bp, bq, bv, bo
            yaw[i] = math.atan2(R[1, 0], R[0, 0])
            moving = math.sqrt(float(bv @ bv)) >= impact.BODY_REST_MPS or math.sqrt(float(bo @ bo)) >= impact.BODY_REST_RPS
            out.append(rec if moving or rec[1] < 0 else (i, -1, *rec[2:]))
        return tuple(out)
