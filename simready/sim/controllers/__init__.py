"""Controllers (SPEC §8): goals in, commands out; never copied world poses.

* :mod:`.longitudinal` — speed tracking and IDM-style following, the gap verb.
* :mod:`.actuation` — the ego's actuation delay, throttle/brake, resistance.
* :mod:`.lateral` — lateral-offset transitions and preview path tracking.
* :mod:`.pedestrian` — walking the walkable route: kerb decision with reaction delay and stop tendency.
* :mod:`.planner` — one tick's plan for every actor from one :class:`~simready.sim.core.sight.TickView` (a package:
  planning, route_table, perception, background).
"""
