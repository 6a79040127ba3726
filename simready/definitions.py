"""The single Dagster ``Definitions`` of this code location (``dagster dev -w workspace.yaml``)."""

from __future__ import annotations

import dagster as dg

from simready.assets.catalog import certified_assets
from simready.assets.world import world_templates
from simready.checks.world_checks import catalog_certified, template_assets_certified, template_valid
from simready.resources import resources_for_deployment

ALL_ASSETS = [certified_assets, world_templates]
ALL_CHECKS = [catalog_certified, template_valid, template_assets_certified]

catalog_job = dg.define_asset_job("catalog_job", selection=dg.AssetSelection.assets(certified_assets))
templates_job = dg.define_asset_job(
    "templates_job", selection=dg.AssetSelection.assets(world_templates), partitions_def=world_templates.partitions_def
)

defs = dg.Definitions(
    assets=ALL_ASSETS,
    asset_checks=ALL_CHECKS,
    jobs=[catalog_job, templates_job],
    resources=resources_for_deployment(),
)
