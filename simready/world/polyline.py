"""The one polyline-with-arc-length primitive (SPEC §18): lanes, scenario plans and simulator paths all use it.

Conventions (world frame, metres, radians):

* ``points`` are the vertices in travel order; ``s`` is arc length from the
  first one (``cum_s[0] == 0``).
* ``t`` is the signed lateral offset, positive to the *left* of travel.
* Yaw is counter-clockwise about +z from +x; at ``s`` it is the heading of the
  segment holding ``s`` (piecewise constant).
* Before the start and past the end the first and last segments extrapolate
  (:meth:`Polyline.point_at`, :meth:`Polyline.project`); :meth:`Polyline.xy_yaw`
  clamps instead (a path's end is where a body stops).

Why one class: the lane graph, the scenario ladder and the simulator each had
their own copy of this arithmetic, and a point evaluated by the ladder must be
the point the simulator drives through, bit for bit. Every evaluation here uses
the same formula, ``p_i + d_i·(s − s_i) + n_i·t`` with ``d_i`` the unit segment
direction and ``n_i`` its left normal.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Self, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

F = NDArray[np.float64]

#: Consecutive points closer than this are one point (m): :meth:`Polyline.from_points` drops the repeat.
REPEAT_TOLERANCE_M = 1e-6


class PolylineError(ValueError):
    """Points that do not make a polyline (fewer than two distinct points, a repeated point)."""


@dataclass(frozen=True, eq=False)
class Polyline:
    """A polyline with arc length.

    Attributes:
        points: (N, 2) vertices, world metres, N ≥ 2.
        cum_s: (N,) arc length at each vertex, metres.
        seg_dir: (N−1, 2) unit direction of each segment.
    """

    points: F
    cum_s: F = field(repr=False)
    seg_dir: F = field(repr=False)

    @staticmethod
    def arrays(points: ArrayLike, *, min_segment_m: float | None = None) -> tuple[F, F, F]:
        """``(points, cum_s, seg_dir)`` of a vertex list.

        Without ``min_segment_m`` repeated points (closer than
        :data:`REPEAT_TOLERANCE_M` to the previous kept one) are dropped; with
        it a segment shorter than ``min_segment_m`` raises :class:`PolylineError`.
        """
        p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        if min_segment_m is None:
            keep = np.concatenate([[True], np.hypot(*np.diff(p, axis=0).T) > REPEAT_TOLERANCE_M])
            p = p[keep]
        if len(p) < 2:
            raise PolylineError("a polyline needs at least two distinct points")
        delta = np.diff(p, axis=0)
        seg_len = np.hypot(delta[:, 0], delta[:, 1])
        if min_segment_m is not None and np.any(seg_len < min_segment_m):
            raise PolylineError(f"repeated point (segment shorter than {min_segment_m} m)")
        return p, np.concatenate([[0.0], np.cumsum(seg_len)]), delta / seg_len[:, None]

    @classmethod
    def from_points(cls, points: ArrayLike, *, min_segment_m: float | None = None) -> Self:
        return cls(*cls.arrays(points, min_segment_m=min_segment_m))

    # --- scalar queries -------------------------------------------------------------

    @property
    def length_m(self) -> float:
        return float(self.cum_s[-1])

    @property
    def start(self) -> F:
        return self.points[0]  # type: ignore[no-any-return]

    @property
    def end(self) -> F:
        return self.points[-1]  # type: ignore[no-any-return]

    @property
    def start_yaw_rad(self) -> float:
        return self.segment_yaw(0)

    @property
    def end_yaw_rad(self) -> float:
        return self.segment_yaw(len(self.seg_dir) - 1)

    @cached_property
    def _lists(self) -> tuple[list[list[float]], list[list[float]], list[float]]:
        # Python floats: a scalar query costs a few hundred nanoseconds, with numpy's bits.
        return self.points.tolist(), self.seg_dir.tolist(), self.cum_s.tolist()

    def segment_at(self, s_m: float) -> int:
        """Segment holding ``s`` (the end segments extrapolate; NaN lands on the last)."""
        i = bisect.bisect_right(self._lists[2], s_m) - 1
        return min(max(i, 0), len(self.seg_dir) - 1)

    @cached_property
    def _yaw_list(self) -> list[float]:
        return np.arctan2(self.seg_dir[:, 1], self.seg_dir[:, 0]).tolist()  # type: ignore[no-any-return]

    def segment_yaw(self, i: int) -> float:
        """Heading of segment ``i``, radians."""
        return self._yaw_list[i]

    def point_at(self, s_m: float, t_m: float = 0.0) -> tuple[float, float]:
        """World ``(x, y)`` at arc length ``s`` and lateral offset ``t`` (left positive); extrapolates past the ends."""
        pts, dirs, cum = self._lists
        i = self.segment_at(s_m)
        dx, dy = dirs[i]
        along = float(s_m) - cum[i]
        bx = pts[i][0] + dx * along
        by = pts[i][1] + dy * along
        t = float(t_m)
        return bx - dy * t, by + dx * t

    def points_at(self, s_m: ArrayLike, t_m: float = 0.0) -> tuple[F, F]:
        """:meth:`point_at` of each arc length in ``s_m``, as arrays ``(x, y)``: the same segment and the same float
        operations in the same order element by element (numpy's element-wise ops round as Python's), so each
        value is the scalar call's bits."""
        s = np.asarray(s_m, dtype=np.float64)
        i = np.clip(np.searchsorted(self.cum_s, s, side="right") - 1, 0, len(self.seg_dir) - 1)
        dx, dy = self.seg_dir[i, 0], self.seg_dir[i, 1]
        along = s - self.cum_s[i]
        bx = self.points[i, 0] + dx * along
        by = self.points[i, 1] + dy * along
        t = float(t_m)
        return bx - dy * t, by + dx * t

    def pose_at(self, s_m: float) -> tuple[float, float, float]:
        """``(x, y, yaw_rad)`` on the polyline at ``s`` (extrapolating), yaw of the containing segment."""
        x, y = self.point_at(s_m)
        return x, y, self.segment_yaw(self.segment_at(s_m))

    # --- vectorised queries -----------------------------------------------------------

    def segment_yaw_rad(self, i: ArrayLike) -> F:
        """Heading of segment(s) ``i``, radians."""
        d = self.seg_dir[np.asarray(i)]
        return np.arctan2(d[..., 1], d[..., 0])  # type: ignore[no-any-return]

    @overload
    def xy_yaw(self, s_m: float) -> tuple[float, float, float]: ...
    @overload
    def xy_yaw(self, s_m: ArrayLike) -> tuple[F, F, F]: ...
    def xy_yaw(self, s_m: ArrayLike) -> tuple[F, F, F] | tuple[float, float, float]:
        """Position and heading at arc length(s) ``s_m``, clamped to [0, length] (a path's end is a stop): floats
        for a number, arrays for an array (a 0-d one gives floats too)."""
        if isinstance(s_m, (float, int)) or (isinstance(s_m, np.ndarray) and s_m.ndim == 0):
            s = min(max(float(s_m), 0.0), self._lists[2][-1])
            return self.pose_at(s)
        s = np.clip(np.asarray(s_m, dtype=np.float64), 0.0, self.length_m)  # type: ignore[assignment]
        i = np.clip(np.searchsorted(self.cum_s, s, side="right") - 1, 0, len(self.seg_dir) - 1)
        d = self.seg_dir[i]
        along = s - self.cum_s[i]
        return self.points[i, 0] + d[:, 0] * along, self.points[i, 1] + d[:, 1] * along, self.segment_yaw_rad(i)

    def project_many(self, xy: ArrayLike) -> tuple[F, F, NDArray[np.intp]]:
        """``(s, t, segment index)`` of the closest polyline point to each of (M, 2) points, each (M,).

        The segment is chosen by true (clamped) distance; on the first and last
        segments the foot point may run past the polyline's end, so that
        ``point_at(*project(p))`` returns ``p`` for points before the start or
        after the end too.
        """
        p = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        seg_len = np.diff(self.cum_s)
        rel = p[:, None, :] - self.points[None, :-1, :]
        u = np.einsum("mnk,nk->mn", rel, self.seg_dir)
        foot = self.points[None, :-1, :] + self.seg_dir[None] * np.clip(u, 0.0, seg_len)[..., None]
        i = np.argmin(np.hypot(*np.moveaxis(p[:, None, :] - foot, -1, 0)), axis=1)
        last = len(seg_len) - 1
        lo = np.where(i == 0, -np.inf, 0.0)
        hi = np.where(i == last, np.inf, seg_len[i])
        along = np.clip(u[np.arange(len(p)), i], lo, hi)
        d = self.seg_dir[i]
        offset = p - (self.points[i] + d * along[:, None])
        side = np.where(d[:, 0] * offset[:, 1] - d[:, 1] * offset[:, 0] >= 0.0, 1.0, -1.0)
        return self.cum_s[i] + along, side * np.hypot(offset[:, 0], offset[:, 1]), i

    def project(self, x_m: float, y_m: float) -> tuple[float, float]:
        """``(s, t)`` of the closest point; s < 0 or s > length beyond the ends (see :meth:`project_many`)."""
        s, t, _ = self.project_many([[x_m, y_m]])
        return float(s[0]), float(t[0])
