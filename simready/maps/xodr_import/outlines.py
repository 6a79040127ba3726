"""Lane outlines and polylines as the template holds them: rounded to 0.1 mm without repeats, a lane that closes on
itself, a centreline loop cut out, zero-width stretches trimmed or split, the outline ring of a lane."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from shapely.geometry import LineString

from simready.maps.refline import Array
from simready.maps.xodr_import.model import SampledLane
from simready.maps.xodr_import.policy import DECIMALS, ENDPOINT_TOLERANCE_M, ZERO_WIDTH_M


def rounded(v: float) -> float:
    out = round(float(v), DECIMALS)
    return 0.0 if out == 0.0 else out


def as_points(points: Array) -> list[list[float]]:
    return as_points_z(points, None)[0]


def as_points_z(points: Array, z: Array | None) -> tuple[list[list[float]], list[float] | None]:
    """Rounded points without repeats (closer than 1 mm to the last point kept), and the heights of the points kept.

    Vectorised: a point is kept when it is 1 mm from its predecessor; only
    where some are dropped is the exact rule (distance to the last point
    *kept*) applied point by point.
    """
    pts = np.round(np.asarray(points, dtype=np.float64), DECIMALS) + 0.0
    if len(pts) == 0:
        return [], ([] if z is not None else None)
    far = np.hypot(*np.diff(pts, axis=0).T) >= 1e-3
    if far.all():
        keep = np.arange(len(pts))
    else:
        kept = [0]
        for i in range(1, len(pts)):
            if math.dist(pts[kept[-1]], pts[i]) >= 1e-3:
                kept.append(i)
        keep = np.asarray(kept)
    out = pts[keep].tolist()
    if z is None:
        return out, None
    return out, (np.round(np.asarray(z, dtype=np.float64)[keep], DECIMALS) + 0.0).tolist()


def dist_xy(p: Array, q: Array) -> float:
    return float(math.hypot(p[0] - q[0], p[1] - q[1]))


def is_loop(lane: SampledLane) -> bool:
    """The lane's centre or one of its borders ends where it starts (within the endpoint tolerance) after running at
    least 10 m: a ring road, or a cul-de-sac whose reference line closes."""
    c = lane.centre
    if len(c) < 5 or float(np.hypot(*np.diff(c, axis=0).T).sum()) <= 10.0:
        return False
    return any(dist_xy(b[0], b[-1]) <= ENDPOINT_TOLERANCE_M for b in (lane.centre, lane.inner, lane.outer))


def _first_crossing(p: Array) -> tuple[int, int, Array] | None:
    """The first pair of non-adjacent segments (i < j) of polyline ``p`` that cross, and where."""
    a, b = p[:-1], p[1:]
    d = b - a
    for i in range(len(d) - 2):
        q, e = a[i + 2:], d[i + 2:]
        denom = d[i, 0] * e[:, 1] - d[i, 1] * e[:, 0]
        w = q - a[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom
            u = (w[:, 0] * d[i, 1] - w[:, 1] * d[i, 0]) / denom
        hit = np.flatnonzero((denom != 0) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1))
        if hit.size:
            j = i + 2 + int(hit[0])
            return i, j, a[i] + t[hit[0]] * d[i]
    return None


def cut_loop(pts: list[list[float]], zs: list[float] | None) -> tuple[list[list[float]], list[float] | None, float] | None:
    """A centreline with each loop where it folds back on itself cut out at the crossing, and the length cut; None
    when it does not become simple."""
    p = np.asarray(pts, dtype=np.float64)
    z = None if zs is None else list(zs)
    cut = 0.0
    for _ in range(100):
        if LineString(p).is_simple:
            out, zo = as_points_z(p, None if z is None else np.asarray(z))
            return (out, zo, cut) if len(out) >= 2 and LineString(np.asarray(out)).is_simple else None
        found = _first_crossing(p)
        if found is None:
            return None
        i, j, x = found
        cut += float(np.hypot(*np.diff(np.vstack([x, p[i + 1:j + 1], x]), axis=0).T).sum())
        p = np.vstack([p[:i + 1], x, p[j + 1:]])
        if z is not None:
            z = z[:i + 1] + [z[i]] + z[j + 1:]
    return None


def trimmed_lane(lane: SampledLane) -> SampledLane | None:
    """``lane`` without the zero-width runs at its ends (kept up to the sample where it opens or closes); None when
    it has no width anywhere. A lane that opens from zero width inside its section starts where it opens."""
    wide = np.flatnonzero(lane.width > ZERO_WIDTH_M)
    if wide.size == 0:
        return None
    i0, i1 = max(0, int(wide[0]) - 1), min(len(lane.width) - 1, int(wide[-1]) + 1)
    if i0 == 0 and i1 == len(lane.width) - 1:
        return lane
    cut = slice(i0, i1 + 1)
    return replace(lane, s=lane.s[cut], inner=lane.inner[cut], outer=lane.outer[cut], centre=lane.centre[cut],
                   width=lane.width[cut], z=z_part(lane.z, cut))


def z_part(z: tuple[Array, Array, Array] | None, part: slice) -> tuple[Array, Array, Array] | None:
    """The heights (inner border, outer border, centre) at the samples ``part``; None where the road is flat."""
    if z is None:
        return None
    inner, outer, centre = z
    return inner[part], outer[part], centre[part]


def open_pieces(lane: SampledLane) -> list[SampledLane]:
    """The stretches of ``lane`` where its width is positive (each with the zero-width sample at either end)."""
    wide = lane.width > ZERO_WIDTH_M
    runs = []
    i = 0
    n = len(wide)
    while i < n:
        if wide[i]:
            j = i
            while j + 1 < n and wide[j + 1]:
                j += 1
            runs.append((max(0, i - 1), min(n - 1, j + 1)))
            i = j + 1
        else:
            i += 1
    if len(runs) <= 1:
        return [lane]
    return [replace(lane, s=lane.s[a:b + 1], inner=lane.inner[a:b + 1], outer=lane.outer[a:b + 1],
                    centre=lane.centre[a:b + 1], width=lane.width[a:b + 1], resample=None,
                    z=z_part(lane.z, slice(a, b + 1))) for a, b in runs]


def outline_ring(lane: SampledLane) -> tuple[list[list[float]], list[float] | None]:
    """A lane's outline (inner border forward, outer border back) and its heights; a closing repeat is dropped."""
    pts = np.concatenate([lane.inner, lane.outer[::-1]])
    z = None if lane.z is None else np.concatenate([lane.z[0], lane.z[1][::-1]])
    ring, zs = as_points_z(pts, z)
    if len(ring) > 3 and math.dist(ring[0], ring[-1]) < 1e-3:
        ring = ring[:-1]
        zs = zs[:-1] if zs is not None else None
    return ring, zs
