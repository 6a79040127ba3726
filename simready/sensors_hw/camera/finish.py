"""The RGB finish: exposure, tone map and vignette of linear radiance, the lens's distortion remap and the sRGB
encoding to uint8; compiled, with its numpy reference.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from simready.sensors_hw import camera_kernels as kern
from simready.sensors_hw.camera.lens import apply_distortion, distortion_taps, pinhole
from simready.sensors_hw.models import CameraModel


@lru_cache(maxsize=8)
def _vignette(model: CameraModel) -> NDArray[np.float32]:
    """(H, W, 1) gain: 1 at the centre, 1 − vignette at the corners, quadratic in radius."""
    k = pinhole(model)
    u = (np.arange(k.width_px) - k.cx) / (k.width_px / 2.0)
    v = (np.arange(k.height_px) - k.cy) / (k.width_px / 2.0)
    r2 = (u[None, :] ** 2 + v[:, None] ** 2) / (1.0 + (k.height_px / k.width_px) ** 2)
    g = (1.0 - model.vignette * r2)[..., None].astype(np.float32)
    g.setflags(write=False)
    return g


_SRGB_LEVELS = 4096


def _srgb_table(levels: int) -> NDArray[np.uint8]:
    x = np.linspace(0.0, 1.0, levels)
    srgb = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)
    return np.clip(np.round(255.0 * srgb), 0, 255).astype(np.uint8)


_SRGB_LUT = _srgb_table(_SRGB_LEVELS)


_NO_TAPS = (np.zeros(0, np.int32), 0, 0, np.zeros((0, 0), np.float32))


@lru_cache(maxsize=8)
def _distortion_corners(model: CameraModel) -> tuple[NDArray[np.int32], int, int, NDArray[np.float32]]:
    """:func:`distortion_taps` as the compiled resampling reads them: each output pixel's first tap (int32),
    the steps to the other three (+1 column, +1 row: the taps are always a 2×2 block, one column or row
    repeated where the image has only one), and the weights."""
    idx, wts = distortion_taps(model)
    dx, dy = int(model.width_px > 1), model.width_px * int(model.height_px > 1)
    base = idx[0]
    if not (np.array_equal(idx[1], base + dx) and np.array_equal(idx[2], base + dy)
            and np.array_equal(idx[3], base + dx + dy)):  # the construction above makes them so
        raise AssertionError("distortion taps are not 2x2 blocks")
    out = base.astype(np.int32)
    out.setflags(write=False)
    return out, dx, dy, wts


def finish_rgb(model: CameraModel, radiance: NDArray[np.floating]) -> NDArray[np.uint8]:
    """Linear radiance (H, W, 3) → uint8 sRGB: exposure, tone map, vignette, distortion, encoding.

    The sRGB curve is applied through a 4096-level table (nearest entry:
    under half an 8-bit level of error everywhere). Compiled
    (:mod:`simready.sensors_hw.camera_kernels`), byte for byte :func:`finish_rgb_numpy`.
    """
    h, w = radiance.shape[:2]
    x = np.ascontiguousarray(radiance, np.float32).reshape(-1, 3)
    return encode_rgb(model, kern.tone_map(x, *tone_args(model))).reshape(h, w, 3)


def tone_args(model: CameraModel) -> tuple[np.float32, bool, NDArray[np.float32]]:
    """The tone-map kernels' exposure, Reinhard switch and vignette gain (empty: none)."""
    gain = _vignette(model).reshape(-1) if model.vignette > 0.0 else np.zeros(0, np.float32)
    return np.float32(2.0 ** model.exposure_ev), model.tone_map == "reinhard", gain


def encode_rgb(model: CameraModel, x: NDArray[np.float32]) -> NDArray[np.uint8]:
    """Tone-mapped (P, 3) float32 → (P, 3) uint8 sRGB: lens resampling and encoding (compiled)."""
    lens = model.distortion_k1 != 0.0 or model.distortion_k2 != 0.0
    base, dx, dy, wts = _distortion_corners(model) if lens else _NO_TAPS
    return kern.encode_srgb(x, base, dx, dy, wts, _SRGB_LUT, np.float32(_SRGB_LEVELS - 1))


def finish_rgb_numpy(model: CameraModel, radiance: NDArray[np.floating]) -> NDArray[np.uint8]:
    """:func:`finish_rgb` as full-frame numpy passes: the bit reference of the compiled one."""
    x = np.array(radiance, dtype=np.float32)
    if model.exposure_ev != 0.0:
        x *= np.float32(2.0 ** model.exposure_ev)
    if model.tone_map == "reinhard":
        np.divide(x, x + np.float32(1.0), out=x)
    else:
        np.clip(x, 0.0, 1.0, out=x)
    if model.vignette > 0.0:
        x *= _vignette(model)
    x = apply_distortion(model, x)
    x *= np.float32(_SRGB_LEVELS - 1)
    x += np.float32(0.5)
    return np.take(_SRGB_LUT, x.astype(np.int32))
