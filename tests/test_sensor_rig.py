"""Sensor models, rigs, mounted sensor frames and --set overrides."""

from __future__ import annotations

import numpy as np
import pytest

from simready.sensors_hw.frames import SensorType
from simready.sensors_hw.models import (
    CameraModel,
    LidarModel,
    RadarModel,
    Rig,
    RigError,
    apply_overrides,
    parse_set_args,
)
from simready.world import frames as F
from simready.world.motion import PoseTrack
from tests.fixtures.rigs import CAMERA, LIDAR, RADAR, rig_dict


def test_template_fields_suffice_and_defaults_are_documented_values():
    cam, lidar, radar = CameraModel(**CAMERA), LidarModel(**LIDAR), RadarModel(**RADAR)
    assert (cam.distortion_k2, cam.exposure_ev, cam.vignette, cam.tone_map) == (0.0, 0.0, 0.3, "reinhard")
    assert lidar.points_per_second == 16 * 360 * 10
    assert lidar.dropout.probability == 0.5 and lidar.range_noise_m == 0.02
    np.testing.assert_allclose(np.degrees(lidar.elevations_rad())[[0, -1]], [-15.0, 15.0])
    assert radar.rcs_detect_dbsm_at_50m == -5.0


def test_models_reject_misspelt_and_inconsistent_fields():
    with pytest.raises(ValueError, match="hfov"):
        CameraModel(**{**CAMERA, "hfov": 90.0})
    with pytest.raises(ValueError, match="points_per_second"):
        LidarModel(**LIDAR, points_per_second=1000.0)
    with pytest.raises(ValueError, match="exactly one"):
        LidarModel(**LIDAR, vertical_angles_deg=[0.0] * 16)
    with pytest.raises(ValueError, match="far_m"):
        CameraModel(**{**CAMERA, "far_m": 0.05})


def test_rig_from_dict_reports_the_field_path():
    data = rig_dict()
    data["sensors"]["top_lidar"] = {**LIDAR, "channels": 0}
    with pytest.raises(RigError, match="sensors.top_lidar.channels"):
        Rig.from_dict(data)
    data = rig_dict()
    data["mounts"]["front_radar"]["type"] = "sonar"
    with pytest.raises(RigError, match="mounts.front_radar.type"):
        Rig.from_dict(data)


def test_typed_model_accessors_refuse_another_type_of_sensor():
    rig = Rig.from_dict(rig_dict())
    assert isinstance(rig.camera("front_camera"), CameraModel) and rig.camera("front_camera").width_px > 0
    assert isinstance(rig.lidar("top_lidar"), LidarModel) and isinstance(rig.radar("front_radar"), RadarModel)
    with pytest.raises(RigError, match="sensors.top_lidar.*LidarModel, not CameraModel"):
        rig.camera("top_lidar")
    with pytest.raises(RigError, match="sensors.front_camera.*not LidarModel"):
        rig.lidar("front_camera")


# --- frames on a turned vehicle ------------------------------------------------------


def turned_rig() -> Rig:
    """Ego at (10, 5) facing north (yaw 90°)."""
    return Rig.from_dict(rig_dict(), body=PoseTrack.constant(F.pose_2d(10.0, 5.0, np.pi / 2)))


def world_of(rig: Rig, name: str, p_sensor) -> np.ndarray:
    return F.transform_points(rig.T_world_sensor(name, 0.0), p_sensor)


def test_camera_axes_after_mounting_on_a_turned_vehicle():
    rig = turned_rig()
    origin = np.array([10.0, 6.8, 1.45])  # 1.8 m forward of (10, 5) is north
    np.testing.assert_allclose(world_of(rig, "front_camera", [0, 0, 0]), origin, atol=1e-12)
    np.testing.assert_allclose(world_of(rig, "front_camera", [0, 0, 1]), origin + [0, 1, 0], atol=1e-12)  # z forward → north
    np.testing.assert_allclose(world_of(rig, "front_camera", [1, 0, 0]), origin + [1, 0, 0], atol=1e-12)  # x right → east
    np.testing.assert_allclose(world_of(rig, "front_camera", [0, 1, 0]), origin + [0, 0, -1], atol=1e-12)  # y down


def test_rear_camera_looks_backwards():
    rig = turned_rig()
    origin = np.array([10.0, 3.0, 1.2])
    np.testing.assert_allclose(world_of(rig, "rear_camera", [0, 0, 1]), origin + [0, -1, 0], atol=1e-12)  # south
    np.testing.assert_allclose(world_of(rig, "rear_camera", [1, 0, 0]), origin + [-1, 0, 0], atol=1e-12)  # its right: west


@pytest.mark.parametrize("name, origin", [("top_lidar", [10.0, 5.0, 1.9]), ("front_radar", [10.0, 7.2, 0.5])])
def test_lidar_and_radar_axes_after_mounting_on_a_turned_vehicle(name, origin):
    rig = turned_rig()
    origin = np.array(origin)
    np.testing.assert_allclose(world_of(rig, name, [1, 0, 0]), origin + [0, 1, 0], atol=1e-12)  # forward → north
    np.testing.assert_allclose(world_of(rig, name, [0, 1, 0]), origin + [-1, 0, 0], atol=1e-12)  # left → west
    np.testing.assert_allclose(world_of(rig, name, [0, 0, 1]), origin + [0, 0, 1], atol=1e-12)  # up


def test_sensor_pose_follows_the_body_track_in_time():
    track = PoseTrack([0.0, 1.0], [[0, 0, 0], [10, 0, 0]], [[0, 0, 0, 1]] * 2, [[10, 0, 0]] * 2, np.zeros((2, 3)))
    rig = Rig.from_dict(rig_dict(), body=track)
    T = rig.T_world_sensor("top_lidar", np.array([0.0, 0.25, 1.0]))
    np.testing.assert_allclose(T[:, :3, 3], [[0, 0, 1.9], [2.5, 0, 1.9], [10, 0, 1.9]], atol=1e-12)
    assert rig.names(SensorType.camera) == ["front_camera", "rear_camera"]


# --- overrides -----------------------------------------------------------------


def test_lens_distortion_zero_reaches_every_camera_and_nothing_else():
    rig = Rig.from_dict(rig_dict())
    new, resolved = apply_overrides(rig, ["lens.distortion=0"])
    for name in ("front_camera", "rear_camera"):
        assert (new.sensors[name].distortion_k1, new.sensors[name].distortion_k2) == (0.0, 0.0)
        assert resolved["sensors"][name]["model"]["distortion_k1"] == 0.0
    assert resolved["overrides"] == [{"key": "lens.distortion", "value": 0, "sensors": ["front_camera", "rear_camera"]}]
    assert new.sensors["top_lidar"] == rig.sensors["top_lidar"]
    assert rig.sensors["rear_camera"].distortion_k1 == 0.2  # the original rig is untouched


def test_selectors_name_type_and_star():
    rig = Rig.from_dict(rig_dict())
    new, _ = apply_overrides(rig, {"front_camera.lens.distortion": 0, "lidar.dropout.probability": "0",
                                   "*.phase_s": 0.02, "rear_camera.shutter": "global"})
    assert new.sensors["front_camera"].distortion_k1 == 0.0
    assert new.sensors["rear_camera"].distortion_k1 == 0.2 and new.sensors["rear_camera"].shutter == "global"
    assert new.sensors["top_lidar"].dropout.probability == 0.0
    assert {m.phase_s for m in new.sensors.values()} == {0.02}


def test_derived_points_per_second_follows_an_override():
    rig = Rig.from_dict(rig_dict())
    new, _ = apply_overrides(rig, ["top_lidar.azimuth_steps=720"])
    assert new.sensors["top_lidar"].points_per_second == 16 * 720 * 10


def test_bad_overrides_fail_with_the_key():
    rig = Rig.from_dict(rig_dict())
    with pytest.raises(RigError, match="no_such_field"):
        apply_overrides(rig, ["front_camera.no_such_field=1"])
    with pytest.raises(RigError, match="hfov_deg"):
        apply_overrides(rig, ["camera.hfov_deg=wide"])
    with pytest.raises(RigError, match="key=value"):
        parse_set_args(["lens.distortion"])
