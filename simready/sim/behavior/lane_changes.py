"""Discretionary lane changes of background traffic: MOBIL (Kesting, Treiber and Helbing 2007) on the lane graph.

Every :data:`DECISION_PERIOD_S` (on ticks that are a multiple of it, warm-up
included), every background vehicle (tag ``background``) that is
present, lane-bound, not in a lateral manoeuvre, on a lane outside a junction
with at least :data:`MIN_LANE_LEFT_M` of it left, considers the same-direction
neighbour on each side where the road marks allow the change
(:meth:`simready.world.lane_graph.LaneNetwork.neighbour`) and that is a
driving lane (never a parking lane), left before right.
With ã the accelerations after the change and a before it (the planner's own
law: the smaller of speed tracking and the IDM term for the gap to the leader,
clamped to the actor's limits), c the vehicle, n the new follower on the
target lane and o the old follower on its own lane, it changes when

* safety: ``ã_n ≥ −SAFE_DECEL_MPS2`` and the target lane is free alongside
  (the lane-change verb's gap window: :data:`~simready.sim.core.constants.LANE_CHANGE_GAP_REAR_M`
  behind, :data:`~simready.sim.core.constants.LANE_CHANGE_GAP_FRONT_M` ahead);
* incentive: ``ã_c − a_c + POLITENESS·((ã_n − a_n) + (ã_o − a_o)) > THRESHOLD_MPS2``.

The change itself is the lane-change verb's: the path switches to the target
lane's chain at once (the simulator continues it beyond the lane) and the
lateral offset goes to 0 over :data:`CHANGE_TIME_S` (cubic); a ``lane_change``
event names the actor, both lanes and ``reason: mobil``. Until the change
completes the vehicle also keeps its distance to the traffic ahead on the lane
it leaves (its body is still partly there). No change starts below
:data:`MIN_CHANGE_SPEED_MPS`. Only the view of the
tick is read (leaders and followers from one snapshot, vehicles in sorted
order, at most one change each), so the result is a pure function of the
state: replays, checkpoints and matched branches are unaffected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from simready.sim.behavior.interactions import event
from simready.sim.core import constants as C
from simready.sim.core.sight import TickView
from simready.sim.core.profiles import taking_over
from simready.sim.core.state import LateralGoal, PathCoords, SimState, frozen, with_changes
from simready.world.lane_graph import lane_network

if TYPE_CHECKING:
    from simready.sim.core.scene import ActorScalars

#: How often a background vehicle considers a lane change (s).
DECISION_PERIOD_S = 0.5
#: MOBIL's politeness factor: how much the followers' gains and losses weigh against the changer's.
POLITENESS = 0.3
#: MOBIL's changing threshold (m/s²): the net advantage a change must bring.
THRESHOLD_MPS2 = 0.3
#: MOBIL's safety criterion: the new follower never has to brake harder than this (m/s²).
SAFE_DECEL_MPS2 = 4.0
#: No discretionary change with less than this of the lane left (m): the vehicle keeps to its approach.
MIN_LANE_LEFT_M = 30.0
#: No discretionary change below this speed (m/s): a lane is changed in motion, not sideways out of a queue.
MIN_CHANGE_SPEED_MPS = 4.0
#: The owner of a discretionary change's lateral goal: this prefix and the lane it leaves (the planner keeps the
#: vehicle behind that lane's traffic until the change completes,
#: :func:`simready.sim.controllers.planner.background.old_lane_gaps`).
OWNER_PREFIX = "mobil:"
#: Two vehicles do not change into one lane within this distance of each other on the same tick (m).
CHANGE_SPACING_M = 30.0
#: A discretionary change takes this long, lateral offset from the new lane's centre to 0 on a cubic (s).
CHANGE_TIME_S = 3.0


def _accel(a: ActorScalars, i: int, v: float, gap: float, v_lead: float, v_ref: float) -> float:
    """The planner's acceleration of actor ``i`` at speed ``v`` behind a leader ``gap`` m ahead at ``v_lead``."""
    track = C.SPEED_TRACK_GAIN * (v_ref - v)
    if math.isfinite(gap):
        x = v * a.time_gap[i] + v * (v - v_lead) / a.idm_root2[i]
        s_star = a.s0[i] + max(0.0, x)
        ratio = min(s_star / gap, 1e3) if gap > 0.0 else 1e3
        track = min(track, a.accel_max[i] * (1.0 - ratio * ratio))
    return min(max(track, -a.decel_max[i]), a.accel_max[i])


def wants_to_change(view: TickView) -> list[int]:
    """The background vehicles that may consider a change this tick (cheap filter, no geometry)."""
    scene = view.scene
    a = scene.actors
    if not a.background.any():
        return []
    lateral = view.state.control.lateral
    lane, s = view.lanes
    net = lane_network(scene.template)
    out = []
    # Background vehicles only: a background cyclist keeps to the kerb of its lane.
    for i in np.flatnonzero(a.background & view.present & a.lane_bound & a.is_vehicle).tolist():
        if lateral[i] is not None or lane[i] < 0 or float(view.v[i]) < MIN_CHANGE_SPEED_MPS:
            continue
        here = scene.lane_ids[lane[i]]
        if here in net.junction_of or net.graph.lanes[here].length_m - float(s[i]) < MIN_LANE_LEFT_M:
            continue
        if all(net.kinds.get(net.neighbour(here, side) or "") != "driving" for side in ("left", "right")):
            continue
        out.append(i)
    return out


def lane_changes(view: TickView, refs_v: Sequence[float], stops: Any = None) -> tuple[SimState, list[dict[str, Any]]]:
    """The state with this tick's discretionary lane changes made, and their events (see the module docstring).

    ``refs_v``: each actor's speed reference (m/s) this tick (its cruise speed unless a goal sets another);
    ``stops``: the tick's :class:`~simready.sim.controllers.planner.RouteTable` (parked vehicles in each path).
    """
    state = view.state
    candidates = wants_to_change(view)
    if not candidates:
        return state, []
    scene = view.scene
    a = scene.actors
    pa = a.py
    net = lane_network(scene.template)
    lane, s = view.lanes
    v = view.v.tolist()
    xy = view.xy
    leaders = view.leaders.tolist()
    gaps = view.lane_gaps
    movers = np.flatnonzero(view.present & a.lane_bound).tolist()
    # Parked vehicles count on the target lane where their footprint reaches into it (they stand still).
    parked = np.flatnonzero(view.present & a.parked).tolist()
    pool = movers + parked
    projected: dict[str, tuple[dict[int, float], dict[int, float]]] = {}
    keys, u_new, d_new = list(state.coords.path_keys), np.array(state.coords.u), np.array(state.coords.d)
    lateral = list(state.control.lateral)
    events: list[dict[str, Any]] = []
    taken: set[int] = set()
    changed: list[tuple[str, float]] = []
    for i in candidates:
        here = scene.lane_ids[lane[i]]
        j = leaders[i]
        a_c = _accel(pa, i, v[i], float(gaps[i, j]) if j >= 0 else math.inf, v[j] if j >= 0 else 0.0, refs_v[i])
        if stops is not None and i in stops.parked:
            rear = next((r for r in stops.parked[i] if r > view.u_py[i]), math.inf)
            a_c = min(a_c, _accel(pa, i, v[i], rear - view.u_py[i] - pa.hl[i], 0.0, refs_v[i]))
        followers = [k for k in movers if leaders[k] == i and math.isfinite(gaps[k, i])]
        o = min(followers, key=lambda k: (float(gaps[k, i]), k)) if followers else -1
        if o >= 0:
            a_o = _accel(pa, o, v[o], float(gaps[o, i]), v[i], refs_v[o])
            gap_o = float(gaps[o, j]) if j >= 0 else math.inf
            a_o_new = _accel(pa, o, v[o], gap_o, v[j] if j >= 0 else 0.0, refs_v[o])
            gain_o = a_o_new - a_o
        else:
            gain_o = 0.0
        best: tuple[float, str, Any] | None = None
        for side in ("left", "right"):
            target = net.neighbour(here, side)
            if target is None or net.kinds.get(target) != "driving":
                continue  # no change allowed there, or a parking lane
            geom = net.graph.lanes[target]
            if target not in projected:
                # Everyone's (s, t) on the target lane, in one vectorized projection per lane and tick.
                ps, pt, _ = geom.project_many(xy[pool])
                projected[target] = (dict(zip(pool, ps.tolist())), dict(zip(pool, pt.tolist())))
            on_s, on_t = projected[target]
            s_i = on_s[i]
            ahead, behind = (math.inf, -1), (math.inf, -1)
            blocked = any(t == target and abs(s_t - s_i) < CHANGE_SPACING_M for t, s_t in changed)
            for k in pool:
                if k == i or blocked:
                    continue
                s_k, t_k = on_s[k], on_t[k]
                if abs(t_k) > geom.width_m / 2 + (pa.hw[k] if pa.parked[k] else 0.0):
                    continue
                lo = s_i - pa.hl[i] - C.LANE_CHANGE_GAP_REAR_M - pa.hl[k]
                hi = s_i + pa.hl[i] + C.LANE_CHANGE_GAP_FRONT_M + pa.hl[k]
                blocked = lo < s_k < hi
                gap = abs(s_k - s_i) - pa.hl[i] - pa.hl[k]
                if s_k > s_i and gap < ahead[0]:
                    ahead = (gap, k)
                elif s_k <= s_i and gap < behind[0]:
                    behind = (gap, k)
            if blocked:
                continue
            lead_gap, m = ahead
            a_c_new = _accel(pa, i, v[i], lead_gap, v[m] if m >= 0 else 0.0, refs_v[i])
            gain_n = 0.0
            n = behind[1]
            if n >= 0:
                # n's gap to m before the change: both gaps around i plus i's length.
                gap_n_old = behind[0] + lead_gap + 2.0 * pa.hl[i] if m >= 0 else math.inf
                a_n = _accel(pa, n, v[n], gap_n_old, v[m] if m >= 0 else 0.0, refs_v[n])
                a_n_new = _accel(pa, n, v[n], behind[0], v[i], refs_v[n])
                if a_n_new < -SAFE_DECEL_MPS2:
                    continue
                gain_n = a_n_new - a_n
            incentive = a_c_new - a_c + POLITENESS * (gain_n + gain_o)
            if incentive > THRESHOLD_MPS2 and (best is None or incentive > best[0]):
                best = (incentive, target, geom)
        if best is None:
            continue
        _, target, geom = best
        changed.append((target, projected[target][0][i]))
        path = scene.lane_path((target,))
        x, y = float(xy[i, 0]), float(xy[i, 1])
        u, d = path.project(x, y)
        keys[i], u_new[i], d_new[i] = path.key, u, d
        profile = taking_over("cubic", "time", CHANGE_TIME_S, d, float(state.coords.d_rate[i]), 0.0, view.tick,
                              C.LATERAL_TAKEOVER_ACCEL_MPS2, speed_mps=v[i])
        lateral[i] = LateralGoal("change_lane", OWNER_PREFIX + here, profile)
        taken.add(i)
        events.append(event(view, "lane_change", actor=a.ids[i], from_lane=here, to_lane=target, reason="mobil",
                            incentive_mps2=round(best[0], 6)))
    if not taken:
        return state, []
    c = state.coords
    coords = PathCoords(tuple(keys), frozen(u_new), frozen(d_new), c.d_rate, c.v, c.a, c.yaw)
    return state.evolve(coords=coords, control=with_changes(state.control, lateral=tuple(lateral))), events
