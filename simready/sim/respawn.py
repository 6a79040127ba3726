"""Keeping the background density (SPEC §20): reserve vehicles spawned at the map's entries.

A background vehicle that leaves the map despawns (:meth:`simready.sim.engine.Engine._leave_map`).
The spawner (:func:`simready.scenario.traffic.spawn_reserves`) gives a sample
*reserve* vehicles besides (tags ``background`` and ``reserve``, absent at
start, each at the start of a map entry lane with its asset, parameters and
route drawn from the ``traffic`` stream and written in the manifest). Every
:data:`RESPAWN_PERIOD_S` from the warm-up on, while fewer background vehicles
are present than at start, the next unspawned reserves in id order whose
entry is clear spawn (event ``spawn``, reason ``density``): clear when every
present actor's footprint is at least :data:`SPAWN_GAP_M` (bumper to bumper,
centre distance less both half lengths) away; the spawn speed is the
manifest's, or the IDM equilibrium speed for the gap to the nearest present
actor ahead if less.

Nothing is drawn while rolling out: the decision is a function of the state,
and the set of reserves already spawned is part of it
(:attr:`simready.sim.state.WorldState.spawned`), so a checkpoint holds all
the respawn needs (restore ≡ continue) and matched branches share every
background vehicle until the action.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from simready.sim import interactions
from simready.sim.scene import Scene
from simready.sim.state import SimState, frozen, with_changes

#: Seconds between two respawn decisions (the lane-change cadence).
RESPAWN_PERIOD_S = 0.5
#: A reserve spawns only where every present actor is at least this far, bumper to bumper (m).
SPAWN_GAP_M = 8.0
RESERVE_TAG = "reserve"


class Respawner:
    """The reserves of a scene and the density they keep; :meth:`step` spawns what is missing."""

    def __init__(self, scene: Scene) -> None:
        a = scene.actors
        by_id = {x.id: x for x in scene.manifest.actors}
        bg = [i for i in range(len(a)) if a.background[i]]
        self.background = np.array(bg, dtype=np.int64)
        self.reserves = [i for i in bg if RESERVE_TAG in by_id[a.ids[i]].tags and not by_id[a.ids[i]].present_at_start]
        self.target = sum(1 for i in bg if by_id[a.ids[i]].present_at_start)
        self.v0 = {i: float(by_id[a.ids[i]].initial.speed_mps) for i in self.reserves}
        self.every = max(1, round(RESPAWN_PERIOD_S / scene.dt))

    @property
    def active(self) -> bool:
        return bool(self.reserves) and self.target > 0

    def step(self, scene: Scene, state: SimState, view: Any, events: list[dict[str, Any]]) -> SimState:
        """``state`` with the reserves that keep the density spawned (the same object when none is)."""
        if state.tick % self.every:
            return state
        present = state.bodies.present
        missing = self.target - int(present[self.background].sum())
        if missing <= 0:
            return state
        done = state.world.spawned
        a = scene.actors
        pos, hl = state.bodies.pos, a.hl
        others = np.flatnonzero(present)
        chosen: list[tuple[int, float]] = []
        for i in self.reserves:
            if i in done:
                continue
            if missing <= len(chosen):
                break
            rows = np.concatenate([others, np.array([j for j, _ in chosen], dtype=np.int64)])
            dx = pos[rows, 0] - pos[i, 0]
            dy = pos[rows, 1] - pos[i, 1]
            gaps = np.hypot(dx, dy) - hl[rows] - hl[i]
            if len(rows) and float(gaps.min()) < SPAWN_GAP_M:
                continue
            yaw = float(state.coords.yaw[i])
            ahead = dx * math.cos(yaw) + dy * math.sin(yaw) > 0.0
            v = self.v0[i]
            if ahead.any():
                gap = float(gaps[ahead].min())
                v = min(v, max(0.0, (gap - float(a.s0[i])) / float(a.time_gap[i])))
            chosen.append((i, v))
        if not chosen:
            return state
        pres = np.array(present)
        v_all = np.array(state.coords.v)
        vel = np.array(state.bodies.vel)
        for i, v in chosen:
            pres[i] = True
            v_all[i] = v
            yaw = float(state.coords.yaw[i])
            vel[i] = (v * math.cos(yaw), v * math.sin(yaw), 0.0)
            events.append(interactions.event(view, "spawn", actor=a.ids[i], reason="density"))
        bodies = replace(state.bodies, present=frozen(pres, bool), vel=frozen(vel))
        coords = with_changes(state.coords, v=frozen(v_all))
        world = with_changes(state.world, spawned=done | frozenset(i for i, _ in chosen))
        return state.evolve(bodies=bodies, coords=coords, world=world)
