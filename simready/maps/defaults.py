"""What an imported template needs that an OpenDRIVE map does not say, in one place.

OpenDRIVE describes roads; a world template (SPEC §5) also names the ego,
its sensor rig, the environment a scenario may choose, the actors and
behaviours allowed, and fixed-time signal programs. The importer takes these
from here and says so in its report, so that nothing is invented silently.
The rig is the one every shipped template uses (the shuttle's contract mounts).
"""

from __future__ import annotations

from typing import Any

#: Legal speed where neither the lane nor the road carries a <speed> record (m/s, 50 km/h).
DEFAULT_SPEED_MPS = 13.9
#: Fixed-time program for every imported traffic light (OpenDRIVE holds no timing):
#: the controllers of one junction are offset by cycle / (number of controllers).
DEFAULT_SIGNAL_PROGRAM: tuple[dict[str, Any], ...] = (
    {"state": "green", "duration_s": 25.0},
    {"state": "yellow", "duration_s": 3.0},
    {"state": "red", "duration_s": 32.0},
)
#: A pedestrian light's program: red while the vehicles' default program is green or yellow and for an all-red
#: second after, walk (green) for the rest of their red less :data:`PEDESTRIAN_CLEARANCE_S`, then red again.
PEDESTRIAN_CLEARANCE_S = 6.0
PEDESTRIAN_SIGNAL_PROGRAM: tuple[dict[str, Any], ...] = (
    {"state": "red", "duration_s": 25.0 + 3.0 + 1.0},
    {"state": "green", "duration_s": 32.0 - 1.0 - PEDESTRIAN_CLEARANCE_S},
    {"state": "red", "duration_s": PEDESTRIAN_CLEARANCE_S},
)
#: Parking slot length along a parking lane (m).
PARKING_SLOT_M = 6.0
#: Signal head asset placed at each imported traffic light.
SIGNAL_HEAD_ASSET = "asset:traffic_light/signal_head_5m"

TEMPLATE_DEFAULTS: dict[str, Any] = {
    "version": 1,
    "schema_version": 1,
    "ontology_version": "1.0.0",
    "coordinates": {"unit": "meter", "handedness": "right", "up": "z"},
    "ego_asset": "asset:shuttle/standard",
    "ego_cruise_speed_mps": 10.0,
    "sensor_rig": {
        "mounts": {
            "front_camera": {"type": "camera", "parent": "ego", "translation_m": [1.8, 0.0, 1.45], "rpy_deg": [0, 0, 0]},
            "roof_lidar": {"type": "lidar", "parent": "ego", "translation_m": [0.9, 0.0, 2.55], "rpy_deg": [0, 0, 0]},
            "front_radar": {"type": "radar", "parent": "ego", "translation_m": [2.3, 0.0, 0.6], "rpy_deg": [0, 0, 0]},
        },
        "sensors": {
            "front_camera": {"type": "camera", "mount": "front_camera", "width_px": 1280, "height_px": 720,
                             "hfov_deg": 90.0, "near_m": 0.1, "far_m": 200.0, "rate_hz": 20.0, "phase_s": 0.0,
                             "shutter": "rolling", "line_time_s": 3.0e-5, "distortion_k1": 0.0},
            "roof_lidar": {"type": "lidar", "mount": "roof_lidar", "channels": 64, "vertical_fov_deg": [-24.9, 2.0],
                           "rotation_hz": 10.0, "azimuth_steps": 1024, "max_range_m": 120.0, "phase_s": 0.0},
            "front_radar": {"type": "radar", "mount": "front_radar", "rate_hz": 13.0, "phase_s": 0.0,
                            "hfov_deg": 60.0, "vfov_deg": 10.0, "max_range_m": 150.0},
        },
    },
    "environment_controls": {"illumination": ["day", "dusk", "night"], "weather": ["dry", "wet", "rain"]},
    "actor_types": ["vehicle", "pedestrian", "cyclist"],
    "behaviors_allowed": ["lane_follow", "car_follow", "lane_change", "cut_in", "signal_obey", "yield_left_turn",
                          "pedestrian_walk", "pedestrian_cross", "cyclist_lane_follow"],
}
