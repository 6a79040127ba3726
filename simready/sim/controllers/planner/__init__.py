"""One tick's plan for every actor, from one snapshot (SPEC §7 plan-then-apply, SPEC §8 controllers).

For each actor the planner finds the nearest obstacle ahead on its path —
a leader on its lane chain, the stop line of a red (or, when it can still
stop comfortably, amber) signal if it obeys signals, a visible pedestrian
in or (if it yields) about to enter its corridor, the end of a walk route,
the kerb a waiting pedestrian stands at — and combines the IDM braking
term for it with tracking of the reference speed its longitudinal goal
sets; a yielding vehicle also treats the waiting point before a junction
conflict as an obstacle while a priority vehicle is due there
(:mod:`simready.sim.behavior.junctions`). Commanded branch actions (``brake``,
``coast``) bypass all of it. The ego's
command then passes through its actuation delay. Lateral references come
from the actors' lateral goals. Nothing here reads a state other than the
view's, so the order actors are planned in cannot matter.

The per-actor arithmetic — obstacle gaps, IDM, rest handling, limits — and
the perception geometry run in the compiled kernels of
:mod:`simready.sim.core.planner_kernels` (bit for bit the vectorized and scalar forms they
replace); what stays here is the goals, the pedestrians' kerb decisions and
the ego's actuation.

The package, one module per part: :mod:`.planning` (:func:`plan` and its :class:`Plan`), :mod:`.route_table`
(:class:`RouteTable`: what the plan reads of the paths), :mod:`.perception` (leaders and pedestrians seen) and
:mod:`.background` (background traffic's obstacles and turn speeds). This ``__init__`` is the package's public face.
"""

from __future__ import annotations

from simready.sim.controllers.planner.perception import held, perceive_leaders, perceive_pedestrians
from simready.sim.controllers.planner.planning import Plan, goal_references, plan
from simready.sim.controllers.planner.route_table import (BOX_STANDOFF_M, PARKED_OVERLAP_M, RouteTable, clear_of_boxes,
                                                          conflict_boxes, curve_zones, network_yields, parked_obstacles)

__all__ = ["BOX_STANDOFF_M", "PARKED_OVERLAP_M", "Plan", "RouteTable", "clear_of_boxes", "conflict_boxes", "curve_zones",
           "goal_references", "held", "network_yields", "parked_obstacles", "perceive_leaders", "perceive_pedestrians",
           "plan"]
