"""Which beams return and what they read: the sweep's random draws (one normal and one uniform per beam, in beam
order), the dropout of weak returns (dark or grazing), and the numpy reference of the compiled returns pass
(:func:`simready.sensors_hw.lidar_kernels.returns`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.raycast.geometry import SceneGeometry
from simready.raycast.hits import Hits
from simready.sensors_hw.lidar_kernels import pcg64_draws
from simready.sensors_hw.models import LidarModel


#: The low 64 bits of PCG64's 128-bit state and increment (the kernel reads them as two words each).
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
        st, words = pcg64_words(rng)
        pcg64_draws(words, noise, draw)
        set_pcg64_words(rng, st, words)


def pcg64_words(rng: np.random.Generator) -> tuple[dict[str, Any], NDArray[np.uint64]]:
    """A PCG64 generator's state dict and its six words as :func:`pcg64_draws` reads them (state high, low,
    increment high, low, has_uint32, uinteger); :func:`set_pcg64_words` puts the words back."""
    st = dict(rng.bit_generator.state)  # numpy's fresh dict each time: written back whole
    value, inc = st["state"]["state"], st["state"]["inc"]
    return st, np.array([value >> 64, value & _MASK64, inc >> 64, inc & _MASK64, st["has_uint32"], st["uinteger"]],
                        np.uint64)


def set_pcg64_words(rng: np.random.Generator, st: dict[str, Any], words: NDArray[np.uint64]) -> None:
    st["state"]["state"] = (int(words[0]) << 64) | int(words[1])
    st["has_uint32"], st["uinteger"] = int(words[4]), int(words[5])
    rng.bit_generator.state = st


def dark_bodies(model: LidarModel, scene: SceneGeometry) -> NDArray[np.bool_]:
    """Per body whether it is too dark to return reliably, with a last False entry for body −1 (no hit)."""
    return np.append(scene.reflectance_of_body < model.dropout.dark_reflectance_below, False)


def cos_grazing(model: LidarModel) -> float:
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
        weak = np.take(dark_bodies(model, scene), body) | (cos_incidence < cos_grazing(model))
    return ~(weak & (draw < drop.probability))
