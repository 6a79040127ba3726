"""Sensor-frame declarations, one per sensor type (SPEC §2).

A mount in a template gives ``T_body_mount`` in the ego body frame (x forward,
y left, z up), with the mount's own axes aligned to the body's when its
rotation is zero. Each sensor type then declares how its *measurement* frame
sits in that mount frame:

* ``camera`` — optical frame (OpenCV): x right, y down, z forward (optical axis).
* ``lidar``  — x forward, y left, z up; azimuth counter-clockwise from +x.
* ``radar``  — x forward (boresight), y left, z up; azimuth counter-clockwise from +x.

so that ``T_world_sensor = T_world_body @ T_body_mount @ T_mount_sensor``.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from simready.world.frames import Mat4, make_transform


class SensorType(str, Enum):
    camera = "camera"
    lidar = "lidar"
    radar = "radar"


# Columns are the sensor axes expressed in the mount (body-aligned) frame.
_CAMERA_OPTICAL_IN_MOUNT = np.array(
    [
        [0.0, 0.0, 1.0],   # mount x (forward)  = optical z
        [-1.0, 0.0, 0.0],  # mount y (left)     = -optical x
        [0.0, -1.0, 0.0],  # mount z (up)       = -optical y
    ]
)

SENSOR_AXES: dict[SensorType, np.ndarray] = {
    SensorType.camera: _CAMERA_OPTICAL_IN_MOUNT,
    SensorType.lidar: np.eye(3),
    SensorType.radar: np.eye(3),
}

SENSOR_AXIS_NAMES: dict[SensorType, tuple[str, str, str]] = {
    SensorType.camera: ("right", "down", "forward"),
    SensorType.lidar: ("forward", "left", "up"),
    SensorType.radar: ("forward", "left", "up"),
}


def frame_declaration(sensor_type: SensorType | str) -> str:
    """A sensor type's measurement frame in words, as ``render.json`` and the PLY header declare it (SPEC §10:
    other tools' frames differ, so say which)."""
    st = SensorType(sensor_type)
    x, y, z = SENSOR_AXIS_NAMES[st]
    when = {SensorType.camera: "each row at its own sample time", SensorType.lidar: "each point at its beam's own time",
            SensorType.radar: "at the frame's time"}[st]
    return f"{st.value} frame, right-handed: x {x}, y {y}, z {z}; metres; {when}"


def mount_to_sensor(sensor_type: SensorType | str) -> Mat4:
    """``T_mount_sensor`` for a sensor type: fixed, declared once here."""
    return make_transform(SENSOR_AXES[SensorType(sensor_type)], [0.0, 0.0, 0.0])
