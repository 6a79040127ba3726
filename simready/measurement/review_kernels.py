"""Compiled kernels of the review pictures (numba): the top-downs' dots drawn in one pass over the points, the
depth tiles' colour ramp.

Bits: :func:`dots` writes the pixels numpy's masked fancy assignment of
:func:`simready.measurement.review_images.draw_points` wrote, in the same order (offset by offset, point by
point, a later point over an earlier one), so the pictures are the same bytes. The compiled code is cached beside
this module (``cache=True``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)
_Kernel = TypeVar("_Kernel", bound=Callable[..., Any])


def _compiled(fn: _Kernel) -> _Kernel:
    """``numba.njit(**_JIT)``, typed as the function it compiles (numba's own types are not read by the check)."""
    return cast(_Kernel, numba.njit(**_JIT)(fn))


@_compiled
def dots(img: np.ndarray, rows: np.ndarray, cols: np.ndarray, colours: np.ndarray, dot_px: int) -> None:
    """Each point ``i`` drawn into ``img`` (H, W, C) as a ``dot_px`` × ``dot_px`` square of ``colours[i]`` whose
    top-left pixel is (``rows[i]``, ``cols[i]``), clipped to the image; for each offset of the square in turn,
    the points in order (what numpy's masked assignment per offset writes)."""
    n_r, n_c, channels = img.shape
    for dr in range(dot_px):
        for dc in range(dot_px):
            for i in range(rows.shape[0]):
                r = rows[i] + dr
                c = cols[i] + dc
                if 0 <= r < n_r and 0 <= c < n_c:
                    for k in range(channels):
                        img[r, c, k] = colours[i, k]


@_compiled
def ramp(s: np.ndarray, stops: np.ndarray, out: np.ndarray) -> None:
    """``out[j]`` (N, C) the colour ramp ``stops`` (K, C) at ``s[j]`` in [0, 1] (``s[j] * (K - 1)`` between two
    stops, linearly), black where ``s[j] <= 0``, truncated to uint8: per element the float operations of
    :func:`simready.measurement.review_images.depth_colours`' numpy form, in its order (the same bytes)."""
    last = stops.shape[0] - 2
    for j in range(s.shape[0]):
        x = s[j] * (stops.shape[0] - 1)
        i = min(np.int64(x), last)
        f = x - i
        g = 1.0 - f
        for k in range(stops.shape[1]):
            v = stops[i, k] * g + stops[i + 1, k] * f
            out[j, k] = 0 if s[j] <= 0.0 else np.uint8(v)


@_compiled
def height_dots(img: np.ndarray, points: np.ndarray, half: float, scale: float, lo: float, span: float,
                dot_px: int) -> None:
    """Sensor-frame points (M, ≥3) drawn top-down into ``img`` as :func:`dots` draws them, each at row
    ``int(half - x·scale)``, column ``int(half - y·scale)`` (the top-down canvas's map) in its height colour: per
    point the float operations of :func:`simready.measurement.review_images.height_colours` (``s`` = ``(z - lo) /
    span`` clipped to [0, 1]; red ``2s - 1``, green ``1 - |2s - 1|``, blue ``1 - 2s``, each clipped, times 255,
    truncated) and of the map, in their order: the same pixels as the numpy passes and :func:`dots`, without
    their full-sweep temporaries."""
    n_r, n_c, _ = img.shape
    for dr in range(dot_px):
        for dc in range(dot_px):
            for i in range(points.shape[0]):
                r = np.int64(half - points[i, 0] * scale) + dr
                c = np.int64(half - points[i, 1] * scale) + dc
                if 0 <= r < n_r and 0 <= c < n_c:
                    s = min(max((points[i, 2] - lo) / span, 0.0), 1.0)
                    t = 2.0 * s - 1.0
                    img[r, c, 0] = np.uint8(min(max(t, 0.0), 1.0) * 255)
                    img[r, c, 1] = np.uint8((1.0 - abs(t)) * 255)
                    img[r, c, 2] = np.uint8(min(max(1.0 - 2.0 * s, 0.0), 1.0) * 255)
