"""Background pedestrians and cyclists (SPEC §20): the second half of :mod:`simready.scenario.traffic`.

Drawn from the sample's ``traffic`` named stream *after* the background
vehicles (a sample that asks for vehicles alone keeps its bytes), and written
into the manifest in full as actors tagged ``background``.

Pedestrians (``pedestrians_per_sidewalk_100m``), per sidewalk edge of the
walkable graph (an edge that does not enter the roadway), sorted:

* the count is ``density · length / 100``, its fraction rounded up with that
  probability; positions uniform on the edge with :data:`PED_SPACING_M`
  between them and :data:`PED_END_MARGIN_M` off its ends, none within
  :data:`PED_MIN_APART_M` of one placed before (on an edge meeting it), nor
  :data:`~simready.scenario.traffic.SCENARIO_CLEARANCE_M` of a scenario actor
  nor :data:`PED_ROUTE_CLEARANCE_M` of a scenario pedestrian's walk;
* the direction along the edge is a fair coin; the asset uniform over the
  pedestrian families of the sample's split, then the variants; walking speed,
  reaction delay uniform in :data:`PED_RANGES`; ``stop_tendency`` 1 (a
  background pedestrian always waits at the kerb for a vehicle due within the
  accepted gap, and at a signalised crossing for its phase:
  :mod:`simready.sim.behavior.walkers`); it keeps :data:`PED_KEEP_RIGHT_M` right of
  its route's line (``walk.keep_right_m``) so that two walking towards each
  other pass;
* the route (``walk.route``) goes on from the edge's far node, uniformly among
  the neighbours not yet walked, until it is long enough for the clip
  (walking speed × (warm-up + clip) + :data:`PED_ROUTE_SLACK_M`) or reaches
  a dead end, crossing the roadway at most once (a crosswalk, walked to its
  far side); the initial speed lets it stop before its kerb.

Cyclists (``cyclists_per_km``), per bike lane (a ``biking`` template lane,
imported from OpenDRIVE) and per kerbside driving lane (no same-direction
driving or bike lane to its right) outside junctions, sorted: the count as for
vehicles; positions uniform on the lane's free length (the vehicles' rule,
less the room before and behind every background vehicle already on the lane:
:func:`_vehicle_room`); it rides :data:`CYCLIST_KERB_GAP_M` from the lane's
right edge (``initial.lane_ref.t_frac``; in a bike lane its centre); asset uniform over the cyclist
families of the split; cruise speed and IDM parameters uniform in
:data:`CYCLIST_SPEED_RANGE_MPS` and :data:`CYCLIST_IDM_RANGES`; the route as
a vehicle's (in a bike lane, on through the bike lanes that follow it); initial speed the cruise speed, or the IDM equilibrium behind
the nearest background actor ahead on the lane, and able to stop before a
junction. The simulator's car following, signals and right of way then apply
to them as to any lane-bound actor, and vehicles follow them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from simready.common.errors import SimreadyError
from simready.scenario.context import ProgramContext
from simready.scenario.program_base import actor
from simready.scenario.splits import SHARED
from simready.scenario.traffic_spec import TrafficSpec
from simready.world.lane_graph import lane_network
from simready.world.lanes import LaneGraph
from simready.world.template import WorldTemplate
from simready.world.walkable import WalkGraph

#: Background actor ids: pedestrians ``bg_p000`` …, cyclists ``bg_c000`` ….
PEDESTRIAN_ID = "bg_p{:03d}"
CYCLIST_ID = "bg_c{:03d}"
#: Between two spawned pedestrians' centres on an edge, and off an edge's ends (m).
PED_SPACING_M = 1.5
PED_END_MARGIN_M = 0.5
#: Two background pedestrians start at least this far apart (m; on edges that meet, too).
PED_MIN_APART_M = 1.2
#: A background pedestrian starts no closer than this to a scenario pedestrian's walk (m).
PED_ROUTE_CLEARANCE_M = 2.0
#: Walking speed (m/s) and reaction delay (s), each uniform in its range.
PED_RANGES = {"speed_mps": (1.1, 1.6), "reaction_delay_s": (0.3, 1.0)}
#: How far right of its route's line a background pedestrian walks (m).
PED_KEEP_RIGHT_M = 0.45
#: A pedestrian's route is this much longer than it walks in the warm-up and clip at its speed (m).
PED_ROUTE_SLACK_M = 5.0
#: At most this many nodes in a pedestrian's route.
PED_ROUTE_MAX_NODES = 40
#: The deceleration a pedestrian's initial speed lets it stop with before its kerb (m/s²), and the room left (m).
PED_STOP_DECEL_MPS2 = 1.0
PED_KERB_ROOM_M = 0.5

#: Cyclists: extra distance between two spawned cyclists' centres beyond a bicycle (m).
CYCLIST_SPACING_M = 4.0
#: A cyclist rides this far from its lane's right edge (m, to its body's side).
CYCLIST_KERB_GAP_M = 0.4
#: Cruise speed (m/s, capped by the lane's limit) and IDM parameters, each uniform in its range.
CYCLIST_SPEED_RANGE_MPS = (3.5, 6.5)
CYCLIST_IDM_RANGES = {"s0_m": (1.0, 2.0), "time_gap_s": (0.8, 1.5), "accel_max_mps2": (0.8, 1.5),
                      "decel_comfort_mps2": (1.5, 2.5)}
#: A cyclist starts no closer behind a background vehicle than this (m, bumper to bumper), and no closer ahead of
#: one than the vehicle's IDM gap at its speed (:func:`_vehicle_room`).
CYCLIST_BEHIND_VEHICLE_M = 4.0
#: A cyclist's route along bike lanes reaches this far ahead where they go on (m).
BIKE_ROUTE_M = 400.0
#: Digits kept of drawn values.
DIGITS = 4

ROAD_REGION_TYPES = ("drivable", "intersection")


@dataclass(frozen=True)
class Spawning:
    """What this spawner shares with the vehicles' (:mod:`simready.scenario.traffic`, which calls it and hands these
    over, so that neither module imports the other): the tag, the clearance around the scenario's actors, the lane
    margins, the error class and the lane helpers (blocked stretches, free intervals, positions, routes)."""

    tag: str
    clearance_m: float
    lane_end_margin_m: float
    junction_entry_margin_m: float
    error: type[SimreadyError]
    blocked: Callable[..., Any]
    free_intervals: Callable[..., Any]
    positions: Callable[..., Any]
    route: Callable[..., Any]
    stop_line_s: Callable[..., Any]
    stop_line_clear_m: float


def _r(x: float) -> float:
    return round(float(x), DIGITS)


def _families(ctx: ProgramContext, split: str, semantic_class: str) -> list[str]:
    """Families of ``semantic_class`` (pedestrian, cyclist) a ``split`` sample may use (``shared`` or that split)."""
    return sorted(f for f in ctx.families_of_class(semantic_class) if ctx.splits.families.get(f) in (SHARED, split))


def _count(rng: np.random.Generator, expected: float) -> int:
    whole = math.floor(expected)
    return whole + int(rng.uniform() < expected - whole)


def _road(ctx: ProgramContext) -> Any:
    return road_of(ctx.template)


def road_of(template: WorldTemplate) -> BaseGeometry | None:
    """The roadway a pedestrian's route crosses (the road regions, shrunk a little), None when the map has none."""
    roads = [r.shape for r in template.regions if r.type in ROAD_REGION_TYPES]
    return unary_union(roads).buffer(-0.05) if roads else None


def _crosses(road: BaseGeometry | None, a: tuple[float, float], b: tuple[float, float]) -> bool:
    return road is not None and LineString([a, b]).intersects(road)


# --- pedestrians --------------------------------------------------------------------------------------------


def ped_route(rng: np.random.Generator, g: WalkGraph, road: BaseGeometry | None, start: str, came_from: str,
              wanted_m: float, first_m: float) -> tuple[list[str], float | None]:
    """Walk nodes on the walkable graph ``g`` from ``start`` (reached after ``first_m`` m; the edge walked there came
    from ``came_from``) and the walked distance to the route's kerb (None: it never enters the roadway)."""
    route, walked, crossings, kerb = [start], first_m, 0, None
    prev = came_from
    in_road = False
    while len(route) < PED_ROUTE_MAX_NODES:
        last = route[-1]
        if walked >= wanted_m and not in_road and len(route) >= 2:
            break
        options = []
        for n in g.adjacency[last]:
            if n == prev or n in route:
                continue
            enters = _crosses(road, g.nodes[last], g.nodes[n])
            if enters and not in_road and crossings >= 1:
                continue  # one crossing per route
            options.append((n, enters))
        if not options:
            break
        if in_road:
            # Finish the crossing: the neighbour that goes on across (the edge still in the road), else any.
            pick = next(((n, e) for n, e in options if e), options[0])
        else:
            pick = options[int(rng.integers(len(options)))] if len(options) > 1 else options[0]
        n, enters = pick
        if enters and not in_road:
            crossings += 1
            kerb = walked
        in_road = enters
        walked += g.edge_length_m(last, n)
        prev = last
        route.append(n)
    if len(route) < 2:
        route.append(came_from)  # a dead end straight away: turn back
    return route, kerb


def spawn_pedestrians(ctx: ProgramContext, draft: dict[str, Any], spec: TrafficSpec, rng: np.random.Generator,
                      kit: Spawning) -> list[dict[str, Any]]:
    """The background pedestrians of one sample (manifest actors, JSON-like), see the module docstring."""
    density = spec.pedestrians_per_sidewalk_100m
    if density <= 0.0:
        return []
    t = ctx.template
    g = t.walk_graph
    if not g.nodes:
        raise kit.error(t.source, "traffic.pedestrians_per_sidewalk_100m", f"{t.id} has no walkable graph")
    families = _families(ctx, draft["split"], "pedestrian")
    if not families:
        raise kit.error(t.source, "traffic", f"no pedestrian family may appear in split {draft['split']!r}")
    assets = {f: ctx.variants(f) for f in families}
    road = _road(ctx)
    points = [(float(a["initial"]["pose"]["x"]), float(a["initial"]["pose"]["y"])) for a in draft["actors"]]
    walks = []
    for a in draft["actors"]:
        if a.get("walk"):
            pts = [points[draft["actors"].index(a)]] + [(v["x"], v["y"]) for v in a["walk"].get("via", [])]
            pts += [g.nodes[n] for n in a["walk"]["route"] if n in g.nodes]
            walks.append(LineString(pts) if len(pts) > 1 else Point(pts[0]))
    scenario_walks = unary_union(walks) if walks else None
    horizon = float(draft["warmup_s"]) + float(draft["clip_s"])
    edges = sorted((a, b) for a in g.nodes for b in g.adjacency[a] if a < b)
    out: list[dict[str, Any]] = []
    placed: list[tuple[float, float]] = []
    for a, b in edges:
        pa, pb = g.nodes[a], g.nodes[b]
        if _crosses(road, pa, pb):
            continue
        length = g.edge_length_m(a, b)
        n = _count(rng, density * length / 100.0)
        free = length - 2 * PED_END_MARGIN_M
        if n <= 0 or free <= 0:
            continue
        n = min(n, int(free // PED_SPACING_M) + 1)
        slack = max(free - (n - 1) * PED_SPACING_M, 0.0)
        along = [float(x) + k * PED_SPACING_M + PED_END_MARGIN_M for k, x in enumerate(np.sort(rng.uniform(0.0, slack, n)))]
        for s in along:
            f = s / length
            x, y = pa[0] + (pb[0] - pa[0]) * f, pa[1] + (pb[1] - pa[1]) * f
            forward = bool(rng.integers(2))
            family = families[int(rng.integers(len(families)))]
            asset = assets[family][int(rng.integers(len(assets[family])))]
            speed = _r(rng.uniform(*PED_RANGES["speed_mps"]))
            delay = _r(rng.uniform(*PED_RANGES["reaction_delay_s"]))
            if len(g.adjacency[b if forward else a]) == 1 and len(g.adjacency[a if forward else b]) > 1:
                forward = not forward  # not into a dead end (it would turn back into whoever walks behind it)
            target, back = (b, a) if forward else (a, b)
            to_target = length - s if forward else s
            route, kerb = ped_route(rng, ctx.template.walk_graph, road, target, back, speed * horizon + PED_ROUTE_SLACK_M, to_target)
            if any(math.hypot(x - px, y - py) < kit.clearance_m for px, py in points):
                continue
            if scenario_walks is not None and scenario_walks.distance(Point(x, y)) < PED_ROUTE_CLEARANCE_M:
                continue
            tx, ty = g.nodes[target]
            yaw = math.atan2(ty - y, tx - x)
            # Kept right of the line: the pose is where the body is.
            px, py = x + PED_KEEP_RIGHT_M * math.sin(yaw), y - PED_KEEP_RIGHT_M * math.cos(yaw)
            if any(math.hypot(px - qx, py - qy) < PED_MIN_APART_M for qx, qy in placed):
                continue  # near a node, on the next edge: too close to one already placed
            placed.append((px, py))
            v0 = speed if kerb is None else min(speed, math.sqrt(2.0 * PED_STOP_DECEL_MPS2 * max(kerb - PED_KERB_ROOM_M, 0.0)))
            rules = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.0,
                     "speed_factor": 1.0}
            walk = {"route": route, "reaction_delay_s": delay, "stop_tendency": 1.0, "keep_right_m": PED_KEEP_RIGHT_M}
            out.append(actor(ctx, PEDESTRIAN_ID.format(len(out)), kind="pedestrian", role="agent", asset_id=asset,
                             pose=(_r(px), _r(py), yaw), speed_mps=_r(v0), behavior_rules=rules, cruise_mps=speed,
                             walk=walk, tags=[kit.tag]))
    return out


# --- cyclists -----------------------------------------------------------------------------------------------


def kerbside_lanes(ctx: ProgramContext) -> list[str]:
    """The lanes cyclists ride, sorted: every ``biking`` lane outside junctions, and every driving lane outside
    junctions with no same-direction driving or biking lane to its right (at its kerb)."""
    return kerbside_lanes_of(ctx.template)


def kerbside_lanes_of(template: WorldTemplate) -> list[str]:
    """:func:`kerbside_lanes` of a resolved template."""
    net = lane_network(template)
    graph = net.graph
    out = []
    for lane in sorted(graph.lanes):
        kind = graph.lanes[lane].kind
        if kind not in ("driving", "biking") or lane in net.junction_of:
            continue
        right = graph.right.get(lane)
        if kind == "biking" or right is None or graph.lanes[right].kind not in ("driving", "biking"):
            out.append(lane)
    return out


def _bike_route(rng: np.random.Generator, ctx: ProgramContext, lane: str, s: float, wanted_m: float) -> list[str]:
    """A cyclist's route from a bike lane: on through the bike lanes that follow it (uniformly where several do)
    until :data:`BIKE_ROUTE_M` ahead or where none does (it leaves the map there, as a vehicle at a dead end)."""
    graph = lane_network(ctx.template).graph
    return lane_walk(rng, graph, lane, s, wanted_m, 40, lambda k: graph.lanes[k].kind == "biking")


def lane_walk(rng: np.random.Generator, graph: LaneGraph, lane: str, s: float, wanted_m: float, max_lanes: int,
              allowed: Callable[[str], bool]) -> list[str]:
    """A background agent's route from ``s`` on ``lane``: on through the ``allowed`` successors (uniformly where
    several are, one draw from ``rng`` each; none drawn where one is) until ``wanted_m`` ahead, ``max_lanes`` lanes,
    or a dead end (it leaves the map there)."""
    route = [lane]
    ahead = graph.lanes[lane].length_m - s
    while ahead < wanted_m and len(route) < max_lanes:
        nxt = [k for k in graph.successors[route[-1]] if k not in route and allowed(k)]
        if not nxt:
            break
        pick = nxt[int(rng.integers(len(nxt)))] if len(nxt) > 1 else nxt[0]
        route.append(pick)
        ahead += graph.lanes[pick].length_m
    return route


def _vehicle_room(vehicle: dict[str, Any], half_cyclist: float) -> tuple[float, float]:
    """The s-interval of a background vehicle's lane a cyclist's centre keeps out of: from a bumper gap behind it
    to the vehicle's IDM gap (s0 + v·T + v²/(2b)) ahead of it."""
    s = float(vehicle["initial"]["lane_ref"]["s"])
    hl = float(vehicle["dims"]["l"]) / 2
    v = float(vehicle["initial"]["speed_mps"])
    idm = vehicle["behavior"]["idm"]
    ahead = idm["s0_m"] + v * idm["time_gap_s"] + v * v / (2.0 * idm["decel_comfort_mps2"])
    return s - hl - half_cyclist - CYCLIST_BEHIND_VEHICLE_M, s + hl + half_cyclist + ahead


def spawn_cyclists(ctx: ProgramContext, draft: dict[str, Any], spec: TrafficSpec, rng: np.random.Generator,
                   vehicles: list[dict[str, Any]], kit: Spawning) -> list[dict[str, Any]]:
    """The background cyclists of one sample (manifest actors, JSON-like), see the module docstring."""
    density = spec.cyclists_per_km
    if density <= 0.0:
        return []
    t = ctx.template
    families = _families(ctx, draft["split"], "cyclist")
    if not families:
        raise kit.error(t.source, "traffic", f"no cyclist family may appear in split {draft['split']!r}")
    assets = {f: ctx.variants(f) for f in families}
    dims = {a: ctx.catalog.entry(a).dimensions_m for f in families for a in assets[f]}
    longest = max(d.length for d in dims.values())
    net = lane_network(t)
    graph = net.graph
    blocked, points = kit.blocked(ctx, draft)
    on_lane: dict[str, list[dict[str, Any]]] = {}
    for v in vehicles:
        on_lane.setdefault(v["initial"]["lane_ref"]["lane"], []).append(v)
    out: list[dict[str, Any]] = []
    for lane in kerbside_lanes(ctx):
        g = graph.lanes[lane]
        n = _count(rng, density * g.length_m / 1000.0)
        keep_out = list(blocked.get(lane, ())) + [_vehicle_room(v, longest / 2) for v in on_lane.get(lane, ())]
        free = kit.free_intervals(g.length_m, longest / 2 + kit.lane_end_margin_m, keep_out)
        placed = []
        stop = kit.stop_line_s(ctx, lane)
        for s in kit.positions(rng, n, free, longest + CYCLIST_SPACING_M):
            x, y, _ = g.pose_at(s)
            if all(math.hypot(x - px, y - py) >= kit.clearance_m for px, py in points):
                placed.append(s)
        riders = []
        for s in placed:
            family = families[int(rng.integers(len(families)))]
            asset = assets[family][int(rng.integers(len(assets[family])))]
            cruise = _r(min(rng.uniform(*CYCLIST_SPEED_RANGE_MPS), g.speed_limit_mps))
            idm = {k: _r(rng.uniform(lo, hi)) for k, (lo, hi) in CYCLIST_IDM_RANGES.items()}
            route = kit.route(rng, ctx, lane, s) if g.kind != "biking" else _bike_route(rng, ctx, lane, s, BIKE_ROUTE_M)
            if s + longest / 2 > stop - kit.stop_line_clear_m:
                continue  # past its stop line (the vehicles' rule; its draws spent all the same)
            riders.append((s, asset, cruise, idm, route))
        # Initial speeds front to back, behind whatever background actor is ahead on the lane.
        ahead = sorted([(float(v["initial"]["lane_ref"]["s"]), float(v["dims"]["l"]) / 2)
                        for v in on_lane.get(lane, ())] + [(s, dims[asset].length / 2) for s, asset, *_ in riders])
        entry = any(k in net.junction_of for k in graph.successors[lane])
        for s, asset, cruise, idm, route in riders:
            half = dims[asset].length / 2
            nxt = next(((sa, ha) for sa, ha in ahead if sa > s), (math.inf, 0.0))
            gap = nxt[0] - s - nxt[1] - half
            v0 = min(cruise, max(0.0, (gap - idm["s0_m"]) / idm["time_gap_s"]))
            if entry:
                room = max(0.0, g.length_m - s - half - kit.junction_entry_margin_m)
                v0 = min(v0, math.sqrt(2.0 * idm["decel_comfort_mps2"] * room))
            # At the kerb: the body's right side CYCLIST_KERB_GAP_M from the lane's right edge; a bike lane's centre.
            offset = -max(g.width_m / 2 - dims[asset].width / 2 - CYCLIST_KERB_GAP_M, 0.0) if g.kind != "biking" else 0.0
            t_frac = _r(offset / (g.width_m / 2))
            x, y, yaw = g.pose_at(s)
            d = t_frac * g.width_m / 2
            x, y = x - d * math.sin(yaw), y + d * math.cos(yaw)
            rules = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.0,
                     "speed_factor": _r(min(max(cruise / g.speed_limit_mps, 0.05), 3.0))}
            a = actor(ctx, CYCLIST_ID.format(len(out)), kind="cyclist", role="agent", asset_id=asset,
                      pose=(_r(x), _r(y), yaw), speed_mps=_r(v0), behavior_rules=rules, route=route,
                      cruise_mps=cruise, lane_ref={"lane": lane, "s": _r(s), "t_frac": t_frac}, tags=[kit.tag])
            a["behavior"]["idm"] = idm
            out.append(a)
    return out


# --- capacity ----------------------------------------------------------------------------------------------


def _lane_slots(length: float, margin: float, spacing: float) -> int:
    """How many bodies fit on ``length`` m with ``margin`` off each end and ``spacing`` between centres."""
    free = length - 2.0 * margin
    return int(free // spacing) + 1 if free >= 0.0 else 0


def pedestrian_capacity(ctx: ProgramContext) -> tuple[float, float]:
    """``(sidewalk m, the most pedestrians per 100 m it holds)``: every sidewalk edge (one that does not enter the
    roadway) holds one pedestrian per :data:`PED_SPACING_M` between :data:`PED_END_MARGIN_M` off its ends, as the
    spawner places them; 0 without a walkable graph."""
    g = ctx.template.walk_graph
    road = _road(ctx)
    length = slots = 0.0
    for a, b in sorted((a, b) for a in g.nodes for b in g.adjacency[a] if a < b):
        if _crosses(road, g.nodes[a], g.nodes[b]):
            continue
        m = g.edge_length_m(a, b)
        length += m
        slots += _lane_slots(m, PED_END_MARGIN_M, PED_SPACING_M)
    return length, (100.0 * slots / length if length > 0 else 0.0)


def cyclist_capacity(ctx: ProgramContext, lane_end_margin_m: float) -> tuple[float, float]:
    """``(kerbside lane m, the most cyclists per km it holds)``: every kerbside lane (:func:`kerbside_lanes`) holds
    one cyclist per longest bicycle + :data:`CYCLIST_SPACING_M`, half a bicycle and ``lane_end_margin_m`` off its
    ends, as the spawner places them (the longest of every cyclist family, so any split's fits)."""
    lengths = [ctx.catalog.entry(a).dimensions_m.length for f in ctx.families_of_class("cyclist")
               for a in ctx.variants(f)]
    if not lengths:
        return 0.0, 0.0
    longest = max(lengths)
    graph = lane_network(ctx.template).graph
    length = slots = 0.0
    for lane in kerbside_lanes(ctx):
        m = graph.lanes[lane].length_m
        length += m
        slots += _lane_slots(m, longest / 2 + lane_end_margin_m, longest + CYCLIST_SPACING_M)
    return length, (1000.0 * slots / length if length > 0 else 0.0)
