"""Crashes and interrupts (issue 14, deliver 6): ``simready status`` names runs a killed process left
STARTED; Ctrl-C stops ``simready run`` as a whole with one line and exit status 130.

Both with real subprocesses: one killed with SIGKILL in the middle of a run, one sent SIGINT.
"""

from __future__ import annotations

import signal
import textwrap

import dagster as dg
import pytest

from simready.runner.status import OWNER_TAG, interrupted_runs
from tests.fixtures.dagster_jobs import SLOW_JOB, interrupt, spawn, started_ops, wait_started

@pytest.mark.slow
def test_status_names_a_run_whose_process_was_killed(tmp_path) -> None:
    started = tmp_path / "started"
    child = spawn(SLOW_JOB + textwrap.dedent(f"""
        from simready.runner.status import owner_tags
        instance = dg.DagsterInstance.local_temp(tempdir={str(tmp_path)!r})
        slow_job.execute_in_process(instance=instance, tags=owner_tags(), raise_on_error=False)
    """), started)
    try:
        wait_started(child, started, 1)
        instance = dg.DagsterInstance.local_temp(tempdir=str(tmp_path))
        assert interrupted_runs(instance) == []  # its owner is alive: running, not interrupted
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    [run] = interrupted_runs(instance)
    assert run.job == "slow_job" and run.status == "STARTED" and run.owner.endswith(f":{child.pid}")
    assert run.line().startswith("interrupted slow_job run ") and "\n" not in run.line()
    assert instance.get_run_by_id(run.run_id).tags[OWNER_TAG] == run.owner


@pytest.mark.slow
def test_ctrl_c_stops_simready_run_as_a_whole_with_one_line_and_130(tmp_path) -> None:
    started = tmp_path / "started"
    child = spawn(SLOW_JOB + textwrap.dedent(f"""
        import simready.runner.main_job
        from simready.cli import main

        def two_jobs(quiet, run_tags):
            defs = dg.Definitions(jobs=[slow_job])
            instance = dg.DagsterInstance.local_temp(tempdir={str(tmp_path)!r})
            log = simready.runner.main_job.RunLog(quiet, run_tags)
            log.execute(defs, instance, "slow_job")
            print("second job", flush=True)
            log.execute(defs, instance, "slow_job")
            return 0

        simready.runner.main_job.run_main_job = two_jobs
        sys.exit(main(["run", "--quiet"]))
    """), started)
    try:
        wait_started(child, started, 1)
        rc = interrupt(child, 60, "simready run")
    finally:
        child.kill()
    out, err = child.communicate()
    assert rc == 130, err[-2000:]
    assert "second job" not in out and started_ops(started) == 1, out
    # One line of ours (Dagster's own logging may print around it, e.g. warnings at interpreter exit under load).
    assert sum(line.startswith("interrupted: simready run stopped") for line in err.splitlines()) == 1, err[-2000:]
