"""Automation: the eager cascade, the daily batch schedule, and the source-file sensor (issue 6 item 7).

* ``default_automation_condition_sensor`` (on by default in this code location)
  evaluates every asset's ``AutomationCondition.eager()``: once a parent is
  rematerialized with a new data version, its stale children are requested,
  and so on down the graph — the cascade Dagster's non-transitive stale status
  alone does not give.
* ``daily_batch_schedule`` registers the next sample batch and materializes it
  for every template of the default suite.
* ``source_files_sensor`` notices a new or changed template or catalog contract
  file (content hash, not mtime), records the input assets' new data versions
  (``inputs.py``: observations, no run) and requests the world asset it feeds; the
  automation sensor takes it from there. It watches OpenDRIVE maps too
  (``maps/*.xodr`` beside the templates folder): a changed map requests the
  templates imported from it, whose build then fails with "re-import" until
  the template is imported again (:func:`simready.world.template_build.stale_import`).
* ``batch_keys_sensor`` removes a batch key that is not ``b0000`` … ``b9999``, with the one-line reason in
  its tick, before a run of it can start and fail. The local and production instances refuse such a key when
  it is added (``partitions.SimreadyInstance``); the sensor is for an instance without that setting (the AWS
  and Kubernetes files, a hand-made DAGSTER_HOME).
"""
# No `from __future__ import annotations`: Dagster inspects annotations at runtime.

import json
from pathlib import Path

import dagster as dg

from simready.assets.catalog import certified_assets
from simready.assets.inputs import input_versions, new_observations, source_file_hashes
from simready.assets.partitions import batch_partitions, template_ids
from simready.assets.world import sensor_rigs, world_templates
from simready.hashing import content_hash
from simready.resources import SourceData
from simready.scenario.suite import SuiteError, batch_index, batch_key, load_suite
from simready.world.template_build import templates_imported_from

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
    existing = sorted(context.instance.get_dynamic_partitions(batch_partitions.name))
    batch = next_batch_key(existing)
    context.instance.add_dynamic_partitions(batch_partitions.name, [batch])
    for template_id in sorted(load_suite().templates):
        key = dg.MultiPartitionKey({"template": template_id, "batch": batch})
        yield dg.RunRequest(run_key=f"{batch}|{template_id}", partition_key=key)


def changed_requests(before: dict[str, str], now: dict[str, str], templates_dir: str | None = None) -> list[dg.RunRequest]:
    """A catalog contract change → ``certified_assets``; a template change → its ``world_templates`` and ``sensor_rigs``
    partitions; a map change → those of every template imported from it (``templates_dir`` says where to look)."""
    changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    requests = []
    if any(k.startswith("catalog/") for k in changed):
        requests.append(dg.RunRequest(run_key=f"catalog:{now_digest(now)}", asset_selection=[certified_assets.key]))
    known = set(template_ids())
    for k in changed:
        if k.startswith("templates/"):
            template_id = k.split("/", 1)[1].removesuffix(".yaml")
            if template_id in known and k in now:
                requests.append(_template_request(template_id, now[k]))
        elif k.startswith("maps/") and k in now and templates_dir is not None:
            imported = templates_imported_from(Path(templates_dir), k.split("/", 1)[1])
            requests += [_template_request(t, now[k]) for t in imported if t in known]
    return requests


def _template_request(template_id: str, version: str) -> dg.RunRequest:
    return dg.RunRequest(run_key=f"{template_id}:{version}", asset_selection=[world_templates.key, sensor_rigs.key],
                         partition_key=template_id)


def now_digest(hashes: dict[str, str]) -> str:
    return content_hash(hashes)[7:23]


@dg.sensor(
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests the world asset fed by a new or changed template or catalog contract file.",
)
def source_files_sensor(context: dg.SensorEvaluationContext, source: SourceData) -> dg.SensorResult:
    now = source_file_hashes(source)
    before = json.loads(context.cursor) if context.cursor else None
    context.update_cursor(json.dumps(now, sort_keys=True))
    # The input assets' observations (no run): on the first evaluation and whenever a file changed.
    observed = new_observations(context.instance, input_versions(source, now)) if before != now else []
    if before is None:
        return dg.SensorResult(skip_reason="first evaluation: recorded the current hashes of templates and contracts",
                               asset_events=observed)
    requests = changed_requests(before, now, source.templates_dir)
    return dg.SensorResult(run_requests=requests, asset_events=observed,
                           skip_reason=None if requests else "no template or contract changed")


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
    bad = invalid_batch_keys(sorted(context.instance.get_dynamic_partitions(batch_partitions.name)))
    if not bad:
        return dg.SkipReason("every batch key is of the form b0000")
    for reason in bad.values():
        context.log.error(f"{reason}; removed it")
    return dg.SensorResult(
        dynamic_partitions_requests=[batch_partitions.build_delete_request(sorted(bad))],
        skip_reason=dg.SkipReason("; ".join(f"removed {reason}" for reason in bad.values())),
    )
