"""The places of a template: its coordinate convention, regions, lanes, painted markings and walkable graph."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator
from shapely import is_valid_reason
from shapely.geometry import LineString, Polygon

from simready.world.lanes import MIN_SEGMENT_LENGTH_M
from simready.world.template_model.base import (MAX_LANE_WIDTH_M, MIN_REGION_AREA_M2, Height, Model, Name,
                                                OptionalFacts, Point2, PositiveReal, RegionType, Text, heights_match)


#: The one coordinate convention a template may declare, and why each part is required.
WORLD_CONVENTION = {
    "unit": ("meter", "templates are authored in SI metres"),
    "handedness": ("right", "the world frame is right-handed"),
    "up": ("z", "the world frame is z-up; convert at authoring"),
}


class Coordinates(Model):
    """Declared convention of every coordinate in the file; only :data:`WORLD_CONVENTION` is accepted."""

    unit: Text
    handedness: Text
    up: Text

    @field_validator("unit", "handedness", "up")
    @classmethod
    def _world_convention(cls, v: str, info: ValidationInfo) -> str:
        expected, why = WORLD_CONVENTION[info.field_name]  # type: ignore[index]  # a field validator has a field
        if v != expected:
            raise ValueError(f"{info.field_name} {v!r} not supported: {why} ({expected!r})")
        return v


class Region(OptionalFacts):
    """A typed ground polygon (x, y in metres); a closing repeat of the first point is dropped.

    ``z``: height of each polygon vertex (m), where the map gives one
    (elevation, superelevation, a raised sidewalk's kerb); absent = flat at 0.
    """

    _OMIT = ("z",)

    id: Name
    type: RegionType
    polygon: tuple[Point2, ...] = Field(min_length=3)
    speed_limit_mps: PositiveReal | None = None
    z: tuple[Height, ...] | None = None

    @model_validator(mode="after")
    def _z_per_vertex(self) -> Region:
        heights_match(self.z, self.polygon, "polygon")
        return self

    @field_validator("polygon")
    @classmethod
    def _valid_polygon(cls, v: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
        if len(v) > 3 and v[0] == v[-1]:
            v = v[:-1]
        shape = Polygon(v)
        if not shape.is_valid:
            raise ValueError(f"invalid polygon: {is_valid_reason(shape)}")
        if shape.area <= MIN_REGION_AREA_M2:
            raise ValueError(f"polygon area {shape.area:.3g} m^2 is below the minimum {MIN_REGION_AREA_M2} m^2")
        return v

    @cached_property
    def shape(self) -> Polygon:
        return Polygon(self.polygon)


class Lane(OptionalFacts):
    """A directed lane: centreline in travel order, width and legal speed.

    Optional map facts (absent in hand-written templates): ``z`` the height
    of each polyline point (m); ``change_left`` / ``change_right`` whether a
    change to the same-direction neighbour on that side (of travel) is
    allowed, from the road mark between them; ``right_of_way`` a stop or
    yield sign governing the lane's end.
    """

    _OMIT = ("z", "change_left", "change_right", "right_of_way")

    id: Name
    region: Name
    polyline: tuple[Point2, ...] = Field(min_length=2)
    width_m: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0.0, le=MAX_LANE_WIDTH_M)]
    speed_limit_mps: PositiveReal
    kind: Literal["driving", "parking", "turn", "biking"]
    z: tuple[Height, ...] | None = None
    change_left: bool | None = None
    change_right: bool | None = None
    right_of_way: Literal["stop", "yield"] | None = None

    @model_validator(mode="after")
    def _z_per_point(self) -> Lane:
        heights_match(self.z, self.polyline, "polyline")
        return self

    @field_validator("polyline")
    @classmethod
    def _simple_polyline(cls, v: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
        for i, (p, q) in enumerate(zip(v, v[1:])):
            if math.dist(p, q) < MIN_SEGMENT_LENGTH_M:
                raise ValueError(f"points {i} and {i + 1} coincide")
        if not LineString(v).is_simple:
            raise ValueError("polyline crosses itself")
        return v


class Marking(OptionalFacts):
    """A painted line from a map's road marks: its polyline (metres), type (``solid``, ``broken``, ``solid solid``,
    ...), colour and width; ``z`` per point where the map has heights. Drawn by the street geometry."""

    _OMIT = ("z",)

    id: Name
    type: Text
    color: Text
    width_m: PositiveReal
    polyline: tuple[Point2, ...] = Field(min_length=2)
    z: tuple[Height, ...] | None = None

    @model_validator(mode="after")
    def _z_per_point(self) -> Marking:
        heights_match(self.z, self.polyline, "polyline")
        return self


class Walkable(Model):
    """Undirected walkable graph: ``nodes {id: [x, y]}``, ``edges [[a, b], ...]``."""

    nodes: dict[Name, Point2]
    edges: tuple[tuple[Name, Name], ...] = ()
