"""Stable identifiers and per-frame compact ids (SPEC §3).

Identifiers come from the scene contract, never from load order:
``asset:<family>/<variant>``, ``<template>/instance:<name>``,
``<sample>/actor:<id>``. Compact integer ids for id images and point clouds
are derived from the identifier's hash, so the same entity gets the same
compact id in every frame, sensor and run. 0 means "nothing hit".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from simready.common.atomic import write_json_atomic
from simready.artifacts.records import Legend, LegendEntry

COMPACT_ID_BITS = 24  # fits an RGB8 id image
COMPACT_ID_MAX = (1 << COMPACT_ID_BITS) - 1
NOTHING_HIT = 0

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-]*"
ASSET_ID_RE = re.compile(rf"^asset:({_NAME})/({_NAME})$")
INSTANCE_ID_RE = re.compile(rf"^({_NAME})/instance:({_NAME})$")
ACTOR_ID_RE = re.compile(rf"^({_NAME})/actor:({_NAME})$")


def asset_id(family: str, variant: str) -> str:
    return _checked(f"asset:{family}/{variant}", ASSET_ID_RE)


def instance_id(template_id: str, name: str) -> str:
    return _checked(f"{template_id}/instance:{name}", INSTANCE_ID_RE)


def actor_id(sample_id: str, actor: str) -> str:
    return _checked(f"{sample_id}/actor:{actor}", ACTOR_ID_RE)


def parse_asset_id(identifier: str) -> tuple[str, str]:
    m = ASSET_ID_RE.match(identifier)
    if not m:
        raise ValueError(f"not an asset id: {identifier!r} (expected asset:<family>/<variant>)")
    return m.group(1), m.group(2)


def _checked(identifier: str, pattern: re.Pattern[str]) -> str:
    if not pattern.match(identifier):
        raise ValueError(f"malformed identifier {identifier!r}")
    return identifier


def raw_compact_id(identifier: str) -> int:
    """Hash-derived candidate in [1, 2^24 − 1] (never 0, which means nothing hit)."""
    digest = hashlib.sha256(identifier.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % COMPACT_ID_MAX + 1


class CompactIdCollision(ValueError):
    pass


def compact_ids(identifiers: Iterable[str], *, strict: bool = False) -> dict[str, int]:
    """Compact ids for a set of entities.

    Each identifier gets its hash-derived id. Collisions (two identifiers with
    the same candidate) are detected; with ``strict`` they raise, otherwise the
    later identifier in sorted order probes linearly to the next free value, so
    the result depends only on the *set* of identifiers, never on their order.
    """
    out: dict[str, int] = {}
    taken: dict[int, str] = {}
    for ident in sorted(set(identifiers)):
        cid = raw_compact_id(ident)
        if cid in taken:
            if strict:
                raise CompactIdCollision(f"{ident!r} and {taken[cid]!r} share compact id {cid}")
            while cid in taken:
                cid = cid % COMPACT_ID_MAX + 1
        taken[cid] = ident
        out[ident] = cid
    return out


def build_legend(entities: dict[str, tuple[str | None, int, str | None]]) -> list[LegendEntry]:
    """Legend rows from ``{entity id: (class name, class id, family)}``, sorted by compact id."""
    ids = compact_ids(entities)
    rows = [LegendEntry(compact_id=ids[e], entity=e, semantic_class=c, class_id=cid, family=fam)
            for e, (c, cid, fam) in entities.items()]
    return sorted(rows, key=lambda r: r.compact_id)


def write_legend(path: str | Path, legend: list[LegendEntry], ontology_version: str, *, nothing_hit_class: int = 0,
                 semantic_ignore_8bit: int = 255, row_time: str | None = None) -> Path:
    """``legend.json`` (:class:`simready.artifacts.records.Legend`): compact id → entity identifier, class, family
    (0 = nothing hit), and the semantic pass's conventions the caller (the camera's owner) states: the value of
    nothing hit, the 8-bit ignore value, the rolling shutter's row-time rule."""
    record = Legend(ontology_version=ontology_version, nothing_hit=NOTHING_HIT, nothing_hit_class=nothing_hit_class,
                    semantic_ignore_8bit=semantic_ignore_8bit, compact_id_bits=COMPACT_ID_BITS, entries=legend,
                    **({"row_time": row_time} if row_time is not None else {}))
    return write_json_atomic(path, record.dump())
