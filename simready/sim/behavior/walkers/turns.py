"""Background pedestrians keep walking: at their route's end a new route of the walkable graph, drawn from a seed of
their id and their count of turns.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

from simready.scenario.traffic_walkers import ped_route, road_of
from simready.sim.core.reference_paths import ReferencePath, split_walk_key
from simready.sim.core.scene import Scene, expand_walk
from simready.sim.core.state import PedMemory, SimState, frozen, with_changes


#: A background pedestrian this near its route's end (m, along its path) turns onto a new route.
TURN_AT_END_M = 1.5
#: A new route after a turn is at least this long (m; or to a dead end).
TURN_ROUTE_M = 60.0
#: A new route's first nodes are skipped while the walk from the walker's place would turn back at them by more than
#: this angle's cosine (a fold: a dead end's node behind it, :func:`_unfold`).
FOLD_COS = -0.5


def turn_seed(sample_id: str, actor_id: str, turn: int) -> int:
    """The seed of pedestrian ``actor_id``'s ``turn``-th new route: a function of its id and the count of its turns
    (not a shared stream: no other actor's draws move it, and the brake and coast branches share it)."""
    digest = hashlib.sha256(f"{sample_id}/walk_turn/{actor_id}/{turn}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class Turner:
    """Background pedestrians keep walking (SPEC §20): one that comes within :data:`TURN_AT_END_M` of its route's
    end turns onto a new route of the walkable graph from the route's last node, on from there as the spawner's
    (:func:`simready.scenario.traffic_walkers.ped_route`: not back the way it came unless at a dead end, at most
    one crossing, walked to its far side, at least :data:`TURN_ROUTE_M` long), drawn from a generator seeded by
    :func:`turn_seed`. It keeps its place, speed, lateral offset and walking parameters (turning back, the route's
    first nodes behind it, :func:`_unfold`, it walks back from where it is, its offset taken from the line back: the
    same place, on that line's other side, whence it drifts home at :data:`RETURN_RATE_MPS`); its kerb memory starts
    afresh on the new path (``walk``, no hazard, the new path's kerb) and ``turns`` counts up, so a checkpoint
    holds all the turn needs (restore ≡ continue). Scenario pedestrians keep their routes and stop at the end."""

    def __init__(self, scene: Scene) -> None:
        a = scene.actors
        self.rows = np.array([i for i in range(len(a)) if a.background[i] and a.is_ped[i]], dtype=np.int64)
        self._road: object = None
        self._road_done = False

    def _road_shape(self, scene: Scene) -> object:
        if not self._road_done:
            self._road, self._road_done = road_of(scene.template), True
        return self._road

    def step(self, scene: Scene, state: SimState, paths: Sequence[ReferencePath]) -> SimState:
        """``state`` with the background pedestrians at their route's end on new routes (the same object when
        none is)."""
        rows = self.rows
        present = state.bodies.present
        u = state.coords.u
        keys = state.coords.path_keys
        due = [i for i in rows.tolist() if present[i] and keys[i][0] == "walk"
               and paths[i].length_m - float(u[i]) <= TURN_AT_END_M]
        if not due:
            return state
        graph = scene.template.walk_graph
        new_keys, u_new = list(keys), np.array(u)
        d_old = state.coords.d
        d_new = np.array(d_old)
        peds = list(state.control.peds)
        changed = False
        for i in due:
            mem = peds[i]
            assert mem is not None
            path = paths[i]
            _, _, nodes = split_walk_key(keys[i])
            nodes = _expanded(scene, nodes)
            last = nodes[-1]
            came = nodes[-2] if len(nodes) > 1 else last
            rng = np.random.default_rng(turn_seed(scene.manifest.sample_id, scene.actors.ids[i], mem.turns))
            route, _ = ped_route(rng, graph, self._road_shape(scene), last, came, TURN_ROUTE_M, 0.0)
            if len(set(route)) < 2:
                continue  # an isolated node: it stays
            x, y = path.point_at(float(u[i]))
            nodes_new, folded = _unfold(scene, (x, y), tuple(route))
            new = scene.walk_path((x, y), nodes_new)
            new_keys[i] = new.key
            u_new[i] = 0.0
            if folded:
                # It stays where it is: its offset from the new line is where its body is, across a line that now
                # runs the other way (it drifts back to its own side at RETURN_RATE_MPS, yield_to_scenario).
                wx, wy = path.point_at(float(u[i]), float(d_old[i]))
                yaw0 = float(new.xy_yaw(0.0)[2])
                d_new[i] = math.cos(yaw0) * (wy - y) - math.sin(yaw0) * (wx - x)
            peds[i] = PedMemory("walk", None, None, scene.kerb_u(new), mem.stop_draw, mem.reaction_delay_s, False,
                                mem.turns + 1)
            changed = True
        if not changed:
            return state
        if (d_new != d_old).any():
            coords = with_changes(state.coords, path_keys=tuple(new_keys), u=frozen(u_new), d=frozen(d_new))
        else:
            coords = with_changes(state.coords, path_keys=tuple(new_keys), u=frozen(u_new))
        control = with_changes(state.control, peds=tuple(peds))
        return state.evolve(coords=coords, control=control)


def _expanded(scene: Scene, nodes: tuple[str, ...]) -> tuple[str, ...]:
    return expand_walk(scene.template, nodes)


def _unfold(scene: Scene, start: tuple[float, float], route: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """``route`` without the leading nodes at which a walk from ``start`` would fold back (turn by more than
    :data:`FOLD_COS`'s angle), and whether any was dropped: a walker turning back at a dead end walks back from
    where it is rather than on to the dead end's node first and back over its own steps (a stub on which the
    offset it keeps right of its line lay on the other side of the line back)."""
    nodes = _expanded(scene, route)
    xy = scene.template.walk_graph.nodes
    k = 0
    here = start
    while k < len(nodes) - 1:
        p0, p1 = xy[nodes[k]], xy[nodes[k + 1]]
        ax, ay = p0[0] - here[0], p0[1] - here[1]
        bx, by = p1[0] - p0[0], p1[1] - p0[1]
        na, nb = math.hypot(ax, ay), math.hypot(bx, by)
        if na < 1e-3 or nb < 1e-3 or (ax * bx + ay * by) / (na * nb) >= FOLD_COS:
            break
        k += 1
    return (tuple(nodes[k:]), True) if k else (route, False)
