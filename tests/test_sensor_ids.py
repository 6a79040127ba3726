"""One entity, one compact id across camera id pass, LiDAR instance ids and radar detections (SPEC §3)."""

from __future__ import annotations

import numpy as np

from simready.testing.street import EGO_ID, street_scene
from simready.sensors_hw.camera import Lighting, decode_id_rgb, encode_id_rgb, render_frame
from simready.sensors_hw.lidar import scan
from simready.sensors_hw.models import Rig
from simready.sensors_hw.radar import detect
from simready.world.identity import compact_ids


def small_rig(ego) -> Rig:
    return Rig.from_dict({
        "mounts": {"cam": {"type": "camera", "translation_m": [1.5, 0.0, 1.6]},
                   "lidar": {"type": "lidar", "translation_m": [0.0, 0.0, 1.9]},
                   "radar": {"type": "radar", "translation_m": [2.3, 0.0, 0.6]}},
        "sensors": {
            "cam": {"width_px": 320, "height_px": 180, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 300.0, "rate_hz": 20.0,
                    "phase_s": 0.0, "shutter": "rolling", "line_time_s": 5e-5, "distortion_k1": -0.05},
            "lidar": {"channels": 32, "vertical_fov_deg": [-20.0, 10.0], "rotation_hz": 10.0, "azimuth_steps": 900,
                      "max_range_m": 120.0, "phase_s": 0.0},
            "radar": {"rate_hz": 13.0, "phase_s": 0.0, "hfov_deg": 90.0, "vfov_deg": 10.0, "max_range_m": 150.0,
                      "exclude_semantic_ids": [1, 2, 3]},
        }}, body=ego)


def test_the_same_entity_has_the_same_compact_id_in_every_sensor():
    scene, bodies = street_scene()
    rig = small_rig(bodies[EGO_ID].track)
    expected = compact_ids(bodies)  # over the scene's entity ids, as legend.json
    assert scene.compact_ids == expected
    frame = render_frame(scene, rig, "cam", 0.5, ("id", "semantic"), ignore=[EGO_ID])
    points = scan(scene, rig, "lidar", 0.5, np.random.default_rng(0), ignore=[EGO_ID])
    radar = detect(scene, rig, "radar", 0.5, np.random.default_rng(0), ignore=[EGO_ID])
    for car in ("bench/actor:car_1", "bench/actor:car_2"):
        cid = expected[car]
        assert (frame.id == cid).sum() > 100
        assert (points.instance_id == cid).sum() > 50
        assert cid in radar.instance_id
        assert np.all(frame.semantic[frame.id == cid] == 10)
    assert expected[EGO_ID] not in set(np.unique(frame.id)) | set(points.instance_id.tolist())
    np.testing.assert_array_equal(decode_id_rgb(encode_id_rgb(frame.id)), frame.id)


def test_night_rgb_uses_headlights_and_day_is_brighter():
    scene, bodies = street_scene()
    rig = small_rig(bodies[EGO_ID].track)
    night = Lighting.from_environment({"illumination": "night"})
    assert night.headlights and not Lighting.from_environment({"illumination": "day"}).headlights
    dark = render_frame(scene, rig, "cam", 0.5, ("rgb",), lighting=Lighting.from_environment(
        {"illumination": "night", "headlights": False}), ignore=[EGO_ID]).rgb
    lit = render_frame(scene, rig, "cam", 0.5, ("rgb",), lighting=night, ignore=[EGO_ID]).rgb
    day = render_frame(scene, rig, "cam", 0.5, ("rgb",), lighting=Lighting.from_environment({}), ignore=[EGO_ID]).rgb
    road_ahead = (slice(150, 175), slice(140, 180))  # lower centre: the road in front of the ego
    assert lit[road_ahead].mean() > dark[road_ahead].mean() + 10
    assert day.mean() > lit.mean()
    assert lit.dtype == np.uint8 and lit.shape == (180, 320, 3)
