"""Scenarios on imported maps (issue 17): the import finds an ego route the intent accepts, the sampler samples
on it, and the rollouts run on the imported template."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from shapely.geometry import Point

from simready.maps.errors import MapError
from simready.maps.sites import candidate_routes, fit_intent
from simready.maps.template_yaml import template_yaml
from simready.maps.xodr_import import import_opendrive
from simready.scenario.generator import generate
from simready.scenario.suite import load_suite
from simready.sim.run import run_simulation
from simready.testing import opendrive_maps as maps
from simready.world.template import parse_template


@pytest.fixture(scope="module")
def map_files(tmp_path_factory) -> dict[str, Path]:
    return maps.write_all(tmp_path_factory.mktemp("xodr"))


def _fitted(path: Path, intent: str, template_id: str):
    data, lines = fit_intent(import_opendrive(path, template_id).data, intent)
    return parse_template(data, f"{template_id}.yaml"), data, lines


def _ego_travel_m(result) -> float:
    df = result.trace.df
    ego = df[df["actor_id"] == "ego"]
    return float(np.hypot(ego["x"].iloc[-1] - ego["x"].iloc[0], ego["y"].iloc[-1] - ego["y"].iloc[0]))


def test_occluded_crossing_on_the_imported_straight_road(map_files):
    template, _, lines = _fitted(map_files["straight"], "pedestrian_emerges_behind_van", "imported_straight")
    # The eastbound lane (-1) runs beside the parking lane towards the crosswalk; the westbound lane does not.
    assert template.ego.route == ("road1_sec0_lane-1",)
    assert "fits: road1_sec0_lane-1" in lines[0]
    result = generate(template.id, "pedestrian_emerges_behind_van", 2, template=template)
    assert len(result.manifests) == 2
    for m in result.manifests:
        van = next(a for a in m.actors if a.id == "van")
        ped = next(a for a in m.actors if a.kind == "pedestrian")
        parking = template.region_by_id["road1_sec0_lane-2"].shape
        sidewalk = template.region_by_id["road1_sec0_lane-3"].shape
        assert parking.buffer(0.05).contains(Point(van.initial.pose.x, van.initial.pose.y))
        assert sidewalk.buffer(0.05).contains(Point(ped.initial.pose.x, ped.initial.pose.y))
    sim = run_simulation(result.manifests[0], template, backend="kinematic-v1")
    assert sim.issues == []
    assert _ego_travel_m(sim) > 20.0


def test_signalized_left_turn_on_the_imported_junction(map_files):
    template, _, _ = _fitted(map_files["junction"], "signalized_left_turn", "imported_junction")
    result = generate(template.id, "signalized_left_turn", 2, template=template)
    assert len(result.manifests) == 2
    m = result.manifests[0]
    # The ego route is drawn from the lane graph per sample (issue 24): the template's one lane does not turn left.
    route = m.realized["ego.route"]
    assert len(route) == 3 and tuple(route) != template.ego.route
    turn = template.lane_graph.lane(route[1])
    assert turn.kind == "turn" and template.region_by_id[route[1]].type == "intersection"
    assert any(route[0] in s.controls for s in template.signals)
    assert {p.id for p in m.signal_programs} <= {s.id for s in template.signals}
    sim = run_simulation(m, template, backend="kinematic-v1")
    assert sim.issues == []
    assert _ego_travel_m(sim) > 10.0


def test_an_intent_no_route_fits_is_one_line(map_files):
    data = import_opendrive(map_files["straight"], "imported_straight").data
    assert len(candidate_routes(data)) == 2
    # One lane each way: no same-direction lanes to cut in from (the intent's feasibility line, issue 24).
    with pytest.raises(MapError, match=r"none of 2 candidate ego routes fits intent 'cut_in' \(first reason: .*no "
                                       r"same-direction lanes ≥ 60 m where a lane change is allowed"):
        fit_intent(data, "cut_in")


def test_a_suite_can_name_an_imported_template(map_files, tmp_path):
    templates = tmp_path / "templates"
    templates.mkdir()
    _, data, _ = _fitted(map_files["junction"], "signalized_left_turn", "imported_junction")
    (templates / "imported_junction.yaml").write_text(template_yaml(data))
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite_id: imported\nbatches: 1\ntemplates:\n  imported_junction:\n    signalized_left_turn: 2\n")
    loaded = load_suite(suite, templates_dir=templates)
    assert loaded.intents_for("imported_junction") == {"signalized_left_turn": 2}
