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
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from simready.scenario.streams import StreamSet
from simready.sim.core import constants as C
from simready.sim.behavior import interactions, junctions, walkers
from simready.sim.core import kernels
from simready.sim.core import planner_kernels as pk
from simready.sim.core import tick_kernels
from simready.sim.backend import Backend, StepOutcome
from simready.sim.backends import make_backend
from simready.sim.backends.kinematic import KinematicBackend
from simready.sim.storage.checkpoint import Checkpoint, capture, check_identity
from simready.sim.controllers import actuation, lateral
from simready.sim.controllers import planner as planner_mod
from simready.sim.controllers.planner import RouteTable, plan
from simready.sim.core import kinematics
from simready.sim.core.kinematics import path_bodies
from simready.sim.behavior.lane_changes import DECISION_PERIOD_S, lane_changes
from simready.sim.core.sight import DIVERGE_WINDOW_M, TickView, leader_u0, occluder_mask
from simready.sim.core.reference_paths import PathKey, PathTable
from simready.sim.behavior.respawn import Respawner
from simready.sim.core.scene import Scene
from simready.sim.core.state import (
    ControlState,
    GapGoal,
    PathCoords,
    PedMemory,
    SimState,
    WorldState,
    frozen,
    ro,
    set_indices,
    with_changes,
)

Event = dict[str, Any]
#: Mass assumed for the ego's resistance when the catalog is not available (kg).
DEFAULT_EGO_MASS_KG = 1500.0


def ped_stream_name(actor_id: str) -> str:
    return f"disturbance/{actor_id}"


def initial_state(scene: Scene) -> SimState:
    """Tick 0: every actor at its manifest initial pose and speed, nothing fired, disturbances drawn."""
    m = scene.manifest
    a = scene.actors
    n = len(a)
    by_id = {actor.id: actor for actor in m.actors}
    streams = StreamSet.from_seeds(m.sample_id, m.streams)
    peds: list[PedMemory | None] = []
    for i, actor_id in enumerate(a.ids):
        if a.is_ped[i]:
            draw = float(streams.stream(ped_stream_name(actor_id)).random())
            peds.append(PedMemory("walk", None, None, scene.kerb_u(scene.initial_paths[i]), draw, float(a.reaction_delay[i])))
        else:
            peds.append(None)
    v0 = np.array([by_id[i].initial.speed_mps for i in a.ids], dtype=np.float64)
    present = np.array([by_id[i].present_at_start for i in a.ids], dtype=bool)
    table = PathTable.build(scene.initial_paths, scene.lane_ids, scene.actors.chord)
    zeros = np.zeros(n)
    bodies, yaw, _ = path_bodies(scene, table, scene.initial_u, scene.initial_d, zeros, zeros, v0, zeros, present)
    coords = PathCoords(tuple(p.key for p in scene.initial_paths), frozen(scene.initial_u), frozen(scene.initial_d),
                        frozen(zeros), frozen(v0), frozen(zeros), frozen(yaw))
    control = ControlState(
        longitudinal=(None,) * n,
        lateral=(None,) * n,
        actuation=(0.0,) * actuation.delay_ticks(scene.dt) if a.ego is not None else (),
        steer_rad=0.0,
        standstill=tuple(int(v < C.STANDSTILL_MPS) for v in v0),
        peds=tuple(peds),
    )
    world = WorldState({}, float(m.environment.road_friction))
    return SimState(0, bodies, coords, control, interactions.initial_state(scene), world, streams.state())


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


class Recorder:
    """Preallocated per-tick arrays of the recorded clip (rows = ticks warmup..warmup+clip)."""

    def __init__(self, scene: Scene, extras: tuple[str, ...], fused: bool = False) -> None:
        r = scene.manifest.clip_ticks + 1
        n = len(scene.actors)
        self.rows = 0
        self._speed_rows = 0
        self.pos = np.zeros((r, n, 3))
        self.quat = np.zeros((r, n, 4))
        self.vel = np.zeros((r, n, 3))
        self.omega = np.zeros((r, n, 3))
        self.speed = np.zeros((r, n))
        self.lane = np.full((r, n), -1, dtype=np.int64)
        self.s = np.full((r, n), np.nan)
        self.present = np.zeros((r, n), dtype=bool)
        #: The extras' rows, one (rows, N) slab per name (views of one block, so five of them go in one copy).
        self._x_all = np.zeros((len(extras), r, n))
        self.extras = {name: self._x_all[j] for j, name in enumerate(extras)}
        self._extra_rows = tuple(self.extras.items())
        self._extra_names = tuple(extras)
        #: Whether the extras are kinematic-v1's five (N,) rows, copied with the bodies (:meth:`record`).
        self._fused = fused and len(extras) == 5

    def record(self, state: SimState, table: PathTable) -> None:
        """Copy state's row into the preallocated arrays (speeds are filled in bulk when read, :meth:`arrays`).

        Why row by row: keeping references and stacking them at the end cost
        ~30 µs a row; the bodies, presence, lane and s go in one compiled
        copy (:func:`simready.sim.core.kernels.record_row`), the extras as numpy rows
        (kinematic-v1's five in the same copy, :func:`~simready.sim.core.kernels.record_row_x5`).
        """
        k = self.rows
        b = state.bodies
        u = state.coords.u
        lane, s = table.lanes_at(u)
        walk = self._walk(state.coords.path_keys)
        # One compiled copy of the row. A walk route has no lane: its s is the arc length along the route.
        get = state.extras.get
        if self._fused:
            # kinematic-v1's five extras, (N,) float arrays, go in the same call (a state without them, such as the
            # first recorded one, takes the rows below).
            x = state.extras
            n0, n1, n2, n3, n4 = self._extra_names
            try:
                kernels.record_row_x5(k, b.pos, b.quat, b.vel, b.omega, b.present, lane, s, u, walk, x[n0], x[n1],
                                      x[n2], x[n3], x[n4], self.pos, self.quat, self.vel, self.omega, self.present,
                                      self.lane, self.s, self._x_all)
            except KeyError:
                pass
            else:
                self.rows = k + 1
                return
        kernels.record_row(k, b.pos, b.quat, b.vel, b.omega, b.present, lane, s, u, walk, self.pos, self.quat, self.vel,
                           self.omega, self.present, self.lane, self.s)
        for name, arr in self._extra_rows:
            row = get(name)
            if row is not None:
                arr[k] = row
        self.rows = k + 1

    def _walk(self, keys: tuple[PathKey, ...]) -> np.ndarray:
        if keys is not getattr(self, "_walk_keys", None):
            self._walk_keys = keys
            self._walk_mask = np.array([key[0] == "walk" for key in keys], dtype=bool)
        return self._walk_mask

    def _flush(self) -> None:
        """Fill the speeds of the rows recorded since the last read."""
        lo, k = self._speed_rows, self.rows
        if k > lo:
            # |(vx, vy)| elementwise, so the same values as row by row.
            self.speed[lo:k] = np.hypot(self.vel[lo:k, :, 0], self.vel[lo:k, :, 1])
        self._speed_rows = k

    def arrays(self) -> dict[str, np.ndarray]:
        """The recorded rows so far (views)."""
        self._flush()
        k = self.rows
        out = {"pos": self.pos[:k], "quat": self.quat[:k], "vel": self.vel[:k], "omega": self.omega[:k],
               "speed": self.speed[:k], "lane": self.lane[:k], "s": self.s[:k], "present": self.present[:k]}
        out.update({f"x:{name}": arr[:k] for name, arr in self.extras.items()})
        return out

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        k = len(arrays["pos"])
        for name in ("pos", "quat", "vel", "omega", "speed", "lane", "s", "present"):
            getattr(self, name)[:k] = arrays[name]
        for name, arr in self.extras.items():
            if f"x:{name}" in arrays:
                arr[:k] = arrays[f"x:{name}"]
        self.rows = k
        self._speed_rows = k


def _divergence(scene: Scene, state: SimState, check_bounds: bool) -> str | None:
    """Why the state cannot be continued (non-finite, exploding, far off the map), or None.

    Finiteness and speed are checked every tick; bounds on perception ticks
    (a body cannot cover the out-of-bounds margin between two of them). The
    compiled predicate (:func:`simready.sim.core.kernels.state_ok`) clears a good
    state; only a bad one is worded, by :func:`_divergence_full`.
    """
    b = state.bodies
    xmin, ymin, xmax, ymax = scene.bounds
    mgn = C.OUT_OF_BOUNDS_MARGIN_M
    if kernels.state_ok(b.pos, b.quat, b.vel, b.omega, b.present, C.EXPLOSION_SPEED_MPS, check_bounds,
                        xmin - mgn, xmax + mgn, ymin - mgn, ymax + mgn, mgn):
        return None
    return _divergence_full(scene, state)


def _divergence_full(scene: Scene, state: SimState) -> str | None:
    b = state.bodies
    for name in ("pos", "quat", "vel", "omega"):
        arr = getattr(b, name)
        if not np.isfinite(arr).all():
            who = scene.actors.ids[int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])]
            return f"non-finite {name} of {who}"
    speed = np.hypot(b.vel[:, 0], b.vel[:, 1])
    if (speed > C.EXPLOSION_SPEED_MPS).any():
        bad = int(np.argmax(speed))
        return f"explosion: {scene.actors.ids[bad]} at {speed[bad]:.1f} m/s"
    xmin, ymin, xmax, ymax = scene.bounds
    mgn = C.OUT_OF_BOUNDS_MARGIN_M
    x, y, z = b.pos[:, 0], b.pos[:, 1], b.pos[:, 2]
    out = b.present & ((x < xmin - mgn) | (x > xmax + mgn) | (y < ymin - mgn) | (y > ymax + mgn) | (np.abs(z) > mgn))
    if out.any():
        bad = int(np.flatnonzero(out)[0])
        return f"out of bounds: {scene.actors.ids[bad]} at ({x[bad]:.1f}, {y[bad]:.1f}, {z[bad]:.1f})"
    return None


class Engine:
    """A rollout in progress. ``Engine(scene)`` starts at tick 0; :meth:`restore` resumes a checkpoint."""

    def __init__(self, scene: Scene, state: SimState | None = None, *, events: list[Event] | None = None,
                 history: dict[str, np.ndarray] | None = None) -> None:
        self.scene = scene
        self.backend: Backend = make_backend(scene.backend, scene)
        self.recorder = Recorder(scene, self.backend.extras, fused=self.backend.name == "kinematic-v1")
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
        reason = None if out.ok & (kernels.OK_BOUNDS if bounds else kernels.OK_STATE) else _divergence(scene, new, bounds)
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
        """What :meth:`_quiet_ticks` passes every time, or None when this rollout's ticks all stay in Python: a
        backend other than kinematic-v1 (or one whose step is not kinematic-v1's own: a subclass, a test's injected
        fault), a sloped ground (the tilt is numpy), background traffic (its lane
        changes, turns, respawns and walkers are Python every tick), or no numpy ``arctan2`` loop to call."""
        scene = self.scene
        a = scene.actors
        n = len(a)
        if (self.backend.name != "kinematic-v1" or type(self.backend).advance is not _KINEMATIC_ADVANCE or n == 0
                or scene.ground.sloped or a.background.any() or not self.recorder._fused
                or set(self.recorder._extra_names) != set(_QUIET_EXTRAS)):
            return None
        fp, sin_fp, cos_fp = _numpy_loops()
        if not (fp and sin_fp and cos_fp):
            return None
        x_src = np.array([_QUIET_EXTRAS.index(name) for name in self.recorder._extra_names], dtype=np.int64)
        signals = np.array(scene.signals.states)
        e = a.ego
        e0, e1 = scene.static_edges
        static = (np.array(a.lane_bound, dtype=bool), np.array(a.avoid, dtype=bool), np.array(a.yield_, dtype=bool),
                  np.array(a.is_ped, dtype=bool), np.array(a.decel_comfort, dtype=np.float64),
                  np.array(occluder_mask(scene), dtype=bool), np.ascontiguousarray(e0, dtype=np.float64),
                  np.ascontiguousarray(e1, dtype=np.float64))
        return (fp, sin_fp, cos_fp, x_src, signals, -1 if e is None else int(e), np.zeros(0, dtype=np.int64),
                np.array(a.is_vehicle, dtype=bool), static)

    def _conflict_arrays(self, route: RouteTable) -> tuple[np.ndarray, ...]:
        """``route.conflicts`` flattened for :func:`simready.sim.core.tick_kernels.yield_stops` (kept per route):
        per actor its first row, then u of each conflict point, the other lane's index, s on it, u of the wait."""
        hit = self._conflicts
        if hit is None or hit[0] is not route:
            rows = [(u_x, self.scene.lane_index[other], s_other, u_wait) for conf in route.conflicts
                    for u_x, other, s_other, u_wait in conf]
            first = np.zeros(len(route.conflicts) + 1, dtype=np.int64)
            first[1:] = np.cumsum([len(conf) for conf in route.conflicts])
            hit = self._conflicts = (route, (first, np.array([r[0] for r in rows], dtype=np.float64),
                                             np.array([r[1] for r in rows], dtype=np.int64),
                                             np.array([r[2] for r in rows], dtype=np.float64),
                                             np.array([r[3] for r in rows], dtype=np.float64)))
        return hit[1]

    def _quiet_ticks(self, end: int) -> int:
        """Step the ticks from the current one that need no Python (:mod:`simready.sim.core.tick_kernels`) in one
        compiled call, to ``end`` at most; the number of ticks stepped (0: the current tick needs Python).

        The state, events and records afterwards are those :meth:`step` gives tick by tick. A quiet tick has no
        trigger due (:func:`simready.sim.behavior.interactions.quiet_until`), no goal reading the state (gap,
        match), no lateral manoeuvre completing, no contact, nobody carried, no background traffic; it perceives
        (leaders, pedestrians in corridors, junction waits) compiled too; moving profiles and lateral offsets enter as
        references evaluated here tick by tick (:data:`_MOVING_TICKS` at most). The compiled loop stops before a
        tick whose pedestrian memory would change, whose pedestrian may see a hazard, or whose step has a contact,
        leaves the map or fails a check: :meth:`step` then steps it.
        """
        s = self.state
        scene = self.scene
        t0 = s.tick
        every = self._perception_every
        assert self._quiet is not None  # run() asks only when set up
        fp, sin_fp, cos_fp, x_src, signals, e, no_rows, is_vehicle, static = self._quiet
        sc = s.control
        route = self.route
        if s.termination is not None:
            return 0
        a = scene.actors
        n = len(a)
        if len(sc.leaders) != n or sc.struck or s.world.contacts or self._respawn.active or len(self._turner.rows):
            return 0
        limit = end
        warmup = scene.warmup_ticks
        # Triggers are asked from the warm-up's end on; none is due before quiet_until, or while no guard's actor is
        # near its region.
        quiet = interactions.quiet_until(scene, s)
        guards: tuple[interactions.Guard, ...] = ()
        if quiet < 0:
            bounded = interactions.quiet_guards(scene, s)
            if bounded is not None:
                quiet, guards = bounded
        limit = min(limit, max(warmup, quiet))
        dt = scene.dt
        goals = sc.longitudinal
        moving: list[tuple[int, Any]] = []
        for i in set_indices(goals):
            goal = goals[i]
            assert goal is not None  # set_indices: the actors with a goal
            if isinstance(goal, GapGoal) or goal.kind == "match":
                return 0
            if goal.kind not in ("brake", "stop", "coast") and _constant_until(goal.profile, t0, dt) < limit:
                moving.append((i, goal.profile))
                limit = min(limit, t0 + _MOVING_TICKS)
        if limit < t0 + 2:
            return 0
        c = s.coords
        # Each tick's lateral references (they read the offsets of actors without a goal, which stay), to the first
        # tick whose manoeuvre completes (its step runs in Python).
        refs_lat = [lateral.lateral_refs(sc.lateral, c.d, t0, dt)]
        if refs_lat[0][0] is not c.d or refs_lat[0][3]:
            # A manoeuvre moving (or done now): the references tick by tick, over a while at most.
            limit = min(limit, t0 + _MOVING_TICKS)
            for t in range(t0 + 1, limit):
                refs_lat.append(lateral.lateral_refs(sc.lateral, c.d, t, dt))
            for t in range(t0, limit):
                if refs_lat[t - t0][3]:
                    limit = t
                    break
        if limit < t0 + 2:
            return 0
        pa = a.py
        peds = sc.peds
        rows, ped_state, kerb, kerb_pt = [], [], [], []
        paths = route.paths.paths
        for i in pa.peds:
            mem = peds[i]
            if mem is None or mem.mode == "committed" or not math.isfinite(mem.kerb_u):
                rows.append(i)
                ped_state.append((0, 0, -1, -1, 0, 0, 0))
                kerb.append(math.inf)
                kerb_pt.append((math.nan, math.nan))
            elif mem.mode in ("walk", "wait"):
                rows.append(i)
                ped_state.append((1, int(mem.seen), -1 if mem.hazard_since is None else mem.hazard_since,
                                  -1 if mem.clear_since is None else mem.clear_since, int(mem.mode == "wait"),
                                  int(round(mem.reaction_delay_s / dt)),
                                  int(mem.stop_draw < float(a.stop_tendency[i]))))
                kerb.append(mem.kerb_u)
                kerb_pt.append(paths[i].point_at(mem.kerb_u))
            else:
                return 0
        table = route.paths
        view = TickView(scene, s, table)
        refs = route.refs0.copy()
        planner_mod._goal_references(view, sc, refs)
        refs_t = np.empty((limit - t0, *refs.shape))
        refs_t[:] = refs
        for i, profile in moving:
            for t in range(t0 + 1, limit):
                refs_t[t - t0, pk.V_REF, i], refs_t[t - t0, pk.A_FF, i], _ = profile.at(t, dt)
        lat = np.empty((limit - t0, 3, n))
        if len(refs_lat) == 1:
            lat[:, 0], lat[:, 1], lat[:, 2] = refs_lat[0][:3]
        else:
            for k in range(limit - t0):
                lat[k, 0], lat[k, 1], lat[k, 2] = refs_lat[k][:3]
        (cum, base, last, pts, dirs, psi, dpsi, heights, g_x0, g_y0, g_inv, reach2, hl, hw, w_rows, w_first,
         w_z_start, w_step_u, w_step_dh, inv_ramp, _sloped, seg_lane, lane_u0, limits) = kinematics._step_args(scene,
                                                                                                               table)
        friction = s.world.friction
        fc = np.empty(tick_kernels.N_FC)
        fc[:] = (dt, friction * C.GRAVITY_MPS2, C.STANDSTILL_MPS, C.SPEED_TRACK_GAIN, 2.0 * C.AMBER_DECEL_LIMIT,
                 C.STOP_LINE_STANDOFF_M, C.PEDESTRIAN_RADIUS_M, g_x0, g_y0, g_inv, inv_ramp, *limits, self.ego_mass_kg,
                 friction, pa.decel_max[e] if e >= 0 else 0.0, pa.accel_max[e] if e >= 0 else 0.0,
                 C.ROLLING_RESISTANCE * C.GRAVITY_MPS2, C.AIR_DENSITY_KG_M3, C.DRAG_AREA_M2, C.GRAVITY_MPS2,
                 C.OBSTACLE_LOOKAHEAD_M, C.CORRIDOR_MARGIN_M, C.EYE_FORWARD_FRACTION, C.KERB_LOOKAHEAD_M,
                 DIVERGE_WINDOW_M, junctions.CONFLICT_LOOKAHEAD_M, junctions.CLEARANCE_M, C.JUNCTION_GAP_S,
                 C.PED_GAP_ACCEPT_S)
        rec = self.recorder
        ic = np.array([t0, limit, warmup, every, rec.rows, e, 1, a.py.lane_bound_count >= 2, sin_fp, cos_fp],
                      dtype=np.int64)
        b = s.bodies
        big0 = np.concatenate((b.pos.ravel(), b.quat.ravel(), b.vel.ravel(), b.omega.ravel()))
        lane0, s0 = view.lanes
        standstill = np.array(sc.standstill, dtype=np.int64)
        buf = np.array(sc.actuation if e >= 0 else (), dtype=np.float64)
        yields = sc.yields
        yield_i = np.array([i for i, _ in yields], dtype=np.int64) if yields else no_rows
        yield_u = np.array([u for _, u in yields], dtype=np.float64) if yields else np.zeros(0)
        (t, _why, row, u, v, acc, yaw, big, slip, throttle, brake, lane, s_lane, perceived, leaders, percepts, wait_i,
         wait_u) = tick_kernels.run_ticks(
            ic, fc, c.u.copy(), c.v.copy(), c.yaw.copy(), big0, b.present.copy(), lat, lane0.copy(), s0.copy(),
            standstill, buf, route.consts, refs_t, yield_i,
            yield_u, np.array(rows, dtype=np.int64), np.array(ped_state, dtype=np.int64).reshape(-1, 7),
            np.array(kerb, dtype=np.float64), table.lengths, leader_u0(table, scene),
            planner_mod._held(route, "leaders", sc.leaders, 0), planner_mod._held(route, "percepts", sc.percepts, 2),
            route.stop_u, route.stop_col, signals, cum, base, last, pts, dirs, psi, dpsi, heights, seg_lane, lane_u0,
            reach2, hl, hw, w_rows, w_first, w_z_start, w_step_u, w_step_dh, table.leaves, fp,
            rec._walk(c.path_keys), rec.pos, rec.quat, rec.vel, rec.omega, rec.present, rec.lane, rec.s, rec._x_all,
            x_src, *static, *self._conflict_arrays(route), np.array([g[0] for g in guards], dtype=np.int64),
            np.array([g[1:] for g in guards], dtype=np.float64).reshape(-1, 3), is_vehicle,
            np.array(kerb_pt, dtype=np.float64).reshape(-1, 2))
        k = int(t) - t0
        if k == 0:
            return 0
        # The state step() leaves after tick t − 1 (the kinematic backend's coords, extras and bodies).
        table.remember_lanes(ro(u), lane, s_lane)
        d_ref, d_rate, _, _ = refs_lat[k - 1 if len(refs_lat) > 1 else 0]
        coords = with_changes(c, u=u, d=d_ref if not d_ref.flags.writeable else frozen(d_ref),
                              d_rate=d_rate if not d_rate.flags.writeable else frozen(d_rate), v=ro(v), a=ro(acc),
                              yaw=ro(yaw))
        extras = {"accel_mps2": acc, "throttle": throttle, "brake": brake,
                  "steer_rad": self.backend._zeros(n), "slip_rad": slip}  # type: ignore[attr-defined]
        steer = 0.0 if e >= 0 else sc.steer_rad
        control = with_changes(sc, actuation=tuple(buf.tolist()) if e >= 0 else sc.actuation, peds=tuple(peds),
                               standstill=tuple(standstill.tolist()), steer_rad=steer)
        if perceived:
            control = with_changes(control, leaders=tuple(leaders.tolist()),
                                   percepts=tuple(map(tuple, percepts.tolist())),
                                   yields=tuple(zip(wait_i.tolist(), wait_u.tolist())))
        self.state = s.evolve(tick=int(t), bodies=kinematics._bodies_from(big, n, b.present), coords=coords,
                              extras=extras, control=control)
        self.ticks_simulated += k
        rec.rows = int(row)
        return k


#: kinematic-v1's extras, in the order :func:`simready.sim.core.tick_kernels.run_ticks` numbers them.
_QUIET_EXTRAS = ("accel_mps2", "throttle", "brake", "steer_rad", "slip_rad")
#: At most this many ticks in one compiled call while a goal's profile or a lateral manoeuvre moves (their
#: references are evaluated in Python beforehand, tick by tick).
_MOVING_TICKS = 64
_LOOPS: list[tuple[int, int, int]] = []
#: The step the compiled ticks repeat (:meth:`simready.sim.backends.kinematic.KinematicBackend.advance`).
_KINEMATIC_ADVANCE = KinematicBackend.advance


def _numpy_loops() -> tuple[int, int, int]:
    """numpy's float64 ``arctan2``, ``sin`` and ``cos`` loops for the compiled ticks, found once per process (0:
    none usable)."""
    if not _LOOPS:
        _LOOPS.append((tick_kernels.numpy_loop(np.arctan2), tick_kernels.numpy_loop(np.sin),
                       tick_kernels.numpy_loop(np.cos)))
    return _LOOPS[0]


def _constant_until(profile: Any, tick: int, dt: float) -> int:
    """The first tick from ``tick`` on at which ``profile``'s value may differ from its value at ``tick``
    (``tick`` itself: it is moving now). Before its start a profile holds its start value, and past its end
    (and its carry-over's) its end value (:meth:`simready.sim.core.profiles.Profile.at`)."""
    if tick < profile.start_tick:
        return int(profile.start_tick)
    if profile.shape == "step" or (profile.duration_s <= 0.0 and not profile.carries):
        return interactions.NEVER
    elapsed_s = (tick - profile.start_tick) * dt
    if (profile.duration_s <= 0.0 or elapsed_s / profile.duration_s >= 1.0) and (
            not profile.carries or elapsed_s / profile.carry_s >= 1.0):
        return interactions.NEVER
    return tick
