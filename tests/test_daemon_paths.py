"""Every sensor and schedule of the definitions, evaluated the way the daemon evaluates it (issue 33).

Calling a sensor's function in the test process skips what the daemon adds: the code server evaluates it and
resolves its run requests against its target, and a sensor whose run requests have no target fails there on every
tick ("a RunRequest for a sensor lacking a specified target"), however right its function's result. So here each
one goes through Dagster's own path: a code server for this code location (gRPC), ``dagster sensor preview`` for
the source-file sensor as a user types it, and the asset daemon's own loop for the automation sensor, each on an
instance where it has something to request.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from simready.common import paths
from simready.assets.partitions import batch_partitions, template_ids

RC = "residential_crosswalk_v3"
WORKSPACE = paths.PROJECT_ROOT / "workspace.yaml"
#: Runs stay queued: the test sees what was requested without executing it.
QUEUED = {"run_coordinator": {"module": "dagster._core.run_coordinator", "class": "QueuedRunCoordinator"}}
ASSET_JOB = "__ASSET_JOB"


@pytest.fixture(scope="module")
def defs():
    from simready.definitions import defs

    return defs


@pytest.fixture(scope="module")
def location(tmp_path_factory):
    """A plain test instance (it accepts any batch key) with batch b0000 and a code server for the code location,
    as the daemon loads it."""
    from dagster._core.test_utils import create_test_daemon_workspace_context, instance_for_test
    from dagster._core.workspace.load_target import ModuleTarget

    target = ModuleTarget(module_name="simready.definitions", attribute="defs",
                          working_directory=str(paths.PROJECT_ROOT), location_name="simready")
    with instance_for_test(overrides=QUEUED, temp_dir=str(tmp_path_factory.mktemp("home"))) as instance:
        instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
        with create_test_daemon_workspace_context(target, instance) as workspace:
            entry = next(iter(workspace.create_request_context().get_code_location_entries().values()))
            assert entry.code_location is not None, entry.load_error
            yield instance, workspace, entry.code_location


def _handle(code_location):
    return next(iter(code_location.get_repositories().values())).handle


def _sensor(instance, code_location, name: str, cursor: str | None):
    return code_location.get_sensor_execution_data(instance, _handle(code_location), name, None, None, cursor, None,
                                                   None)


def _suite_templates() -> list[str]:
    """The templates the default suite samples (a template file the suite does not name has no batches)."""
    from simready.scenario.suite import load_suite

    return sorted(load_suite().templates)


def _program_templates() -> list[str]:
    """The templates of the default suite that sample an intent of a program file (their program_sources)."""
    from simready.scenario.programs import PROGRAMS
    from simready.scenario.suite import load_suite

    return sorted(t for t, intents in load_suite().templates.items() if set(intents) - set(PROGRAMS))


def _what(request: dg.RunRequest) -> tuple[tuple[str, ...], str | None]:
    keys = tuple(sorted(k.to_user_string() for k in request.asset_selection or []))
    return keys, str(request.partition_key) if request.partition_key is not None else None


def test_every_sensor_and_schedule_is_evaluated_here(defs):
    names = {s.name for s in defs.sensors} | {s.name for s in defs.schedules}
    tested = {"source_files_sensor", "batch_keys_sensor", "default_automation_condition_sensor", "daily_batch_schedule"}
    assert names == tested, f"a sensor or schedule without a test through the daemon's path: {names ^ tested}"


@pytest.mark.slow
def test_source_files_sensor_requests_what_each_input_feeds_through_the_code_server(location, defs):
    from simready.assets.inputs import INPUTS
    from simready.assets.orchestration import FED_BY_INPUTS

    instance, _, code_location = location
    graph = defs.resolve_asset_graph()
    children = {c for observer in INPUTS for key in observer.keys for c in graph.get(key).child_keys}
    assert FED_BY_INPUTS.resolve(graph) == children
    # An empty cursor: every input is new, so the sensor requests what each one feeds.
    data = _sensor(instance, code_location, "source_files_sensor", "{}")
    assert data.run_requests, data.skip_message
    assert {r.job_name for r in data.run_requests} == {ASSET_JOB}
    templates = template_ids()
    expected = {(("certified_assets",), None)}
    expected |= {(("sensor_rigs", "world_templates"), t) for t in templates}
    expected |= {(("reference_pools",), t) for t in templates}
    expected |= {(("scenario_manifests", "sensor_observations"), str(dg.MultiPartitionKey({"template": t, "batch": "b0000"})))
                 for t in _suite_templates()}  # every template of the default suite
    expected |= {(("coverage_report", "split_assignments"), None)}
    assert sorted(_what(r) for r in data.run_requests) == sorted(expected)
    assert {k.to_user_string() for k in children} == {k for keys, _ in expected for k in keys}
    # The observations of the inputs travel with the result (each template file, the contracts, the suite, and the
    # program files of each template whose intents they define); the next evaluation requests nothing.
    assert len(data.asset_events) == len(templates) + 2 + len(_program_templates())
    again = _sensor(instance, code_location, "source_files_sensor", data.cursor)
    assert not again.run_requests and again.skip_message == "no template, map, contract or suite changed"


@pytest.mark.slow
def test_the_sensor_preview_a_user_types_runs_it(tmp_path):
    """The command of the issue: before the fix it printed "a RunRequest for a sensor lacking a specified target"."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(paths.PROJECT_ROOT)}
    proc = subprocess.run([str(Path(sys.executable).with_name("dagster")), "sensor", "preview", "-w", str(WORKSPACE),
                           "source_files_sensor", "--cursor", "{}"], env=env, cwd=paths.PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    # No batch registered: the contracts, each template twice (world, reference pools), the suite's own assets.
    n = re.search(r"Sensor returning run requests for (\d+) run", out)
    assert n and int(n.group(1)) == 1 + 2 * len(template_ids()) + 1, out[-3000:]


@pytest.mark.slow
def test_batch_keys_sensor_removes_a_bad_key_through_the_code_server(location):
    instance, _, code_location = location
    instance.add_dynamic_partitions(batch_partitions.name, ["oops"])
    try:
        data = _sensor(instance, code_location, "batch_keys_sensor", None)
        [request] = data.dynamic_partitions_requests
        assert isinstance(request, dg.DeleteDynamicPartitionsRequest) and request.partition_keys == ["oops"]
        assert "oops" in data.skip_message
    finally:
        instance.delete_dynamic_partition(batch_partitions.name, "oops")


@pytest.mark.slow
def test_daily_schedule_registers_and_requests_the_next_batch_through_the_code_server(location):
    instance, _, code_location = location
    data = code_location.get_schedule_execution_data(instance, _handle(code_location), "daily_batch_schedule", None,
                                                     None)
    try:
        assert "b0001" in instance.get_dynamic_partitions(batch_partitions.name)
        # The schedule's job (samples_job) is the daemon's target for each request.
        assert next(iter(code_location.get_repositories().values())).get_schedule(
            "daily_batch_schedule").job_name == "samples_job"
        assert sorted(r.tags["dagster/partition"] for r in data.run_requests) == sorted(
            str(dg.MultiPartitionKey({"template": t, "batch": "b0001"})) for t in _suite_templates())
    finally:
        instance.delete_dynamic_partition(batch_partitions.name, "b0001")


@pytest.mark.slow
def test_automation_sensor_requests_runs_in_the_asset_daemon(location):
    """The asset daemon's own loop (what ``dagster-daemon run`` runs) on the code server: its first tick sees
    nothing to do; then the catalog and a template's world are materialized, and the next tick (the sensor's
    interval later) asks for what reads them; the daemon queues the runs."""
    from dagster._core.scheduler.instigation import TickStatus
    from dagster._core.test_utils import freeze_time
    from dagster._daemon.asset_daemon import AssetDaemon

    instance, workspace, code_location = location
    daemon = AssetDaemon(settings=instance.get_auto_materialize_settings(), pre_sensor_interval_seconds=0)
    daemon._logger = logging.getLogger("asset_daemon")
    sensor = next(iter(code_location.get_repositories().values())).get_sensor("default_automation_condition_sensor")

    def tick():
        daemon._run_iteration_impl(workspace, threadpool_executor=None, amp_tick_futures={}, debug_crash_flags={})
        ticks = instance.get_ticks(sensor.get_remote_origin_id(), sensor.selector_id)
        assert ticks and ticks[0].status in (TickStatus.SUCCESS, TickStatus.SKIPPED), ticks[0].error if ticks else ""
        return ticks[0]

    start = time.time()
    first = tick()
    for key, partition in (("certified_assets", None), ("world_templates", RC)):
        instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=partition,
                                                                    tags={"dagster/data_version": "v1"}))
    with freeze_time(start + 120):
        second = tick()
    assert second.tick_id != first.tick_id and second.status == TickStatus.SUCCESS
    runs = instance.get_runs(dg.RunsFilter(run_ids=list(second.run_ids)))
    assert runs and all(r.status == dg.DagsterRunStatus.QUEUED for r in runs)
    requested = {(k.to_user_string(), r.tags.get("dagster/partition")) for r in runs for k in r.asset_selection or []}
    assert ("scenario_manifests", str(dg.MultiPartitionKey({"template": RC, "batch": "b0000"}))) in requested
