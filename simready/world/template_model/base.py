"""The template models' shared base (frozen, no extra fields; optional map facts left out of the dump while unset),
the field types with their bounds, and the schema version."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from simready.common.identifiers import Identifier
from simready.world.identity import ASSET_ID_RE


#: The template schema this code reads; bump on any incompatible change.
TEMPLATE_SCHEMA_VERSION = 1
#: Regions smaller than this are degenerate (m²).
MIN_REGION_AREA_M2 = 0.01

_NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$"

# Stated bounds: every number a template holds is finite and physically
# plausible, so that nothing downstream (rasters, ray casts, expansion)
# allocates without limit on a typo such as 1e308.
#: Largest magnitude of any real field (its own unit).
MAX_REAL = 1e6
#: Largest |coordinate| (m): a template covers at most 200 km × 200 km.
MAX_COORDINATE_M = 1e5
#: Widest lane (m).
MAX_LANE_WIDTH_M = 100.0
#: Largest camera image side (px).
MAX_IMAGE_PX = 16384
#: Largest integer field (beams, azimuth steps, versions).
MAX_INT = 1_000_000
#: Most copies one ``repeat`` may make, and most instances after expansion.
MAX_REPEAT_COUNT = 10_000
MAX_INSTANCES = 100_000

# --- field types ----------------------------------------------------------
# Strict numbers: a quoted "3.5" or a boolean is a type error, not a number;
# an integer is accepted where a float is expected (YAML writes 3 for 3.0).
Real = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_REAL, le=MAX_REAL)]
PositiveReal = Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0.0, le=MAX_REAL)]
NonNegReal = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0.0, le=MAX_REAL)]
PositiveInt = Annotated[int, Field(strict=True, gt=0, le=MAX_INT)]
Coordinate = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_COORDINATE_M, le=MAX_COORDINATE_M)]
ImageSide = Annotated[int, Field(strict=True, gt=0, le=MAX_IMAGE_PX)]
Text = Annotated[str, Field(strict=True)]
Name = Annotated[str, Field(strict=True, pattern=_NAME_PATTERN)]
#: A name that becomes a path component (template id, sensor name): see :mod:`simready.common.identifiers`.
PathName = Identifier
AssetRef = Annotated[str, Field(strict=True, pattern=ASSET_ID_RE.pattern)]
Point2 = tuple[Coordinate, Coordinate]
Vec3 = tuple[Coordinate, Coordinate, Coordinate]

RegionType = Literal["drivable", "parking", "sidewalk", "crosswalk", "building", "median", "intersection"]
WALKABLE_REGION_TYPES = ("sidewalk", "crosswalk")


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OptionalFacts(Model):
    """A model whose optional map facts (``_OMIT``, added for imported maps) are left out of its dump while unset.

    Why: the canonical form (and so the template hash) of every template
    written before these fields existed must not change; an unset fact is
    absent, not ``null``.
    """

    _OMIT: tuple[str, ...] = ()

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in self._OMIT:
                if key in data and data[key] in (None, (), []):
                    del data[key]
        return data


#: Heights (m) a map gives per vertex (z up); bounded like any real.
Height = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_REAL, le=MAX_REAL)]


def heights_match(z: tuple[float, ...] | None, points: tuple[Any, ...], what: str) -> None:
    if z is not None and len(z) != len(points):
        raise ValueError(f"z holds {len(z)} heights for {len(points)} {what} points")


def unique_values(values: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    dupes = sorted({str(v) for v in values if values.count(v) > 1})
    if dupes:
        raise ValueError(f"duplicate {what}: {', '.join(dupes)}")
    return values
