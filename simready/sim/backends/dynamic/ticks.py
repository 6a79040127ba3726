"""dynamic-v1's quiet ticks in one compiled call (numba): plan, step, physics, check and record, tick after tick.

Why: a dynamic tick's physics is one compiled call through PyBullet's C API (:func:`.capi.tick_step`), but around it
the tick was ~100 µs of Python (the planner, the kinematic step, the backend's rows, contacts and checks, the state's
copies, the recorder). The engine (:func:`simready.sim.engine.quiet_ticks.quiet_ticks`) hands a run of ticks that
need no Python to :func:`run_dynamic_ticks`, which steps each of them as :meth:`.backend.DynamicBackend.advance` and
:meth:`simready.sim.engine.Engine.step` do.

Each tick: the planner and the kinematic step are kinematic-v1's compiled tick
(:func:`simready.sim.core.tick_kernels.run_ticks` for that one tick, not recorded: it stops before a tick that needs
Python, as for kinematic-v1); then a parked vehicle that could wake (:meth:`.backend.DynamicBackend._wake`, tested
with a margin: a near one is left to Python) stops the run before the tick; then the ego's energy before an
unactuated tick (:func:`.capi.ego_energy`), the physics (:func:`.capi.tick_step`), the rows
(:func:`.kernels.finish_rows`), the contact points (:func:`.capi.contact_points`), the engine's verdict and the ego's
rollout checks (:func:`.kernels.check_flags`). A tick with a contact, a verdict to look at or a check to make in
Python stops the run *after* its physics (PyBullet's world cannot step back): its pending reads are returned, and the
engine's next :meth:`~simready.sim.engine.Engine.step` of that tick takes them instead of stepping the world again
(:meth:`.backend.DynamicBackend.advance`). Otherwise the tick is committed and recorded as the engine records it.

Struck road users (thrown bodies, :mod:`.thrown`): their bodies are read after the physics and their rows replace the
kinematic step's before the overlaps and the verdict; while one slides in contact with its striker, the tick's
contacts must be exactly those struck ones, and a body near rest (its striker then released) is Python's.

Bits: the same kernels the Python tick calls, in its order, on the same arrays.

Reference counts: numba increments and decrements (atomically) the count of every array it passes to a compiled call
not inlined; a tick's calls pass ~100. The run's fixed arrays, its scratch and each tick's state go to them as
borrowed views (:mod:`simready.sim.core.borrow`), whose counts numba skips: ~560 → ~105 atomic increments a
tick on the bench scene.

Cache: compiled beside this module (``cache=True``); the loop carries compiled copies of the kernels it calls, so its
cache key includes their files (:func:`~simready.sim.core.cache_stamp.stamp_callees`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.sim.backends.dynamic import capi
from simready.sim.backends.dynamic import kernels as dynamic_kernels
from simready.sim.backends.dynamic.capi import (base_quats, contact_points, ego_energy, lever_arms, read_states,
                                                state_energy, tick_step)
from simready.sim.backends.dynamic.kernels import body_frames, body_rows, check_flags, finish_rows_into, thrown_rows
from simready.sim.core import borrow
from simready.sim.core import kernels as K
from simready.sim.core import numpy_loops as NL
from simready.sim.core import planner_kernels as pk
from simready.sim.core import record_kernels as R
from simready.sim.core import tick_kernels as T
from simready.sim.core.borrow import alive, borrowed
from simready.sim.core.cache_stamp import stamp_callees

stamp_callees(__file__, (capi.__file__, dynamic_kernels.__file__, K.__file__, T.__file__, pk.__file__, NL.__file__,
                         R.__file__, borrow.__file__))

_JIT = dict(cache=True, nogil=False, error_model="numpy", fastmath=False)

#: Why :func:`run_dynamic_ticks` stopped: the end, a tick for Python before its physics, or after it (pending), or
#: after a committed tick in which actors left the map (their presence returned cleared, their events Python's).
STOP_END, STOP_BEFORE, STOP_AFTER, STOP_LEFT = 0, 1, 2, 3

#: Slots of its integer parameters ``di``.
(D_SM, D_SUBSTEPS, D_FRAME, D_EGO_BODY, D_CRASHED, D_GEMV, D_POW, D_WINDOW, D_ANY_INV, D_EGO_ROW, D_EGO) = range(11)
N_DI = 11
#: Slots of its float parameters ``df``.
(D_H, D_SLIP_MIN, D_POS_TAU, D_YAW_TAU, D_SUPPORT_TAU, D_WAKE_MARGIN, D_BELOW, D_RATE_MAX, D_GAIN, D_SLACK,
 D_MASS, D_IX, D_IY, D_IZ, D_STEER, D_REST_V, D_REST_W) = range(17)
N_DF = 17
#: Slots of the pending tick's floats ``pend``: the ego's tyre utilisation, its steering angle, its energy before
#: the tick (NaN: none).
P_UTIL, P_STEER, P_E_BEFORE = range(3)


@numba.njit(**_JIT)
def _may_wake(sleeping: np.ndarray, movers: np.ndarray, radius: np.ndarray, big: np.ndarray, n: int, dt: float,
              margin: float) -> bool:
    """Whether a sleeping parked vehicle may be near enough a moving body to wake this tick
    (:meth:`.backend.DynamicBackend._wake`'s test, with a relative slack of 1e-9: a borderline one is Python's)."""
    for a in range(sleeping.shape[0]):
        i = sleeping[a]
        xi, yi = big[3 * i], big[3 * i + 1]
        for b in range(movers.shape[0]):
            j = movers[b]
            speed = math.hypot(big[7 * n + 3 * j], big[7 * n + 3 * j + 1])
            reach = (radius[i] + radius[j]) + margin + speed * dt
            dist = math.hypot(xi - big[3 * j], yi - big[3 * j + 1])
            if not dist >= reach * (1.0 + 1e-9) + 1e-9:
                return True
    return False


@numba.njit(**_JIT)
def _struck_pair(i: int, j: int, thrown: np.ndarray, strikers: np.ndarray) -> bool:
    """Whether actors ``i``, ``j`` are a thrown road user and the striker it is still in contact with (the Python
    tick's struck contacts, :meth:`.backend.DynamicBackend._contacts`)."""
    for k in range(thrown.shape[0]):
        s = strikers[k]
        if s >= 0 and ((thrown[k] == i and s == j) or (thrown[k] == j and s == i)):
            return True
    return False


@numba.njit(**_JIT)
def _new_contact(n_points: int, contact_buf: np.ndarray, body_actor: np.ndarray, pairs: np.ndarray, m: int,
                 physical: np.ndarray, parked: np.ndarray, thrown: np.ndarray, strikers: np.ndarray) -> bool:
    """Whether this tick's contacts differ from the struck ones the state holds: a contact point (``n_points`` rows of
    ``contact_buf``: body A, body B; ``body_actor``: each body's actor, -1 none) or a footprint overlap of the final
    rows (``m`` rows of ``pairs``) between other parties than a thrown road user and its striker, or more points than
    the buffer holds."""
    if n_points > contact_buf.shape[0] or n_points < 0:
        return True
    nb = body_actor.shape[0]
    for q in range(n_points):
        ba, bb = int(contact_buf[q, 0]), int(contact_buf[q, 1])
        i = body_actor[ba] if 0 <= ba < nb else -1
        j = body_actor[bb] if 0 <= bb < nb else -1
        if i < 0 or j < 0 or not _struck_pair(i, j, thrown, strikers):
            return True
    for q in range(m):
        i, j = pairs[q, 0], pairs[q, 1]
        if (not (physical[i] and physical[j]) or not (parked[i] and parked[j])) and not _struck_pair(i, j, thrown,
                                                                                                      strikers):
            return True
    return False


@numba.njit(**_JIT)
def run_dynamic_ticks(ic: np.ndarray, fc: np.ndarray, u: np.ndarray, v: np.ndarray, yaw: np.ndarray, big: np.ndarray,
                      present: np.ndarray, lat: np.ndarray, lane: np.ndarray, s: np.ndarray, standstill: np.ndarray,
                      act_buf: np.ndarray, consts: np.ndarray, refs_t: np.ndarray, yield_i: np.ndarray,
                      yield_u: np.ndarray, ped_rows: np.ndarray, ped_state: np.ndarray, ped_kerb: np.ndarray,
                      lengths: np.ndarray, leader_u0: np.ndarray, leaders: np.ndarray, percepts: np.ndarray,
                      stop_u: np.ndarray, stop_col: np.ndarray, signals: np.ndarray, cum: np.ndarray, base: np.ndarray,
                      last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, psi: np.ndarray, dpsi: np.ndarray,
                      heights: np.ndarray, seg_lane: np.ndarray, lane_u0: np.ndarray, reach2: np.ndarray,
                      hl: np.ndarray, hw: np.ndarray, w_rows: np.ndarray, w_first: np.ndarray, w_z_start: np.ndarray,
                      w_step_u: np.ndarray, w_step_dh: np.ndarray, leaves: np.ndarray, atan_fp: int,
                      walk: np.ndarray, o_pos: np.ndarray, o_quat: np.ndarray, o_vel: np.ndarray,
                      o_omega: np.ndarray, o_present: np.ndarray, o_lane: np.ndarray, o_s: np.ndarray,
                      o_x: np.ndarray, x_src: np.ndarray, lane_bound: np.ndarray, avoids: np.ndarray,
                      yields: np.ndarray, is_ped: np.ndarray, decel_comfort: np.ndarray, occluder: np.ndarray,
                      e0: np.ndarray, e1: np.ndarray, c_first: np.ndarray, c_ux: np.ndarray, c_lane: np.ndarray,
                      c_s: np.ndarray, c_wait: np.ndarray, guard_i: np.ndarray, guard_c: np.ndarray,
                      is_vehicle: np.ndarray, ped_pt: np.ndarray, di: np.ndarray, df: np.ndarray, d: np.ndarray,
                      lat_own: np.ndarray, agent_bodies: np.ndarray, ego_k: np.ndarray, read_bodies: np.ndarray,
                      drive_idx: np.ndarray, drive_stop: np.ndarray, parked: np.ndarray, mass: np.ndarray,
                      wheelbase: np.ndarray, inertia: np.ndarray, com: np.ndarray, invs: np.ndarray,
                      has_inv: np.ndarray, coms: np.ndarray, moved_rows: np.ndarray, stand_rows: np.ndarray,
                      role: np.ndarray, contact_buf: np.ndarray, physical: np.ndarray, radius: np.ndarray,
                      sleeping: np.ndarray, boxes: np.ndarray, thrown: np.ndarray, t_bodies: np.ndarray,
                      t_coms: np.ndarray, t_invs: np.ndarray, t_has: np.ndarray, strikers: np.ndarray,
                      body_actor: np.ndarray, prev_com: np.ndarray, raw: np.ndarray,
                      frame_quat: np.ndarray, frame_rot: np.ndarray, levers: np.ndarray, pend: np.ndarray,
                      ) -> tuple[int, int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                 np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray,
                                 np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float,
                                 float, np.ndarray]:
    """Step ticks ``ic[I_TICK]`` … while they are quiet, at most to ``ic[I_END]``; returns ``(tick reached, why it
    stopped, recorder rows, u, v, accel, yaw, big, slip, throttle, brake, lane, s, perceived, leaders, percepts,
    yield_i, yield_u, d, d_rate, d_acc, steer, util, present)`` after the last committed tick (the arrays given where
    none was; ``util``: the ego's tyre utilisation; ``present`` without the actors that left the map in it, the run's
    last tick where it stopped for that, :data:`STOP_LEFT`).

    ``ic`` … ``ped_pt``: :func:`~simready.sim.core.tick_kernels.run_ticks`' parameters (``lat`` holds the lateral
    references of the actors with a lateral goal, ``lat_own``; the others keep their offsets ``d``, which the
    physics moves); ``o_x``/``x_src`` number dynamic-v1's six extras (5: tyre utilisation). The rest: the backend's
    (``di``, ``df``: the slots above; the layout's bodies and drive arrays, the contact roles and their buffer, the
    static colliders' boxes; ``thrown``: the struck road users (thrown bodies), ``t_bodies`` … ``t_has`` their
    bodies, centres of mass and inertial frames as :meth:`.exchange.BodyExchange._read_specs` gives them, ``strikers``
    the vehicle each is still in contact with (-1: released), ``body_actor`` each body id's actor (-1: none); the
    ego's centre of mass after the last tick ``prev_com``, updated in place). A tick whose thrown body may come to rest
    while in contact (its striker released) or whose contacts are other than the struck ones is Python's. Where the
    run stops after a tick's physics (:data:`STOP_AFTER`), that tick's reads, frames and lever arms are in ``raw``,
    ``frame_quat``, ``frame_rot``, ``levers`` and its floats in ``pend``.
    """
    # The arrays fixed for the run, as views without numba's reference counts (:mod:`simready.sim.core.borrow`):
    # Python holds them for the call; each tick passes ~80 of them on. Not the state, which is returned.
    (ic, fc, lat, standstill, act_buf, consts, refs_t, ped_rows, ped_state, ped_kerb, lengths, leader_u0, stop_u,
     stop_col, signals, cum, base, last, pts, dirs, psi, dpsi, heights, seg_lane, lane_u0, reach2, hl, hw, w_rows,
     w_first, w_z_start, w_step_u, w_step_dh, leaves, walk, o_pos, o_quat, o_vel, o_omega, o_present, o_lane, o_s,
     o_x, x_src, lane_bound, avoids, yields, is_ped, decel_comfort, occluder, e0, e1, c_first, c_ux, c_lane, c_s,
     c_wait, guard_i, guard_c, is_vehicle, ped_pt, di, df, lat_own, agent_bodies, ego_k, read_bodies, drive_idx,
     drive_stop, parked, mass, wheelbase, inertia, com, invs, has_inv, coms, moved_rows, stand_rows, role,
     contact_buf, physical, radius, sleeping, boxes, thrown, t_bodies, t_coms, t_invs, t_has, strikers, body_actor,
     prev_com, raw, frame_quat, frame_rot, levers, pend) = \
    borrowed((ic, fc, lat, standstill, act_buf, consts, refs_t, ped_rows, ped_state, ped_kerb, lengths, leader_u0,
              stop_u, stop_col, signals, cum, base, last, pts, dirs, psi, dpsi, heights, seg_lane, lane_u0, reach2,
              hl, hw, w_rows, w_first, w_z_start, w_step_u, w_step_dh, leaves, walk, o_pos, o_quat, o_vel, o_omega,
              o_present, o_lane, o_s, o_x, x_src, lane_bound, avoids, yields, is_ped, decel_comfort, occluder, e0,
              e1, c_first, c_ux, c_lane, c_s, c_wait, guard_i, guard_c, is_vehicle, ped_pt, di, df, lat_own,
              agent_bodies, ego_k, read_bodies, drive_idx, drive_stop, parked, mass, wheelbase, inertia, com, invs,
              has_inv, coms, moved_rows, stand_rows, role, contact_buf, physical, radius, sleeping, boxes, thrown,
              t_bodies, t_coms, t_invs, t_has, strikers, body_actor, prev_com, raw, frame_quat, frame_rot, levers,
              pend))
    n = u.shape[0]
    t = ic[T.I_TICK]
    end = ic[T.I_END]
    t_first = t
    warmup, every, row, e = ic[T.I_WARMUP], ic[T.I_EVERY], ic[T.I_ROW], ic[T.I_EGO]
    dt, stand = fc[T.F_DT], fc[T.F_STAND]
    sm = di[D_SM]
    # The ego's index where it is present (its body, steering and checks), else -1; ``e`` the scene's (the planner's).
    ep = di[D_EGO]
    why = STOP_END
    perceived = 0
    steer = df[D_STEER]
    util_last = 0.0
    ic1 = ic.copy()
    ic1[T.I_RECORD] = 0
    a1 = np.zeros(n)
    slip = np.zeros(n)
    throttle = np.zeros(n)
    brake = np.zeros(n)
    d_rate = np.zeros(n)
    d_acc = np.zeros(n)
    n_pairs = n * (n - 1) // 2
    pairs = np.empty((n_pairs if n_pairs > 0 else 1, 2), dtype=np.int64)
    setup = np.zeros(11)
    ptrs = np.zeros(2, dtype=np.int64)
    com_now = np.empty(3)
    lever = np.zeros(3)
    want_x = np.zeros((6, n))
    n_t = thrown.shape[0]
    t_raw, t_quat, t_rot = np.empty((n_t, 13)), np.empty((n_t, 4)), np.empty((n_t, 9))
    t_lever, t_table = np.empty((n_t, 3, 1)), np.empty((n_t, 16))
    # The ego is in contact with a road user it struck (no energy comparison: momentum is exchanged).
    ego_struck = False
    for k in range(n_t):
        if strikers[k] >= 0 and ep >= 0 and (strikers[k] == ep or thrown[k] == ep):
            ego_struck = True
    # The ego's state as the tick's reads left it (its row ``r`` of ``raw``, where that is the state request's own
    # quaternion: no inertial frame to compose): its energy after the tick and, the world untouched since, before the
    # next one, and the next tick's first tyre forces, the same doubles as a state request of its own would give
    # (``ego_st``: a row of ``raw``; ``ego_read``: it holds the world as it is now).
    r_e = di[D_EGO_ROW]
    ego_row = r_e if (ep >= 0 and 0 <= r_e < read_bodies.shape[0] and read_bodies[r_e] == di[D_EGO_BODY]
                      and not has_inv[r_e]) else -1
    ego_st = np.empty(13)
    ego_read = False
    unknown = np.empty(0)
    # Each tick's scratch: its lateral references, the control state to put back on a stop, the offsets' references.
    lat1 = np.empty((1, 3, n))
    still, buf = np.empty_like(standstill), np.empty_like(act_buf)
    # The committed offsets and lanes alternate between two rows (``cur``: this tick's), so a tick writes its own
    # rows while the last committed ones stay as they are.
    d_rows, lane_rows, s_rows = np.empty((2, n)), np.empty((2, n), dtype=np.int64), np.empty((2, n))
    cur = 0
    # run_ticks' scratch, once a run (it was 24 allocations a tick: 11 in each call, 13 in its tick); the rows it writes
    # become the committed state, so those are not borrowed (below).
    (r_a1, r_slip, r_thr, r_brk, r_zeros, r_pairs, r_a_des, r_accel, r_gaps, r_no_aware, r_corridor, r_steps, r_bigs,
     r_lanes, r_refs, r_placed, r_heading) = T.ticks_scratch(n)
    # finish_rows' scratch, once a run (allocating it each tick kept numba's reference counts of its ~40 arrays).
    f_table = np.empty((raw.shape[0], 16))
    n_sel = moved_rows.shape[0]
    f_px, f_py, f_hints, f_pu, f_pd = np.empty(n_sel), np.empty(n_sel), np.empty(n_sel), np.empty(n_sel), np.empty(n_sel)
    # The run's scratch, borrowed too: ``owned`` holds it to the end (:func:`~simready.sim.core.borrow.alive`).
    owned = (ic1, pairs, setup, ptrs, com_now, lever, want_x, t_raw, t_quat, t_rot, t_lever, t_table, ego_st, unknown,
             lat1, still, buf, r_a1, r_slip, r_thr, r_brk, r_zeros, r_pairs, r_a_des, r_accel, r_gaps, r_no_aware,
             r_corridor, r_refs, r_placed, r_heading, f_table, f_px, f_py, f_hints, f_pu, f_pd)
    (ic1, pairs, setup, ptrs, com_now, lever, want_x, t_raw, t_quat, t_rot, t_lever, t_table, ego_st, unknown, lat1,
     still, buf, r_a1, r_slip, r_thr, r_brk, r_zeros, r_pairs, r_a_des, r_accel, r_gaps, r_no_aware, r_corridor,
     r_refs, r_placed, r_heading, f_table, f_px, f_py, f_hints, f_pu, f_pd) = borrowed(owned)
    while t < end:
        k = t - t_first
        # The state this tick starts from, borrowed for its calls until the commit (the variables hold it until then;
        # run_ticks returns the held perception only where it perceived anew, in arrays of its own).
        bu, bv, byaw, bbig, bpresent, blane, bs, bd, bleaders, bpercepts, byi, byu = \
            borrowed((u, v, yaw, big, present, lane, s, d, leaders, percepts, yield_i, yield_u))
        # This tick's lateral references: the goals' where an actor has one, else the offset it has.
        for i in range(n):
            if lat_own[i]:
                lat1[0, 0, i], lat1[0, 1, i], lat1[0, 2, i] = lat[k, 0, i], lat[k, 1, i], lat[k, 2, i]
            else:
                lat1[0, 0, i], lat1[0, 1, i], lat1[0, 2, i] = d[i], 0.0, 0.0
        still[:] = standstill
        buf[:] = act_buf
        ic1[T.I_TICK], ic1[T.I_END], ic1[T.I_ROW] = t, t + 1, row
        (t1, _, _, u1, v1, a1n, yaw1, big1, slip1, thr1, brk1, lane1, s1, seen, leaders1, percepts1, yi1, yu1,
         accel) = T.run_ticks(ic1, fc, bu, bv, byaw, bbig, bpresent, lat1, blane, bs, standstill, act_buf,
                              consts, refs_t[k:k + 1], byi, byu, ped_rows, ped_state, ped_kerb, lengths, leader_u0,
                              bleaders, bpercepts, stop_u, stop_col, signals, cum, base, last, pts, dirs, psi, dpsi,
                              heights, seg_lane, lane_u0, reach2, hl, hw, w_rows, w_first, w_z_start, w_step_u,
                              w_step_dh, leaves, atan_fp, walk, o_pos, o_quat, o_vel, o_omega, o_present, o_lane,
                              o_s, o_x, x_src, lane_bound, avoids, yields, is_ped, decel_comfort, occluder, e0, e1,
                              c_first, c_ux, c_lane, c_s, c_wait, guard_i, guard_c, is_vehicle, ped_pt, r_a1,
                              r_slip, r_thr, r_brk, r_zeros, r_pairs, r_a_des, r_accel, r_gaps, r_no_aware,
                              r_corridor, r_steps, r_bigs, r_lanes, r_refs, r_placed, r_heading)
        if t1 == t:
            why = STOP_BEFORE
            break
        # The step's arrays, run_ticks' rows for this tick: the rows are written over them, then committed.
        big_o, yaw_o, u_o, v_o, slip_o = borrowed((big1, yaw1, u1, v1, slip1))
        # From here the tick's control is run_ticks' (the delay line, the standstill counts): put back on any stop,
        # before or after the physics (the Python tick then pushes the delay line itself).
        if sleeping.shape[0] > 0 and _may_wake(sleeping, moved_rows, radius, bbig, n, dt, df[D_WAKE_MARGIN]):
            standstill[:], act_buf[:] = still, buf
            why = STOP_BEFORE
            break
        e_before = math.nan
        if ep >= 0 and thr1[ep] <= 0.0 and accel[ep] <= 0.0:
            if ego_read:
                e_before = state_energy(ego_st[2], ego_st[3], ego_st[4], ego_st[5], ego_st[6], ego_st[7], ego_st[8],
                                        ego_st[9], ego_st[10], ego_st[11], ego_st[12], df[D_MASS], df[D_IX],
                                        df[D_IY], df[D_IZ], fc[T.F_G], di[D_POW])
            else:
                e_before = ego_energy(sm, di[D_EGO_BODY], df[D_MASS], df[D_IX], df[D_IY], df[D_IZ], fc[T.F_G],
                                      di[D_POW], ptrs)
            if e_before != e_before:
                standstill[:], act_buf[:] = still, buf
                why = STOP_BEFORE
                break
        d_own = d_rows[cur]
        (d_ref,) = borrowed((d_own,))
        d_ref[:] = lat1[0, 0]
        a_cmd = accel[ep] if ep >= 0 else 0.0
        known = ego_st if ego_read else unknown
        util, steer1 = tick_step(sm, di[D_SUBSTEPS], df[D_H], di[D_FRAME], agent_bodies, di[D_EGO_BODY], ep,
                                 di[D_CRASHED] != 0, steer, fc[T.F_FRICTION], ego_k, bu, d_ref, bv, cum, base, last,
                                 pts, dirs, a_cmd, setup, df[D_SLIP_MIN], stand, read_bodies, raw, heights,
                                 fc[T.F_GX0], fc[T.F_GY0], fc[T.F_GINV], drive_idx, drive_stop, parked, accel,
                                 bbig[:3 * n].reshape((n, 3)), bbig[7 * n:10 * n].reshape((n, 3)),
                                 bbig[10 * n:].reshape((n, 3)), bbig[3 * n:7 * n].reshape((n, 4)),
                                 big_o[:3 * n].reshape((n, 3)), big_o[7 * n:10 * n].reshape((n, 3)),
                                 big_o[10 * n:].reshape((n, 3)), yaw_o, byaw, mass, wheelbase, inertia, com, fc[T.F_FG],
                                 fc[T.F_G], dt, df[D_POS_TAU], df[D_YAW_TAU], df[D_SUPPORT_TAU], invs, has_inv,
                                 di[D_ANY_INV] != 0, frame_quat, frame_rot, di[D_GEMV], coms, levers, known)
        if util == -2.0:
            # Nothing was commanded: the drive model's fallback is Python's.
            standstill[:], act_buf[:] = still, buf
            why = STOP_BEFORE
            break
        pend[P_UTIL], pend[P_STEER], pend[P_E_BEFORE] = util, steer1, e_before
        if util < 0.0:
            standstill[:], act_buf[:] = still, buf
            why = STOP_AFTER
            break
        ego_read = ego_row >= 0
        if ego_read:
            for c in range(13):
                ego_st[c] = raw[ego_row, c]
        if n_t > 0:
            # The thrown bodies' reads and rows (ThrownBodies._read_thrown: its reads, their frames and lever arms).
            if not read_states(sm, t_bodies, t_raw, ptrs):
                standstill[:], act_buf[:] = still, buf
                why = STOP_AFTER
                break
            base_quats(t_raw, t_invs, t_has)
            body_frames(t_raw, t_quat, t_rot)
            lever_arms(di[D_GEMV], t_rot, t_coms, t_lever)
            body_rows(t_raw, t_quat, t_rot, t_lever, t_table)
        d_o = d_ref
        pos, quat = big_o[:3 * n].reshape((n, 3)), big_o[3 * n:7 * n].reshape((n, 4))
        vel, omega = big_o[7 * n:10 * n].reshape((n, 3)), big_o[10 * n:].reshape((n, 3))
        m, ok = finish_rows_into(raw, frame_quat, frame_rot, levers, moved_rows, stand_rows,
                                 bbig[:3 * n].reshape((n, 3)), bbig[3 * n:7 * n].reshape((n, 4)), byaw, bu, bd, cum,
                                 base,
                                 last, pts, dirs, di[D_WINDOW], pos, quat, vel, omega, yaw_o, u_o, d_o, v_o, slip_o,
                                 bpresent, reach2, hl, hw, pairs, fc[T.F_MAX_SPEED], fc[T.F_LO_X], fc[T.F_HI_X],
                                 fc[T.F_LO_Y], fc[T.F_HI_Y], fc[T.F_MAX_Z], leaves, lengths, f_table, f_px, f_py,
                                 f_hints, f_pu, f_pd)
        if n_t > 0:
            # Their rows replace the step's, then the overlaps and the verdict are those of the final rows (the Python
            # tick's footprint contacts and the engine's own checks).
            thrown_rows(t_table, thrown, pos, quat, vel, omega, yaw_o, u_o, d_o, v_o, bu, bd)
            m = K.contact_pairs(pos, yaw_o, bpresent, reach2, hl, hw, pairs) if n >= 2 else 0
            ok = K.bodies_verdict(pos, quat, vel, omega, bpresent, fc[T.F_MAX_SPEED], fc[T.F_LO_X], fc[T.F_HI_X],
                                  fc[T.F_LO_Y], fc[T.F_HI_Y], fc[T.F_MAX_Z], u_o, hl, leaves, lengths)
        if n_t > 0:
            touching = _new_contact(contact_points(sm, role, contact_buf), contact_buf, body_actor, pairs, m,
                                    physical, parked, thrown, strikers)
            for k in range(n_t):
                if strikers[k] >= 0:
                    # _read_thrown's rest test (sqrt of numpy's dot): a body near rest is Python's.
                    sv = math.sqrt(t_table[k, 7] * t_table[k, 7] + t_table[k, 8] * t_table[k, 8]
                                   + t_table[k, 9] * t_table[k, 9])
                    sw = math.sqrt(t_table[k, 10] * t_table[k, 10] + t_table[k, 11] * t_table[k, 11]
                                   + t_table[k, 12] * t_table[k, 12])
                    if not (sv >= df[D_REST_V] * (1.0 + 1e-9) + 1e-12 or sw >= df[D_REST_W] * (1.0 + 1e-9) + 1e-12):
                        touching = True
        else:
            touching = contact_points(sm, role, contact_buf) != 0
            for q in range(m):
                i, j = pairs[q, 0], pairs[q, 1]
                if not (physical[i] and physical[j]) or not (parked[i] and parked[j]):
                    touching = True
        want = K.OK_BOUNDS if (t + 1) % every == 0 else K.OK_STATE
        # An actor past the end of a path that leaves the map: the tick is committed, then it leaves (_leave_map).
        left = (not touching) and (ok & want) != 0 and (ok & K.OK_STAYS) == 0
        if not left and (touching or not ok & want or not ok & K.OK_STAYS):
            standstill[:], act_buf[:] = still, buf
            why = STOP_AFTER
            break
        if ep >= 0:
            r = di[D_EGO_ROW]
            for c in range(3):
                lever[c] = levers[r, c, 0] if r >= 0 else 0.0
                com_now[c] = pos[ep, c] + lever[c]
            e_after = math.nan
            if e_before == e_before and not ego_struck:
                if ego_read:
                    e_after = state_energy(ego_st[2], ego_st[3], ego_st[4], ego_st[5], ego_st[6], ego_st[7],
                                           ego_st[8], ego_st[9], ego_st[10], ego_st[11], ego_st[12], df[D_MASS],
                                           df[D_IX], df[D_IY], df[D_IZ], fc[T.F_G], di[D_POW])
                else:
                    e_after = ego_energy(sm, di[D_EGO_BODY], df[D_MASS], df[D_IX], df[D_IY], df[D_IZ], fc[T.F_G],
                                         di[D_POW], ptrs)
                if e_after != e_after:
                    standstill[:], act_buf[:] = still, buf
                    why = STOP_AFTER
                    break
            if check_flags(prev_com, com_now, boxes, pos[ep], omega[ep], heights, fc[T.F_GX0], fc[T.F_GY0],
                           fc[T.F_GINV], df[D_BELOW], df[D_RATE_MAX], e_before, e_after, df[D_GAIN],
                           df[D_SLACK]) != 0:
                standstill[:], act_buf[:] = still, buf
                why = STOP_AFTER
                break
            prev_com[:] = com_now
        # Commit the tick: the engine's state after it.
        for i in range(n):
            standstill[i] = still[i] + 1 if v_o[i] < stand else 0
        lane_o, s_o = lane_rows[cur], s_rows[cur]
        cur = 1 - cur
        K.lanes_at(cum, base, last, seg_lane, lane_u0, u_o, lane_o, s_o)
        for i in range(n):
            d_rate[i], d_acc[i] = lat1[0, 1, i], lat1[0, 2, i]
        u, v, yaw, big, d, slip, lane, s = u1, v1, yaw1, big1, d_own, slip1, lane_o, s_o
        a1, throttle, brake = a1n, thr1, brk1
        # The engine's steering: the ego's, 0 while it is absent (its extras' row), kept without an ego.
        steer = steer1 if ep >= 0 else 0.0 if e >= 0 else steer
        util_last = util
        if seen:
            perceived += 1
            leaders, percepts, yield_i, yield_u = leaders1, percepts1, yi1, yu1
        t += 1
        if left:
            # Engine._leave_map's test on the committed rows: those leave before the row is recorded.
            present = present.copy()
            for i in range(n):
                if leaves[i] and present[i] and u[i] + hl[i] > lengths[i]:
                    present[i] = False
        if t >= warmup:
            R.record_row(row, pos, quat, vel, omega, present, lane, s, u, walk, o_pos, o_quat, o_vel, o_omega,
                         o_present, o_lane, o_s)
            want_x[:] = 0.0
            for i in range(n):
                want_x[0, i], want_x[1, i], want_x[2, i], want_x[4, i] = a1[i], throttle[i], brake[i], slip[i]
            if ep >= 0:
                want_x[3, ep], want_x[5, ep] = steer, util
            for j in range(x_src.shape[0]):
                for i in range(n):
                    o_x[j, row, i] = want_x[x_src[j], i]
            row += 1
        if left:
            why = STOP_LEFT
            break
    alive(owned)
    return (t, why, row, u, v, a1, yaw, big, slip, throttle, brake, lane, s, perceived, leaders, percepts, yield_i,
            yield_u, d, d_rate, d_acc, steer, util_last, present)
