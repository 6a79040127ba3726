"""Planar geometry of bodies: oriented footprints and their edges, separation, swept time-to-collision.

Every body is an oriented rectangle on the ground: centre ``(x, y)`` (m,
world), heading ``yaw`` (rad, CCW from +x), half-length ``hl`` along the
body x axis and half-width ``hw`` along y. All functions broadcast over
leading array dimensions, so one call covers every pair of every tick.

Separating-axis quantities: for two rectangles and a unit axis a among
their four edge normals, the projected radii are ``r = hl·|u·a| + hw·|n·a|``
and the centre offset is ``c = (p2 − p1)·a``. The rectangles overlap iff
``|c| < r1 + r2`` on all four axes; ``max_a(|c| − r1 − r2)`` is the
*separation*: > 0 apart (a lower bound on the true gap, exact when the
closest features are parallel faces), ≤ 0 overlapping.

Swept overlap at constant velocities (orientations held): on each axis the
offset is linear in time, ``c(τ) = c0 + ċ·τ``, so the overlap times form an
interval per axis; their intersection with [0, horizon] starts at the
time-to-collision.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

F = NDArray[np.float64]


def axes(yaw: F) -> tuple[F, F]:
    """Body x axis ``u`` and y axis ``n`` as (..., 2) unit vectors."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack([c, s], -1), np.stack([-s, c], -1)


def corners(x: F, y: F, yaw: F, hl: F, hw: F) -> F:
    """(..., 4, 2) footprint corners, counter-clockwise from front-left."""
    u, n = axes(np.asarray(yaw, float))
    c = np.stack([x, y], -1)[..., None, :]
    sl = np.array([1.0, -1.0, -1.0, 1.0])[:, None]
    sw = np.array([1.0, 1.0, -1.0, -1.0])[:, None]
    return c + sl * (np.asarray(hl, float)[..., None, None] * u[..., None, :]) + sw * (np.asarray(hw, float)[..., None, None] * n[..., None, :])


def _sat_terms(p1: F, yaw1: F, hl1: F, hw1: F, p2: F, yaw2: F, hl2: F, hw2: F) -> tuple[F, F]:
    """Axes (..., 4, 2) and summed projected radii (..., 4) of two rectangles."""
    u1, n1 = axes(yaw1)
    u2, n2 = axes(yaw2)
    ax = np.stack(np.broadcast_arrays(u1, n1, u2, n2), -2)
    r1 = hl1[..., None] * np.abs(np.sum(ax * u1[..., None, :], -1)) + hw1[..., None] * np.abs(np.sum(ax * n1[..., None, :], -1))
    r2 = hl2[..., None] * np.abs(np.sum(ax * u2[..., None, :], -1)) + hw2[..., None] * np.abs(np.sum(ax * n2[..., None, :], -1))
    return ax, r1 + r2


def separation(p1: F, yaw1: F, hl1: F, hw1: F, p2: F, yaw2: F, hl2: F, hw2: F) -> F:
    """Separating-axis gap (m) between rectangles: > 0 apart, ≤ 0 overlapping. ``p*`` are (..., 2)."""
    ax, r = _sat_terms(p1, yaw1, hl1, hw1, p2, yaw2, hl2, hw2)
    c = np.sum((p2 - p1)[..., None, :] * ax, -1)
    return np.max(np.abs(c) - r, -1)


def swept_ttc(p1: F, v1: F, yaw1: F, hl1: F, hw1: F, p2: F, v2: F, yaw2: F, hl2: F, hw2: F, horizon_s: float) -> F:
    """Constant-velocity time (s) until the footprints first overlap; 0 if they do now, inf if not within the horizon.

    ``p*``, ``v*`` are (..., 2) positions (m) and velocities (m/s).
    """
    return _swept(p1, v1, yaw1, hl1, hw1, p2, v2, yaw2, hl2, hw2, horizon_s, False)[0]


def ttc_and_separation(p1: F, v1: F, yaw1: F, hl1: F, hw1: F, p2: F, v2: F, yaw2: F, hl2: F, hw2: F,
                       horizon_s: float) -> tuple[F, F]:
    """:func:`swept_ttc` and :func:`separation` of the same pairs, sharing their separating-axis terms."""
    ttc, sep = _swept(p1, v1, yaw1, hl1, hw1, p2, v2, yaw2, hl2, hw2, horizon_s, True)
    assert sep is not None
    return ttc, sep


def _swept(p1: F, v1: F, yaw1: F, hl1: F, hw1: F, p2: F, v2: F, yaw2: F, hl2: F, hw2: F, horizon_s: float,
           want_sep: bool) -> tuple[F, F | None]:
    ax, r = _sat_terms(p1, yaw1, hl1, hw1, p2, yaw2, hl2, hw2)
    c0 = np.sum((p2 - p1)[..., None, :] * ax, -1)
    abs_c0 = np.abs(c0)
    sep = np.max(abs_c0 - r, -1) if want_sep else None
    cd = np.sum((v2 - v1)[..., None, :] * ax, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_a = (-r - c0) / cd
        t_b = (r - c0) / cd
    moving = cd != 0.0
    inside = abs_c0 < r
    lo = np.where(moving, np.minimum(t_a, t_b), np.where(inside, -np.inf, np.inf))
    hi = np.where(moving, np.maximum(t_a, t_b), np.where(inside, np.inf, -np.inf))
    start = np.maximum(np.max(lo, -1), 0.0)
    end = np.minimum(np.min(hi, -1), horizon_s)
    return np.where(start <= end, start, np.inf), sep


def rect_edges(x: F, y: F, yaw: F, hl: F, hw: F) -> F:
    """(..., 4, 2, 2) edges (start, end) of footprints."""
    c = corners(x, y, yaw, hl, hw)
    return np.stack([c, np.roll(c, -1, axis=-2)], -2)


def point_in_polygon(px: F, py: F, poly: F) -> NDArray[np.bool_]:
    """Even-odd test of points (K,) against one polygon (M, 2)."""
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    px = np.asarray(px, float)[:, None]
    py = np.asarray(py, float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = ((y0 > py) != (y1 > py)) & (px < (x1 - x0) * (py - y0) / (y1 - y0) + x0)
    return (np.count_nonzero(cross, axis=1) % 2) == 1
