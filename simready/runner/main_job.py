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

import os
import time
from dataclasses import dataclass, field

import dagster as dg
from dagster._core.events import RunFailureReason
from dagster._core.storage.tags import RUN_FAILURE_REASON_TAG

from simready.common import paths
from simready.common.parallel import worker_count
from simready.assets.inputs import observe_inputs
from simready.assets.partitions import batch_partitions
from simready.definitions import defs, world_templates
from simready.kernel_cache import warm_kernels
from simready.release import load_release
from simready.release.build import DEFAULT_TAG, SPLITS
from simready.resources import ArtifactStore, resources_for_deployment
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

    def execute(self, defs: dg.Definitions, instance: dg.DagsterInstance, job: str, partition=None) -> bool:
        t0, cpu0 = time.perf_counter(), cpu_seconds()
        result = defs.resolve_job_def(job).execute_in_process(
            instance=instance,
            partition_key=partition,
            raise_on_error=False,
            run_config=QUIET_LOGS if self.quiet else {},
            tags=self.tags,
        )
        self.stage_s[job] = self.stage_s.get(job, 0.0) + time.perf_counter() - t0
        cpu = cpu_seconds() - cpu0
        self.stage_cpu_s[job] = self.stage_cpu_s.get(job, 0.0) + cpu
        for step, seconds in step_seconds(instance, result.run_id).items():
            self.by_step[step] = self.by_step.get(step, 0.0) + seconds
            self.step_s += seconds
        failed_checks = [e.check_name for e in result.get_asset_check_evaluations() if not e.passed]
        if not result.success or failed_checks:
            self.ok = False
            self.failures.append(f"{job}[{partition or '-'}]: " + ("run failed" if not result.success else f"checks failed {failed_checks}"))
        label = f"{job}[{partition}]" if partition is not None else job
        print(f"  {'ok  ' if result.success and not failed_checks else 'FAIL'} {label:<60} {time.perf_counter() - t0:6.2f} s"
              f"  ({cpu:.1f} s CPU)", flush=True)
        run = instance.get_run_by_id(result.run_id)
        if run is not None and run.tags.get(RUN_FAILURE_REASON_TAG) == INTERRUPTED:
            raise KeyboardInterrupt
        return result.success


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
        if event.event_type_value == "STEP_START":
            starts[event.step_key] = entry.timestamp
        elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and event.step_key in starts:
            total[event.step_key] = total.get(event.step_key, 0.0) + entry.timestamp - starts.pop(event.step_key)
    return total


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
    template_ids = world_templates.partitions_def.get_partition_keys()
    batches = suite.batch_keys()
    instance.add_dynamic_partitions(batch_partitions.name, batches)
    # The input files' data versions first (no run), so every materialization below records what it read.
    observe_inputs(instance, resources_for_deployment()["source"])
    print(f"simready main job: suite {suite.suite_id!r}, {len(template_ids)} templates × {len(batches)} batches")
    # Every numba kernel compiled (or loaded from its cache) once, here: the stages' forked workers inherit them
    # instead of each compiling the same ones on a fresh clone.
    warm_kernels(say=lambda line: print(f"  {line}", flush=True))
    if log.execute(defs, instance, "catalog_job"):
        for template_id in template_ids:
            log.execute(defs, instance, "templates_job", template_id)
        # Every template file, sampled or not: a template the suite does not sample gets its empty batches and
        # roll-up, so the suite assets that read them all are fresh after the run and `simready status` says so.
        for template_id in template_ids:
            for batch in batches:
                log.execute(defs, instance, "samples_job", dg.MultiPartitionKey({"template": template_id, "batch": batch}))
        for template_id in template_ids:
            log.execute(defs, instance, "template_rollup_job", template_id)
        log.execute(defs, instance, "suite_job")
    store = resources_for_deployment()["store"]
    if store.exists(store.layout.data_docs_index):
        print(f"  data docs   {store.url(store.layout.data_docs_index)}")
    _print_summary(store, template_ids, batches, time.perf_counter() - t0, instance, log, cpu_seconds() - cpu0)
    return 0 if log.ok else 1


def _print_traffic(store: ArtifactStore, template_ids: list[str], batches: list[str]) -> None:
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


def _print_summary(store: ArtifactStore, template_ids: list[str], batches: list[str], wall_s: float, instance,
                   log: RunLog, cpu_s: float | None = None) -> None:
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
