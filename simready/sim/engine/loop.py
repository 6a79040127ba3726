"""The engine: the rollout's one mutable holder (state, backend, event log, recorder) and its tick."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from simready.sim.core import constants as C
from simready.sim.behavior import interactions, walkers
from simready.sim.behavior.interactions.events import Event
from simready.sim.core import kernels
from simready.sim.backend import Backend, StepOutcome
from simready.sim.backends import make_backend
from simready.sim.storage.checkpoint import Checkpoint, capture, check_identity
from simready.sim.controllers.planner import RouteTable, plan
from simready.sim.behavior.lane_changes import DECISION_PERIOD_S, lane_changes
from simready.sim.core.sight import TickView
from simready.sim.core.reference_paths import PathKey, PathTable
from simready.sim.behavior.respawn import Respawner
from simready.sim.core.scene import Scene
from simready.sim.core.state import SimState, frozen, with_changes
from simready.sim.engine.collisions import close_collision, impact_delta_v
from simready.sim.engine.divergence import divergence
from simready.sim.engine.quiet_ticks import quiet_setup, quiet_ticks
from simready.sim.engine.recorder import Recorder
from simready.sim.engine.start import DEFAULT_EGO_MASS_KG, initial_state


class Engine:
    """A rollout in progress. ``Engine(scene)`` starts at tick 0; :meth:`restore` resumes a checkpoint."""

    def __init__(self, scene: Scene, state: SimState | None = None, *, events: list[Event] | None = None,
                 history: dict[str, np.ndarray] | None = None) -> None:
        self.scene = scene
        self.backend: Backend = make_backend(scene.backend, scene)
        self.recorder = Recorder(scene, self.backend.extras, fused=self.backend.name in ("kinematic-v1", "dynamic-v1"))
        self.events: list[Event] = list(events or [])
        self.state = state if state is not None else initial_state(scene)
        self.ticks_simulated = 0
        self.ego_mass_kg = DEFAULT_EGO_MASS_KG
        e = scene.actors.ego
        if e is not None and scene.catalog is not None and scene.actors.asset_ids[e] in scene.catalog.entries:
            self.ego_mass_kg = float(scene.catalog.entries[scene.actors.asset_ids[e]].mass_kg)
        self._keys: tuple[PathKey, ...] | None = None
        self._perception_every = max(1, round(C.PERCEPTION_PERIOD_S / scene.dt))
        #: Background traffic makes discretionary lane changes (:mod:`simready.sim.behavior.lane_changes`) at perception ticks.
        self._background = bool(scene.actors.background.any())
        self._change_every = max(1, round(DECISION_PERIOD_S / scene.dt))
        self._cruise = scene.actors.cruise.tolist()
        #: Background reserves spawned at the map's entries to keep the density (:mod:`simready.sim.behavior.respawn`).
        self._respawn = Respawner(scene, start=lambda: initial_state(scene))
        #: Background pedestrians turn onto new routes at their route's end (:class:`simready.sim.behavior.walkers.Turner`).
        self._turner = walkers.Turner(scene)
        self._route: RouteTable | None = None
        self._leaving: dict[int, tuple[PathTable, list[tuple[int, float, float]]]] = {}
        #: The arguments of the compiled quiet ticks that hold for the whole rollout (None: every tick in Python).
        self._quiet = self._quiet_setup()
        self._conflicts: tuple[RouteTable, tuple[np.ndarray, ...]] | None = None
        # The tick the compiled quiet ticks last stopped before (it is Python's: asking again would stop there again).
        self._python_at = -1
        start = self.backend.start(self.state)
        self.state = self.state.evolve(bodies=start.bodies, coords=start.coords,
                                       extras=start.extras or self.state.extras)
        if history is not None:
            self.recorder.load(history)
        elif self.state.tick == scene.warmup_ticks:
            self.recorder.record(self.state, self.route.paths)

    @property
    def route(self) -> RouteTable:
        keys = self.state.coords.path_keys
        if keys is not self._keys and keys != self._keys:
            self._route = RouteTable.build(self.scene, tuple(self.scene.path(k) for k in keys))
        self._keys = keys
        assert self._route is not None
        return self._route

    @property
    def finished(self) -> bool:
        return self.state.termination is not None or self.state.tick >= self.scene.total_ticks

    def step(self) -> bool:
        """Advance one tick; False when the rollout was already finished."""
        if self.finished:
            return False
        scene = self.scene
        s = self.state
        route = self.route
        view = TickView(scene, s, route.paths)
        events: list[Event] = []
        if s.tick >= scene.warmup_ticks:
            s2, fired = interactions.update(scene, s, view)
            events.extend(fired)
            if s2 is not s:
                s = s2
                self.state = s
                route = self.route
                view = TickView(scene, s, route.paths)
        if self._respawn.active:
            s2 = self._respawn.step(scene, s, view, events)
            if s2 is not s:
                s = s2
                self.state = s
                route = self.route  # a recycled vehicle re-enters on another path
                view = TickView(scene, s, route.paths)
        if len(self._turner.rows):
            s2 = self._turner.step(scene, s, route.paths.paths)
            if s2 is not s:
                s = s2
                self.state = s
                route = self.route
                view = TickView(scene, s, route.paths)
        if self._background and s.tick % self._change_every == 0:
            s2, changed = lane_changes(view, self._cruise, route)
            if s2 is not s:
                events.extend(changed)
                s = s2
                self.state = s
                route = self.route
                view = TickView(scene, s, route.paths)
        p = plan(view, route, s.control, s.world.friction, self.ego_mass_kg)
        # The backends read the control fields the plan leaves as they were (struck, steer_rad, longitudinal), so
        # they step from ``s`` itself; the plan's changes enter the new state's control below, in one copy.
        out = self.backend.advance(s, route, p)
        self.ticks_simulated += 1
        v = out.coords.v
        rest = C.STANDSTILL_MPS
        sc = s.control
        standstill = tuple([k + 1 if x < rest else 0 for x, k in zip(v.tolist(), sc.standstill)])
        e = scene.actors.ego
        steer = float(out.extras["steer_rad"][e]) if e is not None and "steer_rad" in out.extras else sc.steer_rad
        control = with_changes(sc, **p.changes, standstill=standstill, steer_rad=steer)
        if out.struck is not None and out.struck != s.control.struck:
            control = with_changes(control, struck=out.struck)
        world = s.world if out.contacts == s.world.contacts else with_changes(s.world, contacts=out.contacts)
        if out.woken is not None and out.woken != world.woken:
            world = with_changes(world, woken=out.woken)
        new = s.evolve(tick=s.tick + 1, bodies=out.bodies, coords=out.coords, extras=out.extras, control=control,
                       world=world)
        bounds = new.tick % self._perception_every == 0
        # The kinematic step checked its bodies (out.ok): only a failed or unchecked state is checked here.
        reason = None if out.ok & (kernels.OK_BOUNDS if bounds else kernels.OK_STATE) else divergence(scene, new, bounds)
        if reason is not None:
            self.events.extend(events)
            self.events.append({"tick": new.tick, "t": round((new.tick - scene.warmup_ticks) * scene.dt, 9),
                                "type": "termination", "reason": reason})
            self.state = s.evolve(control=p.control, termination=(new.tick, reason))
            return False
        # The view of the new state is only read when something happens (most ticks: nothing).
        post = None
        if p.lateral_done:
            post = TickView(scene, new, route.paths)
            new = interactions.complete_lateral(new, post, p.lateral_done, events)
        if out.contacts != s.world.contacts:
            post = post or TickView(scene, new, route.paths)
            new = self._contacts_changed(s, new, post, out, events)
        if out.contacts:
            impact_delta_v(self.events, events, scene, new)
        if not (out.ok & kernels.OK_STAYS and new.coords.u is out.coords.u and new.bodies.present is out.bodies.present):
            # (The kinematic step tested the same u and presence on this path table: nobody leaves.)
            new = self._leave_map(new, route, post, events)
        self.events.extend(events)
        self.state = new
        if new.tick >= scene.warmup_ticks:
            self.recorder.record(new, self.route.paths)
        return True

    def _contacts_changed(self, before: SimState, new: SimState, view: TickView, out: StepOutcome, events: list[Event]) -> SimState:
        """Contacts that began become ``collision`` events (and send the vehicles' drivers into their post-crash
        stop); contacts that ended complete their event with its duration and each party's delta-v."""
        a = self.scene.actors
        began = sorted(out.contacts - before.world.contacts)
        for pair in began:
            events.append(self._collision_event(view, pair, before, out.impacts or {}))
        for pair in sorted(before.world.contacts - out.contacts):
            close_collision(self.events, events, self.scene, self.parties(pair), new)
        crashed = sorted({k for i, j in began if j >= 0 for k in (i, j) if a.is_vehicle[k] and not a.parked[k]})
        if crashed:
            new = interactions.take_post_crash(new, view, crashed, events)
        return new

    def _collision_event(self, view: TickView, pair: tuple[int, int], before: SimState,
                         impacts: dict[tuple[int, int], tuple[float, float]]) -> Event:
        """The ``collision`` event of a contact that began this tick (SPEC §8).

        ``relative_speed_mps``: |v_a − v_b| (|v_a| against a static collider)
        at the start of the tick, before the contact's impulse; ``point``: the
        impact point (world x, y, m) where the backend reports one;
        ``v_before``: each party's velocity (m/s, world xy) at the start of the
        tick, from which :func:`close_collision` measures the delta-v.
        """
        ids = self.scene.actors.ids
        i, j = pair
        ev = interactions.event(view, "collision", a=ids[i], b=self.parties(pair)[1])
        v0 = before.bodies.vel
        rel = v0[i, :2] - v0[j, :2] if j >= 0 else v0[i, :2]
        ev["relative_speed_mps"] = round(float(math.hypot(*rel)), 6)
        if pair in impacts:
            ev["point"] = [round(float(x), 6) for x in impacts[pair]]
        ev["v_before"] = {ids[k]: [round(float(x), 6) for x in v0[k, :2]] for k in pair if k >= 0}
        return ev

    def parties(self, pair: tuple[int, int]) -> tuple[str, str]:
        """The names of a contact's parties: two actor ids, or an actor id and a static collider's name."""
        ids = self.scene.actors.ids
        return ids[pair[0]], ids[pair[1]] if pair[1] >= 0 else self.backend_static_name(pair)

    def backend_static_name(self, pair: tuple[int, int]) -> str:
        names: dict[tuple[int, int], str] = getattr(self.backend, "static_contact_names", {})
        return names.get(pair, "static")

    def _leave_map(self, state: SimState, route: RouteTable, view: TickView | None, events: list[Event]) -> SimState:
        t = route.paths
        leaving = self._leaving.get(id(t))
        if leaving is None or leaving[0] is not t:
            if len(self._leaving) > 16:
                self._leaving.clear()
            hl = self.scene.actors.hl.tolist()
            lengths = t.lengths.tolist()
            leaving = self._leaving[id(t)] = (t, [(i, hl[i], lengths[i]) for i in np.flatnonzero(t.leaves).tolist()])
        if not leaving[1]:
            return state
        u, pres = state.coords.u.tolist(), state.bodies.present.tolist()
        gone = [i for i, hl_i, length in leaving[1] if pres[i] and u[i] + hl_i > length]
        if not gone:
            return state
        present = np.array(state.bodies.present)
        view = view or TickView(self.scene, state, t)
        for i in gone:
            present[i] = False
            events.append(interactions.event(view, "despawn", actor=self.scene.actors.ids[i], reason="left the map"))
        return state.evolve(bodies=replace(state.bodies, present=frozen(present, bool)))

    def checkpoint(self) -> Checkpoint:
        """A complete snapshot of this engine (:class:`simready.sim.storage.checkpoint.Checkpoint`); logs a ``checkpoint`` event."""
        ckpt = capture(self)
        self.events.append(self._checkpoint_event(ckpt.id))
        return ckpt

    def _checkpoint_event(self, ckpt_id: str) -> Event:
        t = round((self.state.tick - self.scene.warmup_ticks) * self.scene.dt, 9)
        return {"tick": self.state.tick, "t": t, "type": "checkpoint", "id": ckpt_id}

    @classmethod
    def restore(cls, scene: Scene, ckpt: Checkpoint) -> Engine:
        """A fresh engine (and backend) continuing from ``ckpt``; logs the same ``checkpoint`` event the original did."""
        check_identity(ckpt, scene)
        engine = cls(scene, ckpt.state(), events=list(ckpt.meta["events"]), history=ckpt.history())
        engine.ticks_simulated = int(ckpt.meta["ticks_simulated"])
        engine.events.append(engine._checkpoint_event(ckpt.id))
        return engine

    def run(self, until_tick: int | None = None, progress: Any = None) -> None:
        """Step until ``until_tick`` (default: the end of the clip) or termination."""
        end = self.scene.total_ticks if until_tick is None else min(until_tick, self.scene.total_ticks)
        quiet = self._quiet is not None
        while self.state.tick < end:
            k = self._quiet_ticks(end) if quiet else 0
            if k == 0:
                if not self.step():
                    break
                k = 1
            if progress is not None:
                progress.update(k)

    def close(self) -> None:
        self.backend.close()

    def _quiet_setup(self) -> tuple[Any, ...] | None:
        """The arguments of the compiled quiet ticks fixed for the whole rollout (:func:`~.quiet_ticks.quiet_setup`)."""
        return quiet_setup(self)

    def _quiet_ticks(self, end: int) -> int:
        """Step the ticks from the current one that need no Python, to ``end`` at most (:func:`~.quiet_ticks.quiet_ticks`)."""
        return quiet_ticks(self, end)
