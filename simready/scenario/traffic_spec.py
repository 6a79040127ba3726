"""What background traffic a suite asks for (SPEC §20): the light half of :mod:`simready.scenario.traffic`.

Apart from the spawner so that the suite's schema (read by the Dagster
definitions) does not import the programs and the ladder.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat

#: Global caps on each density (a denser request is refused by the schema); what a given map can hold is less
#: (:func:`simready.scenario.traffic.check_capacity`: the spawner's spacing over the map's lanes and sidewalks).
#: Most vehicles a lane km can hold at standstill (a car and a jam gap).
MAX_VEHICLES_PER_LANE_KM = 120.0
#: Most pedestrians 100 m of sidewalk hold with the spawner's spacing (1.5 m between them; a denser request is refused).
MAX_PEDESTRIANS_PER_SIDEWALK_100M = 60.0
#: Most cyclists a km of kerbside lane holds with the spawner's spacing (a bicycle and 4 m; a denser one is refused).
MAX_CYCLISTS_PER_KM = 150.0
#: The manifest's record (``realized``) of the despawn range and of recycling (:mod:`simready.sim.behavior.respawn`).
DESPAWN_RANGE_KEY = "traffic.despawn_range_m"
RECYCLE_KEY = "traffic.recycle"
#: A despawn range below this would remove vehicles a sensor sees and the scenario's actors react to (m).
MIN_DESPAWN_RANGE_M = 30.0
#: ... and above this it is no range (m).
MAX_DESPAWN_RANGE_M = 2000.0


class TrafficSpec(BaseModel):
    """What background traffic a suite asks for on one template × intent (each a coverage dimension in SPEC §20).

    ``vehicles_per_lane_km``: background vehicles per km of driving lane
    outside junctions; ``pedestrians_per_sidewalk_100m``: background
    pedestrians per 100 m of the walkable graph's sidewalk edges;
    ``cyclists_per_km``: background cyclists per km of kerbside driving lane
    (the rightmost of its direction) outside junctions
    (:mod:`simready.scenario.traffic_walkers`).

    ``despawn_range_m`` (off when unset; 150 m is a sensor rig's reach): a
    background vehicle farther than this from the ego and every other
    scenario actor despawns (:mod:`simready.sim.behavior.respawn`); ``recycle``: once
    the reserves are spent, reserves that left the street (the map or the
    range) re-enter at their entries. Both are recorded in the manifest's
    ``realized`` (``traffic.despawn_range_m``, ``traffic.recycle``) only when set.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    vehicles_per_lane_km: Annotated[NonNegativeFloat, Field(le=MAX_VEHICLES_PER_LANE_KM)] = 0.0
    pedestrians_per_sidewalk_100m: Annotated[NonNegativeFloat, Field(le=MAX_PEDESTRIANS_PER_SIDEWALK_100M)] = 0.0
    cyclists_per_km: Annotated[NonNegativeFloat, Field(le=MAX_CYCLISTS_PER_KM)] = 0.0
    despawn_range_m: Annotated[PositiveFloat, Field(ge=MIN_DESPAWN_RANGE_M, le=MAX_DESPAWN_RANGE_M)] | None = None
    recycle: bool = False

    @property
    def empty(self) -> bool:
        return self.vehicles_per_lane_km == 0.0 and self.pedestrians_per_sidewalk_100m == 0.0 and self.cyclists_per_km == 0.0


#: The densities of a :class:`TrafficSpec`, each a coverage dimension (SPEC §20, :mod:`simready.scenario.coverage`).
DENSITY_FIELDS = ("vehicles_per_lane_km", "pedestrians_per_sidewalk_100m", "cyclists_per_km")


def densities_of(spec: TrafficSpec) -> dict[str, float]:
    """The densities a suite asks for, by name (what :meth:`~simready.scenario.coverage.CoverageSpec.with_traffic`
    buckets)."""
    return {k: float(getattr(spec, k)) for k in DENSITY_FIELDS}
