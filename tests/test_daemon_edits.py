"""The running product notices an edited input (issue 33): ``dagster-daemon run`` on a materialized instance, a
template, then a map, then a catalog contract edited in a copy of ``data/``; within two sensor intervals of each
edit the daemon has recorded the observation, exactly what reads the edited file is stale, and the source-file
sensor's tick has requested exactly what the file feeds (runs queued: the instance's queue launches none, so
nothing here waits for a simulation). Then ``simready status`` records the last edit itself.
The daemon runs the sensor every few seconds (``SIMREADY_SOURCE_SENSOR_INTERVAL_S``), not every 30.

One daemon for the three edits. The instance materializes a small graph cheaply: the catalog, the three templates (one
imported from an OpenDRIVE map), their sensor rigs, one batch of one manifest each, and the split assignments.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.inputs import INPUTS, record_observations
from simready.assets.orchestration import source_files_sensor
from simready.assets.partitions import batch_partitions, template_ids
from simready.assets.scenario import scenario_manifests
from simready.assets.suite import split_assignments
from simready.assets.world import sensor_rigs, world_templates
from simready.resources import ArtifactStore, SourceData
from simready.runner.status import graph_status
from simready.testing import opendrive_maps as maps
from simready.testing.servers import ManagedProcess
from tests.fixtures.edits import INTENT, _import, _move_first_curb, _widen_sidewalk

pytestmark = pytest.mark.slow

RC, TLA, USI = "residential_crosswalk_v3", "two_lane_arterial", "urban_signalized_intersection"
#: source_files_sensor's minimum interval in the daemon's environment (SIMREADY_SOURCE_SENSOR_INTERVAL_S; 30 s
#: in a deployment): the daemon's sensor loop runs every 5 s, so a shorter one does not tick sooner.
INTERVAL_S = 5
#: The local instance, except that its run queue launches nothing: the requested runs stay QUEUED.
QUEUE_NOTHING = {"run_coordinator": {"module": "dagster._core.run_coordinator", "class": "QueuedRunCoordinator",
                                     "config": {"max_concurrent_runs": 0}}}


def _key(t: str) -> str:
    return str(dg.MultiPartitionKey({"template": t, "batch": "b0000"}))


def _data(root: Path) -> SourceData:
    """A copy of data/ with TLA imported from maps/straight.xodr and a suite of one sample per template."""
    data = root / "data"
    shutil.copytree(paths.DATA_DIR, data, ignore=shutil.ignore_patterns("generated"))
    (data / "maps").mkdir(exist_ok=True)  # data/maps/ holds city_crossing.xodr
    (data / "maps" / "straight.xodr").write_bytes(maps.straight_road())
    _import(data / "maps" / "straight.xodr", data / "templates")
    (data / "suites" / "default.yaml").write_text(yaml.safe_dump(
        {"suite_id": "edits", "batches": 1,
         "templates": {RC: {INTENT: 1}, TLA: {INTENT: 1}, USI: {"signalized_left_turn": 1}}}))
    return SourceData(templates_dir=str(data / "templates"), catalog_contracts_dir=str(data / "catalog" / "contracts"),
                      catalog_generated_dir=str(data / "catalog" / "generated"),
                      suite_file=str(data / "suites" / "default.yaml"))


def _materialize(instance: dg.DagsterInstance, source: SourceData, artifacts: Path) -> None:
    resources = {"store": ArtifactStore(root=str(artifacts)), "source": source}
    record_observations(instance, source)
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])

    def run(assets, partition=None):
        # With the inputs in the run's graph, as in every job of the definitions: the run records what it read.
        assert dg.materialize([*INPUTS, *assets], selection=assets, partition_key=partition, instance=instance,
                              resources=resources).success

    run([certified_assets])
    # Every template file, sampled or not (the suite names three; the others' batches are empty): the split
    # assignments read every template's manifests.
    for t in template_ids():
        run([world_templates, sensor_rigs], t)
    for t in template_ids():
        run([scenario_manifests], dg.MultiPartitionKey({"template": t, "batch": "b0000"}))
    run([split_assignments])


def _sensor_ticks(instance: dg.DagsterInstance, name: str):
    from dagster._core.scheduler.instigation import InstigatorType

    for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
        if state.instigator_name == name:
            return instance.get_ticks(state.instigator_origin_id, state.selector_id)
    return []


def _next_tick(instance: dg.DagsterInstance, after: float, daemon: ManagedProcess, timeout_s: float):
    """The first source-file sensor tick that started after ``after`` and has ended."""
    from dagster._core.scheduler.instigation import TickStatus

    deadline = time.time() + timeout_s
    while time.time() < deadline:
        ticks = [t for t in _sensor_ticks(instance, source_files_sensor.name)
                 if t.timestamp > after and t.status != TickStatus.STARTED]
        if ticks:
            return min(ticks, key=lambda t: t.timestamp)
        assert daemon.alive, daemon.log_tail()
        time.sleep(0.5)
    raise AssertionError(f"no source_files_sensor tick within {timeout_s} s; daemon log: {daemon.log_tail()}")


def _observed(instance: dg.DagsterInstance, key: str, partition: str | None) -> str:
    record = instance.get_latest_data_version_record(dg.AssetKey(key), is_source=True, partition_key=partition)
    return record.asset_observation.tags["dagster/data_version"]


def _stale(defs, instance) -> dict[tuple[str, str | None], str]:
    return {(r.asset, r.partition): r.reason for r in graph_status(defs, instance) if r.status == "stale"}


def _requested(instance: dg.DagsterInstance, tick) -> set[tuple[tuple[str, ...], str | None]]:
    runs = instance.get_runs(dg.RunsFilter(run_ids=list(tick.run_ids)))
    assert len(runs) == len(tick.run_ids) and all(r.status == dg.DagsterRunStatus.QUEUED for r in runs)
    return {(tuple(sorted(k.to_user_string() for k in r.asset_selection)), r.tags.get("dagster/partition"))
            for r in runs}


def test_the_daemon_marks_what_an_edited_template_map_or_contract_feeds_stale_and_requests_it(tmp_path):
    from simready.definitions import defs

    source = _data(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    config = yaml.safe_load((paths.PROJECT_ROOT / "deploy" / "dagster.yaml").read_text())
    (home / "dagster.yaml").write_text(yaml.safe_dump({**config, **QUEUE_NOTHING}))
    instance = dg.DagsterInstance.from_config(str(home))
    _materialize(instance, source, tmp_path / "artifacts")
    assert _stale(defs, instance) == {}
    everything = {(r.asset, r.partition) for r in graph_status(defs, instance) if r.status == "fresh"}

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMREADY_", "DAGSTER_"))}
    env.update({"DAGSTER_HOME": str(home), "SIMREADY_DATA": str(tmp_path / "data"),
                "SIMREADY_ARTIFACTS": str(tmp_path / "artifacts"), "PYTHONPATH": str(paths.PROJECT_ROOT),
                "SIMREADY_SOURCE_SENSOR_INTERVAL_S": str(INTERVAL_S)})
    daemon = ManagedProcess([str(Path(sys.executable).with_name("dagster-daemon")), "run", "-w",
                             str(paths.PROJECT_ROOT / "workspace.yaml")], log_path=tmp_path / "daemon.log", env=env,
                            cwd=paths.PROJECT_ROOT, name="dagster-daemon")
    try:
        first = _next_tick(instance, 0, daemon, 180)
        assert first.skip_reason and "first evaluation" in first.skip_reason
        template = Path(source.template_file(RC))
        xodr = tmp_path / "data" / "maps" / "straight.xodr"
        contract = Path(source.catalog_contracts_dir) / "curb__segment_10m.yaml"
        originals = {p: p.read_bytes() for p in (template, xodr, contract)}
        before = {t: _observed(instance, "template_sources", t) for t in (RC, TLA)}
        before_contracts = _observed(instance, "catalog_contracts", None)
        waits = []
        last = [first]  # the latest tick seen to end

        def edit_and_wait(edit):
            # Right after a tick has ended, so that the edit lands between two ticks: a tick that began before
            # the edit and read the file after it would leave the next one nothing to notice. The tick the last
            # edit waited for has just ended: the next edit follows it at once, unless its own work took so long
            # that the next tick may already be starting (then after the next one).
            while True:
                edited = time.time()
                if edited < last[0].timestamp + INTERVAL_S - 1:
                    break
                last[0] = _next_tick(instance, edited, daemon, 2 * INTERVAL_S + 30)
            edit()
            tick = last[0] = _next_tick(instance, edited, daemon, 2 * INTERVAL_S + 30)
            waits.append(time.time() - edited)
            # Two intervals, and the tick's own work (its run requests take seconds to launch on a busy machine).
            assert waits[-1] <= 2 * INTERVAL_S + 10, waits
            return tick

        # 1. A curb of RC moved by 1 cm: RC's world and rig, its manifests, the split assignments.
        tick = edit_and_wait(lambda: _move_first_curb(template, 0.01))
        assert _observed(instance, "template_sources", RC) != before[RC]
        assert _observed(instance, "template_sources", TLA) == before[TLA]
        stale = _stale(defs, instance)
        assert set(stale) == {("world_templates", RC), ("sensor_rigs", RC), ("scenario_manifests", _key(RC)),
                              ("split_assignments", None)}, stale
        assert all(f"template_sources[{RC}]" in reason for reason in stale.values()), stale
        assert _requested(instance, tick) == {(("sensor_rigs", "world_templates"), RC)}

        # 2. RC back as it was, and the map TLA was imported from edited: RC is fresh again, TLA's world is stale.
        def revert_and_edit_map():
            template.write_bytes(originals[template])
            _widen_sidewalk(xodr)

        tick = edit_and_wait(revert_and_edit_map)
        assert _observed(instance, "template_sources", RC) == before[RC]
        assert _observed(instance, "template_sources", TLA) != before[TLA]
        stale = _stale(defs, instance)
        assert set(stale) == {("world_templates", TLA), ("sensor_rigs", TLA), ("scenario_manifests", _key(TLA)),
                              ("split_assignments", None)}, stale
        assert all(f"template_sources[{TLA}]" in reason for reason in stale.values()), stale
        assert _requested(instance, tick) == {(("sensor_rigs", "world_templates"), RC),
                                              (("sensor_rigs", "world_templates"), TLA)}

        # 3. The map back, and the curb's friction changed in its catalog contract: everything reads the catalog.
        # RC's curb moved again as in 1: requested again, though it returns to a version requested before.
        def revert_and_edit_contract():
            xodr.write_bytes(originals[xodr])
            contract.write_text(contract.read_text().replace("friction: 0.9", "friction: 0.85"))
            _move_first_curb(template, 0.01)

        tick = edit_and_wait(revert_and_edit_contract)
        assert _observed(instance, "catalog_contracts", None) != before_contracts
        assert _observed(instance, "template_sources", TLA) == before[TLA]
        stale = _stale(defs, instance)
        assert set(stale) == everything, set(stale) ^ everything
        assert _requested(instance, tick) == {(("certified_assets",), None), (("sensor_rigs", "world_templates"), TLA),
                                              (("sensor_rigs", "world_templates"), RC)}
        print(f"seconds from edit to the sensor's tick: {', '.join(f'{w:.1f}' for w in waits)}")

        # No tick of any sensor failed in the daemon.
        from dagster._core.scheduler.instigation import TickStatus

        for sensor in defs.sensors:
            failed = [t for t in _sensor_ticks(instance, sensor.name) if t.status == TickStatus.FAILURE]
            assert not failed, (sensor.name, failed[0].error)
    finally:
        daemon.stop(timeout_s=20)

    # 4. The contract and RC back: `simready status` records the observations itself (the daemon is gone), naming
    # the files.
    contract.write_bytes(originals[contract])
    template.write_bytes(originals[template])
    status = subprocess.run([sys.executable, "-m", "simready.cli", "status"], env=env, cwd=paths.PROJECT_ROOT,
                            capture_output=True, text=True, timeout=300)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[1:3] == [f"observed catalog_contracts: {contract}", f"observed template_sources[{RC}]: {template}"]
    assert lines[-1] == f"{len(everything)} fresh, 0 stale, {lines[-1].split(', ')[-1].split()[0]} missing", lines
    shutil.rmtree(tmp_path, ignore_errors=True)  # the data copy, the artifacts, the instance
