"""Relations between regions (adjacent, connects, parked on, controls) and the affordances: where the ego starts,
where vehicles and pedestrians spawn, where cars park, where pedestrians cross."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, field_validator

from simready.world.template_model.base import Model, Name, NonNegReal, PositiveReal


class Adjacent(Model):
    """Regions ``a`` and ``b`` touch (verified: polygons within ``ADJACENT_TOLERANCE_M``)."""

    type: Literal["adjacent"]
    a: Name
    b: Name


class Connects(Model):
    """Crosswalk region ``route`` joins sidewalk regions ``a`` and ``b`` (verified: touches both)."""

    type: Literal["connects"]
    route: Name
    a: Name
    b: Name


class ParkedOn(Model):
    """Static instance ``instance`` stands in parking region ``region`` (verified: centre inside)."""

    type: Literal["parked_on"]
    instance: Name
    region: Name


class Controls(Model):
    """Traffic-light instance ``instance`` shows the state of signal ``signal``."""

    type: Literal["controls"]
    instance: Name
    signal: Name


Relation = Annotated[Union[Adjacent, Connects, ParkedOn, Controls], Field(discriminator="type")]


# --- affordances -----------------------------------------------------------


class PedestrianSpawn(Model):
    """Pedestrians may be spawned anywhere in ``region`` (a sidewalk or crosswalk)."""

    id: Name
    type: Literal["pedestrian_spawn"]
    region: Name


class ParkingAffordance(Model):
    """Legal parking in ``region``, cut into slots of ``slot_length_m`` along its long side."""

    id: Name
    type: Literal["parking"]
    region: Name
    slot_length_m: PositiveReal


class EgoStart(Model):
    """A legal ego start at arc length ``s_m`` on ``lane``."""

    id: Name
    type: Literal["ego_start"]
    lane: Name
    s_m: NonNegReal


class VehicleSpawn(Model):
    """Vehicles may be spawned on ``lane`` for s in ``s_range_m = [lo, hi]`` metres."""

    id: Name
    type: Literal["vehicle_spawn"]
    lane: Name
    s_range_m: tuple[NonNegReal, NonNegReal]

    @field_validator("s_range_m")
    @classmethod
    def _ordered(cls, v: tuple[float, float]) -> tuple[float, float]:
        if v[0] >= v[1]:
            raise ValueError(f"s_range_m must be [lo, hi] with lo < hi, got {list(v)}")
        return v


class PedestrianCrossing(Model):
    """A legal crossing: walkable node ``path`` through crosswalk ``region``."""

    id: Name
    type: Literal["pedestrian_crossing"]
    region: Name
    path: tuple[Name, ...] = Field(min_length=2)


Affordance = Annotated[
    Union[PedestrianSpawn, ParkingAffordance, EgoStart, VehicleSpawn, PedestrianCrossing],
    Field(discriminator="type"),
]
