"""Camera: pinhole geometry, rolling shutter, and the depth / id / semantic / RGB passes.

Conventions (SPEC §10):

* Optical frame (declared in :mod:`simready.sensors_hw.frames`): x right,
  y down, z forward.
* Intrinsics ``fx = fy = (W/2) / tan(hfov/2)``; principal point at the image
  centre ``cx = (W−1)/2, cy = (H−1)/2``, with pixel *centres* at integer
  coordinates, so the image spans [−0.5, W−0.5] × [−0.5, H−0.5] and a point
  at ±hfov/2 lands on the outer edge of the first/last column.
* ``depth`` is float32 metres along the optical axis (z-depth, not ray
  length), undistorted pinhole; pixels that see nothing within [near, far]
  hold ``+inf``. On disk ``near_m / z``, 0 where nothing is hit
  (:func:`encode_depth`).
* ``id`` holds compact entity ids (:func:`simready.world.identity.compact_ids`
  over the scene's entities; 0 = nothing), as uint32; on disk RGB with
  id = R + 256·G + 65536·B (:func:`encode_id_rgb`).
* ``semantic`` is uint16 ontology class ids: 0 = nothing hit (sky),
  65535 = unknown class (ignore); on disk the blue channel of an 8-bit RGB
  PNG, the ignore class as 255 (:func:`encode_semantic_rgb`).
* Rolling shutter: row r (0 = top) is sampled at ``t0 + r·line_time_s``;
  a global shutter samples every row at ``t0``. Each row uses the camera's
  pose at its own time and sees the world at that time.
* RGB: Lambertian shading in linear light (sun with one shadow ray per lit
  pixel, ambient sky term, ego headlights as two spot lights without
  shadows), exposure ``2**exposure_ev``, Reinhard tone map, vignette, sRGB
  encoding, then Brown distortion (k1, k2) by remapping the pinhole image.
  With k1 = k2 = 0 no remap happens: RGB geometry *is* the pinhole geometry.
  Row times refer to pinhole rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
import zstandard

from simready.artifacts.layout import ZSTD_SUFFIX
from simready.artifacts.records import Pinhole
from simready.common.scratch import work_array
from simready.sensors_hw.models import CameraModel, Rig
from simready.raycast.geometry import Hits, SceneGeometry, box_corners
from simready.raycast.kernels import positions_in, sensor_rays, sensor_rays_into
from simready.sensors_hw import camera_kernels as kern

PASSES = ("depth", "id", "semantic", "rgb")

#: Offset of shadow-ray origins along the surface normal, metres.
SHADOW_BIAS_M = 2e-3
#: Length of shadow rays toward the sun, metres.
SHADOW_RANGE_M = 2000.0


@lru_cache(maxsize=8)
def pinhole(model: CameraModel) -> Pinhole:
    """The camera's pinhole intrinsics in pixels (pixel centres at integers; see the module's conventions)."""
    f = (model.width_px / 2.0) / math.tan(math.radians(model.hfov_deg) / 2.0)
    return Pinhole(width_px=model.width_px, height_px=model.height_px, fx=f, fy=f, cx=(model.width_px - 1) / 2.0,
                   cy=(model.height_px - 1) / 2.0, pixel_centres="integer", model="pinhole")


@lru_cache(maxsize=8)
def pixel_rays(model: CameraModel) -> NDArray[np.float64]:
    """(H, W, 3) unit ray directions through pixel centres, optical frame (read-only, cached)."""
    k = pinhole(model)
    u = (np.arange(k.width_px) - k.cx) / k.fx
    v = (np.arange(k.height_px) - k.cy) / k.fy
    d = np.empty((k.height_px, k.width_px, 3))
    d[..., 0] = u[None, :]
    d[..., 1] = v[:, None]
    d[..., 2] = 1.0
    d /= np.linalg.norm(d, axis=2, keepdims=True)
    d.setflags(write=False)
    return d


def project(model: CameraModel, points_cam: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Pinhole projection of optical-frame points (N, 3) → pixel coords (N, 2) and z-depth (N,).

    Points with z ≤ 0 (behind the camera) get NaN pixel coordinates.
    """
    p = np.asarray(points_cam, np.float64).reshape(-1, 3)
    k = pinhole(model)
    z = p[:, 2]
    safe = np.where(z > 0.0, z, np.nan)
    uv = np.stack([k.cx + k.fx * p[:, 0] / safe, k.cy + k.fy * p[:, 1] / safe], axis=1)
    return uv, z


def unproject(model: CameraModel, uv: ArrayLike, depth_m: ArrayLike) -> NDArray[np.float64]:
    """Pixel coords (N, 2) and z-depth (N,) → optical-frame points (N, 3)."""
    uv = np.asarray(uv, np.float64).reshape(-1, 2)
    z = np.asarray(depth_m, np.float64).reshape(-1)
    k = pinhole(model)
    return np.stack([(uv[:, 0] - k.cx) / k.fx * z, (uv[:, 1] - k.cy) / k.fy * z, z], axis=1)


def row_times(model: CameraModel, t0_s: float) -> NDArray[np.float64]:
    """(H,) sample time of each row: ``t0 + r·line_time_s`` (rolling) or ``t0`` (global)."""
    r = np.arange(model.height_px, dtype=np.float64)
    if model.shutter == "global":
        return np.full(model.height_px, float(t0_s))
    return t0_s + r * model.line_time_s


# --- Brown distortion --------------------------------------------------------


def distort_normalized(xy: NDArray[np.float64], k1: float, k2: float) -> NDArray[np.float64]:
    """Brown radial model on normalized coordinates: ``x_d = x·(1 + k1 r² + k2 r⁴)``."""
    r2: NDArray[np.float64] = np.sum(xy * xy, axis=-1, keepdims=True)
    return xy * (1.0 + k1 * r2 + k2 * r2 * r2)


def undistort_normalized(xy_d: NDArray[np.float64], k1: float, k2: float, iterations: int = 20) -> NDArray[np.float64]:
    """Inverse of :func:`distort_normalized` by fixed-point iteration (converges for moderate k)."""
    xy = xy_d.copy()
    for _ in range(iterations):
        r2 = np.sum(xy * xy, axis=-1, keepdims=True)
        xy = xy_d / (1.0 + k1 * r2 + k2 * r2 * r2)
    return xy


@lru_cache(maxsize=8)
def _distortion_taps(model: CameraModel) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Bilinear remap for Brown distortion: (4, H·W) flat source pixel indices and weights.

    Output pixel (u_d, v_d) is undistorted to find where it lies in the
    pinhole image; weights of taps outside the pinhole image are 0.
    """
    k = pinhole(model)
    w, h = k.width_px, k.height_px
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    xy_d = np.stack([(u - k.cx) / k.fx, (v - k.cy) / k.fy], axis=-1)
    xy = undistort_normalized(xy_d, model.distortion_k1, model.distortion_k2)
    su, sv = (k.cx + k.fx * xy[..., 0]).ravel(), (k.cy + k.fy * xy[..., 1]).ravel()
    inside = (su >= -0.5) & (su <= w - 0.5) & (sv >= -0.5) & (sv <= h - 0.5)
    su, sv = np.clip(su, 0.0, w - 1.0), np.clip(sv, 0.0, h - 1.0)
    u0 = np.minimum(np.floor(su), max(w - 2, 0)).astype(np.int64)
    v0 = np.minimum(np.floor(sv), max(h - 2, 0)).astype(np.int64)
    fu, fv = su - u0, sv - v0
    u1, v1 = np.minimum(u0 + 1, w - 1), np.minimum(v0 + 1, h - 1)
    idx: NDArray[np.int64] = np.stack([v0 * w + u0, v0 * w + u1, v1 * w + u0, v1 * w + u1])
    wts = (np.stack([(1 - fu) * (1 - fv), fu * (1 - fv), (1 - fu) * fv, fu * fv]) * inside).astype(np.float32)
    idx.setflags(write=False)
    wts.setflags(write=False)
    return idx, wts


def apply_distortion(model: CameraModel, image: NDArray[np.floating]) -> NDArray[np.floating]:
    """Pinhole image (H, W, C) → distorted image (bilinear); the same array when k1 = k2 = 0."""
    if model.distortion_k1 == 0.0 and model.distortion_k2 == 0.0:
        return image
    idx, wts = _distortion_taps(model)
    flat = image.reshape(-1, image.shape[-1])
    out: NDArray[np.floating] = np.take(flat, idx[0], axis=0)
    out *= wts[0][:, None]
    for i in range(1, 4):
        tap = np.take(flat, idx[i], axis=0)
        tap *= wts[i][:, None]
        out += tap
    return out.reshape(image.shape)


# --- the published file encodings (SPEC §10) -----------------------------------
#
# How the camera passes are stored in an observation folder, the one place that says so: every writer and
# every reader of ``id.png``, ``semantic.png`` and ``depth.f32.bin`` goes through these functions.

#: ``semantic.png``'s blue channel holds the class id; the ontology's ignore class (65535) is stored as this.
SEMANTIC_IGNORE_8BIT = 255
#: The semantic value of a pixel that hit nothing (sky): neither an ontology class nor the ignore value.
SEMANTIC_NOTHING_HIT = 0
#: When each row of a camera frame was sampled, and which row a truth correspondence targets (legend.json, datasheet).
ROW_TIME_RULE = ("row v (0 = top, pinhole rows) is sampled at sampleTime + v * line_time_s with the camera's and every "
                 "body's pose at that time; a correspondence's target row in frame B is the row whose own time and "
                 "pose see the point there (the fixed point of projecting with each row's time)")
#: The ontology's ignore class id (:data:`simready.world.ontology.UNKNOWN_CLASS_ID`).
SEMANTIC_IGNORE = 65535
#: ``depth.f32.bin``'s convention, as ``results.json`` states it beside each camera frame.
DEPTH_CONVENTION = "near_m / z_depth (float32, little-endian, H x W row-major); 0 where nothing was hit"


def encode_id_rgb(ids: ArrayLike) -> NDArray[np.uint8]:
    """Compact ids (…,) < 2**24 → (…, 3) uint8 with instance = R + 256·G + 65536·B (0 = nothing)."""
    a = np.asarray(ids, np.uint32)
    if np.any(a >= 1 << 24):
        raise ValueError("compact ids must fit 24 bits")
    return np.stack([a & 255, (a >> 8) & 255, (a >> 16) & 255], axis=-1).astype(np.uint8)


def decode_id_rgb(rgb: ArrayLike) -> NDArray[np.uint32]:
    """Inverse of :func:`encode_id_rgb`: R + 256·G + 65536·B of an RGB(A) image."""
    c = np.asarray(rgb, np.uint32)
    ids: NDArray[np.uint32] = c[..., 0] | (c[..., 1] << np.uint32(8)) | (c[..., 2] << np.uint32(16))
    return ids


def encode_semantic_rgb(classes: ArrayLike) -> NDArray[np.uint8]:
    """Class ids (…,) → (…, 3) uint8 with the class in the blue channel (R = G = 0); 0 is nothing hit, the
    ignore class becomes :data:`SEMANTIC_IGNORE_8BIT`. Another class id past 254 is a bug (ValueError)."""
    c = np.asarray(classes, np.uint16)
    ignore = c == SEMANTIC_IGNORE
    if np.any((c >= SEMANTIC_IGNORE_8BIT) & ~ignore):
        raise ValueError(f"semantic class ids must be below {SEMANTIC_IGNORE_8BIT} (or the ignore class)")
    out = np.zeros(c.shape + (3,), np.uint8)
    out[..., 2] = np.where(ignore, SEMANTIC_IGNORE_8BIT, c)
    return out


def decode_semantic_rgb(rgb: ArrayLike) -> NDArray[np.uint16]:
    """Inverse of :func:`encode_semantic_rgb` on an RGB(A) image: the ontology's class ids (ignore: 65535)."""
    b = np.asarray(rgb)[..., 2].astype(np.uint16)
    return np.where(b == SEMANTIC_IGNORE_8BIT, np.uint16(SEMANTIC_IGNORE), b).astype(np.uint16)


def encode_depth(z_m: ArrayLike, near_m: float) -> NDArray[np.float32]:
    """Z-depth (m; +inf or 0 where nothing was hit) → ``near_m / z`` as float32, 0 where nothing was hit."""
    z = np.asarray(z_m, np.float64)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(z) & (z > 0.0), near_m / z, 0.0).astype(np.float32)


#: Depth file formats: the published ``depth.f32.bin`` (SPEC §10, the default) and its opt-in compressed
#: variant ``depth.f32.bin.zst``: the same little-endian float32 bytes, split into their four byte planes
#: (all first bytes, then all second bytes, …) and compressed as one zstd frame. Lossless: decompressing
#: and interleaving the planes gives the published file byte for byte (``zstd -d`` alone gives the planes).
DEPTH_FORMATS = ("f32", "f32.zst")
#: The compressed variant's suffix, after the published file's name.
DEPTH_ZSTD_SUFFIX = ZSTD_SUFFIX
#: zstd level of the compressed depth variant (the byte planes, not the level, give most of the ratio).
DEPTH_ZSTD_LEVEL = 3


def depth_file_bytes(raw: NDArray[np.float32], fmt: str = "f32") -> bytes:
    """An encoded depth image (:func:`encode_depth`) as the bytes of its file in format ``fmt``."""
    data = np.ascontiguousarray(raw, "<f4")
    if fmt == "f32":
        return data.tobytes()
    if fmt != "f32.zst":
        raise ValueError(f"depth format must be one of {DEPTH_FORMATS}, got {fmt!r}")

    planes = np.ascontiguousarray(data.reshape(-1).view(np.uint8).reshape(-1, 4).T)
    return zstandard.ZstdCompressor(level=DEPTH_ZSTD_LEVEL).compress(planes.tobytes())


def read_depth_file(path: str | Path) -> NDArray[np.float32]:
    """The raw ``near_m / z`` values (flat float32) of a depth file in either format (by its suffix)."""
    path = Path(path)
    if path.name.endswith(DEPTH_ZSTD_SUFFIX):
        planes = np.frombuffer(zstandard.ZstdDecompressor().decompress(path.read_bytes()), np.uint8)
        return np.ascontiguousarray(planes.reshape(4, -1).T).view("<f4").reshape(-1)
    return np.fromfile(path, "<f4")


def decode_depth(raw: ArrayLike, near_m: float) -> NDArray[np.float64]:
    """Inverse of :func:`encode_depth`: z-depth in metres, ``near_m / raw`` where raw > 0, else +inf."""
    r = np.asarray(raw, np.float64)
    with np.errstate(divide="ignore"):
        return np.where(r > 0.0, near_m / r, np.inf)


# --- lighting ------------------------------------------------------------------


def _rgb(values: Iterable[float]) -> tuple[float, float, float]:
    r, g, b = values
    return r, g, b


@dataclass(frozen=True)
class Lighting:
    """Scene illumination for the RGB pass (linear RGB radiometric units, arbitrary scale).

    Attributes:
        sun_elevation_deg: above the horizon; ≤ 0 means no direct sun.
        sun_azimuth_deg: compass bearing of the sun, clockwise from north (+y) — 90 = east (+x).
        sun_rgb: irradiance of direct sun on a surface facing it.
        ambient_rgb: uniform sky/bounce light, no occlusion.
        sky_rgb: radiance of pixels that see nothing.
        headlights: whether the ego's low beams are on.
        headlight_positions_body_m: lamp positions in the ego body frame.
        headlight_intensity: radiant intensity per lamp (irradiance at 1 m on axis).
        headlight_half_angle_deg: cone half angle; light falls smoothly to 0 at the edge.
        headlight_pitch_deg: lamp axis below the body x axis.
    """

    sun_elevation_deg: float = 50.0
    sun_azimuth_deg: float = 135.0
    sun_rgb: tuple[float, float, float] = (1.6, 1.55, 1.45)
    ambient_rgb: tuple[float, float, float] = (0.30, 0.33, 0.38)
    sky_rgb: tuple[float, float, float] = (0.45, 0.6, 0.9)
    headlights: bool = False
    headlight_positions_body_m: tuple[tuple[float, float, float], ...] = ((2.3, 0.75, 0.7), (2.3, -0.75, 0.7))
    headlight_intensity: float = 60.0
    headlight_half_angle_deg: float = 25.0
    headlight_pitch_deg: float = 2.0

    #: Sun elevation, degrees, below which the presets switch the headlights on.
    HEADLIGHTS_BELOW_DEG = 8.0

    @classmethod
    def from_environment(cls, env: Mapping[str, Any] | None) -> "Lighting":
        """Lighting from a manifest ``environment`` block.

        Reads ``sun_elevation_deg`` / ``sun_azimuth_deg`` when given, else a
        preset from ``illumination`` (day | dusk | night; default day), and
        ``headlights`` (default: on when the sun is below 8°). Ambient and
        sky scale with the sun's height so night is dark, not grey.
        """
        env = dict(env or {})
        preset = {"day": 50.0, "dusk": 3.0, "night": -20.0}
        illum = str(env.get("illumination", "day"))
        if illum not in preset and "sun_elevation_deg" not in env:
            raise ValueError(f"unknown illumination {illum!r}; expected one of {sorted(preset)}")
        el = float(env.get("sun_elevation_deg", preset.get(illum, 50.0)))
        az = float(env.get("sun_azimuth_deg", 135.0))
        day = float(np.clip(math.sin(math.radians(el + 6.0)) / math.sin(math.radians(56.0)), 0.0, 1.0))
        sun = max(0.0, math.sin(math.radians(el))) ** 0.5
        warm = (1.0, 0.85 + 0.15 * day, 0.7 + 0.3 * day)
        return cls(
            sun_elevation_deg=el,
            sun_azimuth_deg=az,
            sun_rgb=_rgb(1.7 * sun * c for c in warm),
            ambient_rgb=_rgb(0.01 + 0.3 * day * c for c in (1.0, 1.1, 1.27)),
            sky_rgb=_rgb(0.005 + day * c for c in (0.45, 0.6, 0.9)),
            headlights=bool(env.get("headlights", el < cls.HEADLIGHTS_BELOW_DEG)),
        )

    def sun_direction_world(self) -> NDArray[np.float64]:
        """Unit vector toward the sun (world: x east, y north, z up)."""
        el, az = math.radians(self.sun_elevation_deg), math.radians(self.sun_azimuth_deg)
        return np.array([math.cos(el) * math.sin(az), math.cos(el) * math.cos(az), math.sin(el)])


# --- frames -------------------------------------------------------------------


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


@lru_cache(maxsize=8)
def _ray_tables(model: CameraModel) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """Float32 pixel rays (H, W, 3), per-pixel optical-axis cosine, and the ray lengths of the near and far planes."""
    d = pixel_rays(model).astype(np.float32)
    dz = np.ascontiguousarray(d[..., 2].reshape(-1))
    out = (d, dz, (model.near_m / dz).astype(np.float32), (model.far_m / dz).astype(np.float32))
    for a in out:
        a.setflags(write=False)
    return out


def camera_poses(rig: Rig, camera_name: str, t0_s: float) -> NDArray[np.float64]:
    """(H, 4, 4) ``T_world_camera`` (optical frame) at each row's sample time."""
    model = rig.camera(camera_name)
    if model.shutter == "global":
        return np.repeat(rig.T_world_sensor(camera_name, t0_s)[None], model.height_px, axis=0)
    return rig.T_world_sensor(camera_name, row_times(model, t0_s))


def camera_rays(model: CameraModel, T_rows: NDArray[np.float64]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """World origins and unit directions (H·W, 3), float32, row-major, from per-row poses: the pixel rays
    rotated by each row's rotation rounded to float32 (as ``np.matmul`` of float32 gives them; one compiled
    pass, :func:`simready.raycast.kernels.sensor_rays`), each row's origin repeated per pixel."""
    o, d, _, _ = sensor_rays(_ray_tables(model)[0], T_rows, np.zeros(len(T_rows)), _NO_RMIN, False)
    return o, d


_NO_RMIN = np.zeros(1, np.float32)


#: Which rays (or receivers) can meet the world box ``(lo, hi)``: what the prefilters below return.
BoxFilter = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.intp]]


def projection_prefilter(model: CameraModel, T_rows: NDArray[np.float64]) -> BoxFilter:
    """Pixels whose rays can meet a world box, from projecting the box with each row's pose.

    Why it is conservative: a row's pixels share one origin; a box wholly in
    front of the camera projects inside the hull of its corners' projections
    (perspective keeps convexity), so only pixels in that rectangle (+1 px)
    can see it. A box straddling the camera plane keeps the whole row; a box
    wholly nearer than the near plane keeps none.
    """
    w = pinhole(model).width_px
    spans_of = projection_spans(model, T_rows)

    def candidates(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> NDArray[np.intp]:
        keep, c0, c1 = spans_of(lo, hi)
        rows = np.flatnonzero(keep)
        return _spans(rows * w + c0[rows], c1[rows] - c0[rows] + 1)

    return candidates


def projection_spans(model: CameraModel, T_rows: NDArray[np.float64]
                     ) -> Callable[[NDArray[np.float64], NDArray[np.float64]],
                                   tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64]]]:
    """:func:`projection_prefilter`'s pixels of a box as one span of columns per row: ``(keep, c0, c1)``, (H,) each —
    row v's candidate pixels are columns ``c0[v] … c1[v]`` (inside the image) where ``keep[v]``, none elsewhere. A
    caller testing given pixels reads three values per pixel instead of building the frame's set of candidates."""
    k = pinhole(model)
    h, w = k.height_px, k.width_px
    # Optical axes in world per row (3, H) and the origin's coordinates along them.
    axes = [np.ascontiguousarray(T_rows[:, :3, i].T) for i in range(3)]
    offsets = [np.einsum("hi,ih->h", T_rows[:, :3, 3], a) for a in axes]
    rows = np.arange(h)

    def spans(lo: NDArray[np.float64], hi: NDArray[np.float64]
              ) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64]]:
        corners = box_corners(lo, hi)
        x, y, z = (corners @ a - o for a, o in zip(axes, offsets))  # (8, H) in each row's optical frame
        front = np.all(z > 1e-6, axis=0)
        unreachable = np.all(z < model.near_m, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = k.cx + k.fx * x / z
            v = k.cy + k.fy * y / z
        c0 = np.where(front, np.floor(u.min(axis=0)) - 1, 0).clip(0, w)
        c1 = np.where(front, np.ceil(u.max(axis=0)) + 1, w - 1).clip(-1, w - 1)
        in_rows = ~front | ((rows >= np.floor(v.min(axis=0)) - 1) & (rows <= np.ceil(v.max(axis=0)) + 1))
        return in_rows & ~unreachable & (c1 >= c0), c0.astype(np.int64), c1.astype(np.int64)

    return spans


def _spans(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.intp]:
    """Concatenate the index ranges [start, start + count) (one compiled pass, :func:`_spans_numpy`'s indices)."""
    out: NDArray[np.intp] = kern.spans(np.asarray(starts, np.int64), np.asarray(counts, np.int64))
    return out


def _spans_numpy(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.intp]:
    """Concatenate the index ranges [start, start + count) (vectorized): :func:`_spans`' reference."""
    if len(starts) == 0:
        return np.zeros(0, np.intp)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))).astype(np.intp)


def projection_candidates(model: CameraModel, T_rows: NDArray[np.float64]) -> BoxFilter:
    """:func:`projection_prefilter`'s pixels (the same ones, ascending) in one compiled pass over the rows
    (:func:`simready.sensors_hw.camera_kernels.projection_candidates`: each row's corners projected and its span
    of columns written once), what the casts' prefilters use; :func:`projection_prefilter` is its numpy reference."""
    k = pinhole(model)
    # Optical axes in world per row (3, H) and the origin's coordinates along them, as projection_spans has them.
    ax, ay, az = (np.ascontiguousarray(T_rows[:, :3, i].T) for i in range(3))
    ox, oy, oz = (np.einsum("hi,ih->h", T_rows[:, :3, 3], a) for a in (ax, ay, az))
    near, w = float(model.near_m), k.width_px
    return lambda lo, hi: kern.projection_candidates(box_corners(lo, hi), ax, ay, az, ox, oy, oz, k.cx, k.cy, k.fx,
                                                     k.fy, near, w)


def shadow_prefilter(model: CameraModel, T_rows: NDArray[np.float64], receivers: NDArray[np.intp],
                     receiver_z_min_m: float, sun: NDArray[np.float64]) -> BoxFilter:
    """Shadow rays (one per receiving pixel, toward the sun) that can meet a world box.

    A point shadowed by the box lies in the box swept away from the sun
    down to the lowest receiver, ``box − [0, L]·s`` with
    ``L = (hi_z − z_min) / s_z``; its pixel's primary ray therefore meets
    that volume's bounding box, which :func:`projection_prefilter` finds.
    Returns positions in ``receivers``.
    """
    pixels = projection_candidates(model, T_rows)

    def candidates(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> NDArray[np.intp]:
        length = max(0.0, (hi[2] - receiver_z_min_m) / sun[2])
        lo_v, hi_v = np.minimum(lo, lo - length * sun), np.maximum(hi, hi - length * sun)
        # Positions in the (ascending) receivers of the candidate pixels that are receivers: one merge walk, not
        # a frame-sized table of positions.
        found: NDArray[np.intp] = positions_in(receivers, pixels(lo_v, hi_v))
        return found

    return candidates


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
    pixels, _, near, far = _ray_tables(model)
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
        hits.refine(barycentrics=False, copy=False)  # its distances are this frame's own (no view handed out)
        depth = z_depth(hits, T_rows).reshape(h, w)
    ids = hits.compact_id.reshape(h, w) if "id" in wanted else None
    semantic = hits.semantic.reshape(h, w) if "semantic" in wanted else None
    rgb = None
    if "rgb" in wanted:
        # Shading, exposure, tone map and vignette in one compiled pass, then resampling and encoding in another
        # (finish_rgb's steps).
        toned = _shade(scene, rig, model, hits, lighting or Lighting(), T_rows, ignore, tone=True)
        rgb = _encode_rgb(model, toned).reshape(h, w, 3)
    return FramePasses(camera_name, float(t0_s), times, T_rows, pinhole(model), depth, ids, semantic, rgb, hits)


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


# --- shading ---------------------------------------------------------------------


def shade(scene: SceneGeometry, rig: Rig, model: CameraModel, hits: Hits, lighting: Lighting,
          T_rows: NDArray[np.float64], *, ignore: Iterable[str] = ()) -> NDArray[np.float32]:
    """(H·W, 3) float32 linear radiance of a frame's primary rays (Lambertian, see module doc).

    Two compiled passes (:func:`simready.sensors_hw.camera_kernels.sun_setup`: normals, facing, n·sun and the
    shadow rays' starts; :func:`~simready.sensors_hw.camera_kernels.radiance`) around the shadow cast, with
    :func:`shade_numpy`'s float32 operations per pixel.
    """
    return _shade(scene, rig, model, hits, lighting, T_rows, ignore, tone=False)


def _shade(scene: SceneGeometry, rig: Rig, model: CameraModel, hits: Hits, lighting: Lighting,
           T_rows: NDArray[np.float64], ignore: Iterable[str], *, tone: bool) -> NDArray[np.float32]:
    """:func:`shade`; with ``tone`` the radiance also exposed, tone-mapped and vignetted (:func:`finish_rgb`'s
    first step) in the same compiled pass."""
    o, d = hits.rays32
    moving = hits._hits_by_motion[1]
    n_moving = hits.normals_of(moving) if len(moving) else np.zeros((0, 3), np.float32)
    sun = lighting.sun_direction_world()
    # The per-pixel temporaries are work arrays (reused frame after frame, not faulted in afresh).
    p, m = len(hits), len(hits) if lighting.headlights else 0
    n, facing, ndl, lit, start, lit_t, z_min, t_min, t_max = kern.sun_setup(
        scene._world_tris.normal32, hits.rows, moving.astype(np.int64), n_moving, o, d, hits.distance_m, hits.hit,
        sun.astype(np.float32), np.float32(SHADOW_BIAS_M), hits.time_s, work_array("shade.n", (m, 3), np.float32),
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
        dist = np.where(hits.hit, hits.distance_m, 0.0).astype(np.float32)
        headlight = _headlight_irradiance(rig, lighting, o + d * dist[:, None], n * facing[:, None], hits.time_s)

    def f32(v: tuple[float, float, float]) -> NDArray[np.float32]:
        return np.asarray(v, np.float32)

    # Without textured looks each ray's albedo is its body's: the radiance pass reads the per-body table.
    albedo = scene.albedo_at(hits) if scene._looks else _PER_BODY
    return kern.radiance(albedo, hits.body_index, scene._albedo_ext, hits.hit, ndl, lit, shadowed,
                         f32(lighting.sun_rgb), f32(lighting.ambient_rgb), headlight.astype(np.float32),
                         f32(lighting.sky_rgb), tone, *_tone_args(model))


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


def _headlight_irradiance(rig: Rig, lighting: Lighting, p: NDArray[np.float32], n: NDArray[np.float32],
                          t: NDArray[np.float64]) -> NDArray[np.float32]:
    """Irradiance (N,) from the ego's lamps at points p with normals n at times t (no shadows)."""
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


@lru_cache(maxsize=8)
def _vignette(model: CameraModel) -> NDArray[np.float32]:
    """(H, W, 1) gain: 1 at the centre, 1 − vignette at the corners, quadratic in radius."""
    k = pinhole(model)
    u = (np.arange(k.width_px) - k.cx) / (k.width_px / 2.0)
    v = (np.arange(k.height_px) - k.cy) / (k.width_px / 2.0)
    r2 = (u[None, :] ** 2 + v[:, None] ** 2) / (1.0 + (k.height_px / k.width_px) ** 2)
    g = (1.0 - model.vignette * r2)[..., None].astype(np.float32)
    g.setflags(write=False)
    return g


_SRGB_LEVELS = 4096


def _srgb_table(levels: int) -> NDArray[np.uint8]:
    x = np.linspace(0.0, 1.0, levels)
    srgb = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)
    return np.clip(np.round(255.0 * srgb), 0, 255).astype(np.uint8)


_SRGB_LUT = _srgb_table(_SRGB_LEVELS)


_NO_TAPS = (np.zeros(0, np.int32), 0, 0, np.zeros((0, 0), np.float32))


@lru_cache(maxsize=8)
def _distortion_corners(model: CameraModel) -> tuple[NDArray[np.int32], int, int, NDArray[np.float32]]:
    """:func:`_distortion_taps` as the compiled resampling reads them: each output pixel's first tap (int32),
    the steps to the other three (+1 column, +1 row: the taps are always a 2×2 block, one column or row
    repeated where the image has only one), and the weights."""
    idx, wts = _distortion_taps(model)
    dx, dy = int(model.width_px > 1), model.width_px * int(model.height_px > 1)
    base = idx[0]
    if not (np.array_equal(idx[1], base + dx) and np.array_equal(idx[2], base + dy)
            and np.array_equal(idx[3], base + dx + dy)):  # the construction above makes them so
        raise AssertionError("distortion taps are not 2x2 blocks")
    out = base.astype(np.int32)
    out.setflags(write=False)
    return out, dx, dy, wts


def finish_rgb(model: CameraModel, radiance: NDArray[np.floating]) -> NDArray[np.uint8]:
    """Linear radiance (H, W, 3) → uint8 sRGB: exposure, tone map, vignette, distortion, encoding.

    The sRGB curve is applied through a 4096-level table (nearest entry:
    under half an 8-bit level of error everywhere). Compiled
    (:mod:`simready.sensors_hw.camera_kernels`), byte for byte :func:`finish_rgb_numpy`.
    """
    h, w = radiance.shape[:2]
    x = np.ascontiguousarray(radiance, np.float32).reshape(-1, 3)
    return _encode_rgb(model, kern.tone_map(x, *_tone_args(model))).reshape(h, w, 3)


def _tone_args(model: CameraModel) -> tuple[np.float32, bool, NDArray[np.float32]]:
    """The tone-map kernels' exposure, Reinhard switch and vignette gain (empty: none)."""
    gain = _vignette(model).reshape(-1) if model.vignette > 0.0 else np.zeros(0, np.float32)
    return np.float32(2.0 ** model.exposure_ev), model.tone_map == "reinhard", gain


def _encode_rgb(model: CameraModel, x: NDArray[np.float32]) -> NDArray[np.uint8]:
    """Tone-mapped (P, 3) float32 → (P, 3) uint8 sRGB: lens resampling and encoding (compiled)."""
    lens = model.distortion_k1 != 0.0 or model.distortion_k2 != 0.0
    base, dx, dy, wts = _distortion_corners(model) if lens else _NO_TAPS
    return kern.encode_srgb(x, base, dx, dy, wts, _SRGB_LUT, np.float32(_SRGB_LEVELS - 1))


def finish_rgb_numpy(model: CameraModel, radiance: NDArray[np.floating]) -> NDArray[np.uint8]:
    """:func:`finish_rgb` as full-frame numpy passes: the bit reference of the compiled one."""
    x = np.array(radiance, dtype=np.float32)
    if model.exposure_ev != 0.0:
        x *= np.float32(2.0 ** model.exposure_ev)
    if model.tone_map == "reinhard":
        np.divide(x, x + np.float32(1.0), out=x)
    else:
        np.clip(x, 0.0, 1.0, out=x)
    if model.vignette > 0.0:
        x *= _vignette(model)
    x = apply_distortion(model, x)
    x *= np.float32(_SRGB_LEVELS - 1)
    x += np.float32(0.5)
    return np.take(_SRGB_LUT, x.astype(np.int32))
