"""Measurement stage: ``sensor_observations`` and ``perception_truth`` (SPEC §10, §11).

Both come from one pass over the world (labels are derived from the same
snapshots and geometry as the pixels), so they are one multi-asset step with
two assets, each with its own data version.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

from pathlib import Path

import dagster as dg

from simready.assets.automation import EAGER
from simready.assets.metadata import NO, YES, artifact_link, parquet_metadata, picture, table
from simready.assets.partitions import by_template, sample_partitions
from simready.assets.provenance import recorded_together
from simready.assets.stage_io import batch_of, batch_samples, save_batch, stage_inputs
from simready.artifacts.layout import ObservationDir, SampleDir
from simready.resources import ArtifactStore, SourceData
from simready.scenario.suite import load_suite
from simready.truth.summary import PREVIEW_COLUMNS, track_counts, tracks_files, tracks_preview

#: measurement-6: a branch whose subject collides is observed until its collision is over + the plan's
#: ``outcome_tail_s`` (issue 28), so its clips contain the outcome.
#: measurement-5: the published layout exactly (issue 18): results.json ``artifacts`` with ``sensorId`` and each camera
#: frame's ``projection`` and ``sampleTime``; depth as near_m / z (0: no hit), id = R + 256·G + 65536·B, the semantic
#: class in the blue channel of an 8-bit RGB PNG; the sensors' frames in render.json and the PLY header.
#: measurement-4: render-job.json names its trace relative to the job's folder, not by an absolute path, so the
#: same inputs give the same bytes on every machine (issue 15).
#: measurement-3: one camera readout definition ((height − 1)·line time), the noise switch, and the motion
#: field's twist the derivative of the interpolated pose (issue 12).
MEASUREMENT_CODE_VERSION = "measurement-6"


@dg.multi_asset(
    group_name="measurement",
    partitions_def=sample_partitions,
    specs=[
        dg.AssetSpec("sensor_observations",
                     deps=["trajectories", "action_branches", dg.AssetDep("sensor_rigs", partition_mapping=by_template),
                           "suite_file"],
                     kinds={"embree"}, code_version=MEASUREMENT_CODE_VERSION, automation_condition=EAGER,
                     description="Rolling-shutter camera, scanning LiDAR and radar from one geometry (SPEC §10), "
                                 "for each sample around its decision and for each of its branches after it."),
        dg.AssetSpec("perception_truth", deps=["sensor_observations"], kinds={"parquet"},
                     code_version=MEASUREMENT_CODE_VERSION, automation_condition=EAGER,
                     description="Surface identity, correspondence, flow, motion field and tracks (SPEC §11)."),
    ],
)
def observations_and_truth(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData):
    # definitions stay light: pandas, numba
    from simready.measurement.batch import ObservationWindow, observe_batch, results_versions
    from simready.sensors_hw.scene_build import prepare_statics

    template_id, batch = batch_of(context)
    template, catalog = stage_inputs(source, template_id)
    plan = load_suite(source.suite_file, source.templates_dir).observation
    window = ObservationWindow(plan.pre_s, plan.post_s, plan.branches, plan.branch_truth, plan.outcome_tail_s)
    dirs = batch_samples(store, template_id, batch)
    if dirs:
        # The template's static bodies built once here, before the fork, and kept for the next batch: the workers
        # share them instead of each building its own (a street of thousands of instances).
        prepare_statics(template, catalog)
    # The batch's observation folders side by side, one per core, the longest first (their bytes are the same as
    # one after the other).
    rows = observe_batch(dirs, template, catalog, window=window, overrides=list(plan.set), video=plan.video,
                         compressed=plan.compressed)
    save_batch(store, template_id, batch)
    obs_version, truth_version = results_versions(dirs)
    metadata = observation_metadata(dirs, rows, plan)
    if dirs:
        first = store.layout.batch(template_id, batch).sample(dirs[0].name).observations
        metadata["first_sample"] = artifact_link(store, first.root, folder=True)
        for name, title in (("contact_sheet", "camera passes"), ("lidar_topdown", "LiDAR top-down")):
            if getattr(SampleDir(dirs[0]).observations, name).exists():
                metadata[name] = picture(store, getattr(first, name), f"{dirs[0].name}: {title}")
    observations = dg.MaterializeResult(asset_key="sensor_observations", data_version=dg.DataVersion(obs_version),
                                        metadata=metadata)
    truth = dg.MaterializeResult(asset_key="perception_truth", data_version=dg.DataVersion(truth_version),
                                 metadata=truth_metadata(dirs))
    with recorded_together(context, "sensor_observations"):  # perception_truth's provenance: this partition's
        yield observations
        yield truth


def truth_metadata(dirs: list[Path]) -> dict[str, object]:
    """Tracks and observations per class over the samples' truth, the tracks tables' rows and columns, and the
    first table's first rows."""
    from simready.measurement.batch import observation_dirs  # definitions stay light: pandas, numba

    files = tracks_files(ObservationDir(obs) for d in dirs for obs in observation_dirs(d).values())
    counts = track_counts(ObservationDir(obs) for d in dirs for obs in observation_dirs(d).values())
    metadata: dict[str, object] = {
        "samples": len(dirs),
        "tracks": sum(r["tracks"] for r in counts),
        "classes": len(counts),
        "per_class": table(counts, [("class", "string"), ("tracks", "int"), ("observations", "int"),
                                    ("visible", "int")]),
        **parquet_metadata([path for _, path in files]),
    }
    if files:
        metadata["preview"] = table(tracks_preview(files[0][1]), [(c, "string" if c in ("track_id", "status") else
                                                                     "float") for c in PREVIEW_COLUMNS])
    return metadata


def observation_metadata(dirs: list[Path], rows: list[dict], plan) -> dict[str, object]:
    """Table per observation folder, the plan and the number of review videos (each sample's review page plays
    them)."""
    from simready.measurement.batch import observation_dirs  # definitions stay light: pandas, numba

    def row(sample: str, variant: str, r: dict) -> dict:
        return {"sample": sample, "variant": variant, "window_s": "–".join(f"{t:.2f}" for t in r["window_s"]),
                "files": r["files"], **{f"frames {k}": n for k, n in r["frames"].items()},
                "peak_rss_mb": round(r["peak_rss_mb"])}

    table_rows = []
    for r in rows:
        table_rows.append(row(r["sample"], "base", r))
        table_rows += [row(r["sample"], label, b) for label, b in sorted(r["branches"].items())]
        if r["dry"] is not None:
            table_rows.append(row(r["sample"], "dry sibling (LiDAR)", r["dry"]))
    folders = [obs for d in dirs for obs in observation_dirs(d).values()]
    videos = [p for obs in folders for p in ObservationDir(obs).videos()]
    # Seconds per stage over every folder (``<sensor>.<stage>`` timings summed by stage), so a reviewer and
    # ``make bench`` see what the review videos and pictures cost beside the sensors.
    stages: dict[str, float] = {}
    for r in rows:
        for folder in [r, *r["branches"].values(), *([r["dry"]] if r["dry"] is not None else [])]:
            for key, sec in folder.get("timings_s", {}).items():
                # ``total`` is the observe call's own wall time (every stage and what lies between them).
                review = key.endswith((".video", ".video_wait")) or key.startswith("review.")
                stage = "review" if review else key.rsplit(".", 1)[-1]
                stages[stage] = stages.get(stage, 0.0) + sec
    metadata: dict[str, object] = {
        "samples": len(rows),
        "observation_folders": len(folders),
        # One column per sensor's frame count (not a dict in one cell).
        "observations": table(table_rows, [("sample", "string"), ("variant", "string"), ("window_s", "string"),
                                           ("files", "int"), *((c, "int") for c in sorted({k for r in table_rows
                                                                                    for k in r if k.startswith("frames ")})),
                                           ("peak_rss_mb", "int")]),
        "plan": table([{"setting": k, "value": ", ".join(v) if isinstance(v, (list, tuple)) else
                        (YES if v else NO) if isinstance(v, bool) else "—" if v is None else str(v)}
                       for k, v in plan.model_dump().items()], [("setting", "string"), ("value", "string")]),
        "videos": len(videos),
        "seconds_by_stage": table([{"stage": k, "seconds": v} for k, v in sorted(stages.items())],
                                  [("stage", "string"), ("seconds", "float")]),
        # The review videos and pictures (what `make bench`'s review section adds up).
        "review_assets_s": round(stages.get("review", 0.0), 3),
    }
    return metadata
