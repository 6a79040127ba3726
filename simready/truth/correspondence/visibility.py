"""Whether a projected point is seen at the target frame.

* **By an exact re-cast** (:func:`recast_visible`): a ray from the target's camera origin (at the point's row
  time) toward the point, through the same scene with the same carrier ignored, refined in float64: the point
  is visible when nothing lies nearer than ``|P − O| − VISIBILITY_TOL_M``.
* **Or from the target's own buffers** (:func:`buffer_visible`, when the target's samples are given, as the
  observation does): the four pixel centres of the target around the point's projection decide where they
  agree — all on the point's own triangle: visible; all on one other triangle nearer by a margin: hidden
  (:func:`simready.truth.kernels.visibility.buffer_visibility` says why that is the re-cast's answer) — and only
  the rest (edges, borders: ~2 % of a full-resolution frame) are re-cast. The one difference from re-casting everything:
  an occluder that passes between four adjacent pixel rays of the target without meeting any of them (thinner
  than a pixel there) does not hide a point on a triangle all four see.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from simready.sensors_hw.camera import projection_spans
from simready.raycast.geometry import SceneGeometry
from simready.truth.correspondence.projection import ShutterProjection
from simready.truth.correspondence.samples import Samples
from simready.truth.correspondence.view import FrameView
from simready.truth.kernels.visibility import UNDECIDED, VISIBLE, buffer_visibility

#: A surface nearer than the point by less than this does not hide it (metres; float64 re-cast).
VISIBILITY_TOL_M = 1e-6
#: The buffers call a point hidden only where the occluder is nearer by more than this at all four pixel
#: centres around it (metres, plus this fraction of the depth): slack for the rows' slightly different
#: camera origins and times under a rolling shutter (a row is tens of microseconds).
HIDDEN_MARGIN_M = 1e-2
HIDDEN_MARGIN_REL = 1e-3


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


def buffer_visible(scene: SceneGeometry, source: Samples, target: Samples, proj: ShutterProjection, *,
                   ignore: Iterable[str] = ()) -> tuple[NDArray[np.bool_], int]:
    """Visibility at the target from the target frame's own identity and depth buffers
    (:func:`simready.truth.kernels.visibility.buffer_visibility`), with the exact re-cast
    (:func:`recast_visible`) only for the points the buffers cannot decide; and how many those were."""
    k = target.view.intrinsics
    body_img, triangle_img, z_img = target.buffers
    state = buffer_visibility(proj.uv, proj.depth_m, proj.in_view, source.body, source.triangle, body_img,
                              triangle_img, z_img, k.width_px, k.height_px, HIDDEN_MARGIN_M, HIDDEN_MARGIN_REL)
    undecided = state == UNDECIDED
    visible = state == VISIBLE
    visible |= recast_visible(scene, target.view, proj, ignore=ignore, only=undecided)
    return visible, int(np.count_nonzero(undecided & proj.in_view))
