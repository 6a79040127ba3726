"""Per-sensor sample schedules of a rig and camera-centred pairing tables.

Every sensor keeps its own clock; :func:`simready.world.rig_view.make_schedule`
turns a clock into exact sample times (the scenario stage's capture check
reads the same function, so acceptance and rendering count the same samples).
Tick numbers are the sensor's own (0, 1, 2, …), not trace ticks.

Pairing *selects* one sample of each other sensor per camera frame; nothing
is interpolated. Offsets are exact (rational, rounded once) and signed:
``offset = t_other − t_camera``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Literal

from simready.sensors_hw.models import CameraModel, LidarModel, RadarModel, Rig
from simready.world.rig_view import SensorSchedule, exact, make_schedule

PairingPolicy = Literal["nearest_start", "latest_start_before", "nearest_center"]
POLICIES: tuple[str, ...] = ("nearest_start", "latest_start_before", "nearest_center")


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
