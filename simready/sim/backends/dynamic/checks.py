"""The rollout checks ``dynamic-v1`` collects while stepping (``metrics.rollout_checks``), for the ego.

* **tunnelling**: its centre of mass crossing a non-ground collider between
  ticks (:func:`crossed_collider`), or its origin falling below the ground;
* **energy gain** without actuation (:func:`body_energy` before and after the
  tick). The check is skipped on a tick that ends with the ego touching
  another actor: momentum exchanged in a contact (another vehicle's kinetic
  energy passing to the ego) is physics, not a solver error. Static colliders
  excuse nothing (they supply no energy, so a gain against them is a solver
  pop); an ego spawned interpenetrating an agent is still caught by the
  physics settle stage (:mod:`simready.sim.ladder.settle`), in which every other
  vehicle is held immovable;
* **explosion**: an angular rate above :data:`MAX_ANGULAR_RATE_RPS`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import pybullet as p

from simready.sim.core import constants as C
from simready.sim.backends.dynamic.pool import STATIC_GROUP
from simready.sim.core.scene import Scene
from simready.sim.core.state import SimState

#: Energy may grow by this much per tick without actuation before it counts as a gain (J, plus 0.5 %).
ENERGY_SLACK_J = 50.0
#: ... and by this factor (1 + 0.5 %).
ENERGY_GAIN = 1.005
MAX_ANGULAR_RATE_RPS = 10.0
#: The ego's origin this far under the ground is tunnelling (m).
TUNNEL_DEPTH_M = 0.3


def body_energy(client: int, body: int, mass_kg: float, moments: list[float]) -> float:
    """Kinetic + potential energy of ``body`` (J), from PyBullet's centre-of-mass state (scalar maths).

    ``moments``: the body's principal moments of inertia (kg·m²), in the order of its inertial frame's axes.
    """
    com, q = p.getBasePositionAndOrientation(body, physicsClientId=client)
    lin, ang = p.getBaseVelocity(body, physicsClientId=client)
    R = p.getMatrixFromQuaternion(q)
    # Angular velocity in the principal (inertial) frame: R^T ω.
    wx = R[0] * ang[0] + R[3] * ang[1] + R[6] * ang[2]
    wy = R[1] * ang[0] + R[4] * ang[1] + R[7] * ang[2]
    wz = R[2] * ang[0] + R[5] * ang[1] + R[8] * ang[2]
    ix, iy, iz = moments
    kinetic = 0.5 * mass_kg * (lin[0] ** 2 + lin[1] ** 2 + lin[2] ** 2) + 0.5 * (ix * wx * wx + iy * wy * wy + iz * wz * wz)
    energy: float = kinetic + mass_kg * C.GRAVITY_MPS2 * com[2]
    return energy


def crossed_collider(client: int, start: list[float], end: list[float], names: dict[int, str],
                     ground: Collection[int]) -> str | None:
    """The name of the static collider, not ground, that the segment ``start`` → ``end`` (world, m) crosses first, or None.

    ``names``: static collider names by body id; ``ground``: the ground bodies. The ray sees the statics and
    nothing else (:data:`~simready.sim.backends.dynamic.pool.RAY_GROUP`).
    """
    hit = p.rayTest(start, end, collisionFilterMask=STATIC_GROUP, physicsClientId=client)[0][0]
    return names.get(hit) if hit >= 0 and hit not in ground else None


class RolloutChecks:
    """The findings of one rollout, per check: the first four and the latest one."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.found: dict[str, list[str]] = {"tunnelling": [], "energy_gain": [], "explosion": []}

    def tick(self, state: SimState, pos: np.ndarray, omega: np.ndarray, crossed: str | None, e_before: float | None,
             e_after: float | None) -> None:
        """Note the findings of the tick from ``state``: the ego's end-of-tick origin ``pos`` (world, m) and angular
        velocity ``omega`` (rad/s); ``crossed``: the collider its centre of mass crossed (:func:`crossed_collider`);
        ``e_before``, ``e_after``: its energy (J) before and after a tick without actuation or contact, else None."""
        if crossed is not None:
            self._note("tunnelling", f"t={self._t(state)}: ego centre of mass crossed {crossed}")
        x, y, z = pos.tolist()
        ground = self.scene.ground.at_point(x, y)
        if z < ground - TUNNEL_DEPTH_M:
            self._note("tunnelling", f"t={self._t(state)}: ego origin {z:.2f} m is below the ground ({ground:.2f} m)")
        rate = max(map(abs, omega.tolist()))
        if rate > MAX_ANGULAR_RATE_RPS:
            self._note("explosion", f"t={self._t(state)}: ego angular rate {rate:.1f} rad/s")
        if e_before is not None and e_after is not None and e_after > e_before * ENERGY_GAIN + ENERGY_SLACK_J:
            self._note("energy_gain", f"t={self._t(state)}: ego energy rose {e_after - e_before:.0f} J without actuation")

    def _t(self, state: SimState) -> float:
        """The time at the end of the tick from ``state`` (s after the warm-up), worded only in a finding."""
        return round((state.tick + 1 - self.scene.warmup_ticks) * self.scene.dt, 9)

    def _note(self, check: str, detail: str) -> None:
        """Keep the first four findings of ``check`` and the latest one (marked "and more" once there are more)."""
        if len(self.found[check]) < 5:
            self.found[check].append(detail)
        else:
            self.found[check][-1] = detail + " (and more)"

    def records(self) -> list[dict[str, Any]]:
        """One record per check: ``check``, ``passed`` and ``detail`` (its findings, or "none")."""
        return [{"check": name, "passed": not found, "detail": "; ".join(found) if found else "none"}
                for name, found in sorted(self.found.items())]
