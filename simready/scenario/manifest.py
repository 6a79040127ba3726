"""Scenario manifest (SPEC §6): the resolved seam between sampling and simulation.

A manifest is one fully resolved, concrete scenario θ over a world template B:
every number is a number, every reference is an id, nothing is an expression
or a map query. The simulator reads only this (plus B); the sampler writes
only this. Everything is validated on construction and an invalid manifest
never exists as an object: ``parse_manifest`` / ``load_manifest`` turn every
problem into one :class:`~simready.errors.ManifestError` naming the field
path (``actors[1].initial.speed_mps``) and the reason.

Frames and units (SPEC §2): world frame x east, y north, z up; metres,
seconds, radians; yaw counter-clockwise about +z from +x, in [-π, π]. Degrees
appear only in :class:`Environment` (sun angles, human-facing, ``*_deg``).
Scenario time ``t_s`` is 0 at the end of the warm-up; only t ∈ [0, clip_s] is
recorded, and every trigger time must lie there.

Floats are rounded to :data:`simready.hashing.FLOAT_DECIMALS` decimals as
they are validated, so a manifest equals its own canonical serialization:
``parse_manifest(json.loads(manifest_bytes(m))) == m`` and the bytes of the
re-serialization are identical.

Choices SPEC §6 left open, fixed here:

* ``Actor.role`` (``ego`` | ``agent`` | ``parked``): at most one ego (a
  vehicle); a parked actor starts at rest with no cruise speed.
* Pedestrians carry ``walk{route, reaction_delay_s, stop_tendency}``: the
  route is walkable-graph node ids, so ``behavior.route`` (lane ids) stays
  empty for them. Every actor's desired free speed, pedestrians included, is
  ``behavior.cruise_speed_mps``, or its initial speed when that is null.
* ``Actor.initial`` is the state at t = -warmup_s (tick 0, the start of the
  warm-up), not at t = 0.
* ``LaneRef.t_frac`` is the lateral offset from the lane centreline as a
  fraction of the lane half-width, positive to the left of travel, in [-1, 1].
* ``Interaction.actor_id`` is null exactly for ``set`` of an ``env.*`` key:
  the world owns those axes.
* ``until`` (when a held interaction releases its axis) is an ``at`` /
  ``after`` / ``when`` trigger, allowed only on the held verbs ``speed``,
  ``gap`` and ``lane_offset``; the other verbs are one-shot changes.
* The ``arrival`` trigger names its point as ``at{x, y}`` or
  ``conflict_point`` (a template id), exactly one.
* Conditions nest one level: ``not`` of a leaf, ``and`` / ``or`` of leaves.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args

from annotated_types import Ge, Gt, Le, Len
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from simready.atomic import write_bytes_atomic
from simready.errors import ManifestError
from simready.hashing import FLOAT_DECIMALS, canonical_json, sha256_bytes
from simready.scenario.streams import STREAM_NAME_PATTERN, STREAM_NAMES

SCHEMA_VERSION = "1.0.0"

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

_CROSS_FIELD_ERROR = "manifest_cross_field"


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


def _fail(path: str, reason: str) -> PydanticCustomError:
    """A cross-field error whose field path (relative to the model) is data, not text."""
    return PydanticCustomError(_CROSS_FIELD_ERROR, "{path}: {reason}", {"path": path, "reason": reason})


class _Model(BaseModel):
    # strict: a resolved manifest is never coerced ("5" is not 5, 1 is not true).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False, populate_by_name=True)


# --- geometry --------------------------------------------------------------


class Point(_Model):
    """A point on the ground plane, world frame, metres."""

    x: Coord
    y: Coord


class Pose(_Model):
    """Planar pose, world frame: position (m) of the footprint centre, yaw (rad) CCW from +x.

    Height follows the ground; roll and pitch are the physics' business.
    """

    x: Coord
    y: Coord
    yaw: Yaw


class Dims(_Model):
    """Body-frame bounding box, metres: ``l`` along x (forward), ``w`` along y, ``h`` along z."""

    l: Length  # noqa: E741 - SPEC's name
    w: Length
    h: Length


# --- actors ----------------------------------------------------------------


class LaneRef(_Model):
    """Position on the template's lane graph.

    ``s``: arc length (m) along the lane centreline from its start.
    ``t_frac``: lateral offset as a fraction of the lane half-width, + left.
    """

    lane: Ref
    s: Annotated[NonNeg, Le(MAX_COORD_M)]
    t_frac: Annotated[Real, Ge(-1), Le(1)]


class Initial(_Model):
    """State at t = -warmup_s. ``pose`` is authoritative; ``lane_ref`` is where it sits on the map."""

    lane_ref: LaneRef | None = None
    pose: Pose
    speed_mps: Speed


class Rules(_Model):
    """Behaviour-module switches and gains. ``yield`` is spelled ``yield_`` in Python.

    ``aggression`` in [0, 1] scales accepted gaps and decelerations;
    ``speed_factor`` multiplies the lane speed limit (1 = the limit).
    """

    obey_signals: bool
    yield_: bool = Field(alias="yield")
    collision_avoidance: bool
    aggression: Fraction
    speed_factor: Annotated[Pos, Le(3)]


class Behavior(_Model):
    """Goals handed to the actor's controller (SPEC §8).

    ``route``: lane ids in travel order (vehicles, cyclists; empty for
    pedestrians, whose route is ``Actor.walk.route``).
    ``cruise_speed_mps``: desired free speed; null means keep the initial speed.
    """

    rules: Rules
    route: list[Ref]
    cruise_speed_mps: Speed | None = None


class Walk(_Model):
    """Pedestrian navigation goal.

    ``route``: walkable-graph node ids in walking order (at least two).
    ``reaction_delay_s``: delay between a stimulus and the pedestrian's response.
    ``stop_tendency`` in [0, 1]: propensity to stop at the kerb for an approaching vehicle.
    """

    route: Annotated[list[Ref], Len(2, None)]
    reaction_delay_s: Annotated[NonNeg, Le(10)]
    stop_tendency: Fraction


class Actor(_Model):
    """One sampled actor; its stable identifier is ``<sample>/actor:<id>`` (SPEC §3)."""

    id: Id
    kind: ActorKind
    role: ActorRole
    asset_id: AssetId
    dims: Dims
    initial: Initial
    behavior: Behavior
    walk: Walk | None = None
    present_at_start: bool
    tags: list[ActorTag]

    @property
    def asset_family(self) -> str:
        """``<family>`` of ``asset:<family>/<variant>``."""
        return self.asset_id.removeprefix("asset:").split("/", 1)[0]

    @model_validator(mode="after")
    def _check_kind_and_role(self) -> Actor:
        if self.kind == "pedestrian":
            if self.walk is None:
                raise _fail("walk", "a pedestrian needs a walk block (walkable route)")
            if self.behavior.route:
                raise _fail("behavior.route", "a pedestrian's route is walk.route (walkable nodes); leave this empty")
        elif self.walk is not None:
            raise _fail("walk", f"only pedestrians walk; a {self.kind} follows behavior.route")
        if self.role == "ego" and self.kind != "vehicle":
            raise _fail("role", f"the ego is a vehicle, not a {self.kind}")
        if self.role == "parked":
            if self.initial.speed_mps != 0:
                raise _fail("initial.speed_mps", "a parked actor starts at rest")
            if self.behavior.cruise_speed_mps is not None:
                raise _fail("behavior.cruise_speed_mps", "a parked actor has no cruise speed")
        return self


# --- conditions ------------------------------------------------------------


class _LeafCondition(_Model):
    # Fields of each condition that name actors / signal programs.
    _actor_fields: ClassVar[tuple[str, ...]] = ()

    def references(self, path: str) -> Iterator[tuple[str, str, str]]:
        """``(field path, "actor" | "signal", id)`` for every id this leaf names."""
        for name in self._actor_fields:
            value = getattr(self, name)
            if value is not None:
                yield f"{path}.{name}", "actor", value


class _PairCondition(_LeafCondition):
    """A quantity relating actors a and b, compared by ``op`` with a threshold."""

    a: Id
    b: Id
    op: Op
    _actor_fields = ("a", "b")


class DistanceCondition(_PairCondition):
    """Distance between a and b (m), along the lane graph or straight-line."""

    kind: Literal["distance"]
    metric: Literal["along_lane", "euclidean"]
    value_m: Annotated[NonNeg, Le(MAX_COORD_M)]


class TtcCondition(_PairCondition):
    """Constant-speed time-to-collision of a with b (s)."""

    kind: Literal["ttc"]
    value_s: Annotated[NonNeg, Le(MAX_CLIP_S)]


class HeadwayCondition(_PairCondition):
    """Time headway (s) of follower a behind leader b: gap / a's speed."""

    kind: Literal["headway"]
    value_s: Annotated[NonNeg, Le(MAX_CLIP_S)]


class Circle(_Model):
    shape: Literal["circle"]
    x: Coord
    y: Coord
    r: Annotated[Pos, Le(MAX_COORD_M)]


class Polygon(_Model):
    """Simple polygon, world frame, vertices in order (either winding)."""

    shape: Literal["polygon"]
    points: Annotated[list[Point], Len(3, 1024)]

    @model_validator(mode="after")
    def _check_area(self) -> Polygon:
        pts = self.points
        twice_area = sum(p.x * q.y - q.x * p.y for p, q in zip(pts, pts[1:] + pts[:1], strict=True))
        if abs(twice_area) < 1e-12:
            raise _fail("points", "polygon has zero area")
        return self


class LaneWindow(_Model):
    """Arc-length window [s_from, s_to) (m) on one lane."""

    shape: Literal["lane_window"]
    lane: Ref
    s_from: Annotated[NonNeg, Le(MAX_COORD_M)]
    s_to: Annotated[NonNeg, Le(MAX_COORD_M)]

    @model_validator(mode="after")
    def _check_order(self) -> LaneWindow:
        if self.s_to <= self.s_from:
            raise _fail("s_to", f"window is empty: s_to {self.s_to} <= s_from {self.s_from}")
        return self


Region = Annotated[Union[Circle, Polygon, LaneWindow], Field(discriminator="shape")]


class ReachesCondition(_LeafCondition):
    """The actor's footprint centre is inside the region."""

    kind: Literal["reaches"]
    actor: Id
    region: Region
    _actor_fields = ("actor",)


class SpeedCondition(_LeafCondition):
    kind: Literal["speed"]
    actor: Id
    op: Op
    value_mps: Speed
    _actor_fields = ("actor",)


class StandstillCondition(_LeafCondition):
    """The actor has been at rest for at least ``for_s`` seconds."""

    kind: Literal["standstill"]
    actor: Id
    for_s: Annotated[Pos, Le(MAX_CLIP_S)]
    _actor_fields = ("actor",)


class SignalCondition(_LeafCondition):
    kind: Literal["signal"]
    signal: Id
    state: SignalState

    def references(self, path: str) -> Iterator[tuple[str, str, str]]:
        yield f"{path}.signal", "signal", self.signal


class CollisionCondition(_LeafCondition):
    """a is in contact with b, or with anything when b is null."""

    kind: Literal["collision"]
    a: Id
    b: Id | None = None
    _actor_fields = ("a", "b")


class VisibleCondition(_LeafCondition):
    """Actor a is visible to actor ``to`` (line of sight from its eye / sensor)."""

    kind: Literal["visible"]
    a: Id
    to: Id
    _actor_fields = ("a", "to")


LEAF_CONDITIONS = (
    DistanceCondition,
    TtcCondition,
    HeadwayCondition,
    ReachesCondition,
    SpeedCondition,
    StandstillCondition,
    SignalCondition,
    CollisionCondition,
    VisibleCondition,
)
def _kind_tag(value: Any) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) else None


# A callable discriminator, because only it carries a custom error: the one a
# too-deep condition tree gets.
LeafCondition = Annotated[
    Union[tuple(Annotated[c, Tag(get_args(c.model_fields["kind"].annotation)[0])] for c in LEAF_CONDITIONS)],
    Discriminator(
        _kind_tag,
        custom_error_type="leaf_condition",
        custom_error_message=(
            "expected a leaf condition (distance, ttc, headway, reaches, speed, standstill, signal,"
            " collision, visible): and / or / not nest one level only"
        ),
    ),
]


class NotCondition(_Model):
    kind: Literal["not"]
    of: LeafCondition


class _Combination(_Model):
    of: Annotated[list[LeafCondition], Len(2, 64)]


class AndCondition(_Combination):
    kind: Literal["and"]


class OrCondition(_Combination):
    kind: Literal["or"]


def condition_leaves(condition: Any, path: str) -> Iterator[tuple[str, Any]]:
    """``(field path, leaf)`` for every leaf condition of ``condition`` (itself when it is a leaf)."""
    if isinstance(condition, NotCondition):
        yield f"{path}.of", condition.of
    elif isinstance(condition, _Combination):
        for i, child in enumerate(condition.of):
            yield f"{path}.of[{i}]", child
    else:
        yield path, condition


# Nesting is limited by structure: a composite's children are leaves, so a
# deeper tree fails at the offending child's path.
Condition = Annotated[
    Union[LEAF_CONDITIONS + (NotCondition, AndCondition, OrCondition)], Field(discriminator="kind")
]


# --- triggers --------------------------------------------------------------


class AtTrigger(_Model):
    """Fires at scenario time ``t_s``."""

    kind: Literal["at"]
    t_s: Annotated[NonNeg, Le(MAX_CLIP_S)]


class AfterTrigger(_Model):
    """Fires ``delay_s`` after interaction ``id`` fired."""

    kind: Literal["after"]
    id: Id
    delay_s: Annotated[NonNeg, Le(MAX_CLIP_S)]


class WhenTrigger(_Model):
    """Fires when ``condition`` first holds; at ``by_latest_s`` it fires or is skipped per ``if_never``."""

    kind: Literal["when"]
    condition: Condition
    by_latest_s: Annotated[NonNeg, Le(MAX_CLIP_S)]
    if_never: Literal["skip", "fire"]


class ArrivalTrigger(_Model):
    """Fires so that actor ``of`` reaches the point in sync with actor ``sync_with``.

    The point is ``at`` or the template's ``conflict_point`` (exactly one).
    ``ttc_s``: ``sync_with``'s time to the point when ``of`` arrives;
    ``delta_t_s``: ``of``'s arrival minus ``sync_with``'s (exactly one of the two).
    """

    kind: Literal["arrival"]
    of: Id
    at: Point | None = None
    conflict_point: Ref | None = None
    sync_with: Id
    ttc_s: Annotated[NonNeg, Le(MAX_CLIP_S)] | None = None
    delta_t_s: Annotated[Real, Ge(-MAX_CLIP_S), Le(MAX_CLIP_S)] | None = None

    @model_validator(mode="after")
    def _check_choices(self) -> ArrivalTrigger:
        if (self.at is None) == (self.conflict_point is None):
            raise _fail("at", "give exactly one of at{x, y} and conflict_point")
        if (self.ttc_s is None) == (self.delta_t_s is None):
            raise _fail("ttc_s", "give exactly one of ttc_s and delta_t_s")
        if self.of == self.sync_with:
            raise _fail("sync_with", "an actor cannot synchronize with itself")
        return self


Trigger = Annotated[Union[AtTrigger, AfterTrigger, WhenTrigger, ArrivalTrigger], Field(discriminator="kind")]
Until = Annotated[Union[AtTrigger, AfterTrigger, WhenTrigger], Field(discriminator="kind")]


# --- verbs -----------------------------------------------------------------


class SpeedVerb(_Model):
    """Longitudinal speed target.

    ``absolute``: value = target speed (m/s, ≥ 0); ``delta``: value = change
    (m/s); ``factor``: value = multiplier (≥ 0) on the speed at firing;
    ``match``: track ``target``'s speed; ``stop``: come to rest.
    """

    mode: Literal["absolute", "delta", "factor", "match", "stop"]
    value: Annotated[Real, Ge(-MAX_SPEED_MPS), Le(MAX_SPEED_MPS)] | None = None
    target: Id | None = None

    @model_validator(mode="after")
    def _check_mode(self) -> SpeedVerb:
        needs_value = self.mode in ("absolute", "delta", "factor")
        if needs_value and self.value is None:
            raise _fail("value", f"mode {self.mode} needs a value")
        if not needs_value and self.value is not None:
            raise _fail("value", f"mode {self.mode} takes no value")
        if self.mode in ("absolute", "factor") and self.value is not None and self.value < 0:
            raise _fail("value", f"mode {self.mode} needs value >= 0")
        if (self.mode == "match") != (self.target is not None):
            raise _fail("target", "a target actor is given exactly for mode match")
        return self


class GapVerb(_Model):
    """Hold a gap behind ``target``: ``value`` seconds (time) or metres (distance), bumper to bumper."""

    target: Id
    value: Annotated[Pos, Le(MAX_CLIP_S)]
    unit: Literal["time", "distance"]


class ChangeLaneVerb(_Model):
    """Lateral move to the left / right neighbour, to ``lane``, or to the lane ``actor`` is in."""

    mode: Literal["left", "right", "lane", "actor_lane"]
    lane: Ref | None = None
    actor: Id | None = None

    @model_validator(mode="after")
    def _check_mode(self) -> ChangeLaneVerb:
        if (self.mode == "lane") != (self.lane is not None):
            raise _fail("lane", "a lane is given exactly for mode lane")
        if (self.mode == "actor_lane") != (self.actor is not None):
            raise _fail("actor", "an actor is given exactly for mode actor_lane")
        return self


class LaneOffsetVerb(_Model):
    """Hold a lateral offset from the lane centreline, + left: metres, or a fraction of the half-width."""

    value: Annotated[Real, Ge(-MAX_DIM_M), Le(MAX_DIM_M)]
    unit: Literal["metres", "fraction"]

    @model_validator(mode="after")
    def _check_fraction(self) -> LaneOffsetVerb:
        if self.unit == "fraction" and abs(self.value) > 1:
            raise _fail("value", "a fractional offset lies in [-1, 1]")
        return self


class RouteVerb(_Model):
    """Replace the route: ``lanes`` (vehicles, cyclists) or walkable ``nodes`` (pedestrians)."""

    lanes: Annotated[list[Ref], Len(1, None)] | None = None
    nodes: Annotated[list[Ref], Len(1, None)] | None = None

    @model_validator(mode="after")
    def _check_one(self) -> RouteVerb:
        if (self.lanes is None) == (self.nodes is None):
            raise _fail("lanes", "give exactly one of lanes and nodes")
        return self


class ExistVerb(_Model):
    """Spawn (``present``) or despawn (``absent``) the actor."""

    state: Literal["present", "absent"]


@dataclass(frozen=True)
class StateKey:
    """A key the ``set`` verb may write, and what it accepts.

    ``type``: ``bool``, ``enum`` (one of ``values``) or ``float`` (in
    [``lo``, ``hi``]). ``applies_to``: actor kinds that carry the key; empty
    means a world key, set with ``actor_id`` null.
    """

    type: Literal["bool", "enum", "float"]
    values: tuple[str, ...] = ()
    lo: float = -math.inf
    hi: float = math.inf
    applies_to: frozenset[str] = frozenset()

    def check(self, value: bool | float | str) -> str | None:
        """Why ``value`` is not allowed, or None."""
        if self.type == "bool":
            return None if isinstance(value, bool) else "expects true or false"
        if self.type == "enum":
            if isinstance(value, str) and value in self.values:
                return None
            return f"expects one of {', '.join(self.values)}"
        if isinstance(value, bool) or not isinstance(value, float):
            return "expects a number"
        return None if self.lo <= value <= self.hi else f"expects a number in [{self.lo}, {self.hi}]"


_VEHICLES = frozenset({"vehicle"})
_LIT = frozenset({"vehicle", "cyclist"})
_BOOL_LIGHT = StateKey("bool", applies_to=_VEHICLES)
_DOOR = StateKey("enum", values=("closed", "open"), applies_to=_VEHICLES)

STATE_KEYS: Mapping[str, StateKey] = MappingProxyType(
    {
        "lights.headlights": StateKey("enum", values=("off", "low", "high"), applies_to=_LIT),
        "lights.brake": _BOOL_LIGHT,
        "lights.hazard": _BOOL_LIGHT,
        "lights.indicator_left": _BOOL_LIGHT,
        "lights.indicator_right": _BOOL_LIGHT,
        "doors.front_left": _DOOR,
        "doors.front_right": _DOOR,
        "doors.rear_left": _DOOR,
        "doors.rear_right": _DOOR,
        "doors.sliding": _DOOR,
        "doors.tailgate": _DOOR,
        "env.wetness": StateKey("float", lo=0.0, hi=1.0),
        "env.road_friction": StateKey("float", lo=0.05, hi=2.0),
        "env.road_reflectance": StateKey("float", lo=0.0, hi=1.0),
        "env.rain_rate_mmph": StateKey("float", lo=0.0, hi=500.0),
    }
)


class SetVerb(_Model):
    """Set one discrete state ``key`` (see :data:`STATE_KEYS`) to ``value``."""

    key: Annotated[str, StringConstraints(max_length=64)]
    value: Union[bool, Real, Annotated[str, StringConstraints(max_length=64)]]

    @model_validator(mode="after")
    def _check_key(self) -> SetVerb:
        spec = STATE_KEYS.get(self.key)
        if spec is None:
            raise _fail("key", f"unknown state key {self.key!r}; known: {', '.join(sorted(STATE_KEYS))}")
        why = spec.check(self.value)
        if why is not None:
            raise _fail("value", f"{self.key} {why}")
        return self

    @property
    def spec(self) -> StateKey:
        return STATE_KEYS[self.key]


class Dynamics(_Model):
    """How a shaped verb moves from the current value to its target.

    ``constraint`` says what ``value`` bounds: ``rate`` (the verb's quantity
    per second, e.g. m/s² for speed), ``time`` (s) or ``distance``
    travelled (m). ``step`` jumps, so only it may have value 0.
    """

    shape: Literal["step", "linear", "sinusoidal", "cubic"]
    constraint: Literal["rate", "time", "distance"]
    value: Annotated[NonNeg, Le(MAX_COORD_M)]

    @model_validator(mode="after")
    def _check_value(self) -> Dynamics:
        if self.shape != "step" and self.value == 0:
            raise _fail("value", f"a {self.shape} transition needs a positive {self.constraint}")
        return self


VERBS = ("speed", "gap", "change_lane", "lane_offset", "route", "exist", "set")
SHAPED_VERBS = frozenset({"speed", "gap", "change_lane", "lane_offset"})
HELD_VERBS = frozenset({"speed", "gap", "lane_offset"})
_TARGET_FIELDS = {"speed": "target", "gap": "target", "change_lane": "actor"}
_VERB_AXES = {
    "speed": "longitudinal",
    "gap": "longitudinal",
    "change_lane": "lateral",
    "lane_offset": "lateral",
    "route": "topology",
    "exist": "existence",
}


class Interaction(_Model):
    """One triggered action on one actor: a trigger, exactly one verb, its dynamics, and when it lets go.

    Each verb owns one axis (:attr:`axis`); a newly fired interaction
    preempts whatever held the same (actor, axis).
    """

    id: Id
    actor_id: Id | None
    trigger: Trigger
    speed: SpeedVerb | None = None
    gap: GapVerb | None = None
    change_lane: ChangeLaneVerb | None = None
    lane_offset: LaneOffsetVerb | None = None
    route: RouteVerb | None = None
    exist: ExistVerb | None = None
    set: SetVerb | None = None
    dynamics: Dynamics | None = None
    until: Until | None = None

    @property
    def verb(self) -> str:
        """The name of the one verb given."""
        return next(name for name in VERBS if getattr(self, name) is not None)

    @property
    def action(self) -> SpeedVerb | GapVerb | ChangeLaneVerb | LaneOffsetVerb | RouteVerb | ExistVerb | SetVerb:
        return getattr(self, self.verb)

    @property
    def axis(self) -> str:
        """``longitudinal`` | ``lateral`` | ``topology`` | ``existence`` | ``state:<key>``."""
        verb = self.verb
        return f"state:{self.set.key}" if verb == "set" else _VERB_AXES[verb]

    @model_validator(mode="after")
    def _check_verb(self) -> Interaction:
        given = [name for name in VERBS if getattr(self, name) is not None]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise _fail("", f"give exactly one verb of {', '.join(VERBS)} (found {found})")
        verb = given[0]
        if verb in SHAPED_VERBS and self.dynamics is None:
            raise _fail("dynamics", f"verb {verb} needs dynamics{{shape, constraint, value}}")
        if verb not in SHAPED_VERBS and self.dynamics is not None:
            raise _fail("dynamics", f"verb {verb} is not shaped and takes no dynamics")
        if self.until is not None and verb not in HELD_VERBS:
            raise _fail("until", f"verb {verb} is a one-shot change; only {', '.join(sorted(HELD_VERBS))} hold")
        world_key = verb == "set" and not self.set.spec.applies_to
        if world_key and self.actor_id is not None:
            raise _fail("actor_id", f"{self.set.key} belongs to the world: actor_id must be null")
        if not world_key and self.actor_id is None:
            raise _fail("actor_id", f"verb {verb} needs an actor")
        return self

    @property
    def target_actor_id(self) -> str | None:
        """The other actor the verb acts relative to (speed match, gap, change to its lane), if any."""
        field = _TARGET_FIELDS.get(self.verb)
        return None if field is None else getattr(self.action, field)

    def references(self, path: str) -> Iterator[tuple[str, str, str]]:
        """``(field path, "actor" | "interaction" | "signal", id)`` for every id this interaction names."""
        if self.actor_id is not None:
            yield f"{path}.actor_id", "actor", self.actor_id
        for name, trigger in (("trigger", self.trigger), ("until", self.until)):
            where = f"{path}.{name}"
            if isinstance(trigger, AfterTrigger):
                yield f"{where}.id", "interaction", trigger.id
            elif isinstance(trigger, WhenTrigger):
                for leaf_path, leaf in condition_leaves(trigger.condition, f"{where}.condition"):
                    yield from leaf.references(leaf_path)
            elif isinstance(trigger, ArrivalTrigger):
                yield f"{where}.of", "actor", trigger.of
                yield f"{where}.sync_with", "actor", trigger.sync_with
        if self.target_actor_id is not None:
            yield f"{path}.{self.verb}.{_TARGET_FIELDS[self.verb]}", "actor", self.target_actor_id


# --- world-side state --------------------------------------------------------


class Phase(_Model):
    state: SignalState
    duration_s: Annotated[Pos, Le(MAX_CLIP_S)]


class SignalProgram(_Model):
    """A fixed-time signal: ``phases`` cycle from scenario time ``-offset_s``, controlling ``controls`` lanes."""

    id: Id
    controls: Annotated[list[Ref], Len(1, None)]
    phases: Annotated[list[Phase], Len(1, None)]
    offset_s: Annotated[NonNeg, Le(MAX_CLIP_S)]

    @property
    def cycle_s(self) -> float:
        return sum(p.duration_s for p in self.phases)


class Occluder(_Model):
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
                raise _fail("actor_id", "an actor occluder names its actor")
            if self.pose is not None or self.dims is not None:
                raise _fail("pose", "an actor occluder takes its pose and dims from the actor")
        else:
            if self.actor_id is not None:
                raise _fail("actor_id", f"a {self.kind} occluder is a box; use kind actor to reference an actor")
            if self.pose is None or self.dims is None:
                raise _fail("pose" if self.pose is None else "dims", f"a {self.kind} occluder needs pose and dims")
        return self


class Environment(_Model):
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
            raise _fail("illumination", f"sun elevation {el} deg is {expected}, not {self.illumination}")
        raining = self.rain_rate_mmph > 0
        if self.weather == "rain" and not (raining and self.wetness > 0):
            raise _fail("rain_rate_mmph", "rain needs rain_rate_mmph > 0 and wetness > 0")
        if self.weather != "rain" and raining:
            raise _fail("rain_rate_mmph", f"weather {self.weather} has no rain")
        if self.weather == "dry" and self.wetness != 0:
            raise _fail("wetness", "a dry road has wetness 0")
        if self.weather == "wet" and self.wetness == 0:
            raise _fail("wetness", "a wet road has wetness > 0")
        return self


class CoverageCell(_Model):
    """The causal cell this sample fills (SPEC §13): an id and its coordinates per dimension."""

    id: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    dims: dict[ParamName, Scalar]


class Lineage(_Model):
    """Highest shared causes a split must not cross (SPEC §13)."""

    asset_families: list[FamilyName]
    base_template: Ref
    checkpoint_group: Annotated[str, StringConstraints(min_length=1, max_length=256)]


# --- the manifest ------------------------------------------------------------


class ScenarioManifest(_Model):
    """A fully resolved scenario (SPEC §6). See the module docstring for conventions."""

    schema_version: Literal[SCHEMA_VERSION]
    template_id: Ref
    template_hash: ContentHash
    sample_id: Id
    seed: Seed
    streams: dict[StreamName, Seed]
    clip_s: Annotated[Pos, Le(MAX_CLIP_S)] = 20.0
    warmup_s: Annotated[NonNeg, Le(MAX_WARMUP_S)] = 5.0
    dt: Annotated[Real, Ge(MIN_DT_S), Le(MAX_DT_S)] = 0.02
    metric_subject: Id
    actors: Annotated[list[Actor], Len(1, None)]
    interactions: list[Interaction]
    signal_programs: list[SignalProgram]
    occluders: list[Occluder]
    environment: Environment
    coverage_cell: CoverageCell
    split: Split
    realized: dict[ParamName, ParamValue]
    lineage: Lineage
    asset_versions: dict[AssetId, ContentHash]
    intent: Text

    @property
    def clip_ticks(self) -> int:
        return round(self.clip_s / self.dt)

    @property
    def warmup_ticks(self) -> int:
        return round(self.warmup_s / self.dt)

    def actor(self, actor_id: str) -> Actor:
        for a in self.actors:
            if a.id == actor_id:
                return a
        raise KeyError(actor_id)

    def interaction(self, interaction_id: str) -> Interaction:
        for i in self.interactions:
            if i.id == interaction_id:
                return i
        raise KeyError(interaction_id)

    @model_validator(mode="after")
    def _check_time_grid(self) -> ScenarioManifest:
        for name in ("clip_s", "warmup_s"):
            ticks = getattr(self, name) / self.dt
            if abs(ticks - round(ticks)) > TICK_TOLERANCE * max(1.0, ticks):
                raise _fail(name, f"{name} / dt = {ticks!r} is not a whole number of ticks")
        missing = [name for name in STREAM_NAMES if name not in self.streams]
        if missing:
            raise _fail("streams", f"missing stream seeds: {', '.join(missing)}")
        return self

    @model_validator(mode="after")
    def _check_unique_ids(self) -> ScenarioManifest:
        for field in ("actors", "interactions", "signal_programs", "occluders"):
            seen: set[str] = set()
            for i, item in enumerate(getattr(self, field)):
                if item.id in seen:
                    raise _fail(f"{field}[{i}].id", f"duplicate id {item.id!r}")
                seen.add(item.id)
        families = self.lineage.asset_families
        if len(set(families)) != len(families):
            raise _fail("lineage.asset_families", "families repeat")
        return self

    @model_validator(mode="after")
    def _check_lineage(self) -> ScenarioManifest:
        families = set(self.lineage.asset_families)
        for i, a in enumerate(self.actors):
            if a.asset_family not in families:
                raise _fail(
                    f"actors[{i}].asset_id", f"family {a.asset_family!r} is missing from lineage.asset_families"
                )
            if a.asset_id not in self.asset_versions:
                raise _fail(f"actors[{i}].asset_id", f"{a.asset_id} has no entry in asset_versions")
        return self

    @model_validator(mode="after")
    def _check_references(self) -> ScenarioManifest:
        actors = {a.id: a for a in self.actors}
        known = {
            "actor": actors,
            "interaction": {i.id for i in self.interactions},
            "signal": {s.id for s in self.signal_programs},
        }
        if sum(a.role == "ego" for a in self.actors) > 1:
            raise _fail("actors", "more than one actor has role ego")
        if self.metric_subject not in actors:
            raise _fail("metric_subject", f"unknown actor {self.metric_subject!r}")
        for i, inter in enumerate(self.interactions):
            for where, kind, ref in inter.references(f"interactions[{i}]"):
                if ref not in known[kind]:
                    raise _fail(where, f"unknown {kind} {ref!r}")
        for i, occ in enumerate(self.occluders):
            if occ.actor_id is not None and occ.actor_id not in actors:
                raise _fail(f"occluders[{i}].actor_id", f"unknown actor {occ.actor_id!r}")
        return self

    @model_validator(mode="after")
    def _check_interactions(self) -> ScenarioManifest:
        actors = {a.id: a for a in self.actors}
        signal_states = {s.id: {p.state for p in s.phases} for s in self.signal_programs}
        for i, inter in enumerate(self.interactions):
            path = f"interactions[{i}]"
            if inter.actor_id is not None:
                self._check_verb_fits_actor(inter, actors[inter.actor_id], path)
            for name, trigger in (("trigger", inter.trigger), ("until", inter.until)):
                where = f"{path}.{name}"
                if isinstance(trigger, AtTrigger) and trigger.t_s > self.clip_s:
                    raise _fail(f"{where}.t_s", f"{trigger.t_s} s is after the clip ends ({self.clip_s} s)")
                if not isinstance(trigger, WhenTrigger):
                    continue
                if trigger.by_latest_s > self.clip_s:
                    raise _fail(
                        f"{where}.by_latest_s", f"{trigger.by_latest_s} s is after the clip ends ({self.clip_s} s)"
                    )
                for leaf_path, leaf in condition_leaves(trigger.condition, f"{where}.condition"):
                    if isinstance(leaf, SignalCondition) and leaf.state not in signal_states[leaf.signal]:
                        raise _fail(f"{leaf_path}.state", f"signal {leaf.signal!r} never shows {leaf.state}")
        self._check_after_cycles()
        spawned = {i.actor_id for i in self.interactions if i.exist is not None and i.exist.state == "present"}
        for n, a in enumerate(self.actors):
            if not a.present_at_start and a.id not in spawned:
                raise _fail(
                    f"actors[{n}].present_at_start", "absent at start and never spawned by an exist interaction"
                )
        return self

    @staticmethod
    def _check_verb_fits_actor(inter: Interaction, actor: Actor, path: str) -> None:
        verb = inter.verb
        if inter.target_actor_id == actor.id:
            raise _fail(f"{path}.{verb}.{_TARGET_FIELDS[verb]}", "an actor cannot act relative to itself")
        if inter.set is not None and actor.kind not in inter.set.spec.applies_to:
            raise _fail(f"{path}.set.key", f"a {actor.kind} has no {inter.set.key}")
        if inter.route is not None:
            if actor.kind == "pedestrian" and inter.route.lanes is not None:
                raise _fail(f"{path}.route.lanes", "a pedestrian's route is walkable nodes")
            if actor.kind != "pedestrian" and inter.route.nodes is not None:
                raise _fail(f"{path}.route.nodes", f"a {actor.kind}'s route is lanes")

    def _check_after_cycles(self) -> None:
        after = {i.id: i.trigger.id for i in self.interactions if isinstance(i.trigger, AfterTrigger)}
        index = {inter.id: n for n, inter in enumerate(self.interactions)}
        for start in sorted(after, key=index.__getitem__):
            chain = [start]
            node = after[start]
            while node in after:
                if node in chain:
                    cycle = " -> ".join([*chain[chain.index(node) :], node])
                    raise _fail(f"interactions[{index[start]}].trigger.id", f"after-triggers form a cycle: {cycle}")
                chain.append(node)
                node = after[node]


# --- parse, serialize, hash ----------------------------------------------------

_DISCRIMINATOR_KEYS = ("kind", "shape")
_IDENTIFIER_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _join(base: str, tail: str) -> str:
    if not tail:
        return base
    if not base:
        return tail.lstrip(".")
    return base + tail if tail.startswith("[") else f"{base}.{tail}"


def _format_loc(loc: tuple[Any, ...], data: Any) -> str:
    """Pydantic's error location as ``actors[1].initial.speed_mps``, guided by the input.

    The input tells apart a field name from a discriminated union's tag
    (``trigger.at.t_s`` is really ``trigger.t_s``) and from a union member
    label; those are dropped.
    """
    path = ""
    node = data
    for elem in loc:
        if isinstance(node, dict):
            if elem in node:
                node = node[elem]
            elif any(node.get(k) == elem for k in _DISCRIMINATOR_KEYS):
                continue
            else:
                node = None
            key = str(elem)
            path = _join(path, key if _IDENTIFIER_KEY.match(key) else f"[{json.dumps(key)}]")
        elif isinstance(node, list) and isinstance(elem, int):
            path = _join(path, f"[{elem}]")
            node = node[elem] if -len(node) <= elem < len(node) else None
        else:
            break
    return path


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_line(text: str, limit: int = 300) -> str:
    # Pydantic quotes raw input into some messages; the CLI prints one line.
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _manifest_error(exc: ValidationError, data: Any, source: str) -> ManifestError:
    err = exc.errors(include_url=False)[0]
    path = _format_loc(tuple(err["loc"]), data)
    if err["type"] == _CROSS_FIELD_ERROR:
        ctx = err.get("ctx") or {}
        return ManifestError(source, _join(path, str(ctx.get("path", ""))), _one_line(str(ctx.get("reason", ""))))
    reason = err["msg"]
    if err["loc"] and err["loc"][-1] == "[key]":
        reason = f"invalid key: {reason}"
    elif err["type"] not in ("missing", "extra_forbidden") and isinstance(err.get("input"), (bool, int, float, str)):
        reason = f"{reason} (got {_short_repr(err['input'])})"
    return ManifestError(source, path, _one_line(reason))


def parse_manifest(data: Any, source: str | Path) -> ScenarioManifest:
    """Validate a JSON-like value as a manifest; any problem raises :class:`ManifestError`."""
    if not isinstance(data, dict):
        raise ManifestError(source, "", f"a manifest is a JSON object, not {type(data).__name__}")
    try:
        return ScenarioManifest.model_validate(data)
    except ValidationError as exc:
        raise _manifest_error(exc, data, str(source)) from None


class _DuplicateKeyError(ValueError):
    pass


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(f"duplicate key {key!r}")
        out[key] = value
    return out


def load_manifest(path: str | Path) -> ScenarioManifest:
    """Read and validate a manifest file; unreadable, malformed or invalid input raises :class:`ManifestError`."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ManifestError(path, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_reject_duplicates)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ManifestError(path, "", f"not valid JSON: {exc}") from None
    return parse_manifest(data, path)


def manifest_bytes(m: ScenarioManifest) -> bytes:
    """Canonical JSON of ``m`` (sorted keys, rounded floats), in its declared order."""
    return canonical_json(m.model_dump(mode="json", by_alias=True)).encode("utf-8")


def canonicalize(m: ScenarioManifest) -> ScenarioManifest:
    """``m`` with its id-keyed lists sorted by id, so declaration order cannot matter downstream."""

    def by_id(items: list[Any]) -> list[Any]:
        return sorted(items, key=lambda item: item.id)

    return m.model_copy(
        update={
            "actors": by_id(m.actors),
            "interactions": by_id(m.interactions),
            "signal_programs": by_id(m.signal_programs),
            "occluders": by_id(m.occluders),
        }
    )


def manifest_hash(m: ScenarioManifest) -> str:
    """``sha256:<hex>`` of the canonicalized manifest: equal for manifests that differ only in order."""
    return sha256_bytes(manifest_bytes(canonicalize(m)))


def write_manifest(m: ScenarioManifest, path: str | Path) -> Path:
    """Write ``manifest_bytes(m)`` atomically; the file's sha256 is ``manifest_hash(m)`` when m is canonical."""
    return write_bytes_atomic(path, manifest_bytes(m))
