"""The camera's optics and shutter: pinhole intrinsics, the pixel rays through pixel centres, projection and
unprojection, each row's sample time, and the Brown radial distortion (its normalized model and the remap of a
pinhole image). Conventions in :mod:`simready.sensors_hw.camera`.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simready.artifacts.records import Pinhole
from simready.sensors_hw import camera_kernels as kern
from simready.sensors_hw.models import CameraModel


@lru_cache(maxsize=8)
def pinhole(model: CameraModel) -> Pinhole:
    """The camera's pinhole intrinsics in pixels (pixel centres at integers; see the module's conventions)."""
    f = (model.width_px / 2.0) / math.tan(math.radians(model.hfov_deg) / 2.0)
    return Pinhole(width_px=model.width_px, height_px=model.height_px, fx=f, fy=f, cx=(model.width_px - 1) / 2.0,
                   cy=(model.height_px - 1) / 2.0, pixel_centres="integer", model="pinhole")


@lru_cache(maxsize=8)
def pixel_rays(model: CameraModel) -> NDArray[np.float64]:
    """(H, W, 3) unit ray directions through pixel centres, optical frame (read-only, cached)."""
    k = pinhole(model)
    u = (np.arange(k.width_px) - k.cx) / k.fx
    v = (np.arange(k.height_px) - k.cy) / k.fy
    d = np.empty((k.height_px, k.width_px, 3))
    d[..., 0] = u[None, :]
    d[..., 1] = v[:, None]
    d[..., 2] = 1.0
    d /= np.linalg.norm(d, axis=2, keepdims=True)
    d.setflags(write=False)
    return d


def project(model: CameraModel, points_cam: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Pinhole projection of optical-frame points (N, 3) → pixel coords (N, 2) and z-depth (N,).

    Points with z ≤ 0 (behind the camera) get NaN pixel coordinates.
    """
    p = np.asarray(points_cam, np.float64).reshape(-1, 3)
    k = pinhole(model)
    z = p[:, 2]
    safe = np.where(z > 0.0, z, np.nan)
    uv = np.stack([k.cx + k.fx * p[:, 0] / safe, k.cy + k.fy * p[:, 1] / safe], axis=1)
    return uv, z


def unproject(model: CameraModel, uv: ArrayLike, depth_m: ArrayLike) -> NDArray[np.float64]:
    """Pixel coords (N, 2) and z-depth (N,) → optical-frame points (N, 3)."""
    uv = np.asarray(uv, np.float64).reshape(-1, 2)
    z = np.asarray(depth_m, np.float64).reshape(-1)
    k = pinhole(model)
    return np.stack([(uv[:, 0] - k.cx) / k.fx * z, (uv[:, 1] - k.cy) / k.fy * z, z], axis=1)


def row_times(model: CameraModel, t0_s: float) -> NDArray[np.float64]:
    """(H,) sample time of each row: ``t0 + r·line_time_s`` (rolling) or ``t0`` (global)."""
    r = np.arange(model.height_px, dtype=np.float64)
    if model.shutter == "global":
        return np.full(model.height_px, float(t0_s))
    return t0_s + r * model.line_time_s


# --- Brown distortion --------------------------------------------------------


def distort_normalized(xy: NDArray[np.float64], k1: float, k2: float) -> NDArray[np.float64]:
    """Brown radial model on normalized coordinates: ``x_d = x·(1 + k1 r² + k2 r⁴)``."""
    r2: NDArray[np.float64] = np.sum(xy * xy, axis=-1, keepdims=True)
    return xy * (1.0 + k1 * r2 + k2 * r2 * r2)


#: Fixed-point iterations of :func:`undistort_normalized` (and of the distortion remap's compiled copy of it).
UNDISTORT_ITERATIONS = 20


def undistort_normalized(xy_d: NDArray[np.float64], k1: float, k2: float,
                         iterations: int = UNDISTORT_ITERATIONS) -> NDArray[np.float64]:
    """Inverse of :func:`distort_normalized` by fixed-point iteration (converges for moderate k)."""
    xy = xy_d.copy()
    for _ in range(iterations):
        r2 = np.sum(xy * xy, axis=-1, keepdims=True)
        xy = xy_d / (1.0 + k1 * r2 + k2 * r2 * r2)
    return xy


@lru_cache(maxsize=8)
def distortion_taps(model: CameraModel) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Bilinear remap for Brown distortion: (4, H·W) flat source pixel indices and weights.

    Output pixel (u_d, v_d) is undistorted to find where it lies in the
    pinhole image; weights of taps outside the pinhole image are 0.
    """
    k = pinhole(model)
    w, h = k.width_px, k.height_px
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    xy_d = np.stack([(u - k.cx) / k.fx, (v - k.cy) / k.fy], axis=-1)
    # undistort_normalized point by point in one compiled pass (bit for bit; 20 full-frame numpy passes were 0.35 s)
    xy = kern.undistort(xy_d.reshape(-1, 2), float(model.distortion_k1), float(model.distortion_k2),
                        UNDISTORT_ITERATIONS).reshape(xy_d.shape)
    su, sv = (k.cx + k.fx * xy[..., 0]).ravel(), (k.cy + k.fy * xy[..., 1]).ravel()
    inside = (su >= -0.5) & (su <= w - 0.5) & (sv >= -0.5) & (sv <= h - 0.5)
    su, sv = np.clip(su, 0.0, w - 1.0), np.clip(sv, 0.0, h - 1.0)
    u0 = np.minimum(np.floor(su), max(w - 2, 0)).astype(np.int64)
    v0 = np.minimum(np.floor(sv), max(h - 2, 0)).astype(np.int64)
    fu, fv = su - u0, sv - v0
    u1, v1 = np.minimum(u0 + 1, w - 1), np.minimum(v0 + 1, h - 1)
    idx: NDArray[np.int64] = np.stack([v0 * w + u0, v0 * w + u1, v1 * w + u0, v1 * w + u1])
    wts = (np.stack([(1 - fu) * (1 - fv), fu * (1 - fv), (1 - fu) * fv, fu * fv]) * inside).astype(np.float32)
    idx.setflags(write=False)
    wts.setflags(write=False)
    return idx, wts


def apply_distortion(model: CameraModel, image: NDArray[np.floating]) -> NDArray[np.floating]:
    """Pinhole image (H, W, C) → distorted image (bilinear); the same array when k1 = k2 = 0."""
    if model.distortion_k1 == 0.0 and model.distortion_k2 == 0.0:
        return image
    idx, wts = distortion_taps(model)
    flat = image.reshape(-1, image.shape[-1])
    out: NDArray[np.floating] = np.take(flat, idx[0], axis=0)
    out *= wts[0][:, None]
    for i in range(1, 4):
        tap = np.take(flat, idx[i], axis=0)
        tap *= wts[i][:, None]
        out += tap
    return out.reshape(image.shape)
