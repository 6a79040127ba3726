"""Junction conflicts and right of way (``rules.yield`` at intersections, SPEC §8).

Two lanes *conflict* where their centrelines cross, or where they merge into
the same end point, unless one continues the other. Right of way, fixed
here: a lane of kind ``turn`` yields to a lane of kind ``driving``; between
two turns, the one that turns more (larger heading change from start to
end) yields; otherwise neither does (signals separate them).

A yielding vehicle (``rules.yield``) approaching a conflict point X on its
path waits before X — a stationary obstacle at its *waiting point* — while a
vehicle on the priority lane would arrive at X before the yielding one has
cleared it plus :data:`~simready.sim.core.constants.JUNCTION_GAP_S`. The waiting
point is the nearest front position before X (and at least
:data:`STOP_BEFORE_M` before it) at which the vehicle's footprint, grown by
:data:`WAIT_MARGIN_M`, lies outside the priority lane (its centreline
buffered by half its width): measured along the path alone, a fixed
distance leaves the front corner of a vehicle that crosses at a shallow
angle (a left turn across oncoming traffic) inside the other lane, where
the priority vehicle strikes it. The decision is taken at the perception
rate; once its front is past the waiting point, it is committed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Point

from simready.common.memo import once_per_object
from simready.sim.core import constants as C
from simready.world.frames import footprint_corners
from simready.world.lanes import LaneGeometry

#: A yielding vehicle waits with its front at least this far before the conflict point (m).
STOP_BEFORE_M = 2.0
#: ... and with its footprint, grown by this margin, outside the priority lane (m; it also covers the
#: dynamic ego's path-tracking error, which in a turn puts its body inside the reference path).
WAIT_MARGIN_M = 0.5
#: The waiting point is searched this far before the conflict point (m), in steps of WAIT_STEP_M.
WAIT_SEARCH_M = 25.0
WAIT_STEP_M = 0.05
#: A priority vehicle has cleared the conflict once its rear is this far past it, beyond the yielding half-width (m).
CLEARANCE_M = 1.5
#: Conflicts further ahead than this are not considered yet (m).
CONFLICT_LOOKAHEAD_M = 40.0


@dataclass(frozen=True)
class Conflict:
    """On lane ``lane`` at arc length ``s``, lane ``other`` (at its ``s_other``) has priority."""

    lane: str
    s: float
    other: str
    s_other: float


def _turn(geom: LaneGeometry) -> float:
    return abs((geom.end_yaw_rad - geom.start_yaw_rad + math.pi) % (2 * math.pi) - math.pi)


def _priority(graph, a: str, b: str) -> int:  # type: ignore[no-untyped-def]
    """+1 if a yields to b, −1 if b yields to a, 0 if neither."""
    ga, gb = graph.lanes[a], graph.lanes[b]
    if ga.kind == "turn" and gb.kind == "driving":
        return 1
    if gb.kind == "turn" and ga.kind == "driving":
        return -1
    if ga.kind == gb.kind == "turn":
        ta, tb = _turn(ga), _turn(gb)
        if abs(ta - tb) > math.radians(10):
            return 1 if ta > tb else -1
    return 0


_CACHE: dict[int, tuple[object, dict[str, tuple[Conflict, ...]]]] = {}


def _conflicts(graph) -> dict[str, tuple[Conflict, ...]]:  # type: ignore[no-untyped-def]
    ids = sorted(graph.lanes)
    lines = {i: LineString(graph.lanes[i].points) for i in ids}
    out: dict[str, list[Conflict]] = {i: [] for i in ids}
    for n, a in enumerate(ids):
        for b in ids[n + 1:]:
            if b in graph.successors[a] or a in graph.successors[b]:
                continue
            ga, gb = graph.lanes[a], graph.lanes[b]
            if np.allclose(ga.start, gb.start, atol=0.5):
                continue  # diverging branches of one approach
            if np.allclose(ga.end, gb.end, atol=0.5):
                points = [Point(ga.end)]
            else:
                hit = lines[a].intersection(lines[b])
                if hit.is_empty:
                    continue
                points = [Point(c) for g in getattr(hit, "geoms", [hit]) for c in g.coords]
            who = _priority(graph, a, b)
            if who == 0:
                continue
            for pt in points:
                sa, sb = float(lines[a].project(pt)), float(lines[b].project(pt))
                if who > 0:
                    out[a].append(Conflict(a, sa, b, sb))
                else:
                    out[b].append(Conflict(b, sb, a, sa))
    return {k: tuple(sorted(v, key=lambda c: (c.s, c.other))) for k, v in out.items()}


def lane_conflicts(graph) -> dict[str, tuple[Conflict, ...]]:  # type: ignore[no-untyped-def]
    """Conflicts per lane where that lane yields (cached per lane graph object)."""
    return once_per_object(_CACHE, graph, lambda: _conflicts(graph), limit=32)


_CORRIDORS: dict[tuple[int, str], tuple[object, object]] = {}
_WAITS: dict[tuple[object, ...], tuple[object, float]] = {}


def _corridor(graph, lane: str):  # type: ignore[no-untyped-def]
    """The priority lane's area: its centreline buffered by half its width, flat ends (cached per graph object)."""
    hit = _CORRIDORS.get((id(graph), lane))
    if hit is None or hit[0] is not graph:
        if len(_CORRIDORS) > 1024:
            _CORRIDORS.clear()
        g = graph.lanes[lane]
        area = LineString(g.points).buffer(0.5 * float(g.width_m), cap_style="flat")
        shapely.prepare(area)
        hit = (graph, area)
        _CORRIDORS[(id(graph), lane)] = hit
    return hit[1]


def waiting_point(graph, path, u_x: float, other: str, hl: float, hw: float, chord: float) -> float:  # type: ignore[no-untyped-def]
    """u of the front of a vehicle on ``path`` waiting for the conflict at ``u_x`` with lane ``other``.

    The largest front position ``u_f ≤ u_x − STOP_BEFORE_M`` (on a
    :data:`WAIT_STEP_M` grid) whose footprint — centred on the path at
    ``u_f − hl``, heading along the chord of length ``chord`` there, as
    :mod:`simready.sim.core.kinematics` places it, half-sizes grown by
    :data:`WAIT_MARGIN_M` — does not touch the priority lane; ``u_x −
    STOP_BEFORE_M`` if no such position lies within :data:`WAIT_SEARCH_M`
    (lanes that run side by side up to a merge). Cached: a path is a pure
    function of its key.
    """
    key = (id(graph), path.key, round(u_x, 9), other, round(hl, 9), round(hw, 9), round(chord, 9))
    hit = _WAITS.get(key)
    if hit is not None and hit[0] is graph:
        return hit[1]
    if len(_WAITS) > 4096:
        _WAITS.clear()
    start = u_x - STOP_BEFORE_M
    u_f = start - WAIT_STEP_M * np.arange(int(round(WAIT_SEARCH_M / WAIT_STEP_M)) + 1)
    u_c = u_f - hl
    half = 0.5 * chord
    centre = np.column_stack(path.points_at(u_c))
    back = np.column_stack(path.points_at(u_c - half))
    ahead = np.column_stack(path.points_at(u_c + half))
    yaw = np.arctan2(ahead[:, 1] - back[:, 1], ahead[:, 0] - back[:, 0])
    corners = footprint_corners(centre[:, 0], centre[:, 1], yaw, hl + WAIT_MARGIN_M, hw + WAIT_MARGIN_M)
    touching = shapely.intersects(shapely.polygons(corners), _corridor(graph, other))
    clear = np.flatnonzero(~touching)
    out = float(u_f[clear[0]]) if len(clear) else start
    _WAITS[key] = (graph, out)
    return out


def yield_stops(view, route_conflicts) -> tuple[tuple[int, float], ...]:  # type: ignore[no-untyped-def]
    """(actor, u of its waiting point) for yielding vehicles that must give way now.

    ``route_conflicts[i]``: ``(u of X on i's path, other lane, s of X on it, u of the waiting point)``;
    a vehicle due at several conflicts waits at the first of their waiting points. Scalar Python over
    list copies of the view (a handful of actors: numpy's per-element reads cost more than the arithmetic).
    """
    scene = view.scene
    pa = scene.actors.py
    u, v, present = view.u_py, view.v.tolist(), view.present_py
    lane_u0 = view.table.lane_u0_py
    movers = [j for j in range(pa.n) if present[j] and pa.lane_bound[j]]
    out = []
    for i in movers:
        if not pa.yield_[i]:
            continue
        u_i, hl_i = u[i], pa.hl[i]
        v_i = max(v[i], 1.0)
        front = u_i + hl_i
        wait = math.inf
        for u_x, other, s_other, u_wait in route_conflicts[i]:
            if front > u_wait + 0.5 or u_x - front > CONFLICT_LOOKAHEAD_M or u_wait >= wait:
                continue  # committed, too far ahead, or behind a nearer wait
            li = scene.lane_index[other]
            t_clear = (u_x - u_i + hl_i + 2.0) / v_i
            for j in movers:
                if j == i or not math.isfinite(lane_u0[j][li]):
                    continue
                d_j = lane_u0[j][li] + s_other - u[j]
                clearance = pa.hl[j] + pa.hw[i] + CLEARANCE_M
                if d_j < -clearance:
                    continue  # already through
                v_j = v[j]
                in_zone = d_j < clearance
                if in_zone or (v_j > 0.5 and d_j / v_j < t_clear + C.JUNCTION_GAP_S):
                    wait = u_wait
                    break
        if math.isfinite(wait):
            out.append((i, wait))
    return tuple(out)
