"""Spinning LiDAR: every beam fires at its own time against the world at that time.

Beam pattern: ``azimuth_steps`` columns per turn, ``channels`` beams per
column fired together. Column j points at azimuth ``2π·j / azimuth_steps``
(counter-clockwise from the sensor's +x, the head spinning
counter-clockwise seen from above) and fires at
``t0 + j / (azimuth_steps · rotation_hz)``. Each beam starts at the sensor's
pose at its firing time, so ego motion during the sweep is in the data
(the rolling-shutter analogue: no de-skewing).

Points are in the sensor frame (x forward, y left, z up, declared in
:mod:`simready.sensors_hw.frames`) *at the beam's own time*: the measured
range along the beam's fixed sensor-frame direction.

Intensity is ``reflectance · |cos(incidence)|`` in [0, 1]. Range noise
(Gaussian, ``range_noise_m``) and dropout (:class:`DropoutModel`) come from
the ``numpy.random.Generator`` passed in (a named stream of the caller);
one normal and one uniform are drawn for *every* beam in beam order, hit or
not, so two worlds that differ slightly reuse the same draws per beam.

Weather (:class:`~simready.sensors_hw.atmosphere.Atmosphere`): in rain each
return survives the two-way extinction ``exp(−2·α·r)`` by a third uniform
per beam (drawn only when it rains, after the other two, so a dry sweep is
unchanged bit for bit), its intensity is scaled by the same factor, and the
range noise widens to ``sqrt(σ² + σ_rain²)`` on the same normal draw. More
rain keeps a subset of the returns a lighter rain keeps.

Noise off (``LidarModel.noise`` False, ``--set noise=off``): nothing is
drawn; the normal draw is taken as 0 and every uniform as ½. So there is
no range noise and no rain range spread, a weak return is lost only when
``dropout.probability`` > ½, and in rain a return is kept where T² > ½ —
the random decisions take their more likely outcome — while the
intensity is still scaled by T² (extinction is deterministic physics).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
import zstandard

from simready.common.atomic import write_bytes_atomic
from simready.common.scratch import work_array
from simready.artifacts.layout import ZSTD_SUFFIX
from simready.sensors_hw.atmosphere import Atmosphere
from simready.sensors_hw.frames import SensorType, frame_declaration
from simready.sensors_hw.models import LidarModel, Rig
from simready.raycast.geometry import Hits, RayPrefilter, SceneGeometry, box_corners
from simready.raycast.kernels import sensor_rays, sensor_rays_into
from simready.sensors_hw.lidar_kernels import azimuth_beams, pcg64_draws, returns

PLY_COLUMNS = ("x", "y", "z", "intensity", "instance_id")


@dataclass(frozen=True)
class BeamTable:
    """Fixed beam geometry of a LiDAR model.

    Attributes:
        dirs_sensor: (steps, channels, 3) unit directions in the sensor frame.
        time_offset_s: (steps,) firing time of each column after the sweep start.
        azimuth_rad: (steps,) column azimuths.
        elevation_rad: (channels,) channel elevations.
        dirs_sensor32: ``dirs_sensor`` in float32 (what is cast).
        beam_offset_s: (steps·channels,) firing time of each beam after the sweep start.
        dirs_sensor_t: (3, steps·channels) ``dirs_sensor`` by component (points are gathered from it:
            a gather along the long axis is several times faster than of (N, 3) rows).
        cos_az, sin_az: (steps,) and cos_el, sin_el: (channels,) the angles' cosines and sines, whose products
            are ``dirs_sensor`` (the compiled passes read them instead of the (N, 3) table).
    """

    dirs_sensor: NDArray[np.float64]
    time_offset_s: NDArray[np.float64]
    azimuth_rad: NDArray[np.float64]
    elevation_rad: NDArray[np.float64]
    dirs_sensor32: NDArray[np.float32]
    beam_offset_s: NDArray[np.float64]
    dirs_sensor_t: NDArray[np.float64]
    cos_az: NDArray[np.float64]
    sin_az: NDArray[np.float64]
    cos_el: NDArray[np.float64]
    sin_el: NDArray[np.float64]


@lru_cache(maxsize=8)
def beam_table(model: LidarModel) -> BeamTable:
    az = 2.0 * np.pi * np.arange(model.azimuth_steps) / model.azimuth_steps
    el = model.elevations_rad()
    d = np.empty((model.azimuth_steps, model.channels, 3))
    d[..., 0] = np.cos(el)[None, :] * np.cos(az)[:, None]
    d[..., 1] = np.cos(el)[None, :] * np.sin(az)[:, None]
    d[..., 2] = np.sin(el)[None, :]
    dt = np.arange(model.azimuth_steps) / (model.azimuth_steps * model.rotation_hz)
    table = BeamTable(d, dt, az, el, d.astype(np.float32), np.repeat(dt, model.channels),
                      np.ascontiguousarray(d.reshape(-1, 3).T), np.cos(az), np.sin(az), np.cos(el), np.sin(el))
    for a in (table.dirs_sensor, table.time_offset_s, table.azimuth_rad, table.elevation_rad, table.dirs_sensor32,
              table.beam_offset_s, table.dirs_sensor_t, table.cos_az, table.sin_az, table.cos_el, table.sin_el):
        a.setflags(write=False)
    return table


def lidar_poses(rig: Rig, lidar_name: str, t0_s: float) -> NDArray[np.float64]:
    """(steps, 4, 4) ``T_world_sensor`` at each column's firing time."""
    return rig.T_world_sensor(lidar_name, t0_s + beam_table(rig.lidar(lidar_name)).time_offset_s)


def lidar_rays(rig: Rig, lidar_name: str, t0_s: float,
               T_cols: NDArray[np.float64] | None = None
               ) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float64]]:
    """World origins and unit directions (N, 3) float32, and firing times (N,), N = steps·channels, column-major."""
    table = beam_table(rig.lidar(lidar_name))
    T = lidar_poses(rig, lidar_name, t0_s) if T_cols is None else T_cols
    origins, dirs, times, _ = sensor_rays(table.dirs_sensor32, T, t0_s + table.time_offset_s, np.zeros(1, np.float32),
                                          False)
    return origins, dirs, times


def azimuth_prefilter(model: LidarModel, T_cols: NDArray[np.float64],
                      compiled: bool = True) -> RayPrefilter:
    """Beams whose column azimuth lies in the azimuth arc a world box spans from that column's pose.

    Why it is conservative: every beam of column j has sensor-frame azimuth
    az_j, and so does any point it hits; a box seen from outside its
    footprint spans an arc < π given by its corners. Columns whose origin is
    inside the footprint keep all beams. Near-vertical channels (no
    azimuth) disable the filter. The filter runs as one compiled pass over the columns
    (:func:`simready.sensors_hw.lidar_kernels.azimuth_beams`); ``compiled=False``: the numpy passes.
    """
    table = beam_table(model)
    if np.any(np.abs(table.elevation_rad) > math.radians(89.9)):
        return lambda lo, hi: None
    # Sensor x and y axes in world per column, and the origin's coordinates along them.
    ax, ay = np.ascontiguousarray(T_cols[:, :3, 0].T), np.ascontiguousarray(T_cols[:, :3, 1].T)
    px = np.einsum("si,is->s", T_cols[:, :3, 3], ax)
    py = np.einsum("si,is->s", T_cols[:, :3, 3], ay)
    margin = 2.0 * np.pi / model.azimuth_steps + 1e-6
    channels = np.arange(model.channels)
    two_pi = 2.0 * np.pi

    if compiled:
        return lambda lo, hi: azimuth_beams(box_corners(lo, hi), ax, ay, px, py, table.azimuth_rad, margin,
                                            model.channels, table.cos_az, table.sin_az)

    def candidates(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> NDArray[np.intp]:
        corners = box_corners(lo, hi)
        cx = corners @ ax  # (8, steps): corners in each column's sensor frame
        cx -= px
        cy = corners @ ay
        cy -= py
        az = np.arctan2(cy, cx)
        # Corner azimuths relative to the first corner's, wrapped to [-π, π) (in place: no np.mod on 8·steps).
        rel = az - az[0]
        rel += np.where(rel < -np.pi, two_pi, 0.0) - np.where(rel >= np.pi, two_pi, 0.0)
        rel_min = rel.min(axis=0)
        span = rel.max(axis=0) - rel_min
        cx *= cx
        cy *= cy
        cx += cy
        inside = (span >= np.pi - 1e-9) | (cx.min(axis=0) < 1e-12)
        offset = np.mod(table.azimuth_rad - (az[0] + rel_min), two_pi)
        cols = np.flatnonzero(inside | (offset <= span + margin) | (offset >= two_pi - margin))
        return (cols[:, None] * model.channels + channels[None, :]).reshape(-1)

    return candidates


@dataclass
class LidarScan:
    """Returns of one sweep (M points, beam order).

    Attributes:
        sensor: sensor name; t0_s: sweep start.
        points_sensor: (M, 3) float64 metres, sensor frame at each beam's time.
        intensity: (M,) float32 in [0, 1].
        instance_id: (M,) uint32 compact entity ids (as the camera id pass).
        range_m: (M,) measured range (noise included).
        beam: (M,) int64 index into the sweep's N beams (row of ``hits``).
        hits: noise-free hits of all N beams, for truth (surface identity, world points).
        channels: beams per column.

    Derived from ``beam`` on first use (what most sweeps never read, so not written per sweep):
    ``t_s`` (M,) float64 firing time, ``channel`` (M,) int32, ``azimuth_index`` (M,) int32.
    """

    sensor: str
    t0_s: float
    points_sensor: NDArray[np.float64]
    intensity: NDArray[np.float32]
    instance_id: NDArray[np.uint32]
    range_m: NDArray[np.float64]
    beam: NDArray[np.int64]
    hits: Hits
    channels: int

    def __len__(self) -> int:
        return len(self.beam)

    @cached_property
    def t_s(self) -> NDArray[np.float64]:
        return np.take(self.hits.time_s, self.beam)

    @cached_property
    def channel(self) -> NDArray[np.int32]:
        return (self.beam % self.channels).astype(np.int32)

    @cached_property
    def azimuth_index(self) -> NDArray[np.int32]:
        return (self.beam // self.channels).astype(np.int32)


def scan(scene: SceneGeometry, rig: Rig, lidar_name: str, t0_s: float, rng: np.random.Generator,
         *, ignore: Iterable[str] = (), atmosphere: Atmosphere | None = None, compiled: bool = True) -> LidarScan:
    """One sweep starting at ``t0_s``; ``ignore`` names the carrier body and anything else unseen;
    ``atmosphere``: rain along the beams (None or clear: dry).

    The rays (origins, directions, times and segment starts) come from one compiled pass over the beam table
    (:func:`simready.raycast.kernels.sensor_rays`), the returns from another
    (:func:`simready.sensors_hw.lidar_kernels.returns`); ``compiled=False`` computes the returns with the numpy
    passes they repeat bit for bit (:func:`returns_numpy`).

    The sweep's temporaries (segment starts, the draws, the returns' mask) are this thread's work arrays
    (:func:`simready.common.scratch.work_array`), reused sweep after sweep instead of faulted in afresh."""
    model = rig.sensors[lidar_name]
    if not isinstance(model, LidarModel):
        raise TypeError(f"{lidar_name} is not a LiDAR")
    table = beam_table(model)
    T_cols = lidar_poses(rig, lidar_name, t0_s)
    r_min = np.float32(model.min_range_m)
    n = model.azimuth_steps * model.channels
    # Origins, directions and times are kept by the hits; the segment starts only feed the cast.
    origins, dirs, times = np.empty((n, 3), np.float32), np.empty((n, 3), np.float32), np.empty(n)
    starts = work_array("lidar.starts", (n if r_min else 0, 3), np.float32)
    col_t = t0_s + table.time_offset_s
    sensor_rays_into(table.dirs_sensor32, T_cols, col_t, np.full(1, r_min), origins, dirs, times, starts)
    noise, draw = work_array("lidar.noise", n, np.float32), work_array("lidar.draw", n, np.float32)
    if model.noise:  # the same draws as rng.standard_normal(n, dtype=np.float32) and rng.random(n, ...)
        normals_then_uniforms(rng, noise, draw)
    else:
        noise.fill(0.0)
        draw.fill(0.5)
    hits = scene.cast(origins, dirs, times, model.max_range_m, model.min_range_m, ignore=ignore, normalized=True,
                      prefilter=azimuth_prefilter(model, T_cols), incidence=True, starts=starts if r_min else None,
                      window=(float(col_t.min()), float(col_t.max())))  # the columns' times are the beams'
    rain = atmosphere is not None and not atmosphere.clear
    sigma = math.hypot(model.range_noise_m, atmosphere.range_spread_m) if rain else model.range_noise_m  # type: ignore[union-attr]
    sigma = sigma if model.noise else 0.0
    rain_draw: NDArray[np.floating[Any]] = _DRY
    two_way: NDArray[np.floating[Any]] = _DRY
    if rain:
        two_way = work_array("lidar.two_way", n, np.float64)
        with np.errstate(invalid="ignore", over="ignore"):  # exp(-2·α·r), the product in place
            np.multiply(-2.0 * atmosphere.extinction_per_m, hits.distance_m, out=two_way)  # type: ignore[union-attr]
            np.exp(two_way, out=two_way)
        if model.noise:
            rain_draw = rng.random(dtype=np.float32, out=work_array("lidar.rain_draw", n, np.float32))
        else:
            rain_draw = draw
    if compiled:
        drop = model.dropout
        cols = returns(hits.hit, hits.distance_m, hits.body_index, hits.cos_incidence, noise, draw, np.float32(sigma),
                       bool(sigma), _dark_bodies(model, scene), np.float32(_cos_grazing(model)),
                       np.float32(drop.probability), rain_draw, two_way, scene.reflectance_of_body,
                       scene.compact_id_of_body, table.cos_el, table.sin_el, table.cos_az, table.sin_az,
                       work_array("lidar.keep", n, np.bool_))
    else:
        cols = returns_numpy(model, scene, hits, noise, draw, sigma, rain_draw, two_way, table.dirs_sensor_t)
    points, intensity, ids, rng_m, beam = cols
    return LidarScan(lidar_name, float(t0_s), points.T, intensity, ids, rng_m, beam, hits, model.channels)


#: ``returns``' rain arrays on a dry sweep.
_DRY = np.zeros(0)
_MASK64 = (1 << 64) - 1


def normals_then_uniforms(rng: np.random.Generator, noise: NDArray[np.float32], draw: NDArray[np.float32]) -> None:
    """``rng.standard_normal(dtype=np.float32, out=noise)`` then ``rng.random(dtype=np.float32, out=draw)``: the same
    numbers, and ``rng`` left in the same state. A PCG64 generator (every named stream's) draws them in one compiled
    loop (:func:`simready.sensors_hw.lidar_kernels.pcg64_draws`, ~3x numpy's per-number calls: 1 of a sweep's
    ~5 ms outside the cast); another bit generator through numpy."""
    bits = rng.bit_generator
    if type(bits) is not np.random.PCG64:
        rng.standard_normal(dtype=np.float32, out=noise)
        rng.random(dtype=np.float32, out=draw)
        return
    with bits.lock:
        st = bits.state
        value, inc = st["state"]["state"], st["state"]["inc"]
        words = np.array([value >> 64, value & _MASK64, inc >> 64, inc & _MASK64, st["has_uint32"], st["uinteger"]],
                         np.uint64)
        pcg64_draws(words, noise, draw)
        st["state"]["state"] = (int(words[0]) << 64) | int(words[1])
        st["has_uint32"], st["uinteger"] = int(words[4]), int(words[5])
        bits.state = st


def _dark_bodies(model: LidarModel, scene: SceneGeometry) -> NDArray[np.bool_]:
    """Per body whether it is too dark to return reliably, with a last False entry for body −1 (no hit)."""
    return np.append(scene.reflectance_of_body < model.dropout.dark_reflectance_below, False)


def _cos_grazing(model: LidarModel) -> float:
    return math.cos(math.radians(model.dropout.grazing_incidence_deg_above))


def returns_numpy(model: LidarModel, scene: SceneGeometry, hits: Hits, noise: NDArray[np.float32],
                  draw: NDArray[np.float32], sigma: float, rain_draw: NDArray[np.floating[Any]],
                  two_way: NDArray[np.floating[Any]], dirs_t: NDArray[np.float64]) -> tuple[NDArray[Any], ...]:
    """Which of N beams return, and their columns: the bit reference of the compiled
    :func:`simready.sensors_hw.lidar_kernels.returns`.

    A beam returns when it hit, its measured range ``distance + sigma·noise`` is positive, it is not a weak
    return lost to its uniform ``draw`` (:func:`_returned`) and, in rain (``two_way`` given), its ``rain_draw``
    is below the two-way transmittance. Points are the beam's sensor-frame direction times the measured range;
    intensity ``reflectance · |cos incidence|`` (times the transmittance in rain). Returns (points (3, M),
    intensity, instance id, range, beam).
    """
    cos_inc = hits.cos_incidence
    assert cos_inc is not None  # cast with incidence=True
    rain = len(two_way) > 0
    # Decided over all N beams, then one gather per output (gathers cost more than whole-array steps).
    rng_m = hits.distance_m + sigma * noise if sigma else hits.distance_m
    keep = hits.hit & _returned(model, scene, hits.body_index, cos_inc, draw) & (rng_m > 0.0)
    if rain:
        keep &= rain_draw < two_way
    beam = np.flatnonzero(keep)
    body = np.take(hits.body_index, beam)
    rng_m = np.take(rng_m, beam)
    # Gathered by component, scaled in place: the same float64 products, one new array.
    points = np.take(dirs_t, beam, axis=1)
    points *= rng_m
    power = np.take(scene.reflectance_of_body, body) * np.take(cos_inc, beam)
    intensity = (power * np.take(two_way, beam) if rain else power).astype(np.float32)
    return points, intensity, np.take(scene.compact_id_of_body, body), rng_m, beam


def _returned(model: LidarModel, scene: SceneGeometry, body: NDArray[np.int32], cos_incidence: NDArray[np.float32],
              draw: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Which hits return: weak ones (dark or grazing) are lost when their uniform draw < probability.

    Darkness is decided per body (its reflectance), then gathered: one lookup of a bool per beam
    (body −1, no hit, reads the appended last entry).
    """
    drop = model.dropout
    with np.errstate(invalid="ignore"):
        weak = np.take(_dark_bodies(model, scene), body) | (cos_incidence < _cos_grazing(model))
    return ~(weak & (draw < drop.probability))


# --- PLY -------------------------------------------------------------------------

_PLY_TYPES = {"x": ("float", "<f4"), "y": ("float", "<f4"), "z": ("float", "<f4"),
              "intensity": ("float", "<f4"), "instance_id": ("uint", "<u4"), "t": ("double", "<f8")}


def _columns(points: LidarScan | Mapping[str, Any], with_time: bool) -> dict[str, NDArray[Any]]:
    if isinstance(points, LidarScan):
        p = points.points_sensor
        cols = {"x": p[:, 0], "y": p[:, 1], "z": p[:, 2], "intensity": points.intensity,
                "instance_id": points.instance_id, "t": points.t_s - points.t0_s}
    else:
        cols = dict(points)
    names = PLY_COLUMNS + (("t",) if with_time else ())
    return {k: np.asarray(cols[k]) for k in names}


#: The PLY header's statement of the ``t`` column (SPEC §10).
TIME_COMMENT = ("comment t: seconds since the sweep's sampleTime (its start, results.json); each point is in the "
                "sensor frame at its beam's firing time; columns fire in azimuth order, counter-clockwise from +x "
                "seen from above")


def _header(fmt: str, count: int, names: Iterable[str]) -> str:
    props = "".join(f"property {_PLY_TYPES[k][0]} {k}\n" for k in names)
    time = f"{TIME_COMMENT}\n" if "t" in names else ""
    return (f"ply\nformat {fmt} 1.0\ncomment simready {frame_declaration(SensorType.lidar)}\n{time}"
            f"element vertex {count}\n{props}end_header\n")


#: ASCII columns: decimals of a fixed-point column (``%.Nf``), None for an integer one (``%d``).
_ASCII_DECIMALS = {"x": 4, "y": 4, "z": 4, "intensity": 4, "instance_id": None, "t": 6}


#: LiDAR file formats: ASCII PLY (SPEC §10, the default), binary little-endian PLY (same columns), and each
#: one's opt-in compressed variant ``<tick>.ply.zst``: the same PLY bytes as one zstd frame, so ``zstd -d``
#: gives the uncompressed format's file byte for byte (an ASCII sweep ~4x smaller).
LIDAR_FORMATS = ("ascii", "binary", "ascii.zst", "binary.zst")
#: The compressed variants' suffix, after the PLY's name.
PLY_ZSTD_SUFFIX = ZSTD_SUFFIX
#: zstd level of the compressed PLY: level 1 is ~4x on an ASCII sweep in ~30 ms; level 9 gains 6 % for 8x the time.
PLY_ZSTD_LEVEL = 1


def ply_bytes(points: LidarScan | Mapping[str, Any], fmt: str = "ascii", *, with_time: bool = False) -> bytes:
    """A sweep's file in :data:`LIDAR_FORMATS` ``fmt`` (the ``.zst`` ones compress the plain format's bytes)."""
    if fmt not in LIDAR_FORMATS:
        raise ValueError(f"LiDAR format must be one of {LIDAR_FORMATS}, got {fmt!r}")
    plain, _, zst = fmt.partition(".")
    cols = _columns(points, with_time)
    if plain == "ascii":
        data = _header("ascii", len(cols["x"]), cols).encode("ascii") + ascii_body(cols)
    else:
        rec = np.empty(len(cols["x"]), dtype=[(k, _PLY_TYPES[k][1]) for k in cols])
        for k, v in cols.items():
            rec[k] = v
        data = _header("binary_little_endian", len(rec), cols).encode("ascii") + rec.tobytes()
    if not zst:
        return data

    return zstandard.ZstdCompressor(level=PLY_ZSTD_LEVEL).compress(data)


def ply_name(name: str, fmt: str) -> str:
    """The file name of a sweep published as ``name`` (``<tick>.ply``) in format ``fmt``."""
    return name + PLY_ZSTD_SUFFIX if fmt.endswith(".zst") else name


def write_ply_ascii(path: str | Path, points: LidarScan | Mapping[str, Any], *, with_time: bool = False) -> Path:
    """ASCII PLY with columns exactly ``x y z intensity instance_id`` (+ ``t``), SPEC §10: ``%.4f`` for
    coordinates and intensity, ``%d`` for the id, ``%.6f`` for the time, one space between, one line per point."""
    return write_bytes_atomic(path, ply_bytes(points, "ascii", with_time=with_time))


def ascii_body(cols: Mapping[str, NDArray[Any]]) -> bytes:
    """The ASCII body of :func:`write_ply_ascii`: each column rounded as ``%d`` / ``%.Nf`` round (numpy, a whole
    column at a time), then every line written in one compiled pass
    (:func:`simready.sensors_hw.lidar_kernels.ascii_rows`).

    Why not a string per point: that was 3 of a sample's 19 s of observation; digit planes stacked and
    transposed by numpy were still 8 % of the default suite's observation. The same bytes as
    :func:`ascii_body_per_point`, which a test holds it to. Columns it cannot format exactly that way
    (non-finite numbers, ids that are not integers, magnitudes past 2**50 units of the last decimal) go to
    the per-point formatter.
    """
    from simready.sensors_hw.lidar_kernels import ascii_rows

    n = len(next(iter(cols.values())))
    if n == 0:
        return b""
    magnitudes, signs, decimals = [], [], []
    for name, values in cols.items():
        places = _ASCII_DECIMALS[name]
        parts = _integer_parts(values) if places is None else _fixed_point_parts(values, places)
        if parts is None:
            return ascii_body_per_point(cols)
        magnitudes.append(parts[0])
        signs.append(parts[1])
        decimals.append(-1 if places is None else places)
    body: bytes = ascii_rows(np.stack(magnitudes), np.stack(signs), np.array(decimals, np.int64)).tobytes()
    return body


def ascii_body_per_point(cols: Mapping[str, NDArray[Any]]) -> bytes:
    """The ASCII body formatted by Python, one string per point: the definition :func:`ascii_body` matches."""
    fmt = " ".join("%d" if _ASCII_DECIMALS[k] is None else f"%.{_ASCII_DECIMALS[k]}f" for k in cols) + "\n"
    return "".join(fmt % r for r in zip(*(np.asarray(v).tolist() for v in cols.values()))).encode("ascii")


def _integer_parts(values: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.bool_]] | None:
    """``%d`` of an integer column as (magnitude, negative), or None when the column is not integers that fit
    an int64."""
    v = np.asarray(values)
    if v.dtype.kind not in "biu" or (v.dtype.kind == "u" and v.dtype.itemsize >= 8 and v.max() > np.iinfo(np.int64).max):
        return None
    v = v.astype(np.int64)
    negative = v < 0
    if negative.any() and v.min() == np.iinfo(np.int64).min:
        return None
    return np.abs(v), negative


def _fixed_point_parts(values: NDArray[Any], decimals: int) -> tuple[NDArray[np.int64], NDArray[np.bool_]] | None:
    """``%.<decimals>f`` of a numeric column as (its digits without the point as one integer, negative), or None
    when it holds a value this cannot format exactly.

    ``%.Nf`` rounds the exact binary value half to even. ``|x|·10^N`` in float64 is within half an ulp of
    the exact product, so its rounding to an integer is certain unless the fraction lies within an ulp of
    one half; those few values (exact halves among them) take their digits from Python's own formatting.
    The sign is the sign bit, as ``%f`` prints ``-0.0000`` for -0.0 and for negatives that round to zero.
    """
    v = np.asarray(values)
    if v.dtype.kind not in "biuf":
        return None
    x = v.astype(np.float64)
    if not np.isfinite(x).all():
        return None
    a = np.abs(x)
    scaled = a * float(10 ** decimals)
    if scaled.max() >= 2.0 ** 50:
        return None
    whole = np.floor(scaled)
    frac = scaled - whole
    q = whole.astype(np.int64) + (frac > 0.5)
    unsure = np.flatnonzero(np.abs(frac - 0.5) <= np.spacing(scaled))
    for i in unsure.tolist():
        q[i] = int(("%.*f" % (decimals, a[i])).replace(".", ""))
    return q, np.signbit(x)


def write_ply_binary(path: str | Path, points: LidarScan | Mapping[str, Any], *, with_time: bool = False) -> Path:
    """Same columns as :func:`write_ply_ascii`, little-endian binary (much faster to write and read)."""
    return write_bytes_atomic(path, ply_bytes(points, "binary", with_time=with_time))


def firing_times(points_sensor: NDArray[np.float64], model: LidarModel, t0_s: float) -> NDArray[np.float64]:
    """Each point's firing time from its azimuth, for a sweep written without its ``t`` column.

    A point lies on its beam, and a beam's column is its azimuth: column j (at 2π·j / azimuth_steps) fires at
    ``t0 + j / (azimuth_steps · rotation_hz)``. Exact while a point's azimuth is known to better than half a
    column — the PLY's 0.1 mm at the 0.3 m minimum range is 0.4 mrad, a column of 1800 is 3.5 mrad.
    """
    steps = model.azimuth_steps
    az = np.arctan2(points_sensor[:, 1], points_sensor[:, 0])
    column = np.mod(np.rint(az * (steps / (2.0 * np.pi))).astype(np.int64), steps)
    return t0_s + beam_table(model).time_offset_s[column]


def read_ply(path: str | Path, columns: Sequence[str] | None = None) -> dict[str, NDArray[Any]]:
    """Columns of a PLY written by this module (ASCII or binary little-endian, or either one's ``.ply.zst``,
    by the name's suffix); only ``columns`` when given (an ASCII body's other columns are then not converted)."""
    raw = Path(path).read_bytes()
    if Path(path).name.endswith(PLY_ZSTD_SUFFIX):
        raw = zstandard.ZstdDecompressor().decompress(raw)
    end = raw.index(b"end_header\n") + len(b"end_header\n")
    lines = raw[:end].decode("ascii").splitlines()
    if lines[0] != "ply":
        raise ValueError(f"{path}: not a PLY file")
    fmt = lines[1].split()[1]
    count = next(int(line.split()[2]) for line in lines if line.startswith("element vertex"))
    names = [line.split()[2] for line in lines if line.startswith("property")]
    dtype = [(k, _PLY_TYPES[k][1]) for k in names]
    wanted = [i for i, k in enumerate(names) if columns is None or k in columns]
    if fmt == "binary_little_endian":
        rec = np.frombuffer(raw[end:], dtype=dtype, count=count)
        return {names[i]: rec[names[i]].copy() for i in wanted}
    # Every column is numeric: one C-level parse of the whole body (float64 holds uint32 ids and the
    # printed float32 values exactly; the column is then cast as a per-value parse would be).
    table = _ascii_table(raw[end:], count, len(names), wanted)
    return {names[i]: table[:, j].astype(np.dtype(dtype[i][1])) for j, i in enumerate(wanted)}


def _ascii_table(body: bytes, count: int, columns: int, wanted: list[int] | None = None) -> NDArray[np.float64]:
    """An ASCII PLY body as a (count, columns) float64 table (only the ``wanted`` columns, in order, when given).
    Arrow's CSV reader parses it ~3x faster than splitting (both round each number correctly, so the values are
    the same); a body it reads otherwise (extra spaces, a short line) is split instead, which fails on a wrong
    shape as before."""
    import pyarrow as pa  # heavy: pyarrow.csv (~85 ms), only for the CSV writer
    import pyarrow.csv as pcsv  # heavy: pyarrow.csv (~85 ms), only for the CSV writer

    wanted = list(range(columns)) if wanted is None else wanted
    try:
        names = [f"c{i}" for i in range(columns)]
        parsed = pcsv.read_csv(pa.py_buffer(body), read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
                               parse_options=pcsv.ParseOptions(delimiter=" "),
                               convert_options=pcsv.ConvertOptions(column_types={n: pa.float64() for n in names},
                                                                   include_columns=[names[i] for i in wanted],
                                                                   null_values=[], strings_can_be_null=False))
        if parsed.num_rows == count and parsed.num_columns == len(wanted):
            return np.stack([c.to_numpy() for c in parsed.columns], axis=1) if count else np.zeros((0, len(wanted)))
    except (pa.ArrowInvalid, ValueError):
        pass
    return np.array(body.split(), dtype=np.float64).reshape(count, columns)[:, wanted]
