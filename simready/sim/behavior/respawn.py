"""Keeping each background kind's density (SPEC §20): reserve vehicles spawned at the map's entries, vehicles out of
range despawned, cyclists re-entering at kerbside entries.

A background vehicle that leaves the map despawns (:meth:`simready.sim.engine.Engine._leave_map`).
The spawner (:func:`simready.scenario.traffic.spawn_reserves`) gives a sample
*reserve* vehicles besides (tags ``background`` and ``reserve``, absent at
start, each at the start of a map entry lane with its asset, parameters and
route drawn from the ``traffic`` stream and written in the manifest). Every
:data:`RESPAWN_PERIOD_S` from the warm-up on (ticks that are multiples of it):

1. **despawn out of range** (only when the manifest records
   ``traffic.despawn_range_m`` = R): a present background vehicle (kind
   ``vehicle``; pedestrians and cyclists stay) despawns (event ``despawn``,
   reason ``out of range``) when its centre is farther than R from the
   centre of every present actor that is not background (the ego and the
   scenario's own actors; none present: nothing despawns) and it recedes
   from the nearest of them (relative position · relative velocity > 0, so
   traffic coming in from a far entry stays), it is not the lane leader of
   one of them, and it touches nothing. Its trace ends as at the map's
   boundary: absent from the next tick on.
2. **spawn to keep the density**, per kind: while fewer background vehicles
   are present than at start, candidates spawn while some are missing (event
   ``spawn``): first the never-spawned reserves in id order, each at its
   own entry (reason ``density``); then, when the manifest records
   ``traffic.recycle`` true, the background vehicles that were present and
   are absent again (left the map or the range at an earlier decision;
   reserves that never spawned are not among them) in id order (reason
   ``recycled``). The k-th recycled spawn of the rollout (k from
   :attr:`simready.sim.core.state.WorldState.recycled`) takes the entry of
   reserve k mod (number of reserves) in id order, or of the next one in
   that cycle whose entry is clear: its tick-0 pose and path (route), the
   vehicle keeping its own asset, IDM parameters and cruise speed, its
   controller memory cleared, under its own id — a new life of the same
   actor for the truth's tracks (``<id>#<life>``). A candidate spawns only
   where its entry is clear (every present actor's footprint at
   least :data:`SPAWN_GAP_M` away, bumper to bumper: centre distance less
   both half lengths); the spawn speed is the entry reserve's manifest
   speed (at most the vehicle's cruise speed), or the IDM
   equilibrium speed for the gap to the nearest present actor ahead if
   less; with a despawn range, a candidate that rule 1 would despawn at
   once at that speed (out of range and receding) does not spawn.
3. **cyclists re-enter** (only with ``traffic.recycle``): while fewer
   background cyclists are present than at start, the absent ones in id order
   re-enter (reason ``recycled``) at the next clear *kerbside entry* from the
   same counter k: the entries of the reserves whose lane is a kerbside lane
   (:func:`simready.scenario.traffic_walkers.kerbside_lanes_of`), in id order,
   at the cyclist's own kerb offset there (:data:`CYCLIST_KERB_GAP_M` from the
   lane's right edge), or, when no reserve enters at a kerbside lane, the
   kerb cyclists' tick-0 places; a cyclist that started in a bike lane
   re-enters at the bike-lane cyclists' tick-0 places; each keeps its id, asset,
   IDM parameters and cruise speed. A cyclist is replaced by a cyclist only, a
   vehicle by a vehicle only. Pedestrians never leave (they turn at their
   route's end: :class:`simready.sim.behavior.walkers.Turner`).

Nothing is drawn while rolling out: every decision is a function of the
state, and the set of reserves spawned at least once is part of it
(:attr:`simready.sim.core.state.WorldState.spawned`; with the presence flags it
tells which are recyclable), so a checkpoint holds all the respawn needs
(restore ≡ continue) and matched branches share every background vehicle
until the action.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from simready.scenario.traffic_spec import DESPAWN_RANGE_KEY, RECYCLE_KEY
from simready.scenario.traffic_walkers import CYCLIST_KERB_GAP_M, kerbside_lanes_of
from simready.sim.core import constants as C
from simready.world.lane_graph import lane_network
from simready.sim.behavior import interactions
from simready.sim.core.scene import Scene
from simready.sim.core.sight import TickView
from simready.sim.core.state import SimState, frozen, with_changes

#: Seconds between two respawn decisions (the lane-change cadence).
RESPAWN_PERIOD_S = 0.5
#: A reserve spawns only where every present actor is at least this far, bumper to bumper (m).
SPAWN_GAP_M = 8.0
RESERVE_TAG = "reserve"


class Respawner:
    """The reserves of a scene and the density they keep; :meth:`step` despawns and spawns.

    ``start``: the rollout's tick-0 state (called once, when a reserve is recycled first).
    """

    def __init__(self, scene: Scene, start: Callable[[], SimState] | None = None) -> None:
        a = scene.actors
        by_id = {x.id: x for x in scene.manifest.actors}
        bg = [i for i in range(len(a)) if a.background[i]]
        self.background = np.array(bg, dtype=np.int64)
        self.reserves = [i for i in bg if RESERVE_TAG in by_id[a.ids[i]].tags and not by_id[a.ids[i]].present_at_start]
        self._reserve_set = frozenset(self.reserves)
        #: Per kind, the background actors present at start: the density kept (a kind is replaced by its kind).
        self.target = sum(1 for i in bg if a.kinds[i] == "vehicle" and by_id[a.ids[i]].present_at_start)
        self.cyclists = np.array([i for i in bg if a.kinds[i] == "cyclist"], dtype=np.int64)
        self.target_cyclists = sum(1 for i in self.cyclists.tolist() if by_id[a.ids[i]].present_at_start)
        # Where a cyclist re-enters (per cyclist, in order): one that started at the kerb of a driving lane, the reserve
        # entries on a kerbside lane (at its kerb offset there), in id order, or, with none, the tick-0 places of
        # such cyclists; one that started in a bike lane, the tick-0 places of the bike-lane cyclists.
        graph = lane_network(scene.template).graph
        kerbside = set(kerbside_lanes_of(scene.template)) if len(self.cyclists) else set()
        lane_of: dict[int, str | None] = {}
        for i in self.cyclists.tolist() + self.reserves:
            ref = by_id[a.ids[i]].initial.lane_ref
            lane_of[i] = None if ref is None else ref.lane
        in_bike_lane = {i for i in self.cyclists.tolist()
                        if (lane := lane_of[i]) is not None and graph.lanes[lane].kind == "biking"}
        kerb_entries: list[tuple[int, str | None]] = [
            (i, lane) for i in self.reserves if (lane := lane_of[i]) is not None and lane in kerbside]
        kerb_entries = kerb_entries or [(i, None) for i in self.cyclists.tolist() if i not in in_bike_lane]
        bike_entries: list[tuple[int, str | None]] = [(i, None) for i in self.cyclists.tolist() if i in in_bike_lane]
        self.cyclist_entries = {i: bike_entries if i in in_bike_lane else kerb_entries for i in self.cyclists.tolist()}
        self._lane_width = {lane: float(graph.lanes[lane].width_m) for _, lane in kerb_entries if lane is not None}
        self.v0 = {i: float(by_id[a.ids[i]].initial.speed_mps) for i in self.reserves}
        self.every = max(1, round(RESPAWN_PERIOD_S / scene.dt))
        realized = scene.manifest.realized
        r = realized.get(DESPAWN_RANGE_KEY)
        self.range_m: float | None = None if r is None else float(r)  # type: ignore[arg-type]
        self.recycle = realized.get(RECYCLE_KEY) is True
        #: Who may despawn out of range (background vehicles) and whom the range is measured from (the rest).
        self.despawnable = np.array([i for i in bg if a.kinds[i] == "vehicle"], dtype=np.int64)
        self.watchers = np.array([i for i in range(len(a)) if not a.background[i]], dtype=np.int64)
        self._start_fn = start
        self._start: SimState | None = None

    @property
    def active(self) -> bool:
        return ((bool(self.reserves) and self.target > 0) or (self.range_m is not None and len(self.despawnable) > 0)
                or (self.recycle and self.target_cyclists > 0))

    def _start_state(self) -> SimState:
        if self._start is None:
            assert self._start_fn is not None, "recycling needs the rollout's start state"
            self._start = self._start_fn()
        return self._start

    def step(self, scene: Scene, state: SimState, view: TickView, events: list[dict[str, Any]]) -> SimState:
        """``state`` with the out-of-range vehicles despawned and the reserves that keep the density spawned
        (the same object when nothing changes)."""
        if state.tick % self.every:
            return state
        gone: list[int] = []
        if self.range_m is not None:
            gone = self._out_of_range(state, view)
            if gone:
                pres = np.array(state.bodies.present)
                pres[gone] = False
                for i in gone:
                    events.append(interactions.event(view, "despawn", actor=scene.actors.ids[i], reason="out of range"))
                state = state.evolve(bodies=replace(state.bodies, present=frozen(pres, bool)))
        return self._spawn(scene, state, view, events, set(gone))

    def _watchers(self, state: SimState) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities (world xy) of the present scenario actors."""
        w = self.watchers[state.bodies.present[self.watchers]] if len(self.watchers) else self.watchers
        return state.bodies.pos[w, :2], state.bodies.vel[w, :2]

    def _leaving_range(self, xy: np.ndarray, vel: np.ndarray, w_xy: np.ndarray, w_vel: np.ndarray) -> np.ndarray:
        """(M,) bool: positions ``xy`` (M, 2) moving at ``vel`` that are out of range and receding from the
        nearest scenario actor (the first of equals)."""
        dx = xy[:, 0][:, None] - w_xy[None, :, 0]
        dy = xy[:, 1][:, None] - w_xy[None, :, 1]
        d = np.hypot(dx, dy)
        k = d.argmin(axis=1)
        m = np.arange(len(xy))
        opening = dx[m, k] * (vel[:, 0] - w_vel[k, 0]) + dy[m, k] * (vel[:, 1] - w_vel[k, 1])
        out: np.ndarray = (d[m, k] > self.range_m) & (opening > 0.0)
        return out

    def _out_of_range(self, state: SimState, view: TickView) -> list[int]:
        """Background vehicles to despawn (rule 1 of the module docstring), ascending."""
        present = state.bodies.present
        rows = self.despawnable[present[self.despawnable]]
        w_xy, w_vel = self._watchers(state)
        if not len(rows) or not len(w_xy):
            return []
        b = state.bodies
        far = rows[self._leaving_range(b.pos[rows, :2], b.vel[rows, :2], w_xy, w_vel)]
        if not len(far):
            return []
        leaders = view.leaders
        led = {int(leaders[j]) for j in self.watchers.tolist() if present[j]}
        touching = {k for pair in state.world.contacts for k in pair}
        return [i for i in far.tolist() if i not in led and i not in touching]

    def _spawn(self, scene: Scene, state: SimState, view: TickView, events: list[dict[str, Any]], gone: set[int]) -> SimState:
        present = state.bodies.present
        missing = self.target - int(present[self.despawnable].sum()) if self.reserves and self.target > 0 else 0
        missing_c = (self.target_cyclists - int(present[self.cyclists].sum())) if self.recycle else 0
        if missing <= 0 and missing_c <= 0:
            return state
        done = state.world.spawned
        a = scene.actors
        fresh = [i for i in self.reserves if i not in done] if missing > 0 else []
        # Recyclable: background vehicles absent now that were present before (not the ones despawned just now).
        idle = ([i for i in self.despawnable.tolist() if not present[i] and i not in gone
                 and (i in done or i not in self._reserve_set)] if self.recycle and missing > len(fresh) else [])
        idle_c = [i for i in self.cyclists.tolist() if not present[i] and i not in gone] if missing_c > 0 else []
        if not fresh and not idle and not idle_c:
            return state
        start = self._start_state() if idle or idle_c else None
        pos = state.bodies.pos
        w_xy, w_vel = self._watchers(state) if self.range_m is not None else (None, None)
        others = np.flatnonzero(present)
        # (row, entry slot, speed, lateral offset or None): a fresh reserve enters at its own entry; a recycled row at
        # a reserve's (a cyclist at its kerb offset there).
        chosen: list[tuple[int, int, float, float | None]] = []
        recycled: list[tuple[int, int, float | None]] = []
        placed: list[np.ndarray] = []

        def try_place(i: int, slot: int, p0: np.ndarray, yaw: float, v_cap: float, d: float | None = None) -> bool:
            rows = np.concatenate([others, np.array([j for j, _, _, _ in chosen], dtype=np.int64)])
            xy = np.concatenate([pos[others, :2], np.array(placed).reshape(-1, 3)[:, :2]])
            dx = xy[:, 0] - p0[0]
            dy = xy[:, 1] - p0[1]
            gaps = np.hypot(dx, dy) - a.hl[rows] - a.hl[i]
            if len(rows) and float(gaps.min()) < SPAWN_GAP_M:
                return False
            ahead = dx * math.cos(yaw) + dy * math.sin(yaw) > 0.0
            v = min(v_cap, float(a.cruise[i]))
            if ahead.any():
                gap = float(gaps[ahead].min())
                v = min(v, max(0.0, (gap - float(a.s0[i])) / float(a.time_gap[i])))
            if w_xy is not None and w_vel is not None and len(w_xy) and self._leaving_range(
                    np.array([p0[:2]]), np.array([[v * math.cos(yaw), v * math.sin(yaw)]]), w_xy, w_vel)[0]:
                return False
            chosen.append((i, slot, v, d))
            placed.append(p0)
            return True

        for i in fresh:
            if missing <= len(chosen):
                break
            try_place(i, i, pos[i], float(state.coords.yaw[i]), self.v0[i])
        k = state.world.recycled
        n_slots = len(self.reserves)
        for i in idle:
            if missing <= len(chosen):
                break
            assert start is not None
            # The next reserve entries from slot k on, cyclically; the first that is clear takes it.
            for step in range(n_slots):
                slot = self.reserves[(k + step) % n_slots]
                if try_place(i, slot, start.bodies.pos[slot], float(start.coords.yaw[slot]), self.v0[slot]):
                    recycled.append((i, slot, None))
                    k += step + 1
                    break
            else:
                break
        placed_c = 0
        for i in idle_c:
            if missing_c <= placed_c:
                break
            assert start is not None
            # Its next entries from k on, cyclically (the same count as the vehicles'), the first clear one.
            entries = self.cyclist_entries[i]
            for step in range(len(entries)):
                slot, lane = entries[(k + step) % len(entries)]
                d, p0 = self._bike_place(a, start, i, slot, lane)
                if try_place(i, slot, p0, float(start.coords.yaw[slot]), math.inf, d):
                    recycled.append((i, slot, d))
                    placed_c += 1
                    k += step + 1
                    break
        if not chosen:
            return state
        if recycled:
            assert start is not None
            state = _reset_rows(state, start, recycled)
        again = {i for i, _, _ in recycled}
        pres = np.array(state.bodies.present)
        v_all = np.array(state.coords.v)
        vel = np.array(state.bodies.vel)
        for i, _, v, _ in chosen:
            pres[i] = True
            v_all[i] = v
            yaw = float(state.coords.yaw[i])
            vel[i] = (v * math.cos(yaw), v * math.sin(yaw), 0.0)
            reason = "recycled" if i in again else "density"
            events.append(interactions.event(view, "spawn", actor=a.ids[i], reason=reason))
        bodies = replace(state.bodies, present=frozen(pres, bool), vel=frozen(vel))
        coords = with_changes(state.coords, v=frozen(v_all))
        world = with_changes(state.world, spawned=done | frozenset(i for i, _, _, _ in chosen if i in self._reserve_set))
        if k != state.world.recycled:
            world = with_changes(world, recycled=k)
        return state.evolve(bodies=bodies, coords=coords, world=world)

    def _bike_place(self, a: Any, start: SimState, i: int, slot: int, lane: str | None) -> tuple[float, np.ndarray]:
        """Cyclist ``i``'s lateral offset and tick-0 body position at entry ``slot`` (a reserve's entry on kerbside
        driving ``lane``: at the kerb, :data:`CYCLIST_KERB_GAP_M` from its right edge; ``lane`` None: a cyclist's
        tick-0 place, at its offset)."""
        d0 = float(start.coords.d[slot])
        if lane is None:
            return d0, np.array(start.bodies.pos[slot])
        w = self._lane_width[lane]
        d = -max(w / 2 - float(a.hw[i]) - CYCLIST_KERB_GAP_M, 0.0)
        yaw = float(start.coords.yaw[slot])
        p0 = np.array(start.bodies.pos[slot], dtype=float)
        p0[0] -= math.sin(yaw) * (d - d0)
        p0[1] += math.cos(yaw) * (d - d0)
        p0[2] = float(start.bodies.pos[i][2])
        return d, p0


def _reset_rows(state: SimState, start: SimState, moves: list[tuple[int, int, float | None]]) -> SimState:
    """``state`` with each row ``i`` of ``moves`` ``(i, slot, d)`` at reserve ``slot``'s tick-0 body and path place
    (at lateral offset ``d`` on its path when not None: a cyclist at the kerb), its controller memory cleared (a
    vehicle or cyclist re-entering at that entry)."""
    rows = [i for i, _, _ in moves]
    slots = [slot for _, slot, _ in moves]
    b, b0 = state.bodies, start.bodies
    arrays = {name: np.array(getattr(b, name)) for name in ("pos", "quat", "vel", "omega")}
    for name, arr in arrays.items():
        arr[rows] = getattr(b0, name)[slots]
    c, c0 = state.coords, start.coords
    keys = list(c.path_keys)
    coords_arrays = {name: np.array(getattr(c, name)) for name in ("u", "d", "d_rate", "v", "a", "yaw")}
    for i, slot, _ in moves:
        keys[i] = c0.path_keys[slot]
    for name, arr in coords_arrays.items():
        arr[rows] = getattr(c0, name)[slots]
    for i, slot, d in moves:
        if d is not None:
            shift = d - float(c0.d[slot])
            yaw = float(c0.yaw[slot])
            coords_arrays["d"][i] = d
            arrays["pos"][i, 0] -= math.sin(yaw) * shift
            arrays["pos"][i, 1] += math.cos(yaw) * shift
            arrays["pos"][i, 2] = b0.pos[i][2]
    bodies = replace(b, **{k: frozen(v) for k, v in arrays.items()})
    coords = with_changes(c, path_keys=tuple(keys), **{k: frozen(v) for k, v in coords_arrays.items()})
    ctl = state.control
    lon, lat, still = list(ctl.longitudinal), list(ctl.lateral), list(ctl.standstill)
    for i, slot, _ in moves:
        lon[i], lat[i] = None, None
        still[i] = int(float(c0.v[slot]) < C.STANDSTILL_MPS)
    control = with_changes(ctl, longitudinal=tuple(lon), lateral=tuple(lat), standstill=tuple(still))
    return state.evolve(bodies=bodies, coords=coords, control=control)
