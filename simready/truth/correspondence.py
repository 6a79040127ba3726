"""Surface identity and frame-to-frame correspondence for one camera (SPEC §11).

Everything here is computed from the world state through the one geometric
authority (:class:`~simready.raycast.geometry.SceneGeometry`), never from
images:

* **Surface identity** of a visible sample (a pixel of frame A): owner
  entity, geometry hash, element, triangle index (source order) and float64
  barycentrics — from the camera's own primary-ray hits, refined in float64.
* **Where that surface point is at B**: the point is fixed in its body
  (``p_body`` = the barycentric combination of the body-frame triangle), so
  at any time it is ``T_world_body(t) · p_body``. For a static body the pose
  is one constant matrix, so the world point at B is bitwise the world
  point at A and the scene displacement is exactly zero.
* **Projection into B with a rolling shutter**: the row that sees the point
  depends on where it projects, and the projection on the row's time (the
  camera and the body both move). Solved by fixed-point iteration on the row
  index (start at the middle row; project with that row's camera pose and
  the body pose at that row's time; move to the row it lands on; repeat
  until the row stops changing). The contraction factor is the image speed
  times the line time (≪ 1), so 2–3 iterations settle it. A global shutter
  needs one.
* **Visibility at B by an exact re-cast**: a ray from B's camera origin (at
  the point's row time) toward the point, through the same scene with the
  same carrier ignored, refined in float64: the point is visible when
  nothing lies nearer than ``|P − O| − VISIBILITY_TOL_M``.
* **Or from B's own buffers** (when B's samples are given, as the observation
  does): the four pixel centres of B around the point's projection decide
  where they agree — all on the point's own triangle: visible; all on one
  other triangle nearer by a margin: hidden
  (:func:`simready.truth.kernels.buffer_visibility` says why that is the
  re-cast's answer) — and only the rest (edges, borders: ~2 % of a
  full-resolution frame) are re-cast. The one difference from re-casting
  everything: an occluder that passes between four adjacent pixel rays of B
  without meeting any of them (thinner than a pixel there) does not hide a
  point on a triangle all four see.

Pixel conventions as the camera (:mod:`simready.sensors_hw.camera`): optical
frame x right, y down, z forward; pixel centres at integers; depth, id and
the pinhole coordinates ``uv`` undistorted; ``uv_distorted`` are the RGB
image's coordinates (Brown k1, k2; equal to ``uv`` with the lens off).
Rolling-shutter row times refer to pinhole rows.

Direction: :func:`correspond` maps the visible samples of a *source* frame
into a *target* frame. The forward product is ``correspond(A → B)`` and its
hidden flag is ``occluded``; the backward product is computed separately as
``correspond(B → A)`` from B's own samples, and its hidden flag is named
``disoccluded`` (visible at B, hidden at A: revealed in between). Neither is
ever obtained by negating the other.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from simready.artifacts.records import Pinhole
from simready.sensors_hw.camera import (FramePasses, camera_poses, distort_normalized, pinhole, pixel_rays,
                                        projection_spans, row_times)
from simready.sensors_hw.models import CameraModel, Rig
from simready.raycast.geometry import Hits, SceneGeometry
from simready.truth.precision import BARYCENTRIC_STEP
from simready.truth.kernels import (UNDECIDED, VISIBLE, buffer_visibility, pixels_and_flags, quantized32,
                                    settle_rows, surface_columns, surface_samples)

#: A surface nearer than the point by less than this does not hide it (metres; float64 re-cast).
VISIBILITY_TOL_M = 1e-6
#: The buffers call a point hidden only where the occluder is nearer by more than this at all four pixel
#: centres around it (metres, plus this fraction of the depth): slack for the rows' slightly different
#: camera origins and times under a rolling shutter (a row is tens of microseconds).
HIDDEN_MARGIN_M = 1e-2
HIDDEN_MARGIN_REL = 1e-3
#: Rolling-shutter row iterations (the row settles in 2–3; the cap only bounds pathological motion).
MAX_ROW_ITERATIONS = 8


@dataclass(frozen=True)
class FrameView:
    """When and from where one camera frame samples the world.

    Attributes:
        camera: sensor name; model: its camera model; tick: the camera's own frame number.
        t0_s: row 0's sample time.
        row_times_s: (H,) each row's sample time.
        T_world_camera: (H, 4, 4) optical-frame pose per row.
    """

    camera: str
    model: CameraModel
    tick: int
    t0_s: float
    row_times_s: NDArray[np.float64]
    T_world_camera: NDArray[np.float64]

    @classmethod
    def of(cls, rig: Rig, camera: str, t0_s: float, tick: int = 0) -> "FrameView":
        model = rig.sensors[camera]
        return cls(camera, model, tick, float(t0_s), row_times(model, t0_s), camera_poses(rig, camera, t0_s))

    @classmethod
    def of_frame(cls, frame: FramePasses, model: CameraModel, tick: int) -> "FrameView":
        return cls(frame.camera, model, tick, frame.t0_s, frame.sample_times_s, frame.T_world_camera)

    @property
    def intrinsics(self) -> Pinhole:
        return pinhole(self.model)

    @property
    def global_shutter(self) -> bool:
        return self.model.shutter == "global" or self.model.line_time_s == 0.0

    @cached_property
    def row_table(self) -> NDArray[np.float64]:
        """(H, 12) per row: camera-to-world rotation row-major (0:9), optical centre (9:12) — one gather per point."""
        return np.ascontiguousarray(pose_rows(self.T_world_camera))

    @cached_property
    def row_columns(self) -> NDArray[np.float64]:
        """(12, H) :attr:`row_table` by column: gathering one short column per entry for N points is
        several times faster than gathering N rows of 12 (and the products then read contiguous arrays)."""
        return np.ascontiguousarray(self.row_table.T)


def distorted_uv(model: CameraModel, uv: NDArray[np.float64]) -> NDArray[np.float64]:
    """Pinhole pixel coordinates (N, 2) → the RGB image's (Brown distortion; identity with the lens off)."""
    if model.distortion_k1 == 0.0 and model.distortion_k2 == 0.0:
        return uv.copy()
    k = pinhole(model)
    xy = np.stack([(uv[:, 0] - k.cx) / k.fx, (uv[:, 1] - k.cy) / k.fy], axis=1)
    xy_d = distort_normalized(xy, model.distortion_k1, model.distortion_k2)
    return np.stack([k.cx + k.fx * xy_d[:, 0], k.cy + k.fy * xy_d[:, 1]], axis=1)


# --- body points in the world -------------------------------------------------------


_STATIC: "weakref.WeakKeyDictionary[SceneGeometry, tuple[NDArray[np.bool_], NDArray[np.float64]]]" = \
    weakref.WeakKeyDictionary()


def _static_tables(scene: SceneGeometry) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """(B,) whether each body's track never moves, and (B, 12) its constant pose (rotation row-major,
    translation; NaN for moving bodies) — cached per scene."""
    if scene not in _STATIC:
        static = np.array([b.track.is_static for b in scene.bodies], bool)
        table = np.full((len(scene.bodies), 12), np.nan)
        for i in np.flatnonzero(static):
            track = scene.bodies[i].track
            table[i] = pose_rows(track.pose_at(track.t_start)[None])[0]
        _STATIC[scene] = (static, table)
    return _STATIC[scene]


def static_bodies(scene: SceneGeometry) -> NDArray[np.bool_]:
    """(B,) whether each body's track never moves (cached per scene)."""
    return _static_tables(scene)[0]


def pose_rows(T: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, 4, 4) poses → (N, 12): rotation row-major (0:9), translation (9:12)."""
    return np.concatenate([T[:, :3, :3].reshape(-1, 9), T[:, :3, 3]], axis=1)


def apply_pose_rows(g: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``R·p + t`` per row from gathered :func:`pose_rows` entries, elementwise only, so a row's
    result never depends on which other rows share the batch (a BLAS kernel may sum in another
    order): that is what makes a static point at B bitwise the point at A."""
    out = np.empty((len(p), 3))
    for i in range(3):
        out[:, i] = p[:, 0] * g[:, 3 * i] + p[:, 1] * g[:, 3 * i + 1] + p[:, 2] * g[:, 3 * i + 2] + g[:, 9 + i]
    return out


def static_world_points(scene: SceneGeometry, body: NDArray[np.intp],
                        p_body: NDArray[np.float64]) -> NDArray[np.float64]:
    """World positions of body points on static bodies (one constant pose each; time plays no part)."""
    return apply_pose_rows(np.take(_static_tables(scene)[1], body, axis=0), p_body)


def world_points_at(scene: SceneGeometry, body: NDArray[np.intp], p_body: NDArray[np.float64],
                    times_s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """World positions (N, 3) of body points at their own times, and whether their body is present then."""
    out = np.empty((len(body), 3))
    present = np.ones(len(body), bool)
    static = static_bodies(scene)[body]
    out[static] = static_world_points(scene, body[static], p_body[static])
    moving = np.flatnonzero(~static)
    for b in np.unique(body[moving]):
        sel = moving[body[moving] == b]
        ut, inv = np.unique(times_s[sel], return_inverse=True)
        smp = scene.bodies[int(b)].track.sample(ut, clamp=True)
        out[sel] = apply_pose_rows(pose_rows(smp.matrices())[inv], p_body[sel])
        present[sel] = smp.present[inv]
    return out, present


# --- rolling-shutter projection --------------------------------------------------------


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


def moving_pose_tables(scene: SceneGeometry, view: FrameView, body: NDArray[np.intp]
                       ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """The compiled row iteration's pose tables: (N,) each point's moving-body slot (−1 on static bodies),
    (S, H, 12) each moving body's pose (:func:`pose_rows`) at every row time of the frame and (S, H) its presence."""
    slot_of_body, tables, present_tab = moving_pose_tables_of_bodies(scene, view, body)
    return slot_of_body[body], tables, present_tab


def moving_pose_tables_of_bodies(scene: SceneGeometry, view: FrameView, body: NDArray[np.intp],
                                 seen: NDArray[np.bool_] | None = None
                                 ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """:func:`moving_pose_tables` with the slots per body of the scene, (B,), not per point (a compiled pass
    reads ``slot_of_body[body[i]]`` itself). ``seen``: (B,) which bodies ``body`` holds, when the caller
    knows (:meth:`Samples.bodies_seen`); else found here."""
    if seen is None:
        seen = np.zeros(len(scene.bodies), bool)
        seen[body] = True
    moving_bodies = np.flatnonzero(seen & ~static_bodies(scene))  # np.unique(body[~static]), without the sort
    slot_of_body = np.full(len(scene.bodies), -1, np.int64)
    slot_of_body[moving_bodies] = np.arange(len(moving_bodies))
    h = len(view.row_times_s)
    tables = np.zeros((len(moving_bodies), h, 12))
    present_tab = np.zeros((len(moving_bodies), h), bool)
    # Each moving body's pose at every row time of this frame, sampled once per frame (the frame is the target of
    # two correspondences, its re-casts and the track corners): kept with the view.
    cache: dict[int, tuple[NDArray[np.float64], NDArray[np.bool_]]] = \
        view.__dict__.setdefault("_row_poses", weakref.WeakKeyDictionary()).setdefault(scene, {})
    for s, b in enumerate(moving_bodies.tolist()):
        if b not in cache:
            smp = scene.bodies[b].track.sample(view.row_times_s, clamp=True)
            cache[b] = (pose_rows(smp.matrices()), smp.present)
        tables[s], present_tab[s] = cache[b]
    return slot_of_body, tables, present_tab


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

    The row iteration runs compiled, point by point (:func:`simready.truth.kernels.settle_rows`),
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


def recast_visible(scene: SceneGeometry, view: FrameView, proj: ShutterProjection, *, ignore: Iterable[str] = (),
                   only: NDArray[np.bool_] | None = None) -> NDArray[np.bool_]:
    """Whether each point in view is visible from its row's camera origin (exact float64 re-cast).

    ``only`` restricts the re-cast to those points (the others read False).

    Rays start at the near plane along their direction (as the camera's
    own rays do) and end just past the point; the point is visible when no
    surface lies nearer than ``|P − O| − VISIBILITY_TOL_M``. A ray from the
    row's optical centre through P is that row's pixel ray through P's
    projection, so the camera's own projection prefilter (boxes projected
    row by row, ±1 px) bounds which rays can meet a moving body.
    """
    visible = np.zeros(len(proj.row), bool)
    idx = np.flatnonzero(proj.in_view if only is None else proj.in_view & only)
    if len(idx) == 0:
        return visible
    k = view.intrinsics
    rows, cols = proj.row[idx], view.row_columns
    origin = np.take(view.row_table[:, 9:12], rows, axis=0)
    ray = proj.point_world[idx] - origin
    dist = np.sqrt(np.einsum("ni,ni->n", ray, ray))
    d = ray / dist[:, None]
    cos_axis = d[:, 0] * np.take(cols[2], rows) + d[:, 1] * np.take(cols[5], rows) + d[:, 2] * np.take(cols[8], rows)
    # The prefilter reasons about the pixel P projects to; a point whose row has not settled there
    # (the iteration cap) is always kept. Under a global shutter every row has the same pose.
    u_px = np.clip(np.rint(proj.uv[idx, 0]), 0, k.width_px - 1).astype(np.int64)
    v_px = np.clip(np.rint(proj.uv[idx, 1]), 0, k.height_px - 1).astype(np.int64)
    unsettled = np.zeros(len(idx), bool) if view.global_shutter else v_px != proj.row[idx]
    spans_of_box = projection_spans(view.model, view.T_world_camera)

    def prefilter(lo: NDArray, hi: NDArray) -> NDArray[np.intp]:
        # projection_prefilter's pixels, tested per point against its row's span (no frame-sized set)
        keep, c0, c1 = spans_of_box(lo, hi)
        return np.flatnonzero((keep[v_px] & (u_px >= c0[v_px]) & (u_px <= c1[v_px])) | unsettled)

    hits = scene.cast(origin, d, proj.time_s[idx], dist + 1e-3, view.model.near_m / cos_axis, ignore=ignore,
                      normalized=True, prefilter=prefilter)
    hits.refine(barycentrics=False)
    visible[idx] = ~hits.hit | (hits.distance_m >= dist - VISIBILITY_TOL_M)
    return visible


# --- surface identity and correspondence -----------------------------------------------


@dataclass
class Samples:
    """The visible samples (hit pixels) of one frame, with surface identity.

    Attributes (M rows, pixel order):
        pixel: (M,) int64 flat index v·W + u; u, v: (M,) int pixel (centre) coordinates.
        body: (M,) int body index; triangle: (M,) int triangle in source order.
        barycentric_uv: (M, 2) float64 weights of the triangle's 2nd and 3rd vertex.
        point_body: (M, 3) float64 the surface point in its body frame, on moving bodies (NaN on
            static ones, whose world point is all that is needed).
        time_s: (M,) the pixel's row time.
        point_world: (M, 3) the hit point at that time (float64, refined).
        point_camera: (M, 3) in that row's optical frame (pixel ray × refined distance).
    """

    view: FrameView
    pixel: NDArray[np.int64]
    u: NDArray[np.int64]
    v: NDArray[np.int64]
    body: NDArray[np.intp]
    triangle: NDArray[np.int64]
    barycentric_uv: NDArray[np.float64]
    point_body: NDArray[np.float64]
    time_s: NDArray[np.float64]
    point_world: NDArray[np.float64]
    point_camera: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.pixel)

    @property
    def depth_m(self) -> NDArray[np.float64]:
        return self.point_camera[:, 2]

    @cached_property
    def pixel32(self) -> NDArray[np.int32]:
        """``pixel`` as the tables store it (int32; every table of the frame's samples shares it)."""
        return self.pixel.astype(np.int32)

    def moving_indices(self, scene: SceneGeometry) -> NDArray[np.int64]:
        """Ascending indices of the samples on moving bodies of ``scene`` (:meth:`of_hits` found them in its pass)."""
        cached = self.__dict__.get("_moving")
        if cached is not None and cached[0]() is scene:
            return cached[1]
        return np.flatnonzero(~static_bodies(scene)[self.body])

    def bodies_seen(self, scene: SceneGeometry) -> NDArray[np.bool_]:
        """(B,) whether any sample is on each body of ``scene`` (:meth:`of_hits` marked them in its pass)."""
        cached = self.__dict__.get("_seen")
        if cached is not None and cached[0]() is scene:
            return cached[1]
        seen = np.zeros(len(scene.bodies), bool)
        seen[self.body] = True
        return seen

    @cached_property
    def buffers(self) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.float64]]:
        """The frame's per-pixel (H·W,) body and triangle (−1 where nothing is hit) and z-depth (+inf there)."""
        k = self.view.intrinsics
        n = k.width_px * k.height_px
        body, triangle, z = np.full(n, -1, np.int32), np.full(n, -1, np.int32), np.full(n, np.inf)
        body[self.pixel] = self.body
        triangle[self.pixel] = self.triangle
        z[self.pixel] = self.depth_m
        return body, triangle, z

    @classmethod
    def of_hits(cls, scene: SceneGeometry, view: FrameView, hits: Hits) -> "Samples":
        """Visible samples of a frame from its primary-ray hits, refined in float64 here: the distances
        once (the depth pass's refinement when the frame has one), then the barycentrics, points and the
        frame's identity and depth buffers of every static hit in one compiled pass
        (:func:`simready.truth.kernels.surface_samples`); the few hits on moving bodies through
        :meth:`Hits.refine`. Bitwise :meth:`of_hits_numpy`; ``hits`` itself is left unrefined in
        barycentrics."""
        hits.refine(barycentrics=False)
        if hits._plane_ok is None:  # refined by other means: the reference path
            return cls.of_hits_numpy(scene, view, hits)
        k = view.intrinsics
        pix = hits.hit_index.astype(np.int64, copy=False)
        unit = hits._origin64 is not None
        o_in, d_in = (hits._origin64, hits._dir64) if unit else (hits._origin32, hits._dir32)
        tab = scene._world_tris
        z_img = np.full(k.width_px * k.height_px, np.inf)
        compact_of_body, _, index_of_body = _surface_dictionaries(scene)
        bary, world, cam, u, v, tri, t, body, moving, pix32, seen, columns = surface_samples(
            pix, hits.body_index, static_bodies(scene), hits.rows, o_in, d_in, unit, hits.distance_m, hits._plane_ok,
            hits._u32, hits._v32, tab.v0, tab.dual1, tab.dual2, pixel_rays(view.model).reshape(-1, 3), hits.time_s,
            hits.triangle_index, k.width_px, z_img, compact_of_body, index_of_body, BARYCENTRIC_STEP)
        p_body = np.full((len(pix), 3), np.nan)
        if len(moving):
            sub = hits.take(pix[moving]).refine()
            bary[moving] = sub.barycentric_uv
            p_body[moving] = sub.point_body
            _, _, _, bu, bv, _ = columns  # the moving samples' rounded barycentrics (NaN from the pass)
            bu[moving] = quantized32(bary[moving, 0], BARYCENTRIC_STEP)
            bv[moving] = quantized32(bary[moving, 1], BARYCENTRIC_STEP)
        out = cls(view, pix, u, v, body, tri, bary, p_body, t, world, cam)
        # The identity buffers are the hits' own (−1 where nothing is hit); the depth one was filled above.
        out.__dict__["buffers"] = (hits.body_index, hits.triangle_index, z_img)
        # From the same pass: the int32 pixels, which samples are on moving bodies (the motion field's) and the
        # surface table's columns (table() takes them for this scene).
        out.__dict__["pixel32"] = pix32
        out.__dict__["_moving"] = (weakref.ref(scene), moving)
        out.__dict__["_seen"] = (weakref.ref(scene), seen)
        out.__dict__["_surface_columns"] = (weakref.ref(scene), columns)
        return out

    @classmethod
    def of_hits_numpy(cls, scene: SceneGeometry, view: FrameView, hits: Hits) -> "Samples":
        """:meth:`of_hits` as numpy passes over the refined hits (refines ``hits`` in place): its bit reference."""
        hits.refine()
        w = view.intrinsics.width_px
        pix = hits.hit_index.astype(np.int64)
        body = hits.body_index[pix].astype(np.intp)
        moving = np.flatnonzero(~static_bodies(scene)[body])
        p_body = np.full((len(pix), 3), np.nan)
        p_body[moving] = hits.take(pix[moving]).point_body
        rays = pixel_rays(view.model).reshape(-1, 3)
        cam = np.take(rays, pix, axis=0) * hits.distance_m[pix, None]
        return cls(view, pix, pix % w, pix // w, body, hits.triangle_index[pix].astype(np.int64),
                   hits.barycentric_uv[pix], p_body, hits.time_s[pix], hits.point_world_of(pix), cam)

    def table(self, scene: SceneGeometry) -> pa.Table:
        """Surface identity per visible sample (SPEC §11), one row per hit pixel.

        Columns: ``pixel`` (v·W + u), ``compact_id``, ``entity``,
        ``geometry_hash``, ``element``, ``triangle`` (source order),
        ``bary_u``, ``bary_v`` (float32 at the precision :mod:`simready.truth.precision` declares), ``depth_m``
        (float32 z-depth). The sample time is the pixel row's (``t0 + v·line_time``).
        """
        # The columns of one compiled pass over the samples (of_hits' own, else surface_columns): bitwise the
        # gathers, casts and precision.quantized one by one (table_numpy).
        compact_of_body, distinct, index_of_body = _surface_dictionaries(scene)
        cached = self.__dict__.pop("_surface_columns", None)  # released once tabled
        if cached is not None and cached[0]() is scene:
            compact, index, tri, bu, bv, depth = cached[1]
        else:
            compact, index, tri, bu, bv, depth = surface_columns(
                self.body, self.triangle, self.barycentric_uv, self.point_camera, compact_of_body, index_of_body,
                BARYCENTRIC_STEP)
        strings = {name: pa.DictionaryArray.from_arrays(pa.array(index[k]), pa.array(distinct[k], pa.string()))
                   for k, name in enumerate(("entity", "geometry_hash", "element"))}
        return pa.table({"pixel": self.pixel32, "compact_id": compact, **strings, "triangle": tri, "bary_u": bu,
                         "bary_v": bv, "depth_m": depth})

    def table_numpy(self, scene: SceneGeometry) -> pa.Table:
        """:meth:`table` column by column in numpy: its bit reference."""
        return pa.table({
            "pixel": self.pixel32,
            "compact_id": scene.compact_id_of_body[self.body],
            "entity": _dictionary(self.body, scene.entity_ids_of_body),
            "geometry_hash": _dictionary(self.body, [b.geometry_hash for b in scene.bodies]),
            "element": _dictionary(self.body, [b.element for b in scene.bodies]),
            "triangle": self.triangle.astype(np.int32),
            "bary_u": quantized32(self.barycentric_uv[:, 0], BARYCENTRIC_STEP),  # precision.quantized, compiled
            "bary_v": quantized32(self.barycentric_uv[:, 1], BARYCENTRIC_STEP),
            "depth_m": self.depth_m.astype(np.float32),
        })


_DICTIONARIES: "weakref.WeakKeyDictionary[SceneGeometry, tuple[NDArray, list[list[str]], NDArray[np.int32]]]" = \
    weakref.WeakKeyDictionary()


def _surface_dictionaries(scene: SceneGeometry) -> tuple[NDArray, list[list[str]], NDArray[np.int32]]:
    """The surface table's per-body facts, cached per scene: the compact id per body, the distinct values of the
    string columns (``entity``, ``geometry_hash``, ``element``; sorted each) and (3, B) each body's index among them."""
    if scene not in _DICTIONARIES:
        names = (scene.entity_ids_of_body, [b.geometry_hash for b in scene.bodies], [b.element for b in scene.bodies])
        distinct, index_of_body = zip(*(_distinct(v) for v in names))
        _DICTIONARIES[scene] = (scene.compact_id_of_body, list(distinct), np.stack(index_of_body))
    return _DICTIONARIES[scene]


def _distinct(values: list[str]) -> tuple[list[str], NDArray[np.int32]]:
    """A per-body string's distinct values, sorted, and each body's index among them (a dictionary column's
    dictionary and the indices to gather; no repeats, or the Parquet bytes would depend on the writer's hashing)."""
    distinct, index_of_body = np.unique(np.array(values, dtype=object), return_inverse=True)
    return distinct.tolist(), index_of_body.astype(np.int32)


def _dictionary(body: NDArray[np.intp], values: list[str]) -> pa.DictionaryArray:
    """A per-body string as a dictionary column (one copy of each distinct string per file; the
    dictionary must hold no repeats, or the Parquet bytes would depend on the writer's hashing)."""
    distinct, index_of_body = _distinct(values)
    return pa.DictionaryArray.from_arrays(pa.array(np.take(index_of_body, body)), pa.array(distinct, pa.string()))


@dataclass
class Correspondence:
    """Where the visible samples of a source frame are in a target frame.

    Attributes (M rows, one per source sample, as ``source``):
        source: the samples; target: the target frame's view; direction: ``forward`` | ``backward``.
        projection: the points at the target (rows, times, pixels, depth, flags).
        visible: seen at the target (the ``valid`` flag).
        static: the owning body is static.
        recast: how many points in view an exact re-cast decided.
    """

    source: Samples
    target: FrameView
    direction: str
    projection: ShutterProjection
    visible: NDArray[np.bool_]
    static: NDArray[np.bool_]
    #: How many points in view were decided by an exact re-cast (all of them without the target's buffers).
    recast: int = 0

    @property
    def valid(self) -> NDArray[np.bool_]:
        return self.visible

    @property
    def hidden(self) -> NDArray[np.bool_]:
        """In view at the target but behind another surface (``occluded`` forward, ``disoccluded`` backward)."""
        return self.projection.in_view & ~self.visible

    @property
    def hidden_name(self) -> str:
        return "occluded" if self.direction == "forward" else "disoccluded"


def buffer_visible(scene: SceneGeometry, source: "Samples", target: "Samples", proj: ShutterProjection, *,
                   ignore: Iterable[str] = ()) -> tuple[NDArray[np.bool_], int]:
    """Visibility at the target from the target frame's own identity and depth buffers
    (:func:`simready.truth.kernels.buffer_visibility`), with the exact re-cast
    (:func:`recast_visible`) only for the points the buffers cannot decide; and how many those were."""
    k = target.view.intrinsics
    body_img, triangle_img, z_img = target.buffers
    state = buffer_visibility(proj.uv, proj.depth_m, proj.in_view, source.body, source.triangle, body_img,
                              triangle_img, z_img, k.width_px, k.height_px, HIDDEN_MARGIN_M, HIDDEN_MARGIN_REL)
    undecided = state == UNDECIDED
    visible = state == VISIBLE
    visible |= recast_visible(scene, target.view, proj, ignore=ignore, only=undecided)
    return visible, int(np.count_nonzero(undecided & proj.in_view))


def correspond(scene: SceneGeometry, source: Samples, target: "FrameView | Samples", direction: str, *,
               ignore: Iterable[str] = (), row_guess: NDArray[np.int64] | None = None) -> Correspondence:
    """Map a frame's visible samples into another frame of the same camera (module doc).

    ``target`` is the target frame's view (visibility by an exact re-cast of every point in view) or
    its samples (visibility from its own buffers, re-casting only what they cannot decide:
    :func:`buffer_visible`). ``row_guess`` starts the rolling-shutter row iteration (default: the
    source rows; the motion field's prediction saves a pass); it does not change the result.
    """
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    view = target.view if isinstance(target, Samples) else target
    if source.view.camera != view.camera:
        raise ValueError("correspondence is between frames of the same camera")
    proj = project_body_points(scene, view, source.body, source.point_body, world_static=source.point_world,
                               row_guess=source.v if row_guess is None else row_guess)
    if isinstance(target, Samples):
        visible, recast = buffer_visible(scene, source, target, proj, ignore=ignore)
    else:
        visible = recast_visible(scene, view, proj, ignore=ignore)
        recast = int(np.count_nonzero(proj.in_view))
    return Correspondence(source, view, direction, proj, visible, static_bodies(scene)[source.body], recast)
