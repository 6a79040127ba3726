"""Bad template inputs: each raises one TemplateError naming the file and the field path."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from simready.common.errors import TemplateError
from simready.world.template import load_template, validate_references
from tests.fixtures.templates import loaded, raw, template_path, write_yaml

BOWTIE = [[0, 0], [10, 10], [10, 0], [0, 10]]


def _set(path: list[Any], value: Any) -> Callable[[dict], None]:
    def mutate(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


def _delete(path: list[Any]) -> Callable[[dict], None]:
    def mutate(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


def _reverse_lane(index: int) -> Callable[[dict], None]:
    def mutate(doc: dict) -> None:
        doc["lanes"][index]["polyline"] = doc["lanes"][index]["polyline"][::-1]

    return mutate


def _rename_lane_ref(doc: dict) -> None:
    doc["ego"]["route"] = ["lane_nope"]


def _duplicate_region(doc: dict) -> None:
    doc["regions"].append(copy.deepcopy(doc["regions"][0]))


def _lane_index(doc: dict, lane_id: str) -> int:
    return next(i for i, lane in enumerate(doc["lanes"]) if lane["id"] == lane_id)


RESIDENTIAL_CASES = [
    ("missing field", _delete(["lanes", 0, "width_m"]), "lanes[0].width_m", "required field missing"),
    ("wrong type", _set(["lanes", 1, "width_m"], "wide"), "lanes[1].width_m", "valid number"),
    ("quoted number", _set(["ego", "start_s_m"], "10"), "ego.start_s_m", "valid number"),
    ("unknown field", _set(["ego", "colour"], "red"), "ego.colour", "unknown field"),
    ("self-intersecting polygon", _set(["regions", 2, "polygon"], BOWTIE), "regions[2].polygon", "Self-intersection"),
    ("degenerate polygon", _set(["regions", 2, "polygon"], [[0, 0], [1, 1], [2, 2]]), "regions[2].polygon", "Self-intersection"),
    ("tiny polygon", _set(["regions", 2, "polygon"], [[0, 0], [0.05, 0], [0.05, 0.05]]), "regions[2].polygon", "below the minimum"),
    ("feet", _set(["coordinates", "unit"], "foot"), "coordinates.unit", "SI metres"),
    ("y up", _set(["coordinates", "up"], "y"), "coordinates.up", "z-up"),
    ("left handed", _set(["coordinates", "handedness"], "left"), "coordinates.handedness", "right-handed"),
    ("unknown ego lane", _rename_lane_ref, "ego.route[0]", "unknown lane 'lane_nope'"),
    ("unknown lane region", _set(["lanes", 0, "region"], "nowhere"), "lanes[0].region", "unknown region 'nowhere'"),
    ("lane on a sidewalk", _set(["lanes", 0, "region"], "sidewalk_north"), "lanes[0].region", "not a drivable surface"),
    ("lane outside its region", _set(["lanes", 0, "polyline"], [[0, -20], [120, -20]]), "lanes[0].polyline", "leaves region"),
    ("unknown mount", _set(["sensor_rig", "sensors", "roof_lidar", "mount"], "roof"), "sensor_rig.sensors.roof_lidar.mount", "unknown mount 'roof'"),
    ("mount of another type", _set(["sensor_rig", "sensors", "roof_lidar", "mount"], "front_radar"), "sensor_rig.sensors.roof_lidar.mount", "radar mount"),
    ("camera near >= far", _set(["sensor_rig", "sensors", "front_camera", "near_m"], 500.0), "sensor_rig.sensors.front_camera", "near_m"),
    ("readout too slow", _set(["sensor_rig", "sensors", "front_camera", "line_time_s"], 1e-3), "sensor_rig.sensors.front_camera", "rolling readout"),
    ("unknown sensor type", _set(["sensor_rig", "sensors", "roof_lidar", "type"], "sonar"), "sensor_rig.sensors.roof_lidar", "does not match"),
    ("duplicate region id", _duplicate_region, "regions[14].id", "duplicate id 'roadway'"),
    ("adjacent not touching", _set(["relations", 3], {"type": "adjacent", "a": "sidewalk_south", "b": "sidewalk_north"}), "relations[3]", "apart"),
    ("connects a non-crosswalk", _set(["relations", 4, "route"], "roadway"), "relations[4].route", "expected crosswalk"),
    ("parked_on unknown instance", _set(["relations", 5, "instance"], "ghost"), "relations[5].instance", "unknown instance 'ghost'"),
    ("parked off its region", _set(["instances", 10, "pose", "x"], 60.0), "relations[5]", "not on region"),
    ("walkable node off the sidewalk", _set(["walkable", "nodes", "ss_20"], [20, 0]), "walkable.nodes.ss_20", "outside every sidewalk"),
    ("walkable edge to nowhere", _set(["walkable", "edges", 0], ["ss_0", "zz"]), "walkable.edges[0][1]", "unknown walkable node 'zz'"),
    ("ego start past the lane", _set(["ego", "start_s_m"], 500.0), "ego.start_s_m", "beyond the end of lane"),
    ("spawn range inverted", _set(["affordances", 5, "s_range_m"], [50.0, 20.0]), "affordances[5].s_range_m", "lo < hi"),
    ("spawn region not walkable", _set(["affordances", 0, "region"], "roadway"), "affordances[0].region", "expected sidewalk or crosswalk"),
    ("bad asset id", _set(["instances", 0, "asset"], "road tile"), "instances[0].asset", "should match pattern"),
    ("repeat count zero", _set(["instances", 0, "repeat", "count"], 0), "instances[0].repeat.count", "greater than 0"),
    ("duplicate instance after repeat", _set(["instances", 5, "name"], "curb_south_2"), "instances[5].name", "duplicate instance name"),
    ("schema from the future", _set(["schema_version"], 2), "schema_version", "not supported"),
    ("unknown relation type", _set(["relations", 0, "type"], "near"), "relations[0]", "does not match any of the expected tags"),
]


@pytest.mark.parametrize("case, mutate, field, reason", RESIDENTIAL_CASES, ids=[c[0] for c in RESIDENTIAL_CASES])
def test_bad_residential_input(tmp_path, case, mutate, field, reason):
    doc = raw("residential_crosswalk_v3")
    mutate(doc)
    path = write_yaml(tmp_path / "bad.yaml", doc)
    with pytest.raises(TemplateError) as info:
        load_template(path)
    err = info.value
    assert err.field == field, err.one_line()
    assert reason in err.reason, err.one_line()
    line = err.one_line()
    assert "\n" not in line and line.startswith(f"{path}: {field}: ")


def test_reversed_connector_is_an_error(tmp_path):
    doc = raw("urban_signalized_intersection")
    i = _lane_index(doc, "s_to_w")
    _reverse_lane(i)(doc)
    with pytest.raises(TemplateError) as info:
        load_template(write_yaml(tmp_path / "rev.yaml", doc))
    assert info.value.field == f"lanes[{i}].polyline"
    assert "against its direction" in info.value.reason


def test_unknown_signal_lane(tmp_path):
    doc = raw("urban_signalized_intersection")
    doc["signals"][2]["controls"] = ["n_in", "x_in"]
    with pytest.raises(TemplateError) as info:
        load_template(write_yaml(tmp_path / "sig.yaml", doc))
    assert info.value.field == "signals[2].controls[1]"


def test_ego_route_must_follow_derived_successors(tmp_path):
    doc = raw("urban_signalized_intersection")
    doc["ego"]["route"] = ["s_in", "s_to_w", "e_out"]
    with pytest.raises(TemplateError) as info:
        load_template(write_yaml(tmp_path / "route.yaml", doc))
    assert info.value.field == "ego.route[2]"
    assert "not a successor of 's_to_w'" in info.value.reason


def test_malformed_yaml_names_the_line(tmp_path):
    text = template_path("residential_crosswalk_v3").read_text().splitlines()
    text[30] = text[30] + " ]]"
    path = tmp_path / "broken.yaml"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(TemplateError) as info:
        load_template(path)
    line = info.value.one_line()
    assert line.startswith(f"{path}: malformed YAML at line 31")
    assert "\n" not in line


def test_duplicate_yaml_key_is_refused(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text(template_path("residential_crosswalk_v3").read_text() + "\nversion: 4\n")
    with pytest.raises(TemplateError) as info:
        load_template(path)
    assert info.value.field == "version" and "duplicate key" in info.value.reason


def test_field_errors_carry_the_yaml_line(tmp_path):
    text = template_path("residential_crosswalk_v3").read_text()
    path = tmp_path / "feet.yaml"
    path.write_text(text.replace("unit: meter", "unit: foot"))
    line_no = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("coordinates:"))
    with pytest.raises(TemplateError) as info:
        load_template(path)
    assert info.value.reason.endswith(f"(line {line_no})")


def test_missing_file_and_non_mapping(tmp_path):
    with pytest.raises(TemplateError, match="file not found"):
        load_template(tmp_path / "absent.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(TemplateError, match="mapping at the top level"):
        load_template(tmp_path / "list.yaml")


def test_unknown_asset_is_a_reference_error():
    t = loaded("residential_crosswalk_v3")
    certified = {i.asset for i in t.instances} | {t.ego.asset}
    certified.discard("asset:sedan/grey")
    errors = validate_references(t, certified, None)
    assert len(errors) == 1
    err = errors[0]
    index = next(i for i, inst in enumerate(raw("residential_crosswalk_v3")["instances"]) if inst["name"] == "parked_sedan_east")
    assert err.field == f"instances[{index}].asset"
    assert err.one_line().startswith(f"{template_path('residential_crosswalk_v3')}: instances[{index}].asset: unknown asset asset:sedan/grey")


def test_uncertified_repeated_asset_reports_once_and_ego_too():
    t = loaded("residential_crosswalk_v3")
    contracts = {a: {} for a in {i.asset for i in t.instances} | {t.ego.asset}}
    certified = set(contracts) - {"asset:curb/segment_10m", "asset:shuttle/standard"}
    errors = validate_references(t, certified, contracts)
    assert [e.field for e in errors] == ["instances[1].asset", "instances[2].asset", "ego.asset"]
    assert all("exists but is not certified" in e.reason for e in errors)


def test_rig_mount_must_match_the_ego_contract():
    t = loaded("residential_crosswalk_v3")
    certified = {i.asset for i in t.instances} | {t.ego.asset}
    good = {t.ego.asset: {"ontology_version": "1.0.0", "mounts": {"front_camera": {"translation_m": [1.82, 0.0, 1.45]}}}}
    assert validate_references(t, certified, good) == []
    bad = {t.ego.asset: {"mounts": {"front_camera": {"translation_m": [1.8, 0.0, 1.55]}, "roof_lidar": {"translation_m": [0.9, 0, 2.55]}}}}
    errors = validate_references(t, certified, bad)
    assert [e.field for e in errors] == ["sensor_rig.mounts.front_camera.translation_m"]
    assert "0.100 m from" in errors[0].reason
    other = {t.ego.asset: {"ontology_version": "2.0.0"}}
    assert [e.field for e in validate_references(t, certified, other)] == ["ontology_version"]
