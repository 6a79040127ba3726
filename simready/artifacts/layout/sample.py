"""The folders of a batch: the batch, each sample, its branches and each observation folder (the base window, a
branch's, the dry run's), and every file in them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from simready.artifacts.layout.names import (BATCH_RECORD, BRANCHES_DIR, CAMERA_POSES_SUFFIX, CELLS, CHECKPOINT_DIR,
                                             CHECKPOINT_SUFFIX, CONTACT_SHEET, DRY_OBSERVATIONS_DIR, FRAME_SUFFIXES,
                                             JOB_DIR, LEGEND, LIDAR_TOPDOWN, MANIFEST, OBSERVATIONS_DIR,
                                             OBSERVED_FRAMES, OUTCOMES, PARITY, REJECTIONS, RENDER, RENDER_JOB,
                                             RENDER_LOG, RESULTS, REVIEW_CAMERA, REVIEW_DIR, REVIEW_PAGE, ROLLOUT_PLOT,
                                             TRACE, TRUTH_DIR, TRUTH_PASS_PREFIX, TRUTH_TABLES, VALIDITY, VERDICT,
                                             VIDEO_DIR, VIDEO_SUFFIX, path_part)
from simready.common.errors import SimreadyError
from simready.common.identifiers import confine, plain_name


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

    def files(self, names: Iterable[str]) -> list[Path]:
        """:meth:`file` of each name, each folder resolved once: once a name in a folder is confined, another
        name in it is only checked as a plain file name that is not a symbolic link (a link is confined in full).
        For readers of every file a folder lists (its integrity: thousands of names, a path resolution each)."""
        return list(self.each_file(names))

    def each_file(self, names: Iterable[str]) -> Iterator[Path]:
        """:meth:`files`, one name at a time as the caller reaches it (a bad name is refused when it is reached, after
        the names before it were used: a reader's errors come in the order they did with :meth:`file`)."""
        confined: set[str] = set()
        for name in names:
            folder, _, base = name.rpartition("/")
            path = self.root / name
            if not (folder in confined and plain_name(base) and not path.is_symlink()):
                path = self.file(name)
                confined.add(folder)
            yield path

    # Names relative to the folder, as results.json lists them.

    @staticmethod
    def frame_name(sensor: str, tick: int, pass_name: str) -> str:
        """One sample's file of one pass: ``<sensor>/<tick:08d><suffix>``, truth passes under ``truth/``
        (e.g. ``front_camera/00000012.rgb.png``, ``truth/front_camera/00000012.forward.parquet``)."""
        name = f"{path_part(sensor, 'sensor')}/{tick:08d}{FRAME_SUFFIXES[pass_name]}"
        return f"{TRUTH_DIR}/{name}" if pass_name.startswith(TRUTH_PASS_PREFIX) else name

    @staticmethod
    def truth_table_name(camera: str, pass_name: str) -> str:
        """A camera's whole-clip truth table: ``truth/<camera>/tracks.parquet`` or ``track-events.parquet``."""
        return f"{TRUTH_DIR}/{path_part(camera, 'sensor')}/{TRUTH_TABLES[pass_name]}"

    @staticmethod
    def is_truth(name: str) -> bool:
        """Whether a file (named relative to the folder) is perception truth."""
        return name.startswith(TRUTH_DIR + "/")

    @staticmethod
    def video_name(sensor: str) -> str:
        return f"{VIDEO_DIR}/{path_part(sensor, 'sensor')}{VIDEO_SUFFIX}"

    @staticmethod
    def camera_poses_name(camera: str) -> str:
        """Every row's pose of every frame of one camera: ``job/<camera>.poses.npz``."""
        return f"{JOB_DIR}/{path_part(camera, 'sensor')}{CAMERA_POSES_SUFFIX}"

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
        return BranchDir(self.branches_dir / path_part(label, "branch label"))

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
        return SampleDir(self.root / path_part(sample_id, "sample id"))

    def samples(self) -> list[SampleDir]:
        """Sample folders holding a manifest, sorted by sample id."""
        return [SampleDir(p.parent) for p in sorted(self.root.glob(f"*/{MANIFEST}"))]
