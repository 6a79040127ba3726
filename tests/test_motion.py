"""PoseTrack interpolation, presence, ranges and the trace → track conversion (SPEC §2, §7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simready.world import frames as F
from simready.world.motion import PoseTrack, TrackRangeError, tracks_from_ticks


def circle_track(radius_m: float = 10.0, yaw_rate_rps: float = 0.5, dt_s: float = 0.02, t_end_s: float = 2.0) -> PoseTrack:
    """A body driving a circle at constant speed, heading tangent; quaternions [x, y, z, w]."""
    t = np.round(np.arange(0.0, t_end_s + dt_s / 2, dt_s), 12)
    yaw = yaw_rate_rps * t
    pos = np.stack([radius_m * np.sin(yaw), radius_m * (1 - np.cos(yaw)), np.zeros_like(t)], axis=1)
    vel = np.stack([radius_m * yaw_rate_rps * np.cos(yaw), radius_m * yaw_rate_rps * np.sin(yaw), 0 * t], axis=1)
    return PoseTrack(t, pos, F.quat_from_yaw(yaw), vel, np.tile([0.0, 0.0, yaw_rate_rps], (len(t), 1)))


def test_constant_track_is_static_and_defined_at_any_time():
    T = F.pose_2d(3.0, -2.0, 0.7, 0.5)
    track = PoseTrack.constant(T)
    assert track.is_static and track.is_constant
    np.testing.assert_allclose(track.poses_at([-100.0, 0.0, 1e6]), np.stack([T] * 3), atol=1e-12)
    v, w = track.twist_at(5.0)
    assert not v.any() and not w.any()


def test_knots_are_reproduced_exactly_with_their_twist():
    track = circle_track()
    smp = track.sample(track.t_s)
    np.testing.assert_allclose(smp.position_m, track.position_m, atol=1e-12)
    np.testing.assert_allclose(smp.velocity_mps, track.velocity_mps, atol=1e-12)
    np.testing.assert_allclose(smp.angular_velocity_rps, track.angular_velocity_rps, atol=1e-12)
    assert np.all(np.abs(np.sum(smp.quat_xyzw * track.quat_xyzw, axis=1)) > 1 - 1e-12)


def test_hermite_follows_the_circle_between_ticks():
    """Hermite with the recorded velocities stays on the arc (chord interpolation would cut inside)."""
    track = circle_track(radius_m=10.0, yaw_rate_rps=0.5)
    t = np.linspace(0.0, 2.0, 777)
    yaw = 0.5 * t
    exact = np.stack([10 * np.sin(yaw), 10 * (1 - np.cos(yaw)), 0 * t], axis=1)
    T = track.poses_at(t)
    assert np.abs(T[:, :3, 3] - exact).max() < 1e-6
    np.testing.assert_allclose(np.arctan2(T[:, 1, 0], T[:, 0, 0]), yaw, atol=1e-9)
    v, _ = track.twists_at(t)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 5.0, atol=1e-4)


def test_slerp_halfway_is_half_the_rotation():
    track = PoseTrack([0.0, 1.0], np.zeros((2, 3)), [F.quat_from_yaw(0.0), F.quat_from_yaw(1.2)], np.zeros((2, 3)),
                      np.zeros((2, 3)))
    np.testing.assert_allclose(track.sample([0.25, 0.5]).quat_xyzw, F.quat_from_yaw([0.3, 0.6]), atol=1e-12)


def test_hemisphere_flip_does_not_take_the_long_way():
    """Two samples of nearly the same yaw, stored with opposite quaternion signs."""
    q_a = F.quat_from_yaw(0.1)
    q_b = -F.quat_from_yaw(0.2)
    track = PoseTrack([0.0, 1.0], np.zeros((2, 3)), [q_a, q_b], np.zeros((2, 3)), np.zeros((2, 3)))
    assert abs(F.yaw_of(track.pose_at(0.5)) - 0.15) < 1e-12


def test_out_of_range_needs_clamp():
    track = circle_track(t_end_s=1.0)
    with pytest.raises(TrackRangeError):
        track.pose_at(1.5)
    with pytest.raises(TrackRangeError):
        track.poses_at([-0.1, 0.5])
    np.testing.assert_allclose(track.pose_at(1.5, clamp=True), track.pose_at(1.0), atol=1e-12)
    track.pose_at(1.0 + 1e-12)  # float rounding at the end is not an error


def test_absent_tick_removes_geometry_from_both_neighbouring_intervals():
    t = np.arange(5) * 0.1
    present = np.array([True, True, False, True, True])
    pos = np.zeros((5, 3))
    pos[2] = np.nan  # an absent row carries no state
    track = PoseTrack(t, pos, np.tile([0, 0, 0, 1.0], (5, 1)), np.zeros((5, 3)), np.zeros((5, 3)), present)
    q = np.array([0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4])
    np.testing.assert_array_equal(track.present_at(q), [True, True, False, False, False, True, True, True])
    assert not track.is_static
    assert np.all(np.isfinite(track.poses_at(q)))


def ticks_frame() -> pd.DataFrame:
    rows = []
    for tick in range(4):
        t = tick * 0.5
        for actor, x0, v in (("s/actor:b", 0.0, 2.0), ("s/actor:a", 10.0, -1.0)):
            q = F.quat_from_yaw(0.0)
            rows.append(dict(tick=tick, t=t, actor_id=actor, x=x0 + v * t, y=0.0, z=0.0, qx=q[0], qy=q[1], qz=q[2],
                             qw=q[3], vx=v, vy=0.0, vz=0.0, wx=0.0, wy=0.0, wz=0.0, speed_mps=abs(v), lane="l0",
                             s=0.0, present=not (actor == "s/actor:a" and tick == 3)))
    return pd.DataFrame(rows)


def test_tracks_from_ticks_is_order_independent_and_keeps_presence():
    df = ticks_frame()
    shuffled = df.sample(frac=1.0, random_state=3)
    a, b = tracks_from_ticks(df), tracks_from_ticks(shuffled)
    assert sorted(a) == ["s/actor:a", "s/actor:b"]
    for k in a:
        np.testing.assert_array_equal(a[k].t_s, b[k].t_s)
        np.testing.assert_array_equal(a[k].position_m, b[k].position_m)
    np.testing.assert_allclose(a["s/actor:b"].pose_at(0.75)[:3, 3], [1.5, 0.0, 0.0], atol=1e-12)
    assert a["s/actor:a"].present_at([1.0])[0] and not a["s/actor:a"].present_at([1.25])[0]


def test_tracks_from_ticks_names_missing_columns():
    with pytest.raises(ValueError, match="qw"):
        tracks_from_ticks(ticks_frame().drop(columns=["qw"]))
