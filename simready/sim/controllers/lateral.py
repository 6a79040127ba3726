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
from typing import Any

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
    held = _HELD.get(id(goals))
    if held is not None and held[0] is goals and held[1] == dt and tick + 1 >= held[2] and not d.flags.writeable:
        # Only held offsets, all settled: the references are the offsets the actors already have (bit for bit) and
        # the settled rates; the same arrays every tick.
        if all(_same(float(d[i]), q) for i, q in held[3]):
            return d, held[4], held[5], []
    d_ref = d.copy()
    rate = np.zeros(len(d))
    acc = np.zeros(len(d))
    done: list[int] = []
    settled = True
    for i in active:
        g = goals[i]
        assert g is not None  # set_indices: the actors with a goal
        d_ref[i], rate[i], acc[i] = g.profile.at(tick + 1, dt)
        if g.kind != "offset":
            settled = False
            if g.profile.done(tick + 1, dt):
                done.append(i)
        elif not g.profile.settled(tick + 1, dt):
            settled = False
    if settled and (held is None or held[0] is not goals or held[1] != dt):
        if len(_HELD) > 64:
            _HELD.clear()
        rate.flags.writeable = False
        acc.flags.writeable = False
        _HELD[id(goals)] = (goals, dt, tick + 1, [(i, float(d_ref[i])) for i in active], rate, acc)
    return d_ref, rate, acc, done


#: Per goal tuple (by id, with the tuple kept against reuse of the id) whose goals are all ``offset`` goals that
#: have settled from tick ``t`` on: ``(goals, dt, t, [(actor, settled offset)], rates, accelerations)``.
_HELD: dict[int, tuple[Any, float, int, list[tuple[int, float]], F, F]] = {}


def _same(x: float, y: float) -> bool:
    """``x`` and ``y`` are the same float, bit for bit (the sign of a zero included; NaN never)."""
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


def preview_steer(x: float, y: float, yaw: float, target_x: float, target_y: float, wheelbase_m: float) -> float:
    """Pure pursuit: the steering angle (rad) whose arc from the rear axle passes through the target point."""
    dx, dy = target_x - x, target_y - y
    dist = math.hypot(dx, dy)
    if dist < 1e-6:
        return 0.0
    alpha = math.atan2(dy, dx) - yaw
    alpha = (alpha + math.pi) % (2 * math.pi) - math.pi
    return math.atan2(2.0 * wheelbase_m * math.sin(alpha), dist)
