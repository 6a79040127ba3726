"""The single Dagster ``Definitions`` of this code location (``dagster dev -w workspace.yaml``)."""

import warnings

import dagster as dg

from simready.assets.catalog import certified_assets
from simready.assets.inputs import INPUTS
from simready.assets.measurement import observations_and_truth
from simready.assets.orchestration import automation_sensor, batch_keys_sensor, daily_batch_schedule, source_files_sensor
from simready.assets.partitions import sample_partitions, template_partitions
from simready.assets.release import dataset_release
from simready.assets.scenario import rejection_log, scenario_manifests
from simready.assets.simulation import checkpoints_and_branches, trajectories
from simready.assets.suite import coverage_report, split_assignments
from simready.assets.validity import reference_pools, validity_reports
from simready.assets.world import sensor_rigs, world_templates
from simready.checks.expectations import gx_manifests, gx_rejection_log, gx_trajectories, gx_validity_reports
from simready.checks.measurement import observations_complete, observations_parity
from simready.checks.release import release_verifies
from simready.checks.scenario import manifests_pass_ladder, manifests_schema_valid, rejection_reasons_nonempty
from simready.checks.simulation import branches_share_parent_history, checkpoint_restore_reproduces, trajectories_accepted
from simready.checks.suite import no_split_leakage
from simready.checks.world import catalog_certified, template_assets_certified, template_valid
from simready.resources import executor_for_deployment, resources_for_deployment

#: Jobs in the order the main job runs them; each groups the assets that share a partitioning.
CATALOG_ASSETS = [certified_assets]
TEMPLATE_ASSETS = [world_templates, sensor_rigs, reference_pools]
SAMPLE_ASSETS = [scenario_manifests, trajectories, checkpoints_and_branches, observations_and_truth, validity_reports]
TEMPLATE_ROLLUP_ASSETS = [rejection_log]
SUITE_ASSETS = [split_assignments, coverage_report, dataset_release]

ALL_ASSETS = CATALOG_ASSETS + TEMPLATE_ASSETS + SAMPLE_ASSETS + TEMPLATE_ROLLUP_ASSETS + SUITE_ASSETS
ALL_CHECKS = [
    catalog_certified,
    template_valid,
    template_assets_certified,
    manifests_schema_valid,
    manifests_pass_ladder,
    rejection_reasons_nonempty,
    trajectories_accepted,
    checkpoint_restore_reproduces,
    branches_share_parent_history,
    observations_complete,
    observations_parity,
    no_split_leakage,
    gx_manifests,
    gx_trajectories,
    gx_rejection_log,
    gx_validity_reports,
    release_verifies,
]

#: Who answers for each stage's assets: shown on every asset page, a filter in the asset catalog.
OWNERS = {"inputs": ["team:authoring"], "world": ["team:world"], "scenario": ["team:scenario"],
          "simulation": ["team:simulation"], "measurement": ["team:measurement"], "validity": ["team:validity"],
          "suite": ["team:datasets"], "release": ["team:datasets"]}


def reviewed(assets: list) -> list:
    """The assets with their owners (by group) and code references (where each asset's function is; an input's
    files), applied here once rather than on every decorator."""
    def own(spec: dg.AssetSpec) -> dg.AssetSpec:
        return spec.replace_attributes(owners=OWNERS.get(spec.group_name, ["team:datasets"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)  # code references are beta in 1.13: chosen, not news
        return [a.map_asset_specs(own) if isinstance(a, dg.AssetsDefinition) else own(a)
                for a in dg.with_source_code_references(assets)]


catalog_job = dg.define_asset_job("catalog_job", selection=dg.AssetSelection.assets(*CATALOG_ASSETS))
templates_job = dg.define_asset_job(
    "templates_job", selection=dg.AssetSelection.assets(*TEMPLATE_ASSETS), partitions_def=template_partitions
)
#: A failed step of a sample batch (an asset or a check) runs again after 2 s, then 4 s: what fails once and not
#: twice is the infrastructure (an S3 endpoint that stalled, a worker that died), not the data.
STEP_RETRY = dg.RetryPolicy(max_retries=2, delay=2, backoff=dg.Backoff.EXPONENTIAL)

#: Its tag is what the production instance's run queue limits (``deploy/production/dagster.yaml``).
samples_job = dg.define_asset_job(
    "samples_job", selection=dg.AssetSelection.assets(*SAMPLE_ASSETS), partitions_def=sample_partitions,
    tags={"simready/stage": "samples"}, op_retry_policy=STEP_RETRY,
)
template_rollup_job = dg.define_asset_job(
    "template_rollup_job", selection=dg.AssetSelection.assets(*TEMPLATE_ROLLUP_ASSETS), partitions_def=template_partitions
)
suite_job = dg.define_asset_job("suite_job", selection=dg.AssetSelection.assets(*SUITE_ASSETS))

#: Locally, runs launched by the daemon (schedule, sensors, automation, backfills) and the UI execute their
#: steps in the run's own process: a step subprocess re-imports the stack (seconds) and 2 cores gain nothing
#: from running steps side by side, while one run batches many samples anyway. In production every step goes
#: to a Celery worker (``simready.resources``).
defs = dg.Definitions(
    executor=executor_for_deployment(),
    assets=reviewed(INPUTS + ALL_ASSETS),
    asset_checks=ALL_CHECKS,
    jobs=[catalog_job, templates_job, samples_job, template_rollup_job, suite_job],
    schedules=[daily_batch_schedule],
    sensors=[automation_sensor, source_files_sensor, batch_keys_sensor],
    resources=resources_for_deployment(),
)
