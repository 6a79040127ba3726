"""The lane graph every program reads (SPEC §18): the template's directed lanes with what the map says about them.

:class:`~simready.world.lanes.LaneGraph` derives topology from geometry alone
(successors, side-by-side neighbours). :class:`LaneNetwork` adds the facts that
need the rest of the template, built the same way for hand-written and
imported templates:

* **junctions** — the lanes inside each ``intersection`` region, the arms
  (roads) they join, and whether traffic lights control their approaches;
* **turns** — each junction lane's turn from its heading change:
  left / right beyond :data:`TURN_MIN_RAD`, U beyond :data:`U_TURN_MIN_RAD`,
  else straight (counter-clockwise is left);
* **lane changes** — a same-direction neighbour and whether the change is
  allowed: the lane's ``change_left`` / ``change_right`` (``True``/``False``
  from the map's road marks, ``None`` or absent: allowed — SPEC §18: broken
  or no mark means allowed); never inside a junction;
* **conflicts** — pairs of junction lanes from different approaches whose
  centrelines cross or merge, with the right of way at each
  (:func:`right_of_way`);
* **speed limits** — per lane, m/s.

Right of way, in order (the first that decides):

1. ``signal``: both approaches are signal-controlled; lanes of one green
   phase still meet (a permissive left turn), and within a phase the default
   rule below decides;
2. ``sign`` and ``priority``: from the map's signs and road priorities where
   the template carries them (none of the templates here does yet);
3. ``default``: the documented rule — going straight beats turning right,
   which beats turning left, which beats a U-turn (the turning vehicle yields
   to oncoming traffic); between equal turns the one approaching from the
   right has priority (right-hand traffic).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import shapely
from shapely.geometry import LineString
from shapely.ops import unary_union

from simready.common.memo import once_per_object
from simready.world.lanes import LaneGraph, LaneLike, wrap_angle

if TYPE_CHECKING:
    from simready.world.template import WorldTemplate

Turn = Literal["straight", "left", "right", "U"]
Side = Literal["left", "right"]

#: A junction lane turning by less than this is straight (rad).
TURN_MIN_RAD = math.radians(30.0)
#: A junction lane turning by more than this is a U-turn (rad).
U_TURN_MIN_RAD = math.radians(150.0)
#: Two arms of a junction are one road when their bearings from its centre differ by less than this (rad).
ARM_BEARING_TOLERANCE_RAD = math.radians(30.0)
#: Intersection regions closer than this are one junction (m).
JUNCTION_TOUCH_M = 0.1
#: Lane ends closer than this meet (merging paths) (m): the lane graph's successor tolerance.
MERGE_TOLERANCE_M = 0.5
#: Priority rank of each turn under the default rule (higher goes first).
TURN_RANK: dict[str, int] = {"straight": 3, "right": 2, "left": 1, "U": 0}


def turn_of(heading_change_rad: float) -> Turn:
    """The turn a heading change makes (counter-clockwise positive)."""
    a = abs(heading_change_rad)
    if a >= U_TURN_MIN_RAD:
        return "U"
    if a < TURN_MIN_RAD:
        return "straight"
    return "left" if heading_change_rad > 0 else "right"


@dataclass(frozen=True)
class Junction:
    """One intersection region's lanes.

    Attributes:
        id: the smallest id of its intersection regions (regions that touch are one junction).
        lanes: junction lanes (inside the region), sorted.
        approaches: lanes that enter it (predecessors of its lanes), sorted.
        exits: lanes that leave it, sorted.
        arms: roads it joins (approach/exit clusters by bearing from its centre).
        signalized: a traffic light controls at least one approach.
    """

    id: str
    lanes: tuple[str, ...]
    approaches: tuple[str, ...]
    exits: tuple[str, ...]
    arms: int
    signalized: bool


@dataclass(frozen=True)
class Conflict:
    """Where two junction paths cross or merge, and who goes first.

    Attributes:
        a, b: the two junction lanes (``a < b``).
        kind: ``crossing`` | ``merging``.
        xy: the conflict point, world metres.
        s_a_m, s_b_m: its arc length on each lane.
        priority: the lane with the right of way.
        rule: ``signal`` | ``sign`` | ``priority`` | ``default`` (see the module docstring).
        window_a_m, window_b_m: the conflict *area* (where the two lanes' outlines overlap) as an arc-length
            window ``(s_in, s_out)`` on each lane's centreline.
    """

    junction: str
    a: str
    b: str
    kind: str
    xy: tuple[float, float]
    s_a_m: float
    s_b_m: float
    priority: str
    rule: str
    window_a_m: tuple[float, float]
    window_b_m: tuple[float, float]

    def yields(self, lane: str) -> bool:
        """Whether ``lane`` (one of the two) must give way here."""
        return lane in (self.a, self.b) and lane != self.priority


def change_permission(lane: object, side: Side) -> bool:
    """Whether a template lane allows a change to its ``side`` neighbour (road marks; absent or None: allowed).

    The template's ``Lane.change_left`` / ``Lane.change_right`` (bool or None)
    carry the map's road marks; a template without them says nothing, and
    SPEC §18 reads that as allowed.
    """
    value = getattr(lane, f"change_{side}", None)
    return True if value is None else bool(value)


@dataclass(frozen=True, eq=False)
class LaneNetwork:
    """The template's lane graph with junctions, turns, lane-change permission, conflicts and speed limits.

    Attributes:
        graph: the geometric lane graph (successors, neighbours).
        kinds: lane id -> ``driving`` | ``parking`` | ``turn``.
        junction_of: junction lane id -> junction id.
        junctions: junction id -> :class:`Junction`, sorted.
        turns: junction lane id -> its :data:`Turn`; every other lane is ``straight``.
        change_allowed: ``(lane, side)`` -> allowed, for each lane with a neighbour on that side.
        conflicts: every :class:`Conflict`, sorted by (junction, a, b).
        controlled: lanes a traffic light controls.
    """

    graph: LaneGraph
    kinds: dict[str, str]
    junction_of: dict[str, str]
    junctions: dict[str, Junction]
    turns: dict[str, Turn]
    change_allowed: dict[tuple[str, str], bool]
    conflicts: tuple[Conflict, ...]
    controlled: frozenset[str]

    @classmethod
    def build(cls, template: WorldTemplate) -> LaneNetwork:
        graph = template.lane_graph
        regions = template.region_by_id
        group = _junction_groups(template)
        junction_of = {lane.id: group[lane.region] for lane in template.lanes if lane.region in group}
        controlled = frozenset(c for sig in template.signals for c in sig.controls)
        turns: dict[str, Turn] = {
            lane: turn_of(wrap_angle(graph.lanes[lane].end_yaw_rad - graph.lanes[lane].start_yaw_rad))
            for lane in sorted(junction_of)}
        junctions = {}
        for jid in sorted(set(junction_of.values())):
            lanes = tuple(sorted(k for k, v in junction_of.items() if v == jid))
            approaches = tuple(sorted({p for k in lanes for p in graph.predecessors[k] if p not in junction_of}))
            exits = tuple(sorted({n for k in lanes for n in graph.successors[k] if n not in junction_of}))
            centre = unary_union([regions[k].shape for k, v in group.items() if v == jid]).centroid
            ends = [graph.lanes[a].end for a in approaches] + [graph.lanes[e].start for e in exits]
            arms = _arms([math.atan2(p[1] - centre.y, p[0] - centre.x) for p in ends])
            junctions[jid] = Junction(jid, lanes, approaches, exits, arms, bool(set(approaches) & controlled))
        change: dict[tuple[str, str], bool] = {}
        for lane in template.lanes:
            for side, table in (("left", graph.left), ("right", graph.right)):
                if table[lane.id] is not None:
                    change[(lane.id, side)] = lane.id not in junction_of and change_permission(lane, side)  # type: ignore[arg-type]
        kinds: dict[str, str] = {lane.id: lane.kind for lane in template.lanes}
        net = cls(graph, kinds, junction_of, junctions, turns, change, (), controlled)
        object.__setattr__(net, "conflicts", tuple(_conflicts(net)))
        return net

    @classmethod
    def of_lanes(cls, lanes: Iterable[LaneLike]) -> LaneNetwork:
        """The network of bare lanes (no regions, no signals: no junctions, no conflicts): routing on a lane set."""
        lanes = sorted(lanes, key=lambda lane: lane.id)
        graph = LaneGraph.build(lanes)
        change = {(lane.id, side): change_permission(lane, side)  # type: ignore[arg-type]
                  for lane in lanes for side, table in (("left", graph.left), ("right", graph.right))
                  if table[lane.id] is not None}
        return cls(graph, {lane.id: lane.kind for lane in lanes}, {}, {}, {}, change, (), frozenset())

    # --- queries ------------------------------------------------------------------------

    def route_edges(self, change_cost_m: float | None) -> dict[str, tuple[tuple[str, float], ...]]:
        """lane -> ``(next lane, cost m)``: successors at the lane's length, then (with a ``change_cost_m``) the
        allowed lane changes at that cost; built once per cost (the router's adjacency)."""
        cache: dict[float | None, dict[str, tuple[tuple[str, float], ...]]] = self.__dict__.setdefault("_route_edges", {})
        if change_cost_m not in cache:
            out = {}
            for a, g in self.graph.lanes.items():
                edges = [(b, g.length_m) for b in self.graph.successors[a]]
                if change_cost_m is not None:
                    edges += [(b, change_cost_m) for b in (self.neighbour(a, "left"), self.neighbour(a, "right"))
                              if b is not None]
                out[a] = tuple(edges)
            cache[change_cost_m] = out
        return cache[change_cost_m]

    def speed_limit_mps(self, lane: str) -> float:
        return self.graph.lanes[lane].speed_limit_mps

    def turn(self, lane: str) -> Turn:
        """The turn a lane makes: a junction lane's from its heading change, any other lane straight."""
        return self.turns.get(lane, "straight")

    def approach_of(self, junction_lane: str) -> str | None:
        """The non-junction lane a junction lane is entered from (the first by id), None if none."""
        preds = [p for p in self.graph.predecessors[junction_lane] if p not in self.junction_of]
        return preds[0] if preds else None

    def neighbour(self, lane: str, side: Side) -> str | None:
        """The same-direction neighbour on ``side`` when a change to it is allowed, else None."""
        target = (self.graph.left if side == "left" else self.graph.right)[lane]
        return target if target is not None and self.change_allowed.get((lane, side), False) else None

    def conflicts_of(self, lane: str) -> list[Conflict]:
        return [c for c in self.conflicts if lane in (c.a, c.b)]

    def is_oncoming(self, a: str, b: str) -> bool:
        """Whether junction lanes ``a`` and ``b`` enter from opposite directions (headings ≥ 150° apart)."""
        ga, gb = self.graph.lanes[a], self.graph.lanes[b]
        return abs(wrap_angle(ga.start_yaw_rad - gb.start_yaw_rad)) >= U_TURN_MIN_RAD


def _junction_groups(template: WorldTemplate) -> dict[str, str]:
    """Intersection region id -> its junction's id: regions that touch or overlap are one junction (an imported
    map gives each connecting road its own region), named by their smallest id."""
    shapes = {r.id: r.shape for r in sorted(template.regions, key=lambda r: r.id) if r.type == "intersection"}
    parent = {k: k for k in shapes}

    def root(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

    ids = list(shapes)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            if shapes[a].distance(shapes[b]) <= JUNCTION_TOUCH_M:
                ra, rb = root(a), root(b)
                parent[max(ra, rb)] = min(ra, rb)
    return {k: root(k) for k in ids}


def _arms(bearings: Iterable[float]) -> int:
    """Clusters of bearings (rad) closer than :data:`ARM_BEARING_TOLERANCE_RAD`, around the circle."""
    values = sorted(b % (2 * math.pi) for b in bearings)
    if not values:
        return 0
    gaps = [(values[(k + 1) % len(values)] - values[k]) % (2 * math.pi) for k in range(len(values))]
    if len(values) == 1:
        return 1
    breaks = sum(1 for g in gaps if g >= ARM_BEARING_TOLERANCE_RAD)
    return max(breaks, 1)


def right_of_way(net: LaneNetwork, a: str, b: str) -> tuple[str, str]:
    """``(lane with priority, rule)`` between junction lanes ``a`` and ``b`` (see the module docstring)."""
    pa, pb = net.approach_of(a), net.approach_of(b)
    rule = "signal" if pa in net.controlled and pb in net.controlled else "default"
    ra, rb = TURN_RANK[net.turn(a)], TURN_RANK[net.turn(b)]
    if ra != rb:
        return (a if ra > rb else b), rule
    # Equal turns: the lane approaching from the other's right goes first. b comes from a's right when b's
    # heading is a's turned clockwise (negative cross product of a's and b's entry directions).
    da = net.graph.lanes[a].seg_dir[0]
    db = net.graph.lanes[b].seg_dir[0]
    cross = float(da[0] * db[1] - da[1] * db[0])
    if abs(cross) < 1e-9:
        return min(a, b), rule
    return (b if cross > 0 else a), rule


def _conflicts(net: LaneNetwork) -> Iterable[Conflict]:
    for junction in net.junctions.values():
        lanes = junction.lanes
        geoms = {k: net.graph.lanes[k] for k in lanes}
        lines = {k: LineString(geoms[k].points) for k in lanes}
        for i, a in enumerate(lanes):
            for b in lanes[i + 1:]:
                if net.approach_of(a) == net.approach_of(b):
                    continue  # diverging from one approach: no conflict
                ga, gb = geoms[a], geoms[b]
                if float(np.hypot(*(ga.end - gb.end))) <= MERGE_TOLERANCE_M:
                    xy = (float(ga.end[0]), float(ga.end[1]))
                    kind = "merging"
                else:
                    cross = lines[a].intersection(lines[b])
                    points = [(p.x, p.y) for p in getattr(cross, "geoms", [cross]) if isinstance(p, shapely.Point)]
                    if not points:
                        continue
                    xy = min(points, key=lambda q: lines[a].project(shapely.Point(q)))
                    kind = "crossing"
                area = (lines[a].buffer(ga.width_m / 2, cap_style="flat")
                        .intersection(lines[b].buffer(gb.width_m / 2, cap_style="flat")))
                s_a = float(lines[a].project(shapely.Point(xy)))
                s_b = float(lines[b].project(shapely.Point(xy)))
                window_a = ga.s_window(area) or (s_a, s_a)
                window_b = gb.s_window(area) or (s_b, s_b)
                priority, rule = right_of_way(net, a, b)
                yield Conflict(junction.id, a, b, kind, (round(xy[0], 6), round(xy[1], 6)), round(s_a, 6),
                               round(s_b, 6), priority, rule, _rounded(window_a), _rounded(window_b))


def _rounded(window: tuple[float, float]) -> tuple[float, float]:
    return round(max(0.0, window[0]), 6), round(window[1], 6)


_CACHE: dict[int, tuple[object, LaneNetwork]] = {}


def lane_network(template: WorldTemplate) -> LaneNetwork:
    """The template's :class:`LaneNetwork`, built once per template object."""
    return once_per_object(_CACHE, template, lambda: LaneNetwork.build(template))
