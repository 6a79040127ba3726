"""The realism reference pool of one template: independent draws of the suite's own programs, rolled out.

Why a separate pool: the distribution check (SPEC §12) scores how far a
scenario's features (range to the ego, lateral offset, speed, class mix) lie
from a reference, and how much of that shift a transformation *added*. A
pool made of the very batch being judged is circular (a sample sits in its
own reference) and changes with the batch's neighbours. This pool is drawn
from a different root stream (``reference``) through the same conditional
programs, ladder and dynamic-v1 backend, so it describes what the template's
nominal scenarios look like, independently of any evaluated sample; it is
frozen per template version and shared by every batch. The gate scores a
sample against the draws of its own intent (:func:`load_intent_profiles`),
each held out in turn to measure the noise a nominal scenario shows
(:class:`~simready.validity.features.NoiseLevel`).

Layout of ``<out_dir>`` (replaced whole, atomically; :class:`simready.artifacts.layout.ReferencePoolDir`)::

    <sample>/manifest.json, <sample>/trace.parquet   the reference rollouts (inspectable)
    pool.parquet                                     feature rows (simready.validity.features)
    pool.json                                        what the pool is: template, root, intents, counts, sha256
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from simready.common.atomic import atomic_directory
from simready.common.parallel import map_samples
from simready.common.hashing import content_hash, file_sha256
from simready.artifacts.layout import ReferencePoolDir
from simready.scenario.generator import generate
from simready.scenario.manifest import canonicalize, manifest_bytes
from simready.sim.batch import rollout_sample, warm_world
from simready.validity.evidence import EvidenceError
from simready.validity.evidence_reader import trace_actors
from simready.validity.features import DRAW_COLUMN, IntentProfiles, ReferenceProfile, scenario_features

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.world.template import WorldTemplate

#: Root id of the reference pool's random streams (the suite's samples use the generator's default root).
REFERENCE_ROOT = "reference"


def build_reference_pool(template: WorldTemplate, catalog: Catalog, intents: Mapping[str, int], out_dir: Path, *,
                         backend: str = "dynamic-v1", root: str = REFERENCE_ROOT) -> dict[str, Any]:
    """Generate ``intents[name]`` accepted scenarios per intent, roll them out, and freeze their features.

    Rollouts whose verdict is *reject* do not enter the pool (a diverged
    trace is not a reference). Returns the ``pool.json`` record.
    """
    out_dir = Path(out_dir)
    frames: list[pd.DataFrame] = []
    samples: list[dict[str, Any]] = []
    with atomic_directory(out_dir) as tmp:
        building = ReferencePoolDir(tmp)
        draws: list[tuple[str, str, Path]] = []
        for intent, n in sorted(intents.items()):
            result = generate(template.id, intent, n, root=root, catalog=catalog, template=template)
            for m in result.manifests:
                sample = building.sample(m.sample_id)
                sample.root.mkdir(parents=True)
                sample.manifest.write_bytes(manifest_bytes(canonicalize(m)))
                draws.append((intent, m.sample_id, sample.root))

        def roll_out(draw: tuple[str, str, Path]) -> tuple[str, pd.DataFrame | None]:
            rollout = rollout_sample(draw[2], template, catalog, backend, plot=False)
            verdict = rollout.row["verdict"]
            if verdict != "accept":
                return verdict, None
            # The features of the trace in memory: the same table the trace file holds (its Parquet round trip
            # keeps every value and type), without reading back the file just written.
            ticks = rollout.trace.df
            actors = trace_actors(ticks, rollout.trace.header, rollout.manifest)
            return verdict, scenario_features(ticks, actors.classes, actors.ego_id)

        # The draws' rollouts side by side, one per core (each its own folder and streams: the same bytes), on the
        # template's world caches built once here rather than in every worker.
        warm_world(template, catalog)
        for (intent, sample_id, _), (verdict, features) in zip(draws, map_samples(roll_out, draws)):
            samples.append({"sample": sample_id, "intent": intent, "verdict": verdict})
            if features is not None:
                frames.append(features.assign(**{DRAW_COLUMN: sample_id}))
        pool = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        pool.to_parquet(building.pool, index=False)
        record = {
            "template_id": template.id,
            "root": root,
            "backend": backend,
            "intents": dict(sorted(intents.items())),
            "samples": samples,
            "pool_samples": sum(1 for s in samples if s["verdict"] == "accept"),
            "rows": int(len(pool)),
            "pool_sha256": file_sha256(str(building.pool)),
        }
        record["version"] = content_hash(record)
        building.record.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def load_reference_pool(pool_dir: Path) -> ReferenceProfile | None:
    """The frozen profile of a built pool, all its intents together; None when the pool has no rows."""
    pool = pd.read_parquet(ReferencePoolDir(Path(pool_dir)).pool)
    return ReferenceProfile.from_pool(pool) if len(pool) else None


def load_intent_profiles(pool_dir: Path) -> IntentProfiles | None:
    """The built pool frozen per intent (what the gate scores a sample against: its own intent's draws); None
    when the pool has no rows.

    Raises:
        EvidenceError: a draw of ``pool.parquet`` that ``pool.json`` does not list as accepted, or no
            ``sample`` column (a pool built before draws were named).
    """
    layout = ReferencePoolDir(Path(pool_dir))
    pool = pd.read_parquet(layout.pool)
    if not len(pool):
        return None
    if DRAW_COLUMN not in pool:
        raise EvidenceError(layout.pool, DRAW_COLUMN, "missing: the pool does not name its draws; rebuild it")
    record = json.loads(layout.record.read_text())
    intent_of = {s["sample"]: s["intent"] for s in record.get("samples", []) if s.get("verdict") == "accept"}
    unknown = sorted(set(pool[DRAW_COLUMN].astype(str)) - set(intent_of))
    if unknown:
        raise EvidenceError(layout.record, "samples", f"draw {unknown[0]!r} of pool.parquet is not listed as accepted "
                                                      f"({len(unknown)} such); rebuild the pool")
    return IntentProfiles.from_pool(pool, intent_of)
