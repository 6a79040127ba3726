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

The package, one module per part: :mod:`.events` (the event record), :mod:`.conditions` (a condition's truth),
:mod:`.triggers` (when a trigger is due), :mod:`.verbs` (what a fired verb changes, its release, axis ownership),
:mod:`.firing` (the per-tick walk, :func:`update`), :mod:`.quiet` (the ticks that need no check, and the guards of a
waiting ``when``) and :mod:`.axes` (axes taken outside the triggers: a finished lane change, the post-crash stop, a
branch's action). This ``__init__`` is the package's public face.
"""

from __future__ import annotations

from simready.sim.behavior.interactions.axes import complete_lateral, take_for_branch, take_post_crash
from simready.sim.behavior.interactions.conditions import evaluate
from simready.sim.behavior.interactions.events import Event, event
from simready.sim.behavior.interactions.firing import initial_state, update
from simready.sim.behavior.interactions.quiet import GUARD_MARGIN_M, NEVER, Guard, quiet_guards, quiet_until

__all__ = ["GUARD_MARGIN_M", "NEVER", "Event", "Guard", "complete_lateral", "evaluate", "event", "initial_state",
           "quiet_guards", "quiet_until", "take_for_branch", "take_post_crash", "update"]
