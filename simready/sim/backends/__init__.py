"""Physics backends: ``kinematic-v1`` (path following) and ``dynamic-v1`` (PyBullet).

The registry sits here, above the interface (:mod:`simready.sim.backend`) and
the adapters that implement it, so the interface never imports an adapter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simready.sim.backend import Backend
from simready.sim.backends.dynamic import DynamicBackend
from simready.sim.backends.kinematic import KinematicBackend

if TYPE_CHECKING:
    from simready.sim.core.scene import Scene

_BY_NAME: dict[str, type[Backend]] = {b.name: b for b in (KinematicBackend, DynamicBackend)}


def make_backend(name: str, scene: Scene) -> Backend:
    """Backend instance by name."""
    backend = _BY_NAME.get(name)
    if backend is None:
        raise ValueError(f"unknown backend {name!r}")
    return backend(scene)
