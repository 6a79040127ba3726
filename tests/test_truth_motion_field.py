"""Motion field from twists (SPEC §11): agrees with the derivative of the projection, never computed from it."""

from __future__ import annotations

import numpy as np
import pytest

from simready.testing.street import box_body
from simready.sensors_hw.camera import project, render_frame
from simready.sensors_hw.models import Rig
from simready.raycast import SceneGeometry
from simready.truth.correspondence import FrameView, Samples, static_bodies
from simready.truth.precision import MOTION_STEP_PXPS
from simready.truth.motion_field import motion_field
from simready.world import frames as F
from simready.world.motion import PoseTrack

W, H = 80, 60


def turning_track(start, velocity, yaw0: float, yaw_rate: float, t_end_s: float = 1.0, dt: float = 0.02) -> PoseTrack:
    """Constant world velocity and constant yaw rate (both exactly representable by a PoseTrack)."""
    t = np.round(np.arange(0.0, t_end_s + dt / 2, dt), 12)
    v = np.asarray(velocity, np.float64)
    return PoseTrack(t, np.asarray(start) + t[:, None] * v, F.quat_from_yaw(yaw0 + yaw_rate * t),
                     np.tile(v, (len(t), 1)), np.tile([0.0, 0.0, yaw_rate], (len(t), 1)))


def scene_and_rig(shutter: str = "rolling"):
    ego = turning_track((0.0, 0.0, 0.0), (6.0, 0.5, 0.0), 0.0, 0.4)
    car = turning_track((9.0, -1.0, 0.0), (-2.0, 3.0, 0.0), 0.3, -0.8)
    bodies = [
        box_body("t/instance:wall", (1.0, 60.0, 40.0), PoseTrack.constant(F.make_transform(np.eye(3), [25, 0, -15])),
                 5, (0.5,) * 3, 0.5),
        box_body("t/actor:car", (4.0, 2.0, 1.6), car, 10, (0.5,) * 3, 0.5),
        box_body("t/actor:ego", (4.0, 2.0, 1.5), ego, 12, (0.5,) * 3, 0.5),
    ]
    cam = {"width_px": W, "height_px": H, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 200.0, "rate_hz": 20.0,
           "phase_s": 0.0, "shutter": shutter, "line_time_s": 3e-4 if shutter == "rolling" else 0.0,
           "distortion_k1": 0.0}
    # The camera sits off the ego's origin: its velocity includes ω × lever arm.
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [1.5, 0.4, 1.4], "rpy_deg": [0, 3, 10]}},
                         "sensors": {"cam": cam}}, body=ego)
    return SceneGeometry(bodies, separate=["t/actor:ego"]), rig


def projected_at(scene, rig, samples: Samples, t: np.ndarray) -> np.ndarray:
    """Pixel coordinates of each sample's surface point at times t (per sample), by posing and projecting."""
    moving = ~static_bodies(scene)[samples.body]
    out = np.empty((len(samples), 2))
    T_cam = rig.T_world_sensor("cam", t)
    for i in range(len(samples)):
        if moving[i]:
            p = scene.bodies[samples.body[i]].track.pose_at(t[i]) @ np.append(samples.point_body[i], 1.0)
        else:
            p = np.append(samples.point_world[i], 1.0)
        out[i] = project(rig.sensors["cam"], (np.linalg.inv(T_cam[i]) @ p)[None, :3])[0][0]
    return out


def test_motion_field_is_the_time_derivative_of_the_projection():
    scene, rig = scene_and_rig()
    frame = render_frame(scene, rig, "cam", 0.4, ("id",), ignore=["t/actor:ego"])
    samples = Samples.of_hits(scene, FrameView.of_frame(frame, rig.sensors["cam"], 0), frame.hits)
    field = motion_field(scene, rig, samples)
    pick = np.random.default_rng(0).choice(len(samples), 300, replace=False)
    car = scene.body_indices(["t/actor:car"])[0]
    pick = np.union1d(pick, np.flatnonzero(samples.body == car)[:100])  # points on the turning car too
    sub = Samples(samples.view, *(getattr(samples, f)[pick] for f in
                                  ("pixel", "u", "v", "body", "triangle", "barycentric_uv", "point_body", "time_s",
                                   "point_world", "point_camera")))
    eps = 1e-4
    ahead, behind = projected_at(scene, rig, sub, sub.time_s + eps), projected_at(scene, rig, sub, sub.time_s - eps)
    numeric = (ahead - behind) / (2 * eps)
    np.testing.assert_allclose(field.du_dt_pxps[pick], numeric[:, 0], rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(field.dv_dt_pxps[pick], numeric[:, 1], rtol=1e-4, atol=1e-3)
    assert (samples.body[pick] == car).sum() > 20
    assert np.abs(field.du_dt_pxps).max() > 10.0  # the field is not trivially zero


def test_a_still_camera_sees_no_motion_on_static_geometry():
    scene, _ = scene_and_rig()
    still = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [0, 0, 1.5]}},
                           "sensors": {"cam": {"width_px": W, "height_px": H, "hfov_deg": 60.0, "near_m": 0.1,
                                               "far_m": 200.0, "rate_hz": 20.0, "phase_s": 0.0, "shutter": "global",
                                               "line_time_s": 0.0, "distortion_k1": 0.0}}},
                          body=PoseTrack.constant(F.make_transform(F.rot_z(0.1), [0, 0, 0])))
    frame = render_frame(scene, still, "cam", 0.2, ("id",), ignore=["t/actor:ego"])
    samples = Samples.of_hits(scene, FrameView.of_frame(frame, still.sensors["cam"], 0), frame.hits)
    field = motion_field(scene, still, samples)
    static = static_bodies(scene)[samples.body]
    assert static.sum() > 100 and (~static).sum() > 10  # the turning car is in view too
    assert np.all(field.du_dt_pxps[static] == 0.0) and np.all(field.dv_dt_pxps[static] == 0.0)
    assert np.all(field.du_dt_pxps[~static] != 0.0)
    # Stored at the declared precision: within half a step of the computed field, still exactly zero where it is.
    tab = field.table()
    stored = np.stack([tab.column("du_dt_pxps").to_numpy(), tab.column("dv_dt_pxps").to_numpy()], axis=1)
    computed = np.stack([field.du_dt_pxps, field.dv_dt_pxps], axis=1)
    assert stored.dtype == np.float32 and np.abs(stored - computed).max() <= MOTION_STEP_PXPS / 2
    assert np.all(stored[static] == 0.0)


def test_motion_field_matches_the_rendered_poses_while_the_turn_tightens():
    """The ego's yaw rate grows within every tick (yaw = ½·α·t²): the motion field from the interpolated twist
    is still the derivative of the projection of the interpolated poses. With slerp poses and linearly
    interpolated rates the two differed by up to 1.2 px/s here (fx = 40 px; ~100 px/s at a
    kinematic-v1 yaw-rate step with a 1280 px camera)."""
    t = np.round(np.arange(0.0, 1.0 + 0.01, 0.02), 12)
    alpha = 2.0
    v = np.stack([6.0 * np.cos(0.5 * alpha * t * t), 6.0 * np.sin(0.5 * alpha * t * t), 0 * t], axis=1)
    pos = np.cumsum(np.vstack([np.zeros((1, 3)), 0.5 * (v[1:] + v[:-1]) * 0.02]), axis=0)
    ego = PoseTrack(t, pos, F.quat_from_yaw(0.5 * alpha * t * t), v, np.stack([0 * t, 0 * t, alpha * t], axis=1))
    scene, rig = scene_and_rig()
    scene = SceneGeometry([b for b in scene.bodies if b.entity_id != "t/actor:ego"]
                          + [box_body("t/actor:ego", (4.0, 2.0, 1.5), ego, 12, (0.5,) * 3, 0.5)],
                          separate=["t/actor:ego"])
    rig = rig.on_body(ego)
    frame = render_frame(scene, rig, "cam", 0.41, ("id",), ignore=["t/actor:ego"])
    samples = Samples.of_hits(scene, FrameView.of_frame(frame, rig.sensors["cam"], 0), frame.hits)
    field = motion_field(scene, rig, samples)
    static = np.flatnonzero(static_bodies(scene)[samples.body])
    pick = static[np.random.default_rng(1).choice(len(static), 200, replace=False)]
    sub = Samples(samples.view, *(getattr(samples, f)[pick] for f in
                                  ("pixel", "u", "v", "body", "triangle", "barycentric_uv", "point_body", "time_s",
                                   "point_world", "point_camera")))
    eps = 1e-5
    numeric = (projected_at(scene, rig, sub, sub.time_s + eps) - projected_at(scene, rig, sub, sub.time_s - eps)) / (2 * eps)
    np.testing.assert_allclose(field.du_dt_pxps[pick], numeric[:, 0], rtol=1e-5, atol=2e-3)
    np.testing.assert_allclose(field.dv_dt_pxps[pick], numeric[:, 1], rtol=1e-5, atol=2e-3)


@pytest.mark.parametrize("shutter", ["rolling", "global"])
def test_compiled_motion_field_is_the_numpy_one_bit_for_bit(shutter):
    scene, rig = scene_and_rig(shutter)
    frame = render_frame(scene, rig, "cam", 0.4, ("id",), ignore=["t/actor:ego"])
    samples = Samples.of_hits(scene, FrameView.of_frame(frame, rig.sensors["cam"], 0), frame.hits)
    assert (~static_bodies(scene)[samples.body]).sum() > 50  # the turning car is in view
    fast, ref = motion_field(scene, rig, samples), motion_field(scene, rig, samples, compiled=False)
    for name in ("du_dt_pxps", "dv_dt_pxps", "ddepth_dt_mps"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name), err_msg=name)
    # the table's float32 columns come out of the compiled pass itself: bitwise the roundings of the numpy field
    assert fast.columns is not None and ref.columns is None
    table, table_ref = fast.table(), ref.table()
    assert table.equals(table_ref) and table.schema == table_ref.schema
    # the surface points' velocities are kept for the moving samples only, and read as an (M, 3) array zero elsewhere
    moving = np.flatnonzero(~static_bodies(scene)[samples.body])
    np.testing.assert_array_equal(fast.moving, moving)
    v = fast.point_velocity_mps
    assert v.shape == (len(samples), 3) and not v[np.setdiff1d(np.arange(len(samples)), moving)].any()
    np.testing.assert_array_equal(v[moving], fast.moving_velocity_mps)
    assert np.abs(fast.moving_velocity_mps).max() > 0.1  # the turning car moves
