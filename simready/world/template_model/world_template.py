"""The template itself: the environment controls, the provenance of an imported map, and :class:`WorldTemplate`
with its derived graphs and lookups."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, field_validator
from shapely.ops import unary_union

from simready.world.identity import instance_id
from simready.world.lanes import LaneGraph
from simready.world.template_model.base import (MAX_INSTANCES, TEMPLATE_SCHEMA_VERSION, Model, Name, OptionalFacts,
                                                PathName, PositiveInt, Text, unique_values)
from simready.world.template_model.places import Coordinates, Lane, Marking, Region, Walkable
from simready.world.template_model.relations import Affordance, Relation
from simready.world.template_model.rig import Ego, Instance, SensorRig
from simready.world.template_model.signals import PedestrianSignal, Signal
from simready.world.walkable import WalkGraph


Illumination = Literal["day", "dusk", "night"]
Weather = Literal["dry", "wet", "rain"]
ActorType = Literal["vehicle", "pedestrian", "cyclist"]


class EnvironmentControls(Model):
    """Environment values a scenario may choose."""

    illumination: tuple[Illumination, ...] = Field(min_length=1)
    weather: tuple[Weather, ...] = Field(min_length=1)

    @field_validator("illumination", "weather")
    @classmethod
    def _no_repeats(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return unique_values(v, "values")


# --- provenance --------------------------------------------------------------


class Provenance(Model):
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


class WorldTemplate(OptionalFacts):
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
        return unique_values(v, "values")

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
