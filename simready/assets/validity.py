"""Validity stage: ``reference_pools`` per template and ``validity_reports`` per batch (SPEC §12)."""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import time
from pathlib import Path

import dagster as dg

from simready.assets.automation import EAGER
from simready.assets.catalog import certified_assets
from simready.assets.inputs import program_sources, suite_file
from simready.assets.metadata import artifact_link, parquet_metadata, table
from simready.assets.partitions import by_template, sample_partitions, template_partitions
from simready.assets.stage_io import batch_of, batch_samples, save_batch, stage_inputs
from simready.assets.world import world_templates
from simready.common.hashing import content_hash
from simready.common.parallel import map_samples
from simready.artifacts.layout import SampleDir
from simready.artifacts.records import shared_records
from simready.resources import ArtifactStore, SourceData
from simready.scenario.suite import load_suite

#: validity-9: the review page's bird's-eye view draws the LiDAR points of the sweep at the clock (review-camera.js
#: holds every sweep's, placed in the world by the camera overlay's code; issue 28 item 8).
#: validity-8: the review page draws each camera with the LiDAR points and truth boxes over it (review-camera.js
#: beside it, issue 28 item 8).
#: validity-7: gate-1.4.0, a feature whose PSI saturates is scored by its scenario-level statistic (robust z of the
#: scenario's mean and spread among its intent's draws); the report and review page say which statistic scored each
#: feature (issue 19 item 7).
#: validity-6: each sample scored against its own intent's reference draws (issue 19 item 7).
#: validity-5: gate-1.3.0, the distribution check scores divergence beyond the pool's leave-one-draw-out noise
#: level and reports the reference size and confidence; the review page shows them (issue 19 item 7).
#: validity-4: a reviewer page (review.html) beside each sample (issue 19).
#: validity-3: gate-1.2.0, contact windows from the trace's own collision events (issue 12).
VALIDITY_CODE_VERSION = "validity-9"
#: The gate's table in the asset's metadata: one row per sample and variant (base or branch).
GATE_COLUMNS = [("sample", "string"), ("variant", "string"), ("accepted", "bool"), ("validity", "float"),
                ("fidelity", "float"), ("realism", "float"), ("weight", "float"), ("failed", "string")]
#: reference-3: 32 draws per intent by default (Suite.reference_per_intent; was 4), enough to measure the noise level;
#: the draws are rolled out without a top-down picture (half a draw's cost).
#: reference-2: the pool's rollouts are dynamic-v1 with every vehicle force-driven (sim-3).
REFERENCE_CODE_VERSION = "reference-3"


@dg.asset(
    group_name="validity",
    kinds={"pybullet", "parquet"},
    partitions_def=template_partitions,
    deps=[world_templates, certified_assets, suite_file, program_sources],
    code_version=REFERENCE_CODE_VERSION,
    automation_condition=EAGER,
    description="The template's realism reference pool: independent draws (root 'reference') of the suite's "
                "programs, rolled out with dynamic-v1, frozen into feature rows for the distribution check.",
)
def reference_pools(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    from simready.validity.reference_pool import build_reference_pool  # definitions stay light: pybullet, pandas

    template_id = context.partition_key
    suite = load_suite(source.suite_file, source.templates_dir)
    intents = {name: suite.reference_per_intent for name in suite.intents_for(template_id)}
    template, catalog = stage_inputs(source, template_id)
    folder = store.layout.reference_dir(template_id)
    record = build_reference_pool(template, catalog, intents, store.local_dir(folder))
    store.save(folder)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(record["version"]),
        metadata={"pool_samples": record["pool_samples"],
                  **parquet_metadata([store.local_path(store.layout.reference(template_id).pool)]),
                  "intents": table([{"intent": k, "draws": v} for k, v in record["intents"].items()],
                                   [("intent", "string"), ("draws", "int")]),
                  "samples": table(record["samples"], [("sample", "string"), ("intent", "string"),
                                                       ("verdict", "string")]),
                  "pool": artifact_link(store, store.layout.reference(template_id).record)},
    )


def _reference_profile(store: ArtifactStore, template_id: str):
    from simready.validity.reference_pool import load_intent_profiles  # definitions stay light: pybullet, pandas

    record = store.layout.reference(template_id).record
    if not store.exists(record):
        raise dg.Failure(f"{store.url(record)}: missing; materialize reference_pools[{template_id}] first", allow_retries=False)
    return load_intent_profiles(store.local_dir(store.layout.reference_dir(template_id)))


@dg.asset(
    group_name="validity",
    kinds={"python"},
    partitions_def=sample_partitions,
    deps=["action_branches", "sensor_observations", dg.AssetDep(reference_pools, partition_mapping=by_template)],
    code_version=VALIDITY_CODE_VERSION,
    automation_condition=EAGER,
    description="Counterfactual validity gate (SPEC §12) on every sample and on each branch as a transformation of it.",
)
def validity_reports(context: dg.AssetExecutionContext, store: ArtifactStore) -> dg.MaterializeResult:
    from simready.review import write_sample_page  # review.__getattr__ loads Pillow, matplotlib
    from simready.review.page import Scene, write_camera_overlay  # definitions stay light: pybullet, pandas
    from simready.validity.batch import report_rows, validate_sample_dir  # definitions stay light: pybullet, pandas
    from simready.sensors_hw.lidar.ply import shared_sweeps  # definitions stay light: numba

    template_id, batch = batch_of(context)
    dirs = batch_samples(store, template_id, batch)
    reference = _reference_profile(store, template_id)

    def review(d: Path) -> tuple[Path, float, float]:
        """The sample's camera overlay and review page; (page, seconds in all, of them in the overlay)."""
        started = time.perf_counter()
        scene = Scene.of(SampleDir(d))  # read once for the overlay's BEV clouds and the page
        scene_s = time.perf_counter() - started
        write_camera_overlay(SampleDir(d), scene)
        camera_s = time.perf_counter() - started - scene_s
        page = write_sample_page(SampleDir(d), batch, camera=False, scene=scene)
        return page, time.perf_counter() - started, camera_s

    def gate_and_review(d: Path) -> tuple[dict, tuple[Path, float, float]]:
        """The sample gated, then its page: the LiDAR sweeps and the record files (legend, observed frames,
        results) the gate reads are parsed once for both."""
        with shared_sweeps(), shared_records():
            return validate_sample_dir(d, reference), review(d)

    # The samples side by side, one per core, each gated and then given its page in one go (one round of workers,
    # not one for the gate and another for the pages); the seconds are summed over the samples (CPU work, not wall).
    gated = map_samples(gate_and_review, dirs)
    records = [record for record, _ in gated]
    reviewed = [r for _, r in gated]
    pages = {d.name: page for d, (page, _, _) in zip(dirs, reviewed)}
    pages_s = sum(r[1] for r in reviewed)
    camera_s = sum(r[2] for r in reviewed)
    save_batch(store, template_id, batch)
    rows = report_rows(records)
    # The table names the checks that failed (short, so it fits a screen); each sample's review page has the reasons.
    failed = {(r["sample"], variant): ", ".join(c["check"] for c in rep["checks"] if not c["passed"]) or "—"
              for r in records for variant, rep in [("base", r["base"]), *r["branches"].items()]}
    for row in rows:
        row["failed"] = failed[(row["sample"], row["variant"])]
    bases = sum(1 for r in rows if r["variant"] == "base" and r["accepted"])
    branches = sum(1 for r in rows if r["variant"] != "base" and r["accepted"])
    keys = store.layout.batch(template_id, batch)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(content_hash(records)),
        metadata={
            # Bases and branches counted apart, as coverage_report, the run summary and the review pages count them.
            "bases_accepted": bases,
            "bases_rejected": len(records) - bases,
            "branches_accepted": branches,
            "branches_rejected": len(rows) - len(records) - branches,
            "with_sensor_evidence": sum(1 for r in records if r["sensor_evidence"]),
            "review_assets_s": round(pages_s, 3),  # the review pages (what `make bench`'s review section adds up)
            "review_camera_s": round(camera_s, 3),  # of which the camera overlays and BEV clouds (review-camera.js)
            "gate": table(rows, GATE_COLUMNS),
            # One reviewer page per sample: its videos, top-down, check table and why it is accepted or not.
            **{f"review {sample}": artifact_link(store, keys.sample(sample).review_page) for sample in sorted(pages)},
        },
    )
