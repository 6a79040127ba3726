"""What the actors perceive on perception ticks: the pedestrians in (or about to enter) their corridors and their
leaders, carried over between perception ticks as arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from simready.sim.core import constants as C
from simready.sim.core import planner_kernels as pk
from simready.sim.core.sight import TickView
from simready.sim.controllers.planner.route_table import RouteTable

F = NDArray[np.float64]


def perceive_pedestrians(view: TickView) -> tuple[tuple[int, int], ...]:
    """(vehicle, pedestrian) pairs where a vehicle that avoids collisions or yields sees a pedestrian in, or
    (if it yields) about to enter, its corridor ahead."""
    a = view.scene.actors
    n = len(a)
    out = np.empty((n * n, 2), dtype=np.int64)
    e0, e1 = view.scene.static_edges
    m = pk.corridor_pedestrians(view.xy, view.vel, _corridor_yaw(view), view.v, view.present, a.lane_bound, a.avoid, a.yield_,
                                a.is_ped, a.hl, a.hw, a.decel_comfort, view.occluders, e0, e1, C.OBSTACLE_LOOKAHEAD_M,
                                C.CORRIDOR_MARGIN_M, C.PEDESTRIAN_RADIUS_M, C.EYE_FORWARD_FRACTION, out)
    return tuple(map(tuple, out[:m].tolist()))


def _corridor_yaw(view: TickView) -> F:
    """The heading each actor's pedestrian corridor runs along: its body's, but a background vehicle moving
    sideways (a lane change) looks along its path, not along a body turned towards the kerb.

    Why: a van changing lanes slowly beside a sidewalk braked for a pedestrian walking along the sidewalk (its
    turned heading put the pedestrian in its corridor); braking to a stop with the lane change's lateral profile
    still running turned it crosswise, nose onto the sidewalk, into the pedestrian (a 40/40/40 sweep on
    city_crossing, docs/traffic.md)."""
    a = view.scene.actors
    if not a.py.background_lane_bound:
        return view.yaw
    moving = a.background & a.lane_bound & (view.state.coords.d_rate != 0.0) & view.present
    if not moving.any():
        return view.yaw
    table = view.table
    dirs = table.dirs[table.locate(view.u)]
    return np.where(moving, np.arctan2(dirs[:, 1], dirs[:, 0]), view.yaw)


def perceive_leaders(view: TickView) -> tuple[int, ...]:
    """Each actor's nearest leader on its lane chain (−1: none)."""
    if view.scene.actors.py.lane_bound_count < 2:
        return (-1,) * len(view.u)
    return tuple(view.leaders.tolist())


def held(route: RouteTable, slot: str, value: tuple[object, ...], width: int) -> NDArray[np.int64]:
    """A perception tuple as an int64 array ((K,) or (K, width)), converted once while the plan carries it over."""
    hit = route.memo.get(slot)
    if hit is None or hit[0] is not value:
        arr = np.array(value, dtype=np.int64)
        hit = route.memo[slot] = (value, arr.reshape(-1, width) if width else arr)
    return hit[1]
