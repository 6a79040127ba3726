"""When an interaction fires: conditions on the scene (leaves, one level of ``not`` / ``and`` / ``or``) and triggers.

* The ``arrival`` trigger names its point as ``at{x, y}`` or
  ``conflict_point`` (a template id), exactly one.
* Conditions nest one level: ``not`` of a leaf, ``and`` / ``or`` of leaves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias, Union, get_args

from annotated_types import Ge, Le, Len
from pydantic import Discriminator, Field, Tag, model_validator

from simready.scenario.manifest.base import (
    MAX_CLIP_S,
    MAX_COORD_M,
    Coord,
    Id,
    Model,
    NonNeg,
    Op,
    Point,
    Pos,
    Real,
    Ref,
    SignalState,
    Speed,
    fail,
)


class _LeafCondition(Model):
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


class Circle(Model):
    shape: Literal["circle"]
    x: Coord
    y: Coord
    r: Annotated[Pos, Le(MAX_COORD_M)]


class Polygon(Model):
    """Simple polygon, world frame, vertices in order (either winding)."""

    shape: Literal["polygon"]
    points: Annotated[list[Point], Len(3, 1024)]

    @model_validator(mode="after")
    def _check_area(self) -> Polygon:
        pts = self.points
        twice_area = sum(p.x * q.y - q.x * p.y for p, q in zip(pts, pts[1:] + pts[:1], strict=True))
        if abs(twice_area) < 1e-12:
            raise fail("points", "polygon has zero area")
        return self


class LaneWindow(Model):
    """Arc-length window [s_from, s_to) (m) on one lane."""

    shape: Literal["lane_window"]
    lane: Ref
    s_from: Annotated[NonNeg, Le(MAX_COORD_M)]
    s_to: Annotated[NonNeg, Le(MAX_COORD_M)]

    @model_validator(mode="after")
    def _check_order(self) -> LaneWindow:
        if self.s_to <= self.s_from:
            raise fail("s_to", f"window is empty: s_to {self.s_to} <= s_from {self.s_from}")
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
if TYPE_CHECKING:  # the union built from LEAF_CONDITIONS, spelled out for the checker
    LeafCondition: TypeAlias = (
        DistanceCondition | TtcCondition | HeadwayCondition | ReachesCondition | SpeedCondition | StandstillCondition
        | SignalCondition | CollisionCondition | VisibleCondition
    )
else:
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


class NotCondition(Model):
    kind: Literal["not"]
    of: LeafCondition


class _Combination(Model):
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
if TYPE_CHECKING:
    Condition: TypeAlias = LeafCondition | NotCondition | AndCondition | OrCondition
else:
    Condition = Annotated[
        Union[LEAF_CONDITIONS + (NotCondition, AndCondition, OrCondition)], Field(discriminator="kind")
    ]


# --- triggers --------------------------------------------------------------


class AtTrigger(Model):
    """Fires at scenario time ``t_s``."""

    kind: Literal["at"]
    t_s: Annotated[NonNeg, Le(MAX_CLIP_S)]


class AfterTrigger(Model):
    """Fires ``delay_s`` after interaction ``id`` fired."""

    kind: Literal["after"]
    id: Id
    delay_s: Annotated[NonNeg, Le(MAX_CLIP_S)]


class WhenTrigger(Model):
    """Fires when ``condition`` first holds; at ``by_latest_s`` it fires or is skipped per ``if_never``."""

    kind: Literal["when"]
    condition: Condition
    by_latest_s: Annotated[NonNeg, Le(MAX_CLIP_S)]
    if_never: Literal["skip", "fire"]


class ArrivalTrigger(Model):
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
            raise fail("at", "give exactly one of at{x, y} and conflict_point")
        if (self.ttc_s is None) == (self.delta_t_s is None):
            raise fail("ttc_s", "give exactly one of ttc_s and delta_t_s")
        if self.of == self.sync_with:
            raise fail("sync_with", "an actor cannot synchronize with itself")
        return self


Trigger = Annotated[Union[AtTrigger, AfterTrigger, WhenTrigger, ArrivalTrigger], Field(discriminator="kind")]
Until = Annotated[Union[AtTrigger, AfterTrigger, WhenTrigger], Field(discriminator="kind")]
