"""A ``collision`` event's end (SPEC §8): its ``t_end``, duration and each party's delta-v across the impact."""

from __future__ import annotations

import math

from simready.sim.behavior.interactions.events import Event
from simready.sim.core.scene import Scene
from simready.sim.core.state import SimState


def close_collision(logged: list[Event], pending: list[Event], scene: Scene, parties: tuple[str, str], state: SimState,
                    ongoing: bool = False) -> None:
    """Complete the open ``collision`` event between ``parties`` (the latest without ``t_end``) at ``state``'s tick.

    Adds ``t_end`` (the first tick without contact, or the last recorded one
    when ``ongoing``), ``duration_s``, and, for a contact shorter than
    :data:`IMPACT_WINDOW_S`, ``delta_v_mps``: each party's |v_after − v_before|
    (m/s, world xy) across it (:func:`impact_delta_v` gives the longer ones theirs).
    """
    for ev in reversed(pending + logged):
        if ev["type"] == "collision" and "t_end" not in ev and {ev["a"], ev["b"]} == set(parties):
            t_end = round((state.tick - scene.warmup_ticks) * scene.dt, 9)
            ev["t_end"] = t_end
            ev["duration_s"] = round(t_end - ev["t"], 9)
            if "delta_v_mps" not in ev:
                _delta_v(ev, scene, state)
            if ongoing:
                ev["ongoing"] = True
            return


#: A collision's delta-v is each party's velocity change from the tick before the contact to its end, or to this
#: long after it began if it lasts longer (s): the impact, not a carried pedestrian's ride or the braking after it.
IMPACT_WINDOW_S = 0.2


def _delta_v(ev: Event, scene: Scene, state: SimState) -> None:
    ids = scene.actors.ids
    vel = state.bodies.vel
    ev["delta_v_mps"] = {k: round(math.hypot(float(vel[ids.index(k), 0]) - v[0], float(vel[ids.index(k), 1]) - v[1]), 6)
                         for k, v in sorted(ev.get("v_before", {}).items())}


def impact_delta_v(logged: list[Event], pending: list[Event], scene: Scene, state: SimState) -> None:
    """Give every open ``collision`` event whose impact window has passed at ``state``'s tick its delta-v."""
    t = (state.tick - scene.warmup_ticks) * scene.dt
    for ev in pending + logged:
        if ev["type"] == "collision" and "delta_v_mps" not in ev and t - ev["t"] >= IMPACT_WINDOW_S - 1e-9:
            _delta_v(ev, scene, state)
