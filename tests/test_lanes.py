"""Lane graph: arc length, s/t projection, derived successors and neighbours, routes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import box

from simready.world.lanes import (
    NEIGHBOUR_OFFSET_TOLERANCE_M,
    SUCCESSOR_GAP_TOLERANCE_M,
    LaneGraph,
    LaneGeometry,
)
from tests.fixtures.templates import TEMPLATE_IDS, loaded

ARMS = ("s", "e", "n", "w")


@dataclass(frozen=True)
class L:
    """Minimal lane declaration for synthetic graphs."""

    id: str
    polyline: tuple[tuple[float, float], ...]
    width_m: float = 3.5
    speed_limit_mps: float = 10.0
    kind: str = "driving"


def _arm(k: int, offset: int) -> str:
    return ARMS[(k + offset) % 4]


@pytest.mark.parametrize("k", range(4))
def test_intersection_connectors_derive_from_geometry(k):
    g = loaded("urban_signalized_intersection").lane_graph
    a = ARMS[k]
    straight, right, left = f"{a}_to_{_arm(k, 2)}", f"{a}_to_{_arm(k, 1)}", f"{a}_to_{_arm(k, 3)}"
    assert g.successors[f"{a}_in"] == tuple(sorted((straight, right, left)))
    assert g.predecessors[left] == (f"{a}_in",)
    assert g.successors[left] == (f"{_arm(k, 3)}_out",)
    assert g.successors[right] == (f"{_arm(k, 1)}_out",)
    assert g.predecessors[f"{a}_in"] == () and g.successors[f"{a}_out"] == ()
    assert sorted(g.predecessors[f"{a}_out"]) == sorted(f"{b}_to_{a}" for b in ARMS if b != a)


def test_intersection_has_no_neighbours_and_routes_through_turns():
    g = loaded("urban_signalized_intersection").lane_graph
    assert all(v is None for v in (*g.left.values(), *g.right.values()))
    assert g.route("s_in", "w_out") == ["s_in", "s_to_w", "w_out"]
    assert g.route("s_in", "s_out") is None  # no U-turn connector
    assert g.route("w_out", "e_out") is None  # against the direction
    assert g.route("e_in", "e_in") == ["e_in"]


def test_left_turn_geometry():
    g = loaded("urban_signalized_intersection").lane_graph
    left = g.lane("s_to_w")
    assert left.start_yaw_rad == pytest.approx(math.pi / 2, abs=math.radians(6))
    assert abs(left.end_yaw_rad) == pytest.approx(math.pi, abs=math.radians(6))
    assert left.length_m == pytest.approx(0.5 * math.pi * 11.75, rel=0.01)


def test_arterial_neighbours_derive():
    g = loaded("two_lane_arterial").lane_graph
    assert g.left["lane_eb_right"] == "lane_eb_left" and g.right["lane_eb_right"] is None
    assert g.right["lane_eb_left"] == "lane_eb_right"
    assert g.left["lane_eb_left"] is None  # the westbound lane runs the other way
    assert g.left["lane_wb"] is None and g.right["lane_wb"] is None


def test_residential_lanes_are_not_neighbours():
    g = loaded("residential_crosswalk_v3").lane_graph
    assert g.left["lane_eb"] is None and g.left["lane_wb"] is None


def test_neighbour_needs_the_right_spacing():
    base = L("a", ((0.0, 0.0), (100.0, 0.0)))
    near = LaneGraph.build([base, L("b", ((0.0, 3.5 + NEIGHBOUR_OFFSET_TOLERANCE_M * 0.9), (100.0, 3.6)))])
    assert near.left["a"] == "b" and near.right["b"] == "a"
    far = LaneGraph.build([base, L("b", ((0.0, 4.5), (100.0, 4.5)))])
    assert far.left["a"] is None


def test_successor_tolerance_and_heading_limit():
    a = L("a", ((0.0, 0.0), (10.0, 0.0)))
    close = L("b", ((10.0 + 0.9 * SUCCESSOR_GAP_TOLERANCE_M, 0.0), (20.0, 0.0)))
    gap = L("c", ((10.0 + 1.1 * SUCCESSOR_GAP_TOLERANCE_M, 0.0), (20.0, 0.0)))
    sharp = L("d", ((10.0, 0.0), (10.0, 10.0)))  # 90° corner: not a lane continuation
    g = LaneGraph.build([a, close, gap, sharp])
    assert g.successors["a"] == ("b",)


def test_direction_errors_and_dead_ends():
    a = L("a", ((0.0, 0.0), (10.0, 0.0)))
    head_on = L("b", ((20.0, 0.0), (10.0, 0.0)))
    errors = LaneGraph.build([a, head_on]).direction_errors()
    assert [e.lane for e in errors] == ["a", "b"]
    u_turn = L("c", ((10.0, 0.0), (0.0, 0.2)))
    errors = LaneGraph.build([a, u_turn]).direction_errors()
    assert errors[0].lane == "a" and "turn 179 deg" in errors[0].reason
    g = LaneGraph.build([a])
    assert g.dead_ends((0.0, -5.0, 10.0, 5.0)) == []
    assert g.dead_ends((0.0, -5.0, 50.0, 5.0)) == ["a"]


def test_arc_length_projection_and_pose_on_an_l_shaped_lane():
    lane = LaneGeometry.from_lane(L("l", ((0.0, 0.0), (10.0, 0.0), (10.0, 5.0))))
    assert lane.length_m == 15.0
    assert lane.pose_at(12.0) == pytest.approx((10.0, 2.0, math.pi / 2))
    assert lane.project(5.0, 1.0) == pytest.approx((5.0, 1.0))  # left of travel is +t
    assert lane.project(11.0, 3.0) == pytest.approx((13.0, -1.0))
    assert lane.project(-2.0, 0.5) == pytest.approx((-2.0, 0.5))  # before the start extrapolates
    assert lane.project(10.0, 7.0) == pytest.approx((17.0, 0.0))
    assert lane.s_window(box(4.0, -1.0, 6.0, 1.0)) == pytest.approx((4.0, 6.0))
    assert lane.s_window(box(40.0, 40.0, 41.0, 41.0)) is None


def test_repeated_points_are_refused():
    with pytest.raises(ValueError, match="repeated point"):
        LaneGeometry.from_lane(L("r", ((0.0, 0.0), (0.0, 0.0), (1.0, 0.0))))


def test_nearest_respects_heading_and_kind():
    g = loaded("residential_crosswalk_v3").lane_graph
    assert g.nearest(30.0, 0.5)[0] == "lane_wb"
    lane, s, t = g.nearest(30.0, 0.5, yaw_rad=0.0)
    assert lane == "lane_eb" and s == pytest.approx(30.0) and t == pytest.approx(2.25)
    with pytest.raises(ValueError):
        g.nearest(30.0, 0.5, kinds=("parking",))


def _all_lanes() -> list[tuple[str, str]]:
    return [(tid, lane_id) for tid in TEMPLATE_IDS for lane_id in loaded(tid).lane_graph.lanes]


@settings(max_examples=200, deadline=None)
@given(
    which=st.deferred(lambda: st.sampled_from(_all_lanes())),  # the templates load when the test runs, not at collection
    s_frac=st.floats(min_value=0.0, max_value=1.0),
    t_frac=st.floats(min_value=-0.5, max_value=0.5),
)
def test_st_round_trip(which, s_frac, t_frac):
    template_id, lane_id = which
    lane = loaded(template_id).lane_graph.lane(lane_id)
    s, t = s_frac * lane.length_m, t_frac * lane.width_m
    x, y = lane.point_at(s, t)
    s2, t2 = lane.project(x, y)
    assert lane.point_at(s2, t2) == pytest.approx((x, y), abs=1e-9)
    assert abs(t2) <= abs(t) + 1e-9
    if len(lane.points) == 2:  # straight lanes invert exactly
        assert (s2, t2) == pytest.approx((s, t), abs=1e-9)
    else:  # on a polyline arc, s moves at most to the neighbouring segment's foot
        assert abs(s2 - s) <= abs(t) * math.tan(math.radians(10.0)) + 1e-9


def _brute_force(lanes: list) -> tuple[dict, dict, dict, list]:
    """The all-pairs graph: every lane tested against every other, as before the spatial indexes."""
    from simready.world.lanes import DirectionError, _continues, _gap, _neighbours, _samples, wrap_angle

    geoms = {g.id: g for g in sorted((LaneGeometry.from_lane(lane) for lane in lanes), key=lambda g: g.id)}
    succ = {a: tuple(b for b in geoms if b != a and _continues(geoms[a], geoms[b])) for a in geoms}
    sides = {a: _neighbours(geoms[a], _samples(geoms[a]), geoms) for a in geoms}
    errors = []
    for a, ga in geoms.items():
        if succ[a]:
            continue
        for b, gb in geoms.items():
            if b == a:
                continue
            if _gap(ga.end, gb.end) <= SUCCESSOR_GAP_TOLERANCE_M:
                errors.append(DirectionError(a, f"ends where lane {b!r} ends: one of them runs against its direction"))
            elif _gap(ga.end, gb.start) <= SUCCESSOR_GAP_TOLERANCE_M:
                turn = math.degrees(abs(wrap_angle(gb.start_yaw_rad - ga.end_yaw_rad)))
                errors.append(DirectionError(a, f"meets lane {b!r} only against its direction (turn {turn:.0f} deg)"))
    return succ, {a: v[0] for a, v in sides.items()}, {a: v[1] for a, v in sides.items()}, errors


def _assert_same_as_brute_force(lanes: list) -> None:
    graph = LaneGraph.build(lanes)
    succ, left, right, errors = _brute_force(lanes)
    assert graph.successors == succ
    assert graph.left == left and graph.right == right
    assert graph.direction_errors() == errors


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_indexed_graph_equals_brute_force_on_templates(template_id):
    _assert_same_as_brute_force(list(loaded(template_id).lanes))


def test_indexed_graph_equals_brute_force_on_imported_maps(tmp_path):
    from simready.maps.xodr_import import import_opendrive
    from simready.testing.opendrive_cases import grid_city
    from simready.testing.opendrive_maps import write_all
    from simready.world.template_model import WorldTemplate

    files = dict(write_all(tmp_path))
    files["grid_city"] = tmp_path / "grid_city.xodr"
    files["grid_city"].write_bytes(grid_city(2))
    for name, path in sorted(files.items()):
        template = WorldTemplate.model_validate(import_opendrive(path, f"t_{name}").data)
        _assert_same_as_brute_force(list(template.lanes))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4), st.sampled_from((0, 90, 180, 270)),
                          st.sampled_from((10.0, 30.0)), st.sampled_from((3.0, 3.5))), min_size=1, max_size=12))
def test_indexed_graph_equals_brute_force_on_random_lanes(specs):
    lanes = []
    for i, (gx, gy, heading, length, width) in enumerate(specs):
        x, y, h = gx * 3.25, gy * 3.25, math.radians(heading)
        lanes.append(L(f"l{i:02d}", ((x, y), (x + length * math.cos(h), y + length * math.sin(h))), width))
    _assert_same_as_brute_force(lanes)
