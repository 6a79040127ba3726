"""One camera frame: its primary rays cast at each row's time, and the depth / id / semantic / RGB passes made from
the hits (z-depth here; shading and the RGB finish in their own modules).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from simready.artifacts.records import Pinhole
from simready.common.scratch import work_array
from simready.raycast.geometry import SceneGeometry
from simready.raycast.hits import Hits
from simready.raycast.kernels import sensor_rays_into
from simready.sensors_hw import camera_kernels as kern
from simready.sensors_hw.camera.finish import encode_rgb
from simready.sensors_hw.camera.lens import pinhole, row_times
from simready.sensors_hw.camera.lighting import Lighting
from simready.sensors_hw.camera.prefilters import projection_candidates
from simready.sensors_hw.camera.primary_rays import camera_poses, ray_tables
from simready.sensors_hw.camera.shading import shade_pass
from simready.sensors_hw.models import CameraModel, Rig


PASSES = ("depth", "id", "semantic", "rgb")


@dataclass
class FramePasses:
    """One camera frame.

    Attributes:
        camera: sensor name.
        t0_s: frame start time (row 0's sample time).
        sample_times_s: (H,) each row's sample time.
        T_world_camera: (H, 4, 4) optical-frame pose per row.
        intrinsics: pinhole intrinsics (all passes but distorted RGB).
        depth: (H, W) float32 z-depth, +inf where nothing is seen (or None).
        id: (H, W) uint32 compact ids, 0 = nothing (or None).
        semantic: (H, W) uint16 class ids, 0 = nothing, 65535 = unknown (or None).
        rgb: (H, W, 3) uint8 sRGB (or None).
        hits: the primary-ray hits, row-major (H·W): surface identity for labels.
    """

    camera: str
    t0_s: float
    sample_times_s: NDArray[np.float64]
    T_world_camera: NDArray[np.float64]
    intrinsics: Pinhole
    depth: NDArray[np.float32] | None
    id: NDArray[np.uint32] | None
    semantic: NDArray[np.uint16] | None
    rgb: NDArray[np.uint8] | None
    hits: Hits


def render_frame(scene: SceneGeometry, rig: Rig, camera_name: str, t0_s: float,
                 passes: Iterable[str] = ("depth", "id", "semantic"), *, lighting: Lighting | None = None,
                 ignore: Iterable[str] = ()) -> FramePasses:
    """Render the requested passes of one frame starting at ``t0_s``.

    ``ignore`` names entities this camera cannot see (its own carrier body).
    """
    wanted = set(passes)
    unknown = wanted - set(PASSES)
    if unknown:
        raise ValueError(f"unknown passes {sorted(unknown)}; expected a subset of {PASSES}")
    model = rig.sensors[camera_name]
    if not isinstance(model, CameraModel):
        raise TypeError(f"{camera_name} is not a camera")
    h, w = model.height_px, model.width_px
    times = row_times(model, t0_s)
    T_rows = camera_poses(rig, camera_name, t0_s)
    pixels, _, near, far = ray_tables(model)
    # Origins, directions, per-ray times and the near plane's segment starts in one compiled pass; the hits
    # keep the first three, the starts only feed the cast (a work array, not faulted in afresh each frame).
    n = h * w
    origins, dirs, ray_t = np.empty((n, 3), np.float32), np.empty((n, 3), np.float32), np.empty(n)
    starts = work_array("camera.starts", (n, 3), np.float32)
    sensor_rays_into(pixels, T_rows, times, near, origins, dirs, ray_t, starts)
    hits = scene.cast(origins, dirs, ray_t, far, near, ignore=ignore, normalized=True,
                      prefilter=projection_candidates(model, T_rows), starts=starts,
                      window=(float(times.min()), float(times.max())))  # the rows' times are the rays'
    # Rows, ids, classes (and the albedo of textured looks' scenes; others' radiance reads it per body) in one pass,
    # not a gather each.
    hits.fill_tables(albedo="rgb" in wanted and bool(scene._looks))
    depth = None
    if "depth" in wanted:
        depth = refined_z_depth(hits, T_rows).reshape(h, w)
    ids = hits.compact_id.reshape(h, w) if "id" in wanted else None
    semantic = hits.semantic.reshape(h, w) if "semantic" in wanted else None
    rgb = None
    if "rgb" in wanted:
        # Shading, exposure, tone map and vignette in one compiled pass, then resampling and encoding in another
        # (finish_rgb's steps).
        toned = shade_pass(scene, rig, model, hits, lighting or Lighting(), T_rows, ignore, tone=True)
        rgb = encode_rgb(model, toned).reshape(h, w, 3)
    return FramePasses(camera_name, float(t0_s), times, T_rows, pinhole(model), depth, ids, semantic, rgb, hits)


def refined_z_depth(hits: Hits, T_rows: NDArray[np.float64]) -> NDArray[np.float32]:
    """The depth pass of a frame's own fresh cast (its distances refined in place: no view of them handed out):
    ``hits.refine(barycentrics=False, copy=False)`` then :func:`z_depth`, the same values, the static hits'
    refinement and every pixel's z-depth in one compiled walk (:func:`simready.sensors_hw.camera_kernels.refine_z_depth`)
    after the moving bodies' hits are refined; rays given in float64 take the two passes."""
    if hits._origin64 is not None or hits.exact_distance:
        hits.refine(barycentrics=False, copy=False)
        return z_depth(hits, T_rows)
    hits.refine(barycentrics=False, copy=False, statics=False)
    width = len(hits) // len(T_rows)
    o, d = hits.rays32
    tab = hits.scene._world_tris
    assert hits._plane_ok is not None
    return kern.refine_z_depth(hits._hits_by_motion[0], hits.rows, np.ascontiguousarray(o[::width]), d, tab.plane,
                               tab.n, hits.distance_m, hits._plane_ok, np.ascontiguousarray(T_rows[:, :3, 2]), width)


def z_depth(hits: Hits, T_rows: NDArray[np.float64]) -> NDArray[np.float32]:
    """(H·W,) float32 depth along each row's optical axis, +inf where nothing is seen.

    Computed in float64 from the hit distance as ``distance · (direction · optical z)`` so a wall
    perpendicular to the axis reads its exact distance in every pixel; in one compiled pass
    (:func:`simready.sensors_hw.camera_kernels.z_depth`), byte for byte :func:`z_depth_numpy`.
    """
    width = len(hits) // len(T_rows)
    return kern.z_depth(hits.rays32[1], np.ascontiguousarray(T_rows[:, :3, 2]), width, hits.distance_m)


def z_depth_numpy(hits: Hits, T_rows: NDArray[np.float64]) -> NDArray[np.float32]:
    """:func:`z_depth` as full-frame numpy passes: its bit reference."""
    width = len(hits) // len(T_rows)
    d = hits.rays32[1]
    dot = np.zeros(len(hits))
    norm2 = np.zeros(len(hits))
    for i in range(3):
        c = d[:, i].astype(np.float64)
        dot += c * np.repeat(T_rows[:, i, 2], width)
        norm2 += c * c
    return (hits.distance_m * dot / np.sqrt(norm2)).astype(np.float32)
