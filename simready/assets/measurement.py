"""Measurement stage: ``sensor_observations`` and ``perception_truth`` (SPEC §10, §11).

Both come from one pass over the world (labels are derived from the same
snapshots and geometry as the pixels), so they are one multi-asset step with
two assets, each with its own data version.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

from pathlib import Path

import dagster as dg

from simready.assets.automation import EAGER
from simready.assets.metadata import artifact_link, markdown_table, png_markdown
from simready.assets.partitions import by_template, sample_partitions
from simready.assets.scenario import batch_samples, save_batch
from simready.catalog.catalog import load_catalog
from simready.layout import ObservationDir, SampleDir
from simready.measurement.batch import ObservationWindow, observation_dirs, observe_sample_dir, results_versions
from simready.resources import ArtifactStore, SourceData
from simready.scenario.suite import load_suite
from simready.world.template import load_template

#: measurement-5: the published layout exactly (issue 18): results.json ``artifacts`` with ``sensorId`` and each camera
#: frame's ``projection`` and ``sampleTime``; depth as near_m / z (0: no hit), id = R + 256·G + 65536·B, the semantic
#: class in the blue channel of an 8-bit RGB PNG; the sensors' frames in render.json and the PLY header.
#: measurement-4: render-job.json names its trace relative to the job's folder, not by an absolute path, so the
#: same inputs give the same bytes on every machine (issue 15).
#: measurement-3: one camera readout definition ((height − 1)·line time), the noise switch, and the motion
#: field's twist the derivative of the interpolated pose (issue 12).
MEASUREMENT_CODE_VERSION = "measurement-5"


@dg.multi_asset(
    group_name="measurement",
    partitions_def=sample_partitions,
    specs=[
        dg.AssetSpec("sensor_observations",
                     deps=["trajectories", "action_branches", dg.AssetDep("sensor_rigs", partition_mapping=by_template)],
                     kinds={"embree"}, code_version=MEASUREMENT_CODE_VERSION, automation_condition=EAGER,
                     description="Rolling-shutter camera, scanning LiDAR and radar from one geometry (SPEC §10), "
                                 "for each sample around its decision and for each of its branches after it."),
        dg.AssetSpec("perception_truth", deps=["sensor_observations"], kinds={"parquet"},
                     code_version=MEASUREMENT_CODE_VERSION, automation_condition=EAGER,
                     description="Surface identity, correspondence, flow, motion field and tracks (SPEC §11)."),
    ],
)
def observations_and_truth(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData):
    key = context.partition_key.keys_by_dimension
    template = load_template(source.template_file(key["template"]))
    catalog = load_catalog(Path(source.catalog_generated_dir))
    plan = load_suite(source.suite_file, source.templates_dir).observation
    window = ObservationWindow(plan.pre_s, plan.post_s, plan.branches, plan.branch_truth)
    dirs = batch_samples(store, key["template"], key["batch"])
    rows = [observe_sample_dir(d, template, catalog, window=window, overrides=list(plan.set), video=plan.video)
            for d in dirs]
    save_batch(store, key["template"], key["batch"])
    obs_version, truth_version = results_versions(dirs)
    metadata = observation_metadata(dirs, rows, plan)
    if dirs:
        first = store.layout.batch(key["template"], key["batch"]).sample(dirs[0].name).observations
        metadata["first_sample"] = artifact_link(store, first.root, folder=True)
    yield dg.MaterializeResult(asset_key="sensor_observations", data_version=dg.DataVersion(obs_version),
                               metadata=metadata)
    yield dg.MaterializeResult(asset_key="perception_truth", data_version=dg.DataVersion(truth_version),
                               metadata={"samples": len(rows)})


def observation_metadata(dirs: list[Path], rows: list[dict], plan) -> dict[str, object]:
    """Table per observation folder, the plan, video links, and the first sample's review pictures."""
    table = []
    for r in rows:
        table.append({"sample": r["sample"], "variant": "base", "window_s": r["window_s"], "files": r["files"],
                      "frames": r["frames"], "peak_rss_mb": round(r["peak_rss_mb"])})
        for label, b in sorted(r["branches"].items()):
            table.append({"sample": r["sample"], "variant": label, "window_s": b["window_s"], "files": b["files"],
                          "frames": b["frames"], "peak_rss_mb": round(b["peak_rss_mb"])})
        if r["dry"] is not None:
            table.append({"sample": r["sample"], "variant": "dry sibling (LiDAR)", "window_s": r["dry"]["window_s"],
                          "files": r["dry"]["files"], "frames": r["dry"]["frames"],
                          "peak_rss_mb": round(r["dry"]["peak_rss_mb"])})
    folders = [obs for d in dirs for obs in observation_dirs(d).values()]
    videos = sorted(str(p) for obs in folders for p in ObservationDir(obs).videos())
    metadata: dict[str, object] = {
        "samples": len(rows),
        "observation_folders": len(folders),
        "observations": markdown_table(table, ["sample", "variant", "window_s", "files", "frames", "peak_rss_mb"]),
        "plan": dg.MetadataValue.json(plan.model_dump()),
        "videos": dg.MetadataValue.md("\n".join(f"- `{v}`" for v in videos) or "none"),
    }
    if dirs:
        first = SampleDir(dirs[0]).observations
        for name, png, title in (("contact_sheet", first.contact_sheet, "camera passes"),
                                 ("lidar_topdown", first.lidar_topdown, "LiDAR top-down")):
            if png.exists():
                metadata[name] = png_markdown(png.read_bytes(), f"{dirs[0].name}: {title}")
    return metadata
