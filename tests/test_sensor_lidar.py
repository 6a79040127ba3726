"""Spinning LiDAR: per-beam time, sensor frame at beam time, noise/dropout, PLY (SPEC §10)."""

from __future__ import annotations

import numpy as np
import pytest

from simready.testing.street import box_body, linear_track
from simready.sensors_hw.lidar import beam_table, read_ply, scan, write_ply_ascii, write_ply_binary
from simready.sensors_hw.models import Rig
from simready.raycast import SceneGeometry
from simready.world import frames as F
from simready.world.motion import PoseTrack

STEPS = 720


def lidar(**kw) -> dict:
    base = {"channels": 8, "vertical_fov_deg": [-7.0, 7.0], "rotation_hz": 10.0, "azimuth_steps": STEPS,
            "max_range_m": 100.0, "phase_s": 0.0, "range_noise_m": 0.0}
    return {**base, **kw}


def rig_with(model: dict, body: PoseTrack | None = None) -> Rig:
    return Rig.from_dict({"mounts": {"lidar": {"type": "lidar", "translation_m": [0.0, 0.0, 2.0]}},
                          "sensors": {"lidar": model}}, body=body)


def wall(x_front_m: float, track: PoseTrack | None = None, reflectance: float = 0.5) -> SceneGeometry:
    """A wall whose face toward the sensor is the plane x = x_front (40 m wide, 40 m tall)."""
    track = track or PoseTrack.constant(F.make_transform(np.eye(3), [x_front_m + 0.5, 0.0, -10.0]))
    return SceneGeometry([box_body("t/instance:wall", (1.0, 40.0, 40.0), track, 3, (0.5, 0.5, 0.5), reflectance)])


def expected_range(scan_, x_front: np.ndarray | float) -> np.ndarray:
    """Range to the plane x = x_front (sensor frame) along each beam."""
    table = beam_table(rig_with(lidar()).sensors["lidar"])
    d = table.dirs_sensor.reshape(-1, 3)[scan_.beam]
    return np.asarray(x_front) / d[:, 0]


def test_static_wall_gives_its_range_within_the_noise():
    exact = scan(wall(20.0), rig_with(lidar()), "lidar", 0.0, np.random.default_rng(0))
    assert len(exact) > 0
    np.testing.assert_allclose(exact.range_m, expected_range(exact, 20.0), rtol=2e-6)
    ahead = (exact.azimuth_index == 0) & (exact.channel == 3)
    assert exact.range_m[ahead] == pytest.approx(20.0 / np.cos(np.radians(1.0)), rel=1e-6)
    noisy = scan(wall(20.0), rig_with(lidar(range_noise_m=0.05)), "lidar", 0.0, np.random.default_rng(0))
    residual = noisy.range_m - expected_range(noisy, 20.0)
    assert abs(residual.mean()) < 0.01 and residual.std() == pytest.approx(0.05, rel=0.1)
    assert np.abs(residual).max() < 6 * 0.05
    # Perpendicular incidence: intensity = reflectance.
    assert noisy.intensity[(noisy.azimuth_index == 0)].max() == pytest.approx(0.5, abs=0.01)


def test_each_beam_sees_the_world_at_its_own_time():
    """A wall receding at 10 m/s: the first beams (azimuth just left of ahead) see it 1 m nearer
    than the last ones (just right of ahead), 0.1 s later."""
    track = linear_track((20.5, 0.0, -10.0), (10.0, 0.0, 0.0), t_end_s=1.0)
    s = scan(wall(0.0, track), rig_with(lidar()), "lidar", 0.3, np.random.default_rng(0))
    table = beam_table(rig_with(lidar()).sensors["lidar"])
    np.testing.assert_allclose(s.t_s, 0.3 + table.time_offset_s[s.azimuth_index])
    x_face = 20.0 + 10.0 * s.t_s
    np.testing.assert_allclose(s.points_sensor[:, 0], x_face, atol=2e-4)
    first = s.points_sensor[s.azimuth_index == 1, 0].mean()
    last = s.points_sensor[s.azimuth_index == STEPS - 1, 0].mean()
    assert last - first == pytest.approx(10.0 * (STEPS - 2) / (STEPS * 10.0), abs=1e-3)


def test_points_are_in_the_sensor_frame_at_the_beam_time_of_a_moving_ego():
    ego = linear_track((0.0, 0.0, 0.0), (10.0, 0.0, 0.0), t_end_s=1.0)
    s = scan(wall(30.0), rig_with(lidar(), ego), "lidar", 0.2, np.random.default_rng(0))
    np.testing.assert_allclose(s.points_sensor[:, 0], 30.0 - 10.0 * s.t_s, atol=2e-4)
    np.testing.assert_allclose(s.points_sensor[:, 2] + 2.0, s.hits.point_world[s.beam, 2], atol=2e-4)


def test_dropout_of_dark_surfaces_follows_the_probability():
    dark = wall(20.0, reflectance=0.01)
    kept = scan(dark, rig_with(lidar(dropout={"probability": 0.0})), "lidar", 0.0, np.random.default_rng(0))
    lost = scan(dark, rig_with(lidar(dropout={"probability": 1.0})), "lidar", 0.0, np.random.default_rng(0))
    half = scan(dark, rig_with(lidar(dropout={"probability": 0.5})), "lidar", 0.0, np.random.default_rng(0))
    assert len(lost) == 0 and len(kept) > 100
    assert len(half) / len(kept) == pytest.approx(0.5, abs=0.08)
    bright = scan(wall(20.0), rig_with(lidar(dropout={"probability": 1.0, "grazing_incidence_deg_above": 60.0})),
                  "lidar", 0.0, np.random.default_rng(0))
    cos_inc = 20.0 / bright.range_m  # wall normal is the sensor x axis
    assert np.all(cos_inc >= np.cos(np.radians(60.0)) - 1e-6)


def test_same_stream_same_scan():
    rig = rig_with(lidar(range_noise_m=0.03))
    a = scan(wall(20.0), rig, "lidar", 0.0, np.random.default_rng(5))
    b = scan(wall(20.0), rig, "lidar", 0.0, np.random.default_rng(5))
    c = scan(wall(20.0), rig, "lidar", 0.0, np.random.default_rng(6))
    np.testing.assert_array_equal(a.points_sensor, b.points_sensor)
    assert not np.array_equal(a.points_sensor, c.points_sensor)


def test_ply_ascii_header_and_columns_exactly_as_spec(tmp_path):
    s = scan(wall(20.0), rig_with(lidar()), "lidar", 0.0, np.random.default_rng(0))
    path = write_ply_ascii(tmp_path / "00000000.ply", s)
    text = path.read_text()
    header, body = text.split("end_header\n")
    lines = [ln for ln in header.splitlines() if not ln.startswith("comment")]
    assert lines == ["ply", "format ascii 1.0", f"element vertex {len(s)}", "property float x", "property float y",
                     "property float z", "property float intensity", "property uint instance_id"]
    rows = [r.split() for r in body.splitlines()]
    assert len(rows) == len(s) and all(len(r) == 5 for r in rows)
    back = read_ply(path)
    np.testing.assert_allclose(np.stack([back["x"], back["y"], back["z"]], 1), s.points_sensor, atol=1e-4)
    np.testing.assert_allclose(back["intensity"], s.intensity, atol=1e-4)
    np.testing.assert_array_equal(back["instance_id"], s.instance_id)
    timed = read_ply(write_ply_ascii(tmp_path / "t.ply", s, with_time=True))
    np.testing.assert_allclose(timed["t"], s.t_s - s.t0_s, atol=1e-6)  # seconds since the sweep's start
    binary = read_ply(write_ply_binary(tmp_path / "b.ply", s, with_time=True))
    np.testing.assert_array_equal(binary["instance_id"], s.instance_id)
    np.testing.assert_allclose(binary["x"], s.points_sensor[:, 0], rtol=1e-6)
    np.testing.assert_array_equal(binary["t"], s.t_s - s.t0_s)
