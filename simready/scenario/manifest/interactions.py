"""Interactions: one triggered action on one actor, a verb that owns one axis, its dynamics, and when it lets go.

* ``Interaction.actor_id`` is null exactly for ``set`` of an ``env.*`` key:
  the world owns those axes.
* ``until`` (when a held interaction releases its axis) is an ``at`` /
  ``after`` / ``when`` trigger, allowed only on the held verbs ``speed``,
  ``gap`` and ``lane_offset``; the other verbs are one-shot changes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Literal, Union

from annotated_types import Ge, Le, Len
from pydantic import StringConstraints, model_validator

from simready.scenario.manifest.base import (
    MAX_CLIP_S,
    MAX_COORD_M,
    MAX_DIM_M,
    MAX_SPEED_MPS,
    Id,
    Model,
    NonNeg,
    Pos,
    Real,
    Ref,
    fail,
)
from simready.scenario.manifest.triggers import (
    AfterTrigger,
    ArrivalTrigger,
    Trigger,
    Until,
    WhenTrigger,
    condition_leaves,
)


class SpeedVerb(Model):
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
            raise fail("value", f"mode {self.mode} needs a value")
        if not needs_value and self.value is not None:
            raise fail("value", f"mode {self.mode} takes no value")
        if self.mode in ("absolute", "factor") and self.value is not None and self.value < 0:
            raise fail("value", f"mode {self.mode} needs value >= 0")
        if (self.mode == "match") != (self.target is not None):
            raise fail("target", "a target actor is given exactly for mode match")
        return self


class GapVerb(Model):
    """Hold a gap behind ``target``: ``value`` seconds (time) or metres (distance), bumper to bumper."""

    target: Id
    value: Annotated[Pos, Le(MAX_CLIP_S)]
    unit: Literal["time", "distance"]


class ChangeLaneVerb(Model):
    """Lateral move to the left / right neighbour, to ``lane``, or to the lane ``actor`` is in."""

    mode: Literal["left", "right", "lane", "actor_lane"]
    lane: Ref | None = None
    actor: Id | None = None

    @model_validator(mode="after")
    def _check_mode(self) -> ChangeLaneVerb:
        if (self.mode == "lane") != (self.lane is not None):
            raise fail("lane", "a lane is given exactly for mode lane")
        if (self.mode == "actor_lane") != (self.actor is not None):
            raise fail("actor", "an actor is given exactly for mode actor_lane")
        return self


class LaneOffsetVerb(Model):
    """Hold a lateral offset from the lane centreline, + left: metres, or a fraction of the half-width."""

    value: Annotated[Real, Ge(-MAX_DIM_M), Le(MAX_DIM_M)]
    unit: Literal["metres", "fraction"]

    @model_validator(mode="after")
    def _check_fraction(self) -> LaneOffsetVerb:
        if self.unit == "fraction" and abs(self.value) > 1:
            raise fail("value", "a fractional offset lies in [-1, 1]")
        return self


class RouteVerb(Model):
    """Replace the route: ``lanes`` (vehicles, cyclists) or walkable ``nodes`` (pedestrians)."""

    lanes: Annotated[list[Ref], Len(1, None)] | None = None
    nodes: Annotated[list[Ref], Len(1, None)] | None = None

    @model_validator(mode="after")
    def _check_one(self) -> RouteVerb:
        if (self.lanes is None) == (self.nodes is None):
            raise fail("lanes", "give exactly one of lanes and nodes")
        return self


class ExistVerb(Model):
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


class SetVerb(Model):
    """Set one discrete state ``key`` (see :data:`STATE_KEYS`) to ``value``."""

    key: Annotated[str, StringConstraints(max_length=64)]
    value: Union[bool, Real, Annotated[str, StringConstraints(max_length=64)]]

    @model_validator(mode="after")
    def _check_key(self) -> SetVerb:
        spec = STATE_KEYS.get(self.key)
        if spec is None:
            raise fail("key", f"unknown state key {self.key!r}; known: {', '.join(sorted(STATE_KEYS))}")
        why = spec.check(self.value)
        if why is not None:
            raise fail("value", f"{self.key} {why}")
        return self

    @property
    def spec(self) -> StateKey:
        return STATE_KEYS[self.key]


class Dynamics(Model):
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
            raise fail("value", f"a {self.shape} transition needs a positive {self.constraint}")
        return self


VERBS = ("speed", "gap", "change_lane", "lane_offset", "route", "exist", "set")
SHAPED_VERBS = frozenset({"speed", "gap", "change_lane", "lane_offset"})
HELD_VERBS = frozenset({"speed", "gap", "lane_offset"})
TARGET_FIELDS = {"speed": "target", "gap": "target", "change_lane": "actor"}
_VERB_AXES = {
    "speed": "longitudinal",
    "gap": "longitudinal",
    "change_lane": "lateral",
    "lane_offset": "lateral",
    "route": "topology",
    "exist": "existence",
}


class Interaction(Model):
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
        action: SpeedVerb | GapVerb | ChangeLaneVerb | LaneOffsetVerb | RouteVerb | ExistVerb | SetVerb
        action = getattr(self, self.verb)
        return action

    @property
    def axis(self) -> str:
        """``longitudinal`` | ``lateral`` | ``topology`` | ``existence`` | ``state:<key>``."""
        verb = self.verb
        return f"state:{self.set.key}" if verb == "set" and self.set is not None else _VERB_AXES[verb]

    @model_validator(mode="after")
    def _check_verb(self) -> Interaction:
        given = [name for name in VERBS if getattr(self, name) is not None]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise fail("", f"give exactly one verb of {', '.join(VERBS)} (found {found})")
        verb = given[0]
        if verb in SHAPED_VERBS and self.dynamics is None:
            raise fail("dynamics", f"verb {verb} needs dynamics{{shape, constraint, value}}")
        if verb not in SHAPED_VERBS and self.dynamics is not None:
            raise fail("dynamics", f"verb {verb} is not shaped and takes no dynamics")
        if self.until is not None and verb not in HELD_VERBS:
            raise fail("until", f"verb {verb} is a one-shot change; only {', '.join(sorted(HELD_VERBS))} hold")
        world_key = verb == "set" and self.set is not None and not self.set.spec.applies_to
        if world_key and self.actor_id is not None:
            assert self.set is not None
            raise fail("actor_id", f"{self.set.key} belongs to the world: actor_id must be null")
        if not world_key and self.actor_id is None:
            raise fail("actor_id", f"verb {verb} needs an actor")
        return self

    @property
    def target_actor_id(self) -> str | None:
        """The other actor the verb acts relative to (speed match, gap, change to its lane), if any."""
        field = TARGET_FIELDS.get(self.verb)
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
            yield f"{path}.{self.verb}.{TARGET_FIELDS[self.verb]}", "actor", self.target_actor_id
