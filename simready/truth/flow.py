"""Optical flow and scene displacement from a correspondence (SPEC §11).

Both derive from :class:`~simready.truth.correspondence.Correspondence`, never
from images:

* ``flow_px``: (du, dv) in pixels over the interval A → B (not divided by
  time), pinhole coordinates — the geometry of the depth, id and semantic
  passes: the target projection minus the source pixel centre.
  ``flow_px_distorted`` is the same motion in the RGB image's (distorted)
  coordinates; the two agree with the lens off. Files store the pinhole flow
  only; :func:`distorted_flow` derives the distorted one from it and the lens.
* ``scene_displacement_world_m``: how far the surface point itself moved in
  the world between its source and target sample times. Both positions are
  the same body point through the body's pose, so on static geometry they
  are one constant matrix applied to one point and the displacement is
  exactly zero, whatever the camera does.

:func:`flow_table` is a correspondence's truth table, with both. Tables
store samples sparsely (one row per visible source pixel, ``pixel`` =
v·W + u); :func:`dense` scatters a column back into an (H, W) image.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import ArrayLike, NDArray

from simready.raycast.geometry import SceneGeometry
from simready.sensors_hw.models import CameraModel
from simready.truth.correspondence.bodies import moving_pose_tables_of_bodies, static_bodies
from simready.truth.correspondence.correspond import Correspondence
from simready.truth.correspondence.projection import MAX_ROW_ITERATIONS, ShutterProjection
from simready.truth.correspondence.samples import Samples
from simready.truth.correspondence.view import distorted_uv
from simready.truth.correspondence.visibility import HIDDEN_MARGIN_M, HIDDEN_MARGIN_REL, recast_visible
from simready.truth.kernels.flow import flow_of_samples
from simready.truth.kernels.tables import flow_columns
from simready.truth.precision import FLOW_STEP_PX
from simready.truth.stored import FLAGS, HIDDEN, VALID, bool_column

__all__ = ["bool_column", "dense", "distorted_flow", "flow_px", "flow_px_distorted", "flow_table", "flow_table_of",
           "scene_displacement_world_m"]


def flow_px(corr: Correspondence) -> NDArray[np.float64]:
    """(M, 2) pinhole flow (du, dv) in pixels; NaN where the point is behind the target camera."""
    src = corr.source
    return corr.projection.uv - np.stack([src.u, src.v], axis=1).astype(np.float64)


def flow_px_distorted(corr: Correspondence) -> NDArray[np.float64]:
    """(M, 2) flow in the RGB image's distorted coordinates (equal to :func:`flow_px` with the lens off)."""
    src = corr.source
    start = distorted_uv(src.view.model, np.stack([src.u, src.v], axis=1).astype(np.float64))
    return corr.projection.uv_distorted - start


def distorted_flow(model: CameraModel, pixel: ArrayLike, flow_du_px: ArrayLike,
                   flow_dv_px: ArrayLike) -> NDArray[np.float64]:
    """(M, 2) the RGB image's flow from a flow table's stored pinhole flow and the camera's lens model.

    The distorted flow is not stored (it is the pinhole flow seen through the lens): the source pixel
    centre and its pinhole target ``pixel + flow`` are both distorted and subtracted, as
    :func:`flow_px_distorted` does from the correspondence. From the float32 pinhole flow the result
    differs from that by the flow's declared rounding (:mod:`simready.truth.precision`) through the lens.
    """
    pixel = np.asarray(pixel, np.int64)
    w = model.width_px
    start = np.stack([pixel % w, pixel // w], axis=1).astype(np.float64)
    end = start + np.stack([np.asarray(flow_du_px, np.float64), np.asarray(flow_dv_px, np.float64)], axis=1)
    return distorted_uv(model, end) - distorted_uv(model, start)


def scene_displacement_world_m(corr: Correspondence) -> NDArray[np.float64]:
    """(M, 3) world motion of each surface point between its source and target times, metres."""
    return corr.projection.point_world - corr.source.point_world


def flow_table(corr: Correspondence) -> pa.Table:
    """One row per source sample (``pixel`` = v·W + u of the source frame).

    Columns: ``flow_du_px, flow_dv_px`` (pinhole, at the declared step of
    :mod:`simready.truth.precision`; the target position is the pixel
    centre plus the flow; the RGB image's flow through a lens is derived
    from it, :func:`distorted_flow`, not stored), ``depth_target_m`` (z at
    the target), ``target_row`` (whose time samples the point there), ``disp_x_m, disp_y_m, disp_z_m`` (scene
    displacement, world), flags ``valid``, ``occluded`` (forward) or
    ``disoccluded`` (backward), ``out_of_frame``, ``behind_camera``,
    ``beyond_range``, ``absent`` (the body does not exist at the
    target), ``static``.
    """
    p = corr.projection
    src = corr.source
    # One compiled pass: quantized(flow_px(corr), FLOW_STEP_PX) and scene_displacement_world_m(corr) as float32.
    du, dv, dx, dy, dz = flow_columns(p.uv, src.u, src.v, p.point_world, src.point_world, FLOW_STEP_PX)
    cols: dict[str, Any] = {"pixel": src.pixel32, "flow_du_px": du, "flow_dv_px": dv}
    cols |= {
        "depth_target_m": p.depth_m.astype(np.float32), "target_row": p.row.astype(np.int16),
        "disp_x_m": dx, "disp_y_m": dy, "disp_z_m": dz,
        "valid": corr.visible, corr.hidden_name: corr.hidden,
        "out_of_frame": p.out_of_frame, "behind_camera": p.behind_camera, "beyond_range": p.beyond_range,
        "absent": ~p.present, "static": corr.static,
    }
    return pa.table(cols)


_SCRATCH = threading.local()


def _scratch(n: int) -> tuple[NDArray[np.float64], NDArray[np.int32], NDArray[np.int64], NDArray[np.float64],
                              NDArray[np.float64], NDArray[np.float64]]:
    """This thread's scratch for :func:`~simready.truth.kernels.flow.flow_of_samples` (optical-frame z, pixel cells,
    undecided indices and their world points, optical-frame points and pixels), at least ``n`` long, kept across
    calls: fresh frame-sized temporaries on every correspondence were page faults (their pages zeroed by the kernel)
    each time (the undecided points' rows are a few per cent of ``n``: only those pages are ever touched)."""
    held = getattr(_SCRATCH, "arrays", None)
    if held is None or len(held[1]) < n:
        held = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int64), np.empty((n, 3)), np.empty((n, 3)),
                np.empty((n, 2)))
        _SCRATCH.arrays = held
    z, cell, undecided, world, cam, uv = held
    return z[:n], cell[:n], undecided[:n], world[:n], cam[:n], uv[:n]


def flow_table_of(scene: SceneGeometry, source: Samples, target: Samples, direction: str, *,
                  ignore: Iterable[str] = (), dv_dt_pxps: NDArray[np.float64] | None = None,
                  dt_s: float = 0.0) -> tuple[pa.Table, dict[str, int]]:
    """``flow_table(correspond(scene, source, target, direction, row_guess=...))`` computed without the
    correspondence, as its file stores it (:func:`simready.truth.stored.stored`: no ``pixel``, the booleans one
    ``flags`` bit field): one compiled pass per source sample (:func:`simready.truth.kernels.flow.flow_of_samples`:
    the row iteration, pixels, flags, the target buffers' visibility and the table's columns), then only the
    points the buffers cannot decide re-cast (with the projection the pass settled for them). Bitwise that table
    as stored (:func:`~simready.truth.stored.expanded` with the source's pixels: bitwise that table); also returns
    the visibility counts (``in_view``, ``recast``) a table's metadata records.

    The row iteration starts at each source row moved by ``dv_dt_pxps · dt_s`` (the motion field's
    prediction; the source row without it), as the observation's correspondences do.
    """
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    view = target.view
    if source.view.camera != view.camera:
        raise ValueError("correspondence is between frames of the same camera")
    k = view.intrinsics
    body = np.asarray(source.body, np.intp)
    slot_of_body, tables, present_tab = moving_pose_tables_of_bodies(scene, view, body, source.bodies_seen(scene))
    dv_dt = np.zeros(len(body)) if dv_dt_pxps is None else np.asarray(dv_dt_pxps, np.float64)
    body_img, triangle_img, z_img = target.buffers
    du, dv, depth, row, dx, dy, dz, flags, undecided, in_view, und_world, und_cam, und_uv = \
        flow_of_samples(view.row_columns, slot_of_body, static_bodies(scene), tables, present_tab,
                        np.ascontiguousarray(source.point_body, np.float64),
                        np.ascontiguousarray(source.point_world, np.float64), source.u, source.v, dv_dt, float(dt_s),
                        k.cx, k.cy, k.fx, k.fy, k.width_px, k.height_px, view.model.near_m, view.model.far_m,
                        view.global_shutter, MAX_ROW_ITERATIONS, body, source.triangle, body_img, triangle_img, z_img,
                        HIDDEN_MARGIN_M, HIDDEN_MARGIN_REL, FLOW_STEP_PX, *_scratch(len(body)))
    # The points in view the buffers cannot decide, re-cast: their projection as the kernel settled it (copied out
    # of this thread's scratch; what project_body_points gives them, bit for bit).
    undecided = undecided.copy()
    if len(undecided):
        rows = row[undecided].astype(np.int64)
        cam = und_cam.copy()
        n_und = len(undecided)
        proj = ShutterProjection(rows, view.row_times_s[rows], und_world.copy(), cam, und_uv.copy(), cam[:, 2],
                                 np.ones(n_und, bool), np.zeros(n_und, bool), np.zeros(n_und, bool),
                                 np.zeros(n_und, bool), view.model)
        seen = recast_visible(scene, view, proj, ignore=ignore)
        flags[undecided] |= np.where(seen, np.uint8(VALID), np.uint8(HIDDEN))
    table = pa.table({
        "flow_du_px": du, "flow_dv_px": dv, "depth_target_m": depth, "target_row": row, "disp_x_m": dx,
        "disp_y_m": dy, "disp_z_m": dz, FLAGS: flags,
    })
    return table, {"in_view": int(in_view), "recast": len(undecided)}


def dense(pixel: ArrayLike, values: ArrayLike, height_px: int, width_px: int,
          fill: float = np.nan) -> NDArray[np.float64]:
    """Scatter per-sample values (M,) or (M, C) at flat pixels into an (H, W) or (H, W, C) array."""
    pixel = np.asarray(pixel, np.int64)
    values = np.asarray(values)
    shape = (height_px * width_px,) + values.shape[1:]
    out = np.full(shape, fill, dtype=np.result_type(values.dtype, np.float32) if np.isnan(fill) else values.dtype)
    out[pixel] = values
    return out.reshape((height_px, width_px) + values.shape[1:])
