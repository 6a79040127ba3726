"""Dagster simulation stage: trajectories, checkpoints, branches, and the staleness cascade."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import scenario_manifests
from simready.assets.measurement import observations_and_truth
from simready.assets.simulation import checkpoints_and_branches, trajectories
from simready.assets.validity import reference_pools, validity_reports
from simready.assets.world import sensor_rigs, world_templates
from simready.checks.simulation import (
    branches_share_parent_history,
    checkpoint_restore_reproduces,
    trajectories_accepted,
)
from simready.artifacts.layout import ArtifactLayout
from simready.artifacts.records import Outcomes, Results, ValidityRecord
from simready.resources import ArtifactStore, SourceData
from tests.fixtures.edits import _data_version, _move_first_curb

pytestmark = pytest.mark.slow

RC, TLA = "residential_crosswalk_v3", "two_lane_arterial"
SAMPLE_ASSETS = [scenario_manifests, trajectories, checkpoints_and_branches, observations_and_truth, validity_reports,
                 trajectories_accepted, checkpoint_restore_reproduces, branches_share_parent_history]


def _setup(tmp_path: Path) -> tuple[dict, Path]:
    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({"suite_id": "t", "batches": 1, "reference_per_intent": 2, "templates": {
        RC: {"pedestrian_emerges_behind_van": 1}, TLA: {"lead_vehicle_brakes": 1}},
        "observation": {"pre_s": 0.2, "post_s": 0.3, "set": ["camera.width_px=320", "camera.height_px=180",
                                                "lidar.azimuth_steps=256"], "video": False}}))
    return {"store": ArtifactStore(root=str(tmp_path / "artifacts")),
            "source": SourceData(templates_dir=str(templates), suite_file=str(suite))}, templates


def _key(template_id: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"template": template_id, "batch": "b0000"})


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sim")
    resources, templates = _setup(tmp)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    assert dg.materialize([certified_assets], instance=instance, resources=resources).success
    results = {}
    for tid in (RC, TLA):
        assert dg.materialize([world_templates, sensor_rigs, reference_pools], partition_key=tid, instance=instance,
                              resources=resources).success
        results[tid] = dg.materialize(SAMPLE_ASSETS, partition_key=_key(tid), instance=instance, resources=resources,
                                      selection=[scenario_manifests, trajectories, checkpoints_and_branches,
                                                 observations_and_truth, validity_reports])
    return tmp, resources, templates, instance, results


def test_batch_rolls_out_checkpoints_and_branches(world):
    tmp, _, _, _, results = world
    for tid, result in results.items():
        assert result.success, tid
        evaluations = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
        assert evaluations == {"trajectories_accepted": True, "checkpoint_restore_reproduces": True,
                               "branches_share_parent_history": True}, tid
    sample = ArtifactLayout(tmp / "artifacts").batch(RC, "b0000").samples()[0]
    outcomes = Outcomes.read(sample.outcomes)
    assert {b.label for b in outcomes.branches} == {"brake", "coast"}
    assert all(b.parent_checkpoint == outcomes.checkpoint for b in outcomes.branches)
    assert sample.checkpoint(outcomes.checkpoint).exists()
    # The branches' step draws every sample's picture (the trajectories' step of the same run only the first's).
    for tid in results:
        assert all(s.rollout_plot.is_file() for s in ArtifactLayout(tmp / "artifacts").batch(tid, "b0000").samples())


def test_observations_feed_the_gate_with_sensor_evidence(world):
    tmp, _, _, _, _ = world
    sample = ArtifactLayout(tmp / "artifacts").batch(RC, "b0000").samples()[0]
    results = Results.read(sample.observations.results)
    assert {f.sensor for f in results.files if f.sensor} >= {"front_camera", "roof_lidar", "front_radar"}
    validity = ValidityRecord.read(sample.validity)
    assert validity.sensor_evidence is True
    sensor = next(c for c in validity.base["checks"] if c["check"] == "sensor")
    assert sensor["detail"]["positions_compared"] > 0
    assert set(validity.branches) == {"brake", "coast"}


def test_collider_edit_marks_exactly_its_templates_sim_assets_stale(world):
    from dagster._core.definitions.data_version import StaleStatus

    from simready.definitions import defs
    from simready.runner.status import _resolver, graph_status

    _, resources, templates, instance, _ = world
    _move_first_curb(templates / f"{RC}.yaml", 0.01)  # one curb collider in the crosswalk template
    assert dg.materialize([world_templates], partition_key=RC, instance=instance, resources=resources).success
    assert dg.materialize([scenario_manifests], partition_key=_key(RC), instance=instance, resources=resources).success

    resolver, _ = _resolver(defs, instance)
    assert resolver.get_status(dg.AssetKey("trajectories"), _key(RC)) == StaleStatus.STALE  # Dagster itself
    assert resolver.get_status(dg.AssetKey("trajectories"), _key(TLA)) == StaleStatus.FRESH

    rows = {(r.asset, r.partition): r.status for r in graph_status(defs, instance)}
    for asset in ("trajectories", "checkpoints", "action_branches"):
        assert rows[(asset, str(_key(RC)))] == "stale", asset
        assert rows[(asset, str(_key(TLA)))] == "fresh", asset


def _edit_rig_only(template_file: Path) -> None:
    """A LiDAR range, a radar range and the LiDAR mount height: settings no ladder stage reads."""
    data = yaml.safe_load(template_file.read_text())
    rig = data["sensor_rig"]
    rig["sensors"]["roof_lidar"]["max_range_m"] = 100.0
    rig["sensors"]["front_radar"]["max_range_m"] = 120.0
    rig["mounts"]["roof_lidar"]["translation_m"][2] += 0.02
    template_file.write_text(yaml.safe_dump(data, sort_keys=False))


def test_rig_edit_marks_observations_stale_but_not_trajectories(world):
    from simready.definitions import defs
    from simready.runner.status import graph_status

    _, resources, templates, instance, _ = world
    world_before = _data_version(instance, "world_templates", TLA)
    rig_before = _data_version(instance, "sensor_rigs", TLA)
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance)  # sets the cursor
    _edit_rig_only(templates / f"{TLA}.yaml")
    assert dg.materialize([world_templates, sensor_rigs], partition_key=TLA, instance=instance,
                          resources=resources).success
    assert _data_version(instance, "world_templates", TLA) == world_before  # the world did not change
    assert _data_version(instance, "sensor_rigs", TLA) != rig_before

    rows = {(r.asset, r.partition): r for r in graph_status(defs, instance)}
    for asset in ("scenario_manifests", "trajectories", "checkpoints", "action_branches"):
        assert rows[(asset, str(_key(TLA)))].status == "fresh", asset
    for asset in ("sensor_observations", "perception_truth"):
        assert rows[(asset, str(_key(TLA)))].status == "stale", asset
    assert "sensor_rigs" in rows[("sensor_observations", str(_key(TLA)))].reason

    # Automation agrees: it requests the observations again, not the (unchanged) world's dependents.
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=tick.cursor)
    requested = {k: {str(p) for p in tick.get_requested_partitions(dg.AssetKey(k))}
                 for k in ("scenario_manifests", "trajectories", "checkpoints", "action_branches", "sensor_observations")}
    assert str(_key(TLA)) in requested["sensor_observations"]
    for asset in ("scenario_manifests", "trajectories", "checkpoints", "action_branches"):
        assert str(_key(TLA)) not in requested[asset], asset


def test_measurement_checks_catch_a_tampered_file(world):
    from simready.measurement.integrity import incomplete_frames, missing_or_corrupt

    tmp, _, _, _, _ = world
    obs = next((tmp / "artifacts" / "samples" / RC / "b0000").glob("*/observations"))
    assert missing_or_corrupt(obs) == [] and incomplete_frames(obs) == []
    ply = next(obs.glob("roof_lidar/*.ply"))
    original = ply.read_bytes()
    try:
        ply.write_bytes(original + b"\n")
        assert any("sha256 differs" in p for p in missing_or_corrupt(obs))
    finally:
        ply.write_bytes(original)


def test_simulation_checks_catch_one_changed_value_in_a_trace(world):
    from types import SimpleNamespace

    from tests.fixtures.samples import change_one_value

    tmp, resources, _, _, _ = world
    trace = next((tmp / "artifacts" / "samples" / TLA / "b0000").glob("*/trace.parquet"))
    # The check bodies over the finished partition; materializing would roll the trace out again first.
    context = SimpleNamespace(partition_key=_key(TLA))
    original = trace.read_bytes()
    try:
        change_one_value(trace)
        accepted, shared = (check.node_def.compute_fn.decorated_fn(context, resources["store"])
                            for check in (trajectories_accepted, branches_share_parent_history))
    finally:
        trace.write_bytes(original)
    assert not accepted.passed and not shared.passed
    (row,) = accepted.metadata["corrupt"].value.records
    assert row.data["reason"].startswith(f"{trace}: sha256: expected ")
    (row,) = shared.metadata["failed"].value.records
    assert row.data["reason"].startswith(f"{trace}: sha256: expected ")


def test_a_template_the_suite_does_not_sample_has_complete_empty_batches(world):
    """The main job materializes every template file's batches; one the suite does not sample is empty and its
    checks pass (nothing was asked), while an empty batch that was asked for samples fails them."""
    import json
    from types import SimpleNamespace

    from simready.checks.expectations import gx_manifests, gx_trajectories

    tmp, resources, _, instance, _ = world
    usi = "urban_signalized_intersection"
    assert dg.materialize([world_templates, sensor_rigs, reference_pools], partition_key=usi, instance=instance,
                          resources=resources).success
    result = dg.materialize(SAMPLE_ASSETS, partition_key=_key(usi), instance=instance, resources=resources,
                            selection=[scenario_manifests, trajectories, checkpoints_and_branches,
                                       observations_and_truth, validity_reports])
    assert result.success
    assert {e.check_name: e.passed for e in result.get_asset_check_evaluations()} == {
        "trajectories_accepted": True, "checkpoint_restore_reproduces": True, "branches_share_parent_history": True}
    context = SimpleNamespace(partition_key=_key(usi))
    checks = (trajectories_accepted, gx_trajectories, gx_manifests)
    assert all(check.node_def.compute_fn.decorated_fn(context, resources["store"]).passed for check in checks)
    record = ArtifactLayout(tmp / "artifacts").batch(usi, "b0000").record
    original = record.read_bytes()
    try:
        record.write_text(json.dumps({**json.loads(original), "requested": 1}))
        assert not any(check.node_def.compute_fn.decorated_fn(context, resources["store"]).passed for check in checks)
    finally:
        record.write_bytes(original)
