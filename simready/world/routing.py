"""Routes on the lane graph (SPEC §18): the planner every intent uses, and the one route-validity check.

A route is a sequence of lanes, each entered from the previous one by
following it (a successor) or by an allowed lane change to a same-direction
neighbour (:meth:`simready.world.lane_graph.LaneNetwork.neighbour`).

Cost, metres: following ``a → b`` costs ``a``'s length (the whole of ``a``
is driven); a lane change costs :data:`LANE_CHANGE_COST_M` (the change is
made alongside, so neither lane is driven to its end). The cheapest route
wins; equal costs go to the lexicographically smallest lane sequence
(:func:`simready.world.graph_search.shortest_path`), so a route is a pure
function of the map and its two ends.

:func:`route_issue` is the check the ladder's reachability stage and the
simulator's manifest validation both apply to a manifest route (a lane chain
the actor follows; lane changes are ``change_lane`` interactions, not route
steps): every lane known, each a successor of the one before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from simready.world.graph_search import shortest_path
from simready.world.lane_graph import LaneNetwork
from simready.world.lanes import LaneGraph

Via = Literal["start", "follow", "left", "right"]

#: Cost of one lane change (m): a change is worth making to save more than this much driving.
LANE_CHANGE_COST_M = 30.0


@dataclass(frozen=True)
class RouteStep:
    lane: str
    via: Via


@dataclass(frozen=True)
class Route:
    """A planned route: its steps in order and its cost (m)."""

    steps: tuple[RouteStep, ...]
    cost_m: float

    @property
    def lanes(self) -> tuple[str, ...]:
        return tuple(step.lane for step in self.steps)

    @property
    def lane_changes(self) -> int:
        return sum(1 for step in self.steps if step.via in ("left", "right"))


def plan_route(net: LaneNetwork, start: str, goal: str, *, lane_changes: bool = True,
               change_cost_m: float = LANE_CHANGE_COST_M) -> Route | None:
    """The cheapest route from lane ``start`` to lane ``goal`` (see the module docstring); None if unreachable.

    Raises:
        KeyError: an unknown lane id.
    """
    graph = net.graph
    for lane in (start, goal):
        if lane not in graph.lanes:
            raise KeyError(f"unknown lane {lane!r}")

    edges = net.route_edges(change_cost_m if lane_changes else None)
    path = shortest_path(start, goal, edges.__getitem__)
    if path is None:
        return None
    out = [RouteStep(start, "start")]
    cost = 0.0
    for a, b in zip(path, path[1:]):
        if b in graph.successors[a]:
            out.append(RouteStep(b, "follow"))
            cost += graph.lanes[a].length_m
        else:
            out.append(RouteStep(b, "left" if net.neighbour(a, "left") == b else "right"))
            cost += change_cost_m
    return Route(tuple(out), cost)


def plan_via(net: LaneNetwork, waypoints: list[str] | tuple[str, ...], *, lane_changes: bool = True,
             change_cost_m: float = LANE_CHANGE_COST_M) -> Route | None:
    """The cheapest route through lanes ``waypoints`` in order (each leg planned by :func:`plan_route`; a waypoint
    on the lane the route is already on adds nothing); None when a leg is unreachable.

    Raises:
        KeyError: an unknown lane id.
    """
    if not waypoints:
        return None
    steps = [RouteStep(waypoints[0], "start")]
    cost = 0.0
    for a, b in zip(waypoints, waypoints[1:]):
        if a == b:
            continue
        leg = plan_route(net, a, b, lane_changes=lane_changes, change_cost_m=change_cost_m)
        if leg is None:
            return None
        steps.extend(leg.steps[1:])
        cost += leg.cost_m
    return Route(tuple(steps), cost)


@dataclass(frozen=True)
class RouteIssue:
    """Why a lane chain is not a route: ``index`` of the offending lane, ``code`` ``unknown_lane`` | ``gap``."""

    index: int
    code: str
    lane: str
    previous: str | None = None


def route_issue(graph: LaneGraph, lanes: list[str] | tuple[str, ...]) -> RouteIssue | None:
    """The first reason ``lanes`` is not a followable route on ``graph``, None when it is."""
    for k, lane in enumerate(lanes):
        if lane not in graph.lanes:
            return RouteIssue(k, "unknown_lane", lane)
        if k and lane not in graph.successors[lanes[k - 1]]:
            return RouteIssue(k, "gap", lane, lanes[k - 1])
    return None


def left_turn_routes(net: LaneNetwork, *, signalized: bool | None = None) -> list[tuple[str, str, str]]:
    """``(approach, junction lane, exit)`` of every left turn, sorted; ``signalized`` keeps only junctions with
    (True) or without (False) traffic lights."""
    out = []
    for lane, turn in sorted(net.turns.items()):
        junction = net.junctions[net.junction_of[lane]]
        if turn != "left" or (signalized is not None and junction.signalized != signalized):
            continue
        for a in net.graph.predecessors[lane]:
            if a in net.junction_of:
                continue
            out += [(a, lane, e) for e in net.graph.successors[lane] if e not in net.junction_of]
    return sorted(out)


def straight_through(net: LaneNetwork, lane: str, max_lanes: int = 3) -> tuple[str, ...]:
    """``lane`` continued by its straight successors (driving, then the straightest junction lane), up to
    ``max_lanes`` lanes."""
    chain = [lane]
    while len(chain) < max_lanes:
        nxt = [n for n in net.graph.successors[chain[-1]] if net.turn(n) == "straight" and n not in chain]
        if not nxt:
            break
        chain.append(nxt[0])
    return tuple(chain)


def routes_of_length(net: LaneNetwork, min_length_m: float, *, max_lanes: int = 8) -> list[tuple[str, ...]]:
    """Lane chains (successors only) from the start of a non-junction driving lane, each cut at the first lane that
    takes it to ``min_length_m``, at most ``max_lanes`` lanes; sorted."""
    graph = net.graph
    out: set[tuple[str, ...]] = set()
    starts = [k for k, g in sorted(graph.lanes.items()) if g.kind == "driving" and k not in net.junction_of]
    stack: list[tuple[tuple[str, ...], float]] = [((k,), graph.lanes[k].length_m) for k in starts]
    while stack:
        chain, length = stack.pop()
        if length >= min_length_m:
            out.add(chain)
            continue
        if len(chain) >= max_lanes:
            continue
        for n in graph.successors[chain[-1]]:
            if n not in chain and net.kinds.get(n) in ("driving", "turn"):
                stack.append((chain + (n,), length + graph.lanes[n].length_m))
    return sorted(out)


def route_length_m(graph: LaneGraph, lanes: tuple[str, ...] | list[str]) -> float:
    return float(sum(graph.lanes[k].length_m for k in lanes))
