"""Per-sensor sample schedules and camera-centred pairing tables.

Every sensor keeps its own clock: sample k of a sensor starts at
``t_k = phase_s + k / rate_hz`` (seconds from clip start), computed from the
integer k in exact rational arithmetic and rounded to float once, never
accumulated. Tick numbers are the sensor's own (0, 1, 2, …), not trace ticks.

A sample is scheduled only if its whole sampling window
``[t_k, t_k + duration_s]`` (rolling-shutter readout, LiDAR sweep; 0 for an
instantaneous radar frame) lies inside ``[0, clip_s]``, so that no sensor
asks the trace for a pose it does not hold.

Config values are read as the decimals they were written as (``0.1`` is
1/10, via the float's shortest repr), so a 10 Hz LiDAR over 2 s has exactly
20 sweeps rather than losing one to binary rounding.

Pairing *selects* one sample of each other sensor per camera frame; nothing
is interpolated. Offsets are exact (rational, rounded once) and signed:
``offset = t_other − t_camera``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from simready.sensors_hw.models import CameraModel, LidarModel, RadarModel, Rig

def exact(x: float) -> Fraction:
    """The decimal a float was written as (shortest round-trip repr), as an exact rational."""
    return Fraction(repr(float(x)))


PairingPolicy = Literal["nearest_start", "latest_start_before", "nearest_center"]
POLICIES: tuple[str, ...] = ("nearest_start", "latest_start_before", "nearest_center")


@dataclass(frozen=True)
class SensorSchedule:
    """Sample times of one sensor over a clip.

    Attributes:
        sensor: sensor name in the rig.
        rate_hz: samples per second.
        phase_s: start time of sample 0, seconds.
        duration_s: length of one sample's window (readout or sweep), seconds.
        ticks: (K,) int64 sample numbers 0..K−1.
        times_s: (K,) float64 start time of each sample.
    """

    sensor: str
    rate_hz: float
    phase_s: float
    duration_s: float
    ticks: NDArray[np.int64]
    times_s: NDArray[np.float64]

    def exact_time(self, k: int) -> Fraction:
        """Start time of sample k as an exact rational (seconds)."""
        return exact(self.phase_s) + Fraction(k) / exact(self.rate_hz)

    def __len__(self) -> int:
        return len(self.ticks)


def make_schedule(sensor: str, rate_hz: float, phase_s: float, clip_s: float,
                  duration_s: float = 0.0) -> SensorSchedule:
    """Samples k ≥ 0 with ``phase + k/rate + duration ≤ clip_s`` (exact comparison)."""
    if rate_hz <= 0:
        raise ValueError(f"{sensor}: rate_hz must be positive")
    span = exact(clip_s) - exact(duration_s) - exact(phase_s)
    count = 0 if span < 0 else math.floor(span * exact(rate_hz)) + 1
    phase, rate = exact(phase_s), exact(rate_hz)
    times = np.array([float(phase + Fraction(k) / rate) for k in range(count)], np.float64)
    return SensorSchedule(sensor, float(rate_hz), float(phase_s), float(duration_s),
                          np.arange(count, dtype=np.int64), times)


def sensor_schedule(name: str, model: CameraModel | LidarModel | RadarModel, clip_s: float) -> SensorSchedule:
    """Schedule from a sensor model: camera readout, LiDAR sweep, radar instantaneous."""
    if isinstance(model, CameraModel):
        return make_schedule(name, model.rate_hz, model.phase_s, clip_s, model.readout_s)
    if isinstance(model, LidarModel):
        return make_schedule(name, model.rotation_hz, model.phase_s, clip_s, model.sweep_s)
    return make_schedule(name, model.rate_hz, model.phase_s, clip_s, 0.0)


def rig_schedules(rig: Rig, clip_s: float) -> dict[str, SensorSchedule]:
    return {name: sensor_schedule(name, model, clip_s) for name, model in rig.sensors.items()}


def _choose(other: SensorSchedule, t_cam: Fraction, cam_duration: Fraction, policy: str) -> int | None:
    """Index of the other sensor's sample chosen for a camera sample starting at ``t_cam``."""
    n = len(other)
    if n == 0:
        return None
    rate, phase = exact(other.rate_hz), exact(other.phase_s)
    if policy == "latest_start_before":
        k = math.floor((t_cam - phase) * rate)
        return min(k, n - 1) if k >= 0 else None
    if policy == "nearest_start":
        target, shift = t_cam, Fraction(0)
    elif policy == "nearest_center":
        target, shift = t_cam + cam_duration / 2, exact(other.duration_s) / 2
    else:
        raise ValueError(f"unknown pairing policy {policy!r}; expected one of {POLICIES}")
    guess = round((target - shift - phase) * rate)
    candidates = [k for k in (guess - 1, guess, guess + 1) if 0 <= k < n]
    if not candidates:
        candidates = [0 if guess < 0 else n - 1]
    # Nearest; on a tie the earlier sample wins (its data exists first).
    return min(candidates, key=lambda k: (abs(other.exact_time(k) + shift - target), k))


def pairing_table(camera: SensorSchedule, others: Mapping[str, SensorSchedule],
                  policy: PairingPolicy = "nearest_start") -> list[dict[str, Any]]:
    """One row per camera sample: its tick and time, and per other sensor the chosen tick,
    its time and the exact offset ``t_other − t_camera`` (None where nothing qualifies)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown pairing policy {policy!r}; expected one of {POLICIES}")
    cam_duration = exact(camera.duration_s)
    rows = []
    for k in camera.ticks.tolist():
        t_cam = camera.exact_time(k)
        row: dict[str, Any] = {"camera": camera.sensor, "camera_tick": k, "camera_t_s": float(t_cam),
                               "policy": policy}
        for name in sorted(others):
            other = others[name]
            j = _choose(other, t_cam, cam_duration, policy)
            row[f"{name}_tick"] = j
            row[f"{name}_t_s"] = None if j is None else float(other.exact_time(j))
            row[f"{name}_offset_s"] = None if j is None else float(other.exact_time(j) - t_cam)
        rows.append(row)
    return rows
