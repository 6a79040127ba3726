"""Background pedestrians in the simulator (SPEC §20): the kerb on their phase or an accepted gap, and keeping apart.

Background pedestrians (tag ``background``, :mod:`simready.scenario.traffic_walkers`)
walk their walkable routes like any pedestrian, with two rules of their own
(the scenario's pedestrians keep :mod:`simready.sim.controllers.pedestrian`'s,
so samples without background pedestrians are unchanged):

* **the kerb**: at a crosswalk under a pedestrian signal (the template's
  ``pedestrian_signals``, imported from OpenDRIVE pedestrian lights) it steps
  off only while that signal is green until it can have crossed (the time
  below); elsewhere, at a crossing whose roadway lanes a signal controls (a lane
  of the crossing with a stop line, the map's own or carried across, see
  :class:`simready.sim.core.scene.SignalTable`) it steps off only on its phase:
  every such signal red from now until it can have crossed (its remaining
  walk to the far kerb at its cruise speed, plus its reaction delay, plus
  :data:`PHASE_MARGIN_S`) — the signal programs are known ahead, as a
  pedestrian countdown shows them; and, signalised or not, only when no
  vehicle or cyclist is on the crossing or reaches it, at its speed along its
  own path, within the accepted gap: the time the pedestrian needs to cross
  plus :data:`GAP_MARGIN_S` (:func:`gap_hazard`; one due at a red light before
  the crossing that it can still stop at comfortably does not count). It decides within
  :data:`~simready.sim.core.constants.KERB_LOOKAHEAD_M` plus its stopping distance
  of the kerb, stops at once (the decision is made before the kerb, so no
  reaction delay), and resumes its reaction delay after the way is clear;
  once it is within its stopping distance of the kerb on a clear way it goes
  (``committed``), so it never stops in the roadway;
* **keeping apart**: it walks :data:`~simready.scenario.traffic_walkers.PED_KEEP_RIGHT_M`
  right of its route's line (``walk.keep_right_m``), so two walking towards
  each other pass, and stops behind a pedestrian ahead on its own walk path
  (:func:`walker_gaps`); two that have each other ahead (crossing or merging
  paths) settle it by id, the later one waits (both, while either is off its
  own offset); after a turn back at a dead end (:class:`Turner`) it is on the
  far side of its new line and drifts back at :data:`RETURN_RATE_MPS`, not
  into a pedestrian beside it;
* **giving way to the scenario's pedestrians** (:func:`yield_to_scenario`):
  the scenario's pedestrians never react to background ones (their timing
  serves the scenario's relation), so a background pedestrian keeps out of
  the stretch a scenario pedestrian walks in the next :data:`CLAIM_S`: it
  stops before a claim crossing its path, and steps sideways (at
  :data:`SIDESTEP_RATE_MPS`, at most :data:`SIDESTEP_MAX_M` off its line, not
  from a sidewalk into the roadway) out of one along its heading — head-on or
  overtaken — or round a scenario pedestrian standing in its way.

The package, one module per rule: :mod:`.kerb` (the kerb decision), :mod:`.spacing` (keeping apart),
:mod:`.giving_way` (giving way to the scenario's pedestrians) and :mod:`.turns` (a new route at the route's end).
This ``__init__`` is the package's public face.
"""

from __future__ import annotations

from simready.sim.behavior.walkers.giving_way import (CLAIM_S, RETURN_RATE_MPS, SIDESTEP_MAX_M, SIDESTEP_RATE_MPS,
                                                      yield_to_scenario)
from simready.sim.behavior.walkers.kerb import (GAP_MARGIN_S, GAP_MIN_SPEED_MPS, PHASE_MARGIN_S, Crossing, crossing,
                                                crossing_u, gap_hazard, pedestrian_states, phase_open, update)
from simready.sim.behavior.walkers.spacing import FOLLOW_GAP_M, walker_gaps
from simready.sim.behavior.walkers.turns import TURN_AT_END_M, Turner, turn_seed

__all__ = ["CLAIM_S", "FOLLOW_GAP_M", "GAP_MARGIN_S", "GAP_MIN_SPEED_MPS", "PHASE_MARGIN_S", "RETURN_RATE_MPS",
           "SIDESTEP_MAX_M", "SIDESTEP_RATE_MPS", "TURN_AT_END_M", "Crossing", "Turner", "crossing", "crossing_u",
           "gap_hazard", "pedestrian_states", "phase_open", "turn_seed", "update", "walker_gaps", "yield_to_scenario"]
