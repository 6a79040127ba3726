"""A frame's primary rays: the float32 pixel-ray tables, the camera's pose per row (rolling shutter) and the
world rays generated from them in one compiled pass.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from simready.raycast.kernels import sensor_rays
from simready.sensors_hw.camera.lens import pixel_rays, row_times
from simready.sensors_hw.models import CameraModel, Rig


@lru_cache(maxsize=8)
def ray_tables(model: CameraModel) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """Float32 pixel rays (H, W, 3), per-pixel optical-axis cosine, and the ray lengths of the near and far planes."""
    d = pixel_rays(model).astype(np.float32)
    dz = np.ascontiguousarray(d[..., 2].reshape(-1))
    out = (d, dz, (model.near_m / dz).astype(np.float32), (model.far_m / dz).astype(np.float32))
    for a in out:
        a.setflags(write=False)
    return out


def camera_poses(rig: Rig, camera_name: str, t0_s: float) -> NDArray[np.float64]:
    """(H, 4, 4) ``T_world_camera`` (optical frame) at each row's sample time."""
    model = rig.camera(camera_name)
    if model.shutter == "global":
        return np.repeat(rig.T_world_sensor(camera_name, t0_s)[None], model.height_px, axis=0)
    return rig.T_world_sensor(camera_name, row_times(model, t0_s))


def camera_rays(model: CameraModel, T_rows: NDArray[np.float64]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """World origins and unit directions (H·W, 3), float32, row-major, from per-row poses: the pixel rays
    rotated by each row's rotation rounded to float32 (as ``np.matmul`` of float32 gives them; one compiled
    pass, :func:`simready.raycast.kernels.sensor_rays`), each row's origin repeated per pixel."""
    o, d, _, _ = sensor_rays(ray_tables(model)[0], T_rows, np.zeros(len(T_rows)), _NO_RMIN, False)
    return o, d


_NO_RMIN = np.zeros(1, np.float32)
