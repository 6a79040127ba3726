"""World template → ASAM OpenDRIVE, written with ``scenariogeneration``'s OpenDRIVE writer.

A template's lanes are directed centreline polylines, not roads with lane
sections, so each lane becomes one road (ids 1, 2, … in lane-id order;
the road's ``name`` is the lane id):

* plan view: one ``<line>`` per polyline segment, the lane's centreline itself;
* one right lane (-1, so right-hand traffic drives it along s) of the lane's
  width, on a lane offset of half that width, so that its centre is the
  reference line exactly;
* lanes inside ``intersection`` regions are connecting roads: regions that
  overlap form one junction, whose connections join each connecting road to
  the roads before and after it; other successors are road links where the
  link is one-to-one;
* each signal becomes a dynamic signal (type 1000001) at its stop line on the
  stop line's road, valid for lane -1; signals with the same program offset
  share one controller.

What OpenDRIVE cannot hold this way (regions other than the lanes' own,
the walkable graph, lane-to-lane successors that are not one-to-one outside a
junction, signal programs) is listed in the report. The header carries no
date, so the same template gives the same bytes.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from scenariogeneration import xodr
from scenariogeneration.xodr.signals_objects import _SignalObjectBase
from shapely.geometry import LineString, Point, Polygon

from simready.world.template import Lane, WorldTemplate

__all__ = ["ExportReport", "export_xodr", "fresh_ids"]

#: Width and offset records follow the measured widths within this (m).
PIECE_TOLERANCE_M = 5e-4
#: Widths at a lane's ends are measured this far inside its outline (m).
WIDTH_PROBE_M = 0.05
#: The length of the end piece bent to meet a contact heading (m): the rest of the lane stays on its polyline.
BEND_PIECE_M = 2.0
#: An end arc that leaves its polyline by more than this is reported (m).
BEND_REPORT_M = 0.01
#: Polyline vertices closer than this to the chord of their neighbours are dropped (m).
COLLINEAR_TOLERANCE_M = 1e-4
#: Width and height (m) written for a signal head (the schema requires both).
SIGNAL_HEAD_SIZE_M = (0.3, 0.9)
#: Regions of these types are carried by the lanes that lie in them.
LANE_REGION_TYPES = ("drivable", "parking", "intersection")


@dataclass
class ExportReport:
    """Road id of each lane, and what could not be expressed (one line each)."""

    road_of_lane: dict[str, int] = field(default_factory=dict)
    not_expressed: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"exported {len(self.road_of_lane)} lanes as roads"] + [f"not expressed: {x}" for x in self.not_expressed]


def fresh_ids() -> None:
    """Empty the writer's process-wide registry of signal and object ids.

    ``scenariogeneration`` remembers every id it has seen in this process and
    renames a repeat (``"1"`` becomes ``"0"``), so a second export in the same
    process would write other ids; each map starts from an empty registry.
    """
    _SignalObjectBase._usedIDs.clear()
    _SignalObjectBase._IDCounter.clear()


def _junctions(t: WorldTemplate, first_id: int) -> dict[str, int]:
    """Lane id → junction id (from ``first_id`` on, after the road ids) for lanes in intersection regions;
    overlapping regions make one junction."""
    regions = sorted({lane.region for lane in t.lanes if t.region_by_id[lane.region].type == "intersection"})
    parent = {r: r for r in regions}

    def find(r: str) -> str:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    shapes = {r: t.region_by_id[r].shape for r in regions}
    for i, a in enumerate(regions):
        for b in regions[i + 1:]:
            if shapes[a].intersects(shapes[b]):
                parent[find(b)] = find(a)
    roots = sorted({find(r) for r in regions})
    number = {root: first_id + k for k, root in enumerate(roots)}
    return {lane.id: number[find(lane.region)] for lane in t.lanes if lane.region in parent}


def _chord(p: tuple[float, float], q: tuple[float, float]) -> float:
    return math.atan2(q[1] - p[1], q[0] - p[0])


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def _contact_headings(t: WorldTemplate) -> dict[tuple[str, str], float]:
    """The one heading every lane meeting at a contact point uses there: ``{(lane, "start" | "end"): rad}``.

    Why: the checker compares lane borders where roads meet, and a border
    point lies half a width off the reference line along its normal, so two
    roads that meet at a kink (a polyline's chords turn at every joint) have
    borders apart by half a width times the kink. Every lane end and start at
    one point takes the circular mean of the chords that meet there.
    """
    graph = t.lane_graph
    # Group lane ends by the contact point they share (successor pairs are within the successor gap).
    groups: list[set[tuple[str, str]]] = []
    for a in sorted(graph.lanes):
        for b in graph.successors[a]:
            pair = {(a, "end"), (b, "start")}
            hit = [g for g in groups if g & pair]
            merged = set(pair).union(*hit)
            groups = [g for g in groups if not g & pair] + [merged]
    out: dict[tuple[str, str], float] = {}
    for group in groups:
        chords = []
        for lane, end in sorted(group):
            pts = t.lane_graph.lane(lane).points
            chords.append(_chord(pts[-2], pts[-1]) if end == "end" else _chord(pts[0], pts[1]))
        mean = math.atan2(sum(math.sin(c) for c in chords), sum(math.cos(c) for c in chords))
        for key in group:
            out[key] = mean
    return out


def _arc_from(x0: float, y0: float, heading: float, x1: float, y1: float) -> tuple[xodr.Arc | xodr.Line, float]:
    """The circular arc leaving (x0, y0) at ``heading`` and passing through (x1, y1) (a line when they agree)."""
    d = math.hypot(x1 - x0, y1 - y0)
    phi = _wrap(_chord((x0, y0), (x1, y1)) - heading)
    if abs(phi) < 1e-9:
        return xodr.Line(d), d
    length = d * phi / math.sin(phi)
    return xodr.Arc(2.0 * math.sin(phi) / d, length=length), length


def _plan_view(lane: Lane, h_start: float | None,
               h_end: float | None) -> tuple[xodr.PlanView, float, list[tuple[float, float]], list[float]]:
    """Lines along the polyline; where a contact heading is given, a short end piece (:data:`BEND_PIECE_M`) is an arc
    that leaves (arrives) at it. Returns the plan view, the largest gap between those arcs and their chords (m),
    and the vertices with their s along the written reference line."""
    # Collinear samples (an imported straight lane) are one line: the checker flags repeated lines as redundant.
    pts = list(LineString(lane.polyline).simplify(COLLINEAR_TOLERANCE_M).coords)
    if len(pts) >= 3:
        # A free end leaves along the tangent the chords suggest (their turn continued by half a chord), so that
        # the lane's end edge stands square to the curve as the outline it came from does.
        c0, c1 = _chord(pts[0], pts[1]), _chord(pts[1], pts[2])
        e0, e1 = _chord(pts[-3], pts[-2]), _chord(pts[-2], pts[-1])
        h_start = c0 - _wrap(c1 - c0) / 2.0 if h_start is None else h_start
        h_end = e1 + _wrap(e1 - e0) / 2.0 if h_end is None else h_end
    if h_start is not None and abs(_wrap(_chord(pts[0], pts[1]) - h_start)) > 1e-9:
        pts.insert(1, _along(pts[0], pts[1], BEND_PIECE_M))
    if h_end is not None and abs(_wrap(_chord(pts[-2], pts[-1]) - h_end)) > 1e-9:
        pts.insert(len(pts) - 1, _along(pts[-1], pts[-2], BEND_PIECE_M))
    last = len(pts) - 2
    pieces: list[list[Any]] = []  # [x0, y0, heading, geometry, length]
    s_at = [0.0]
    bend = 0.0
    for i, ((x0, y0), (x1, y1)) in enumerate(zip(pts, pts[1:])):
        chord = _chord((x0, y0), (x1, y1))
        heading = chord
        if i == 0 and h_start is not None:
            heading = h_start
        elif i == last and h_end is not None:
            heading = 2.0 * chord - h_end
        geom, length = _arc_from(x0, y0, heading, x1, y1)
        s_at.append(s_at[-1] + length)
        bend = max(bend, math.hypot(x1 - x0, y1 - y0) * abs(_wrap(chord - heading)) / 4.0)
        prev = pieces[-1] if pieces else None
        if prev is not None and isinstance(geom, xodr.Line) and isinstance(prev[3], xodr.Line) \
                and abs(_wrap(prev[2] - heading)) < 1e-9:
            prev[4] += length
        else:
            pieces.append([x0, y0, heading, geom, length])
    plan = xodr.PlanView()
    s = 0.0
    for x0, y0, heading, geom, length in pieces:
        if isinstance(geom, xodr.Line):
            geom = xodr.Line(length)
        plan.add_fixed_geometry(geom, x0, y0, heading, s)
        s += length
    return plan, bend, pts, s_at


def _along(p: tuple[float, float], q: tuple[float, float], d_m: float) -> tuple[float, float]:
    """The point ``min(d_m, |pq|/2)`` from ``p`` towards ``q``."""
    d = min(d_m, 0.5 * math.dist(p, q))
    k = d / math.dist(p, q)
    return p[0] + k * (q[0] - p[0]), p[1] + k * (q[1] - p[1])


def _widths(lane: Lane, region: Polygon | None, pts: list[tuple[float, float]]) -> list[float]:
    """Lane width (m) at each vertex: the cross-section of the lane's own outline there, or ``width_m``.

    An imported lane's region is its outline (inner border out, outer border
    back), so its width along s survives the export; a region shared by
    several lanes (a hand-written carriageway) says nothing about one lane.
    """
    if region is None:
        return [lane.width_m] * len(pts)
    out = []
    reach = 2.0 * lane.width_m + 1.0
    for i, p in enumerate(pts):
        q = pts[min(i + 1, len(pts) - 1)] if i < len(pts) - 1 else p
        o = pts[max(i - 1, 0)] if i > 0 else p
        h = _chord(o, q)
        # At an end the outline's end edge is the cross-section; measure just inside it.
        inward = WIDTH_PROBE_M if i == 0 else (-WIDTH_PROBE_M if i == len(pts) - 1 else 0.0)
        cx, cy = p[0] + inward * math.cos(h), p[1] + inward * math.sin(h)
        nx, ny = -math.sin(h), math.cos(h)
        cut = region.intersection(LineString([(cx - reach * nx, cy - reach * ny), (cx + reach * nx, cy + reach * ny)]))
        pieces = [g for g in getattr(cut, "geoms", [cut]) if isinstance(g, LineString) and not g.is_empty]
        piece = min(pieces, key=lambda g: g.distance(Point(cx, cy)), default=None)
        out.append(piece.length if piece is not None and piece.distance(Point(cx, cy)) < 1e-6 else lane.width_m)
    return out


def _pieces(values: list[float], s_at: list[float]) -> list[tuple[float, float, float]]:
    """Linear pieces ``(s, value, slope)`` through (s_at[i], values[i]) within PIECE_TOLERANCE_M, greedily long:
    a constant width is one record, not one per vertex (the checker flags repeated records as redundant)."""
    out: list[tuple[float, float, float]] = []
    i = 0
    last = len(values) - 1
    while i < last:
        j = i + 1
        while j < last:
            k = (values[j + 1] - values[i]) / (s_at[j + 1] - s_at[i])
            if any(abs(values[i] + k * (s_at[m] - s_at[i]) - values[m]) > PIECE_TOLERANCE_M for m in range(i + 1, j + 1)):
                break
            j += 1
        out.append((s_at[i], values[i], (values[j] - values[i]) / (s_at[j] - s_at[i])))
        i = j
    return out


def _road(lane: Lane, road_id: int, junction: int | None, h_start: float | None, h_end: float | None,
          region: Polygon | None) -> tuple[xodr.Road, xodr.Lane, float]:
    plan, bend, pts, s_at = _plan_view(lane, h_start, h_end)
    centre = xodr.Lane(lane_type=xodr.LaneType.none)
    section = xodr.LaneSection(0, centre)
    kind = {"parking": xodr.LaneType.parking, "biking": xodr.LaneType.biking}.get(lane.kind, xodr.LaneType.driving)
    (s0, w0, k0), *more = _pieces(_widths(lane, region, pts), s_at)
    right = xodr.Lane(lane_type=kind, a=w0, b=k0)
    for s1, w1, k1 in more:
        right.add_lane_width(a=w1, b=k1, soffset=s1)
    right.add_roadmark(xodr.std_roadmark_solid())
    section.add_right_lane(right)
    lanes = xodr.Lanes()
    lanes.add_lanesection(section)
    # The lane's centre is the reference line: the offset is half its width everywhere.
    for s1, w1, k1 in [(s0, w0, k0), *more]:
        lanes.add_laneoffset(xodr.LaneOffset(s1, 0.5 * w1, 0.5 * k1, 0, 0))
    road = xodr.Road(road_id, plan, lanes, road_type=-1 if junction is None else junction, name=lane.id)
    road.add_type(xodr.RoadType.town, 0, speed=lane.speed_limit_mps, speed_unit="m/s")
    return road, right, bend


def export_xodr(t: WorldTemplate) -> tuple[bytes, ExportReport]:
    """The OpenDRIVE bytes of template ``t`` and the export report."""
    fresh_ids()
    report = ExportReport()
    lanes = sorted(t.lanes, key=lambda lane: lane.id)
    road_id = {lane.id: k + 1 for k, lane in enumerate(lanes)}
    report.road_of_lane = dict(road_id)
    junction_of = _junctions(t, len(lanes) + 1)
    contact = _contact_headings(t)
    shared = Counter(lane.region for lane in lanes)
    built = {lane.id: _road(lane, road_id[lane.id], junction_of.get(lane.id), contact.get((lane.id, "start")),
                            contact.get((lane.id, "end")),
                            t.region_by_id[lane.region].shape if shared[lane.region] == 1 else None) for lane in lanes}
    roads = {k: road for k, (road, _, _) in built.items()}
    for k, (_, _, bend) in sorted(built.items()):
        if bend > BEND_REPORT_M:
            report.not_expressed.append(f"lane {k}: bent up to {bend:.3f} m off its polyline at an end, to meet "
                                        "its neighbours tangentially (the polyline turns at that joint)")

    def road_link(a: str, b: str) -> None:
        """Road ``a`` continues into road ``b`` (end to start), lane -1 into lane -1."""
        roads[a].add_successor(xodr.ElementType.road, road_id[b], xodr.ContactPoint.start)
        built[a][1].add_link("successor", -1)
        roads[b].add_predecessor(xodr.ElementType.road, road_id[a], xodr.ContactPoint.end)
        built[b][1].add_link("predecessor", -1)
    graph = t.lane_graph
    junctions: dict[int, xodr.Junction] = {}
    conn_id: Counter[int] = Counter()
    for lane in lanes:
        a = lane.id
        succ = graph.successors[a]
        if a in junction_of:
            j = junction_of[a]
            junction = junctions.setdefault(j, xodr.Junction(f"junction_{j}", j))
            preds = [p for p in graph.predecessors[a] if p not in junction_of]
            nexts = [n for n in succ if n not in junction_of]
            if len(preds) > 1 or len(nexts) > 1 or len(preds) + len(nexts) < len(graph.predecessors[a]) + len(succ):
                report.not_expressed.append(f"lane {a}: in a junction with {len(graph.predecessors[a])} predecessor(s) and "
                                            f"{len(succ)} successor(s); written: one road before and after")
            if preds:
                roads[a].add_predecessor(xodr.ElementType.road, road_id[preds[0]], xodr.ContactPoint.end)
                built[a][1].add_link("predecessor", -1)
                c = xodr.Connection(road_id[preds[0]], road_id[a], xodr.ContactPoint.start, id=conn_id[j])
                c.add_lanelink(-1, -1)
                junction.add_connection(c)
                conn_id[j] += 1
            if nexts:
                roads[a].add_successor(xodr.ElementType.road, road_id[nexts[0]], xodr.ContactPoint.start)
                built[a][1].add_link("successor", -1)
            continue
        into = sorted({junction_of[n] for n in succ if n in junction_of})
        plain = [n for n in succ if n not in junction_of]
        if into:
            roads[a].add_successor(xodr.ElementType.junction, into[0])
            if len(into) > 1 or plain:
                report.not_expressed.append(f"lane {a}: successors in more than one junction or road; written: junction {into[0]}")
        elif len(plain) == 1 and len([p for p in graph.predecessors[plain[0]] if p not in junction_of]) == 1:
            road_link(a, plain[0])
        elif plain:
            report.not_expressed.append(f"lane {a}: {len(plain)} successor(s) outside a junction that are not one-to-one")
        from_j = sorted({junction_of[p] for p in graph.predecessors[a] if p in junction_of})
        if from_j:
            roads[a].add_predecessor(xodr.ElementType.junction, from_j[0])
    _signals(t, roads, road_id, report)
    odr = xodr.OpenDrive(t.id, revMajor="1", revMinor="7")
    for lane in lanes:
        odr.add_road(roads[lane.id])
    for j in sorted(junctions):
        odr.add_junction(junctions[j])
    _not_expressed(t, report)
    root = odr.get_element()
    header = root.find("header")
    if header is not None:
        header.attrib.pop("date", None)
    for road in root.findall("road"):
        # The writer leaves empty profiles; the schema wants them absent or filled, and a template is planar.
        for tag in ("elevationProfile", "lateralProfile"):
            empty = road.find(tag)
            if empty is not None and not len(empty):
                road.remove(empty)
    _add_controllers(t, root)
    ET.indent(root, space="    ")
    return b"<?xml version='1.0' encoding='utf-8'?>\n" + ET.tostring(root, encoding="utf-8") + b"\n", report


def _signals(t: WorldTemplate, roads: dict[str, xodr.Road], road_id: dict[str, int], report: ExportReport) -> None:
    for k, sig in enumerate(sorted(t.signals, key=lambda s: s.id)):
        lane = t.lane_graph.lane(sig.stop_line.lane)
        s = min(sig.stop_line.s_m, lane.length_m)
        signal = xodr.Signal(s=s, t=-(lane.width_m + 0.5), country="DEU", Type="1000001", id=str(k + 1),
                             name=sig.id, dynamic=xodr.Dynamic.yes, orientation=xodr.Orientation.positive, zOffset=0.0,
                             height=SIGNAL_HEAD_SIZE_M[1], width=SIGNAL_HEAD_SIZE_M[0])
        signal.add_validity(-1, -1)
        roads[sig.stop_line.lane].add_signal(signal)
        if len(sig.controls) > 1:
            report.not_expressed.append(f"signal {sig.id}: controls {len(sig.controls)} lanes; written on the stop line's road only")
    if t.signals:
        report.not_expressed.append(f"{len(t.signals)} signal program(s): OpenDRIVE holds no timing")


def _add_controllers(t: WorldTemplate, root: ET.Element) -> None:
    """One controller per signal offset (signals that switch together), named in the junctions they stand at."""
    groups: dict[float, list[int]] = defaultdict(list)
    for k, sig in enumerate(sorted(t.signals, key=lambda s: s.id)):
        groups[sig.offset_s].append(k + 1)
    # The schema orders a map's children: roads, then controllers, then junctions.
    at = max(i for i, child in enumerate(root) if child.tag == "road") + 1
    for n, offset in enumerate(sorted(groups)):
        ctrl = ET.Element("controller", {"id": str(n + 1), "name": f"offset_{offset:g}s"})
        root.insert(at + n, ctrl)
        for sig_id in groups[offset]:
            ET.SubElement(ctrl, "control", {"signalId": str(sig_id), "type": "0"})


def _not_expressed(t: WorldTemplate, report: ExportReport) -> None:
    lane_regions = {lane.region for lane in t.lanes}
    other = Counter(r.type for r in t.regions if r.id not in lane_regions or r.type not in LANE_REGION_TYPES)
    for kind, n in sorted(other.items()):
        report.not_expressed.append(f"{n} {kind} region(s) (not the outline of a lane)")
    if t.walkable.nodes:
        report.not_expressed.append(f"walkable graph ({len(t.walkable.nodes)} nodes)")
    shared = Counter(lane.region for lane in t.lanes)
    merged = [r for r, n in shared.items() if n > 1]
    if merged:
        report.not_expressed.append(f"{len(merged)} region(s) holding several lanes: each lane's own outline is written")
