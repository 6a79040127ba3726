"""Intents wherever a map allows them (issue 24 item 4, SPEC §18): each intent's feasibility line on a template that
lacks its affordance, samples on one that has it (hand-written and imported), and the suite check that refuses an
intent its template cannot support with that line, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenariogeneration import xodr

from simready.common import paths
from simready.maps.xodr_import import import_opendrive
from simready.scenario.batch import build_batch
from simready.scenario.generator import generate
from simready.scenario.programs import PROGRAMS
from simready.scenario.suite import SuiteError, check_intents, load_suite
from simready.sim.run import run_simulation
from simready.testing import opendrive_maps as maps
from simready.testing.xodr_build import four_way_junction, junction_arm, lane, one_road_map
from simready.world.affordances import AFFORDANCES, parking_sites
from simready.world.lane_graph import lane_network
from simready.world.template import canonical_dict, load_template, parse_template

LINES = {
    "cut_in": "no same-direction lanes ≥ 60 m where a lane change is allowed",
    "lead_vehicle_brakes": "no lane chain ≥ 170 m",
    "pedestrian_emerges_behind_van": "no crosswalk",
    "signalized_left_turn": "no junction joining ≥ 3 roads with traffic lights",
    "unprotected_left_turn": "no junction joining ≥ 3 roads without traffic lights",
}
#: Where the map has neither a parking area nor a kerb with a sidewalk (the imported junction has no sidewalks).
NO_VAN_SITE = "no parking lane, parking region or passable kerb with a sidewalk beside a driving lane"
#: A template that lacks each intent's affordance, and one that has it (the arterial has kerbs and sidewalks, no
#: crosswalk).
LACKS = {"cut_in": "urban_signalized_intersection", "lead_vehicle_brakes": "urban_signalized_intersection",
         "pedestrian_emerges_behind_van": "two_lane_arterial", "signalized_left_turn": "urban_unsignalized_intersection",
         "unprotected_left_turn": "urban_signalized_intersection"}
HAS = {"cut_in": "two_lane_arterial", "lead_vehicle_brakes": "two_lane_arterial",
       "pedestrian_emerges_behind_van": "residential_crosswalk_v3",
       "signalized_left_turn": "urban_signalized_intersection",
       "unprotected_left_turn": "urban_unsignalized_intersection"}


def _template(template_id: str):
    return load_template(paths.TEMPLATES_DIR / f"{template_id}.yaml")


def test_every_built_in_intent_declares_its_affordances() -> None:
    assert sorted(PROGRAMS) == sorted(LINES)


@pytest.mark.parametrize("intent", sorted(LINES))
def test_the_feasibility_line_where_the_map_lacks_the_affordance(intent: str) -> None:
    assert PROGRAMS[intent].feasibility(_template(LACKS[intent])) == LINES[intent]


@pytest.mark.parametrize("intent", sorted(LINES))
def test_samples_where_the_map_has_it(intent: str) -> None:
    template = _template(HAS[intent])
    assert PROGRAMS[intent].feasibility(template) is None
    result = generate(template.id, intent, 1, template=template)
    assert len(result.manifests) == 1


def test_the_unprotected_left_turn_yields_to_oncoming_traffic() -> None:
    template = _template("urban_unsignalized_intersection")
    (m,) = generate(template.id, "unprotected_left_turn", 1, template=template).manifests
    assert m.signal_programs == [] and m.realized["ego.route"] == ["s_in", "s_to_w", "w_out"]
    oncoming = next(a for a in m.actors if a.id == "oncoming")
    ego = next(a for a in m.actors if a.id == "ego")
    assert oncoming.behavior.rules.yield_ is False and ego.behavior.rules.yield_ is True
    net = lane_network(template)
    (c,) = [c for c in net.conflicts_of("s_to_w") if oncoming.behavior.route[1] in (c.a, c.b)]
    assert c.priority == oncoming.behavior.route[1] and c.rule == "default"
    sim = run_simulation(m, template, backend="kinematic-v1")
    assert sim.issues == []


def test_the_ego_route_is_drawn_when_the_templates_does_not_hold() -> None:
    """A template whose ego goes straight: the left turn draws its route from the lane graph, from the route stream;
    the same root gives the same route."""
    data = canonical_dict(_template("urban_unsignalized_intersection"))
    data["ego"]["route"] = ["s_in", "s_to_n", "n_out"]
    template = parse_template(data, "straight_ego.yaml")
    first = generate(template.id, "unprotected_left_turn", 3, template=template).manifests
    again = generate(template.id, "unprotected_left_turn", 3, template=template).manifests
    assert [m.realized["ego.route"] for m in first] == [m.realized["ego.route"] for m in again]
    lefts = {("e_in", "e_to_s", "s_out"), ("n_in", "n_to_e", "e_out"), ("s_in", "s_to_w", "w_out"),
             ("w_in", "w_to_n", "n_out")}
    for m in first:
        assert tuple(m.realized["ego.route"]) in lefts
        assert m.realized["cause/ego.route"].startswith("route | ")
        assert "route" in m.streams
        assert m.realized["ego.start_s_m"] == pytest.approx(5.0)  # 45 m before the 50 m approach's end


def test_the_kerbside_rule(monkeypatch) -> None:
    # The residential street's eastbound lane has its parking strips; its westbound lane a sidewalk at the kerb.
    sites = parking_sites(_template("residential_crosswalk_v3"))
    assert [(s.lane, s.kind, s.region) for s in sites] == [("lane_eb", "parking", "parking_strip"),
                                                           ("lane_eb", "parking", "parking_strip_east"),
                                                           ("lane_wb", "kerb", None)]
    # Every approach of the junction has a kerb with a sidewalk; the junction lanes never do.
    junction = parking_sites(_template("urban_signalized_intersection"))
    assert {s.lane for s in junction} == {f"{arm}_{d}" for arm in "nesw" for d in ("in", "out")}
    assert all(s.kind == "kerb" and (s.s0_m, s.s1_m) == (0.0, 50.0) for s in junction)
    assert parking_sites(_template("urban_signalized_intersection"), kerbside=False) == []
    assert AFFORDANCES["kerbside"][0](_template("urban_signalized_intersection"))
    # The passable width: each street's carriageway is 7 m, so a parked car (2.2 m + 0.2 m from the kerb) leaves
    # 4.6 m; a rule asking for 5 m finds no kerb.
    import simready.world.affordances as A
    # Sites are kept per template object and load_template hands out one object per file: a fresh cache per rule.
    monkeypatch.setattr(A, "_SITES", {})
    monkeypatch.setattr(A, "PASSABLE_WIDTH_M", 4.5)
    assert len(parking_sites(_template("urban_signalized_intersection"))) == 8
    monkeypatch.setattr(A, "_SITES", {})
    monkeypatch.setattr(A, "PASSABLE_WIDTH_M", 5.0)
    assert parking_sites(_template("urban_signalized_intersection")) == []


# --- suites -----------------------------------------------------------------------------------------------------


def _suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(f"suite_id: t\nbatches: 1\ntemplates:\n{body}")
    return path


def test_a_suite_naming_an_intent_its_template_cannot_support_is_one_line(tmp_path: Path) -> None:
    path = _suite(tmp_path, "  two_lane_arterial:\n    cut_in: 1\n    signalized_left_turn: 2\n")
    suite = load_suite(path)
    with pytest.raises(SuiteError) as err:
        check_intents(suite, path)
    line = str(err.value)
    assert "\n" not in line and "templates.two_lane_arterial.signalized_left_turn" in line
    assert line.endswith("signalized_left_turn cannot run on two_lane_arterial: "
                         "no junction joining ≥ 3 roads with traffic lights")
    with pytest.raises(SuiteError, match="unknown intent"):
        check_intents(load_suite(_suite(tmp_path, "  two_lane_arterial:\n    teleport: 1\n")), path)
    check_intents(load_suite(_suite(tmp_path, "  two_lane_arterial:\n    cut_in: 1\n")), path)
    check_intents(load_suite(), paths.SUITE_FILE)  # the default suite is feasible


def test_a_batch_refuses_it_too(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, "  two_lane_arterial:\n    signalized_left_turn: 1\n"))
    with pytest.raises(SuiteError, match="no junction joining ≥ 3 roads with traffic lights"):
        build_batch(suite, _template("two_lane_arterial"), "b0000", catalog=None)  # type: ignore[arg-type]


# --- imported maps -------------------------------------------------------------------------------------------------


def _junction_without_lights() -> bytes:
    """The four-way junction of :func:`simready.testing.opendrive_maps.junction_map` without its lights."""
    maps.fresh_ids()
    arms = [junction_arm(i + 1, maps.JUNCTION_ARM_M, lambda: [lane(xodr.LaneType.driving, 3.5)]) for i in range(4)]
    return four_way_junction("junction", arms, maps.JUNCTION_ARM_M, 14.0, None)


def _multi_lane_road() -> bytes:
    """A 200 m town road with two lanes each way."""
    road = xodr.create_road(xodr.Line(200.0), 1, left_lanes=2, right_lanes=2, lane_width=3.5)
    road.add_type(xodr.RoadType.town, 0, speed=50, speed_unit="km/h")
    return one_road_map("multilane", road)


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("xodr")
    files = maps.write_all(folder)
    (folder / "unsignalized.xodr").write_bytes(_junction_without_lights())
    (folder / "multilane.xodr").write_bytes(_multi_lane_road())
    files["unsignalized"] = folder / "unsignalized.xodr"
    files["multilane"] = folder / "multilane.xodr"
    out = {}
    for name in ("straight", "junction", "unsignalized", "multilane"):
        data = import_opendrive(files[name], f"imported_{name}").data
        out[name] = parse_template(data, f"imported_{name}.yaml")
    return out


#: Per imported map: the intents it supports (they sample), and the feasibility line of each it does not.
IMPORTED = {
    "straight": ({"pedestrian_emerges_behind_van"},
                 {"cut_in": LINES["cut_in"], "lead_vehicle_brakes": LINES["lead_vehicle_brakes"],
                  "signalized_left_turn": LINES["signalized_left_turn"],
                  "unprotected_left_turn": LINES["unprotected_left_turn"]}),
    "junction": ({"signalized_left_turn"}, {"cut_in": LINES["cut_in"], "unprotected_left_turn":
                                            LINES["unprotected_left_turn"], "pedestrian_emerges_behind_van":
                                            NO_VAN_SITE}),
    "unsignalized": ({"unprotected_left_turn"}, {"signalized_left_turn": LINES["signalized_left_turn"]}),
    "multilane": ({"cut_in", "lead_vehicle_brakes"}, {"unprotected_left_turn": LINES["unprotected_left_turn"]}),
}


@pytest.mark.parametrize("name", sorted(IMPORTED))
def test_intents_on_imported_maps(imported, name: str) -> None:
    template = imported[name]
    supported, lines = IMPORTED[name]
    for intent, line in lines.items():
        assert PROGRAMS[intent].feasibility(template) == line, intent
    for intent in sorted(supported):
        assert PROGRAMS[intent].feasibility(template) is None
        result = generate(template.id, intent, 2, template=template)
        assert len(result.manifests) == 2, intent
        sim = run_simulation(result.manifests[0], template, backend="kinematic-v1")
        assert sim.issues == [], intent


def test_an_imported_junction_is_one_junction_of_four_roads(imported) -> None:
    for name, signalized in (("junction", True), ("unsignalized", False)):
        net = lane_network(imported[name])
        (junction,) = net.junctions.values()
        assert (junction.arms, junction.signalized, len(junction.approaches)) == (4, signalized, 4)
        assert sorted(net.turns.values()).count("left") == 4


@pytest.mark.slow
def test_make_run_refuses_such_a_suite_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    suite = _suite(tmp_path, "  two_lane_arterial:\n    unprotected_left_turn: 1\n")
    env = {**os.environ, "SIMREADY_SUITE": str(suite), "DAGSTER_HOME": str(tmp_path / "dagster_home"),
           "SIMREADY_ARTIFACTS": str(tmp_path / "artifacts")}
    done = subprocess.run([sys.executable, "-m", "simready.cli", "run", "--quiet"], env=env, capture_output=True,
                          text=True, cwd=paths.PROJECT_ROOT, timeout=300)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(err) == 1, done.stderr
    assert err[0].endswith("unprotected_left_turn cannot run on two_lane_arterial: "
                           "no junction joining ≥ 3 roads without traffic lights")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite.yaml"]


def test_multi_lane_stretches_are_computed_once_per_network_and_handed_out_as_copies():
    from simready.world import affordances
    from simready.world.lane_graph import lane_network
    from tests.fixtures.sim import template

    net = lane_network(template("two_lane_arterial"))
    first = affordances.multi_lane_stretches(net)
    assert first and first == affordances._multi_lane_stretches(net)
    first.clear()  # a caller's edit never reaches the next caller
    assert affordances.multi_lane_stretches(net) == affordances._multi_lane_stretches(net)
    assert affordances._STRETCHES[id(net)][0] is net
