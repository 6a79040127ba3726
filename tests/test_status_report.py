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
