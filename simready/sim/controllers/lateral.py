"""Lateral control: offset transitions along the path, and preview path tracking for the dynamic ego.

Every lane-bound actor holds a lateral offset ``d`` from its path (m, + left).
A lateral goal (lane change, held lane offset, return to the centreline)
moves ``d`` along a :class:`~simready.sim.core.profiles.Profile`; without a goal
``d`` stays where it is. A lane change switches the actor's path to the
target lane at the start of the manoeuvre, so ``d`` starts at the actor's
offset from the *new* lane and the profile brings it to 0.

The dynamic ego does not follow ``d`` kinematically: :func:`preview_steer`
is a pure-pursuit tracker of the offset path, a preview distance ahead,
whose steering angle the backend turns into tyre forces.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from simready.sim.core.state import LateralGoal, set_indices

F = NDArray[np.float64]
_ZEROS: dict[int, F] = {}


def lateral_refs(goals: tuple[LateralGoal | None, ...], d: F, tick: int, dt: float) -> tuple[F, F, F, list[int]]:
    """``(d, ḋ, d̈)`` references for the next tick and the actors whose goal has completed.

    Without any goal the offsets stay: ``d`` itself is returned when it is
    read-only, with shared read-only zero rates.
    """
    active = set_indices(goals)
    if not d.flags.writeable and not active:
        z = _ZEROS.get(len(d))
        if z is None:
            z = _ZEROS[len(d)] = np.zeros(len(d))
            z.flags.writeable = False
        return d, z, z, []
    d_ref = d.copy()
    rate = np.zeros(len(d))
    acc = np.zeros(len(d))
    done: list[int] = []
    for i in active:
        g = goals[i]
        assert g is not None  # set_indices: the actors with a goal
        d_ref[i], rate[i], acc[i] = g.profile.at(tick + 1, dt)
        if g.kind != "offset" and g.profile.done(tick + 1, dt):
            done.append(i)
    return d_ref, rate, acc, done


def preview_steer(x: float, y: float, yaw: float, target_x: float, target_y: float, wheelbase_m: float) -> float:
    """Pure pursuit: the steering angle (rad) whose arc from the rear axle passes through the target point."""
    dx, dy = target_x - x, target_y - y
    dist = math.hypot(dx, dy)
    if dist < 1e-6:
        return 0.0
    alpha = math.atan2(dy, dx) - yaw
    alpha = (alpha + math.pi) % (2 * math.pi) - math.pi
    return math.atan2(2.0 * wheelbase_m * math.sin(alpha), dist)
