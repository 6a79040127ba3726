"""World-side state of a manifest: fixed-time signal programs, declared occluders, illumination and weather."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Ge, Le, Len
from pydantic import model_validator

from simready.scenario.manifest.base import (
    DAY_MIN_SUN_ELEVATION_DEG,
    MAX_CLIP_S,
    NIGHT_MAX_SUN_ELEVATION_DEG,
    Dims,
    Fraction,
    Id,
    Model,
    NonNeg,
    Pos,
    Pose,
    Real,
    Ref,
    SignalState,
    fail,
)


class Phase(Model):
    state: SignalState
    duration_s: Annotated[Pos, Le(MAX_CLIP_S)]


class SignalProgram(Model):
    """A fixed-time signal: ``phases`` cycle from scenario time ``-offset_s``, controlling ``controls`` lanes."""

    id: Id
    controls: Annotated[list[Ref], Len(1, None)]
    phases: Annotated[list[Phase], Len(1, None)]
    offset_s: Annotated[NonNeg, Le(MAX_CLIP_S)]

    @property
    def cycle_s(self) -> float:
        return sum(p.duration_s for p in self.phases)


class Occluder(Model):
    """Something declared to hide part of the scene: a sampled actor, or a box at ``pose`` with ``dims``."""

    id: Id
    kind: Literal["actor", "vehicle", "building", "vegetation", "structure"]
    actor_id: Id | None = None
    pose: Pose | None = None
    dims: Dims | None = None

    @model_validator(mode="after")
    def _check_form(self) -> Occluder:
        if self.kind == "actor":
            if self.actor_id is None:
                raise fail("actor_id", "an actor occluder names its actor")
            if self.pose is not None or self.dims is not None:
                raise fail("pose", "an actor occluder takes its pose and dims from the actor")
        else:
            if self.actor_id is not None:
                raise fail("actor_id", f"a {self.kind} occluder is a box; use kind actor to reference an actor")
            if self.pose is None or self.dims is None:
                raise fail("pose" if self.pose is None else "dims", f"a {self.kind} occluder needs pose and dims")
        return self


class Environment(Model):
    """Illumination and weather at t = 0.

    Sun angles in degrees (human-facing): elevation above the horizon,
    azimuth clockwise from north. ``headlights``: vehicles drive with
    headlights on. ``wetness``, ``road_reflectance`` in [0, 1];
    ``road_friction`` is the tyre-road coefficient; rain rate in mm/h.
    """

    illumination: Literal["day", "dusk", "night"]
    sun_elevation_deg: Annotated[Real, Ge(-90), Le(90)]
    sun_azimuth_deg: Annotated[Real, Ge(0), Le(360)]
    headlights: bool
    weather: Literal["dry", "wet", "rain"]
    wetness: Fraction
    road_friction: Annotated[Real, Ge(0.05), Le(2.0)]
    road_reflectance: Fraction
    rain_rate_mmph: Annotated[NonNeg, Le(500)]

    @model_validator(mode="after")
    def _check_consistency(self) -> Environment:
        el = self.sun_elevation_deg
        expected = "day" if el >= DAY_MIN_SUN_ELEVATION_DEG else "night" if el < NIGHT_MAX_SUN_ELEVATION_DEG else "dusk"
        if self.illumination != expected:
            raise fail("illumination", f"sun elevation {el} deg is {expected}, not {self.illumination}")
        raining = self.rain_rate_mmph > 0
        if self.weather == "rain" and not (raining and self.wetness > 0):
            raise fail("rain_rate_mmph", "rain needs rain_rate_mmph > 0 and wetness > 0")
        if self.weather != "rain" and raining:
            raise fail("rain_rate_mmph", f"weather {self.weather} has no rain")
        if self.weather == "dry" and self.wetness != 0:
            raise fail("wetness", "a dry road has wetness 0")
        if self.weather == "wet" and self.wetness == 0:
            raise fail("wetness", "a wet road has wetness > 0")
        return self
