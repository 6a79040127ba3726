"""Dagster layer for the world stage: materialization, checks, data versions."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.world import world_templates
from simready.checks.world import catalog_certified, template_assets_certified, template_valid
from simready.resources import ArtifactStore, SourceData
from tests.fixtures.edits import _data_version, _move_first_curb

pytestmark = pytest.mark.slow

RESIDENTIAL = "residential_crosswalk_v3"


def _resources(tmp: Path, templates_dir: Path = paths.TEMPLATES_DIR) -> dict:
    return {
        "store": ArtifactStore(root=str(tmp / "artifacts")),
        "source": SourceData(templates_dir=str(templates_dir)),
    }


def _materialize_world(instance: dg.DagsterInstance, resources: dict, template_ids: list[str]) -> dict[str, dg.ExecuteInProcessResult]:
    cat = dg.materialize([certified_assets, catalog_certified], instance=instance, resources=resources)
    assert cat.success
    out = {}
    for tid in template_ids:
        out[tid] = dg.materialize(
            [world_templates, template_valid, template_assets_certified],
            partition_key=tid,
            instance=instance,
            resources=resources,
            raise_on_error=False,
        )
    return out


def test_materialize_world_on_ephemeral_instance(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    ids = world_templates.partitions_def.get_partition_keys()
    assert set(ids) >= {RESIDENTIAL, "urban_signalized_intersection", "two_lane_arterial"}
    results = _materialize_world(instance, _resources(tmp_path), ids)
    for tid, result in results.items():
        assert result.success, tid
        evaluations = result.get_asset_check_evaluations()
        assert {e.check_name for e in evaluations} == {"template_valid", "template_assets_certified"}
        assert all(e.passed for e in evaluations), tid
        assert (tmp_path / "artifacts" / "templates" / tid / "plot.png").stat().st_size > 10_000
    assert (tmp_path / "artifacts" / "catalog" / "certification.json").exists()


def test_editing_one_templates_collider_changes_only_its_data_version(tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    instance = dg.DagsterInstance.ephemeral()
    ids = world_templates.partitions_def.get_partition_keys()
    resources = _resources(tmp_path, templates)
    _materialize_world(instance, resources, ids)
    before = {tid: _data_version(instance, "world_templates", tid) for tid in ids}

    _move_first_curb(templates / f"{RESIDENTIAL}.yaml", 0.01)  # one curb collider, 1 cm east
    _materialize_world(instance, resources, ids)
    after = {tid: _data_version(instance, "world_templates", tid) for tid in ids}

    assert after[RESIDENTIAL] != before[RESIDENTIAL]
    for tid in ids:
        if tid != RESIDENTIAL:
            assert after[tid] == before[tid], tid


def test_invalid_template_fails_its_check_and_nothing_half_written(tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    data = yaml.safe_load((templates / f"{RESIDENTIAL}.yaml").read_text())
    data["instances"][0]["asset"] = "asset:no_such_family/none"
    (templates / f"{RESIDENTIAL}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    instance = dg.DagsterInstance.ephemeral()
    results = _materialize_world(instance, _resources(tmp_path, templates), [RESIDENTIAL])
    evaluations = {e.check_name: e for e in results[RESIDENTIAL].get_asset_check_evaluations()}
    assert not evaluations["template_assets_certified"].passed
    out = tmp_path / "artifacts" / "templates"
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_definitions_load_and_list_world_assets():
    from simready.definitions import defs

    keys = {spec.key.to_user_string() for spec in defs.resolve_all_asset_specs()}
    assert {"certified_assets", "world_templates"} <= keys
    assert defs.resolve_job_def("templates_job") is not None
