"""Simulation stage: ``trajectories``, ``checkpoints``, ``action_branches`` (SPEC §7–§9).

Partitioned like ``scenario_manifests`` (template × batch); one step rolls out
every sample of the batch. ``checkpoints`` and ``action_branches`` come from
one computation (a checkpoint exists to be branched from), so they are one
multi-asset step with two assets, each with its own data version.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import dagster as dg

from simready.assets.automation import EAGER
from simready.assets.metadata import parquet_metadata, picture, table
from simready.assets.partitions import sample_partitions
from simready.assets.provenance import recorded_together
from simready.assets.scenario import scenario_manifests
from simready.common.parallel import map_samples
from simready.assets.stage_io import batch_dir, batch_of, save_batch, stage_inputs
from simready.resources import ArtifactStore, SourceData

#: sim-3: every vehicle a force-driven rigid body in dynamic-v1, struck road users carried, post-crash stops,
#: collision events with duration and delta-v, lateral take-over from the current state, pedestrian kerb ramps.
#: sim-2: the tunnelling ray sees the statics, a shove by a moving agent is no energy gain, and the
#: divergence check clears no diagonal over-speed; trajectories of sim-1 may carry verdicts these change.
SIM_CODE_VERSION = "sim-3"
BACKEND = "dynamic-v1"


def _batch_inputs(context, store: ArtifactStore, source: SourceData):
    template_id, batch = batch_of(context)
    template, catalog = stage_inputs(source, template_id)
    return template, catalog, batch_dir(store, template_id, batch)


def _branches_follow(context) -> bool:
    """Whether this run materializes ``action_branches`` too (the main job's sample batches do; a run of the
    trajectories alone does not)."""
    selected = context.run.asset_selection or context.job_def.asset_layer.selected_asset_keys
    return dg.AssetKey("action_branches") in selected


@dg.asset(
    group_name="simulation",
    kinds={"pybullet", "parquet"},
    partitions_def=sample_partitions,
    deps=[scenario_manifests],
    code_version=SIM_CODE_VERSION,
    automation_condition=EAGER,
    description="Authoritative state traces (Parquet, SPEC §7) of every sample in the batch, dynamic-v1.",
)
def trajectories(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    from simready.sim.batch import batch_version, simulate_sample, warm_world  # definitions stay light: pybullet

    template, catalog, batch = _batch_inputs(context, store, source)
    warm_world(template, catalog)  # once here, not in each worker
    samples = batch.samples()
    # A sample's top-down picture is half its rollout's CPU; where this run also rolls out the branches, their step
    # draws every sample's picture again, base and branches together, over the same file (and the first's thumbnail):
    # only the first sample's is drawn here, for this asset's thumbnail (the branches' step replaces it too).
    first_only = _branches_follow(context)
    rows = map_samples(lambda s: simulate_sample(s.root, template, catalog, BACKEND,
                                                 plot=not first_only or s.root == samples[0].root), samples)
    save_batch(store, *batch_of(context))
    accepted = sum(1 for r in rows if r["verdict"] == "accept")
    metadata = {
        "samples": len(rows),
        "accepted": accepted,
        "rejected": len(rows) - accepted,
        "backend": BACKEND,
        **parquet_metadata([s.trace for s in batch.samples() if s.trace.is_file()]),
        "rollouts": table(rows, [("sample", "string"), ("intent", "string"), ("verdict", "string"),
                                 ("min_ttc_s", "float"), ("collisions", "int")]),
    }
    if rows:
        plot = store.layout.batch(*batch_of(context)).sample(rows[0]["sample"]).rollout_plot
        metadata["rollout_plot"] = picture(store, plot, f"{rows[0]['sample']} rollout")
    return dg.MaterializeResult(data_version=dg.DataVersion(batch_version(rows, "trace_sha256")), metadata=metadata)


#: The branch-outcome columns the asset's metadata table shows (``label`` first), beside the sample and decision time.
OUTCOME_COLUMNS = ("label", "collision", "collision_with", "collision_t", "collision_relative_speed_mps", "min_ttc_s",
                   "stopping_distance_m")
#: Their types in the table, where not float.
OUTCOME_TYPES = {"label": "string", "collision": "bool", "collision_with": "string"}
#: Their headers in the table, where the field's name is longer than its values (so that the table fits a screen).
OUTCOME_HEADERS = {"label": "branch", "collision_with": "with", "collision_t": "collision_t_s",
                   "collision_relative_speed_mps": "impact_mps", "stopping_distance_m": "stop_m"}


def _delta_v_text(delta_v: dict[str, float] | None) -> str:
    """``actor 1.23, other 4.56`` (m/s), or empty without a collision."""
    return ", ".join(f"{k.rsplit(':', 1)[-1]} {v:.2f}" for k, v in sorted(delta_v.items())) if delta_v else ""


@dg.multi_asset(
    group_name="simulation",
    partitions_def=sample_partitions,
    specs=[
        dg.AssetSpec(
            "checkpoints",
            deps=["trajectories"],
            kinds={"pybullet"},
            code_version=SIM_CODE_VERSION,
            automation_condition=EAGER,
            description="Complete, content-addressed pre-decision snapshots (SPEC §9), one per sample.",
        ),
        dg.AssetSpec(
            "action_branches",
            deps=["checkpoints"],
            kinds={"parquet"},
            code_version=SIM_CODE_VERSION,
            automation_condition=EAGER,
            description="Matched brake/coast rollouts from each checkpoint, with the branch-outcome table.",
        ),
    ],
)
def checkpoints_and_branches(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData):
    from simready.sim.batch import batch_version, branch_sample, warm_world  # definitions stay light: pybullet

    template, catalog, batch = _batch_inputs(context, store, source)
    warm_world(template, catalog)  # once here, not in each worker
    summaries = map_samples(lambda s: branch_sample(s.root, template, catalog, BACKEND), batch.samples())
    save_batch(store, *batch_of(context))
    rows = [
        {"sample": s["sample"], "decision_t_s": s["decision_t_s"], **{k: b.get(k) for k in OUTCOME_COLUMNS},
         "delta_v_mps": _delta_v_text(b.get("collision_delta_v_mps"))}
        for s in summaries
        for b in s["branches"]
    ]
    checkpoints = dg.MaterializeResult(
        asset_key="checkpoints",
        data_version=dg.DataVersion(batch_version(summaries, "checkpoint")),
        metadata={
            "checkpoints": len(summaries),
            "decision_sources": ", ".join(sorted({s["decision_source"] for s in summaries})),
        },
    )
    metadata = {
        "branches": len(rows),
        "collisions": sum(1 for row in rows if row["collision"]),
        **parquet_metadata([b.trace for s in batch.samples() for b in s.branches()]),
        "outcomes": table([{OUTCOME_HEADERS.get(k, k): v for k, v in r.items()} for r in rows],
                          [("sample", "string"), ("branch", "string"), ("decision_t_s", "float"),
                           *((OUTCOME_HEADERS.get(c, c), OUTCOME_TYPES.get(c, "float")) for c in OUTCOME_COLUMNS[1:]),
                           ("delta_v_mps", "string")]),
    }
    if summaries:
        plot = store.layout.batch(*batch_of(context)).sample(summaries[0]["sample"]).rollout_plot
        metadata["branch_plot"] = picture(store, plot, f"{summaries[0]['sample']} brake vs coast")
    branches = dg.MaterializeResult(
        asset_key="action_branches",
        data_version=dg.DataVersion(batch_version(summaries, "trace_sha256")),
        metadata=metadata,
    )
    with recorded_together(context, "checkpoints"):  # action_branches' provenance: this partition's checkpoints
        yield checkpoints
        yield branches
