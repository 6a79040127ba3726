"""Every artifact file and folder name, spelled here and nowhere else, and the check that makes a name one path
component."""

from __future__ import annotations

from simready.common.identifiers import check_identifier


def path_part(name: str, what: str) -> str:
    """A name that becomes one path component here; refused (one line) unless it is an identifier."""
    return check_identifier(name, "artifact layout", what)


# --- file and folder names (the only place they are spelled) ----------------------------------------

CATALOG_DIR = "catalog"
CERTIFICATION = "certification.json"
TEMPLATES_DIR = "templates"
TEMPLATE_RECORD = "template.json"
TEMPLATE_PLOT = "plot.png"
TEMPLATE_VALIDATION = "validation.json"
RIG = "rig.json"
SAMPLES_DIR = "samples"
REFERENCE_DIR = "reference"
POOL = "pool.parquet"
#: The Foxglove layout written beside a release's MCAP exports, and the line a reviewer reads on how to use it.
FOXGLOVE_LAYOUT = "foxglove-layout.json"
FOXGLOVE_HOW_TO_OPEN = ("open the .mcap in Foxglove (File → Open local file), then Layouts → Import from file → "
                        f"{FOXGLOVE_LAYOUT}: 3-D scene, camera with boxes and LiDAR, plots and events")
POOL_RECORD = "pool.json"
SPLITS_DIR = "splits"
SPLIT_ASSIGNMENTS = "split_assignments.json"
COVERAGE_DIR = "coverage"
COVERAGE = "coverage.json"
COVERAGE_HEATMAP = "coverage_heatmap.png"
SUITE_WEIGHTS = "suite_weights.json"
DATA_DOCS_DIR = "data_docs"
GX_RESULTS_DIR = "gx_results"
REVIEW_INDEX_DIR = "review"
REVIEW_INDEX = "index.html"
THUMBNAILS_DIR = "thumbnails"
RELEASES_DIR = "releases"
RELEASE_OBJECTS_DIR = "objects"
RELEASE_TAGS_DIR = "tags"
RELEASE_RECORD = "release.json"
DATASHEET = "datasheet.json"
DATASHEET_PAGE = "datasheet.md"
DATASHEET_HTML = "datasheet.html"
CHECKLIST = "checklist.json"

MANIFEST = "manifest.json"
TRACE = "trace.parquet"
VERDICT = "verdict.json"
ROLLOUT_PLOT = "rollout.png"
VALIDITY = "validity.json"
REVIEW_PAGE = "review.html"
#: What the reviewer page draws over the camera (LiDAR points, truth boxes), a script beside it.
REVIEW_CAMERA = "review-camera.js"
CHECKPOINT_DIR = "checkpoint"
CHECKPOINT_SUFFIX = ".ckpt"
BRANCHES_DIR = "branches"
OUTCOMES = "outcomes.json"
OBSERVATIONS_DIR = "observations"
DRY_OBSERVATIONS_DIR = "observations_dry"

BATCH_RECORD = "batch.json"
REJECTIONS = "rejections.jsonl"
CELLS = "cells.json"
REJECTION_LOG = "rejection_log.parquet"

RENDER = "render.json"
RESULTS = "results.json"
OBSERVED_FRAMES = "observed-frames.jsonl"
LEGEND = "legend.json"
PARITY = "parity.json"
RENDER_LOG = "render.log"
TRUTH_DIR = "truth"
VIDEO_DIR = "video"
JOB_DIR = "job"
RENDER_JOB = "render-job.json"
REVIEW_DIR = "review"
CONTACT_SHEET = "contact_sheet.png"
LIDAR_TOPDOWN = "lidar_topdown.png"
VIDEO_SUFFIX = ".mp4"
CAMERA_POSES_SUFFIX = ".poses.npz"
#: The file of one sample of one pass: ``<sensor>/<tick:08d><suffix>`` (truth passes under ``truth/``).
FRAME_SUFFIXES = {
    "rgb": ".rgb.png",
    "depth": ".depth.f32.bin",
    "semantic": ".semantic.png",
    "id": ".id.png",
    "lidar": ".ply",
    "radar": ".csv",
    "radar.contributors": ".contributors.parquet",
    "truth.surface": ".surface.parquet",
    "truth.motion_field": ".motion.parquet",
    "truth.forward": ".forward.parquet",
    "truth.backward": ".backward.parquet",
}
#: The opt-in compressed variant of a published file (``depth.f32.bin.zst``, ``<tick>.ply.zst``): its name plus
#: this suffix, its bytes one zstd frame (:mod:`simready.sensors_hw.camera`, :mod:`simready.sensors_hw.lidar`).
ZSTD_SUFFIX = ".zst"
#: A camera's whole-clip truth tables: ``truth/<camera>/<name>``, by pass.
TRUTH_TABLES = {"truth.tracks": "tracks.parquet", "truth.track_events": "track-events.parquet"}
#: Pass names of the truth files (``truth.<kind>``).
TRUTH_PASS_PREFIX = "truth."
