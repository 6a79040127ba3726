"""The validity gate over one batch folder: each sample, and each branch as a transformation of it.

Why branches are gated against their base: a matched branch is the base
scenario with one intervention, so "what the transformation *added*" (SPEC
§12: introduced overlaps, distribution shift) is measured branch vs base.
The reference pool for the distribution check is given by the caller: in the
DAG it is the template's pool (:mod:`simready.validity.reference_pool`,
independent draws of the same programs, frozen per template version), each
sample scored against its own intent's draws, so a
branch that drives the world somewhere the template's nominal scenarios never
go scores lower realism, and no sample sits in its own reference.

Written beside each sample: ``validity.json`` (:class:`simready.artifacts.records.ValidityRecord`) = {base report,
branch reports}.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from simready.common.atomic import write_json_atomic
from simready.common.parallel import map_samples
from simready.artifacts.layout import BranchDir, SampleDir
from simready.artifacts.records import ValidityRecord
from simready.scenario.manifest import ScenarioManifest, load_manifest
from simready.validity.binding import check_trace
from simready.validity.evidence import ScenarioEvidence, collisions_from_events
from simready.validity.evidence_reader import (
    check_observations_belong,
    evidence_from_sample_dir,
    read_trace,
    sensor_evidence_from_observations,
)
from simready.validity.features import IntentProfiles, ReferenceProfile
from simready.validity.gate import ValidityReport, validate_scenario


def validate_sample_dir(sample_dir: Path, reference: ReferenceProfile | IntentProfiles | None) -> dict[str, Any]:
    """Gate the base rollout (with sensor evidence when its observations exist) and every branch vs the base.

    ``reference``: one profile for every sample, or profiles per intent (the sample's manifest picks its own).
    Returns ``validity.json`` as written (a :class:`~simready.artifacts.records.ValidityRecord`, dumped).
    """
    sample = SampleDir(sample_dir)
    if isinstance(reference, IntentProfiles):
        reference = reference.for_intent(load_manifest(sample.manifest).intent)
    has_obs = sample.observations.root.is_dir()
    base_evidence = evidence_from_sample_dir(sample_dir, reference_pool=reference, require_sensors=has_obs)
    base = validate_scenario(base_evidence)
    branches: dict[str, ValidityReport] = {}
    found = sample.branches()
    if found:
        # The base's evidence with its trace as the baseline; each branch swaps in its own ticks and sensors (so the
        # base's observations, the gate's costliest read, are not read a second time for a baseline that drops them;
        # nor the trace: the gate only reads its tables).
        shared = replace(base_evidence, baseline_ticks=base_evidence.ticks, sensor=None)
        manifest = load_manifest(sample.manifest)
        for branch in found:
            branches[branch.label] = validate_scenario(_with_ticks_of(shared, sample, branch, manifest))
    record = ValidityRecord(
        sample=sample.sample_id,
        sensor_evidence=has_obs,
        branch_sensor_evidence=sorted(k for k, v in branches.items() if v.check("sensor").detail.get("evidence") != "absent"),
        base=base.model_dump(mode="json"),
        branches={k: v.model_dump(mode="json") for k, v in branches.items()},
    ).dump()
    write_json_atomic(sample.validity, record)
    return record


def _with_ticks_of(evidence: ScenarioEvidence, sample: SampleDir, branch: BranchDir, manifest: ScenarioManifest) -> ScenarioEvidence:
    """The same evidence with the branch's ticks as the transformed trajectory (base stays the baseline).

    The branch's own observations (``branches/<label>/observations/``, the
    window after the decision) are its sensor evidence; without them the
    branch is gated as trajectory-only evidence. The branch trace and its
    observations must name the sample's manifest, as the base's do.
    """
    ticks, header, events = read_trace(branch.trace)
    check_trace(sample, manifest, branch.trace, header)
    obs = branch.observations
    environment = manifest.environment
    sensor = None
    if obs.results.is_file():
        check_observations_belong(sample, manifest, obs)
        sensor = sensor_evidence_from_observations(obs.root, evidence.actor_dims, illumination=environment.illumination,
                                                   weather=environment.weather)
    return replace(evidence, sample_id=f"{evidence.sample_id}#{branch.label}", ticks=ticks,
                   collisions=tuple(collisions_from_events(events)), sensor=sensor, source=str(branch.trace))


def validate_batch(sample_dirs: list[Path], reference: ReferenceProfile | IntentProfiles | None) -> list[dict[str, Any]]:
    """Gate every sample of a batch against one frozen reference (the template's pool in the DAG); the
    records as written."""
    return map_samples(lambda d: validate_sample_dir(d, reference), sample_dirs)  # one per core, same bytes


def _record(rec: ValidityRecord | Mapping[str, Any]) -> ValidityRecord:
    return rec if isinstance(rec, ValidityRecord) else ValidityRecord.model_validate(rec)


def branch_summary(records: Iterable[ValidityRecord | Mapping[str, Any]]) -> dict[str, Any]:
    """Branch verdicts across samples: accepted/rejected per branch label (the action for common branches), the
    matched sets (samples with two or more branches) and how many of them are whole (every branch accepted),
    and each rejected branch with its first reason. ``records``: validity records, or their dumps."""
    per: dict[str, dict[str, int]] = {}
    rejected = []
    sets = whole = 0
    for rec in sorted(map(_record, records), key=lambda r: r.sample):
        for label, rep in sorted(rec.branches.items()):
            row = per.setdefault(label, {"accepted": 0, "rejected": 0})
            row["accepted" if rep["accepted"] else "rejected"] += 1
            if not rep["accepted"]:
                rejected.append({"sample": rec.sample, "branch": label, "reason": (rep["reasons"] or ["?"])[0][:300]})
        if len(rec.branches) >= 2:
            sets += 1
            whole += all(rep["accepted"] for rep in rec.branches.values())
    return {"by_branch": per, "matched_sets": sets, "matched_sets_whole": whole, "rejected": rejected}


def report_rows(records: Iterable[ValidityRecord | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Flat rows (sample, variant, accepted, validity, fidelity, weight, reasons) for tables and GX.
    ``records``: validity records, or their dumps (:func:`validate_sample_dir`'s rows)."""
    rows = []
    for rec in map(_record, records):
        for variant, rep in [("base", rec.base), *sorted(rec.branches.items())]:
            rows.append({
                "sample": rec.sample, "variant": variant, "accepted": rep["accepted"],
                "validity": rep["validity"], "fidelity": rep["fidelity"], "realism": rep["realism"],
                "weight": rep["weight"], "capped": rep["capped"], "policy_version": rep["policy_version"],
                "reasons": "; ".join(rep["reasons"])[:300],
                **{f"score_{c['check']}": c["score"] for c in rep["checks"]},
            })
    return rows
