"""kinematic-v1's quiet ticks in one compiled call (numba): plan, integrate, place, check and record, tick after tick.

Why: a kinematic tick is ~1 µs of arithmetic inside ~70 µs of Python
(the view, the planner's goals and pedestrians, the backend's step, the
state's copies, the recorder). Most ticks nothing happens that needs
Python: no trigger is due, no goal reads the state, no pedestrian changes
its mind, nobody touches or leaves the map. The engine
(:meth:`simready.sim.engine.Engine._quiet_ticks`) hands such a run of ticks
to :func:`run_ticks`, which steps them over preallocated arrays — perception
included (leaders, pedestrians in corridors, junction waits, every
:data:`~simready.sim.core.constants.PERCEPTION_PERIOD_S`) — and returns at
the first tick that needs Python, before stepping it, so that tick is then
stepped by the ordinary Python tick, from the same state.

Bits: each tick repeats the Python tick's IEEE operations in its order —
the planner's perception (:func:`simready.sim.controllers.planner.plan`,
:func:`simready.sim.behavior.junctions.yield_stops`), its stationary obstacles
(:func:`simready.sim.controllers.planner.planning._stationary_obstacles`),
the pedestrians' held kerb decision (:func:`simready.sim.controllers.pedestrian.update`
off perception ticks), the planner kernel
(:func:`simready.sim.core.planner_kernels.accelerations`), the ego's actuation
(:mod:`simready.sim.controllers.actuation`), the kinematic step
(:func:`simready.sim.core.kinematics.step_on_paths`) and the recorder's row
(:func:`simready.sim.core.record_kernels.record_row`) — calling the same compiled
kernels, with ``fastmath`` off. The two arctangents of the body model are
numpy's own: numba's ``atan2`` does not always give numpy's bits (numpy's
is a SIMD loop on this kind of CPU), so :mod:`.numpy_loops` finds numpy's
compiled ``arctan2`` loop for float64 and calls it, on the same contiguous
rows numpy is given.

Cache: compiled beside this module (``cache=True``; the first rollout on a
machine compiles the loop, ~10–30 s). numba keys a cached function to its
own file's contents only, but the loop carries compiled copies of the
kernels it calls (:mod:`.kernels`, :mod:`.planner_kernels`, :mod:`.numpy_loops`,
:mod:`.record_kernels`): :func:`~.cache_stamp.stamp_callees` adds those files'
contents to the key, so an edit of any compiles the loop again.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.sim.core import kernels as K
from simready.sim.core import numpy_loops as NL
from simready.sim.core import planner_kernels as pk
from simready.sim.core import record_kernels as R
from simready.sim.core.cache_stamp import stamp_callees

#: The modules whose compiled kernels the loop carries.
_CALLEES = (K.__file__, pk.__file__, NL.__file__, R.__file__)
stamp_callees(__file__, _CALLEES)

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)

#: Slots of :func:`run_ticks`' integer parameters ``ic``.
I_TICK, I_END, I_WARMUP, I_EVERY, I_ROW, I_EGO, I_PERCEIVE, I_LEADERS, I_SIN, I_COS, I_RECORD, I_PHYSICS = range(12)
#: How many slots ``ic`` has.
N_IC = 12
#: Slots of its float parameters ``fc``.
(F_DT, F_FG, F_STAND, F_TRACK, F_AMBER2, F_STANDOFF, F_PED_R, F_GX0, F_GY0, F_GINV, F_RAMP, F_MAX_SPEED, F_LO_X,
 F_HI_X, F_LO_Y, F_HI_Y, F_MAX_Z, F_MASS, F_FRICTION, F_E_DECEL, F_E_ACCEL, F_RR_G, F_RHO, F_CDA, F_G, F_LOOKAHEAD,
 F_MARGIN, F_EYE, F_KERB, F_DIVERGE, F_CONFLICT_AHEAD, F_CLEARANCE, F_JUNCTION_GAP, F_GAP_ACCEPT) = range(34)
N_FC = 34
#: Why :func:`run_ticks` stopped (its first result's companion): the end it was given, or a tick needing Python.
STOP_END, STOP_EVENT = 0, 1


@numba.njit(**_JIT)
def headings(atan_fp: int, placed: np.ndarray, d_rate: np.ndarray, lateral: bool, yaw: np.ndarray,
             heading_v: np.ndarray) -> None:
    """:func:`simready.sim.core.kinematics._headings` between the placement and packing kernels: the body headings
    into ``yaw`` (the chord heading plus ``arctan2(ḋ, max(v, 1))`` where ``lateral``, else plus ``ḋ``) and the
    velocity directions into ``heading_v``, with numpy's own ``arctan2`` loop at ``atan_fp`` on the rows numpy is
    given."""
    n = yaw.shape[0]
    if lateral:
        turn = np.empty(n)
        NL.atan2_rows(atan_fp, d_rate, placed[K.BIG_V], turn)
        for i in range(n):
            yaw[i] = placed[K.YAW_C, i] + turn[i]
    else:
        for i in range(n):
            yaw[i] = placed[K.YAW_C, i] + d_rate[i]
    NL.atan2_rows(atan_fp, placed[K.VY], placed[K.VX], heading_v)


@numba.njit(**_JIT)
def step_paths(u: np.ndarray, v: np.ndarray, accel: np.ndarray, present: np.ndarray, dt: float, cum: np.ndarray,
               base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, psi: np.ndarray,
               dpsi: np.ndarray, heights: np.ndarray, g_x0: float, g_y0: float, g_inv: float, d: np.ndarray,
               d_rate: np.ndarray, d_acc: np.ndarray, seg_lane: np.ndarray, lane_u0: np.ndarray, prev_pos: np.ndarray,
               prev_quat: np.ndarray, prev_yaw: np.ndarray, reach2: np.ndarray, hl: np.ndarray, hw: np.ndarray,
               w_rows: np.ndarray, w_first: np.ndarray, w_z_start: np.ndarray, w_step_u: np.ndarray,
               w_step_dh: np.ndarray, inv_ramp: float, max_speed: float, lo_x: float, hi_x: float, lo_y: float,
               hi_y: float, max_abs_z: float, leaves: np.ndarray, lengths: np.ndarray, atan_fp: int, u1: np.ndarray,
               v1: np.ndarray, a1: np.ndarray, lane: np.ndarray, s: np.ndarray, yaw: np.ndarray, big: np.ndarray,
               slip: np.ndarray, pairs: np.ndarray) -> tuple[int, int, int]:
    """:func:`simready.sim.core.kinematics.step_on_paths`' arithmetic in one call: the integration, placement and new
    lanes (:func:`simready.sim.core.kernels.advance_place_lanes` into ``u1``, ``v1``, ``a1``, ``lane``, ``s``), the
    headings (numpy's own ``arctan2`` loop at ``atan_fp`` on the rows numpy is given, as
    :func:`~simready.sim.core.kinematics._headings` calls it, into ``yaw``) and the packing with its checks
    (:func:`simready.sim.core.kernels.pack_step_walk_ok` into ``big``, ``slip``, ``pairs``). Returns the placement's
    flags, the number of contact pairs and the verdict; where the flags lack :data:`~simready.sim.core.kernels.FINITE`
    (or there is no actor) only the first part ran (the caller takes the reference path)."""
    n = u.shape[0]
    placed = np.empty((8, n))
    flags = K.advance_place_lanes(u, v, accel, present, dt, cum, base, last, pts, dirs, psi, dpsi, heights, g_x0,
                                  g_y0, g_inv, d, d_rate, seg_lane, lane_u0, u1, v1, a1, placed, lane, s)
    if n == 0 or not flags & K.FINITE:
        return flags, 0, 0
    lateral = (flags & K.LATERAL) != 0
    heading_v = np.empty(n)
    headings(atan_fp, placed, d_rate, lateral, yaw, heading_v)
    m, ok = K.pack_step_walk_ok(placed, yaw, heading_v, d_rate, d_acc, v1, a1, lateral, present, prev_pos, prev_quat,
                                prev_yaw, reach2, hl, hw, w_rows, w_first, w_z_start, w_step_u, w_step_dh, inv_ramp, u1,
                                big, slip, pairs, max_speed, lo_x, hi_x, lo_y, hi_y, max_abs_z, leaves, lengths)
    return flags, m, ok


@numba.njit(**_JIT)
def hazard(i: int, px: float, py: float, xy: np.ndarray, yaw: np.ndarray, v: np.ndarray, present: np.ndarray,
           is_vehicle: np.ndarray, hl: np.ndarray, hw: np.ndarray, occluder: np.ndarray, e0: np.ndarray,
           e1: np.ndarray, gap_accept: float, eye: float, sin_fp: int, cos_fp: int) -> bool:
    """:func:`simready.sim.controllers.pedestrian.hazard` for pedestrian ``i`` and the kerb point (px, py): its
    operations in its order, numpy's ``cos`` and ``sin`` loops on the candidates' headings as numpy is given them,
    and the sight lines of :func:`simready.sim.core.planner_kernels.sight_lines`."""
    n = xy.shape[0]
    cands = np.empty(n, dtype=np.int64)
    m = 0
    for j in range(n):
        if is_vehicle[j] and present[j] and v[j] > 1.0:
            cands[m] = j
            m += 1
    if m == 0:
        return False
    psi = np.empty(m)
    for k in range(m):
        psi[k] = yaw[cands[k]]
    c, s = np.empty(m), np.empty(m)
    NL.unary_rows(cos_fp, psi, c)
    NL.unary_rows(sin_fp, psi, s)
    close = np.empty(m, dtype=np.int64)
    q = 0
    for k in range(m):
        j = cands[k]
        r0, r1 = px - xy[j, 0], py - xy[j, 1]
        along = r0 * c[k] + r1 * s[k] - hl[j]
        lateral = abs(-r0 * s[k] + r1 * c[k])
        arrival = along / v[j]
        if along > -hl[j] and arrival < gap_accept and lateral < hw[j] + 4.0:
            close[q] = j
            q += 1
    if q == 0:
        return False
    observers = np.full(q, i, dtype=np.int64)
    seen = np.empty(q, dtype=np.bool_)
    pk.sight_lines(xy, yaw, hl, hw, present, occluder, e0, e1, observers, close[:q].copy(), eye, seen)
    for k in range(q):
        if seen[k]:
            return True
    return False


@numba.njit(**_JIT)
def _net_command(cmd: float, v: float, mass: float, friction: float, decel_max: float, accel_max: float, stand: float,
                 rr_g: float, rho: float, cda: float, g: float) -> tuple[float, float, float]:
    """:func:`simready.sim.controllers.actuation.net_command` (Python's ``min``/``max``: the first argument unless
    the second is strictly beyond it)."""
    if v <= stand:
        resist = 0.0
    else:
        drag = 0.5 * rho * cda * v * v / mass
        resist = rr_g + drag
    fg = friction * g
    brake_limit = fg if fg < decel_max else decel_max
    if math.isnan(cmd):
        return -resist, 0.0, 0.0
    lo = -brake_limit
    a = lo if lo > cmd else cmd
    a = accel_max if accel_max < a else a
    need = a + resist
    throttle = ((0.0 if 0.0 > need else need) / (accel_max + resist)) if need > 0 else 0.0
    brake = ((0.0 if 0.0 > -need else -need) / (brake_limit + resist)) if need < 0 else 0.0
    brake = 1.0 if 1.0 < brake else brake
    if v <= stand and a < 0.0:
        return a, 0.0, brake
    return a, (1.0 if 1.0 < throttle else throttle), brake


@numba.njit(**_JIT)
def yield_stops(u: np.ndarray, v: np.ndarray, present: np.ndarray, lane_bound: np.ndarray, yields: np.ndarray,
                hl: np.ndarray, hw: np.ndarray, lane_u0: np.ndarray, c_first: np.ndarray, c_ux: np.ndarray,
                c_lane: np.ndarray, c_s: np.ndarray, c_wait: np.ndarray, lookahead: float, clearance_m: float,
                gap_s: float, out_i: np.ndarray, out_u: np.ndarray) -> int:
    """:func:`simready.sim.behavior.junctions.yield_stops` (its operations in its order): the yielding vehicles
    that must give way now and the u of their waiting points into ``out_i``, ``out_u``; returns how many.
    Actor i's conflicts are ``c_first[i]:c_first[i + 1]`` of ``c_ux`` (u of the conflict point on its path),
    ``c_lane`` (the other lane's index), ``c_s`` (s of the point on it) and ``c_wait`` (u of the waiting point)."""
    n = u.shape[0]
    m = 0
    for i in range(n):
        if not (present[i] and lane_bound[i]) or not yields[i]:
            continue
        u_i, hl_i = u[i], hl[i]
        v_i = 1.0 if 1.0 > v[i] else v[i]
        front = u_i + hl_i
        wait = np.inf
        for k in range(c_first[i], c_first[i + 1]):
            u_x, li, s_other, u_wait = c_ux[k], c_lane[k], c_s[k], c_wait[k]
            if front > u_wait + 0.5 or u_x - front > lookahead or u_wait >= wait:
                continue
            t_clear = (u_x - u_i + hl_i + 2.0) / v_i
            for j in range(n):
                if not (present[j] and lane_bound[j]) or j == i or not math.isfinite(lane_u0[j, li]):
                    continue
                d_j = lane_u0[j, li] + s_other - u[j]
                clearance = hl[j] + hw[i] + clearance_m
                if d_j < -clearance:
                    continue
                v_j = v[j]
                if d_j < clearance or (v_j > 0.5 and d_j / v_j < t_clear + gap_s):
                    wait = u_wait
                    break
        if math.isfinite(wait):
            out_i[m] = i
            out_u[m] = wait
            m += 1
    return m


@numba.njit(**_JIT)
def ticks_scratch(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                   np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                   np.ndarray, np.ndarray, np.ndarray]:
    """:func:`run_ticks`' scratch for ``n`` actors: ``a1``, ``slip``, ``throttle``, ``brake``, ``zeros`` (zeros),
    ``pairs`` (max(n(n − 1)/2, 1), 2), ``a_des``, ``accel`` (n,), ``gaps`` (n, n), ``no_aware`` (n,) False,
    ``corridor`` (n·n, 2); each tick's step arrays in two alternating rows, ``steps`` (2, 8, n), ``bigs`` (2, 13·n),
    ``lanes`` (2, n), and its ``refs`` (5, n), ``placed`` (8, n), ``heading_v`` (n,).

    Why apart: dynamic-v1's compiled ticks (:func:`simready.sim.backends.dynamic.ticks.run_dynamic_ticks`) plan each
    tick with one :func:`run_ticks` call; allocated inside it, these were eleven allocations a tick, and an allocation
    inside a compiled function keeps numba's reference counts (an atomic increment and decrement) of each of its
    array arguments at every call."""
    n_pairs = n * (n - 1) // 2
    return (np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n),
            np.empty((n_pairs if n_pairs > 0 else 1, 2), dtype=np.int64), np.empty(n), np.empty(n), np.empty((n, n)),
            np.zeros(n, dtype=np.bool_), np.empty((n * n, 2), dtype=np.int64), np.empty((2, 8, n)),
            np.empty((2, 13 * n)), np.empty((2, n), dtype=np.int64), np.empty((5, n)), np.empty((8, n)), np.empty(n))


@numba.njit(**_JIT)
def run_ticks(ic: np.ndarray, fc: np.ndarray, u: np.ndarray, v: np.ndarray, yaw: np.ndarray, big: np.ndarray,
              present: np.ndarray, lat: np.ndarray, lane: np.ndarray,
              s: np.ndarray, standstill: np.ndarray, act_buf: np.ndarray, consts: np.ndarray, refs_t: np.ndarray,
              yield_i: np.ndarray, yield_u: np.ndarray, ped_rows: np.ndarray, ped_state: np.ndarray,
              ped_kerb: np.ndarray, lengths: np.ndarray, leader_u0: np.ndarray, leaders: np.ndarray,
              percepts: np.ndarray, stop_u: np.ndarray, stop_col: np.ndarray, signals: np.ndarray, cum: np.ndarray,
              base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, psi: np.ndarray,
              dpsi: np.ndarray, heights: np.ndarray, seg_lane: np.ndarray, lane_u0: np.ndarray, reach2: np.ndarray,
              hl: np.ndarray, hw: np.ndarray, w_rows: np.ndarray, w_first: np.ndarray, w_z_start: np.ndarray,
              w_step_u: np.ndarray, w_step_dh: np.ndarray, leaves: np.ndarray, atan_fp: int, walk: np.ndarray,
              o_pos: np.ndarray, o_quat: np.ndarray, o_vel: np.ndarray, o_omega: np.ndarray, o_present: np.ndarray,
              o_lane: np.ndarray, o_s: np.ndarray, o_x: np.ndarray, x_src: np.ndarray, lane_bound: np.ndarray,
              avoids: np.ndarray, yields: np.ndarray, is_ped: np.ndarray, decel_comfort: np.ndarray,
              occluder: np.ndarray, e0: np.ndarray, e1: np.ndarray, c_first: np.ndarray, c_ux: np.ndarray,
              c_lane: np.ndarray, c_s: np.ndarray, c_wait: np.ndarray, guard_i: np.ndarray, guard_c: np.ndarray,
              is_vehicle: np.ndarray, ped_pt: np.ndarray, a1: np.ndarray, slip: np.ndarray, throttle: np.ndarray,
              brake: np.ndarray, zeros: np.ndarray, pairs: np.ndarray, a_des: np.ndarray, accel: np.ndarray,
              gaps: np.ndarray, no_aware: np.ndarray, corridor: np.ndarray, steps: np.ndarray, bigs: np.ndarray,
              lanes: np.ndarray, refs: np.ndarray, placed: np.ndarray, heading_v: np.ndarray
              ) -> tuple[int, int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                         np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray,
                         np.ndarray, np.ndarray]:
    """Step ticks ``ic[I_TICK]`` … while they are quiet, at most to ``ic[I_END]``; returns ``(tick reached, why it
    stopped, recorder rows, u, v, accel, yaw, big, slip, throttle, brake, lane, s)`` of the last stepped tick (when
    none was, the tick reached is the first: the caller then steps that tick in Python), then what the planner
    perceived (below) and its commanded accelerations of the last tick planned (the ego's after its actuation: what
    the step integrated). The ticks are recorded from the warm-up's end where ``ic[I_RECORD]``.

    State in: ``u``, ``v``, ``yaw`` (N,), ``big`` (13·N: pos, quat, vel, omega as the kinematic step packs them),
    ``present``, the lateral references ``lat`` (L, 3, N): row t − tick holds tick t's ``d``, ``ḋ``, ``d̈``
    (:func:`simready.sim.controllers.lateral.lateral_refs`), the lanes of ``u``
    (``lane``, ``s``); ``standstill`` (N,) and the ego's delay line ``act_buf`` are updated in place (only for
    stepped ticks). Planner: ``consts`` and ``refs_t`` (L, 5, N): each tick's references from the goals, with
    ``FIXED_GAP`` at inf, the held junction waits (``yield_i``, ``yield_u``), the pedestrians (``ped_rows``;
    ``ped_state`` (P, 7): active, seen, hazard since, clear since (−1: none), mode (0 walk, 1 wait), the reaction
    delay in ticks, whether it stops for hazards; ``ped_kerb`` and its point ``ped_pt`` (P, 2)), the held leaders and percepts, the stop lines and
    the signal codes per tick. Step: the path table's and ground's kernel arrays, the footprints, the walk profile,
    ``leaves``.
    Recorder: its arrays and the extras' order ``x_src`` (0 accel, 1 throttle, 2 brake, 3 steer, 4 slip).

    Perception ticks (every ``ic[I_EVERY]``) perceive here when ``ic[I_PERCEIVE]``: leaders
    (:func:`simready.sim.core.planner_kernels.lane_gaps`; none when ``ic[I_LEADERS]`` is 0, fewer than two
    lane-bound actors), pedestrians in corridors (:func:`~simready.sim.core.planner_kernels.corridor_pedestrians`)
    and junction waits (:func:`yield_stops` of the path's conflicts ``c_*``); the last of these is returned after
    the rest (``perceived`` ticks, leaders, the (K, 2) percepts, the waits' actors and u).

    A tick needs Python (and is not stepped) when a guard's actor (``guard_i``) is present within its circle
    ``guard_c`` (x, y, r) from the warm-up's end on (a ``when`` trigger may be due:
    :func:`simready.sim.behavior.interactions.quiet_guards`), when it perceives without ``ic[I_PERCEIVE]``, when
    a pedestrian's kerb memory would change (its hazard test is :func:`hazard`, with numpy's ``sin`` and ``cos``
    loops at ``ic[I_SIN]``, ``ic[I_COS]``; a borderline "near" the kerb is left to Python), or when its step has a
    contact or a body leaving the map (unless ``ic[I_PHYSICS]``: the caller's physics decides the tick's contacts and
    rows, dynamic-v1's, whose tick reads neither of the kinematic step's), a non-finite or failing state.

    Scratch, from :func:`ticks_scratch` (dynamic-v1's compiled ticks give the same arrays for each tick they plan):
    ``a1``, ``slip``, ``throttle``, ``brake`` (N,) zeros, returned where no tick is stepped; ``zeros`` (N,) zeros;
    ``pairs``, ``a_des``, ``accel`` (returned), ``gaps``, ``no_aware`` (N,) False, ``corridor``. None of them is
    written but ``pairs``, ``a_des``, ``accel``, ``gaps`` and ``corridor``, which each tick writes before it reads
    them. Each tick's state is written in row ``t % 2`` of ``steps`` (u, v, accel, yaw, slip, throttle, brake, s),
    ``bigs`` and ``lanes``: never the row of the state it starts from (the last tick's, or the caller's arrays),
    which the results are then (a caller that keeps them gives fresh scratch to its next call); ``refs``, ``placed``
    and ``heading_v`` are the tick's planner references, placement and velocity headings.
    """
    n = u.shape[0]
    t = ic[I_TICK]
    end = ic[I_END]
    warmup, every, row, e = ic[I_WARMUP], ic[I_EVERY], ic[I_ROW], ic[I_EGO]
    dt, stand = fc[F_DT], fc[F_STAND]
    n_buf = act_buf.shape[0]
    why = STOP_END
    t_first = t
    perceived = 0
    new_leaders = leaders
    m_c = 0
    new_yi, new_yu = yield_i, yield_u
    while t < end:
        if t >= warmup:
            near = False
            for q in range(guard_i.shape[0]):
                i = guard_i[q]
                dx, dy = big[3 * i] - guard_c[q, 0], big[3 * i + 1] - guard_c[q, 1]
                if present[i] and dx * dx + dy * dy <= guard_c[q, 2] * guard_c[q, 2]:
                    near = True
            if near:
                why = STOP_EVENT
                break
        perceive = t % every == 0
        if perceive:
            if not ic[I_PERCEIVE]:
                why = STOP_EVENT
                break
            # The planner's perception (perceive_leaders, perceive_pedestrians; no junction waits here).
            new_leaders = np.full(n, -1, dtype=np.int64)
            if ic[I_LEADERS]:
                pk.lane_gaps(lane, s, u, present, lane_bound, lane_u0, hl, gaps, new_leaders, lane_u0, no_aware,
                             fc[F_DIVERGE])
            m_c = pk.corridor_pedestrians(big[:3 * n].reshape((n, 3))[:, :2], big[7 * n:10 * n].reshape((n, 3))[:, :2],
                                          yaw, v, present, lane_bound, avoids, yields, is_ped, hl, hw, decel_comfort,
                                          occluder, e0, e1, fc[F_LOOKAHEAD], fc[F_MARGIN], fc[F_PED_R], fc[F_EYE],
                                          corridor)
            wait_i, wait_u = np.empty(n, dtype=np.int64), np.empty(n)
            m_y = yield_stops(u, v, present, lane_bound, yields, hl, hw, lane_u0, c_first, c_ux, c_lane, c_s, c_wait,
                              fc[F_CONFLICT_AHEAD], fc[F_CLEARANCE], fc[F_JUNCTION_GAP], wait_i, wait_u)
            new_yi, new_yu = wait_i[:m_y].copy(), wait_u[:m_y].copy()
        tick_yi, tick_yu = (new_yi, new_yu) if perceive else (yield_i, yield_u)
        refs[:, :] = refs_t[t - t_first]
        d, d_rate, d_acc = lat[t - t_first, 0], lat[t - t_first, 1], lat[t - t_first, 2]
        # The planner's stationary obstacles: junction waits, then each present pedestrian's route end and kerb.
        for k in range(tick_yi.shape[0]):
            i = tick_yi[k]
            g = tick_yu[k] - u[i] - hl[i] + consts[pk.S0, i]
            if g < refs[pk.FIXED_GAP, i]:
                refs[pk.FIXED_GAP, i] = g
        changed = False
        for r in range(ped_rows.shape[0]):
            i = ped_rows[r]
            if not present[i]:
                continue
            end_gap = lengths[i] - u[i]
            g = (0.0 if 0.0 > end_gap else end_gap) if end_gap < np.inf else np.inf
            if ped_state[r, 0]:
                kerb = ped_kerb[r]
                if u[i] > kerb + 0.3:
                    changed = True
                    break
                seen, since, clear, mode, delay = ped_state[r, 1], ped_state[r, 2], ped_state[r, 3], ped_state[r, 4], \
                    ped_state[r, 5]
                # pedestrian.update: the hazard re-evaluated on perception ticks, held in between.
                seen_now = seen
                if perceive:
                    seen_now = 0
                    if ped_state[r, 6]:
                        vv = v[i] if not 0.0 > v[i] else 0.0
                        lhs, rhs = kerb - u[i], fc[F_KERB] + 0.5 * (vv * vv) / 2.0
                        if abs(lhs - rhs) <= 1e-9 * (1.0 + abs(rhs)):
                            # Python squares with ``**`` (pow): a borderline "near" is left to it.
                            changed = True
                            break
                        if lhs < rhs and hazard(i, ped_pt[r, 0], ped_pt[r, 1], big[:3 * n].reshape((n, 3))[:, :2], yaw,
                                                v, present, is_vehicle, hl, hw, occluder, e0, e1, fc[F_GAP_ACCEPT],
                                                fc[F_EYE], ic[I_SIN], ic[I_COS]):
                            seen_now = 1
                since_now = (since if since >= 0 else t) if seen_now else -1
                clear_now = -1 if seen_now else (clear if clear >= 0 else t)
                mode_now = mode
                if mode == 0 and since_now >= 0 and t - since_now >= delay:
                    mode_now = 1
                elif mode == 1 and clear_now >= 0 and t - clear_now >= delay:
                    mode_now = 0
                if mode_now != mode or since_now != since or clear_now != clear or seen_now != seen:
                    # The memory changes (a new PedMemory): this tick is Python's.
                    changed = True
                    break
                if mode == 1:
                    kg = kerb - u[i] - 0.2
                    if kg < g:
                        g = kg
            refs[pk.FIXED_GAP, i] = g
        if changed:
            why = STOP_EVENT
            break
        tick_leaders, tick_percepts = leaders, percepts
        if perceive:
            tick_leaders, tick_percepts = new_leaders, corridor[:m_c].copy()
        pk.accelerations(consts, refs, u, v, present, lane, s, leader_u0, tick_leaders, tick_percepts,
                         big[:3 * n].reshape((n, 3))[:, :2], yaw, stop_u, stop_col,
                         signals[t if t < signals.shape[0] - 1 else signals.shape[0] - 1], dt, fc[F_FG], stand,
                         fc[F_TRACK], fc[F_AMBER2], fc[F_STANDOFF], fc[F_PED_R], a_des, accel)
        b = t % 2
        u1, v1, a1n, yaw1, slip1, thr1, brk1, s1 = (steps[b, 0], steps[b, 1], steps[b, 2], steps[b, 3], steps[b, 4],
                                                    steps[b, 5], steps[b, 6], steps[b, 7])
        big1, lane1 = bigs[b], lanes[b]
        thr1[:] = 0.0
        brk1[:] = 0.0
        cmd_e = 0.0
        if e >= 0:
            v_e = v[e]
            cmd_e = act_buf[0] if n_buf > 0 else a_des[e]
            net, thr1[e], brk1[e] = _net_command(cmd_e, v_e, fc[F_MASS], fc[F_FRICTION], fc[F_E_DECEL],
                                                 fc[F_E_ACCEL], stand, fc[F_RR_G], fc[F_RHO], fc[F_CDA], fc[F_G])
            accel[e] = 0.0 if (v_e <= 0.0 and net < 0.0) else net
        # The kinematic step (step_on_paths), its kernels called here (a call of step_paths would pass ~40 arrays).
        flags = K.advance_place_lanes(u, v, accel, present, dt, cum, base, last, pts, dirs, psi, dpsi, heights,
                                      fc[F_GX0], fc[F_GY0], fc[F_GINV], d, d_rate, seg_lane, lane_u0, u1, v1, a1n,
                                      placed, lane1, s1)
        if n == 0 or not flags & K.FINITE:
            why = STOP_EVENT
            break
        lateral = (flags & K.LATERAL) != 0
        headings(atan_fp, placed, d_rate, lateral, yaw1, heading_v)
        m, ok = K.pack_step_walk_ok(placed, yaw1, heading_v, d_rate, d_acc, v1, a1n, lateral, present,
                                    big[:3 * n].reshape((n, 3)), big[3 * n:7 * n].reshape((n, 4)), yaw, reach2, hl,
                                    hw, w_rows, w_first, w_z_start, w_step_u, w_step_dh, fc[F_RAMP], u1, big1, slip1,
                                    pairs, fc[F_MAX_SPEED], fc[F_LO_X], fc[F_HI_X], fc[F_LO_Y], fc[F_HI_Y],
                                    fc[F_MAX_Z], leaves, lengths)
        want = K.OK_BOUNDS if (t + 1) % every == 0 else K.OK_STATE
        if (m > 0 or not ok & K.OK_STAYS) and not ic[I_PHYSICS] or not ok & want:
            why = STOP_EVENT
            break
        # Commit the tick.
        if e >= 0 and n_buf > 0:
            for k in range(n_buf - 1):
                act_buf[k] = act_buf[k + 1]
            act_buf[n_buf - 1] = a_des[e]
        for i in range(n):
            standstill[i] = standstill[i] + 1 if v1[i] < stand else 0
        u, v, a1, yaw, big, slip, throttle, brake, lane, s = u1, v1, a1n, yaw1, big1, slip1, thr1, brk1, lane1, s1
        t += 1
        if perceive:
            perceived += 1
            leaders, percepts = tick_leaders, tick_percepts
            yield_i, yield_u = tick_yi, tick_yu
        if t >= warmup and ic[I_RECORD]:
            R.record_row(row, big[:3 * n].reshape((n, 3)), big[3 * n:7 * n].reshape((n, 4)),
                         big[7 * n:10 * n].reshape((n, 3)), big[10 * n:].reshape((n, 3)), present, lane, s, u, walk,
                         o_pos, o_quat, o_vel, o_omega, o_present, o_lane, o_s)
            for j in range(5):
                c = x_src[j]
                src = a1 if c == 0 else throttle if c == 1 else brake if c == 2 else zeros if c == 3 else slip
                for i in range(n):
                    o_x[j, row, i] = src[i]
            row += 1
    return (t, why, row, u, v, a1, yaw, big, slip, throttle, brake, lane, s, perceived, leaders, percepts, yield_i,
            yield_u, accel)
