"""Scenario manifest (SPEC §6): the resolved seam between sampling and simulation.

A manifest is one fully resolved, concrete scenario θ over a world template B:
every number is a number, every reference is an id, nothing is an expression
or a map query. The simulator reads only this (plus B); the sampler writes
only this. Everything is validated on construction and an invalid manifest
never exists as an object: ``parse_manifest`` / ``load_manifest`` turn every
problem into one :class:`~simready.common.errors.ManifestError` naming the field
path (``actors[1].initial.speed_mps``) and the reason.

Scenario time ``t_s`` is 0 at the end of the warm-up; only t ∈ [0, clip_s] is
recorded, and every trigger time must lie there. Frames, units and rounding:
:mod:`.base`; the choices SPEC §6 left open are fixed in the modules they
concern. Each module depends only on those above it:

* :mod:`.base` — plausibility bounds, value types, the strict base model,
  planar geometry;
* :mod:`.actors` — :class:`Actor` and its initial state, goals and rules;
* :mod:`.triggers` — conditions and triggers;
* :mod:`.interactions` — verbs, state keys, :class:`Interaction`;
* :mod:`.environment` — signal programs, occluders, :class:`Environment`;
* :mod:`.model` — :class:`ScenarioManifest` and the checks across its parts;
* :mod:`.loader` — parse, load, canonical bytes, hash, write.

Import from here: ``from simready.scenario.manifest import ScenarioManifest, load_manifest``.
"""

from __future__ import annotations

from simready.scenario.manifest.actors import Actor, Behavior, Idm, Initial, LaneRef, Rules, Walk
from simready.scenario.manifest.base import Dims, Point, Pose
from simready.scenario.manifest.environment import Environment, Occluder, Phase, SignalProgram
from simready.scenario.manifest.interactions import (
    HELD_VERBS,
    SHAPED_VERBS,
    STATE_KEYS,
    VERBS,
    ChangeLaneVerb,
    Dynamics,
    ExistVerb,
    GapVerb,
    Interaction,
    LaneOffsetVerb,
    RouteVerb,
    SetVerb,
    SpeedVerb,
    StateKey,
)
from simready.scenario.manifest.loader import (
    canonicalize,
    load_manifest,
    manifest_bytes,
    manifest_hash,
    parse_manifest,
    write_manifest,
)
from simready.scenario.manifest.model import SCHEMA_VERSION, CoverageCell, Lineage, ScenarioManifest
from simready.scenario.manifest.triggers import (
    LEAF_CONDITIONS,
    AfterTrigger,
    AndCondition,
    ArrivalTrigger,
    AtTrigger,
    Circle,
    CollisionCondition,
    Condition,
    DistanceCondition,
    HeadwayCondition,
    LaneWindow,
    LeafCondition,
    NotCondition,
    OrCondition,
    Polygon,
    ReachesCondition,
    Region,
    SignalCondition,
    SpeedCondition,
    StandstillCondition,
    Trigger,
    TtcCondition,
    Until,
    VisibleCondition,
    WhenTrigger,
    condition_leaves,
)

__all__ = [
    "HELD_VERBS", "LEAF_CONDITIONS", "SCHEMA_VERSION", "SHAPED_VERBS", "STATE_KEYS", "VERBS",
    "Actor", "AfterTrigger", "AndCondition", "ArrivalTrigger", "AtTrigger", "Behavior", "Idm", "ChangeLaneVerb", "Circle",
    "CollisionCondition", "Condition", "CoverageCell", "Dims", "DistanceCondition", "Dynamics", "Environment",
    "ExistVerb", "GapVerb", "HeadwayCondition", "Initial", "Interaction", "LaneOffsetVerb", "LaneRef", "LaneWindow",
    "LeafCondition", "Lineage", "NotCondition", "Occluder", "OrCondition", "Phase", "Point", "Polygon", "Pose",
    "ReachesCondition", "Region", "RouteVerb", "Rules", "ScenarioManifest", "SetVerb", "SignalCondition",
    "SignalProgram", "SpeedCondition", "SpeedVerb", "StandstillCondition", "StateKey", "Trigger", "TtcCondition",
    "Until", "VisibleCondition", "Walk", "WhenTrigger",
    "canonicalize", "condition_leaves", "load_manifest", "manifest_bytes", "manifest_hash", "parse_manifest",
    "write_manifest",
]
