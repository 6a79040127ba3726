"""The exchange between the engine's state and the world's bodies: vehicles placed at the engine's pose and twist,
hidden while absent, woken from parked, made immovable; their rows read back after a tick.
"""

from __future__ import annotations


import numpy as np
import pybullet as p

from simready.sim.backends.dynamic.capi import base_quats
from simready.sim.backends.dynamic.kernels import body_frames
from simready.sim.backends.dynamic.pool import AGENT_FILTER, EGO_FILTER
from simready.sim.core.state import Bodies
from simready.sim.backends.dynamic.world import DynamicWorld


_ORIGIN = (0.0, 0.0, 0.0)
_IDENTITY_QUAT = (0.0, 0.0, 0.0, 1.0)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


class BodyExchange(DynamicWorld):
    """Vehicle bodies to and from the engine's :class:`~simready.sim.core.state.Bodies`."""

    def _make_dynamic(self, i: int, bodies: Bodies) -> None:
        """A parked vehicle woken: its immovable body replaced by a dynamic one at the engine's pose and twist.

        Why replaced: PyBullet cannot turn a body created with mass 0 into a dynamic one, and one created
        dynamic costs a contact solve every substep even at mass 0.
        """
        old = self.actor_body[i]
        del self.body_actor[old]
        self.world.call(p.removeBody, old)
        self._create(i, True, [0.0, 0.0, -100.0 - i], [0.0, 0.0, 0.0, 1.0])
        self._place(i, bodies)

    # --- state exchange -----------------------------------------------------------------

    def _set_mass(self, i: int, on: bool) -> None:
        """A vehicle's body dynamic (its catalog mass) or immovable (mass 0), without moving it."""
        ch = self.chassis[i]
        if on:
            self.world.call(p.changeDynamics, self.actor_body[i], -1, mass=ch.mass, localInertiaDiagonal=ch.inertia_diag.tolist())
        else:
            self.world.call(p.changeDynamics, self.actor_body[i], -1, mass=0.0)

    def hold_agents(self) -> None:
        """Every vehicle but the ego immovable where it stands (the settle stage: only the ego's spawn is in question,
        and no drive force holds the agents up)."""
        for i in self.agent_idx:
            self._set_mass(i, False)

    def _dynamic(self, i: int) -> bool:
        """Whether vehicle ``i``'s body currently moves under forces (not parked-and-asleep, not absent)."""
        return i not in self._hidden and (not self.scene.actors.parked[i] or i in self._woken)

    def _place(self, i: int, bodies: Bodies) -> None:
        """Put vehicle ``i``'s body at the engine's pose and twist (origin → centre of mass)."""
        w = self.world
        ch = self.chassis[i]
        q = bodies.quat[i]
        R = np.array(p.getMatrixFromQuaternion(q.tolist())).reshape(3, 3)
        com_w = bodies.pos[i] + R @ ch.com
        v_com = bodies.vel[i] + cross(bodies.omega[i], R @ ch.com)
        q_in = np.array(p.multiplyTransforms([0, 0, 0], q.tolist(), [0, 0, 0], ch.inertial_quat.tolist())[1])
        body = self.actor_body[i]
        w.call(p.resetBasePositionAndOrientation, body, com_w.tolist(), q_in.tolist())
        if self._dynamic(i):
            w.call(p.resetBaseVelocity, body, v_com.tolist(), bodies.omega[i].tolist())
        # A reset moves the body without clearing its contact manifolds; re-registering it does.
        w.call(p.setCollisionFilterGroupMask, body, -1, *(EGO_FILTER if i == self.ego else AGENT_FILTER))

    @property
    def _ego(self) -> int:
        """The ego's index, for the methods that drive it (they run only in a scene with an ego)."""
        assert self.ego is not None
        return self.ego

    def _place_ego(self, bodies: Bodies) -> None:
        self._place(self._ego, bodies)

    def _hide(self, i: int) -> None:
        """An absent vehicle: immovable, colliding with nothing, underground."""
        if i in self._hidden:
            return
        self._hidden.add(i)
        self._set_mass(i, False)
        body = self.actor_body[i]
        self.world.call(p.setCollisionFilterGroupMask, body, -1, 0, 0)
        self.world.call(p.resetBasePositionAndOrientation, body, [0.0, 0.0, -100.0 - i], _IDENTITY_QUAT)

    def _show(self, i: int, bodies: Bodies) -> None:
        """A vehicle that (re)appears: back to its mass, at the engine's pose and twist."""
        self._hidden.discard(i)
        if self._dynamic(i):
            self._set_mass(i, True)
        self._place(i, bodies)

    def _read(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[float, float, float]]:
        """Vehicle ``i``'s body origin position, quaternion [x,y,z,w], origin velocity, angular velocity (world),
        rotation matrix, and the lever arm from the origin to the centre of mass (world, m)."""
        pos, q, vel, om, R, arm = self._read_raw(i)
        return np.array(pos), np.array(q), np.array(vel), np.array(om), np.array(R).reshape(3, 3), arm

    def _read_raw(self, i: int) -> tuple[list[float], tuple[float, ...], list[float], list[float], tuple[float, ...],
                                         tuple[float, float, float]]:
        """:meth:`_read` as Python floats: the rotation matrix as PyBullet's 9-tuple (row-major)."""
        cid = self.world.client
        ch = self.chassis[i]
        body = self.actor_body[i]
        com_w, q_in = p.getBasePositionAndOrientation(body, physicsClientId=cid)
        lin, (wx, wy, wz) = p.getBaseVelocity(body, physicsClientId=cid)
        q = q_in if ch.identity_inertial else p.multiplyTransforms(_ORIGIN, q_in, _ORIGIN, ch.inertial_inv)[1]
        if q[3] < 0:
            q = tuple(-x for x in q)
        R = p.getMatrixFromQuaternion(q)
        # The lever arm stays a numpy product (its bits are BLAS's); the rest is the same IEEE arithmetic
        # on Python floats that numpy would do element by element.
        rx, ry, rz = (np.array(R).reshape(3, 3) @ ch.com).tolist()
        pos = [com_w[0] - rx, com_w[1] - ry, com_w[2] - rz]
        vel = [lin[0] - (wy * rz - wz * ry), lin[1] - (wz * rx - wx * rz), lin[2] - (wx * ry - wy * rx)]
        return pos, q, vel, [wx, wy, wz], R, (rx, ry, rz)

    def _read_frames(self, idx: list[int], reads: np.ndarray | None = None,
                     frames: tuple[np.ndarray, np.ndarray] | None = None,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The reads of vehicles ``idx`` after a tick (n, 13: centre of mass, body quaternion, linear and angular
        velocity), their quaternions (w ≥ 0) and rotation matrices (n, 4 and n, 9) and their lever arms (n, 3, 1), from
        the same reads in the same order as :meth:`_read_raw` makes body by body: the reads gathered into one array,
        the frames in compiled calls (:func:`~simready.sim.backends.dynamic.kernels.body_frames`), the lever arms
        their stacked numpy product (its bits are BLAS's); the rows follow from them
        (:func:`~simready.sim.backends.dynamic.kernels.body_rows`, the scalar model's operations in its order).

        ``reads``: the bodies' states already read (:func:`~simready.sim.backends.dynamic.capi.tick_substeps`' rows:
        centre of mass, base quaternion, linear and angular velocity), else they are read here through the binding;
        ``frames``: their quaternions and rotation matrices already computed from them (:func:`~.capi.tick_step`).
        """
        coms, bodies, _, invs, has_inv, any_inv = self._read_specs(idx)
        n = len(idx)
        if reads is None:
            cid = self.world.client
            pose, twist, compose = p.getBasePositionAndOrientation, p.getBaseVelocity, p.multiplyTransforms
            raw: list[float] = []
            put = raw.extend
            for body, inv in bodies:
                com_w, q_in = pose(body, cid)  # positional: no keyword parsing
                lin, ang = twist(body, cid)
                put(com_w)
                put(q_in if inv is None else compose(_ORIGIN, q_in, _ORIGIN, inv)[1])
                put(lin)
                put(ang)
            reads = np.array(raw).reshape(n, 13)
        elif any_inv and frames is None:
            # The binding's multiplyTransforms per body, its C function in one compiled call.
            base_quats(reads, invs, has_inv)
        if frames is None:
            quat, rot = np.empty((n, 4)), np.empty((n, 9))
            body_frames(reads, quat, rot)
        else:
            quat, rot = frames
        return reads, quat, rot, rot.reshape(n, 3, 3) @ coms

    def _read_specs(self, idx: list[int]) -> tuple[np.ndarray, list[tuple[int, tuple[float, ...] | None]], np.ndarray,
                                                   np.ndarray, np.ndarray, bool]:
        """For vehicles ``idx``: their centres of mass as an (n, 3, 1) stack, each one's body id with the inverse
        of its inertial frame (None where that is the identity), the body ids as an array, and those inverses as
        an (n, 4) array (identity rows where None) with the (n,) flags of the rows that have one and whether any does,
        cached per list of vehicles (creating a body empties the cache: a woken parked vehicle gets a new one)."""
        key = tuple(idx)
        hit = self._com_stacks.get(key)
        if hit is None:
            if len(self._com_stacks) > 256:
                self._com_stacks.clear()
            chassis = self.chassis
            specs = [(self.actor_body[i], None if chassis[i].identity_inertial else chassis[i].inertial_inv) for i in idx]
            hit = self._com_stacks[key] = (
                np.array([chassis[i].com for i in idx], dtype=np.float64).reshape(-1, 3, 1), specs,
                np.array([body for body, _ in specs], dtype=np.int64),
                np.array([_IDENTITY_QUAT if inv is None else inv for _, inv in specs], dtype=np.float64).reshape(-1, 4),
                np.array([inv is not None for _, inv in specs], dtype=np.bool_), any(inv is not None for _, inv in specs))
        return hit

    def _read_ego(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[float, float, float]]:
        return self._read(self._ego)
