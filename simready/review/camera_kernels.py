"""Compiled kernels of the review page's camera overlay and bird's-eye clouds (numba): a sweep's points placed in the
world, moved with the actors they lie on, projected into a camera frame (rolling shutter, lens) and binned, and a
truth box's edges projected, each in one pass instead of a dozen numpy passes and gathers over ~30 000 points.

Bits: :mod:`simready.review.camera`'s numpy in its operations' order and precision, ``fastmath`` off, as numpy
computes them here (measured; ``tests/test_review_camera.py`` holds the kernels to the numpy they replace):

* ``np.einsum("nij,nj->ni", R, p)`` over rows of a contiguous (n, 3, 4) gather sums the products as
  ``(r0·p0 + r2·p2) + r1·p1``, over a transposed rotation as ``(r0·p0 + r1·p1) + r2·p2``;
* ``p @ B`` of (n, 3) points through OpenBLAS fuses the products as ``fma(p2, b2, fma(p1, b1, p0·b0))``, except
  one point (n = 1) times a transposed B (``p @ M.T``), which OpenBLAS's gemv sums as
  ``fma(p2, b2, fma(p0, b0, p1·b1))``, as ``M @ v`` does.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.raycast.kernels import fma

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)


@numba.njit(inline="always", **_JIT)
def _gemv(m0: float, m1: float, m2: float, v0: float, v1: float, v2: float) -> float:
    """One output of OpenBLAS's gemv (``M @ v``, or one point times a transposed matrix)."""
    return fma(m2, v2, fma(m0, v0, m1 * v1))  # type: ignore[call-arg]


@numba.njit(inline="always", **_JIT)
def _gemm(p0: float, p1: float, p2: float, b0: float, b1: float, b2: float) -> float:
    """One output of OpenBLAS's gemm over (n, 3) points."""
    return fma(p2, b2, fma(p1, b1, p0 * b0))  # type: ignore[call-arg]


@numba.njit(**_JIT)
def place_points(poses: np.ndarray, inverse: np.ndarray, xyz: np.ndarray) -> np.ndarray:
    """(n, 3) world points: ``xyz[i]`` by the pose ``poses[inverse[i]]`` (its top 3×4 rows, 12 values), as
    ``np.einsum("nij,nj->ni", R, xyz) + t`` of the gathered rows gives them."""
    n = xyz.shape[0]
    out = np.empty((n, 3), np.float64)
    for i in range(n):
        g = inverse[i]
        x0, x1, x2 = xyz[i, 0], xyz[i, 1], xyz[i, 2]
        for k in range(3):
            out[i, k] = ((poses[g, 4 * k] * x0 + poses[g, 4 * k + 2] * x2) + poses[g, 4 * k + 1] * x1) + poses[g, 4 * k + 3]
    return out


@numba.njit(**_JIT)
def body_points(poses: np.ndarray, inverse: np.ndarray, world: np.ndarray, on: np.ndarray) -> np.ndarray:
    """(k, 3) the points ``world[on]`` (``on`` their indices) in the body frame of the pose ``poses[inverse[j]]``
    of each: ``np.einsum("nij,nj->ni", R^T, p - t)`` as numpy gives it (the transposed rotation)."""
    k_n = on.shape[0]
    out = np.empty((k_n, 3), np.float64)
    for j in range(k_n):
        g = inverse[j]
        i = on[j]
        d0 = world[i, 0] - poses[g, 3]
        d1 = world[i, 1] - poses[g, 7]
        d2 = world[i, 2] - poses[g, 11]
        for k in range(3):
            out[j, k] = (poses[g, k] * d0 + poses[g, 4 + k] * d1) + poses[g, 8 + k] * d2
    return out


@numba.njit(**_JIT)
def moved_points(world: np.ndarray, on: np.ndarray, body: np.ndarray, pose: np.ndarray) -> None:
    """``world[on] = body @ pose[:3, :3].T + pose[:3, 3]`` in place (``on`` the indices), as numpy's matmul
    through OpenBLAS gives it (a transposed matrix: one point by its gemv)."""
    k_n = on.shape[0]
    one = k_n == 1
    for j in range(k_n):
        i = on[j]
        b0, b1, b2 = body[j, 0], body[j, 1], body[j, 2]
        for k in range(3):
            if one:
                world[i, k] = _gemv(b0, b1, b2, pose[k, 0], pose[k, 1], pose[k, 2]) + pose[k, 3]
            else:
                world[i, k] = _gemm(b0, b1, b2, pose[k, 0], pose[k, 1], pose[k, 2]) + pose[k, 3]


@numba.njit(inline="always", **_JIT)
def _to_camera(rows: np.ndarray, r: int, x0: float, x1: float, x2: float) -> tuple[float, float, float]:
    """A world point in the optical frame of row ``r`` (``rows`` (H, 12): ``[R | t]``), as
    :meth:`simready.review.camera.CameraView.to_camera` (einsum of a gathered row, then + t)."""
    c0 = ((rows[r, 0] * x0 + rows[r, 2] * x2) + rows[r, 1] * x1) + rows[r, 3]
    c1 = ((rows[r, 4] * x0 + rows[r, 6] * x2) + rows[r, 5] * x1) + rows[r, 7]
    c2 = ((rows[r, 8] * x0 + rows[r, 10] * x2) + rows[r, 9] * x1) + rows[r, 11]
    return c0, c1, c2


@numba.njit(**_JIT)
def _filled(grid: np.ndarray, n_cols: int, empty: int) -> tuple[np.ndarray, ...]:
    """The squares of a grid ``n_cols`` wide that hold a step (not ``empty``), in row then column order: their
    columns (u2), rows (u2) and steps (u1), as ``np.flatnonzero`` lists them."""
    count = 0
    for c in range(grid.shape[0]):
        if grid[c] != empty:
            count += 1
    cols = np.empty(count, np.uint16)
    rows = np.empty(count, np.uint16)
    steps = np.empty(count, np.uint8)
    k = 0
    for c in range(grid.shape[0]):
        if grid[c] != empty:
            cols[k], rows[k], steps[k] = c % n_cols, c // n_cols, grid[c]
            k += 1
    return cols, rows, steps


@numba.njit(**_JIT)
def project_points(rows: np.ndarray, x: np.ndarray, fx: float, fy: float, cx: float, cy: float, k1: float,
                   k2: float, near: float, height: int, iterations: int, uv: np.ndarray, depth: np.ndarray) -> None:
    """:meth:`simready.review.camera.CameraView.project` of the points ``x`` (n, 3) into ``uv`` (n, 2), NaN where a
    point lies behind the near plane, and ``depth`` (n,) (the optical z): each point with the middle row's pose,
    then ``iterations − 1`` times more with the pose of the row it landed on."""
    lens = k1 != 0.0 or k2 != 0.0
    for i in range(x.shape[0]):
        x0, x1, x2 = x[i, 0], x[i, 1], x[i, 2]
        r = height // 2
        u = v = np.nan
        z = 0.0
        for _ in range(iterations):
            c0, c1, z = _to_camera(rows, r, x0, x1, x2)
            u = v = np.nan
            if z > near:
                a, b = c0 / z, c1 / z
                if lens:
                    r2 = a * a + b * b
                    f = (1.0 + k1 * r2) + k2 * r2 * r2
                    a, b = a * f, b * f
                u, v = fx * a + cx, fy * b + cy
                # np.clip(np.rint(np.nan_to_num(v)), 0, height - 1): NaN → 0, ±inf → the clip's ends.
                w = np.rint(v) if math.isfinite(v) else (0.0 if math.isnan(v) else v)
                r = int(min(max(w, 0.0), float(height - 1)))
        uv[i, 0], uv[i, 1] = u, v
        depth[i] = z


@numba.njit(**_JIT)
def frame_points(rows: np.ndarray, world: np.ndarray, width: int, height: int, fx: float, fy: float, cx: float,
                 cy: float, k1: float, k2: float, near: float, far: float, margin: float, iterations: int,
                 cell: int, depth_step: float) -> tuple[np.ndarray, ...]:
    """:func:`simready.review.camera._points` in one pass: the world points near the image by the middle row's
    pose (``margin`` of the image around it), projected (:func:`project_points`), those on a pixel within
    ``far`` binned per ``cell`` pixels square keeping the least depth step; returns the squares' columns (u2),
    rows (u2) and depth steps (u1), in row then column order."""
    mid = height // 2
    # near_image: points_world @ R[mid].T + t[mid] (OpenBLAS gemm, the matrix not transposed: every n).
    r00, r01, r02 = rows[mid, 0], rows[mid, 1], rows[mid, 2]
    r10, r11, r12 = rows[mid, 4], rows[mid, 5], rows[mid, 6]
    r20, r21, r22 = rows[mid, 8], rows[mid, 9], rows[mid, 10]
    t0, t1, t2 = rows[mid, 3], rows[mid, 7], rows[mid, 11]
    mu, mv = margin * width, margin * height
    n = world.shape[0]
    near_idx = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        x0, x1, x2 = world[i, 0], world[i, 1], world[i, 2]
        p0 = _gemm(x0, x1, x2, r00, r01, r02) + t0
        p1 = _gemm(x0, x1, x2, r10, r11, r12) + t1
        z = _gemm(x0, x1, x2, r20, r21, r22) + t2
        u = fx * p0 / z + cx
        v = fy * p1 / z + cy
        if z > near / 2.0 and u > -mu and u < width + mu and v > -mv and v < height + mv:
            near_idx[m] = i
            m += 1
    x = np.empty((m, 3), np.float64)
    for j in range(m):
        x[j, 0], x[j, 1], x[j, 2] = world[near_idx[j], 0], world[near_idx[j], 1], world[near_idx[j], 2]
    uv = np.empty((m, 2), np.float64)
    depth = np.empty(m, np.float64)
    project_points(rows, x, fx, fy, cx, cy, k1, k2, near, height, iterations, uv, depth)
    n_cols = width // cell + 1
    grid = np.full(n_cols * (height // cell + 1), 256, np.int16)
    for j in range(m):
        u, v, d = uv[j, 0], uv[j, 1], depth[j]
        if u >= -0.5 and u < width - 0.5 and v >= -0.5 and v < height - 0.5 and d <= far:
            c = (int(np.rint(v)) // cell) * n_cols + int(np.rint(u)) // cell
            s = np.int16(min(np.rint(d / depth_step), 255.0))
            if s < grid[c]:
                grid[c] = s
    return _filled(grid, n_cols, 256)  # type: ignore[no-any-return]


@numba.njit(**_JIT)
def cloud_cells(world: np.ndarray, ground_z: float, x0: float, y0: float, n_cols: int, n_rows: int, cell_m: float,
                z_floor: float, z_step: float) -> tuple[np.ndarray, ...]:
    """:func:`simready.review.camera._cloud`'s squares: the highest height step per ``cell_m`` square of the box
    from (x0, y0), ``n_cols`` × ``n_rows`` squares; returns their columns (u2), rows (u2) and steps (u1) in row
    then column order."""
    grid = np.full(n_cols * n_rows, -1, np.int16)
    for i in range(world.shape[0]):
        col = np.floor((world[i, 0] - x0) / cell_m)
        row = np.floor((world[i, 1] - y0) / cell_m)
        if col >= 0 and col < n_cols and row >= 0 and row < n_rows:
            s = np.int16(min(max(np.rint((world[i, 2] - ground_z - z_floor) / z_step), 0.0), 255.0))
            c = int(row) * n_cols + int(col)
            if s > grid[c]:
                grid[c] = s
    return _filled(grid, n_cols, -1)  # type: ignore[no-any-return]


@numba.njit(**_JIT)
def box_points(rows: np.ndarray, mid: int, T: np.ndarray, corners: np.ndarray, height_m: float, edges: np.ndarray,
               near: float, shrink: float) -> np.ndarray:
    """The world points :func:`simready.review.camera._box` projects: the ends of each box edge that lies partly
    in front of the near plane of row ``mid``, clipped at it (scaled by ``shrink`` inside), then the box's centre;
    (0, 3) when no edge does. ``corners`` (8, 3) in the body frame, ``T`` (4, 4) the box's pose."""
    world = np.empty((8, 3), np.float64)
    z = np.empty(8, np.float64)
    for c in range(8):
        p0, p1, p2 = corners[c, 0], corners[c, 1], corners[c, 2]
        for k in range(3):
            world[c, k] = _gemm(p0, p1, p2, T[k, 0], T[k, 1], T[k, 2]) + T[k, 3]
        z[c] = _to_camera(rows, mid, world[c, 0], world[c, 1], world[c, 2])[2]
    out = np.empty((2 * edges.shape[0] + 1, 3), np.float64)
    m = 0
    for e in range(edges.shape[0]):
        a, b = edges[e, 0], edges[e, 1]
        za, zb = z[a] - near, z[b] - near
        if za <= 0 and zb <= 0:
            continue
        for k in range(3):
            pa, pb = world[a, k], world[b, k]
            if za <= 0:
                pa = pb + (pa - pb) * (zb / (zb - za)) * shrink
            elif zb <= 0:
                pb = pa + (pb - pa) * (za / (za - zb)) * shrink
            out[m, k], out[m + 1, k] = pa, pb
        m += 2
    if m == 0:
        return out[:0]
    half = height_m / 2.0
    for k in range(3):
        out[m, k] = _gemv(T[k, 0], T[k, 1], T[k, 2], 0.0, 0.0, half) + T[k, 3]
    return out[:m + 1]


@numba.njit(**_JIT)
def members(ids: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, ...]:
    """The points of each of the ``wanted`` ids (k, sorted ascending) among ``ids`` (n,): ``(index, starts)``, the
    points of ``wanted[j]`` being ``index[starts[j]:starts[j + 1]]`` in ascending order (``np.flatnonzero(ids ==
    wanted[j])``), in one pass instead of a sort of the ids and a comparison per id."""
    k = wanted.shape[0]
    group = np.full(ids.shape[0], -1, np.int64)
    starts = np.zeros(k + 1, np.int64)
    for i in range(ids.shape[0]):
        j = np.searchsorted(wanted, ids[i])
        if j < k and wanted[j] == ids[i]:
            group[i] = j
            starts[j + 1] += 1
    for j in range(k):
        starts[j + 1] += starts[j]
    index = np.empty(starts[k], np.int64)
    fill = starts[:k].copy()
    for i in range(ids.shape[0]):
        j = group[i]
        if j >= 0:
            index[fill[j]] = i
            fill[j] += 1
    return index, starts
