"""The compiled quiet ticks: runs of ticks that need no Python, stepped in one call of
:func:`simready.sim.core.tick_kernels.run_ticks` with the same state, events and records :meth:`~.loop.Engine.step`
gives tick by tick.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from simready.sim.backend import Backend
from simready.sim.core import constants as C
from simready.sim.behavior import interactions, junctions, walkers
from simready.sim.behavior.respawn import Respawner
from simready.sim.core import planner_kernels as pk
from simready.sim.core import numpy_loops, tick_kernels
from simready.sim.backends.dynamic import DynamicBackend
from simready.sim.backends.dynamic import ticks as dynamic_ticks
from simready.sim.backends.kinematic import KinematicBackend
from simready.sim.controllers import lateral
from simready.sim.controllers import planner as planner_mod
from simready.sim.controllers.planner import RouteTable
from simready.sim.core import kinematics
from simready.sim.core.sight import DIVERGE_WINDOW_M, TickView, leader_u0, occluder_mask
from simready.sim.core.scene import Scene
from simready.sim.core.state import GapGoal, SimState, frozen, ro, set_indices, with_changes
from simready.sim.engine import collisions
from simready.sim.engine.recorder import Recorder


class QuietHost(Protocol):
    """What the compiled quiet ticks read and write of the engine (:class:`simready.sim.engine.loop.Engine`)."""

    scene: Scene
    state: SimState
    backend: Backend
    recorder: Recorder
    ticks_simulated: int
    events: list[Any]
    ego_mass_kg: float
    _perception_every: int
    _respawn: Respawner
    _turner: walkers.Turner
    _quiet: tuple[Any, ...] | None
    _conflicts: tuple[RouteTable, tuple[np.ndarray, ...]] | None
    _python_at: int

    @property
    def route(self) -> RouteTable: ...


def quiet_setup(engine: QuietHost) -> tuple[Any, ...] | None:
    """What :func:`quiet_ticks` passes every time, or None when this rollout's ticks all stay in Python: a
    backend other than kinematic-v1 and dynamic-v1 (or one whose step is not their own: a subclass, a test's injected
    fault), a sloped ground (the tilt is numpy), background traffic (its lane
    changes, turns, respawns and walkers are Python every tick), or no numpy ``arctan2`` loop to call."""
    scene = engine.scene
    a = scene.actors
    n = len(a)
    backend = type(engine.backend)
    kinematic = engine.backend.name == "kinematic-v1" and backend.advance is _KINEMATIC_ADVANCE
    dynamic = (engine.backend.name == "dynamic-v1" and backend.advance is _DYNAMIC_ADVANCE
               and backend.quiet_args is _DYNAMIC_ARGS)  # type: ignore[attr-defined]
    extras = _QUIET_EXTRAS if kinematic else _DYNAMIC_EXTRAS
    if (not (kinematic or dynamic) or n == 0 or scene.ground.sloped or a.background.any()
            or not (engine.recorder._fused if kinematic else engine.recorder._fused6)
            or set(engine.recorder._extra_names) != set(extras)):
        return None
    fp, sin_fp, cos_fp = _numpy_loops()
    if not (fp and sin_fp and cos_fp):
        return None
    x_src = np.array([extras.index(name) for name in engine.recorder._extra_names], dtype=np.int64)
    signals = np.array(scene.signals.states)
    e = a.ego
    e0, e1 = scene.static_edges
    static = (np.array(a.lane_bound, dtype=bool), np.array(a.avoid, dtype=bool), np.array(a.yield_, dtype=bool),
              np.array(a.is_ped, dtype=bool), np.array(a.decel_comfort, dtype=np.float64),
              np.array(occluder_mask(scene), dtype=bool), np.ascontiguousarray(e0, dtype=np.float64),
              np.ascontiguousarray(e1, dtype=np.float64))
    return (fp, sin_fp, cos_fp, x_src, signals, -1 if e is None else int(e), np.zeros(0, dtype=np.int64),
            np.array(a.is_vehicle, dtype=bool), static, dynamic)

def conflict_arrays(engine: QuietHost, route: RouteTable) -> tuple[np.ndarray, ...]:
    """``route.conflicts`` flattened for :func:`simready.sim.core.tick_kernels.yield_stops` (kept per route):
    per actor its first row, then u of each conflict point, the other lane's index, s on it, u of the wait."""
    hit = engine._conflicts
    if hit is None or hit[0] is not route:
        rows = [(u_x, engine.scene.lane_index[other], s_other, u_wait) for conf in route.conflicts
                for u_x, other, s_other, u_wait in conf]
        first = np.zeros(len(route.conflicts) + 1, dtype=np.int64)
        first[1:] = np.cumsum([len(conf) for conf in route.conflicts])
        hit = engine._conflicts = (route, (first, np.array([r[0] for r in rows], dtype=np.float64),
                                         np.array([r[1] for r in rows], dtype=np.int64),
                                         np.array([r[2] for r in rows], dtype=np.float64),
                                         np.array([r[3] for r in rows], dtype=np.float64)))
    return hit[1]

def quiet_ticks(engine: QuietHost, end: int) -> int:
    """Step the ticks from the current one that need no Python (:mod:`simready.sim.core.tick_kernels`) in one
    compiled call, to ``end`` at most; the number of ticks stepped (0: the current tick needs Python).

    The state, events and records afterwards are those :meth:`~.loop.Engine.step` gives tick by tick. A quiet tick has no
    trigger due (:func:`simready.sim.behavior.interactions.quiet_until`), no goal reading the state (gap,
    match), no lateral manoeuvre completing, no contact (dynamic-v1: but a thrown road user's with its striker, to
    the tick that gives the collision its delta-v), nobody carried, no background traffic; it perceives
    (leaders, pedestrians in corridors, junction waits) compiled too; moving profiles and lateral offsets enter as
    references evaluated here tick by tick (:data:`_MOVING_TICKS` at most). The compiled loop stops before a
    tick whose pedestrian memory would change, whose pedestrian may see a hazard, or whose step has a contact,
    leaves the map or fails a check: :meth:`~.loop.Engine.step` then steps it.
    """
    s = engine.state
    scene = engine.scene
    t0 = s.tick
    every = engine._perception_every
    assert engine._quiet is not None  # run() asks only when set up
    fp, sin_fp, cos_fp, x_src, signals, e, no_rows, is_vehicle, static, dynamic = engine._quiet
    sc = s.control
    route = engine.route
    if s.termination is not None or t0 == engine._python_at:
        return 0
    a = scene.actors
    n = len(a)
    # (dynamic-v1 steps struck road users as their thrown bodies, in contact with their strikers or not: its
    # quiet_args says where it can.)
    if (len(sc.leaders) != n or ((sc.struck or s.world.contacts) and not dynamic) or engine._respawn.active
            or len(engine._turner.rows)):
        return 0
    physics: tuple[Any, ...] | None = None
    if dynamic:
        physics = engine.backend.quiet_args(s)  # type: ignore[attr-defined]
        if physics is None:
            return 0
    limit = end
    warmup = scene.warmup_ticks
    # Triggers are asked from the warm-up's end on; none is due before quiet_until, or while no guard's actor is
    # near its region.
    quiet = interactions.quiet_until(scene, s)
    guards: tuple[interactions.Guard, ...] = ()
    if quiet < 0:
        bounded = interactions.quiet_guards(scene, s)
        if bounded is not None:
            quiet, guards = bounded
    limit = min(limit, max(warmup, quiet))
    if s.world.contacts:
        # The first tick whose contacts give an open collision its delta-v (collisions.impact_delta_v) is Python's.
        limit = min(limit, _impact_window(engine, t0, limit))
    dt = scene.dt
    goals = sc.longitudinal
    moving: list[tuple[int, Any]] = []
    for i in set_indices(goals):
        goal = goals[i]
        assert goal is not None  # set_indices: the actors with a goal
        if isinstance(goal, GapGoal) or goal.kind == "match":
            return 0
        if goal.kind not in ("brake", "stop", "coast") and _constant_until(goal.profile, t0, dt) < limit:
            moving.append((i, goal.profile))
            limit = min(limit, t0 + _MOVING_TICKS)
    if limit < t0 + 2:
        return 0
    c = s.coords
    # Each tick's lateral references (they read the offsets of actors without a goal, which stay), to the first
    # tick whose manoeuvre completes (its step runs in Python).
    refs_lat = [lateral.lateral_refs(sc.lateral, c.d, t0, dt)]
    if refs_lat[0][0] is not c.d or refs_lat[0][3]:
        # A manoeuvre moving (or done now): the references tick by tick, over a while at most.
        limit = min(limit, t0 + _MOVING_TICKS)
        for t in range(t0 + 1, limit):
            refs_lat.append(lateral.lateral_refs(sc.lateral, c.d, t, dt))
        for t in range(t0, limit):
            if refs_lat[t - t0][3]:
                limit = t
                break
    if limit < t0 + 2:
        return 0
    pa = a.py
    peds = sc.peds
    rows, ped_state, kerb, kerb_pt = [], [], [], []
    paths = route.paths.paths
    for i in pa.peds:
        mem = peds[i]
        if mem is None or mem.mode == "committed" or not math.isfinite(mem.kerb_u):
            rows.append(i)
            ped_state.append((0, 0, -1, -1, 0, 0, 0))
            kerb.append(math.inf)
            kerb_pt.append((math.nan, math.nan))
        elif mem.mode in ("walk", "wait"):
            rows.append(i)
            ped_state.append((1, int(mem.seen), -1 if mem.hazard_since is None else mem.hazard_since,
                              -1 if mem.clear_since is None else mem.clear_since, int(mem.mode == "wait"),
                              int(round(mem.reaction_delay_s / dt)),
                              int(mem.stop_draw < float(a.stop_tendency[i]))))
            kerb.append(mem.kerb_u)
            kerb_pt.append(paths[i].point_at(mem.kerb_u))
        else:
            return 0
    table = route.paths
    view = TickView(scene, s, table)
    refs = route.refs0.copy()
    planner_mod.goal_references(view, sc, refs)
    refs_t = np.empty((limit - t0, *refs.shape))
    refs_t[:] = refs
    for i, profile in moving:
        for t in range(t0 + 1, limit):
            refs_t[t - t0, pk.V_REF, i], refs_t[t - t0, pk.A_FF, i], _ = profile.at(t, dt)
    lat = np.empty((limit - t0, 3, n))
    if len(refs_lat) == 1:
        lat[:, 0], lat[:, 1], lat[:, 2] = refs_lat[0][:3]
    else:
        for k in range(limit - t0):
            lat[k, 0], lat[k, 1], lat[k, 2] = refs_lat[k][:3]
    (cum, base, last, pts, dirs, psi, dpsi, heights, g_x0, g_y0, g_inv, reach2, hl, hw, w_rows, w_first,
     w_z_start, w_step_u, w_step_dh, inv_ramp, _sloped, seg_lane, lane_u0, limits) = kinematics._step_args(scene,
                                                                                                           table)
    friction = s.world.friction
    fc = np.empty(tick_kernels.N_FC)
    fc[:] = (dt, friction * C.GRAVITY_MPS2, C.STANDSTILL_MPS, C.SPEED_TRACK_GAIN, 2.0 * C.AMBER_DECEL_LIMIT,
             C.STOP_LINE_STANDOFF_M, C.PEDESTRIAN_RADIUS_M, g_x0, g_y0, g_inv, inv_ramp, *limits, engine.ego_mass_kg,
             friction, pa.decel_max[e] if e >= 0 else 0.0, pa.accel_max[e] if e >= 0 else 0.0,
             C.ROLLING_RESISTANCE * C.GRAVITY_MPS2, C.AIR_DENSITY_KG_M3, C.DRAG_AREA_M2, C.GRAVITY_MPS2,
             C.OBSTACLE_LOOKAHEAD_M, C.CORRIDOR_MARGIN_M, C.EYE_FORWARD_FRACTION, C.KERB_LOOKAHEAD_M,
             DIVERGE_WINDOW_M, junctions.CONFLICT_LOOKAHEAD_M, junctions.CLEARANCE_M, C.JUNCTION_GAP_S,
             C.PED_GAP_ACCEPT_S)
    rec = engine.recorder
    ic = np.array([t0, limit, warmup, every, rec.rows, e, 1, a.py.lane_bound_count >= 2, sin_fp, cos_fp, 1,
                   physics is not None], dtype=np.int64)
    b = s.bodies
    big0 = np.concatenate((b.pos.ravel(), b.quat.ravel(), b.vel.ravel(), b.omega.ravel()))
    lane0, s0 = view.lanes
    standstill = np.array(sc.standstill, dtype=np.int64)
    buf = np.array(sc.actuation if e >= 0 else (), dtype=np.float64)
    yields = sc.yields
    yield_i = np.array([i for i, _ in yields], dtype=np.int64) if yields else no_rows
    yield_u = np.array([u for _, u in yields], dtype=np.float64) if yields else np.zeros(0)
    args = (
        ic, fc, c.u.copy(), c.v.copy(), c.yaw.copy(), big0, b.present.copy(), lat, lane0.copy(), s0.copy(),
        standstill, buf, route.consts, refs_t, yield_i,
        yield_u, np.array(rows, dtype=np.int64), np.array(ped_state, dtype=np.int64).reshape(-1, 7),
        np.array(kerb, dtype=np.float64), table.lengths, leader_u0(table, scene),
        planner_mod.held(route, "leaders", sc.leaders, 0), planner_mod.held(route, "percepts", sc.percepts, 2),
        route.stop_u, route.stop_col, signals, cum, base, last, pts, dirs, psi, dpsi, heights, seg_lane, lane_u0,
        reach2, hl, hw, w_rows, w_first, w_z_start, w_step_u, w_step_dh, table.leaves, fp,
        rec._walk(c.path_keys), rec.pos, rec.quat, rec.vel, rec.omega, rec.present, rec.lane, rec.s, rec._x_all,
        x_src, *static, *conflict_arrays(engine, route), np.array([g[0] for g in guards], dtype=np.int64),
        np.array([g[1:] for g in guards], dtype=np.float64).reshape(-1, 3), is_vehicle,
        np.array(kerb_pt, dtype=np.float64).reshape(-1, 2))
    if physics is not None:
        return _dynamic_commit(engine, args, physics, set_indices(sc.lateral), table, buf, standstill)
    (t, _why, row, u, v, acc, yaw, big, slip, throttle, brake, lane, s_lane, perceived, leaders, percepts, wait_i,
     wait_u, _) = tick_kernels.run_ticks(*args, *tick_kernels.ticks_scratch(len(standstill)))
    k = int(t) - t0
    if k == 0:
        return 0
    # The state step() leaves after tick t − 1 (the kinematic backend's coords, extras and bodies).
    table.remember_lanes(ro(u), lane, s_lane)
    d_ref, d_rate, _, _ = refs_lat[k - 1 if len(refs_lat) > 1 else 0]
    coords = with_changes(c, u=u, d=d_ref if not d_ref.flags.writeable else frozen(d_ref),
                          d_rate=d_rate if not d_rate.flags.writeable else frozen(d_rate), v=ro(v), a=ro(acc),
                          yaw=ro(yaw))
    extras = {"accel_mps2": acc, "throttle": throttle, "brake": brake,
              "steer_rad": engine.backend._zeros(n), "slip_rad": slip}  # type: ignore[attr-defined]
    steer = 0.0 if e >= 0 else sc.steer_rad
    control = with_changes(sc, actuation=tuple(buf.tolist()) if e >= 0 else sc.actuation, peds=tuple(peds),
                           standstill=tuple(standstill.tolist()), steer_rad=steer)
    _settle(engine, int(t), int(row), big, coords, extras, control,
            (leaders, percepts, wait_i, wait_u) if perceived else None)
    return k


def _settle(engine: QuietHost, t: int, row: int, big: np.ndarray, coords: Any, extras: dict[str, Any],
            control: Any, perceived: tuple[np.ndarray, ...] | None, present: np.ndarray | None = None) -> None:
    """The engine after compiled ticks to ``t``: the state from the packed bodies ``big``, ``coords``, ``extras`` and
    ``control`` (with the last perception's leaders, percepts and junction waits where the ticks perceived; the
    bodies' presence ``present`` where actors left the map in the last tick), the ticks counted and the recorder's
    rows."""
    s = engine.state
    if perceived is not None:
        leaders, percepts, wait_i, wait_u = perceived
        control = with_changes(control, leaders=tuple(leaders.tolist()),
                               percepts=tuple(map(tuple, percepts.tolist())),
                               yields=tuple(zip(wait_i.tolist(), wait_u.tolist())))
    engine.ticks_simulated += t - s.tick
    engine.state = s.evolve(tick=t, bodies=kinematics._bodies_from(big, len(s.coords.u),
                                                                    s.bodies.present if present is None else present),
                            coords=coords, extras=extras, control=control)
    engine.recorder.rows = row


#: kinematic-v1's extras, in the order :func:`simready.sim.core.tick_kernels.run_ticks` numbers them.
_QUIET_EXTRAS = ("accel_mps2", "throttle", "brake", "steer_rad", "slip_rad")
#: dynamic-v1's, in the order :func:`simready.sim.backends.dynamic.ticks.run_dynamic_ticks` numbers them.
_DYNAMIC_EXTRAS = (*_QUIET_EXTRAS, "tyre_util")
#: At most this many ticks in one compiled call while a goal's profile or a lateral manoeuvre moves (their
#: references are evaluated in Python beforehand, tick by tick).
_MOVING_TICKS = 128
#: The steps the compiled ticks repeat (:meth:`simready.sim.backends.kinematic.KinematicBackend.advance`,
#: :meth:`simready.sim.backends.dynamic.DynamicBackend.advance` with its arguments).
_KINEMATIC_ADVANCE = KinematicBackend.advance
_DYNAMIC_ADVANCE = DynamicBackend.advance
_DYNAMIC_ARGS = DynamicBackend.quiet_args


def _dynamic_commit(engine: QuietHost, args: tuple[Any, ...], physics: tuple[Any, ...], own: list[int], table: Any,
                    buf: np.ndarray, standstill: np.ndarray) -> int:
    """dynamic-v1's quiet ticks (:func:`simready.sim.backends.dynamic.ticks.run_dynamic_ticks`) from ``args``
    (:func:`~simready.sim.core.tick_kernels.run_ticks`') and the backend's ``physics``
    (:meth:`~simready.sim.backends.dynamic.DynamicBackend.quiet_args`); the actors ``own`` with a lateral goal take
    its references, the others keep their offsets. Leaves the state :meth:`~.loop.Engine.step` gives after the last
    committed tick (and the backend's pending physics where the run stopped after a tick's); the ticks committed."""
    s = engine.state
    sc, c, b = s.control, s.coords, s.bodies
    n = len(c.u)
    t0 = s.tick
    lat_own = np.zeros(n, dtype=np.bool_)
    lat_own[own] = True
    (t, why, row, u, v, acc, yaw, big, slip, throttle, brake, lane, s_lane, perceived, leaders, percepts, wait_i,
     wait_u, d, d_rate, _, steer, util, present) = dynamic_ticks.run_dynamic_ticks(*args, physics[0], physics[1],
                                                                          np.array(c.d, dtype=np.float64), lat_own,
                                                                          *physics[2:])
    k = int(t) - t0
    engine.backend.quiet_done(int(t), why == dynamic_ticks.STOP_AFTER, physics)  # type: ignore[attr-defined]
    if why == dynamic_ticks.STOP_BEFORE:
        engine._python_at = int(t)
    if k == 0:
        return 0
    table.remember_lanes(ro(u), lane, s_lane)
    e = engine.scene.actors.ego
    # d_rate: the last committed tick's lateral rates (lateral_refs' values: the goals' where an actor has one).
    coords = with_changes(c, u=u, d=ro(d), d_rate=ro(d_rate), v=ro(v), a=ro(acc), yaw=ro(yaw))
    steer_x, util_x = np.zeros(n), np.zeros(n)
    if e is not None and b.present[e]:
        steer_x[e], util_x[e] = steer, util
    extras = {"accel_mps2": acc, "throttle": throttle, "brake": brake, "steer_rad": steer_x, "slip_rad": slip,
              "tyre_util": util_x}
    control = with_changes(sc, actuation=tuple(buf.tolist()) if e is not None else sc.actuation, peds=tuple(sc.peds),
                           standstill=tuple(standstill.tolist()), steer_rad=steer if e is not None else sc.steer_rad)
    left = why == dynamic_ticks.STOP_LEFT
    _settle(engine, int(t), int(row), big, coords, extras, control,
            (leaders, percepts, wait_i, wait_u) if perceived else None, frozen(present, bool) if left else None)
    if left:
        # Engine._leave_map's events for the actors that left in the last tick (its state, its order).
        view = TickView(engine.scene, engine.state, table)
        ids = engine.scene.actors.ids
        engine.events.extend(interactions.event(view, "despawn", actor=ids[i], reason="left the map")
                             for i in np.flatnonzero(b.present & ~present).tolist())
    return k


def _impact_window(engine: QuietHost, t0: int, limit: int) -> int:
    """The last tick before ``limit`` from which the compiled ticks may step on while a contact lasts: before the tick
    whose step gives an open ``collision`` event its delta-v (:func:`~.collisions.impact_delta_v`'s test)."""
    scene = engine.scene
    open_t = [ev["t"] for ev in engine.events if ev["type"] == "collision" and "delta_v_mps" not in ev]
    if not open_t:
        return limit
    for tick in range(t0 + 1, limit + 1):
        t = (tick - scene.warmup_ticks) * scene.dt
        if any(t - t_ev >= collisions.IMPACT_WINDOW_S - 1e-9 for t_ev in open_t):
            return tick - 1
    return limit


def _numpy_loops() -> tuple[int, int, int]:
    """numpy's float64 ``arctan2``, ``sin`` and ``cos`` loops for the compiled ticks (0: none usable)."""
    return numpy_loops.numpy_loop(np.arctan2), numpy_loops.numpy_loop(np.sin), numpy_loops.numpy_loop(np.cos)


def _constant_until(profile: Any, tick: int, dt: float) -> int:
    """The first tick from ``tick`` on at which ``profile``'s value may differ from its value at ``tick``
    (``tick`` itself: it is moving now). Before its start a profile holds its start value, and past its end
    (and its carry-over's) its end value (:meth:`simready.sim.core.profiles.Profile.at`)."""
    if tick < profile.start_tick:
        return int(profile.start_tick)
    if profile.shape == "step" or (profile.duration_s <= 0.0 and not profile.carries):
        return interactions.NEVER
    elapsed_s = (tick - profile.start_tick) * dt
    if (profile.duration_s <= 0.0 or elapsed_s / profile.duration_s >= 1.0) and (
            not profile.carries or elapsed_s / profile.carry_s >= 1.0):
        return interactions.NEVER
    return tick
