"""Measurement stage: ``sensor_observations`` and ``perception_truth`` (SPEC §10, §11).

Both come from one pass over the world (labels are derived from the same
snapshots and geometry as the pixels), so they are one multi-asset step with
two assets, each with its own data version.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

from pathlib import Path

import dagster as dg

from simready.assets.metadata import markdown_table
from simready.assets.partitions import by_template, sample_partitions
from simready.assets.scenario import EAGER, batch_dir
from simready.catalog.catalog import load_catalog
from simready.resources import ArtifactStore, SourceData
from simready.scenario.suite import load_suite
from simready.sensors_hw.observe_batch import observe_sample_dir, results_versions
from simready.sim.batch import sample_dirs
from simready.world.template import load_template

MEASUREMENT_CODE_VERSION = "measurement-1"


@dg.multi_asset(
    group_name="measurement",
    partitions_def=sample_partitions,
    specs=[
        dg.AssetSpec("sensor_observations",
                     deps=["trajectories", dg.AssetDep("sensor_rigs", partition_mapping=by_template)], kinds={"embree"}, code_version=MEASUREMENT_CODE_VERSION,
                     automation_condition=EAGER,
                     description="Rolling-shutter camera, scanning LiDAR and radar from one geometry (SPEC §10)."),
        dg.AssetSpec("perception_truth", deps=["sensor_observations"], kinds={"parquet"},
                     code_version=MEASUREMENT_CODE_VERSION, automation_condition=EAGER,
                     description="Surface identity, correspondence, flow, motion field and tracks (SPEC §11)."),
    ],
)
def observations_and_truth(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData):
    key = context.partition_key.keys_by_dimension
    template = load_template(source.template_file(key["template"]))
    catalog = load_catalog(Path(source.catalog_generated_dir))
    plan = load_suite(source.suite_file).observation
    dirs = sample_dirs(batch_dir(store, key["template"], key["batch"]))
    rows = [observe_sample_dir(d, template, catalog, until_s=plan.until_s, overrides=list(plan.set), video=plan.video)
            for d in dirs]
    obs_version, truth_version = results_versions(dirs)
    table = [{"sample": r["sample"], "files": r["files"], "frames": r["frames"], "peak_rss_mb": round(r["peak_rss_mb"])}
             for r in rows]
    videos = sorted(str(p) for d in dirs for p in (d / "observations" / "video").glob("*.mp4"))
    yield dg.MaterializeResult(
        asset_key="sensor_observations",
        data_version=dg.DataVersion(obs_version),
        metadata={"samples": len(rows), "observations": markdown_table(table, ["sample", "files", "frames", "peak_rss_mb"]),
                  "plan": dg.MetadataValue.json(plan.model_dump()),
                  "videos": dg.MetadataValue.md("\n".join(f"- `{v}`" for v in videos) or "none"),
                  "first_sample": dg.MetadataValue.path(str(dirs[0] / "observations")) if dirs else ""},
    )
    yield dg.MaterializeResult(asset_key="perception_truth", data_version=dg.DataVersion(truth_version),
                               metadata={"samples": len(rows)})
