"""Each tick's walk over the interactions: fire the due triggers (again until nothing more fires), then release the
due ``until``s.
"""

from __future__ import annotations

from simready.sim.behavior.interactions import quiet
from simready.sim.behavior.interactions.axes import crashed
from simready.sim.behavior.interactions.events import Event, event
from simready.sim.behavior.interactions.triggers import due
from simready.sim.behavior.interactions.verbs import Changes, apply, fire, release
from simready.sim.core.scene import Scene
from simready.sim.core.sight import TickView
from simready.sim.core.state import InteractionState, SimState


def initial_state(scene: Scene) -> InteractionState:
    """Every interaction pending, no axis held, nothing fired."""
    return InteractionState({i.id: ("pending", -1) for i in scene.manifest.interactions}, {}, {})


def update(scene: Scene, state: SimState, view: TickView) -> tuple[SimState, list[Event]]:
    """Fire due triggers, release due ``until``s; the new state and the events, in order.

    Nothing is copied until something fires: most ticks only compare a few integers, and while only ``at`` and
    ``after`` triggers wait, none until the first is due (:func:`~.quiet.quiet_until_of`).
    """
    status = state.interactions.status
    fired_at = state.interactions.fired
    memo = quiet.QUIET[0]
    if memo is not None and memo[0] is scene and memo[1] is status and memo[2] is fired_at:
        if view.tick < memo[3]:
            return state, []
        pending, fired_with_until = quiet.waiting(scene.manifest.interactions, status)
    else:
        pending, fired_with_until = quiet.waiting(scene.manifest.interactions, status)
        until = quiet.quiet_until_of(scene, pending + fired_with_until, status, fired_at)
        quiet.QUIET[0] = (scene, status, fired_at, until)
        if view.tick < until:
            return state, []
    holding = [i for i in fired_with_until if status[i.id][1] != view.tick]
    if not pending and not holding:
        return state, []
    ch: Changes | None = None
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
            verdict, reason = due(inter.trigger, inter, view, state, snapshot, fired)
            if verdict is None:
                continue
            if ch is None:
                ch = Changes(state)
            if verdict == "fire" and crashed(state, scene, inter):
                verdict, reason = "skip", "its actor crashed and is stopping (post-crash)"
            if verdict == "fire":
                fire(ch, view, inter, reason, events)
            else:
                ch.status[inter.id] = ("skipped", view.tick)
                events.append(event(view, "trigger_skipped", interaction=inter.id, actor=inter.actor_id, reason=reason))
            progressed = True
    for inter in holding:
        current = ch.status if ch is not None else status
        if current[inter.id][0] != "fired":
            continue
        snapshot = InteractionState(current, ch.owners if ch is not None else state.interactions.owners)
        verdict, reason = due(inter.until, inter, view, state, snapshot, ch.fired_at if ch is not None else state.interactions.fired)
        if verdict == "fire":
            if ch is None:
                ch = Changes(state)
            release(ch, view, inter, f"until {reason}", events)
    if ch is None:
        return state, events
    return apply(state, ch), events
