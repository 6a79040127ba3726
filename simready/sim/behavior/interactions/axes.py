"""Axes taken outside the scenario's triggers: a finished lane change gives its axis back, a crash's post-crash
stop and a branch's action take theirs (preempting the holder).
"""

from __future__ import annotations

from dataclasses import replace

from simready.scenario.manifest import Interaction
from simready.sim.behavior import impact
from simready.sim.behavior.interactions.events import Event, event
from simready.sim.core.profiles import Profile
from simready.sim.core.scene import Scene
from simready.sim.core.sight import TickView
from simready.sim.core.state import InteractionState, SimState, SpeedGoal


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


def crashed(state: SimState, scene: Scene, inter: Interaction) -> bool:
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
