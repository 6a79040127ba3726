"""``simready status`` (issue 19 item 6): a header, only what is not fresh unless ``--all``, a summary line, no
library warnings on stderr, exit status 0."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simready.status import InterruptedRun, PartitionStatus, status_lines

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
    subprocess.run([sys.executable, "-c", "import dagster as dg; "
                    "dg.DagsterInstance.get().add_dynamic_partitions('sample_batch', ['b0000'])"],
                   env=env, check=True, cwd=ROOT)
    runs = {flag: subprocess.run([sys.executable, "-m", "simready.cli", "status", *flag], env=env, cwd=ROOT,
                                 capture_output=True, text=True) for flag in ((), ("--all",))}
    for flag, run in runs.items():
        assert run.returncode == 0, run.stderr
        assert run.stderr == "", run.stderr
        lines = run.stdout.splitlines()
        assert lines[0].startswith("simready status: ") and f" in {home}" in lines[0]
        assert lines[1].split() == ["status", "asset", "partition", "reason"]
        missing = [line for line in lines[2:-1] if line.split()[0] == "missing"]
        assert len(missing) == len(lines) - 3 and any("b0000|" in line for line in missing)
        assert lines[-1] == f"0 fresh, 0 stale, {len(missing)} missing"
    assert runs[()].stdout.splitlines()[1:] == runs[("--all",)].stdout.splitlines()[1:]


def test_partitions_read_per_asset_give_what_dagster_reads_per_partition(monkeypatch):
    """The status reads each asset's latest materialization per partition in two queries; the records, and so every
    status and cause, are those Dagster's own queryer reads one partition at a time."""
    import dagster as dg
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.definitions.events import AssetKeyPartitionKey
    from dagster._utils.caching_instance_queryer import CachingInstanceQueryer

    from simready import status
    from simready.assets.partitions import batch_partitions
    from simready.definitions import defs

    graph = defs.resolve_asset_graph()
    t1, t2 = sorted(graph.get(dg.AssetKey("world_templates")).partitions_def.get_partition_keys())[:2]
    events = [("world_templates", t1, "v1"), ("world_templates", t2, "v1"), ("world_templates", t1, "v2"),
              ("scenario_manifests", f"b0000|{t1}", "m1"), ("scenario_manifests", f"b0000|{t1}", "m2"),
              ("scenario_manifests", f"b0001|{t2}", "m1"), ("world_templates", t1, "v3")]
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(batch_partitions.name, ["b0000", "b0001"])
        for asset, partition, version in events:
            instance.report_runless_asset_event(dg.AssetMaterialization(
                asset, partition=partition, tags={"dagster/data_version": version}))

        def view():
            return status._view(instance, graph)

        keys = [dg.AssetKey("world_templates"), dg.AssetKey("scenario_manifests")]
        batched, plain = status._PartitionsReadPerAsset(instance, graph, view(), keys), CachingInstanceQueryer(
            instance, graph, view())
        for key in keys:
            for partition in graph.get(key).partitions_def.get_partition_keys(dynamic_partitions_store=instance):
                ap = AssetKeyPartitionKey(key, partition)
                mine, theirs = (q.get_latest_materialization_or_observation_record(ap) for q in (batched, plain))
                assert (mine and mine.storage_id) == (theirs and theirs.storage_id), ap
        latest = batched.get_latest_materialization_or_observation_record(
            AssetKeyPartitionKey(dg.AssetKey("world_templates"), t1))
        assert latest.asset_materialization.tags["dagster/data_version"] == "v3"

        rows = status.graph_status(defs, instance)
        monkeypatch.setattr(status, "_resolver", lambda defs, instance: (CachingStaleStatusResolver(
            instance=instance, asset_graph=graph, loading_context=view()), graph))
        assert status.graph_status(defs, instance) == rows
        assert {r.status for r in rows} >= {"stale", "missing"}
