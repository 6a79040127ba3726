"""Great Expectations suites (GX Core 1.x, called directly) as Dagster asset checks, one per checked table.

The suites and the tables they read are domain code (:mod:`simready.validity.expectations`,
:mod:`simready.validity.suite`); here each runs on its partition's files and its
expectation results go into the check metadata and GX's own result under ``artifacts/gx_results/``,
which the suite-level ``coverage_report`` asset renders as Data Docs HTML under ``artifacts/data_docs/``. Kept in one
module rather than beside each stage's checks: the four share one way of turning a
suite result into a check result.
"""

from typing import TYPE_CHECKING

import dagster as dg

from simready.assets.metadata import artifact_link
from simready.assets.partitions import sample_partitions, template_partitions
from simready.assets.scenario import rejection_log, scenario_manifests
from simready.assets.stage_io import batch_none_asked, batch_sample_dirs
from simready.checks.findings import findings
from simready.resources import ArtifactStore

if TYPE_CHECKING:
    import pandas as pd


def _result(name: str, df: "pd.DataFrame", context: dg.AssetCheckExecutionContext,
            store: ArtifactStore, empty_ok: bool = False) -> dg.AssetCheckResult:
    from simready.validity.data_docs import partition_label, result_json  # definitions stay light: pybullet, pandas
    from simready.validity.expectations import run_suite  # definitions stay light: pybullet, pandas

    if df.empty:
        if empty_ok:
            return dg.AssetCheckResult(passed=True, metadata={"rows": 0, "note": "the suite asks no sample here"})
        return dg.AssetCheckResult(passed=False, metadata={"reason": "no rows to validate"})
    result = run_suite(name, df)
    # GX's result as the Data Docs render it: coverage_report shows it instead of validating the table again.
    store.write_bytes(store.layout.gx_result(name, partition_label(str(context.partition_key))),
                      result_json(result.gx_result()))
    return dg.AssetCheckResult(
        passed=result.success,
        metadata={
            "suite": name,
            "evaluated": result.evaluated,
            "successful": result.successful,
            "expectations": findings(result.table()),
            "data_docs": _docs_page(context, store, name),
        },
    )


def _docs_page(context: dg.AssetCheckExecutionContext, store: ArtifactStore, suite: str) -> dg.MetadataValue:
    """A link to the partition's validation page on the Data Docs site, which ``coverage_report`` (re)writes over
    the same tables: its path is a function of suite, asset and partition (``validation_page``)."""
    from simready.validity.data_docs import validation_page  # definitions stay light: pybullet, pandas
    from simready.validity.suite import SUITE_ASSETS  # definitions stay light: pybullet, pandas

    page = validation_page(suite, SUITE_ASSETS[suite], str(context.partition_key))
    return artifact_link(store, store.layout.data_docs / page)


@dg.asset_check(asset="trajectories", partitions_def=sample_partitions,
                description="GX: finite poses, speeds within class limits, time increasing per actor.")
def gx_trajectories(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    from simready.validity.suite import trajectories_frame  # definitions stay light: pybullet, pandas

    return _result("trajectories", trajectories_frame(batch_sample_dirs(context, store)), context, store,
                   empty_ok=batch_none_asked(context, store))


@dg.asset_check(asset=scenario_manifests, partitions_def=sample_partitions,
                description="GX: manifest ranges (speeds, dims, clip, dt, splits).")
def gx_manifests(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    from simready.validity.suite import manifests_frame  # definitions stay light: pybullet, pandas

    return _result("manifests", manifests_frame(batch_sample_dirs(context, store)), context, store,
                   empty_ok=batch_none_asked(context, store))


@dg.asset_check(asset=rejection_log, partitions_def=template_partitions,
                description="GX: every rejection row has a stage, a reason and a detail.")
def gx_rejection_log(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    import pandas as pd  # definitions stay light: pandas

    with store.open(store.layout.rejection_log(context.partition_key)) as f:
        df = pd.read_parquet(f)
    if df.empty:
        return dg.AssetCheckResult(passed=True, metadata={"rows": 0, "note": "no rejections to validate"})
    return _result("rejection_log", df, context, store)


@dg.asset_check(asset="validity_reports", partitions_def=sample_partitions,
                description="GX: scores in [0, 1], weights and acceptance consistent with the policy.")
def gx_validity_reports(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    from simready.validity.suite import validity_reports_frame  # definitions stay light: pybullet, pandas

    return _result("validity_reports", validity_reports_frame(batch_sample_dirs(context, store)), context, store,
                   empty_ok=batch_none_asked(context, store))
