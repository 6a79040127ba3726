"""The rolling-shutter projection into a frame, point by point (compiled): the row iteration that poses each
point at the time of the row that sees it, and the pinhole pixels and flags of the settled points
(:func:`simready.truth.correspondence.projection.project_body_points`; its numpy passes are the bit reference).
"""

from __future__ import annotations

import numba
import numpy as np

from simready.truth.kernels.compile import JIT


@numba.njit(**JIT)
def _place(i: int, s: int, r: int, tables: np.ndarray, present_tab: np.ndarray, p_body: np.ndarray,
           world: np.ndarray, present: np.ndarray) -> None:
    """World position of moving point i on pose-table slot s at row r (``apply_pose_rows``' operation order)."""
    world_at(i, s, r, tables, p_body, world, i)
    present[i] = present_tab[s, r]


@numba.njit(**JIT)
def world_at(i: int, s: int, r: int, tables: np.ndarray, p_body: np.ndarray, world: np.ndarray, k: int) -> None:
    """World position of moving point i on pose-table slot s at row r, into ``world[k]`` (``apply_pose_rows``'
    operation order)."""
    g = tables[s, r]
    for a in range(3):
        world[k, a] = p_body[i, 0] * g[3 * a] + p_body[i, 1] * g[3 * a + 1] + p_body[i, 2] * g[3 * a + 2] + g[9 + a]


@numba.njit(**JIT)
def camera_coords_at(i: int, r: int, cols: np.ndarray, world: np.ndarray, cam: np.ndarray) -> None:
    """Optical-frame coordinates of point i with row r's pose (``camera_coords``' operation order)."""
    d0 = world[i, 0] - cols[9, r]
    d1 = world[i, 1] - cols[10, r]
    d2 = world[i, 2] - cols[11, r]
    for a in range(3):
        cam[i, a] = d0 * cols[a, r] + d1 * cols[3 + a, r] + d2 * cols[6 + a, r]


@numba.njit(**JIT)
def settle_rows(cols: np.ndarray, slot: np.ndarray, tables: np.ndarray, present_tab: np.ndarray,
                p_body: np.ndarray, world: np.ndarray, present: np.ndarray, rows: np.ndarray, cam: np.ndarray,
                cy: float, fy: float, height: int, global_shutter: bool, max_iterations: int) -> None:
    """The rolling-shutter row iteration of :func:`simready.truth.correspondence.projection.project_body_points`,
    point by point (in place: ``rows`` in as the clipped guesses, out settled; ``world`` in for static
    points, out for moving ones; ``present``, ``cam`` out). Bitwise the numpy reference
    (``project_body_points_numpy``): the same operations in the same order per point.

    Args:
        cols: (12, H) the frame's per-row pose columns (``FrameView.row_columns``).
        slot: (N,) each point's moving-body slot in ``tables`` (−1: static).
        tables: (S, H, 12) each moving body's pose per row time; present_tab: (S, H) its presence.
    """
    hmax = float(height - 1)
    for i in range(len(slot)):
        s = slot[i]
        if global_shutter:
            rows[i] = 0
            if s >= 0:
                _place(i, s, 0, tables, present_tab, p_body, world, present)
            camera_coords_at(i, 0, cols, world, cam)
            continue
        r = rows[i]
        before = -1
        moved = False
        for _ in range(max_iterations):
            if s >= 0:
                _place(i, s, r, tables, present_tab, p_body, world, present)
            camera_coords_at(i, r, cols, world, cam)
            new = r
            if cam[i, 2] > 0.0:
                v = np.rint(cy + fy * cam[i, 1] / cam[i, 2])
                if np.isnan(v):
                    v = 0.0
                new = int(min(max(v, 0.0), hmax))
            moved = new != r and new != before
            before = r
            if not moved:
                break
            r = new
        if moved:  # the cap: pose and project at the row reached
            if s >= 0:
                _place(i, s, r, tables, present_tab, p_body, world, present)
            camera_coords_at(i, r, cols, world, cam)
        rows[i] = r


@numba.njit(**JIT)
def pixels_and_flags(cam: np.ndarray, cx: float, cy: float, fx: float, fy: float, width: int, height: int,
                     near: float, far: float) -> tuple:
    """Pinhole pixels (N, 2; NaN behind the camera) and the behind / out-of-frame / beyond-range flags of
    optical-frame points, with ``_projection``'s numpy operations per point."""
    n = cam.shape[0]
    uv = np.empty((n, 2))
    behind = np.empty(n, np.bool_)
    out = np.empty(n, np.bool_)
    beyond = np.empty(n, np.bool_)
    for i in range(n):
        z = cam[i, 2]
        front = z > 0.0
        if front:
            u = cx + fx * cam[i, 0] / z
            v = cy + fy * cam[i, 1] / z
        else:
            u = np.nan
            v = np.nan
        uv[i, 0] = u
        uv[i, 1] = v
        inside = front and u >= -0.5 and u <= width - 0.5 and v >= -0.5 and v <= height - 0.5
        behind[i] = not front
        out[i] = front and not inside
        beyond[i] = inside and not (z >= near and z <= far)
    return uv, behind, out, beyond
