"""The actor table: per-actor constants in sorted actor-id order (dims, limits, car-following parameters, rules,
roles), as read-only arrays and as Python lists for the scalar paths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.scenario.manifest import ScenarioManifest
from simready.sim.core import constants as C

F = NDArray[np.float64]
B = NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class ActorTable:
    """Per-actor constants, sorted by actor id; every array is (N,).

    ``hl``/``hw``/``h``: half-length, half-width, height (m) from the
    manifest dims. ``lane_bound``: follows a lane chain (vehicles and
    cyclists that are not parked). Limits come from
    :data:`~simready.sim.core.constants.CLASS_LIMITS` with the actor's aggression
    applied; ``decel_max`` is further capped by μ·g at run time.
    """

    ids: tuple[str, ...]
    kinds: tuple[str, ...]
    roles: tuple[str, ...]
    asset_ids: tuple[str, ...]
    is_vehicle: B
    is_ped: B
    lane_bound: B
    parked: B
    ego: int | None
    hl: F
    hw: F
    h: F
    accel_max: F
    decel_comfort: F
    decel_max: F
    s0: F
    time_gap: F
    chord: F
    cruise: F
    obey_signals: B
    yield_: B
    avoid: B
    reaction_delay: F
    stop_tendency: F
    #: Background traffic (SPEC §20, tag ``background``): besides its lane chain, it also follows a vehicle that
    #: has just turned off onto a lane diverging from its own (:data:`~simready.sim.core.sight.DIVERGE_WINDOW_M`).
    background: B = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @cached_property
    def index(self) -> dict[str, int]:
        return {a: i for i, a in enumerate(self.ids)}

    @cached_property
    def radius(self) -> F:
        """Bounding-circle radius of each footprint (m)."""
        return np.hypot(self.hl, self.hw)

    @cached_property
    def py(self) -> ActorScalars:
        """The same constants as Python lists (per-tick scalar loops over ~10 actors beat numpy's per-call cost)."""
        return ActorScalars(self)

    def __len__(self) -> int:
        return len(self.ids)


class ActorScalars:
    """Per-actor constants of an :class:`ActorTable` as Python lists (floats, bools), indexed like the table.

    ``idm_root2`` is ``2·√(a_max·b_comfort)`` (m/s²), the IDM's constant
    denominator, computed exactly as the vectorized form does.
    """

    hl: list[float]
    hw: list[float]
    accel_max: list[float]
    decel_comfort: list[float]
    decel_max: list[float]
    s0: list[float]
    time_gap: list[float]
    cruise: list[float]
    is_vehicle: list[bool]
    is_ped: list[bool]
    lane_bound: list[bool]
    parked: list[bool]
    obey_signals: list[bool]
    yield_: list[bool]
    avoid: list[bool]
    idm_root2: list[float]
    peds: list[int]

    def __init__(self, a: ActorTable) -> None:
        self.n = len(a.ids)
        for name in ("hl", "hw", "accel_max", "decel_comfort", "decel_max", "s0", "time_gap", "cruise",
                     "is_vehicle", "is_ped", "lane_bound", "parked", "obey_signals", "yield_", "avoid"):
            setattr(self, name, getattr(a, name).tolist())
        self.idm_root2 = (2.0 * np.sqrt(a.accel_max * a.decel_comfort)).tolist()
        self.peds = np.flatnonzero(a.is_ped).tolist()
        self.lane_bound_count = int(np.count_nonzero(a.lane_bound))
        #: Lane-bound background actors (the ones whose pedestrian corridor may run along their path).
        self.background_lane_bound = len(a.background) != self.n or bool(np.any(a.background & a.lane_bound))


def actor_table(m: ScenarioManifest) -> ActorTable:
    actors = sorted(m.actors, key=lambda a: a.id)

    def arr(fn: Any, dtype: Any = np.float64) -> NDArray[Any]:
        out = np.array([fn(a) for a in actors], dtype=dtype)
        out.setflags(write=False)
        return out

    limits = [C.CLASS_LIMITS[a.kind] for a in actors]
    aggression = np.array([a.behavior.rules.aggression for a in actors])
    ego = next((i for i, a in enumerate(actors) if a.role == "ego"), None)
    cruise = [a.behavior.cruise_speed_mps if a.behavior.cruise_speed_mps is not None else a.initial.speed_mps for a in actors]
    return ActorTable(
        ids=tuple(a.id for a in actors),
        kinds=tuple(a.kind for a in actors),
        roles=tuple(a.role for a in actors),
        asset_ids=tuple(a.asset_id for a in actors),
        is_vehicle=arr(lambda a: a.kind == "vehicle", bool),
        is_ped=arr(lambda a: a.kind == "pedestrian", bool),
        lane_bound=arr(lambda a: a.kind != "pedestrian" and a.role != "parked", bool),
        parked=arr(lambda a: a.role == "parked", bool),
        ego=ego,
        hl=arr(lambda a: a.dims.l / 2),
        hw=arr(lambda a: a.dims.w / 2),
        h=arr(lambda a: a.dims.h),
        accel_max=_own(actors, "accel_max_mps2", np.array([lim.accel_max for lim in limits])),
        decel_comfort=_own(actors, "decel_comfort_mps2",
                           np.array([lim.decel_comfort for lim in limits]) * (1.0 + aggression)),
        decel_max=np.array([lim.decel_max for lim in limits]),
        s0=_own(actors, "s0_m", np.array([lim.s0_m for lim in limits])),
        time_gap=_own(actors, "time_gap_s", np.array([lim.time_gap_s for lim in limits]) * (1.0 - 0.5 * aggression)),
        chord=np.array([min(lim.yaw_chord_m, 0.6 * a.dims.l) for lim, a in zip(limits, actors)]),
        cruise=np.array(cruise, dtype=np.float64),
        obey_signals=arr(lambda a: a.behavior.rules.obey_signals, bool),
        yield_=arr(lambda a: a.behavior.rules.yield_, bool),
        avoid=arr(lambda a: a.behavior.rules.collision_avoidance, bool),
        reaction_delay=arr(lambda a: a.walk.reaction_delay_s if a.walk else math.nan),
        stop_tendency=arr(lambda a: a.walk.stop_tendency if a.walk else math.nan),
        background=arr(lambda a: "background" in a.tags, bool),
    )


def _own(actors: list[Any], name: str, default: NDArray[Any]) -> NDArray[Any]:
    """``default`` with each actor's own car-following parameter ``name`` (``behavior.idm``) where it gives them."""
    if all(a.behavior.idm is None for a in actors):
        return default
    return np.array([float(getattr(a.behavior.idm, name)) if a.behavior.idm is not None else float(d)
                     for a, d in zip(actors, default.tolist())])
