"""Body trajectories as continuous-time pose tracks (SPEC §2, §7).

The trace records one state per tick; sensors sample the world *between*
ticks (a rolling-shutter row, a LiDAR beam). ``PoseTrack`` is the one way to
ask "where is this body at time t": position by cubic Hermite interpolation
through the recorded positions *and velocities* (so the interpolated motion
honours the recorded twist at every tick instead of cutting corners), and
rotation by the same cubic Hermite on the rotation vector through the
recorded quaternions *and angular velocities*: between ticks i and i+1
(interval h, s = (t − t_i)/h), ``R(s) = R_i · Exp(φ(s))`` with φ(0) = 0,
φ(1) = Log(R_iᵀ R_{i+1}) (the short way round), φ'(0) = h·R_iᵀ ω_i and
φ'(1) = h·J_r(φ(1))⁻¹ R_{i+1}ᵀ ω_{i+1}.

Why not slerp: slerp turns at one constant rate between two ticks, while
the recorded angular velocity changes from ω_i to ω_{i+1}; a motion field
computed from the interpolated twist then disagreed with the image motion
of the rendered (slerp) poses by up to ~100 px/s at a kinematic-v1 yaw-rate
step (1280 px wide, 90° camera). Now the twist between ticks is the exact
derivative of the interpolated pose, ``ω(s) = R_i · J_l(φ(s)) · φ'(s) / h``
(world frame), and at a tick it is the recorded one. With a constant
rate consistent with the quaternions (ω_i = ω_{i+1} = Log(R_iᵀ R_{i+1})/h,
body or world frame alike) this is exactly slerp. For planar motion (yaw
only) it is the cubic Hermite of the yaw through the recorded yaws and yaw
rates. How far recorded rates may stray from the quaternions' steps is
:data:`ANGULAR_RATE_TOLERANCE_RPS` (:meth:`PoseTrack.angular_rate_excess_rps`).

Frames and units: positions in metres in the world frame, velocities in m/s
in the world frame (of the body origin), angular velocities in rad/s in the
world frame, times in seconds. Quaternions are ``[x, y, z, w]``.

Presence: a body whose ``present`` flag is false at a tick has no geometry
there. Between two ticks it is present only if present at both, so it never
appears half-way through a spawn or despawn interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simready.world.frames import Mat4, batch_pose_matrices, quat_from_matrix

if TYPE_CHECKING:  # pandas is only needed by tracks_from_ticks' caller
    import pandas as pd

FloatArray = NDArray[np.float64]

#: Slack, in seconds, for query times that sit on a track end up to float rounding.
TIME_EPS_S = 1e-9

TICK_COLUMNS = ("tick", "t", "actor_id", "x", "y", "z", "qx", "qy", "qz", "qw",
                "vx", "vy", "vz", "wx", "wy", "wz", "present")


#: Columns of a segment table row: Hermite position (0:12), start quaternion (12:16), rotation-vector Hermite
#: coefficients in the start body frame (16:25), start rotation matrix row-major (25:34), interval length h (34).
_Q0, _PHI, _R0, _H, _COLUMNS = 12, 16, 25, 34, 35

#: A trace's recorded angular velocity and its quaternion steps agree when, over every tick interval, the
#: mean rate of the quaternion step (Log(R_iᵀ R_{i+1})/h, world frame) lies between the recorded rates at the
#: interval's ends, up to this (rad/s, per component). Between the ends, not at their mean: a rate that is
#: piecewise constant along the path (kinematic-v1's chord heading) jumps inside an interval, and the step's
#: mean rate is then any value between the two. kinematic-v1 strays up to 8.4e-5 rad/s on the signalized
#: left turn (the speed changing within a tick); an independent check found dynamic-v1's steps up to 9.6e-4 rad/s
#: from the mean of its recorded rates. dynamic-v1 holds it outside recorded contacts (6.6e-11 rad/s on that left
#: turn); within a contact's window an impulse inside the tick can move the step's mean rate anywhere (the same
#: shuttle's wheels striking a kerb: 0.04 rad/s outside the interval), which the contact's event explains.
ANGULAR_RATE_TOLERANCE_RPS = 1e-3
#: Below this angle (rad) the rotation series use their Taylor expansions (the closed forms lose precision).
_SMALL_ANGLE_RAD = 1e-3


#: Empty arguments of the compiled rotation pass when no twist is asked for.
_NO_ROWS3 = np.zeros((0, 3))
_NO_ROWS = np.zeros(0)


def _cross(a: FloatArray, b: FloatArray) -> FloatArray:
    """Row-wise a × b of (N, 3) arrays."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def _qmul(a: FloatArray, b: FloatArray) -> FloatArray:
    """Row-wise Hamilton product a ⊗ b of (N, 4) quaternions ``[x, y, z, w]``."""
    ax, ay, az, aw = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    bx, by, bz, bw = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz], axis=1)


def _rotation_log(q0: FloatArray, q1: FloatArray) -> FloatArray:
    """(N, 3) rotation vector φ with ``R0 · Exp(φ) = R1`` (body frame of q0), the short way (|φ| ≤ π).

    Inputs are hemisphere-continuous, so the relative quaternion has w ≥ 0.
    """
    rel = _qmul(q0 * np.array([-1.0, -1.0, -1.0, 1.0]), q1)
    n = np.sqrt(np.sum(rel[:, :3] * rel[:, :3], axis=1))
    w = np.abs(rel[:, 3])
    theta = 2.0 * np.arctan2(n, w)
    # θ/n → 2/w as n → 0 (|rel| = 1, so w → 1 there).
    ratio = np.where(n > 1e-12, theta / np.where(n > 1e-12, n, 1.0), 2.0 / np.maximum(w, 1e-300))
    return np.where(rel[:, 3:4] < 0.0, -1.0, 1.0) * rel[:, :3] * ratio[:, None]


def _half_series(theta: FloatArray) -> FloatArray:
    """``sin(θ/2)/θ`` for the exponential map."""
    small = theta < _SMALL_ANGLE_RAD
    t = np.where(small, 1.0, theta)
    return np.where(small, 0.5 - theta * theta / 48.0, np.sin(0.5 * t) / t)


def _jacobian_series(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``((1 − cos θ)/θ², (θ − sin θ)/θ³)`` for the left Jacobian."""
    small = theta < _SMALL_ANGLE_RAD
    t = np.where(small, 1.0, theta)
    t2 = theta * theta
    a = np.where(small, 0.5 - t2 / 24.0, (1.0 - np.cos(t)) / (t * t))
    b = np.where(small, 1.0 / 6.0 - t2 / 120.0, (t - np.sin(t)) / (t * t * t))
    return a, b


def _rotate(R_flat: FloatArray, v: FloatArray) -> FloatArray:
    """Row-wise R @ v for (N, 9) row-major rotation matrices and (N, 3) vectors."""
    R = R_flat.reshape(-1, 3, 3)
    return np.einsum("nij,nj->ni", R, v)  # type: ignore[no-any-return]


class TrackRangeError(ValueError):
    """A pose was asked for outside a track's recorded time range without ``clamp``."""


def _frozen(a: ArrayLike, dtype: type, shape_tail: tuple[int, ...]) -> NDArray[Any]:
    arr: NDArray[Any] = np.array(a, dtype=dtype, copy=True)
    arr = arr.reshape((-1,) + shape_tail)
    arr.setflags(write=False)
    return arr


def _continuous_hemisphere(q: FloatArray) -> FloatArray:
    """Flip signs so consecutive quaternions have a non-negative dot (shortest slerp)."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    out = q.copy()
    for i in range(1, len(out)):
        if np.dot(out[i - 1], out[i]) < 0.0:
            out[i] = -out[i]
    return out


@dataclass(frozen=True)
class TrackSample:
    """Interpolated state of one track at M query times (world frame, SI units).

    Attributes:
        position_m: (M, 3) body origin position.
        quat_xyzw: (M, 4) orientation, ``[x, y, z, w]``.
        velocity_mps: (M, 3) velocity of the body origin (Hermite derivative).
        angular_velocity_rps: (M, 3) angular velocity: the derivative of the interpolated rotation
            (the recorded value at a tick).
        present: (M,) whether the body has geometry at that time.
    """

    position_m: FloatArray
    quat_xyzw: FloatArray
    velocity_mps: FloatArray
    angular_velocity_rps: FloatArray
    present: NDArray[np.bool_]

    def matrices(self, compiled: bool = True) -> NDArray[np.float64]:
        """(M, 4, 4) ``T_world_body`` transforms (``compiled``: one pass of
        :func:`simready.world.motion_kernels.pose_matrices`, the same bits as
        :func:`simready.world.frames.batch_pose_matrices`)."""
        if compiled:
            from simready.world.motion_kernels import pose_matrices  # heavy: numba, only for the compiled path

            return pose_matrices(np.ascontiguousarray(self.position_m, np.float64),  # type: ignore[no-any-return]
                                 np.ascontiguousarray(self.quat_xyzw, np.float64))
        return batch_pose_matrices(self.position_m, self.quat_xyzw)


@dataclass(frozen=True)
class PoseTrack:
    """One body's trajectory in the world frame.

    Attributes:
        t_s: (N,) strictly increasing sample times, seconds.
        position_m: (N, 3) body origin in world, metres.
        quat_xyzw: (N, 4) world-from-body rotation, ``[x, y, z, w]``; signs are
            made hemisphere-continuous on construction.
        velocity_mps: (N, 3) world velocity of the body origin.
        angular_velocity_rps: (N, 3) world angular velocity.
        present: (N,) geometry exists at that sample.

    A one-sample track is *constant*: the same pose at every time, with no
    range limit. That is how static bodies are represented.
    """

    t_s: FloatArray
    position_m: FloatArray
    quat_xyzw: FloatArray
    velocity_mps: FloatArray
    angular_velocity_rps: FloatArray
    present: NDArray[np.bool_] = field(default=None)  # type: ignore[arg-type]
    _segments: FloatArray = field(init=False, repr=False, compare=False)
    _planar: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        t = _frozen(self.t_s, np.float64, ())
        n = len(t)
        if n == 0:
            raise ValueError("a track needs at least one sample")
        if n > 1 and not np.all(np.diff(t) > 0.0):
            raise ValueError("track times must be strictly increasing")
        present = np.ones(n, bool) if self.present is None else np.asarray(self.present, bool).reshape(-1)
        pos = np.array(self.position_m, np.float64).reshape(-1, 3)
        quat = np.array(self.quat_xyzw, np.float64).reshape(-1, 4)
        vel = np.array(self.velocity_mps, np.float64).reshape(-1, 3)
        ang = np.array(self.angular_velocity_rps, np.float64).reshape(-1, 3)
        for name, arr in (("position_m", pos), ("quat_xyzw", quat), ("velocity_mps", vel),
                          ("angular_velocity_rps", ang), ("present", present)):
            if len(arr) != n:
                raise ValueError(f"{name} has {len(arr)} rows, t_s has {n}")
        # Absent samples carry no state; neutral values keep NaNs out of the maths.
        pos[~present], vel[~present], ang[~present] = 0.0, 0.0, 0.0
        quat[~present] = [0.0, 0.0, 0.0, 1.0]
        for name, arr in (("position_m", pos), ("quat_xyzw", quat), ("velocity_mps", vel),
                          ("angular_velocity_rps", ang)):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} has non-finite values at present samples")
        object.__setattr__(self, "t_s", t)
        object.__setattr__(self, "position_m", _frozen(pos, np.float64, (3,)))
        object.__setattr__(self, "quat_xyzw", _frozen(_continuous_hemisphere(quat), np.float64, (4,)))
        object.__setattr__(self, "velocity_mps", _frozen(vel, np.float64, (3,)))
        object.__setattr__(self, "angular_velocity_rps", _frozen(ang, np.float64, (3,)))
        object.__setattr__(self, "present", _frozen(present, np.bool_, ()))
        object.__setattr__(self, "_segments", self._segment_table())
        # Turning about z only (every ground body of a trace): the rotation vector stays on z, so sample()
        # takes the yaw Hermite directly (the same values, a third of the numpy calls).
        object.__setattr__(self, "_planar", not (np.any(self.quat_xyzw[:, :2]) or np.any(self.angular_velocity_rps[:, :2])))

    def _segment_table(self) -> FloatArray:
        """Per-interval coefficients, one row per interval, so a query gathers one row.

        Columns: cubic Hermite position in s = (t − t_i)/h as c0 + c1·s + c2·s² + c3·s³
        (0:12), start quaternion (12:16), the rotation vector's Hermite
        φ(s) = c1·s + c2·s² + c3·s³ in the start body frame (16:25), the
        start rotation matrix (25:34), interval length h (34). See the module
        doc for the end conditions; ``J_r(φ)⁻¹ v = v + ½ φ×v + c·φ×(φ×v)``
        with ``c = 1/θ² − cot(θ/2)/(2θ)`` (1/12 + θ²/720 for small θ).
        """
        if len(self.t_s) < 2:
            return np.zeros((0, _COLUMNS))
        h = np.diff(self.t_s)[:, None]
        p0, p1 = self.position_m[:-1], self.position_m[1:]
        m0, m1 = self.velocity_mps[:-1] * h, self.velocity_mps[1:] * h
        q0, q1 = self.quat_xyzw[:-1], self.quat_xyzw[1:]  # hemisphere-continuous already
        R = batch_pose_matrices(np.zeros((len(self.t_s), 3)), self.quat_xyzw)[:, :3, :3]
        R0, R1 = R[:-1], R[1:]
        phi1 = _rotation_log(q0, q1)
        w0 = np.einsum("nji,nj->ni", R0, self.angular_velocity_rps[:-1]) * h  # h·R0ᵀω0
        w1 = np.einsum("nji,nj->ni", R1, self.angular_velocity_rps[1:]) * h  # h·R1ᵀω1
        theta = np.sqrt(np.sum(phi1 * phi1, axis=1))
        small = theta < _SMALL_ANGLE_RAD
        t = np.where(small, 1.0, theta)
        c = np.where(small, 1.0 / 12.0 + theta * theta / 720.0,
                     1.0 / (t * t) - np.cos(0.5 * t) / (np.sin(0.5 * t) * 2.0 * t))[:, None]
        cross = _cross(phi1, w1)
        w1 = w1 + 0.5 * cross + c * _cross(phi1, cross)  # h·J_r(φ1)⁻¹ R1ᵀω1
        table = np.concatenate([p0, m0, -3 * p0 - 2 * m0 + 3 * p1 - m1, 2 * p0 + m0 - 2 * p1 + m1,
                                q0, w0, 3 * phi1 - 2 * w0 - w1, -2 * phi1 + w0 + w1, R0.reshape(-1, 9), h], axis=1)
        table.setflags(write=False)
        return table

    # --- construction -----------------------------------------------------

    @classmethod
    def constant(cls, T_world_body: ArrayLike | None = None) -> "PoseTrack":
        """A static body: one pose for all time (identity if none given)."""
        T = np.eye(4) if T_world_body is None else np.asarray(T_world_body, np.float64)
        return cls(
            t_s=np.zeros(1),
            position_m=T[:3, 3][None],
            quat_xyzw=quat_from_matrix(T[:3, :3])[None],
            velocity_mps=np.zeros((1, 3)),
            angular_velocity_rps=np.zeros((1, 3)),
        )

    # --- properties -------------------------------------------------------

    @property
    def is_constant(self) -> bool:
        """True for a one-sample track (static body, defined at every time)."""
        return len(self.t_s) == 1

    @property
    def is_static(self) -> bool:
        """True when the body never moves and is always present."""
        if self.is_constant:  # one sample (a street's thousands of static bodies): present or not
            return bool(self.present[0])
        if not np.all(self.present):
            return False
        return bool(
            np.all(self.position_m == self.position_m[0])
            and np.all(np.abs(np.sum(self.quat_xyzw * self.quat_xyzw[0], axis=1)) == 1.0)
            and not np.any(self.velocity_mps)
            and not np.any(self.angular_velocity_rps)
        )

    @property
    def t_start(self) -> float:
        return float(self.t_s[0])

    @property
    def t_end(self) -> float:
        return float(self.t_s[-1])

    # --- queries ----------------------------------------------------------

    def sample(self, t_s: ArrayLike, *, clamp: bool = False, compiled: bool = True) -> TrackSample:
        """Interpolated state at each query time (vectorized).

        Raises ``TrackRangeError`` for times outside ``[t_start, t_end]``
        unless ``clamp`` (then the end state is held, with its recorded twist).
        A track turning about z only is sampled by two compiled passes
        (:mod:`simready.world.motion_kernels`) that repeat the numpy steps
        below bit for bit, any other by two more (:meth:`_spatial_sample`);
        ``compiled=False``: the numpy steps.
        """
        t = np.asarray(t_s, np.float64).reshape(-1)
        if self.is_constant:
            m = len(t)
            return TrackSample(
                np.broadcast_to(self.position_m, (m, 3)).copy(),
                np.broadcast_to(self.quat_xyzw, (m, 4)).copy(),
                np.broadcast_to(self.velocity_mps, (m, 3)).copy(),
                np.broadcast_to(self.angular_velocity_rps, (m, 3)).copy(),
                np.broadcast_to(self.present, (m,)).copy(),
            )
        t = self._checked_times(t, clamp)
        ts = self.t_s
        if self._planar and compiled:
            # heavy: numba, only for the compiled path
            from simready.world.motion_kernels import planar_hermites, planar_quaternions

            pos, vel, ang, present, half, qz, qw = planar_hermites(t, ts, self._segments, self.present, TIME_EPS_S,
                                                                   _PHI, _Q0, _H)
            return TrackSample(pos, planar_quaternions(np.sin(half), np.cos(half), qz, qw), vel, ang, present)
        if compiled:
            return self._spatial_sample(t)
        i, seg, h, s, pos = self._hermite(t)
        c1, c2, c3 = seg[:, 3:6], seg[:, 6:9], seg[:, 9:12]
        vel = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h[:, None]
        if self._planar:
            quat, ang = self._planar_rotation(seg, s[:, 0], h)
        else:
            r1, r2, r3 = seg[:, _PHI:_PHI + 3], seg[:, _PHI + 3:_PHI + 6], seg[:, _PHI + 6:_PHI + 9]
            phi, theta, quat = self._rotation(seg, s)
            dphi = r1 + s * (2.0 * r2 + 3.0 * s * r3)
            a, b = _jacobian_series(theta)
            cross = _cross(phi, dphi)
            jl = dphi + a[:, None] * cross + b[:, None] * _cross(phi, cross)  # J_l(φ)·φ'
            ang = _rotate(seg[:, _R0:_R0 + 9], jl) / h[:, None]
        pres0, pres1 = self.present[i], self.present[i + 1]
        on0, on1 = t - ts[i] <= TIME_EPS_S, ts[i + 1] - t <= TIME_EPS_S
        present = np.where(on0, pres0, np.where(on1, pres1, pres0 & pres1))
        return TrackSample(pos, quat, vel, ang, present)

    def _spatial_sample(self, t: FloatArray) -> TrackSample:
        """:meth:`sample` of a 3-D track at checked times by two compiled passes
        (:func:`~simready.world.motion_kernels.spatial_hermites`, ``spatial_rotations``) around numpy's sines and
        cosines, and numpy's einsum for the angular velocity's rotation into the world (its order of sums): the
        numpy steps' bits, a handful of numpy calls instead of some sixty."""
        from simready.world.motion_kernels import spatial_hermites, spatial_rotations  # heavy: numba

        i, pos, phi, theta, closed, vel, dphi, present = spatial_hermites(
            t, self.t_s, self._segments, self.present, TIME_EPS_S, _PHI, _H, _SMALL_ANGLE_RAD, True)
        quat, jl = spatial_rotations(i, self._segments, _Q0, phi, theta, closed, np.sin(0.5 * closed),
                                     np.cos(0.5 * theta), _SMALL_ANGLE_RAD, dphi, np.cos(closed), np.sin(closed))
        seg = np.take(self._segments, i, axis=0)
        ang = _rotate(seg[:, _R0:_R0 + 9], jl) / seg[:, _H][:, None]
        return TrackSample(pos, quat, vel, ang, present)

    def _spatial_poses(self, t: FloatArray) -> NDArray[np.float64]:
        """:meth:`poses_at` of a 3-D track at checked times: :meth:`_spatial_sample`'s position and rotation
        passes without the twists, then the transforms."""
        from simready.world.motion_kernels import pose_matrices, spatial_hermites, spatial_rotations  # heavy: numba

        i, pos, phi, theta, closed, _, _, _ = spatial_hermites(
            t, self.t_s, self._segments, self.present, TIME_EPS_S, _PHI, _H, _SMALL_ANGLE_RAD, False)
        quat, _ = spatial_rotations(i, self._segments, _Q0, phi, theta, closed, np.sin(0.5 * closed),
                                    np.cos(0.5 * theta), _SMALL_ANGLE_RAD, _NO_ROWS3, _NO_ROWS, _NO_ROWS)
        return pose_matrices(pos, quat)  # type: ignore[no-any-return]

    def _hermite(self, t: FloatArray) -> tuple[NDArray[np.intp], FloatArray, FloatArray, FloatArray, FloatArray]:
        """Each (checked) time's segment index, segment row, step, position in it (N, 1) and interpolated position."""
        ts = self.t_s
        i = np.clip(np.searchsorted(ts, t, side="right") - 1, 0, len(ts) - 2)
        seg = np.take(self._segments, i, axis=0)
        h = seg[:, _H]
        s = np.clip((t - ts[i]) / h, 0.0, 1.0)[:, None]
        c0, c1, c2, c3 = seg[:, 0:3], seg[:, 3:6], seg[:, 6:9], seg[:, 9:12]
        return i, seg, h, s, c0 + s * (c1 + s * (c2 + s * c3))

    @staticmethod
    def _rotation(seg: FloatArray, s: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """A 3-D track's rotation at ``s``: ``(φ, |φ|, q0 ⊗ Exp(φ))``, the rotation-vector Hermite."""
        r1, r2, r3 = seg[:, _PHI:_PHI + 3], seg[:, _PHI + 3:_PHI + 6], seg[:, _PHI + 6:_PHI + 9]
        phi = s * (r1 + s * (r2 + s * r3))
        theta = np.sqrt(np.sum(phi * phi, axis=1))
        exp_q = np.concatenate([phi * _half_series(theta)[:, None], np.cos(0.5 * theta)[:, None]], axis=1)
        quat = _qmul(seg[:, _Q0:_Q0 + 4], exp_q)
        quat /= np.sqrt(np.sum(quat * quat, axis=1, keepdims=True))
        return phi, theta, quat

    @staticmethod
    def _planar_rotation(seg: FloatArray, s: FloatArray, h: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The rotation and angular velocity of a track turning about z only: the yaw Hermite
        ψ(s) = c1·s + c2·s² + c3·s³ (the z row of the rotation-vector coefficients), q = q0 ⊗ (z, ψ), ω = ψ'/h·z."""
        c1, c2, c3 = seg[:, _PHI + 2], seg[:, _PHI + 5], seg[:, _PHI + 8]
        half = 0.5 * (s * (c1 + s * (c2 + s * c3)))
        sz, cz = np.sin(half), np.cos(half)
        qz, qw = seg[:, _Q0 + 2], seg[:, _Q0 + 3]
        quat = np.zeros((len(s), 4))
        quat[:, 2] = qw * sz + qz * cz
        quat[:, 3] = qw * cz - qz * sz
        quat /= np.sqrt(quat[:, 2:3] * quat[:, 2:3] + quat[:, 3:4] * quat[:, 3:4])
        ang = np.zeros((len(s), 3))
        ang[:, 2] = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h
        return quat, ang

    def _checked_times(self, t: FloatArray, clamp: bool) -> FloatArray:
        lo, hi = self.t_start, self.t_end
        if clamp:
            return np.clip(t, lo, hi)
        if len(t) and (t.min() < lo - TIME_EPS_S or t.max() > hi + TIME_EPS_S):
            raise TrackRangeError(
                f"query times [{t.min():.6f}, {t.max():.6f}] s outside track range [{lo:.6f}, {hi:.6f}] s"
                " (pass clamp=True to hold the end poses)"
            )
        return np.clip(t, lo, hi)

    def poses_at(self, t_s: ArrayLike, *, clamp: bool = False, compiled: bool = True) -> NDArray[np.float64]:
        """(M, 4, 4) ``T_world_body`` at each query time: :meth:`sample`'s, a 3-D track's without the twists it
        does not need (compiled, :meth:`_spatial_poses`; ``compiled=False``: half of :meth:`sample`'s numpy
        steps; the same bits)."""
        t = np.asarray(t_s, np.float64).reshape(-1)
        if self.is_constant or self._planar:
            return self.sample(t, clamp=clamp, compiled=compiled).matrices(compiled=compiled)
        if compiled:
            return self._spatial_poses(self._checked_times(t, clamp))
        _, seg, _, s, pos = self._hermite(self._checked_times(t, clamp))
        from simready.world.motion_kernels import pose_matrices  # heavy: numba, as TrackSample.matrices

        return pose_matrices(np.ascontiguousarray(pos, np.float64),  # type: ignore[no-any-return]
                             np.ascontiguousarray(self._rotation(seg, s)[2], np.float64))

    def pose_at(self, t_s: float, *, clamp: bool = False) -> Mat4:
        """4×4 ``T_world_body`` at one time."""
        return self.poses_at([t_s], clamp=clamp)[0]  # type: ignore[no-any-return]

    def twists_at(self, t_s: ArrayLike, *, clamp: bool = False) -> tuple[FloatArray, FloatArray]:
        """World velocity of the body origin (M, 3) m/s and world angular velocity (M, 3) rad/s.

        At tick times these are the recorded values; in between, they are
        the derivatives of the interpolated position and rotation (module
        doc), so a motion field computed from them is the derivative of
        what a renderer posing the body at those times sees.
        """
        smp = self.sample(t_s, clamp=clamp)
        return smp.velocity_mps, smp.angular_velocity_rps

    def twist_at(self, t_s: float, *, clamp: bool = False) -> tuple[FloatArray, FloatArray]:
        v, w = self.twists_at([t_s], clamp=clamp)
        return v[0], w[0]

    def angular_rate_excess_rps(self) -> FloatArray:
        """(N − 1,) how far each interval's quaternion step strays from its recorded angular velocities, rad/s.

        The step's mean rate (world frame) ``ω̄ = R_i · Log(R_iᵀ R_{i+1}) / h``
        compared per component with the interval ``[min(ω_i, ω_{i+1}),
        max(ω_i, ω_{i+1})]``: the largest distance outside it (0 inside).
        Intervals next to an absent sample give 0. A trace is consistent
        when every value is at most :data:`ANGULAR_RATE_TOLERANCE_RPS`.
        """
        if len(self.t_s) < 2:
            return np.zeros(0)
        h = np.diff(self.t_s)[:, None]
        R0 = batch_pose_matrices(np.zeros((len(h), 3)), self.quat_xyzw[:-1])[:, :3, :3]
        mean = np.einsum("nij,nj->ni", R0, _rotation_log(self.quat_xyzw[:-1], self.quat_xyzw[1:])) / h
        w0, w1 = self.angular_velocity_rps[:-1], self.angular_velocity_rps[1:]
        out = np.maximum(np.maximum(np.minimum(w0, w1) - mean, mean - np.maximum(w0, w1)), 0.0).max(axis=1)
        return np.where(self.present[:-1] & self.present[1:], out, 0.0)

    def present_at(self, t_s: ArrayLike, *, clamp: bool = False) -> NDArray[np.bool_]:
        return self.sample(t_s, clamp=clamp).present

    def present_in(self, t0_s: float, t1_s: float) -> NDArray[np.float64]:
        """Sample times (knots inside plus both ends) in [t0, t1] where the body is present."""
        if self.is_constant:
            return np.array([t0_s, t1_s]) if self.present[0] else np.zeros(0)
        lo, hi = max(t0_s, self.t_start), min(t1_s, self.t_end)
        if lo > hi:
            return np.zeros(0)
        inner = self.t_s[(self.t_s > lo) & (self.t_s < hi)]
        t = np.concatenate([[lo], inner, [hi]])
        return t[self.sample(t).present]


def tracks_from_ticks(df: "pd.DataFrame") -> dict[str, PoseTrack]:
    """SPEC §7 ticks table (one row per tick × actor) → ``{actor_id: PoseTrack}``.

    Rows are sorted by ``t`` per actor here, so the caller's order does not
    matter; ``present`` false rows keep their time but carry no geometry.
    Quaternion columns are ``qx, qy, qz, qw`` (``[x, y, z, w]``).
    """
    sorted_ticks = SortedTicks(df)
    return {actor: sorted_ticks.track(actor) for actor in sorted_ticks.actors}


class SortedTicks:
    """A SPEC §7 ticks table's rows sorted by actor and time, each actor's :class:`PoseTrack` built when asked
    (:func:`tracks_from_ticks` asks for all; a reader that needs a few actors of a busy street builds those)."""

    def __init__(self, df: "pd.DataFrame") -> None:
        missing = [c for c in TICK_COLUMNS if c not in df.columns]
        if missing:
            raise ValueError(f"ticks table lacks columns {missing}")
        # One stable sort by (actor, t) and a gather per column, not a pandas group and four column selections per
        # actor (half the time of building a trace's tracks; the rest is PoseTrack's own). Each actor's rows come in
        # the order a stable sort by t within its group gives them, the actors sorted by id, each block (rows,
        # columns) laid out as pandas hands it over (column after column), so the tracks are the same arrays.
        actors, codes = np.unique(df["actor_id"].to_numpy(dtype=object), return_inverse=True)
        self._t = df["t"].to_numpy(np.float64)
        self._order = np.lexsort((self._t, codes))
        ends = np.searchsorted(codes[self._order], np.arange(1, len(actors) + 1))
        #: The actor ids, sorted, and each one's run of rows in the sorted order.
        self.actors = [str(a) for a in actors]
        self._rows = dict(zip(self.actors, zip([0, *ends[:-1].tolist()], ends.tolist())))
        self._blocks = {name: np.stack([df[c].to_numpy(np.float64) for c in cols])
                        for name, cols in (("position_m", ("x", "y", "z")), ("quat_xyzw", ("qx", "qy", "qz", "qw")),
                                           ("velocity_mps", ("vx", "vy", "vz")),
                                           ("angular_velocity_rps", ("wx", "wy", "wz")))}
        self._present = df["present"].to_numpy(bool)

    def track(self, actor: str) -> PoseTrack:
        """``actor``'s track (KeyError for an actor without rows)."""
        start, end = self._rows[actor]
        rows = self._order[start:end]
        return PoseTrack(t_s=self._t[rows], present=self._present[rows],
                         **{name: np.take(block, rows, axis=1).T for name, block in self._blocks.items()})
