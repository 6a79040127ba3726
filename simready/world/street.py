"""The static street of a template that has only regions and lanes (an imported map; SPEC §5, §18).

A hand-written template lays its road, sidewalks, kerbs and buildings out as
static instances of certified catalog assets (``data/templates/*.yaml``); an
OpenDRIVE map gives lanes and region polygons only. :func:`street_static`
turns those into the same kind of instances, of the catalog assets named
below, so every sensor, the truth labels and both simulation backends see
them exactly as they see a hand-written street — one mechanism, no second
geometry path:

* **road surface** — every ``drivable``, ``parking`` and ``intersection``
  region is cut into quads between its two borders (the importer writes a
  lane region as its inner border forward and its outer border back), and
  each quad is covered by road strip tiles (2.5 m along, 1–3 m across; they
  overlap by 0.5 m along a strip so that no gap opens on the outside of a
  curve, and across a lane where its width is not a tile width). A region
  that is not such a strip is covered by a grid of tiles along its minimum
  rotated rectangle whose centres lie inside it;
* **sidewalks** — ``sidewalk`` regions the same way with raised sidewalk
  tiles, :data:`KERB_HEIGHT_M` high (the map gives no kerb height on this
  branch; 0.15 m is the shipped templates' kerb), and a **kerb** along the
  border that faces the road;
* **lane markings** (ontology class ``lane_marking``) — where the template
  has ``markings`` (an imported map's road marks) exactly those, by their
  type (see :func:`_map_markings`: solid, broken, double); otherwise derived from the lanes: lane borders are
  the two borders of the lane's own strip region (an imported lane has
  one), else its centreline offset by half its width. Along each border, every
  :data:`STATION_M` metres: beside a lane of the same direction a broken
  line (:data:`DASH_M` on, :data:`GAP_M` off), beside an oncoming lane or a
  parking lane a solid line, beside nothing a solid edge line (none on a
  parking lane's own outer edge). Lanes inside junctions carry none, and
  lines stop short of a crosswalk. A shared border is drawn once, by the
  lane with the smaller id;
* **zebra crossings** (class ``crosswalk_marking``) — bars across every
  ``crosswalk`` region, :data:`ZEBRA_BAR_M` wide every :data:`ZEBRA_PITCH_M`,
  running with the traffic, over the carriageway only;
* **open ground** (class ``terrain``) — 20 m tiles on a world-aligned grid
  within :data:`TERRAIN_MARGIN_M` of the street, their top 2 cm below the
  road's, so that the verge, the yards between blocks and the setbacks are
  ground to the camera and the LiDAR rather than sky;
* **buildings** — blocks walked along the outline of everything above
  (the street's footprint), set back :data:`SETBACK_RANGE_M` from it, with
  gaps :data:`GAP_RANGE_M` between them; sizes, setbacks and gaps are drawn
  from a generator seeded by the map's content hash (``provenance.source_sha256``,
  else the template hash), so the same map always gets the same blocks and
  another map other ones. A block that would come nearer than
  :data:`CLEARANCE_M` to the street, another block or an existing instance
  is moved on. Each block also becomes a ``building`` region, as in the
  hand-written templates.

World frame: metres, x east, y north, z up; instance poses as in the
template (origin at the footprint centre on the ground, yaw in degrees).
**Heights.** Where the map gives heights (the importer's region ``z``:
elevation, superelevation, a sidewalk's lane height) every part is laid on
them (:func:`_lift`, :class:`Surface`): road tiles, markings and zebra bars
on the road surface, tilted with it (``pitch_deg`` / ``roll_deg``, so a
2.5 m tile follows a crest within millimetres); sidewalks and kerbs with
their top at the map's sidewalk height (or :data:`KERB_HEIGHT_M` above the
road where the map raises it less than :data:`RAISED_MIN_M`); terrain
tilted with the nearest road and lowered below it; buildings level on the
lowest ground under their corners. A map without heights gets the street
at z = 0, level, exactly as before heights were drawn.

Everything is computed in sorted order with no global state: the same
template gives the same instances, byte for byte.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, MultiLineString, Point, Polygon
from shapely.geometry.base import BaseGeometry
from shapely.geometry.polygon import orient
from shapely.ops import unary_union

from simready.common.hashing import content_hash
from simready.world.template_model import Instance, Lane, Marking, Pose, Region, WorldTemplate

__all__ = ["BUILDINGS", "KERB_HEIGHT_M", "MAX_DERIVED_INSTANCES", "STREET_GENERATOR", "STREET_PREFIX", "STREET_VERSION",
           "Street", "derived_street", "expand_street", "street_spec", "street_static", "with_street"]

#: What an imported template's ``street:`` section names: the street is derived from the template's own regions,
#: lanes and markings (the map's, through the importer) by this module at load time, not stored instance by instance
#: (docs/scale.md, "Derived streets"). Bump :data:`STREET_VERSION` when a change here would lay another street: a
#: template naming another version is refused rather than silently given a different world.
STREET_GENERATOR = "simready.world.street"
STREET_VERSION = 1
#: Most instances a derived street may have (a bound like the template's MAX_INSTANCES, which counts authored
#: instances only; a 3 MB city map's street has ~163 000).
MAX_DERIVED_INSTANCES = 2_000_000

#: Height of an imported map's sidewalks and kerbs (m) where the map gives none: the shipped templates' kerb.
KERB_HEIGHT_M = 0.15
#: Road and sidewalk strip tiles, widest first: ``(width across the strip m, asset)``; all 2.5 m long.
ROAD_TILES: tuple[tuple[float, str], ...] = (
    (3.0, "asset:road_surface/strip_2p5x3"), (2.0, "asset:road_surface/strip_2p5x2"),
    (1.0, "asset:road_surface/strip_2p5x1"))
SIDEWALK_TILES: tuple[tuple[float, str], ...] = (
    (2.0, "asset:sidewalk/strip_2p5x2"), (1.0, "asset:sidewalk/strip_2p5x1"))
#: Length of every strip tile, kerb piece and solid-line piece (m).
TILE_LENGTH_M = 2.5
#: Longest step between two tiles along a strip (m): 0.5 m less than a tile, so tiles overlap on curves.
TILE_STEP_M = 2.0
KERB_ASSET = "asset:curb/segment_2p5m"
KERB_WIDTH_M = 0.15
SOLID_ASSET = "asset:lane_marking/line_2p5m"
DASH_ASSET = "asset:lane_marking/dash_3m"
#: Broken line: dash and gap lengths (m), the common urban 3 m / 6 m.
DASH_M = 3.0
GAP_M = 6.0
#: Spacing of the points at which a lane border is classified (m).
STATION_M = 1.0
#: Lateral offset of each line of a map's double road mark from the mark's polyline (m).
DOUBLE_OFFSET_M = 0.1
#: Two lane borders closer than this (m) are one shared border.
SHARE_TOL_M = 0.3
#: Widest region that is still read as a strip between two borders (m).
MAX_STRIP_WIDTH_M = 30.0
#: Building blocks: ``(asset, length along the street m, depth m)``.
BUILDINGS: tuple[tuple[str, float, float], ...] = (
    ("asset:building/block_12x10x12", 12.0, 10.0), ("asset:building/block_16x12x15", 16.0, 12.0),
    ("asset:building/block_20x10x9", 20.0, 10.0), ("asset:building/block_24x14x21", 24.0, 14.0))
SETBACK_RANGE_M = (2.0, 5.0)
GAP_RANGE_M = (3.0, 15.0)
#: Nearest a block may come to the street, another block or an existing instance (m).
CLEARANCE_M = 1.5
#: Largest angle (degrees) between a block's front and the outline at either of its ends (a corner is larger).
MAX_TURN_DEG = 12.0
#: How far past a lane's end the road is kept free of blocks (m).
CORRIDOR_M = 60.0
#: How far a rejected block is moved along the outline before the next try (m).
RETRY_STEP_M = 2.0
ZEBRA_ASSET = "asset:crosswalk_marking/bar_3x0p5"
ZEBRA_BAR_M = 0.5
#: Bar plus gap across a crossing (m).
ZEBRA_PITCH_M = 1.0
TERRAIN_ASSET = "asset:terrain/tile_20x20"
TERRAIN_TILE_M = 20.0
#: Open ground reaches this far beyond the street's outline (m): past the deepest block at its largest setback.
TERRAIN_MARGIN_M = 25.0
#: Every instance and region this module adds starts with this (so it never meets an imported name).
STREET_PREFIX = "street_"
#: Decimal places of poses (0.1 mm; yaw in 1e-4 degrees), as the importer rounds.
DECIMALS = 4

ROAD_REGION_TYPES = ("drivable", "parking", "intersection")
Pt = np.ndarray
_Placed = tuple[str, float, float, float, float]  # asset, x, y, z, yaw_deg


@dataclass(frozen=True)
class Street:
    """What :func:`street_static` adds: template-format instance and region mappings, sorted by name/id."""

    instances: tuple[dict[str, Any], ...]
    regions: tuple[dict[str, Any], ...]

    def counts(self) -> dict[str, int]:
        """Instances per kind (the name's second word: road, sidewalk, kerb, marking, zebra, terrain, building)."""
        out: dict[str, int] = {}
        for inst in self.instances:
            kind = inst["name"][len(STREET_PREFIX):].split("_")[0]
            out[kind] = out.get(kind, 0) + 1
        return dict(sorted(out.items()))


# --- geometry helpers ---------------------------------------------------------------------------------------------


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


def _yaw_deg(d: Pt) -> float:
    return math.degrees(math.atan2(float(d[1]), float(d[0])))


def _fill_strip(a: Pt, b: Pt, tiles: Sequence[tuple[float, str]], z: float) -> list[_Placed]:
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
    out: list[_Placed] = []
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
                       for p, yaw in _along(line, 0.0, line.length, TILE_LENGTH_M, TILE_STEP_M, min_m=0.05))
    return out


def _fill_grid(poly: Polygon, tiles: Sequence[tuple[float, str]], z: float) -> list[_Placed]:
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
    yaw = _yaw_deg(along)
    out: list[_Placed] = []
    for s in np.arange(s_lo + TILE_STEP_M / 2, s_hi + TILE_STEP_M / 2, TILE_STEP_M):
        for t in np.arange(t_lo + (tw - 0.5) / 2, t_hi + (tw - 0.5) / 2, tw - 0.5):
            p = rect[0] + s * along + t * across
            if poly.contains(Point(p)):
                out.append((asset, float(p[0]), float(p[1]), z, yaw))
    return out


def _along(line: LineString, s0: float, s1: float, piece_m: float, step_m: float,
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
        out.append((np.array([p.x, p.y]), _yaw_deg(d)))
    return out


def _dashes(line: LineString, s0: float, s1: float, phase_m: float) -> list[tuple[Pt, float]]:
    """Whole dashes of a broken line from ``s0`` to ``s1``: :data:`DASH_M` on, :data:`GAP_M` off, a dash starting
    wherever ``phase_m`` + arc length is a whole number of periods (so a line keeps its rhythm across lanes)."""
    period = DASH_M + GAP_M
    out = []
    start = s0 + (-(phase_m + s0)) % period
    while start + DASH_M <= s1 + 1e-9:
        out.extend(_along(line, start, start + DASH_M, DASH_M, DASH_M))
        start += period
    return out


def _longest(geom: BaseGeometry) -> LineString | None:
    if isinstance(geom, MultiLineString):
        geom = max(geom.geoms, key=lambda g: g.length, default=None)
    return geom if isinstance(geom, LineString) and not geom.is_empty and geom.length > 0 else None


# --- the parts of the street --------------------------------------------------------------------------------------


def _surfaces(regions: Iterable[Region], tiles: Sequence[tuple[float, str]], z: float) -> list[_Placed]:
    out: list[_Placed] = []
    for region in regions:
        borders = strip_borders(region.polygon)
        out.extend(_fill_strip(*borders, tiles, z) if borders else _fill_grid(region.shape, tiles, z))
    return out


def _kerbs(sidewalks: Iterable[Region], road: BaseGeometry) -> list[_Placed]:
    """Kerb pieces along the border of each sidewalk strip that faces the road, inside the sidewalk."""
    out: list[_Placed] = []
    if road is None:
        return out
    for region in sidewalks:
        borders = strip_borders(region.polygon)
        if borders is None:
            continue
        lines = [LineString(b) for b in borders]
        gaps = [road.distance(line.interpolate(0.5, normalized=True)) for line in lines]
        side = int(np.argmin(gaps))
        if gaps[side] > 1.0:
            continue
        kerb, other = lines[side], lines[1 - side]
        for p, yaw in _along(kerb, 0.0, kerb.length, TILE_LENGTH_M, TILE_STEP_M):
            q = other.interpolate(other.project(Point(p)))
            inward = np.array([q.x, q.y]) - p
            norm = float(np.hypot(*inward))
            c = p + (inward / norm) * (KERB_WIDTH_M / 2) if norm > 1e-9 else p
            out.append((KERB_ASSET, float(c[0]), float(c[1]), 0.0, yaw))
    return out


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
            line = found.get(side) or _longest(centre.offset_curve(side * lane.width_m / 2))
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


def _markings(lanes: Sequence[Lane], regions: dict[str, Region]) -> list[_Placed]:
    borders = _borders(lanes, regions)
    tree = shapely.STRtree([b.line for b in borders])
    phases = _phases(borders)
    out: list[_Placed] = []
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
                           for p, yaw in _along(me.line, s0, s1, TILE_LENGTH_M, TILE_STEP_M))
            elif kind == "broken":
                out.extend((DASH_ASSET, float(p[0]), float(p[1]), 0.0, yaw)
                           for p, yaw in _dashes(me.line, s0, s1, phases[i]))
            start = k
    return out


def _map_markings(markings: Iterable[Marking]) -> list[_Placed]:
    """The map's own painted lines (``template.markings``): ``solid`` as line tiles, ``broken`` as dashes in the
    documented :data:`DASH_M` on / :data:`GAP_M` off rhythm from the polyline's start (the template keeps no
    rhythm of its own), a double type (``solid broken``, ``solid solid``, ...) as two lines
    :data:`DOUBLE_OFFSET_M` either side of the polyline, the first word on its left. Other types (``none``,
    ``botts dots``, ``grass``, ...) draw nothing. Every line is white: the catalog certifies no coloured
    marking. Placed flat here; :func:`_lift` lays them on the road surface the tiles follow (not on the mark's
    own ``z``, so a line never floats above or sinks into the road the sensors and the physics see)."""
    out: list[_Placed] = []
    for mark in sorted(markings, key=lambda m: m.id):
        kinds = mark.type.split()
        if not 1 <= len(kinds) <= 2 or any(k not in ("solid", "broken") for k in kinds):
            continue
        line = LineString(mark.polyline)
        if line.length <= 0.0:
            continue
        offsets = [0.0] if len(kinds) == 1 else [DOUBLE_OFFSET_M, -DOUBLE_OFFSET_M]
        for kind, offset in zip(kinds, offsets):
            drawn = line if offset == 0.0 else _longest(line.offset_curve(offset))
            if drawn is None:
                continue
            pieces = (_along(drawn, 0.0, drawn.length, TILE_LENGTH_M, TILE_STEP_M) if kind == "solid"
                      else _dashes(drawn, 0.0, drawn.length, 0.0))
            asset = SOLID_ASSET if kind == "solid" else DASH_ASSET
            out.extend((asset, float(p[0]), float(p[1]), 0.0, yaw) for p, yaw in pieces)
    return out


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


def _buildings(template: WorldTemplate, footprint: BaseGeometry) -> list[tuple[str, Polygon, float, float, float]]:
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
            placed.append((asset, block, float(c[0]), float(c[1]), _yaw_deg(d)))
            taken.add(block.buffer(CLEARANCE_M, join_style="mitre"))
            s += length + float(rng.uniform(*GAP_RANGE_M))
    return placed


def _zebras(crossings: Iterable[Region], road: BaseGeometry) -> list[_Placed]:
    """Zebra bars across each crosswalk region, over the carriageway only, running with the traffic."""
    out: list[_Placed] = []
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
                out.append((ZEBRA_ASSET, float(p[0]), float(p[1]), 0.0, _yaw_deg(np.array([-across[1], across[0]]))))
    return out


def _terrain(footprint: BaseGeometry) -> list[_Placed]:
    """Open-ground tiles on a world-aligned grid, wherever a tile comes within :data:`TERRAIN_MARGIN_M` of the street."""
    near = footprint.buffer(TERRAIN_MARGIN_M)
    shapely.prepare(near)
    x0, y0, x1, y1 = near.bounds
    out: list[_Placed] = []
    for i in range(math.floor(x0 / TERRAIN_TILE_M), math.ceil(x1 / TERRAIN_TILE_M)):
        for j in range(math.floor(y0 / TERRAIN_TILE_M), math.ceil(y1 / TERRAIN_TILE_M)):
            cell = shapely.box(i * TERRAIN_TILE_M, j * TERRAIN_TILE_M, (i + 1) * TERRAIN_TILE_M, (j + 1) * TERRAIN_TILE_M)
            if near.intersects(cell):
                out.append((TERRAIN_ASSET, (i + 0.5) * TERRAIN_TILE_M, (j + 0.5) * TERRAIN_TILE_M, 0.0, 0.0))
    return out


def _r(v: float) -> float:
    return round(float(v), DECIMALS) + 0.0


# --- heights (a map with elevation, superelevation or lane heights) -----------------------------------------------


class Surface:
    """Height (m) of a set of regions with per-vertex ``z``: linear on a triangulation of each region's polygon.

    A point inside a triangle gets its barycentric height; one outside every
    triangle gets the height of the nearest point of the nearest triangle
    (the surface continued level past its edge). Why triangles of the
    region's own vertices: the importer samples a lane's borders densely
    enough (every 2 m or less) that a crest's chord error is below a
    millimetre, and across a lane the height is linear (superelevation).
    """

    def __init__(self, regions: Iterable[Region]) -> None:
        with_z = [r for r in regions if r.z is not None]
        self.tris = np.zeros((0, 3, 3))
        self.tree: Any = None  # an STRtree over the triangles, once there are any
        if not with_z:
            return
        # Each triangle corner is one of its own region's vertices (the same bits): its height is looked up by
        # (region, x, y), so two regions meeting at a border at different heights (a kerb) keep their own.
        verts = np.concatenate([np.column_stack([np.full(len(r.polygon), k, dtype=np.float64),
                                                 np.asarray(r.polygon, dtype=np.float64)])
                                for k, r in enumerate(with_z)])
        heights = np.concatenate([np.asarray(r.z, dtype=np.float64) for r in with_z])
        parts, owner = shapely.get_parts(shapely.constrained_delaunay_triangles([r.shape for r in with_z]),
                                         return_index=True)
        rings = shapely.get_coordinates(shapely.get_exterior_ring(parts)).reshape(len(parts), 4, 2)[:, :3]
        corners = np.column_stack([np.repeat(owner.astype(np.float64), 3), rings.reshape(-1, 2)])
        keys = _row_keys(verts)
        order = np.argsort(keys, kind="stable")
        want = _row_keys(corners)
        at = np.minimum(np.searchsorted(keys[order], want), len(keys) - 1)
        found = (keys[order][at] == want).reshape(-1, 3).all(axis=1)
        zs = heights[order][at].reshape(-1, 3, 1)
        self.tris = np.concatenate([rings, zs], axis=2)[found]
        if len(self.tris):
            self.tree = shapely.STRtree(shapely.polygons(self.tris[:, :, :2]))

    def __bool__(self) -> bool:
        return self.tree is not None

    def covers(self, xy: np.ndarray) -> np.ndarray:
        """Whether each point of ``xy`` (n, 2) lies on one of the surface's triangles."""
        hit = np.zeros(len(xy), dtype=bool)
        if self.tree is not None and len(xy):
            hit[self.tree.query(shapely.points(np.asarray(xy, dtype=np.float64)), predicate="intersects")[0]] = True
        return hit

    def at(self, xy: np.ndarray) -> np.ndarray:
        """Heights at points ``xy`` (n, 2)."""
        return self.sample(xy)[0]

    def sample(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Heights at points ``xy`` (n, 2) and the surface's gradient there ``(dz/dx, dz/dy)`` (n, 2): the plane of
        the triangle under each point; a point off the surface gets the height of its nearest edge and no slope."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        points = shapely.points(xy)
        which = np.full(len(xy), -1, dtype=np.int64)
        inside, tri = self.tree.query(points, predicate="intersects")
        order = np.lexsort((tri, inside))  # per point, the lowest triangle index
        first = np.unique(inside[order], return_index=True)
        which[first[0]] = tri[order][first[1]]
        off = np.flatnonzero(which < 0)
        lost = off
        for reach in (NEAR_M, None):  # most points off the surface lie near it: a bounded search first
            if not len(lost):
                break
            near_pt, near_tri = self.tree.query_nearest(points[lost], max_distance=reach, all_matches=False)
            which[lost[near_pt]] = near_tri
            lost = np.flatnonzero(which < 0)
        if len(off):
            # The nearest point of that triangle (its edge), whose barycentric height continues the surface.
            polys = shapely.polygons(self.tris[which[off], :, :2])
            xy = xy.copy()
            xy[off] = shapely.get_coordinates(shapely.shortest_line(polys, points[off])).reshape(-1, 2, 2)[:, 0]
        t = self.tris[which]
        a, b, c = t[:, 0], t[:, 1], t[:, 2]
        v0, v1, v2 = b[:, :2] - a[:, :2], c[:, :2] - a[:, :2], xy - a[:, :2]
        den = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
        den = np.where(np.abs(den) < 1e-12, 1e-12, den)
        wb = (v2[:, 0] * v1[:, 1] - v1[:, 0] * v2[:, 1]) / den
        wc = (v0[:, 0] * v2[:, 1] - v2[:, 0] * v0[:, 1]) / den
        dz0, dz1 = b[:, 2] - a[:, 2], c[:, 2] - a[:, 2]
        out = a[:, 2] + wb * dz0 + wc * dz1
        # The plane's gradient g solves [v0; v1]·g = [dz0; dz1].
        grad = np.column_stack([(dz0 * v1[:, 1] - dz1 * v0[:, 1]) / den, (v0[:, 0] * dz1 - v1[:, 0] * dz0) / den])
        grad[off] = 0.0  # the surface continues level past its edge
        return out, grad


def _row_keys(a: np.ndarray) -> np.ndarray:
    """Each row of a float array as one opaque value (its bytes), for exact sorting and look-up."""
    a = np.ascontiguousarray(a, dtype=np.float64) + 0.0  # -0.0 and 0.0 the same bytes
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


#: Radius (m) of the first, bounded search for the surface nearest a point off it (then unbounded).
NEAR_M = 8.0
#: A sidewalk whose map height stands less than this above the road beside it is given :data:`KERB_HEIGHT_M`.
RAISED_MIN_M = 0.02


def _tilts(grad: np.ndarray, yaw_deg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pitch and roll (degrees, intrinsic z-y'-x'') that lay a body with heading ``yaw_deg`` on a surface of gradient
    ``grad`` (n, 2).

    With slopes ``sa`` along the heading and ``sc`` across it (to the left),
    the body's x axis is tangent for pitch = −atan(sa) and its y axis for
    roll = atan(sc / √(1 + sa²)).
    """
    yaw = np.radians(yaw_deg)
    c, s = np.cos(yaw), np.sin(yaw)
    sa = grad[:, 0] * c + grad[:, 1] * s
    sc = -grad[:, 0] * s + grad[:, 1] * c
    return np.degrees(-np.arctan(sa)), np.degrees(np.arctan(sc / np.sqrt(1.0 + sa * sa)))


_Lifted = tuple[str, float, float, float, float, float, float]  # asset, x, y, z, yaw_deg, pitch_deg, roll_deg


def _lift(placed: Sequence[_Placed], kind: str, road: Surface, walk: Surface) -> list[_Lifted]:
    """``placed`` (flat, at z = 0) laid on the map's heights, by kind:

    * road tiles, lane markings, zebra bars: on the road surface (``road``:
      the drivable, parking and junction regions), tilted with it; a marking
      on a sidewalk and off the road on the sidewalk's top;
    * sidewalk tiles and kerbs: their top at the map's sidewalk height
      (``walk``) where it stands at least :data:`RAISED_MIN_M` above the road
      beside it, else :data:`KERB_HEIGHT_M` above the road (the flat maps'
      kerb), tilted with the sidewalk;
    * terrain tiles: tilted with the road surface under their centre (level off it) and lowered so
      that no part of the tile rises above the surface's own height there
      (sampled at its corners, edge midpoints and centre);
    * building blocks: level, standing on the lowest surface height under
      their corners.
    """
    if not placed:
        return []
    xy = np.array([[p[1], p[2]] for p in placed])
    yaw = np.array([p[4] for p in placed])
    z0 = np.array([p[3] for p in placed])
    pitch, roll = np.zeros(len(placed)), np.zeros(len(placed))
    if kind == "road":
        z, grad = road.sample(xy)
        z = z + z0
        pitch, roll = _tilts(grad, yaw)
    elif kind in ("marking", "zebra"):
        z, grad = road.sample(xy)
        z = z + z0
        pitch, roll = _tilts(grad, yaw)
        if walk:  # a line painted on a sidewalk (a map's mark on its outer edge) lies on the sidewalk's top
            on_walk = walk.covers(xy) & ~road.covers(xy)
            if on_walk.any():
                lifted = _lift([placed[k] for k in np.flatnonzero(on_walk)], "kerb", road, walk)  # type: ignore[call-overload]
                z[on_walk] = [p[3] + KERB_HEIGHT_M for p in lifted]
                pitch[on_walk] = [p[5] for p in lifted]
                roll[on_walk] = [p[6] for p in lifted]
    elif kind in ("sidewalk", "kerb"):
        ground, grad = road.sample(xy)
        own, grad = walk.sample(xy) if walk else (ground, grad)
        top = np.where(own - ground >= RAISED_MIN_M, own, ground + KERB_HEIGHT_M)
        z = top - KERB_HEIGHT_M + z0
        pitch, roll = _tilts(grad, yaw)
    elif kind == "terrain":
        z, grad = road.sample(xy)
        pitch, roll = _tilts(grad, yaw)
        half = TERRAIN_TILE_M / 2
        offsets = np.array([(i, j) for i in (-half, 0.0, half) for j in (-half, 0.0, half)])
        samples = road.at((xy[:, None, :] + offsets[None]).reshape(-1, 2)).reshape(len(xy), -1)
        tan_p, tan_r = np.tan(np.radians(-pitch)), np.tan(np.radians(roll))
        plane = z[:, None] + tan_p[:, None] * offsets[None, :, 0] + tan_r[:, None] * offsets[None, :, 1]
        z = z - np.maximum((plane - samples).max(axis=1), 0.0) + z0
    else:
        raise ValueError(f"no height rule for street kind {kind!r}")
    return [(p[0], p[1], p[2], float(zi), p[4], float(pi), float(ri))
            for p, zi, pi, ri in zip(placed, z, pitch, roll)]


def _pose(x: float, y: float, z: float, yaw: float, pitch: float = 0.0, roll: float = 0.0) -> dict[str, float]:
    pose = {"x": _r(x), "y": _r(y), "z": _r(z), "yaw_deg": _r(yaw)}
    if _r(pitch) != 0.0:
        pose["pitch_deg"] = _r(pitch)
    if _r(roll) != 0.0:
        pose["roll_deg"] = _r(roll)
    return pose


def street_static(template: WorldTemplate) -> Street:
    """Road surfaces, sidewalks, kerbs, lane markings and building blocks for ``template`` (see module docstring)."""
    regions = sorted(template.regions, key=lambda r: r.id)
    road_regions = [r for r in regions if r.type in ROAD_REGION_TYPES]
    sidewalks = [r for r in regions if r.type == "sidewalk"]
    road = unary_union([r.shape for r in road_regions]) if road_regions else None
    junction = {r.id for r in regions if r.type == "intersection"}
    marked = [lane for lane in sorted(template.lanes, key=lambda lane: lane.id) if lane.region not in junction]

    crossings = [r for r in regions if r.type == "crosswalk"]
    crossing_area = unary_union([r.shape for r in crossings]).buffer(TILE_LENGTH_M / 2) if crossings else None
    placed_lines = _map_markings(template.markings) if template.markings else _markings(marked, template.region_by_id)
    lines = [m for m in placed_lines
             if crossing_area is None or not crossing_area.contains(Point(m[1], m[2]))]  # lines stop at a crossing
    groups: list[tuple[str, list[_Placed]]] = [
        ("road", _surfaces(road_regions, ROAD_TILES, 0.0)),
        ("sidewalk", _surfaces(sidewalks, SIDEWALK_TILES, 0.0)),
        ("kerb", _kerbs(sidewalks, road)),
        ("marking", lines),
        ("zebra", _zebras(crossings, road)),
    ]
    footprint = unary_union([r.shape for r in regions if r.type != "building"])
    groups.append(("terrain", _terrain(footprint)))
    # Where the map gives heights, every part is laid on them (_lift); a flat map's street is exactly as before.
    road_surface = Surface(road_regions)
    walk_surface = Surface(sidewalks)
    instances: list[dict[str, Any]] = []
    for kind, placed in groups:
        lifted = _lift(placed, kind, road_surface, walk_surface) if road_surface else [(*p, 0.0, 0.0) for p in placed]
        for k, (asset, x, y, z, yaw, pitch, roll) in enumerate(lifted):
            instances.append({"name": f"{STREET_PREFIX}{kind}_{k:05d}", "asset": asset,
                              "pose": _pose(x, y, z, yaw, pitch, roll)})
    new_regions = []
    blocks = _buildings(template, footprint)
    base = np.zeros(len(blocks))
    if road_surface and blocks:
        corners = np.array([np.asarray(block.exterior.coords)[:4] for _, block, *_ in blocks]).reshape(-1, 2)
        base = road_surface.at(corners).reshape(len(blocks), 4).min(axis=1)
    for k, ((asset, block, x, y, yaw), z) in enumerate(zip(blocks, base)):
        name = f"{STREET_PREFIX}building_{k:04d}"
        instances.append({"name": name, "asset": asset, "pose": {"x": _r(x), "y": _r(y), "z": _r(z), "yaw_deg": _r(yaw)}})
        ring = [[_r(px), _r(py)] for px, py in orient(block, 1.0).exterior.coords[:-1]]
        new_regions.append({"id": name, "type": "building", "polygon": ring})
    return Street(tuple(sorted(instances, key=lambda i: i["name"])), tuple(new_regions))


def street_spec() -> dict[str, Any]:
    """The ``street:`` section of a template whose street is derived at load time."""
    return {"generator": STREET_GENERATOR, "version": STREET_VERSION}


def derived_street(data: dict[str, Any]) -> dict[str, Any]:
    """Template data (as written to YAML) that names its street instead of listing it: ``street:`` added, the
    instances and building regions left to :func:`expand_street` at load time. The result is a new mapping."""
    return {**data, "street": street_spec()}


#: Pose's fields in their declared order (a dump lists them so) with their defaults (x and y are always given).
_POSE_DEFAULTS = {"x": None, "y": None, "z": 0.0, "yaw_deg": 0.0, "pitch_deg": None, "roll_deg": None}
_INSTANCE_SET = frozenset({"name", "asset", "pose"})
_PRIVATE_DEFAULTS: dict[Any, dict[str, Any]] = {}


def _built(cls: Any, values: dict[str, Any], fields_set: Any, private: dict[str, Any] | None = None) -> Any:
    """A pydantic model from ``values`` holding every field, unvalidated: what ``model_construct`` does without
    resolving defaults per object (a quarter of loading a city's 160 000 derived instances). Private attributes
    take their defaults, then ``private``."""
    defaults = _PRIVATE_DEFAULTS.get(cls)
    if defaults is None:
        defaults = _PRIVATE_DEFAULTS[cls] = {name: attr.get_default()
                                             for name, attr in (cls.__private_attributes__ or {}).items()}
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", {**defaults, **(private or {})} if defaults or private else None)
    return obj


def expand_street(template: WorldTemplate) -> WorldTemplate:
    """``template`` with :func:`street_static`'s instances and building regions, as :func:`with_street` gives them
    (the same sorted instances and regions, so the same template hash) without validating the template again: the
    generated poses are rounded, bounded numbers; the building rings are checked like any region.

    Raises ValueError when the street would exceed :data:`MAX_DERIVED_INSTANCES`.
    """
    street = street_static(template)
    if len(street.instances) > MAX_DERIVED_INSTANCES:
        raise ValueError(f"the derived street has {len(street.instances)} instances, more than the limit of "
                         f"{MAX_DERIVED_INSTANCES}")
    added = [_built(Instance, {"name": i["name"], "asset": i["asset"],
                               "pose": _built(Pose, {k: i["pose"].get(k, d) for k, d in _POSE_DEFAULTS.items()},
                                              set(i["pose"])),
                               "repeat": None}, _INSTANCE_SET, {"_authored_index": -1})
             for i in street.instances]
    fields = {name: getattr(template, name) for name in type(template).model_fields}
    fields["instances"] = tuple(sorted((*template.instances, *added), key=lambda i: i.name))
    fields["regions"] = tuple(sorted((*template.regions, *(Region.model_validate(r) for r in street.regions)),
                                     key=lambda r: r.id))
    return type(template).model_construct(_fields_set=template.model_fields_set, **fields)


def with_street(data: dict[str, Any], source: str = "<memory>") -> dict[str, Any]:
    """Template data (as written to YAML) with :func:`street_static`'s instances and building regions added.

    ``data`` must be a template's fields (pydantic's ValidationError otherwise; the caller validates the result
    as a whole, e.g. with :func:`simready.world.template.parse_template`); the result is a new mapping.
    """
    street = street_static(WorldTemplate.model_validate(data))
    out = dict(data)
    out["regions"] = sorted([*data.get("regions", []), *street.regions], key=lambda r: r["id"])
    out["instances"] = sorted([*data.get("instances", []), *street.instances], key=lambda i: i["name"])
    return out
