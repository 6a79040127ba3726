"""Junction conflicts and right of way (``rules.yield`` at intersections, SPEC §8).

Two lanes *conflict* where their centrelines cross, or where they merge into
the same end point, unless one continues the other. Right of way, fixed
here: a lane of kind ``turn`` yields to a lane of kind ``driving``; between
two turns, the one that turns more (larger heading change from start to
end) yields; otherwise neither does (signals separate them).

A yielding vehicle (``rules.yield``) approaching a conflict point X on its
path waits before X — a stationary obstacle :data:`STOP_BEFORE_M` ahead of
X — while a vehicle on the priority lane would arrive at X before the
yielding one has cleared it plus :data:`~simready.sim.constants.JUNCTION_GAP_S`.
The decision is taken at the perception rate; once its front is past the
waiting point, it is committed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from shapely.geometry import LineString, Point

from simready.sim import constants as C

#: A yielding vehicle waits with its front this far before the conflict point (m).
STOP_BEFORE_M = 2.0
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


def _turn(geom) -> float:  # type: ignore[no-untyped-def]
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
    hit = _CACHE.get(id(graph))
    if hit is None or hit[0] is not graph:
        if len(_CACHE) > 32:
            _CACHE.clear()
        hit = (graph, _conflicts(graph))
        _CACHE[id(graph)] = hit
    return hit[1]


def yield_stops(view, route_conflicts) -> tuple[tuple[int, float], ...]:  # type: ignore[no-untyped-def]
    """(actor, u of its waiting point) for yielding vehicles that must give way now.

    ``route_conflicts[i]``: ``(u of X on i's path, other lane, s of X on it)``.
    """
    scene = view.scene
    a = scene.actors
    lane, s = view.lanes
    out = []
    for i in np.flatnonzero(a.yield_ & a.lane_bound & view.present).tolist():
        u_i = float(view.u[i])
        v_i = max(float(view.v[i]), 1.0)
        for u_x, other, s_other in route_conflicts[i]:
            front_to_x = u_x - u_i - float(a.hl[i])
            if front_to_x < STOP_BEFORE_M - 0.5 or front_to_x > CONFLICT_LOOKAHEAD_M:
                continue
            li = scene.lane_index[other]
            t_clear = (u_x - u_i + float(a.hl[i]) + 2.0) / v_i
            for j in np.flatnonzero(view.present & a.lane_bound).tolist():
                if j == i or not np.isfinite(view.table.lane_u0[j, li]):
                    continue
                d_j = float(view.table.lane_u0[j, li]) + s_other - float(view.u[j])
                clearance = float(a.hl[j]) + float(a.hw[i]) + CLEARANCE_M
                if d_j < -clearance:
                    continue  # already through
                v_j = float(view.v[j])
                in_zone = d_j < clearance
                if in_zone or (v_j > 0.5 and d_j / v_j < t_clear + C.JUNCTION_GAP_S):
                    out.append((i, u_x - STOP_BEFORE_M))
                    break
            else:
                continue
            break
    return tuple(out)
