"""Split assignment at the highest shared cause (SPEC §13), before anything is rendered.

A sample's split (train / val / test) is a pure function of its lineage
keys, read from ``data/splits.yaml``:

1. **Base template.** A template listed under ``templates`` puts every one
   of its samples in that split.
2. **Asset families of the non-ego actors.** A family listed under
   ``families`` as ``train`` / ``val`` / ``test`` is *pinned*: every sample
   using it goes to that split (colour variants share a family, so a held-out
   family is held out in every colour). ``shared`` families are allowed in
   every split — an explicit, documented leakage exposure (a template's only
   van, say). A non-ego family that is not listed at all is refused: the
   config must decide about every family before it is sampled.
3. **Checkpoint group.** Otherwise the split is drawn from the group key
   (the sample id; branch siblings share it) by hashing
   ``sha256(salt + key)`` into ``[0, 1)`` against the cumulative ``ratios``.

Pins that disagree (a family pinned to test in a template pinned to train,
two families pinned to different splits) are a conflict: the sampler refuses
the proposal (a stage-1 rejection) instead of moving samples afterwards.
Assignments never change once written; the leakage check of the validity
stage reads ``split`` and ``lineage`` from every manifest.

The suite's split table (``splits/split_assignments.json``: one row per sample
with its lineage keys) is written by :func:`write_split_assignments`, which
refuses to change a split already written, and checked by :func:`leakage`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any


from simready.common import paths
from simready.common.atomic import write_text_atomic
from simready.common.errors import SimreadyError
from simready.common.loading import load_yaml

if TYPE_CHECKING:
    from simready.scenario.manifest import ScenarioManifest

SPLITS_FILE = paths.DATA_DIR / "splits.yaml"
SPLITS = ("train", "val", "test")
SHARED = "shared"


class SplitError(SimreadyError):
    kind = "splits"


@dataclass(frozen=True)
class SplitConfig:
    """Parsed ``splits.yaml``: ratios for hashed groups, family and template pins, hash salt."""

    ratios: Mapping[str, float]
    families: Mapping[str, str]
    templates: Mapping[str, str]
    salt: str
    source: str


@dataclass(frozen=True)
class SplitDecision:
    """``split`` and the lineage key that decided it; ``conflict`` says why no split is legal (split is None)."""

    split: str | None
    decided_by: str
    conflict: str | None = None


def hash_split(config: SplitConfig, key: str) -> str:
    """Deterministic split of a group key by the configured ratios."""
    digest = hashlib.sha256(f"{config.salt}{key}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    acc = 0.0
    for split in SPLITS:
        acc += config.ratios[split]
        if u < acc:
            return split
    return SPLITS[-1]


def assign_split(config: SplitConfig, *, base_template: str, families: Iterable[str], checkpoint_group: str) -> SplitDecision:
    """The split of a sample from its lineage keys (see the module docstring for the order)."""
    pins: dict[str, str] = {}
    if base_template in config.templates:
        pins[f"template {base_template}"] = config.templates[base_template]
    for family in sorted(set(families)):
        pinned = config.families.get(family)
        if pinned is None:
            return SplitDecision(None, f"family {family}", f"family {family} has no split assignment in {config.source}")
        if pinned != SHARED:
            pins[f"family {family}"] = pinned
    if pins:
        splits = sorted(set(pins.values()))
        if len(splits) > 1:
            detail = ", ".join(f"{k} -> {v}" for k, v in sorted(pins.items()))
            return SplitDecision(None, "pins", f"lineage pins disagree: {detail}")
        key = sorted(pins)[0]
        return SplitDecision(splits[0], key)
    return SplitDecision(hash_split(config, checkpoint_group), f"checkpoint group {checkpoint_group}")


def parse_splits(data: Any, source: str | Path = "<memory>") -> SplitConfig:
    source = str(source)

    def fail(field_: str, reason: str) -> SplitError:
        return SplitError(source, field_, reason)

    if not isinstance(data, dict):
        raise fail("", "splits.yaml is a mapping")
    unknown = sorted(set(data) - {"version", "ratios", "families", "templates", "salt"})
    if unknown:
        raise fail("", f"unknown field(s) {', '.join(unknown)}")
    ratios = data.get("ratios")
    if not isinstance(ratios, dict) or set(ratios) != set(SPLITS):
        raise fail("ratios", f"give a ratio for each of {', '.join(SPLITS)}")
    for split, r in ratios.items():
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1:
            raise fail(f"ratios.{split}", f"a ratio is a number in [0, 1], got {r!r}")
    if not math.isclose(sum(ratios.values()), 1.0, abs_tol=1e-9):
        raise fail("ratios", f"ratios sum to {sum(ratios.values())}, not 1")
    families = data.get("families") or {}
    templates = data.get("templates") or {}
    for section, table, allowed in (("families", families, SPLITS + (SHARED,)), ("templates", templates, SPLITS)):
        if not isinstance(table, dict):
            raise fail(section, "a mapping of name -> split")
        for name, split in table.items():
            if split not in allowed:
                raise fail(f"{section}.{name}", f"split must be one of {', '.join(allowed)}, got {split!r}")
    salt = data.get("salt", "")
    if not isinstance(salt, str):
        raise fail("salt", "the salt is a string")
    return SplitConfig({s: float(ratios[s]) for s in SPLITS}, dict(families), dict(templates), salt, source)


def load_splits(path: str | Path = SPLITS_FILE) -> SplitConfig:
    path = Path(path)
    if not path.exists():
        raise SplitError(path, "", "missing split configuration")
    data = load_yaml(path, SplitError)
    return parse_splits(data, path)


def split_assignment_row(manifest: ScenarioManifest, template_id: str, batch: str) -> dict[str, Any]:
    """One sample's row of the split table: its split and the lineage keys the leakage check compares."""
    return {
        "sample": manifest.sample_id, "template": template_id, "batch": batch, "split": manifest.split,
        "base_template": manifest.lineage.base_template, "checkpoint_group": manifest.lineage.checkpoint_group,
        "families": sorted(manifest.lineage.asset_families),
    }


def write_split_assignments(rows: list[dict[str, Any]], path: Path) -> None:
    """Write the split table ``{"rows": rows}`` atomically at ``path``.

    Raises :class:`SplitError` when a sample already in the table at ``path``
    has another split now: an assignment is immutable once written (a model
    trained on it must not see its test samples move), so the table is left as it was.
    """
    previous = json.loads(path.read_text()) if path.exists() else {"rows": []}
    changed = [r["sample"] for r in rows for p in previous["rows"] if p["sample"] == r["sample"] and p["split"] != r["split"]]
    if changed:
        raise SplitError(path, "", f"split assignment is immutable; changed for {changed[:5]}")
    write_text_atomic(path, json.dumps({"rows": rows}, indent=1, sort_keys=True))


def leakage(rows: Iterable[Mapping[str, Any]], shared_families: set[str]) -> dict[str, list[str]]:
    """Lineage keys (non-shared family, checkpoint group) of the split table's rows that cross splits."""
    seen: dict[str, set[str]] = {}
    for r in rows:
        keys = [f"checkpoint:{r['checkpoint_group']}"]
        keys += [f"family:{f}" for f in r["families"] if f not in shared_families]
        for k in keys:
            seen.setdefault(k, set()).add(r["split"])
    return {k: sorted(v) for k, v in sorted(seen.items()) if len(v) > 1}
