"""The compiled sampling of a track turning about z only is bit for bit the numpy steps it replaces: positions,
quaternions, velocities, angular velocities and presence, at knots, between them, at both ends (clamped), and
across absent samples; and so is the compiled sampling of a track that also rolls or pitches."""

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


def _spatial_track(rng: np.random.Generator, n: int = 40, gaps: bool = False, small: bool = False) -> PoseTrack:
    """A track that rolls and pitches too; ``small``: rotation steps and rates below the series' threshold."""
    t = np.cumsum(rng.uniform(0.02, 0.2, n))
    quat = rng.standard_normal((n, 4))
    if small:
        quat = np.tile([0.01, -0.02, 0.3, 0.95], (n, 1)) + rng.standard_normal((n, 4)) * 1e-5
    ang = rng.uniform(-1.0, 1.0, (n, 3)) * (1e-4 if small else 1.0)
    present = np.ones(n, bool)
    if gaps:
        present[rng.choice(n, n // 5, replace=False)] = False
    return PoseTrack(t_s=t, position_m=rng.uniform(-50.0, 50.0, (n, 3)), quat_xyzw=quat,
                     velocity_mps=rng.uniform(-10.0, 10.0, (n, 3)), angular_velocity_rps=ang, present=present)


def test_a_rolling_track_is_sampled_as_the_numpy_steps():
    rng = np.random.default_rng(5)
    base = _planar_track(rng, n=10)
    ang = base.angular_velocity_rps.copy()
    ang[:, 0] = 0.1
    rolling = PoseTrack(t_s=base.t_s, position_m=base.position_m, quat_xyzw=base.quat_xyzw,
                        velocity_mps=base.velocity_mps, angular_velocity_rps=ang)
    tracks = [rolling] + [_spatial_track(rng, n=int(rng.integers(2, 60)), gaps=k % 3 == 1, small=k % 4 == 3)
                          for k in range(24)]
    for track in tracks:
        assert not track._planar
        # numpy's einsum sums in an order of its own that depends on the number of rows: several counts
        for m in (0, 1, 2, 3, 4, 5, 8, 17, 300):
            t = np.sort(rng.uniform(track.t_start, track.t_end, m))
            if m > 3:
                t[:2] = track.t_s[:2]  # knots
            _same(track.sample(t), track.sample(t, compiled=False))
            assert np.array_equal(track.poses_at(t).view(np.uint8), track.poses_at(t, compiled=False).view(np.uint8))
        wide = np.linspace(track.t_start - 1.0, track.t_end + 1.0, 101)
        _same(track.sample(wide, clamp=True), track.sample(wide, clamp=True, compiled=False))
        near = np.concatenate([track.t_s[1:-1] + 5e-10, track.t_s[1:-1] - 5e-10])
        _same(track.sample(near), track.sample(near, compiled=False))


def test_pose_matrices_are_the_numpy_steps():
    from simready.world.frames import batch_pose_matrices
    from simready.world.motion_kernels import pose_matrices

    rng = np.random.default_rng(8)
    q = rng.standard_normal((200_000, 4)) * rng.uniform(0.5, 2.0, (200_000, 1))
    q[:1000, :2] = 0.0  # turning about z only
    q[1000:1100] = [0.0, 0.0, 0.0, 1.0]
    p = rng.uniform(-1e3, 1e3, (200_000, 3))
    assert np.array_equal(pose_matrices(p, q).view(np.uint8), batch_pose_matrices(p, q).view(np.uint8))
