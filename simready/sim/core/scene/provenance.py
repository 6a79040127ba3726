"""What a trace's ``config_hash`` covers: the solver settings, substeps, limits and controller versions."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pybullet

from simready.sim.core import constants as C


def physics_config(backend: str, dt: float) -> dict[str, Any]:
    """Solver settings, substeps, limits and controller versions: what the header's ``config_hash`` covers."""
    cfg: dict[str, Any] = {
        "engine_version": C.ENGINE_VERSION,
        "backend": backend,
        "dt": dt,
        "constants": C.constants_record(),
    }
    if backend == "dynamic-v1":
        cfg["dynamic"] = asdict(C.DYNAMIC_SETTINGS)
        cfg["pybullet_api"] = int(pybullet.getAPIVersion())
        cfg["substeps_per_tick"] = substeps_per_tick(dt)
    return cfg


def substeps_per_tick(dt: float) -> int:
    return max(1, round(dt / C.DYNAMIC_SETTINGS.substep_s))
