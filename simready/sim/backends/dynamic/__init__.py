"""``dynamic-v1``: PyBullet rigid-body dynamics for every vehicle (SPEC §8).

One module per concept, each depending only on those above it in this list:

* :mod:`.pool` — pooled DIRECT clients, the world's collision shapes and
  batched bodies, the collision groups;
* :mod:`.pieces` — an asset's certified collision pieces (exact boxes,
  convex meshes) and the reduced hull files PyBullet reads faster;
* :mod:`.plan` — the static world of a scene as pure data (ground floor
  slab, merged raised ground, batched body groups), cached per template;
* :mod:`.chassis` — a vehicle body's mass properties and the ego's
  single-track tyre model;
* :mod:`.drive` — the agents' drive and support model;
* :mod:`.kernels`, :mod:`.capi` — the tick's compiled arithmetic, and its
  substeps made through PyBullet's C API in one compiled call (the binding's
  commands, the same bits);
* :mod:`.checks` — the ego's rollout checks (tunnelling, energy gain,
  explosion);
* :mod:`.world`, :mod:`.exchange`, :mod:`.thrown` — the backend class built
  up by concept: the tables and the world's construction and give-back,
  bodies to and from the engine's state, struck road users' bodies;
* :mod:`.backend` — :class:`DynamicBackend`, which builds the world from
  them and steps it.

Determinism: sleeping off, ``deterministicOverlappingPairs=1``, fixed call
order; bit-identical for identical inputs in one process and across
processes, whether or not the in-process caches (world plans, collision
pieces, idle clients) were warm. Restoring a checkpoint rebuilds the world
from the engine's state copy (see :mod:`simready.sim.storage.checkpoint` for the
replay tolerance).
"""

from __future__ import annotations

from simready.sim.backends.dynamic.backend import DynamicBackend

__all__ = ["DynamicBackend"]
