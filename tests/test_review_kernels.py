"""The review page's compiled kernels (:mod:`simready.review.camera_kernels`) and the gate's LiDAR centroids
(:mod:`simready.validity.lidar_kernels`) hold to the numpy they replaced, bit for bit: the same packed bytes, the same
floats, one point and empty inputs included (OpenBLAS sums one point times a transposed matrix in another order)."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from simready.review import camera
from simready.review.camera_kernels import body_points, members, moved_points, place_points
from simready.validity.lidar_kernels import instance_centroids

W, H = 320, 180


def _fma(a: float, b: float, c: float) -> float:
    """``a·b + c`` rounded once (exact in fractions, then rounded to the nearest double)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _numpy_sums_as_the_kernels_copy() -> bool:
    """Whether numpy sums here in the orders :mod:`simready.review.camera_kernels` copies (measured on OpenBLAS's
    SkylakeX core and numpy's einsum): another BLAS core or CPU may round ``p @ B`` differently, and there numpy's
    bits are no reference for the kernels, only their values."""
    rng = np.random.default_rng(12)
    p, B, G = rng.normal(size=(64, 3)), rng.normal(size=(3, 3)), rng.normal(size=(64, 3, 4))
    gemm, gemv = p @ B, p[:1] @ B.T
    R, Rt = G[:, :, :3], np.transpose(G[:, :, :3], (0, 2, 1))
    ein, ein_t = np.einsum("nij,nj->ni", R, p), np.einsum("nij,nj->ni", Rt, p)
    for i in range(len(p)):
        for k in range(3):
            if gemm[i, k] != _fma(p[i, 2], B[2, k], _fma(p[i, 1], B[1, k], p[i, 0] * B[0, k])):
                return False
            if ein[i, k] != (R[i, k, 0] * p[i, 0] + R[i, k, 2] * p[i, 2]) + R[i, k, 1] * p[i, 1]:
                return False
            if ein_t[i, k] != (Rt[i, k, 0] * p[i, 0] + Rt[i, k, 1] * p[i, 1]) + Rt[i, k, 2] * p[i, 2]:
                return False
    return all(gemv[0, k] == _fma(B[k, 2], p[0, 2], _fma(B[k, 0], p[0, 0], B[k, 1] * p[0, 1])) for k in range(3))


SAME_SUMS = _numpy_sums_as_the_kernels_copy()
needs_same_sums = pytest.mark.skipif(not SAME_SUMS, reason="numpy sums in other orders on this CPU/BLAS than the "
                                     "kernels copy: its bytes are no reference here (the floats are still compared)")


def test_the_probe_tells_the_sums_apart() -> None:
    """The probe's data round differently in a fused and an unfused order, so it can tell a BLAS that sums otherwise."""
    rng = np.random.default_rng(12)
    p, B = rng.normal(size=(64, 3)), rng.normal(size=(3, 3))
    fused = [_fma(p[i, 2], B[2, k], _fma(p[i, 1], B[1, k], p[i, 0] * B[0, k])) for i in range(64) for k in range(3)]
    plain = [(p[i, 0] * B[0, k] + p[i, 1] * B[1, k]) + p[i, 2] * B[2, k] for i in range(64) for k in range(3)]
    assert sum(a != b for a, b in zip(fused, plain)) > 10


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit where numpy sums as the kernels copy; within a few ulps where it does not."""
    return bool(np.array_equal(a, b)) if SAME_SUMS else bool(np.allclose(a, b, rtol=1e-13, atol=1e-12))


def _rotation(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _view(k1: float, k2: float) -> camera.CameraView:
    """A camera looking along world x, turning and moving a little from row to row (a rolling shutter)."""
    T = np.zeros((H, 4, 4))
    T[:, 3, 3] = 1.0
    optical = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    for r in range(H):
        a = 0.2 + 2e-4 * r
        T[r, :3, :3] = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]]) @ optical
        T[r, :3, 3] = [1.0 + 0.01 * r, 2.0, 1.5]
    lens = SimpleNamespace(applies_to=["rgb"], k1=k1, k2=k2)
    frames = SimpleNamespace(projection=SimpleNamespace(width_px=W, height_px=H, fx=260.0, fy=260.0, cx=W / 2 - 0.5,
                                                        cy=H / 2 - 0.5, near_m=0.3, far_m=90.0, distortion=lens))
    return camera.CameraView.of(frames, T)  # type: ignore[arg-type]


def _numpy_points(view: camera.CameraView, world: np.ndarray) -> bytes:
    """``_points`` as numpy computed it."""
    world = world[view.near_image(world)]
    uv, p_cam = view.project(world)
    depth = p_cam[:, 2]
    keep = view.inside(uv) & (depth <= view.far_m)
    u = np.rint(uv[keep, 0]).astype(np.int64) // camera.POINT_CELL_PX
    v = np.rint(uv[keep, 1]).astype(np.int64) // camera.POINT_CELL_PX
    steps = np.minimum(np.rint(depth[keep] / camera.DEPTH_STEP_M), 255).astype(np.int16)
    n_cols = view.width_px // camera.POINT_CELL_PX + 1
    grid = np.full(n_cols * (view.height_px // camera.POINT_CELL_PX + 1), 256, np.int16)
    np.minimum.at(grid, v * n_cols + u, steps)
    cells = np.flatnonzero(grid < 256)
    return ((cells % n_cols).astype("<u2").tobytes() + (cells // n_cols).astype("<u2").tobytes()
            + grid[cells].astype(np.uint8).tobytes())


def _numpy_box(view: camera.CameraView, T: np.ndarray, dims: list[float]) -> dict | None:
    """``_box`` as numpy computed it."""
    length, width, height = (float(v) for v in dims[:3])
    corners = camera.box_corners(length, width, height) @ T[:3, :3].T + T[:3, 3]
    z = view.to_camera(corners, np.full(8, view.height_px // 2, np.intp))[:, 2]
    ends = []
    for a, b in camera.BOX_EDGES:
        za, zb = z[a] - view.near_m, z[b] - view.near_m
        if za <= 0 and zb <= 0:
            continue
        pa, pb = corners[a], corners[b]
        if za <= 0:
            pa = pb + (pa - pb) * (zb / (zb - za)) * (1 - 1e-9)
        elif zb <= 0:
            pb = pa + (pb - pa) * (za / (za - zb)) * (1 - 1e-9)
        ends += [pa, pb]
    if not ends:
        return None
    centre = T[:3, :3] @ np.array([0.0, 0.0, height / 2.0]) + T[:3, 3]
    projected, _ = view.project(np.array([*ends, centre]))
    uv, c = projected[:-1], projected[-1]
    return {"c": [round(float(c[0]), 1), round(float(c[1]), 1)] if np.isfinite(c).all() and view.inside(c[None])[0]
            else None, "e": [round(float(x), 1) for x in np.nan_to_num(uv).reshape(-1)]}


def _numpy_cloud(world: np.ndarray, ground_z: float, box: tuple[float, float, float, float]) -> bytes:
    """``_cloud`` as numpy computed it."""
    x0, x1, y0, y1 = box
    cols = np.floor((world[:, 0] - x0) / camera.BEV_CELL_M)
    rows = np.floor((world[:, 1] - y0) / camera.BEV_CELL_M)
    n_cols, n_rows = int(np.ceil((x1 - x0) / camera.BEV_CELL_M)), int(np.ceil((y1 - y0) / camera.BEV_CELL_M))
    keep = (cols >= 0) & (cols < n_cols) & (rows >= 0) & (rows < n_rows)
    steps = np.clip(np.rint((world[keep, 2] - ground_z - camera.BEV_Z_FLOOR_M) / camera.BEV_Z_STEP_M), 0,
                    255).astype(np.int16)
    grid = np.full(n_cols * n_rows, -1, np.int16)
    np.maximum.at(grid, rows[keep].astype(np.int64) * n_cols + cols[keep].astype(np.int64), steps)
    cells = np.flatnonzero(grid >= 0)
    return ((cells % n_cols).astype("<u2").tobytes() + (cells // n_cols).astype("<u2").tobytes()
            + grid[cells].astype(np.uint8).tobytes())


@needs_same_sums
@pytest.mark.parametrize("k1, k2", [(0.0, 0.0), (-0.12, 0.03)])
def test_a_frames_points_and_boxes_are_numpys_bytes(k1: float, k2: float) -> None:
    view, rng = _view(k1, k2), np.random.default_rng(3)
    for n in (0, 1, 2, 5, 20_000):
        world = rng.normal(size=(n, 3)) * [25.0, 25.0, 2.0] + [15.0, 5.0, 0.0]
        assert camera._points(view, world) == _numpy_points(view, world), n
    for _ in range(400):  # boxes around the camera: ahead, behind, across its near plane
        T = np.eye(4)
        T[:3, :3] = _rotation(np.array([0.0, 0.0, *rng.normal(size=2)]))
        T[:3, 3] = rng.normal(size=3) * [12.0, 12.0, 0.2] + [4.0, 2.0, 0.0]
        dims = list(rng.uniform(0.5, 5.0, 3))
        assert camera._box(view, T, dims) == _numpy_box(view, T, dims)


def test_a_bev_cloud_is_numpys_bytes() -> None:
    rng = np.random.default_rng(4)
    for n in (0, 1, 30_000):
        world = rng.normal(size=(n, 3)) * [30.0, 30.0, 3.0] + [20.0, 5.0, 0.0]
        assert camera._cloud(world, 0.3, (-10.0, 50.3, -20.1, 30.0)) == _numpy_cloud(world, 0.3, (-10.0, 50.3, -20.1, 30.0))


def test_placing_a_sweep_and_moving_its_actors_points_are_numpys_floats() -> None:
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 1000):
        m = max(1, n // 30)
        T = np.zeros((m, 4, 4))
        T[:, 3, 3] = 1.0
        for g in range(m):
            T[g, :3, :3], T[g, :3, 3] = _rotation(rng.normal(size=4)), rng.normal(size=3) * 50.0
        poses = np.ascontiguousarray(T[:, :3, :]).reshape(m, 12)
        inverse = np.sort(rng.integers(0, m, n)).astype(np.intp)
        xyz = rng.normal(size=(n, 3)) * 30.0
        G = np.take(poses, inverse, axis=0).reshape(-1, 3, 4)
        world = camera.rotate(G[:, :, :3], xyz) + G[:, :, 3]
        assert _same(place_points(poses, inverse, xyz), world)
        for on in (np.arange(n), np.arange(min(n, 1)), np.flatnonzero(rng.random(n) < 0.5)):
            if not len(on):
                continue
            inv = np.sort(rng.integers(0, m, len(on))).astype(np.intp)
            G = np.take(poses, inv, axis=0).reshape(-1, 3, 4)
            body = camera.rotate(np.transpose(G[:, :, :3], (0, 2, 1)), world[on] - G[:, :, 3])
            assert _same(body_points(poses, inv, world, on), body)
            now = T[-1]
            expected = world.copy()
            expected[on] = body @ now[:3, :3].T + now[:3, 3]  # one point: OpenBLAS's gemv order
            moved = world.copy()
            moved_points(moved, on, body, np.ascontiguousarray(now))
            assert _same(moved, expected), (n, len(on))


def test_members_and_centroids_are_numpys() -> None:
    rng = np.random.default_rng(6)
    ids = rng.choice(np.array([7, 19, 3_000_000, 16_720_370, 9], np.uint32), 5000)
    wanted = np.array([9, 19, 42, 16_720_370], np.int64)
    index, starts = members(ids, wanted)
    for j, cid in enumerate(wanted):
        assert np.array_equal(index[starts[j]:starts[j + 1]], np.flatnonzero(ids == cid))
    xyz = rng.normal(size=(len(ids), 3)) * 40.0 + 100.0
    counts, centroids = instance_centroids(xyz, ids.astype(np.int64), wanted)
    for j, cid in enumerate(wanted):
        mask = ids == cid
        assert counts[j] == mask.sum()
        if mask.any():
            assert np.array_equal(centroids[j], xyz[mask].mean(axis=0))
        else:
            assert np.isnan(centroids[j]).all()
