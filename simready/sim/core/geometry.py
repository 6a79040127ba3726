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
time-to-collision. Both run per pair in a compiled kernel
(:func:`simready.sim.core.kernels.swept_pairs`; the metrics evaluate every pair
of every recorded tick).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from simready.sim.core import kernels
from simready.world.frames import footprint_corners

F = NDArray[np.float64]


def swept_ttc(p1: F, v1: F, yaw1: F, hl1: F, hw1: F, p2: F, v2: F, yaw2: F, hl2: F, hw2: F, horizon_s: float) -> F:
    """Constant-velocity time (s) until the footprints first overlap; 0 if they do now, inf if not within the horizon.

    ``p*``, ``v*`` are (..., 2) positions (m) and velocities (m/s).
    """
    return _swept(p1, v1, yaw1, hl1, hw1, p2, v2, yaw2, hl2, hw2, horizon_s, False)[0]


def ttc_and_separation(p1: F, v1: F, yaw1: F, hl1: F, hw1: F, p2: F, v2: F, yaw2: F, hl2: F, hw2: F,
                       horizon_s: float) -> tuple[F, F]:
    """:func:`swept_ttc` and the separating-axis gap (m) of the same pairs, sharing their separating-axis terms."""
    ttc, sep = _swept(p1, v1, yaw1, hl1, hw1, p2, v2, yaw2, hl2, hw2, horizon_s, True)
    assert sep is not None
    return ttc, sep


def _swept(p1: F, v1: F, yaw1: F, hl1: F, hw1: F, p2: F, v2: F, yaw2: F, hl2: F, hw2: F, horizon_s: float,
           want_sep: bool) -> tuple[F, F | None]:
    """Broadcast the pairs and run the compiled test (:func:`simready.sim.core.kernels.swept_pairs`) over them."""
    vectors = [np.asarray(x, dtype=np.float64) for x in (p1, v1, p2, v2)]
    scalars = [np.asarray(x, dtype=np.float64) for x in (yaw1, hl1, hw1, yaw2, hl2, hw2)]
    shape = np.broadcast_shapes(*(x.shape for x in scalars), *(x.shape[:-1] for x in vectors))
    flat = [np.ascontiguousarray(np.broadcast_to(x, shape)).reshape(-1) for x in scalars]
    pairs = [np.ascontiguousarray(np.broadcast_to(x, shape + (2,))).reshape(-1, 2) for x in vectors]
    ttc, sep = np.empty(flat[0].shape[0]), np.empty(flat[0].shape[0])
    kernels.swept_pairs(pairs[0], pairs[1], flat[0], flat[1], flat[2], pairs[2], pairs[3], flat[3], flat[4], flat[5],
                        float(horizon_s), ttc, sep)
    return ttc.reshape(shape), sep.reshape(shape) if want_sep else None


def rect_edges(x: F, y: F, yaw: F, hl: F, hw: F) -> F:
    """(..., 4, 2, 2) edges (start, end) of footprints."""
    c = footprint_corners(x, y, yaw, hl, hw)
    return np.stack([c, np.roll(c, -1, axis=-2)], -2)


def point_in_polygon(px: F, py: F, poly: F) -> NDArray[np.bool_]:
    """Even-odd test of points (K,) against one polygon (M, 2)."""
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    px = np.asarray(px, float)[:, None]
    py = np.asarray(py, float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = ((y0 > py) != (y1 > py)) & (px < (x1 - x0) * (py - y0) / (y1 - y0) + x0)
    inside: NDArray[np.bool_] = (np.count_nonzero(cross, axis=1) % 2) == 1
    return inside
