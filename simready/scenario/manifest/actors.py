"""Actors of a manifest: who they are, where they start, what their controllers aim for.

Choices SPEC §6 left open, fixed here:

* ``Actor.role`` (``ego`` | ``agent`` | ``parked``): at most one ego (a
  vehicle); a parked actor starts at rest with no cruise speed.
* Pedestrians carry ``walk{route, reaction_delay_s, stop_tendency, via?}``: the
  route is walkable-graph node ids, so ``behavior.route`` (lane ids) stays
  empty for them; ``via`` (optional) is a mid-block crossing walked first. Every actor's desired free speed, pedestrians included, is
  ``behavior.cruise_speed_mps``, or its initial speed when that is null.
* ``Actor.initial`` is the state at t = -warmup_s (tick 0, the start of the
  warm-up), not at t = 0.
* ``LaneRef.t_frac`` is the lateral offset from the lane centreline as a
  fraction of the lane half-width, positive to the left of travel, in [-1, 1].
"""

from __future__ import annotations

from typing import Annotated

from annotated_types import Ge, Le, Len
from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer, model_validator

from simready.scenario.manifest.base import (
    MAX_COORD_M,
    ActorKind,
    ActorRole,
    ActorTag,
    AssetId,
    Dims,
    Fraction,
    Id,
    Model,
    NonNeg,
    Pos,
    Pose,
    Real,
    Point,
    Ref,
    Speed,
    fail,
)


class LaneRef(Model):
    """Position on the template's lane graph.

    ``s``: arc length (m) along the lane centreline from its start.
    ``t_frac``: lateral offset as a fraction of the lane half-width, + left.
    """

    lane: Ref
    s: Annotated[NonNeg, Le(MAX_COORD_M)]
    t_frac: Annotated[Real, Ge(-1), Le(1)]


class Initial(Model):
    """State at t = -warmup_s. ``pose`` is authoritative; ``lane_ref`` is where it sits on the map."""

    lane_ref: LaneRef | None = None
    pose: Pose
    speed_mps: Speed


class Rules(Model):
    """Behaviour-module switches and gains. ``yield`` is spelled ``yield_`` in Python.

    ``aggression`` in [0, 1] scales accepted gaps and decelerations;
    ``speed_factor`` multiplies the lane speed limit (1 = the limit).
    """

    obey_signals: bool
    yield_: bool = Field(alias="yield")
    collision_avoidance: bool
    aggression: Fraction
    speed_factor: Annotated[Pos, Le(3)]


class Idm(Model):
    """Car-following parameters of one actor (the Intelligent Driver Model, :mod:`simready.sim.controllers.longitudinal`).

    ``s0_m``: standstill gap; ``time_gap_s``: desired time headway;
    ``accel_max_mps2``: maximum acceleration; ``decel_comfort_mps2``:
    comfortable deceleration. Given, they replace the actor class's limits
    (and ``rules.aggression`` no longer scales them); absent, the class's
    limits apply as before. Background traffic records them for every vehicle.
    """

    s0_m: Annotated[Pos, Le(20)]
    time_gap_s: Annotated[Pos, Le(10)]
    accel_max_mps2: Annotated[Pos, Le(10)]
    decel_comfort_mps2: Annotated[Pos, Le(10)]


class Behavior(Model):
    """Goals handed to the actor's controller (SPEC §8).

    ``route``: lane ids in travel order (vehicles, cyclists; empty for
    pedestrians, whose route is ``Actor.walk.route``).
    ``cruise_speed_mps``: desired free speed; null means keep the initial speed.
    ``idm``: the actor's own car-following parameters (:class:`Idm`); absent
    (and then left out of the manifest's bytes): the class limits.
    """

    rules: Rules
    route: list[Ref]
    cruise_speed_mps: Speed | None = None
    idm: Idm | None = None

    @model_serializer(mode="wrap")
    def _drop_absent_idm(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, object]:
        # A manifest without car-following parameters keeps the bytes it had before the field existed.
        out: dict[str, object] = handler(self)
        if out.get("idm", 0) is None:
            del out["idm"]
        return out


class Walk(Model):
    """Pedestrian navigation goal.

    ``route``: walkable-graph node ids in walking order (at least two).
    ``reaction_delay_s``: delay between a stimulus and the pedestrian's response.
    ``stop_tendency`` in [0, 1]: propensity to stop at the kerb for an approaching vehicle.
    ``via``: a mid-block crossing — world points walked in order from the initial pose before ``route``'s first
    node, off the walkable graph (between parked vehicles, across the carriageway). Empty for a walk on the
    graph alone, and then left out of the dump, so a manifest without one reads and hashes as before.
    ``keep_right_m``: how far to the right of its route's line the pedestrian walks (m; background pedestrians
    keep right so that two walking towards each other pass). The initial pose is already that far right of the
    line (to the right of its heading). 0 (the default) is on the line, and then left out of the dump.
    """

    route: Annotated[list[Ref], Len(2, None)]
    reaction_delay_s: Annotated[NonNeg, Le(10)]
    stop_tendency: Fraction
    via: Annotated[list[Point], Len(0, 16)] = []
    keep_right_m: Annotated[NonNeg, Le(2)] = 0.0

    @model_serializer(mode="wrap")
    def _without_empty_via(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        out: dict[str, object] = handler(self)
        if not out.get("via"):
            out.pop("via", None)
        if not out.get("keep_right_m"):
            out.pop("keep_right_m", None)
        return out


class Actor(Model):
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
                raise fail("walk", "a pedestrian needs a walk block (walkable route)")
            if self.behavior.route:
                raise fail("behavior.route", "a pedestrian's route is walk.route (walkable nodes); leave this empty")
        elif self.walk is not None:
            raise fail("walk", f"only pedestrians walk; a {self.kind} follows behavior.route")
        if self.role == "ego" and self.kind != "vehicle":
            raise fail("role", f"the ego is a vehicle, not a {self.kind}")
        if self.role == "parked":
            if self.initial.speed_mps != 0:
                raise fail("initial.speed_mps", "a parked actor starts at rest")
            if self.behavior.cruise_speed_mps is not None:
                raise fail("behavior.cruise_speed_mps", "a parked actor has no cruise speed")
        return self
