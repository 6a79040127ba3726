"""Laying pieces: a strip region's two borders, tiles along a strip or over a grid, pieces and dashes along a line,
poses rounded as the importer rounds (world frame, metres; yaw in degrees)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from shapely.geometry import LineString, MultiLineString, Point, Polygon
from shapely.geometry.base import BaseGeometry

from simready.world.street.policy import DASH_M, DECIMALS, GAP_M, MAX_STRIP_WIDTH_M, TILE_LENGTH_M, TILE_STEP_M


Pt = np.ndarray


Placed = tuple[str, float, float, float, float]  # asset, x, y, z, yaw_deg


def strip_borders(polygon: Sequence[Sequence[float]]) -> tuple[Pt, Pt] | None:
    """The two borders of a strip region written as one border forward and the other back, paired point by point.

    A ring with an odd number of points had one end of zero width (a lane
    that opens or closes), its two corners written once: that point is
    doubled at whichever end pairs the borders closest. None when the ring
    is not such a strip (fewer than four points, or a pair further apart
    than :data:`MAX_STRIP_WIDTH_M`).
    """
    pts = np.asarray(polygon, dtype=np.float64)
    if len(pts) > 1 and np.array_equal(pts[0], pts[-1]):
        pts = pts[:-1]
    if len(pts) < 3:
        return None
    if len(pts) % 2:
        k = len(pts) // 2
        candidates = [np.vstack([pts, pts[:1]]), np.vstack([pts[: k + 1], pts[k:]])]
    else:
        candidates = [pts]
    best = None
    for ring in candidates:
        m = len(ring) // 2
        a, b = ring[:m], ring[m:][::-1]
        widths = np.hypot(*(a - b).T)
        if m >= 2 and np.all(widths <= MAX_STRIP_WIDTH_M) and (best is None or widths.sum() < best[0]):
            best = (float(widths.sum()), a, b)
    return None if best is None else (best[1], best[2])


def _tile_for(width_m: float, tiles: Sequence[tuple[float, str]]) -> tuple[float, str]:
    """The widest tile no wider than the strip (the narrowest where the strip is narrower than all)."""
    for tw, asset in tiles:
        if tw <= width_m + 1e-9:
            return tw, asset
    return tiles[-1]


def heading_deg(d: Pt) -> float:
    return math.degrees(math.atan2(float(d[1]), float(d[0])))


def fill_strip(a: Pt, b: Pt, tiles: Sequence[tuple[float, str]], z: float) -> list[Placed]:
    """Tiles between paired borders ``a`` and ``b``, laid by arc length along lines at fixed fractions across.

    The strip is cut into runs of quads that take the same tile and the same
    number of tiles across (a lane that widens changes both); in a run, each
    line across-fraction ``f`` of the way from ``a`` to ``b`` gets tiles
    every :data:`TILE_STEP_M` or less, so tiles overlap along and across.
    """
    widths = np.hypot(*(a - b).T)
    keys = []
    for k in range(len(a) - 1):
        width = float(max(widths[k], widths[k + 1]))
        tw, asset = _tile_for(width, tiles)
        keys.append(None if width < 0.2 else (tw, asset, max(1, math.ceil(width / tw - 1e-9))))
    out: list[Placed] = []
    start = 0
    for k in range(1, len(keys) + 1):
        if k < len(keys) and keys[k] == keys[start]:
            continue
        key, run = keys[start], slice(start, k + 1)
        start = k
        if key is None:
            continue
        tw, asset, n_across = key
        width = float(widths[run].max())
        fracs = [0.5] if n_across == 1 else [(tw / 2 + j * (width - tw) / (n_across - 1)) / width for j in range(n_across)]
        for f in fracs:
            line = LineString(a[run] + f * (b[run] - a[run]))
            out.extend((asset, float(p[0]), float(p[1]), z, yaw)
                       for p, yaw in pieces_along(line, 0.0, line.length, TILE_LENGTH_M, TILE_STEP_M, min_m=0.05))
    return out


def fill_grid(poly: Polygon, tiles: Sequence[tuple[float, str]], z: float) -> list[Placed]:
    """Fallback for a region that is not a strip: tiles on a grid along its minimum rotated rectangle."""
    rect = np.asarray(poly.minimum_rotated_rectangle.exterior.coords)[:4]
    edges = np.diff(np.vstack([rect, rect[:1]]), axis=0)
    k = int(np.argmax(np.hypot(*edges.T)))
    along = edges[k] / np.hypot(*edges[k])
    across = np.array([-along[1], along[0]])
    tw, asset = tiles[0]
    rel = rect - rect[0]
    s_lo, s_hi = float((rel @ along).min()), float((rel @ along).max())
    t_lo, t_hi = float((rel @ across).min()), float((rel @ across).max())
    yaw = heading_deg(along)
    out: list[Placed] = []
    for s in np.arange(s_lo + TILE_STEP_M / 2, s_hi + TILE_STEP_M / 2, TILE_STEP_M):
        for t in np.arange(t_lo + (tw - 0.5) / 2, t_hi + (tw - 0.5) / 2, tw - 0.5):
            p = rect[0] + s * along + t * across
            if poly.contains(Point(p)):
                out.append((asset, float(p[0]), float(p[1]), z, yaw))
    return out


def pieces_along(line: LineString, s0: float, s1: float, piece_m: float, step_m: float,
           min_m: float = 0.5) -> list[tuple[Pt, float]]:
    """Centres and yaws of pieces ``piece_m`` long laid from ``s0`` to ``s1`` along ``line``, at most ``step_m``
    apart, the first and last flush with the ends (one centred piece on a stretch shorter than a piece; none
    on one shorter than ``min_m``)."""
    length = s1 - s0
    if length < min_m:
        return []
    if length <= piece_m:
        centres = [s0 + length / 2]
    else:
        n = math.ceil((length - piece_m) / step_m - 1e-9) + 1
        centres = list(np.linspace(s0 + piece_m / 2, s1 - piece_m / 2, n))
    out = []
    for c in centres:
        p0, p1 = line.interpolate(max(c - piece_m / 2, 0.0)), line.interpolate(min(c + piece_m / 2, line.length))
        d = np.array([p1.x - p0.x, p1.y - p0.y])
        if np.hypot(*d) < 1e-6:
            continue
        p = line.interpolate(c)
        out.append((np.array([p.x, p.y]), heading_deg(d)))
    return out


def dashes(line: LineString, s0: float, s1: float, phase_m: float) -> list[tuple[Pt, float]]:
    """Whole dashes of a broken line from ``s0`` to ``s1``: :data:`DASH_M` on, :data:`GAP_M` off, a dash starting
    wherever ``phase_m`` + arc length is a whole number of periods (so a line keeps its rhythm across lanes)."""
    period = DASH_M + GAP_M
    out = []
    start = s0 + (-(phase_m + s0)) % period
    while start + DASH_M <= s1 + 1e-9:
        out.extend(pieces_along(line, start, start + DASH_M, DASH_M, DASH_M))
        start += period
    return out


def longest(geom: BaseGeometry) -> LineString | None:
    if isinstance(geom, MultiLineString):
        geom = max(geom.geoms, key=lambda g: g.length, default=None)
    return geom if isinstance(geom, LineString) and not geom.is_empty and geom.length > 0 else None


def rounded(v: float) -> float:
    return round(float(v), DECIMALS) + 0.0
