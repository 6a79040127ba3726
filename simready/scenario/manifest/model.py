"""The manifest itself (:class:`ScenarioManifest`): the scenario's parts, its lineage, and the checks across them.

Across parts: ids are unique per list, every reference names something
declared (actors, interactions, signal programs), at most one actor is the
ego, trigger times lie in the recorded clip, after-triggers form no cycle,
and an actor absent at start is spawned by an interaction.
"""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Ge, Le, Len
from pydantic import StringConstraints, model_validator

from simready.common.identifiers import Identifier
from simready.scenario.manifest.actors import Actor
from simready.scenario.manifest.base import (
    MAX_CLIP_S,
    MAX_DT_S,
    MAX_WARMUP_S,
    MIN_DT_S,
    TICK_TOLERANCE,
    AssetId,
    ContentHash,
    FamilyName,
    Id,
    Model,
    NonNeg,
    ParamName,
    ParamValue,
    Pos,
    Real,
    Ref,
    Scalar,
    Seed,
    Split,
    StreamName,
    Text,
    fail,
)
from simready.scenario.manifest.environment import Environment, Occluder, SignalProgram
from simready.scenario.manifest.interactions import TARGET_FIELDS, Interaction
from simready.scenario.manifest.triggers import AfterTrigger, AtTrigger, SignalCondition, WhenTrigger, condition_leaves
from simready.scenario.streams import STREAM_NAMES
from simready.scenario.traffic_spec import DESPAWN_RANGE_KEY, MAX_DESPAWN_RANGE_M, MIN_DESPAWN_RANGE_M, RECYCLE_KEY

#: The manifest schema's version; the alias is the field's type (mypy takes no name inside ``Literal[...]``), and
#: the checker sees that the two agree.
SchemaVersion = Literal["1.0.0"]
SCHEMA_VERSION: SchemaVersion = "1.0.0"


class CoverageCell(Model):
    """The causal cell this sample fills (SPEC §13): an id and its coordinates per dimension."""

    id: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    dims: dict[ParamName, Scalar]


class Lineage(Model):
    """Highest shared causes a split must not cross (SPEC §13)."""

    asset_families: list[FamilyName]
    base_template: Ref
    checkpoint_group: Annotated[str, StringConstraints(min_length=1, max_length=256)]


# --- the manifest ------------------------------------------------------------


class ScenarioManifest(Model):
    """A fully resolved scenario (SPEC §6). See the module docstring for conventions."""

    schema_version: SchemaVersion
    # Both become path components (templates/<id>/, samples/.../<sample id>/).
    template_id: Identifier
    template_hash: ContentHash
    sample_id: Identifier
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
                raise fail(name, f"{name} / dt = {ticks!r} is not a whole number of ticks")
        missing = [name for name in STREAM_NAMES if name not in self.streams]
        if missing:
            raise fail("streams", f"missing stream seeds: {', '.join(missing)}")
        return self

    @model_validator(mode="after")
    def _check_unique_ids(self) -> ScenarioManifest:
        for field in ("actors", "interactions", "signal_programs", "occluders"):
            seen: set[str] = set()
            for i, item in enumerate(getattr(self, field)):
                if item.id in seen:
                    raise fail(f"{field}[{i}].id", f"duplicate id {item.id!r}")
                seen.add(item.id)
        families = self.lineage.asset_families
        if len(set(families)) != len(families):
            raise fail("lineage.asset_families", "families repeat")
        return self

    @model_validator(mode="after")
    def _check_lineage(self) -> ScenarioManifest:
        families = set(self.lineage.asset_families)
        for i, a in enumerate(self.actors):
            if a.asset_family not in families:
                raise fail(
                    f"actors[{i}].asset_id", f"family {a.asset_family!r} is missing from lineage.asset_families"
                )
            if a.asset_id not in self.asset_versions:
                raise fail(f"actors[{i}].asset_id", f"{a.asset_id} has no entry in asset_versions")
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
            raise fail("actors", "more than one actor has role ego")
        if self.metric_subject not in actors:
            raise fail("metric_subject", f"unknown actor {self.metric_subject!r}")
        for i, inter in enumerate(self.interactions):
            for where, kind, ref in inter.references(f"interactions[{i}]"):
                if ref not in known[kind]:
                    raise fail(where, f"unknown {kind} {ref!r}")
        for i, occ in enumerate(self.occluders):
            if occ.actor_id is not None and occ.actor_id not in actors:
                raise fail(f"occluders[{i}].actor_id", f"unknown actor {occ.actor_id!r}")
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
                    raise fail(f"{where}.t_s", f"{trigger.t_s} s is after the clip ends ({self.clip_s} s)")
                if not isinstance(trigger, WhenTrigger):
                    continue
                if trigger.by_latest_s > self.clip_s:
                    raise fail(
                        f"{where}.by_latest_s", f"{trigger.by_latest_s} s is after the clip ends ({self.clip_s} s)"
                    )
                for leaf_path, leaf in condition_leaves(trigger.condition, f"{where}.condition"):
                    if isinstance(leaf, SignalCondition) and leaf.state not in signal_states[leaf.signal]:
                        raise fail(f"{leaf_path}.state", f"signal {leaf.signal!r} never shows {leaf.state}")
        self._check_after_cycles()
        spawned = {i.actor_id for i in self.interactions if i.exist is not None and i.exist.state == "present"}
        for n, a in enumerate(self.actors):
            # A background reserve (tags background + reserve) is spawned by the simulator to keep the density.
            if not a.present_at_start and a.id not in spawned and not {"background", "reserve"} <= set(a.tags):
                raise fail(
                    f"actors[{n}].present_at_start",
                    "absent at start and never spawned by an exist interaction (nor a background reserve)",
                )
        return self

    @model_validator(mode="after")
    def _check_traffic_rules(self) -> ScenarioManifest:
        """The simulator's background-traffic parameters (:mod:`simready.sim.behavior.respawn`), when recorded."""
        if DESPAWN_RANGE_KEY in self.realized:
            r = self.realized[DESPAWN_RANGE_KEY]
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not MIN_DESPAWN_RANGE_M <= r <= MAX_DESPAWN_RANGE_M:
                raise fail(f"realized.{DESPAWN_RANGE_KEY}",
                           f"{r!r} is not a range in [{MIN_DESPAWN_RANGE_M}, {MAX_DESPAWN_RANGE_M}] m")
        if RECYCLE_KEY in self.realized and not isinstance(self.realized[RECYCLE_KEY], bool):
            raise fail(f"realized.{RECYCLE_KEY}", f"{self.realized[RECYCLE_KEY]!r} is not true or false")
        return self

    @staticmethod
    def _check_verb_fits_actor(inter: Interaction, actor: Actor, path: str) -> None:
        verb = inter.verb
        if inter.target_actor_id == actor.id:
            raise fail(f"{path}.{verb}.{TARGET_FIELDS[verb]}", "an actor cannot act relative to itself")
        if inter.set is not None and actor.kind not in inter.set.spec.applies_to:
            raise fail(f"{path}.set.key", f"a {actor.kind} has no {inter.set.key}")
        if inter.route is not None:
            if actor.kind == "pedestrian" and inter.route.lanes is not None:
                raise fail(f"{path}.route.lanes", "a pedestrian's route is walkable nodes")
            if actor.kind != "pedestrian" and inter.route.nodes is not None:
                raise fail(f"{path}.route.nodes", f"a {actor.kind}'s route is lanes")

    def _check_after_cycles(self) -> None:
        after = {i.id: i.trigger.id for i in self.interactions if isinstance(i.trigger, AfterTrigger)}
        index = {inter.id: n for n, inter in enumerate(self.interactions)}
        for start in sorted(after, key=index.__getitem__):
            chain = [start]
            node = after[start]
            while node in after:
                if node in chain:
                    cycle = " -> ".join([*chain[chain.index(node) :], node])
                    raise fail(f"interactions[{index[start]}].trigger.id", f"after-triggers form a cycle: {cycle}")
                chain.append(node)
                node = after[node]
