"""Programs from files through the whole DAG: a new-intent scaffold and the shipped data/programs intents are
sampled, rolled out, checkpointed with matched brake / coast branches, observed and gated (SPEC §19)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.measurement import observations_and_truth
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import scenario_manifests
from simready.assets.simulation import checkpoints_and_branches, trajectories
from simready.assets.validity import reference_pools, validity_reports
from simready.assets.world import sensor_rigs, world_templates
from simready.artifacts.layout import ArtifactLayout
from simready.artifacts.records import Outcomes, ValidityRecord
from simready.resources import ArtifactStore, SourceData
from simready.scenario.scaffold import write_scaffold

pytestmark = pytest.mark.slow

RC, TLA = "residential_crosswalk_v3", "two_lane_arterial"
SUITE = paths.DATA_DIR / "suites" / "programs.yaml"


def _key(template_id: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"template": template_id, "batch": "b0000"})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("user-programs")
    templates = tmp / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    scaffold = write_scaffold("parked_car_pulls_out", tmp / "parked_car_pulls_out.py")
    shipped = yaml.safe_load(SUITE.read_text())
    # One sample of each program's intent (the shipped suite asks two): what is checked is that each goes through
    # every stage, not how many.
    plan = {"suite_id": "t", "batches": 1, "reference_per_intent": 2,
            "programs": [*shipped["programs"], str(scaffold)],
            "templates": {RC: dict.fromkeys(shipped["templates"][RC], 1), TLA: {"parked_car_pulls_out": 1}},
            "observation": {"pre_s": 0.2, "post_s": 0.3, "set": ["camera.width_px=320", "camera.height_px=180",
                                                                 "lidar.azimuth_steps=256"], "video": False}}
    suite = tmp / "suite.yaml"
    suite.write_text(yaml.safe_dump(plan))
    resources = {"store": ArtifactStore(root=str(tmp / "artifacts")),
                 "source": SourceData(templates_dir=str(templates), suite_file=str(suite))}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    assert dg.materialize([certified_assets], instance=instance, resources=resources).success
    for tid in (RC, TLA):
        assert dg.materialize([world_templates, sensor_rigs, reference_pools], partition_key=tid, instance=instance,
                              resources=resources).success
        assert dg.materialize([scenario_manifests, trajectories, checkpoints_and_branches, observations_and_truth,
                               validity_reports], partition_key=_key(tid), instance=instance,
                              resources=resources).success, tid
    yield tmp, plan
    shutil.rmtree(tmp, ignore_errors=True)  # the batches' observations: tens of MB


def test_every_sample_is_branched_observed_and_accepted_with_its_pair_whole(run):
    tmp, plan = run
    intents = {}
    for tid in (RC, TLA):
        for sample in ArtifactLayout(tmp / "artifacts").batch(tid, "b0000").samples():
            manifest = yaml.safe_load(sample.manifest.read_text())
            intents[manifest["intent"]] = intents.get(manifest["intent"], 0) + 1
            assert manifest["realized"]["program_sha256"], sample.root
            outcomes = Outcomes.read(sample.outcomes)
            assert {b.label for b in outcomes.branches} == {"brake", "coast"}
            validity = ValidityRecord.read(sample.validity)
            assert validity.base["accepted"], (sample.root, validity.base)
            assert set(validity.branches) == {"brake", "coast"}
            assert all(rep["accepted"] for rep in validity.branches.values()), (sample.root, validity.branches)
    wanted = {**plan["templates"][RC], **plan["templates"][TLA]}
    assert intents == wanted
