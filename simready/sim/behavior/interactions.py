"""Triggers, conditions and verbs (SPEC §6), with one-axis-one-owner preemption and the SPEC §7 events.

Each tick of the clip (t ≥ 0), before anyone plans, :func:`update` walks the
pending interactions in id order and fires those whose trigger is due;
it repeats the walk until nothing more fires, so an ``after(x, 0)`` fires
in the same tick as x. Then it checks the ``until`` of every interaction
that still holds its axis. Everything reads the same
:class:`~simready.sim.core.sight.TickView`.

Semantics fixed here:

* ``at(t)`` fires at the first tick whose scenario time reaches t;
  ``after(x, δ)`` δ/dt ticks (rounded) after x fired, and is skipped if x
  was skipped; ``when`` fires on the first tick its condition holds, or at
  ``by_latest_s`` fires or skips per ``if_never``; ``arrival`` fires once
  ``t_sync − t_of`` falls to ``ttc_s`` (or to −``delta_t_s``), where
  ``t_sync`` is ``sync_with``'s constant-speed time to the point and
  ``t_of`` the time ``of`` needs at the speed its verb commands (ramp
  included).
* Every verb takes its axis (``<actor>|<axis>``); whoever held it is
  preempted (event ``preemption``). Held verbs (speed, gap, lane_offset)
  keep it until their ``until`` fires (event ``released``); a lane change
  keeps the lateral axis until the manoeuvre completes; one-shot verbs
  (route, exist, set) keep their axis, since their effect persists, until
  another interaction takes it. A verb takes over its axis's current state:
  speed and gap verbs start from the current speed and gap; a lateral verb
  (and the return after a release) from the current offset *and* offset
  rate, shedding the inherited rate at
  :data:`~simready.sim.core.constants.LATERAL_TAKEOVER_ACCEL_MPS2`; a ``linear``
  lateral shape has its corners rounded at
  :data:`~simready.sim.core.constants.LATERAL_CORNER_ACCEL_MPS2`, so no lateral
  verb steps the offset rate.
* A lane change switches the actor's path to the target lane's chain at
  once and moves the lateral offset from the actor's offset on that lane
  to 0; it is rejected (``lane_change_rejected``) when there is no such
  lane, or an actor occupies the target lane within the gap-acceptance
  window. An unreachable route is skipped with a reason.
* Conditions on an absent actor are false.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from simready.scenario.manifest import (
    AfterTrigger,
    AndCondition,
    ArrivalTrigger,
    AtTrigger,
    Circle,
    CollisionCondition,
    Condition,
    DistanceCondition,
    HeadwayCondition,
    Interaction,
    LaneWindow,
    NotCondition,
    OrCondition,
    ReachesCondition,
    Region,
    SignalCondition,
    SpeedCondition,
    SpeedVerb,
    StandstillCondition,
    TtcCondition,
    Trigger,
    VisibleCondition,
    WhenTrigger,
)
from simready.sim.core import constants as C
from simready.sim.behavior import impact
from simready.sim.core import geometry as geo
from simready.sim.core.sight import TickView
from simready.sim.core.profiles import Profile, duration_s, taking_over
from simready.sim.core.scene import SIGNAL_CODES, Scene, at_tick, lane_window_contains
from simready.sim.core.state import (
    GapGoal,
    InteractionState,
    LateralGoal,
    PathCoords,
    SimState,
    SpeedGoal,
    frozen,
)

Event = dict[str, Any]


def event(view: TickView, kind: str, **fields: Any) -> Event:
    return {"tick": view.tick, "t": round(view.t_s, 9), "type": kind, **fields}


def initial_state(scene: Scene) -> InteractionState:
    return InteractionState({i.id: ("pending", -1) for i in scene.manifest.interactions}, {}, {})


# --- conditions -------------------------------------------------------------------------


def _cmp(value: float, op: str, threshold: float) -> bool:
    return value < threshold if op == "lt" else value > threshold


def _along_lane(view: TickView, i: int, j: int) -> float:
    lane, s = view.lanes
    u0 = view.table.lane_u0
    if lane[j] >= 0 and np.isfinite(u0[i, lane[j]]):
        return abs(float(u0[i, lane[j]] + s[j] - view.u[i]))
    if lane[i] >= 0 and np.isfinite(u0[j, lane[i]]):
        return abs(float(u0[j, lane[i]] + s[i] - view.u[j]))
    return math.inf


def _reaches(view: TickView, i: int, region: Region) -> bool:
    x, y = (float(c) for c in view.xy[i])
    if isinstance(region, Circle):
        return math.hypot(x - region.x, y - region.y) <= region.r
    if isinstance(region, LaneWindow):
        return lane_window_contains(view.scene, region, (x, y))
    poly = np.array([[p.x, p.y] for p in region.points])
    return bool(geo.point_in_polygon(np.array([x]), np.array([y]), poly)[0])


def evaluate(cond: Condition, view: TickView, state: SimState) -> bool:
    """Truth of a (possibly composite) condition on this tick's snapshot."""
    if isinstance(cond, NotCondition):
        return not evaluate(cond.of, view, state)
    if isinstance(cond, AndCondition):
        return all(evaluate(c, view, state) for c in cond.of)
    if isinstance(cond, OrCondition):
        return any(evaluate(c, view, state) for c in cond.of)
    idx = view.scene.actors.index
    present = view.present
    if isinstance(cond, SignalCondition):
        col = view.scene.signals.column(cond.signal)
        return int(view.scene.signals.states[view.tick, col]) == SIGNAL_CODES[cond.state]
    if isinstance(cond, CollisionCondition):
        a = idx[cond.a]
        b = idx[cond.b] if cond.b is not None else None
        return any((a in pair) and (b is None or b in pair) for pair in state.world.contacts)
    if isinstance(cond, (DistanceCondition, TtcCondition, HeadwayCondition, VisibleCondition)):
        a = idx[cond.a]
        b = idx[cond.to] if isinstance(cond, VisibleCondition) else idx[cond.b]
        if not (present[a] and present[b]):
            return False
        if isinstance(cond, VisibleCondition):
            return view.visible_pair(b, a)
        if isinstance(cond, DistanceCondition):
            value = view.centre_distance(a, b) if cond.metric == "euclidean" else _along_lane(view, a, b)
            return _cmp(value, cond.op, cond.value_m)
        if isinstance(cond, TtcCondition):
            return _cmp(view.ttc(a, b), cond.op, cond.value_s)
        gap = float(view.lane_gaps[a, b])
        v = float(view.v[a])
        return _cmp(gap / v if v > 0 and math.isfinite(gap) else math.inf, cond.op, cond.value_s)
    i = idx[cond.actor]
    if not present[i]:
        return False
    if isinstance(cond, ReachesCondition):
        return _reaches(view, i, cond.region)
    if isinstance(cond, SpeedCondition):
        return _cmp(float(view.v[i]), cond.op, cond.value_mps)
    if isinstance(cond, StandstillCondition):
        return state.control.standstill[i] * view.scene.dt >= cond.for_s - 1e-9
    raise TypeError(f"unhandled condition {type(cond).__name__}")


# --- triggers -------------------------------------------------------------------------------


def _distance_to(view: TickView, i: int, point: tuple[float, float]) -> float:
    """Along-path distance from actor i to ``point`` when the point lies on its path ahead, else straight-line."""
    path = view.table.paths[i]
    u_p, d_p = path.project(*point)
    if abs(d_p) < 3.0 and u_p >= view.u[i]:
        return float(u_p - view.u[i])
    return float(math.hypot(point[0] - view.xy[i, 0], point[1] - view.xy[i, 1]))


def _travel_time(distance_m: float, v0: float, v1: float, ramp_s: float) -> float:
    """Time to cover a distance while the speed ramps from v0 to v1 over ``ramp_s`` (linear ramp), then holds."""
    ramp_m = 0.5 * (v0 + v1) * ramp_s
    if distance_m <= ramp_m and ramp_s > 0:
        acc = (v1 - v0) / ramp_s
        if abs(acc) < 1e-9:
            return distance_m / max(v0, 1e-9)
        disc = v0 * v0 + 2 * acc * distance_m
        return (-v0 + math.sqrt(max(disc, 0.0))) / acc
    return ramp_s + (distance_m - ramp_m) / v1 if v1 > 0 else math.inf


def _arrival_due(trig: ArrivalTrigger, inter: Interaction, view: TickView) -> bool:
    idx = view.scene.actors.index
    i, j = idx[trig.of], idx[trig.sync_with]
    if trig.at is not None:
        point = (trig.at.x, trig.at.y)
    else:
        assert trig.conflict_point is not None  # an arrival trigger names a point or a conflict point
        point = view.scene.conflict_points[trig.conflict_point]
    v_sync = float(view.v[j])
    if v_sync < 0.1 or not view.present[j]:
        return False
    t_sync = _distance_to(view, j, point) / v_sync
    d_of = _distance_to(view, i, point)
    v0 = float(view.v[i])
    if inter.speed is not None and inter.speed.mode in ("absolute", "delta", "factor"):
        v1 = _speed_target(inter.speed, v0)
        assert inter.dynamics is not None  # a speed verb is shaped
        ramp = duration_s(inter.dynamics.shape, inter.dynamics.constraint, inter.dynamics.value, v0, v1)
        t_of = _travel_time(d_of, v0, v1, ramp)
    else:
        t_of = d_of / v0 if v0 > 0.1 else math.inf
    if trig.ttc_s is not None:
        target = trig.ttc_s
    else:
        assert trig.delta_t_s is not None  # the trigger gives one of the two
        target = -trig.delta_t_s
    return math.isfinite(t_of) and t_sync - t_of <= target + 1e-9


def _due(trig: Trigger, inter: Interaction, view: TickView, state: SimState, inter_state: InteractionState,
         fired_at: dict[str, int]) -> tuple[str | None, str]:
    """``('fire' | 'skip' | None, reason)`` for a trigger at this tick."""
    tick = view.tick
    if isinstance(trig, AtTrigger):
        return ("fire", "at") if tick >= at_tick(view.scene, trig) else (None, "")
    if isinstance(trig, AfterTrigger):
        if trig.id in fired_at:
            due = fired_at[trig.id] + int(round(trig.delay_s / view.scene.dt))
            return ("fire", f"after {trig.id}") if tick >= due else (None, "")
        status = inter_state.status[trig.id][0]
        if status in ("skipped", "rejected"):
            return "skip", f"{trig.id} was {status}"
        return None, ""
    if isinstance(trig, WhenTrigger):
        if evaluate(trig.condition, view, state):
            return "fire", "condition"
        if view.t_s >= trig.by_latest_s - 1e-9:
            return ("fire", "by_latest") if trig.if_never == "fire" else ("skip", "by_latest")
        return None, ""
    if isinstance(trig, ArrivalTrigger):
        return ("fire", "arrival") if _arrival_due(trig, inter, view) else (None, "")
    raise TypeError(type(trig).__name__)


# --- verbs ----------------------------------------------------------------------------------------


def _speed_target(verb: SpeedVerb, v0: float) -> float:
    value = verb.value  # set exactly for absolute, delta and factor (the verb's validator)
    if verb.mode == "absolute" and value is not None:
        return float(value)
    if verb.mode == "delta" and value is not None:
        return max(v0 + float(value), 0.0)
    if verb.mode == "factor" and value is not None:
        return v0 * float(value)
    return 0.0


class _Changes:
    """Copy-on-write accumulator of what verbs change in one tick."""

    def __init__(self, state: SimState) -> None:
        self.longitudinal = list(state.control.longitudinal)
        self.lateral = list(state.control.lateral)
        self.peds = list(state.control.peds)
        self.path_keys = list(state.coords.path_keys)
        self.u = np.array(state.coords.u)
        self.d = np.array(state.coords.d)
        self.d_rate = np.array(state.coords.d_rate)
        self.present = np.array(state.bodies.present)
        self.discrete = dict(state.world.discrete)
        self.friction = state.world.friction
        self.status = dict(state.interactions.status)
        self.owners = dict(state.interactions.owners)
        self.fired_at = dict(state.interactions.fired)
        self.changed_paths = False


def _take_axis(ch: _Changes, view: TickView, owner_key: str, inter_id: str, actor: str | None, axis: str,
               events: list[Event]) -> None:
    old = ch.owners.get(owner_key)
    if old is not None and old != inter_id:
        events.append(event(view, "preemption", actor=actor, axis=axis, preempted=old, by=inter_id))
        if old in ch.status and ch.status[old][0] == "fired":
            ch.status[old] = ("preempted", view.tick)
    ch.owners[owner_key] = inter_id


def _lane_change(ch: _Changes, view: TickView, inter: Interaction, i: int, events: list[Event]) -> bool:
    scene = view.scene
    graph = scene.template.lane_graph
    lane_idx, _ = view.lanes
    here = scene.lane_ids[lane_idx[i]] if lane_idx[i] >= 0 else None
    verb = inter.change_lane
    assert verb is not None
    if verb.mode == "left":
        target = graph.left.get(here) if here else None
    elif verb.mode == "right":
        target = graph.right.get(here) if here else None
    elif verb.mode == "lane":
        target = verb.lane
    else:
        assert verb.actor is not None  # the remaining mode: the lane of another actor
        other = scene.actors.index[verb.actor]
        target = scene.lane_ids[lane_idx[other]] if lane_idx[other] >= 0 else None
    actor = scene.actors.ids[i]

    def reject(reason: str) -> bool:
        events.append(event(view, "lane_change_rejected", actor=actor, interaction=inter.id, from_lane=here,
                            to_lane=target, reason=reason))
        ch.status[inter.id] = ("rejected", view.tick)
        return False

    if here is None or not scene.actors.lane_bound[i]:
        return reject("actor is not on the lane graph")
    if target is None:
        return reject(f"lane {here!r} has no {verb.mode} neighbour" if verb.mode in ("left", "right") else "target lane unknown")
    if target == here:
        return reject("already on the target lane")
    geom = graph.lanes[target]
    x, y = (float(c) for c in view.xy[i])
    s_i, t_i = geom.project(x, y)
    if abs(t_i) > 2.5 * geom.width_m:
        return reject(f"lane {target!r} is {abs(t_i):.1f} m away")
    heading = geom.pose_at(min(max(s_i, 0.0), geom.length_m))[2]
    if math.cos(heading - float(view.yaw[i])) < 0.0:
        return reject(f"lane {target!r} runs against the actor's heading")
    a = scene.actors
    for j in np.flatnonzero(view.present & a.lane_bound):
        if j == i:
            continue
        s_j, t_j = geom.project(float(view.xy[j, 0]), float(view.xy[j, 1]))
        if abs(t_j) > geom.width_m / 2:
            continue
        lo = s_i - a.hl[i] - C.LANE_CHANGE_GAP_REAR_M - a.hl[j]
        hi = s_i + a.hl[i] + C.LANE_CHANGE_GAP_FRONT_M + a.hl[j]
        if lo < s_j < hi:
            return reject(f"{a.ids[j]} occupies {target!r} within the gap window")
    path = scene.lane_path((target,))
    u, d = path.project(x, y)
    dyn = inter.dynamics
    assert dyn is not None  # change_lane is shaped
    ch.path_keys[i] = path.key
    # The offset rate carries over: lanes on the graph run parallel where a change is accepted.
    ch.u[i], ch.d[i] = u, d
    ch.changed_paths = True
    profile = _lateral_profile(ch, i, dyn.shape, dyn.constraint, dyn.value, 0.0, view.tick, float(view.v[i]))
    ch.lateral[i] = LateralGoal("change_lane", inter.id, profile)
    events.append(event(view, "lane_change", actor=actor, interaction=inter.id, from_lane=here, to_lane=target))
    return True


def _route(ch: _Changes, view: TickView, inter: Interaction, i: int, events: list[Event]) -> bool:
    scene = view.scene
    x, y = (float(c) for c in view.xy[i])
    assert inter.route is not None
    if inter.route.nodes is not None:
        path = scene.walk_path((x, y), tuple(inter.route.nodes))
        ch.path_keys[i], ch.u[i], ch.d[i] = path.key, 0.0, 0.0
        ch.changed_paths = True
        mem = ch.peds[i]
        if mem is not None:
            ch.peds[i] = replace(mem, mode="walk", hazard_since=None, clear_since=None, kerb_u=scene.kerb_u(path), seen=False)
        return True
    assert inter.route.lanes is not None  # a route gives nodes or lanes
    lanes = list(inter.route.lanes)
    lane_idx, _ = view.lanes
    here = scene.lane_ids[lane_idx[i]] if lane_idx[i] >= 0 else None
    graph = scene.template.lane_graph
    if here in lanes:
        chain = lanes[lanes.index(here):]
    else:
        link = graph.route(here, lanes[0]) if here is not None else None
        if link is None:
            events.append(event(view, "trigger_skipped", interaction=inter.id, actor=scene.actors.ids[i],
                                reason=f"route {lanes} is not reachable from lane {here!r}"))
            ch.status[inter.id] = ("rejected", view.tick)
            return False
        chain = link + lanes[1:]
    path = scene.lane_path(tuple(chain))
    u, d = path.project(x, y)
    ch.path_keys[i], ch.u[i], ch.d[i] = path.key, u, d
    ch.changed_paths = True
    return True


def _fire(ch: _Changes, view: TickView, inter: Interaction, reason: str, events: list[Event]) -> None:
    scene = view.scene
    tick = view.tick
    verb = inter.verb
    actor = inter.actor_id
    i = scene.actors.index[actor] if actor is not None else None
    events.append(event(view, "trigger_fired", interaction=inter.id, actor=actor, verb=verb, axis=inter.axis, reason=reason))
    ch.status[inter.id] = ("fired", tick)
    ch.fired_at[inter.id] = tick
    if verb == "lane_offset" or verb == "change_lane":
        assert i is not None  # an actor's verb
        ok = True
        if verb == "change_lane":
            ok = _lane_change(ch, view, inter, i, events)
        else:
            lo = inter.lane_offset
            assert lo is not None
            width = _lane_width(view, i)
            d1 = lo.value if lo.unit == "metres" else lo.value * width / 2
            dyn = inter.dynamics
            assert dyn is not None  # lane_offset is shaped
            profile = _lateral_profile(ch, i, dyn.shape, dyn.constraint, dyn.value, d1, tick, float(view.v[i]))
            ch.lateral[i] = LateralGoal("offset", inter.id, profile)
        if ok:
            _take_axis(ch, view, f"{actor}|lateral", inter.id, actor, "lateral", events)
        return
    if verb == "route":
        assert i is not None  # an actor's verb
        if _route(ch, view, inter, i, events):
            _take_axis(ch, view, f"{actor}|topology", inter.id, actor, "topology", events)
        return
    _take_axis(ch, view, f"{actor or 'world'}|{inter.axis}", inter.id, actor, inter.axis, events)
    if verb == "speed":
        sv = inter.speed
        v0 = float(view.v[i])
        dyn = inter.dynamics
        assert i is not None and sv is not None and dyn is not None  # an actor's shaped verb
        if sv.mode == "match":
            assert sv.target is not None  # match names the actor it matches
            j = scene.actors.index[sv.target]
            T = duration_s(dyn.shape, dyn.constraint, dyn.value, v0, float(view.v[j]))
            ch.longitudinal[i] = SpeedGoal("match", inter.id, Profile(dyn.shape, 0.0, 1.0, tick, T), j, v0)
        else:
            v1 = _speed_target(sv, v0)
            T = duration_s(dyn.shape, dyn.constraint, dyn.value, v0, v1)
            ch.longitudinal[i] = SpeedGoal("profile", inter.id, Profile(dyn.shape, v0, v1, tick, T))
    elif verb == "gap":
        gv = inter.gap
        assert i is not None and gv is not None  # an actor's verb
        j = scene.actors.index[gv.target]
        g0 = float(view.lane_gaps[i, j])
        if not math.isfinite(g0):
            g0 = view.centre_distance(i, j) - float(scene.actors.hl[i] + scene.actors.hl[j])
        g1 = gv.value if gv.unit == "distance" else gv.value * float(view.v[i])
        dyn = inter.dynamics
        assert dyn is not None  # gap is shaped
        T = duration_s(dyn.shape, dyn.constraint, dyn.value, g0, g1, speed_mps=float(view.v[i]))
        ch.longitudinal[i] = GapGoal(inter.id, j, gv.unit, gv.value, Profile(dyn.shape, g0, 1.0, tick, T))
    elif verb == "exist":
        assert i is not None and inter.exist is not None  # an actor's verb
        want = inter.exist.state == "present"
        if bool(ch.present[i]) != want:
            ch.present[i] = want
            events.append(event(view, "spawn" if want else "despawn", actor=actor, interaction=inter.id,
                                reason="interaction"))
    elif verb == "set":
        assert inter.set is not None
        key = inter.set.key
        value = inter.set.value
        slot = key if actor is None else f"{actor}.{key}"
        ch.discrete[slot] = value
        if key == "env.road_friction":
            ch.friction = float(value)
        events.append(event(view, "state_set", interaction=inter.id, actor=actor, key=key, value=value))


def _lateral_profile(ch: _Changes, i: int, shape: str, constraint: str, value: float, d1_m: float, tick: int,
                     speed_mps: float) -> Profile:
    """Actor i's lateral transition to offset ``d1_m``, starting from its current offset *and* offset rate.

    Whatever held the lateral axis may still be moving the offset (a lane
    change mid-manoeuvre): restarting from rest would stop the sideways
    motion in one tick (tens of m/s² from positions). The inherited rate
    coasts out at :data:`~simready.sim.core.constants.LATERAL_TAKEOVER_ACCEL_MPS2`
    and the declared dynamics cover the rest (:func:`~simready.sim.core.profiles.taking_over`).
    A ``linear`` shape's corners are rounded at
    :data:`~simready.sim.core.constants.LATERAL_CORNER_ACCEL_MPS2` (its rate
    would otherwise step at both ends: rate/dt in one tick).
    """
    return taking_over(shape, constraint, value, float(ch.d[i]), float(ch.d_rate[i]), d1_m, tick,
                       C.LATERAL_TAKEOVER_ACCEL_MPS2, speed_mps=speed_mps,
                       corner_accel_per_s2=C.LATERAL_CORNER_ACCEL_MPS2)


def _lane_width(view: TickView, i: int) -> float:
    lane, _ = view.lanes
    return float(view.scene.lane_widths[lane[i]]) if lane[i] >= 0 else 3.5


def _release(ch: _Changes, view: TickView, inter: Interaction, reason: str, events: list[Event]) -> None:
    actor = inter.actor_id
    assert actor is not None  # a held verb is an actor's
    i = view.scene.actors.index[actor]
    axis = inter.axis
    key = f"{actor}|{axis}"
    if ch.owners.get(key) == inter.id:
        del ch.owners[key]
    ch.status[inter.id] = ("released", view.tick)
    if axis == "longitudinal":
        ch.longitudinal[i] = None
    elif axis == "lateral":
        d0 = float(ch.d[i])
        profile = _lateral_profile(ch, i, "linear", "rate", C.LATERAL_RETURN_RATE_MPS, 0.0, view.tick, float(view.v[i]))
        ch.lateral[i] = LateralGoal("return", None, profile) if d0 else None
    events.append(event(view, "released", interaction=inter.id, actor=actor, axis=axis, reason=reason))


_WAITING: list[Any] = [None]


def _waiting(inters: Sequence[Interaction], status: dict[str, tuple[str, int]]) -> tuple[list[Any], list[Any]]:
    """The pending interactions and the fired ones with an ``until``, in canonical order (by id).

    A status dict is never edited once a state holds it (a change builds a
    new one), so the answer is kept for the last ``(interactions, status)``
    pair seen: most ticks change no status.
    """
    hit = _WAITING[0]
    if hit is not None and hit[0] is inters and hit[1] is status:
        return hit[2], hit[3]
    pending = [i for i in inters if status[i.id][0] == "pending"]
    fired = [i for i in inters if i.until is not None and status[i.id][0] == "fired"]
    _WAITING[0] = (inters, status, pending, fired)
    return pending, fired


#: ``(scene, status, fired, tick)``: with that status and fired-at dict, no trigger nor ``until`` is due before
#: ``tick`` (:func:`_quiet_until`).
_QUIET: list[Any] = [None]
_NEVER = 1 << 62


def _quiet_until(scene: Scene, inters: list[Any], status: dict[str, tuple[str, int]], fired: dict[str, int]) -> int:
    """The first tick at which one of ``inters``' triggers (the pending ones') or ``until``s (the fired ones') can
    be due while the status and the fired-at ticks stay these; −1 when one depends on more than the tick (a
    ``when`` condition, or an ``after`` whose reference was skipped or rejected: due now).

    Why: an ``at`` trigger is due from its tick on and an ``after`` from its reference's firing tick plus the
    delay (:func:`_due`), so until the first of those ticks every tick's answer is "nothing", and the tick can
    skip asking (Python only at events).
    """
    first = _NEVER
    for inter in inters:
        trig = inter.trigger if status[inter.id][0] == "pending" else inter.until
        due = _timed_due(scene, trig, status, fired)
        if due < 0:
            return -1
        if due < first:
            first = due
    return first


def _timed_due(scene: Scene, trig: Any, status: dict[str, tuple[str, int]], fired: dict[str, int]) -> int:
    """The tick from which an ``at`` or ``after`` trigger is due (:func:`_due`) while the statuses and fired-at
    ticks stay these: :data:`_NEVER` for an ``after`` still waiting for its reference (a change of status
    first), −1 for any other trigger or an ``after`` whose reference was skipped or rejected."""
    if isinstance(trig, AtTrigger):
        return at_tick(scene, trig)
    if isinstance(trig, AfterTrigger):
        if trig.id in fired:
            return fired[trig.id] + int(round(trig.delay_s / scene.dt))
        return -1 if status[trig.id][0] in ("skipped", "rejected") else _NEVER
    return -1


def quiet_until(scene: Scene, state: SimState) -> int:
    """The first tick at which :func:`update` may fire or release anything while ``state``'s statuses and fired-at
    ticks stay what they are (−1: any tick); :func:`update` does nothing at an earlier tick."""
    status = state.interactions.status
    fired_at = state.interactions.fired
    quiet = _QUIET[0]
    if quiet is not None and quiet[0] is scene and quiet[1] is status and quiet[2] is fired_at:
        return int(quiet[3])
    pending, fired_with_until = _waiting(scene.manifest.interactions, status)
    until = _quiet_until(scene, pending + fired_with_until, status, fired_at)
    _QUIET[0] = (scene, status, fired_at, until)
    return until


#: Added to a guard circle's radius (m): a position inside the region is well inside the circle (float rounding).
GUARD_MARGIN_M = 0.5
Guard = tuple[int, float, float, float]


def quiet_guards(scene: Scene, state: SimState) -> tuple[int, tuple[Guard, ...]] | None:
    """Where :func:`quiet_until` gives up (a ``when`` trigger waits): the first tick at which :func:`update` may
    act whatever the positions, and guards ``(actor, x, y, radius)`` such that before that tick it acts only at a
    tick where some guard's actor is present within its circle; None when a waiting trigger cannot be bounded so.

    A ``when`` trigger is bounded by its ``by_latest`` and, when its condition can only hold with an actor inside
    a region (``reaches``; an ``or`` of such, an ``and`` with one), by a circle around the region
    (:data:`GUARD_MARGIN_M` wider): outside every circle the condition is false. Why: a pedestrian released when
    the ego reaches a lane window would otherwise keep every tick in Python until then (the compiled quiet
    ticks, :mod:`simready.sim.core.tick_kernels`).
    """
    status = state.interactions.status
    fired = state.interactions.fired
    pending, fired_with_until = _waiting(scene.manifest.interactions, status)
    first = _NEVER
    guards: list[Guard] = []
    for inter in pending + fired_with_until:
        trig = inter.trigger if status[inter.id][0] == "pending" else inter.until
        if isinstance(trig, WhenTrigger):
            g = _condition_guards(scene, trig.condition)
            if g is None:
                return None
            guards.extend(g)
            due = _first_tick_at(scene, trig.by_latest_s - 1e-9)
        else:
            due = _timed_due(scene, trig, status, fired)
            if due < 0:
                return None
        first = min(first, due)
    return first, tuple(guards)


def _first_tick_at(scene: Scene, t_s: float) -> int:
    """The first tick whose scenario time ``(tick − warmup)·dt`` (as :attr:`TickView.t_s` computes it) is ≥ t_s."""
    w, dt = scene.warmup_ticks, scene.dt
    if not math.isfinite(t_s):
        return _NEVER if t_s > 0 else w
    tick = max(w, w + int(math.ceil(t_s / dt)))
    while tick > w and (tick - 1 - w) * dt >= t_s:
        tick -= 1
    while (tick - w) * dt < t_s:
        tick += 1
    return tick


def _condition_guards(scene: Scene, cond: Any) -> list[Guard] | None:
    """Circles one of which holds its actor whenever ``cond`` is true (see :func:`quiet_guards`), or None."""
    if isinstance(cond, ReachesCondition):
        circle = _region_circle(scene, cond.region)
        return None if circle is None else [(scene.actors.index[cond.actor], *circle)]
    if isinstance(cond, OrCondition):
        out: list[Guard] = []
        for c in cond.of:
            g = _condition_guards(scene, c)
            if g is None:
                return None
            out.extend(g)
        return out
    if isinstance(cond, AndCondition):
        for c in cond.of:
            g = _condition_guards(scene, c)
            if g is not None:
                return g
    return None


def _region_circle(scene: Scene, region: Any) -> tuple[float, float, float] | None:
    """A circle ``(x, y, r)`` around every point :func:`_reaches` counts as in ``region``."""
    if isinstance(region, Circle):
        return float(region.x), float(region.y), float(region.r) + GUARD_MARGIN_M
    if isinstance(region, LaneWindow):
        # In the window: within half the lane's width of the lane's point at some s in [s_from, s_to) (the
        # projection's |t| is that distance), a point of the polyline piece between those arc lengths.
        geom = scene.template.lane_graph.lanes.get(region.lane)
        if geom is None or not (math.isfinite(region.s_from) and math.isfinite(region.s_to)):
            return None
        pts = [geom.point_at(region.s_from), geom.point_at(region.s_to)]
        pts += [(float(x), float(y)) for (x, y), c in zip(geom.points, geom.cum_s) if region.s_from < c < region.s_to]
        reach = geom.width_m / 2
    else:
        pts = [(float(p.x), float(p.y)) for p in region.points]
        reach = 0.0
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    cx, cy = 0.5 * (min(xs) + max(xs)), 0.5 * (min(ys) + max(ys))
    r = max(math.hypot(x - cx, y - cy) for x, y in pts)
    return cx, cy, r + reach + GUARD_MARGIN_M


def update(scene: Scene, state: SimState, view: TickView) -> tuple[SimState, list[Event]]:
    """Fire due triggers, release due ``until``s; the new state and the events, in order.

    Nothing is copied until something fires: most ticks only compare a few integers, and while only ``at`` and
    ``after`` triggers wait, none until the first is due (:func:`_quiet_until`).
    """
    status = state.interactions.status
    fired_at = state.interactions.fired
    quiet = _QUIET[0]
    if quiet is not None and quiet[0] is scene and quiet[1] is status and quiet[2] is fired_at:
        if view.tick < quiet[3]:
            return state, []
        pending, fired_with_until = _waiting(scene.manifest.interactions, status)
    else:
        pending, fired_with_until = _waiting(scene.manifest.interactions, status)
        until = _quiet_until(scene, pending + fired_with_until, status, fired_at)
        _QUIET[0] = (scene, status, fired_at, until)
        if view.tick < until:
            return state, []
    holding = [i for i in fired_with_until if status[i.id][1] != view.tick]
    if not pending and not holding:
        return state, []
    ch: _Changes | None = None
    events: list[Event] = []
    progressed = True
    while progressed:
        progressed = False
        for inter in pending:
            current = ch.status if ch is not None else status
            if current[inter.id][0] != "pending":
                continue
            snapshot = InteractionState(current, ch.owners if ch is not None else state.interactions.owners)
            fired = ch.fired_at if ch is not None else state.interactions.fired
            verdict, reason = _due(inter.trigger, inter, view, state, snapshot, fired)
            if verdict is None:
                continue
            if ch is None:
                ch = _Changes(state)
            if verdict == "fire" and _crashed(state, scene, inter):
                verdict, reason = "skip", "its actor crashed and is stopping (post-crash)"
            if verdict == "fire":
                _fire(ch, view, inter, reason, events)
            else:
                ch.status[inter.id] = ("skipped", view.tick)
                events.append(event(view, "trigger_skipped", interaction=inter.id, actor=inter.actor_id, reason=reason))
            progressed = True
    for inter in holding:
        current = ch.status if ch is not None else status
        if current[inter.id][0] != "fired":
            continue
        snapshot = InteractionState(current, ch.owners if ch is not None else state.interactions.owners)
        verdict, reason = _due(inter.until, inter, view, state, snapshot, ch.fired_at if ch is not None else state.interactions.fired)
        if verdict == "fire":
            if ch is None:
                ch = _Changes(state)
            _release(ch, view, inter, f"until {reason}", events)
    if ch is None:
        return state, events
    return _apply(state, ch), events


def _apply(state: SimState, ch: _Changes) -> SimState:
    c = state.coords
    coords = PathCoords(tuple(ch.path_keys), frozen(ch.u), frozen(ch.d), frozen(ch.d_rate), c.v, c.a, c.yaw)
    control = replace(state.control, longitudinal=tuple(ch.longitudinal), lateral=tuple(ch.lateral), peds=tuple(ch.peds))
    bodies = replace(state.bodies, present=frozen(ch.present, bool))
    world = replace(state.world, discrete=dict(sorted(ch.discrete.items())), friction=ch.friction)
    inter = InteractionState(dict(ch.status), dict(sorted(ch.owners.items())), dict(sorted(ch.fired_at.items())))
    return state.evolve(coords=coords, control=control, bodies=bodies, world=world, interactions=inter)


def complete_lateral(state: SimState, view: TickView, done: list[int], events: list[Event]) -> SimState:
    """Clear finished lateral manoeuvres; a lane change releases its axis (event ``released``)."""
    if not done:
        return state
    lateral = list(state.control.lateral)
    owners = dict(state.interactions.owners)
    status = dict(state.interactions.status)
    for i in done:
        goal = lateral[i]
        lateral[i] = None
        if goal is not None and goal.kind == "change_lane" and goal.owner is not None:
            actor = view.scene.actors.ids[i]
            key = f"{actor}|lateral"
            if owners.get(key) == goal.owner:
                del owners[key]
                status[goal.owner] = ("released", view.tick)
                events.append(event(view, "released", interaction=goal.owner, actor=actor, axis="lateral", reason="lane change complete"))
    return state.evolve(control=replace(state.control, lateral=tuple(lateral)),
                        interactions=InteractionState(status, owners, state.interactions.fired))


def _crashed(state: SimState, scene: Scene, inter: Interaction) -> bool:
    """Whether ``inter`` would drive an actor that is in its post-crash stop (which keeps its axes to the horizon)."""
    if inter.actor_id is None or inter.verb in ("exist", "set"):
        return False
    return impact.post_crash(state.control.longitudinal[scene.actors.index[inter.actor_id]])


def take_post_crash(state: SimState, view: TickView, actors: list[int], events: list[Event]) -> SimState:
    """After a collision the drivers of ``actors`` stop (:mod:`simready.sim.behavior.impact`): they take both driving axes.

    Holders are preempted (event ``preemption``, by ``post-crash``); each
    actor newly given the stop gets a ``post_crash`` event.
    """
    lon, lat, given = impact.post_crash_goals(state.control.longitudinal, state.control.lateral, actors)
    if not given:
        return state
    owners = dict(state.interactions.owners)
    status = dict(state.interactions.status)
    for i in given:
        actor = view.scene.actors.ids[i]
        for axis in ("longitudinal", "lateral"):
            key = f"{actor}|{axis}"
            old = owners.get(key)
            if old is not None and old != impact.POST_CRASH:
                events.append(event(view, "preemption", actor=actor, axis=axis, preempted=old, by=impact.POST_CRASH))
                if old in status and status[old][0] == "fired":
                    status[old] = ("preempted", view.tick)
            owners[key] = impact.POST_CRASH
        events.append(event(view, "post_crash", actor=actor, behaviour="full braking to a standstill"))
    return state.evolve(control=replace(state.control, longitudinal=lon, lateral=lat),
                        interactions=InteractionState(status, dict(sorted(owners.items())), state.interactions.fired))


def take_for_branch(state: SimState, view: TickView, actor_index: int, action: str, events: list[Event]) -> SimState:
    """A branch action takes the actor's longitudinal axis (preempting its holder); a crashed actor keeps stopping."""
    if impact.post_crash(state.control.longitudinal[actor_index]):
        return state
    actor = view.scene.actors.ids[actor_index]
    owner = f"branch:{action}"
    owners = dict(state.interactions.owners)
    status = dict(state.interactions.status)
    key = f"{actor}|longitudinal"
    old = owners.get(key)
    if old is not None:
        events.append(event(view, "preemption", actor=actor, axis="longitudinal", preempted=old, by=owner))
        if old in status and status[old][0] == "fired":
            status[old] = ("preempted", view.tick)
    owners[key] = owner
    longitudinal = list(state.control.longitudinal)
    if action == "maintain":
        v = float(state.coords.v[actor_index])
        longitudinal[actor_index] = SpeedGoal("maintain", owner, Profile("step", v, v, view.tick, 0.0))
    else:
        longitudinal[actor_index] = SpeedGoal(action, owner)
    return state.evolve(control=replace(state.control, longitudinal=tuple(longitudinal)),
                        interactions=InteractionState(status, dict(sorted(owners.items())), state.interactions.fired))
