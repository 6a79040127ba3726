"""Per-sensor clocks and camera-centred pairing (selection only, exact offsets)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from simready.sensors_hw.schedule import pairing_table, rig_schedules
from simready.world.rig_view import make_schedule

READOUT_S = 719 * 2e-5  # 720-row rolling shutter


def schedules():
    cam = make_schedule("cam", 20.0, 0.0, 2.0, READOUT_S)
    lidar = make_schedule("lidar", 10.0, 0.0, 2.0, 0.1)
    radar = make_schedule("radar", 13.0, 0.0, 2.0, 0.0)
    return cam, lidar, radar


def test_each_sensor_keeps_its_own_tick_count_and_times():
    cam, lidar, radar = schedules()
    # A sample is kept only if its whole window fits in [0, 2 s].
    assert len(cam) == 40 and len(lidar) == 20 and len(radar) == 27
    np.testing.assert_array_equal(cam.ticks, np.arange(40))
    assert cam.times_s[39] == 39 / 20 and lidar.times_s[-1] == 1.9
    assert radar.times_s[-1] == float(Fraction(26, 13)) == 2.0
    assert radar.times_s[5] == float(Fraction(5, 13))  # from the integer index, not accumulated
    assert make_schedule("x", 10.0, 0.05, 2.0).times_s[0] == 0.05
    assert len(make_schedule("x", 10.0, 2.5, 2.0)) == 0


def test_nearest_start_pairing_offsets_are_exact_and_ties_take_the_earlier():
    cam, lidar, radar = schedules()
    rows = pairing_table(cam, {"lidar": lidar, "radar": radar})
    assert len(rows) == 40 and {r["policy"] for r in rows} == {"nearest_start"}
    for r in rows:
        k = r["camera_tick"]
        t_cam = Fraction(k, 20)
        j_l = k // 2  # k odd sits exactly between two sweeps: the earlier wins
        assert r["lidar_tick"] == j_l
        assert r["lidar_offset_s"] == float(Fraction(j_l, 10) - t_cam)
        j_r = min(range(len(radar)), key=lambda j: (abs(Fraction(j, 13) - t_cam), j))
        assert r["radar_tick"] == j_r
        assert r["radar_offset_s"] == float(Fraction(j_r, 13) - t_cam)
    assert rows[10]["radar_tick"] == 6  # t = 0.5 s is equidistant from 6/13 and 7/13
    assert rows[1]["radar_offset_s"] == float(Fraction(7, 260))


def test_latest_start_before_and_nearest_center_policies():
    cam, lidar, radar = schedules()
    before = pairing_table(cam, {"lidar": lidar, "radar": radar}, "latest_start_before")
    assert all(r["lidar_offset_s"] <= 0 and r["radar_offset_s"] <= 0 for r in before)
    assert before[3]["radar_tick"] == 1  # 0.15 s: radar frames at 0, 1/13, 2/13=0.1538
    centre = pairing_table(cam, {"lidar": lidar}, "nearest_center")
    # Camera centre k/20 + readout/2 against sweep centres j/10 + 0.05.
    assert [centre[k]["lidar_tick"] for k in range(5)] == [0, 0, 1, 1, 2]
    with pytest.raises(ValueError, match="policy"):
        pairing_table(cam, {"lidar": lidar}, "closest")


def test_last_camera_frames_pair_with_the_last_sweep_that_exists():
    cam, lidar, _ = schedules()
    rows = pairing_table(cam, {"lidar": lidar})
    assert rows[-1]["lidar_tick"] == 19  # 1.95 s: sweep 20 (2.0 s) would not finish inside the clip


def test_rig_schedules_use_each_models_window():
    from tests.fixtures.rigs import rig_dict
    from simready.sensors_hw.models import Rig

    s = rig_schedules(Rig.from_dict(rig_dict()), 2.0)
    assert s["top_lidar"].duration_s == 0.1 and s["front_radar"].duration_s == 0.0
    assert s["front_camera"].duration_s == pytest.approx(47 * 1e-5)
    assert len(s["front_radar"]) == 26  # phase 0.01: 0.01 + 25/13 = 1.933 ≤ 2 < 0.01 + 26/13


@pytest.mark.parametrize("template_id", ["residential_crosswalk_v3", "urban_signalized_intersection", "two_lane_arterial"])
def test_scenario_view_and_renderer_share_one_camera_readout(template_id):
    """The world's scenario view (what acceptance counts) and the renderer's schedule time a frame alike.

    The readout is (height − 1)·line_time (first row's sample to the last
    row's). The clip ends exactly where frame 20's last row is sampled
    (t = 1 s + 719·30 µs): both keep that frame; with height·line_time the
    scenario view had dropped it while the renderer rendered it.
    """
    from simready.common import paths
    from simready.scenario.capture import rig_schedules as capture_schedules
    from simready.sensors_hw.scene_build import rig_from_sensor_rig, template_rig_data
    from simready.world.rig_view import sensor_clocks
    from simready.world.template_model import camera_readout_s
    from simready.world.template import load_template

    template = load_template(paths.TEMPLATES_DIR / f"{template_id}.yaml")
    rig = rig_from_sensor_rig(template_rig_data(template))
    cam = template.sensor_rig.sensors["front_camera"]
    readout = camera_readout_s(cam.height_px, cam.line_time_s, cam.shutter)
    assert readout == (cam.height_px - 1) * cam.line_time_s
    for clock in sensor_clocks(template.sensor_rig):
        if clock.type == "camera":
            assert clock.duration_s == rig.sensors[clock.name].readout_s
    clip_s = 1.0 + readout
    rendered = rig_schedules(rig, clip_s)
    for accepted in capture_schedules(template, clip_s):
        want = rendered[accepted.sensor]
        assert accepted.duration_s == want.duration_s
        np.testing.assert_array_equal(accepted.times_s, want.times_s)
    assert rendered["front_camera"].times_s[-1] == 1.0
