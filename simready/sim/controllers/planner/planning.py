"""One tick's :class:`Plan`: the goals' references, the stationary obstacles, the compiled accelerations, the
pedestrians' kerb decisions and the ego's actuation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.sim.core import constants as C
from simready.sim.behavior import junctions, walkers
from simready.sim.core import planner_kernels as pk
from simready.sim.controllers import actuation, lateral, longitudinal, pedestrian
from simready.sim.core.sight import TickView, leader_u0
from simready.sim.core.state import ControlState, GapGoal, PedMemory, set_indices, with_changes
from simready.sim.controllers.planner.background import box_gaps, curve_references, old_lane_gaps, parked_gaps
from simready.sim.controllers.planner.perception import held, perceive_leaders, perceive_pedestrians
from simready.sim.controllers.planner.route_table import RouteTable

F = NDArray[np.float64]


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


def goal_references(view: TickView, control: ControlState, refs: F) -> None:
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
                     held(route, "leaders", leaders, 0), held(route, "percepts", percepts, 2), view.xy, view.yaw,
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
    goal_references(view, control, refs)
    if route.curves:
        curve_references(view, route, refs)
    if route.parked:
        parked_gaps(view, route, refs[pk.FIXED_GAP])
    if route.boxes:
        box_gaps(view, route, refs[pk.FIXED_GAP])
    if route.any_background:
        old_lane_gaps(view, refs[pk.FIXED_GAP])
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
