"""The whole DAG on an imported map (issue 17 item 2): world, scenarios, rollouts, branches, observations, truth,
reference pool, validity, splits and coverage materialize, with every asset check passing.

As in ``test_maps_staleness``, the map is imported under a shipped template id in a copy of the templates folder
(template partitions are the shipped ids); the suite observes a short window without branch renders to stay fast.
"""

from __future__ import annotations

import dagster as dg
import pytest
import yaml

from simready.assets.catalog import certified_assets
from simready.assets.measurement import observations_and_truth
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import rejection_log, scenario_manifests
from simready.assets.simulation import checkpoints_and_branches, trajectories
from simready.assets.suite import coverage_report, split_assignments
from simready.assets.validity import reference_pools, validity_reports
from simready.assets.world import sensor_rigs, world_templates
from simready.definitions import defs
from simready.resources import ArtifactStore, SourceData
from tests.fixtures.edits import INTENT, TLA, _data

pytestmark = pytest.mark.slow


def _checks_for(assets: list[dg.AssetsDefinition]) -> list[dg.AssetChecksDefinition]:
    keys = {k for a in assets for k in a.keys}
    return [c for c in defs.asset_checks if {ck.asset_key for ck in c.check_keys} <= keys]


def test_whole_dag_runs_on_an_imported_map(tmp_path):
    templates, _ = _data(tmp_path)
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({
        "suite_id": "imported", "batches": 1, "reference_per_intent": 1, "templates": {TLA: {INTENT: 1}},
        "observation": {"pre_s": 0.2, "post_s": 0.3, "branches": False, "video": False}}))
    source = SourceData(templates_dir=str(templates), suite_file=str(suite))
    resources = {"store": ArtifactStore(root=str(tmp_path / "artifacts")), "source": source}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    sample = dg.MultiPartitionKey({"template": TLA, "batch": "b0000"})
    stages = [
        ([certified_assets], None),
        ([world_templates, sensor_rigs], TLA),
        ([scenario_manifests, trajectories, checkpoints_and_branches], sample),
        ([observations_and_truth], sample),
        ([reference_pools, rejection_log], TLA),
        ([validity_reports], sample),
        ([split_assignments], None),
        ([coverage_report], None),
    ]
    checked = 0
    for assets, partition in stages:
        result = dg.materialize([*assets, *_checks_for(assets)], partition_key=partition, instance=instance,
                                resources=resources)
        assert result.success, [a.key for a in assets]
        evaluations = result.get_asset_check_evaluations()
        assert all(e.passed for e in evaluations), [(e.asset_key, e.check_name) for e in evaluations if not e.passed]
        checked += len(evaluations)
    assert checked >= 10
    record = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey("validity_reports")),
                                             limit=1).records[0]
    metadata = record.event_log_entry.asset_materialization.metadata
    assert int(metadata["bases_accepted"].value) >= 1
    assert int(metadata["with_sensor_evidence"].value) == 1
