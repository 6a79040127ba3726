"""The RGB pass's linear radiance: Lambertian shading of a frame's primary hits under the sun (one shadow ray per
lit pixel), the ambient sky and the ego's headlights; compiled, with its numpy reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from simready.common.scratch import work_array
from simready.raycast.geometry import SceneGeometry
from simready.raycast.hits import Hits
from simready.sensors_hw import camera_kernels as kern
from simready.sensors_hw.camera.finish import tone_args
from simready.sensors_hw.camera.lighting import Lighting
from simready.sensors_hw.camera.prefilters import shadow_prefilter
from simready.sensors_hw.models import CameraModel, Rig


#: Offset of shadow-ray origins along the surface normal, metres.
SHADOW_BIAS_M = 2e-3
#: Length of shadow rays toward the sun, metres.
SHADOW_RANGE_M = 2000.0


def shade(scene: SceneGeometry, rig: Rig, model: CameraModel, hits: Hits, lighting: Lighting,
          T_rows: NDArray[np.float64], *, ignore: Iterable[str] = ()) -> NDArray[np.float32]:
    """(H·W, 3) float32 linear radiance of a frame's primary rays (Lambertian, see module doc).

    Two compiled passes (:func:`simready.sensors_hw.camera_kernels.sun_setup`: normals, facing, n·sun and the
    shadow rays' starts; :func:`~simready.sensors_hw.camera_kernels.radiance`) around the shadow cast, with
    :func:`shade_numpy`'s float32 operations per pixel.
    """
    return shade_pass(scene, rig, model, hits, lighting, T_rows, ignore, tone=False)


def shade_pass(scene: SceneGeometry, rig: Rig, model: CameraModel, hits: Hits, lighting: Lighting,
           T_rows: NDArray[np.float64], ignore: Iterable[str], *, tone: bool) -> NDArray[np.float32]:
    """:func:`shade`; with ``tone`` the radiance also exposed, tone-mapped and vignetted (:func:`finish_rgb`'s
    first step) in the same compiled pass."""
    o, d = hits.rays32
    moving = hits._hits_by_motion[1]
    n_moving = hits.normals_of(moving) if len(moving) else np.zeros((0, 3), np.float32)
    sun = lighting.sun_direction_world()
    # The per-pixel temporaries are work arrays (reused frame after frame, not faulted in afresh).
    p, m = len(hits), len(hits) if lighting.headlights else 0
    # The frame's rays come in rows from one origin at one time (each row's first ray's, read once per row).
    w = model.width_px
    if p != w * model.height_px:
        raise ValueError(f"shading: {p} rays are not a {model.width_px}x{model.height_px} frame's")
    n, facing, ndl, lit, start, lit_t, z_min, t_min, t_max = kern.sun_setup(
        scene._world_tris.normal32, hits.rows, moving.astype(np.int64), n_moving, np.ascontiguousarray(o[::w]), d,
        hits.distance_m, hits.hit, sun.astype(np.float32), np.float32(SHADOW_BIAS_M),
        np.ascontiguousarray(hits.time_s[::w]), w, work_array("shade.n", (m, 3), np.float32),
        work_array("shade.facing", m, np.float32), work_array("shade.ndl", p, np.float32),
        work_array("shade.lit", p, np.int64), work_array("shade.start", (p, 3), np.float32),
        work_array("shade.lit_t", p, np.float64))
    # Sunlit: the lit rays whose shadow ray is not blocked (the radiance pass walks both; the sun below the
    # horizon lights none).
    shadowed = np.zeros(0, bool)
    if lighting.sun_elevation_deg > 0.0 and len(lit):
        prefilter = shadow_prefilter(model, T_rows, lit, float(z_min), sun)
        shadowed = scene.occluded(start, np.broadcast_to(sun.astype(np.float32), start.shape), lit_t,
                                  SHADOW_RANGE_M, ignore=ignore, normalized=True, prefilter=prefilter,
                                  window=(float(t_min), float(t_max)))
    else:
        lit = lit[:0]
    headlight = np.zeros(0, np.float32)
    if lighting.headlights:
        row_of, lamps, axis, cos_edge, span = _headlight_rows(rig, lighting, np.ascontiguousarray(hits.time_s[::w]))
        headlight = kern.headlight_irradiance(o, d, hits.distance_m, hits.hit, n, facing, row_of, w, lamps, axis,
                                              cos_edge, span, np.float32(lighting.headlight_intensity),
                                              work_array("shade.headlight", p, np.float32))

    def f32(v: tuple[float, float, float]) -> NDArray[np.float32]:
        return np.asarray(v, np.float32)

    # Without textured looks each ray's albedo is its body's: the radiance pass reads the per-body table.
    albedo = scene.albedo_at(hits) if scene._looks else _PER_BODY
    return kern.radiance(albedo, hits.body_index, scene._albedo_ext, hits.hit, ndl, lit, shadowed,
                         f32(lighting.sun_rgb), f32(lighting.ambient_rgb), headlight.astype(np.float32),
                         f32(lighting.sky_rgb), tone, *tone_args(model))


#: ``kern.radiance``'s albedo when it reads the scene's per-body table.
_PER_BODY = np.zeros((0, 3), np.float32)


def shade_numpy(scene: SceneGeometry, rig: Rig, model: CameraModel, hits: Hits, lighting: Lighting,
                T_rows: NDArray[np.float64], *, ignore: Iterable[str] = ()) -> NDArray[np.float32]:
    """:func:`shade` as whole-frame numpy passes: its reference.

    Works on whole-frame arrays with misses masked (zero normal) rather than
    gathering the hits, and with few full-frame passes: at 1280×720 each
    (N, 3) pass costs milliseconds, more than the arithmetic in it.
    """
    o, d = hits.rays32
    n = hits.normals_or_zero()
    facing = -np.sign(np.einsum("ij,ij->i", n, d))  # turns the geometric normal toward the viewer
    dist = np.where(hits.hit, hits.distance_m, 0.0).astype(np.float32)
    sun_term = np.zeros(len(hits), np.float32)
    if lighting.sun_elevation_deg > 0.0:
        sun = lighting.sun_direction_world()
        ndl = (n @ sun.astype(np.float32)) * facing
        lit = np.flatnonzero(ndl > 0.0)
        if len(lit):
            n_lit = np.take(n, lit, axis=0) * facing[lit, None]
            start = np.take(o, lit, axis=0) + np.take(d, lit, axis=0) * dist[lit, None] + np.float32(SHADOW_BIAS_M) * n_lit
            prefilter = shadow_prefilter(model, T_rows, lit, float(start[:, 2].min()), sun)
            shadowed = scene.occluded(start, np.broadcast_to(sun.astype(np.float32), start.shape),
                                      hits.time_s[lit], SHADOW_RANGE_M, ignore=ignore, normalized=True,
                                      prefilter=prefilter)
            vis = lit[~shadowed]
            sun_term[vis] = ndl[vis]
    light = sun_term[:, None] * np.asarray(lighting.sun_rgb, np.float32)
    light += np.asarray(lighting.ambient_rgb, np.float32)
    if lighting.headlights:
        p = o + d * dist[:, None]
        light += _headlight_irradiance(rig, lighting, p, n * facing[:, None], hits.time_s)[:, None]
    out = scene.albedo_at(hits)
    out *= light
    out[np.flatnonzero(~hits.hit)] = np.asarray(lighting.sky_rgb, np.float32)
    return out


def _headlight_rows(rig: Rig, lighting: Lighting, t_rows: NDArray[np.float64]
                    ) -> tuple[NDArray[np.intp], NDArray[np.float32], NDArray[np.float32], np.float32, np.float32]:
    """What :func:`~simready.sensors_hw.camera_kernels.headlight_irradiance` reads for a frame whose rows are at
    ``t_rows``: each row's index among the distinct times, the lamps' positions (L, U, 3) and the beam axis (U, 3)
    at those times, and the cone's float32 constants — :func:`_headlight_irradiance`'s values (the distinct times
    of the rows are those of their pixels)."""
    ut, row_of = np.unique(t_rows, return_inverse=True)
    T = rig.body.poses_at(ut)
    pitch = math.radians(lighting.headlight_pitch_deg)
    axis = (T[:, :3, :3] @ np.array([math.cos(pitch), 0.0, -math.sin(pitch)])).astype(np.float32)
    lamps = np.stack([(T[:, :3, :3] @ np.asarray(lamp) + T[:, :3, 3]).astype(np.float32)
                      for lamp in lighting.headlight_positions_body_m]) if lighting.headlight_positions_body_m \
        else np.zeros((0, len(ut), 3), np.float32)
    cos_edge = math.cos(math.radians(lighting.headlight_half_angle_deg))
    return row_of.astype(np.intp), lamps, axis, np.float32(cos_edge), np.float32(1.0 - cos_edge)


def _headlight_irradiance(rig: Rig, lighting: Lighting, p: NDArray[np.float32], n: NDArray[np.float32],
                          t: NDArray[np.float64]) -> NDArray[np.float32]:
    """Irradiance (N,) from the ego's lamps at points p with normals n at times t (no shadows): the numpy
    reference of :func:`~simready.sensors_hw.camera_kernels.headlight_irradiance` (:func:`shade_numpy`'s)."""
    ut, inv = np.unique(t, return_inverse=True)
    T = rig.body.poses_at(ut)
    pitch = math.radians(lighting.headlight_pitch_deg)
    axis = (T[:, :3, :3] @ np.array([math.cos(pitch), 0.0, -math.sin(pitch)])).astype(np.float32)[inv]
    cos_edge = math.cos(math.radians(lighting.headlight_half_angle_deg))
    total = np.zeros(len(p), np.float32)
    for lamp in lighting.headlight_positions_body_m:
        pos = (T[:, :3, :3] @ np.asarray(lamp) + T[:, :3, 3]).astype(np.float32)[inv]
        to_lamp = pos - p
        r2 = np.maximum(np.einsum("ij,ij->i", to_lamp, to_lamp), np.float32(1e-6))
        l_hat = to_lamp / np.sqrt(r2)[:, None]
        cos_off = -np.einsum("ij,ij->i", l_hat, axis)
        cone = np.sqrt(np.clip((cos_off - cos_edge) / (1.0 - cos_edge), 0.0, 1.0))
        total += lighting.headlight_intensity * cone * np.maximum(0.0, np.einsum("ij,ij->i", n, l_hat)) / r2
    return total
