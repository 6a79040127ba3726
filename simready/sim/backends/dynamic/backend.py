"""The ``dynamic-v1`` backend (:class:`DynamicBackend`): the PyBullet world built from a scene, stepped a tick at a time.

The world is built once per engine in a DIRECT client (:mod:`.pool`), in
sorted order so the call sequence (and so the result) is the same every time:
the statics from the scene's (cached) plan (:mod:`.plan`), then every vehicle
in actor order, a rigid body with its chassis (:mod:`.chassis`).

Each tick, at every 5 ms substep, the ego gets its tyre forces
(:func:`~.chassis.tyre_forces`) under the steering angle of the tick:
pure pursuit of the offset path a preview distance ahead, rate- and
angle-limited (:class:`~simready.sim.core.constants.DynamicSettings`); the agents
get the force and torque of their drive model (:mod:`.drive`), computed once
a tick. PyBullet supplies gravity, support and collisions.

* **Parked vehicles** are immovable (mass 0) while no moving vehicle body is
  within reach of them in a tick; once one is (:meth:`DynamicBackend._wake`)
  they get their mass for the rest of the rollout and are held by their
  parking brake (the drive model braking at μ·g), so a car that hits one
  shoves it, and it skids to rest.
* **Pedestrians and cyclists** have no rigid body while they walk or ride:
  their contacts come from their footprints. A vehicle that strikes one has
  the inelastic impact of :mod:`simready.sim.behavior.impact` (the vehicle's
  momentum change follows the mass ratio), and from that tick the road
  user is a rigid body (:meth:`DynamicBackend._throw`: its certified mass,
  inertia and collision pieces, moved out of the vehicle's footprint) that
  takes the impulse, is thrown, falls and slides with friction to rest.
* After any contact between actors the drivers involved brake to a
  standstill (:mod:`simready.sim.behavior.impact`); here that means the ego's wheels
  return to straight and an agent's drive model brakes along the body's own
  motion rather than steering back to its path.
* **Absent vehicles** are immovable and collide with nothing, underground.
* **Far background vehicles** (SPEC §20) are driven by the kinematic step
  (kinematic-v1's model, the planner's commands) while no anchor (the ego,
  a scenario vehicle that moves, a thrown road user) is within
  :data:`PHYSICS_RADIUS_M` of them: their bodies are hidden as absent ones
  are (no stepping, no reads, no drive forces) and their contacts come from
  their footprints. One that comes within reach gets its body back at the
  tick's state (its kinematic pose and twist), as CARLA's hybrid physics
  mode does for vehicles away from the ego. The rule is a function of the tick's state,
  so a restored engine hides the same bodies; samples without traffic have
  no such vehicles.

The ego's rollout checks are :mod:`.checks`'.
"""

from __future__ import annotations

import math
from collections import deque as drain
from itertools import starmap
from operator import call
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pybullet as p

from simready.common.errors import CatalogError
from simready.sim.core import constants as C
from simready.sim.behavior import impact
from simready.sim.core import kernels
from simready.sim.backend import COMMON_EXTRAS, Backend, StepOutcome
from simready.sim.backends.dynamic.checks import RolloutChecks, body_energy, crossed_collider
from simready.sim.backends.dynamic.chassis import Chassis, tyre_forces, tyre_setup
from simready.sim.backends.dynamic.drive import agent_drive, agent_drives
from simready.sim.backends.dynamic.kernels import body_frames, body_rows
from simready.sim.backends.dynamic.pieces import asset_pieces
from simready.sim.backends.dynamic.plan import WorldPlan, world_plan
from simready.sim.backends.dynamic import pool
from simready.sim.backends.dynamic.pool import (AGENT_FILTER, BODY_FILTER, EGO_FILTER, GROUND_GROUP, GROUND_MASK,
                                                STATIC_GROUP, STATIC_MASK, World)
from simready.sim.controllers.lateral import preview_steer
from simready.sim.behavior.impact import post_crash
from simready.sim.core.kinematics import footprint_contacts, step_on_paths
from simready.sim.core.scene import Scene, substeps_per_tick
from simready.sim.core.state import Bodies, PathCoords, SimState, frozen

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.sim.controllers.planner import Plan, RouteTable

#: Segments searched around a body's previous arc length when it is projected back onto its path
#: (:meth:`simready.sim.core.reference_paths.ReferencePath.project_near`'s default, :func:`simready.sim.core.kernels.project_near`).
PROJECT_WINDOW = 6

S = C.DYNAMIC_SETTINGS
#: A parked vehicle gets its mass when a moving vehicle body is this much nearer than both bounding radii plus
#: the mover's travel in a tick (m).
WAKE_MARGIN_M = 1.0

#: A background vehicle is a force-driven body while its centre is this near an anchor's (the ego, a moving scenario
#: vehicle, a thrown road user), else kinematic (m).
PHYSICS_RADIUS_M = 30.0

_ORIGIN = (0.0, 0.0, 0.0)
_IDENTITY_QUAT = (0.0, 0.0, 0.0, 1.0)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _still(body: int, cid: int) -> None:
    """A static collider put to sleep: PyBullet then leaves its bounding box alone at every step (it never moves; a
    static body is never woken by a contact, and one active body in a pair is enough for its contacts), which
    on a city map with a thousand static pieces was most of a step's cost. The stepping's results are the same."""
    p.changeDynamics(body, -1, activationState=p.ACTIVATION_STATE_SLEEP, physicsClientId=cid)


class DynamicBackend(Backend):
    name: ClassVar[str] = "dynamic-v1"
    extras: ClassVar[tuple[str, ...]] = COMMON_EXTRAS + ("tyre_util",)

    def __init__(self, scene: Scene) -> None:
        super().__init__(scene)
        if scene.catalog is None:
            raise CatalogError("<catalog>", "", "dynamic-v1 needs the asset catalog")
        self.catalog: Catalog = scene.catalog
        self.substeps = substeps_per_tick(scene.dt)
        self.h = scene.dt / self.substeps
        self._world: World | None = None
        self.static_contact_names: dict[tuple[int, int], str] = {}
        self.checks = RolloutChecks(scene)
        a = scene.actors
        self.ego = a.ego
        # Vehicles are rigid bodies; pedestrians and cyclists have none (see the module docstring: a light road
        # user meeting a vehicle is the impact model's, :mod:`simready.sim.behavior.impact`).
        self.physical = a.is_vehicle.copy()
        self.vehicles = [i for i in range(len(a)) if self.physical[i]]
        self.agent_idx = [i for i in self.vehicles if i != self.ego and not a.parked[i]]
        self.parked_idx = [i for i in self.vehicles if a.parked[i]]
        # Background vehicles (kinematic while far from every anchor) and the scenario's moving vehicles (anchors).
        self.background_idx = np.array([i for i in self.agent_idx if a.background[i]], dtype=np.int64)
        self.anchor_idx = np.array([i for i in self.vehicles if not a.background[i] and not a.parked[i]], dtype=np.int64)
        self.chassis = {i: Chassis.of(scene.catalog.entry(a.asset_ids[i])) for i in self.vehicles}
        self._prev_com: list[float] = []
        self._com_stacks: dict[tuple[int, ...], np.ndarray] = {}
        self._prev_tick = -1
        self._hidden: set[int] = set()
        self._woken: frozenset[int] = frozenset()
        #: The background vehicles driven kinematically in the last tick (:meth:`_far`).
        self._was_far: set[int] = set()
        self._masses = [impact.road_user_mass(scene, i) for i in range(len(a))]
        self._radius: list[float] = np.asarray(a.radius, dtype=np.float64).tolist()
        #: Struck road users' rigid bodies, by actor (created at the strike, in the order of the strikes).
        self.thrown: dict[int, int] = {}
        #: Whether the world's statics are complete (then :meth:`close` keeps it for this scene's next engine).
        self._statics_built = False
        self._ego_params()

    @property
    def world(self) -> World:
        """The PyBullet world, built by :meth:`start` (and given back by :meth:`close`)."""
        if self._world is None:
            raise RuntimeError("the dynamic backend has no world before start() or after close()")
        return self._world

    # --- construction --------------------------------------------------------------

    def _ego_params(self) -> None:
        """The ego chassis's figures that every tick reads (its steering, its energy), as plain attributes."""
        if self.ego is None:
            return
        ch = self.chassis[self.ego]
        self.mass, self.com = ch.mass, ch.com
        self._inertia_list = [float(x) for x in ch.inertia_diag]
        self.wheelbase, self.lr = ch.wheelbase, ch.lr

    #: The statics' tables a kept world carries to the next engine of its scene (:func:`.pool.keep_built`).
    _STATIC_TABLES = ("static_names", "static_key", "ground_bodies")

    def _build(self) -> None:
        """Create the PyBullet world: statics from the (cached) plan, then the vehicles in actor order.

        A world kept for this scene (:func:`.pool.take_built`) keeps its statics: its other bodies are removed
        and the vehicles created as in a new world (see :mod:`.pool`).
        """
        scene = self.scene
        kept = pool.take_built(scene)
        if kept is not None:
            self._world, tables = kept
            for name in self._STATIC_TABLES:
                setattr(self, name, tables[name])
            for body in tables["movable"]:
                self.world.call(p.removeBody, body)
            self._statics_built = True
            self._build_vehicles(self.world)
            return
        plan = world_plan(scene)
        # Collision pieces before the client: an asset's first look-up checks its reduced hull files in a pooled
        # client (:mod:`.pieces`), which this world then takes instead of connecting another (~20 ms).
        a = scene.actors
        used = {g.shape for g in plan.groups if isinstance(g.shape, str)}
        used.update(a.asset_ids[i] for i in self.vehicles)
        for asset in sorted(used):
            asset_pieces(self.catalog, asset)
        w = World()
        self._world = w
        w.call(p.setGravity, 0.0, 0.0, -C.GRAVITY_MPS2)
        w.call(p.setPhysicsEngineParameter, fixedTimeStep=self.h, numSubSteps=0, numSolverIterations=S.solver_iterations,
               deterministicOverlappingPairs=S.deterministic_overlapping_pairs)
        self._build_statics(w, plan)
        self._statics_built = True
        self._build_vehicles(w)

    def _build_statics(self, w: World, plan: WorldPlan) -> None:
        """One batched ``createMultiBody`` per group of same-shape, same-orientation statics (~0.1 ms a call)."""
        cat, cid, names = self.catalog, w.client, plan.names
        self.static_names: dict[int, str] = {}
        self.static_key: dict[int, int] = {}
        self.ground_bodies: set[int] = set()
        for g in plan.groups:
            shape = w.shape(g.shape, asset_pieces(cat, g.shape)) if isinstance(g.shape, str) else w.box(g.shape)
            bodies = w.batch(0.0, shape, g.positions, g.quat)
            group, mask = (GROUND_GROUP, GROUND_MASK) if g.ground else (STATIC_GROUP, STATIC_MASK)
            for body in bodies:
                p.setCollisionFilterGroupMask(body, -1, group, mask, physicsClientId=cid)
                _still(body, cid)
            self.static_key.update(zip(bodies, g.keys))
            self.static_names.update((body, names[k]) for body, k in zip(bodies, g.keys))
            if g.ground:
                self.ground_bodies.update(bodies)
        if plan.terrain is not None:
            self._build_terrain(w, plan)

    def _build_terrain(self, w: World, plan: WorldPlan) -> None:
        """The sloped ground (:class:`~simready.sim.backends.dynamic.plan.Terrain`): one height-field body.

        PyBullet centres a height field on its body: rows run along x, columns
        along y, heights about the middle of their range.
        """
        t, cid = plan.terrain, w.client
        assert t is not None  # the caller builds a terrain only where the plan has one
        nx, ny = t.heights.shape
        lo, hi = float(t.heights.min()), float(t.heights.max())
        shape = w.call(p.createCollisionShape, p.GEOM_HEIGHTFIELD, meshScale=[t.cell, t.cell, 1.0],
                       heightfieldData=t.field, numHeightfieldRows=nx, numHeightfieldColumns=ny)
        centre = [t.x0 + 0.5 * (nx - 1) * t.cell, t.y0 + 0.5 * (ny - 1) * t.cell, 0.5 * (lo + hi)]
        body = w.call(p.createMultiBody, 0.0, shape, -1, centre, [0.0, 0.0, 0.0, 1.0])
        p.setCollisionFilterGroupMask(body, -1, GROUND_GROUP, GROUND_MASK, physicsClientId=cid)
        _still(body, cid)
        key = len(plan.names) - 1
        self.static_key[body] = key
        self.static_names[body] = plan.names[key]
        self.ground_bodies.add(body)

    def _build_vehicles(self, w: World) -> None:
        """Every vehicle a rigid body with its catalog mass, centre of mass and principal inertia, in actor order.

        Contact friction is 0 on every vehicle: tyre forces are applied explicitly (the ego's tyre model,
        the agents' drive model). A parked vehicle starts as an immovable body (mass 0, which PyBullet
        keeps out of its dynamics) until something comes near (:meth:`_wake`).
        """
        self.actor_body: dict[int, int] = {}
        self.body_actor: dict[int, int] = {}
        for i in self.vehicles:
            self._create(i, not self.scene.actors.parked[i], [0.0, 0.0, -100.0 - i], [0.0, 0.0, 0.0, 1.0])
        if self.ego is not None:
            self.ego_body = self.actor_body[self.ego]

    def _create(self, i: int, dynamic: bool, com_w: list[float], q_in: list[float]) -> int:
        """Vehicle ``i``'s body, dynamic with its chassis or immovable (mass 0), its centre of mass at ``com_w`` (world,
        m) with the inertial frame at ``q_in``."""
        w = self.world
        ch = self.chassis[i]
        mass = ch.mass if dynamic else 0.0
        asset = self.scene.actors.asset_ids[i]
        body: int = w.call(p.createMultiBody, mass, w.shape(asset, asset_pieces(self.catalog, asset)), -1, com_w, q_in,
                      baseInertialFramePosition=ch.com.tolist(), baseInertialFrameOrientation=ch.inertial_quat.tolist(),
                      useMaximalCoordinates=True)
        if dynamic:
            # Mass must be passed with the inertia: PyBullet 3.2.7 zeroes a maximal-coordinate body's mass otherwise.
            w.call(p.changeDynamics, body, -1, mass=ch.mass, localInertiaDiagonal=ch.inertia_diag.tolist(), lateralFriction=0.0,
                   spinningFriction=0.0, rollingFriction=0.0, restitution=ch.restitution,
                   linearDamping=0.0, angularDamping=0.0, activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING)
        else:
            w.call(p.changeDynamics, body, -1, lateralFriction=0.0, spinningFriction=0.0, rollingFriction=0.0,
                   restitution=ch.restitution)
        w.call(p.setCollisionFilterGroupMask, body, -1, *(EGO_FILTER if i == self.ego else AGENT_FILTER))
        self.actor_body[i] = body
        self.body_actor[body] = i
        return body

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
        v_com = bodies.vel[i] + _cross(bodies.omega[i], R @ ch.com)
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

    def _read_table(self, idx: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The rows of vehicles ``idx`` after a tick (origin xyz, quaternion, origin velocity, angular velocity,
        heading, forward speed, slip: (n, 16)) and their lever arms (n, 3, 1), from the same reads in the same order
        as :meth:`_read_raw` makes body by body: the reads gathered into one array, the arithmetic in two compiled calls
        (:func:`~simready.sim.backends.dynamic.kernels.body_frames`, :func:`~simready.sim.backends.dynamic.kernels.body_rows`)
        around the lever arms' stacked numpy product (its bits are BLAS's), the scalar model's operations in its order."""
        cid = self.world.client
        chassis, actor_body = self.chassis, self.actor_body
        pose, twist, compose = p.getBasePositionAndOrientation, p.getBaseVelocity, p.multiplyTransforms
        raw: list[float] = []
        put = raw.extend
        for i in idx:
            ch = chassis[i]
            body = actor_body[i]
            com_w, q_in = pose(body, physicsClientId=cid)
            lin, ang = twist(body, physicsClientId=cid)
            put(com_w)
            put(q_in if ch.identity_inertial else compose(_ORIGIN, q_in, _ORIGIN, ch.inertial_inv)[1])
            put(lin)
            put(ang)
        n = len(idx)
        reads = np.array(raw).reshape(n, 13)
        quat, rot = np.empty((n, 4)), np.empty((n, 9))
        body_frames(reads, quat, rot)
        levers = rot.reshape(n, 3, 3) @ self._coms(idx)
        table = np.empty((n, 16))
        body_rows(reads, quat, rot, levers, table)
        return table, levers

    def _coms(self, idx: list[int]) -> np.ndarray:
        """The centres of mass of vehicles ``idx`` as an (n, 3, 1) stack (cached per list of vehicles)."""
        key = tuple(idx)
        hit = self._com_stacks.get(key)
        if hit is None:
            if len(self._com_stacks) > 256:
                self._com_stacks.clear()
            hit = self._com_stacks[key] = np.array([self.chassis[i].com for i in idx], dtype=np.float64).reshape(-1, 3, 1)
        return hit

    def _read_ego(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[float, float, float]]:
        return self._read(self._ego)

    def start(self, state: SimState) -> StepOutcome:
        if self._world is None:
            self._build()
        self._woken = frozenset(state.world.woken)
        for i in sorted(self._woken):
            self._make_dynamic(i, state.bodies)
        for i in self.vehicles:
            if state.bodies.present[i]:
                self._place(i, state.bodies)
            else:
                self._hide(i)
        for rec in state.control.struck:
            if rec[0] not in self.thrown:
                self._create_thrown(rec[0], state.bodies)
        return StepOutcome(state.bodies, state.coords, state.world.contacts, {})

    # --- stepping -------------------------------------------------------------------------------

    def _tyre_setup(self, steer: float, friction: float) -> tuple[float, ...]:
        """The ego's tyre constants for this tick (:func:`~simready.sim.backends.dynamic.chassis.tyre_setup`)."""
        return tyre_setup(self.chassis[self._ego], steer, friction, self.h)

    def _tyre_forces(self, steer: float, a_cmd: float, friction: float, setup: tuple[float, ...] | None = None) -> float:
        """Apply this substep's tyre forces to the ego (:func:`~simready.sim.backends.dynamic.chassis.tyre_forces`);
        returns the tyre utilisation."""
        return tyre_forces(self.world.client, self.ego_body, steer, a_cmd,
                           self._tyre_setup(steer, friction) if setup is None else setup)

    def _energy_now(self) -> float:
        """Kinetic + potential energy of the ego (J)."""
        return body_energy(self.world.client, self.ego_body, self.mass, self._inertia_list)

    def _steer(self, state: SimState, route: RouteTable, plan: Plan, crashed: bool) -> float:
        """The ego's steering angle for this tick: pure pursuit of its path, or straight after a crash (rate-limited)."""
        e = self._ego
        if crashed:
            want = 0.0
        else:
            path = route.paths.paths[e]
            c = state.coords
            v = float(c.v[e])
            look = max(S.preview_min_m, S.preview_gain_s * v)
            x, y = state.bodies.pos[e, 0], state.bodies.pos[e, 1]
            yaw = float(c.yaw[e])
            rear_x, rear_y = x - math.cos(yaw) * self.lr, y - math.sin(yaw) * self.lr
            tx, ty = path.point_at(float(c.u[e]) + look, float(plan.d_ref[e]))
            want = preview_steer(rear_x, rear_y, yaw, tx, ty, self.wheelbase)
            want = max(min(want, S.max_steer_rad), -S.max_steer_rad)
        step = S.max_steer_rate_rps * self.scene.dt
        prev = state.control.steer_rad
        return prev + max(min(want - prev, step), -step)

    def _wake(self, state: SimState) -> None:
        """Give a parked vehicle its mass once a moving vehicle body is near enough to touch it within a tick.

        Near: centre distance below both bounding radii, the other's travel in a tick and
        :data:`WAKE_MARGIN_M`. From then on it is a dynamic body held by its parking brake
        (:meth:`_drive`), pushed when something pushes harder than μ·m·g.
        """
        b = state.bodies
        present = b.present.tolist()
        sleeping = [i for i in self.parked_idx if i not in self._woken and present[i]]
        if not sleeping:
            return
        movers = [j for j in self.vehicles if self._dynamic(j) and present[j]]
        # The same floats as element by element: the movers' speeds by numpy's hypot (one ufunc call), the sums and
        # differences the same IEEE operations on Python floats.
        sel = np.array(movers, dtype=np.int64)
        speeds = np.hypot(b.vel[sel, 0], b.vel[sel, 1]).tolist()
        radius, pos, dt = self._radius, b.pos.tolist(), self.scene.dt
        woken = set(self._woken)
        for i in sleeping:
            xi, yi, _ = pos[i]
            for j, speed in zip(movers, speeds):
                reach = (radius[i] + radius[j]) + WAKE_MARGIN_M + speed * dt
                if math.hypot(xi - pos[j][0], yi - pos[j][1]) < reach:
                    woken.add(i)
                    self._woken = frozenset(woken)
                    self._make_dynamic(i, b)
                    break
        self._woken = frozenset(woken)

    def _far(self, state: SimState) -> set[int]:
        """The background vehicles beyond :data:`PHYSICS_RADIUS_M` of every present anchor at ``state`` (kinematic this
        tick)."""
        bg = self.background_idx
        if not len(bg):
            return set()
        b = state.bodies
        anchors = self.anchor_idx[b.present[self.anchor_idx]]
        if self.thrown:
            anchors = np.concatenate([anchors, np.array(sorted(self.thrown), dtype=np.int64)])
        bg = bg[b.present[bg]]
        if not len(anchors):
            return set(bg.tolist())
        d = b.pos[bg, None, :2] - b.pos[None, anchors, :2]
        near = ((d * d).sum(axis=2) <= PHYSICS_RADIUS_M * PHYSICS_RADIUS_M).any(axis=1)
        return set(bg[~near].tolist())

    def _drive(self, i: int, state: SimState, kin: Bodies, yaw: np.ndarray, plan: Plan | None, stop: bool) -> tuple[float, ...]:
        """This tick's force and torque on agent ``i`` (:func:`~simready.sim.backends.dynamic.drive.agent_drive`)."""
        return agent_drive(self.scene, self.chassis[i], self.actor_body[i], i, state, kin, yaw, plan, stop)

    def advance(self, state: SimState, route: RouteTable, plan: Plan) -> StepOutcome:
        scene = self.scene
        a = scene.actors
        c = state.coords
        present = state.bodies.present
        step = step_on_paths(scene, route.paths, state.bodies, c.yaw, c.u, c.v, plan.accel, plan.d_ref, plan.d_rate,
                             plan.d_acc)
        kin, yaw, slip, accel = step.bodies, step.yaw, step.slip, step.accel
        goals = state.control.longitudinal
        hidden = self._hidden
        present_l = present.tolist()
        far = self._far(state)
        was_far = self._was_far
        for i in self.vehicles:
            if not present_l[i] or i in far:
                if i not in hidden:
                    self._hide(i)
            elif i in hidden:
                # Handed over to physics: its body at the tick's state (where a restored engine places it too); one
                # that appears (a spawned reserve) at the step's pose.
                self._show(i, state.bodies if i in was_far else kin)
        self._was_far = far
        self._wake(state)
        e = self.ego if self.ego is not None and present[self.ego] else None
        steer = 0.0
        util = 0.0
        # The energy check only applies to a tick without actuation; reading the energy changes nothing.
        e_before = self._energy_now() if e is not None and plan.throttle[e] <= 0.0 and plan.accel[e] <= 0.0 else None
        # The vehicles whose bodies move under forces this tick (absent, far and sleeping parked ones excepted).
        parked, woken = a.parked.tolist(), self._woken
        live = [i for i in self.vehicles if present_l[i] and i not in hidden and (not parked[i] or i in woken)]
        drives = agent_drives(scene, [(i, self.chassis[i], self.actor_body[i], post_crash(goals[i]) or parked[i])
                                      for i in live if i != self.ego], state, kin, yaw, plan)
        if e is not None:
            steer = self._steer(state, route, plan, post_crash(goals[e]))
            a_cmd, friction = float(plan.accel[e]), state.world.friction
            setup = self._tyre_setup(steer, friction)
        cid = self.world.client
        force, torque, world, stepper = p.applyExternalForce, p.applyExternalTorque, p.WORLD_FRAME, p.stepSimulation
        h = self.h
        # Each substep's calls, in order (each agent's force, then its torque), built once a tick and made by one
        # C-level loop (``starmap``) per substep: the point of substep k is cx + vx·h·k, the same arithmetic as at
        # the substep, and every call takes PyBullet's positional arguments (no keyword parsing).
        calls: list[list[tuple[Any, ...]]] = [[] for _ in range(self.substeps)]
        for body, fx, fy, fz, tx, ty, tz, cx, cy, cz, vx, vy, vz in drives:
            f, tq = [fx, fy, fz], [tx, ty, tz]
            vxh, vyh, vzh = vx * h, vy * h, vz * h
            for k, row in enumerate(calls):
                row.append((force, body, -1, f, [cx + vxh * k, cy + vyh * k, cz + vzh * k], world, cid))
                row.append((torque, body, -1, tq, world, cid))
        tyres = self._tyre_forces
        for row in calls:
            drain(starmap(call, row), 0)
            if e is not None:
                util = max(util, tyres(steer, a_cmd, friction, setup))
            stepper(physicsClientId=cid)
        pos, quat, vel, omega = (np.array(x) for x in (kin.pos, kin.quat, kin.vel, kin.omega))
        yaw = np.array(yaw)
        u_out, d_out, v_out = np.array(step.u), np.array(plan.d_ref), np.array(step.v)
        slip = np.array(slip)
        extras = {"accel_mps2": accel, "throttle": plan.throttle, "brake": plan.brake,
                  "steer_rad": np.zeros(len(a)), "slip_rad": slip, "tyre_util": np.zeros(len(a))}
        lever = (0.0, 0.0, 0.0)
        live_set = set(live)
        for i in self.vehicles:
            # Sleeping parked vehicles stand; far background ones keep the kinematic step's rows.
            if present_l[i] and i not in live_set and i not in far:
                pos[i], quat[i], vel[i], omega[i] = state.bodies.pos[i], state.bodies.quat[i], 0.0, 0.0
                yaw[i], u_out[i], d_out[i], v_out[i] = c.yaw[i], c.u[i], c.d[i], 0.0
        moved = live
        if moved:
            sel = np.array(moved, dtype=np.int64)
            # Each moved body's row: origin, quaternion, velocity, angular velocity, heading, speed, slip (16 floats).
            table, levers = self._read_table(moved)
            if e is not None and e in live_set:
                lx, ly, lz = levers[moved.index(e), :, 0].tolist()
                lever = (lx, ly, lz)
            pos[sel], quat[sel], vel[sel], omega[sel] = table[:, 0:3], table[:, 3:7], table[:, 7:10], table[:, 10:13]
            yaw[sel], v_out[sel], slip[sel] = table[:, 13], table[:, 14], table[:, 15]
            # Every body back onto its path in one compiled call (ReferencePath.project_near's operations, its bits).
            cum, base, last, pts, dirs = route.paths.kernel_arrays[:5]
            pu, pd = np.empty(len(sel)), np.empty(len(sel))
            kernels.project_near(cum, base, last, pts, dirs, sel, table[:, 0].copy(), table[:, 1].copy(),
                                 np.ascontiguousarray(c.u[sel], dtype=np.float64), PROJECT_WINDOW, pu, pd)
            u_out[sel], d_out[sel] = pu, pd
        if e is not None:
            extras["steer_rad"][e] = steer
            extras["tyre_util"][e] = util
        struck = self._read_thrown(state, pos, quat, vel, omega, yaw)
        contacts, impacts = self._contacts(state, pos, yaw, present, struck)
        struck, hit = self._strike(state, contacts, struck, pos, quat, vel, omega, yaw)
        for i in impact.struck_actors(struck):
            u_out[i], d_out[i], v_out[i] = c.u[i], c.d[i], 0.0
        for user, vehicle in hit:
            impacts.setdefault((min(user, vehicle), max(user, vehicle)), (float(pos[user, 0]), float(pos[user, 1])))
        if e is not None:
            touching = any(e in pair and pair[0] + pair[1] - e >= 0 for pair in contacts)
            self._check(state, pos[e], vel[e], omega[e], lever, e_before, plan, touching or any(e == v for _, v in hit))
        coords = PathCoords(c.path_keys, frozen(u_out), frozen(d_out), frozen(plan.d_rate), frozen(v_out), frozen(accel),
                            frozen(yaw))
        bodies = Bodies(frozen(pos), frozen(quat), frozen(vel), frozen(omega), present)
        return StepOutcome(bodies, coords, frozenset(contacts), extras, impacts=impacts, struck=struck, woken=self._woken)

    def _contacts(self, state: SimState, pos: np.ndarray, yaw: np.ndarray, present: np.ndarray,
                  struck: tuple[impact.Struck, ...] = ()) -> tuple[set[tuple[int, int]], dict[tuple[int, int], tuple[float, float]]]:
        """This tick's contacts and the impact point (world x, y) of each new one.

        Between vehicles, and between a vehicle and a static collider other
        than the ground: PyBullet's contact points. Any pair of actors whose
        footprints overlap at the tick's final poses is in contact too (a
        pair with a pedestrian or cyclist, and two vehicles whose footprints
        meet before their hulls do; two parked vehicles excepted). A thrown
        road user stays in contact with the vehicle that struck it until its
        body is at rest (``struck``: the records after this tick's read).
        """
        out: set[tuple[int, int]] = set()
        points: dict[tuple[int, int], tuple[float, float]] = {}
        body_actor, statics = self.body_actor, self.static_names
        for cp in p.getContactPoints(physicsClientId=self.world.client):
            ba, bb = cp[1], cp[2]
            i, j = body_actor.get(ba), body_actor.get(bb)
            if i is None and j is None:
                continue
            if i is None or j is None:
                other = bb if i is not None else ba
                if other in self.ground_bodies or other not in statics:
                    continue
                actor = i if i is not None else j
                assert actor is not None  # one of the two is an actor
                pair = (actor, -1 - self.static_key[other])
                self.static_contact_names[pair] = statics[other]
            else:
                pair = (min(i, j), max(i, j))
            if pair not in out:
                out.add(pair)
                points[pair] = (round(float(cp[5][0]), 6), round(float(cp[5][1]), 6))
        phys, parked = self.physical, self.scene.actors.parked
        for pair in footprint_contacts(self.scene, pos, yaw, present):
            # Two vehicle bodies are in contact from the first tick their footprints overlap, even where their
            # collision hulls (inside the footprint) have not met yet, so every overlap lies inside its event.
            if not (phys[pair[0]] and phys[pair[1]]) or not (parked[pair[0]] and parked[pair[1]]):
                out.add(pair)
                if pair not in points and phys[pair[0]] and phys[pair[1]]:
                    # Footprints first: the impact point is the centre of their overlap.
                    i, j = pair
                    a = self.scene.actors
                    c = impact.overlap_centre((float(pos[i, 0]), float(pos[i, 1])), float(yaw[i]), (float(a.hl[i]), float(a.hw[i])),
                                              (float(pos[j, 0]), float(pos[j, 1])), float(yaw[j]), (float(a.hl[j]), float(a.hw[j])))
                    if c is not None:
                        points[pair] = (round(c[0], 6), round(c[1], 6))
        for user, striker, *_ in struck:
            if striker >= 0:
                out.add((min(user, striker), max(user, striker)))
        before = state.world.contacts
        return out, {k: v for k, v in points.items() if k not in before}

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
        lift = max(-float(_cross(w, R @ np.array([sx * hl, sy * hw, 0.0]) - arm)[2]) for sx in (-1.0, 1.0) for sy in (-1.0, 1.0))
        v_com[2] = max(float(v_com[2]), lift)
        omega[user] = w
        vel[user] = v_com - _cross(w, arm)
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
        self.body_actor[body] = i
        q = bodies.quat[i]
        R = np.array(p.getMatrixFromQuaternion(q.tolist())).reshape(3, 3)
        q_in = p.multiplyTransforms([0, 0, 0], q.tolist(), [0, 0, 0], ch.inertial_quat.tolist())[1]
        w.call(p.resetBasePositionAndOrientation, body, (bodies.pos[i] + R @ ch.com).tolist(), list(q_in))
        w.call(p.resetBaseVelocity, body, (bodies.vel[i] + _cross(bodies.omega[i], R @ ch.com)).tolist(),
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

    def _check(self, state: SimState, pos: np.ndarray, vel: np.ndarray, omega: np.ndarray, lever: tuple[float, float, float],
               e_before: float | None, plan: Plan, touching: bool = False) -> None:
        """This tick's rollout checks on the ego (:mod:`~simready.sim.backends.dynamic.checks`).

        ``lever``: the origin-to-centre-of-mass arm :meth:`_read_ego` computed (world, m).

        ``e_before``: the ego's energy (J) before the tick, None when it was
        actuated; ``touching``: the ego touches another actor at the end of the
        tick (or struck one), which skips the energy comparison — momentum
        exchanged in a contact is not a solver error.
        """
        e = self._ego
        prev_com = self._prev_com if self._prev_tick == state.tick else (
            state.bodies.pos[e] + np.array(p.getMatrixFromQuaternion(state.bodies.quat[e].tolist())).reshape(3, 3) @ self.com).tolist()
        # pos + lever, as numpy's elementwise sum would give it.
        com = [x + r for x, r in zip(pos.tolist(), lever)]
        self._prev_com, self._prev_tick = com, state.tick + 1
        crossed = crossed_collider(self.world.client, prev_com, com, self.static_names, self.ground_bodies)
        unactuated = e_before is not None and not touching and plan.throttle[e] <= 0.0 and plan.accel[e] <= 0.0
        self.checks.tick(state, pos, omega, crossed, e_before, self._energy_now() if unactuated else None)

    def rollout_checks(self) -> list[dict[str, Any]]:
        return self.checks.records()

    def substep_s(self) -> float:
        return self.h

    def close(self) -> None:
        """Give the world back: kept with its statics for this scene's next engine (:func:`.pool.keep_built`), or
        reset into the client pool if its statics are incomplete."""
        if self._world is not None:
            if self._statics_built:
                tables = {name: getattr(self, name) for name in self._STATIC_TABLES}
                tables["movable"] = sorted(getattr(self, "body_actor", {}))
                pool.keep_built(self.scene, self._world, tables)
            else:
                self._world.close()
            self._world = None
