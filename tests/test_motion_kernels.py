"""The compiled sampling of a track turning about z only is bit for bit the numpy steps it replaces: positions,
quaternions, velocities, angular velocities and presence, at knots, between them, at both ends (clamped), and
across absent samples; and a track that also rolls or pitches keeps the numpy path."""

from __future__ import annotations

import numpy as np

from simready.world.motion import PoseTrack


def _planar_track(rng: np.random.Generator, n: int = 40, gaps: bool = False) -> PoseTrack:
    t = np.cumsum(rng.uniform(0.02, 0.2, n))
    yaw = np.cumsum(rng.uniform(-0.3, 0.3, n))
    quat = np.zeros((n, 4))
    quat[:, 2], quat[:, 3] = np.sin(yaw / 2), np.cos(yaw / 2)
    ang = np.zeros((n, 3))
    ang[:, 2] = rng.uniform(-1.0, 1.0, n)
    present = np.ones(n, bool)
    if gaps:
        present[rng.choice(n, n // 5, replace=False)] = False
    return PoseTrack(t_s=t, position_m=rng.uniform(-50.0, 50.0, (n, 3)), quat_xyzw=quat,
                     velocity_mps=rng.uniform(-10.0, 10.0, (n, 3)), angular_velocity_rps=ang, present=present)


def _same(a, b) -> None:
    for name in ("position_m", "quat_xyzw", "velocity_mps", "angular_velocity_rps", "present"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), name  # bits, signed zeros included
    assert np.array_equal(a.matrices().view(np.uint8), b.matrices(compiled=False).view(np.uint8))


def test_planar_sampling_is_the_numpy_steps():
    rng = np.random.default_rng(3)
    for gaps in (False, True):
        track = _planar_track(rng, gaps=gaps)
        assert track._planar
        t = np.concatenate([rng.uniform(track.t_start, track.t_end, 3000), track.t_s,
                            track.t_s[1:-1] + 5e-10, track.t_s[1:-1] - 5e-10, [track.t_start, track.t_end]])
        _same(track.sample(t), track.sample(t, compiled=False))
        wide = np.linspace(track.t_start - 1.0, track.t_end + 1.0, 501)
        _same(track.sample(wide, clamp=True), track.sample(wide, clamp=True, compiled=False))
        _same(track.sample([]), track.sample([], compiled=False))


def test_a_rolling_track_keeps_the_numpy_path():
    rng = np.random.default_rng(5)
    base = _planar_track(rng, n=10)
    ang = base.angular_velocity_rps.copy()
    ang[:, 0] = 0.1
    track = PoseTrack(t_s=base.t_s, position_m=base.position_m, quat_xyzw=base.quat_xyzw,
                      velocity_mps=base.velocity_mps, angular_velocity_rps=ang)
    assert not track._planar
    t = rng.uniform(track.t_start, track.t_end, 100)
    _same(track.sample(t), track.sample(t, compiled=False))


def test_pose_matrices_are_the_numpy_steps():
    from simready.world.frames import batch_pose_matrices
    from simready.world.motion_kernels import pose_matrices

    rng = np.random.default_rng(8)
    q = rng.standard_normal((200_000, 4)) * rng.uniform(0.5, 2.0, (200_000, 1))
    q[:1000, :2] = 0.0  # turning about z only
    q[1000:1100] = [0.0, 0.0, 0.0, 1.0]
    p = rng.uniform(-1e3, 1e3, (200_000, 3))
    assert np.array_equal(pose_matrices(p, q).view(np.uint8), batch_pose_matrices(p, q).view(np.uint8))
