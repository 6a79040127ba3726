"""What actors and triggers can observe of one tick's state: lane positions, gaps, sight lines, TTC.

:class:`TickView` is built from a :class:`~simready.sim.state.SimState` at
the start of each tick's plan phase and caches derived quantities, so the
triggers and every controller read one consistent snapshot — no actor reads
a neighbour that has already stepped (SPEC §7 plan-then-apply). It is
scratch, never part of the state.

Sight lines (the ``visible`` condition, the ego noticing a pedestrian, a
pedestrian noticing a vehicle) run in the ground plane from the observer's
eye — :data:`~simready.sim.constants.EYE_FORWARD_FRACTION` of its half
length ahead of its centre — to three points on the target's long axis
(centre, ±0.8 half-lengths). The target is visible when any of the three
lines crosses no occluder edge: template buildings, the manifest's box
occluders, and the footprints of vehicles and of actor occluders (the
observer's and target's own edges excepted).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.sim import constants as C
from simready.sim import geometry as geo
from simready.sim.paths import PathTable
from simready.sim.scene import Scene
from simready.sim.state import SimState

F = NDArray[np.float64]


class cached_property:  # noqa: N801 - a drop-in for functools.cached_property
    """``functools.cached_property`` without its per-access lock (Python < 3.12 takes one on every first read).

    A view is scratch owned by one thread; the value lands in the instance
    ``__dict__``, so later reads never reach this descriptor.
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: Any, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


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
        self._vis: dict[tuple[int, int], bool] = {}

    @property
    def t_s(self) -> float:
        return (self.tick - self.scene.warmup_ticks) * self.scene.dt

    @cached_property
    def lanes(self) -> tuple[NDArray[np.int64], F]:
        """Current lane index (−1 off the lane graph) and s on it, per actor."""
        return self.table.lanes_at(self.u)

    @cached_property
    def lanes_py(self) -> tuple[list[int], list[float]]:
        """:attr:`lanes` as Python lists (for the per-actor scalar loops)."""
        lane, s = self.lanes
        return lane.tolist(), s.tolist()

    @cached_property
    def u_py(self) -> list[float]:
        return self.u.tolist()

    @cached_property
    def v_py(self) -> list[float]:
        return self.v.tolist()

    @cached_property
    def present_py(self) -> list[bool]:
        return self.present.tolist()

    @cached_property
    def xy_py(self) -> list[list[float]]:
        return self.xy.tolist()

    @cached_property
    def yaw_py(self) -> list[float]:
        return self.yaw.tolist()

    @cached_property
    def lane_gaps(self) -> F:
        """(N, N): bumper-to-bumper gap (m) from follower i to j ahead on i's path; inf where j is not ahead."""
        lane, s = self.lanes
        a = self.scene.actors
        on = (lane >= 0) & self.present & a.lane_bound
        big = self.table.lane_u0[:, np.maximum(lane, 0)] + s[None, :]
        ahead = np.isfinite(big) & on[None, :] & on[:, None] & (big > self.u[:, None])
        np.fill_diagonal(ahead, False)
        gap = big - self.u[:, None] - (a.hl[:, None] + a.hl[None, :])
        return np.where(ahead, gap, np.inf)

    @cached_property
    def occluder_edges(self) -> tuple[F, F, NDArray[np.int64]]:
        """Edges (M, 2) × 2 blocking sight, and the actor owning each (−1 static)."""
        a = self.scene.actors
        occ_ids = {o.actor_id for o in self.scene.manifest.occluders if o.actor_id is not None}
        mask = self.present & (a.is_vehicle | np.array([i in occ_ids for i in a.ids], dtype=bool))
        idx = np.flatnonzero(mask)
        e0s, e1s = self.scene.static_edges
        if len(idx) == 0:
            return e0s, e1s, np.full(len(e0s), -1)
        edges = geo.rect_edges(self.xy[idx, 0], self.xy[idx, 1], self.yaw[idx], a.hl[idx], a.hw[idx])
        owners = np.concatenate([np.full(len(e0s), -1), np.repeat(idx, 4)])
        return (np.concatenate([e0s, edges[:, :, 0].reshape(-1, 2)]),
                np.concatenate([e1s, edges[:, :, 1].reshape(-1, 2)]), owners)

    def visible(self, observers: NDArray[np.int64], targets: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether each target is visible to its observer (pairs given as index arrays)."""
        out = np.zeros(len(observers), dtype=bool)
        todo = [k for k, pair in enumerate(zip(observers.tolist(), targets.tolist())) if pair not in self._vis]
        if todo:
            o = observers[todo]
            t = targets[todo]
            a = self.scene.actors
            hu, _ = geo.axes(self.yaw)
            eye = self.xy[o] + hu[o] * (C.EYE_FORWARD_FRACTION * a.hl[o])[:, None]
            offs = np.array([0.0, 0.8, -0.8])
            pts = self.xy[t][:, None, :] + hu[t][:, None, :] * (offs[None, :, None] * a.hl[t][:, None, None])
            e0, e1, owner = self.occluder_edges
            a_pts = np.repeat(eye, 3, axis=0)
            b_pts = pts.reshape(-1, 2)
            if len(e0):
                skip = (owner[None, :] == np.repeat(o, 3)[:, None]) | (owner[None, :] == np.repeat(t, 3)[:, None])
                blocked = geo.segments_blocked(a_pts, b_pts, e0, e1, skip).reshape(-1, 3)
            else:
                blocked = np.zeros((len(o), 3), dtype=bool)
            seen = ~blocked.all(axis=1) & self.present[o] & self.present[t]
            for k, ok in zip(todo, seen.tolist()):
                self._vis[(int(observers[k]), int(targets[k]))] = ok
        for k, pair in enumerate(zip(observers.tolist(), targets.tolist())):
            out[k] = self._vis[pair]
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
