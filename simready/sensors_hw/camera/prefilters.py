"""Which pixels (or shadow rays) can meet a world box, found by projecting the box with each row's pose: the
casts' prefilters (:data:`simready.raycast.rays.RayPrefilter`), the per-row column spans the truth re-casts test
pixels against, and their numpy references.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from simready.raycast.body import box_corners
from simready.raycast.kernels import positions_in
from simready.sensors_hw import camera_kernels as kern
from simready.sensors_hw.camera.lens import pinhole
from simready.sensors_hw.models import CameraModel


#: Which rays (or receivers) can meet the world box ``(lo, hi)``: what the prefilters below return.
BoxFilter = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.intp]]


def projection_prefilter(model: CameraModel, T_rows: NDArray[np.float64]) -> BoxFilter:
    """Pixels whose rays can meet a world box, from projecting the box with each row's pose.

    Why it is conservative: a row's pixels share one origin; a box wholly in
    front of the camera projects inside the hull of its corners' projections
    (perspective keeps convexity), so only pixels in that rectangle (+1 px)
    can see it. A box straddling the camera plane keeps the whole row; a box
    wholly nearer than the near plane keeps none.
    """
    w = pinhole(model).width_px
    spans_of = projection_spans(model, T_rows)

    def candidates(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> NDArray[np.intp]:
        keep, c0, c1 = spans_of(lo, hi)
        rows = np.flatnonzero(keep)
        return concat_ranges(rows * w + c0[rows], c1[rows] - c0[rows] + 1)

    return candidates


def projection_spans(model: CameraModel, T_rows: NDArray[np.float64]
                     ) -> Callable[[NDArray[np.float64], NDArray[np.float64]],
                                   tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64]]]:
    """:func:`projection_prefilter`'s pixels of a box as one span of columns per row: ``(keep, c0, c1)``, (H,) each —
    row v's candidate pixels are columns ``c0[v] … c1[v]`` (inside the image) where ``keep[v]``, none elsewhere. A
    caller testing given pixels reads three values per pixel instead of building the frame's set of candidates."""
    k = pinhole(model)
    h, w = k.height_px, k.width_px
    # Optical axes in world per row (3, H) and the origin's coordinates along them.
    axes = [np.ascontiguousarray(T_rows[:, :3, i].T) for i in range(3)]
    offsets = [np.einsum("hi,ih->h", T_rows[:, :3, 3], a) for a in axes]
    rows = np.arange(h)

    def spans(lo: NDArray[np.float64], hi: NDArray[np.float64]
              ) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64]]:
        corners = box_corners(lo, hi)
        x, y, z = (corners @ a - o for a, o in zip(axes, offsets))  # (8, H) in each row's optical frame
        front = np.all(z > 1e-6, axis=0)
        unreachable = np.all(z < model.near_m, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = k.cx + k.fx * x / z
            v = k.cy + k.fy * y / z
        c0 = np.where(front, np.floor(u.min(axis=0)) - 1, 0).clip(0, w)
        c1 = np.where(front, np.ceil(u.max(axis=0)) + 1, w - 1).clip(-1, w - 1)
        in_rows = ~front | ((rows >= np.floor(v.min(axis=0)) - 1) & (rows <= np.ceil(v.max(axis=0)) + 1))
        return in_rows & ~unreachable & (c1 >= c0), c0.astype(np.int64), c1.astype(np.int64)

    return spans


def concat_ranges(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.intp]:
    """Concatenate the index ranges [start, start + count) (one compiled pass, :func:`concat_ranges_numpy`'s indices)."""
    out: NDArray[np.intp] = kern.spans(np.asarray(starts, np.int64), np.asarray(counts, np.int64))
    return out


def concat_ranges_numpy(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.intp]:
    """Concatenate the index ranges [start, start + count) (vectorized): :func:`concat_ranges`' reference."""
    if len(starts) == 0:
        return np.zeros(0, np.intp)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))).astype(np.intp)


def projection_candidates(model: CameraModel, T_rows: NDArray[np.float64]) -> BoxFilter:
    """:func:`projection_prefilter`'s pixels (the same ones, ascending) in one compiled pass over the rows
    (:func:`simready.sensors_hw.camera_kernels.projection_candidates`: each row's corners projected and its span
    of columns written once), what the casts' prefilters use; :func:`projection_prefilter` is its numpy reference."""
    k = pinhole(model)
    # Optical axes in world per row (3, H) and the origin's coordinates along them, as projection_spans has them.
    ax, ay, az = (np.ascontiguousarray(T_rows[:, :3, i].T) for i in range(3))
    ox, oy, oz = (np.einsum("hi,ih->h", T_rows[:, :3, 3], a) for a in (ax, ay, az))
    near, w = float(model.near_m), k.width_px
    return lambda lo, hi: kern.projection_candidates(box_corners(lo, hi), ax, ay, az, ox, oy, oz, k.cx, k.cy, k.fx,
                                                     k.fy, near, w)


def shadow_prefilter(model: CameraModel, T_rows: NDArray[np.float64], receivers: NDArray[np.intp],
                     receiver_z_min_m: float, sun: NDArray[np.float64]) -> BoxFilter:
    """Shadow rays (one per receiving pixel, toward the sun) that can meet a world box.

    A point shadowed by the box lies in the box swept away from the sun
    down to the lowest receiver, ``box − [0, L]·s`` with
    ``L = (hi_z − z_min) / s_z``; its pixel's primary ray therefore meets
    that volume's bounding box, which :func:`projection_prefilter` finds.
    Returns positions in ``receivers``.
    """
    pixels = projection_candidates(model, T_rows)

    def candidates(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> NDArray[np.intp]:
        length = max(0.0, (hi[2] - receiver_z_min_m) / sun[2])
        lo_v, hi_v = np.minimum(lo, lo - length * sun), np.maximum(hi, hi - length * sun)
        # Positions in the (ascending) receivers of the candidate pixels that are receivers: one merge walk, not
        # a frame-sized table of positions.
        found: NDArray[np.intp] = positions_in(receivers, pixels(lo_v, hi_v))
        return found

    return candidates
