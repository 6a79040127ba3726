"""The gate across a suite: base reports under the suite weight policy, and the tables GX checks and documents.

The callers (the ``coverage_report`` asset, the GX asset checks) pass sample
folders — ``<batch>/<sample>/`` as the simulation stage writes them, in the
order they want them read — so this module knows files, not where a
deployment keeps them.

* :func:`suite_validity` — every base report that exists, the suite-level
  weight policy over them (SPEC §12: the low-fidelity share cap) and the
  branch verdicts; JSON-ready, it is ``coverage/suite_weights.json``.
* :func:`trajectories_frame`, :func:`manifests_frame`,
  :func:`validity_reports_frame` — the tables of the GX suites
  (:mod:`simready.validity.expectations`) over many sample folders.
* :func:`build_docs` — the GX Data Docs site for reviewers over all of them.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from simready.artifacts.layout import SampleDir
from simready.artifacts.records import ValidityRecord
from simready.scenario.manifest import load_manifest
from simready.validity.batch import branch_summary
from simready.validity.evidence_reader import evidence_from_sample_dir
from simready.validity.data_docs import DocsBatch, build_data_docs
from simready.validity.expectations import manifest_frame, trajectory_frame, validity_frame
from simready.validity.gate import ValidityReport, apply_suite_weight_policy


def suite_validity(sample_dirs: Iterable[Path]) -> dict[str, Any]:
    """Every base sample's validity report under the suite-level weight policy (share cap, scaling).

    Folders without ``validity.json`` (not gated yet) are left out. Returns
    ``{accepted, rejected, policy, branches}``: counts of base reports, the
    :func:`~simready.validity.gate.apply_suite_weight_policy` result ({} without
    reports) and :func:`~simready.validity.batch.branch_summary`.
    """
    reports, records = [], []
    for d in sample_dirs:
        if SampleDir(d).validity.exists():
            rec = ValidityRecord.read(SampleDir(d).validity)
            reports.append(ValidityReport.model_validate(rec.base))
            records.append(rec)
    accepted = sum(1 for r in reports if r.accepted)
    policy = apply_suite_weight_policy(reports) if reports else {}
    return {"accepted": accepted, "rejected": len(reports) - accepted, "policy": _jsonable(policy),
            "branches": branch_summary(records)}


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda o: o.model_dump() if hasattr(o, "model_dump") else str(o)))


def trajectories_frame(dirs: Iterable[Path]) -> pd.DataFrame:
    """The ``trajectories`` table of many samples' base traces (empty without any)."""
    frames = []
    for d in dirs:
        ev = evidence_from_sample_dir(d, require_sensors=False, sensors=False)  # the trace and actors only
        frame = trajectory_frame(ev.ticks, ev.actor_classes)
        # Batch-wide table: actors are identified as <sample>/actor:<id> (SPEC §3), so (tick, actor) stays unique.
        frames.append(frame.assign(sample_id=d.name, actor_id=d.name + "/actor:" + frame["actor_id"].astype(str)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def manifests_frame(dirs: Iterable[Path]) -> pd.DataFrame:
    """The ``manifests`` table: one row per actor of every sample's manifest."""
    return manifest_frame(load_manifest(SampleDir(d).manifest) for d in dirs)


def validity_reports_frame(dirs: Iterable[Path]) -> pd.DataFrame:
    """The ``validity_reports`` table: every sample's base report and its branches' reports."""
    reports = []
    for d in dirs:
        rec = ValidityRecord.read(SampleDir(d).validity)
        reports.append(ValidityReport.model_validate(rec.base))
        reports += [ValidityReport.model_validate(r) for r in rec.branches.values()]
    return validity_frame(reports)


#: The Dagster asset whose table each GX suite checks (the ``gx_*`` asset checks), named on its Data Docs pages.
SUITE_ASSETS = {"manifests": "scenario_manifests", "trajectories": "trajectories",
                "validity_reports": "validity_reports", "rejection_log": "rejection_log"}


def build_docs(batches: Mapping[str, Sequence[Path]], rejection_logs: Mapping[str, Path], out_dir: Path,
               validated_at: datetime.datetime | None = None,
               stored: Callable[[str, str], Path | None] | None = None) -> Path | None:
    """GX Data Docs over each sample batch's manifests, trajectories and validity reports and each template's
    rejection log (Parquet; absent or empty ones are skipped), one validation per suite and partition (the keys:
    Dagster partition keys, of the sample batch or the template), written under ``out_dir`` (HTML for reviewers,
    opening offline), showing ``validated_at`` (None: now) as when they were validated. None without samples.
    ``stored(suite, partition key)``: the file where the suite's check stored its result there (``DocsBatch.stored``),
    rendered instead of validating that table again."""
    if not any(batches.values()):
        return None
    tables = []
    for key, dirs in sorted(batches.items()):
        if not dirs:
            continue
        tables.append(("manifests", manifests_frame(dirs), key))
        with_trace = [d for d in dirs if SampleDir(d).trace.exists()]
        if with_trace:
            tables.append(("trajectories", trajectories_frame(with_trace), key))
        with_validity = [d for d in dirs if SampleDir(d).validity.exists()]
        if with_validity:
            tables.append(("validity_reports", validity_reports_frame(with_validity), key))
    for key, path in sorted(rejection_logs.items()):
        log = pd.read_parquet(path) if path.exists() else None
        if log is not None and len(log):
            tables.append(("rejection_log", log, key))
    return build_data_docs([DocsBatch(suite, frame, SUITE_ASSETS[suite], key, stored(suite, key) if stored else None)
                            for suite, frame, key in tables], out_dir, validated_at)
