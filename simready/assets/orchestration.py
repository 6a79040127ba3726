"""Automation: the eager cascade, the daily batch schedule, and the source-file sensor (issue 6 item 7).

* ``default_automation_condition_sensor`` (on by default in this code location)
  evaluates every asset's ``AutomationCondition.eager()``: once a parent is
  rematerialized with a new data version, its stale children are requested,
  and so on down the graph — the cascade Dagster's non-transitive stale status
  alone does not give.
* ``daily_batch_schedule`` registers the next sample batch and materializes it
  for every template of the default suite.
* ``source_files_sensor`` notices a new or changed template, OpenDRIVE map (``maps/*.xodr`` beside the
  templates folder), catalog contract or suite (the inputs' data versions, ``inputs.py``: content hashes, not
  mtimes), records the inputs' new observations (no run) and requests what the changed input feeds: its
  target is the inputs' children (:data:`FED_BY_INPUTS`), so the daemon accepts its run requests. The automation
  sensor takes it from there. A changed map requests the templates imported from it, whose build then fails with
  "re-import" until the template is imported again (:func:`simready.world.template_build.stale_import`).
* ``batch_keys_sensor`` removes a batch key that is not ``b0000`` … ``b9999``, with the one-line reason in
  its tick, before a run of it can start and fail. The local and production instances refuse such a key when
  it is added (``partitions.SimreadyInstance``); the sensor is for an instance without that setting (the AWS
  and Kubernetes files, a hand-made DAGSTER_HOME).

``SIMREADY_SOURCE_SENSOR_INTERVAL_S`` (read where the definitions load: the code server) sets the source-file
sensor's minimum interval, 30 s when unset; the daemon evaluates sensors at most every 5 s whatever it says.
The test of the running product sets a few seconds, so that it does not wait half a minute per edit.
"""
# No `from __future__ import annotations`: Dagster inspects annotations at runtime.

import json
import os
from collections.abc import Sequence

import dagster as dg

from simready.assets.catalog import certified_assets
from simready.assets.inputs import (
    INPUTS,
    catalog_contracts,
    input_files,
    input_versions,
    new_observations,
    source_file_hashes,
    suite_file,
    template_sources,
)
from simready.assets.partitions import BATCH_PARTITIONS, batch_partitions, template_ids
from simready.assets.scenario import scenario_manifests
from simready.assets.suite import coverage_report, split_assignments
from simready.assets.validity import reference_pools
from simready.assets.world import sensor_rigs, world_templates
from simready.resources import SourceData
from simready.scenario.suite import SuiteError, batch_index, batch_key, load_suite
from simready.store.deployment import DeploymentError

automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
)


def next_batch_key(existing: list[str]) -> str:
    return batch_key(len(existing))


@dg.schedule(
    cron_schedule="0 3 * * *",
    job_name="samples_job",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every day at 03:00, register the next sample batch and materialize it for every suite template.",
)
def daily_batch_schedule(context: dg.ScheduleEvaluationContext):
    existing = sorted(context.instance.get_dynamic_partitions(BATCH_PARTITIONS))
    batch = next_batch_key(existing)
    context.instance.add_dynamic_partitions(BATCH_PARTITIONS, [batch])
    for template_id in sorted(load_suite().templates):
        key = dg.MultiPartitionKey({"template": template_id, "batch": batch})
        yield dg.RunRequest(run_key=f"{batch}|{template_id}", partition_key=key)


#: What the input files feed: their children in the graph, the sensor's target. Its run requests select
#: nothing else (Dagster refuses a run request of a sensor without a target, and one outside it).
FED_BY_INPUTS = dg.AssetSelection.assets(*INPUTS).downstream(depth=1, include_self=False)
#: What a changed suite feeds, by partitioning: per template, per sample batch, and the suite's own assets.
SUITE_FEEDS_TEMPLATE = [reference_pools.key]
SUITE_FEEDS_SAMPLE = [scenario_manifests.key, dg.AssetKey("sensor_observations")]
SUITE_FEEDS_SUITE = [split_assignments.key, coverage_report.key]


def version_key(key: dg.AssetKey, partition: str | None) -> str:
    """An input's name in the sensor's cursor: ``template_sources[<id>]``, ``catalog_contracts``, ``suite_file``."""
    return key.to_user_string() + (f"[{partition}]" if partition is not None else "")


def source_versions(source: SourceData) -> dict[str, str]:
    """``{version_key: data version}`` of every input (``inputs.input_versions``): the sensor's cursor."""
    versions = input_versions(source, source_file_hashes(source))
    return {version_key(k, p): v for (k, p), v in sorted(versions.items(), key=lambda kv: version_key(*kv[0]))}


def _cursor_versions(cursor: str | None) -> dict[str, str] | None:
    """The versions a cursor recorded; ``None`` for no cursor or one of the file-hash form an older sensor wrote
    (``templates/<f>.yaml`` keys): a first evaluation, which requests nothing."""
    if not cursor:
        return None
    before = json.loads(cursor)
    return None if any("/" in k for k in before) else before


def changed_requests(before: dict[str, str], now: dict[str, str],
                     sample_keys: Sequence[dg.MultiPartitionKey] = ()) -> list[dg.RunRequest]:
    """The runs a change of inputs asks for (``before``/``now``: :func:`source_versions`): a catalog contract →
    ``certified_assets``; a template (or the map it was imported from) → its ``world_templates`` and
    ``sensor_rigs`` partition; the suite → what reads it: ``reference_pools`` per template, ``scenario_manifests``
    and ``sensor_observations`` per sample batch (``sample_keys``), ``split_assignments`` and ``coverage_report``.
    The automation condition takes it from there.

    No run keys: the cursor already requests each change once, and Dagster launches one run per run key ever, so
    a key made of the version would skip an edit back to a version seen before (edit, revert, edit again)."""
    changed = sorted(k for k in now if before.get(k) != now[k])
    requests = []
    for k in changed:
        if k == version_key(catalog_contracts.key, None):
            requests.append(dg.RunRequest(asset_selection=[certified_assets.key]))
        elif k.startswith(f"{template_sources.key.to_user_string()}["):
            template_id = k[k.index("[") + 1:-1]
            requests.append(dg.RunRequest(asset_selection=[world_templates.key, sensor_rigs.key],
                                          partition_key=template_id))
        elif k == version_key(suite_file.key, None):
            requests += [dg.RunRequest(asset_selection=SUITE_FEEDS_TEMPLATE, partition_key=t) for t in template_ids()]
            requests += [dg.RunRequest(asset_selection=SUITE_FEEDS_SAMPLE, partition_key=key) for key in sample_keys]
            requests.append(dg.RunRequest(asset_selection=SUITE_FEEDS_SUITE))
    return requests


def suite_sample_keys(source: SourceData, instance: dg.DagsterInstance) -> list[dg.MultiPartitionKey]:
    """Every registered batch of every template of the suite (none when the suite does not load: its stages fail
    with the reason anyway)."""
    try:
        suite = load_suite(source.suite_file, source.templates_dir)
    except SuiteError:
        return []
    batches = sorted(instance.get_dynamic_partitions(BATCH_PARTITIONS))
    return [dg.MultiPartitionKey({"template": t, "batch": b}) for t in sorted(suite.templates) if t in template_ids()
            for b in batches]


def source_sensor_interval_s() -> int:
    """``SIMREADY_SOURCE_SENSOR_INTERVAL_S``, 30 when unset; anything but a positive whole number is one line."""
    text = os.environ.get("SIMREADY_SOURCE_SENSOR_INTERVAL_S", "30")
    if not text.isdigit() or int(text) < 1:
        raise DeploymentError("SIMREADY_SOURCE_SENSOR_INTERVAL_S", "", f"{text!r} is not a positive whole number")
    return int(text)


@dg.sensor(
    minimum_interval_seconds=source_sensor_interval_s(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    asset_selection=FED_BY_INPUTS,
    description="Records the input files' new data versions (observations, no run) and requests what a new or "
                "changed template, map, catalog contract or suite feeds.",
)
def source_files_sensor(context: dg.SensorEvaluationContext, source: SourceData) -> dg.SensorResult:
    hashes = source_file_hashes(source)
    versions = input_versions(source, hashes)
    now = {version_key(k, p): v for (k, p), v in versions.items()}
    before = _cursor_versions(context.cursor)
    context.update_cursor(json.dumps(now, sort_keys=True))
    # The input assets' observations (no run): on the first evaluation and whenever an input changed. `simready
    # status` may have recorded them already; the requests follow the cursor, not the instance.
    observed = new_observations(context.instance, versions, input_files(source, hashes)) if before != now else []
    if before is None:
        return dg.SensorResult(skip_reason="first evaluation: recorded the inputs' current data versions",
                               asset_events=observed)
    suite_changed = before.get(version_key(suite_file.key, None)) != now.get(version_key(suite_file.key, None))
    requests = changed_requests(before, now, suite_sample_keys(source, context.instance) if suite_changed else [])
    return dg.SensorResult(run_requests=requests, asset_events=observed,
                           skip_reason=None if requests else "no template, map, contract or suite changed")


def invalid_batch_keys(keys: list[str]) -> dict[str, str]:
    """``{key: one-line reason}`` for every registered batch key that is not ``b<digits>``."""
    reasons = {}
    for key in keys:
        try:
            batch_index(key)
        except SuiteError as exc:
            reasons[key] = exc.one_line()
    return reasons


@dg.sensor(
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Removes a sample batch key that is not b0000 … b9999 (an instance without SimreadyInstance "
                "stores any), saying why.",
)
def batch_keys_sensor(context: dg.SensorEvaluationContext):
    bad = invalid_batch_keys(sorted(context.instance.get_dynamic_partitions(BATCH_PARTITIONS)))
    if not bad:
        return dg.SkipReason("every batch key is of the form b0000")
    for reason in bad.values():
        context.log.error(f"{reason}; removed it")
    return dg.SensorResult(
        dynamic_partitions_requests=[batch_partitions.build_delete_request(sorted(bad))],
        skip_reason=dg.SkipReason("; ".join(f"removed {reason}" for reason in bad.values())),
    )
