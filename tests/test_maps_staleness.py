"""Staleness of imported templates (issue 17 item 5): a map edit is noticed, the template must be re-imported, and
the re-import marks exactly that template's dependents stale.

The map is imported under the id of a shipped template (``two_lane_arterial``, in a copy of the templates
folder), because template partitions are the shipped template ids; its suite entry samples the occluded
crossing, which the imported straight road offers.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.orchestration import changed_requests, source_file_hashes, source_files_sensor, source_versions
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import scenario_manifests
from simready.assets.simulation import trajectories
from simready.assets.world import sensor_rigs, world_templates
from simready.cli import main
from simready.resources import ArtifactStore, SourceData
from simready.world.template_build import templates_imported_from, validate_template_file
from tests.fixtures.edits import INTENT, RC, TLA, _data, _data_version, _import, _widen_sidewalk


def test_an_edited_map_makes_its_template_stale_until_reimported(tmp_path):
    templates, xodr = _data(tmp_path)
    assert validate_template_file(templates / f"{TLA}.yaml").valid
    assert templates_imported_from(templates, "straight.xodr") == [TLA]
    before = source_file_hashes(SourceData(templates_dir=str(templates)))
    assert "maps/straight.xodr" in before
    before_versions = source_versions(SourceData(templates_dir=str(templates)))
    _widen_sidewalk(xodr)
    build = validate_template_file(templates / f"{TLA}.yaml")
    assert not build.valid
    assert "provenance.source_sha256" in build.errors[0] and "simready template import" in build.errors[0]
    now = source_file_hashes(SourceData(templates_dir=str(templates)))
    assert {k for k in now if now[k] != before[k]} == {"maps/straight.xodr"}
    # The map is part of its template's input version: the change requests exactly that template.
    requests = changed_requests(before_versions, source_versions(SourceData(templates_dir=str(templates))))
    assert [(r.asset_selection, r.partition_key) for r in requests] == [([world_templates.key, sensor_rigs.key], TLA)]
    old_hash = build.template_hash
    _import(xodr, templates)
    again = validate_template_file(templates / f"{TLA}.yaml")
    assert again.valid and again.template_hash != old_hash


def _key(t: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"template": t, "batch": "b0000"})


@pytest.mark.slow
def test_reimport_restales_exactly_the_imported_templates_dependents(tmp_path):
    from simready.definitions import defs

    templates, xodr = _data(tmp_path)
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({"suite_id": "t", "batches": 1, "templates": {
        RC: {INTENT: 1}, TLA: {INTENT: 1}}}))
    source = SourceData(templates_dir=str(templates), suite_file=str(suite))
    resources = {"store": ArtifactStore(root=str(tmp_path / "artifacts")), "source": source}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    assert dg.materialize([certified_assets], instance=instance, resources=resources).success
    for t in (RC, TLA):
        assert dg.materialize([world_templates], partition_key=t, instance=instance, resources=resources).success
        # Manifests and trajectories of the imported map materialize like any template's.
        assert dg.materialize([scenario_manifests, trajectories], partition_key=_key(t), instance=instance,
                              resources=resources).success
    before = {(a, t): _data_version(instance, a, str(_key(t))) for a in ("scenario_manifests", "trajectories")
              for t in (RC, TLA)}
    result = dg.evaluate_automation_conditions(defs=defs, instance=instance)

    first = dg.build_sensor_context(instance=instance, resources={"source": source})
    assert source_files_sensor(first).skip_reason is not None
    # The map edit alone: the sensor requests the imported template, whose build now says to re-import.
    _widen_sidewalk(xodr)
    ctx = dg.build_sensor_context(instance=instance, resources={"source": source}, cursor=first.cursor)
    requests = source_files_sensor(ctx).run_requests
    assert [(r.asset_selection, r.partition_key) for r in requests] == [([world_templates.key, sensor_rigs.key], TLA)]
    # Re-import: the template file changes, the sensor requests it, and its data version moves on.
    _import(xodr, templates)
    ctx2 = dg.build_sensor_context(instance=instance, resources={"source": source}, cursor=ctx.cursor)
    requests = source_files_sensor(ctx2).run_requests
    assert [(r.asset_selection, r.partition_key) for r in requests] == [([world_templates.key, sensor_rigs.key], TLA)]
    assert dg.materialize([world_templates], partition_key=TLA, instance=instance, resources=resources).success

    requested: set[tuple[str, str]] = set()
    assets = {"scenario_manifests": scenario_manifests, "trajectories": trajectories}
    for _ in range(4):
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
        batch = {(k, str(p)) for k in ("scenario_manifests", "trajectories", "checkpoints", "action_branches",
                                        "rejection_log", "coverage_report")
                 for p in result.get_requested_partitions(dg.AssetKey(k))}
        for name, part in sorted(batch):
            if name in assets:
                assert dg.materialize([assets[name]], partition_key=_key(TLA) if TLA in part else part,
                                      instance=instance, resources=resources).success
        requested |= batch
        if not batch:
            break
    sample_level = {(a, p) for a, p in requested if a in assets}
    assert sample_level == {("scenario_manifests", str(_key(TLA))), ("trajectories", str(_key(TLA)))}
    after = {(a, t): _data_version(instance, a, str(_key(t))) for a in ("scenario_manifests", "trajectories")
             for t in (RC, TLA)}
    assert after[("scenario_manifests", TLA)] != before[("scenario_manifests", TLA)]
    assert after[("scenario_manifests", RC)] == before[("scenario_manifests", RC)]
    assert after[("trajectories", RC)] == before[("trajectories", RC)]


# --- the default suite's imported map (issue 24 item 6): data/maps/city_crossing.xodr -----------------------------

CITY = "city_crossing"
CITY_INTENT = "pedestrian_emerges_behind_van"  # the --intent its template was imported with (README)


def _city_generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_city_crossing", paths.DATA_DIR / "maps" / "make_city_crossing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _city_data(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the shipped templates and maps: ``(templates, maps/city_crossing.xodr)``."""
    templates = tmp_path / "data" / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    shutil.copytree(paths.DATA_DIR / "maps", tmp_path / "data" / "maps")
    return templates, tmp_path / "data" / "maps" / f"{CITY}.xodr"


def _reimport_city(xodr: Path, templates: Path) -> int:
    """``simready template import`` as README says, over the old template (removed first: the command writes new
    files only)."""
    (templates / f"{CITY}.yaml").unlink()
    return main(["template", "import", str(xodr), "--id", CITY, "--intent", CITY_INTENT,
                 "--out", str(templates / f"{CITY}.yaml")])


@pytest.mark.slow
def test_the_shipped_map_is_its_generators_output_and_its_template_the_importers(tmp_path):
    """Reproducible: the script writes the map's bytes, and the importer writes the template's bytes (the template is
    regenerated, never hand-edited)."""
    xodr = paths.DATA_DIR / "maps" / f"{CITY}.xodr"
    assert _city_generator().city_crossing() == xodr.read_bytes()
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / f"{CITY}.yaml").write_text("placeholder")
    assert _reimport_city(xodr, templates) == 0
    assert (templates / f"{CITY}.yaml").read_text() == (paths.TEMPLATES_DIR / f"{CITY}.yaml").read_text()


@pytest.mark.slow
def test_a_city_crossing_map_edit_stales_exactly_its_template(tmp_path, capsys):
    templates, xodr = _city_data(tmp_path)
    source = SourceData(templates_dir=str(templates))
    assert templates_imported_from(templates, xodr.name) == [CITY]
    assert validate_template_file(templates / f"{CITY}.yaml").valid
    before, before_versions = source_file_hashes(source), source_versions(source)
    # Widen the south arm's right sidewalk (road 2, lane -3) by 10 cm: the crosswalk still meets it.
    text = xodr.read_text()
    road = text.index('<road rule="RHT" id="2" ')
    lane = text.index('<lane id="-3"', road)
    at = text.index('a="2.0"', lane)
    xodr.write_text(text[:at] + 'a="2.1"' + text[at + len('a="2.0"'):])
    now = source_file_hashes(source)
    assert {k for k in now if now[k] != before[k]} == {f"maps/{CITY}.xodr"}
    build = validate_template_file(templates / f"{CITY}.yaml")
    assert not build.valid and "provenance.source_sha256" in build.errors[0]
    requests = changed_requests(before_versions, source_versions(source))
    assert [(r.asset_selection, r.partition_key) for r in requests] == [([world_templates.key, sensor_rigs.key], CITY)]
    # The re-import writes a new template (a new hash); again exactly its partitions are requested.
    old_hash, mid_versions = build.template_hash, source_versions(source)
    assert _reimport_city(xodr, templates) == 0
    again = validate_template_file(templates / f"{CITY}.yaml")
    assert again.valid and again.template_hash != old_hash
    requests = changed_requests(mid_versions, source_versions(source))
    assert [(r.asset_selection, r.partition_key) for r in requests] == [([world_templates.key, sensor_rigs.key], CITY)]
    assert "city_crossing" in capsys.readouterr().out
