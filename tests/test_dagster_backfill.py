"""A backfill over a range of batch partitions, run by Dagster's own backfill daemon loop in-process.

This is what the UI's "Materialize → backfill" launches: one run per selected
partition, submitted by the daemon. The code location is loaded the way
``dagster dev`` loads it (a code server for ``simready.definitions``).
"""

from __future__ import annotations

import logging
import os
import time

import dagster as dg
import pytest

from simready.assets.partitions import batch_partitions
from simready.artifacts.layout import ArtifactLayout

pytestmark = pytest.mark.slow

RC = "residential_crosswalk_v3"
BATCHES = ("b0000", "b0001")
SYNC_INSTANCE = {
    "run_launcher": {"module": "dagster._core.launcher.sync_in_memory_run_launcher", "class": "SyncInMemoryRunLauncher"},
    "run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"},
}


def _latest_data_version(instance: dg.DagsterInstance, asset: str, partition: str) -> str | None:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition]), limit=1).records
    return records[0].event_log_entry.asset_materialization.tags.get("dagster/data_version") if records else None


def test_backfill_over_a_batch_range_materializes_each_partition(tmp_path, monkeypatch):
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.test_utils import create_test_daemon_workspace_context, instance_for_test
    from dagster._core.workspace.load_target import ModuleTarget
    from dagster._daemon.backfill import execute_backfill_iteration

    from simready.assets.catalog import certified_assets
    from simready.assets.world import world_templates
    from simready.resources import local_resources

    monkeypatch.setenv("SIMREADY_ARTIFACTS", str(tmp_path / "artifacts"))  # read by the code server too
    with instance_for_test(overrides=SYNC_INSTANCE) as instance:
        instance.add_dynamic_partitions(batch_partitions.name, list(BATCHES))
        resources = local_resources()
        assert dg.materialize([certified_assets], instance=instance, resources=resources).success
        assert dg.materialize([world_templates], partition_key=RC, instance=instance, resources=resources).success
        partitions = [str(dg.MultiPartitionKey({"template": RC, "batch": b})) for b in BATCHES]
        target = ModuleTarget(module_name="simready.definitions", attribute="defs",
                              working_directory=os.getcwd(), location_name="simready")
        with create_test_daemon_workspace_context(target, instance) as workspace:
            backfill = PartitionBackfill.from_asset_partitions(
                backfill_id="range", asset_graph=workspace.create_request_context().asset_graph,
                partition_names=partitions, asset_selection=[dg.AssetKey("scenario_manifests")],
                backfill_timestamp=time.time(), tags={}, dynamic_partitions_store=instance, all_partitions=False,
                title="two batches", description=None, run_config=None)
            instance.add_backfill(backfill)
            for _ in range(20):
                list(execute_backfill_iteration(workspace, logging.getLogger("backfill")))
                if instance.get_backfill("range").status != BulkActionStatus.REQUESTED:
                    break
        assert instance.get_backfill("range").status == BulkActionStatus.COMPLETED_SUCCESS
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": "range"}))
        assert sorted(r.tags["dagster/partition"] for r in runs) == sorted(partitions)
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        versions = {p: _latest_data_version(instance, "scenario_manifests", p) for p in partitions}
        assert all(versions.values()) and len(set(versions.values())) == len(partitions)
    for b in BATCHES:
        assert ArtifactLayout(tmp_path / "artifacts").batch(RC, b).record.is_file()
