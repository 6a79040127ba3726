"""Poses and twists of bodies that follow their reference paths (kinematic-v1, and dynamic-v1's agents).

Given each actor's ``(u, d)`` on its path, its speed ``v`` and acceleration,
and the lateral offset's rate and acceleration, the body's centre is at the
offset path point and it moves along the path tangent (plus ḋ across it).
Its heading is that of a kinematic bicycle whose axles straddle the centre:
the direction of the chord from ``u − L/2`` to ``u + L/2`` (L the class's
chord length, the wheelbase for a car), precomputed at the path vertices
and interpolated linearly along each segment (so the yaw rate is
``v·dψ/du``, piecewise constant), plus the heading change a lateral
manoeuvre needs, ``atan2(ḋ, max(v, 1))``. In a curve the chord cuts inside
the tangent: the difference between the velocity direction and the heading
is the body slip angle, reported as ``slip_rad``. z follows the ground raster.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.sim.paths import PathTable
from simready.sim.scene import Scene
from simready.sim.state import Bodies, frozen, ro

F = NDArray[np.float64]


#: Rotates a unit direction (dx, dy) to its left normal (−dy, dx) after a column swap.
_LEFT = np.array([-1.0, 1.0])


def path_bodies(scene: Scene, table: PathTable, u: F, d: F, d_rate: F, d_acc: F, v: F, a: F,
                present: NDArray[np.bool_]) -> tuple[Bodies, F, F]:
    """Bodies on their paths, their headings and body slip angles (all (N,) / (N, k)).

    Vectorized over actors; every array operation here is one numpy call on
    ~10 values, so the count of operations (not their size) is the cost.
    """
    k = table.locate(u)
    tangent = table.dirs[k]
    along = u - table.cum[k]
    xy = table.pts[k] + tangent * along[:, None] + (tangent[:, ::-1] * _LEFT) * d[:, None]
    rate = table.dpsi[k]
    yaw_c = table.psi[k] + rate * along
    omega_c = v * rate
    big_v = np.maximum(v, 1.0)
    yaw = yaw_c + np.arctan2(d_rate, big_v)
    tx, ty = tangent[:, 0], tangent[:, 1]
    vx = tx * v - ty * d_rate
    vy = ty * v + tx * d_rate
    if d_rate.any():
        big_v_dot = np.where(v > 1.0, a, 0.0)
        omega = omega_c + (d_acc * big_v - d_rate * big_v_dot) / (big_v * big_v + d_rate * d_rate)
    else:
        omega = omega_c
    slip = wrap(np.arctan2(vy, vx) - yaw)
    moving = np.hypot(vx, vy) > 1e-9
    if not moving.all():
        slip = np.where(moving, slip, 0.0)
    n = len(u)
    pos = np.empty((n, 3))
    pos[:, :2] = xy
    pos[:, 2] = scene.ground.at(xy)
    half = 0.5 * yaw
    quat = np.zeros((n, 4))
    quat[:, 2] = np.sin(half)
    quat[:, 3] = np.cos(half)
    vel = np.zeros((n, 3))
    vel[:, 0] = vx
    vel[:, 1] = vy
    omg = np.zeros((n, 3))
    omg[:, 2] = omega
    return Bodies(ro(pos), ro(quat), ro(vel), ro(omg), frozen(present, bool)), yaw, slip


def wrap_scalar(angle: float) -> float:
    """:func:`wrap` for one float (Python's float ``%`` is numpy's: the result takes the divisor's sign)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def wrap(angle: F) -> F:
    return (angle + np.pi) % (2 * np.pi) - np.pi


def footprint_contacts(scene: Scene, xy: F, yaw: F, present: NDArray[np.bool_]) -> frozenset[tuple[int, int]]:
    """Pairs (i < j) of present actors whose footprints overlap.

    Bounding circles filter the pairs with one vectorized pass; the few that
    survive get the four-axis separating-axis test.
    """
    a = scene.actors
    if present.all():
        pi, pj, reach2 = _all_pairs(a)
    else:
        idx = np.flatnonzero(present)
        if len(idx) < 2:
            return frozenset()
        iu, ju = _pairs(len(idx))
        pi, pj = idx[iu], idx[ju]
        reach2 = (a.radius[pi] + a.radius[pj]) ** 2
    dx = xy[pj, 0] - xy[pi, 0]
    dy = xy[pj, 1] - xy[pi, 1]
    near = dx * dx + dy * dy < reach2
    if not near.any():
        return frozenset()
    hl, hw = a.hl, a.hw
    out = []
    for i, j in zip(pi[near].tolist(), pj[near].tolist()):
        if _overlap(float(xy[j, 0] - xy[i, 0]), float(xy[j, 1] - xy[i, 1]), float(yaw[i]), float(hl[i]), float(hw[i]),
                    float(yaw[j]), float(hl[j]), float(hw[j])):
            out.append((i, j))
    return frozenset(out)


_PAIRS: dict[int, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}


def _pairs(n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Index pairs (i < j) of n items, in row-major order (cached per n)."""
    hit = _PAIRS.get(n)
    if hit is None:
        hit = _PAIRS[n] = np.triu_indices(n, 1)
    return hit


_ALL_PAIRS: dict[int, tuple[Any, NDArray[np.int64], NDArray[np.int64], F]] = {}


def _all_pairs(a: Any) -> tuple[NDArray[np.int64], NDArray[np.int64], F]:
    """Pairs (i < j) of all actors and their squared bounding-circle reach (cached per actor table)."""
    hit = _ALL_PAIRS.get(id(a))
    if hit is None or hit[0] is not a:
        if len(_ALL_PAIRS) > 64:
            _ALL_PAIRS.clear()
        pi, pj = _pairs(len(a))
        hit = _ALL_PAIRS[id(a)] = (a, pi, pj, (a.radius[pi] + a.radius[pj]) ** 2)
    return hit[1], hit[2], hit[3]


def _overlap(dx: float, dy: float, yaw_i: float, hl_i: float, hw_i: float, yaw_j: float, hl_j: float, hw_j: float) -> bool:
    """Separating-axis test of two rectangles, j offset by (dx, dy) from i (scalar: the pairs here are few)."""
    ci, si, cj, sj = math.cos(yaw_i), math.sin(yaw_i), math.cos(yaw_j), math.sin(yaw_j)
    for ax, ay in ((ci, si), (-si, ci), (cj, sj), (-sj, cj)):
        ri = hl_i * abs(ci * ax + si * ay) + hw_i * abs(-si * ax + ci * ay)
        rj = hl_j * abs(cj * ax + sj * ay) + hw_j * abs(-sj * ax + cj * ay)
        if abs(dx * ax + dy * ay) >= ri + rj:
            return False
    return True
