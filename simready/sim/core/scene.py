"""The compiled scene: a manifest resolved against its template and catalog, validated before any stepping.

:func:`build_scene` turns (manifest θ, template B, catalog) into fixed
arrays the controllers read every tick — actor constants in sorted actor-id
order, every actor's initial path and position on it, signal states per
tick, static sight-line occluders, a ground-height raster — and raises one
:class:`~simready.common.errors.ManifestError` (field path and reason) for any
input the engine cannot honour: an unknown lane, walkable node, asset or
conflict point, a route whose lanes do not follow each other, a verb a
parked actor cannot perform, or a trigger condition that can never be
evaluated (``along_lane`` distance or headway of an actor off the lane
graph). Nothing here changes during a rollout.

Frames and units: world frame (x east, y north, z up), metres, seconds,
radians. Actor order is sorted by id everywhere (SPEC §7 determinism).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet
from numpy.typing import NDArray
from shapely.geometry import LineString, Point
from shapely.ops import unary_union

from simready.common.errors import ManifestError
from simready.common.hashing import content_hash
from simready.scenario.manifest import (
    Actor,
    ArrivalTrigger,
    AtTrigger,
    DistanceCondition,
    HeadwayCondition,
    LaneWindow,
    ReachesCondition,
    ScenarioManifest,
    WhenTrigger,
    canonicalize,
    condition_leaves,
    manifest_hash,
)
from simready.sim.core import constants as C
from simready.sim.core.reference_paths import PathKey, ReferencePath, fixed_path, lane_path, split_walk_key, walk_path
from simready.world.routing import route_issue
from simready.world.template import WorldTemplate, template_hash

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

F = NDArray[np.float64]
B = NDArray[np.bool_]

#: Catalog semantic classes that are surfaces bodies stand on (their top is the ground height).
GROUND_CLASSES = frozenset({"road", "sidewalk", "curb", "crosswalk_marking", "lane_marking", "terrain"})
GROUND_RASTER_M = 0.1
#: Region types a pedestrian's kerb leads into.
ROAD_REGION_TYPES = ("drivable", "intersection")
SIGNAL_CODES = {"green": 0, "amber": 1, "yellow": 1, "red": 2, "red_amber": 3, "off": 4}
SIGNAL_NAMES = ("green", "amber", "red", "red_amber", "off")
#: A pose further than this from its route's lane centreline is not on that route (m).
MAX_ROUTE_OFFSET_M = 3.0


def _error(m: ScenarioManifest, field_path: str, reason: str) -> ManifestError:
    return ManifestError(m.sample_id, field_path, reason)


@dataclass(frozen=True, eq=False)
class ActorTable:
    """Per-actor constants, sorted by actor id; every array is (N,).

    ``hl``/``hw``/``h``: half-length, half-width, height (m) from the
    manifest dims. ``lane_bound``: follows a lane chain (vehicles and
    cyclists that are not parked). Limits come from
    :data:`~simready.sim.core.constants.CLASS_LIMITS` with the actor's aggression
    applied; ``decel_max`` is further capped by μ·g at run time.
    """

    ids: tuple[str, ...]
    kinds: tuple[str, ...]
    roles: tuple[str, ...]
    asset_ids: tuple[str, ...]
    is_vehicle: B
    is_ped: B
    lane_bound: B
    parked: B
    ego: int | None
    hl: F
    hw: F
    h: F
    accel_max: F
    decel_comfort: F
    decel_max: F
    s0: F
    time_gap: F
    chord: F
    cruise: F
    obey_signals: B
    yield_: B
    avoid: B
    reaction_delay: F
    stop_tendency: F
    #: Background traffic (SPEC §20, tag ``background``): besides its lane chain, it also follows a vehicle that
    #: has just turned off onto a lane diverging from its own (:data:`~simready.sim.core.sight.DIVERGE_WINDOW_M`).
    background: B = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @cached_property
    def index(self) -> dict[str, int]:
        return {a: i for i, a in enumerate(self.ids)}

    @cached_property
    def radius(self) -> F:
        """Bounding-circle radius of each footprint (m)."""
        return np.hypot(self.hl, self.hw)

    @cached_property
    def py(self) -> ActorScalars:
        """The same constants as Python lists (per-tick scalar loops over ~10 actors beat numpy's per-call cost)."""
        return ActorScalars(self)

    def __len__(self) -> int:
        return len(self.ids)


class ActorScalars:
    """Per-actor constants of an :class:`ActorTable` as Python lists (floats, bools), indexed like the table.

    ``idm_root2`` is ``2·√(a_max·b_comfort)`` (m/s²), the IDM's constant
    denominator, computed exactly as the vectorized form does.
    """

    hl: list[float]
    hw: list[float]
    accel_max: list[float]
    decel_comfort: list[float]
    decel_max: list[float]
    s0: list[float]
    time_gap: list[float]
    cruise: list[float]
    is_vehicle: list[bool]
    is_ped: list[bool]
    lane_bound: list[bool]
    parked: list[bool]
    obey_signals: list[bool]
    yield_: list[bool]
    avoid: list[bool]
    idm_root2: list[float]
    peds: list[int]

    def __init__(self, a: ActorTable) -> None:
        self.n = len(a.ids)
        for name in ("hl", "hw", "accel_max", "decel_comfort", "decel_max", "s0", "time_gap", "cruise",
                     "is_vehicle", "is_ped", "lane_bound", "parked", "obey_signals", "yield_", "avoid"):
            setattr(self, name, getattr(a, name).tolist())
        self.idm_root2 = (2.0 * np.sqrt(a.accel_max * a.decel_comfort)).tolist()
        self.peds = np.flatnonzero(a.is_ped).tolist()
        self.lane_bound_count = int(np.count_nonzero(a.lane_bound))
        #: Lane-bound background actors (the ones whose pedestrian corridor may run along their path).
        self.background_lane_bound = len(a.background) != self.n or bool(np.any(a.background & a.lane_bound))


@dataclass(frozen=True, eq=False)
class GroundModel:
    """Ground height (m) on a raster of :data:`GROUND_RASTER_M` cells: the top of the highest ground asset."""

    x0: float
    y0: float
    heights: F
    #: Whether any ground tile is tilted (a street laid on a map's heights): vehicles then pitch and roll with the
    #: ground (:func:`simready.sim.core.kinematics.tilt_on_ground`); a level world's bodies stay exactly as before.
    sloped: bool = False

    @cached_property
    def _lookup(self) -> tuple[F, NDArray[np.int64], F, NDArray[np.int64]]:
        origin = np.array([self.x0, self.y0])
        top = np.array([self.heights.shape[0] - 1, self.heights.shape[1] - 1], dtype=np.int64)
        strides = np.array([self.heights.shape[1], 1], dtype=np.int64)
        return origin, top, self.heights.reshape(-1), strides

    def at(self, xy: F) -> F:
        origin, top, flat, strides = self._lookup
        cell = ((xy - origin) * (1.0 / GROUND_RASTER_M)).astype(np.int64)
        # Integer clamping: np.maximum/np.minimum are np.clip without its Python-level dispatch.
        np.minimum(np.maximum(cell, 0, out=cell), top, out=cell)
        return flat.take(cell @ strides)

    def at_point(self, x: float, y: float) -> float:
        """:meth:`at` for one point, in scalar arithmetic (the same operations, so the same cell)."""
        fx, fy = (x - self.x0) * (1.0 / GROUND_RASTER_M), (y - self.y0) * (1.0 / GROUND_RASTER_M)
        if not (math.isfinite(fx) and math.isfinite(fy)):
            return float(self.at(np.array([[x, y]]))[0])
        nx, ny = self.heights.shape
        i = min(max(int(fx), 0), nx - 1)
        j = min(max(int(fy), 0), ny - 1)
        return float(self.heights[i, j])


@dataclass(frozen=True, eq=False)
class SignalTable:
    """Signal states per tick (codes of :data:`SIGNAL_NAMES`) and the stop line of each controlled lane.

    ``states``: (ticks + 1, S) for ticks 0..warmup+clip; ``ids``: template
    signal ids, then manifest program ids; ``stop_lines``: lane id →
    ``(s of the stop line on that lane, signal column)``.
    """

    ids: tuple[str, ...]
    states: NDArray[np.int8]
    stop_lines: dict[str, tuple[float, int]]
    #: The other lanes a template signal controls, with its stop line carried across onto each (the station of
    #: the stop line's point on that lane): background traffic stops there too (SPEC §20); the scenario's actors
    #: keep the one stop line they always had.
    side_stop_lines: dict[str, tuple[float, int]] = field(default_factory=dict)

    def column(self, signal_id: str) -> int:
        return self.ids.index(signal_id)


@dataclass(frozen=True, eq=False)
class Scene:
    """Everything fixed about one rollout. Build with :func:`build_scene`."""

    manifest: ScenarioManifest
    template: WorldTemplate
    backend: str
    input_hash: str
    template_hash: str
    actors: ActorTable
    lane_ids: tuple[str, ...]
    lane_widths: F
    initial_paths: tuple[ReferencePath, ...]
    initial_u: F
    initial_d: F
    signals: SignalTable
    static_edges: tuple[F, F]
    ground: GroundModel
    bounds: tuple[float, float, float, float]
    conflict_points: dict[str, tuple[float, float]]
    kerb_regions: Any
    catalog: Catalog | None
    config: dict[str, Any]
    config_hash: str
    _paths: dict[PathKey, ReferencePath] = field(default_factory=dict, repr=False)
    #: Per (actor, path key), the actor's rows of a route table on that path (:func:`simready.sim.controllers.planner._route_row`).
    _route_rows: dict[tuple[int, PathKey], tuple[ReferencePath, tuple[Any, ...]]] = field(default_factory=dict, repr=False)

    # Cached: the manifest never changes under a scene, and the tick loop reads these several times a tick.
    @cached_property
    def dt(self) -> float:
        return float(self.manifest.dt)

    @cached_property
    def warmup_ticks(self) -> int:
        return self.manifest.warmup_ticks

    @cached_property
    def total_ticks(self) -> int:
        """Ticks stepped in a full rollout (warm-up plus clip)."""
        return self.manifest.warmup_ticks + self.manifest.clip_ticks

    @cached_property
    def lane_index(self) -> dict[str, int]:
        return {lane: i for i, lane in enumerate(self.lane_ids)}

    def path(self, key: PathKey) -> ReferencePath:
        """The path with this key (cached; built deterministically from the key)."""
        p = self._paths.get(key)
        if p is None:
            p = _path_from_key(self, key)
            self._paths[key] = p
        return p

    def lane_path(self, lanes: tuple[str, ...]) -> ReferencePath:
        p = lane_path(self.template.lane_graph, lanes, self.lane_index)
        return self._paths.setdefault(p.key, p)

    def walk_path(self, start_xy: tuple[float, float], nodes: tuple[str, ...]) -> ReferencePath:
        p = walk_path(start_xy, _expand_walk(self.template, nodes), self.template.walk_graph.nodes)
        return self._paths.setdefault(p.key, p)

    def kerb_u(self, path: ReferencePath) -> float:
        """Arc length at which a walk path first enters the roadway (inf if it never does)."""
        if self.kerb_regions is None or path.key[0] != "walk":
            return math.inf
        line = LineString(path.points)
        inside = line.intersection(self.kerb_regions)
        if inside.is_empty:
            return math.inf
        if Point(path.points[0]).within(self.kerb_regions):
            return 0.0
        return float(min(line.project(Point(c)) for g in getattr(inside, "geoms", [inside]) for c in g.coords))


def _path_from_key(scene: Scene, key: PathKey) -> ReferencePath:
    if key[0] == "lanes":
        return lane_path(scene.template.lane_graph, key[1:], scene.lane_index)
    if key[0] == "walk":
        start, via, nodes = split_walk_key(key)
        return walk_path(start, nodes, scene.template.walk_graph.nodes, via)
    if key[0] == "fixed":
        return fixed_path(key[1], key[2], key[3])
    raise KeyError(key)


def _expand_walk(template: WorldTemplate, nodes: tuple[str, ...]) -> tuple[str, ...]:
    """Consecutive walk nodes joined through the walkable graph where they are not adjacent."""
    g = template.walk_graph
    out = [nodes[0]]
    for a, b in zip(nodes, nodes[1:]):
        if g.has_edge(a, b) or a == b:
            out.append(b)
        else:
            out.extend((g.shortest_path(a, b) or [a, b])[1:])
    return tuple(out)


# --- provenance -------------------------------------------------------------------------


def physics_config(backend: str, dt: float) -> dict[str, Any]:
    """Solver settings, substeps, limits and controller versions: what the header's ``config_hash`` covers."""
    cfg: dict[str, Any] = {
        "engine_version": C.ENGINE_VERSION,
        "backend": backend,
        "dt": dt,
        "constants": C.constants_record(),
    }
    if backend == "dynamic-v1":
        cfg["dynamic"] = asdict(C.DYNAMIC_SETTINGS)
        cfg["pybullet_api"] = int(pybullet.getAPIVersion())
        cfg["substeps_per_tick"] = substeps_per_tick(dt)
    return cfg


def substeps_per_tick(dt: float) -> int:
    return max(1, round(dt / C.DYNAMIC_SETTINGS.substep_s))


# --- validation ---------------------------------------------------------------------


def _walk_floats(value: Any, path: str) -> Iterator[tuple[str, float]]:
    if isinstance(value, float):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _walk_floats(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk_floats(v, f"{path}[{i}]")


def _check_finite(m: ScenarioManifest) -> None:
    for where, value in _walk_floats(m.model_dump(mode="python", by_alias=True), ""):
        if not math.isfinite(value):
            raise _error(m, where, f"non-finite number {value!r}")


def _check_template(m: ScenarioManifest, template: WorldTemplate, t_hash: str) -> None:
    if m.template_id != template.id:
        raise _error(m, "template_id", f"manifest is for template {m.template_id!r}, got template {template.id!r}")
    if m.template_hash != t_hash:
        raise _error(m, "template_hash", f"{m.template_hash} does not match template {template.id}'s hash {t_hash}")


def _check_route(m: ScenarioManifest, template: WorldTemplate, where: str, lanes: list[str]) -> None:
    issue = route_issue(template.lane_graph, lanes)
    if issue is None:
        return
    if issue.code == "unknown_lane":
        raise _error(m, f"{where}[{issue.index}]", f"unknown lane {issue.lane!r} in template {template.id}")
    raise _error(m, f"{where}[{issue.index}]", f"lane {issue.lane!r} does not follow {issue.previous!r} on the lane graph")


def _check_nodes(m: ScenarioManifest, template: WorldTemplate, where: str, nodes: list[str]) -> None:
    g = template.walk_graph
    for k, node in enumerate(nodes):
        if node not in g.nodes:
            raise _error(m, f"{where}[{k}]", f"unknown walkable node {node!r} in template {template.id}")
        if k and g.shortest_path(nodes[k - 1], node) is None:
            raise _error(m, f"{where}[{k}]", f"walkable node {node!r} is not reachable from {nodes[k - 1]!r}")


def _check_lane(m: ScenarioManifest, template: WorldTemplate, where: str, lane: str) -> None:
    if lane not in template.lane_graph.lanes:
        raise _error(m, where, f"unknown lane {lane!r} in template {template.id}")


def _resolve_conflict_point(template: WorldTemplate, name: str) -> tuple[float, float] | None:
    """A template place named ``name``: a walkable node, a region (its centroid) or an instance."""
    if name in template.walk_graph.nodes:
        return template.walk_graph.nodes[name]
    if name in template.region_by_id:
        c = template.region_by_id[name].shape.centroid
        return float(c.x), float(c.y)
    if name in template.instance_by_name:
        pose = template.instance_by_name[name].pose
        return float(pose.x), float(pose.y)
    return None


def _validate(m: ScenarioManifest, template: WorldTemplate, catalog: Catalog | None) -> dict[str, tuple[float, float]]:
    """Every reference resolves and every trigger can be evaluated; returns the resolved conflict points."""
    _check_finite(m)
    actors = {a.id: a for a in m.actors}
    for i, a in enumerate(m.actors):
        where = f"actors[{i}]"
        if catalog is not None and a.asset_id not in catalog.entries:
            raise _error(m, f"{where}.asset_id", f"unknown asset {a.asset_id} (not in the catalog)")
        if a.initial.lane_ref is not None:
            _check_lane(m, template, f"{where}.initial.lane_ref.lane", a.initial.lane_ref.lane)
        _check_route(m, template, f"{where}.behavior.route", list(a.behavior.route))
        ref = a.initial.lane_ref
        if ref is not None and a.behavior.route and ref.lane not in a.behavior.route:
            raise _error(m, f"{where}.initial.lane_ref.lane", f"lane {ref.lane!r} is not on behavior.route")
        if a.walk is not None:
            _check_nodes(m, template, f"{where}.walk.route", list(a.walk.route))
    for k, prog in enumerate(m.signal_programs):
        for j, lane in enumerate(prog.controls):
            _check_lane(m, template, f"signal_programs[{k}].controls[{j}]", lane)
    points: dict[str, tuple[float, float]] = {}
    lane_bound = {a.id for a in m.actors if a.kind != "pedestrian" and a.role != "parked"}
    for i, inter in enumerate(m.interactions):
        where = f"interactions[{i}]"
        actor = actors.get(inter.actor_id) if inter.actor_id is not None else None
        if actor is not None and actor.role == "parked" and inter.verb in ("speed", "gap", "change_lane", "lane_offset", "route"):
            raise _error(m, f"{where}.{inter.verb}", f"actor {actor.id!r} is parked: it never moves")
        if actor is not None and actor.kind == "pedestrian" and inter.verb in ("gap", "change_lane", "lane_offset"):
            raise _error(m, f"{where}.{inter.verb}", f"a pedestrian has no lane for verb {inter.verb}")
        if inter.change_lane is not None and inter.change_lane.lane is not None:
            _check_lane(m, template, f"{where}.change_lane.lane", inter.change_lane.lane)
        if inter.route is not None:
            if inter.route.lanes is not None:
                for j, lane in enumerate(inter.route.lanes):
                    _check_lane(m, template, f"{where}.route.lanes[{j}]", lane)
            else:
                _check_nodes(m, template, f"{where}.route.nodes", list(inter.route.nodes or []))
        for name, trig in (("trigger", inter.trigger), ("until", inter.until)):
            if isinstance(trig, ArrivalTrigger):
                if trig.conflict_point is not None:
                    p = _resolve_conflict_point(template, trig.conflict_point)
                    if p is None:
                        raise _error(m, f"{where}.{name}.conflict_point",
                                     f"unknown conflict point {trig.conflict_point!r}: not a walkable node, region or instance of {template.id}")
                    points[trig.conflict_point] = p
                if actors[trig.sync_with].role == "parked":
                    raise _error(m, f"{where}.{name}.sync_with", "a parked actor never arrives: the trigger can never be evaluated")
            if not isinstance(trig, WhenTrigger):
                continue
            for leaf_path, leaf in condition_leaves(trig.condition, f"{where}.{name}.condition"):
                if isinstance(leaf, DistanceCondition) and leaf.metric == "along_lane" or isinstance(leaf, HeadwayCondition):
                    for role in ("a", "b"):
                        if getattr(leaf, role) not in lane_bound:
                            what = "headway" if isinstance(leaf, HeadwayCondition) else "along_lane distance"
                            raise _error(m, f"{leaf_path}.{role}",
                                         f"{what} needs actors on the lane graph; {getattr(leaf, role)!r} is not: the condition can never be evaluated")
                if isinstance(leaf, ReachesCondition) and isinstance(leaf.region, LaneWindow):
                    _check_lane(m, template, f"{leaf_path}.region.lane", leaf.region.lane)
    return points


# --- construction ---------------------------------------------------------------------------


def _actor_table(m: ScenarioManifest) -> ActorTable:
    actors = sorted(m.actors, key=lambda a: a.id)

    def arr(fn: Any, dtype: Any = np.float64) -> NDArray[Any]:
        out = np.array([fn(a) for a in actors], dtype=dtype)
        out.setflags(write=False)
        return out

    limits = [C.CLASS_LIMITS[a.kind] for a in actors]
    aggression = np.array([a.behavior.rules.aggression for a in actors])
    ego = next((i for i, a in enumerate(actors) if a.role == "ego"), None)
    cruise = [a.behavior.cruise_speed_mps if a.behavior.cruise_speed_mps is not None else a.initial.speed_mps for a in actors]
    return ActorTable(
        ids=tuple(a.id for a in actors),
        kinds=tuple(a.kind for a in actors),
        roles=tuple(a.role for a in actors),
        asset_ids=tuple(a.asset_id for a in actors),
        is_vehicle=arr(lambda a: a.kind == "vehicle", bool),
        is_ped=arr(lambda a: a.kind == "pedestrian", bool),
        lane_bound=arr(lambda a: a.kind != "pedestrian" and a.role != "parked", bool),
        parked=arr(lambda a: a.role == "parked", bool),
        ego=ego,
        hl=arr(lambda a: a.dims.l / 2),
        hw=arr(lambda a: a.dims.w / 2),
        h=arr(lambda a: a.dims.h),
        accel_max=_own(actors, "accel_max_mps2", np.array([lim.accel_max for lim in limits])),
        decel_comfort=_own(actors, "decel_comfort_mps2",
                           np.array([lim.decel_comfort for lim in limits]) * (1.0 + aggression)),
        decel_max=np.array([lim.decel_max for lim in limits]),
        s0=_own(actors, "s0_m", np.array([lim.s0_m for lim in limits])),
        time_gap=_own(actors, "time_gap_s", np.array([lim.time_gap_s for lim in limits]) * (1.0 - 0.5 * aggression)),
        chord=np.array([min(lim.yaw_chord_m, 0.6 * a.dims.l) for lim, a in zip(limits, actors)]),
        cruise=np.array(cruise, dtype=np.float64),
        obey_signals=arr(lambda a: a.behavior.rules.obey_signals, bool),
        yield_=arr(lambda a: a.behavior.rules.yield_, bool),
        avoid=arr(lambda a: a.behavior.rules.collision_avoidance, bool),
        reaction_delay=arr(lambda a: a.walk.reaction_delay_s if a.walk else math.nan),
        stop_tendency=arr(lambda a: a.walk.stop_tendency if a.walk else math.nan),
        background=arr(lambda a: "background" in a.tags, bool),
    )


def _own(actors: list[Any], name: str, default: NDArray[Any]) -> NDArray[Any]:
    """``default`` with each actor's own car-following parameter ``name`` (``behavior.idm``) where it gives them."""
    if all(a.behavior.idm is None for a in actors):
        return default
    return np.array([float(getattr(a.behavior.idm, name)) if a.behavior.idm is not None else float(d)
                     for a, d in zip(actors, default.tolist())])


def _initial_path(m: ScenarioManifest, template: WorldTemplate, lane_index: dict[str, int], actor: Actor,
                  where: str) -> tuple[ReferencePath, float, float]:
    pose = actor.initial.pose
    if actor.role == "parked":
        return fixed_path(pose.x, pose.y, pose.yaw), 0.0, 0.0
    if actor.kind == "pedestrian":
        walk = actor.walk
        assert walk is not None  # a pedestrian has a walk block (the actor's validator)
        keep = float(walk.keep_right_m)
        # A pedestrian keeping right walks a line that far to the left of its pose (left of its heading).
        # (Rounded as the path's key rounds it, so that a path rebuilt from its key is this one.)
        start = (pose.x, pose.y) if not keep else (round(pose.x - keep * math.sin(pose.yaw), 9),
                                                   round(pose.y + keep * math.cos(pose.yaw), 9))
        p = walk_path(start, _expand_walk(template, tuple(walk.route)), template.walk_graph.nodes,
                      tuple((v.x, v.y) for v in walk.via))
        return p, 0.0, -keep if keep else 0.0
    graph = template.lane_graph
    route = list(actor.behavior.route)
    ref = actor.initial.lane_ref
    if ref is not None:
        route = route[route.index(ref.lane):] if route else [ref.lane]
    elif not route:
        lane, _, _ = graph.nearest(pose.x, pose.y, pose.yaw, kinds=("driving", "turn"))
        route = [lane]
    p = lane_path(graph, route, lane_index)
    u, d = p.project(pose.x, pose.y)
    if abs(d) > MAX_ROUTE_OFFSET_M or u < -MAX_ROUTE_OFFSET_M:
        raise _error(m, f"{where}.initial.pose", f"pose is {abs(d):.2f} m off its route's first lane {route[0]!r}")
    return p, u, d


def _signal_table(m: ScenarioManifest, template: WorldTemplate) -> SignalTable:
    ticks = m.warmup_ticks + m.clip_ticks
    t = (np.arange(ticks + 1) - m.warmup_ticks) * m.dt
    cols: list[NDArray[np.int8]] = []
    ids: list[str] = []
    stop_lines: dict[str, tuple[float, int]] = {}
    side_stop_lines: dict[str, tuple[float, int]] = {}
    template_stop: dict[str, float] = {}
    for sig in sorted(template.signals, key=lambda s: s.id):
        col = len(ids)
        ids.append(sig.id)
        cols.append(np.array([SIGNAL_CODES[sig.state_at(float(x))] for x in t], dtype=np.int8))
        template_stop[sig.stop_line.lane] = sig.stop_line.s_m
        stop_xy = template.lane_graph.lanes[sig.stop_line.lane].point_at(sig.stop_line.s_m)
        for lane in sig.controls:
            if lane == sig.stop_line.lane:
                stop_lines[lane] = (sig.stop_line.s_m, col)
            elif lane in template.lane_graph.lanes:
                side_stop_lines[lane] = (template.lane_graph.lanes[lane].project(*stop_xy)[0], col)
    graph = template.lane_graph
    for prog in sorted(m.signal_programs, key=lambda s: s.id):
        col = len(ids)
        ids.append(prog.id)
        edges = np.cumsum([0.0] + [p.duration_s for p in prog.phases])
        codes = np.array([SIGNAL_CODES[p.state] for p in prog.phases], dtype=np.int8)
        phase_t = np.mod(t + prog.offset_s, prog.cycle_s)
        k = np.clip(np.searchsorted(edges, phase_t, side="right") - 1, 0, len(codes) - 1)
        cols.append(codes[k])
        for lane in prog.controls:
            s_stop = template_stop.get(lane, max(graph.lanes[lane].length_m - 1.0, 0.0))
            stop_lines[lane] = (s_stop, col)
    states = np.stack(cols, 1) if cols else np.zeros((ticks + 1, 0), dtype=np.int8)
    states.setflags(write=False)
    return SignalTable(tuple(ids), states, stop_lines,
                       {k: v for k, v in sorted(side_stop_lines.items()) if k not in stop_lines})


def _static_edges(m: ScenarioManifest, template: WorldTemplate) -> tuple[F, F]:
    """Sight-line blocking edges: building regions and the manifest's box occluders."""
    e0: list[tuple[float, float]] = []
    e1: list[tuple[float, float]] = []
    for r in sorted(template.regions, key=lambda r: r.id):
        if r.type == "building":
            pts = list(r.polygon)
            for a, b in zip(pts, pts[1:] + pts[:1]):
                e0.append(a)
                e1.append(b)
    for occ in sorted(m.occluders, key=lambda o: o.id):
        if occ.pose is None or occ.dims is None:
            continue
        c, s = math.cos(occ.pose.yaw), math.sin(occ.pose.yaw)
        hl, hw = occ.dims.l / 2, occ.dims.w / 2
        pts = [(occ.pose.x + c * sx * hl - s * sy * hw, occ.pose.y + s * sx * hl + c * sy * hw)
               for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
        for a, b in zip(pts, pts[1:] + pts[:1]):
            e0.append(a)
            e1.append(b)
    return np.array(e0, dtype=np.float64).reshape(-1, 2), np.array(e1, dtype=np.float64).reshape(-1, 2)


_GROUND_CACHE: dict[Any, GroundModel] = {}


def _ground_key(template: WorldTemplate, t_hash: str, catalog: Catalog | None) -> Any:
    """Everything the ground raster depends on: the world (by content hash) and the ground assets' catalog data."""
    if catalog is None:
        return (t_hash, None)
    assets = []
    for asset in {inst.asset for inst in template.instances}:  # each asset once (an imported street has thousands)
        entry = catalog.entries.get(asset)
        if entry is not None and entry.semantic_class in GROUND_CLASSES:
            assets.append((asset, repr(entry.render_bounds_m)))
    return (t_hash, tuple(sorted(assets)))


def _cached_ground_model(template: WorldTemplate, t_hash: str, catalog: Catalog | None) -> GroundModel:
    """:func:`_ground_model`, reused across scenes of the same world (the raster is read-only)."""
    key = _ground_key(template, t_hash, catalog)
    hit = _GROUND_CACHE.get(key)
    if hit is None:
        if len(_GROUND_CACHE) > 8:
            _GROUND_CACHE.clear()
        hit = _GROUND_CACHE[key] = _ground_model(template, catalog)
    return hit


def _ground_model(template: WorldTemplate, catalog: Catalog | None) -> GroundModel:
    xmin, ymin, xmax, ymax = template.bounds
    nx = int(math.ceil((xmax - xmin) / GROUND_RASTER_M)) + 1
    ny = int(math.ceil((ymax - ymin) / GROUND_RASTER_M)) + 1
    heights = np.zeros((nx, ny))
    sloped = False
    if catalog is not None:
        gx = xmin + (np.arange(nx) + 0.5) * GROUND_RASTER_M
        gy = ymin + (np.arange(ny) + 0.5) * GROUND_RASTER_M
        for inst in sorted(template.instances, key=lambda i: i.name):
            entry = catalog.entries.get(inst.asset)
            if entry is None or entry.semantic_class not in GROUND_CLASSES:
                continue
            (bx0, by0, _), (bx1, by1, bz1) = entry.render_bounds_m
            yaw = inst.pose.yaw_rad
            c, s = math.cos(yaw), math.sin(yaw)
            corners = [(inst.pose.x + c * x - s * y, inst.pose.y + s * x + c * y) for x in (bx0, bx1) for y in (by0, by1)]
            xs, ys = zip(*corners)
            ix = slice(max(int((min(xs) - xmin) / GROUND_RASTER_M), 0), min(int((max(xs) - xmin) / GROUND_RASTER_M) + 2, nx))
            iy = slice(max(int((min(ys) - ymin) / GROUND_RASTER_M), 0), min(int((max(ys) - ymin) / GROUND_RASTER_M) + 2, ny))
            px, py = np.meshgrid(gx[ix] - inst.pose.x, gy[iy] - inst.pose.y, indexing="ij")
            lx, ly = c * px + s * py, -s * px + c * py
            inside = (lx >= bx0) & (lx <= bx1) & (ly >= by0) & (ly <= by1)
            block = heights[ix, iy]
            if inst.pose.level:
                top = inst.pose.z + bz1
            else:
                sloped = True
                # A tile tilted onto a sloped road (simready.world.street): its top face's plane at each cell
                # (the footprint test above reads the tilt's projection as level: a second-order error).
                R = inst.pose.rotation()
                n = R[:, 2]
                p0 = np.array([inst.pose.x, inst.pose.y, inst.pose.z]) + R @ np.array([0.0, 0.0, bz1])
                top = p0[2] - (n[0] * (px + inst.pose.x - p0[0]) + n[1] * (py + inst.pose.y - p0[1])) / n[2]
            heights[ix, iy] = np.where(inside, np.maximum(block, top), block)
    heights.setflags(write=False)
    return GroundModel(xmin, ymin, heights, sloped)


def build_scene(manifest: ScenarioManifest, template: WorldTemplate, *, backend: str, catalog: Catalog | None = None) -> Scene:
    """Validate and compile; any input problem raises :class:`ManifestError` before a single tick is stepped."""
    if backend not in C.BACKENDS:
        raise ManifestError(manifest.sample_id, "backend", f"unknown backend {backend!r}; known: {', '.join(C.BACKENDS)}")
    t_hash = template_hash(template)  # kept per template object (simready.world.template)
    # Validate in declaration order, so error paths index the user's own lists.
    _check_template(manifest, template, t_hash)
    points = _validate(manifest, template, catalog)
    m = canonicalize(manifest)
    actors = _actor_table(m)
    lane_ids = tuple(template.lane_graph.lanes)
    lane_index = {lane: i for i, lane in enumerate(lane_ids)}
    by_id = {a.id: (i, a) for i, a in enumerate(manifest.actors)}
    paths, us, ds = [], [], []
    for actor_id in actors.ids:
        i, a = by_id[actor_id]
        p, u, d = _initial_path(m, template, lane_index, a, f"actors[{i}]")
        paths.append(p)
        us.append(u)
        ds.append(d)
    roads = [r.shape for r in template.regions if r.type in ROAD_REGION_TYPES]
    cfg = physics_config(backend, float(m.dt))
    scene = Scene(
        manifest=m,
        template=template,
        backend=backend,
        input_hash=manifest_hash(m),
        template_hash=t_hash,
        actors=actors,
        lane_ids=lane_ids,
        lane_widths=np.array([template.lane_graph.lanes[lane].width_m for lane in lane_ids]),
        initial_paths=tuple(paths),
        initial_u=np.array(us),
        initial_d=np.array(ds),
        signals=_signal_table(m, template),
        static_edges=_static_edges(m, template),
        ground=_cached_ground_model(template, t_hash, catalog),
        bounds=template.bounds,
        conflict_points=points,
        kerb_regions=unary_union(roads).buffer(0.01) if roads else None,
        catalog=catalog,
        config=cfg,
        config_hash=content_hash(cfg),
    )
    for p in paths:
        scene._paths.setdefault(p.key, p)
    return scene


def lane_window_contains(scene: Scene, window: LaneWindow, xy: tuple[float, float]) -> bool:
    geom = scene.template.lane_graph.lanes[window.lane]
    s, t = geom.project(*xy)
    return window.s_from <= s < window.s_to and abs(t) <= geom.width_m / 2


def at_tick(scene: Scene, trigger: AtTrigger) -> int:
    """The tick an ``at`` trigger fires: the first tick whose scenario time reaches ``t_s``."""
    return scene.warmup_ticks + int(math.ceil(trigger.t_s / scene.dt - 1e-9))
