"""The one interface every physics backend implements (SPEC §8; Kubric's adapter, Waymax's abstract dynamics).

The engine owns the world state; a backend is an adapter that advances it
by one tick under the planner's commands. It receives the current
:class:`~simready.sim.core.state.SimState`, the packed reference paths and the
:class:`~simready.sim.controllers.planner.Plan`, and returns the next
:class:`Bodies` and :class:`PathCoords`, the contacts, and its extra trace
columns. A backend may keep internal simulator state (PyBullet's world),
but it must be able to rebuild it from a state alone (:meth:`Backend.start`),
which is what restoring a checkpoint in a fresh engine does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import NDArray

from simready.sim.core.state import Bodies, PathCoords, SimState

if TYPE_CHECKING:
    # Types only: the interface is imported by every adapter, and the scene and the planner import PyBullet and
    # the compiled kernels.
    from simready.sim.controllers.planner import Plan, RouteTable
    from simready.sim.core.scene import Scene

#: Extra trace columns every backend writes, after the SPEC §7 columns.
COMMON_EXTRAS = ("accel_mps2", "throttle", "brake", "steer_rad", "slip_rad")


@dataclass(frozen=True, eq=False)
class StepOutcome:
    """What one backend step produced; ``extras`` maps column name → (N,) values.

    ``impacts``: the impact point (world x, y, m) of contacts that began this
    step, where the backend knows one. ``struck``: the struck road users after
    the step (:mod:`simready.sim.behavior.impact`), ``woken``: the parked vehicles that
    have become dynamic bodies; None leaves the state's as they were.
    ``ok``: the engine's divergence predicate of ``bodies`` where the backend
    computed it with them (:data:`simready.sim.core.kernels.OK_STATE` /
    ``OK_BOUNDS`` bits, and ``OK_STAYS``: nobody leaves the map at these
    coordinates); 0: the engine checks them itself.
    """

    bodies: Bodies
    coords: PathCoords
    contacts: frozenset[tuple[int, int]]
    extras: dict[str, NDArray[np.float64]]
    impacts: dict[tuple[int, int], tuple[float, float]] | None = None
    struck: tuple[tuple[int, int, float, float, float, float], ...] | None = None
    woken: frozenset[int] | None = None
    ok: int = 0


class Backend(ABC):
    """A physics adapter over the engine's world state."""

    name: ClassVar[str]
    extras: ClassVar[tuple[str, ...]] = COMMON_EXTRAS

    def __init__(self, scene: Scene) -> None:
        self.scene = scene

    @abstractmethod
    def start(self, state: SimState) -> StepOutcome:
        """Place every body where ``state`` says (tick 0, or a restored checkpoint); return the state's bodies as the backend sees them."""

    @abstractmethod
    def advance(self, state: SimState, route: RouteTable, plan: Plan) -> StepOutcome:
        """Advance one tick (``scene.dt``) under ``plan``, along ``route``'s packed reference paths."""

    def substep_s(self) -> float:
        """Integration step (s); the kinematic backend integrates once per tick."""
        return float(self.scene.dt)

    def close(self) -> None:
        """Release simulator resources (no-op unless the backend holds any)."""

