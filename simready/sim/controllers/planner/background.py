"""Background traffic's obstacles and references (SPEC §20): the conflict areas another vehicle occupies, the traffic on
the lane a discretionary lane change leaves, parked vehicles in its path, and the speed caps of its turns.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from simready.sim.behavior import junctions
from simready.sim.core import planner_kernels as pk
from simready.sim.controllers import lateral
from simready.sim.core.sight import TickView
from simready.sim.controllers.planner.route_table import BOX_STANDOFF_M, RouteTable

F = NDArray[np.float64]


def box_gaps(view: TickView, route: RouteTable, fixed: F) -> None:
    """Gaps (m) into ``fixed`` to the nearest conflict area ahead that another vehicle's body is in (a background
    vehicle does not drive into a car waiting or crawling across its path, right of way or not)."""
    actors = view.scene.actors
    a = actors.py
    u = view.u_py
    lane, s = view.lanes
    occupied: dict[int, list[tuple[float, float, int]]] = {}
    # The lane-bound actors on a lane, their rear and nose (s ∓ half length, elementwise: the scalar loop's bits).
    on = np.flatnonzero((lane >= 0) & view.present & actors.lane_bound)
    hl = actors.hl[on]
    for j, lj, rear, nose in zip(on.tolist(), lane[on].tolist(), (s[on] - hl).tolist(), (s[on] + hl).tolist()):
        occupied.setdefault(lj, []).append((rear, nose, j))
    for i, boxes in route.boxes.items():
        front = u[i] + a.hl[i]
        for u_in, u_out, other, lo, hi in boxes:  # sorted by u_in
            if u_in - front > junctions.CONFLICT_LOOKAHEAD_M:
                break
            if u_in < front:
                continue  # already in (or past) the area: drive on and clear it
            if any(j != i and rear < hi and nose > lo for rear, nose, j in occupied.get(other, ())):
                g = u_in - front - BOX_STANDOFF_M
                if g < fixed[i]:
                    fixed[i] = g
                break


def old_lane_gaps(view: TickView, fixed: F) -> None:
    """Gaps (m) into ``fixed`` that keep a background vehicle in a discretionary lane change behind the traffic ahead
    on the lane it leaves: the gap to the nearest vehicle ahead there, scaled so that the IDM term for a stationary
    obstacle at it equals the term for that vehicle at its speed (the kernel treats ``fixed`` as stationary)."""
    scene = view.scene
    a = scene.actors.py
    lateral = view.state.control.lateral
    lane, s = view.lanes
    v = view.v.tolist()
    for i in scene.actors.background.nonzero()[0].tolist():
        goal = lateral[i]
        if goal is None or goal.kind != "change_lane" or not (goal.owner or "").startswith(_MOBIL):
            continue
        old = (goal.owner or "")[len(_MOBIL):]
        col = scene.lane_index.get(old)
        if col is None:
            continue
        # Same-direction neighbours run side by side (the lane graph's neighbour rule): s on the new lane stands
        # for s on the old one.
        s_i = float(s[i])
        best, v_j = math.inf, 0.0
        for j in np.flatnonzero((lane == col) & view.present).tolist():
            g = float(s[j]) - s_i - a.hl[i] - a.hl[j]
            if j != i and float(s[j]) > s_i and g < best:
                best, v_j = g, v[j]
        if not math.isfinite(best):
            continue
        star_0 = a.s0[i] + max(0.0, v[i] * a.time_gap[i] + v[i] * v[i] / a.idm_root2[i])
        star_j = a.s0[i] + max(0.0, v[i] * a.time_gap[i] + v[i] * (v[i] - v_j) / a.idm_root2[i])
        g = best * star_0 / star_j if best > 0.0 else best
        if g < fixed[i]:
            fixed[i] = g


_MOBIL = "mobil:"


def parked_gaps(view: TickView, route: RouteTable, fixed: F) -> None:
    """Gaps (m) into ``fixed`` to the nearest parked vehicle ahead in each background actor's path."""
    a = view.scene.actors.py
    u = view.u_py
    for i, rears in route.parked.items():
        front = u[i] + a.hl[i]
        for rear in rears:
            if rear > u[i]:
                g = rear - front
                if g < fixed[i]:
                    fixed[i] = g
                break


def curve_references(view: TickView, route: RouteTable, refs: F) -> None:
    """Cap a background vehicle's speed reference before and through its turns: within a turn its speed there,
    before one the speed from which it still slows to that at its comfortable deceleration."""
    if not route.curves:
        return
    a = view.scene.actors.py
    u, v_ref = view.u_py, refs[pk.V_REF]
    for i, zones in route.curves.items():
        front = u[i] + a.hl[i]
        cap = math.inf
        for u_in, u_out, v_c in zones:
            if u[i] - a.hl[i] > u_out:
                continue
            ahead = u_in - front
            cap = min(cap, v_c if ahead <= 0.0 else math.sqrt(v_c * v_c + 2.0 * a.decel_comfort[i] * ahead))
        if cap < v_ref[i]:
            v_ref[i] = cap
