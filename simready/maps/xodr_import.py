"""OpenDRIVE map → world template (SPEC §5, §15): lanes, regions, walkable graph, signals, crosswalks.

World frame = the map's inertial frame (metres, x east, y north, z up, yaw
counter-clockwise from +x); the template is planar, so elevation is dropped
(and reported). What becomes what:

* every lane of every lane section is sampled along its road's reference
  line (:mod:`simready.maps.refline`) at the geometry, section, offset and
  width breakpoints and at least every :data:`MAX_STEP_M` (closer on curves,
  so that chords stay within :data:`CHORD_TOLERANCE_M` of the arc); its
  borders are the lane offset plus the summed width polynomials, its region
  the polygon between them (inner border forward, outer border back);
* driving-type lanes (and parking lanes) become directed template lanes:
  with right-hand traffic a lane with a negative id runs along s, a positive
  one against it (left-hand traffic the other way round); lanes of a road
  inside a junction sit in ``intersection`` regions and are ``turn`` lanes
  when they turn by more than :data:`TURN_DEG`. The template derives
  successors from geometry; the importer also derives them from the file's
  road, lane and junction links and reports every lane where the two differ;
* sidewalks become sidewalk regions and walkable chains; each crosswalk object
  a crosswalk region joined to the two sidewalks it touches, with a
  ``pedestrian_crossing`` affordance and a ``connects`` relation;
* each dynamic signal (traffic light) a fixed-time template signal over the
  driving lanes it is valid for, its stop line at the signal's s (or at the
  s of a stop-line signal it references), and a signal-head instance;
* everything else met (other lane types, objects, static signs, elevation,
  road marks, ...) is named in the report, never dropped silently.

Ids: ``road<id>_sec<k>_lane<id>`` for lanes and lane regions, ``crosswalk_<road>_<object>``,
``signal_<id>``; the output is sorted by id and rounded to 0.1 mm, so the
same map gives the same bytes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from shapely import is_valid_reason, make_valid
from shapely.geometry import LineString, Point, Polygon, box
from shapely.ops import unary_union

from simready.hashing import sha256_bytes
from simready.maps import defaults
from simready.maps.errors import MapError
from simready.maps.opendrive import Lane, LaneSection, MapObject, OpenDriveMap, Poly3, Road, read_opendrive
from simready.maps.refline import Array, max_curvature, reference_poses
from simready.world.lanes import LaneGraph

__all__ = ["CHORD_TOLERANCE_M", "MAX_STEP_M", "ImportReport", "ImportedMap", "LaneKey", "file_successors",
           "import_opendrive", "lane_name"]

#: Largest distance between samples along a road (m).
MAX_STEP_M = 2.0
#: Road s values closer than this are sampled once (m).
SAMPLE_MERGE_M = 1e-4
#: Largest gap between a chord and the arc it replaces (m).
CHORD_TOLERANCE_M = 0.002
#: A junction lane turning by more than this is a ``turn`` lane (deg).
TURN_DEG = 30.0
#: Output coordinates are rounded to this many decimals (0.1 mm).
DECIMALS = 4
#: Walkable nodes along a sidewalk are at most this far apart (m).
WALK_NODE_SPACING_M = 10.0
#: A crosswalk joins a sidewalk it comes this close to (m); the template checks ``connects`` at 0.2 m.
CROSSWALK_TOUCH_M = 0.15
#: Outline pieces a repaired fold may drop, in all (m²).
FOLD_TOLERANCE_M2 = 0.01
#: Sidewalk chains whose ends are this close are joined (m).
SIDEWALK_JOIN_M = 0.5

DRIVING_TYPES = ("driving", "entry", "exit", "onRamp", "offRamp", "connectingRamp")
#: OpenDRIVE 1.8 renamed ``sidewalk`` to ``walking``.
SIDEWALK_TYPES = ("sidewalk", "walking")
#: Lane types that become a region without a lane, and the region type.
REGION_ONLY_TYPES = {"shoulder": "drivable", "biking": "drivable", "border": "median", "median": "median",
                     "curb": "median"}

LaneKey = tuple[str, int, int]


def lane_name(key: LaneKey) -> str:
    """Template id of lane ``(road id, section index, lane id)``."""
    road, k, lane = key
    return f"road{_safe(road)}_sec{k}_lane{lane}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", text)


@dataclass
class ImportReport:
    """What the import did: counts, defaults applied, and everything skipped (one line each)."""

    template_id: str
    source: str
    source_sha256: str
    version: str
    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)
    link_mismatches: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"imported {self.source} (OpenDRIVE {self.version}, sha256 {self.source_sha256[:12]}) as {self.template_id}: "
               + ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))]
        out += [f"default: {line}" for line in self.defaults]
        out += [f"skipped: {line}" for line in self.skipped]
        out += [f"links: {line}" for line in self.link_mismatches]
        return out


@dataclass(frozen=True)
class _SampledLane:
    """One lane of one lane section, sampled at road arc lengths ``s`` ((N,), metres, increasing).

    ``inner``, ``outer``, ``centre``: (N, 2) world points (metres) of the border
    nearer the reference line, the far border and the centreline, in road-s
    order (not travel order); ``width``: (N,) metres; ``forward``: the lane is
    driven along s; ``junction``: its road lies in a junction; ``speed_mps``:
    its speed record (−1 when the map has none).
    """

    key: LaneKey
    type: str
    s: Array
    inner: Array
    outer: Array
    centre: Array
    width: Array
    forward: bool
    junction: bool
    speed_mps: float


@dataclass
class ImportedMap:
    """The template as plain data (ready for YAML) and the report."""

    data: dict[str, Any]
    report: ImportReport
    lanes: dict[str, _SampledLane]
    file_successors: dict[str, tuple[str, ...]]


# --- sampling ---------------------------------------------------------------------------------------------------


def _breakpoints(road: Road) -> list[float]:
    pts = {0.0, road.length}
    pts.update(g.s for g in road.geometries)
    pts.update(o.s0 for o in road.lane_offsets)
    for sec in road.sections:
        pts.add(sec.s)
        for lane in sec.lanes:
            pts.update(sec.s + w.s0 for w in lane.widths)
    return sorted(p for p in pts if 0.0 <= p <= road.length)


def _road_samples(road: Road) -> Array:
    """Sorted road s values: every breakpoint, and enough between them for chords within tolerance."""
    bps = _breakpoints(road)
    starts = [g.s for g in road.geometries]
    out = [np.array(bps)]
    for a, b in zip(bps, bps[1:]):
        g = road.geometries[max(0, int(np.searchsorted(starts, a, side="right")) - 1)]
        k = max_curvature(g)
        step = MAX_STEP_M if k == 0.0 else min(MAX_STEP_M, math.sqrt(8.0 * CHORD_TOLERANCE_M / k))
        n = max(1, math.ceil((b - a) / step))
        out.append(np.linspace(a, b, n + 1))
    s = np.unique(np.concatenate(out))
    # Breakpoints from different records closer than this are one point (a sliver sample would fold an outline).
    keep = np.concatenate([[True], np.diff(s) > SAMPLE_MERGE_M])
    return s[keep]


def _poly_at(records: tuple[Poly3, ...], s: Array, base: float = 0.0) -> Array:
    """Piecewise cubic: each s on the last record whose start (``base + s0``) is at or before it; 0 before all."""
    out = np.zeros_like(s)
    for i, rec in enumerate(records):
        start = base + rec.s0
        end = base + records[i + 1].s0 if i + 1 < len(records) else math.inf
        mask = (s >= start - 1e-9) & (s < end - 1e-9) if end != math.inf else s >= start - 1e-9
        ds = s[mask] - start
        out[mask] = rec.a + ds * (rec.b + ds * (rec.c + ds * rec.d))
    return out


def _lane_width(src: str, road: Road, sec: LaneSection, lane: Lane, s: Array) -> Array:
    where = f"road {road.id}, laneSection s={sec.s:g}, lane {lane.id}"
    if not lane.widths:
        reason = "lane <border> records are not supported (give <width>)" if lane.has_border else "lane has no <width>"
        raise MapError(src, where, f"{reason} (line {lane.line})")
    w = _poly_at(lane.widths, s, base=sec.s)
    bad = np.flatnonzero(w < -1e-9)
    if bad.size:
        i = int(bad[0])
        rec = next(r for r in reversed(lane.widths) if sec.s + r.s0 <= s[i] + 1e-9)
        raise MapError(src, where + ", width", f"negative lane width {w[i]:.3f} m at s={s[i]:.2f} (line {rec.line})")
    return np.maximum(w, 0.0)


def _lane_speed(road: Road, sec: LaneSection, lane: Lane) -> float | None:
    if lane.speeds_mps:
        return lane.speeds_mps[0][1]
    for s0, v in reversed(road.speeds_mps):
        if s0 <= sec.s + 1e-9:
            return v
    return road.speeds_mps[0][1] if road.speeds_mps else None


def _sample_road(src: str, road: Road, report: ImportReport) -> list[_SampledLane]:
    s_all = _road_samples(road)
    pose = reference_poses(road.geometries, s_all)
    normal = np.stack([-np.sin(pose.hdg), np.cos(pose.hdg)], axis=1)
    ref = np.stack([pose.x, pose.y], axis=1)
    offset = _poly_at(road.lane_offsets, s_all)
    forward_sign = -1 if road.rule != "LHT" else 1
    out = []
    ends = [sec.s for sec in road.sections[1:]] + [road.length]
    for k, (sec, end) in enumerate(zip(road.sections, ends)):
        if end - sec.s < 1e-6:
            report.skipped.append(f"road {road.id}, laneSection s={sec.s:g}: zero length")
            continue
        mask = (s_all >= sec.s - 1e-9) & (s_all <= end + 1e-9)
        s, sec_ref, sec_normal = s_all[mask], ref[mask], normal[mask]
        for side in (-1, 1):
            t_inner = offset[mask].copy()
            for lane in sorted((ln for ln in sec.lanes if ln.id * side > 0), key=lambda ln: abs(ln.id)):
                w = _lane_width(src, road, sec, lane, s)
                t_outer = t_inner + side * w
                inner, outer, centre = (sec_ref + sec_normal * t[:, None]
                                        for t in (t_inner, t_outer, 0.5 * (t_inner + t_outer)))
                speed = _lane_speed(road, sec, lane)
                out.append(_SampledLane((road.id, k, lane.id), lane.type, s, inner, outer, centre, w,
                                        (lane.id * forward_sign) > 0, road.in_junction,
                                        speed if speed is not None else -1.0))
                t_inner = t_outer
    return out


# --- links from the file -----------------------------------------------------------------------------------------

_End = tuple[LaneKey, str]  # (lane, "start" | "end") in road s terms


def _section_at(road: Road, contact: str) -> int:
    return 0 if contact == "start" else len(road.sections) - 1


def file_successors(odr: OpenDriveMap, lanes: set[LaneKey], forward: dict[LaneKey, bool]) -> tuple[dict[LaneKey, set[LaneKey]], list[str]]:
    """Directed lane successors as the file's links declare them, among ``lanes``; and head-to-head links.

    Links join lane *ends*; a link runs from the lane whose travel leaves at
    its end to the lane whose travel enters at its end. ``forward[lane]``:
    the lane runs along its road's s.
    """
    roads = {r.id: r for r in odr.roads}
    pairs: set[tuple[_End, _End]] = set()

    def link(a: _End, b: _End) -> None:
        if a[0] in lanes and b[0] in lanes:
            pairs.add((min(a, b), max(a, b)))

    for road in odr.roads:
        last = len(road.sections) - 1
        for k, sec in enumerate(road.sections):
            for lane in sec.lanes:
                here = (road.id, k, lane.id)
                for j in lane.successors:
                    if k < last:
                        link((here, "end"), ((road.id, k + 1, j), "start"))
                    elif road.successor and road.successor.element_type == "road" and road.successor.element_id in roads:
                        other = roads[road.successor.element_id]
                        cp = road.successor.contact_point or "start"
                        link((here, "end"), ((other.id, _section_at(other, cp), j), cp))
                for j in lane.predecessors:
                    if k > 0:
                        link((here, "start"), ((road.id, k - 1, j), "end"))
                    elif road.predecessor and road.predecessor.element_type == "road" and road.predecessor.element_id in roads:
                        other = roads[road.predecessor.element_id]
                        cp = road.predecessor.contact_point or "end"
                        link((here, "start"), ((other.id, _section_at(other, cp), j), cp))
    for junction in odr.junctions:
        for c in junction.connections:
            incoming, connecting = roads[c.incoming_road], roads[c.connecting_road]
            if incoming.successor and incoming.successor.element_type == "junction" and incoming.successor.element_id == junction.id:
                in_end = "end"
            else:
                in_end = "start"
            for a, b in c.lane_links:
                link(((incoming.id, _section_at(incoming, in_end), a), in_end),
                     ((connecting.id, _section_at(connecting, c.contact_point), b), c.contact_point))
    succ: dict[LaneKey, set[LaneKey]] = {key: set() for key in lanes}
    problems = []
    for (la, ea), (lb, eb) in sorted(pairs):
        exits_a = (ea == "end") == forward[la]
        exits_b = (eb == "end") == forward[lb]
        if exits_a and not exits_b:
            succ[la].add(lb)
        elif exits_b and not exits_a:
            succ[lb].add(la)
        else:
            problems.append(f"{lane_name(la)} and {lane_name(lb)} are linked {'head to head' if exits_a else 'tail to tail'}")
    return succ, problems


# --- crosswalks, signals -----------------------------------------------------------------------------------------


def _object_polygon(road: Road, obj: MapObject) -> Polygon | None:
    s = np.array([min(max(obj.s, 0.0), road.length)])
    pose = reference_poses(road.geometries, s)
    hdg = float(pose.hdg[0])
    nx, ny = -math.sin(hdg), math.cos(hdg)
    ox, oy = float(pose.x[0]) + obj.t * nx, float(pose.y[0]) + obj.t * ny
    heading = hdg + obj.hdg
    c, sn = math.cos(heading), math.sin(heading)
    local = [(k.a, k.b) for k in obj.corners if k.kind == "local"]
    road_corners = [(k.a, k.b) for k in obj.corners if k.kind == "road"]
    if road_corners:
        ss = np.array([min(max(a, 0.0), road.length) for a, _ in road_corners])
        order = np.argsort(ss, kind="stable")
        p = reference_poses(road.geometries, ss[order])
        pts = [(0.0, 0.0)] * len(ss)
        for i, j in enumerate(order):
            t = road_corners[j][1]
            pts[j] = (float(p.x[i]) - t * math.sin(p.hdg[i]), float(p.y[i]) + t * math.cos(p.hdg[i]))
    else:
        if not local:
            if obj.length <= 0.0 or obj.width <= 0.0:
                return None
            hl, hw = 0.5 * obj.length, 0.5 * obj.width
            local = [(-hl, -hw), (hl, -hw), (hl, hw), (-hl, hw)]
        pts = [(ox + u * c - v * sn, oy + u * sn + v * c) for u, v in local]
    poly = Polygon(pts)
    return poly if poly.is_valid and poly.area > 0.01 else None


# --- the template --------------------------------------------------------------------------------------------------


def _r(v: float) -> float:
    out = round(float(v), DECIMALS)
    return 0.0 if out == 0.0 else out


def _pts(points: Array) -> list[list[float]]:
    out: list[list[float]] = []
    for x, y in points:
        p = [_r(x), _r(y)]
        if not out or math.dist(out[-1], p) >= 1e-3:
            out.append(p)
    return out


def _validate_links(src: str, odr: OpenDriveMap) -> None:
    roads = {r.id for r in odr.roads}
    for j in odr.junctions:
        for c in j.connections:
            for attr, road_id in (("incomingRoad", c.incoming_road), ("connectingRoad", c.connecting_road)):
                if road_id not in roads:
                    raise MapError(src, f"junction {j.id}, connection {c.id}",
                                   f"{attr} {road_id!r} is not a road of the map (line {c.line})")
    junctions = {j.id for j in odr.junctions}
    for r in odr.roads:
        for which, ln in (("predecessor", r.predecessor), ("successor", r.successor)):
            if ln is None:
                continue
            known = roads if ln.element_type == "road" else junctions
            if ln.element_id not in known:
                raise MapError(src, f"road {r.id}, link.{which}",
                               f"{ln.element_type} {ln.element_id!r} is not in the map (line {ln.line})")


def import_opendrive(path: str | Path, template_id: str,
                     bounds: tuple[float, float, float, float] | None = None) -> ImportedMap:
    """Read ``path`` and build template ``template_id`` from it (optionally only what lies in ``bounds``).

    Raises:
        MapError: one line naming the XML element and its line.
    """
    path = Path(path)
    odr, raw = read_opendrive(path)
    src = str(path)
    report = ImportReport(template_id, path.name, sha256_bytes(raw).removeprefix("sha256:"), odr.version)
    report.skipped.extend(odr.unread)
    _validate_links(src, odr)
    sampled: list[_SampledLane] = []
    for road in odr.roads:
        sampled.extend(_sample_road(src, road, report))
    builder = _Builder(src, odr, report, bounds)
    data = builder.build(sampled)
    report.counts = {"lanes": len(data["lanes"]), "regions": len(data["regions"]), "signals": len(data["signals"]),
                     "walkable nodes": len(data["walkable"]["nodes"]), "crosswalks": builder.crosswalks}
    data["provenance"] = {"format": "ASAM OpenDRIVE", "format_version": odr.version, "source": path.name,
                          "source_sha256": report.source_sha256, "importer": "simready.maps.xodr_import 1",
                          "skipped": list(report.skipped), "defaults": list(report.defaults)}
    return ImportedMap(data, report, builder.lane_by_name, builder.file_succ)


class _Builder:
    """Turns sampled lanes and the map's signals and objects into template sections (sorted by id)."""

    def __init__(self, src: str, odr: OpenDriveMap, report: ImportReport,
                 bounds: tuple[float, float, float, float] | None) -> None:
        self.src = src
        self.odr = odr
        self.report = report
        self.bounds = None if bounds is None else box(*bounds)
        self.regions: dict[str, dict[str, Any]] = {}
        self.lanes: dict[str, dict[str, Any]] = {}
        self.lane_by_name: dict[str, _SampledLane] = {}
        self.lane_key_by_name: dict[str, LaneKey] = {}
        self.sidewalks: dict[str, _SampledLane] = {}
        self.file_succ: dict[str, tuple[str, ...]] = {}
        self.crosswalks = 0
        self.skipped: Counter[str] = Counter()
        self.defaulted_speed: set[str] = set()

    # -- lanes and regions --

    def _region(self, rid: str, rtype: str, lane: _SampledLane) -> Polygon | None:
        ring = _pts(np.concatenate([lane.inner, lane.outer[::-1]]))
        if len(ring) < 3:
            return None
        poly = Polygon(ring)
        if not poly.is_valid:
            poly, ring = self._repaired(lane, poly)
        if self.bounds is not None:
            if not self.bounds.contains(poly):
                self.skipped["lanes not wholly inside --bounds"] += 1
                return None
        if poly.area <= 0.01:
            self.skipped[f"{lane.type} lane of zero area"] += 1
            return None
        entry: dict[str, Any] = {"id": rid, "type": rtype, "polygon": ring}
        if rtype in ("drivable", "intersection"):
            entry["speed_limit_mps"] = self._speed(lane)
        self.regions[rid] = entry
        return poly

    def _repaired(self, lane: _SampledLane, poly: Polygon) -> tuple[Polygon, list[list[float]]]:
        """A lane outline that folds over itself by a sliver, repaired; a real fold is a one-line error.

        Why: where a lane of (nearly) zero width meets a heading discontinuity
        between plan-view records, its two borders cross by a hair; OpenDRIVE
        tools draw such lanes anyway. A fold that leaves pieces beyond
        :data:`FOLD_TOLERANCE_M2` (a lane wider than its curve's radius, a
        width polynomial that turns back) is refused with its location.
        """
        fixed = make_valid(poly)
        parts = sorted((g for g in getattr(fixed, "geoms", [fixed]) if isinstance(g, Polygon)), key=lambda g: -g.area)
        if parts and sum(g.area for g in parts[1:]) <= FOLD_TOLERANCE_M2 and len(parts[0].interiors) == 0:
            self.skipped["lane outlines folded by a sliver at a plan-view kink: repaired"] += 1
            return parts[0], _pts(np.asarray(parts[0].exterior.coords[:-1]))
        road, k, lid = lane.key
        sec = self.odr.road(road).sections[k]
        raise MapError(self.src, f"road {road}, laneSection s={sec.s:g}, lane {lid}",
                       f"lane outline is not a valid polygon ({is_valid_reason(poly)}): the lane is wider than "
                       f"its road's curve radius or its width polynomial folds it (line {sec.line})")

    def _speed(self, lane: _SampledLane) -> float:
        if lane.speed_mps > 0.0:
            return round(lane.speed_mps, 3)
        self.defaulted_speed.add(lane.key[0])
        return defaults.DEFAULT_SPEED_MPS

    def _add_lane(self, lane: _SampledLane) -> None:
        name = lane_name(lane.key)
        if lane.type in DRIVING_TYPES or lane.type == "parking":
            rtype = "parking" if lane.type == "parking" else ("intersection" if lane.junction else "drivable")
            if self._region(name, rtype, lane) is None:
                return
            centre = lane.centre if lane.forward else lane.centre[::-1]
            kind = "parking" if lane.type == "parking" else "driving"
            if lane.junction and kind == "driving":
                turn = math.degrees(abs((_heading(centre, -1) - _heading(centre, 0) + math.pi) % (2 * math.pi) - math.pi))
                kind = "turn" if turn > TURN_DEG else "driving"
            self.lanes[name] = {"id": name, "region": name, "kind": kind, "width_m": _r(float(np.mean(lane.width))),
                                "speed_limit_mps": self._speed(lane), "polyline": _pts(centre)}
            self.lane_by_name[name] = lane
            self.lane_key_by_name[name] = lane.key
        elif lane.type in SIDEWALK_TYPES:
            if self._region(name, "sidewalk", lane) is not None:
                self.sidewalks[name] = lane
        elif lane.type in REGION_ONLY_TYPES:
            if self._region(name, REGION_ONLY_TYPES[lane.type], lane) is not None:
                self.skipped[f"{lane.type} lanes: kept as {REGION_ONLY_TYPES[lane.type]} regions without a lane"] += 1
        else:
            self.skipped[f"lanes of type {lane.type!r}"] += 1

    # -- the whole template --

    def build(self, sampled: list[_SampledLane]) -> dict[str, Any]:
        for lane in sorted(sampled, key=lambda ln: lane_name(ln.key)):
            self._add_lane(lane)
        if not any(v["kind"] in ("driving", "turn") for v in self.lanes.values()):
            first = self.odr.roads[0]
            raise MapError(self.src, "OpenDRIVE.road", f"no drivable lane in {len(self.odr.roads)} road(s)"
                           + (" inside --bounds" if self.bounds is not None else "")
                           + f": no lane of type {', '.join(DRIVING_TYPES)} (first road {first.id} at line {first.line})")
        self._links()
        walkable, crossings, relations = self._walkable()
        signals, instances, controls = self._signals()
        if self.defaulted_speed:
            self.report.defaults.append(f"{len(self.defaulted_speed)} road(s) without a <speed> record: "
                                        f"{defaults.DEFAULT_SPEED_MPS} m/s")
        self.report.skipped.extend(f"{what} x{n}" if n > 1 else what for what, n in sorted(self.skipped.items()))
        d = defaults.TEMPLATE_DEFAULTS
        ego_lane = max((v for v in self.lanes.values() if v["kind"] == "driving" and not self.lane_by_name[v["id"]].junction),
                       key=lambda v: (LineString(v["polyline"]).length, v["id"]), default=None)
        if ego_lane is None:
            ego_lane = min((v for v in self.lanes.values() if v["kind"] in ("driving", "turn")), key=lambda v: v["id"])
        ego_len = LineString(ego_lane["polyline"]).length
        affordances = [{"id": "ego_start", "type": "ego_start", "lane": ego_lane["id"], "s_m": _r(min(5.0, 0.1 * ego_len))}]
        for name, lane in sorted(self.lanes.items()):
            length = LineString(lane["polyline"]).length
            if lane["kind"] == "driving" and not self.lane_by_name[name].junction and length >= 10.0:
                affordances.append({"id": f"spawn_{name}", "type": "vehicle_spawn", "lane": name,
                                    "s_range_m": [0.0, _r(0.9 * length)]})
            if lane["kind"] == "parking" and _long_side(Polygon(self.regions[name]["polygon"])) >= defaults.PARKING_SLOT_M:
                affordances.append({"id": f"parking_{name}", "type": "parking", "region": name,
                                    "slot_length_m": defaults.PARKING_SLOT_M})
        affordances += [{"id": f"ped_spawn_{name}", "type": "pedestrian_spawn", "region": name} for name in sorted(self.sidewalks)]
        affordances += crossings
        return {
            "id": self.report.template_id,
            "version": d["version"],
            "schema_version": d["schema_version"],
            "ontology_version": d["ontology_version"],
            "description": f"Imported from OpenDRIVE map {self.report.source} by simready template import.",
            "coordinates": dict(d["coordinates"]),
            "regions": [self.regions[k] for k in sorted(self.regions)],
            "lanes": [self.lanes[k] for k in sorted(self.lanes)],
            "walkable": walkable,
            "relations": self._adjacent() + relations + controls,
            "affordances": sorted(affordances, key=lambda a: a["id"]),
            "instances": instances,
            "ego": {"asset": d["ego_asset"], "route": [ego_lane["id"]], "start_s_m": _r(min(5.0, 0.1 * ego_len)),
                    "cruise_speed_mps": d["ego_cruise_speed_mps"]},
            "sensor_rig": d["sensor_rig"],
            "environment_controls": d["environment_controls"],
            "actor_types": list(d["actor_types"]),
            "behaviors_allowed": list(d["behaviors_allowed"]),
            "signals": signals,
        }

    def _links(self) -> None:
        keys = set(self.lane_key_by_name.values())
        forward = {ln.key: ln.forward for ln in self.lane_by_name.values()}
        succ, problems = file_successors(self.odr, keys, forward)
        self.file_succ = {lane_name(k): tuple(sorted(lane_name(v) for v in vs)) for k, vs in succ.items()}
        self.report.link_mismatches.extend(problems)
        graph = LaneGraph.build(_LaneView(v) for v in self.lanes.values())
        for name in sorted(self.lanes):
            derived = set(graph.successors[name])
            declared = set(self.file_succ.get(name, ()))
            if derived != declared:
                self.report.link_mismatches.append(
                    f"lane {name}: file links {sorted(declared)}, geometry joins {sorted(derived)}")

    def _adjacent(self) -> list[dict[str, Any]]:
        """``adjacent`` relations between side-by-side lane regions of one lane section (across the centre too)."""
        out = []
        for road in self.odr.roads:
            for k, sec in enumerate(road.sections):
                order = [lane.id for lane in sorted(sec.lanes, key=lambda ln: -ln.id)]
                for a, b in zip(order, order[1:]):
                    na, nb = lane_name((road.id, k, a)), lane_name((road.id, k, b))
                    if na in self.regions and nb in self.regions:
                        out.append({"type": "adjacent", "a": na, "b": nb})
        return out

    # -- walkable graph and crosswalks --

    def _walkable(self) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        walk_area = unary_union([Polygon(self.regions[n]["polygon"]) for n in self.sidewalks])
        crosswalks = self._crosswalk_regions()
        if crosswalks:
            walk_area = unary_union([walk_area] + [p for _, _, p in crosswalks])
        cover = walk_area.buffer(0.04)
        chains: dict[str, list[tuple[float, tuple[float, float]]]] = {}
        for name, lane in sorted(self.sidewalks.items()):
            line = LineString(_pts(lane.centre))
            chains[name] = [(0.0, line.coords[0]), (line.length, line.coords[-1])]
        crossings: list[dict[str, Any]] = []
        relations: list[dict[str, Any]] = []
        extra_edges: list[tuple[str, str]] = []
        nodes: dict[str, list[float]] = {}
        # (crosswalk, sidewalk a, foot arc length on a, crossing end on a's side, the same for b)
        pending: list[tuple[str, str, float, tuple[float, float], str, float, tuple[float, float]]] = []
        for cw_id, _obj, poly in crosswalks:
            touching = [n for n in sorted(self.sidewalks) if Polygon(self.regions[n]["polygon"]).distance(poly) <= CROSSWALK_TOUCH_M]
            centre = poly.centroid
            feet = {}
            for n in touching:
                line = LineString(_pts(self.sidewalks[n].centre))
                d = line.project(centre)
                feet[n] = (d, line.interpolate(d).coords[0])
            best = None
            for i, a in enumerate(touching):
                for b in touching[i + 1:]:
                    gap = math.dist(feet[a][1], feet[b][1])
                    if best is None or gap > best[0]:
                        best = (gap, a, b)
            if best is None or best[0] < 1.0:
                self.skipped["crosswalks that do not join two sidewalks (no crossing route)"] += 1
                continue
            _, a, b = best
            ends = []
            for side in (a, b):
                foot = Point(feet[side][1])
                edge_pt = poly.exterior.interpolate(poly.exterior.project(foot))
                inward = (centre.x - edge_pt.x, centre.y - edge_pt.y)
                norm = math.hypot(*inward) or 1.0
                ends.append((edge_pt.x + 0.1 * inward[0] / norm, edge_pt.y + 0.1 * inward[1] / norm))
            path = [(a, feet[a][1]), ends[0], ends[1], (b, feet[b][1])]
            segs = [LineString([path[0][1], ends[0]]), LineString([ends[0], ends[1]]), LineString([ends[1], path[3][1]])]
            if not all(cover.covers(sg) for sg in segs):
                self.skipped["crosswalks whose crossing line leaves the sidewalks and crosswalk"] += 1
                continue
            self.crosswalks += 1
            chains[a].append(feet[a])
            chains[b].append(feet[b])
            pending.append((cw_id, a, feet[a][0], ends[0], b, feet[b][0], ends[1]))
        names: dict[tuple[str, float], str] = {}
        edges: set[tuple[str, str]] = set()
        for name, pts in sorted(chains.items()):
            line = LineString(_pts(self.sidewalks[name].centre))
            marks = sorted({round(d, 3) for d, _ in pts} | set(self._chain_stops(line, cover)))
            # Marks closer than a millimetre would be one point twice: keep the first.
            marks = [d for i, d in enumerate(marks) if i == 0 or d - marks[i - 1] >= 1e-3]
            prev = None
            for i, d in enumerate(marks):
                node = f"{name}_n{i}"
                x, y = line.interpolate(d).coords[0]
                nodes[node] = [_r(x), _r(y)]
                names[(name, d)] = node
                if prev is not None:
                    edges.add((prev, node))
                prev = node
        for cw_id, a, da, end_a, b, db, end_b in pending:
            fa, fb = self._node_at(names, a, da), self._node_at(names, b, db)
            ea, eb = f"{cw_id}_a", f"{cw_id}_b"
            nodes[ea] = [_r(end_a[0]), _r(end_a[1])]
            nodes[eb] = [_r(end_b[0]), _r(end_b[1])]
            extra_edges += [(fa, ea), (ea, eb), (eb, fb)]
            crossings.append({"id": f"crossing_{cw_id}", "type": "pedestrian_crossing", "region": cw_id, "path": [fa, ea, eb, fb]})
            relations.append({"type": "connects", "route": cw_id, "a": a, "b": b})
        edges.update(extra_edges)
        edges.update(self._joins(nodes, chains, cover))
        walkable = {"nodes": {k: nodes[k] for k in sorted(nodes)},
                    "edges": sorted([sorted(e) for e in edges])}
        return walkable, crossings, relations

    def _chain_stops(self, line: LineString, cover: Any) -> list[float]:
        """Arc lengths of nodes along a sidewalk centre: chords at most WALK_NODE_SPACING_M and inside the walkable area."""
        coords = list(line.coords)
        dist = [0.0]
        for p, q in zip(coords, coords[1:]):
            dist.append(dist[-1] + math.dist(p, q))
        stops = [0.0]
        i = 0
        while i < len(coords) - 1:
            j = i + 1
            while (j + 1 < len(coords) and dist[j + 1] - dist[i] <= WALK_NODE_SPACING_M
                   and cover.covers(LineString([coords[i], coords[j + 1]]))):
                j += 1
            stops.append(round(dist[j], 3))
            i = j
        return stops

    @staticmethod
    def _node_at(names: dict[tuple[str, float], str], chain: str, d: float) -> str:
        """The node of sidewalk ``chain`` at arc length ``d`` (a crosswalk's foot, which is one of its marks)."""
        return names[min((k for k in names if k[0] == chain), key=lambda k: (abs(k[1] - d), k[1]))]

    def _joins(self, nodes: dict[str, list[float]], chains: dict[str, Any], cover: Any) -> set[tuple[str, str]]:
        """Edges between sidewalk chains whose end nodes meet (sections and linked roads)."""
        ends = []
        for name in sorted(chains):
            ids = sorted((n for n in nodes if n.startswith(f"{name}_n")), key=lambda n: int(n.rsplit("_n", 1)[1]))
            ends += [ids[0], ids[-1]]
        out = set()
        for i, a in enumerate(ends):
            for b in ends[i + 1:]:
                if a.rsplit("_n", 1)[0] != b.rsplit("_n", 1)[0] and math.dist(nodes[a], nodes[b]) <= SIDEWALK_JOIN_M:
                    if cover.covers(LineString([nodes[a], nodes[b]])):
                        out.add((a, b))
        return out

    def _crosswalk_regions(self) -> list[tuple[str, MapObject, Polygon]]:
        out = []
        for road in self.odr.roads:
            for obj in road.objects:
                if obj.type.lower() != "crosswalk" and not (obj.type == "roadMark" and obj.subtype.lower() == "crosswalk"):
                    self.skipped[f"objects of type {obj.type or '(none)'!r}"] += 1
                    continue
                poly = _object_polygon(road, obj)
                if poly is None:
                    self.skipped["crosswalk objects without an outline or size"] += 1
                    continue
                if self.bounds is not None and not self.bounds.contains(poly):
                    self.skipped["outside --bounds"] += 1
                    continue
                cw_id = f"crosswalk_{_safe(road.id)}_{_safe(obj.id)}"
                ring = _pts(np.asarray(poly.exterior.coords[:-1]))
                self.regions[cw_id] = {"id": cw_id, "type": "crosswalk", "polygon": ring}
                out.append((cw_id, obj, Polygon(ring)))
        return out

    # -- signals --

    def _signals(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        signals, instances, controls = [], [], []
        by_id = {sig.id: (road, sig) for road in self.odr.roads for sig in road.signals}
        offset_of = self._signal_offsets()
        cycle = sum(p["duration_s"] for p in defaults.DEFAULT_SIGNAL_PROGRAM)
        for road in self.odr.roads:
            for sig in road.signals:
                if not sig.dynamic:
                    if sig.type != "294":
                        self.skipped[f"static signals (type {sig.type or '?'})"] += 1
                    continue
                lanes = self._controlled(road, sig)
                if not lanes:
                    self.skipped["traffic lights valid for no imported driving lane"] += 1
                    continue
                stop_s = sig.s
                for ref in sig.references:
                    if ref in by_id and by_id[ref][1].type == "294" and by_id[ref][0].id == road.id:
                        stop_s = by_id[ref][1].s
                stop_lane = lanes[0]
                sid = f"signal_{_safe(sig.id)}"
                signals.append({
                    "id": sid, "controls": lanes,
                    "stop_line": {"lane": stop_lane, "s_m": _r(min(self._lane_s(stop_lane, stop_s),
                                                                   LineString(self.lanes[stop_lane]["polyline"]).length))},
                    "program": [dict(p) for p in defaults.DEFAULT_SIGNAL_PROGRAM],
                    "offset_s": _r(offset_of.get(sig.id, 0.0) * cycle),
                })
                pose = reference_poses(road.geometries, np.array([min(max(sig.s, 0.0), road.length)]))
                h = float(pose.hdg[0])
                x = float(pose.x[0]) - sig.t * math.sin(h)
                y = float(pose.y[0]) + sig.t * math.cos(h)
                faces = h + sig.h_offset + (math.pi if sig.orientation != "-" else 0.0)
                yaw = math.degrees((faces + math.pi) % (2 * math.pi) - math.pi)
                instances.append({"name": f"head_{sid}", "asset": defaults.SIGNAL_HEAD_ASSET,
                                  "pose": {"x": _r(x), "y": _r(y), "z": 0.0, "yaw_deg": _r(yaw)}})
                controls.append({"type": "controls", "instance": f"head_{sid}", "signal": sid})
        if signals:
            self.report.defaults.append(f"{len(signals)} traffic light(s): OpenDRIVE holds no timing; fixed-time "
                                        f"{cycle:g} s program, junction controllers offset by cycle/n")
        return sorted(signals, key=lambda s: s["id"]), sorted(instances, key=lambda i: i["name"]), \
            sorted(controls, key=lambda c: c["instance"])

    def _signal_offsets(self) -> dict[str, float]:
        """Fraction of the cycle each signal's controller is offset by: controller k of n in its junction → k/n."""
        out: dict[str, float] = {}
        for j in self.odr.junctions:
            ctrls = [c for c in j.controllers if c in self.odr.controllers]
            for k, cid in enumerate(ctrls):
                for sig in self.odr.controllers[cid]:
                    out[sig] = k / len(ctrls)
        return out

    def _controlled(self, road: Road, sig: Any) -> list[str]:
        """Imported driving lanes (of the section at the signal's s) the signal is valid for, facing it."""
        k = max(i for i, sec in enumerate(road.sections) if sec.s <= max(sig.s, 0.0) + 1e-9)
        ids: list[int] = []
        sec = road.sections[k]
        for lane in sec.lanes:
            if sig.validity:
                if not any(min(a, b) <= lane.id <= max(a, b) for a, b in sig.validity):
                    continue
            elif sig.orientation == "+" and lane.id > 0 or sig.orientation == "-" and lane.id < 0:
                continue
            ids.append(lane.id)
        names = [lane_name((road.id, k, i)) for i in sorted(ids, key=abs)]
        return [n for n in names if n in self.lanes and self.lanes[n]["kind"] in ("driving", "turn")]

    def _lane_s(self, name: str, road_s: float) -> float:
        """Arc length along lane ``name`` (in travel order) at road ``road_s``."""
        lane = self.lane_by_name[name]
        along = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(lane.centre, axis=0).T))])
        s = float(np.interp(road_s, lane.s, along))
        return s if lane.forward else float(along[-1]) - s


class _LaneView:
    """A template lane dict as the lane graph's ``LaneLike``."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.id = d["id"]
        self.polyline = d["polyline"]
        self.width_m = d["width_m"]
        self.speed_limit_mps = d["speed_limit_mps"]
        self.kind = d["kind"]


def _heading(points: Array, i: int) -> float:
    if i == 0:
        d = points[1] - points[0]
    else:
        d = points[-1] - points[-2]
    return math.atan2(d[1], d[0])


def _long_side(poly: Polygon) -> float:
    c = list(poly.minimum_rotated_rectangle.exterior.coords)
    return max(math.dist(c[0], c[1]), math.dist(c[1], c[2]))


