"""The PyBullet world of ``dynamic-v1``: pooled DIRECT clients, collision shapes, batched bodies, collision groups.

A client is connected without its renderer and, when a world is closed,
reset and kept for the next one (up to :data:`MAX_IDLE_CLIENTS`): a reset
world is indistinguishable from a new one, so results are bit-identical
whether or not a client came from the pool.

A world is also kept for the next engine of the same scene, or of another
scene with the same static world plan, its statics standing (:func:`keep_built`,
:func:`take_built`, :func:`take_built_plan`, up to :data:`MAX_BUILT_WORLDS`): a
branch loop restores one checkpoint many times, and creating the statics was
most of a restore; the samples of one street share its statics. The statics are never
moved, woken or given a mass; every other body (vehicles, thrown road users)
is removed and the vehicles are created anew, in actor order, as in a new
world. The rollout's bits are those of a new world (tested). Why not keep
the vehicle bodies and reset their poses and twists: a body carries solver
state no reset clears, and its continuation differed in the last bits.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet as p

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.sim.core.scene import Scene

#: Collision groups (bits). A ``rayTest`` ray always carries group 1 and a body is hit only if its mask has
#: that bit, so no body is in group 1 and the (non-ground) statics' mask has it: the tunnelling ray sees them
#: and nothing else, and no new body pairs pass the broadphase filter. The ground meets only the ego: the
#: agents ride on their support model (:mod:`~simready.sim.backends.dynamic.drive`).
RAY_GROUP, EGO_GROUP, AGENT_GROUP, STATIC_GROUP, GROUND_GROUP, BODY_GROUP = 1, 2, 4, 8, 16, 32
#: Each vehicle body's collision group and mask.
EGO_FILTER = (EGO_GROUP, STATIC_GROUP | GROUND_GROUP | AGENT_GROUP | BODY_GROUP)
AGENT_FILTER = (AGENT_GROUP, STATIC_GROUP | EGO_GROUP | AGENT_GROUP | BODY_GROUP)
#: A struck pedestrian's or cyclist's body (:mod:`simready.sim.behavior.impact`): it meets everything, the ground included.
BODY_FILTER = (BODY_GROUP, STATIC_GROUP | GROUND_GROUP | EGO_GROUP | AGENT_GROUP | BODY_GROUP)
#: The masks of the statics: the ground meets the ego and thrown bodies; the other statics every body and the ray.
GROUND_MASK = EGO_GROUP | BODY_GROUP
STATIC_MASK = EGO_GROUP | AGENT_GROUP | RAY_GROUP | BODY_GROUP

#: DIRECT clients whose worlds were reset and can be reused (connecting costs ~15 ms; a reset world is
#: indistinguishable from a new one: the same call sequence gives bit-identical results).
_IDLE_CLIENTS: list[int] = []
MAX_IDLE_CLIENTS = 4


def _connect() -> int:
    """A new DIRECT client without its TinyRenderer plugin (~15–25 ms).

    Why: the renderer builds display meshes for every body created (about half
    of ``createMultiBody``'s cost); nothing renders these worlds, and physics
    never reads them.
    """
    client: int = p.connect(p.DIRECT)
    plugin = p.loadPlugin("tinyRendererPlugin", physicsClientId=client)
    if plugin >= 0:
        p.unloadPlugin(plugin, physicsClientId=client)
    return client


class World:
    """The PyBullet client and the ids of everything in it."""

    def __init__(self) -> None:
        # Pooled clients were reset when they were given back; a new one starts empty.
        self.client = _IDLE_CLIENTS.pop() if _IDLE_CLIENTS else _connect()
        self.shapes: dict[str, int] = {}
        self.boxes: dict[tuple[float, float, float], int] = {}
        #: The client's C API handle (:func:`~simready.sim.backends.dynamic.capi.client_handle`; None: not found),
        #: -1 until looked up.
        self.capi_handle: int | None = -1
        #: The boxes of the static colliders other than the ground (:meth:`~.backend.DynamicBackend._static_boxes`;
        #: None: not taken yet).
        self.static_boxes: np.ndarray | None = None

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, physicsClientId=self.client, **kwargs)

    def shape(self, asset: str, pieces: tuple[tuple[Any, ...], ...]) -> int:
        """One compound collision shape per asset (cached), in the asset body frame, from its collision ``pieces``
        (:func:`~simready.sim.backends.dynamic.pieces.asset_pieces`)."""
        if asset in self.shapes:
            return self.shapes[asset]
        types, halves, files, frames = [], [], [], []
        for piece in pieces:
            if piece[0] == "box":
                types.append(p.GEOM_BOX)
                halves.append(piece[1])
                files.append("")
                frames.append(piece[2])
            else:
                types.append(p.GEOM_MESH)
                halves.append([0.0, 0.0, 0.0])
                # The reduced copy gives the catalog file's hull in a third of the time; it lives in a temporary
                # folder, so the catalog file stands in should anything have removed it.
                files.append(piece[2] if piece[2] is not None and os.path.exists(piece[2]) else piece[1])
                frames.append([0.0, 0.0, 0.0])
        sid: int = self.call(p.createCollisionShapeArray, types, halfExtents=halves, fileNames=files, collisionFramePositions=frames)
        self.shapes[asset] = sid
        return sid

    def box(self, half: tuple[float, float, float]) -> int:
        """One box shape per half-extents triple (m), cached per world."""
        sid = self.boxes.get(half)
        if sid is None:
            sid = self.boxes[half] = self.call(p.createCollisionShape, p.GEOM_BOX, halfExtents=list(half))
        return sid

    def batch(self, mass: float, shape: int, positions: Any, quat: Any) -> tuple[int, ...]:
        """Bodies of one shape and orientation at ``positions`` (m; a sequence of xyz sequences), created by one call
        (ids in position order).

        Why batched: each ``createMultiBody`` call costs ~0.1 ms of PyBullet
        bookkeeping; a batch pays it once. The bodies are the same as one call each.
        """
        ids = p.createMultiBody(mass, shape, -1, positions[0], quat, useMaximalCoordinates=True, batchPositions=positions,
                                physicsClientId=self.client)
        return tuple(ids) if isinstance(ids, (tuple, list)) else (ids,)

    def close(self) -> None:
        if self.client >= 0:
            if len(_IDLE_CLIENTS) < MAX_IDLE_CLIENTS:
                p.resetSimulation(physicsClientId=self.client)
                _IDLE_CLIENTS.append(self.client)
            else:
                p.disconnect(physicsClientId=self.client)
            self.client = -1



#: Worlds kept with their statics: (weak reference to the scene they were built for, world, tables, what another
#: scene must share to take it: (world plan, substep s, catalog)), oldest first.
_BUILT: list[tuple[Any, World, dict[str, Any], tuple[Any, float, Any]]] = []
MAX_BUILT_WORLDS = 2


def keep_built(scene: Scene, world: World, tables: dict[str, Any], plan: Any, h: float, catalog: Catalog) -> None:
    """Keep ``world``, its statics built from world plan ``plan`` (:func:`~.plan.world_plan`) at substep ``h`` (s),
    for the next engine of the same scene, or of another scene with the same plan, substep and catalog object (the
    world's collision shapes are cached per asset name: its vehicles' shapes are that catalog's).

    ``tables``: what that engine needs to take it over: the statics' tables and ``movable``, the ids of every
    other body (removed when it is taken).
    """
    _BUILT.append((weakref.ref(scene), world, tables, (plan, h, catalog)))
    _prune()


def take_built(scene: Scene) -> tuple[World, dict[str, Any]] | None:
    """A world kept for this very ``scene`` object and its tables (no longer kept), or None."""
    for k, (ref, world, tables, _shared) in enumerate(_BUILT):
        if ref() is scene:
            del _BUILT[k]
            return world, tables
    return None


def take_built_plan(plan: Any, h: float, catalog: Catalog) -> tuple[World, dict[str, Any]] | None:
    """A kept world whose statics were built from this very ``plan`` object at substep ``h`` for this very
    ``catalog`` object (the newest such), or None.

    Why another scene may take it: its statics are the plan's bodies, created by the same calls in the same order
    whichever scene asked; the engine that takes it removes every other body and creates its own vehicles as in a
    new world, as a scene's own next engine does (the same bits: ``tests/test_sim_world.py``). A street with
    thousands of static instances (an imported map) then builds them once per process, not once per sample.
    """
    for k in range(len(_BUILT) - 1, -1, -1):
        _ref, world, tables, (kept_plan, kept_h, kept_catalog) = _BUILT[k]
        if kept_plan is plan and kept_h == h and kept_catalog is catalog:
            del _BUILT[k]
            return world, tables
    return None


def release_built() -> None:
    """Reset every kept world into the client pool (or disconnect it)."""
    while _BUILT:
        _BUILT.pop()[1].close()


def _prune() -> None:
    """The oldest kept worlds beyond :data:`MAX_BUILT_WORLDS`, reset into the client pool (a world whose scene is
    gone stays: another scene of its plan may take it)."""
    while len(_BUILT) > MAX_BUILT_WORLDS:
        _BUILT.pop(0)[1].close()
