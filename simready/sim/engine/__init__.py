"""The rollout loop: triggers → plan → backend step → post-step bookkeeping, one tick at a time.

Tick i counts from the start of the warm-up (state i is at scenario time
``(i − warmup_ticks)·dt``, computed from the integer, never accumulated).
Step i → i+1:

1. during the clip (i ≥ warmup_ticks), :func:`simready.sim.behavior.interactions.update`
   fires due triggers on state i;
   (background traffic, every 0.5 s from the warm-up on: its
   discretionary lane changes, :mod:`simready.sim.behavior.lane_changes`);
2. the planner computes every actor's command from one
   :class:`~simready.sim.core.sight.TickView` of state i (plan);
3. the backend advances all bodies together (apply);
4. new contacts become ``collision`` events, finished lateral manoeuvres
   release, an actor whose front reaches the end of a lane chain that leaves
   the map despawns (``despawn``, reason ``left the map``; background
   vehicles out of a recorded range despawn and reserves spawn at the
   map's entries to keep the density, :mod:`simready.sim.behavior.respawn`, at
   step 1), and the new state is
   checked: a non-finite or exploding state, or a body far outside the map,
   stops the rollout with a reason instead of being recorded;
5. states i+1 ≥ warmup_ticks are recorded.

The engine holds the only mutable things — the current state, the backend
adapter, the event log and the recorder — so a checkpoint
(:mod:`simready.sim.storage.checkpoint`) captures exactly those.

The package, one module per part: :mod:`.loop` (the :class:`Engine` and its tick, with its event handling and
checkpoints), :mod:`.start` (tick 0), :mod:`.collisions` (a collision event's end and delta-v),
:mod:`.divergence` (whether a state can go on), :mod:`.recorder` (the recorded clip's arrays) and
:mod:`.quiet_ticks` (runs of ticks stepped compiled). This ``__init__`` is the package's public face.
"""

from __future__ import annotations

from simready.sim.behavior.interactions.events import Event
from simready.sim.engine.collisions import IMPACT_WINDOW_S, close_collision, impact_delta_v
from simready.sim.engine.loop import Engine
from simready.sim.engine.recorder import Recorder
from simready.sim.engine.start import DEFAULT_EGO_MASS_KG, initial_state, ped_stream_name

__all__ = ["DEFAULT_EGO_MASS_KG", "IMPACT_WINDOW_S", "Engine", "Event", "Recorder", "close_collision", "impact_delta_v",
           "initial_state", "ped_stream_name"]
