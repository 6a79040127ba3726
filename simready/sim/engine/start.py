"""Tick 0 of a rollout: every actor at its manifest pose and speed, nothing fired, the disturbances drawn."""

from __future__ import annotations

import numpy as np

from simready.scenario.streams import StreamSet
from simready.sim.core import constants as C
from simready.sim.behavior import interactions
from simready.sim.controllers import actuation
from simready.sim.core.kinematics import path_bodies
from simready.sim.core.reference_paths import PathTable
from simready.sim.core.scene import Scene
from simready.sim.core.state import ControlState, PathCoords, PedMemory, SimState, WorldState, frozen


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
