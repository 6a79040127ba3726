"""Lineage that reads left to right, input files as observed external assets, owners and code references, and
the acceptance roll-up per template and batch (issue 19 items 1, 3, 4)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.inputs import INPUTS, observe_inputs, record_observations
from simready.assets.orchestration import source_files_sensor
from simready.assets.world import world_templates
from simready.resources import ArtifactStore, SourceData
from simready.review import SampleSummary
from simready.review.rollup import acceptance_by_batch
from simready.scenario.coverage_summary import coverage_totals
from simready.runner.status import graph_status
from simready.testing import opendrive_maps as maps
from tests.fixtures.edits import _import, _move_first_curb, _widen_sidewalk

#: The stages in the order data flows: every edge of the graph goes right or stays in its group.
ORDER = ["inputs", "world", "scenario", "simulation", "measurement", "validity", "suite"]
RC, TLA, USI = "residential_crosswalk_v3", "two_lane_arterial", "urban_signalized_intersection"


@pytest.fixture(scope="module")
def graph():
    from simready.definitions import defs

    return defs.resolve_asset_graph()


def test_every_edge_runs_left_to_right_from_the_inputs(graph):
    groups = {key: graph.get(key).group_name for key in graph.get_all_asset_keys()}
    assert set(groups.values()) <= set(ORDER + ["release"]), groups
    for key in graph.get_all_asset_keys():
        for parent in graph.get(key).parent_keys:
            assert ORDER.index(groups[parent]) <= ORDER.index(groups[key]), (parent, key)
    inputs = {key for observer in INPUTS for key in observer.keys}
    assert {k for k, g in groups.items() if g == "inputs"} == inputs
    for key in inputs:
        node = graph.get(key)
        assert not node.is_materializable and not node.parent_keys and node.child_keys
    # The world's entry assets read the files; the suite's roll-ups sit in the suite group.
    assert dg.AssetKey("catalog_contracts") in graph.get(certified_assets.key).parent_keys
    assert dg.AssetKey("template_sources") in graph.get(world_templates.key).parent_keys
    assert groups[dg.AssetKey("coverage_report")] == groups[dg.AssetKey("split_assignments")] == "suite"


def test_every_asset_names_its_owners_and_where_it_is_defined(graph):
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.owners and all(o.startswith("team:") for o in node.owners), key
        refs = node.metadata["dagster/code_references"].code_references
        assert refs, key
        for ref in refs:
            assert Path(ref.file_path).is_file(), ref
            if node.is_materializable:  # the function's module and line
                assert Path(ref.file_path).parent == paths.PROJECT_ROOT / "simready" / "assets" and ref.line_number
        if not node.is_materializable:  # an input: the files it stands for, and its observation function
            assert any(paths.DATA_DIR in Path(ref.file_path).parents for ref in refs), key


@pytest.fixture()
def source(tmp_path) -> SourceData:
    """A copy of data/: templates (TLA imported from an OpenDRIVE map beside them), contracts and a suite."""
    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "straight.xodr").write_bytes(maps.straight_road())
    _import(tmp_path / "maps" / "straight.xodr", templates)
    contracts = tmp_path / "contracts"
    shutil.copytree(paths.CATALOG_CONTRACTS_DIR, contracts)
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({"suite_id": "t", "batches": 1, "templates": {RC: {"pedestrian_emerges_behind_van": 1}}}))
    return SourceData(templates_dir=str(templates), catalog_contracts_dir=str(contracts), suite_file=str(suite),
                      catalog_generated_dir=str(tmp_path / "generated"))


def _templates(source) -> list[str]:
    return sorted(p.stem for p in Path(source.templates_dir).glob("*.yaml"))


def _inputs(source) -> int:
    """How many inputs a first observation records: one per template file, the contracts, the suite."""
    return len(list(Path(source.templates_dir).glob("*.yaml"))) + 2


def _observed(instance) -> dict[tuple[str, str | None], str]:
    out = {}
    for observer in INPUTS:
        for partition in observer.partitions_def.get_partition_keys() if observer.partitions_def else [None]:
            record = instance.get_latest_data_version_record(observer.key, is_source=True, partition_key=partition)
            if record:
                out[(observer.key.to_user_string(), partition)] = record.asset_observation.tags["dagster/data_version"]
    return out


def test_observations_follow_the_files_content_and_reach_exactly_what_changed(source):
    instance = dg.DagsterInstance.ephemeral()
    assert observe_inputs(instance, source) == _inputs(source)  # each template, the contracts, the suite
    assert observe_inputs(instance, source) == 0  # nothing changed: nothing recorded
    first = _observed(instance)
    assert len(first) == _inputs(source)

    suite = Path(source.suite_file)
    suite.write_text(suite.read_text().replace("batches: 1", "batches: 3"))
    assert observe_inputs(instance, source) == 0  # a batch more adds partitions, changes none
    _move_first_curb(Path(source.template_file(RC)), 0.01)
    _widen_sidewalk(Path(source.templates_dir).parent / "maps" / "straight.xodr")  # TLA was imported from it
    assert observe_inputs(instance, source) == 2
    now = _observed(instance)
    changed = {k for k in now if now[k] != first[k]}
    assert changed == {("template_sources", RC), ("template_sources", TLA)}


def test_a_suite_change_requests_what_reads_the_suite_and_a_batch_more_requests_nothing(source):
    from simready.assets.orchestration import changed_requests, source_versions

    before = source_versions(source)
    suite = Path(source.suite_file)
    suite.write_text(suite.read_text().replace("batches: 1", "batches: 3"))
    assert changed_requests(before, source_versions(source)) == []
    suite.write_text(suite.read_text().replace("pedestrian_emerges_behind_van: 1", "pedestrian_emerges_behind_van: 2"))
    key = dg.MultiPartitionKey({"template": RC, "batch": "b0000"})
    requests = changed_requests(before, source_versions(source), [key])
    assert sorted((tuple(k.to_user_string() for k in r.asset_selection), str(r.partition_key)) for r in requests) == [
        *sorted((("reference_pools",), t) for t in _templates(source)),
        (("scenario_manifests", "sensor_observations"), str(key)), (("split_assignments", "coverage_report"), "None")]
    assert all(r.run_key is None for r in requests)


def test_recorded_observations_name_the_files_that_changed(source):
    instance = dg.DagsterInstance.ephemeral()
    first = record_observations(instance, source)
    # The first observation of each input names all its files; TLA's includes the map it was imported from.
    assert len(first) == _inputs(source) and any(line.startswith(f"template_sources[{TLA}]: ") and "straight.xodr" in line
                                   for line in first)
    contracts = sorted(Path(source.catalog_contracts_dir).glob("*.yaml"))
    contracts[0].write_text(contracts[0].read_text() + "\n# edited\n")
    _widen_sidewalk(Path(source.templates_dir).parent / "maps" / "straight.xodr")
    assert record_observations(instance, source) == [
        f"catalog_contracts: {contracts[0]}",
        f"template_sources[{TLA}]: {Path(source.templates_dir).parent / 'maps' / 'straight.xodr'}"]
    assert record_observations(instance, source) == []


@pytest.mark.slow
def test_the_sensor_records_observations_without_a_run_and_status_names_the_changed_file(source, tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    resources = {"store": ArtifactStore(root=str(tmp_path / "artifacts")), "source": source}
    first = dg.build_sensor_context(instance=instance, resources={"source": source})
    result = source_files_sensor(first)
    assert not result.run_requests and len(result.asset_events) == _inputs(source)
    for event in result.asset_events:
        instance.report_runless_asset_event(event)
    from simready.definitions import defs

    # With the inputs in the run's asset graph (as in every job of the definitions) a materialization records the
    # observed version it read.
    assert dg.materialize([*INPUTS, certified_assets], selection=[certified_assets], instance=instance,
                          resources=resources).success
    for t in (RC, USI):
        assert dg.materialize([*INPUTS, world_templates], selection=[world_templates], partition_key=t,
                              instance=instance, resources=resources).success
    fresh = {(r.asset, r.partition): r for r in graph_status(defs, instance)}
    assert fresh[("world_templates", RC)].status == fresh[("certified_assets", None)].status == "fresh"

    _move_first_curb(Path(source.template_file(RC)), 0.01)
    ctx = dg.build_sensor_context(instance=instance, resources={"source": source}, cursor=first.cursor)
    result = source_files_sensor(ctx)
    assert [(e.asset_key.to_user_string(), e.partition) for e in result.asset_events] == [("template_sources", RC)]
    assert [r.partition_key for r in result.run_requests] == [RC]
    assert instance.get_runs() and all(r.job_name == "__ephemeral_asset_job__" for r in instance.get_runs())
    for event in result.asset_events:
        instance.report_runless_asset_event(event)
    status = {(r.asset, r.partition): r for r in graph_status(defs, instance)}
    assert status[("world_templates", RC)].status == "stale"
    assert "template_sources" in status[("world_templates", RC)].reason
    assert status[("world_templates", USI)].status == "fresh"
    assert status[("certified_assets", None)].status == "fresh"


def _summary(template: str, batch: str, sample: str, accepted: bool, branches: dict[str, bool]) -> SampleSummary:
    return SampleSummary(template=template, batch=batch, sample=sample, intent="i", cell="c", split="train",
                         accepted=accepted, validity=1.0, weight=1.0, capped=False,
                         branches=tuple(sorted(branches.items())))


def test_acceptance_roll_up_counts_each_partition_and_sums_to_the_suite():
    judged = [_summary(RC, "b0000", "s1", True, {"brake": True, "coast": False}),
              _summary(RC, "b0000", "s2", False, {"brake": False}),
              _summary(TLA, "b0001", "s3", True, {})]
    ladder = {(RC, "b0000"): {"proposals": 3, "accepted": 2}, (TLA, "b0001"): {"proposals": 1, "accepted": 1},
              (TLA, "b0000"): {"proposals": 2, "accepted": 0}}
    rows = acceptance_by_batch(judged, ladder)
    assert [(r["template"], r["batch"]) for r in rows] == [(RC, "b0000"), (TLA, "b0000"), (TLA, "b0001")]
    assert rows[0] == {"template": RC, "batch": "b0000", "proposed": 3, "samples": 2, "bases_accepted": 1,
                       "bases_rejected": 1, "branches_accepted": 1, "branches_rejected": 2}
    assert rows[1]["bases_accepted"] == rows[1]["bases_rejected"] == 0
    assert sum(r["bases_accepted"] for r in rows) == sum(s.accepted for s in judged)
    assert sum(r["samples"] for r in rows) == sum(c["accepted"] for c in ladder.values())


def test_coverage_counts_cells_and_samples_apart():
    rows = [{"intent": "a", "cell": "1", "target": 2, "proposals": 3, "accepted": 2, "under_target": False, "fill": 1.0},
            {"intent": "a", "cell": "2", "target": 2, "proposals": 1, "accepted": 1, "under_target": True, "fill": 0.5},
            {"intent": "b", "cell": "1", "target": 1, "proposals": 0, "accepted": 0, "under_target": True, "fill": 0.0}]
    totals = coverage_totals(rows)
    assert (totals["cells"], totals["cells_with_samples"], totals["cells_filled"]) == (3, 2, 1)
    assert totals["by_intent"]["a"] == {"cells": 2, "with_samples": 2, "filled": 1, "proposals": 4, "accepted": 3,
                                        "target": 4}
    assert sum(v["with_samples"] for v in totals["by_intent"].values()) == totals["cells_with_samples"]
    assert sum(v["filled"] for v in totals["by_intent"].values()) == totals["cells_filled"]


def test_check_findings_are_tables_with_a_schema():
    from simready.checks.findings import findings

    by_sample = findings({"s1": ["too fast", "off road"], "s2": "corrupt"}, column="reason")
    assert [c.name for c in by_sample.schema.columns] == ["sample", "reason"]
    assert [r.data for r in by_sample.records] == [{"sample": "s1", "reason": "too fast"},
                                                   {"sample": "s1", "reason": "off road"},
                                                   {"sample": "s2", "reason": "corrupt"}]
    rows = findings([{"expectation": "speed", "success": False, "observed": 0.123456}, {"expectation": "ttc"}])
    # A yes/no column shows ✓/✗ (issue 28: Dagster prints a boolean as true/false).
    assert [(c.name, c.type) for c in rows.schema.columns] == [("expectation", "string"), ("success", "string"),
                                                               ("observed", "float")]
    assert rows.records[0].data["observed"] == 0.12 and rows.records[1].data["success"] is None
    assert rows.records[0].data["success"] == "✗"
    assert findings([], column="error").records == []
    # No check of the stages writes a JSON dump any more.
    for stage in ("world", "scenario", "simulation", "measurement", "expectations", "suite"):
        module = paths.PROJECT_ROOT / "simready" / "checks" / f"{stage}.py"
        assert "MetadataValue.json" not in module.read_text(), module


def test_gx_observations_leave_out_what_gx_could_not_compute():
    from simready.validity.expectations import ExpectationOutcome, SuiteResult

    outcome = ExpectationOutcome(expectation="speed_mps between 0 and 40", success=True,
                                 observed={"element_count": 0, "unexpected_percent": None, "missing_percent": 1 / 3})
    result = SuiteResult(suite="trajectories", success=True, evaluated=1, successful=1, results=[outcome])
    assert result.table()[0]["observed"] == "element_count=0, missing_percent=0.3333"
