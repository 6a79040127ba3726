"""Asset checks for the simulation stage (blocking where later stages rely on them)."""

from pathlib import Path

import dagster as dg

from simready.assets.partitions import sample_partitions
from simready.assets.stage_io import batch_none_asked, batch_of, batch_sample_dirs, stage_inputs
from simready.checks.findings import findings
from simready.artifacts.layout import SampleDir
from simready.artifacts.records import Verdict
from simready.resources import ArtifactStore, SourceData

BACKEND = "dynamic-v1"


def _dirs(context, store: ArtifactStore) -> tuple[str, list[Path]]:
    return batch_of(context)[0], batch_sample_dirs(context, store)


@dg.asset_check(asset="trajectories", partitions_def=sample_partitions, blocking=True,
                description="Every trace is finite, in bounds and accepted by evaluate_trace; every manifest and trace "
                            "matches its recorded sha256.")
def trajectories_accepted(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    from simready.sim.batch import sample_intact  # definitions stay light: pybullet, matplotlib

    _, dirs = _dirs(context, store)
    verdicts = {d.name: Verdict.read(SampleDir(d).verdict) for d in dirs}
    rejected = {s: [f["detail"] for f in v.findings if isinstance(f, dict) and not f.get("passed", True)] + v.issues
                for s, v in verdicts.items() if v.verdict != "accept"}
    corrupt = {d.name: why for d in dirs for ok, why in [sample_intact(d)] if not ok}
    return dg.AssetCheckResult(passed=(bool(verdicts) or batch_none_asked(context, store)) and not rejected and not corrupt, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"samples": len(verdicts), "rejected": findings(rejected, column="reason"),
                                         "corrupt": findings(corrupt, column="reason")})


@dg.asset_check(asset="checkpoints", partitions_def=sample_partitions, blocking=True,
                description="Restoring each checkpoint in a fresh engine reproduces the uninterrupted continuation.")
def checkpoint_restore_reproduces(
    context: dg.AssetCheckExecutionContext, store: ArtifactStore, source: SourceData
) -> dg.AssetCheckResult:
    from simready.sim.batch import restore_reproduces  # definitions stay light: pybullet, matplotlib

    template_id, dirs = _dirs(context, store)
    template, catalog = stage_inputs(source, template_id)
    results = {d.name: restore_reproduces(d, template, catalog, BACKEND) for d in dirs}
    failed = {s: why for s, (ok, why) in results.items() if not ok}
    return dg.AssetCheckResult(passed=(bool(results) or batch_none_asked(context, store)) and not failed, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"checked": len(results), "failed": findings(failed, column="reason"),
                                         "example": next(iter(results.values()))[1] if results else ""})


@dg.asset_check(asset="action_branches", partitions_def=sample_partitions, blocking=True,
                description="Every branch shares its parent's pre-decision history exactly.")
def branches_share_parent_history(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    from simready.sim.batch import branches_share_history  # definitions stay light: pybullet, matplotlib

    _, dirs = _dirs(context, store)
    results = {d.name: branches_share_history(d) for d in dirs}
    failed = {s: why for s, (ok, why) in results.items() if not ok}
    return dg.AssetCheckResult(passed=(bool(results) or batch_none_asked(context, store)) and not failed, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"checked": len(results), "failed": findings(failed, column="reason")})
