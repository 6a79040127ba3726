"""PoseTrack interpolation, presence, ranges and the trace → track conversion (SPEC §2, §7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simready.world import frames as F
from simready.world.motion import PoseTrack, SortedTicks, TrackRangeError, tracks_from_ticks


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


def test_a_constant_rate_that_matches_the_quaternions_interpolates_as_slerp():
    track = PoseTrack([0.0, 1.0], np.zeros((2, 3)), [F.quat_from_yaw(0.0), F.quat_from_yaw(1.2)], np.zeros((2, 3)),
                      np.tile([0.0, 0.0, 1.2], (2, 1)))
    np.testing.assert_allclose(track.sample([0.25, 0.5]).quat_xyzw, F.quat_from_yaw([0.3, 0.6]), atol=1e-12)
    # Recorded rates that disagree with the step (at rest at both ends): still half way at the middle.
    still = PoseTrack([0.0, 1.0], np.zeros((2, 3)), [F.quat_from_yaw(0.0), F.quat_from_yaw(1.2)], np.zeros((2, 3)),
                      np.zeros((2, 3)))
    np.testing.assert_allclose(still.sample([0.5]).quat_xyzw, F.quat_from_yaw([0.6]), atol=1e-12)


def _random_turning_track(seed: int = 3, n: int = 12, dt: float = 0.05) -> PoseTrack:
    """A 3D tumble: random rotation steps and recorded angular velocities near (not at) the steps' rates."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * dt
    q = [np.array([0.0, 0.0, 0.0, 1.0])]
    for _ in range(n - 1):
        phi = rng.normal(0.0, 0.08, 3)
        a = np.linalg.norm(phi)
        q.append(F.quat_multiply(q[-1], np.append(np.sin(a / 2) * phi / a, np.cos(a / 2))))
    w = rng.normal(0.0, 1.5, (n, 3))
    return PoseTrack(t, rng.normal(0.0, 1.0, (n, 3)), np.array(q), rng.normal(0.0, 1.0, (n, 3)), w)


def test_angular_velocity_is_the_derivative_of_the_interpolated_rotation():
    """Between ticks the twist is d/dt of the interpolated pose (so a motion field matches the rendered poses),
    in 3D too and whatever the recorded rates; at ticks it is the recorded rate."""
    track = _random_turning_track()
    t = np.linspace(0.0, track.t_end, 157)[1:-1]
    eps = 1e-6
    R_hi, R_lo = track.poses_at(t + eps)[:, :3, :3], track.poses_at(t - eps)[:, :3, :3]
    R = track.poses_at(t)[:, :3, :3]
    dR = (R_hi - R_lo) / (2 * eps)
    skew = dR @ np.transpose(R, (0, 2, 1))  # [ω]× = Ṙ Rᵀ (world frame)
    numeric = np.stack([skew[:, 2, 1], skew[:, 0, 2], skew[:, 1, 0]], axis=1)
    np.testing.assert_allclose(track.sample(t).angular_velocity_rps, numeric, atol=2e-6)
    np.testing.assert_allclose(track.sample(track.t_s).angular_velocity_rps, track.angular_velocity_rps, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(track.sample(track.t_s).quat_xyzw * track.quat_xyzw, axis=1)), 1.0,
                               atol=1e-12)


def test_recorded_yaw_rate_agrees_with_the_quaternion_steps_of_a_kinematic_trace():
    """kinematic-v1 on the signalized left turn: every tick's quaternion step has a mean rate between the recorded
    rates at its ends, within ANGULAR_RATE_TOLERANCE_RPS; a rate off by 2e-3 rad/s on one tick is caught."""
    from simready.sim.run import run_simulation
    from simready.testing import demo
    from simready.world.motion import ANGULAR_RATE_TOLERANCE_RPS
    from tests.fixtures.sim import INTERSECTION, catalog, template

    tpl, cat = template(INTERSECTION), catalog()
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "s_in", 2.0, (1.75, -58.0, 1.5707963268), 8.0, role="ego",
                       route=["s_in", "s_to_w", "w_out"], tags=["ego"])
    green = [{"id": "south", "controls": ["s_in"], "offset_s": 0.0, "phases": [{"state": "green", "duration_s": 60.0}]}]
    m = demo.assemble(tpl, cat, "left-turn", [ego], [], clip_s=12.0, warmup_s=1.0, signal_programs=green)
    df = run_simulation(m, tpl, backend="kinematic-v1", catalog=cat).trace.df
    track = tracks_from_ticks(df)["ego"]
    assert np.abs(track.angular_velocity_rps[:, 2]).max() > 0.5  # it does turn
    assert track.angular_rate_excess_rps().max() <= ANGULAR_RATE_TOLERANCE_RPS
    w = np.array(track.angular_velocity_rps)
    k = int(np.argmax(np.abs(w[:, 2])))
    w[k - 1:k + 2, 2] += 2e-3  # three ticks off: the middle intervals' steps no longer fit
    bad = PoseTrack(track.t_s, track.position_m, track.quat_xyzw, track.velocity_mps, w)
    assert bad.angular_rate_excess_rps().max() > ANGULAR_RATE_TOLERANCE_RPS


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


def test_a_3d_tracks_poses_are_its_samples_matrices_bit_for_bit():
    # poses_at skips the twists sample() computes beside the poses: the same bits, at knots, between and clamped.
    track = _random_turning_track(n=40)
    t = np.concatenate([np.linspace(-0.1, 2.1, 1001), track.t_s, [0.0123]])
    assert not track._planar
    np.testing.assert_array_equal(track.poses_at(t, clamp=True), track.sample(t, clamp=True).matrices())


def test_one_actors_track_is_the_same_arrays_as_every_actors():
    df = ticks_frame().sample(frac=1.0, random_state=5)
    alone = SortedTicks(df).track("s/actor:b")
    every = tracks_from_ticks(df)["s/actor:b"]
    for name in ("t_s", "position_m", "quat_xyzw", "velocity_mps", "angular_velocity_rps", "present"):
        a, b = getattr(alone, name), getattr(every, name)
        assert np.array_equal(a, b) and a.strides == b.strides, name


def test_tracks_from_ticks_names_missing_columns():
    with pytest.raises(ValueError, match="qw"):
        tracks_from_ticks(ticks_frame().drop(columns=["qw"]))


def test_the_planar_shortcut_gives_the_general_rotation():
    """A yaw-only track takes the yaw Hermite shortcut; forced through the 3D formulas it gives the same values."""
    rng = np.random.default_rng(5)
    t = np.arange(30) * 0.05
    yaw = np.cumsum(rng.normal(0.0, 0.1, 30))
    w = np.zeros((30, 3))
    w[:, 2] = rng.normal(0.0, 2.0, 30)
    track = PoseTrack(t, rng.normal(0.0, 1.0, (30, 3)), F.quat_from_yaw(yaw), rng.normal(0.0, 1.0, (30, 3)), w)
    general = PoseTrack(t, track.position_m, track.quat_xyzw, track.velocity_mps, w)
    object.__setattr__(general, "_planar", False)
    assert track._planar
    q = np.linspace(0.0, t[-1], 301)
    a, b = track.sample(q), general.sample(q)
    np.testing.assert_allclose(a.quat_xyzw, b.quat_xyzw, atol=1e-13)
    np.testing.assert_allclose(a.angular_velocity_rps, b.angular_velocity_rps, atol=1e-12)


def test_dynamic_angular_rates_agree_with_quaternion_steps_outside_contacts():
    """dynamic-v1 on the same left turn (the shuttle's wheels strike the kerb of the west arm several times):
    outside recorded contacts every tick's quaternion step fits its recorded angular velocities within
    ANGULAR_RATE_TOLERANCE_RPS; inside a contact's window (an impulse within the tick) they need not."""
    from simready.sim.run import run_simulation
    from simready.testing import demo
    from simready.validity.evidence import collisions_from_events
    from simready.validity.gate.inputs import contact_windows, within
    from simready.world.motion import ANGULAR_RATE_TOLERANCE_RPS
    from tests.fixtures.sim import INTERSECTION, catalog, template

    tpl, cat = template(INTERSECTION), catalog()
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "s_in", 2.0, (1.75, -58.0, 1.5707963268), 8.0, role="ego",
                       route=["s_in", "s_to_w", "w_out"], tags=["ego"])
    green = [{"id": "south", "controls": ["s_in"], "offset_s": 0.0, "phases": [{"state": "green", "duration_s": 60.0}]}]
    m = demo.assemble(tpl, cat, "left-turn", [ego], [], clip_s=12.0, warmup_s=1.0, signal_programs=green)
    tr = run_simulation(m, tpl, backend="dynamic-v1", catalog=cat).trace
    track = tracks_from_ticks(tr.df)["ego"]
    excess = track.angular_rate_excess_rps()
    windows = contact_windows(collisions_from_events(tr.events), tr.header["dt"]).get("ego")
    inside = within(track.t_s[:-1], windows) | within(track.t_s[1:], windows)
    assert inside.any() and (~inside).sum() > 300
    assert excess[~inside].max() <= ANGULAR_RATE_TOLERANCE_RPS
