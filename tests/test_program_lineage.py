"""A program file is a DAG input like a template file: editing it marks exactly its manifests stale (SPEC §19)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.inputs import INPUTS, observe_inputs
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import scenario_manifests
from simready.assets.world import world_templates
from simready.resources import ArtifactStore, SourceData
from simready.scenario.scaffold import scaffold_text
from simready.runner.status import graph_status

pytestmark = pytest.mark.slow

RC, TLA = "residential_crosswalk_v3", "two_lane_arterial"


def _key(template_id: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"template": template_id, "batch": "b0000"})


def test_editing_a_program_marks_exactly_its_manifests_stale(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    program = tmp_path / "pulls_out.py"
    program.write_text(scaffold_text("pulls_out"))
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({"suite_id": "t", "batches": 1, "programs": [str(program)],
                                     "templates": {TLA: {"pulls_out": 1}, RC: {"pedestrian_emerges_behind_van": 1}}}))
    source = SourceData(templates_dir=str(templates), suite_file=str(suite))
    resources = {"store": ArtifactStore(root=str(tmp_path / "artifacts")), "source": source}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    # Every template file, the contracts, the suite, and the one template whose intents come from a program file.
    assert observe_inputs(instance, source) == len(list(templates.glob("*.yaml"))) + 3
    assert dg.materialize([*INPUTS, certified_assets], selection=[certified_assets], instance=instance,
                          resources=resources).success
    for t in (TLA, RC):
        assert dg.materialize([*INPUTS, world_templates], selection=[world_templates], partition_key=t,
                              instance=instance, resources=resources).success
        assert dg.materialize([*INPUTS, scenario_manifests], selection=[scenario_manifests], partition_key=_key(t),
                              instance=instance, resources=resources).success
    from simready.definitions import defs

    def status(t: str) -> str:
        rows = {(r.asset, r.partition): r for r in graph_status(defs, instance)}
        return rows[("scenario_manifests", f"{t}|b0000")].status if ("scenario_manifests", f"{t}|b0000") in rows \
            else rows[("scenario_manifests", f"b0000|{t}")].status

    assert status(TLA) == status(RC) == "fresh"
    program.write_text(program.read_text().replace("lane_change_s: tuple[float, float] = (2.5, 3.5)",
                                                   "lane_change_s: tuple[float, float] = (2.5, 3.4)"))
    assert observe_inputs(instance, source) == 1
    assert status(TLA) == "stale"
    assert status(RC) == "fresh"
