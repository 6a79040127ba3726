"""``simready status`` (issue 19 item 6): a header, only what is not fresh unless ``--all``, a summary line, no
library warnings on stderr, exit status 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simready.runner.status import InterruptedRun, PartitionStatus, status_lines

ROOT = Path(__file__).resolve().parent.parent

ROWS = [
    PartitionStatus("world_templates", "t1", "fresh", ""),
    PartitionStatus("world_templates", "t2", "stale", "code: has a new code version"),
    PartitionStatus("trajectories", "b0000|t2", "stale", "upstream world_templates[t2]: code: has a new code version"),
    PartitionStatus("trajectories", "b0000|t1", "missing", "never materialized"),
]


def test_only_what_is_not_fresh_between_a_header_and_a_summary():
    lines = status_lines(ROWS, [], "/home/x/.dagster_home")
    assert lines[0] == ("simready status: 4 partitions of 2 assets in /home/x/.dagster_home "
                        "(not fresh only; --all lists every one)")
    assert lines[1].split() == ["status", "asset", "partition", "reason"]
    assert [line.split()[:3] for line in lines[2:-1]] == [
        ["stale", "world_templates", "t2"], ["stale", "trajectories", "b0000|t2"],
        ["missing", "trajectories", "b0000|t1"]]
    assert lines[-1] == "1 fresh, 2 stale, 1 missing"


def test_all_lists_the_fresh_ones_too_and_a_fresh_graph_is_two_lines():
    lines = status_lines(ROWS, [], "home", everything=True)
    assert "--all" not in lines[0] and len(lines) == 1 + 1 + 4 + 1
    fresh = [PartitionStatus("world_templates", "t1", "fresh", "")]
    assert status_lines(fresh, [], "home") == [
        "simready status: 1 partitions of 1 assets in home (not fresh only; --all lists every one)",
        "1 fresh, 0 stale, 0 missing"]


def test_interrupted_runs_follow_the_summary():
    run = InterruptedRun("abc", "samples_job", "b0000|t1", "STARTED", "host:123")
    lines = status_lines(ROWS[:1], [run], "home")
    assert lines[-2:] == [
        "interrupted samples_job[b0000|t1] run abc: left STARTED by process host:123, which is gone",
        "1 run(s) interrupted: their partitions are as the run left them; rerun them"]


@pytest.mark.slow
def test_the_command_on_a_new_instance(tmp_path):
    """The real command, in its own process, on an instance with one batch registered and nothing materialized:
    every partition missing, listed the same with and without ``--all``; stderr empty (no beta/preview
    warnings, no library banners); exit status 0."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "DAGSTER_HOME": str(home), "SIMREADY_ARTIFACTS": str(tmp_path / "artifacts")}
    env.pop("SIMREADY_DEPLOYMENT", None)
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(home))  # the batch registered here, the command runs on its own
    try:
        instance.add_dynamic_partitions("sample_batch", ["b0000"])
    finally:
        instance.dispose()
    runs = {flag: subprocess.run([sys.executable, "-m", "simready.cli", "status", *flag], env=env, cwd=ROOT,
                                 capture_output=True, text=True) for flag in ((), ("--all",))}
    # The first records the inputs' observations (the instance has none), naming each input's files; the second
    # finds nothing changed.
    observed = [line for line in runs[()].stdout.splitlines() if line.startswith("observed ")]
    by_input = {name: [line for line in observed if line.startswith(f"observed {name}")]
                for name in ("template_sources", "catalog_contracts", "suite_file", "program_sources")}
    assert len(observed) == sum(map(len, by_input.values()))
    assert len(by_input["template_sources"]) == len(list((ROOT / "data" / "templates").glob("*.yaml")))
    assert len(by_input["catalog_contracts"]) == len(by_input["suite_file"]) == 1
    # The default suite samples program-file intents on residential_crosswalk_v3 (data/programs/).
    assert by_input["program_sources"] and all("data/programs/" in line for line in by_input["program_sources"])
    assert "observed template_sources[residential_crosswalk_v3]: " \
        "data/templates/residential_crosswalk_v3.yaml" in observed
    assert not any(line.startswith("observed ") for line in runs[("--all",)].stdout.splitlines())
    for flag, run in runs.items():
        assert run.returncode == 0, run.stderr
        assert run.stderr == "", run.stderr
        lines = [line for line in run.stdout.splitlines() if not line.startswith("observed ")]
        assert lines[0].startswith("simready status: ") and f" in {home}" in lines[0]
        assert lines[1].split() == ["status", "asset", "partition", "reason"]
        missing = [line for line in lines[2:-1] if line.split()[0] == "missing"]
        assert len(missing) == len(lines) - 3 and any("b0000|" in line for line in missing)
        assert lines[-1] == f"0 fresh, 0 stale, {len(missing)} missing"
    assert [line for line in runs[()].stdout.splitlines()[1:] if not line.startswith("observed ")] == \
        runs[("--all",)].stdout.splitlines()[1:]


def test_read_ahead_gives_what_dagster_reads_one_partition_at_a_time(monkeypatch):
    """The status reads each asset's latest materialization per partition in two queries and knows a partitioned
    dependency unchanged from them; the records, and so every status and cause, are those Dagster's own queryer and
    resolver read one query at a time. Manifests here carry provenance (code version, the template partition's
    data version and event they were computed from), so the dependency check runs both ways: one manifest's
    template was materialized again after it, the other's was not."""
    import dagster as dg
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.definitions.events import AssetKeyPartitionKey
    from dagster._utils.caching_instance_queryer import CachingInstanceQueryer

    from simready.runner import status
    from simready.assets.partitions import batch_partitions
    from simready.definitions import defs

    graph = defs.resolve_asset_graph()
    templates, manifests = dg.AssetKey("world_templates"), dg.AssetKey("scenario_manifests")
    t1, t2 = sorted(graph.get(templates).partitions_def.get_partition_keys())[:2]
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(batch_partitions.name, ["b0000", "b0001"])

        def report(key: dg.AssetKey, partition: str, version: str, template: str | None = None) -> None:
            tags = {"dagster/data_version": version, "dagster/code_version": graph.get(key).code_version}
            if template is not None:
                (latest,) = instance.fetch_materializations(
                    dg.AssetRecordsFilter(asset_key=templates, asset_partitions=[template]), limit=1).records
                tags["dagster/input_data_version/world_templates"] = latest.asset_materialization.tags[
                    "dagster/data_version"]
                tags["dagster/input_event_pointer/world_templates"] = str(latest.storage_id)
            instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=partition, tags=tags))

        report(templates, t1, "v1")
        report(templates, t2, "v1")
        report(templates, t1, "v2")
        report(manifests, f"b0000|{t1}", "m1", template=t1)
        report(manifests, f"b0001|{t2}", "m1", template=t2)
        report(manifests, f"b0000|{t1}", "m2", template=t1)
        report(templates, t1, "v3")  # after b0000|t1's manifests: that dependency was updated

        def view():
            return status._view(instance, graph)

        keys = [templates, manifests]
        batched, plain = status._PartitionsReadPerAsset(instance, graph, view(), keys), CachingInstanceQueryer(
            instance, graph, view())
        for key in keys:
            for partition in graph.get(key).partitions_def.get_partition_keys(dynamic_partitions_store=instance):
                ap = AssetKeyPartitionKey(key, partition)
                mine, theirs = (q.get_latest_materialization_or_observation_record(ap) for q in (batched, plain))
                assert (mine and mine.storage_id) == (theirs and theirs.storage_id), ap
        latest = batched.get_latest_materialization_or_observation_record(AssetKeyPartitionKey(templates, t1))
        assert latest.asset_materialization.tags["dagster/data_version"] == "v3"

        rows = status.graph_status(defs, instance)
        monkeypatch.setattr(status, "_resolver", lambda defs, instance: (CachingStaleStatusResolver(
            instance=instance, asset_graph=graph, loading_context=view()), graph))
        assert status.graph_status(defs, instance) == rows
        by_key = {(r.asset, r.partition): r for r in rows}
        assert by_key[("scenario_manifests", f"b0000|{t1}")].status == "stale"
        assert {r.status for r in rows} >= {"stale", "missing"}


#: Stacks only the stages' computations need; loading the definitions (webserver, daemon, each run, ``simready
#: status``) imports none of them, which is what keeps it near a second (``python -m simready.bench status``).
HEAVY = ("pybullet", "trimesh", "scipy", "matplotlib", "great_expectations", "jinja2", "numba", "pandas", "pxr",
         "embreex", "dagster_aws", "dagster_celery", "boto3")


def test_loading_the_definitions_leaves_the_heavy_stacks_unloaded():
    code = "import json, sys, simready.definitions; print(json.dumps(sorted(sys.modules)))"
    env = {k: v for k, v in os.environ.items() if k != "SIMREADY_DEPLOYMENT"}
    loaded = json.loads(subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, cwd=ROOT, check=True,
                                       capture_output=True, text=True).stdout.splitlines()[-1])
    assert sorted(name for name in HEAVY if name in loaded) == []
