"""The on-disk layout of every artifact, in one place (SPEC §10, README "Outputs").

Every artifact path and file name is spelled here and nowhere else: stages ask
these objects for paths (``SampleDir(path).trace``), never join names of their
own. The objects only compute paths — nothing here reads or writes — so the
same layout serves the local folder and, through the store, other backends.

```
<root>/catalog/certification.json
<root>/templates/<template>/{template.json, plot.png, validation.json, rig.json}        TemplateDir
<root>/samples/<template>/rejection_log.parquet
<root>/samples/<template>/<batch>/{batch.json, rejections.jsonl, cells.json}     BatchDir
<root>/samples/<template>/<batch>/<sample>/            SampleDir
    manifest.json  trace.parquet  verdict.json  rollout.png  validity.json  review.html  review-camera.js
    checkpoint/<sha256 hex>.ckpt
    branches/outcomes.json  branches/<label>/trace.parquet  branches/<label>/observations/
    observations/  observations_dry/                    ObservationDir
<root>/reference/<template>/{pool.parquet, pool.json, <sample>/}               ReferencePoolDir
<root>/splits/split_assignments.json
<root>/coverage/{coverage.json, coverage_heatmap.png, suite_weights.json}
<root>/data_docs/
<root>/review/index.html                                 the suite's review index (every sample, filters)
<root>/thumbnails/<key of a picture>                     its thumbnail for the Dagster UI (same key under thumbnails/)
<root>/releases/objects/<aa>/<sha256 hex>                a dataset release's file, stored once by content
<root>/releases/<release hex>/{release.json, datasheet.json, datasheet.md|.html, checklist.json}     ReleaseDir
<root>/releases/tags/<tag>                               the release id a tag names (one line)
```

Every sample folder also holds ``review.html``, its reviewer page (``simready.review``), which links the
sample's own files by relative paths only.

An observation folder (``ObservationDir``) holds ``render.json``,
``results.json``, ``observed-frames.jsonl``, ``legend.json``, ``parity.json``,
``render.log``, one folder per sensor (``<sensor>/<tick:08d><suffix>``, the
suffix by pass in :data:`FRAME_SUFFIXES`), ``truth/<camera>/`` (per-frame
truth tables the same way, plus ``tracks.parquet`` and
``track-events.parquet``), ``video/<sensor>.mp4``, ``job/render-job.json``,
``job/<camera>.poses.npz`` and ``review/{contact_sheet.png,
lidar_topdown.png}``. Inside an observation folder files are named relative
to it, as ``results.json`` lists them (``ObservationDir.frame_name`` and its
siblings); ``ObservationDir.file(name)`` is where such a name lies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simready.common.errors import SimreadyError
from simready.common.identifiers import check_identifier, confine

def _part(name: str, what: str) -> str:
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


@dataclass(frozen=True)
class ObservationDir:
    """One observation folder (SPEC §10): a sample's base window, a branch's, or the dry LiDAR sibling."""

    root: Path
    #: The render job's name relative to the folder.
    RENDER_JOB_NAME = f"{JOB_DIR}/{RENDER_JOB}"

    @property
    def render(self) -> Path:
        return self.root / RENDER

    @property
    def results(self) -> Path:
        return self.root / RESULTS

    @property
    def observed_frames(self) -> Path:
        return self.root / OBSERVED_FRAMES

    @property
    def legend(self) -> Path:
        return self.root / LEGEND

    @property
    def parity(self) -> Path:
        return self.root / PARITY

    @property
    def log(self) -> Path:
        return self.root / RENDER_LOG

    @property
    def truth(self) -> Path:
        return self.root / TRUTH_DIR

    @property
    def video_dir(self) -> Path:
        return self.root / VIDEO_DIR

    @property
    def render_job(self) -> Path:
        return self.root / JOB_DIR / RENDER_JOB

    @property
    def review(self) -> Path:
        return self.root / REVIEW_DIR

    @property
    def contact_sheet(self) -> Path:
        return self.review / CONTACT_SHEET

    @property
    def lidar_topdown(self) -> Path:
        return self.review / LIDAR_TOPDOWN

    def file(self, name: str) -> Path:
        """Where a file named relative to the folder (as ``results.json`` lists it) lies.

        The name is read from a file, so it must stay inside the folder (no absolute path, no ``..``,
        no symlink out): a one-line error otherwise.
        """
        confine(self.root, name, self.root, "file", SimreadyError)
        return self.root / name

    # Names relative to the folder, as results.json lists them.

    @staticmethod
    def frame_name(sensor: str, tick: int, pass_name: str) -> str:
        """One sample's file of one pass: ``<sensor>/<tick:08d><suffix>``, truth passes under ``truth/``
        (e.g. ``front_camera/00000012.rgb.png``, ``truth/front_camera/00000012.forward.parquet``)."""
        name = f"{_part(sensor, 'sensor')}/{tick:08d}{FRAME_SUFFIXES[pass_name]}"
        return f"{TRUTH_DIR}/{name}" if pass_name.startswith(TRUTH_PASS_PREFIX) else name

    @staticmethod
    def truth_table_name(camera: str, pass_name: str) -> str:
        """A camera's whole-clip truth table: ``truth/<camera>/tracks.parquet`` or ``track-events.parquet``."""
        return f"{TRUTH_DIR}/{_part(camera, 'sensor')}/{TRUTH_TABLES[pass_name]}"

    @staticmethod
    def is_truth(name: str) -> bool:
        """Whether a file (named relative to the folder) is perception truth."""
        return name.startswith(TRUTH_DIR + "/")

    @staticmethod
    def video_name(sensor: str) -> str:
        return f"{VIDEO_DIR}/{_part(sensor, 'sensor')}{VIDEO_SUFFIX}"

    @staticmethod
    def camera_poses_name(camera: str) -> str:
        """Every row's pose of every frame of one camera: ``job/<camera>.poses.npz``."""
        return f"{JOB_DIR}/{_part(camera, 'sensor')}{CAMERA_POSES_SUFFIX}"

    def videos(self) -> list[Path]:
        """The review videos that exist (``video/<sensor>.mp4``), sorted."""
        return sorted(self.video_dir.glob(f"*{VIDEO_SUFFIX}"))

    def review_pictures(self) -> list[Path]:
        """The review pictures that exist (``review/*.png``), sorted."""
        return sorted(self.review.glob("*.png"))


@dataclass(frozen=True)
class BranchDir:
    """One branch of a sample: ``branches/<label>/``."""

    root: Path

    @property
    def label(self) -> str:
        return self.root.name

    @property
    def trace(self) -> Path:
        return self.root / TRACE

    @property
    def observations(self) -> ObservationDir:
        return ObservationDir(self.root / OBSERVATIONS_DIR)


@dataclass(frozen=True)
class SampleDir:
    """One sample's folder and every file in it."""

    root: Path

    @property
    def sample_id(self) -> str:
        return self.root.name

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def trace(self) -> Path:
        return self.root / TRACE

    @property
    def verdict(self) -> Path:
        return self.root / VERDICT

    @property
    def rollout_plot(self) -> Path:
        return self.root / ROLLOUT_PLOT

    @property
    def validity(self) -> Path:
        return self.root / VALIDITY

    @property
    def review_page(self) -> Path:
        """The sample's reviewer page (static HTML, relative links to the files beside it)."""
        return self.root / REVIEW_PAGE

    @property
    def review_camera(self) -> Path:
        """The page's camera overlay: LiDAR points and truth boxes per camera frame (``simready.review.camera``)."""
        return self.root / REVIEW_CAMERA

    @property
    def checkpoint_dir(self) -> Path:
        return self.root / CHECKPOINT_DIR

    def checkpoint(self, checkpoint_id: str) -> Path:
        """``checkpoint/<hex>.ckpt`` for a ``sha256:<hex>`` checkpoint id."""
        return self.checkpoint_dir / f"{checkpoint_id.split(':', 1)[-1]}{CHECKPOINT_SUFFIX}"

    @property
    def branches_dir(self) -> Path:
        return self.root / BRANCHES_DIR

    @property
    def outcomes(self) -> Path:
        return self.branches_dir / OUTCOMES

    def branch(self, label: str) -> BranchDir:
        return BranchDir(self.branches_dir / _part(label, "branch label"))

    def branches(self) -> list[BranchDir]:
        """The branches that have a trace, sorted by label."""
        return [BranchDir(p.parent) for p in sorted(self.branches_dir.glob(f"*/{TRACE}"))]

    def branch_observations(self) -> list[ObservationDir]:
        """The branches' observation folders that exist, sorted by label."""
        return [ObservationDir(p) for p in sorted(self.branches_dir.glob(f"*/{OBSERVATIONS_DIR}"))]

    @property
    def observations(self) -> ObservationDir:
        return ObservationDir(self.root / OBSERVATIONS_DIR)

    @property
    def dry_observations(self) -> ObservationDir:
        return ObservationDir(self.root / DRY_OBSERVATIONS_DIR)


@dataclass(frozen=True)
class BatchDir:
    """One batch partition's folder: its samples and records."""

    root: Path

    @property
    def record(self) -> Path:
        return self.root / BATCH_RECORD

    @property
    def rejections(self) -> Path:
        return self.root / REJECTIONS

    @property
    def cells(self) -> Path:
        return self.root / CELLS

    def sample(self, sample_id: str) -> SampleDir:
        return SampleDir(self.root / _part(sample_id, "sample id"))

    def samples(self) -> list[SampleDir]:
        """Sample folders holding a manifest, sorted by sample id."""
        return [SampleDir(p.parent) for p in sorted(self.root.glob(f"*/{MANIFEST}"))]


@dataclass(frozen=True)
class TemplateDir:
    """One world template version's folder: ``templates/<template>/``."""

    root: Path

    @property
    def record(self) -> Path:
        return self.root / TEMPLATE_RECORD

    @property
    def plot(self) -> Path:
        return self.root / TEMPLATE_PLOT

    @property
    def validation(self) -> Path:
        return self.root / TEMPLATE_VALIDATION

    @property
    def rig(self) -> Path:
        return self.root / RIG


@dataclass(frozen=True)
class ReferencePoolDir:
    """One template's realism reference pool: its feature rows, its record and the reference rollouts."""

    root: Path

    @property
    def pool(self) -> Path:
        return self.root / POOL

    @property
    def record(self) -> Path:
        return self.root / POOL_RECORD

    def sample(self, sample_id: str) -> SampleDir:
        return SampleDir(self.root / _part(sample_id, "sample id"))

    def samples(self) -> list[SampleDir]:
        """The reference rollouts' folders, sorted by sample id."""
        return [SampleDir(p.parent) for p in sorted(self.root.glob(f"*/{MANIFEST}"))]


@dataclass(frozen=True)
class ReleaseDir:
    """One dataset release's folder, ``releases/<release hex>/`` (its files point at ``releases/objects/``)."""

    root: Path

    @property
    def record(self) -> Path:
        """Every released file per split and sample, with its sha256 and size."""
        return self.root / RELEASE_RECORD

    @property
    def datasheet(self) -> Path:
        return self.root / DATASHEET

    @property
    def datasheet_page(self) -> Path:
        """The datasheet and checklist for a reader (Markdown)."""
        return self.root / DATASHEET_PAGE

    @property
    def datasheet_html(self) -> Path:
        """The same page for a browser (HTML)."""
        return self.root / DATASHEET_HTML

    @property
    def checklist(self) -> Path:
        return self.root / CHECKLIST


@dataclass(frozen=True)
class ArtifactLayout:
    """The artifact tree under one root (the store's local folder)."""

    root: Path

    @property
    def catalog_dir(self) -> Path:
        return self.root / CATALOG_DIR

    @property
    def certification(self) -> Path:
        return self.catalog_dir / CERTIFICATION

    def template(self, template_id: str) -> TemplateDir:
        return TemplateDir(self.root / TEMPLATES_DIR / _part(template_id, "template id"))

    def template_dir(self, template_id: str) -> Path:
        return self.template(template_id).root

    def template_record(self, template_id: str) -> Path:
        return self.template(template_id).record

    def template_plot(self, template_id: str) -> Path:
        return self.template(template_id).plot

    def template_validation(self, template_id: str) -> Path:
        return self.template(template_id).validation

    def rig(self, template_id: str) -> Path:
        return self.template(template_id).rig

    def rejection_log(self, template_id: str) -> Path:
        return self.root / SAMPLES_DIR / _part(template_id, "template id") / REJECTION_LOG

    def batch(self, template_id: str, batch: str) -> BatchDir:
        return BatchDir(self.root / SAMPLES_DIR / _part(template_id, "template id") / _part(batch, "batch key"))

    def reference(self, template_id: str) -> ReferencePoolDir:
        return ReferencePoolDir(self.root / REFERENCE_DIR / _part(template_id, "template id"))

    def reference_dir(self, template_id: str) -> Path:
        return self.reference(template_id).root

    @property
    def split_assignments(self) -> Path:
        return self.root / SPLITS_DIR / SPLIT_ASSIGNMENTS

    @property
    def coverage_dir(self) -> Path:
        return self.root / COVERAGE_DIR

    @property
    def coverage(self) -> Path:
        return self.coverage_dir / COVERAGE

    @property
    def coverage_heatmap(self) -> Path:
        return self.coverage_dir / COVERAGE_HEATMAP

    @property
    def suite_weights(self) -> Path:
        return self.coverage_dir / SUITE_WEIGHTS

    @property
    def data_docs(self) -> Path:
        return self.root / DATA_DOCS_DIR

    @property
    def samples_dir(self) -> Path:
        """Every template's batches and rejection logs: ``samples/``."""
        return self.root / SAMPLES_DIR

    @property
    def review_dir(self) -> Path:
        """The suite's review index folder: ``review/``."""
        return self.root / REVIEW_INDEX_DIR

    @property
    def review_index(self) -> Path:
        """The suite's review index page, linking every sample's ``review.html``."""
        return self.review_dir / REVIEW_INDEX

    def thumbnail(self, picture: Path) -> Path:
        """The thumbnail of the picture at ``picture`` (a path under this root): the same path under
        ``thumbnails/``, so no stage's folder holds a file it did not write."""
        return self.root / THUMBNAILS_DIR / Path(picture).relative_to(self.root)

    @property
    def releases_dir(self) -> Path:
        return self.root / RELEASES_DIR

    def release(self, release_hex: str) -> ReleaseDir:
        """A release's folder by the hex digits of its id (``sha256:<hex>``)."""
        return ReleaseDir(self.releases_dir / _part(release_hex, "release id"))

    @property
    def release_objects_dir(self) -> Path:
        return self.releases_dir / RELEASE_OBJECTS_DIR

    def release_object(self, sha256: str) -> Path:
        """Where the bytes hashing to ``sha256`` (``sha256:<hex>``) are stored once for every release."""
        digest = _part(sha256.split(":", 1)[-1], "sha256")
        return self.release_objects_dir / digest[:2] / digest

    @property
    def release_tags_dir(self) -> Path:
        return self.releases_dir / RELEASE_TAGS_DIR

    def release_tag(self, tag: str) -> Path:
        """The file holding the id of the release a tag (``latest``, ``r1``) names."""
        return self.release_tags_dir / _part(tag, "release tag")

    @property
    def data_docs_index(self) -> Path:
        """The Data Docs site's entry page (the name GX gives it)."""
        return self.data_docs / "index.html"
