"""The lane graph every program reads (issue 24 item 2, SPEC §18): junctions, turns, lane-change permission,
conflicts with their right of way, speed limits — checked against the templates' known layout."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from simready.common import paths
from simready.world.lane_graph import LaneNetwork, change_permission, lane_network, turn_of
from simready.world.template import load_template


@pytest.fixture(scope="module")
def signalized():
    return lane_network(load_template(paths.TEMPLATES_DIR / "urban_signalized_intersection.yaml"))


@pytest.fixture(scope="module")
def unsignalized():
    return lane_network(load_template(paths.TEMPLATES_DIR / "urban_unsignalized_intersection.yaml"))


@pytest.mark.parametrize("change_deg, turn", [(0.0, "straight"), (29.0, "straight"), (-29.0, "straight"),
                                              (90.0, "left"), (-90.0, "right"), (149.0, "left"), (-149.0, "right"),
                                              (180.0, "U"), (-170.0, "U")])
def test_turn_from_heading_change(change_deg: float, turn: str) -> None:
    assert turn_of(math.radians(change_deg)) == turn


def test_the_four_way_junction(signalized: LaneNetwork) -> None:
    (junction,) = signalized.junctions.values()
    assert junction.arms == 4 and junction.signalized and len(junction.lanes) == 12
    assert junction.approaches == ("e_in", "n_in", "s_in", "w_in")
    assert junction.exits == ("e_out", "n_out", "s_out", "w_out")
    # From the south (heading north): west is a left turn, east a right turn, north straight on.
    assert (signalized.turn("s_to_w"), signalized.turn("s_to_e"), signalized.turn("s_to_n")) == ("left", "right",
                                                                                                   "straight")
    assert signalized.turn("s_in") == "straight"
    assert signalized.speed_limit_mps("s_in") == pytest.approx(13.9)


def _conflict(net: LaneNetwork, a: str, b: str):
    (c,) = [c for c in net.conflicts if {c.a, c.b} == {a, b}]
    return c


def test_a_left_turn_yields_to_oncoming_straight_traffic(signalized: LaneNetwork, unsignalized: LaneNetwork) -> None:
    c = _conflict(signalized, "s_to_w", "n_to_s")
    assert c.kind == "crossing" and c.priority == "n_to_s" and c.rule == "signal" and c.yields("s_to_w")
    # The crossing lies on the oncoming lane's centreline x = -1.75, inside the junction box.
    assert c.xy[0] == pytest.approx(-1.75, abs=1e-6) and abs(c.xy[1]) < 10.0
    # The conflict area: where the two 3.5 m wide lanes overlap, around the crossing on each centreline.
    lo, hi = c.window_b_m
    assert lo < c.s_b_m < hi and 3.5 <= hi - lo <= 6.0
    lo, hi = c.window_a_m
    assert lo < c.s_a_m < hi
    u = _conflict(unsignalized, "s_to_w", "n_to_s")
    assert u.priority == "n_to_s" and u.rule == "default"


def test_between_equal_turns_the_one_from_the_right_goes_first(unsignalized: LaneNetwork) -> None:
    # Northbound (from the south) and westbound (from the east): the east is on a northbound driver's right.
    assert _conflict(unsignalized, "s_to_n", "e_to_w").priority == "e_to_w"
    # Two left turns: from the south (northbound) and from the east (westbound).
    assert _conflict(unsignalized, "s_to_w", "e_to_s").priority == "e_to_s"


def test_merging_paths_conflict_and_diverging_ones_do_not(unsignalized: LaneNetwork) -> None:
    merge = _conflict(unsignalized, "e_to_n", "s_to_n")
    assert merge.kind == "merging" and merge.priority == "s_to_n"
    assert not [c for c in unsignalized.conflicts if {c.a, c.b} == {"s_to_w", "s_to_n"}]  # both leave s_in


def test_lane_change_permission_defaults_to_allowed_and_follows_the_lane() -> None:
    t = load_template(paths.TEMPLATES_DIR / "two_lane_arterial.yaml")
    net = lane_network(t)
    assert net.change_allowed == {("lane_eb_right", "left"): True, ("lane_eb_left", "right"): True}
    assert net.neighbour("lane_eb_right", "left") == "lane_eb_left"
    assert net.neighbour("lane_eb_right", "right") is None
    assert change_permission(SimpleNamespace(), "left") is True
    assert change_permission(SimpleNamespace(change_left=None), "left") is True
    assert change_permission(SimpleNamespace(change_left=False, change_right=True), "left") is False
    solid = [SimpleNamespace(id=lane.id, polyline=lane.polyline, width_m=lane.width_m,
                             speed_limit_mps=lane.speed_limit_mps, kind=lane.kind,
                             change_left=False if lane.id == "lane_eb_right" else None) for lane in t.lanes]
    marked = LaneNetwork.of_lanes(solid)
    assert marked.neighbour("lane_eb_right", "left") is None
    assert marked.neighbour("lane_eb_left", "right") == "lane_eb_right"


def test_no_lane_changes_inside_a_junction(signalized: LaneNetwork) -> None:
    assert not [k for k in signalized.change_allowed if k[0] in signalized.junction_of and signalized.change_allowed[k]]
