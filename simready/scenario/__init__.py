"""Scenario stage: the resolved manifest (SPEC §6), named random streams, the timing solve."""

from simready.scenario.manifest import (
    SCHEMA_VERSION,
    STATE_KEYS,
    Actor,
    Environment,
    Interaction,
    ScenarioManifest,
    canonicalize,
    load_manifest,
    manifest_bytes,
    manifest_hash,
    parse_manifest,
    write_manifest,
)
from simready.scenario.streams import STREAM_NAMES, StreamSet
from simready.scenario.timing import TimingSolution, solve_emergence_timing, time_to_conflict, ttc

__all__ = [
    "SCHEMA_VERSION",
    "STATE_KEYS",
    "STREAM_NAMES",
    "Actor",
    "Environment",
    "Interaction",
    "ScenarioManifest",
    "StreamSet",
    "TimingSolution",
    "canonicalize",
    "load_manifest",
    "manifest_bytes",
    "manifest_hash",
    "parse_manifest",
    "solve_emergence_timing",
    "time_to_conflict",
    "ttc",
    "write_manifest",
]
