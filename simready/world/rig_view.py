"""What scenario acceptance may read of a template's sensor rig — and so what versions the world.

Why this exists: the design card promises that editing a template's sensor
rig (a LiDAR's range, a camera's distortion, a mount nudged by a few
centimetres on the roof) marks the observations stale but not the
trajectories. That holds only if nothing upstream of the observations reads
those settings. Two ladder stages do read the rig: the capture stage needs
every sensor's clock (rate, phase, readout or sweep duration) and the
occlusion stage casts rays from the camera mount through the camera's
frustum. So the rig has two faces:

* :func:`scenario_rig_view` — the plain-data projection those two stages are
  given (they read nothing else of the rig). It is part of the world
  template's content hash, so changing a sensor's clock or the camera's
  frustum and mount honestly re-versions the world (acceptance may change).
* :func:`rig_hash` — the hash of the whole rig, the version of the
  ``sensor_rigs`` asset that the measurement stage depends on.

Sample times (:func:`make_schedule`): sample k of a sensor starts at
``t_k = phase_s + k / rate_hz`` (seconds from clip start), computed from the
integer k in exact rational arithmetic and rounded to float once, never
accumulated. A sample is scheduled only if its whole sampling window
``[t_k, t_k + duration_s]`` (rolling-shutter readout, LiDAR sweep; 0 for an
instantaneous radar frame) lies inside ``[0, clip_s]``, so that no sensor
asks the trace for a pose it does not hold. Config values are read as the
decimals they were written as (``0.1`` is 1/10, via the float's shortest
repr), so a 10 Hz LiDAR over 2 s has exactly 20 sweeps rather than losing
one to binary rounding.

Units: seconds, hertz, metres, degrees as authored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.common.hashing import content_hash
from simready.world.template_model import SensorRig, WorldTemplate
from simready.world.template_model.rig import camera_readout_s


@dataclass(frozen=True)
class SensorClock:
    """One sensor's own clock: sample k starts at ``phase_s + k / rate_hz`` and lasts ``duration_s``."""

    name: str
    type: str
    rate_hz: float
    phase_s: float
    duration_s: float


@lru_cache(maxsize=4096)
def exact(x: float) -> Fraction:
    """The decimal a float was written as (shortest round-trip repr), as an exact rational (remembered: a
    schedule's and a pairing table's every sample time asks again for the same rates and phases, and parsing the
    decimal was most of an observation's pairing table)."""
    return Fraction(repr(float(x)))


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


@dataclass(frozen=True)
class CameraFrustum:
    """A camera as the occlusion stage sees it: mount on the ego body and viewing frustum."""

    name: str
    mount_translation_m: tuple[float, float, float]
    mount_rpy_deg: tuple[float, float, float]
    hfov_deg: float
    aspect_h_over_w: float
    near_m: float
    far_m: float
    rate_hz: float
    phase_s: float


def sensor_clocks(rig: SensorRig) -> tuple[SensorClock, ...]:
    """Every sensor's clock, sorted by name (camera: rolling readout; LiDAR: one turn; radar: instantaneous)."""
    out = []
    for name, s in sorted(rig.sensors.items()):
        if s.type == "camera":
            readout_s = camera_readout_s(s.height_px, float(s.line_time_s), s.shutter)
            out.append(SensorClock(name, s.type, float(s.rate_hz), float(s.phase_s), readout_s))
        elif s.type == "lidar":
            out.append(SensorClock(name, s.type, float(s.rotation_hz), float(s.phase_s), 1.0 / float(s.rotation_hz)))
        else:
            out.append(SensorClock(name, s.type, float(s.rate_hz), float(s.phase_s), 0.0))
    return tuple(out)


def camera_frustums(rig: SensorRig) -> tuple[CameraFrustum, ...]:
    """Every camera's mount and frustum, sorted by name."""
    out = []
    for name, s in sorted(rig.sensors.items()):
        if s.type != "camera":
            continue
        mount = rig.mounts[s.mount]
        out.append(CameraFrustum(name, tuple(map(float, mount.translation_m)), tuple(map(float, mount.rpy_deg)),  # type: ignore[arg-type]
                                 float(s.hfov_deg), s.height_px / s.width_px, float(s.near_m), float(s.far_m),
                                 float(s.rate_hz), float(s.phase_s)))
    return tuple(out)


def scenario_rig_view(rig: SensorRig) -> dict[str, Any]:
    """The rig as plain JSON data, reduced to what scenario acceptance reads (hashed with the world)."""
    return {
        "clocks": [vars(c) for c in sensor_clocks(rig)],
        "cameras": [{**vars(c), "mount_translation_m": list(c.mount_translation_m),
                     "mount_rpy_deg": list(c.mount_rpy_deg)} for c in camera_frustums(rig)],
    }


def rig_hash(template: WorldTemplate) -> str:
    """``sha256:<hex>`` of the whole sensor rig (mounts and every sensor setting): the rig's version."""
    return content_hash({"template": template.id, "sensor_rig": template.sensor_rig.model_dump(mode="json")})


def rig_record(template: WorldTemplate) -> dict[str, Any]:
    """The rig version as written to ``templates/<id>/rig.json``: hash, full rig, and its scenario view."""
    rig = template.sensor_rig
    return {
        "template_id": template.id,
        "rig_hash": rig_hash(template),
        "sensor_rig": rig.model_dump(mode="json"),
        "scenario_view": scenario_rig_view(rig),
    }


def rig_table(template: WorldTemplate) -> list[dict[str, Any]]:
    """One row per sensor for reviewers: type, mount, clock and the setting that sizes it."""
    rig = template.sensor_rig
    rows = []
    for clock in sensor_clocks(rig):
        s = rig.sensors[clock.name]
        if s.type == "camera":
            size = f"{s.width_px}×{s.height_px}, hfov {s.hfov_deg:g}°, {s.shutter}"
        elif s.type == "lidar":
            size = f"{s.channels} ch × {s.azimuth_steps} az, {s.max_range_m:g} m"
        else:
            size = f"{s.hfov_deg:g}°×{s.vfov_deg:g}°, {s.max_range_m:g} m"
        mount = rig.mounts[s.mount]
        rows.append({"sensor": clock.name, "type": s.type, "mount": s.mount,
                     "mount_xyz_m": ", ".join(f"{v:g}" for v in mount.translation_m),
                     "rate_hz": f"{clock.rate_hz:g}", "phase_s": f"{clock.phase_s:g}", "settings": size})
    return rows
