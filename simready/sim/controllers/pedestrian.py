"""Pedestrian navigation on the walkable graph (SPEC §8): walk the route, decide at the kerb.

A pedestrian walks its walk path at its desired speed (cruise, or the
speed a verb commands) and stops at the route's end. Approaching the kerb
— the first point where its path enters the roadway (drivable or
intersection regions) — it looks for a *hazard*: a visible moving vehicle
whose constant-speed arrival at the crossing point is within
:data:`~simready.sim.core.constants.PED_GAP_ACCEPT_S`. A pedestrian whose
``stop_draw`` (one uniform draw from its ``disturbance/<id>`` stream) is
below its ``stop_tendency`` responds to a hazard that persists for its
reaction delay by stopping at the kerb (mode ``wait``); it walks on once
the hazard has been gone for the reaction delay. Past the kerb it is
``committed`` and no longer stops on its own (a ``speed stop`` verb still
stops it).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from simready.sim.core import constants as C
from simready.sim.core.state import PedMemory, with_changes


def hazard(view, i: int, point: tuple[float, float]) -> bool:  # type: ignore[no-untyped-def]
    """A visible moving vehicle reaches ``point`` within the accepted gap (constant speed, along its heading)."""
    a = view.scene.actors
    cands = np.flatnonzero(a.is_vehicle & view.present & (view.v > 1.0))
    if len(cands) == 0:
        return False
    rel = np.asarray(point)[None, :] - view.xy[cands]
    c, s = np.cos(view.yaw[cands]), np.sin(view.yaw[cands])
    along = rel[:, 0] * c + rel[:, 1] * s - a.hl[cands]
    lateral = np.abs(-rel[:, 0] * s + rel[:, 1] * c)
    arrival = along / view.v[cands]
    close = (along > -a.hl[cands]) & (arrival < C.PED_GAP_ACCEPT_S) & (lateral < a.hw[cands] + 4.0)
    if not close.any():
        return False
    seen = view.visible(np.full(int(close.sum()), i), cands[close])
    return bool(seen.any())


def update(view, i: int, mem: PedMemory, path, perceive: bool) -> tuple[PedMemory, float]:  # type: ignore[no-untyped-def]
    """One tick of the kerb decision: the new memory and the stopping gap it imposes (inf: none).

    The hazard is re-evaluated on perception ticks (``perceive``) and held in between.
    """
    if mem.mode == "committed" or not math.isfinite(mem.kerb_u):
        return mem, math.inf
    u = float(view.u[i])
    if u > mem.kerb_u + 0.3:
        return replace(mem, mode="committed", hazard_since=None, clear_since=None, seen=False), math.inf
    tick = view.tick
    delay_ticks = int(round(mem.reaction_delay_s / view.scene.dt))
    if perceive:
        near = mem.kerb_u - u < C.KERB_LOOKAHEAD_M + 0.5 * max(view.v[i], 0.0) ** 2 / 2.0
        stops = mem.stop_draw < float(view.scene.actors.stop_tendency[i])
        seen = bool(near and stops and hazard(view, i, path.point_at(mem.kerb_u)))
    else:
        seen = mem.seen
    hazard_since = mem.hazard_since if seen and mem.hazard_since is not None else (tick if seen else None)
    clear_since = None if seen else (mem.clear_since if mem.clear_since is not None else tick)
    mode = mem.mode
    if mode == "walk" and hazard_since is not None and tick - hazard_since >= delay_ticks:
        mode = "wait"
    elif mode == "wait" and clear_since is not None and tick - clear_since >= delay_ticks:
        mode = "walk"
    if (mode, hazard_since, clear_since, seen) == (mem.mode, mem.hazard_since, mem.clear_since, mem.seen):
        new = mem  # unchanged: no copy (most ticks)
    else:
        new = with_changes(mem, mode=mode, hazard_since=hazard_since, clear_since=clear_since, seen=seen)
    gap = mem.kerb_u - u - 0.2 if mode == "wait" else math.inf
    return new, gap
