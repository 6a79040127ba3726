"""One tick's plan for every actor, from one snapshot (SPEC §7 plan-then-apply, SPEC §8 controllers).

For each actor the planner finds the nearest obstacle ahead on its path —
a leader on its lane chain, the stop line of a red (or, when it can still
stop comfortably, amber) signal if it obeys signals, a visible pedestrian
in or (if it yields) about to enter its corridor, the end of a walk route,
the kerb a waiting pedestrian stands at — and combines the IDM braking
term for it with tracking of the reference speed its longitudinal goal
sets; a yielding vehicle also treats the waiting point before a junction
conflict as an obstacle while a priority vehicle is due there
(:mod:`simready.sim.junctions`). Commanded branch actions (``brake``,
``coast``) bypass all of it. The ego's
command then passes through its actuation delay. Lateral references come
from the actors' lateral goals. Nothing here reads a state other than the
view's, so the order actors are planned in cannot matter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from simready.sim import constants as C
from simready.sim import junctions
from simready.sim.controllers import actuation, lateral, longitudinal, pedestrian
from simready.sim.observe import TickView
from simready.sim.paths import Path, PathTable
from simready.sim.scene import Scene
from simready.sim.state import ControlState, GapGoal, PedMemory, with_changes

F = NDArray[np.float64]
_STOP_CODES = (2, 3)  # red, red_amber
_AMBER = 1


@dataclass(frozen=True, eq=False)
class RouteTable:
    """A :class:`PathTable` plus each path's stop lines ahead: ``stop_u`` (N, K) and ``stop_col`` (N, K), −1 padded."""

    paths: PathTable
    stop_u: F
    stop_col: NDArray[np.int64]
    #: Per path: ``(u of the conflict point, priority lane, s on it, u of the waiting point)`` where it yields.
    conflicts: tuple[tuple[tuple[float, str, float, float], ...], ...] = ()

    @classmethod
    def build(cls, scene: Scene, paths: tuple[Path, ...]) -> RouteTable:
        stops: list[list[tuple[float, int]]] = []
        graph = scene.template.lane_graph
        by_lane = junctions.lane_conflicts(graph)
        a = scene.actors
        conflicts = []
        for i, p in enumerate(paths):
            row = []
            for lane, u0 in zip(p.lanes, p.lane_u0):
                hit = scene.signals.stop_lines.get(lane)
                if hit is not None:
                    row.append((u0 + hit[0], hit[1]))
            stops.append(row)
            mine = [(u0 + c.s, c.other, c.s_other) for lane, u0 in zip(p.lanes, p.lane_u0) for c in by_lane.get(lane, ())]
            # Waiting points only matter to actors that yield; others never read them.
            conflicts.append(tuple((u_x, other, s_other,
                                    junctions.waiting_point(graph, p, u_x, other, float(a.hl[i]), float(a.hw[i]), float(a.chord[i]))
                                    if a.yield_[i] and a.lane_bound[i] else u_x - junctions.STOP_BEFORE_M)
                                   for u_x, other, s_other in mine))
        k = max((len(r) for r in stops), default=0)
        stop_u = np.full((len(paths), k), np.inf)
        stop_col = np.full((len(paths), k), -1, dtype=np.int64)
        for i, row in enumerate(stops):
            for j, (u, col) in enumerate(row):
                stop_u[i, j], stop_col[i, j] = u, col
        return cls(PathTable.build(paths, scene.lane_ids, scene.actors.chord), stop_u, stop_col, tuple(conflicts))


@dataclass(frozen=True, eq=False)
class Plan:
    """Commands for the next step.

    ``accel``: (N,) net acceleration the backend applies (after the ego's
    actuation delay; coasting already resolved to the resistance). ``a_des``:
    (N,) what the planner asked for (NaN = coast). ``throttle``/``brake``:
    (N,) ego fractions in [0, 1] (0 for others). ``d_ref``, ``d_rate``,
    ``d_acc``: (N,) lateral references for the next tick. ``control``: the
    updated controller memory. ``lateral_done``: actors whose lateral
    manoeuvre completes with this step.
    """

    accel: F
    a_des: F
    throttle: F
    brake: F
    d_ref: F
    d_rate: F
    d_acc: F
    control: ControlState
    lateral_done: list[int]


def perceive_pedestrians(view: TickView) -> tuple[tuple[int, int], ...]:
    """(vehicle, pedestrian) pairs where a vehicle that avoids collisions or yields sees a pedestrian in, or
    (if it yields) about to enter, its corridor ahead."""
    a = view.scene.actors
    veh = np.flatnonzero(a.lane_bound & view.present & (a.avoid | a.yield_))
    peds = np.flatnonzero(a.is_ped & view.present)
    if len(veh) == 0 or len(peds) == 0:
        return ()
    rel = view.xy[peds][None, :, :] - view.xy[veh][:, None, :]
    v = view.v[veh][:, None]
    reach = v * v / (2.0 * a.decel_comfort[veh][:, None]) + C.OBSTACLE_LOOKAHEAD_M + a.hl[veh][:, None]
    near = np.einsum("ijk,ijk->ij", rel, rel) < reach * reach
    if not near.any():
        return ()
    c, s = np.cos(view.yaw[veh]), np.sin(view.yaw[veh])
    dx = rel[..., 0] * c[:, None] + rel[..., 1] * s[:, None]
    dy = -rel[..., 0] * s[:, None] + rel[..., 1] * c[:, None]
    vlat = -view.vel[peds][None, :, 0] * s[:, None] + view.vel[peds][None, :, 1] * c[:, None]
    ahead = dx - a.hl[veh][:, None]
    half = a.hw[veh][:, None] + C.CORRIDOR_MARGIN_M + C.PEDESTRIAN_RADIUS_M
    t_arr = np.maximum(ahead, 0.0) / np.maximum(v, 0.5)
    future = dy + vlat * t_arr
    entering = (np.minimum(dy, future) < half) & (np.maximum(dy, future) > -half) & a.yield_[veh][:, None]
    cand = near & (ahead > -0.5) & ((np.abs(dy) < half) | entering)
    vi, pj = np.nonzero(cand)
    if len(vi) == 0:
        return ()
    seen = view.visible(veh[vi], peds[pj])
    return tuple((int(veh[x]), int(peds[y])) for x, y, ok in zip(vi, pj, seen) if ok)


def _pedestrian_gaps(view: TickView, percepts: tuple[tuple[int, int], ...], gap: F, v_obs: F) -> None:
    """Every tick: the gap from each vehicle to the pedestrians it perceived, if still ahead."""
    a = view.scene.actors
    for i, j in percepts:
        if not view.present[j]:
            continue
        yaw = float(view.yaw[i])
        dx = (view.xy[j, 0] - view.xy[i, 0]) * math.cos(yaw) + (view.xy[j, 1] - view.xy[i, 1]) * math.sin(yaw)
        g = dx - float(a.hl[i]) - C.PEDESTRIAN_RADIUS_M
        if dx > 0.0 and g < gap[i]:
            gap[i], v_obs[i] = g, 0.0


def perceive_leaders(view: TickView) -> tuple[int, ...]:
    """Each actor's nearest leader on its lane chain (−1: none)."""
    lg = view.lane_gaps
    j = np.argmin(lg, axis=1)
    return tuple(np.where(np.isfinite(lg[np.arange(len(j)), j]), j, -1).tolist())


def _leader_gaps(view: TickView, leaders: tuple[int, ...], gap: list[float], v_obs: list[float]) -> None:
    """Gap (m) to each actor's perceived leader, from this tick's positions (scalar: a handful of actors)."""
    if not any(j >= 0 for j in leaders):
        return
    lane, s = view.lanes_py
    u, v, present = view.u_py, view.v_py, view.present_py
    sum_hl = view.scene.actors.py.sum_hl
    u0 = view.table.lane_u0_py
    for i, j in enumerate(leaders):
        if j < 0 or lane[j] < 0:
            continue
        u_j = u0[i][lane[j]] + s[j]
        g = u_j - u[i] - sum_hl[i][j]
        if g < gap[i] and present[j] and u_j > u[i] and math.isfinite(g):
            gap[i], v_obs[i] = g, v[j]


def _signal_obstacles(view: TickView, route: RouteTable, gap: list[float], v_obs: list[float]) -> None:
    if route.stop_u.shape[1] == 0:
        return
    a = view.scene.actors
    states = view.scene.signals.states[min(view.tick, len(view.scene.signals.states) - 1)]
    code = np.where(route.stop_col >= 0, states[np.maximum(route.stop_col, 0)], 0)
    g = route.stop_u - view.u[:, None] - a.hl[:, None]
    v2 = (view.v * view.v)[:, None]
    stop = np.isin(code, _STOP_CODES) | ((code == _AMBER) & (v2 <= 2.0 * C.AMBER_DECEL_LIMIT * np.maximum(g, 1e-6)))
    use = stop & (g > 0.0) & (a.obey_signals & a.lane_bound)[:, None]
    # The IDM keeps s0 to an obstacle; a stop line should be reached to within STOP_LINE_STANDOFF_M.
    best = np.min(np.where(use, g, np.inf), axis=1) + (a.s0 - C.STOP_LINE_STANDOFF_M)
    for i, b in enumerate(best.tolist()):
        if b < gap[i]:
            gap[i], v_obs[i] = b, 0.0


def _pedestrian_gaps(view: TickView, percepts: tuple[tuple[int, int], ...], gap: list[float], v_obs: list[float]) -> None:
    """Every tick: the gap from each vehicle to the pedestrians it perceived, if still ahead."""
    hl = view.scene.actors.py.hl
    xy, yaw_all, present = view.xy_py, view.yaw_py, view.present_py
    for i, j in percepts:
        if not present[j]:
            continue
        yaw = yaw_all[i]
        dx = (xy[j][0] - xy[i][0]) * math.cos(yaw) + (xy[j][1] - xy[i][1]) * math.sin(yaw)
        g = dx - hl[i] - C.PEDESTRIAN_RADIUS_M
        if dx > 0.0 and g < gap[i]:
            gap[i], v_obs[i] = g, 0.0


def _goal_references(view: TickView, control: ControlState, v_ref: list[float], a_ff: list[float],
                     commanded: list[float], gap_cmd: list[float]) -> None:
    """Fill speed references, commanded accelerations (NaN = coast) and gap-verb commands from the goals."""
    tick, dt = view.tick, view.scene.dt
    for i, goal in enumerate(control.longitudinal):
        if goal is None:
            continue
        if isinstance(goal, GapGoal):
            t = goal.target
            g_now = float(view.lane_gaps[i, t])
            if not math.isfinite(g_now):
                a = view.scene.actors
                g_now = view.centre_distance(i, t) - float(a.hl[i] + a.hl[t])
            g_goal = goal.value if goal.unit == "distance" else goal.value * float(view.v[i])
            f = goal.profile.at(tick, dt)[0]
            g_ref = goal.profile.q0 + (g_goal - goal.profile.q0) * f
            gap_cmd[i] = longitudinal.gap_control(g_now, g_ref, float(view.v[i]), float(view.v[t]))
            continue
        kind = goal.kind
        if kind == "brake":
            commanded[i] = -C.BRANCH_BRAKE_DECEL
        elif kind == "coast":
            commanded[i] = math.nan
        elif kind == "match":
            w = goal.profile.at(tick, dt)[0]
            v_ref[i] = goal.v0 + (float(view.v[goal.target]) - goal.v0) * w
            a_ff[i] = 0.0
        else:
            v_ref[i], a_ff[i], _ = goal.profile.at(tick, dt)


def _obstacles(view: TickView, route: RouteTable, control: ControlState, perceive: bool
               ) -> tuple[list[float], list[float], tuple[int, ...], tuple[tuple[int, int], ...],
                          tuple[tuple[int, float], ...], list[PedMemory | None]]:
    """Nearest obstacle gap (m) and its speed (m/s) per actor, the perception memory, and the pedestrians' memories."""
    a = view.scene.actors
    pa = a.py
    n = pa.n
    gap = [math.inf] * n
    v_obs = [0.0] * n
    leaders, percepts, yields = control.leaders, control.percepts, control.yields
    if perceive:
        leaders = perceive_leaders(view) if pa.lane_bound_count > 1 else (-1,) * n
        percepts = perceive_pedestrians(view)
        yields = junctions.yield_stops(view, route.conflicts) if any(route.conflicts) else ()
    _leader_gaps(view, leaders, gap, v_obs)
    _signal_obstacles(view, route, gap, v_obs)
    _pedestrian_gaps(view, percepts, gap, v_obs)
    u, present = view.u_py, view.present_py
    for i, u_wait in yields:
        g = u_wait - u[i] - pa.hl[i] + pa.s0[i]
        if g < gap[i]:
            gap[i], v_obs[i] = g, 0.0
    peds = list(control.peds)
    for i in pa.peds:
        if not present[i]:
            continue
        path = route.paths.paths[i]
        end_gap = path.length - u[i]
        if end_gap < gap[i]:
            gap[i], v_obs[i] = max(end_gap, 0.0), 0.0
        mem = peds[i]
        if mem is not None:
            peds[i], kerb_gap = pedestrian.update(view, i, mem, path, perceive)
            if kerb_gap < gap[i]:
                gap[i], v_obs[i] = kerb_gap, 0.0
    return gap, v_obs, leaders, percepts, yields, peds


def _desired_accels(view: TickView, gap: list[float], v_obs: list[float], v_ref: list[float], a_ff: list[float],
                    commanded: list[float], gap_cmd: list[float], friction: float) -> list[float]:
    """Each actor's desired acceleration (m/s², NaN = coast): min(tracking, IDM), rest handling, limits, commands.

    Scalar transcription of the vectorized rule; ``x if x < y else y`` and
    ``x if x > y else y`` are exactly ``np.minimum(x, y)`` / ``np.maximum(x, y)``
    for the non-NaN values here (including which zero is kept).
    """
    pa = view.scene.actors.py
    dt = view.scene.dt
    fg = friction * C.GRAVITY_MPS2
    stand = C.STANDSTILL_MPS
    k_track = C.SPEED_TRACK_GAIN
    present = view.present_py
    isfinite, inf = math.isfinite, math.inf
    out = []
    for (v, gc, aff, vr, g, vo, c, pres, amax, s0, tg, root2, dc, dm, parked) in zip(
            view.v_py, gap_cmd, a_ff, v_ref, gap, v_obs, commanded, present, pa.accel_max, pa.s0, pa.time_gap,
            pa.idm_root2, pa.decel_comfort, pa.decel_max, pa.parked):
        a_track = gc if isfinite(gc) else aff + k_track * (vr - v)
        x = v * tg + v * (v - vo) / root2
        s_star = s0 + (0.0 if 0.0 > x else x)
        ratio = s_star / g if g > 0.0 else 1e3
        if not ratio < 1e3:
            ratio = 1e3
        a_idm = amax * (1.0 - ratio * ratio)
        a_des = a_track if a_track < a_idm else a_idm
        closing_in = v < 0.5 and g < s0 + 1.0 and vo < 0.1
        if v < stand and closing_in and not a_des < 0.0:
            a_des = 0.0
        resting = (a_des < 0.0 and closing_in) or (a_des <= 0.0 and v < stand) or (vr <= 0.0 and v < stand)
        if resting:
            m = -v / dt
            a_des = a_des if a_des < m else m
        elif vr <= 0.0:
            m = -v / dt
            lo = -dc
            m = m if m > lo else lo
            a_des = a_des if a_des < m else m
        lo = -(dm if dm < fg else fg)
        a_des = a_des if a_des > lo else lo
        a_des = a_des if a_des < amax else amax
        if c != inf:
            a_des = c
        if parked or not pres:
            a_des = 0.0
        out.append(a_des)
    return out


def plan(view: TickView, route: RouteTable, control: ControlState, friction: float, ego_mass_kg: float) -> Plan:
    """The commands of every actor for the step from ``view.tick`` to the next."""
    scene = view.scene
    a = scene.actors
    n = len(a)
    every = max(1, round(C.PERCEPTION_PERIOD_S / scene.dt))
    perceive = view.tick % every == 0 or len(control.leaders) != n
    gap, v_obs, leaders, percepts, yields, peds = _obstacles(view, route, control, perceive)

    v_ref = list(a.py.cruise)
    a_ff = [0.0] * n
    commanded = [math.inf] * n
    gap_cmd = [math.inf] * n
    _goal_references(view, control, v_ref, a_ff, commanded, gap_cmd)
    a_des = _desired_accels(view, gap, v_obs, v_ref, a_ff, commanded, gap_cmd, friction)

    accel = [0.0 if math.isnan(x) else x for x in a_des]
    throttle = [0.0] * n
    brake = [0.0] * n
    buffer = control.actuation
    e = a.ego
    v = view.v_py
    if e is not None:
        cmd, buffer = actuation.push(buffer, a_des[e])
        accel[e], throttle[e], brake[e] = actuation.net_command(cmd, v[e], ego_mass_kg, friction,
                                                                a.py.decel_max[e], a.py.accel_max[e])
    # An actor at rest cannot be braked backwards.
    accel = [0.0 if (vi <= 0.0 and x < 0.0) else x for vi, x in zip(v, accel)]

    d_ref, d_rate, d_acc, done = lateral.lateral_refs(control.lateral, view.state.coords.d, view.tick, scene.dt)
    # ControlState has no __post_init__: a field-level copy is what its __init__ would build.
    new_control = with_changes(control, actuation=buffer, peds=tuple(peds), leaders=leaders, percepts=percepts, yields=yields)
    return Plan(np.array(accel), np.array(a_des), np.array(throttle), np.array(brake), d_ref, d_rate, d_acc,
                new_control, done)
