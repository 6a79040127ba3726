"""Asset checks for the world stage; blocking, since every later stage relies on them."""

import dagster as dg

from simready.assets.catalog import certified_assets
from simready.assets.partitions import template_partitions
from simready.assets.world import world_templates
from simready.checks.findings import findings
from simready.resources import ArtifactStore


@dg.asset_check(asset=certified_assets, blocking=True, description="Every catalog entry passed certification.")
def catalog_certified(store: ArtifactStore) -> dg.AssetCheckResult:
    report = store.read_json(store.layout.certification)
    failed = [e for e in report["entries"] if not e["passed"]]
    return dg.AssetCheckResult(
        passed=not failed and report["n_entries"] > 0,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "entries": report["n_entries"],
            "failed": findings({e["id"]: [r["code"] + ": " + r["message"] for r in e["reasons"]] for e in failed},
                               key="entry", column="reason"),
        },
    )


def _validation(store: ArtifactStore, template_id: str) -> dict:
    return store.read_json(store.layout.template_validation(template_id))


@dg.asset_check(
    asset=world_templates,
    partitions_def=template_partitions,
    blocking=True,
    description="The template parses and validates: polygons, references, directed lane graph.",
)
def template_valid(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    report = _validation(store, context.partition_key)
    structural = [e for e in report["errors"] if e not in report["reference_errors"]]
    return dg.AssetCheckResult(
        passed=report["parsed"] and not structural,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"errors": findings(structural, column="error"), "template_hash": report["template_hash"]},
    )


@dg.asset_check(
    asset=world_templates,
    partitions_def=template_partitions,
    blocking=True,
    description="Every asset the template references exists in the catalog and is certified.",
)
def template_assets_certified(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    report = _validation(store, context.partition_key)
    return dg.AssetCheckResult(
        passed=report["parsed"] and not report["reference_errors"],
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"reference_errors": findings(report["reference_errors"], column="error")},
    )
