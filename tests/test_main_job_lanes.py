"""``simready run`` runs the main job's runs side by side, each after what it reads (issue 29 item 4).

Real forked processes and a real SQLite instance, with trivial jobs: the order the tasks' dependencies ask
for, the outcome of every run (its failure and failed checks too) back in the log, the owner tag naming the
process that executed the run, and a Ctrl-C that stops every lane with one line and 130.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest

from simready.runner.main_job import RunLog, Task, main_tasks, run_tasks
from simready.runner.status import OWNER_TAG, interrupted_runs, owner_tags
from tests.fixtures.dagster_jobs import SLOW_JOB, interrupt, spawn, started_ops, wait_started


def _defs(folder: Path) -> dg.Definitions:
    @dg.op(config_schema={"name": str, "seconds": float, "fail": bool})
    def stamp(context) -> None:
        c = context.op_config
        (folder / f"{c['name']}.start").write_text(repr(time.time()))
        time.sleep(c["seconds"])
        (folder / f"{c['name']}.end").write_text(repr(time.time()))
        (folder / f"{c['name']}.pid").write_text(str(os.getpid()))
        if c["fail"]:
            raise RuntimeError("asked to fail")

    def job(name: str, seconds: float, fail: bool = False) -> dg.JobDefinition:
        @dg.job(name=name, config={"ops": {"stamp": {"config": {"name": name, "seconds": seconds, "fail": fail}}}})
        def _job() -> None:
            stamp()
        return _job

    return dg.Definitions(jobs=[job("a", 0.6), job("b", 0.6), job("c", 0.1), job("d", 0.1, fail=True)])


@pytest.mark.slow
def test_runs_side_by_side_after_what_they_wait_for(tmp_path) -> None:
    (tmp_path / "home").mkdir()
    instance = dg.DagsterInstance.local_temp(tempdir=str(tmp_path / "home"))
    log = RunLog(True, owner_tags())
    # a and b start together (two lanes); c waits for both; d (fails) waits for c.
    tasks = [Task("a"), Task("b"), Task("c", None, (0, 1)), Task("d", None, (2,))]
    t0 = time.perf_counter()
    run_tasks(log, _defs(tmp_path), instance, tasks, lanes=2)
    wall = time.perf_counter() - t0

    def at(name: str, edge: str) -> float:
        return float((tmp_path / f"{name}.{edge}").read_text())

    assert at("a", "start") < at("b", "end") and at("b", "start") < at("a", "end")  # side by side
    assert at("c", "start") >= max(at("a", "end"), at("b", "end"))
    assert at("d", "start") >= at("c", "end")
    assert wall < 2 * 0.6 + 0.2 + 30  # not one after the other (under any load, only a sanity bound)
    pids = {n: int((tmp_path / f"{n}.pid").read_text()) for n in "abcd"}
    assert os.getpid() not in pids.values() and len(set(pids.values())) == 4  # each run its own process
    # Every outcome came back: the failure, the seconds per job and step, the owner of each run its own process.
    assert not log.ok and log.failures == ["d[-]: run failed"]
    assert set(log.stage_s) == {"a", "b", "c", "d"} and all(log.stage_cpu_s[j] > 0 for j in "abcd")
    assert set(log.by_step) == {"stamp"} and log.step_s >= 2 * 0.6 + 2 * 0.1
    owners = {r.job_name: r.tags[OWNER_TAG] for r in instance.get_runs()}
    assert owners == {n: f"{owner_tags()[OWNER_TAG].rsplit(':', 1)[0]}:{pids[n]}" for n in "abcd"}
    assert interrupted_runs(instance) == []


def test_one_lane_runs_here_in_order(tmp_path) -> None:
    instance = dg.DagsterInstance.ephemeral()
    log = RunLog(True)
    run_tasks(log, _defs(tmp_path), instance, [Task("c"), Task("a")], lanes=1)
    assert {int((tmp_path / f"{n}.pid").read_text()) for n in "ca"} == {os.getpid()}
    assert float((tmp_path / "a.start").read_text()) >= float((tmp_path / "c.end").read_text())
    assert log.ok and list(log.stage_s) == ["c", "a"]


def test_main_tasks_wait_for_what_they_read() -> None:
    tasks = main_tasks(["t1", "t2"], ["b0000", "b0001"])
    names = [(t.job, str(t.partition) if t.partition is not None else None) for t in tasks]
    assert names == [("templates_job", "t1"), ("templates_job", "t2"),
                     ("samples_job", "b0000|t1"), ("samples_job", "b0001|t1"),
                     ("samples_job", "b0000|t2"), ("samples_job", "b0001|t2"),
                     ("template_rollup_job", "t1"), ("template_rollup_job", "t2"), ("suite_job", None)]
    after = {names[i]: {names[j] for j in t.after} for i, t in enumerate(tasks)}
    assert after[("samples_job", "b0001|t2")] == {("templates_job", "t2")}
    assert after[("template_rollup_job", "t1")] == {("samples_job", "b0000|t1"), ("samples_job", "b0001|t1")}
    assert after[("suite_job", None)] == {("template_rollup_job", "t1"), ("template_rollup_job", "t2")}
    assert all(j < i for i, t in enumerate(tasks) for j in t.after)  # a task waits only for earlier ones


@pytest.mark.slow
def test_ctrl_c_stops_every_lane_with_one_line_and_130(tmp_path) -> None:
    code = SLOW_JOB + textwrap.dedent(f"""
        import simready.runner.main_job as main_job
        from simready.cli import main

        def lanes(quiet, run_tags):
            defs = dg.Definitions(jobs=[slow_job])
            instance = dg.DagsterInstance.local_temp(tempdir={str(tmp_path)!r})
            log = main_job.RunLog(quiet, run_tags)
            main_job.run_tasks(log, defs, instance, [main_job.Task("slow_job"), main_job.Task("slow_job"),
                                                     main_job.Task("slow_job", None, (0,))], lanes=2)
            print("all ran", flush=True)
            return 0

        main_job.run_main_job = lanes
        sys.exit(main(["run", "--quiet"]))
    """)
    started = tmp_path / "started"
    child = spawn(code, started)
    try:
        wait_started(child, started, 2)
        rc = interrupt(child, 60, "simready run")  # the parent only: it passes it on
    finally:
        child.kill()
    out, err = child.communicate()
    assert rc == 130, err[-2000:]
    assert "all ran" not in out and started_ops(started) == 2, out  # the third run never started
    assert sum(line.startswith("interrupted: simready run stopped") for line in err.splitlines()) == 1, err[-2000:]
    instance = dg.DagsterInstance.local_temp(tempdir=str(tmp_path))
    runs = instance.get_runs()
    assert len(runs) == 2 and all(r.status == dg.DagsterRunStatus.FAILURE for r in runs)  # both unwound, none left


def test_the_review_bench_counts_overlapping_runs_once() -> None:
    from simready.bench.review import covered_seconds

    assert covered_seconds([]) == 0.0
    assert covered_seconds([(0.0, 2.0), (2.5, 3.0)]) == 2.5  # one after the other: their sum
    assert covered_seconds([(1.0, 4.0), (0.0, 2.0), (3.0, 3.5), (5.0, 6.0)]) == 5.0  # side by side: the time covered


def test_preloaded_worlds_are_the_ones_the_runs_read_and_a_bad_template_is_left_to_its_run(monkeypatch) -> None:
    """The main job's parent warms every template's world caches (inherited by the runs it forks); a template that
    does not load is skipped there (its own run reports it), the others are still warmed."""
    from simready.assets import stage_io
    from simready.common.errors import SimreadyError
    from simready.runner import main_job
    from simready.sim.backends.dynamic import plan as static_plan
    from simready.world.template import _LOADED

    real = stage_io.stage_inputs
    tried: list[str] = []

    def stage_inputs(source, template_id):  # type: ignore[no-untyped-def]
        tried.append(template_id)
        if template_id == "urban_unsignalized_intersection":
            raise SimreadyError(str(source.template_file(template_id)), "regions", "broken for the test")
        return real(source, template_id)

    monkeypatch.setattr(stage_io, "stage_inputs", stage_inputs)
    static_plan._PLANS.clear()
    main_job._preload_worlds()
    assert "urban_unsignalized_intersection" in tried and len(tried) >= 4
    source = main_job.deployment_source()
    assert len(static_plan._PLANS) == len(tried) - 1
    # The runs read their template as the stages do: the object the parent loaded (and warmed) is the one they get.
    t = real(source, "residential_crosswalk_v3").template
    assert any(v is t for v in _LOADED.values())
