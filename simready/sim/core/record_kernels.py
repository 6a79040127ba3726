"""The recorder's row copies, compiled (numba): one state's bodies, presence, lane and s (and kinematic-v1's five
extras, dynamic-v1's six) into row ``k`` of the recorder's preallocated arrays (:class:`simready.sim.engine.recorder.Recorder`, and the
compiled quiet ticks, :mod:`.tick_kernels`). Copies only: the values are the inputs' bits.

Cache: compiled beside this module (``cache=True``); the quiet ticks' loop calls :func:`record_row`, so its cache key
includes this file's contents (:data:`simready.sim.core.tick_kernels._CALLEES`).
"""

from __future__ import annotations

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)


@numba.njit(**_JIT)
def record_row(k: int, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray, present: np.ndarray,
               lane: np.ndarray, s: np.ndarray, u: np.ndarray, walk: np.ndarray, o_pos: np.ndarray,
               o_quat: np.ndarray, o_vel: np.ndarray, o_omega: np.ndarray, o_present: np.ndarray, o_lane: np.ndarray,
               o_s: np.ndarray) -> None:
    """Copy one state's bodies, presence, lane and s into row ``k`` of the recorder's arrays (``o_*``); s is ``u``
    for the actors on a ``walk`` route (no lane there). Copies only: the values are the inputs' bits."""
    n = pos.shape[0]
    for i in range(n):
        for c in range(3):
            o_pos[k, i, c] = pos[i, c]
            o_vel[k, i, c] = vel[i, c]
            o_omega[k, i, c] = omega[i, c]
        for c in range(4):
            o_quat[k, i, c] = quat[i, c]
        o_present[k, i] = present[i]
        o_lane[k, i] = lane[i]
        o_s[k, i] = u[i] if walk[i] else s[i]


@numba.njit(**_JIT)
def record_row_x5(k: int, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray, present: np.ndarray,
                  lane: np.ndarray, s: np.ndarray, u: np.ndarray, walk: np.ndarray, x0: np.ndarray, x1: np.ndarray,
                  x2: np.ndarray, x3: np.ndarray, x4: np.ndarray, o_pos: np.ndarray, o_quat: np.ndarray,
                  o_vel: np.ndarray, o_omega: np.ndarray, o_present: np.ndarray, o_lane: np.ndarray, o_s: np.ndarray,
                  o_x: np.ndarray) -> None:
    """:func:`record_row`, and the five extras rows ``x0`` … ``x4`` (N,) into ``o_x[0..4, k]`` ((5, rows, N)), in
    one call. Copies only."""
    record_row(k, pos, quat, vel, omega, present, lane, s, u, walk, o_pos, o_quat, o_vel, o_omega, o_present, o_lane,
               o_s)
    for i in range(pos.shape[0]):
        o_x[0, k, i] = x0[i]
        o_x[1, k, i] = x1[i]
        o_x[2, k, i] = x2[i]
        o_x[3, k, i] = x3[i]
        o_x[4, k, i] = x4[i]


@numba.njit(**_JIT)
def record_row_x6(k: int, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, omega: np.ndarray, present: np.ndarray,
                  lane: np.ndarray, s: np.ndarray, u: np.ndarray, walk: np.ndarray, x0: np.ndarray, x1: np.ndarray,
                  x2: np.ndarray, x3: np.ndarray, x4: np.ndarray, x5: np.ndarray, o_pos: np.ndarray,
                  o_quat: np.ndarray, o_vel: np.ndarray, o_omega: np.ndarray, o_present: np.ndarray, o_lane: np.ndarray,
                  o_s: np.ndarray, o_x: np.ndarray) -> None:
    """:func:`record_row_x5` with a sixth extras row ``x5`` (dynamic-v1's: the five and ``tyre_util``) into
    ``o_x[5, k]`` ((6, rows, N)), in one call. Copies only."""
    record_row_x5(k, pos, quat, vel, omega, present, lane, s, u, walk, x0, x1, x2, x3, x4, o_pos, o_quat, o_vel,
                  o_omega, o_present, o_lane, o_s, o_x)
    for i in range(pos.shape[0]):
        o_x[5, k, i] = x5[i]
