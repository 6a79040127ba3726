"""The motion field's per-sample step (compiled): image velocity from the camera's and the bodies' twists
(:mod:`simready.truth.motion_field`), with the motion table's rounded columns from the same pass.
"""

from __future__ import annotations

import numba
import numpy as np

from simready.truth.kernels.compile import JIT


@numba.njit(**JIT)
def image_velocity(rows: np.ndarray, X: np.ndarray, v_c_cam: np.ndarray, w_cam: np.ndarray, moving: np.ndarray,
                   q_moving: np.ndarray, fx: float, fy: float, step: float) -> tuple:
    """The motion field's last step per sample (``motion_field``'s numpy operations in order):
    ``Ẋ = q − ω_cam × X`` with ``q = −v_c`` (plus the rotated point velocity ``q_moving[k]`` for the k-th
    moving sample), then ``u̇, v̇`` and ``Ż``. Returns (du, dv, dz) (N,) each, and the motion table's columns
    from the same pass: ``du, dv`` rounded to ``step`` (:func:`.tables.quantized32`'s operations) and ``dz``,
    float32."""
    n = len(rows)
    du, dv, dz = np.empty(n), np.empty(n), np.empty(n)
    du32, dv32, dz32 = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    inv_step = 1.0 / step  # a power of two: multiplying by the inverse is dividing, bit for bit
    k = 0
    for i in range(n):
        r = rows[i]
        q0, q1, q2 = -v_c_cam[r, 0], -v_c_cam[r, 1], -v_c_cam[r, 2]
        if k < len(moving) and moving[k] == i:
            q0, q1, q2 = q0 + q_moving[k, 0], q1 + q_moving[k, 1], q2 + q_moving[k, 2]
            k += 1
        w0, w1, w2 = w_cam[r, 0], w_cam[r, 1], w_cam[r, 2]
        x0, x1, x2 = X[i, 0], X[i, 1], X[i, 2]
        xd0 = q0 - (w1 * x2 - w2 * x1)
        xd1 = q1 - (w2 * x0 - w0 * x2)
        xd2 = q2 - (w0 * x1 - w1 * x0)
        z2 = x2 * x2
        a = fx * (xd0 * x2 - x0 * xd2) / z2
        b = fy * (xd1 * x2 - x1 * xd2) / z2
        du[i] = a
        dv[i] = b
        dz[i] = xd2
        du32[i] = np.float32(np.rint(a * inv_step) * step)
        dv32[i] = np.float32(np.rint(b * inv_step) * step)
        dz32[i] = np.float32(xd2)
    return du, dv, dz, (du32, dv32, dz32)
