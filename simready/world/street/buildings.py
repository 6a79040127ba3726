"""Building blocks walked along the street's outline, set back and spaced by a generator seeded by the map's content,
kept clear of the street, the lanes' corridors and each other."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry
from shapely.geometry.polygon import orient

from simready.common.hashing import content_hash
from simready.world.street.policy import (BUILDINGS, CLEARANCE_M, CORRIDOR_M, GAP_RANGE_M, MAX_TURN_DEG, RETRY_STEP_M,
                                          SETBACK_RANGE_M)
from simready.world.street.tiles import Pt, heading_deg
from simready.world.template_model import WorldTemplate


def _seed(template: WorldTemplate) -> int:
    # simready.world.template loads templates through this module, so its template_hash is not called here: a
    # template without provenance (never an imported map) seeds from the hash of its own fields.
    basis = (template.provenance.source_sha256 if template.provenance is not None
             else content_hash(template.model_dump(mode="json")))
    return int.from_bytes(hashlib.sha256(f"simready.street.buildings:{basis}".encode()).digest()[:8], "little")


def _straight_enough(line: LineString, s0: float, s1: float, d: Pt) -> bool:
    """Whether the outline runs within :data:`MAX_TURN_DEG` of direction ``d`` at both ends of ``[s0, s1]``."""
    for a, b in ((s0, s0 + 1.0), (s1 - 1.0, s1)):
        pa, pb = line.interpolate(a), line.interpolate(b)
        t = np.array([pb.x - pa.x, pb.y - pa.y])
        norm = float(np.hypot(*t))
        if norm < 1e-9 or float(t @ d) / norm < math.cos(math.radians(MAX_TURN_DEG)):
            return False
    return True


class _Taken:
    """Polygons no block may meet, bucketed on a coarse grid so that a test reads only its neighbourhood."""

    CELL_M = 50.0

    def __init__(self, polygons: Iterable[Polygon]) -> None:
        self.cells: dict[tuple[int, int], list[Polygon]] = {}
        for poly in polygons:
            self.add(poly)

    def _keys(self, poly: Polygon) -> Iterable[tuple[int, int]]:
        x0, y0, x1, y1 = poly.bounds
        for i in range(math.floor(x0 / self.CELL_M), math.floor(x1 / self.CELL_M) + 1):
            for j in range(math.floor(y0 / self.CELL_M), math.floor(y1 / self.CELL_M) + 1):
                yield i, j

    def add(self, poly: Polygon) -> None:
        for key in self._keys(poly):
            self.cells.setdefault(key, []).append(poly)

    def meets(self, poly: Polygon) -> bool:
        return any(poly.intersects(t) for key in self._keys(poly) for t in self.cells.get(key, ()))


def _lane_corridors(template: WorldTemplate) -> list[Polygon]:
    """Where each lane would run on past its ends: kept free, so no block walls off a road that leaves the map."""
    out = []
    for lane in sorted(template.lanes, key=lambda lane: lane.id):
        pts = np.asarray(lane.polyline, dtype=np.float64)
        for end, before in ((pts[-1], pts[-2]), (pts[0], pts[1])):
            d = (end - before) / np.hypot(*(end - before))
            out.append(LineString([end, end + d * CORRIDOR_M]).buffer(lane.width_m / 2 + CLEARANCE_M, cap_style="flat"))
    return out


def buildings(template: WorldTemplate, footprint: BaseGeometry) -> list[tuple[str, Polygon, float, float, float]]:
    """Blocks along the footprint's outline: ``(asset, footprint polygon, x, y, yaw_deg)``, in walking order."""
    rng = np.random.default_rng(_seed(template))
    clear = footprint.buffer(CLEARANCE_M, join_style="mitre")
    shapely.prepare(clear)
    taken = _Taken([Point(i.pose.x, i.pose.y).buffer(CLEARANCE_M) for i in template.instances] + _lane_corridors(template))
    placed: list[tuple[str, Polygon, float, float, float]] = []
    polygons = sorted(getattr(footprint, "geoms", [footprint]), key=lambda g: (-g.area, g.bounds))
    rings = [r for g in polygons for r in (orient(g, 1.0).exterior, *orient(g, 1.0).interiors)]
    for ring in rings:
        line = LineString(ring.coords).simplify(0.25)
        s = float(rng.uniform(0.0, GAP_RANGE_M[1]))
        while True:
            asset, length, depth = BUILDINGS[int(rng.integers(len(BUILDINGS)))]
            setback = float(rng.uniform(*SETBACK_RANGE_M))
            if s + length > line.length:
                break
            p0, p1 = line.interpolate(s), line.interpolate(s + length)
            d = np.array([p1.x - p0.x, p1.y - p0.y])
            chord = float(np.hypot(*d))
            if chord < 0.8 * length or not _straight_enough(line, s, s + length, d / max(chord, 1e-9)):
                s += RETRY_STEP_M  # a corner of the outline lies under the block
                continue
            d /= chord
            outward = np.array([d[1], -d[0]])  # right of travel: the outside of a counter-clockwise outline
            c = np.array([(p0.x + p1.x) / 2, (p0.y + p1.y) / 2]) + outward * (setback + depth / 2)
            corners = [c + sa * d * length / 2 + sb * outward * depth / 2 for sa, sb in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
            block = Polygon(corners)
            if block.intersects(clear) or taken.meets(block):
                s += RETRY_STEP_M
                continue
            placed.append((asset, block, float(c[0]), float(c[1]), heading_deg(d)))
            taken.add(block.buffer(CLEARANCE_M, join_style="mitre"))
            s += length + float(rng.uniform(*GAP_RANGE_M))
    return placed
