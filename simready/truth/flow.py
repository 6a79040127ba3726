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

from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import ArrayLike, NDArray

from simready.sensors_hw.models import CameraModel
from simready.truth.correspondence import Correspondence, distorted_uv
from simready.truth.kernels import flow_columns
from simready.truth.precision import FLOW_STEP_PX


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
    cols: dict[str, Any] = {"pixel": src.pixel.astype(np.int32), "flow_du_px": du, "flow_dv_px": dv}
    cols |= {
        "depth_target_m": p.depth_m.astype(np.float32), "target_row": p.row.astype(np.int16),
        "disp_x_m": dx, "disp_y_m": dy, "disp_z_m": dz,
        "valid": corr.visible, corr.hidden_name: corr.hidden,
        "out_of_frame": p.out_of_frame, "behind_camera": p.behind_camera, "beyond_range": p.beyond_range,
        "absent": ~p.present, "static": corr.static,
    }
    return pa.table(cols)


def dense(pixel: ArrayLike, values: ArrayLike, height_px: int, width_px: int,
          fill: float = np.nan) -> NDArray[np.float64]:
    """Scatter per-sample values (M,) or (M, C) at flat pixels into an (H, W) or (H, W, C) array."""
    pixel = np.asarray(pixel, np.int64)
    values = np.asarray(values)
    shape = (height_px * width_px,) + values.shape[1:]
    out = np.full(shape, fill, dtype=np.result_type(values.dtype, np.float32) if np.isnan(fill) else values.dtype)
    out[pixel] = values
    return out.reshape((height_px, width_px) + values.shape[1:])
