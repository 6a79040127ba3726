"""One LiDAR sweep: its beams cast at their firing times, the draws and returns applied, rain along the beams,
and the returned points (:class:`LidarScan`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.common.scratch import work_array
from simready.raycast.geometry import SceneGeometry
from simready.raycast.hits import Hits
from simready.sensors_hw.atmosphere import Atmosphere
from simready.sensors_hw.lidar.beams import BeamTable, azimuth_prefilter, beam_table, lidar_poses
from simready.sensors_hw.lidar.return_model import (cos_grazing, dark_bodies, normals_then_uniforms, pcg64_words,
                                                    returns_numpy, set_pcg64_words)
from simready.sensors_hw.lidar_kernels import beam_points, pcg64_draws, returns
from simready.sensors_hw.models import LidarModel, Rig


@dataclass
class LidarScan:
    """Returns of one sweep (M points, beam order).

    Attributes:
        sensor: sensor name; t0_s: sweep start.
        intensity: (M,) float32 in [0, 1].
        instance_id: (M,) uint32 compact entity ids (as the camera id pass).
        range_m: (M,) measured range (noise included).
        beam: (M,) int64 index into the sweep's N beams (row of ``hits``).
        hits: noise-free hits of all N beams, for truth (surface identity, world points).
        channels: beams per column.
        table: the model's beam table (the beams' directions).

    Derived on first use, so not written per sweep: ``points_sensor`` (M, 3) float64 metres, sensor frame at
    each beam's time: the beam's direction times its measured range (the first reader computes them: in a
    run the file writer's thread; :func:`simready.sensors_hw.lidar_kernels.beam_points`); and from ``beam``
    what most sweeps never read: ``t_s`` (M,) float64 firing time, ``channel`` (M,) int32,
    ``azimuth_index`` (M,) int32.
    """

    sensor: str
    t0_s: float
    intensity: NDArray[np.float32]
    instance_id: NDArray[np.uint32]
    range_m: NDArray[np.float64]
    beam: NDArray[np.int64]
    hits: Hits
    channels: int
    table: BeamTable = field(repr=False)
    #: (3, M) points given at construction (the numpy reference computes them with the returns), else None.
    _points: NDArray[np.float64] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.beam)

    @cached_property
    def points_sensor(self) -> NDArray[np.float64]:
        t = self.table
        p = self._points if self._points is not None else beam_points(self.beam, self.range_m, t.cos_el, t.sin_el,
                                                                       t.cos_az, t.sin_az)
        return p.T

    @cached_property
    def t_s(self) -> NDArray[np.float64]:
        return self.hits.times_of(self.beam)

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

    The rays (directions and segment starts; origins and times one per column, which the cast keeps as they
    are) are made and cast against the static scene in one compiled pass over the beam table's angles
    (:meth:`simready.raycast.geometry.SceneGeometry.cast_spinning`), the returns computed in another (:func:`simready.sensors_hw.lidar_kernels.returns`), the points when first read
    (:attr:`LidarScan.points_sensor`); ``compiled=False`` computes the returns and points with the numpy passes
    they repeat bit for bit (:func:`returns_numpy`).

    The sweep's temporaries (the segment starts, the draws) are this thread's work arrays
    (:func:`simready.common.scratch.work_array`), reused sweep after sweep instead of faulted in afresh."""
    model = rig.sensors[lidar_name]
    if not isinstance(model, LidarModel):
        raise TypeError(f"{lidar_name} is not a LiDAR")
    table = beam_table(model)
    T_cols = lidar_poses(rig, lidar_name, t0_s)
    n = model.azimuth_steps * model.channels
    # The rays made and cast against the static scene in one pass; the hits keep the directions, and the origins
    # and times once per column (they expand them when read).
    col_t = t0_s + table.time_offset_s
    hits = scene.cast_spinning((table.cos_el, table.sin_el, table.cos_az, table.sin_az), T_cols, col_t,
                               model.max_range_m, model.min_range_m, ignore=ignore,
                               prefilter=azimuth_prefilter(model, T_cols), incidence=True,
                               window=(float(col_t.min()), float(col_t.max())))  # the columns' times are the beams'
    rain = atmosphere is not None and not atmosphere.clear
    sigma = math.hypot(model.range_noise_m, atmosphere.range_spread_m) if rain else model.range_noise_m  # type: ignore[union-attr]
    sigma = sigma if model.noise else 0.0
    # The draws after the cast (it draws nothing): the returns read them while they are still in cache. A dry
    # sweep of a PCG64 stream draws its normals here and its uniforms in the returns pass (the same numbers, the
    # generator left in the same state: normals_then_uniforms' loops, the uniforms not written out).
    inline = compiled and model.noise and not rain and type(rng.bit_generator) is np.random.PCG64
    noise = work_array("lidar.noise", n, np.float32)
    draw = _NO_DRAW if inline else work_array("lidar.draw", n, np.float32)
    if not inline and model.noise:  # the same draws as rng.standard_normal(n, dtype=np.float32) and rng.random(n, ...)
        normals_then_uniforms(rng, noise, draw)
    elif not inline:
        noise.fill(0.0)
        draw.fill(0.5)
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
    if not compiled:
        points, intensity, ids, rng_m, beam = returns_numpy(model, scene, hits, noise, draw, sigma, rain_draw, two_way,
                                                            table.dirs_sensor_t)
        return LidarScan(lidar_name, float(t0_s), intensity, ids, rng_m, beam, hits, model.channels, table, points)
    # Sized for every beam returning, then shrunk in place to the M that did (one pass, no copy).
    intensity, ids, rng_m, beam = np.empty(n, np.float32), np.empty(n, np.uint32), np.empty(n), np.empty(n, np.int64)
    assert hits._tfar is not None and hits._r_min is not None  # a grouped cast's: distances read from them
    args = (hits.body_index, hits._tfar, hits._r_min, hits.cos_incidence, noise, draw, np.float32(sigma), bool(sigma),
            dark_bodies(model, scene), np.float32(cos_grazing(model)), np.float32(model.dropout.probability),
            rain_draw, two_way, scene.reflectance_of_body, scene.compact_id_of_body, intensity, ids, rng_m, beam)
    if inline:
        with rng.bit_generator.lock:
            st, words = pcg64_words(rng)
            pcg64_draws(words, noise, _NO_DRAW)  # the normals
            m = returns(*args, words)  # and the uniforms
            set_pcg64_words(rng, st, words)
    else:
        m = returns(*args, _NO_WORDS)
    for a in (intensity, ids, rng_m, beam):
        a.resize(m, refcheck=False)  # realloc to the first m entries (no view of them exists yet)
    return LidarScan(lidar_name, float(t0_s), intensity, ids, rng_m, beam, hits, model.channels, table)


#: ``returns``' rain arrays on a dry sweep.
_DRY = np.zeros(0)
#: ``returns``' uniforms when it draws them itself, and its generator words when it does not.
_NO_DRAW = np.zeros(0, np.float32)
_NO_WORDS = np.zeros(0, np.uint64)

