"""When and from where one camera frame samples the world (:class:`FrameView`: its row times and per-row
optical-frame poses), and the RGB image's pixel coordinates of pinhole ones (:func:`distorted_uv`).

Pixel conventions as the camera (:mod:`simready.sensors_hw.camera`): optical frame x right, y down, z forward;
pixel centres at integers; rolling-shutter row times refer to pinhole rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from simready.artifacts.records import Pinhole
from simready.sensors_hw.camera import FramePasses, camera_poses, distort_normalized, pinhole, row_times
from simready.sensors_hw.models import CameraModel, Rig
from simready.truth.correspondence.poses import pose_rows


@dataclass(frozen=True)
class FrameView:
    """When and from where one camera frame samples the world.

    Attributes:
        camera: sensor name; model: its camera model; tick: the camera's own frame number.
        t0_s: row 0's sample time.
        row_times_s: (H,) each row's sample time.
        T_world_camera: (H, 4, 4) optical-frame pose per row.
    """

    camera: str
    model: CameraModel
    tick: int
    t0_s: float
    row_times_s: NDArray[np.float64]
    T_world_camera: NDArray[np.float64]

    @classmethod
    def of(cls, rig: Rig, camera: str, t0_s: float, tick: int = 0) -> "FrameView":
        model = rig.sensors[camera]
        return cls(camera, model, tick, float(t0_s), row_times(model, t0_s), camera_poses(rig, camera, t0_s))

    @classmethod
    def of_frame(cls, frame: FramePasses, model: CameraModel, tick: int) -> "FrameView":
        return cls(frame.camera, model, tick, frame.t0_s, frame.sample_times_s, frame.T_world_camera)

    @property
    def intrinsics(self) -> Pinhole:
        return pinhole(self.model)

    @property
    def global_shutter(self) -> bool:
        return self.model.shutter == "global" or self.model.line_time_s == 0.0

    @cached_property
    def row_table(self) -> NDArray[np.float64]:
        """(H, 12) per row: camera-to-world rotation row-major (0:9), optical centre (9:12) — one gather per point."""
        return np.ascontiguousarray(pose_rows(self.T_world_camera))

    @cached_property
    def row_columns(self) -> NDArray[np.float64]:
        """(12, H) :attr:`row_table` by column: gathering one short column per entry for N points is
        several times faster than gathering N rows of 12 (and the products then read contiguous arrays)."""
        return np.ascontiguousarray(self.row_table.T)


def distorted_uv(model: CameraModel, uv: NDArray[np.float64]) -> NDArray[np.float64]:
    """Pinhole pixel coordinates (N, 2) → the RGB image's (Brown distortion; identity with the lens off)."""
    if model.distortion_k1 == 0.0 and model.distortion_k2 == 0.0:
        return uv.copy()
    k = pinhole(model)
    xy = np.stack([(uv[:, 0] - k.cx) / k.fx, (uv[:, 1] - k.cy) / k.fy], axis=1)
    xy_d = distort_normalized(xy, model.distortion_k1, model.distortion_k2)
    return np.stack([k.cx + k.fx * xy_d[:, 0], k.cy + k.fy * xy_d[:, 1]], axis=1)

