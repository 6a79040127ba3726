"""The self-healing cascade: a collider edit is noticed by the sensor, and automation
rematerializes exactly the dependent partitions, whose data versions change while
the others' do not (issue 6 item 7)."""

from __future__ import annotations

import shutil

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.orchestration import daily_batch_schedule, source_files_sensor
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import scenario_manifests
from simready.assets.simulation import trajectories
from simready.assets.world import sensor_rigs, world_templates
from simready.resources import ArtifactStore, SourceData
from tests.fixtures.edits import _data_version, _move_first_curb

pytestmark = pytest.mark.slow

RC, TLA = "residential_crosswalk_v3", "two_lane_arterial"


def _key(t: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"template": t, "batch": "b0000"})


def _asset_defs():
    return {"world_templates": world_templates, "scenario_manifests": scenario_manifests, "trajectories": trajectories}


def test_sensor_then_automation_rematerializes_only_dependents(tmp_path):
    from simready.definitions import defs

    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({"suite_id": "t", "batches": 1, "templates": {
        RC: {"pedestrian_emerges_behind_van": 1}, TLA: {"lead_vehicle_brakes": 1}}}))
    source = SourceData(templates_dir=str(templates), suite_file=str(suite))
    resources = {"store": ArtifactStore(root=str(tmp_path / "artifacts")), "source": source}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    assert dg.materialize([certified_assets], instance=instance, resources=resources).success
    for t in (RC, TLA):
        assert dg.materialize([world_templates], partition_key=t, instance=instance, resources=resources).success
        assert dg.materialize([scenario_manifests, trajectories], partition_key=_key(t), instance=instance,
                              resources=resources).success
    before = {(a, t): _data_version(instance, a, str(_key(t))) for a in ("scenario_manifests", "trajectories") for t in (RC, TLA)}
    # The first automation tick only sets the cursor; nothing is stale yet.
    result = dg.evaluate_automation_conditions(defs=defs, instance=instance)

    # The sensor records hashes first, then notices exactly the edited template.
    first = source_files_sensor(dg.build_sensor_context(instance=instance, resources={"source": source}))
    assert first.skip_reason is not None and not first.run_requests
    cursor = dg.build_sensor_context(instance=instance, resources={"source": source})
    source_files_sensor(cursor)
    _move_first_curb(templates / f"{RC}.yaml", 0.01)
    ctx = dg.build_sensor_context(instance=instance, resources={"source": source}, cursor=cursor.cursor)
    requests = source_files_sensor(ctx).run_requests
    assert [(r.asset_selection, r.partition_key) for r in requests] == [([world_templates.key, sensor_rigs.key], RC)]
    assert dg.materialize([world_templates], partition_key=RC, instance=instance, resources=resources).success

    # Automation: each tick requests what became stale; we execute it like the daemon would.
    requested: set[tuple[str, str]] = set()
    for _ in range(4):
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        batch = {(k, str(p)) for k in ("scenario_manifests", "trajectories", "checkpoints", "action_branches",
                                        "rejection_log", "coverage_report")
                 for p in result.get_requested_partitions(dg.AssetKey(k))}
        for asset in ("scenario_manifests", "trajectories"):
            for name, part in sorted(batch):
                if name == asset:
                    assert dg.materialize([_asset_defs()[asset]], partition_key=_key(RC) if RC in part else part,
                                          instance=instance, resources=resources).success
        requested |= batch
        if not batch:
            break
    sample_level = {(a, p) for a, p in requested if a in ("scenario_manifests", "trajectories")}
    assert sample_level == {("scenario_manifests", str(_key(RC))), ("trajectories", str(_key(RC)))}
    after = {(a, t): _data_version(instance, a, str(_key(t))) for a in ("scenario_manifests", "trajectories") for t in (RC, TLA)}
    assert after[("scenario_manifests", RC)] != before[("scenario_manifests", RC)]
    assert after[("trajectories", RC)] != before[("trajectories", RC)]
    assert after[("scenario_manifests", TLA)] == before[("scenario_manifests", TLA)]
    assert after[("trajectories", TLA)] == before[("trajectories", TLA)]


def test_daily_schedule_registers_next_batch_and_requests_it_per_template():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(batch_partitions.name, ["b0000", "b0001"])
        requests = list(daily_batch_schedule(dg.build_schedule_context(instance=instance)))
        assert "b0002" in instance.get_dynamic_partitions(batch_partitions.name)
    keys = sorted(str(r.partition_key) for r in requests)
    assert keys == sorted(f"b0002|{t}" for t in ("city_crossing", "residential_crosswalk_v3", "two_lane_arterial",
                                                 "urban_signalized_intersection"))
