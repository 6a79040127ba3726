"""Semantic checks of a parsed world template (SPEC §5), cheap to expensive.

Each check is a function ``WorldTemplate -> Iterator[Issue]`` yielding
``(field location, reason)``; :data:`SEMANTIC_CHECKS` runs them in order
and the first check with a problem ends the run (Scenic-style: requirements
as small objects evaluated by one loop, the reason kept as data). Reference
checks come first; geometric checks assume references resolve.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from shapely.geometry import LineString, Point
from shapely.ops import unary_union

from simready.world.template_model import (
    WALKABLE_REGION_TYPES,
    Adjacent,
    Connects,
    EgoStart,
    ParkedOn,
    ParkingAffordance,
    PedestrianCrossing,
    PedestrianSpawn,
    RegionType,
    VehicleSpawn,
    WorldTemplate,
    parking_slots,
)

#: Two regions "touch" for ``adjacent``/``connects`` within this gap (m).
ADJACENT_TOLERANCE_M = 0.2
#: Points that must lie in a region may sit this far outside it (m): authored
#: coordinates are centimetre-rounded and region edges are shared.
CONTAINMENT_TOLERANCE_M = 0.05
#: A lane centreline may leave its region by this much (m), e.g. where a
#: connector's chord cuts a rounded curb by a few centimetres.
LANE_REGION_TOLERANCE_M = 0.5

Loc = tuple[str | int, ...]
Issue = tuple[Loc, str]


def _check_unique_ids(t: WorldTemplate) -> Iterator[Issue]:
    for section, key in (("regions", "id"), ("lanes", "id"), ("affordances", "id"), ("signals", "id")):
        seen: set[str] = set()
        for i, item in enumerate(getattr(t, section)):
            value = getattr(item, key)
            if value in seen:
                yield (section, i, key), f"duplicate id {value!r}"
            seen.add(value)
    names: set[str] = set()
    for inst in t.instances:
        if inst.name in names:
            yield ("instances", inst._authored_index, "name"), f"duplicate instance name {inst.name!r}"
        names.add(inst.name)


def _check_lane_refs(t: WorldTemplate) -> Iterator[Issue]:
    for i, lane in enumerate(t.lanes):
        region = t.region_by_id.get(lane.region)
        if region is None:
            yield ("lanes", i, "region"), f"unknown region {lane.region!r}"
        elif region.type not in ("drivable", "parking", "intersection"):
            yield ("lanes", i, "region"), f"region {lane.region!r} is {region.type}, not a drivable surface"


def _lane_ids(t: WorldTemplate) -> set[str]:
    return {lane.id for lane in t.lanes}


def _check_lane_s(t: WorldTemplate, lane_loc: Loc, s_loc: Loc, lane: str, s_values: tuple[float, ...]) -> Iterator[Issue]:
    """``lane`` exists and every s (metres) lies on it."""
    if lane not in _lane_ids(t):
        yield lane_loc, f"unknown lane {lane!r}"
        return
    length = t.lane_graph.lane(lane).length_m
    for s in s_values:
        if s > length:
            yield s_loc, f"s = {s} m is beyond the end of lane {lane!r} ({length:.2f} m)"
            return


def _check_region_ref(t: WorldTemplate, loc: Loc, region_id: str, types: tuple[str, ...]) -> Iterator[Issue]:
    region = t.region_by_id.get(region_id)
    if region is None:
        yield loc, f"unknown region {region_id!r}"
    elif region.type not in types:
        yield loc, f"region {region_id!r} is {region.type}, expected {' or '.join(types)}"


def _check_ego_refs(t: WorldTemplate) -> Iterator[Issue]:
    lanes = _lane_ids(t)
    for i, lane in enumerate(t.ego.route):
        if lane not in lanes:
            yield ("ego", "route", i), f"unknown lane {lane!r}"


def _check_ego_route(t: WorldTemplate) -> Iterator[Issue]:
    """The route follows derived successors, and the start lies on its first lane."""
    graph = t.lane_graph
    for i, (a, b) in enumerate(zip(t.ego.route, t.ego.route[1:]), start=1):
        if b not in graph.successors[a]:
            yield ("ego", "route", i), f"lane {b!r} is not a successor of {a!r} (derived successors: {list(graph.successors[a])})"
    yield from _check_lane_s(t, ("ego", "route", 0), ("ego", "start_s_m"), t.ego.route[0], (t.ego.start_s_m,))


def _check_sensor_rig(t: WorldTemplate) -> Iterator[Issue]:
    mounts = t.sensor_rig.mounts
    for name, sensor in sorted(t.sensor_rig.sensors.items()):
        mount = mounts.get(sensor.mount)
        if mount is None:
            yield ("sensor_rig", "sensors", name, "mount"), f"unknown mount {sensor.mount!r}"
        elif mount.type != sensor.type:
            yield ("sensor_rig", "sensors", name, "mount"), f"mount {sensor.mount!r} is a {mount.type} mount, sensor is a {sensor.type}"


def _check_signals(t: WorldTemplate) -> Iterator[Issue]:
    lanes = _lane_ids(t)
    for i, sig in enumerate(t.signals):
        for j, lane in enumerate(sig.controls):
            if lane not in lanes:
                yield ("signals", i, "controls", j), f"unknown lane {lane!r}"
        if sig.stop_line.lane not in sig.controls:
            yield ("signals", i, "stop_line", "lane"), f"stop line lane {sig.stop_line.lane!r} is not among the controlled lanes"
        else:
            loc: Loc = ("signals", i, "stop_line")
            yield from _check_lane_s(t, loc + ("lane",), loc + ("s_m",), sig.stop_line.lane, (sig.stop_line.s_m,))


def _check_pedestrian_signals(t: WorldTemplate) -> Iterator[Issue]:
    crosswalks = {r.id for r in t.regions if r.type == "crosswalk"}
    ids = {s.id for s in t.signals}
    for i, sig in enumerate(t.pedestrian_signals):
        if sig.id in ids:
            yield ("pedestrian_signals", i, "id"), f"id {sig.id!r} is also a traffic light's"
        for j, cw in enumerate(sig.crosswalks):
            if cw not in crosswalks:
                yield ("pedestrian_signals", i, "crosswalks", j), f"unknown crosswalk region {cw!r}"


def _check_affordances(t: WorldTemplate) -> Iterator[Issue]:
    for i, a in enumerate(t.affordances):
        loc: Loc = ("affordances", i)
        if isinstance(a, PedestrianSpawn):
            yield from _check_region_ref(t, loc + ("region",), a.region, WALKABLE_REGION_TYPES)
        elif isinstance(a, ParkingAffordance):
            yield from _check_parking(t, loc, a)
        elif isinstance(a, EgoStart):
            yield from _check_lane_s(t, loc + ("lane",), loc + ("s_m",), a.lane, (a.s_m,))
        elif isinstance(a, VehicleSpawn):
            yield from _check_lane_s(t, loc + ("lane",), loc + ("s_range_m",), a.lane, a.s_range_m)
        else:
            yield from _check_crossing(t, loc, a)


def _check_parking(t: WorldTemplate, loc: Loc, a: ParkingAffordance) -> Iterator[Issue]:
    issues = list(_check_region_ref(t, loc + ("region",), a.region, ("parking",)))
    yield from issues
    if not issues and not parking_slots(t, a.id):
        yield loc + ("slot_length_m",), f"no {a.slot_length_m} m slot fits along region {a.region!r}"


def _check_crossing(t: WorldTemplate, loc: Loc, a: PedestrianCrossing) -> Iterator[Issue]:
    issues = list(_check_region_ref(t, loc + ("region",), a.region, ("crosswalk",)))
    for j, node in enumerate(a.path):
        if node not in t.walkable.nodes:
            issues.append((loc + ("path", j), f"unknown walkable node {node!r}"))
    for j, (p, q) in enumerate(zip(a.path, a.path[1:]), start=1):
        if not issues and not t.walk_graph.has_edge(p, q):
            issues.append((loc + ("path", j), f"no walkable edge {p!r} - {q!r}"))
    yield from issues
    if not issues:
        line = LineString(t.walk_graph.path_points(a.path))
        if not line.intersects(t.region_by_id[a.region].shape):
            yield loc + ("path",), f"path does not pass through crosswalk {a.region!r}"


def _check_walkable_refs(t: WorldTemplate) -> Iterator[Issue]:
    seen: set[frozenset[str]] = set()
    for i, (a, b) in enumerate(t.walkable.edges):
        for j, node in enumerate((a, b)):
            if node not in t.walkable.nodes:
                yield ("walkable", "edges", i, j), f"unknown walkable node {node!r}"
        if a == b:
            yield ("walkable", "edges", i), f"edge joins node {a!r} to itself"
        key = frozenset((a, b))
        if key in seen:
            yield ("walkable", "edges", i), f"duplicate edge {a!r} - {b!r}"
        seen.add(key)


def _check_relation_refs(t: WorldTemplate) -> Iterator[Issue]:
    signals = {s.id for s in t.signals}
    for i, rel in enumerate(t.relations):
        loc: Loc = ("relations", i)
        if isinstance(rel, Adjacent):
            for key in ("a", "b"):
                yield from _check_region_ref(t, loc + (key,), getattr(rel, key), tuple(RegionType.__args__))  # type: ignore[attr-defined]
        elif isinstance(rel, Connects):
            yield from _check_region_ref(t, loc + ("route",), rel.route, ("crosswalk",))
            for key in ("a", "b"):
                yield from _check_region_ref(t, loc + (key,), getattr(rel, key), ("sidewalk",))
        elif isinstance(rel, ParkedOn):
            if rel.instance not in t.instance_by_name:
                yield loc + ("instance",), f"unknown instance {rel.instance!r}"
            yield from _check_region_ref(t, loc + ("region",), rel.region, ("parking",))
        else:
            if rel.instance not in t.instance_by_name:
                yield loc + ("instance",), f"unknown instance {rel.instance!r}"
            if rel.signal not in signals:
                yield loc + ("signal",), f"unknown signal {rel.signal!r}"


def _check_lane_geometry(t: WorldTemplate) -> Iterator[Issue]:
    for i, lane in enumerate(t.lanes):
        region = t.region_by_id[lane.region].shape.buffer(LANE_REGION_TOLERANCE_M)
        if not region.covers(LineString(lane.polyline)):
            yield ("lanes", i, "polyline"), f"centreline leaves region {lane.region!r} by more than {LANE_REGION_TOLERANCE_M} m"


def _check_lane_graph(t: WorldTemplate) -> Iterator[Issue]:
    index = {lane.id: i for i, lane in enumerate(t.lanes)}
    for err in t.lane_graph.direction_errors():
        yield ("lanes", index[err.lane], "polyline"), err.reason


def _check_relation_geometry(t: WorldTemplate) -> Iterator[Issue]:
    shape = {r.id: r.shape for r in t.regions}
    for i, rel in enumerate(t.relations):
        if isinstance(rel, Adjacent):
            gap = shape[rel.a].distance(shape[rel.b])
            if gap > ADJACENT_TOLERANCE_M:
                yield ("relations", i), f"regions {rel.a!r} and {rel.b!r} are {gap:.2f} m apart (adjacent needs <= {ADJACENT_TOLERANCE_M} m)"
        elif isinstance(rel, Connects):
            for side in (rel.a, rel.b):
                gap = shape[rel.route].distance(shape[side])
                if gap > ADJACENT_TOLERANCE_M:
                    yield ("relations", i), f"crosswalk {rel.route!r} is {gap:.2f} m from sidewalk {side!r} (must touch it)"
            if rel.a == rel.b:
                yield ("relations", i), "a crosswalk connects two different sidewalks"
        elif isinstance(rel, ParkedOn):
            pose = t.instance_by_name[rel.instance].pose
            if shape[rel.region].distance(Point(pose.x, pose.y)) > CONTAINMENT_TOLERANCE_M:
                yield ("relations", i), f"instance {rel.instance!r} at ({pose.x}, {pose.y}) is not on region {rel.region!r}"


def _check_walkable_geometry(t: WorldTemplate) -> Iterator[Issue]:
    walk_area = unary_union([r.shape for r in t.regions if r.type in WALKABLE_REGION_TYPES])
    if walk_area.is_empty:
        # A place without sidewalks (a rural road, an imported map of carriageways only) has no walkable graph;
        # nodes without a walkable region to stand in are an error.
        if t.walkable.nodes:
            yield ("walkable",), "no sidewalk or crosswalk region to walk on"
        return
    area = walk_area.buffer(CONTAINMENT_TOLERANCE_M)
    for node, (x, y) in sorted(t.walkable.nodes.items()):
        if not area.covers(Point(x, y)):
            yield ("walkable", "nodes", node), f"node {node!r} at ({x}, {y}) is outside every sidewalk and crosswalk"
    for i, (a, b) in enumerate(t.walkable.edges):
        if not area.covers(LineString([t.walkable.nodes[a], t.walkable.nodes[b]])):
            yield ("walkable", "edges", i), f"edge {a!r} - {b!r} leaves the sidewalks and crosswalks"


#: Run in this order; the first issue found is the one reported. Reference
#: checks come before the geometric ones that assume references resolve, and
#: the lane graph is checked before the ego route that walks it (a reversed
#: lane is reported as such, not as a broken route).
SEMANTIC_CHECKS: tuple[Callable[[WorldTemplate], Iterator[Issue]], ...] = (
    _check_unique_ids,
    _check_lane_refs,
    _check_walkable_refs,
    _check_ego_refs,
    _check_sensor_rig,
    _check_signals,
    _check_pedestrian_signals,
    _check_affordances,
    _check_relation_refs,
    _check_lane_geometry,
    _check_lane_graph,
    _check_ego_route,
    _check_relation_geometry,
    _check_walkable_geometry,
)


def semantic_issues(template: WorldTemplate) -> list[Issue]:
    """Problems found by the first check in :data:`SEMANTIC_CHECKS` that finds any; [] when clean."""
    for check in SEMANTIC_CHECKS:
        issues = list(check(template))
        if issues:
            return issues
    return []
