"""Body points projected into a frame under its rolling shutter (:func:`project_body_points`) and what the
projection says of each point (:class:`ShutterProjection`).

The row that sees a point depends on where it projects, and the projection on the row's time (the camera and
the body both move). Solved by fixed-point iteration on the row index: start at the middle row (or a guess, such
as the source pixel's row); project with that row's camera pose and the body pose at that row's time; move to the
row it lands on; repeat until the row stops changing. The contraction factor is the image speed times the line
time (≪ 1), so 2–3 iterations settle it; a global shutter needs one. Compiled
(:func:`simready.truth.kernels.projection.settle_rows`), with full-array numpy passes as its bit reference
(:func:`project_body_points_numpy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from simready.sensors_hw.models import CameraModel
from simready.raycast.geometry import SceneGeometry
from simready.truth.correspondence.bodies import moving_pose_tables, static_bodies, static_world_points
from simready.truth.correspondence.poses import apply_pose_rows, pose_rows
from simready.truth.correspondence.view import FrameView, distorted_uv
from simready.truth.kernels.projection import pixels_and_flags, settle_rows

#: Rolling-shutter row iterations (the row settles in 2–3; the cap only bounds pathological motion).
MAX_ROW_ITERATIONS = 8


@dataclass
class ShutterProjection:
    """Body points seen from one frame, each at the row time that samples it.

    Attributes (N rows):
        row: (N,) int64 row whose time samples the point (the settled fixed point).
        time_s: (N,) that row's time.
        point_world: (N, 3) float64 the point's world position at ``time_s``.
        point_camera: (N, 3) float64 in that row's optical frame.
        uv: (N, 2) float64 pinhole pixel coordinates (NaN behind the camera).
        uv_distorted: (N, 2) the RGB image's coordinates.
        depth_m: (N,) z-depth (optical axis).
        present: body exists at ``time_s``; behind_camera: z ≤ 0;
        out_of_frame: in front but outside [−0.5, W−0.5] × [−0.5, H−0.5];
        beyond_range: in frame but z outside [near, far].
    """

    row: NDArray[np.int64]
    time_s: NDArray[np.float64]
    point_world: NDArray[np.float64]
    point_camera: NDArray[np.float64]
    uv: NDArray[np.float64]
    depth_m: NDArray[np.float64]
    present: NDArray[np.bool_]
    behind_camera: NDArray[np.bool_]
    out_of_frame: NDArray[np.bool_]
    beyond_range: NDArray[np.bool_]
    model: CameraModel

    @cached_property
    def uv_distorted(self) -> NDArray[np.float64]:
        """(N, 2) the RGB image's coordinates (computed on first use: the files store pinhole ones)."""
        return distorted_uv(self.model, self.uv)

    @cached_property
    def in_view(self) -> NDArray[np.bool_]:
        """Present, in front, in frame and within [near, far]: what a re-cast decides."""
        return self.present & ~self.behind_camera & ~self.out_of_frame & ~self.beyond_range


def camera_coords(view: FrameView, rows: NDArray[np.int64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, 3) optical-frame coordinates Rᵀ(p − o) of world points p, each with its row's pose."""
    cols = view.row_columns
    d0, d1, d2 = (p[:, i] - np.take(cols[9 + i], rows) for i in range(3))
    out = np.empty((len(p), 3))
    for i in range(3):
        out[:, i] = d0 * np.take(cols[i], rows) + d1 * np.take(cols[3 + i], rows) + d2 * np.take(cols[6 + i], rows)
    return out


def _static_placed(scene: SceneGeometry, body: NDArray[np.intp], p_body: NDArray[np.float64],
                   world_static: NDArray[np.float64] | None
                   ) -> tuple[NDArray[np.intp], NDArray[np.bool_], NDArray[np.float64]]:
    """``(body, static, world)`` of points to project: the owning bodies, which of them are static, and
    (N, 3) world positions whose rows on static bodies are final (``world_static``'s, or placed from
    ``p_body``); the rows on moving bodies are for the row iteration to place."""
    body = np.asarray(body, np.intp)
    static = static_bodies(scene)[body]
    if world_static is None:
        world = np.empty((len(body), 3))
        world[static] = static_world_points(scene, body[static], p_body[static])
    else:
        world = np.array(world_static, np.float64)
    return body, static, world


def project_body_points(scene: SceneGeometry, view: FrameView, body: NDArray[np.intp], p_body: NDArray[np.float64],
                        *, world_static: NDArray[np.float64] | None = None,
                        row_guess: NDArray[np.int64] | None = None) -> ShutterProjection:
    """Project body points into a frame, each at the time of the row that sees it (module doc).

    Args:
        body, p_body: (N,) owning bodies and (N, 3) points in their body frames (rows on static
            bodies may be NaN when ``world_static`` is given).
        world_static: (N, 3) the points' world positions, used for the rows on static bodies (a
            static point is where it was: passing the source frame's world points makes the scene
            displacement of static geometry exactly zero by construction).
        row_guess: start of the row iteration (e.g. the source pixel's row for a neighbouring
            frame); it only speeds up the iteration, the settled rows do not depend on it.

    The row iteration runs compiled, point by point (:func:`simready.truth.kernels.projection.settle_rows`),
    bitwise :func:`project_body_points_numpy`.
    """
    k = view.intrinsics
    h = k.height_px
    n = len(body)
    body, static, world = _static_placed(scene, body, p_body, world_static)  # moving rows: placed by the kernel
    slot, tables, present_tab = moving_pose_tables(scene, view, body)
    present = np.ones(n, bool)
    rows = np.full(n, h // 2, np.int64) if row_guess is None else np.clip(row_guess, 0, h - 1).astype(np.int64)
    cam = np.empty((n, 3))
    settle_rows(view.row_columns, slot, tables, present_tab, np.ascontiguousarray(p_body, np.float64),
                world, present, rows, cam, k.cy, k.fy, h, view.global_shutter, MAX_ROW_ITERATIONS)
    uv, behind, out, beyond = pixels_and_flags(cam, k.cx, k.cy, k.fx, k.fy, k.width_px, h, view.model.near_m,
                                               view.model.far_m)
    return ShutterProjection(rows, view.row_times_s[rows], world, cam, uv, cam[:, 2], present, behind, out, beyond,
                      view.model)


def project_body_points_numpy(scene: SceneGeometry, view: FrameView, body: NDArray[np.intp], p_body: NDArray[np.float64],
                        *, world_static: NDArray[np.float64] | None = None,
                        row_guess: NDArray[np.int64] | None = None) -> ShutterProjection:
    """:func:`project_body_points` (the same arguments) as full-array numpy passes: the bit reference of the
    compiled one."""
    k = view.intrinsics
    h = k.height_px
    n = len(body)
    body, static, world = _static_placed(scene, body, p_body, world_static)  # moving rows: placed below
    present = np.ones(n, bool)
    moving = np.flatnonzero(~static)
    # Moving bodies: their pose at every row time of this frame, gathered per point by row.
    body_rows: dict[int, tuple[NDArray, NDArray]] = {}
    for b in np.unique(body[moving]):
        smp = scene.bodies[int(b)].track.sample(view.row_times_s, clamp=True)
        body_rows[int(b)] = (pose_rows(smp.matrices()), smp.present)

    def place(idx: NDArray[np.intp], rows: NDArray[np.int64]) -> None:
        for b, (table, pres) in body_rows.items():
            sel = idx[body[idx] == b]
            if len(sel):
                r = rows[sel]
                world[sel] = apply_pose_rows(np.take(table, r, axis=0), p_body[sel])
                present[sel] = pres[r]

    if view.global_shutter:
        rows = np.zeros(n, np.int64)
        place(moving, rows)
        cam = camera_coords(view, rows, world)
    else:
        # Each pass keeps the coordinates it computed; a point whose row did not change is final.
        # A point settles on a row when it projects into that row's band (|v − r| ≤ ½). Rounding can
        # instead alternate between two adjacent rows (the shutter passes the point between two
        # samples, so no row sees it exactly); the iteration then stops on the row it is at.
        rows = np.full(n, h // 2, np.int64) if row_guess is None else np.clip(row_guess, 0, h - 1).astype(np.int64)
        before = np.full(n, -1, np.int64)
        active: NDArray[np.intp] | None = None  # None: every point (the first pass, without gathers)
        for _ in range(MAX_ROW_ITERATIONS):
            if active is None:
                place(moving, rows)
                cam = c = camera_coords(view, rows, world)
                current = rows.copy()
            else:
                place(active[~static[active]], rows)
                c = camera_coords(view, rows[active], world[active])
                cam[active] = c
                current = rows[active]
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.rint(k.cy + k.fy * c[:, 1] / c[:, 2])
            new = np.where(c[:, 2] > 0.0, np.clip(np.nan_to_num(v), 0, h - 1), current).astype(np.int64)
            idx = np.arange(n) if active is None else active
            moves = (new != current) & (new != before[idx])
            before[idx] = current
            rows[idx[moves]] = new[moves]
            active = idx[moves]
            if len(active) == 0:
                break
        if active is not None and len(active):  # the cap: pose and project the unsettled at the rows they reached
            place(active[~static[active]], rows)
            cam[active] = camera_coords(view, rows[active], world[active])
    return _projection(view, rows, world, cam, present)


def _projection(view: FrameView, rows: NDArray[np.int64], world: NDArray[np.float64], cam: NDArray[np.float64],
                present: NDArray[np.bool_]) -> ShutterProjection:
    """The projection of settled points: pixels, depth and the flags."""
    k = view.intrinsics
    h, w = k.height_px, k.width_px
    z = cam[:, 2]
    front = z > 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(front, z, np.nan)
        uv = np.stack([k.cx + k.fx * cam[:, 0] / safe, k.cy + k.fy * cam[:, 1] / safe], axis=1)
    inside = front & (uv[:, 0] >= -0.5) & (uv[:, 0] <= w - 0.5) & (uv[:, 1] >= -0.5) & (uv[:, 1] <= h - 0.5)
    in_range = (z >= view.model.near_m) & (z <= view.model.far_m)
    return ShutterProjection(rows, view.row_times_s[rows], world, cam, uv, z, present, ~front, front & ~inside,
                      inside & ~in_range, view.model)
