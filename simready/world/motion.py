"""Body trajectories as continuous-time pose tracks (SPEC §2, §7).

The trace records one state per tick; sensors sample the world *between*
ticks (a rolling-shutter row, a LiDAR beam). ``PoseTrack`` is the one way to
ask "where is this body at time t": position by cubic Hermite interpolation
through the recorded positions *and velocities* (so the interpolated motion
honours the recorded twist at every tick instead of cutting corners), and
rotation by slerp between the recorded quaternions (short way round, normalized
lerp below 1e-6 rad where slerp's sine ratio loses precision).

Frames and units: positions in metres in the world frame, velocities in m/s
in the world frame (of the body origin), angular velocities in rad/s in the
world frame, times in seconds. Quaternions are ``[x, y, z, w]``.

Presence: a body whose ``present`` flag is false at a tick has no geometry
there. Between two ticks it is present only if present at both, so it never
appears half-way through a spawn or despawn interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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


_THETA, _INV_SIN, _H, _COLUMNS = 20, 21, 28, 29


class TrackRangeError(ValueError):
    """A pose was asked for outside a track's recorded time range without ``clamp``."""


def _frozen(a: ArrayLike, dtype: type, shape_tail: tuple[int, ...]) -> NDArray:
    arr = np.array(a, dtype=dtype, copy=True)
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
        angular_velocity_rps: (M, 3) angular velocity, linear between ticks.
        present: (M,) whether the body has geometry at that time.
    """

    position_m: FloatArray
    quat_xyzw: FloatArray
    velocity_mps: FloatArray
    angular_velocity_rps: FloatArray
    present: NDArray[np.bool_]

    def matrices(self) -> NDArray[np.float64]:
        """(M, 4, 4) ``T_world_body`` transforms."""
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
    present: NDArray[np.bool_] = field(default=None)  # type: ignore[assignment]
    _segments: FloatArray = field(init=False, repr=False, compare=False)

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

    def _segment_table(self) -> FloatArray:
        """Per-interval coefficients, one row per interval, so a query gathers one row.

        Columns: cubic Hermite position in s = (t − t_i)/h as c0 + c1·s + c2·s² + c3·s³
        (0:12), slerp end quaternions (12:20), angle and 1/sin (20:22), angular
        velocity at the start and its change (22:28), interval length h (28).
        """
        if len(self.t_s) < 2:
            return np.zeros((0, _COLUMNS))
        h = np.diff(self.t_s)[:, None]
        p0, p1 = self.position_m[:-1], self.position_m[1:]
        m0, m1 = self.velocity_mps[:-1] * h, self.velocity_mps[1:] * h
        q0, q1 = self.quat_xyzw[:-1], self.quat_xyzw[1:]  # hemisphere-continuous already
        theta = np.arccos(np.clip(np.sum(q0 * q1, axis=1), -1.0, 1.0))[:, None]
        inv_sin = np.where(theta < 1e-6, 1.0, 1.0 / np.where(theta < 1e-6, 1.0, np.sin(theta)))
        w0, w1 = self.angular_velocity_rps[:-1], self.angular_velocity_rps[1:]
        table = np.concatenate([p0, m0, -3 * p0 - 2 * m0 + 3 * p1 - m1, 2 * p0 + m0 - 2 * p1 + m1,
                                q0, q1, theta, inv_sin, w0, w1 - w0, h], axis=1)
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
        if not np.all(self.present):
            return False
        if self.is_constant:
            return True
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

    def sample(self, t_s: ArrayLike, *, clamp: bool = False) -> TrackSample:
        """Interpolated state at each query time (vectorized).

        Raises ``TrackRangeError`` for times outside ``[t_start, t_end]``
        unless ``clamp`` (then the end state is held, with its recorded twist).
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
        i = np.clip(np.searchsorted(ts, t, side="right") - 1, 0, len(ts) - 2)
        seg = np.take(self._segments, i, axis=0)
        h = seg[:, _H]
        s = np.clip((t - ts[i]) / h, 0.0, 1.0)[:, None]
        c0, c1, c2, c3 = seg[:, 0:3], seg[:, 3:6], seg[:, 6:9], seg[:, 9:12]
        pos = c0 + s * (c1 + s * (c2 + s * c3))
        vel = (c1 + s * (2.0 * c2 + 3.0 * s * c3)) / h[:, None]
        theta, inv_sin = seg[:, _THETA:_THETA + 1], seg[:, _INV_SIN:_INV_SIN + 1]
        small = theta < 1e-6
        w0 = np.where(small, 1.0 - s, np.sin((1.0 - s) * theta) * inv_sin)
        w1 = np.where(small, s, np.sin(s * theta) * inv_sin)
        quat = w0 * seg[:, 12:16] + w1 * seg[:, 16:20]
        quat /= np.sqrt(np.sum(quat * quat, axis=1, keepdims=True))
        ang = seg[:, 22:25] + s * seg[:, 25:28]
        pres0, pres1 = self.present[i], self.present[i + 1]
        on0, on1 = t - ts[i] <= TIME_EPS_S, ts[i + 1] - t <= TIME_EPS_S
        present = np.where(on0, pres0, np.where(on1, pres1, pres0 & pres1))
        return TrackSample(pos, quat, vel, ang, present)

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

    def poses_at(self, t_s: ArrayLike, *, clamp: bool = False) -> NDArray[np.float64]:
        """(M, 4, 4) ``T_world_body`` at each query time."""
        return self.sample(t_s, clamp=clamp).matrices()

    def pose_at(self, t_s: float, *, clamp: bool = False) -> Mat4:
        """4×4 ``T_world_body`` at one time."""
        return self.poses_at([t_s], clamp=clamp)[0]

    def twists_at(self, t_s: ArrayLike, *, clamp: bool = False) -> tuple[FloatArray, FloatArray]:
        """World velocity of the body origin (M, 3) m/s and world angular velocity (M, 3) rad/s.

        At tick times these are exactly the recorded values; in between, the
        velocity is the derivative of the interpolated position and the
        angular velocity is interpolated linearly (slerp implies a constant
        rate between ticks, so the two differ by O(angular acceleration·dt)).
        """
        smp = self.sample(t_s, clamp=clamp)
        return smp.velocity_mps, smp.angular_velocity_rps

    def twist_at(self, t_s: float, *, clamp: bool = False) -> tuple[FloatArray, FloatArray]:
        v, w = self.twists_at([t_s], clamp=clamp)
        return v[0], w[0]

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
    missing = [c for c in TICK_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"ticks table lacks columns {missing}")
    tracks: dict[str, PoseTrack] = {}
    for actor, rows in df.groupby("actor_id", sort=True):
        rows = rows.sort_values("t", kind="stable")
        tracks[str(actor)] = PoseTrack(
            t_s=rows["t"].to_numpy(np.float64),
            position_m=rows[["x", "y", "z"]].to_numpy(np.float64),
            quat_xyzw=rows[["qx", "qy", "qz", "qw"]].to_numpy(np.float64),
            velocity_mps=rows[["vx", "vy", "vz"]].to_numpy(np.float64),
            angular_velocity_rps=rows[["wx", "wy", "wz"]].to_numpy(np.float64),
            present=rows["present"].to_numpy(bool),
        )
    return tracks
