"""The manifest's building blocks: plausibility bounds, value types, the strict base model, planar geometry.

Frames and units (SPEC §2): world frame x east, y north, z up; metres,
seconds, radians; yaw counter-clockwise about +z from +x, in [-π, π]. Degrees
appear only in :class:`~simready.scenario.manifest.environment.Environment`
(sun angles, human-facing, ``*_deg``).

Floats are rounded to :data:`simready.common.hashing.FLOAT_DECIMALS` decimals as
they are validated (:data:`Real`), so a manifest equals its own canonical
serialization. A cross-field problem is raised as :func:`fail`, whose field
path is data, so that the loader can name the whole path.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from annotated_types import Ge, Gt, Le, Len
from pydantic import BaseModel, BeforeValidator, ConfigDict, StringConstraints
from pydantic_core import PydanticCustomError

from simready.common.hashing import FLOAT_DECIMALS
from simready.scenario.streams import STREAM_NAME_PATTERN

# Plausibility bounds: they catch unit slips (km/h entered as m/s, mm as m)
# and keep every derived quantity finite.
MAX_COORD_M = 1.0e6
MAX_DIM_M = 50.0
MAX_SPEED_MPS = 100.0
MAX_CLIP_S = 3600.0
MAX_WARMUP_S = 600.0
MIN_DT_S = 1.0e-4
MAX_DT_S = 1.0
TICK_TOLERANCE = 1.0e-9
YAW_LIMIT_RAD = round(math.pi, FLOAT_DECIMALS)  # π rounded up, so a rounded π is in range
MAX_SEED = 2**63 - 1
# Civil-twilight boundaries used to check illumination against sun elevation.
DAY_MIN_SUN_ELEVATION_DEG = 6.0
NIGHT_MAX_SUN_ELEVATION_DEG = -6.0

CROSS_FIELD_ERROR = "manifest_cross_field"


def _round_float(value: Any) -> Any:
    if type(value) is float and math.isfinite(value):
        return round(value, FLOAT_DECIMALS)
    return value


# --- value types ---------------------------------------------------------

Real = Annotated[float, BeforeValidator(_round_float)]
NonNeg = Annotated[Real, Ge(0)]
Pos = Annotated[Real, Gt(0)]
Fraction = Annotated[Real, Ge(0), Le(1)]
Coord = Annotated[Real, Ge(-MAX_COORD_M), Le(MAX_COORD_M)]
Length = Annotated[Real, Gt(0), Le(MAX_DIM_M)]
Speed = Annotated[Real, Ge(0), Le(MAX_SPEED_MPS)]
Yaw = Annotated[Real, Ge(-YAW_LIMIT_RAD), Le(YAW_LIMIT_RAD)]
Seed = Annotated[int, Ge(0), Le(MAX_SEED)]

# A manifest-local identifier (actor, interaction, signal program, occluder,
# sample). No "/" so that "<sample>/actor:<id>" stays unambiguous (SPEC §3).
Id = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.:\-]{0,127}$")]
# A name the world template defines (lane, walkable node, conflict point).
Ref = Annotated[str, StringConstraints(pattern=r"^\S{1,256}$")]
AssetId = Annotated[str, StringConstraints(pattern=r"^asset:[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+$")]
FamilyName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\-]+$")]
ContentHash = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
StreamName = Annotated[str, StringConstraints(pattern=STREAM_NAME_PATTERN)]
ActorTag = Annotated[str, StringConstraints(pattern=r"^\S{1,64}$")]
ParamName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.:/\-]{0,127}$")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=2000)]

Scalar = Union[
    bool, Annotated[int, Ge(-MAX_SEED), Le(MAX_SEED)], Real, Annotated[str, StringConstraints(max_length=512)]
]
ParamValue = Union[Scalar, Annotated[list[Scalar], Len(0, 1024)]]

ActorKind = Literal["vehicle", "pedestrian", "cyclist"]
ActorRole = Literal["ego", "agent", "parked"]
Op = Literal["lt", "gt"]
SignalState = Literal["red", "amber", "green", "red_amber", "off"]
Split = Literal["train", "val", "test"]


def fail(path: str, reason: str) -> PydanticCustomError:
    """A cross-field error whose field path (relative to the model) is data, not text."""
    return PydanticCustomError(CROSS_FIELD_ERROR, "{path}: {reason}", {"path": path, "reason": reason})


class Model(BaseModel):
    # strict: a resolved manifest is never coerced ("5" is not 5, 1 is not true).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False, populate_by_name=True)


# --- geometry --------------------------------------------------------------


class Point(Model):
    """A point on the ground plane, world frame, metres."""

    x: Coord
    y: Coord


class Pose(Model):
    """Planar pose, world frame: position (m) of the footprint centre, yaw (rad) CCW from +x.

    Height follows the ground; roll and pitch are the physics' business.
    """

    x: Coord
    y: Coord
    yaw: Yaw


class Dims(Model):
    """Body-frame bounding box, metres: ``l`` along x (forward), ``w`` along y, ``h`` along z."""

    l: Length  # noqa: E741 - SPEC's name
    w: Length
    h: Length
