"""One tick's plan for every actor, from one snapshot (SPEC §7 plan-then-apply, SPEC §8 controllers).

For each actor the planner finds the nearest obstacle ahead on its path —
a leader on its lane chain, the stop line of a red (or, when it can still
stop comfortably, amber) signal if it obeys signals, a visible pedestrian
in or (if it yields) about to enter its corridor, the end of a walk route,
the kerb a waiting pedestrian stands at — and combines the IDM braking
term for it with tracking of the reference speed its longitudinal goal
sets; a yielding vehicle also treats the waiting point before a junction
conflict as an obstacle while a priority vehicle is due there
(:mod:`simready.sim.behavior.junctions`). Commanded branch actions (``brake``,
``coast``) bypass all of it. The ego's
command then passes through its actuation delay. Lateral references come
from the actors' lateral goals. Nothing here reads a state other than the
view's, so the order actors are planned in cannot matter.

The per-actor arithmetic — obstacle gaps, IDM, rest handling, limits — and
the perception geometry run in the compiled kernels of
:mod:`simready.sim.core.planner_kernels` (bit for bit the vectorized and scalar forms they
replace); what stays here is the goals, the pedestrians' kerb decisions and
the ego's actuation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.sim.core import constants as C
from simready.sim.behavior import junctions, walkers
from simready.sim.core import planner_kernels as pk
from simready.sim.controllers import actuation, lateral, longitudinal, pedestrian
from simready.sim.core.sight import TickView, leader_u0
from simready.sim.core.reference_paths import PathTable, ReferencePath
from simready.sim.core.scene import ActorTable, Scene
from simready.sim.core.state import ControlState, GapGoal, PedMemory, set_indices, with_changes
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
    #: Perception tuples carried over between perception ticks, as arrays (see :func:`_held`).
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
                   tuple(r[1] for r in rows), _actor_consts(a), _references(a), curves=curves, parked=parked, boxes=boxes,
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
    hit = _NETWORK_YIELDS.get(id(template))
    if hit is None or hit[0] is not template:
        out: dict[str, list[tuple[float, str, float]]] = {}
        for c in lane_network(template).conflicts:  # type: ignore[arg-type]
            for lane, s_lane, other, s_other in ((c.a, c.s_a_m, c.b, c.s_b_m), (c.b, c.s_b_m, c.a, c.s_a_m)):
                if c.yields(lane):
                    out.setdefault(lane, []).append((s_lane, other, s_other))
        if len(_NETWORK_YIELDS) > 32:
            _NETWORK_YIELDS.clear()
        hit = (template, {k: tuple(sorted(v)) for k, v in out.items()})
        _NETWORK_YIELDS[id(template)] = hit
    return hit[1]


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


def _box_gaps(view: TickView, route: RouteTable, fixed: F) -> None:
    """Gaps (m) into ``fixed`` to the nearest conflict area ahead that another vehicle's body is in (a background
    vehicle does not drive into a car waiting or crawling across its path, right of way or not)."""
    actors = view.scene.actors
    a = actors.py
    u = view.u_py
    lane, s = view.lanes
    occupied: dict[int, list[tuple[float, float, int]]] = {}
    # The lane-bound actors on a lane, their rear and nose (s ∓ half length, elementwise: the scalar loop's bits).
    on = np.flatnonzero((lane >= 0) & view.present & actors.lane_bound)
    hl = actors.hl[on]
    for j, lj, rear, nose in zip(on.tolist(), lane[on].tolist(), (s[on] - hl).tolist(), (s[on] + hl).tolist()):
        occupied.setdefault(lj, []).append((rear, nose, j))
    for i, boxes in route.boxes.items():
        front = u[i] + a.hl[i]
        for u_in, u_out, other, lo, hi in boxes:  # sorted by u_in
            if u_in - front > junctions.CONFLICT_LOOKAHEAD_M:
                break
            if u_in < front:
                continue  # already in (or past) the area: drive on and clear it
            if any(j != i and rear < hi and nose > lo for rear, nose, j in occupied.get(other, ())):
                g = u_in - front - BOX_STANDOFF_M
                if g < fixed[i]:
                    fixed[i] = g
                break


def _old_lane_gaps(view: TickView, fixed: F) -> None:
    """Gaps (m) into ``fixed`` that keep a background vehicle in a discretionary lane change behind the traffic ahead
    on the lane it leaves: the gap to the nearest vehicle ahead there, scaled so that the IDM term for a stationary
    obstacle at it equals the term for that vehicle at its speed (the kernel treats ``fixed`` as stationary)."""
    scene = view.scene
    a = scene.actors.py
    lateral = view.state.control.lateral
    lane, s = view.lanes
    v = view.v.tolist()
    for i in scene.actors.background.nonzero()[0].tolist():
        goal = lateral[i]
        if goal is None or goal.kind != "change_lane" or not (goal.owner or "").startswith(_MOBIL):
            continue
        old = (goal.owner or "")[len(_MOBIL):]
        col = scene.lane_index.get(old)
        if col is None:
            continue
        # Same-direction neighbours run side by side (the lane graph's neighbour rule): s on the new lane stands
        # for s on the old one.
        s_i = float(s[i])
        best, v_j = math.inf, 0.0
        for j in np.flatnonzero((lane == col) & view.present).tolist():
            g = float(s[j]) - s_i - a.hl[i] - a.hl[j]
            if j != i and float(s[j]) > s_i and g < best:
                best, v_j = g, v[j]
        if not math.isfinite(best):
            continue
        star_0 = a.s0[i] + max(0.0, v[i] * a.time_gap[i] + v[i] * v[i] / a.idm_root2[i])
        star_j = a.s0[i] + max(0.0, v[i] * a.time_gap[i] + v[i] * (v[i] - v_j) / a.idm_root2[i])
        g = best * star_0 / star_j if best > 0.0 else best
        if g < fixed[i]:
            fixed[i] = g


_MOBIL = "mobil:"


def _parked_gaps(view: TickView, route: RouteTable, fixed: F) -> None:
    """Gaps (m) into ``fixed`` to the nearest parked vehicle ahead in each background actor's path."""
    a = view.scene.actors.py
    u = view.u_py
    for i, rears in route.parked.items():
        front = u[i] + a.hl[i]
        for rear in rears:
            if rear > u[i]:
                g = rear - front
                if g < fixed[i]:
                    fixed[i] = g
                break


def _curve_references(view: TickView, route: RouteTable, refs: F) -> None:
    """Cap a background vehicle's speed reference before and through its turns: within a turn its speed there,
    before one the speed from which it still slows to that at its comfortable deceleration."""
    if not route.curves:
        return
    a = view.scene.actors.py
    u, v_ref = view.u_py, refs[pk.V_REF]
    for i, zones in route.curves.items():
        front = u[i] + a.hl[i]
        cap = math.inf
        for u_in, u_out, v_c in zones:
            if u[i] - a.hl[i] > u_out:
                continue
            ahead = u_in - front
            cap = min(cap, v_c if ahead <= 0.0 else math.sqrt(v_c * v_c + 2.0 * a.decel_comfort[i] * ahead))
        if cap < v_ref[i]:
            v_ref[i] = cap


def _actor_consts(a: ActorTable) -> F:
    """The kernel's per-actor constants: half length, s0, time gap, limits, IDM denominator, parked, obeys signals."""
    out = np.empty((9, len(a)))
    out[pk.HL], out[pk.S0], out[pk.TIME_GAP], out[pk.ACCEL_MAX] = a.hl, a.s0, a.time_gap, a.accel_max
    out[pk.IDM_ROOT2], out[pk.DECEL_COMFORT], out[pk.DECEL_MAX] = a.py.idm_root2, a.decel_comfort, a.decel_max
    out[pk.PARKED], out[pk.OBEYS] = a.parked, a.obey_signals & a.lane_bound
    return out


def _references(a: ActorTable) -> F:
    """The references without goals: cruise speed, no feed-forward, no command, no gap verb, no stationary obstacle."""
    out = np.full((5, len(a)), np.inf)
    out[pk.V_REF], out[pk.A_FF] = a.cruise, 0.0
    return out


@dataclass(frozen=True, eq=False)
class Plan:
    """Commands for the next step.

    ``accel``: (N,) net acceleration the backend applies (after the ego's
    actuation delay; coasting already resolved to the resistance). ``a_des``:
    (N,) what the planner asked for (NaN = coast). ``throttle``/``brake``:
    (N,) ego fractions in [0, 1] (0 for others). ``d_ref``, ``d_rate``,
    ``d_acc``: (N,) lateral references for the next tick. ``control``: the
    updated controller memory: ``base`` (the memory planned from) with the
    fields in ``changes`` replaced (the engine folds ``changes`` into the
    new state's memory in one copy). ``lateral_done``: actors whose lateral
    manoeuvre completes with this step.
    """

    accel: F
    a_des: F
    throttle: F
    brake: F
    d_ref: F
    d_rate: F
    d_acc: F
    base: ControlState
    changes: dict[str, Any]
    lateral_done: list[int]

    @property
    def control(self) -> ControlState:
        return with_changes(self.base, **self.changes)


def perceive_pedestrians(view: TickView) -> tuple[tuple[int, int], ...]:
    """(vehicle, pedestrian) pairs where a vehicle that avoids collisions or yields sees a pedestrian in, or
    (if it yields) about to enter, its corridor ahead."""
    a = view.scene.actors
    n = len(a)
    out = np.empty((n * n, 2), dtype=np.int64)
    e0, e1 = view.scene.static_edges
    m = pk.corridor_pedestrians(view.xy, view.vel, _corridor_yaw(view), view.v, view.present, a.lane_bound, a.avoid, a.yield_,
                                a.is_ped, a.hl, a.hw, a.decel_comfort, view.occluders, e0, e1, C.OBSTACLE_LOOKAHEAD_M,
                                C.CORRIDOR_MARGIN_M, C.PEDESTRIAN_RADIUS_M, C.EYE_FORWARD_FRACTION, out)
    return tuple(map(tuple, out[:m].tolist()))


def _corridor_yaw(view: TickView) -> F:
    """The heading each actor's pedestrian corridor runs along: its body's, but a background vehicle moving
    sideways (a lane change) looks along its path, not along a body turned towards the kerb.

    Why: a van changing lanes slowly beside a sidewalk braked for a pedestrian walking along the sidewalk (its
    turned heading put the pedestrian in its corridor); braking to a stop with the lane change's lateral profile
    still running turned it crosswise, nose onto the sidewalk, into the pedestrian (a 40/40/40 sweep on
    city_crossing, docs/traffic.md)."""
    a = view.scene.actors
    if not a.py.background_lane_bound:
        return view.yaw
    moving = a.background & a.lane_bound & (view.state.coords.d_rate != 0.0) & view.present
    if not moving.any():
        return view.yaw
    table = view.table
    dirs = table.dirs[table.locate(view.u)]
    return np.where(moving, np.arctan2(dirs[:, 1], dirs[:, 0]), view.yaw)


def perceive_leaders(view: TickView) -> tuple[int, ...]:
    """Each actor's nearest leader on its lane chain (−1: none)."""
    if view.scene.actors.py.lane_bound_count < 2:
        return (-1,) * len(view.u)
    return tuple(view.leaders.tolist())


def _held(route: RouteTable, slot: str, value: tuple[object, ...], width: int) -> NDArray[np.int64]:
    """A perception tuple as an int64 array ((K,) or (K, width)), converted once while the plan carries it over."""
    hit = route.memo.get(slot)
    if hit is None or hit[0] is not value:
        arr = np.array(value, dtype=np.int64)
        hit = route.memo[slot] = (value, arr.reshape(-1, width) if width else arr)
    return hit[1]


def _stationary_obstacles(view: TickView, route: RouteTable, control: ControlState, perceive: bool,
                          yields: tuple[tuple[int, float], ...], fixed: F) -> list[PedMemory | None]:
    """Gaps (m) into ``fixed`` to the junction waiting points and the pedestrians' route ends and kerbs; the
    pedestrians' new memories.

    Pedestrians are neither lane-bound nor yielding, so no leader, stop
    line, corridor percept or waiting point precedes these in their gap: it
    starts at inf here, as it does in the planner's order.
    """
    pa = view.scene.actors.py
    u, present = view.u_py, view.present_py
    for i, u_wait in yields:
        g = u_wait - u[i] - pa.hl[i] + pa.s0[i]
        if g < fixed[i]:
            fixed[i] = g
    peds = list(control.peds)
    paths, lengths = route.paths.paths, route.paths.lengths_py
    for i in pa.peds:
        if not present[i]:
            continue
        path = paths[i]
        end_gap = lengths[i] - u[i]
        g = max(end_gap, 0.0) if end_gap < math.inf else math.inf
        mem = peds[i]
        if mem is not None:
            if i in route.walking:
                peds[i], kerb_gap = walkers.update(view, i, mem, path, perceive, route.walking[i])
            else:
                peds[i], kerb_gap = pedestrian.update(view, i, mem, path, perceive)
            if kerb_gap < g:
                g = kerb_gap
        fixed[i] = g
    return peds


def _goal_references(view: TickView, control: ControlState, refs: F) -> None:
    """Fill the speed references, commanded accelerations (NaN = coast) and gap-verb commands in ``refs`` (goals)."""
    tick, dt = view.tick, view.scene.dt
    goals = control.longitudinal
    for i in set_indices(goals):
        goal = goals[i]
        if isinstance(goal, GapGoal):
            t = goal.target
            g_now = float(view.lane_gaps[i, t])
            if not math.isfinite(g_now):
                a = view.scene.actors
                g_now = view.centre_distance(i, t) - float(a.hl[i] + a.hl[t])
            g_goal = goal.value if goal.unit == "distance" else goal.value * float(view.v[i])
            f = goal.profile.at(tick, dt)[0]
            g_ref = goal.profile.q0 + (g_goal - goal.profile.q0) * f
            refs[pk.GAP_CMD, i] = longitudinal.gap_control(g_now, g_ref, float(view.v[i]), float(view.v[t]))
            continue
        assert goal is not None  # set_indices: the actors with a goal
        kind = goal.kind
        if kind == "brake":
            refs[pk.COMMANDED, i] = -C.BRANCH_BRAKE_DECEL
        elif kind == "stop":
            # Post-crash (simready.sim.behavior.impact): full braking, the actor's limit capped by μ·g.
            refs[pk.COMMANDED, i] = -min(float(view.scene.actors.decel_max[i]), view.state.world.friction * C.GRAVITY_MPS2)
        elif kind == "coast":
            refs[pk.COMMANDED, i] = math.nan
        elif kind == "match":
            assert goal.profile is not None and goal.target is not None  # a match blends towards its target
            w = goal.profile.at(tick, dt)[0]
            refs[pk.V_REF, i] = goal.v0 + (float(view.v[goal.target]) - goal.v0) * w
            refs[pk.A_FF, i] = 0.0
        else:
            assert goal.profile is not None  # profile and maintain follow their profile
            refs[pk.V_REF, i], refs[pk.A_FF, i], _ = goal.profile.at(tick, dt)


def _accelerations(view: TickView, route: RouteTable, leaders: tuple[int, ...], percepts: tuple[tuple[int, int], ...],
                   refs: F, friction: float) -> tuple[F, F]:
    """Desired accelerations (m/s², NaN = coast) and the net ones before the ego's actuation.

    One call of :func:`simready.sim.core.planner_kernels.accelerations`: obstacle gaps, IDM, rest handling, limits, commands.
    """
    n = len(view.u)
    a_des, accel = np.empty(n), np.empty(n)
    lane, s = view.lanes
    states = view.scene.signals.states
    pk.accelerations(route.consts, refs, view.u, view.v, view.present, lane, s, leader_u0(route.paths, view.scene),
                     _held(route, "leaders", leaders, 0), _held(route, "percepts", percepts, 2), view.xy, view.yaw,
                     route.stop_u, route.stop_col, states[min(view.tick, len(states) - 1)], view.scene.dt,
                     friction * C.GRAVITY_MPS2, C.STANDSTILL_MPS, C.SPEED_TRACK_GAIN, 2.0 * C.AMBER_DECEL_LIMIT,
                     C.STOP_LINE_STANDOFF_M, C.PEDESTRIAN_RADIUS_M, a_des, accel)
    return a_des, accel


_EVERY: dict[float, int] = {}


def _perception_every(dt: float) -> int:
    """Ticks between perception updates at this ``dt``."""
    hit = _EVERY.get(dt)
    if hit is None:
        hit = _EVERY[dt] = max(1, round(C.PERCEPTION_PERIOD_S / dt))
    return hit


def plan(view: TickView, route: RouteTable, control: ControlState, friction: float, ego_mass_kg: float) -> Plan:
    """The commands of every actor for the step from ``view.tick`` to the next."""
    scene = view.scene
    a = scene.actors
    n = len(a)
    every = _perception_every(scene.dt)
    leaders, percepts, yields = control.leaders, control.percepts, control.yields
    perceive = view.tick % every == 0 or len(leaders) != n
    if perceive:
        leaders = perceive_leaders(view)
        percepts = perceive_pedestrians(view)
        yields = junctions.yield_stops(view, route.conflicts) if any(route.conflicts) else ()
    refs = route.refs0.copy()
    peds = _stationary_obstacles(view, route, control, perceive, yields, refs[pk.FIXED_GAP])
    _goal_references(view, control, refs)
    if route.curves:
        _curve_references(view, route, refs)
    if route.parked:
        _parked_gaps(view, route, refs[pk.FIXED_GAP])
    if route.boxes:
        _box_gaps(view, route, refs[pk.FIXED_GAP])
    if route.any_background:
        _old_lane_gaps(view, refs[pk.FIXED_GAP])
    sidesteps: dict[int, float] = {}
    if route.walking:
        walkers.walker_gaps(view, tuple(route.walking), refs[pk.FIXED_GAP])
        sidesteps = walkers.yield_to_scenario(view, tuple(route.walking), refs[pk.FIXED_GAP])
    a_des, accel = _accelerations(view, route, leaders, percepts, refs, friction)

    throttle, brake = np.zeros(n), np.zeros(n)
    buffer = control.actuation
    e = a.ego
    if e is not None:
        v_e = float(view.v[e])
        cmd, buffer = actuation.push(buffer, float(a_des[e]))
        net, throttle[e], brake[e] = actuation.net_command(cmd, v_e, ego_mass_kg, friction, a.py.decel_max[e],
                                                           a.py.accel_max[e])
        accel[e] = 0.0 if (v_e <= 0.0 and net < 0.0) else net  # pk.rest_clamp, without a compiled call

    d_ref, d_rate, d_acc, done = lateral.lateral_refs(control.lateral, view.state.coords.d, view.tick, scene.dt)
    if sidesteps:
        # Background pedestrians stepping out of a scenario pedestrian's way (simready.sim.behavior.walkers.yield_to_scenario).
        d_ref, d_rate = np.array(d_ref), np.array(d_rate)
        for i, d_next in sidesteps.items():
            d_rate[i] = (d_next - float(d_ref[i])) / scene.dt
            d_ref[i] = d_next
    changes = {"actuation": buffer, "peds": tuple(peds), "leaders": leaders, "percepts": percepts, "yields": yields}
    # Plan has no __post_init__: filling its fields is what its (frozen) __init__ does, cheaper.
    out = object.__new__(Plan)
    out.__dict__.update(accel=accel, a_des=a_des, throttle=throttle, brake=brake, d_ref=d_ref, d_rate=d_rate,
                        d_acc=d_acc, base=control, changes=changes, lateral_done=done)
    return out
