"""Great Expectations suites (GX Core 1.x, called directly) as Dagster asset checks.

Expectation results go into the check metadata; Data Docs HTML is built by the
suite-level ``coverage_report`` asset under ``artifacts/data_docs/``.
"""

import pandas as pd

import dagster as dg

from simready.assets.partitions import sample_partitions, template_partitions
from simready.assets.scenario import batch_sample_dirs, rejection_log, scenario_manifests
from simready.resources import ArtifactStore


def _dirs(context, store: ArtifactStore):
    return batch_sample_dirs(context, store)


def trajectories_frame(dirs) -> pd.DataFrame:
    from simready.validity.evidence import evidence_from_sample_dir
    from simready.validity.expectations import trajectory_frame

    frames = []
    for d in dirs:
        ev = evidence_from_sample_dir(d, require_sensors=False)
        frame = trajectory_frame(ev.ticks, ev.actor_classes)
        # Batch-wide table: actors are identified as <sample>/actor:<id> (SPEC §3), so (tick, actor) stays unique.
        frames.append(frame.assign(sample_id=d.name, actor_id=d.name + "/actor:" + frame["actor_id"].astype(str)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def manifests_frame(dirs) -> pd.DataFrame:
    from simready.validity.expectations import manifest_frame
    from simready.scenario.manifest import load_manifest

    return manifest_frame(load_manifest(d / "manifest.json") for d in dirs)


def validity_reports_frame(dirs) -> pd.DataFrame:
    import json

    from simready.validity.expectations import validity_frame
    from simready.validity.gate import ValidityReport

    reports = []
    for d in dirs:
        rec = json.loads((d / "validity.json").read_text())
        reports.append(ValidityReport.model_validate(rec["base"]))
        reports += [ValidityReport.model_validate(r) for r in rec["branches"].values()]
    return validity_frame(reports)


def _result(name: str, df: pd.DataFrame) -> dg.AssetCheckResult:
    from simready.validity.expectations import run_suite

    if df.empty:
        return dg.AssetCheckResult(passed=False, metadata={"reason": "no rows to validate"})
    result = run_suite(name, df)
    return dg.AssetCheckResult(
        passed=result.success,
        metadata={
            "suite": name,
            "evaluated": result.evaluated,
            "successful": result.successful,
            "expectations": dg.MetadataValue.json(result.table()),
        },
    )


@dg.asset_check(asset="trajectories", partitions_def=sample_partitions,
                description="GX: finite poses, speeds within class limits, time increasing per actor.")
def gx_trajectories(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    return _result("trajectories", trajectories_frame(_dirs(context, store)))


@dg.asset_check(asset=scenario_manifests, partitions_def=sample_partitions,
                description="GX: manifest ranges (speeds, dims, clip, dt, splits).")
def gx_manifests(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    return _result("manifests", manifests_frame(_dirs(context, store)))


@dg.asset_check(asset=rejection_log, partitions_def=template_partitions,
                description="GX: every rejection row has a stage, a reason and a detail.")
def gx_rejection_log(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    path = store.path("samples", context.partition_key, "rejection_log.parquet")
    df = pd.read_parquet(path)
    if df.empty:
        return dg.AssetCheckResult(passed=True, metadata={"rows": 0, "note": "no rejections to validate"})
    return _result("rejection_log", df)


@dg.asset_check(asset="validity_reports", partitions_def=sample_partitions,
                description="GX: scores in [0, 1], weights and acceptance consistent with the policy.")
def gx_validity_reports(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    return _result("validity_reports", validity_reports_frame(_dirs(context, store)))
