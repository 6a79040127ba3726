"""What a fired verb changes (SPEC §6) and who holds its axis: speed, gap, lane offset, lane change, route, exist
and set, the release of a held verb at its ``until``, and the one-axis-one-owner preemption.

All of one tick's changes gather in a copy-on-write :class:`Changes`, applied to the state once
(:func:`apply`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from simready.scenario.manifest import Interaction, SpeedVerb
from simready.sim.behavior.interactions.events import Event, event
from simready.sim.core import constants as C
from simready.sim.core.profiles import Profile, duration_s, taking_over
from simready.sim.core.sight import TickView
from simready.sim.core.state import GapGoal, InteractionState, LateralGoal, PathCoords, SimState, SpeedGoal, frozen


def speed_target(verb: SpeedVerb, v0: float) -> float:
    value = verb.value  # set exactly for absolute, delta and factor (the verb's validator)
    if verb.mode == "absolute" and value is not None:
        return float(value)
    if verb.mode == "delta" and value is not None:
        return max(v0 + float(value), 0.0)
    if verb.mode == "factor" and value is not None:
        return v0 * float(value)
    return 0.0


class Changes:
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


def take_axis(ch: Changes, view: TickView, owner_key: str, inter_id: str, actor: str | None, axis: str,
               events: list[Event]) -> None:
    old = ch.owners.get(owner_key)
    if old is not None and old != inter_id:
        events.append(event(view, "preemption", actor=actor, axis=axis, preempted=old, by=inter_id))
        if old in ch.status and ch.status[old][0] == "fired":
            ch.status[old] = ("preempted", view.tick)
    ch.owners[owner_key] = inter_id


def _lane_change(ch: Changes, view: TickView, inter: Interaction, i: int, events: list[Event]) -> bool:
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


def _route(ch: Changes, view: TickView, inter: Interaction, i: int, events: list[Event]) -> bool:
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


def fire(ch: Changes, view: TickView, inter: Interaction, reason: str, events: list[Event]) -> None:
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
            take_axis(ch, view, f"{actor}|lateral", inter.id, actor, "lateral", events)
        return
    if verb == "route":
        assert i is not None  # an actor's verb
        if _route(ch, view, inter, i, events):
            take_axis(ch, view, f"{actor}|topology", inter.id, actor, "topology", events)
        return
    take_axis(ch, view, f"{actor or 'world'}|{inter.axis}", inter.id, actor, inter.axis, events)
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
            v1 = speed_target(sv, v0)
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


def _lateral_profile(ch: Changes, i: int, shape: str, constraint: str, value: float, d1_m: float, tick: int,
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


def release(ch: Changes, view: TickView, inter: Interaction, reason: str, events: list[Event]) -> None:
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


def apply(state: SimState, ch: Changes) -> SimState:
    c = state.coords
    coords = PathCoords(tuple(ch.path_keys), frozen(ch.u), frozen(ch.d), frozen(ch.d_rate), c.v, c.a, c.yaw)
    control = replace(state.control, longitudinal=tuple(ch.longitudinal), lateral=tuple(ch.lateral), peds=tuple(ch.peds))
    bodies = replace(state.bodies, present=frozen(ch.present, bool))
    world = replace(state.world, discrete=dict(sorted(ch.discrete.items())), friction=ch.friction)
    inter = InteractionState(dict(ch.status), dict(sorted(ch.owners.items())), dict(sorted(ch.fired_at.items())))
    return state.evolve(coords=coords, control=control, bodies=bodies, world=world, interactions=inter)
