"""The sensor loop of an observation run: each sensor sample rendered (camera), scanned (LiDAR) or detected
(radar), written and dropped before the next; a camera frame's perception truth computed beside it (on the truth
thread when asked); each sample's review-video frame; and what the summary files need kept (camera records and
poses, sweep and radar-frame records, per-stage timings).

Only the previous camera frame's samples are kept, for the correspondence
(:class:`~simready.measurement.writers.CameraTruth`), so memory does not grow with the clip.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.artifacts.records import CameraFrame, LidarSweep, RadarFrame
from simready.measurement.folder import OutputFolder
from simready.measurement.options import ObserveOptions
from simready.measurement.plan import SensorSample, sensor_rng
from simready.measurement.review_images import lidar_topdown
from simready.measurement.summary import camera_record
from simready.measurement.video import Video, camera_review, radar_topdown
from simready.measurement.writers import CameraTruth, write_camera, write_lidar, write_radar
from simready.sensors_hw.atmosphere import Atmosphere
from simready.sensors_hw.camera import Lighting, render_frame
from simready.sensors_hw.lidar import scan
from simready.sensors_hw.models import CameraModel, LidarModel, RadarModel, Rig
from simready.sensors_hw.radar import detect
from simready.sensors_hw.scene_build import BuiltScene
from simready.truth.correspondence.view import FrameView


@contextmanager
def _timed(timings: dict[str, float], key: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0


@dataclass
class SensorLoop:
    """One observation run's sensor loop: the sensors' steps and what they accumulate for the summary files."""

    built: BuiltScene
    rig: Rig
    options: ObserveOptions
    folder: OutputFolder
    seeds: dict[str, int]
    lighting: Lighting
    cameras: list[str]
    videos: dict[str, Video]
    atmosphere: Atmosphere = field(default_factory=Atmosphere)
    timings: dict[str, float] = field(default_factory=dict)
    truth: dict[str, CameraTruth] = field(default_factory=dict)
    cam_records: dict[str, list[CameraFrame]] = field(default_factory=dict)
    cam_poses: dict[str, list[NDArray]] = field(default_factory=dict)
    sweep_records: dict[str, list[LidarSweep | RadarFrame]] = field(default_factory=dict)
    truth_pool: ThreadPoolExecutor | None = None
    #: The scene's distinct compact ids (sorted) and each body's index among them (:meth:`_bodies_of`).
    _compact_ids: tuple[NDArray[np.uint32], NDArray[np.intp]] | None = None

    def close(self) -> None:
        """Stop the truth thread (idle by then: every submitted job was waited for)."""
        if self.truth_pool is not None:
            self.truth_pool.shutdown(wait=True)
            self.truth_pool = None

    def __post_init__(self) -> None:
        if "truth" in self.options.passes:
            if self.options.truth_thread:
                self.truth_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="observe-truth")
            self.truth = {n: CameraTruth(self.built, self.rig, n, self.truth_pool) for n in self.cameras}
        self.cam_records = {n: [] for n in self.cameras}
        self.cam_poses = {n: [] for n in self.cameras}

    def timed(self, sensor: str, stage: str) -> Any:
        return _timed(self.timings, f"{sensor}.{stage}")

    def _review(self, sensor: str, make: Callable[[], NDArray[np.uint8]]) -> None:
        if sensor in self.videos:
            with self.timed(sensor, "video"):
                self.videos[sensor].add(make())

    def sample(self, s: SensorSample) -> NDArray[np.intp]:
        """Observe one sample; returns the bodies it saw (for observed-frames.jsonl)."""
        model = self.rig.sensors[s.sensor]
        if isinstance(model, CameraModel):
            return self._camera(s, model)
        if isinstance(model, LidarModel):
            return self._lidar(s, model)
        return self._radar(s, model)

    def _camera(self, s: SensorSample, model: CameraModel) -> NDArray[np.intp]:
        scene = self.built.scene
        with self.timed(s.sensor, "render"):
            frame = render_frame(scene, self.rig, s.sensor, s.t_s, self.options.camera_passes,
                                 lighting=self.lighting, ignore=self.built.ignore)
        with self.timed(s.sensor, "write"):
            write_camera(self.folder, s.sensor, s.tick, frame, model.near_m, self.options.depth_format,
                         self.options.png_compress_level)
        view = FrameView.of_frame(frame, model, s.tick)
        if s.sensor in self.truth:
            with self.timed(s.sensor, "truth"):
                self.truth[s.sensor].frame(self.folder, view, frame)
        self.cam_records[s.sensor].append(camera_record(view))
        self.cam_poses[s.sensor].append(frame.T_world_camera)
        self._review(s.sensor, lambda: camera_review(frame))
        return np.flatnonzero(np.bincount(frame.hits.body_index[frame.hits.hit_index], minlength=len(scene.bodies)))

    def _lidar(self, s: SensorSample, model: LidarModel) -> NDArray[np.intp]:
        with self.timed(s.sensor, "scan"):
            sweep = scan(self.built.scene, self.rig, s.sensor, s.t_s, sensor_rng(self.seeds[s.sensor], s.tick),
                         ignore=self.built.ignore, atmosphere=self.atmosphere)
        with self.timed(s.sensor, "write"):
            # The sweep's pose at mid-sweep lets consumers (the validity gate) put points in world coordinates.
            T_mid = self.rig.T_world_sensor(s.sensor, s.t_s + 0.5 * model.sweep_s)
            write_lidar(self.folder, s.sensor, s.tick, sweep, self.options, sampleTime={"seconds": s.t_s},
                        t=s.t_s + 0.5 * model.sweep_s,
                        T_world_sensor=np.asarray(T_mid).round(9).tolist())
        self.sweep_records.setdefault(s.sensor, []).append(
            LidarSweep(tick=s.tick, t0_s=s.t_s, sweep_s=model.sweep_s, points=len(sweep)))
        self._review(s.sensor, lambda: lidar_topdown(sweep.points_sensor, model.max_range_m))
        return np.unique(sweep.hits.body_index[sweep.beam])

    def _radar(self, s: SensorSample, model: RadarModel) -> NDArray[np.intp]:
        scene = self.built.scene
        with self.timed(s.sensor, "detect"):
            det, contributors = detect(scene, self.rig, s.sensor, s.t_s, sensor_rng(self.seeds[s.sensor], s.tick),
                                       ignore=self.built.ignore, contributors=True)
        with self.timed(s.sensor, "write"):
            write_radar(self.folder, s.sensor, s.tick, det, contributors)
        self.sweep_records.setdefault(s.sensor, []).append(RadarFrame(tick=s.tick, t_s=s.t_s, detections=len(det)))
        self._review(s.sensor, lambda: radar_topdown(det, model))
        return self._bodies_of(det.instance_id)

    def _bodies_of(self, compact_ids: NDArray[np.uint32]) -> NDArray[np.intp]:
        """The bodies (sorted indices) whose entity's compact id is among ``compact_ids``.

        Through the scene's distinct compact ids, sorted once per loop: compact ids reach 2^24, and a per-frame
        table over them (16 MB zeroed, then gathered) was a third of the radar's time in a frame."""
        if self._compact_ids is None:
            self._compact_ids = np.unique(self.built.scene.compact_id_of_body, return_inverse=True)
        distinct, of_body = self._compact_ids
        at = np.searchsorted(distinct, compact_ids)
        inside = at < len(distinct)
        at = at[inside]
        seen = np.zeros(len(distinct), bool)
        seen[at[distinct[at] == compact_ids[inside]]] = True
        return np.flatnonzero(seen[of_body])

    def finish(self) -> None:
        for n, t in self.truth.items():
            with self.timed(n, "truth"):
                t.finish(self.folder)
