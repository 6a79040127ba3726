"""What actors and triggers can observe of one tick's state: lane positions, gaps, sight lines, TTC.

:class:`TickView` is built from a :class:`~simready.sim.core.state.SimState` at
the start of each tick's plan phase and caches derived quantities, so the
triggers and every controller read one consistent snapshot — no actor reads
a neighbour that has already stepped (SPEC §7 plan-then-apply). It is
scratch, never part of the state.

Sight lines (the ``visible`` condition, the ego noticing a pedestrian, a
pedestrian noticing a vehicle) run in the ground plane from the observer's
eye — :data:`~simready.sim.core.constants.EYE_FORWARD_FRACTION` of its half
length ahead of its centre — to three points on the target's long axis
(centre, ±0.8 half-lengths). The target is visible when any of the three
lines crosses no occluder edge: template buildings, the manifest's box
occluders, and the footprints of vehicles and of actor occluders (the
observer's and target's own edges excepted).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

import numpy as np
from numpy.typing import NDArray

from simready.sim.core import constants as C
from simready.sim.core import geometry as geo
from simready.sim.core import planner_kernels
from simready.sim.core.reference_paths import PathTable
from simready.sim.core.scene import Scene
from simready.sim.core.state import SimState

F = NDArray[np.float64]
_T = TypeVar("_T")


class cached_property(Generic[_T]):  # noqa: N801 - a drop-in for functools.cached_property
    """``functools.cached_property`` without its per-access lock (Python < 3.12 takes one on every first read).

    A view is scratch owned by one thread; the value lands in the instance
    ``__dict__``, so later reads never reach this descriptor.
    """

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, cls: Any = None) -> cached_property[_T]: ...
    @overload
    def __get__(self, obj: object, cls: Any = None) -> _T: ...
    def __get__(self, obj: object | None, cls: Any = None) -> _T | cached_property[_T]:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


_OCCLUDERS: weakref.WeakKeyDictionary[Scene, NDArray[np.bool_]] = weakref.WeakKeyDictionary()


def occluder_mask(scene: Scene) -> NDArray[np.bool_]:
    """:attr:`TickView.occluders`, built once per scene (a function of its actors and manifest; read-only)."""
    hit = _OCCLUDERS.get(scene)
    if hit is None:
        a = scene.actors
        occ_ids = {o.actor_id for o in scene.manifest.occluders if o.actor_id is not None}
        hit = a.is_vehicle | np.array([i in occ_ids for i in a.ids], dtype=bool)
        hit.flags.writeable = False
        _OCCLUDERS[scene] = hit
    return hit


#: A background vehicle treats a vehicle this far (m) into a lane that diverges from its own path (the other
#: successor of a lane it drives) as ahead on its path: the turning car's tail still overlaps the straight lane.
#: Here rather than in :mod:`.constants`, whose every value is hashed into each trace's header: only traces with
#: background traffic read it (a later engine version folds it in there).
DIVERGE_WINDOW_M = 20.0


def sibling_u0(table: PathTable, scene: Scene) -> F:
    """(N, L): u at which each lane that diverges from an actor's path starts on it (the end of the lane both
    leave), NaN elsewhere; built once per path table."""
    hit = table._memo.get("sibling_u0")
    if hit is None:
        graph = scene.template.lane_graph
        index = {lane: k for k, lane in enumerate(scene.lane_ids)}
        hit = np.full(table.lane_u0.shape, np.nan)
        for i, p in enumerate(table.paths):
            for k in range(1, len(p.lanes)):
                for other in graph.successors.get(p.lanes[k - 1], ()):
                    col = index.get(other)
                    if col is not None and other != p.lanes[k] and np.isnan(table.lane_u0[i, col]):
                        hit[i, col] = p.lane_u0[k]
        table._memo["sibling_u0"] = hit
    return hit


def leader_u0(table: PathTable, scene: Scene) -> F:
    """The ``lane_u0`` the planner measures a leader's gap with: background actors' rows also hold where the
    lanes diverging from their paths start (:func:`sibling_u0`); the table's own when there is no background."""
    hit = table._memo.get("leader_u0")
    if hit is None:
        aware = scene.actors.background
        if not aware.any():
            hit = table.lane_u0
        else:
            own = table.lane_u0
            hit = np.where(np.isnan(own) & aware[:, None], sibling_u0(table, scene), own)
        table._memo["leader_u0"] = hit
    return hit


class TickView:
    """Derived, cached quantities of one state (scratch; see the module docstring)."""

    def __init__(self, scene: Scene, state: SimState, table: PathTable) -> None:
        self.scene = scene
        self.state = state
        self.table = table
        self.tick = state.tick
        self.xy: F = state.bodies.pos[:, :2]
        self.vel: F = state.bodies.vel[:, :2]
        self.yaw: F = state.coords.yaw
        self.u: F = state.coords.u
        self.v: F = state.coords.v
        self.present = state.bodies.present

    @property
    def t_s(self) -> float:
        return (self.tick - self.scene.warmup_ticks) * self.scene.dt

    @cached_property
    def lanes(self) -> tuple[NDArray[np.int64], F]:
        """Current lane index (−1 off the lane graph) and s on it, per actor."""
        return self.table.lanes_at(self.u)

    @cached_property
    def u_py(self) -> list[float]:
        values: list[float] = self.u.tolist()
        return values

    @cached_property
    def present_py(self) -> list[bool]:
        values: list[bool] = self.present.tolist()
        return values

    @cached_property
    def _lane_gaps_and_leaders(self) -> tuple[F, NDArray[np.int64]]:
        """:attr:`lane_gaps` and :attr:`leaders` from one compiled pass (:func:`.planner_kernels.lane_gaps`)."""
        lane, s = self.lanes
        a = self.scene.actors
        n = len(lane)
        gaps, leaders = np.empty((n, n)), np.empty(n, dtype=np.int64)
        aware = a.background if len(a.background) == n else np.zeros(n, dtype=bool)
        planner_kernels.lane_gaps(lane, s, self.u, self.present, a.lane_bound, self.table.lane_u0, a.hl, gaps, leaders,
                                  sibling_u0(self.table, self.scene) if aware.any() else self.table.lane_u0, aware,
                                  DIVERGE_WINDOW_M)
        return gaps, leaders

    @property
    def lane_gaps(self) -> F:
        """(N, N): bumper-to-bumper gap (m) from follower i to j ahead on i's path; inf where j is not ahead."""
        return self._lane_gaps_and_leaders[0]

    @property
    def leaders(self) -> NDArray[np.int64]:
        """(N,): each actor's nearest actor ahead on its path (the row minimum of :attr:`lane_gaps`; −1: none)."""
        return self._lane_gaps_and_leaders[1]

    @property
    def occluders(self) -> NDArray[np.bool_]:
        """(N,): actors whose footprints block sight when present: vehicles and the manifest's actor occluders."""
        return occluder_mask(self.scene)

    def visible(self, observers: NDArray[np.int64], targets: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether each target is visible to its observer (pairs given as index arrays)."""
        a = self.scene.actors
        e0, e1 = self.scene.static_edges
        out = np.empty(len(observers), dtype=bool)
        planner_kernels.sight_lines(self.xy, self.yaw, a.hl, a.hw, self.present, self.occluders, e0, e1,
                                    np.asarray(observers, dtype=np.int64), np.asarray(targets, dtype=np.int64),
                                    C.EYE_FORWARD_FRACTION, out)
        return out

    def visible_pair(self, observer: int, target: int) -> bool:
        return bool(self.visible(np.array([observer]), np.array([target]))[0])

    def ttc(self, i: int, j: int, horizon_s: float = C.TTC_HORIZON_S) -> float:
        """Constant-velocity time until i's and j's footprints overlap (inf if not within the horizon)."""
        a = self.scene.actors
        if not (self.present[i] and self.present[j]):
            return math.inf
        return float(geo.swept_ttc(self.xy[i], self.vel[i], self.yaw[i], a.hl[i], a.hw[i],
                                   self.xy[j], self.vel[j], self.yaw[j], a.hl[j], a.hw[j], horizon_s))

    def centre_distance(self, i: int, j: int) -> float:
        return float(math.hypot(*(self.xy[j] - self.xy[i])))
