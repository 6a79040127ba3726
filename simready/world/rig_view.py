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

Units: seconds, hertz, metres, degrees as authored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simready.hashing import content_hash

if TYPE_CHECKING:
    from simready.world.template_model import SensorRig, WorldTemplate


def camera_readout_s(height_px: int, line_time_s: float, shutter: str) -> float:
    """A camera frame's readout (s): the time from the first row's sample to the last row's.

    Row r (0 at the top) of a rolling shutter is sampled at
    ``t0 + r·line_time_s``, so the readout is ``(height_px − 1)·line_time_s``;
    a global shutter samples every row at ``t0`` (0). The one definition of
    the readout: the scenario view's camera clock (:func:`sensor_clocks`,
    hashed with the world), the template's readout-fits-the-period check and
    the renderer's schedule (:attr:`simready.sensors_hw.models.CameraModel.readout_s`)
    all call this, so acceptance and rendering count the same frames.
    """
    return (height_px - 1) * line_time_s if shutter == "rolling" else 0.0


@dataclass(frozen=True)
class SensorClock:
    """One sensor's own clock: sample k starts at ``phase_s + k / rate_hz`` and lasts ``duration_s``."""

    name: str
    type: str
    rate_hz: float
    phase_s: float
    duration_s: float


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
        out.append(CameraFrustum(name, tuple(map(float, mount.translation_m)), tuple(map(float, mount.rpy_deg)),
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
