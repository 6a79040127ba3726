"""``simready run`` / ``make run``: materialize the asset graph on the embedded default instance.

The instance is the project-local ``DAGSTER_HOME`` (SQLite storage), so the
runs, materializations and check results appear in ``make ui`` afterwards.
Many samples share one run: one run per (template, batch) partition, never
one per sample.

A CLI entry point that drives Dagster, so it imports it — with
:mod:`simready.runner.status` the only module besides ``definitions.py``,
``assets/``, ``checks/`` and ``resources/`` that does; it decides nothing
about the data.
"""

import atexit
import ctypes
import importlib
import json
import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

import dagster as dg
from dagster._core.events import RunFailureReason
from dagster._core.storage.tags import RUN_FAILURE_REASON_TAG

from simready.common import paths
from simready.common.hashing import known_count, learn_digests, learned_digests
from simready.common.parallel import (fork_writing, forked_child, holding_core, share_cores, signal_if_alive,
                                      worker_count)
from simready.assets.inputs import observe_inputs
from simready.assets.partitions import BATCH_PARTITIONS, template_partitions
from simready.definitions import defs
from simready.kernel_cache import warm_kernels
from simready.release import load_release
from simready.release.build import DEFAULT_TAG
from simready.resources import ArtifactStore, deployment_source, deployment_store
from simready.runner.status import OWNER_TAG, owner_tags
from simready.scenario.splits import SPLITS
from simready.scenario.suite import check_intents, load_suite

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _instance() -> dg.DagsterInstance:
    paths.dagster_home()
    return dg.DagsterInstance.get()


#: What Dagster records on a run whose process took a SIGINT: it fails the run and returns, so ``execute``
#: raises the ``KeyboardInterrupt`` again to stop the whole main job rather than go on with the next.
INTERRUPTED = RunFailureReason.UNEXPECTED_TERMINATION.value


@dataclass
class RunLog:
    quiet: bool
    #: Tags on every run, e.g. its owner process (:func:`simready.runner.status.owner_tags`).
    tags: dict[str, str] = field(default_factory=dict)
    ok: bool = True
    stage_s: dict[str, float] = field(default_factory=dict)
    #: CPU seconds per job: this process's and its workers' (the stages' forked processes, their encoders).
    stage_cpu_s: dict[str, float] = field(default_factory=dict)
    step_s: float = 0.0
    by_step: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def execute(self, defs: dg.Definitions, instance: dg.DagsterInstance, job: str,
                partition: str | None = None) -> bool:
        """Run ``job`` (its ``partition``) in this process; record and print its outcome; True iff it succeeded."""
        t0, cpu0 = time.perf_counter(), cpu_seconds()
        outcome = _execute(defs, instance, job, partition, self.quiet, self.tags)
        return self.record(instance, Task(job, partition), outcome, time.perf_counter() - t0, cpu_seconds() - cpu0)

    def record(self, instance: dg.DagsterInstance, task: "Task", outcome: "Outcome", wall_s: float, cpu: float) -> bool:
        """A finished run's seconds, steps and checks into the log, and its line; raises ``KeyboardInterrupt`` if the
        run was interrupted."""
        job, partition = task.job, task.partition
        self.stage_s[job] = self.stage_s.get(job, 0.0) + wall_s
        self.stage_cpu_s[job] = self.stage_cpu_s.get(job, 0.0) + cpu
        for step, seconds in (step_seconds(instance, outcome.run_id) if outcome.run_id else {}).items():
            self.by_step[step] = self.by_step.get(step, 0.0) + seconds
            self.step_s += seconds
        if not outcome.success or outcome.failed_checks:
            self.ok = False
            self.failures.append(f"{job}[{partition or '-'}]: " + ("run failed" if not outcome.success else
                                                                   f"checks failed {list(outcome.failed_checks)}"))
        label = f"{job}[{partition}]" if partition is not None else job
        print(f"  {'ok  ' if outcome.success and not outcome.failed_checks else 'FAIL'} {label:<60} {wall_s:6.2f} s"
              f"  ({cpu:.1f} s CPU)", flush=True)
        if outcome.interrupted:
            raise KeyboardInterrupt
        return outcome.success


@dataclass(frozen=True)
class Task:
    """One run of the main job: a job, its partition, and the tasks (by index) that must have ended before it starts
    (what it reads: a template's samples wait for the template's run)."""

    job: str
    partition: str | None = None
    after: tuple[int, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What a run came to: its id, success, the checks that failed, and whether its process was interrupted."""

    run_id: str
    success: bool
    failed_checks: tuple[str, ...] = ()
    interrupted: bool = False


def _execute(defs: dg.Definitions, instance: dg.DagsterInstance, job: str, partition: str | None, quiet: bool,
             tags: dict[str, str]) -> Outcome:
    result = defs.resolve_job_def(job).execute_in_process(
        instance=instance,
        partition_key=partition,
        raise_on_error=False,
        run_config=QUIET_LOGS if quiet else {},
        tags=tags,
    )
    failed_checks = tuple(e.check_name for e in result.get_asset_check_evaluations() if not e.passed)
    run = instance.get_run_by_id(result.run_id)
    interrupted = run is not None and run.tags.get(RUN_FAILURE_REASON_TAG) == INTERRUPTED
    return Outcome(result.run_id, result.success, failed_checks, interrupted)


def cpu_seconds() -> float:
    """CPU seconds of this process and of the child processes it waited for (the stages' workers, which wait
    for their own: the video encoders)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def step_seconds(instance: dg.DagsterInstance, run_id: str) -> dict[str, float]:
    """Seconds spent inside each step (our asset and check functions), from the run's step start/end log entries."""
    starts: dict[str, float] = {}
    total: dict[str, float] = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None:
            continue
        if event.step_key is None:
            continue
        if event.event_type_value == "STEP_START":
            starts[event.step_key] = entry.timestamp
        elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and event.step_key in starts:
            total[event.step_key] = total.get(event.step_key, 0.0) + entry.timestamp - starts.pop(event.step_key)
    return total


#: Runs in flight beyond one per core: while two runs each have one process computing (a serial part, the last item
#: of a stage), a third would have work for the idle core; the cores' tokens still bound what computes at once.
#: Measured with 1 on the shared 2-core host: the idle core-seconds of the templates' and samples' phase fell within
#: the host's noise, the longest chain (``city_crossing``'s template run, then its batches) started later, and a
#: third run's processes raise the peak memory; so none by default.
EXTRA_LANES = 0


def run_tasks(log: RunLog, defs: dg.Definitions, instance: dg.DagsterInstance, tasks: list[Task],
              lanes: int | None = None, preload: Callable[[], None] | None = None, cores: int | None = None) -> None:
    """Every task's run, each as soon as the tasks it waits for have ended, ``lanes`` at a time (default: one per
    core and :data:`EXTRA_LANES` more), no more of their processes computing at once than ``cores`` (default: one
    per core, :func:`~simready.common.parallel.worker_count`; given ``lanes``, as many).

    Why side by side: a stage's samples are shared among the cores, but one run still leaves a core idle where it
    waits on its slowest item and in its serial parts (a template's scenario draws before the reference pool's
    rollouts, the checks, the Data Docs); a second run fills those gaps, and a third those the two leave when both are
    in such a part at once. Runs of different partitions write different folders, so their bytes are the same in any
    order. With one core the runs execute here, one after the other; with more, each in a forked process of its own
    (this one's loaded code and instance come along), in its own process group: a Ctrl-C or SIGTERM here reaches each
    once, as a SIGINT, and they unwind as one run in this process would, their steps' workers with them; the
    interrupt is raised here when they have ended. The runs' processes and their steps' workers share the cores
    (:func:`~simready.common.parallel.share_cores`): no more of them compute at once than ``cores``. ``preload``
    runs here once the first run has started (the modules every run imports, loaded once for the runs forked after
    it).
    """
    if cores is None:
        cores = worker_count() if lanes is None else max(1, lanes)
    lanes = cores + EXTRA_LANES if lanes is None else max(1, lanes)
    if lanes <= 1 or cores <= 1 or "fork" not in mp.get_all_start_methods():
        for task in tasks:
            log.execute(defs, instance, task.job, task.partition)
        return
    share_cores(cores)
    try:
        _run_lanes(log, defs, instance, tasks, lanes, preload)
    finally:
        share_cores(1)


def _run_lanes(log: RunLog, defs: dg.Definitions, instance: dg.DagsterInstance, tasks: list[Task], lanes: int,
               preload: Callable[[], None] | None) -> None:
    done: set[int] = set()
    running: dict[int, tuple[int, IO[bytes], float]] = {}  # pid -> (task index, its outcome's file, start)
    todo = list(range(len(tasks)))

    def finish(pid: int, status: int) -> None:
        i, out, started = running.pop(pid)
        outcome, cpu, imported = _read_outcome(out, status)
        done.add(i)
        _import_here(imported)
        log.record(instance, tasks[i], outcome, time.perf_counter() - started, cpu)  # raises if it was interrupted

    try:
        while todo or running:
            ready = [i for i in todo if all(j in done for j in tasks[i].after)]
            while ready and len(running) < lanes:
                i = ready.pop(0)
                todo.remove(i)
                pid, out = _fork_run(defs, instance, tasks[i], log)
                running[pid] = (i, out, time.perf_counter())
                if preload is not None:
                    preload()
                    preload = None
            if not running:
                raise ValueError(f"tasks {todo} wait for tasks that never run")
            pid, status = os.waitpid(-1, 0)
            if pid in running:
                finish(pid, status)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM as Terminated, or a run interrupted: each other run a SIGINT, once
        for pid in running:
            signal_if_alive(pid, signal.SIGINT)
        while running:
            try:
                pid, status = os.waitpid(-1, 0)
                if pid in running:
                    finish(pid, status)
            except KeyboardInterrupt:
                continue
            except ChildProcessError:
                break
        raise


def _fork_run(defs: dg.Definitions, instance: dg.DagsterInstance, task: Task, log: RunLog) -> tuple[int, IO[bytes]]:
    """Fork a process that executes ``task``'s run and writes its :class:`Outcome`, CPU seconds and the modules it
    imported (JSON) into an unnamed temporary file (:func:`~simready.common.parallel.fork_writing`); (its pid, the
    file)."""
    parent = os.getpid()

    def work() -> bytes:
        os.setpgid(0, 0)  # out of the terminal's group: a Ctrl-C reaches the parent, which passes it on once
        _die_with_parent()
        if os.getppid() != parent:
            raise KeyboardInterrupt  # the parent is gone already: nothing to run for
        forked_child()  # gc.freeze, Ctrl-C as KeyboardInterrupt, the parent's exit handlers dropped; the run's run below
        cpu0, loaded, hashed = cpu_seconds(), set(sys.modules), known_count()
        tags = {**log.tags, **({OWNER_TAG: owner_tags()[OWNER_TAG]} if OWNER_TAG in log.tags else {})}
        try:
            with holding_core():
                outcome = _execute(defs, instance, task.job, task.partition, log.quiet, tags)
        except KeyboardInterrupt:
            outcome = Outcome("", False, (), True)
        atexit._run_exitfuncs()
        record = {"run_id": outcome.run_id, "success": outcome.success, "failed_checks": list(outcome.failed_checks),
                  "interrupted": outcome.interrupted, "cpu": cpu_seconds() - cpu0,
                  "imported": sorted(set(sys.modules) - loaded), "digests": learned_digests(hashed)}
        return json.dumps(record).encode("utf-8")

    return fork_writing(work)


def _die_with_parent() -> None:
    """Linux: this process gets a SIGINT when its parent ends (a ``kill -9`` of ``simready run``), so it unwinds
    rather than run on unowned."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _import_here(names: list[str]) -> None:
    """The modules a run's process imported, imported here too, so the next runs' processes find them loaded (the
    stages import their heavy modules when they run: a second of CPU in each process otherwise)."""
    for name in names:
        if name not in sys.modules and not name.startswith("__"):
            try:
                importlib.import_module(name)
            except Exception:  # a module made at run time (numba's, an alias): the next run makes it again
                pass


def _read_outcome(out: IO[bytes], status: int) -> tuple[Outcome, float, list[str]]:
    """The outcome a run's process wrote on its pipe, its CPU seconds and the modules it imported; a process that
    ended without writing one (killed, crashed) is a failed run."""
    with out:
        out.seek(0)
        text = out.read()
    try:
        r = json.loads(text)
        outcome = Outcome(r["run_id"], bool(r["success"]), tuple(r["failed_checks"]), bool(r["interrupted"]))
        # The files the run hashed or wrote, with their sha256: the runs forked after it (the suite's release) find
        # them hashed (simready.common.hashing).
        learn_digests(r.get("digests", []))
        return outcome, float(r["cpu"]), [str(m) for m in r["imported"]]
    except (ValueError, KeyError, TypeError):
        interrupted = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT
        return Outcome("", False, (), interrupted), 0.0, []


def run_main_job(quiet: bool = False, run_tags: dict[str, str] | None = None) -> int:
    """Materialize every asset and partition of the default suite; print a summary; 0 iff all passed.

    A Ctrl-C stops it as a whole (``KeyboardInterrupt``), in a run or between runs.
    """
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    # A suite naming an intent its template cannot support fails here, before anything is written.
    suite = load_suite()
    check_intents(suite, paths.SUITE_FILE)
    instance = _instance()
    log = RunLog(quiet, dict(run_tags or {}))
    template_ids = template_partitions.get_partition_keys()
    batches = suite.batch_keys()
    instance.add_dynamic_partitions(BATCH_PARTITIONS, batches)
    # The input files' data versions first (no run), so every materialization below records what it read.
    observe_inputs(instance, deployment_source())
    print(f"simready main job: suite {suite.suite_id!r}, {len(template_ids)} templates × {len(batches)} batches")
    # Every numba kernel compiled (or loaded from its cache) once, here: the stages' forked workers inherit them
    # instead of each compiling the same ones on a fresh clone.
    warm_kernels(say=lambda line: print(f"  {line}", flush=True))
    if log.execute(defs, instance, "catalog_job"):
        run_tasks(log, defs, instance, main_tasks(template_ids, batches), preload=_preload_stages)
    store = deployment_store()
    if store.exists(store.layout.data_docs_index):
        print(f"  data docs   {store.url(store.layout.data_docs_index)}")
    _print_summary(store, template_ids, batches, time.perf_counter() - t0, instance, log, cpu_seconds() - cpu0)
    return 0 if log.ok else 1


#: The modules the stages import when they run (heavy: numba kernels, PyBullet, pandas, Pillow, matplotlib): loaded
#: once here for the runs' processes, rather than in each.
STAGE_MODULES = ("simready.scenario.batch", "simready.sim.batch", "simready.sim.ladder.settle",
                 "simready.sim.ladder.traffic", "simready.validity.reference_pool", "simready.measurement.batch",
                 "simready.sensors_hw.scene_build", "simready.sensors_hw.lidar.ply", "simready.validity.batch",
                 "simready.review", "simready.review.page", "simready.review.summary", "simready.validity.suite",
                 "simready.validity.data_docs", "simready.release.evidence")


def _preload_stages() -> None:
    """The stages' modules and Great Expectations with its suites registered (every sample batch's checks validate
    with them), loaded here; then each template's world caches (:func:`_preload_worlds`)."""
    from simready.validity.expectations import warm_suites

    _import_here(list(STAGE_MODULES))
    warm_suites()
    _preload_worlds()


def _preload_worlds() -> None:
    """Every template read, and its world's per-process caches built (:func:`simready.sim.batch.warm_world`), here
    once: the runs forked after this inherit them, and so do their stages' workers (an imported street's ground
    raster and static plan are about 0.5 CPU-s in each process that builds them). The templates' files are read as
    the stages read them (:func:`~simready.assets.stage_io.stage_inputs`), so their runs find the same objects."""
    from simready.assets.stage_io import stage_inputs
    from simready.sim.batch import warm_world

    source = deployment_source()
    for template_id in template_partitions.get_partition_keys():
        try:
            warm_world(*stage_inputs(source, template_id))
        except Exception:  # noqa: BLE001 - only a head start: a template that fails is its own run's to report
            continue


def main_tasks(template_ids: Sequence[str], batches: Sequence[str]) -> list[Task]:
    """The main job's runs after the catalog's, each after what it reads: a template's run, then its sample batches
    (every template file, sampled or not: a template the suite does not sample gets its empty batches and roll-up,
    so the suite assets that read them all are fresh after the run and `simready status` says so), its roll-up
    after its batches, the suite's after every roll-up."""
    tasks = [Task("templates_job", t) for t in template_ids]
    samples: dict[str, list[int]] = {}
    for k, template_id in enumerate(template_ids):
        for batch in batches:
            samples.setdefault(template_id, []).append(len(tasks))
            tasks.append(Task("samples_job", dg.MultiPartitionKey({"template": template_id, "batch": batch}), (k,)))
    rollups = []
    for template_id in template_ids:
        rollups.append(len(tasks))
        tasks.append(Task("template_rollup_job", template_id, tuple(samples.get(template_id, []))))
    tasks.append(Task("suite_job", None, tuple(rollups)))
    return tasks


def _print_traffic(store: ArtifactStore, template_ids: Sequence[str], batches: Sequence[str]) -> None:
    """Background traffic's cost (SPEC §20): per template × intent with traffic, the vehicles its samples carry and
    the CPU seconds the ladder spent generating them, its street rollouts (one per proposal) included."""
    layout = store.layout
    for template_id in template_ids:
        total: dict[str, dict[str, float]] = {}
        for batch in batches:
            record = layout.batch(template_id, batch).record
            if not store.exists(record):
                continue
            for intent, t in store.read_json(record).get("traffic", {}).items():
                acc = total.setdefault(intent, {"vehicles_per_lane_km": t["vehicles_per_lane_km"]})
                for key in ("samples", "vehicles", "reserves", "generate_cpu_s", "rollout_cpu_s", "rollouts"):
                    acc[key] = acc.get(key, 0) + t[key]
        for intent, t in sorted(total.items()):
            n = max(int(t["samples"]), 1)
            print(f"  traffic     {template_id} × {intent}: {t['vehicles_per_lane_km']:g} vehicles/lane km, "
                  f"{int(t['samples'])} samples with {t['vehicles'] / n:.0f} vehicles (+{t['reserves'] / n:.0f} "
                  f"reserves) each; ladder {t['generate_cpu_s']:.1f} s CPU, of it {t['rollout_cpu_s']:.1f} s in "
                  f"{int(t['rollouts'])} street rollouts")


def _print_summary(store: ArtifactStore, template_ids: Sequence[str], batches: Sequence[str], wall_s: float,
                   instance: dg.DagsterInstance, log: RunLog, cpu_s: float | None = None) -> None:
    layout = store.layout
    print("\nsimready — main job summary")
    if store.exists(layout.certification):
        cert = store.read_json(layout.certification)
        print(f"  catalog     {cert['n_passed']}/{cert['n_entries']} entries certified   {store.url(layout.certification)}")
    for template_id in template_ids:
        validation = layout.template_validation(template_id)
        if not store.exists(validation):
            print(f"  template    {template_id:<32} not built")
            continue
        v = store.read_json(validation)
        state = "valid  " if v["valid"] else "INVALID"
        print(f"  template    {template_id:<32} {state} {v['template_hash'][:19]}")
        for err in v["errors"][:3]:
            print(f"                {err}")
    proposed = accepted = 0
    for template_id in template_ids:
        for batch in batches:
            record = layout.batch(template_id, batch).record
            if store.exists(record):
                b = store.read_json(record)
                proposed += b["proposals"]
                accepted += b["accepted"]
    print(f"  samples     {accepted} accepted of {proposed} proposed   {store.url(layout.samples_dir)}")
    _print_traffic(store, template_ids, batches)
    if store.exists(layout.suite_weights):
        w = store.read_json(layout.suite_weights)
        share = w["policy"].get("low_fidelity_share", 0.0)
        print(f"  validity    bases {w['accepted']} accepted, {w['rejected']} rejected   low-fidelity weight share {share:.2f}")
        br = w.get("branches")
        if br:
            per = ", ".join(f"{label} {c['accepted']}/{c['accepted'] + c['rejected']}" for label, c in sorted(br["by_branch"].items()))
            print(f"              branches accepted: {per}; matched pairs whole {br['matched_sets_whole']}/{br['matched_sets']}")
            for row in br["rejected"][:10]:
                print(f"              rejected {row['sample']} {row['branch']}: {row['reason'][:110]}")
    if store.exists(layout.split_assignments):
        rows = store.read_json(layout.split_assignments)["rows"]
        sizes = {s: sum(1 for r in rows if r["split"] == s) for s in ("train", "val", "test")}
        print(f"  splits      train {sizes['train']}, val {sizes['val']}, test {sizes['test']}   "
              f"{store.url(layout.split_assignments)}")
    if store.exists(layout.coverage):
        totals = store.read_json(layout.coverage)["totals"]
        print(f"  coverage    {totals['cells_with_samples']}/{totals['cells']} cells with samples, "
              f"{totals['cells_filled']} filled to target   {store.url(layout.coverage)}")
    if store.exists(layout.review_index):
        print(f"  review      every sample's page, by verdict   "
              f"{store.share_url(layout.review_index) or store.url(layout.review_index)}")
    if store.exists(layout.release_tag(DEFAULT_TAG)):
        release = load_release(store, DEFAULT_TAG)
        counts = release.datasheet["counts"]
        print(f"  release     {release.release_id[:19]} ({DEFAULT_TAG}): "
              + ", ".join(f"{s} {counts[s]['samples']}" for s in SPLITS)
              + f"; {release.files} files, {release.bytes / 1e9:.2f} GB   "
              f"{store.share_url(layout.release(release.hex).datasheet_page) or store.url(layout.release(release.hex).datasheet_page)}")
    for job, seconds in log.stage_s.items():
        print(f"  job         {job:<22} {seconds:6.1f} s   {log.stage_cpu_s.get(job, 0.0):6.1f} s CPU")
    for step, seconds in sorted(log.by_step.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  stage       {step:<48} {seconds:6.1f} s")
    total_run_s = sum(log.stage_s.values())
    if total_run_s:
        overhead = max(0.0, total_run_s - log.step_s)
        print(f"  dagster     {overhead:6.1f} s of {total_run_s:.1f} s in runs is orchestration outside our steps "
              f"({100 * overhead / total_run_s:.0f} %)")
    for failure in log.failures:
        print(f"  FAILED      {failure}")
    print(f"  artifacts   {store.url('')}")
    print(f"  dagster     {instance.root_directory} (SQLite; `make ui` to browse)")
    # The CPU seconds beside it: on a shared machine the wall time holds what else runs there too.
    print(f"  wall time   {wall_s:.1f} s" + (f"   ({cpu_s:.1f} s CPU on {worker_count()} workers)" if cpu_s is not None else ""))
