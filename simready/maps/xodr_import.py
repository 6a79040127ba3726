"""OpenDRIVE map → world template (SPEC §5, §15, §18): lanes, regions, heights, marks, walkable graph, signals.

World frame = the map's inertial frame (metres, x east, y north, z up, yaw
counter-clockwise from +x). What becomes what:

* every lane of every lane section is sampled along its road's reference
  line (:mod:`simready.maps.refline`) at the geometry, section, offset and
  width breakpoints and at least every :data:`MAX_STEP_M` (closer on curves,
  so that chords stay within :data:`CHORD_TOLERANCE_M` of the arc, never
  closer than :data:`MIN_STEP_M`); its borders are the lane offset plus the
  summed width polynomials, its region the polygon between them;
* nothing about one lane refuses the map: a folded outline is resampled
  finer, then cut to its valid part, and a lane that cannot be saved is left
  out — each with one report line naming road, lane section, lane and XML
  line (:attr:`ImportReport.repairs`); only a map with no drivable lane left
  is refused;
* driving-type lanes (and parking lanes) become directed template lanes:
  with right-hand traffic a lane with a negative id runs along s, a positive
  one against it (``rule="LHT"`` the other way round); a junction's
  connecting lanes are directed by the approach they are entered from
  (:func:`_orient`), whatever their id's sign. Successors are derived from
  geometry (0.5 m endpoint tolerance, as the template derives them); every
  disagreement with the file's road, lane and junction links is reported,
  never refused;
* ``elevationProfile``, ``lateralProfile`` superelevation and lane
  ``<height>`` give lanes and regions a height per vertex (``z``); a flat
  road has none;
* road marks give each lane whether a change to its same-direction
  neighbour is allowed (``change_left``/``change_right``) and become
  ``markings`` (polyline, type, colour, width) for the street geometry;
* ``biking`` lanes outside junctions become directed ``biking`` template lanes
  (background cyclists ride them; no vehicle routes or changes onto them);
* sidewalks become sidewalk regions and walkable chains; each crosswalk object
  a crosswalk region joined to the two sidewalks it touches; parking lanes
  and ``parkingSpace`` objects parking regions;
* each pedestrian light (type 1000002 or 1000007) a template pedestrian
  signal over the crosswalks near it on its road (15 m along s), walking
  while the vehicles' default program is red;
* each traffic light a fixed-time template signal over the lanes it binds to
  (validity, orientation, ``<signalReference>``, the junction's controllers),
  its stop line clamped to its lane; stop, yield and speed-limit signs lane
  facts (:meth:`_Builder._sign`);
* everything else met is named in the report, never dropped silently.

Ids: ``road<id>_sec<k>_lane<id>`` for lanes and lane regions, ``crosswalk_<road>_<object>``,
``parking_<road>_<object>``, ``signal_<id>``, ``mark_<lane>``; the output is sorted by id and rounded to
0.1 mm, so the same map gives the same bytes. Resource bounds (issue 27): :data:`~simready.maps.opendrive.LIMITS`
while reading, :data:`MAX_SAMPLES_PER_ROAD` and :data:`MAX_LANE_SAMPLES` before sampling.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from shapely import get_parts, is_valid_reason, make_valid, node, prepare
from shapely.geometry import LineString, Point, Polygon, box
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from simready.common.hashing import sha256_bytes
from simready.maps import defaults
from simready.maps.errors import MapError
from simready.maps.opendrive import (Lane, LaneSection, MapObject, OpenDriveMap, Poly3, Road, RoadMark, Signal,
                                     read_opendrive)
from simready.maps.refline import Array, max_curvature, reference_poses
from simready.world.lanes import SUCCESSOR_GAP_TOLERANCE_M, SUCCESSOR_MAX_HEADING_CHANGE_RAD, wrap_angle
from simready.world.template_model import MAX_LANE_WIDTH_M

__all__ = ["CHORD_TOLERANCE_M", "MAX_STEP_M", "ImportReport", "ImportedMap", "LaneKey", "file_successors",
           "import_opendrive", "lane_name"]

#: Largest distance between samples along a road (m).
MAX_STEP_M = 2.0
#: Smallest distance between samples along a road, however tight the curve (m).
MIN_STEP_M = 0.01
#: A plan-view record curving tighter than this over more than a quarter turn is not a road (1/m; radius 5 cm).
MAX_CURVATURE = 20.0
#: Most pieces a folded outline may cross itself into (noded) for a repair to be tried (real maps: up to ~60).
MAX_FOLD_PIECES = 200
#: Most vertices of a lane outline that a repair (``make_valid``) is tried on; a larger folded outline is left out.
MAX_REPAIR_VERTICES = 20_000
#: Most samples along one road (a bound on work and memory, issue 27): 100 km at 2 m is 50 000.
MAX_SAMPLES_PER_ROAD = 200_000
#: Most lane samples (lanes × samples) in one map: about 160 MB of border arrays.
MAX_LANE_SAMPLES = 5_000_000
#: A width polynomial dipping this little below zero is rounding (CARLA maps hold -0.006 m), clamped to 0 (m).
NEGATIVE_WIDTH_TOLERANCE_M = 0.01
#: A repaired outline must keep at least this share of the lane's area (width × length), else the lane is left out.
REPAIR_MIN_AREA_SHARE = 0.5
#: A lane's end and its successor's start closer than this are joined (m), as :mod:`simready.world.lanes` derives.
ENDPOINT_TOLERANCE_M = 0.5
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
#: A lane centreline may leave its (repaired) region by this much, below the template's 0.5 m (m).
CENTRE_IN_REGION_M = 0.45
#: A stop line stays this far before its lane's end (m).
STOP_LINE_END_MARGIN_M = 0.01
#: Sidewalk chains whose ends are this close are joined (m).
SIDEWALK_JOIN_M = 0.5

DRIVING_TYPES = ("driving", "entry", "exit", "onRamp", "offRamp", "connectingRamp")
#: OpenDRIVE 1.8 renamed ``sidewalk`` to ``walking``.
SIDEWALK_TYPES = ("sidewalk", "walking")
#: Lane types that become a region without a lane, and the region type (a ``biking`` lane outside a junction is
#: a ``biking`` template lane in its drivable region; inside one, a region alone).
REGION_ONLY_TYPES = {"shoulder": "drivable", "biking": "drivable", "border": "median", "median": "median",
                     "curb": "median"}

#: Dynamic signals of these types (the German catalogue's pedestrian light, and pedestrian and bicycle light) are
#: pedestrian lights: imported over the crosswalks near them, not as traffic lights.
PEDESTRIAN_LIGHT_TYPES = ("1000002", "1000007")
#: A pedestrian light governs the crosswalks of its road whose object is this close to it along s (m).
PEDESTRIAN_LIGHT_REACH_M = 15.0

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
    #: One line per lane repaired (its outline refined or cut to its valid part) or left out.
    repairs: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"imported {self.source} (OpenDRIVE {self.version}, sha256 {self.source_sha256[:12]}) as {self.template_id}: "
               + ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))]
        out += [f"default: {line}" for line in self.defaults]
        out += [f"skipped: {line}" for line in self.skipped]
        out += [f"repair: {line}" for line in self.repairs]
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
    #: Heights (m) of the inner border, outer border and centre at each sample; None where the road is flat.
    z: tuple[Array, Array, Array] | None = None
    #: The road mark along the outer border that covers most of the section (None: the map gives none).
    mark: RoadMark | None = None
    line: int = 0
    section_line: int = 0
    #: The same lane sampled ``factor`` times finer (used to repair a folded outline), over ``s_full``.
    resample: Callable[[int], dict[str, Any]] | None = field(default=None, compare=False, repr=False)
    #: The section's samples the lane was sampled on before any trimming (what ``resample`` refines).
    s_full: Array | None = field(default=None, compare=False, repr=False)


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


def _road_samples(src: str, road: Road) -> Array:
    """Sorted road s values: every breakpoint, and enough between them for chords within tolerance.

    The step is never below :data:`MIN_STEP_M` (a curvature of 1e12 is not a
    reason to allocate gigabytes), and the count is checked against
    :data:`MAX_SAMPLES_PER_ROAD` before any array of that size exists.
    """
    bps = _breakpoints(road)
    starts = [g.s for g in road.geometries]
    curvature: dict[int, float] = {}
    spans = []
    total = len(bps)
    for a, b in zip(bps, bps[1:]):
        i = max(0, int(np.searchsorted(starts, a, side="right")) - 1)
        if i not in curvature:
            curvature[i] = max_curvature(road.geometries[i])
        k = curvature[i]
        step = MAX_STEP_M if k == 0.0 else min(MAX_STEP_M, max(MIN_STEP_M, math.sqrt(8.0 * CHORD_TOLERANCE_M / k)))
        n = max(1, math.ceil((b - a) / step))
        total += n
        spans.append((a, b, n))
    for i, k in sorted(curvature.items()):
        g = road.geometries[i]
        if k > MAX_CURVATURE and k * g.length > math.pi / 2:
            raise LaneProblem(f"road {road.id}, geometry s={g.s:g}: curvature {k:g} 1/m (radius below "
                              f"{1.0 / MAX_CURVATURE:g} m) turning {k * g.length:.3g} rad is not a road: road left out "
                              f"(line {g.line})")
    if total > MAX_SAMPLES_PER_ROAD:
        raise MapError(src, f"road {road.id}", f"samples per road {total} is over the limit of {MAX_SAMPLES_PER_ROAD} "
                                               f"(length {road.length:g} m, curvature up to "
                                               f"{max(curvature.values(), default=0.0):g} 1/m) (line {road.line})")
    out = [np.array(bps)] + [np.linspace(a, b, n + 1) for a, b, n in spans]
    s = np.unique(np.concatenate(out))
    # Breakpoints from different records closer than this are one point (a sliver sample would fold an outline).
    keep = np.concatenate([[True], np.diff(s) > SAMPLE_MERGE_M])
    samples: Array = s[keep]
    return samples


def _densified(s: Array, factor: int) -> Array:
    """``s`` with ``factor − 1`` evenly spaced values inserted in every interval (finer sampling near a fold)."""
    steps = np.linspace(0.0, 1.0, factor + 1)[:-1]
    fine = (s[:-1, None] + np.diff(s)[:, None] * steps[None, :]).ravel()
    return np.concatenate([fine, s[-1:]])


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


def _step_at(records: tuple[tuple[float, float, float], ...], s: Array, base: float) -> tuple[Array, Array]:
    """Lane ``<height>`` records (sOffset, inner, outer) as piecewise-constant inner and outer heights at ``s``."""
    inner, outer = np.zeros_like(s), np.zeros_like(s)
    for s0, a, b in records:
        mask = s >= base + s0 - 1e-9
        inner[mask], outer[mask] = a, b
    return inner, outer


class LaneProblem(Exception):
    """One lane that cannot be imported: the reason, ending with its XML line; the lane is left out and reported."""


def _lane_width(road: Road, sec: LaneSection, lane: Lane, s: Array) -> Array:
    if not lane.widths:
        reason = "lane <border> records are not supported (give <width>)" if lane.has_border else "lane has no <width>"
        raise LaneProblem(f"{reason} (line {lane.line})")
    w = _poly_at(lane.widths, s, base=sec.s)
    wide = np.flatnonzero(w > MAX_LANE_WIDTH_M)
    if wide.size:
        i = int(wide[0])
        rec = next(r for r in reversed(lane.widths) if sec.s + r.s0 <= s[i] + 1e-9)
        raise LaneProblem(f"lane width {w[i]:.4g} m at s={s[i]:.2f} is over the {MAX_LANE_WIDTH_M:g} m a lane may be "
                          f"(line {rec.line})")
    bad = np.flatnonzero(w < -NEGATIVE_WIDTH_TOLERANCE_M)
    if bad.size:
        i = int(bad[0])
        rec = next(r for r in reversed(lane.widths) if sec.s + r.s0 <= s[i] + 1e-9)
        raise LaneProblem(f"negative lane width {w[i]:.3f} m at s={s[i]:.2f} (line {rec.line})")
    return np.maximum(w, 0.0)


def _lane_speed(road: Road, sec: LaneSection, lane: Lane) -> float | None:
    if lane.speeds_mps:
        return lane.speeds_mps[0][1]
    for s0, v in reversed(road.speeds_mps):
        if s0 <= sec.s + 1e-9:
            return v
    return road.speeds_mps[0][1] if road.speeds_mps else None


def _main_mark(sec: LaneSection, road_marks: tuple[RoadMark, ...], end: float) -> RoadMark | None:
    """The road mark covering most of the lane section among a lane's ``road_marks`` (along its outer border; the
    centre lane's: along the reference line) (None: no record)."""
    if not road_marks:
        return None
    length = end - sec.s
    best, best_len = None, -1.0
    for i, m in enumerate(road_marks):
        stop = road_marks[i + 1].s_offset if i + 1 < len(road_marks) else length
        if stop - m.s_offset > best_len:
            best, best_len = m, stop - m.s_offset
    return best


@dataclass(frozen=True)
class _RoadFrame:
    """A road's reference line sampled once: s, points, normals, lane offset, height and superelevation at s."""

    road: Road
    s: Array
    ref: Array
    normal: Array
    offset: Array
    z: Array | None
    tan_roll: Array | None

    @classmethod
    def at(cls, road: Road, s: Array) -> _RoadFrame:
        pose = reference_poses(road.geometries, s)
        normal = np.stack([-np.sin(pose.hdg), np.cos(pose.hdg)], axis=1)
        z = _poly_at(road.elevation, s) if road.elevation else None
        roll = np.tan(np.clip(_poly_at(road.superelevation, s), -1.2, 1.2)) if road.superelevation else None
        return cls(road, s, np.stack([pose.x, pose.y], axis=1), normal, _poly_at(road.lane_offsets, s), z, roll)


def _lane_geometry(frame: _RoadFrame, sec: LaneSection, lane: Lane, s: Array, ids: dict[int, Lane],
                   flat: bool) -> dict[str, Any]:
    """Borders, centre, width and heights of ``lane`` at road arc lengths ``s`` (a subset of, or finer than, the frame)."""
    road = frame.road
    if s is frame.s:
        ref, normal, offset = frame.ref, frame.normal, frame.offset
        z_ref, roll = frame.z, frame.tan_roll
    else:
        sub = _RoadFrame.at(road, s)
        ref, normal, offset, z_ref, roll = sub.ref, sub.normal, sub.offset, sub.z, sub.tan_roll
    side = 1 if lane.id > 0 else -1
    t_inner = offset.copy()
    for j, inner_lane in sorted(ids.items()):
        if j * side > 0 and abs(j) < abs(lane.id):
            t_inner = t_inner + side * _lane_width(road, sec, inner_lane, s)
    w = _lane_width(road, sec, lane, s)
    t_outer = t_inner + side * w
    t_centre = 0.5 * (t_inner + t_outer)
    inner, outer, centre = (ref + normal * t[:, None] for t in (t_inner, t_outer, t_centre))
    heights = None
    if not flat:
        base = z_ref if z_ref is not None else np.zeros_like(s)
        h_in, h_out = _step_at(lane.heights, s, sec.s) if lane.heights else (0.0, 0.0)

        def z_at(t: Array, h: Array | float) -> Array:
            return base + (t * roll if roll is not None else 0.0) + h

        heights = (z_at(t_inner, h_in), z_at(t_outer, h_out), z_at(t_centre, 0.5 * (np.asarray(h_in) + h_out)))
    return {"inner": inner, "outer": outer, "centre": centre, "width": w, "z": heights}


def _sample_road(src: str, road: Road, report: ImportReport) -> tuple[list[_SampledLane], list[str]]:
    """Every lane of ``road`` sampled, and one report line per lane that cannot be (the lane is left out)."""
    try:
        s_all = _road_samples(src, road)
    except LaneProblem as exc:
        return [], [str(exc)]
    frame = _RoadFrame.at(road, s_all)
    flat = not road.elevation and not road.superelevation and not any(ln.heights for sec in road.sections
                                                                      for ln in sec.lanes)
    forward_sign = -1 if road.rule != "LHT" else 1
    out, problems = [], []
    ends = [sec.s for sec in road.sections[1:]] + [road.length]
    for k, (sec, end) in enumerate(zip(road.sections, ends)):
        if end - sec.s < 1e-6:
            report.skipped.append(f"road {road.id}, laneSection s={sec.s:g}: zero length")
            continue
        mask = (s_all >= sec.s - 1e-9) & (s_all <= end + 1e-9)
        s = s_all[mask]
        if s.size < 2:
            report.skipped.append(f"road {road.id}, laneSection s={sec.s:g}: shorter than the sample spacing")
            continue
        sub = _RoadFrame(road, s, frame.ref[mask], frame.normal[mask], frame.offset[mask],
                         None if frame.z is None else frame.z[mask],
                         None if frame.tan_roll is None else frame.tan_roll[mask])
        if end < road.length and any(abs(o.s0 - end) < 1e-6 for o in road.lane_offsets):
            # A lane offset record starting where this section ends (CARLA steps the offset there) belongs to the
            # next section: this section's last sample is taken a micrometre before it.
            s = s.copy()
            s[-1] = end - 1e-6
            sub = _RoadFrame.at(road, s)
        ids = {ln.id: ln for ln in sec.lanes}
        for lane in sorted(sec.lanes, key=lambda ln: (abs(ln.id), ln.id)):
            try:
                geo = _lane_geometry(sub, sec, lane, s, ids, flat)
            except LaneProblem as exc:
                if lane.type in DRIVING_TYPES + SIDEWALK_TYPES + ("parking",) + tuple(REGION_ONLY_TYPES):
                    problems.append(f"road {road.id}, laneSection s={sec.s:g}, lane {lane.id}: left out: {exc}")
                continue
            speed = _lane_speed(road, sec, lane)

            def resample(factor: int, sub: _RoadFrame = sub, sec: LaneSection = sec, lane: Lane = lane,
                         ids: dict[int, Lane] = ids) -> dict[str, Any]:
                return _lane_geometry(sub, sec, lane, _densified(sub.s, factor), ids, flat)

            out.append(_SampledLane((road.id, k, lane.id), lane.type, s, geo["inner"], geo["outer"], geo["centre"],
                                    geo["width"], (lane.id * forward_sign) > 0, road.in_junction,
                                    speed if speed is not None else -1.0, geo["z"], _main_mark(sec, lane.road_marks, end),
                                    lane.line, sec.line, resample, s))
    return out, problems


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
    if len(pts) < 3:
        return None
    poly = Polygon(pts)
    return poly if poly.is_valid and poly.area > 0.01 else None


# --- the template --------------------------------------------------------------------------------------------------


def _r(v: float) -> float:
    out = round(float(v), DECIMALS)
    return 0.0 if out == 0.0 else out


def _pts(points: Array) -> list[list[float]]:
    return _pts_z(points, None)[0]


def _pts_z(points: Array, z: Array | None) -> tuple[list[list[float]], list[float] | None]:
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


def _is_loop(lane: _SampledLane) -> bool:
    """The lane's centre or one of its borders ends where it starts (within the endpoint tolerance) after running at
    least 10 m: a ring road, or a cul-de-sac whose reference line closes."""
    c = lane.centre
    if len(c) < 5 or float(np.hypot(*np.diff(c, axis=0).T).sum()) <= 10.0:
        return False
    return any(_dist(b[0], b[-1]) <= ENDPOINT_TOLERANCE_M for b in (lane.centre, lane.inner, lane.outer))


#: A centreline loop cut out by a repair may hold at most this share of the lane's length.
MAX_LOOP_SHARE = 0.2


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


def _unlooped(pts: list[list[float]], zs: list[float] | None) -> tuple[list[list[float]], list[float] | None, float] | None:
    """A centreline with each loop where it folds back on itself cut out at the crossing, and the length cut; None
    when it does not become simple."""
    p = np.asarray(pts, dtype=np.float64)
    z = None if zs is None else list(zs)
    cut = 0.0
    for _ in range(100):
        if LineString(p).is_simple:
            out, zo = _pts_z(p, None if z is None else np.asarray(z))
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


#: A lane narrower than this is closed at that sample (m).
ZERO_WIDTH_M = 1e-3


def _trimmed(lane: _SampledLane) -> _SampledLane | None:
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
                   width=lane.width[cut], z=_z_part(lane.z, cut))


def _z_part(z: tuple[Array, Array, Array] | None, part: slice) -> tuple[Array, Array, Array] | None:
    """The heights (inner border, outer border, centre) at the samples ``part``; None where the road is flat."""
    if z is None:
        return None
    inner, outer, centre = z
    return inner[part], outer[part], centre[part]


def _pieces(lane: _SampledLane) -> list[_SampledLane]:
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
                    z=_z_part(lane.z, slice(a, b + 1))) for a, b in runs]


def _ring(lane: _SampledLane) -> tuple[list[list[float]], list[float] | None]:
    """A lane's outline (inner border forward, outer border back) and its heights; a closing repeat is dropped."""
    pts = np.concatenate([lane.inner, lane.outer[::-1]])
    z = None if lane.z is None else np.concatenate([lane.z[0], lane.z[1][::-1]])
    ring, zs = _pts_z(pts, z)
    if len(ring) > 3 and math.dist(ring[0], ring[-1]) < 1e-3:
        ring = ring[:-1]
        zs = zs[:-1] if zs is not None else None
    return ring, zs


def _checked_links(odr: OpenDriveMap) -> tuple[OpenDriveMap, list[str]]:
    """The map without links to roads or junctions it does not hold, and one report line per link dropped."""
    roads = {r.id for r in odr.roads}
    junctions = {j.id for j in odr.junctions}
    lines: list[str] = []
    new_junctions = []
    for j in odr.junctions:
        keep = []
        for c in j.connections:
            missing = [(attr, rid) for attr, rid in (("incomingRoad", c.incoming_road),
                                                     ("connectingRoad", c.connecting_road)) if rid not in roads]
            if missing:
                attr, rid = missing[0]
                lines.append(f"junction {j.id}, connection {c.id}: {attr} {rid!r} is not a road of the map "
                             f"(line {c.line}): connection ignored")
            else:
                keep.append(c)
        new_junctions.append(replace(j, connections=tuple(keep)) if len(keep) != len(j.connections) else j)
    new_roads = []
    for r in odr.roads:
        changes: dict[str, Any] = {}
        for which, ln in (("predecessor", r.predecessor), ("successor", r.successor)):
            if ln is None:
                continue
            known = roads if ln.element_type == "road" else junctions
            if ln.element_id not in known:
                lines.append(f"road {r.id}, link.{which}: {ln.element_type} {ln.element_id!r} is not in the map "
                             f"(line {ln.line}): link ignored")
                changes[which] = None
        new_roads.append(replace(r, **changes) if changes else r)
    return replace(odr, roads=tuple(new_roads), junctions=tuple(new_junctions)), lines


def _orient(odr: OpenDriveMap, sampled: list[_SampledLane]) -> tuple[list[_SampledLane], list[str]]:
    """Junction connecting lanes directed by the approach they are entered from; every other lane by its id's sign.

    A connection meets its connecting road at ``contactPoint``. Where the
    incoming lane of a lane link flows into the junction (its id's sign and
    the road end the junction is at say so), lane ``to`` is entered there:
    entered at the road's start it runs along s, at its end against s —
    whatever its own id's sign says (highway maps link lanes of opposite
    sign). Where the incoming lane flows out, lane ``to`` is left there. A
    lane two links direct both ways keeps the first and is reported.
    """
    roads = {r.id: r for r in odr.roads}
    direction: dict[tuple[str, int], tuple[bool, str]] = {}
    lines: list[str] = []
    for j in odr.junctions:
        for c in j.connections:
            road = roads[c.connecting_road]
            if not road.in_junction:
                continue  # a direct junction links ordinary roads, directed by their ids
            incoming = roads[c.incoming_road]
            link = incoming.successor
            in_end = "end" if link is not None and link.element_type == "junction" and link.element_id == j.id \
                else "start"
            sign = -1 if incoming.rule != "LHT" else 1
            for a, b in c.lane_links:
                # The incoming lane flows into the junction: lane b is entered at the contact point; else left there.
                into = (in_end == "end") == (a * sign > 0)
                forward = (c.contact_point != "end") == into
                seen = direction.setdefault((road.id, b), (forward, c.id))
                if seen[0] != forward:
                    lines.append(f"junction {j.id}: connections {seen[1]} and {c.id} enter lane {b} of road {road.id} "
                                 f"from opposite ends (line {c.line}): kept connection {seen[1]}'s direction")
    out = []
    against = 0
    for lane in sampled:
        road_id, _k, lid = lane.key
        if lane.junction and (road_id, lid) in direction:
            forward = direction[(road_id, lid)][0]
            if forward != lane.forward:
                against += 1
                lane = replace(lane, forward=forward)
        out.append(lane)
    if against:
        lines.append(f"{against} junction lane(s) run against their id's sign: directed by the approach "
                     "they are entered from (contactPoint)")
    return out, lines


def import_opendrive(path: str | Path, template_id: str,
                     bounds: tuple[float, float, float, float] | None = None) -> ImportedMap:
    """Read ``path`` and build template ``template_id`` from it (optionally only what lies in ``bounds``).

    A lane that cannot be imported is repaired or left out, each with one
    report line; only a map with no drivable lane left is refused.

    Raises:
        MapError: one line naming the XML element and its line.
    """
    path = Path(path)
    odr, raw = read_opendrive(path)
    src = str(path)
    report = ImportReport(template_id, path.name, sha256_bytes(raw).removeprefix("sha256:"), odr.version)
    report.skipped.extend(odr.unread)
    odr, link_lines = _checked_links(odr)
    report.link_mismatches.extend(link_lines)
    sampled: list[_SampledLane] = []
    total = 0
    for road in odr.roads:
        lanes, problems = _sample_road(src, road, report)
        report.repairs.extend(problems)
        total += sum(len(ln.s) for ln in lanes)
        if total > MAX_LANE_SAMPLES:
            raise MapError(src, f"road {road.id}", f"lane samples per map {total} is over the limit of "
                                                   f"{MAX_LANE_SAMPLES} (line {road.line})")
        sampled.extend(lanes)
    sampled, orient_lines = _orient(odr, sampled)
    report.link_mismatches.extend(orient_lines)
    builder = _Builder(src, odr, report, bounds)
    data = builder.build(sampled)
    report.counts = {"lanes": len(data["lanes"]), "regions": len(data["regions"]), "signals": len(data["signals"]),
                     "walkable nodes": len(data["walkable"]["nodes"]), "crosswalks": builder.crosswalks,
                     "junctions": len(odr.junctions), "markings": len(data.get("markings", ()))}
    data["provenance"] = {"format": "ASAM OpenDRIVE", "format_version": odr.version, "source": path.name,
                          "source_sha256": report.source_sha256, "importer": "simready.maps.xodr_import 2",
                          "skipped": list(report.skipped) + [f"repair: {line}" for line in report.repairs],
                          "defaults": list(report.defaults)}
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
        #: Crosswalk region id → (road id, s of its object), for the pedestrian lights (:meth:`_pedestrian_light`).
        self.crosswalk_at: dict[str, tuple[str, float]] = {}
        self.pedestrian_signals: list[dict[str, Any]] = []
        self.file_succ: dict[str, tuple[str, ...]] = {}
        self.crosswalks = 0
        self.parking_spaces: list[str] = []
        self.skipped: Counter[str] = Counter()
        self.defaulted_speed: set[str] = set()

    # -- lanes and regions --

    def _where(self, lane: _SampledLane) -> str:
        road, k, lid = lane.key
        record = self.odr.road(road)
        assert record is not None  # the lane was sampled from it
        sec = record.sections[k]
        return f"road {road}, laneSection s={sec.s:g}, lane {lid} (line {lane.line})"

    def _outline(self, lane: _SampledLane) -> tuple[_SampledLane, Polygon, list[list[float]], list[float] | None] | None:
        """The lane (resampled if that repaired it), its region outline, the ring written and the ring's heights.

        A folded outline (a lane wider than its curve's radius at a tight
        junction corner, borders crossing at a plan-view kink) is repaired in
        two steps, each reported: sampled four times finer, which removes folds
        that are sampling artefacts; then cut to its valid part on the lane's
        own side — the largest piece of the repaired polygon, which holds the
        lane's centre. A lane whose valid part keeps less than
        :data:`REPAIR_MIN_AREA_SHARE` of its area is left out (reported).
        """
        trimmed = _trimmed(lane)
        if trimmed is None:
            self.skipped[f"{lane.type} lanes of zero width"] += 1
            return None
        if trimmed is not lane:
            self.skipped["lanes trimmed to where their width is positive (a lane opening or closing)"] += 1
        lane = trimmed
        ring, z = _ring(lane)
        if len(ring) < 3:
            return None
        poly = Polygon(np.asarray(ring))
        if poly.is_valid:
            return lane, poly, ring, z
        reason = is_valid_reason(poly)
        if lane.resample is not None:
            assert lane.s_full is not None  # set with resample
            geo = lane.resample(4)
            finer = _trimmed(replace(lane, s=_densified(lane.s_full, 4), inner=geo["inner"], outer=geo["outer"],
                                     centre=geo["centre"], width=geo["width"], z=geo["z"], resample=None))
        else:
            finer = None
        if finer is not None:
            ring2, z2 = _ring(finer)
            poly2 = Polygon(np.asarray(ring2)) if len(ring2) >= 3 else poly
            if poly2.is_valid:
                self.report.repairs.append(f"{self._where(lane)}: folded outline ({reason}) repaired by sampling "
                                           "4x finer")
                return finer, poly2, ring2, z2
            lane, poly, ring, z = finer, poly2, ring2, z2
        if len(ring) > MAX_REPAIR_VERTICES:
            self.report.repairs.append(f"{self._where(lane)}: left out: folded outline ({reason}) of {len(ring)} "
                                       f"vertices, over the {MAX_REPAIR_VERTICES} a repair is tried on")
            return None
        # A fold crosses its outline a few times (real maps: at most ~60 pieces once noded); hundreds of crossings
        # are not a fold but a record gone wrong, and would make the repair itself quadratic.
        pieces = len(get_parts(node(LineString(np.asarray(ring + ring[:1])))))
        if pieces > MAX_FOLD_PIECES:
            self.report.repairs.append(f"{self._where(lane)}: left out: outline crosses itself into {pieces} pieces "
                                       f"(over {MAX_FOLD_PIECES}): not a fold a repair can cut")
            return None
        fixed = make_valid(poly)
        parts = sorted((g for g in getattr(fixed, "geoms", [fixed]) if isinstance(g, Polygon) and g.area > 0.0),
                       key=lambda g: -g.area)
        expected = float(np.mean(lane.width)) * LineString(lane.centre).length
        if not parts:
            self.report.repairs.append(f"{self._where(lane)}: left out: outline has no valid part ({reason})")
            return None
        # The fold's loop is a hole or a separate piece: the outline is the largest piece's exterior.
        part = Polygon(parts[0].exterior)
        dropped = sum(g.area for g in parts[1:]) + sum(Polygon(h).area for h in parts[0].interiors)
        if dropped <= FOLD_TOLERANCE_M2 and part.is_valid:
            self.skipped["lane outlines folded by a sliver at a plan-view kink: repaired"] += 1
        elif not part.is_valid or not REPAIR_MIN_AREA_SHARE * expected <= part.area <= expected / REPAIR_MIN_AREA_SHARE:
            self.report.repairs.append(f"{self._where(lane)}: left out: folded outline ({reason}) cut to its valid "
                                       f"part holds {part.area:.1f} m^2, not about its {expected:.1f} m^2")
            return None
        else:
            self.report.repairs.append(f"{self._where(lane)}: folded outline ({reason}) cut to its valid part: "
                                       f"{part.area:.1f} m^2 kept (width x length {expected:.1f} m^2), "
                                       f"{dropped:.2f} m^2 of fold loop")
        ring_out = _pts(np.asarray(part.exterior.coords[:-1]))
        z_out = None
        if z is not None:
            src = np.asarray(ring)
            zs = np.asarray(z)
            z_out = [_r(zs[int(np.argmin(np.hypot(*(src - p).T)))]) for p in np.asarray(ring_out)]
        return lane, Polygon(np.asarray(ring_out)), ring_out, z_out

    def _region(self, rid: str, rtype: str, lane: _SampledLane) -> tuple[_SampledLane, Polygon] | None:
        out = self._outline(lane)
        if out is None:
            return None
        lane, poly, ring, z = out
        if not poly.is_valid:
            self.report.repairs.append(f"{self._where(lane)}: left out: outline not valid once rounded")
            return None
        if self.bounds is not None:
            if not self.bounds.contains(poly):
                self.skipped["lanes not wholly inside --bounds"] += 1
                return None
        if poly.area <= 0.01:
            self.skipped[f"{lane.type} lane of zero area"] += 1
            return None
        entry: dict[str, Any] = {"id": rid, "type": rtype, "polygon": ring}
        if z is not None:
            entry["z"] = z
        if rtype in ("drivable", "intersection"):
            entry["speed_limit_mps"] = self._speed(lane)
        self.regions[rid] = entry
        return lane, poly

    def _speed(self, lane: _SampledLane) -> float:
        if lane.speed_mps > 0.0:
            return round(lane.speed_mps, 3)
        self.defaulted_speed.add(lane.key[0])
        return defaults.DEFAULT_SPEED_MPS

    def _centreline(self, lane: _SampledLane, poly: Polygon) -> tuple[list[list[float]], list[float] | None] | None:
        """The lane's centre in travel order (with heights), checked as the template checks it; None: left out."""
        centre = lane.centre if lane.forward else lane.centre[::-1]
        zc = None if lane.z is None else (lane.z[2] if lane.forward else lane.z[2][::-1])
        pts, zs = _pts_z(centre, zc)
        if len(pts) < 2:
            self.report.repairs.append(f"{self._where(lane)}: left out: centreline shorter than 1 mm")
            return None
        line = LineString(np.asarray(pts))
        if not line.is_simple:
            length = line.length
            unlooped = _unlooped(pts, zs)
            if unlooped is None or unlooped[2] > MAX_LOOP_SHARE * length:
                self.report.repairs.append(f"{self._where(lane)}: left out: centreline crosses itself")
                return None
            pts, zs, cut = unlooped
            line = LineString(np.asarray(pts))
            self.report.repairs.append(f"{self._where(lane)}: centreline folded back on itself: its loop "
                                       f"({cut:.2f} of {length:.1f} m) cut out")
        if not poly.buffer(CENTRE_IN_REGION_M, quad_segs=2).covers(line):
            self.report.repairs.append(f"{self._where(lane)}: left out: centreline leaves its repaired outline")
            return None
        return pts, zs

    def _add_lane(self, lane: _SampledLane, name: str | None = None) -> None:
        if name is None and _is_loop(lane):
            # A lane that closes on itself (a ring road, a cul-de-sac) is no simple polygon: imported as two halves.
            mid = len(lane.s) // 2
            for suffix, cut in (("_a", slice(0, mid + 1)), ("_b", slice(mid, None))):
                half = replace(lane, s=lane.s[cut], inner=lane.inner[cut], outer=lane.outer[cut],
                               centre=lane.centre[cut], width=lane.width[cut], resample=None,
                               z=_z_part(lane.z, cut))
                self._add_lane(half, lane_name(lane.key) + suffix)
            self.skipped["lanes that close on themselves (ring, cul-de-sac): imported as two halves"] += 1
            return
        if name is None:
            pieces = _pieces(lane)
            if len(pieces) > 1:
                # A lane that closes to zero width and opens again is imported as one lane per open stretch.
                for k, piece in enumerate(pieces):
                    self._add_lane(piece, f"{lane_name(lane.key)}_p{k}")
                self.skipped["lanes closing to zero width and opening again: imported per open stretch"] += 1
                return
        name = name or lane_name(lane.key)
        biking = lane.type == "biking" and not lane.junction
        if lane.type in DRIVING_TYPES or lane.type == "parking" or biking:
            rtype = "parking" if lane.type == "parking" else ("intersection" if lane.junction else "drivable")
            got = self._region(name, rtype, lane)
            if got is None:
                return
            lane, poly = got
            centre = self._centreline(lane, poly)
            if centre is None:
                del self.regions[name]
                return
            pts, zs = centre
            kind = "parking" if lane.type == "parking" else ("biking" if biking else "driving")
            if lane.junction and kind == "driving":
                c = np.asarray(pts)
                turn = math.degrees(abs((_heading(c, -1) - _heading(c, 0) + math.pi) % (2 * math.pi) - math.pi))
                kind = "turn" if turn > TURN_DEG else "driving"
            entry: dict[str, Any] = {"id": name, "region": name, "kind": kind, "width_m": _r(float(np.mean(lane.width))),
                                     "speed_limit_mps": self._speed(lane), "polyline": pts}
            if zs is not None:
                entry["z"] = zs
            self.lanes[name] = entry
            self.lane_by_name[name] = lane
            self.lane_key_by_name[name] = lane.key
        elif lane.type in SIDEWALK_TYPES:
            got = self._region(name, "sidewalk", lane)
            if got is not None:
                self.sidewalks[name] = got[0]
        elif lane.type in REGION_ONLY_TYPES:
            if self._region(name, REGION_ONLY_TYPES[lane.type], lane) is not None:
                self.skipped[f"{lane.type} lanes: kept as {REGION_ONLY_TYPES[lane.type]} regions without a lane"] += 1
        else:
            self.skipped[f"lanes of type {lane.type!r}"] += 1

    # -- the whole template --

    def build(self, sampled: list[_SampledLane]) -> dict[str, Any]:
        for lane in sorted(sampled, key=lambda ln: lane_name(ln.key)):
            self._add_lane(lane)
        self._links()
        self._drop_reversed()
        if not any(v["kind"] in ("driving", "turn") for v in self.lanes.values()):
            first = self.odr.roads[0]
            why = f"no lane of type {', '.join(DRIVING_TYPES)}"
            if self.report.repairs:
                why = f"{len(self.report.repairs)} repair(s) left nothing drivable (first: {self.report.repairs[0]})"
            raise MapError(self.src, "OpenDRIVE.road", f"no drivable lane in {len(self.odr.roads)} road(s)"
                           + (" inside --bounds" if self.bounds is not None else "")
                           + f": {why} (first road {first.id} at line {first.line})")
        self._lane_changes()
        walkable, crossings, relations = self._walkable()
        signals, instances, controls = self._signals()
        markings = self._markings()
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
        for name, row in sorted(self.lanes.items()):
            length = LineString(row["polyline"]).length
            if row["kind"] == "driving" and not self.lane_by_name[name].junction and length >= 10.0:
                affordances.append({"id": f"spawn_{name}", "type": "vehicle_spawn", "lane": name,
                                    "s_range_m": [0.0, _r(0.9 * length)]})
            if row["kind"] == "parking" and _long_side(Polygon(np.asarray(self.regions[name]["polygon"]))) >= defaults.PARKING_SLOT_M:
                affordances.append({"id": f"parking_{name}", "type": "parking", "region": name,
                                    "slot_length_m": defaults.PARKING_SLOT_M})
        for rid in sorted(self.parking_spaces):
            if _long_side(Polygon(self.regions[rid]["polygon"])) >= defaults.PARKING_SLOT_M:
                affordances.append({"id": f"parking_{rid}", "type": "parking", "region": rid,
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
            **({"markings": markings} if markings else {}),
            **({"pedestrian_signals": sorted(self.pedestrian_signals, key=lambda p: p["id"])}
               if self.pedestrian_signals else {}),
        }

    def _links(self) -> None:
        keys = set(self.lane_key_by_name.values())
        forward = {ln.key: ln.forward for ln in self.lane_by_name.values()}
        succ, problems = file_successors(self.odr, keys, forward)
        self.file_succ = {lane_name(k): tuple(sorted(lane_name(v) for v in vs)) for k, vs in succ.items()}
        self.report.link_mismatches.extend(problems)
        graph = _Ends(self.lanes)
        for name in sorted(self.lanes):
            derived = set(graph.successors(name))
            declared = set(self.file_succ.get(name, ()))
            if derived != declared:
                self.report.link_mismatches.append(
                    f"lane {name}: file links {sorted(declared)}, geometry joins {sorted(derived)}")

    def _drop_reversed(self) -> None:
        """Leave out (and report) each lane that still meets another only against its direction.

        The template refuses such a lane (:meth:`LaneGraph.direction_errors`):
        it ends where another lane ends, or meets a start at a reversal.
        After junction lanes are directed by their approach, what remains is
        a map whose geometry contradicts its own links; one lane of it must not
        refuse the map.
        """
        for _ in range(len(self.lanes)):
            errors = _Ends(self.lanes).direction_errors()
            if not errors:
                return
            dropped: set[str] = set()
            for err in errors:
                # Of two lanes that meet against each other, the first (by id) goes; the other may then be fine.
                if err.lane in self.lanes and err.other not in dropped:
                    self.report.repairs.append(f"{self._where(self.lane_by_name[err.lane])}: left out: {err.reason}")
                    self._drop_lane(err.lane)
                    dropped.add(err.lane)

    def _lane_changes(self) -> None:
        """``change_left`` / ``change_right`` of each lane with a same-direction driving neighbour, from the road mark
        between them (SPEC §18: broken or none = allowed); see :func:`_change_allowed`."""
        for name, lane in sorted(self.lane_by_name.items()):
            road_id, k, lid = lane.key
            side = 1 if lid > 0 else -1
            inner_is_left = (lid < 0) == lane.forward
            for neighbour_id, outward in ((lid - side, False), (lid + side, True)):
                if neighbour_id == 0:
                    continue
                other = self.lane_by_name.get(lane_name((road_id, k, neighbour_id)))
                if other is None or other.forward != lane.forward \
                        or self.lanes[name]["kind"] in ("parking", "biking") \
                        or self.lanes[lane_name(other.key)]["kind"] in ("parking", "biking"):
                    continue
                # The mark between them is on the outer border of the one nearer the reference line.
                mark = lane.mark if outward else other.mark
                allowed = _change_allowed(mark, from_inner=outward, increasing=neighbour_id > lid)
                key = "change_right" if inner_is_left == outward else "change_left"
                self.lanes[name][key] = allowed

    def _markings(self) -> list[dict[str, Any]]:
        """Painted lines: each imported lane's outer-border road mark and each lane section's centre mark."""
        out = []
        for name, lane in sorted(self.lane_by_name.items()) + sorted(self.sidewalks.items()):
            if lane.mark is None or lane.mark.type in ("none", "") or name not in self.regions:
                continue
            pts, zs = _pts_z(lane.outer, None if lane.z is None else lane.z[1])
            if len(pts) >= 2:
                out.append(_marking(f"mark_{name}", lane.mark, pts, zs))
        for road in self.odr.roads:
            if self.bounds is not None:
                continue  # a centre mark is not clipped to --bounds
            ends = [sec.s for sec in road.sections[1:]] + [road.length]
            for k, (sec, end) in enumerate(zip(road.sections, ends)):
                mark = _main_mark(sec, sec.centre_marks, end)
                if mark is None or mark.type in ("none", "") or end - sec.s < 0.1:
                    continue
                if not any(lane_name((road.id, k, ln.id)) in self.lanes for ln in sec.lanes):
                    continue
                n = max(2, math.ceil((end - sec.s) / MAX_STEP_M) + 1)
                frame = _RoadFrame.at(road, np.linspace(sec.s, end, n))
                z = None
                if frame.z is not None or frame.tan_roll is not None:
                    z = (frame.z if frame.z is not None else 0.0) + \
                        (frame.offset * frame.tan_roll if frame.tan_roll is not None else 0.0) + np.zeros(n)
                pts, zs = _pts_z(frame.ref + frame.normal * frame.offset[:, None], z)
                if len(pts) >= 2 and LineString(np.asarray(pts)).is_simple:
                    out.append(_marking(f"mark_road{_safe(road.id)}_sec{k}_centre", mark, pts, zs))
        return out

    def _drop_lane(self, name: str) -> None:
        del self.lanes[name]
        self.lane_by_name.pop(name, None)
        self.lane_key_by_name.pop(name, None)
        self.regions.pop(name, None)

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
        walk_area = unary_union([Polygon(np.asarray(self.regions[n]["polygon"])) for n in self.sidewalks])
        crosswalks = self._crosswalk_regions()
        if crosswalks:
            walk_area = unary_union([walk_area] + [p for _, _, p in crosswalks])
        cover = walk_area.buffer(0.04)
        prepare(cover)
        chains: dict[str, list[tuple[float, tuple[float, float]]]] = {}
        for name, lane in sorted(self.sidewalks.items()):
            line = LineString(np.asarray(_pts(lane.centre)))
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

    def _chain_stops(self, line: LineString, cover: BaseGeometry) -> list[float]:
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

    def _joins(self, nodes: dict[str, list[float]], chains: dict[str, Any], cover: BaseGeometry) -> set[tuple[str, str]]:
        """Edges between sidewalk chains whose end nodes meet (sections and linked roads), found on a grid."""
        by_chain: dict[str, list[str]] = {}
        for n in nodes:
            head, _, tail = n.rpartition("_n")
            if head in chains and tail.isdigit():
                by_chain.setdefault(head, []).append(n)
        ends = []
        for name in sorted(chains):
            ids = sorted(by_chain.get(name, ()), key=lambda n: int(n.rsplit("_n", 1)[1]))
            if ids:
                ends += [(ids[0], name), (ids[-1], name)]
        cell = max(SIDEWALK_JOIN_M, 1e-3)
        grid: dict[tuple[int, int], list[int]] = {}
        for i, (node, _) in enumerate(ends):
            x, y = nodes[node]
            grid.setdefault((math.floor(x / cell), math.floor(y / cell)), []).append(i)
        out = set()
        for i, (a, chain_a) in enumerate(ends):
            x, y = nodes[a]
            gx, gy = math.floor(x / cell), math.floor(y / cell)
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for j in grid.get((gx + dx, gy + dy), ()):
                        b, chain_b = ends[j]
                        if j > i and chain_a != chain_b and math.dist(nodes[a], nodes[b]) <= SIDEWALK_JOIN_M \
                                and cover.covers(LineString([nodes[a], nodes[b]])):
                            out.add((a, b))
        return out

    def _crosswalk_regions(self) -> list[tuple[str, MapObject, Polygon]]:
        out = []
        for road in self.odr.roads:
            for obj in road.objects:
                if obj.type == "parkingSpace":
                    self._parking_space(road, obj)
                    continue
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
                self.crosswalk_at[cw_id] = (road.id, float(obj.s))
                ring = _pts(np.asarray(poly.exterior.coords[:-1]))
                self.regions[cw_id] = {"id": cw_id, "type": "crosswalk", "polygon": ring}
                out.append((cw_id, obj, Polygon(ring)))
        return out

    def _parking_space(self, road: Road, obj: MapObject) -> None:
        """A ``parkingSpace`` object: a parking region (and a parking affordance where a slot fits along it)."""
        poly = _object_polygon(road, obj)
        if poly is None:
            self.skipped["parkingSpace objects without an outline or size"] += 1
            return
        if self.bounds is not None and not self.bounds.contains(poly):
            self.skipped["outside --bounds"] += 1
            return
        rid = f"parking_{_safe(road.id)}_{_safe(obj.id)}"
        self.regions[rid] = {"id": rid, "type": "parking", "polygon": _pts(np.asarray(poly.exterior.coords[:-1]))}
        self.parking_spaces.append(rid)

    # -- signals --

    def _signals(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """Traffic lights over the lanes they bind to, and static signs as lane facts (:meth:`_sign`).

        A light binds to the imported driving lanes its ``validity`` names (or,
        without one, the lanes its ``orientation`` faces), on its own road and
        on every road holding a ``<signalReference>`` to it; a light that
        binds to none but is switched by a junction's ``<controller>`` binds
        to its road's lanes flowing into that junction. Its stop line is on
        the first bound lane at the signal's s, clamped to that lane section.
        Signal groups are the controllers (their phases offset, see
        :meth:`_signal_offsets`).
        """
        signals, instances, controls = [], [], []
        by_id = {sig.id: (road, sig) for road in self.odr.roads for sig in road.signals}
        refs: dict[str, list[tuple[Road, Any]]] = {}
        for road in self.odr.roads:
            for ref in road.signal_refs:
                refs.setdefault(ref.id, []).append((road, ref))
        offset_of = self._signal_offsets()
        junction_of = {sig: j.id for j in self.odr.junctions for c in j.controllers
                       for sig in self.odr.controllers.get(c, ())}
        cycle = sum(p["duration_s"] for p in defaults.DEFAULT_SIGNAL_PROGRAM)
        for road in self.odr.roads:
            for sig in road.signals:
                if not sig.validity and sig.orientation not in ("+", "-") and sig.id in junction_of:
                    bound = []  # neither validity nor orientation: the junction's controller says which approach
                else:
                    bound = [(name, road, s) for name, s in self._controlled(road, sig.s, sig.validity,
                                                                            sig.orientation)]
                for ref_road, ref in refs.get(sig.id, ()):
                    bound += [(name, ref_road, s)
                              for name, s in self._controlled(ref_road, ref.s, ref.validity, ref.orientation)]
                if not bound and sig.id in junction_of:
                    bound = [(name, road, sig.s) for name in self._into_junction(road, junction_of[sig.id])]
                    if bound:
                        self.skipped["traffic lights bound through their junction's controller"] += 1
                if sig.dynamic and sig.type in PEDESTRIAN_LIGHT_TYPES:
                    self._pedestrian_light(road, sig, refs.get(sig.id, ()), offset_of.get(sig.id, 0.0) * cycle)
                    continue
                if not sig.dynamic:
                    self._sign(sig, sorted({name for name, _, _ in bound}))
                    continue
                if not bound:
                    self.skipped["traffic lights valid for no imported driving lane"] += 1
                    continue
                lanes = sorted({name for name, _, _ in bound})
                stop_lane, stop_road, stop_s = bound[0]
                for ref_id in sig.references:
                    if ref_id in by_id and by_id[ref_id][1].type == "294" and by_id[ref_id][0].id == stop_road.id:
                        stop_s = by_id[ref_id][1].s
                length = LineString(self.lanes[stop_lane]["polyline"]).length
                s_m = min(max(self._lane_s(stop_lane, stop_s), 0.0), max(0.0, length - STOP_LINE_END_MARGIN_M))
                sid = f"signal_{_safe(sig.id)}"
                signals.append({
                    "id": sid, "controls": lanes,
                    "stop_line": {"lane": stop_lane, "s_m": _r(s_m)},
                    "program": [dict(p) for p in defaults.DEFAULT_SIGNAL_PROGRAM],
                    "offset_s": _r(offset_of.get(sig.id, 0.0) * cycle),
                })
                at = np.array([min(max(sig.s, 0.0), road.length)])
                pose = reference_poses(road.geometries, at)
                h = float(pose.hdg[0])
                x = float(pose.x[0]) - sig.t * math.sin(h)
                y = float(pose.y[0]) + sig.t * math.cos(h)
                z = float(_poly_at(road.elevation, at)[0]) if road.elevation else 0.0
                faces = h + sig.h_offset + (math.pi if sig.orientation != "-" else 0.0)
                yaw = math.degrees((faces + math.pi) % (2 * math.pi) - math.pi)
                instances.append({"name": f"head_{sid}", "asset": defaults.SIGNAL_HEAD_ASSET,
                                  "pose": {"x": _r(x), "y": _r(y), "z": _r(z), "yaw_deg": _r(yaw)}})
                controls.append({"type": "controls", "instance": f"head_{sid}", "signal": sid})
        if signals:
            self.report.defaults.append(f"{len(signals)} traffic light(s): OpenDRIVE holds no timing; fixed-time "
                                        f"{cycle:g} s program, junction controllers offset by cycle/n")
        return sorted(signals, key=lambda s: s["id"]), sorted(instances, key=lambda i: i["name"]), \
            sorted(controls, key=lambda c: c["instance"])

    def _pedestrian_light(self, road: Road, sig: Any, refs: Any, offset_s: float) -> None:
        """A pedestrian light (:data:`PEDESTRIAN_LIGHT_TYPES`) over the crosswalks of its road (and of the roads
        referencing it) whose object lies within :data:`PEDESTRIAN_LIGHT_REACH_M` of it along s; the program is
        :data:`~simready.maps.defaults.PEDESTRIAN_SIGNAL_PROGRAM` (walk while the vehicles' default program is red)
        with the offset its controller gives the vehicles' lights."""
        near = sorted(cw for cw, (rid, s) in self.crosswalk_at.items()
                      if (rid == road.id and abs(s - sig.s) <= PEDESTRIAN_LIGHT_REACH_M)
                      or any(rid == ref_road.id and abs(s - ref.s) <= PEDESTRIAN_LIGHT_REACH_M for ref_road, ref in refs))
        if not near:
            self.skipped["pedestrian lights near no imported crosswalk"] += 1
            return
        self.pedestrian_signals.append({"id": f"ped_signal_{_safe(sig.id)}", "crosswalks": near,
                                        "program": [dict(p) for p in defaults.PEDESTRIAN_SIGNAL_PROGRAM],
                                        "offset_s": _r(offset_s)})
        self.skipped["pedestrian lights: imported as pedestrian signals over their crosswalks"] += 1

    def _sign(self, sig: Any, lanes: list[str]) -> None:
        """A static sign as lane facts: stop (206) and yield (205) a lane's right of way, a speed limit (274) its speed.

        Types are the German catalogue's, which OpenDRIVE samples and CARLA
        maps use; a 274's limit is its ``value`` (in its ``unit``, km/h by
        default), else its ``subtype`` in km/h. A stop-line marking (294) is
        read by the lights that reference it. Anything else is counted.
        """
        if sig.type == "294":
            return
        if sig.type in ("205", "206") and lanes:
            rule = "stop" if sig.type == "206" else "yield"
            for name in lanes:
                if self.lanes[name].get("right_of_way") != "stop":
                    self.lanes[name]["right_of_way"] = rule
            self.skipped[f"{rule} signs: imported as lane right of way"] += 1
            return
        if sig.type == "274" and lanes:
            limit = _speed_sign_mps(sig)
            if limit is not None:
                for name in lanes:
                    self.lanes[name]["speed_limit_mps"] = round(limit, 3)
                    if "speed_limit_mps" in self.regions.get(name, {}):
                        self.regions[name]["speed_limit_mps"] = round(limit, 3)
                self.skipped["speed limit signs: imported as lane speed limits"] += 1
                return
        self.skipped[f"static signals (type {sig.type or '?'})"] += 1

    def _into_junction(self, road: Road, junction: str) -> list[str]:
        """Imported driving lanes of ``road`` that flow into ``junction`` (at the road end the junction is at)."""
        link = road.successor
        at_end = link is not None and link.element_type == "junction" and link.element_id == junction
        k = len(road.sections) - 1 if at_end else 0
        out = []
        for lane in road.sections[k].lanes:
            name = lane_name((road.id, k, lane.id))
            if name in self.lane_by_name and self.lanes[name]["kind"] in ("driving", "turn") \
                    and self.lane_by_name[name].forward == at_end:
                out.append(name)
        return sorted(out)

    def _signal_offsets(self) -> dict[str, float]:
        """Fraction of the cycle each signal's controller is offset by: controller k of n in its junction → k/n."""
        out: dict[str, float] = {}
        for j in self.odr.junctions:
            ctrls = [c for c in j.controllers if c in self.odr.controllers]
            for k, cid in enumerate(ctrls):
                for sig in self.odr.controllers[cid]:
                    out[sig] = k / len(ctrls)
        return out

    def _controlled(self, road: Road, s: float, validity: tuple[tuple[int, int], ...],
                    orientation: str) -> list[tuple[str, float]]:
        """Imported driving lanes named by ``validity`` (else those ``orientation`` faces) with the road s of their
        stop line: in the lane section at ``s``, or — where a validity names lanes that section lacks — in the
        last earlier section holding them, the stop line clamped to that section's end (reported)."""
        k_at = max((i for i, sec in enumerate(road.sections) if sec.s <= max(s, 0.0) + 1e-9), default=0)
        for k in range(k_at, -1, -1):
            out = []
            for lane in road.sections[k].lanes:
                name = lane_name((road.id, k, lane.id))
                if name not in self.lane_by_name or self.lanes[name]["kind"] not in ("driving", "turn", "biking"):
                    continue
                if validity:
                    if not any(min(a, b) <= lane.id <= max(a, b) for a, b in validity):
                        continue
                elif orientation in ("+", "-") and self.lane_by_name[name].forward != (orientation == "+"):
                    continue
                out.append((abs(lane.id), name))
            if out:
                end = road.sections[k + 1].s if k + 1 < len(road.sections) else road.length
                if k != k_at or s > end:
                    self.report.repairs.append(f"road {road.id}: signal at s={s:g} is past the end of lane section "
                                               f"s={road.sections[k].s:g} (its lanes {', '.join(n for _, n in sorted(out))}): "
                                               f"stop line clamped to s={end:g}")
                return [(name, min(s, end)) for _, name in sorted(out)]
            if not validity:
                return []
        return []

    def _lane_s(self, name: str, road_s: float) -> float:
        """Arc length along lane ``name`` (in travel order) at road ``road_s``."""
        lane = self.lane_by_name[name]
        along = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(lane.centre, axis=0).T))])
        s = float(np.interp(road_s, lane.s, along))
        return s if lane.forward else float(along[-1]) - s


def _speed_sign_mps(sig: Signal) -> float | None:
    """The limit of a speed sign (m/s): its value in its unit (km/h when none), else its subtype in km/h."""
    units = {"km/h": 1.0 / 3.6, "mph": 0.44704, "m/s": 1.0, "": 1.0 / 3.6}
    if sig.value is not None and sig.value > 0 and sig.unit in units:
        return sig.value * units[sig.unit]
    try:
        kmh = float(sig.subtype)
    except ValueError:
        return None
    return kmh / 3.6 if 0 < kmh <= 300 else None


#: Road mark types that may be crossed (SPEC §18: broken or none = allowed); any other single line may not.
CROSSABLE_MARKS = ("broken", "none", "", "botts dots", "broken broken")


def _change_allowed(mark: RoadMark | None, from_inner: bool, increasing: bool) -> bool:
    """May a vehicle cross ``mark`` from the lane on its inner (``from_inner``) or outer side?

    The mark's ``laneChange`` attribute decides where the map gives it
    (``increase``/``decrease``: towards higher/lower lane ids, ``both``,
    ``none``); else its type: a single line by :data:`CROSSABLE_MARKS`, a
    double line (``solid broken``, ``broken solid``) read inner line first,
    crossable from the side its broken line faces.
    """
    if mark is None:
        return True
    if mark.lane_change in ("both", "none"):
        return mark.lane_change == "both"
    if mark.lane_change in ("increase", "decrease"):
        return (mark.lane_change == "increase") == increasing
    words = mark.type.split()
    if len(words) == 2 and words[0] != words[1]:
        return (words[0] if from_inner else words[1]) in CROSSABLE_MARKS
    return mark.type in CROSSABLE_MARKS


def _marking(mid: str, mark: RoadMark, pts: list[list[float]], zs: list[float] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": mid, "type": mark.type, "color": mark.color,
                           "width_m": _r(mark.width) if mark.width > 0 else 0.12, "polyline": pts}
    if zs is not None:
        out["z"] = zs
    return out


@dataclass(frozen=True)
class _DirectionError:
    lane: str
    reason: str
    other: str


class _Ends:
    """Lane ends indexed on a grid: the successors and direction errors :class:`~simready.world.lanes.LaneGraph`
    derives (same tolerances, same rules), without comparing every lane with every other (a 3 MB map has
    thousands of lanes)."""

    def __init__(self, lanes: dict[str, dict[str, Any]]) -> None:
        self.names = sorted(lanes)
        self.start = {n: np.asarray(lanes[n]["polyline"][0], dtype=float) for n in self.names}
        self.end = {n: np.asarray(lanes[n]["polyline"][-1], dtype=float) for n in self.names}
        self.start_yaw = {n: _yaw(lanes[n]["polyline"][0], lanes[n]["polyline"][1]) for n in self.names}
        self.end_yaw = {n: _yaw(lanes[n]["polyline"][-2], lanes[n]["polyline"][-1]) for n in self.names}
        self.cell = max(1.0, 2.0 * SUCCESSOR_GAP_TOLERANCE_M)
        self.starts: dict[tuple[int, int], list[str]] = {}
        self.ends: dict[tuple[int, int], list[str]] = {}
        for n in self.names:
            self.starts.setdefault(self._key(self.start[n]), []).append(n)
            self.ends.setdefault(self._key(self.end[n]), []).append(n)

    def _key(self, p: Array) -> tuple[int, int]:
        return int(math.floor(p[0] / self.cell)), int(math.floor(p[1] / self.cell))

    def _near(self, index: dict[tuple[int, int], list[str]], p: Array) -> list[str]:
        i, j = self._key(p)
        out = []
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                out += index.get((i + di, j + dj), [])
        return sorted(out)

    def successors(self, a: str) -> list[str]:
        return [b for b in self._near(self.starts, self.end[a]) if b != a and self._continues(a, b)]

    def _continues(self, a: str, b: str) -> bool:
        turn = abs(wrap_angle(self.start_yaw[b] - self.end_yaw[a]))
        return _dist(self.end[a], self.start[b]) <= SUCCESSOR_GAP_TOLERANCE_M and turn < SUCCESSOR_MAX_HEADING_CHANGE_RAD

    def direction_errors(self) -> list[_DirectionError]:
        out = []
        for a in self.names:
            if self.successors(a):
                continue
            for b in self._near(self.ends, self.end[a]):
                if b != a and _dist(self.end[a], self.end[b]) <= SUCCESSOR_GAP_TOLERANCE_M:
                    out.append(_DirectionError(a, f"ends where lane {b!r} ends: one of them runs against its direction",
                                               b))
            for b in self._near(self.starts, self.end[a]):
                if b != a and _dist(self.end[a], self.start[b]) <= SUCCESSOR_GAP_TOLERANCE_M:
                    turn = math.degrees(abs(wrap_angle(self.start_yaw[b] - self.end_yaw[a])))
                    out.append(_DirectionError(a, f"meets lane {b!r} only against its direction (turn {turn:.0f} deg)",
                                               b))
        return out


def _yaw(p: Any, q: Any) -> float:
    return math.atan2(q[1] - p[1], q[0] - p[0])


def _dist(p: Array, q: Array) -> float:
    return float(math.hypot(p[0] - q[0], p[1] - q[1]))


def _heading(points: Array, i: int) -> float:
    if i == 0:
        d = points[1] - points[0]
    else:
        d = points[-1] - points[-2]
    return math.atan2(d[1], d[0])


def _long_side(poly: Polygon) -> float:
    c = list(poly.minimum_rotated_rectangle.exterior.coords)
    return max(math.dist(c[0], c[1]), math.dist(c[1], c[2]))


