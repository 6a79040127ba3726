"""Compiled kernels of the camera's RGB pass (numba): exposure, tone map, vignette, lens resampling and
sRGB encoding in two passes over the frame instead of a dozen full-frame numpy passes.

Bits: every step repeats :func:`simready.sensors_hw.camera.finish_rgb`'s float32 operations in numpy's
order (no fused multiply-add, ``fastmath`` off, constants typed float32), so the image is byte for byte
the numpy one (tested). The compiled code is cached beside this module (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)


@numba.njit(**_JIT)
def tone_map(radiance: np.ndarray, exposure: np.float32, reinhard: bool, gain: np.ndarray) -> np.ndarray:
    """(P, 3) float32 linear radiance → exposed, tone-mapped (Reinhard or clipped to [0, 1]) and
    vignetted, float32; ``exposure`` 1 skips the product, an empty ``gain`` the vignette."""
    p = radiance.shape[0]
    out = np.empty((p, 3), np.float32)
    one = np.float32(1.0)
    zero = np.float32(0.0)
    scale = exposure != one
    vignette = gain.shape[0] > 0
    for i in range(p):
        for c in range(3):
            x = radiance[i, c]
            if scale:
                x = x * exposure
            if reinhard:
                x = x / (x + one)
            else:
                x = min(max(x, zero), one)
            if vignette:
                x = x * gain[i]
            out[i, c] = x
    return out


@numba.njit(**_JIT)
def encode_srgb(x: np.ndarray, idx: np.ndarray, wts: np.ndarray, lut: np.ndarray, levels: np.float32) -> np.ndarray:
    """(P, 3) float32 in [0, 1] → (P, 3) uint8 sRGB through ``lut``, resampled by the bilinear taps
    ``idx``/``wts`` (4, P) when given (empty: no lens)."""
    p = x.shape[0]
    out = np.empty((p, 3), np.uint8)
    half = np.float32(0.5)
    lens = idx.shape[0] > 0
    for i in range(p):
        for c in range(3):
            if lens:
                y = x[idx[0, i], c] * wts[0, i]
                y = y + x[idx[1, i], c] * wts[1, i]
                y = y + x[idx[2, i], c] * wts[2, i]
                y = y + x[idx[3, i], c] * wts[3, i]
            else:
                y = x[i, c]
            y = y * levels
            y = y + half
            out[i, c] = lut[np.int32(y)]
    return out


@numba.njit(**_JIT)
def z_depth(d: np.ndarray, axis_z: np.ndarray, width: int, dist: np.ndarray) -> np.ndarray:
    """(P,) float32 z-depth ``distance · (d · optical z) / |d|`` of float32 ray directions ``d`` (P, 3) whose
    rows share row ``p // width``'s optical axis ``axis_z`` (H, 3): :func:`simready.sensors_hw.camera.z_depth_numpy`'s
    float64 operations in its order, one pass instead of a dozen."""
    p = d.shape[0]
    out = np.empty(p, np.float32)
    for i in range(p):
        r = i // width
        dot = 0.0
        norm2 = 0.0
        for a in range(3):
            c = np.float64(d[i, a])
            dot += c * axis_z[r, a]
            norm2 += c * c
        out[i] = np.float32(dist[i] * dot / np.sqrt(norm2))
    return out
