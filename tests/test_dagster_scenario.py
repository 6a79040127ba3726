"""Dagster scenario stage: batch partitions, manifests, rejection log, coverage, staleness."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import rejection_log, scenario_manifests
from simready.assets.suite import coverage_report
from simready.assets.world import world_templates
from simready.checks.scenario import manifests_pass_ladder, manifests_schema_valid, rejection_reasons_nonempty
from simready.artifacts.layout import BatchDir
from simready.resources import ArtifactStore, SourceData
from tests.fixtures.edits import _move_first_curb

pytestmark = pytest.mark.slow

RC = "residential_crosswalk_v3"


def _setup(tmp_path: Path, n_per_batch: int = 2, batches: int = 2) -> tuple[dict, Path]:
    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({
        "suite_id": "test", "batches": batches,
        "templates": {RC: {"pedestrian_emerges_behind_van": n_per_batch}},
    }))
    resources = {
        "store": ArtifactStore(root=str(tmp_path / "artifacts")),
        "source": SourceData(templates_dir=str(templates), suite_file=str(suite)),
    }
    return resources, templates


def _run_all(instance, resources, batches):
    assert dg.materialize([certified_assets], instance=instance, resources=resources).success
    assert dg.materialize([world_templates], partition_key=RC, instance=instance, resources=resources).success
    for b in batches:
        key = dg.MultiPartitionKey({"template": RC, "batch": b})
        r = dg.materialize([scenario_manifests, manifests_schema_valid, manifests_pass_ladder], partition_key=key, instance=instance,
                           resources=resources, selection=[scenario_manifests])
        assert r.success
        evaluations = {e.check_name: e.passed for e in r.get_asset_check_evaluations()}
        assert evaluations == {"manifests_schema_valid": True, "manifests_pass_ladder": True}
    r = dg.materialize([rejection_log, rejection_reasons_nonempty], partition_key=RC, instance=instance,
                       resources=resources, selection=[rejection_log])
    assert r.success
    assert dg.materialize([coverage_report], instance=instance, resources=resources).success


def test_batches_materialize_disjoint_samples_and_counts_add_up(tmp_path):
    resources, _ = _setup(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000", "b0001"])
    _run_all(instance, resources, ["b0000", "b0001"])
    root = tmp_path / "artifacts" / "samples" / RC
    ids = [sorted(p.parent.name for p in (root / b).glob("*/manifest.json")) for b in ("b0000", "b0001")]
    assert len(ids[0]) == len(ids[1]) == 2
    assert not set(ids[0]) & set(ids[1])
    for b in ("b0000", "b0001"):
        summary = json.loads(BatchDir(root / b).record.read_text())
        cells = json.loads(BatchDir(root / b).cells.read_text())
        assert summary["proposals"] == summary["accepted"] + summary["rejected"]
        assert sum(c["proposals"] for c in cells.values()) == summary["proposals"]
        assert sum(c["accepted"] for c in cells.values()) == summary["accepted"]
    cov = json.loads((tmp_path / "artifacts" / "coverage" / "coverage.json").read_text())
    assert sum(r["accepted"] for r in cov["cells"]) == 4
    assert (tmp_path / "artifacts" / "coverage" / "coverage_heatmap.png").exists()


def test_second_batch_does_not_change_first(tmp_path):
    """Batch b0000 is the same whether or not b0001 exists (slices of one sequence)."""
    resources, _ = _setup(tmp_path, batches=1)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    _run_all(instance, resources, ["b0000"])
    batch0 = tmp_path / "artifacts" / "samples" / RC / "b0000"
    first = {p.parent.name: p.read_bytes() for p in batch0.glob("*/manifest.json")}
    instance.add_dynamic_partitions(batch_partitions.name, ["b0001"])
    _run_all(instance, resources, ["b0000", "b0001"])
    again = {p.parent.name: p.read_bytes() for p in batch0.glob("*/manifest.json")}
    assert first == again


def test_template_edit_marks_its_manifests_stale(tmp_path):
    from simready.definitions import defs
    from simready.runner.status import graph_status

    resources, templates = _setup(tmp_path, batches=1)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    _run_all(instance, resources, ["b0000"])
    _move_first_curb(templates / f"{RC}.yaml", 0.01)
    assert dg.materialize([world_templates], partition_key=RC, instance=instance, resources=resources).success
    rows = {(r.asset, r.partition): r for r in graph_status(defs, instance)}
    manifest_row = rows[("scenario_manifests", "b0000|" + RC)]
    assert manifest_row.status == "stale", manifest_row
    assert "world_templates" in manifest_row.reason or "data version" in manifest_row.reason
    # Not transitive in Dagster, but our walker propagates it to the template's rejection log.
    assert rows[("rejection_log", RC)].status == "stale"


def test_edited_split_in_a_manifest_is_detected_and_refused(tmp_path):
    """Hand-editing a stored manifest's split breaks its replay (hash mismatch), which the blocking
    ``manifests_pass_ladder`` check runs on every stored manifest."""
    from simready.scenario.generator import replay
    from simready.scenario.manifest import load_manifest

    resources, _ = _setup(tmp_path, n_per_batch=1, batches=1)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    _run_all(instance, resources, ["b0000"])
    manifest_file = next((tmp_path / "artifacts" / "samples" / RC / "b0000").glob("*/manifest.json"))
    assert replay(load_manifest(manifest_file)) == (True, "")
    data = json.loads(manifest_file.read_text())
    data["split"] = "test" if data["split"] != "test" else "train"
    manifest_file.write_text(json.dumps(data, sort_keys=True))
    ok, why = replay(load_manifest(manifest_file))
    assert not ok and why
