"""Painted lines: lane borders classified against their neighbours (broken, solid, edge), a map's own road marks,
and zebra bars across crosswalks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry

from simready.world.street.policy import (DASH_ASSET, DOUBLE_OFFSET_M, SHARE_TOL_M, SOLID_ASSET, STATION_M,
                                          TILE_LENGTH_M, TILE_STEP_M, ZEBRA_ASSET, ZEBRA_BAR_M, ZEBRA_PITCH_M)
from simready.world.street.tiles import Placed, Pt, dashes, heading_deg, longest, pieces_along, strip_borders
from simready.world.template_model import Lane, Marking, Region


@dataclass(frozen=True)
class _Border:
    lane: str
    side: int  # +1 left of travel, -1 right
    line: LineString
    parking: bool


def _borders(lanes: Sequence[Lane], regions: dict[str, Region]) -> list[_Border]:
    """Both borders of every lane, each running in the lane's direction.

    A lane that has a strip region of its own (an imported lane) takes its
    region's two borders, exact where the width varies along the lane; any
    other lane its centreline offset by half its width.
    """
    users: dict[str, int] = {}
    for lane in lanes:
        users[lane.region] = users.get(lane.region, 0) + 1
    out = []
    for lane in lanes:
        centre = LineString(lane.polyline)
        region = regions.get(lane.region)
        strip = strip_borders(region.polygon) if region is not None and users[lane.region] == 1 else None
        if strip is not None:
            lines = [LineString(b) for b in strip]
            sides = [_side(line, centre) for line in lines]
            found = dict(zip(sides, lines)) if sorted(sides) == [-1, 1] else {}
        else:
            found = {}
        for side in (1, -1):
            line = found.get(side) or longest(centre.offset_curve(side * lane.width_m / 2))
            if line is not None:
                line = LineString(line.coords[::-1]) if _reversed(line, centre) else line
                out.append(_Border(lane.id, side, line, lane.kind == "parking"))
    return out


def _side(line: LineString, centre: LineString) -> int:
    """+1 when ``line`` lies left of the directed ``centre`` (at ``line``'s middle), else -1."""
    p = line.interpolate(0.5, normalized=True)
    s = centre.project(p)
    a, b = centre.interpolate(max(s - 0.5, 0.0)), centre.interpolate(min(s + 0.5, centre.length))
    cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
    return 1 if cross > 0 else -1


def _reversed(line: LineString, centre: LineString) -> bool:
    """Whether an offset curve runs against its centreline (GEOS before 3.11 reversed right-hand offsets)."""
    return bool(centre.project(Point(line.coords[0])) > centre.project(Point(line.coords[-1])))


def _mark_kind(me: _Border, other: _Border | None) -> str | None:
    """``"solid"``, ``"broken"`` or None (nothing drawn here by ``me``) at one station of ``me``'s border."""
    if other is None:
        return None if me.parking else "solid"
    if other.lane < me.lane:
        return None  # the other lane draws the shared border
    if me.parking or other.parking or other.side == me.side:
        return "solid"  # a parking bay's edge, or the centre line between oncoming lanes
    return "broken"


def _phases(borders: Sequence[_Border]) -> list[float]:
    """Arc length from the start of each border's chain (the border it continues, its own predecessor, ...)."""
    ends = shapely.STRtree([Point(b.line.coords[-1]) for b in borders])
    pred: dict[int, int] = {}
    for i, b in enumerate(borders):
        start = Point(b.line.coords[0])
        near = [int(j) for j in ends.query(start, predicate="dwithin", distance=SHARE_TOL_M)
                if int(j) != i and borders[int(j)].side == b.side and borders[int(j)].lane != b.lane]
        if len(near) == 1:
            pred[i] = near[0]
    out = []
    for i in range(len(borders)):
        phase, j, seen = 0.0, i, {i}
        while j in pred and pred[j] not in seen:
            j = pred[j]
            seen.add(j)
            phase += borders[j].line.length
        out.append(phase)
    return out


def _neighbours(me: _Border, stations: Pt, borders: Sequence[_Border], tree: shapely.STRtree) -> list[_Border | None]:
    """At each station along ``me``, the nearest border of another lane within :data:`SHARE_TOL_M` (or None)."""
    points = shapely.line_interpolate_point(me.line, stations)
    station, other = tree.query(points, predicate="dwithin", distance=SHARE_TOL_M)
    keep = np.array([borders[j].lane != me.lane for j in other], dtype=bool)
    station, other = station[keep], other[keep]
    gaps = shapely.distance(np.asarray([borders[j].line for j in other], dtype=object), points[station]) \
        if len(other) else np.zeros(0)
    best: list[_Border | None] = [None] * len(stations)
    best_gap = np.full(len(stations), SHARE_TOL_M)
    for k in np.lexsort((other, gaps)):  # nearest first; ties to the lower border index
        i, gap = int(station[k]), float(gaps[k])
        if best[i] is None and gap < best_gap[i]:
            best[i], best_gap[i] = borders[int(other[k])], gap
    return best


def lane_markings(lanes: Sequence[Lane], regions: dict[str, Region]) -> list[Placed]:
    borders = _borders(lanes, regions)
    tree = shapely.STRtree([b.line for b in borders])
    phases = _phases(borders)
    out: list[Placed] = []
    for i, me in enumerate(borders):
        length = me.line.length
        stations = np.arange(STATION_M / 2, length, STATION_M)
        kinds = [_mark_kind(me, other) for other in _neighbours(me, stations, borders, tree)]
        start = 0
        for k in range(1, len(kinds) + 1):
            if k < len(kinds) and kinds[k] == kinds[start]:
                continue
            kind = kinds[start]
            s0 = float(stations[start]) - STATION_M / 2
            s1 = min(float(stations[k - 1]) + STATION_M / 2, length)
            if kind == "solid":
                out.extend((SOLID_ASSET, float(p[0]), float(p[1]), 0.0, yaw)
                           for p, yaw in pieces_along(me.line, s0, s1, TILE_LENGTH_M, TILE_STEP_M))
            elif kind == "broken":
                out.extend((DASH_ASSET, float(p[0]), float(p[1]), 0.0, yaw)
                           for p, yaw in dashes(me.line, s0, s1, phases[i]))
            start = k
    return out


def map_markings(markings: Iterable[Marking]) -> list[Placed]:
    """The map's own painted lines (``template.markings``): ``solid`` as line tiles, ``broken`` as dashes in the
    documented :data:`DASH_M` on / :data:`GAP_M` off rhythm from the polyline's start (the template keeps no
    rhythm of its own), a double type (``solid broken``, ``solid solid``, ...) as two lines
    :data:`DOUBLE_OFFSET_M` either side of the polyline, the first word on its left. Other types (``none``,
    ``botts dots``, ``grass``, ...) draw nothing. Every line is white: the catalog certifies no coloured
    marking. Placed flat here; :func:`lift` lays them on the road surface the tiles follow (not on the mark's
    own ``z``, so a line never floats above or sinks into the road the sensors and the physics see)."""
    out: list[Placed] = []
    for mark in sorted(markings, key=lambda m: m.id):
        kinds = mark.type.split()
        if not 1 <= len(kinds) <= 2 or any(k not in ("solid", "broken") for k in kinds):
            continue
        line = LineString(mark.polyline)
        if line.length <= 0.0:
            continue
        offsets = [0.0] if len(kinds) == 1 else [DOUBLE_OFFSET_M, -DOUBLE_OFFSET_M]
        for kind, offset in zip(kinds, offsets):
            drawn = line if offset == 0.0 else longest(line.offset_curve(offset))
            if drawn is None:
                continue
            pieces = (pieces_along(drawn, 0.0, drawn.length, TILE_LENGTH_M, TILE_STEP_M) if kind == "solid"
                      else dashes(drawn, 0.0, drawn.length, 0.0))
            asset = SOLID_ASSET if kind == "solid" else DASH_ASSET
            out.extend((asset, float(p[0]), float(p[1]), 0.0, yaw) for p, yaw in pieces)
    return out


def zebras(crossings: Iterable[Region], road: BaseGeometry) -> list[Placed]:
    """Zebra bars across each crosswalk region, over the carriageway only, running with the traffic."""
    out: list[Placed] = []
    if road is None:
        return out
    for region in crossings:
        rect = np.asarray(region.shape.minimum_rotated_rectangle.exterior.coords)[:4]
        edges = np.diff(np.vstack([rect, rect[:1]]), axis=0)
        k = int(np.argmax(np.hypot(*edges.T)))
        span = float(np.hypot(*edges[k]))
        across = edges[k] / span  # the walking direction
        centre = rect.mean(axis=0)
        for t in np.arange(-span / 2 + ZEBRA_BAR_M / 2, span / 2 - ZEBRA_BAR_M / 2 + 1e-9, ZEBRA_PITCH_M):
            p = centre + t * across
            if road.contains(Point(p)):
                out.append((ZEBRA_ASSET, float(p[0]), float(p[1]), 0.0, heading_deg(np.array([-across[1], across[0]]))))
    return out
