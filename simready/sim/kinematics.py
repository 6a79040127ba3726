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
from itertools import chain, repeat
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.sim.paths import PathTable
from simready.sim.scene import GROUND_RASTER_M, Scene
from simready.sim.state import Bodies, frozen, ro

F = NDArray[np.float64]


#: Rotates a unit direction (dx, dy) to its left normal (−dy, dx) after a column swap.
_LEFT = np.array([-1.0, 1.0])


def path_bodies(scene: Scene, table: PathTable, u: F, d: F, d_rate: F, d_acc: F, v: F, a: F,
                present: NDArray[np.bool_]) -> tuple[Bodies, F, F]:
    """Bodies on their paths, their headings and body slip angles (all (N,) / (N, k)).

    Per-actor scalar arithmetic (the same IEEE operations, in the same
    order, as the vectorized form :func:`path_bodies_np`, so the same bits);
    only the transcendental functions run as numpy calls on whole arrays.
    """
    if len(u) == 0:
        return path_bodies_np(scene, table, u, d, d_rate, d_acc, v, a, present)
    bodies, yaw, slip, _ = bodies_on_paths(scene, table, u.tolist(), d, d_rate, d_acc, v.tolist(),
                                           a.tolist() if isinstance(a, np.ndarray) else list(a), present)
    return bodies, yaw, slip


def bodies_on_paths(scene: Scene, table: PathTable, u: list[float], d: F, d_rate: F, d_acc: F, v: list[float],
                    a: list[float], present: NDArray[np.bool_]) -> tuple[Bodies, F, F, tuple[list, list, list]]:
    """:func:`path_bodies` on Python lists ``u``, ``v``, ``a`` (N ≥ 1); also returns ``(x, y, yaw)`` as lists."""
    n = len(u)
    ks = table.locate_py(u)
    py = table._py
    cum, pts, dirs, psi, dpsi = py["cum"], py["pts"], py["dirs"], py["psi"], py["dpsi"]
    ground = scene.ground
    g_item = ground.heights.item
    g_nx, g_ny = ground.heights.shape[0] - 1, ground.heights.shape[1] - 1
    g_x0, g_y0, g_inv = ground.x0, ground.y0, 1.0 / GROUND_RASTER_M
    d_l = d.tolist()
    dr_l = d_rate.tolist()
    any_dr = any(dr_l)
    xs, ys, zs, yaw_c, omega, big_v, vxs, vys = [], [], [], [], [], [], [], []
    # hypot(vx, vy) > 1e-9 is decided by the larger component unless it is within a factor √2 of the threshold.
    moving: list[bool] | None = []
    for i in range(n):
        k = ks[i]
        tx, ty = dirs[k]
        px, pyy = pts[k]
        al = u[i] - cum[k]
        di, dri, vi = d_l[i], dr_l[i], v[i]
        x = (px + tx * al) + (-ty) * di
        y = (pyy + ty * al) + tx * di
        xs.append(x)
        ys.append(y)
        fx, fy = (x - g_x0) * g_inv, (y - g_y0) * g_inv
        if -1e18 < fx < 1e18 and -1e18 < fy < 1e18:
            gi, gj = int(fx), int(fy)
            zs.append(g_item(0 if gi < 0 else g_nx if gi > g_nx else gi, 0 if gj < 0 else g_ny if gj > g_ny else gj))
        else:
            zs.append(float(ground.at(np.array([[x, y]]))[0]))
        rate = dpsi[k]
        yaw_c.append(psi[k] + rate * al)
        omega.append(vi * rate)
        big_v.append(vi if vi >= 1.0 else 1.0 if vi < 1.0 else vi)
        vx = tx * vi - ty * dri
        vy = ty * vi + tx * dri
        vxs.append(vx)
        vys.append(vy)
        if moving is not None:
            m = abs(vx) if abs(vx) > abs(vy) else abs(vy)
            if m > 1e-9:
                moving.append(True)
            elif m < 7e-10:
                moving.append(False)
            else:
                moving = None
    finite = math.isfinite(sum(vxs) + sum(vys) + sum(v))
    if any_dr or not finite:
        yaw = (np.array(yaw_c, dtype=np.float64) + np.arctan2(d_rate, np.array(big_v, dtype=np.float64))).tolist()
    else:
        # arctan2(±0, big_v) is that same ±0 for a finite big_v ≥ 1.
        yaw = [yc + dr for yc, dr in zip(yaw_c, dr_l)]
    if any_dr:
        da_l = d_acc.tolist()
        for i in range(n):
            vi, b_, dri = v[i], big_v[i], dr_l[i]
            bvd = a[i] if vi > 1.0 else 0.0
            omega[i] = omega[i] + (da_l[i] * b_ - dri * bvd) / (b_ * b_ + dri * dri)
    vx_a, vy_a = np.array(vxs, dtype=np.float64), np.array(vys, dtype=np.float64)
    two_pi, pi = 2 * np.pi, np.pi
    slip = [((h - y) + pi) % two_pi - pi for h, y in zip(np.arctan2(vy_a, vx_a).tolist(), yaw)]
    if moving is None or not finite:
        moving = (np.hypot(vx_a, vy_a) > 1e-9).tolist()
    if not all(moving):
        slip = [s_ if mv else 0.0 for s_, mv in zip(slip, moving)]
    yaw_a = np.array(yaw, dtype=np.float64)
    half = 0.5 * yaw_a
    zero = repeat(0.0)
    # One allocation; each field is a C-contiguous block of it.
    big = np.fromiter(chain.from_iterable(chain(zip(xs, ys, zs), zip(zero, zero, np.sin(half).tolist(), np.cos(half).tolist()),
                                                zip(vxs, vys, zero), zip(zero, zero, omega))), np.float64, 13 * n)
    big.flags.writeable = False
    n3, n7, n10 = 3 * n, 7 * n, 10 * n
    pos = big[:n3].reshape(n, 3)
    quat = big[n3:n7].reshape(n, 4)
    vel = big[n7:n10].reshape(n, 3)
    omg = big[n10:].reshape(n, 3)
    # Bodies has no __post_init__: setting its fields directly is what its (frozen) __init__ does, cheaper.
    bodies = object.__new__(Bodies)
    bodies.__dict__.update(pos=pos, quat=quat, vel=vel, omega=omg, present=frozen(present, bool))
    return bodies, yaw_a, np.array(slip, dtype=np.float64), (xs, ys, yaw)


def path_bodies_np(scene: Scene, table: PathTable, u: F, d: F, d_rate: F, d_acc: F, v: F, a: F,
                   present: NDArray[np.bool_]) -> tuple[Bodies, F, F]:
    """The vectorized form of :func:`path_bodies` (the reference its scalar loop reproduces bit for bit)."""
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

    Bounding circles filter the pairs; the few that survive get the
    four-axis separating-axis test.
    """
    return footprint_contacts_py(scene, xy[:, 0].tolist(), xy[:, 1].tolist(), yaw.tolist(), present)


def footprint_contacts_py(scene: Scene, xs: list[float], ys: list[float], yaw: list[float],
                          present: NDArray[np.bool_]) -> frozenset[tuple[int, int]]:
    """:func:`footprint_contacts` on Python lists (the same comparisons: scalar loops, no numpy calls).

    Pairs are swept in x order: a pair further apart in x than the largest
    possible reach (plus a metre) cannot pass the bounding-circle test, so
    the sweep stops there; every pair it reaches gets the same test.
    """
    a = scene.actors
    reach2, hl, hw, span = _reach(a)
    n = len(xs)
    if present.all():
        idx = list(range(n))
    else:
        idx = np.flatnonzero(present).tolist()
        if len(idx) < 2:
            return frozenset()
    out = []
    if math.isfinite(sum(xs)):
        order = sorted(idx, key=xs.__getitem__)
        for p, i in enumerate(order):
            lim = xs[i] + span
            for j in order[p + 1:]:
                if xs[j] > lim:
                    break
                lo, hi = (i, j) if i < j else (j, i)
                dx = xs[hi] - xs[lo]
                dy = ys[hi] - ys[lo]
                if dx * dx + dy * dy < reach2[lo][hi] and _overlap(dx, dy, yaw[lo], hl[lo], hw[lo], yaw[hi], hl[hi], hw[hi]):
                    out.append((lo, hi))
        return frozenset(out)
    for p, i in enumerate(idx):
        xi, yi, ri = xs[i], ys[i], reach2[i]
        for j in idx[p + 1:]:
            dx = xs[j] - xi
            dy = ys[j] - yi
            if dx * dx + dy * dy < ri[j] and _overlap(dx, dy, yaw[i], hl[i], hw[i], yaw[j], hl[j], hw[j]):
                out.append((i, j))
    return frozenset(out)


_REACH: dict[int, tuple[Any, list[list[float]], list[float], list[float], float]] = {}


def _reach(a: Any) -> tuple[list[list[float]], list[float], list[float], float]:
    """Squared bounding-circle reach of every actor pair, half-lengths and half-widths, as Python lists (cached per actor table)."""
    hit = _REACH.get(id(a))
    if hit is None or hit[0] is not a:
        if len(_REACH) > 64:
            _REACH.clear()
        r = a.radius
        span = 2.0 * float(r.max()) + 1.0 if len(r) else 1.0
        hit = _REACH[id(a)] = (a, ((r[:, None] + r[None, :]) ** 2).tolist(), a.hl.tolist(), a.hw.tolist(), span)
    return hit[1], hit[2], hit[3], hit[4]


def _overlap(dx: float, dy: float, yaw_i: float, hl_i: float, hw_i: float, yaw_j: float, hl_j: float, hw_j: float) -> bool:
    """Separating-axis test of two rectangles, j offset by (dx, dy) from i (scalar: the pairs here are few)."""
    ci, si, cj, sj = math.cos(yaw_i), math.sin(yaw_i), math.cos(yaw_j), math.sin(yaw_j)
    for ax, ay in ((ci, si), (-si, ci), (cj, sj), (-sj, cj)):
        ri = hl_i * abs(ci * ax + si * ay) + hw_i * abs(-si * ax + ci * ay)
        rj = hl_j * abs(cj * ax + sj * ay) + hw_j * abs(-sj * ax + cj * ay)
        if abs(dx * ax + dy * ay) >= ri + rj:
            return False
    return True
