"""The route table: what a tick's plan reads of every actor's path, fixed while the paths are (stop lines, yield
points, and for background traffic its turns, parked vehicles, conflict areas and crossing), with the
kernel's per-actor constants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.common.memo import once_per_object
from simready.sim.behavior import junctions, walkers
from simready.sim.core import planner_kernels as pk
from simready.sim.core.reference_paths import PathTable, ReferencePath
from simready.sim.core.scene import ActorTable, Scene
from simready.world.lane_graph import lane_network

F = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class RouteTable:
    """A :class:`PathTable` plus each path's stop lines ahead: ``stop_u`` (N, K) and ``stop_col`` (N, K), −1 padded."""

    paths: PathTable
    stop_u: F
    stop_col: NDArray[np.int64]
    #: Per path: ``(u of the conflict point, priority lane, s on it, u of the waiting point)`` where it yields.
    conflicts: tuple[tuple[tuple[float, str, float, float], ...], ...]
    #: (9, N) per-actor constants of the planner kernel (rows :data:`simready.sim.core.planner_kernels.HL` … ``OBEYS``).
    consts: F
    #: (5, N) the kernel's references before goals and stationary obstacles fill them (rows ``V_REF`` … ``FIXED_GAP``)
    refs0: F
    #: Perception tuples carried over between perception ticks, as arrays (see :func:`~.perception.held`).
    memo: dict[str, tuple[tuple[object, ...], NDArray[np.int64]]] = field(default_factory=dict, repr=False)
    #: Per background actor (index), the turns on its path: ``(u where the turn starts, u where it ends, speed
    #: through it m/s)`` (:func:`curve_zones`); other actors have none.
    curves: dict[int, tuple[tuple[float, float, float], ...]] = field(default_factory=dict)
    #: Per background actor (index), where the parked vehicles that stand in its path begin (u of their rear,
    #: sorted; :func:`parked_obstacles`): stationary obstacles it stops behind.
    parked: dict[int, tuple[float, ...]] = field(default_factory=dict)
    #: Per background actor (index), the conflict areas on its path: ``(u where the area begins on it, u where it
    #: ends, other lane's index, the area's s-window on that lane)`` (:func:`conflict_boxes`), sorted.
    boxes: dict[int, tuple[tuple[float, float, int, float, float], ...]] = field(default_factory=dict)
    #: Whether any actor is background traffic (SPEC §20).
    any_background: bool = False
    #: Per background pedestrian (index), its path's crossing (:func:`simready.sim.behavior.walkers.crossing`; None: it
    #: crosses no roadway): these take the kerb by :func:`simready.sim.behavior.walkers.update`.
    walking: dict[int, walkers.Crossing | None] = field(default_factory=dict)

    @classmethod
    def build(cls, scene: Scene, paths: tuple[ReferencePath, ...]) -> RouteTable:
        a = scene.actors
        rows = [_route_row(scene, i, p) for i, p in enumerate(paths)]
        stops = [r[0] for r in rows]
        k = max((len(r) for r in stops), default=0)
        stop_u = np.full((len(paths), k), np.inf)
        stop_col = np.full((len(paths), k), -1, dtype=np.int64)
        for i, row in enumerate(stops):
            for j, (u, col) in enumerate(row):
                stop_u[i, j], stop_col[i, j] = u, col
        background = np.flatnonzero(a.background).tolist()
        curves = {i: rows[i][2] for i in background if rows[i][2]}
        parked = {i: rows[i][3] for i in background if rows[i][3]}
        boxes = {i: rows[i][4] for i in background if rows[i][4]}
        walking = {i: rows[i][5] for i in np.flatnonzero(a.background & a.is_ped).tolist()}
        return cls(PathTable.build(paths, scene.lane_ids, scene.actors.chord), stop_u, stop_col,
                   tuple(r[1] for r in rows), actor_consts(a), references(a), curves=curves, parked=parked, boxes=boxes,
                   any_background=bool(a.background.any()), walking=walking)


def _route_row(scene: Scene, i: int, p: ReferencePath) -> tuple[Any, ...]:
    """Actor ``i``'s rows of a :class:`RouteTable` on path ``p``: its stop lines, yield points, and (background
    actors) turns, parked vehicles, conflict areas and crossing. They depend on the actor and the path alone, so they
    are kept per scene (a route rebuilt after one actor's change of path recomputes that actor's rows only)."""
    memo = scene._route_rows
    key = (i, p.key)
    hit = memo.get(key)
    if hit is not None and hit[0] is p:
        return hit[1]
    graph = scene.template.lane_graph
    a = scene.actors
    row = []
    side = scene.signals.side_stop_lines if a.background[i] else {}
    for lane, u0 in zip(p.lanes, p.lane_u0):
        stop = scene.signals.stop_lines.get(lane) or side.get(lane)
        if stop is not None:
            row.append((u0 + stop[0], stop[1]))
    if a.background[i]:
        # Background traffic yields by the lane graph's right of way (SPEC §18): every conflict area of a
        # junction where its lane is not the priority one (turn rank, then the vehicle from the right).
        mine = sorted((u0 + s_mine, other, s_other) for lane, u0 in zip(p.lanes, p.lane_u0)
                      for s_mine, other, s_other in network_yields(scene.template).get(lane, ()))
    else:
        by_lane = junctions.lane_conflicts(graph)
        mine = [(u0 + c.s, c.other, c.s_other) for lane, u0 in zip(p.lanes, p.lane_u0)
                for c in by_lane.get(lane, ())]
    # Waiting points only matter to actors that yield; others never read them.
    conflicts = tuple((u_x, other, s_other,
                       junctions.waiting_point(graph, p, u_x, other, float(a.hl[i]), float(a.hw[i]), float(a.chord[i]))
                       if a.yield_[i] and a.lane_bound[i] else u_x - junctions.STOP_BEFORE_M)
                      for u_x, other, s_other in mine)
    curves = parked = boxes = walking = None
    if a.background[i]:
        curves, parked, boxes = curve_zones(scene.template, p), parked_obstacles(scene, p, i), conflict_boxes(scene, p)
        if conflicts:
            # A background vehicle waits clear of every earlier conflict area of its path, not with its body in one.
            conflicts = tuple((u_x, other, s_other, clear_of_boxes(u_w, u_x, scene.lane_index[other], float(a.hl[i]),
                                                                   boxes))
                              for u_x, other, s_other, u_w in conflicts)
        if a.is_ped[i]:
            walking = walkers.crossing(scene, p)
    out = (row, conflicts, curves, parked, boxes, walking)
    memo[key] = (p, out)
    return out


def network_yields(template: object) -> dict[str, tuple[tuple[float, str, float], ...]]:
    """Per junction lane, ``(s of the conflict point on it, priority lane, s on that lane)`` of each conflict of the
    lane graph (:class:`simready.world.lane_graph.LaneNetwork`) where it gives way; cached per template object."""
    def build() -> dict[str, tuple[tuple[float, str, float], ...]]:
        out: dict[str, list[tuple[float, str, float]]] = {}
        for c in lane_network(template).conflicts:  # type: ignore[arg-type]
            for lane, s_lane, other, s_other in ((c.a, c.s_a_m, c.b, c.s_b_m), (c.b, c.s_b_m, c.a, c.s_a_m)):
                if c.yields(lane):
                    out.setdefault(lane, []).append((s_lane, other, s_other))
        return {k: tuple(sorted(v)) for k, v in out.items()}

    return once_per_object(_NETWORK_YIELDS, template, build, limit=32)


_NETWORK_YIELDS: dict[int, tuple[object, dict[str, tuple[tuple[float, str, float], ...]]]] = {}

#: Lateral acceleration a background vehicle accepts through a junction turn (m/s²): its speed through a turn of
#: radius R is √(a·R). Here rather than in :mod:`simready.sim.core.constants` (hashed into every trace's header): only
#: background traffic reads it.
TURN_LATERAL_ACCEL_MPS2 = 2.5


def curve_zones(template: object, path: ReferencePath) -> tuple[tuple[float, float, float], ...]:
    """The junction turns on ``path``: ``(u start, u end, √(a_lat·R))`` with R = the lane's length over its heading
    change (:data:`TURN_LATERAL_ACCEL_MPS2`)."""
    net = lane_network(template)  # type: ignore[arg-type]
    out = []
    for lane, u0 in zip(path.lanes, path.lane_u0):
        if net.turn(lane) == "straight":
            continue
        g = net.graph.lanes[lane]
        change = abs((g.end_yaw_rad - g.start_yaw_rad + math.pi) % (2 * math.pi) - math.pi)
        radius = g.length_m / max(change, 1e-6)
        out.append((u0, u0 + g.length_m, math.sqrt(TURN_LATERAL_ACCEL_MPS2 * radius)))
    return tuple(out)


#: A parked vehicle is in a background vehicle's path when their footprints, side by side on it, overlap by more
#: than this (m).
PARKED_OVERLAP_M = 0.1


def parked_obstacles(scene: Scene, path: ReferencePath, i: int) -> tuple[float, ...]:
    """u of the rear of each parked vehicle standing in actor ``i``'s path (its footprint, projected on the path,
    overlapping the actor's width), sorted; from the manifest's poses (a parked vehicle stays where it is)."""
    a = scene.actors
    by_id = {actor.id: actor for actor in scene.manifest.actors}
    out = []
    for k in np.flatnonzero(a.parked).tolist():
        pose = by_id[a.ids[k]].initial.pose
        u, d = path.project(pose.x, pose.y)
        if 0.0 < u < path.length_m and abs(d) < float(a.hw[i] + a.hw[k]) - PARKED_OVERLAP_M:
            out.append(u - float(a.hl[k]))
    return tuple(sorted(out))


#: A background vehicle stops this far before a conflict area another vehicle occupies (m).
BOX_STANDOFF_M = 1.0


def conflict_boxes(scene: Scene, path: ReferencePath) -> tuple[tuple[float, float, int, float, float], ...]:
    """Every conflict area of the lane graph on ``path``, whoever has the right of way (see :attr:`RouteTable.boxes`)."""
    net = lane_network(scene.template)
    out = []
    for lane, u0 in zip(path.lanes, path.lane_u0):
        for c in net.conflicts_of(lane):
            mine, theirs, other = (c.window_a_m, c.window_b_m, c.b) if lane == c.a else (c.window_b_m, c.window_a_m, c.a)
            out.append((u0 + mine[0], u0 + mine[1], scene.lane_index[other], theirs[0], theirs[1]))
    return tuple(sorted(out))


def clear_of_boxes(u_wait: float, u_x: float, other: int, hl: float,
                   boxes: tuple[tuple[float, float, int, float, float], ...]) -> float:
    """A background vehicle's waiting point for the conflict at ``u_x`` (with lane index ``other``) moved back so
    that its body waits in no earlier conflict area of its path (another lane's, beginning before ``u_x``): it
    waits :data:`BOX_STANDOFF_M` before that area instead.

    Why: waiting for a conflict deep in a junction with its nose at the point the lane graph gives, a vehicle
    with the right of way over the crossing lane before it stood in that lane's area, and the scenario's
    oncoming car (which neither yields nor avoids, by its program) drove into it (the dense sweep, issue 31)."""
    moved = True
    while moved:
        moved = False
        for u_in, u_out, lane, _lo, _hi in boxes:
            if lane != other and u_in < u_x and u_in < u_wait and u_out > u_wait - 2.0 * hl:
                u_wait = u_in - BOX_STANDOFF_M
                moved = True
    return u_wait


def actor_consts(a: ActorTable) -> F:
    """The kernel's per-actor constants: half length, s0, time gap, limits, IDM denominator, parked, obeys signals."""
    out = np.empty((9, len(a)))
    out[pk.HL], out[pk.S0], out[pk.TIME_GAP], out[pk.ACCEL_MAX] = a.hl, a.s0, a.time_gap, a.accel_max
    out[pk.IDM_ROOT2], out[pk.DECEL_COMFORT], out[pk.DECEL_MAX] = a.py.idm_root2, a.decel_comfort, a.decel_max
    out[pk.PARKED], out[pk.OBEYS] = a.parked, a.obey_signals & a.lane_bound
    return out


def references(a: ActorTable) -> F:
    """The references without goals: cruise speed, no feed-forward, no command, no gap verb, no stationary obstacle."""
    out = np.full((5, len(a)), np.inf)
    out[pk.V_REF], out[pk.A_FF] = a.cruise, 0.0
    return out
