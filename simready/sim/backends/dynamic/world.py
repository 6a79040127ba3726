"""The PyBullet world of a ``dynamic-v1`` backend: built once per engine from the scene (the statics from the
scene's cached plan, :mod:`.plan`; then every vehicle in actor order, a rigid body with its chassis,
:mod:`.chassis`), in sorted order so the call sequence is the same every time, and given back at the end
(kept with its statics for the scene's next engine, or the next of another scene with the same statics, :mod:`.pool`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet as p

from simready.common.errors import CatalogError
from simready.sim.core import constants as C
from simready.sim.behavior import impact
from simready.sim.backend import Backend
from simready.sim.backends.dynamic.checks import RolloutChecks
from simready.sim.backends.dynamic.chassis import Chassis, ego_constants
from simready.sim.core.kinematics import divergence_limits, footprint_arrays
from simready.sim.backends.dynamic.pieces import asset_pieces
from simready.sim.backends.dynamic.plan import WorldPlan, world_plan
from simready.sim.backends.dynamic import pool
from simready.sim.backends.dynamic.pool import (
    AGENT_FILTER,
    EGO_FILTER,
    GROUND_GROUP,
    GROUND_MASK,
    STATIC_GROUP,
    STATIC_MASK,
    World,
)
from simready.sim.core.scene import Scene, substeps_per_tick

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog


def _still(body: int, cid: int) -> None:
    """A static collider put to sleep: PyBullet then leaves its bounding box alone at every step (it never moves; a
    static body is never woken by a contact, and one active body in a pair is enough for its contacts), which
    on a city map with a thousand static pieces was most of a step's cost. The stepping's results are the same."""
    p.changeDynamics(body, -1, activationState=p.ACTIVATION_STATE_SLEEP, physicsClientId=cid)


class DynamicWorld(Backend):
    """The backend's tables and its PyBullet world: what is built, and how (see :class:`~.backend.DynamicBackend`)."""

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
        # Vehicles are rigid bodies; pedestrians and cyclists have none (see :mod:`.backend`: a light road
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
        self._com_stacks: dict[tuple[int, ...], tuple[np.ndarray, list[tuple[int, tuple[float, ...] | None]],
                                                      np.ndarray, np.ndarray, np.ndarray, bool]] = {}
        #: Lists of actor or body indices as arrays (:meth:`~.backend.DynamicBackend._index_array`).
        self._int_arrays: dict[tuple[int, ...], np.ndarray] = {}
        self._prev_tick = -1
        self._hidden: set[int] = set()
        self._woken: frozenset[int] = frozenset()
        #: The background vehicles driven kinematically in the last tick (:meth:`_far`).
        self._was_far: set[int] = set()
        #: The footprints' arrays and the divergence limits of the tick's verdict (:func:`~.kernels.finish_rows`).
        self._finish_args = (*footprint_arrays(scene), *divergence_limits(scene.bounds))
        #: The last tick's layout of the vehicles' bodies (:meth:`~.backend.DynamicBackend._hand_over`; None: none yet).
        self._layout: Any = None
        #: Per body id, its role in a contact the backend reads (:meth:`~.backend.DynamicBackend._contact_points`; None:
        #: not built since the last body was created), and the compiled read's rows.
        self._roles: np.ndarray | None = None
        self._contact_buf = np.empty((64, 4))
        #: The two state addresses a compiled read fills (:func:`~.capi.ego_energy`).
        self._state_ptrs = np.zeros(2, dtype=np.int64)
        self._masses = [impact.road_user_mass(scene, i) for i in range(len(a))]
        self._radius: list[float] = np.asarray(a.radius, dtype=np.float64).tolist()
        self._radius_array = np.array(self._radius, dtype=np.float64)
        #: A tick whose physics the compiled quiet ticks stepped, pending for :meth:`~.backend.DynamicBackend.advance`
        #: (``(tick, util, steer, energy before, reads, frame quaternions, rotations, lever arms)``; None: none).
        self._pending: tuple[Any, ...] | None = None
        #: Struck road users' rigid bodies, by actor (created at the strike, in the order of the strikes).
        self.thrown: dict[int, int] = {}
        #: Whether the world's statics are complete (then :meth:`close` keeps it for this scene's next engine).
        self._statics_built = False
        #: The world plan its statics were built from (:func:`~.plan.world_plan`), set by :meth:`_build`.
        self._plan: WorldPlan | None = None
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
        self._ego_k = np.zeros(15)  # (unread without an ego)
        if self.ego is None:
            return
        ch = self.chassis[self.ego]
        #: The ego's steering and tyre constants for the compiled tick (:func:`~.chassis.ego_constants`).
        self._ego_k = ego_constants(ch, self.scene.dt, self.h)
        self.mass, self.com = ch.mass, ch.com
        self._inertia_list = [float(x) for x in ch.inertia_diag]
        self.wheelbase, self.lr = ch.wheelbase, ch.lr

    #: The statics' tables a kept world carries to the next engine of its scene (:func:`.pool.keep_built`).
    _STATIC_TABLES = ("static_names", "static_key", "ground_bodies")

    def _build(self, woken: frozenset[int] = frozenset()) -> None:
        """Create the PyBullet world: statics from the (cached) plan, then the vehicles in actor order (``woken``:
        parked ones created dynamic).

        A world kept for this scene (:func:`.pool.take_built`), or for another scene of the same world plan
        (:func:`.pool.take_built_plan`), keeps its statics: its other bodies are removed and the vehicles created as
        in a new world (see :mod:`.pool`).
        """
        scene = self.scene
        kept = pool.take_built(scene)
        if kept is None:
            # Another scene's world with the same statics (the same plan object, substep and catalog) serves as well.
            self._plan = world_plan(scene)
            kept = pool.take_built_plan(self._plan, self.h, self.catalog)
        else:
            self._plan = kept[1]["plan"]
        if kept is not None:
            self._world, tables = kept
            for name in self._STATIC_TABLES:
                setattr(self, name, tables[name])
            for body in tables["movable"]:
                self.world.call(p.removeBody, body)
            self._statics_built = True
            self._build_vehicles(self.world, woken)
            return
        plan = self._plan
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
        w.call(p.setPhysicsEngineParameter, fixedTimeStep=self.h, numSubSteps=0,
               numSolverIterations=C.DYNAMIC_SETTINGS.solver_iterations,
               deterministicOverlappingPairs=C.DYNAMIC_SETTINGS.deterministic_overlapping_pairs)
        self._build_statics(w, plan)
        self._statics_built = True
        self._build_vehicles(w, woken)

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

    def _build_vehicles(self, w: World, woken: frozenset[int] = frozenset()) -> None:
        """Every vehicle a rigid body with its catalog mass, centre of mass and principal inertia, in actor order.

        Contact friction is 0 on every vehicle: tyre forces are applied explicitly (the ego's tyre model,
        the agents' drive model). A parked vehicle starts as an immovable body (mass 0, which PyBullet
        keeps out of its dynamics) until something comes near (:meth:`_wake`); those in ``woken`` (a restored
        state's) are created dynamic.
        """
        self.actor_body: dict[int, int] = {}
        self.body_actor: dict[int, int] = {}
        for i in self.vehicles:
            self._create(i, not self.scene.actors.parked[i] or i in woken, [0.0, 0.0, -100.0 - i], [0.0, 0.0, 0.0, 1.0])
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
        self._com_stacks.clear()  # the bodies read per list of vehicles (:meth:`_read_specs`)
        self._layout = None  # and the tick's lists of them (:meth:`~.backend.DynamicBackend._hand_over`)
        self._roles = None  # the bodies' roles in a contact (:meth:`~.backend.DynamicBackend._contact_points`)
        self.body_actor[body] = i
        return body

    def close(self) -> None:
        """Give the world back: kept with its statics for this scene's next engine, or another scene's of the same plan
        (:func:`.pool.keep_built`), or reset into the client pool if its statics are incomplete."""
        if self._world is not None:
            if self._statics_built:
                tables = {name: getattr(self, name) for name in self._STATIC_TABLES}
                tables["movable"] = sorted(getattr(self, "body_actor", {}))
                tables["plan"] = self._plan
                pool.keep_built(self.scene, self._world, tables, self._plan, self.h, self.catalog)
            else:
                self._world.close()
            self._world = None
