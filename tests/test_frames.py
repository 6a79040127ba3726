"""Frames and transforms: known points, composition order, conventions (SPEC §2)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.sensors_hw.frames import SensorType, mount_to_sensor
from simready.world import frames as F

angles = st.floats(min_value=-np.pi, max_value=np.pi, allow_nan=False)


def test_mount_on_yawed_vehicle_lands_where_composition_says_not_vector_addition():
    """A mount 1.8 m forward and 1.45 m up on a vehicle at (10, 5) yawed 90° (facing north).

    Forward for that vehicle is +y, so the mount is at (10, 5 + 1.8, 1.45) in
    world. Vector addition of the body-frame offset would put it at
    (10 + 1.8, 5, 1.45) — east of the vehicle, which is wrong.
    """
    T_world_body = F.pose_2d(10.0, 5.0, np.pi / 2)
    T_body_mount = F.mount_transform([1.8, 0.0, 1.45], [0, 0, 0])
    T_world_mount = F.compose(T_world_body, T_body_mount)
    np.testing.assert_allclose(T_world_mount[:3, 3], [10.0, 6.8, 1.45], atol=1e-12)
    naive = np.array([10.0, 5.0, 0.0]) + np.array([1.8, 0.0, 1.45])
    assert np.linalg.norm(T_world_mount[:3, 3] - naive) > 2.0


def test_camera_axes_on_turned_vehicle():
    """Camera optical frame x right, y down, z forward, mounted on a vehicle facing north.

    1 m along optical z (forward) → north (+y); along optical x (right) → east (+x);
    along optical y (down) → −z.
    """
    T_world_body = F.pose_2d(0.0, 0.0, np.pi / 2)
    T_body_mount = F.mount_transform([1.8, 0.0, 1.45], [0, 0, 0])
    T_world_cam = F.compose(T_world_body, T_body_mount, mount_to_sensor(SensorType.camera))
    origin = np.array([0.0, 1.8, 1.45])
    np.testing.assert_allclose(F.transform_points(T_world_cam, [0, 0, 1]), origin + [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(F.transform_points(T_world_cam, [1, 0, 0]), origin + [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(F.transform_points(T_world_cam, [0, 1, 0]), origin + [0, 0, -1], atol=1e-12)


def test_lidar_and_radar_axes_on_turned_vehicle():
    T_world_body = F.pose_2d(3.0, -2.0, np.pi)  # facing west
    for kind in (SensorType.lidar, SensorType.radar):
        T = F.compose(T_world_body, F.mount_transform([1.0, 0.0, 2.0], [0, 0, 0]), mount_to_sensor(kind))
        origin = np.array([2.0, -2.0, 2.0])
        np.testing.assert_allclose(F.transform_points(T, [1, 0, 0]), origin + [-1, 0, 0], atol=1e-12)
        np.testing.assert_allclose(F.transform_points(T, [0, 1, 0]), origin + [0, -1, 0], atol=1e-12)
        np.testing.assert_allclose(F.transform_points(T, [0, 0, 1]), origin + [0, 0, 1], atol=1e-12)


def test_pitched_mount_points_down():
    """A mount pitched +10° (nose down about +y in a y-left frame) looks below the horizon."""
    T = F.mount_transform([0, 0, 1.5], [0, 10, 0])
    p = F.transform_points(T, [1.0, 0.0, 0.0])
    assert p[2] < 1.5
    np.testing.assert_allclose(p[2], 1.5 - np.sin(np.radians(10)), atol=1e-12)


def test_scene_graph_composes_parent_to_child():
    g = F.SceneGraph()
    g.add("ego", "world", F.pose_2d(10.0, 5.0, np.pi / 2))
    g.add("roof", "ego", F.make_transform(np.eye(3), [0.9, 0.0, 2.5]))
    g.add("lidar", "roof", F.make_transform(F.rot_z(np.pi / 2), [0.1, 0.0, 0.05]))
    expected = F.compose(g.local["ego"], g.local["roof"], g.local["lidar"])
    np.testing.assert_allclose(g.world_from("lidar"), expected)
    np.testing.assert_allclose(g.world_from("lidar")[:3, 3], [10.0, 6.0, 2.55], atol=1e-12)
    rel = g.relative("ego", "lidar")
    np.testing.assert_allclose(rel[:3, 3], [1.0, 0.0, 2.55], atol=1e-12)
    assert g.chain("lidar") == ["ego", "roof", "lidar"]


def test_scene_graph_rejects_unknown_parent_and_duplicates():
    g = F.SceneGraph()
    g.add("a", "world", np.eye(4))
    try:
        g.add("b", "nope", np.eye(4))
    except ValueError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("unknown parent accepted")
    try:
        g.add("a", "world", np.eye(4))
    except ValueError:
        pass
    else:
        raise AssertionError("duplicate frame accepted")


def test_frames_from_mapping_orders_dependencies_and_detects_cycles():
    g = F.frames_from_mapping({"b": ("a", np.eye(4)), "a": ("world", F.pose_2d(1, 2, 0))})
    np.testing.assert_allclose(g.world_from("b")[:3, 3], [1, 2, 0])
    try:
        F.frames_from_mapping({"x": ("y", np.eye(4)), "y": ("x", np.eye(4))})
    except ValueError as exc:
        assert "cyclic" in str(exc)
    else:
        raise AssertionError("cycle accepted")


def test_y_up_conversion():
    """A y-up source point 1 m up (0, 1, 0) becomes (0, 0, 1); 1 m toward −z (forward) becomes +y."""
    np.testing.assert_allclose(F.convert_points_y_up_to_z_up([0, 1, 0]), [0, 0, 1])
    np.testing.assert_allclose(F.convert_points_y_up_to_z_up([0, 0, -1]), [0, 1, 0])
    np.testing.assert_allclose(F.convert_points_y_up_to_z_up([1, 0, 0]), [1, 0, 0])
    assert np.isclose(np.linalg.det(F.Y_UP_TO_Z_UP), 1.0)  # a rotation, no reflection


def test_left_handed_source_refused():
    try:
        F.source_to_world_basis("y", "left")
    except ValueError as exc:
        assert "handedness" in str(exc)
    else:
        raise AssertionError("left-handed source accepted")


def test_quaternion_is_xyzw_and_yaw_90():
    q = F.quat_from_yaw(np.pi / 2)
    np.testing.assert_allclose(q, [0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-12)
    np.testing.assert_allclose(F.matrix_from_quat(q) @ [1, 0, 0], [0, 1, 0], atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(angles, st.floats(-1.5, 1.5), angles)
def test_quaternion_matrix_round_trip(roll, pitch, yaw):
    R = F.rotation_from_rpy(roll, pitch, yaw)
    q = F.quat_from_matrix(R)
    assert q[3] >= 0.0
    np.testing.assert_allclose(F.matrix_from_quat(q), R, atol=1e-9)
    r2, p2, y2 = F.rpy_from_rotation(R)
    np.testing.assert_allclose(F.rotation_from_rpy(r2, p2, y2), R, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(angles, angles, st.floats(-50, 50), st.floats(-50, 50))
def test_inverse_and_quat_multiply_agree_with_matrices(yaw_a, yaw_b, x, y):
    A = F.pose_2d(x, y, yaw_a)
    np.testing.assert_allclose(F.invert(A) @ A, np.eye(4), atol=1e-9)
    qa, qb = F.quat_from_yaw(yaw_a), F.quat_from_yaw(yaw_b)
    R = F.matrix_from_quat(F.quat_multiply(qa, qb))
    np.testing.assert_allclose(R, F.rot_z(yaw_a) @ F.rot_z(yaw_b), atol=1e-9)
    assert F.quat_angle_between(qa, qa) < 1e-6


def test_batch_pose_matrices_match_single():
    pos = np.array([[1.0, 2.0, 0.0], [-3.0, 4.0, 1.0]])
    q = np.stack([F.quat_from_yaw(0.3), F.quat_from_yaw(-2.0)])
    T = F.batch_pose_matrices(pos, q)
    for i in range(2):
        np.testing.assert_allclose(T[i], F.transform_from_pose(pos[i], q[i]), atol=1e-12)


def test_footprint_corners_follow_yaw():
    corners = F.footprint_corners(10.0, 5.0, np.pi / 2, 2.0, 1.0)
    assert np.allclose(corners[0], [9.0, 7.0])  # front-left: forward is +y, left is -x
    assert np.allclose(corners.mean(axis=0), [10.0, 5.0])


def test_footprint_corners_are_the_transformed_body_rectangle():
    """Counter-clockwise from front-left, the body-frame rectangle carried by the planar pose, broadcast over bodies."""
    x, y, yaw = np.array([1.0, -3.0]), np.array([2.0, 0.5]), np.array([0.3, -2.0])
    corners = F.footprint_corners(x, y, yaw, np.array([2.0, 0.4]), np.array([1.0, 0.3]))
    assert corners.shape == (2, 4, 2)
    for k, (hl, hw) in enumerate(((2.0, 1.0), (0.4, 0.3))):
        local = np.array([[hl, hw, 0.0], [-hl, hw, 0.0], [-hl, -hw, 0.0], [hl, -hw, 0.0]])
        want = F.transform_points(F.pose_2d(x[k], y[k], yaw[k]), local)[:, :2]
        assert np.allclose(corners[k], want, atol=1e-12)
