"""Map affordances read from the lane graph (SPEC §18), and the one-line reason a map lacks one.

Every intent declares the affordances it needs (``IntentProgram.needs``);
:func:`missing` returns the first one a template lacks as the line the user
sees ("no junction joining ≥ 3 roads"). They are read from the
:class:`~simready.world.lane_graph.LaneNetwork` and the template's regions,
the same way for hand-written and imported templates.

**The kerbside rule** (where a vehicle may park on a street without a parking
lane, docs/lane_graph.md): on an *urban* road (speed limit ≤
:data:`URBAN_MAX_SPEED_MPS`) a vehicle may stand at the kerb edge of the
outermost driving lane (no same-direction neighbour on its right) where a
sidewalk lies beside that kerb (a probe :data:`SIDEWALK_PROBE_M` beyond the
lane edge falls on a sidewalk region) and the carriageway left beside it lets
a car pass: the drivable width across the road at that point, minus
:data:`PARKED_WIDTH_M` and :data:`KERB_GAP_M`, is at least
:data:`PASSABLE_WIDTH_M`. Stations every :data:`KERB_STATION_M` that satisfy
all three and run on for :data:`MIN_KERB_STRETCH_M` make a kerb site.
A parking lane (lane kind ``parking``) or a ``parking`` region beside a
driving lane is a parking site without the rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import shapely
from shapely.geometry import Polygon
from shapely.ops import unary_union

from simready.common.memo import once_per_object
from simready.world.lane_graph import LaneNetwork, lane_network
from simready.world.lanes import LaneGeometry
from simready.world.routing import left_turn_routes, routes_of_length, straight_through

if TYPE_CHECKING:
    from simready.world.template import WorldTemplate

#: Roads at or below this limit are urban (m/s, 60 km/h).
URBAN_MAX_SPEED_MPS = 16.7
#: A sidewalk counts as beside a lane's kerb when a point this far beyond the lane edge lies on it (m).
SIDEWALK_PROBE_M = 1.0
#: Width a parked car takes at the kerb (m; a delivery van's body is about 2.0 m), and its gap to the kerb (m).
PARKED_WIDTH_M = 2.2
KERB_GAP_M = 0.2
#: Carriageway width a passing car needs beside a parked one (m).
PASSABLE_WIDTH_M = 3.0
#: Spacing of the kerb stations (m), and the shortest kerb site (m).
KERB_STATION_M = 5.0
MIN_KERB_STRETCH_M = 10.0
#: Spacing of a kerb site's outline along the lane (m).
KERB_OUTLINE_STEP_M = 1.0
#: Longest probe across the road when measuring the carriageway (m).
CARRIAGEWAY_PROBE_M = 30.0
#: Shortest same-direction side-by-side stretch a cut-in needs (m).
MIN_MULTI_LANE_M = 60.0
#: Shortest drivable lane chain a route needs (m).
MIN_ROUTE_M = 30.0
#: Shortest lane chain a car-following intent needs (m): the slowest ego (9 m/s) over warm-up and clip (14 s),
#: plus the lead's head start.
LONG_ROUTE_M = 170.0
#: Fewest roads (arms) a junction must join to be a junction of the intents (SPEC §18).
MIN_JUNCTION_ARMS = 3


@dataclass(frozen=True)
class ParkingSite:
    """Where a vehicle may stand beside driving lane ``lane`` on its right: ``kind`` ``parking`` (a parking lane or
    region: ``region``) or ``kerb`` (the kerbside rule), over lane arc lengths ``[s0_m, s1_m]``.

    The one description of the place that the programs park in and the ladder's support and semantics stages check
    against: :attr:`outline` is the polygon a parked footprint must stay inside (a parking site's region; a kerb
    site's strip, :data:`PARKED_WIDTH_M` wide and :data:`KERB_GAP_M` from the kerb, inside the lane), and
    :attr:`surface` the region types it stands on.
    """

    lane: str
    kind: str
    s0_m: float
    s1_m: float
    region: str | None = None
    outline: tuple[tuple[float, float], ...] = field(default=(), compare=False, repr=False)

    @property
    def id(self) -> str:
        """The region's id for a parking site; ``kerb:<lane>:<s0>-<s1>`` for a kerb site."""
        return self.region if self.region is not None else f"kerb:{self.lane}:{self.s0_m:g}-{self.s1_m:g}"

    @property
    def surface(self) -> tuple[str, ...]:
        return ("parking",) if self.kind == "parking" else ("drivable",)

    @property
    def shape(self) -> Polygon:
        return Polygon(self.outline)


def kerb_strip(g: LaneGeometry, s0_m: float, s1_m: float) -> tuple[tuple[float, float], ...]:
    """Outline of a kerb site on lane ``g`` over ``[s0, s1]``: the strip :data:`KERB_GAP_M` to
    :data:`KERB_GAP_M` + :data:`PARKED_WIDTH_M` in from the lane's right edge (the kerb), rounded to 0.1 mm."""
    t_out = -g.width_m / 2 + KERB_GAP_M
    t_in = t_out + PARKED_WIDTH_M
    s = np.unique(np.concatenate([np.arange(s0_m, s1_m, KERB_OUTLINE_STEP_M), [s1_m]]))
    right = [g.point_at(float(v), t_out) for v in s]
    left = [g.point_at(float(v), t_in) for v in s[::-1]]
    return tuple((round(x, 4), round(y, 4)) for x, y in right + left)


def kerb_slots(g: LaneGeometry, site: ParkingSite, slot_length_m: float) -> list[tuple[float, float, float]]:
    """Slot centres ``(x, y, yaw_rad)`` of a kerb site on lane ``g``, in traffic order: ``slot_length_m`` slots
    centred in the strip and along the site (the margin split between its ends), heading with the lane."""
    count = int((site.s1_m - site.s0_m) / slot_length_m + 1e-9)
    margin = 0.5 * (site.s1_m - site.s0_m - count * slot_length_m)
    t_mid = -g.width_m / 2 + KERB_GAP_M + PARKED_WIDTH_M / 2
    out = []
    for k in range(count):
        s = site.s0_m + margin + (k + 0.5) * slot_length_m
        x, y = g.point_at(s, t_mid)
        out.append((x, y, g.pose_at(s)[2]))
    return out


_STRETCHES: dict[int, tuple[LaneNetwork, list[tuple[str, str, str]]]] = {}


def multi_lane_stretches(net: LaneNetwork) -> list[tuple[str, str, str]]:
    """``(lane, side, neighbour)`` of every non-junction driving lane with a same-direction neighbour it may change
    to, alongside for at least :data:`MIN_MULTI_LANE_M`, sorted. Computed once per network object (a program asks
    for them at every proposal; :func:`~simready.world.lane_graph.lane_network` builds one network per template)."""
    hit = _STRETCHES.get(id(net))
    if hit is None or hit[0] is not net:
        if len(_STRETCHES) > 64:
            _STRETCHES.clear()
        hit = (net, _multi_lane_stretches(net))
        _STRETCHES[id(net)] = hit
    return list(hit[1])


def _multi_lane_stretches(net: LaneNetwork) -> list[tuple[str, str, str]]:
    out = []
    for (lane, side), allowed in sorted(net.change_allowed.items()):
        if not allowed or net.kinds.get(lane) != "driving" or lane in net.junction_of:
            continue
        other = net.neighbour(lane, side)  # type: ignore[arg-type]
        if other is None or net.kinds.get(other) != "driving":
            continue
        a, b = net.graph.lanes[lane], net.graph.lanes[other]
        s = np.arange(0.0, a.length_m, 1.0)
        xy = np.array([a.point_at(float(v)) for v in s])
        sb, _, _ = b.project_many(xy)
        overlap = float(np.count_nonzero((sb >= 0.0) & (sb <= b.length_m)))
        if overlap >= MIN_MULTI_LANE_M:
            out.append((lane, side, other))
    return out


_SITES: dict[tuple[int, bool], tuple[object, list[ParkingSite]]] = {}


def parking_sites(template: WorldTemplate, *, kerbside: bool = True) -> list[ParkingSite]:
    """Parking lanes and regions beside driving lanes, then (with ``kerbside``) kerb sites by the kerbside rule;
    sorted by lane. Computed once per template object."""
    hit = _SITES.get((id(template), kerbside))
    if hit is None or hit[0] is not template:
        if len(_SITES) > 64:
            _SITES.clear()
        hit = (template, _parking_sites(template, kerbside))
        _SITES[(id(template), kerbside)] = hit
    return list(hit[1])


def _parking_sites(template: WorldTemplate, kerbside: bool) -> list[ParkingSite]:
    net = lane_network(template)
    out: list[ParkingSite] = []
    sidewalks = unary_union([r.shape for r in template.regions if r.type == "sidewalk"])
    parking = {r.id: r.shape for r in template.regions if r.type == "parking"}
    parking |= {lane.id: template.region_by_id[lane.region].shape for lane in template.lanes
                if lane.kind == "parking" and lane.region in template.region_by_id}
    drivable = unary_union([r.shape.buffer(0.01) for r in template.regions if r.type == "drivable"])
    shapely.prepare(drivable)
    for lane_id, g in sorted(net.graph.lanes.items()):
        right = net.graph.right[lane_id]
        if g.kind != "driving" or lane_id in net.junction_of or (right is not None and net.kinds.get(right) == "driving"):
            continue  # not the outermost driving lane (a parking lane beside it is fine)
        edge = shapely.LineString([g.point_at(float(s), -g.width_m / 2 - 0.5)
                                   for s in np.linspace(0.0, g.length_m, max(2, int(g.length_m // 2) + 1))])
        for pid, shape in sorted(parking.items()):
            if edge.intersects(shape):
                inside = edge.intersection(shape)
                s_vals = [g.project(x, y)[0] for x, y in _coords(inside)]
                out.append(ParkingSite(lane_id, "parking", round(max(0.0, min(s_vals)), 3),
                                       round(min(g.length_m, max(s_vals)), 3), pid,
                                       tuple(tuple(c) for c in shape.exterior.coords)))
        if not kerbside or g.speed_limit_mps > URBAN_MAX_SPEED_MPS or sidewalks.is_empty:
            continue
        ok = []
        stations = np.arange(KERB_STATION_M / 2, g.length_m, KERB_STATION_M)
        for s in stations:
            probe = shapely.Point(g.point_at(float(s), -g.width_m / 2 - SIDEWALK_PROBE_M))
            ok.append(bool(sidewalks.covers(probe)) and _carriageway_m(g, float(s), drivable) - PARKED_WIDTH_M
                      - KERB_GAP_M >= PASSABLE_WIDTH_M)
        for s0, s1 in _runs(stations, ok):
            if s1 - s0 >= MIN_KERB_STRETCH_M:
                s0, s1 = round(s0, 3), round(min(s1, g.length_m), 3)
                out.append(ParkingSite(lane_id, "kerb", s0, s1, None, kerb_strip(g, s0, s1)))
    return out


def _carriageway_m(g, s_m: float, drivable) -> float:  # type: ignore[no-untyped-def]
    """Drivable width across the road from lane ``g``'s right edge at ``s``, leftwards (m)."""
    edge = g.point_at(s_m, -g.width_m / 2)
    far = g.point_at(s_m, -g.width_m / 2 + CARRIAGEWAY_PROBE_M)
    piece = shapely.LineString([edge, far]).intersection(drivable)
    parts = [p for p in getattr(piece, "geoms", [piece]) if isinstance(p, shapely.LineString) and p.length > 0]
    start = shapely.Point(edge)
    touching = [p for p in parts if p.distance(start) < 0.05]
    return float(touching[0].length) if touching else 0.0


def _runs(stations: np.ndarray, ok: list[bool]) -> list[tuple[float, float]]:
    """Contiguous stretches of passing stations, each ± half a station spacing."""
    out, start = [], None
    prev: float
    for s, good in zip(stations.tolist() + [math.inf], ok + [False]):
        if good and start is None:
            start = s
        elif not good and start is not None:
            out.append((max(0.0, start - KERB_STATION_M / 2), prev + KERB_STATION_M / 2))
            start = None
        prev = s
    return out


def _coords(geom: shapely.Geometry) -> list[tuple[float, float]]:
    return [c for part in getattr(geom, "geoms", [geom]) for c in part.coords]


def left_turns_across_oncoming(template: WorldTemplate, *, signalized: bool) -> list[tuple[str, str, str]]:
    """Left turns (approach, junction lane, exit) at junctions joining ≥ 3 roads with (or without) traffic lights,
    crossed inside the junction by an oncoming approach's straight path."""
    net = lane_network(template)
    out = []
    for route in left_turn_routes(net, signalized=signalized):
        junction = net.junctions[net.junction_of[route[1]]]
        if junction.arms < MIN_JUNCTION_ARMS:
            continue
        for c in net.conflicts_of(route[1]):
            other = c.b if c.a == route[1] else c.a
            if c.kind == "crossing" and net.turn(other) == "straight" and net.is_oncoming(route[1], other):
                out.append(route)
                break
    return out


def oncoming_chain(template: WorldTemplate, junction_lane: str) -> list[tuple[str, ...]]:
    """Straight-through chains (approach, junction lane, exit) of the oncoming approaches a left-turning junction
    lane crosses, sorted."""
    net = lane_network(template)
    chains = set()
    for c in net.conflicts_of(junction_lane):
        other = c.b if c.a == junction_lane else c.a
        if c.kind == "crossing" and net.turn(other) == "straight" and net.is_oncoming(junction_lane, other):
            approach = net.approach_of(other)
            if approach is not None:
                chains.add(straight_through(net, approach))
    return sorted(chains)


# --- mid-block crossings: a footway beside a parking site and another across the carriageway ---------------

#: A mid-block crossing looks this far across the road from the site's lane for the far footway (m).
CROSSING_PROBE_M = 40.0


@dataclass(frozen=True)
class GapSite:
    """A parking site where a pedestrian may cross mid-block between parked vehicles: the footway beside it
    (``near_sidewalk``, the kerb the parked row stands at) and the footway across the carriageway
    (``far_sidewalk``), both read on the perpendicular to the site's lane at its middle."""

    site: ParkingSite
    near_sidewalk: str
    far_sidewalk: str


def crossing_sidewalks(template: WorldTemplate, site: ParkingSite,
                       s_m: float) -> tuple[str, str, float, float] | None:
    """``(near, far, t_near_m, t_far_m)`` on the perpendicular to ``site.lane`` at lane arc length ``s_m``: the
    sidewalk beside the site (right of the lane, within :data:`KERB_GAP_M` + :data:`SIDEWALK_PROBE_M` beyond the
    site's outer edge) and the first other sidewalk left of the lane centre within :data:`CROSSING_PROBE_M`, with
    the lateral offsets (m, + left of the lane) where the line enters each (the near one's traffic-side edge, the
    far one's). None when either is missing."""
    g = template.lane_graph.lane(site.lane)
    sidewalks = sorted((r for r in template.regions if r.type == "sidewalk"), key=lambda r: r.id)
    if not sidewalks:
        return None
    outer = site.shape.intersection(shapely.LineString([g.point_at(s_m, 0.0), g.point_at(s_m, -CROSSING_PROBE_M)]))
    if outer.is_empty:
        return None
    t_out = min(g.project(x, y)[1] for x, y in _coords(outer))
    near_line = shapely.LineString([g.point_at(s_m, t_out), g.point_at(s_m, t_out - KERB_GAP_M - SIDEWALK_PROBE_M)])
    far_line = shapely.LineString([g.point_at(s_m, 0.0), g.point_at(s_m, CROSSING_PROBE_M)])
    near = far = None
    for r in sidewalks:
        hit = r.shape.intersection(near_line)
        if not hit.is_empty:
            t = max(g.project(x, y)[1] for x, y in _coords(hit))
            if near is None or t > near[1]:
                near = (r.id, t)
    for r in sidewalks:
        if near is not None and r.id == near[0]:
            continue
        hit = r.shape.intersection(far_line)
        if not hit.is_empty:
            t = min(g.project(x, y)[1] for x, y in _coords(hit))
            if far is None or t < far[1]:
                far = (r.id, t)
    if near is None or far is None:
        return None
    return near[0], far[0], round(near[1], 4), round(far[1], 4)


_GAP_SITES: dict[int, tuple[object, list[GapSite]]] = {}


def kerb_gap_sites(template: WorldTemplate) -> list[GapSite]:
    """Parking sites (:func:`parking_sites`, the kerbside rule included) with a footway beside them and another
    across the carriageway at their middle, sorted as the sites are. Computed once per template object (a
    program asks at every proposal)."""
    sites: list[GapSite] = once_per_object(_GAP_SITES, template, lambda: _kerb_gap_sites(template))
    return list(sites)


def _kerb_gap_sites(template: WorldTemplate) -> list[GapSite]:
    out = []
    for site in parking_sites(template):
        found = crossing_sidewalks(template, site, 0.5 * (site.s0_m + site.s1_m))
        if found is not None:
            out.append(GapSite(site, found[0], found[1]))
    return out


# --- the registry: affordance name -> (present?, the line when absent) ------------------------------------


def _has_route(t: WorldTemplate) -> bool:
    net = lane_network(t)
    return any(g.kind in ("driving", "turn") and g.length_m >= MIN_ROUTE_M for g in net.graph.lanes.values())


AFFORDANCES: dict[str, tuple[Callable[[WorldTemplate], bool], str]] = {
    "route": (_has_route, f"no driving lane ≥ {MIN_ROUTE_M:g} m"),
    "long_route": (lambda t: bool(routes_of_length(lane_network(t), LONG_ROUTE_M)),
                   f"no lane chain ≥ {LONG_ROUTE_M:g} m"),
    "junction": (lambda t: any(j.arms >= MIN_JUNCTION_ARMS for j in lane_network(t).junctions.values()),
                 f"no junction joining ≥ {MIN_JUNCTION_ARMS} roads"),
    "signalized_junction": (lambda t: any(j.arms >= MIN_JUNCTION_ARMS and j.signalized
                                          for j in lane_network(t).junctions.values()),
                            f"no junction joining ≥ {MIN_JUNCTION_ARMS} roads with traffic lights"),
    "unsignalized_junction": (lambda t: any(j.arms >= MIN_JUNCTION_ARMS and not j.signalized
                                            for j in lane_network(t).junctions.values()),
                              f"no junction joining ≥ {MIN_JUNCTION_ARMS} roads without traffic lights"),
    "signalized_left_turn": (lambda t: bool(left_turns_across_oncoming(t, signalized=True)),
                             "no left turn across an oncoming straight path at a junction with traffic lights"),
    "unprotected_left_turn": (lambda t: bool(left_turns_across_oncoming(t, signalized=False)),
                              "no left turn across an oncoming straight path at a junction without traffic lights"),
    "multi_lane": (lambda t: bool(multi_lane_stretches(lane_network(t))),
                   f"no same-direction lanes ≥ {MIN_MULTI_LANE_M:g} m where a lane change is allowed"),
    "parking": (lambda t: bool(parking_sites(t, kerbside=False)),
                "no parking lane or parking region beside a driving lane"),
    "kerbside": (lambda t: any(s.kind == "kerb" for s in parking_sites(t)),
                 "no passable kerb with a sidewalk beside a driving lane of an urban road"),
    "parking_or_kerb": (lambda t: bool(parking_sites(t)),
                        "no parking lane, parking region or passable kerb with a sidewalk beside a driving lane"),
    "crosswalk": (lambda t: any(r.type == "crosswalk" for r in t.regions), "no crosswalk"),
    "kerb_gap": (lambda t: bool(kerb_gap_sites(t)),
                 "no parking lane, parking region or passable kerb with a sidewalk beside it and another across the "
                 "carriageway (where a pedestrian could cross mid-block between parked vehicles)"),
}


def missing(template: WorldTemplate, needs: tuple[str, ...]) -> str | None:
    """The line for the first affordance in ``needs`` the template lacks, None when it has them all."""
    for name in needs:
        present, line = AFFORDANCES[name]
        if not present(template):
            return line
    return None
