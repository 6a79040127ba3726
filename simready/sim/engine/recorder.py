"""The recorded clip: preallocated per-tick arrays the engine copies each state's row into."""

from __future__ import annotations

import numpy as np

from simready.sim.core import record_kernels
from simready.sim.core.reference_paths import PathKey, PathTable
from simready.sim.core.scene import Scene
from simready.sim.core.state import SimState


class Recorder:
    """Preallocated per-tick arrays of the recorded clip (rows = ticks warmup..warmup+clip)."""

    def __init__(self, scene: Scene, extras: tuple[str, ...], fused: bool = False) -> None:
        r = scene.manifest.clip_ticks + 1
        n = len(scene.actors)
        self.rows = 0
        self._speed_rows = 0
        self.pos = np.zeros((r, n, 3))
        self.quat = np.zeros((r, n, 4))
        self.vel = np.zeros((r, n, 3))
        self.omega = np.zeros((r, n, 3))
        self.speed = np.zeros((r, n))
        self.lane = np.full((r, n), -1, dtype=np.int64)
        self.s = np.full((r, n), np.nan)
        self.present = np.zeros((r, n), dtype=bool)
        #: The extras' rows, one (rows, N) slab per name (views of one block, so five of them go in one copy).
        self._x_all = np.zeros((len(extras), r, n))
        self.extras = {name: self._x_all[j] for j, name in enumerate(extras)}
        self._extra_rows = tuple(self.extras.items())
        self._extra_names = tuple(extras)
        #: Whether the extras are kinematic-v1's five (N,) rows, copied with the bodies (:meth:`record`); dynamic-v1's
        #: six go the same way (``_fused6``).
        self._fused = fused and len(extras) == 5
        self._fused6 = fused and len(extras) == 6

    def record(self, state: SimState, table: PathTable) -> None:
        """Copy state's row into the preallocated arrays (speeds are filled in bulk when read, :meth:`arrays`).

        Why row by row: keeping references and stacking them at the end cost
        ~30 µs a row; the bodies, presence, lane and s go in one compiled
        copy (:func:`simready.sim.core.record_kernels.record_row`), the extras as numpy rows
        (kinematic-v1's five in the same copy, :func:`~simready.sim.core.record_kernels.record_row_x5`; dynamic-v1's
        six, :func:`~simready.sim.core.record_kernels.record_row_x6`).
        """
        k = self.rows
        b = state.bodies
        u = state.coords.u
        lane, s = table.lanes_at(u)
        walk = self._walk(state.coords.path_keys)
        # One compiled copy of the row. A walk route has no lane: its s is the arc length along the route.
        get = state.extras.get
        if self._fused:
            # kinematic-v1's five extras, (N,) float arrays, go in the same call (a state without them, such as the
            # first recorded one, takes the rows below).
            x = state.extras
            n0, n1, n2, n3, n4 = self._extra_names
            try:
                record_kernels.record_row_x5(k, b.pos, b.quat, b.vel, b.omega, b.present, lane, s, u, walk, x[n0],
                                             x[n1], x[n2], x[n3], x[n4], self.pos, self.quat, self.vel, self.omega,
                                             self.present, self.lane, self.s, self._x_all)
            except KeyError:
                pass
            else:
                self.rows = k + 1
                return
        if self._fused6:
            # dynamic-v1's six extras, the same way.
            x = state.extras
            m0, m1, m2, m3, m4, m5 = self._extra_names
            try:
                record_kernels.record_row_x6(k, b.pos, b.quat, b.vel, b.omega, b.present, lane, s, u, walk, x[m0],
                                             x[m1], x[m2], x[m3], x[m4], x[m5], self.pos, self.quat, self.vel,
                                             self.omega, self.present, self.lane, self.s, self._x_all)
            except KeyError:
                pass
            else:
                self.rows = k + 1
                return
        record_kernels.record_row(k, b.pos, b.quat, b.vel, b.omega, b.present, lane, s, u, walk, self.pos, self.quat,
                                  self.vel, self.omega, self.present, self.lane, self.s)
        for name, arr in self._extra_rows:
            row = get(name)
            if row is not None:
                arr[k] = row
        self.rows = k + 1

    def _walk(self, keys: tuple[PathKey, ...]) -> np.ndarray:
        if keys is not getattr(self, "_walk_keys", None):
            self._walk_keys = keys
            self._walk_mask = np.array([key[0] == "walk" for key in keys], dtype=bool)
        return self._walk_mask

    def _flush(self) -> None:
        """Fill the speeds of the rows recorded since the last read."""
        lo, k = self._speed_rows, self.rows
        if k > lo:
            # |(vx, vy)| elementwise, so the same values as row by row.
            self.speed[lo:k] = np.hypot(self.vel[lo:k, :, 0], self.vel[lo:k, :, 1])
        self._speed_rows = k

    def arrays(self) -> dict[str, np.ndarray]:
        """The recorded rows so far (views)."""
        self._flush()
        k = self.rows
        out = {"pos": self.pos[:k], "quat": self.quat[:k], "vel": self.vel[:k], "omega": self.omega[:k],
               "speed": self.speed[:k], "lane": self.lane[:k], "s": self.s[:k], "present": self.present[:k]}
        out.update({f"x:{name}": arr[:k] for name, arr in self.extras.items()})
        return out

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        k = len(arrays["pos"])
        for name in ("pos", "quat", "vel", "omega", "speed", "lane", "s", "present"):
            getattr(self, name)[:k] = arrays[name]
        for name, arr in self.extras.items():
            if f"x:{name}" in arrays:
                arr[:k] = arrays[f"x:{name}"]
        self.rows = k
        self._speed_rows = k
