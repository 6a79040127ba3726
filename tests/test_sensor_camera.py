"""Camera: pinhole geometry, z-depth, ids, distortion, rolling shutter (SPEC §10)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simready.testing.street import box_body, linear_track
from simready.sensors_hw.camera import (
    Lighting,
    decode_id_rgb,
    encode_id_rgb,
    pinhole,
    pixel_rays,
    project,
    render_frame,
    row_times,
    unproject,
)
from simready.sensors_hw.models import CameraModel, Rig
from simready.raycast import SceneGeometry
from simready.world import frames as F
from simready.world.motion import PoseTrack

W, H = 160, 120


def camera(**kw) -> dict:
    base = {"width_px": W, "height_px": H, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 200.0, "rate_hz": 20.0,
            "phase_s": 0.0, "shutter": "global", "line_time_s": 0.0, "distortion_k1": 0.0, "vignette": 0.0}
    return {**base, **kw}


def rig_with(cam: dict, body: PoseTrack | None = None) -> Rig:
    """Camera 1.5 m above the body origin, looking along body +x."""
    return Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [0.0, 0.0, 1.5]}},
                          "sensors": {"cam": cam}}, body=body)


def wall_scene(distance_m: float = 10.0) -> SceneGeometry:
    """A wall facing the camera, its front face exactly ``distance_m`` ahead (x = distance)."""
    wall = box_body("t/instance:wall", (1.0, 80.0, 60.0), PoseTrack.constant(F.make_transform(np.eye(3), [distance_m + 0.5, 0, -20])),
                    3, (0.6, 0.6, 0.6), 0.5)
    return SceneGeometry([wall])


def test_intrinsics_follow_the_spec():
    k = pinhole(CameraModel(**camera()))
    assert k.fx == k.fy == pytest.approx((W / 2) / math.tan(math.radians(45.0)))
    assert (k.cx, k.cy) == ((W - 1) / 2, (H - 1) / 2)


def test_projection_of_the_axis_and_the_field_edges():
    model = CameraModel(**camera())
    k = pinhole(model)
    half_v = math.atan((H / 2) / k.fy)
    pts = np.array([
        [0.0, 0.0, 10.0],                       # on the optical axis
        [10.0 * math.tan(math.radians(45)), 0.0, 10.0],   # right edge at hfov/2
        [-10.0 * math.tan(math.radians(45)), 0.0, 10.0],  # left edge
        [0.0, 10.0 * math.tan(half_v), 10.0],   # bottom edge (y down)
        [0.0, -10.0 * math.tan(half_v), 10.0],  # top edge
    ])
    uv, z = project(model, pts)
    np.testing.assert_allclose(uv, [[k.cx, k.cy], [W - 0.5, k.cy], [-0.5, k.cy], [k.cx, H - 0.5], [k.cx, -0.5]], atol=1e-9)
    np.testing.assert_allclose(unproject(model, uv, z), pts, atol=1e-9)
    assert np.isnan(project(model, [[0.0, 0.0, -1.0]])[0]).all()


def test_pixel_rays_go_through_pixel_centres():
    model = CameraModel(**camera())
    d = pixel_rays(model)
    uv, _ = project(model, d.reshape(-1, 3))
    u, v = np.meshgrid(np.arange(W), np.arange(H))
    np.testing.assert_allclose(uv, np.stack([u.ravel(), v.ravel()], 1), atol=1e-9)


def test_depth_of_a_perpendicular_wall_is_its_distance_in_every_pixel():
    frame = render_frame(wall_scene(10.0), rig_with(camera()), "cam", 0.0, ("depth", "id", "semantic"))
    assert frame.depth.dtype == np.float32
    assert np.all(frame.depth == np.float32(10.0))  # z-depth, not ray length
    assert np.all(frame.semantic == 3) and frame.id.min() > 0


def test_misses_are_inf_depth_id_zero_semantic_zero():
    scene = wall_scene(10.0)
    rig = rig_with(camera(), PoseTrack.constant(F.pose_2d(0.0, 0.0, np.pi)))  # looking away from the wall
    scene_ground = SceneGeometry(scene.bodies + [box_body("t/instance:road", (400.0, 400.0, 0.2), PoseTrack.constant(
        F.make_transform(np.eye(3), [0.0, 0.0, -0.2])), 1, (0.3, 0.3, 0.3), 0.2)])
    frame = render_frame(scene_ground, rig, "cam", 0.0, ("depth", "id", "semantic"))
    sky = frame.id == 0
    assert sky[: H // 2 - 1].all() and not sky[H // 2 + 1:].any()
    assert np.all(np.isinf(frame.depth[sky])) and np.all(frame.semantic[sky] == 0)
    assert np.all(frame.semantic[~sky] == 1)


def test_id_rgb_round_trip():
    ids = np.array([[0, 1, 255, 256], [65535, 65536, 2**24 - 1, 123456]], np.uint32)
    rgb = encode_id_rgb(ids)
    assert rgb.dtype == np.uint8 and rgb.shape == (2, 4, 3)
    np.testing.assert_array_equal(decode_id_rgb(rgb), ids)
    with pytest.raises(ValueError):
        encode_id_rgb([2**24])


def test_zero_distortion_rgb_has_the_pinhole_geometry_and_nonzero_moves_it():
    scene = SceneGeometry([box_body("t/instance:block", (2.0, 3.0, 2.0), PoseTrack.constant(
        F.make_transform(np.eye(3), [8.0, 1.0, 0.5])), 3, (0.8, 0.2, 0.2), 0.5)])
    light = Lighting(sun_elevation_deg=60.0)
    pinhole = render_frame(scene, rig_with(camera()), "cam", 0.0, ("id", "rgb"), lighting=light)
    sky_rgb = render_frame(SceneGeometry([]), rig_with(camera()), "cam", 0.0, ("rgb",), lighting=light).rgb[0, 0]
    is_sky = np.all(pinhole.rgb == sky_rgb, axis=2)
    np.testing.assert_array_equal(is_sky, pinhole.id == 0)
    barrel = render_frame(scene, rig_with(camera(distortion_k1=-0.3)), "cam", 0.0, ("id", "rgb"), lighting=light)
    np.testing.assert_array_equal(barrel.id, pinhole.id)  # id stays pinhole
    assert (np.all(barrel.rgb == sky_rgb, axis=2) != is_sky).sum() > 20


def moving_block_scene(speed_mps: float) -> SceneGeometry:
    """A tall 4 m wide block whose front face is 10 m ahead, moving to the camera's right (world −y)."""
    track = linear_track((10.5, 3.0, -10.0), (0.0, -speed_mps, 0.0), t_end_s=0.5, dt_s=0.02)
    return SceneGeometry([box_body("t/actor:block", (1.0, 4.0, 30.0), track, 10, (0.5, 0.5, 0.5), 0.5)])


def left_edges(frame) -> np.ndarray:
    return np.argmax(frame.id > 0, axis=1).astype(np.float64)


def test_rolling_shutter_shears_a_laterally_moving_box_by_the_expected_amount():
    line_time = 5e-4
    model = CameraModel(**camera(shutter="rolling", line_time_s=line_time))
    fx = pinhole(model).fx
    scene = moving_block_scene(10.0)
    rolling = render_frame(scene, rig_with(camera(shutter="rolling", line_time_s=line_time)), "cam", 0.1, ("id",))
    np.testing.assert_allclose(rolling.sample_times_s, 0.1 + np.arange(H) * line_time)
    np.testing.assert_allclose(rolling.sample_times_s, row_times(model, 0.1))
    rows = np.arange(H)
    slope, intercept = np.polyfit(rows, left_edges(rolling), 1)
    # The block's left side (world y = 3 + 2) sits at optical x = −5 + 10·t; u(r) = cx + fx·x(t0 + r·line_time)/10.
    assert slope == pytest.approx(fx * 10.0 * line_time / 10.0, rel=0.03)
    expected_u0 = (W - 1) / 2 + fx * (-5.0 + 10.0 * 0.1) / 10.0
    assert abs(intercept - math.ceil(expected_u0)) <= 1.0
    total_shear_px = fx * 10.0 * (H - 1) * line_time / 10.0
    assert left_edges(rolling)[-1] - left_edges(rolling)[0] == pytest.approx(total_shear_px, abs=1.0)
    glob = render_frame(scene, rig_with(camera(shutter="global", line_time_s=line_time)), "cam", 0.1, ("id",))
    assert np.ptp(left_edges(glob)) == 0.0
    assert np.all(glob.sample_times_s == 0.1)


def test_rolling_shutter_uses_the_cameras_own_motion_per_row():
    """A moving camera and a static wall: z-depth shrinks row by row as the ego approaches."""
    line_time = 1e-3
    ego = linear_track((0.0, 0.0, 0.0), (20.0, 0.0, 0.0), t_end_s=1.0)
    frame = render_frame(wall_scene(10.0), rig_with(camera(shutter="rolling", line_time_s=line_time), ego), "cam", 0.1,
                         ("depth",))
    expected = 10.0 - 20.0 * (0.1 + np.arange(H) * line_time)
    np.testing.assert_allclose(frame.depth[:, W // 2], expected, atol=1e-5)
    np.testing.assert_allclose(frame.T_world_camera[:, 0, 3], 20.0 * frame.sample_times_s, atol=1e-12)


def test_sun_shadow_falls_where_the_geometry_says():
    """Sun in the east at 45°: a 2 m cube casts a 2 m shadow to its west on the ground."""
    ground = box_body("t/instance:ground", (60.0, 60.0, 0.2), PoseTrack.constant(F.make_transform(np.eye(3), [0, 0, -0.2])),
                      1, (0.5, 0.5, 0.5), 0.3)
    cube = box_body("t/instance:cube", (2.0, 2.0, 2.0), PoseTrack.constant(), 3, (0.5, 0.5, 0.5), 0.3)
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [0.0, 0.0, 15.0], "rpy_deg": [0, 90, 0]}},
                         "sensors": {"cam": camera()}})
    frame = render_frame(SceneGeometry([ground, cube]), rig, "cam", 0.0, ("id", "rgb"),
                         lighting=Lighting(sun_elevation_deg=45.0, sun_azimuth_deg=90.0))
    p = frame.hits.point_world.reshape(H, W, 3)
    on_ground = np.abs(p[..., 2]) < 1e-6
    x, y = p[..., 0], p[..., 1]
    shadow = on_ground & (x > -2.9) & (x < -1.1) & (np.abs(y) < 0.9)
    lit = on_ground & (x > 1.1) & (x < 2.9) & (np.abs(y) < 0.9)
    assert shadow.sum() > 30 and lit.sum() > 30
    lum = frame.rgb.astype(float).mean(axis=2)
    assert lum[shadow].max() < lum[lit].min()


def test_brown_distortion_inverts():
    from simready.sensors_hw.camera import distort_normalized, undistort_normalized

    xy = np.random.default_rng(0).uniform(-0.9, 0.9, size=(500, 2))
    back = undistort_normalized(distort_normalized(xy, -0.2, 0.05), -0.2, 0.05, iterations=60)
    np.testing.assert_allclose(back, xy, atol=1e-9)
