"""Links and junctions: the links the file declares (dangling ones dropped), junction connecting lanes directed by
their approach, and lane ends joined (successors, direction errors) as :class:`~simready.world.lanes.LaneGraph`
joins them."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from simready.maps.opendrive import OpenDriveMap, Road
from simready.maps.refline import Array
from simready.maps.xodr_import.model import LaneKey, SampledLane, lane_name
from simready.maps.xodr_import.outlines import dist_xy
from simready.world.lanes import SUCCESSOR_GAP_TOLERANCE_M, SUCCESSOR_MAX_HEADING_CHANGE_RAD, wrap_angle


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


def checked_links(odr: OpenDriveMap) -> tuple[OpenDriveMap, list[str]]:
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


def orient_junction_lanes(odr: OpenDriveMap, sampled: list[SampledLane]) -> tuple[list[SampledLane], list[str]]:
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


@dataclass(frozen=True)
class _DirectionError:
    lane: str
    reason: str
    other: str


class LaneEnds:
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
        return dist_xy(self.end[a], self.start[b]) <= SUCCESSOR_GAP_TOLERANCE_M and turn < SUCCESSOR_MAX_HEADING_CHANGE_RAD

    def direction_errors(self) -> list[_DirectionError]:
        out = []
        for a in self.names:
            if self.successors(a):
                continue
            for b in self._near(self.ends, self.end[a]):
                if b != a and dist_xy(self.end[a], self.end[b]) <= SUCCESSOR_GAP_TOLERANCE_M:
                    out.append(_DirectionError(a, f"ends where lane {b!r} ends: one of them runs against its direction",
                                               b))
            for b in self._near(self.starts, self.end[a]):
                if b != a and dist_xy(self.end[a], self.start[b]) <= SUCCESSOR_GAP_TOLERANCE_M:
                    turn = math.degrees(abs(wrap_angle(self.start_yaw[b] - self.end_yaw[a])))
                    out.append(_DirectionError(a, f"meets lane {b!r} only against its direction (turn {turn:.0f} deg)",
                                               b))
        return out


def _yaw(p: Any, q: Any) -> float:
    return math.atan2(q[1] - p[1], q[0] - p[0])
