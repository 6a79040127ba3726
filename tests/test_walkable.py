"""Walkable graph: paths, components, and its placement on sidewalks and crosswalks."""

from __future__ import annotations

import pytest

from simready.world.walkable import WalkGraph
from tests.fixtures.templates import TEMPLATE_IDS, loaded


def test_crossing_is_the_shortest_way_across():
    walk = loaded("residential_crosswalk_v3").walk_graph
    path = walk.shortest_path("ss_0", "sn_0")
    assert path == ["ss_0", "ss_20", "ss_40", "ss_60", "cw_s", "cw_n", "sn_60", "sn_40", "sn_20", "sn_0"]
    assert walk.path_length_m(path) == pytest.approx(60 + 1.4 + 8.7 + 1.4 + 60)
    assert walk.nearest_node(61.0, -4.0) == "cw_s"


@pytest.mark.parametrize("template_id", ["residential_crosswalk_v3", "urban_signalized_intersection"])
def test_walkable_graph_is_connected_where_crosswalks_exist(template_id):
    assert len(loaded(template_id).walk_graph.components()) == 1


def test_arterial_sidewalks_are_separate():
    comps = loaded("two_lane_arterial").walk_graph.components()
    assert [c[0] for c in comps] == ["sn_0", "ss_0"]


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_every_crossing_affordance_is_a_walkable_path(template_id):
    t = loaded(template_id)
    for a in t.affordances:
        if a.type == "pedestrian_crossing":
            assert all(t.walk_graph.has_edge(p, q) for p, q in zip(a.path, a.path[1:]))


def test_intersection_corner_to_corner_uses_a_crosswalk():
    walk = loaded("urban_signalized_intersection").walk_graph
    path = walk.shortest_path("se_corner", "sw_corner")
    assert path == ["se_corner", "se_s_cw", "cw_s_se", "cw_s_sw", "sw_s_cw", "sw_corner"]


def test_graph_basics():
    g = WalkGraph.build({"b": [1, 0], "a": [0, 0], "c": [5, 5]}, [["a", "b"]])
    assert list(g.nodes) == ["a", "b", "c"]
    assert g.shortest_path("a", "b") == ["a", "b"]
    assert g.shortest_path("a", "c") is None
    assert g.components() == [["a", "b"], ["c"]]
    with pytest.raises(KeyError):
        WalkGraph.build({"a": [0, 0]}, [["a", "z"]])
    with pytest.raises(KeyError):
        g.shortest_path("a", "z")
