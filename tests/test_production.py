"""The production deployment end to end on loopback (issue 15): Postgres, Redis, S3 over HTTP, two Celery workers
and the Dagster daemon, all real processes started here (``simready.testing.stack``).

One template × three batches go through the production deployment as a user launches them (``dagster job
launch`` onto the instance's queue); the same jobs run on the local deployment; every artifact and every
DataVersion must be equal byte for byte. Then the faults: a worker process killed in the middle of a step, and
the S3 server stopped in the middle of a write.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import psutil
import pytest

from simready.common import paths
from simready.store import LocalStore
from simready.testing.stack import (BUCKET, PREFIX, local_definitions, partition_tags, production_stack,
                                    run_failures)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("production")]

SUITE = Path(__file__).parent / "suites" / "production.yaml"
TEMPLATE = "two_lane_arterial"
BATCHES = ("b0000", "b0001", "b0002")
SAMPLE_JOB_TAG_LIMIT = 2  # deploy/production/dagster.yaml: simready/stage=samples
#: The fault tests run the observation step and what follows it (``dagster job launch -o``): the rollouts the
#: first steps wrote are already in the bucket, byte for byte those of a clean run.
FROM_OBSERVATIONS = "observations_and_truth*"


def _data_versions(instance: dg.DagsterInstance) -> dict[tuple[str, str | None], str]:
    """(asset, partition) -> the DataVersion of its latest materialization."""
    out: dict[tuple[str, str | None], str] = {}
    for key in sorted(instance.get_asset_keys(), key=lambda k: k.to_user_string()):
        records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=1000, ascending=True).records
        for record in records:
            m = record.event_log_entry.asset_materialization
            out[(key.to_user_string(), m.partition)] = m.tags["dagster/data_version"]
    return out


def _steps_by_worker(instance: dg.DagsterInstance, run_id: str) -> list[tuple[str, str]]:
    """(step key, Celery worker) of every step execution a worker reported, in order."""
    out = []
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = entry.dagster_event
        worker = event.engine_event_data.metadata.get("Celery worker") if event.engine_event_data else None
        if worker is not None:
            out.append((event.step_key, worker.value))
    return out


def build_local_reference(root: str) -> None:
    """The same jobs on the local deployment (in-process, a local folder ``root/artifacts``): the reference. Writes
    the DataVersions to ``root/versions.json`` (``[asset, partition, version]`` rows)."""
    defs = local_definitions(Path(root) / "artifacts", SUITE)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("sample_batch", list(BATCHES))
    assert defs.resolve_job_def("catalog_job").execute_in_process(instance=instance).success
    assert defs.resolve_job_def("templates_job").execute_in_process(instance=instance, partition_key=TEMPLATE).success
    for batch in BATCHES:
        key = dg.MultiPartitionKey({"template": TEMPLATE, "batch": batch})
        assert defs.resolve_job_def("samples_job").execute_in_process(instance=instance, partition_key=key).success
    rows = [[asset, partition, version] for (asset, partition), version in _data_versions(instance).items()]
    (Path(root) / "versions.json").write_text(json.dumps(rows))


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory):
    """The local reference built in a process of its own (:func:`build_local_reference`), started before the
    production stack so that it runs while the stack starts and the production runs wait in their queue."""
    root = tmp_path_factory.mktemp("local")
    code = f"from tests.test_production import build_local_reference; build_local_reference({str(root)!r})"
    with (root / "local.log").open("w") as log:  # a file, not a pipe: nothing reads it while the process runs
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=paths.PROJECT_ROOT, stdout=log,
                                stderr=subprocess.STDOUT)
    yield root, proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def local(local_reference, production):
    """The local reference's artifacts and DataVersions, once the production runs are done too."""
    root, proc = local_reference
    assert proc.wait(timeout=900) == 0, (root / "local.log").read_text()[-4000:]
    versions = {(asset, partition): version for asset, partition, version in
                json.loads((root / "versions.json").read_text())}
    return LocalStore(root / "artifacts"), versions


@pytest.fixture(scope="module")
def stack(tmp_path_factory, local_reference):
    root = tmp_path_factory.mktemp("production")
    # Short S3 time limits, so that the stopped-server fault fails its step in seconds.
    with production_stack(root, suite_file=SUITE,
                          extra_env={"SIMREADY_S3_TIMEOUT_S": "3", "SIMREADY_S3_MAX_ATTEMPTS": "2"}) as st:
        st.start_operations("w1", "w2")  # two Celery workers, the automation off, the daemon
        instance = st.instance()
        instance.add_dynamic_partitions("sample_batch", list(BATCHES))
        st.instance_ = instance
        yield st
        instance.dispose()
    shutil.rmtree(root, ignore_errors=True)  # the servers' data, the workers' caches


@pytest.fixture(scope="module")
def production(stack):
    """Catalog, the template, then three sample batches launched at once onto the queue."""
    instance = stack.instance_
    for job, tags in (("catalog_job", {}), ("templates_job", partition_tags(TEMPLATE))):
        run_id = stack.launch(job, tags)
        assert stack.wait(instance, [run_id])[run_id].status == dg.DagsterRunStatus.SUCCESS, stack.daemon.log_tail()
    run_ids = stack.launch_all("samples_job", [partition_tags(TEMPLATE, b) for b in BATCHES])
    runs = stack.wait(instance, run_ids)
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs.values()), [
        run_failures(instance, r) for r in run_ids]
    return run_ids, _data_versions(instance)


def _assert_same_artifacts(stack, local_store: LocalStore, reader_cache: Path, prefix: str = "") -> int:
    """The store under ``prefix`` as a fresh reader sees it lists the local keys, and every object equals the local
    bytes. The reader brings the folder over HTTP at once (``local_dir``: each folder's index read once, every object
    hashed against it), rather than object by object (each read walks up the folders looking for an index)."""
    s3 = stack.store(reader_cache)
    keys = local_store.list(prefix)
    assert s3.list(prefix) == keys
    s3.local_dir(prefix)
    for key in keys:
        assert (s3.cache_dir / key).read_bytes() == local_store.read_bytes(key), key
    return len(keys)


def test_every_artifact_equals_the_local_deployment_byte_for_byte(local, production, stack, tmp_path):
    local_store, _ = local
    n = _assert_same_artifacts(stack, local_store, tmp_path / "reader")
    assert n > 100
    # The objects sit in the bucket under the deployment's prefix, in the local layout.
    listed = stack.s3_client().list_objects_v2(Bucket=BUCKET, Prefix=f"{PREFIX}/samples/{TEMPLATE}/b0000/")
    assert any(o["Key"].endswith("/manifest.json") for o in listed["Contents"])


def test_every_data_version_equals_the_local_deployment(local, production):
    _, local_versions = local
    _, production_versions = production
    assert production_versions == local_versions
    assert len(local_versions) == 1 + 3 + 7 * len(BATCHES)  # catalog; template, rig, reference; 7 per batch


def test_steps_ran_on_both_workers_sharing_no_disk(production, stack):
    run_ids, _ = production
    instance = stack.instance_
    executions = [s for r in run_ids for s in _steps_by_worker(instance, r)]
    assert {w.split("@")[0] for _, w in executions} == {"w1", "w2"}
    assert {s for s, _ in executions} >= {"scenario_manifests", "trajectories", "observations_and_truth",
                                           "validity_reports"}
    # Each worker brought what it needed into its own cache; no process wrote artifacts where the run lives.
    for name in ("w1", "w2"):
        cache = stack.root / "workers" / name / "cache"
        assert any(p.name == "manifest.json" for p in cache.rglob("*")), name
    assert not (stack.dagster_home / "storage").exists() or not any(
        p.is_file() for p in (stack.dagster_home / "storage").rglob("*"))


def test_runs_share_the_workers_under_the_tag_limit(production, stack):
    run_ids, _ = production
    records = {r.dagster_run.run_id: r for r in stack.instance_.get_run_records(dg.RunsFilter(run_ids=run_ids))}
    spans = [(records[r].start_time, records[r].end_time) for r in run_ids]
    in_flight = [sum(1 for s, e in spans if s <= t < e) for t, _ in spans]
    assert max(in_flight) == SAMPLE_JOB_TAG_LIMIT  # two at once, never three
    assert all(r.dagster_run.tags["simready/stage"] == "samples" for r in records.values())


def _wait_for_step(instance, run_id: str, step: str, timeout_s: float = 240) -> str:
    """The Celery worker that reports executing ``step`` of the run (polls the event log)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for step_key, worker in _steps_by_worker(instance, run_id):
            if step_key == step:
                return worker
        time.sleep(0.05)
    raise TimeoutError(f"{step} never started in run {run_id}")


def test_a_killed_worker_step_is_retried_and_equals_a_clean_run(local, production, stack, tmp_path):
    instance = stack.instance_
    run_id = stack.launch("samples_job", partition_tags(TEMPLATE, "b0000"), FROM_OBSERVATIONS)
    worker = _wait_for_step(instance, run_id, "observations_and_truth").split("@")[0]
    pool = psutil.Process(stack.workers[worker].pid).children()
    assert len(pool) == 1  # --concurrency 1: the process that runs the step
    pool[0].kill()
    run = stack.wait(instance, [run_id])[run_id]
    assert run.status == dg.DagsterRunStatus.SUCCESS, run_failures(instance, run_id)
    executions = [s for s, _ in _steps_by_worker(instance, run_id)]
    assert executions.count("observations_and_truth") == 2  # handed back by the broker, run again
    assert "validity_reports" in executions and "trajectories" not in executions
    # The result equals a clean run, and every indexed object hashes to its index (the fresh reader verifies each
    # object it brings against its folder's index).
    _assert_same_artifacts(stack, local[0], tmp_path / "reader", f"samples/{TEMPLATE}/b0000")


def _step_error(instance, run_id: str, step: str) -> str | None:
    """The message of the first failure (final, or one the step is retried after) of ``step`` in the run."""
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None or event.step_key != step:
            continue
        if event.event_type == dg.DagsterEventType.STEP_FAILURE:
            data = event.step_failure_data
            return data.user_failure_data.description if data.user_failure_data else data.error.message
        if event.event_type == dg.DagsterEventType.STEP_UP_FOR_RETRY:
            error = event.step_retry_data.error  # the retry request; what the step raised is its cause
            while error is not None:
                failure, _, description = error.message.partition("Failure: ")
                if description and failure.endswith("events."):
                    return description
                error = error.cause or error.context
            return event.step_retry_data.error.message
    return None


def _step_ended(instance, run_id: str, step: str) -> bool:
    return any(e.dagster_event.step_key == step for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_SUCCESS))


def _without_observations(store, batch: str) -> None:
    """Publish the batch folder again without its observation folders (base, branches, dry sibling)."""
    folder = store.local_dir(batch)
    removed = [d for d in folder.rglob("observations*") if d.is_dir()]
    assert removed
    for d in removed:
        shutil.rmtree(d)
    store.save(batch)
    assert not any(part.startswith("observations") for key in store.list(batch) for part in key.split("/")[:-1])


def test_s3_stopped_during_a_write_fails_the_step_in_one_line_and_the_retry_completes(local, production, stack, tmp_path):
    """The S3 server is stopped (SIGSTOP: it accepts connections and answers nothing) as soon as the observation
    step's first upload reaches it, and started again once the step has failed. The step's retry completes."""
    instance = stack.instance_
    moto_log = stack.root / "s3" / "moto.log"
    target = f"PUT /{BUCKET}/{PREFIX}/samples/{TEMPLATE}/b0001/"
    message = None
    for attempt in range(3):  # the pause must land inside the step's uploads, before its index: retried if it did not
        # The batch published again without its observations, so that the observation step uploads them (a rerun
        # of identical bytes uploads only its index).
        _without_observations(stack.store(tmp_path / f"admin{attempt}"), f"samples/{TEMPLATE}/b0001")
        run_id = stack.launch("samples_job", partition_tags(TEMPLATE, "b0001"), FROM_OBSERVATIONS)
        _wait_for_step(instance, run_id, "observations_and_truth")
        # What the server logs from now on, read as it grows (not the whole log every few milliseconds).
        with moto_log.open("rb") as log:
            log.seek(0, os.SEEK_END)
            seen, deadline = b"", time.monotonic() + 240
            while target.encode() not in seen:
                assert time.monotonic() < deadline, "no write to the batch seen"
                time.sleep(0.005)
                seen = seen[-len(target):] + log.read()
        stack.s3.pause()
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                message = _step_error(instance, run_id, "observations_and_truth")
                if message is not None or _step_ended(instance, run_id, "observations_and_truth"):
                    break
                time.sleep(0.2)
        finally:
            stack.s3.resume()
        run = stack.wait(instance, [run_id])[run_id]
        assert run.status == dg.DagsterRunStatus.SUCCESS, run_failures(instance, run_id)  # the retry ran once S3 was back
        if message is not None:
            break
    assert message is not None, "the observation step never failed while S3 was stopped"
    assert "\n" not in message.strip(), message
    assert f"s3://{BUCKET}/{PREFIX}/samples/{TEMPLATE}/b0001" in message and "did not answer" in message, message
    # Equal to a clean run; the fresh reader hashes every object against its folder's index.
    _assert_same_artifacts(stack, local[0], tmp_path / "reader", f"samples/{TEMPLATE}/b0001")


def test_missing_settings_are_one_line_at_definition_load(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMREADY_", "AWS_"))}
    env["SIMREADY_DEPLOYMENT"] = "production"
    result = subprocess.run([sys.executable, "-m", "simready.cli", "deploy", "check"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "SIMREADY_S3_BUCKET: not set" in result.stderr and "export SIMREADY_S3_BUCKET=" in result.stderr


@pytest.mark.parametrize("broken", ["SIMREADY_POSTGRES_URL", "SIMREADY_CELERY_BROKER", "SIMREADY_S3_BUCKET"])
def test_an_unreachable_server_is_one_line_naming_it(stack, broken):
    from simready.testing.servers import free_port

    bad = {"SIMREADY_POSTGRES_URL": f"postgresql+psycopg2://postgres@127.0.0.1:{free_port()}/postgres",
           "SIMREADY_CELERY_BROKER": f"redis://127.0.0.1:{free_port()}/0",
           "SIMREADY_S3_BUCKET": "no-such-bucket"}[broken]
    env = {**stack.env, broken: bad}
    result = subprocess.run([sys.executable, "-m", "simready.cli", "deploy", "check"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {broken}: "), result.stderr
