"""Routing on the lane graph (issue 24 item 3): shortest paths with allowed lane changes against analytic costs, and
the one route-validity check."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.common import paths
from simready.world.lane_graph import LaneNetwork, lane_network
from simready.world.routing import (
    LANE_CHANGE_COST_M,
    left_turn_routes,
    plan_route,
    route_issue,
    routes_of_length,
    straight_through,
)
from simready.world.template import load_template

LANE_W = 3.5


def _road(lengths: list[float], n_lanes: int, solid: frozenset[tuple[int, int]] = frozenset()) -> LaneNetwork:
    """A straight eastbound road of ``n_lanes`` side by side (lane 0 rightmost, y = 3.5·k), cut into segments of the
    given lengths; lane ``(k, i)`` is ``L<k>_<i>``. ``solid``: ``(k, i)`` whose left change is forbidden."""
    lanes, x = [], 0.0
    for i, length in enumerate(lengths):
        for k in range(n_lanes):
            lanes.append(SimpleNamespace(id=f"L{k}_{i}", polyline=((x, LANE_W * k), (x + length, LANE_W * k)),
                                         width_m=LANE_W, speed_limit_mps=13.9, kind="driving",
                                         change_left=False if (k, i) in solid else None))
        x += length
    return LaneNetwork.of_lanes(lanes)


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(20, 200).map(float), min_size=1, max_size=5), n_lanes=st.integers(1, 3),
       data=st.data())
def test_shortest_route_costs_the_driven_length_plus_the_changes(lengths, n_lanes, data) -> None:
    net = _road(lengths, n_lanes)
    k0 = data.draw(st.integers(0, n_lanes - 1))
    k1 = data.draw(st.integers(0, n_lanes - 1))
    m = data.draw(st.integers(0, len(lengths) - 1))
    route = plan_route(net, f"L{k0}_0", f"L{k1}_{m}")
    assert route is not None
    # Analytic: every segment before the goal's is driven in full; each lane change costs the same wherever it is made.
    assert route.cost_m == pytest.approx(sum(lengths[:m]) + abs(k1 - k0) * LANE_CHANGE_COST_M)
    assert route.lane_changes == abs(k1 - k0)
    assert route.lanes[0] == f"L{k0}_0" and route.lanes[-1] == f"L{k1}_{m}"
    for a, step in zip(route.lanes, route.steps[1:]):
        if step.via == "follow":
            assert step.lane in net.graph.successors[a]
        else:
            assert net.neighbour(a, step.via) == step.lane
    if k0 != k1:
        assert plan_route(net, f"L{k0}_0", f"L{k1}_{m}", lane_changes=False) is None


def test_a_forbidden_change_is_routed_around() -> None:
    # Lane 0 may not change left on its first two segments: the change happens on the third or the fourth (equal
    # costs: the lexicographically smaller lane sequence, changing on the fourth).
    net = _road([50.0, 50.0, 50.0, 50.0], 2, solid=frozenset({(0, 0), (0, 1)}))
    route = plan_route(net, "L0_0", "L1_3")
    assert route is not None
    assert [s.lane for s in route.steps] == ["L0_0", "L0_1", "L0_2", "L0_3", "L1_3"]
    assert [s.via for s in route.steps] == ["start", "follow", "follow", "follow", "left"]
    assert route.cost_m == pytest.approx(150.0 + LANE_CHANGE_COST_M)
    # Lane 0 cannot reach lane 1 on the last segment at all once its change there is forbidden too.
    blocked = _road([50.0, 50.0], 2, solid=frozenset({(0, 0), (0, 1)}))
    assert plan_route(blocked, "L0_0", "L1_1") is None


def test_routes_through_the_junction() -> None:
    net = lane_network(load_template(paths.TEMPLATES_DIR / "urban_signalized_intersection.yaml"))
    route = plan_route(net, "s_in", "w_out")
    assert route is not None and route.lanes == ("s_in", "s_to_w", "w_out") and route.cost_m == pytest.approx(
        50.0 + net.graph.lanes["s_to_w"].length_m)
    assert plan_route(net, "s_in", "s_out") is None  # no U-turn connector
    assert left_turn_routes(net, signalized=True) == [("e_in", "e_to_s", "s_out"), ("n_in", "n_to_e", "e_out"),
                                                      ("s_in", "s_to_w", "w_out"), ("w_in", "w_to_n", "n_out")]
    assert left_turn_routes(net, signalized=False) == []
    assert straight_through(net, "n_in") == ("n_in", "n_to_s", "s_out")
    chains = routes_of_length(net, 100.0)
    assert ("s_in", "s_to_n", "n_out") in chains and all(len(c) == 3 for c in chains)


def test_route_validity_is_one_check() -> None:
    net = lane_network(load_template(paths.TEMPLATES_DIR / "urban_signalized_intersection.yaml"))
    assert route_issue(net.graph, ["s_in", "s_to_w", "w_out"]) is None
    gap = route_issue(net.graph, ["s_in", "w_out"])
    assert (gap.index, gap.code, gap.lane, gap.previous) == (1, "gap", "w_out", "s_in")
    unknown = route_issue(net.graph, ["s_in", "nowhere"])
    assert (unknown.index, unknown.code) == (1, "unknown_lane")
