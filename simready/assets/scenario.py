"""Scenario stage: ``scenario_manifests`` and ``rejection_log`` (SPEC §1, §6).

Sample-level assets are partitioned template × batch (see ``partitions.py``);
one partition materializes a whole batch of samples in one step, because
Dagster's per-run cost is far above a sample's.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import io

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from simready.assets.automation import EAGER
from simready.assets.catalog import certified_assets
from simready.assets.inputs import program_sources, suite_file
from simready.assets.metadata import artifact_link, table as table_metadata
from simready.assets.partitions import by_template, registered_batches, sample_partitions, template_partitions
from simready.assets.stage_io import batch_dir, batch_of, save_batch, stage_inputs
from simready.assets.world import world_templates
from simready.common.hashing import content_hash
from simready.resources import ArtifactStore, SourceData
from simready.scenario.ladder import REJECTION_FIELDS
from simready.scenario.suite import load_suite

#: scenario-2: coverage_report (``suite.py``, same code version) counts branches (accepted per action, matched pairs whole).
#: scenario-3: background traffic carries reserves and is judged against the scenario's relation; its density is a
#: coverage dimension (cells ``…|traffic=<bucket>``, coverage rows name their bucket); batch records hold its cost.
#: scenario-4: pedestrian and cyclist densities are coverage dimensions too (``…|pedestrians=<bucket>|cyclists=<bucket>``),
#: the manifest records the realized densities, and a density beyond what the map holds is refused.
SCENARIO_CODE_VERSION = "scenario-4"


def _require_valid_template(store: ArtifactStore, template_id: str) -> None:
    validation = store.layout.template_validation(template_id)
    if not store.exists(validation) or not store.read_json(validation)["valid"]:
        raise dg.Failure(f"{store.url(validation)}: template {template_id} is not materialized as valid",
                         allow_retries=False)


def cell_columns(dims: dict) -> dict[str, str]:
    """A coverage cell's coordinates as table cells, one per dimension: a binned dimension's bin and its bounds
    (``x``, ``x.lo``, ``x.hi``) in one cell, ``mild (2–3.5)`` or ``9–11.5``."""
    out: dict[str, str] = {}
    for name in sorted({k.rsplit(".", 1)[0] if k.endswith((".lo", ".hi")) else k for k in dims}):
        lo, hi = dims.get(f"{name}.lo"), dims.get(f"{name}.hi")
        span = f"{lo:g}–{hi:g}" if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) else ""
        value = dims.get(name)
        out[name] = f"{value} ({span})" if value is not None and span else (str(value) if value is not None else span)
    return out


@dg.asset(
    group_name="scenario",
    kinds={"python"},
    partitions_def=sample_partitions,
    deps=[dg.AssetDep(world_templates, partition_mapping=by_template), certified_assets, suite_file,
          dg.AssetDep(program_sources, partition_mapping=by_template)],
    code_version=SCENARIO_CODE_VERSION,
    automation_condition=EAGER,
    description="Accepted, fully resolved scenario manifests of one template's sample batch (SPEC §6).",
)
def scenario_manifests(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    from simready.scenario.batch import build_batch, write_batch  # definitions stay light: scenario.batch (~0.2 s)
    from simready.sim.ladder.settle import PhysicsSettleStage  # definitions stay light: pybullet, numba
    from simready.sim.ladder.traffic import TrafficRolloutStage  # definitions stay light: pybullet, matplotlib

    template_id, batch = batch_of(context)
    _require_valid_template(store, template_id)
    template, catalog = stage_inputs(source, template_id)
    # The physics settle joins the pipeline's ladder (SPEC §19): 0.5 s of PyBullet at rest per proposal, no full
    # rollout (the trajectories stage rolls out every accepted sample; a rollout here cost 28.5 s against 0.7 s
    # for the default suite's proposals), and its measurements stay out of the manifests.
    settle = PhysicsSettleStage(catalog, rollout=False, record=False)
    suite = load_suite(source.suite_file, source.templates_dir)
    extra = [settle]
    if any(suite.traffic_for(template_id, intent) for intent in suite.intents_for(template_id)):
        # Background traffic (SPEC §20): the street is rolled out once per proposal; a crash of the traffic rejects it.
        extra.append(TrafficRolloutStage(catalog))
    result = build_batch(suite, template, batch, catalog, extra_stages=extra)
    write_batch(result, batch_dir(store, template_id, batch).root)
    save_batch(store, template_id, batch)
    summary = result.summary()
    # The coverage cell one column per dimension (its id string is as wide as a screen).
    rows = [{**cell_columns(m.coverage_cell.dims), "sample": m.sample_id, "intent": m.intent, "split": m.split}
            for m in result.manifests]
    dims = sorted({k for m in result.manifests for k in cell_columns(m.coverage_cell.dims)})
    context.log.info(f"{template_id}/{batch}: {summary['accepted']} accepted of {summary['proposals']} proposals")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(result.data_version),
        metadata={
            "accepted": summary["accepted"],
            "requested": summary["requested"],
            "proposals": summary["proposals"],
            "yield": round(summary["accepted"] / summary["proposals"], 4) if summary["proposals"] else 0.0,
            "folder": artifact_link(store, store.layout.batch(template_id, batch).root, folder=True),
            "samples": table_metadata(rows, [("sample", "string"), ("intent", "string"), ("split", "string"),
                                             *((d, "string") for d in dims)]),
        },
    )


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
    from simready.scenario.batch import read_rejections  # definitions stay light: scenario.batch (~0.2 s)

    template_id = context.partition_key
    rows = []
    for batch in registered_batches(context):
        for row in read_rejections(batch_dir(store, template_id, batch).root):
            rows.append({**row, "batch": batch})
    columns = ["batch", *REJECTION_FIELDS]
    table = pa.table({c: [r[c] for r in rows] for c in columns}, schema=_rejection_schema(columns))
    parquet = io.BytesIO()
    pq.write_table(table, parquet, compression="zstd")
    key = store.layout.rejection_log(template_id)
    store.write_bytes(key, parquet.getvalue())
    by_stage: dict[str, int] = {}
    for r in rows:
        by_stage[r["stage"]] = by_stage.get(r["stage"], 0) + 1
    return dg.MaterializeResult(
        data_version=dg.DataVersion(content_hash([[r[c] for c in columns] for r in rows])),
        metadata={
            "dagster/row_count": len(rows),
            "dagster/column_schema": dg.MetadataValue.table_schema(
                dg.TableSchema(columns=[dg.TableColumn(f.name, str(f.type)) for f in table.schema])),
            "path": artifact_link(store, key),
            "by_stage": table_metadata([{"stage": k, "rejections": v} for k, v in sorted(by_stage.items())],
                                       [("stage", "string"), ("rejections", "int")]),
        },
    )


def _rejection_schema(columns: list[str]) -> pa.Schema:
    ints = {"attempt", "proposal_index"}
    return pa.schema([(c, pa.int64() if c in ints else pa.string()) for c in columns])
