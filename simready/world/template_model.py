"""World template data model (SPEC §5): typed, validated, immutable.

A template B holds what stays structurally true about a place — regions,
lanes, the walkable graph, relations, legal slots, static instances of
certified assets, the ego and its sensor rig — and nothing that a scenario
samples. Everything is in the world frame: metres, x east, y north, z up,
yaw counter-clockwise from +x. Angles are degrees only where a human writes
them (fields named ``*_deg``); code converts at the boundary.

These models check what one field or one object can check on its own
(types, ranges, polygon validity, sensor timing). Cross-references and
geometry between objects are checked by :mod:`simready.world.template_checks`;
loading and hashing live in :mod:`simready.world.template`.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from shapely import is_valid_reason
from shapely.geometry import LineString, Polygon
from shapely.ops import unary_union

from simready.common.identifiers import Identifier
from simready.world.frames import Mat4, make_transform, mount_transform, rot_z, rotation_from_rpy
from simready.world.identity import ASSET_ID_RE, instance_id
from simready.world.lanes import MIN_SEGMENT_LENGTH_M, LaneGraph
from simready.world.walkable import WalkGraph

__all__ = [
    "ActorType",
    "Adjacent",
    "Affordance",
    "AssetRef",
    "CameraSettings",
    "Connects",
    "Controls",
    "Coordinates",
    "Ego",
    "EgoStart",
    "EnvironmentControls",
    "Illumination",
    "Instance",
    "Lane",
    "LidarSettings",
    "MIN_REGION_AREA_M2",
    "Mount",
    "Name",
    "NonNegReal",
    "ParkedOn",
    "ParkingAffordance",
    "PedestrianCrossing",
    "PedestrianSpawn",
    "Point2",
    "Pose",
    "PositiveInt",
    "PositiveReal",
    "Provenance",
    "RadarSettings",
    "Real",
    "Region",
    "RegionType",
    "Relation",
    "Repeat",
    "Sensor",
    "SensorKind",
    "SensorRig",
    "PedestrianSignal",
    "Signal",
    "SignalPhase",
    "StopLine",
    "TEMPLATE_SCHEMA_VERSION",
    "Text",
    "Vec3",
    "VehicleSpawn",
    "WALKABLE_REGION_TYPES",
    "WORLD_CONVENTION",
    "Walkable",
    "Weather",
    "WorldTemplate",
    "crossing_s_window",
    "parking_slots",
]

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


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _OptionalFacts(_Model):
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


def _heights_match(z: tuple[float, ...] | None, points: tuple[Any, ...], what: str) -> None:
    if z is not None and len(z) != len(points):
        raise ValueError(f"z holds {len(z)} heights for {len(points)} {what} points")


def _unique(values: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    dupes = sorted({str(v) for v in values if values.count(v) > 1})
    if dupes:
        raise ValueError(f"duplicate {what}: {', '.join(dupes)}")
    return values


# --- coordinates, regions, lanes, walkable --------------------------------


#: The one coordinate convention a template may declare, and why each part is required.
WORLD_CONVENTION = {
    "unit": ("meter", "templates are authored in SI metres"),
    "handedness": ("right", "the world frame is right-handed"),
    "up": ("z", "the world frame is z-up; convert at authoring"),
}


class Coordinates(_Model):
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


class Region(_OptionalFacts):
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
        _heights_match(self.z, self.polygon, "polygon")
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


class Lane(_OptionalFacts):
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
        _heights_match(self.z, self.polyline, "polyline")
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


class Marking(_OptionalFacts):
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
        _heights_match(self.z, self.polyline, "polyline")
        return self


class Walkable(_Model):
    """Undirected walkable graph: ``nodes {id: [x, y]}``, ``edges [[a, b], ...]``."""

    nodes: dict[Name, Point2]
    edges: tuple[tuple[Name, Name], ...] = ()


# --- relations -------------------------------------------------------------


class Adjacent(_Model):
    """Regions ``a`` and ``b`` touch (verified: polygons within ``ADJACENT_TOLERANCE_M``)."""

    type: Literal["adjacent"]
    a: Name
    b: Name


class Connects(_Model):
    """Crosswalk region ``route`` joins sidewalk regions ``a`` and ``b`` (verified: touches both)."""

    type: Literal["connects"]
    route: Name
    a: Name
    b: Name


class ParkedOn(_Model):
    """Static instance ``instance`` stands in parking region ``region`` (verified: centre inside)."""

    type: Literal["parked_on"]
    instance: Name
    region: Name


class Controls(_Model):
    """Traffic-light instance ``instance`` shows the state of signal ``signal``."""

    type: Literal["controls"]
    instance: Name
    signal: Name


Relation = Annotated[Union[Adjacent, Connects, ParkedOn, Controls], Field(discriminator="type")]


# --- affordances -----------------------------------------------------------


class PedestrianSpawn(_Model):
    """Pedestrians may be spawned anywhere in ``region`` (a sidewalk or crosswalk)."""

    id: Name
    type: Literal["pedestrian_spawn"]
    region: Name


class ParkingAffordance(_Model):
    """Legal parking in ``region``, cut into slots of ``slot_length_m`` along its long side."""

    id: Name
    type: Literal["parking"]
    region: Name
    slot_length_m: PositiveReal


class EgoStart(_Model):
    """A legal ego start at arc length ``s_m`` on ``lane``."""

    id: Name
    type: Literal["ego_start"]
    lane: Name
    s_m: NonNegReal


class VehicleSpawn(_Model):
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


class PedestrianCrossing(_Model):
    """A legal crossing: walkable node ``path`` through crosswalk ``region``."""

    id: Name
    type: Literal["pedestrian_crossing"]
    region: Name
    path: tuple[Name, ...] = Field(min_length=2)


Affordance = Annotated[
    Union[PedestrianSpawn, ParkingAffordance, EgoStart, VehicleSpawn, PedestrianCrossing],
    Field(discriminator="type"),
]


# --- instances, ego, sensor rig --------------------------------------------


class Pose(_OptionalFacts):
    """Pose of an instance's body origin: metres, yaw in degrees (authored).

    ``pitch_deg`` / ``roll_deg`` (degrees, intrinsic z-y'-x'': yaw, then pitch
    about the body's y, then roll about its x; ``R = Rz(yaw) Ry(pitch) Rx(roll)``)
    tilt a tile onto a sloped road where a map gives heights (simready.world.street);
    absent (level) everywhere else, and left out of the dump while unset, so a
    level pose hashes as before they existed.
    """

    _OMIT = ("pitch_deg", "roll_deg")

    x: Coordinate
    y: Coordinate
    z: Coordinate = 0.0
    yaw_deg: Real = 0.0
    pitch_deg: Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-89.0, le=89.0)] | None = None
    roll_deg: Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-89.0, le=89.0)] | None = None

    @property
    def yaw_rad(self) -> float:
        return math.radians(self.yaw_deg)

    @property
    def level(self) -> bool:
        """No pitch and no roll (every hand-written instance)."""
        return not self.pitch_deg and not self.roll_deg

    def rotation(self) -> Any:
        """``R_world_body`` (3×3)."""
        if self.level:
            return rot_z(self.yaw_rad)
        return rotation_from_rpy(math.radians(self.roll_deg or 0.0), math.radians(self.pitch_deg or 0.0), self.yaw_rad)

    def matrix(self) -> Mat4:
        """``T_world_body`` (4×4)."""
        return make_transform(self.rotation(), [self.x, self.y, self.z])


class Repeat(_Model):
    """``count`` copies, the k-th shifted by ``k * step_m`` (world dx, dy metres)."""

    count: Annotated[int, Field(strict=True, gt=0, le=MAX_REPEAT_COUNT)]
    step_m: Point2


class Instance(_Model):
    """A static instance of a certified asset; ``repeat`` is expanded at parse time."""

    name: Name
    asset: AssetRef
    pose: Pose
    repeat: Repeat | None = Field(default=None, exclude=True)
    _authored_index: int = PrivateAttr(-1)


class Ego(_Model):
    """The ego vehicle: asset, lane route (successor chain), start and cruise speed."""

    asset: AssetRef
    route: tuple[Name, ...] = Field(min_length=1)
    start_s_m: NonNegReal
    cruise_speed_mps: PositiveReal


SensorKind = Literal["camera", "lidar", "radar"]


class Mount(_Model):
    """``T_body_mount`` from config: translation (m) and roll/pitch/yaw (deg) on the ego body."""

    type: SensorKind
    parent: Literal["ego"]
    translation_m: Vec3
    rpy_deg: Vec3 = (0.0, 0.0, 0.0)

    def matrix(self) -> Mat4:
        return mount_transform(self.translation_m, self.rpy_deg)


def _check_phase(phase_s: float, rate_hz: float) -> None:
    if phase_s >= 1.0 / rate_hz:
        raise ValueError(f"phase_s {phase_s} must be below the period 1/rate = {1.0 / rate_hz:.6g} s")


def camera_readout_s(height_px: int, line_time_s: float, shutter: str) -> float:
    """A camera frame's readout (s): the time from the first row's sample to the last row's.

    Row r (0 at the top) of a rolling shutter is sampled at
    ``t0 + r·line_time_s``, so the readout is ``(height_px − 1)·line_time_s``;
    a global shutter samples every row at ``t0`` (0). The one definition of
    the readout: the scenario view's camera clock (:func:`simready.world.rig_view.sensor_clocks`,
    hashed with the world), the template's readout-fits-the-period check and
    the renderer's schedule (:attr:`simready.sensors_hw.models.CameraModel.readout_s`)
    all call this, so acceptance and rendering count the same frames.
    """
    return (height_px - 1) * line_time_s if shutter == "rolling" else 0.0


class CameraSettings(_Model):
    """Pinhole camera. ``line_time_s`` is the row-to-row readout delay (rolling), 0 for global.

    The readout, first row's sample to last row's, is
    (height_px − 1)·line_time_s (:func:`camera_readout_s`);
    a rolling shutter needs line_time_s > 0 and a readout within one period.
    """

    type: Literal["camera"]
    mount: Name
    width_px: ImageSide
    height_px: ImageSide
    hfov_deg: Annotated[float, Field(strict=True, gt=0.0, lt=180.0)]
    near_m: PositiveReal
    far_m: PositiveReal
    rate_hz: PositiveReal
    phase_s: NonNegReal
    shutter: Literal["rolling", "global"]
    line_time_s: NonNegReal
    distortion_k1: Real

    @model_validator(mode="after")
    def _consistent(self) -> CameraSettings:
        if self.near_m >= self.far_m:
            raise ValueError(f"near_m {self.near_m} must be below far_m {self.far_m}")
        _check_phase(self.phase_s, self.rate_hz)
        readout_s = camera_readout_s(self.height_px, self.line_time_s, self.shutter)
        if self.shutter == "global" and self.line_time_s != 0.0:
            raise ValueError("a global shutter reads every row at once: line_time_s must be 0")
        if self.shutter == "rolling" and not (self.line_time_s > 0.0 and readout_s <= 1.0 / self.rate_hz):
            raise ValueError(f"rolling readout (height_px - 1)*line_time_s = {readout_s:.6g} s needs line_time_s > 0 "
                             f"and at most 1/rate_hz = {1.0 / self.rate_hz:.6g} s")
        return self


class LidarSettings(_Model):
    """Spinning LiDAR: ``channels`` beams over ``vertical_fov_deg = [lo, hi]``, one turn per 1/rotation_hz."""

    type: Literal["lidar"]
    mount: Name
    channels: PositiveInt
    vertical_fov_deg: tuple[Real, Real]
    rotation_hz: PositiveReal
    azimuth_steps: PositiveInt
    max_range_m: PositiveReal
    phase_s: NonNegReal

    @model_validator(mode="after")
    def _consistent(self) -> LidarSettings:
        lo, hi = self.vertical_fov_deg
        if not -90.0 <= lo < hi <= 90.0:
            raise ValueError(f"vertical_fov_deg must be [lo, hi] with -90 <= lo < hi <= 90, got {[lo, hi]}")
        _check_phase(self.phase_s, self.rotation_hz)
        return self


class RadarSettings(_Model):
    """Radar scan of ``hfov_deg`` × ``vfov_deg`` at ``rate_hz``."""

    type: Literal["radar"]
    mount: Name
    rate_hz: PositiveReal
    phase_s: NonNegReal
    hfov_deg: Annotated[float, Field(strict=True, gt=0.0, le=360.0)]
    vfov_deg: Annotated[float, Field(strict=True, gt=0.0, le=180.0)]
    max_range_m: PositiveReal

    @model_validator(mode="after")
    def _consistent(self) -> RadarSettings:
        _check_phase(self.phase_s, self.rate_hz)
        return self


Sensor = Annotated[Union[CameraSettings, LidarSettings, RadarSettings], Field(discriminator="type")]


class SensorRig(_Model):
    """Mounts (transforms on the ego body) and the sensors that sit on them."""

    mounts: dict[Name, Mount]
    sensors: dict[PathName, Sensor]


# --- signals, environment --------------------------------------------------


class StopLine(_Model):
    lane: Name
    s_m: NonNegReal


class SignalPhase(_Model):
    state: Literal["green", "yellow", "red"]
    duration_s: PositiveReal


class Signal(_Model):
    """Fixed-time signal. At time t the program is read at ``(t − offset_s) mod cycle``."""

    id: Name
    controls: tuple[Name, ...] = Field(min_length=1)
    stop_line: StopLine
    program: tuple[SignalPhase, ...] = Field(min_length=1)
    offset_s: NonNegReal = 0.0

    @property
    def cycle_s(self) -> float:
        return sum(p.duration_s for p in self.program)

    def state_at(self, t_s: float) -> str:
        """Signal state at simulation time ``t_s`` (seconds)."""
        u = (t_s - self.offset_s) % self.cycle_s
        for phase in self.program:
            if u < phase.duration_s:
                return phase.state
            u -= phase.duration_s
        return self.program[-1].state


class PedestrianSignal(_Model):
    """Fixed-time pedestrian light over ``crosswalks`` (crosswalk region ids): pedestrians step off on green.

    Read like :class:`Signal` (``(t − offset_s) mod cycle``); imported maps carry them (OpenDRIVE lights of the
    pedestrian type), and background pedestrians take their phase from them where they have one.
    """

    id: Name
    crosswalks: tuple[Name, ...] = Field(min_length=1)
    program: tuple[SignalPhase, ...] = Field(min_length=1)
    offset_s: NonNegReal = 0.0

    @property
    def cycle_s(self) -> float:
        return sum(p.duration_s for p in self.program)

    def state_at(self, t_s: float) -> str:
        """Signal state at simulation time ``t_s`` (seconds)."""
        return Signal.state_at(self, t_s)  # type: ignore[arg-type]


Illumination = Literal["day", "dusk", "night"]
Weather = Literal["dry", "wet", "rain"]
ActorType = Literal["vehicle", "pedestrian", "cyclist"]


class EnvironmentControls(_Model):
    """Environment values a scenario may choose."""

    illumination: tuple[Illumination, ...] = Field(min_length=1)
    weather: tuple[Weather, ...] = Field(min_length=1)

    @field_validator("illumination", "weather")
    @classmethod
    def _no_repeats(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _unique(v, "values")


# --- provenance --------------------------------------------------------------


class Provenance(_Model):
    """Where an imported template came from: the source file's name and sha256, and what the import left out.

    Written by ``simready template import``; a hand-written template has none.
    The source hash is part of the template hash, so editing the source map
    versions the template even where the geometry rounds to the same numbers.
    """

    format: Text
    format_version: Text
    source: Text
    source_sha256: Annotated[str, Field(strict=True, pattern=r"^[0-9a-f]{64}$")]
    importer: Text
    skipped: tuple[Text, ...] = ()
    defaults: tuple[Text, ...] = ()


# --- the template ----------------------------------------------------------


class WorldTemplate(_OptionalFacts):
    """A parsed world template; build with :func:`load_template` or :func:`parse_template`.

    ``instances`` holds the expanded list (``repeat`` resolved to
    ``<name>_<k>``, k from 0); instance identifiers are
    ``<template id>/instance:<name>``.
    """

    id: PathName
    version: PositiveInt
    schema_version: Annotated[int, Field(strict=True)]
    ontology_version: Text
    description: Text
    coordinates: Coordinates
    regions: tuple[Region, ...] = Field(min_length=1)
    lanes: tuple[Lane, ...] = Field(min_length=1)
    walkable: Walkable
    relations: tuple[Relation, ...] = ()
    affordances: tuple[Affordance, ...] = ()
    instances: tuple[Instance, ...] = Field(default=(), max_length=MAX_INSTANCES)
    ego: Ego
    sensor_rig: SensorRig
    environment_controls: EnvironmentControls
    actor_types: tuple[ActorType, ...] = Field(min_length=1)
    behaviors_allowed: tuple[Name, ...] = Field(min_length=1)
    signals: tuple[Signal, ...] = ()
    provenance: Provenance | None = None
    markings: tuple[Marking, ...] = ()
    pedestrian_signals: tuple[PedestrianSignal, ...] = ()

    _OMIT = ("markings", "pedestrian_signals")
    _source: str = PrivateAttr("<memory>")
    #: The file's ``street:`` section where its street is derived at load time (simready.world.street), else None:
    #: ``instances`` and ``regions`` then hold the derived street too; the hash covers it like any instance.
    _street: dict[str, Any] | None = PrivateAttr(None)
    _yaml_root: Any = PrivateAttr(None)

    @field_validator("schema_version")
    @classmethod
    def _known_schema(cls, v: int) -> int:
        if v != TEMPLATE_SCHEMA_VERSION:
            raise ValueError(f"schema_version {v} not supported (this code reads {TEMPLATE_SCHEMA_VERSION})")
        return v

    @field_validator("instances")
    @classmethod
    def _expand_repeats(cls, v: tuple[Instance, ...]) -> tuple[Instance, ...]:
        expanded = sum(inst.repeat.count if inst.repeat else 1 for inst in v)
        if expanded > MAX_INSTANCES:
            raise ValueError(f"{expanded} instances after expanding repeats, more than the limit of {MAX_INSTANCES}")
        out = []
        for index, inst in enumerate(v):
            for copy in _expanded(inst):
                copy._authored_index = index
                out.append(copy)
        return tuple(out)

    @field_validator("actor_types", "behaviors_allowed")
    @classmethod
    def _no_repeats(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _unique(v, "values")

    @property
    def source(self) -> str:
        return self._source

    @cached_property
    def lane_graph(self) -> LaneGraph:
        return LaneGraph.build(self.lanes)

    @cached_property
    def walk_graph(self) -> WalkGraph:
        return WalkGraph.build(self.walkable.nodes, self.walkable.edges)

    @cached_property
    def region_by_id(self) -> dict[str, Region]:
        return {r.id: r for r in self.regions}

    @cached_property
    def instance_by_name(self) -> dict[str, Instance]:
        return {i.name: i for i in self.instances}

    @cached_property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(xmin, ymin, xmax, ymax)`` of all regions: the map boundary, metres."""
        return tuple(unary_union([r.shape for r in self.regions]).bounds)

    def instance_id(self, name: str) -> str:
        return instance_id(self.id, name)

    def affordance(self, affordance_id: str) -> Affordance:
        for a in self.affordances:
            if a.id == affordance_id:
                return a
        raise KeyError(f"{self.id}: no affordance {affordance_id!r}")

    def lane_warnings(self) -> list[str]:
        """Lanes that dead-end inside the map (legal, but usually an authoring slip)."""
        return [f"lane {lane!r} has no successor and does not end at the map boundary"
                for lane in self.lane_graph.dead_ends(self.bounds)]


def _expanded(inst: Instance) -> list[Instance]:
    if inst.repeat is None:
        return [inst]
    dx, dy = inst.repeat.step_m
    return [
        Instance(
            name=f"{inst.name}_{k}",
            asset=inst.asset,
            pose=inst.pose.model_copy(update={"x": inst.pose.x + k * dx, "y": inst.pose.y + k * dy}),
        )
        for k in range(inst.repeat.count)
    ]


# --- derived places --------------------------------------------------------


def parking_slots(template: WorldTemplate, affordance_id: str) -> list[tuple[float, float, float]]:
    """Slot centres ``(x, y, yaw_rad)`` of a parking affordance, in traffic order.

    Slots of ``slot_length_m`` are laid along the long axis of the region's
    minimum rotated rectangle, centred across it. Their heading is that of
    the nearest driving lane (parked cars face the traffic flow of their
    side), derived rather than authored.
    """
    a = template.affordance(affordance_id)
    if not isinstance(a, ParkingAffordance):
        raise ValueError(f"{affordance_id!r} is a {a.type} affordance, not parking")
    c = list(template.region_by_id[a.region].shape.minimum_rotated_rectangle.exterior.coords)[:4]
    if math.dist(c[0], c[1]) >= math.dist(c[1], c[2]):
        start, end = _midpoint(c[3], c[0]), _midpoint(c[1], c[2])
    else:
        start, end = _midpoint(c[0], c[1]), _midpoint(c[2], c[3])
    length = math.dist(start, end)
    axis_yaw = math.atan2(end[1] - start[1], end[0] - start[0])
    mid = _midpoint(start, end)
    yaw = _traffic_heading(template, mid[0], mid[1], axis_yaw)
    if math.cos(yaw - axis_yaw) < 0.0:
        start, axis_yaw = end, axis_yaw + math.pi
    ux, uy = math.cos(axis_yaw), math.sin(axis_yaw)
    count = int(length / a.slot_length_m + 1e-9)
    margin = 0.5 * (length - count * a.slot_length_m)
    along = [margin + (k + 0.5) * a.slot_length_m for k in range(count)]
    return [(start[0] + d * ux, start[1] + d * uy, yaw) for d in along]


def _midpoint(p: tuple[float, ...], q: tuple[float, ...]) -> tuple[float, float]:
    return 0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1])


def _traffic_heading(template: WorldTemplate, x: float, y: float, fallback_yaw: float) -> float:
    """Heading (rad) of the driving lane nearest to (x, y); ``fallback_yaw`` when there is none."""
    if not any(lane.kind == "driving" for lane in template.lanes):
        return fallback_yaw
    lane, s, _ = template.lane_graph.nearest(x, y, kinds=("driving",))
    return template.lane_graph.pose_at(lane, s)[2]


def crossing_s_window(template: WorldTemplate, lane_id: str, region_id: str) -> tuple[float, float] | None:
    """Where lane ``lane_id`` runs through region ``region_id`` (e.g. a crosswalk), as ``(s_in, s_out)`` metres."""
    return template.lane_graph.s_window(lane_id, template.region_by_id[region_id].shape)
