"""Scenario stage: ``scenario_manifests``, ``rejection_log``, ``coverage_report`` (SPEC §1, §6, §13).

Sample-level assets are partitioned template × batch (see ``partitions.py``);
one partition materializes a whole batch of samples in one step, because
Dagster's per-run cost is far above a sample's.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import json
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from simready.assets.catalog import certified_assets
from simready.assets.metadata import markdown_table, png_markdown
from simready.assets.partitions import batch_partitions, by_template, sample_partitions, template_partitions
from simready.assets.world import world_templates
from simready.catalog.catalog import load_catalog
from simready.hashing import content_hash, file_sha256
from simready.resources import ArtifactStore, SourceData
from simready.scenario.batch import build_batch, read_rejections, write_batch
from simready.scenario.coverage_summary import coverage_table, coverage_totals, merge_cells, plot_coverage_heatmap
from simready.scenario.ladder import REJECTION_FIELDS
from simready.scenario.suite import load_suite
from simready.world.template import load_template

#: scenario-2: coverage_report counts branches (accepted per action, matched pairs whole).
SCENARIO_CODE_VERSION = "scenario-2"


def _eager_on_data_version() -> dg.AutomationCondition:
    """``AutomationCondition.eager()``, but a parent counts as updated only when its *data version* changed.

    Why: the stock condition fires on any new parent materialization. A rig-only
    template edit rematerializes ``world_templates`` with the same data version
    (the world did not change) — with the stock condition the manifests,
    trajectories and branches would all be recomputed, byte for byte, for
    nothing. Here they stay put and only what reads the changed version (the
    rig → observations) is requested, which is also what ``simready status``
    reports as stale.
    """
    AC = dg.AutomationCondition
    changed = AC.any_deps_match(
        (AC.data_version_changed() & ~AC.executed_with_root_target()).with_label("data_version_changed_without_root")
        | AC.will_be_requested()
    ).with_label("any_deps_data_version_changed")
    return (
        AC.in_latest_time_window()
        & (AC.newly_missing() | changed).since_last_handled()
        & ~AC.any_deps_missing()
        & ~AC.any_deps_in_progress()
        & ~AC.in_progress()
    ).with_label("eager_on_data_version")


EAGER = _eager_on_data_version()


def batch_dir(store: ArtifactStore, template_id: str, batch: str) -> Path:
    return store.path("samples", template_id, batch)


def batch_of(context) -> tuple[str, str]:
    """(template id, batch key) of a template × batch partition (asset or check context)."""
    key = context.partition_key.keys_by_dimension
    return key["template"], key["batch"]


def batch_sample_dirs(context, store: ArtifactStore) -> list[Path]:
    """Sample folders of the partition's batch, sorted."""
    from simready.sim.batch import sample_dirs

    return sample_dirs(batch_dir(store, *batch_of(context)))


def _require_valid_template(store: ArtifactStore, template_id: str) -> None:
    validation = store.path("templates", template_id, "validation.json")
    if not validation.exists() or not json.loads(validation.read_text())["valid"]:
        raise dg.Failure(f"{validation}: template {template_id} is not materialized as valid")


@dg.asset(
    group_name="scenario",
    kinds={"python"},
    partitions_def=sample_partitions,
    deps=[dg.AssetDep(world_templates, partition_mapping=by_template), certified_assets],
    code_version=SCENARIO_CODE_VERSION,
    automation_condition=EAGER,
    description="Accepted, fully resolved scenario manifests of one template's sample batch (SPEC §6).",
)
def scenario_manifests(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    template_id, batch = batch_of(context)
    _require_valid_template(store, template_id)
    template = load_template(source.template_file(template_id))
    catalog = load_catalog(Path(source.catalog_generated_dir))
    result = build_batch(load_suite(source.suite_file), template, batch, catalog)
    out = write_batch(result, batch_dir(store, template_id, batch))
    summary = result.summary()
    rows = [
        {"sample": m.sample_id, "intent": m.intent, "cell": m.coverage_cell.id, "split": m.split}
        for m in result.manifests
    ]
    context.log.info(f"{template_id}/{batch}: {summary['accepted']} accepted of {summary['proposals']} proposals")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(result.data_version),
        metadata={
            "accepted": summary["accepted"],
            "requested": summary["requested"],
            "proposals": summary["proposals"],
            "yield": round(summary["accepted"] / summary["proposals"], 4) if summary["proposals"] else 0.0,
            "folder": dg.MetadataValue.path(str(out)),
            "samples": markdown_table(rows, ["sample", "intent", "cell", "split"]),
        },
    )


def _registered_batches(context: dg.AssetExecutionContext) -> list[str]:
    return sorted(context.instance.get_dynamic_partitions(batch_partitions.name))


@dg.asset(
    group_name="scenario",
    kinds={"parquet"},
    partitions_def=template_partitions,
    deps=[dg.AssetDep(scenario_manifests, partition_mapping=by_template)],
    code_version=SCENARIO_CODE_VERSION,
    automation_condition=EAGER,
    description="Every rejected proposal of a template with its ladder stage and reason (Parquet).",
)
def rejection_log(context: dg.AssetExecutionContext, store: ArtifactStore) -> dg.MaterializeResult:
    template_id = context.partition_key
    rows = []
    for batch in _registered_batches(context):
        for row in read_rejections(batch_dir(store, template_id, batch)):
            rows.append({**row, "batch": batch})
    columns = ["batch", *REJECTION_FIELDS]
    table = pa.table({c: [r[c] for r in rows] for c in columns}, schema=_rejection_schema(columns))
    path = store.path("samples", template_id, "rejection_log.parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)
    by_stage: dict[str, int] = {}
    for r in rows:
        by_stage[r["stage"]] = by_stage.get(r["stage"], 0) + 1
    return dg.MaterializeResult(
        data_version=dg.DataVersion(content_hash([[r[c] for c in columns] for r in rows])),
        metadata={
            "rows": len(rows),
            "path": dg.MetadataValue.path(str(path)),
            "by_stage": dg.MetadataValue.json(dict(sorted(by_stage.items()))),
        },
    )


def _rejection_schema(columns: list[str]) -> pa.Schema:
    ints = {"attempt", "proposal_index"}
    return pa.schema([(c, pa.int64() if c in ints else pa.string()) for c in columns])


@dg.asset(
    group_name="scenario",
    kinds={"python"},
    deps=[scenario_manifests, "validity_reports"],
    code_version=SCENARIO_CODE_VERSION,
    automation_condition=EAGER,
    description="Suite dashboard: counts per declared causal cell with a heatmap, validity verdicts, suite weights "
    "under the low-fidelity share cap, and the GX Data Docs.",
)
def coverage_report(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    suite = load_suite(source.suite_file)
    cell_files = [
        batch_dir(store, t, b) / "cells.json"
        for t in sorted(suite.templates)
        for b in _registered_batches(context)
        if (batch_dir(store, t, b) / "cells.json").exists()
    ]
    merged = merge_cells(cell_files)
    intents = [i for t in suite.templates.values() for i in t]
    rows = coverage_table(merged, intents)
    totals = coverage_totals(rows)
    out = store.ensure_dir("coverage")
    (out / "coverage.json").write_text(json.dumps({"totals": totals, "cells": rows}, indent=1, sort_keys=True))
    png = plot_coverage_heatmap(rows, out / "coverage_heatmap.png")
    under = [r for r in rows if r["under_target"] and r["proposals"] > 0]
    suite_weights = suite_validity(store, suite, _registered_batches(context))
    (out / "suite_weights.json").write_text(json.dumps(suite_weights, indent=1, sort_keys=True))
    docs = build_docs(store, suite, _registered_batches(context))
    return dg.MaterializeResult(
        data_version=dg.DataVersion(file_sha256(str(out / "coverage.json"))),
        metadata={
            "cells": totals["cells"],
            "cells_filled": totals["cells_filled"],
            "cells_with_samples": totals["cells_with_samples"],
            "fill_fraction": totals["fill_fraction"],
            "heatmap": png_markdown(png, "coverage fill per cell"),
            "under_target_tried": markdown_table(under[:50], ["intent", "cell", "accepted", "target", "dominant_rejection"]),
            "by_intent": dg.MetadataValue.json(totals["by_intent"]),
            "path": dg.MetadataValue.path(str(out / "coverage.json")),
            "validity_accepted": suite_weights["accepted"],
            "validity_rejected": suite_weights["rejected"],
            "branches": dg.MetadataValue.json(suite_weights["branches"]["by_branch"]),
            "matched_sets_whole": f"{suite_weights['branches']['matched_sets_whole']}/{suite_weights['branches']['matched_sets']}",
            "rejected_branches": markdown_table(suite_weights["branches"]["rejected"][:50], ["sample", "branch", "reason"]),
            "low_fidelity_share": suite_weights["policy"].get("low_fidelity_share", 0.0),
            "scaled_down": suite_weights["policy"].get("scaled_down", False),
            "suite_weights": dg.MetadataValue.path(str(out / "suite_weights.json")),
            "data_docs": dg.MetadataValue.path(str(docs)) if docs else "(no tables yet)",
        },
    )


def suite_validity(store: ArtifactStore, suite, batches: list[str]) -> dict:
    """Every base sample's validity report under the suite-level weight policy (share cap, scaling)."""
    from simready.sim.batch import sample_dirs
    from simready.validity.gate import ValidityReport, apply_suite_weight_policy

    from simready.validity.batch import branch_summary

    reports, records = [], []
    for template_id in sorted(suite.templates):
        for batch in batches:
            for d in sample_dirs(batch_dir(store, template_id, batch)):
                if (d / "validity.json").exists():
                    rec = json.loads((d / "validity.json").read_text())
                    reports.append(ValidityReport.model_validate(rec["base"]))
                    records.append(rec)
    accepted = sum(1 for r in reports if r.accepted)
    policy = apply_suite_weight_policy(reports) if reports else {}
    return {"accepted": accepted, "rejected": len(reports) - accepted, "policy": _jsonable(policy),
            "branches": branch_summary(records)}


def _jsonable(value):
    return json.loads(json.dumps(value, default=lambda o: o.model_dump() if hasattr(o, "model_dump") else str(o)))


def build_docs(store: ArtifactStore, suite, batches: list[str]):
    """GX Data Docs over the suite's manifests, trajectories and validity reports (HTML for reviewers)."""
    import pandas as pd

    from simready.checks.gx_checks import manifests_frame, trajectories_frame, validity_reports_frame
    from simready.sim.batch import sample_dirs
    from simready.validity.expectations import build_data_docs

    dirs = [d for t in sorted(suite.templates) for b in batches for d in sample_dirs(batch_dir(store, t, b))]
    if not dirs:
        return None
    tables = [("manifests", manifests_frame(dirs))]
    with_trace = [d for d in dirs if (d / "trace.parquet").exists()]
    if with_trace:
        tables.append(("trajectories", trajectories_frame(with_trace)))
    with_validity = [d for d in dirs if (d / "validity.json").exists()]
    if with_validity:
        tables.append(("validity_reports", validity_reports_frame(with_validity)))
    logs = [pd.read_parquet(p) for t in sorted(suite.templates)
            if (p := store.path("samples", t, "rejection_log.parquet")).exists()]
    if logs and sum(len(x) for x in logs):
        tables.append(("rejection_log", pd.concat(logs, ignore_index=True)))
    return build_data_docs(tables, store.path("data_docs"))
