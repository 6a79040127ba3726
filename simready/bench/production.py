"""Production-deployment benchmark (issue 15): samples per minute with 1 and 2 Celery workers, orchestration
overhead, S3 bytes and transfer time per sample.

``python -m simready.bench production`` starts the whole production stack on loopback
(:mod:`simready.testing.stack`: Postgres, Redis, S3 over HTTP, the Dagster daemon, Celery workers), builds the
catalog and one template, then materializes the same two sample batches twice — with one worker, then with two —
launched as a user launches them (two runs on the queue at once). The floor beside it is the same two batches
through the local deployment (in-process, a local folder, no orchestration beyond Dagster's own), measured in the
same run.

Definitions:

* samples per minute: samples of the two batches / wall time from the first run's launch to the last run's end;
* our time: the steps' time inside Dagster (``STEP_START`` → ``STEP_SUCCESS``) less the S3 transfers the store
  timed inside them; transfer time: those transfers; orchestration overhead: the rest of the workers' capacity
  over the phase (workers × wall − step time), as a share of it — run launch, queueing, the executor's polling,
  step process start-up, and a worker idle because its run's next step waits on another;
* S3 bytes per sample: the objects under ``samples/`` (index included) / samples.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import dagster as dg
import yaml

from simready.assets.partitions import BATCH_PARTITIONS
from simready.common import paths
from simready.testing.stack import PREFIX, local_definitions, partition_tags, production_stack, run_failures

TEMPLATE = "two_lane_arterial"
BATCHES = ("b0000", "b0001")
#: Accepted samples per batch: enough work per step that a run is not mostly orchestration.
INTENTS = {"lead_vehicle_brakes": 3, "cut_in": 3}
TARGET_SPEEDUP = 1.6
TARGET_OVERHEAD = 0.10


def _suite(folder: Path) -> Path:
    default = yaml.safe_load((paths.DATA_DIR / "suites" / "default.yaml").read_text())
    suite = {"suite_id": "bench_production", "batches": len(BATCHES), "reference_per_intent": 1,
             "templates": {TEMPLATE: INTENTS}, "observation": default["observation"]}
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=True))
    return path


def _phase(stack, instance, workers: int) -> dict:
    """Launch both batches at once, wait; the phase's figures from the event log."""
    # Both phases materialize the batches from nothing, so that they do the same work: a rematerialization would
    # have every step bring the previous generation's files into a cache that lacks them (the second worker's).
    wipe = stack.store(stack.root / "admin-cache")
    for batch in BATCHES:
        wipe.remove(f"samples/{TEMPLATE}/{batch}")
    t0 = time.time()
    run_ids = stack.launch_all("samples_job", [partition_tags(TEMPLATE, b) for b in BATCHES])
    runs = stack.wait(instance, run_ids, timeout_s=3600)
    failed = [r for r, run in runs.items() if run.status != dg.DagsterRunStatus.SUCCESS]
    if failed:
        raise RuntimeError(f"{len(failed)} samples run(s) failed: " + " | ".join(
            line for r in failed for line in run_failures(instance, r))[:4000])
    records = instance.get_run_records(dg.RunsFilter(run_ids=run_ids))
    wall_s = max(r.end_time for r in records) - t0
    step_s = transfer_s = 0.0
    samples = 0
    for run_id in run_ids:
        starts: dict[str, float] = {}
        for entry in instance.all_logs(run_id):
            event = entry.dagster_event
            if event is None:
                if entry.user_message.startswith("simready-s3 "):
                    transfer_s += json.loads(entry.user_message.split(" ", 1)[1])["seconds"]
                continue
            if event.event_type_value == "STEP_START":
                starts[event.step_key] = entry.timestamp
            elif event.event_type_value == "STEP_SUCCESS" and event.step_key in starts:
                step_s += entry.timestamp - starts.pop(event.step_key)
            elif event.event_type_value == "ASSET_MATERIALIZATION" and event.asset_key.to_user_string() == "trajectories":
                samples += int(event.materialization.metadata["samples"].value)
    capacity_s = workers * wall_s
    events = sum(len(instance.all_logs(r)) for r in run_ids) / len(run_ids)
    return {"workers": workers, "samples": samples, "wall_s": wall_s, "per_min": 60 * samples / wall_s,
            "events_per_run": events,
            "step_s": step_s, "transfer_s": transfer_s, "ours_s": step_s - transfer_s,
            "overhead": max(0.0, capacity_s - step_s) / capacity_s}


def _local_floor(suite: Path) -> dict:
    """The same two batches on the local deployment, in this process: the floor without Celery, S3 or Postgres."""
    with tempfile.TemporaryDirectory(prefix="simready-bench-local-") as tmp:
        defs = local_definitions(Path(tmp) / "artifacts", suite)
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(BATCH_PARTITIONS, list(BATCHES))
        quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
        defs.resolve_job_def("catalog_job").execute_in_process(instance=instance, run_config=quiet)
        defs.resolve_job_def("templates_job").execute_in_process(instance=instance, partition_key=TEMPLATE, run_config=quiet)
        t0 = time.perf_counter()
        for batch in BATCHES:
            key = dg.MultiPartitionKey({"template": TEMPLATE, "batch": batch})
            defs.resolve_job_def("samples_job").execute_in_process(instance=instance, partition_key=key, run_config=quiet)
        wall_s = time.perf_counter() - t0
    samples = sum(INTENTS.values()) * len(BATCHES)
    return {"samples": samples, "wall_s": wall_s, "per_min": 60 * samples / wall_s}


def run() -> dict:
    print("production  (issue 15: Celery workers sharing no disk, S3 over HTTP, Postgres; loopback on this machine)")
    with tempfile.TemporaryDirectory(prefix="simready-bench-production-") as tmp:
        suite = _suite(Path(tmp))
        floor = _local_floor(suite)
        with production_stack(Path(tmp) / "stack", suite_file=suite) as stack:
            stack.stop_automation()
            stack.start_worker("w1")
            stack.start_daemon()
            instance = stack.instance()
            instance.add_dynamic_partitions(BATCH_PARTITIONS, list(BATCHES))
            for job, tags in (("catalog_job", {}), ("templates_job", partition_tags(TEMPLATE))):
                run_id = stack.launch(job, tags)
                if stack.wait(instance, [run_id])[run_id].status != dg.DagsterRunStatus.SUCCESS:
                    raise RuntimeError(f"{job} failed")
            one = _phase(stack, instance, 1)
            stack.start_worker("w2")
            two = _phase(stack, instance, 2)
            client = stack.s3_client()
            stored = sum(o["Size"] for page in client.get_paginator("list_objects_v2").paginate(
                Bucket=stack.env["SIMREADY_S3_BUCKET"], Prefix=f"{PREFIX}/samples/") for o in page.get("Contents", []))
            instance.dispose()
    speedup = two["per_min"] / one["per_min"]
    print(f"  local floor (in-process, 1 core)  {floor['samples']} samples in {floor['wall_s']:.1f} s = "
          f"{floor['per_min']:.1f} samples/min")
    for phase in (one, two):
        print(f"  {phase['workers']} worker(s)                       {phase['samples']} samples in {phase['wall_s']:.1f} s = "
              f"{phase['per_min']:.1f} samples/min ({phase['per_min'] / floor['per_min']:.2f}× the local floor); "
              f"steps {phase['step_s']:.1f} s of which S3 transfer {phase['transfer_s']:.1f} s; "
              f"orchestration overhead {100 * phase['overhead']:.0f} %")
    print(f"  2 workers vs 1                    {speedup:.2f}× samples/min (target ≥ {TARGET_SPEEDUP}×) "
          f"{'ok' if speedup >= TARGET_SPEEDUP else 'MISSED'}")
    print(f"  orchestration overhead, 2 workers {100 * two['overhead']:.0f} % of the samples job (target ≤ "
          f"{100 * TARGET_OVERHEAD:.0f} %) {'ok' if two['overhead'] <= TARGET_OVERHEAD else 'MISSED'}")
    per_sample_mb = stored / two["samples"] / 1e6
    print(f"  S3 bytes per sample               {per_sample_mb:.1f} MB (review resolution, 2 s window, both branches)")
    print(f"  S3 transfer per sample            {two['transfer_s'] / two['samples']:.2f} s (steps' uploads and "
          f"downloads, loopback)")
    print(f"  Postgres event rows per run       {two['events_per_run']:.0f} (a samples run of "
          f"{two['samples'] // len(BATCHES)} samples: its steps, checks, materializations and logs)")
    return {"floor": floor, "one": one, "two": two, "speedup": speedup, "bytes_per_sample": stored / two["samples"]}


if __name__ == "__main__":
    run()
