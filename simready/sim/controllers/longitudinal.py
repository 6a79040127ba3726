"""Longitudinal control laws, vectorized over actors. Accelerations in m/s², speeds in m/s, gaps in m.

Free road: track a reference speed with feed-forward,
``a = dv_ref/dt + K·(v_ref − v)`` (:data:`~simready.sim.core.constants.SPEED_TRACK_GAIN`).

Obstacle ahead (a leader, a red signal's stop line, a pedestrian in the
corridor): the interaction term of the Intelligent Driver Model,
``a = a_max·(1 − (s*/g)²)`` with the desired gap
``s* = s0 + max(0, v·T + v·(v − v_obs)/(2·√(a_max·b)))``. The command is the
smaller of the two, then clamped to ``[−decel, a_max]``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from simready.sim.core import constants as C

F = NDArray[np.float64]


def track_speed(v: F, v_ref: F, a_ff: F) -> F:
    return a_ff + C.SPEED_TRACK_GAIN * (v_ref - v)


def idm_interaction(v: F, v_obs: F, gap: F, s0: F, time_gap: F, a_max: F, b: F) -> F:
    """IDM braking term; +a_max where there is no obstacle (gap inf)."""
    s_star = s0 + np.maximum(0.0, v * time_gap + v * (v - v_obs) / (2.0 * np.sqrt(a_max * b)))
    ratio = np.divide(s_star, gap, out=np.full(len(v), 1e3), where=gap > 0.0)
    accel: F = a_max * (1.0 - np.minimum(ratio, 1e3) ** 2)
    return accel


def gap_control(gap: float, gap_ref: float, v: float, v_target: float) -> float:
    """The gap verb: close the gap error and match the target's speed."""
    return C.GAP_GAIN * (gap - gap_ref) + C.GAP_SPEED_GAIN * (v_target - v)


def integrate(u: F, v: F, a: F, dt: float) -> tuple[F, F]:
    """Exact constant-acceleration step that stops at v = 0 instead of reversing: ``(u', v')``."""
    v1 = v + a * dt
    du = v * dt + 0.5 * a * dt * dt
    stops = v1 < 0.0
    if stops.any():
        du = np.where(stops, np.divide(v * v, -2.0 * a, out=np.zeros(len(v)), where=a < 0.0), du)
    return u + du, np.maximum(v1, 0.0)
