"""Background traffic (SPEC §20): vehicles spawned on the lane graph around a sample's scenario, as manifest actors.

A suite asks for traffic per template × intent (:class:`TrafficSpec`); the
:class:`TrafficSpawnStage` of the ladder adds the background vehicles to each
proposal's draft, so the rest of the ladder, the simulator, the sensors, the
truth and the gate see them as the actors they are. Every draw comes from the
sample's ``traffic`` named stream (its seed is recorded in the manifest's
``streams``), and every vehicle is written in full: spawn lane and arc length
(``initial.lane_ref``), pose, speed, route, cruise speed and its own IDM
parameters (``behavior.idm``). The simulator's car following (IDM, against
every actor ahead on the vehicle's lane chain: the ego, the scenario's actors
and other background vehicles), stop lines of red signals and yielding at the
lane graph's conflict areas then apply to them as to any lane-bound actor.

Spawning, per driving lane outside junctions, sorted by id:

* the count is ``vehicles_per_lane_km · length / 1000``, its fraction rounded
  up with that probability (one ``uniform`` draw);
* positions are uniform on the lane's free length with at least
  :data:`SPAWN_SPACING_M` plus the longest vehicle between centres: free is
  the lane less :data:`LANE_END_MARGIN_M` at each end, less the stretch ahead
  of a scenario actor on its route (a background vehicle never starts in
  front of the scenario's own vehicles: it would change the scenario's
  relation), less :data:`SCENARIO_CLEARANCE_M` around every scenario actor;
  a vehicle whose position would put the longest body within
  :data:`STOP_LINE_CLEAR_M` of its lane's stop line or past it is dropped
  after its draws;
  behind the ego is allowed (a follower for the brake branch to act on);
* the asset is uniform over the vehicle families (but the ego's) whose split
  assignment is ``shared`` or the sample's split, then over the family's
  variants; dimensions from the catalog;
* cruise speed is the lane's limit times a ``speed_factor`` uniform in
  :data:`SPEED_FACTOR_RANGE`; the initial speed is the cruise speed, or the
  IDM equilibrium speed for the gap to the vehicle ahead on the lane if less,
  and on a lane that enters a junction no more than lets it stop comfortably
  :data:`JUNCTION_ENTRY_MARGIN_M` before the lane's end;
* IDM parameters uniform in :data:`IDM_RANGES`;
* the route follows successors from the spawn lane, uniformly among them,
  until :data:`ROUTE_LENGTH_M` ahead or a dead end (the simulator continues
  a route that ends on the map, and despawns a vehicle that leaves it).

Pedestrians and cyclists (``pedestrians_per_sidewalk_100m``,
``cyclists_per_km``) are drawn after the vehicles from the same stream
(:mod:`simready.scenario.traffic_walkers`), so a sample that asks for
vehicles alone is drawn as before.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simready.common.errors import SimreadyError
from simready.scenario.context import ProgramContext
from simready.scenario.ladder import PASS, Proposal, Verdict
from simready.scenario.manifest import parse_manifest
from simready.scenario.program_base import actor, family_of, vehicle_families
from simready.scenario.realization import CAUSAL_ORDER_KEY, CAUSE_PREFIX
from simready.scenario.splits import SHARED
from simready.scenario.streams import stream_seed
from simready.scenario.traffic_spec import DESPAWN_RANGE_KEY, RECYCLE_KEY, TrafficSpec, densities_of
from simready.scenario.traffic_walkers import (Spawning, _lane_slots, lane_walk, cyclist_capacity, pedestrian_capacity,
                                                spawn_cyclists, spawn_pedestrians)
from simready.world.lane_graph import lane_network

#: Name of the named stream every background draw comes from.
TRAFFIC_STREAM = "traffic"
#: Tag every background actor carries.
BACKGROUND_TAG = "background"
#: Background actor ids: ``bg_v000``, ``bg_v001``, … (vehicles; pedestrians and cyclists: ``bg_p…``, ``bg_c…``).
VEHICLE_ID = "bg_v{:03d}"
#: Extra distance between two spawned vehicles' centres beyond the longest vehicle (m).
SPAWN_SPACING_M = 4.0
#: Nothing spawns closer than this to a lane's ends (m) beyond the longest vehicle's half length.
LANE_END_MARGIN_M = 1.0
#: Nothing spawns closer than this to a scenario actor's initial position (m).
SCENARIO_CLEARANCE_M = 15.0
#: A background vehicle's cruise speed over the lane's limit.
SPEED_FACTOR_RANGE = (0.8, 1.05)
#: A vehicle on a lane that enters a junction starts slow enough to stop this far before the lane's end (m).
JUNCTION_ENTRY_MARGIN_M = 5.0
#: A background vehicle or cyclist starts with the front of the longest body at least this far before its lane's
#: stop line (m): one placed past it stood there at a red light, its stop line behind it, and drove into the
#: junction across the green traffic (a background crash of the dense sweep, urban_signalized_intersection).
#: A vehicle placed there is dropped after its draws (every other vehicle keeps its own).
STOP_LINE_CLEAR_M = 1.0
#: IDM parameters, each uniform in its range: standstill gap (m), time gap (s), accel, comfortable decel (m/s²).
IDM_RANGES = {"s0_m": (1.5, 2.5), "time_gap_s": (1.0, 1.8), "accel_max_mps2": (1.2, 2.5),
              "decel_comfort_mps2": (2.0, 3.0)}
#: A drawn route is extended along successors until it reaches this far past the spawn point (m).
ROUTE_LENGTH_M = 400.0
#: At most this many lanes in a drawn route.
ROUTE_MAX_LANES = 12
#: Digits kept of drawn values (the manifest's own rounding is coarser than none).
DIGITS = 4
#: Tag of a background vehicle absent at start that the simulator spawns at its map entry to keep the density.
RESERVE_TAG = "reserve"
#: At most this many reserve vehicles per vehicle present at start.
RESERVES_PER_VEHICLE_MAX = 2.0


class TrafficError(SimreadyError):
    kind = "traffic"


__all__ = ["TrafficError", "TrafficSpawnStage", "TrafficSpec", "check_capacity", "densities_of", "map_capacity",
           "spawn_vehicles", "with_traffic"]


def traffic_generator(stream_root: str) -> np.random.Generator:
    """The ``traffic`` stream of a sample, fresh: every attempt of a proposal draws the same traffic."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(stream_seed(stream_root, TRAFFIC_STREAM))))


def background_families(ctx: ProgramContext, split: str) -> list[str]:
    """Vehicle families a background vehicle of a ``split`` sample may use: every one but the ego's whose split
    assignment is ``shared`` or ``split`` (a held-out family never leaks into another split)."""
    ego = family_of(ctx.template.ego.asset)
    return [f for f in vehicle_families(ctx, [ego]) if ctx.splits.families.get(f) in (SHARED, split)]


def _blocked(ctx: ProgramContext, draft: dict[str, Any]) -> tuple[dict[str, list[tuple[float, float]]], list[tuple[float, float]]]:
    """Per lane, the s-intervals ahead of a scenario actor on its route; and every scenario actor's position."""
    graph = ctx.template.lane_graph
    blocked: dict[str, list[tuple[float, float]]] = {}
    points = []
    for a in draft["actors"]:
        pose = a["initial"]["pose"]
        points.append((float(pose["x"]), float(pose["y"])))
        route = a["behavior"]["route"]
        ref = a["initial"].get("lane_ref")
        if a["role"] == "parked" or a["kind"] == "pedestrian" or not route:
            continue
        s0 = float(ref["s"]) if ref is not None and ref["lane"] == route[0] else 0.0
        for k, lane in enumerate(route):
            if lane in graph.lanes:
                blocked.setdefault(lane, []).append((s0 if k == 0 else -math.inf, math.inf))
    return blocked, points


def stop_line_s(ctx: ProgramContext, lane: str) -> float:
    """s on ``lane`` of the nearest stop line of a signal controlling it (the signal's own, or its point projected
    across onto a neighbouring controlled lane); inf without one."""
    graph = lane_network(ctx.template).graph
    g = graph.lanes[lane]
    out = math.inf
    for sig in ctx.template.signals:
        if lane not in sig.controls:
            continue
        if sig.stop_line.lane == lane:
            s = float(sig.stop_line.s_m)
        else:
            s = g.project(*graph.lanes[sig.stop_line.lane].point_at(sig.stop_line.s_m))[0]
        out = min(out, s)
    return out


def _free_intervals(length: float, margin: float, blocked: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    out = [(margin, length - margin)]
    for lo, hi in sorted(blocked):
        nxt = []
        for a, b in out:
            if hi <= a or lo >= b:
                nxt.append((a, b))
                continue
            if lo > a:
                nxt.append((a, lo))
            if hi < b:
                nxt.append((hi, b))
        out = nxt
    return [(a, b) for a, b in out if b > a]


def _positions(rng: np.random.Generator, n: int, free: list[tuple[float, float]], spacing: float) -> list[float]:
    """``n`` arc lengths uniform on the free intervals with ``spacing`` between neighbours (fewer if they do not fit)."""
    total = sum(b - a for a, b in free)
    n = min(n, int(total // spacing) + (1 if total > 0 else 0))
    if n <= 0:
        return []
    slack = max(total - (n - 1) * spacing, 0.0)
    u = np.sort(rng.uniform(0.0, slack, n))
    along = [float(u[k]) + k * spacing for k in range(n)]
    out = []
    for x in along:
        for a, b in free:
            if x <= b - a:
                out.append(a + x)
                break
            x -= b - a
    return out


def _route(rng: np.random.Generator, ctx: ProgramContext, lane: str, s: float) -> list[str]:
    net = lane_network(ctx.template)
    return lane_walk(rng, net.graph, lane, s, ROUTE_LENGTH_M, ROUTE_MAX_LANES,
                     lambda k: net.kinds.get(k) in ("driving", "turn"))


def entry_lanes(ctx: ProgramContext) -> list[str]:
    """Driving lanes outside junctions where traffic enters the map (no predecessor), sorted."""
    net = lane_network(ctx.template)
    graph = net.graph
    return sorted(k for k, g in graph.lanes.items()
                  if g.kind == "driving" and k not in net.junction_of and not graph.predecessors[k])


def _shortest_crossing_m(ctx: ProgramContext, entries: list[str]) -> float:
    """The shortest lane chain from an entry to where it leaves the map (m; inf when none leaves)."""
    net = lane_network(ctx.template)
    graph = net.graph
    best = math.inf
    for start in entries:
        dist = {start: graph.lanes[start].length_m}
        todo = [start]
        while todo:
            lane = min(todo, key=lambda k: (dist[k], k))
            todo.remove(lane)
            nxt = [k for k in graph.successors[lane] if net.kinds.get(k) in ("driving", "turn")]
            if not nxt:
                best = min(best, dist[lane])
            for k in nxt:
                d = dist[lane] + graph.lanes[k].length_m
                if d < dist.get(k, math.inf):
                    dist[k] = d
                    todo.append(k)
    return best


def reserve_count(ctx: ProgramContext, present: int, horizon_s: float, entries: list[str]) -> int:
    """How many reserve vehicles a sample with ``present`` background vehicles at start carries.

    A vehicle leaves the map at most once per shortest crossing at the fastest
    limit, so ``present · horizon · v_max / crossing`` departures can happen
    in the rollout (``horizon_s``: warm-up and clip); capped at
    :data:`RESERVES_PER_VEHICLE_MAX` per vehicle (each reserve is a row of
    the actor table, absent or not).
    """
    if present == 0 or not entries:
        return 0
    crossing = _shortest_crossing_m(ctx, entries)
    if not math.isfinite(crossing):
        return 0
    v_max = max(g.speed_limit_mps for g in lane_network(ctx.template).graph.lanes.values()) * SPEED_FACTOR_RANGE[1]
    need = math.ceil(present * horizon_s * v_max / max(crossing, 1.0))
    return min(need, math.ceil(present * RESERVES_PER_VEHICLE_MAX))


def spawn_reserves(ctx: ProgramContext, draft: dict[str, Any], rng: np.random.Generator, families: list[str],
                   assets: dict[str, list[str]], first: int, count: int) -> list[dict[str, Any]]:
    """``count`` background vehicles absent at start (tag :data:`RESERVE_TAG`), each at the start of a map entry
    lane drawn uniformly, with asset, speed factor, IDM parameters and route drawn as for the others; the
    simulator spawns them in id order when the street has fewer background vehicles than at start."""
    entries = entry_lanes(ctx)
    graph = lane_network(ctx.template).graph
    out = []
    for k in range(count):
        lane = entries[int(rng.integers(len(entries)))]
        family = families[int(rng.integers(len(families)))]
        asset = assets[family][int(rng.integers(len(assets[family])))]
        factor = _r(rng.uniform(*SPEED_FACTOR_RANGE))
        idm = {key: _r(rng.uniform(lo, hi)) for key, (lo, hi) in IDM_RANGES.items()}
        g = graph.lanes[lane]
        half = ctx.catalog.entry(asset).dimensions_m.length / 2
        s = min(half + LANE_END_MARGIN_M, g.length_m / 2)
        route = _route(rng, ctx, lane, s)
        x, y, yaw = g.pose_at(s)
        cruise = _r(g.speed_limit_mps * factor)
        speed = cruise
        if any(n in lane_network(ctx.template).junction_of for n in graph.successors[lane]):
            room = max(0.0, g.length_m - s - half - JUNCTION_ENTRY_MARGIN_M)
            speed = min(speed, math.sqrt(2.0 * idm["decel_comfort_mps2"] * room))
        rules = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.0,
                 "speed_factor": factor}
        a = actor(ctx, VEHICLE_ID.format(first + k), kind="vehicle", role="agent", asset_id=asset,
                  pose=(_r(x), _r(y), yaw), speed_mps=_r(speed), behavior_rules=rules, route=route, cruise_mps=cruise,
                  lane_ref={"lane": lane, "s": _r(s), "t_frac": 0.0}, tags=[BACKGROUND_TAG, RESERVE_TAG],
                  present=False)
        a["behavior"]["idm"] = idm
        out.append(a)
    return out


def _r(x: float) -> float:
    return round(float(x), DIGITS)


def vehicle_capacity(ctx: ProgramContext) -> tuple[float, float]:
    """``(driving lane m outside junctions, the most vehicles per lane km they hold)``: each lane holds one vehicle
    per longest body + :data:`SPAWN_SPACING_M` (more than any drawn IDM standstill gap s0, ≤ 2.5 m), half a body
    and :data:`LANE_END_MARGIN_M` off its ends, as the spawner places them (the longest of every vehicle family but
    the ego's, so any split's fits)."""
    ego = family_of(ctx.template.ego.asset)
    lengths = [ctx.catalog.entry(a).dimensions_m.length for f in vehicle_families(ctx, [ego]) for a in ctx.variants(f)]
    if not lengths:
        return 0.0, 0.0
    longest = max(lengths)
    net = lane_network(ctx.template)
    length = slots = 0.0
    for lane, g in sorted(net.graph.lanes.items()):
        if g.kind != "driving" or lane in net.junction_of:
            continue
        length += g.length_m
        slots += _lane_slots(g.length_m, longest / 2 + LANE_END_MARGIN_M, longest + SPAWN_SPACING_M)
    return length, (1000.0 * slots / length if length > 0 else 0.0)


def map_capacity(ctx: ProgramContext) -> dict[str, tuple[float, float]]:
    """Per density of :class:`TrafficSpec`: ``(the length it is per, in m; the most the map holds)`` — what a
    request is checked against (:func:`check_capacity`) and a realized count is divided by."""
    cached = _CAPACITY.get(ctx)
    if cached is None:
        cached = _CAPACITY[ctx] = {"vehicles_per_lane_km": vehicle_capacity(ctx),
                                   "pedestrians_per_sidewalk_100m": pedestrian_capacity(ctx),
                                   "cyclists_per_km": cyclist_capacity(ctx, LANE_END_MARGIN_M)}
    return cached


#: :func:`map_capacity` per context (a context's template and catalog do not change).
_CAPACITY: weakref.WeakKeyDictionary[ProgramContext, dict[str, tuple[float, float]]] = weakref.WeakKeyDictionary()


def check_capacity(ctx: ProgramContext, spec: TrafficSpec, source: str | Path | None = None, where: str = "traffic") -> None:
    """Raise :class:`TrafficError` (one line naming ``source``, default the template's file, and
    ``<where>.<density>``) when ``spec`` asks for a density beyond what the map can hold (:func:`map_capacity`):
    the spawner would place fewer than asked, silently."""
    asked = {k: v for k, v in densities_of(spec).items() if v > 0.0}
    if not asked:
        return
    capacity = map_capacity(ctx)
    for key, value in asked.items():
        length, most = capacity[key]
        if value > most + 1e-9:
            per = {"vehicles_per_lane_km": "driving lane outside junctions", "cyclists_per_km": "kerbside lane",
                   "pedestrians_per_sidewalk_100m": "sidewalk"}[key]
            raise TrafficError(source if source is not None else ctx.template.source, f"{where}.{key}",
                               f"{value:g} is beyond what {ctx.template.id} can hold: at most {math.floor(most * 10) / 10:g} "
                               f"on its {length:.0f} m of {per}")


def spawn_vehicles(ctx: ProgramContext, draft: dict[str, Any], spec: TrafficSpec, stream_root: str,
                   rng: np.random.Generator | None = None) -> list[dict[str, Any]]:
    """The background vehicles of one sample (manifest actors, JSON-like), see the module docstring; ``rng``: the
    ``traffic`` stream to draw from (default: a fresh one of ``stream_root``)."""
    if spec.vehicles_per_lane_km <= 0.0:
        return []
    rng = traffic_generator(stream_root) if rng is None else rng
    families = background_families(ctx, draft["split"])
    if not families:
        raise TrafficError(ctx.template.source, "traffic", f"no vehicle family may appear in split {draft['split']!r}")
    assets = {f: ctx.variants(f) for f in families}
    longest = max(ctx.catalog.entry(a).dimensions_m.length for f in families for a in assets[f])
    spacing = longest + SPAWN_SPACING_M
    margin = longest / 2 + LANE_END_MARGIN_M
    net = lane_network(ctx.template)
    graph = net.graph
    blocked, points = _blocked(ctx, draft)
    out: list[dict[str, Any]] = []
    for lane in sorted(graph.lanes):
        g = graph.lanes[lane]
        if g.kind != "driving" or lane in net.junction_of:
            continue
        expected = spec.vehicles_per_lane_km * g.length_m / 1000.0
        whole = math.floor(expected)
        n = whole + int(rng.uniform() < expected - whole)
        placed = []
        stop = stop_line_s(ctx, lane)
        for s in _positions(rng, n, _free_intervals(g.length_m, margin, blocked.get(lane, ())), spacing):
            x, y, _ = g.pose_at(s)
            if all(math.hypot(x - px, y - py) >= SCENARIO_CLEARANCE_M for px, py in points):
                placed.append(s)
        vehicles = []
        for s in placed:
            family = families[int(rng.integers(len(families)))]
            asset = assets[family][int(rng.integers(len(assets[family])))]
            factor = _r(rng.uniform(*SPEED_FACTOR_RANGE))
            idm = {k: _r(rng.uniform(lo, hi)) for k, (lo, hi) in IDM_RANGES.items()}
            route = _route(rng, ctx, lane, s)
            if s + longest / 2 > stop - STOP_LINE_CLEAR_M:
                continue  # past its stop line it would drive into the junction on red (its draws are spent all the same)
            vehicles.append((s, asset, factor, idm, route))
        entry = any(k in net.junction_of for k in graph.successors[lane])
        # Initial speeds front to back: the cruise speed, or the IDM equilibrium for the gap to the one ahead.
        ahead_s, ahead_half = math.inf, 0.0
        speeds: dict[float, float] = {}
        for s, asset, factor, idm, _route_ in sorted(vehicles, key=lambda v: -v[0]):
            half = ctx.catalog.entry(asset).dimensions_m.length / 2
            cruise = g.speed_limit_mps * factor
            gap = ahead_s - s - ahead_half - half
            speeds[s] = min(cruise, max(0.0, (gap - idm["s0_m"]) / idm["time_gap_s"]))
            if entry:
                # Able to stop at the junction's entry (its first waiting point or stop line) comfortably.
                room = max(0.0, g.length_m - s - half - JUNCTION_ENTRY_MARGIN_M)
                speeds[s] = min(speeds[s], math.sqrt(2.0 * idm["decel_comfort_mps2"] * room))
            ahead_s, ahead_half = s, half
        for s, asset, factor, idm, route in vehicles:
            x, y, yaw = g.pose_at(s)
            cruise = _r(g.speed_limit_mps * factor)
            rules = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.0,
                     "speed_factor": factor}
            a = actor(ctx, VEHICLE_ID.format(len(out)), kind="vehicle", role="agent", asset_id=asset,
                      pose=(_r(x), _r(y), yaw), speed_mps=_r(min(speeds[s], cruise)), behavior_rules=rules,
                      route=route, cruise_mps=cruise, lane_ref={"lane": lane, "s": _r(s), "t_frac": 0.0},
                      tags=[BACKGROUND_TAG])
            a["behavior"]["idm"] = idm
            out.append(a)
    horizon = float(draft.get("warmup_s", 5.0)) + float(draft.get("clip_s", 20.0))
    entries = entry_lanes(ctx)
    return out + spawn_reserves(ctx, draft, rng, families, assets, len(out),
                                reserve_count(ctx, len(out), horizon, entries))


def with_traffic(ctx: ProgramContext, draft: dict[str, Any], spec: TrafficSpec, stream_root: str) -> dict[str, Any]:
    """``draft`` with its background vehicles, pedestrians and cyclists (any earlier ones replaced), the ``traffic`` stream's seed, the
    lineage's families, the pinned asset versions and ``traffic.*`` realized values."""
    own = [a for a in draft["actors"] if BACKGROUND_TAG not in a["tags"]]
    base = {**draft, "actors": own}
    rng = traffic_generator(stream_root)
    vehicles = spawn_vehicles(ctx, base, spec, stream_root, rng)
    # Pedestrians, then cyclists, from the same stream after the vehicles (none drawn when none are asked for).
    kit = Spawning(BACKGROUND_TAG, SCENARIO_CLEARANCE_M, LANE_END_MARGIN_M, JUNCTION_ENTRY_MARGIN_M, TrafficError,
                   _blocked, _free_intervals, _positions, _route, stop_line_s, STOP_LINE_CLEAR_M)
    pedestrians = spawn_pedestrians(ctx, base, spec, rng, kit)
    # Cyclists keep clear of the vehicles present at start; a reserve waits off the map and enters only where its
    # entry is clear (simready.sim.behavior.respawn), so it does not block a cyclist's place.
    present = [a for a in vehicles if RESERVE_TAG not in a["tags"]]
    cyclists = spawn_cyclists(ctx, base, spec, rng, present, kit)
    spawned = vehicles + pedestrians + cyclists
    actors = own + spawned
    streams = dict(draft["streams"])
    streams[TRAFFIC_STREAM] = stream_seed(stream_root, TRAFFIC_STREAM)
    lineage = dict(draft["lineage"])
    lineage["asset_families"] = sorted({family_of(a["asset_id"]) for a in actors})
    versions = dict(draft["asset_versions"])
    versions.update({a["asset_id"]: ctx.asset_hashes[a["asset_id"]] for a in spawned if a["asset_id"] in ctx.asset_hashes})
    realized = dict(draft["realized"])
    order = [k for k in realized[CAUSAL_ORDER_KEY] if not k.startswith("traffic.")]
    reserves = sum(RESERVE_TAG in a["tags"] for a in vehicles)
    values = {"traffic.vehicles_per_lane_km": (spec.vehicles_per_lane_km, "suite |  | the suite's traffic density"),
              "traffic.vehicles": (len(vehicles) - reserves, f"{TRAFFIC_STREAM} | traffic.vehicles_per_lane_km | spawned "
                                   "on the driving lanes outside junctions, clear of the scenario's actors"),
              "traffic.reserves": (reserves, f"{TRAFFIC_STREAM} | traffic.vehicles | absent at start, spawned at the "
                                   "map's entries to keep the density")}
    if spec.despawn_range_m is not None:
        values[DESPAWN_RANGE_KEY] = (spec.despawn_range_m, "suite |  | a background vehicle farther than this from "
                                     "every scenario actor despawns")
    if spec.recycle:
        values[RECYCLE_KEY] = (True, "suite |  | reserves that left the street re-enter at their entries once the "
                               "reserves are spent")
    if spec.pedestrians_per_sidewalk_100m > 0.0:
        values["traffic.pedestrians_per_sidewalk_100m"] = (spec.pedestrians_per_sidewalk_100m,
                                                           "suite |  | the suite's pedestrian density")
        values["traffic.pedestrians"] = (len(pedestrians), f"{TRAFFIC_STREAM} | traffic.pedestrians_per_sidewalk_100m | "
                                         "spawned on the walkable graph's sidewalks, clear of the scenario's actors")
    if spec.cyclists_per_km > 0.0:
        values["traffic.cyclists_per_km"] = (spec.cyclists_per_km, "suite |  | the suite's cyclist density")
        values["traffic.cyclists"] = (len(cyclists), f"{TRAFFIC_STREAM} | traffic.cyclists_per_km | spawned at the "
                                      "kerb of the kerbside driving lanes, clear of the scenario's actors and vehicles")
    # The realized densities: what was placed at start over the length the request is per (the map's, as the
    # capacity check's), beside the request (fewer than asked: clear of the scenario's actors, stop lines, rounding).
    capacity = map_capacity(ctx)
    placed = {"vehicles_per_lane_km": (len(vehicles) - reserves, 1000.0),
              "pedestrians_per_sidewalk_100m": (len(pedestrians), 100.0), "cyclists_per_km": (len(cyclists), 1000.0)}
    for key, (count, per) in placed.items():
        if getattr(spec, key) > 0.0 and capacity[key][0] > 0.0:
            values[f"traffic.realized_{key}"] = (_r(count * per / capacity[key][0]), f"{TRAFFIC_STREAM} | traffic.{key} "
                                                 "| placed at start over the map's length the density is per")
    for key, (value, cause) in values.items():
        realized[key] = value
        realized[CAUSE_PREFIX + key] = cause
        order.append(key)
    realized[CAUSAL_ORDER_KEY] = order
    return {**draft, "actors": actors, "streams": dict(sorted(streams.items())), "lineage": lineage,
            "asset_versions": dict(sorted(versions.items())), "realized": realized}


class TrafficSpawnStage:
    """The ladder's rung that adds the background vehicles (after the program's own checks, before the physics).

    The stages before it judge the scenario alone (its relation, its event);
    this one adds the traffic the suite asks for and validates the result as a
    manifest. :class:`simready.sim.ladder.traffic.TrafficRolloutStage` then rolls the
    whole street out and rejects a sample whose background traffic collides.
    """

    name = "traffic_spawn"
    cost_rank = 44
    level = 3

    def __init__(self, ctx: ProgramContext, spec: TrafficSpec, stream_root_of: Any) -> None:
        self.ctx, self.spec, self.stream_root_of = ctx, spec, stream_root_of

    def check(self, proposal: Proposal) -> Verdict:
        proposal.draft = with_traffic(self.ctx, proposal.draft, self.spec, self.stream_root_of(proposal.sample_id))
        proposal.manifest = parse_manifest(proposal.draft, proposal.sample_id)
        return PASS
