"""Real-world OpenDRIVE failures (issue 24), each reproduced by a map written with scenariogeneration: the map
imports, the repair is reported, and lanes, successors, heights, signals and lane facts match analytic values."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready.maps import opendrive
from simready.maps.errors import MapError
from simready.maps.xodr_import import ImportedMap, import_opendrive
from simready.testing import opendrive_cases as cases
from simready.testing.xodr_build import lane, lanes_of, one_road_map, plan_view, section, xml_bytes
from simready.world.template import canonical_dict, load_template, parse_template
from simready.world.template_model import WorldTemplate

#: Chord tolerance (2 mm) plus output rounding and slack (m).
TOL_M = 0.01


def _import(tmp_path: Path, name: str, data: bytes) -> tuple[ImportedMap, WorldTemplate]:
    path = tmp_path / f"{name}.xodr"
    path.write_bytes(data)
    result = import_opendrive(path, name)
    return result, parse_template(result.data)


def _lane(t: WorldTemplate, lane_id: str):
    return next(lane for lane in t.lanes if lane.id == lane_id)


def test_a_lane_folded_round_a_tight_corner_is_cut_to_its_valid_part(tmp_path):
    result, t = _import(tmp_path, "corner", cases.tight_corner())
    lines = result.report.repairs
    assert len(lines) == 1, lines
    assert re.match(r"road 1, laneSection s=0, lane 2 \(line \d+\): folded outline \(Self-intersection.*\) cut to its "
                    r"valid part: [\d.]+ m\^2 kept", lines[0]), lines[0]
    assert any(line.startswith("repair: road 1, laneSection s=0, lane 2") for line in result.report.lines())
    assert {lane.id for lane in t.lanes} == {"road1_sec0_lane-1", "road1_sec0_lane1", "road1_sec0_lane2"}
    r, w, lead = cases.CORNER["radius"], cases.CORNER["width"], cases.CORNER["lead"]
    centre = np.array([lead, r])  # the bend's centre: the road runs east from (0, 0) and turns left
    for lane_id, t_off in (("road1_sec0_lane-1", -w / 2), ("road1_sec0_lane1", w / 2), ("road1_sec0_lane2", 1.5 * w)):
        pts = np.array(_lane(t, lane_id).polyline)
        in_bend = pts[(pts[:, 0] > lead + 1e-6) & (pts[:, 1] < r - 1e-6)]
        assert len(in_bend) > 5
        assert np.abs(np.hypot(*(in_bend - centre).T) - abs(r - t_off)).max() <= TOL_M, lane_id
    # The cut region keeps the lane's sweep: both straights in full (3 m wide), and in the bend no more than the
    # quarter discs the lane's borders reach round the centre (inner border radius r - w = 2 m, far border 1 m past it).
    region = t.region_by_id["road1_sec0_lane2"].shape
    straights = 2 * lead * w
    assert region.is_valid
    assert straights - 0.05 <= region.area <= straights + math.pi / 4 * ((r - w) ** 2 + (2 * w - r) ** 2) + 0.05


def test_a_highway_connection_between_lanes_of_opposite_sign_runs_the_way_it_is_entered(tmp_path):
    result, t = _import(tmp_path, "highway", cases.opposite_sign_highway())
    h = cases.HIGHWAY
    for lane_id, y in (("road100_sec0_lane2", -h["width"] / 2), ("road100_sec0_lane1", -1.5 * h["width"])):
        pts = np.array(_lane(t, lane_id).polyline)
        assert pts[0] == pytest.approx([h["in"], y], abs=TOL_M)
        assert pts[-1] == pytest.approx([h["in"] + h["connect"], y], abs=TOL_M)
    graph = t.lane_graph
    assert graph.successors["road1_sec0_lane-1"] == ("road100_sec0_lane2",)
    assert graph.successors["road100_sec0_lane2"] == ("road2_sec0_lane-1",)
    assert graph.successors["road1_sec0_lane-2"] == ("road100_sec0_lane1",)
    assert graph.successors["road100_sec0_lane1"] == ("road2_sec0_lane-2",)
    assert any("2 junction lane(s) run against their id's sign" in line for line in result.report.link_mismatches)
    # The connecting road declares no lane successors: the geometric ones are reported, not refused.
    assert any(line.startswith("lane road100_sec0_lane2: file links [], geometry joins ['road2_sec0_lane-1']")
               for line in result.report.link_mismatches)
    assert graph.route("road1_sec0_lane-1", "road2_sec0_lane-1") == [
        "road1_sec0_lane-1", "road100_sec0_lane2", "road2_sec0_lane-1"]


def test_a_stop_line_past_its_lane_section_is_clamped_and_reported(tmp_path):
    result, t = _import(tmp_path, "stop_past", cases.stop_line_past_section())
    (signal,) = t.signals
    assert signal.controls == ("road1_sec0_lane-2",)
    assert signal.stop_line.lane == "road1_sec0_lane-2"
    assert signal.stop_line.s_m == pytest.approx(cases.STOP_PAST["section"], abs=0.02)
    assert signal.stop_line.s_m <= t.lane_graph.lanes["road1_sec0_lane-2"].length_m
    assert any(re.match(r"road 1: signal at s=70 is past the end of lane section s=0 .*: stop line clamped to s=50",
                        line) for line in result.report.repairs), result.report.repairs


def test_lights_without_validity_or_orientation_bind_through_their_junctions_controller(tmp_path):
    result, t = _import(tmp_path, "controllers", cases.controller_lights())
    by_id = {s.id: s for s in t.signals}
    assert sorted(by_id) == ["signal_11", "signal_21", "signal_31", "signal_41"]
    for arm in (1, 2, 3, 4):
        sig = by_id[f"signal_{arm}1"]
        # Arms end at the junction (successor): lane -1 runs along s into it.
        assert sig.controls == (f"road{arm}_sec0_lane-1",)
        assert sig.stop_line.s_m == pytest.approx(59.0, abs=TOL_M)
    # Controller c_ew (arms 1, 3) runs first, c_ns (arms 2, 4) half a cycle later: one signal group each.
    cycle = by_id["signal_11"].cycle_s
    assert by_id["signal_11"].offset_s == by_id["signal_31"].offset_s == 0.0
    assert by_id["signal_21"].offset_s == by_id["signal_41"].offset_s == pytest.approx(cycle / 2)
    assert by_id["signal_11"].state_at(1.0) == "green" and by_id["signal_21"].state_at(1.0) == "red"
    assert any("bound through their junction's controller x4" in line for line in result.report.skipped)


def test_elevation_superelevation_and_kerb_give_lanes_and_regions_their_height(tmp_path):
    result, t = _import(tmp_path, "crest", cases.crest_road())
    c = cases.CREST
    a, b, cc, d = c["elevation"]
    tan = math.tan(c["superelevation"])

    def elev(s):
        return a + s * (b + s * (cc + s * d))

    w1, wm1, wm2 = c["widths"][1], c["widths"][-1], c["widths"][-2]
    for lane_id, t_off in (("road1_sec0_lane-1", -wm1 / 2), ("road1_sec0_lane1", w1 / 2)):
        lane = _lane(t, lane_id)
        assert lane.z is not None and len(lane.z) == len(lane.polyline)
        for (x, _y), z in zip(lane.polyline, lane.z):
            assert z == pytest.approx(elev(x) + t_off * tan, abs=1e-3)
    # The crest: highest at s = -b / (2c) = 50 m.
    zs = np.array(_lane(t, "road1_sec0_lane-1").z)
    xs = np.array(_lane(t, "road1_sec0_lane-1").polyline)[:, 0]
    assert xs[int(np.argmax(zs))] == pytest.approx(-b / (2 * cc), abs=2.0)
    sidewalk = t.region_by_id["road1_sec0_lane-2"]
    assert sidewalk.z is not None
    for (x, y), z in zip(sidewalk.polygon, sidewalk.z):
        # y is the lateral offset on this straight road: the kerb lifts the whole sidewalk.
        assert z == pytest.approx(elev(x) + y * tan + c["kerb"], abs=1e-3)
    assert -(wm1 + wm2) - TOL_M <= min(y for _x, y in sidewalk.polygon)
    centre = next(m for m in t.markings if m.id == "mark_road1_sec0_centre")
    assert centre.z is not None
    for (x, _y), z in zip(centre.polyline, centre.z):
        assert z == pytest.approx(elev(x), abs=1e-3)
    # Flat maps carry no heights at all.
    flat, _ = _import(tmp_path, "flat", cases.marked_road("broken"))
    assert all("z" not in lane for lane in flat.data["lanes"])
    assert all("z" not in region for region in flat.data["regions"])


@pytest.mark.parametrize(("mark", "right_of_minus1", "left_of_minus2"), [
    ("broken", True, True), ("solid", False, False),
    # Read inner line first: the solid line faces lane -1, the broken one lane -2.
    ("solid broken", False, True), ("broken solid", True, False)])
def test_road_marks_give_lane_change_permission(tmp_path, mark, right_of_minus1, left_of_minus2):
    result, t = _import(tmp_path, "marked", cases.marked_road(mark))
    inner, outer = _lane(t, "road1_sec0_lane-1"), _lane(t, "road1_sec0_lane-2")
    assert inner.change_right is right_of_minus1 and inner.change_left is None
    assert outer.change_left is left_of_minus2 and outer.change_right is None
    # Lane 1 runs the other way: no same-direction neighbour, no permission recorded.
    assert _lane(t, "road1_sec0_lane1").change_left is None
    marks = {m.id: m for m in t.markings}
    assert marks["mark_road1_sec0_lane-1"].type == mark
    line = np.array(marks["mark_road1_sec0_lane-1"].polyline)
    assert np.abs(line[:, 1] + 3.5).max() <= TOL_M  # the border between lanes -1 and -2
    assert marks["mark_road1_sec0_centre"].type == "broken"


def test_stop_and_speed_signs_become_lane_facts_and_parking_spaces_regions(tmp_path):
    result, t = _import(tmp_path, "signs", cases.marked_road("broken", signs=True))
    assert _lane(t, "road1_sec0_lane-1").right_of_way == "stop"
    assert _lane(t, "road1_sec0_lane-2").right_of_way == "stop"
    assert _lane(t, "road1_sec0_lane1").right_of_way is None
    assert _lane(t, "road1_sec0_lane-1").speed_limit_mps == pytest.approx(cases.SIGNS["speed_kmh"] / 3.6, abs=1e-3)
    assert _lane(t, "road1_sec0_lane-2").speed_limit_mps == pytest.approx(13.9)
    space = t.region_by_id["parking_1_p1"]
    assert space.type == "parking"
    assert space.shape.area == pytest.approx(cases.SIGNS["parking"][0] * cases.SIGNS["parking"][1], rel=1e-3)
    assert any(a.id == "parking_parking_1_p1" for a in t.affordances)


def test_new_optional_fields_leave_hand_written_templates_canonical_form_alone():
    for path in sorted(Path("data/templates").glob("*.yaml")):
        data = canonical_dict(load_template(path))
        if "source" in (data.get("provenance") or {}):
            continue  # imported from a map: its marks and heights are the point
        assert "markings" not in data
        for lane in data["lanes"]:
            assert not {"z", "change_left", "change_right", "right_of_way"} & set(lane)
        assert all("z" not in region for region in data["regions"])


def test_limits_are_checked_before_the_work(tmp_path, monkeypatch):
    curved = tmp_path / "c.xodr"
    curved.write_bytes(cases.marked_road("broken"))
    monkeypatch.setitem(opendrive.LIMITS, "geometries per map", 0)
    with pytest.raises(MapError, match=r"geometries per map 1 is over the limit of 0"):
        import_opendrive(curved, "c")


def test_a_huge_curvature_is_bounded_work_and_one_line(tmp_path):
    text = cases.marked_road("broken").decode().replace("<line/>", '<arc curvature="1e12"/>')
    path = tmp_path / "arc.xodr"
    path.write_text(text)
    with pytest.raises(MapError, match=r"no drivable lane in 1 road\(s\): 1 repair\(s\) left nothing drivable "
                                      r"\(first: road 1, geometry s=0: curvature 1e\+12 1/m .* is not a road: road left out"):
        import_opendrive(path, "arc")


def _bend(curvature: float, left: list[float], right: list[float]) -> bytes:
    from scenariogeneration import xodr

    lanes = lanes_of(section(0, [lane(xodr.LaneType.driving, w) for w in left],
                             [lane(xodr.LaneType.driving, w) for w in right]))
    geoms = [xodr.Line(10.0), xodr.Arc(curvature, angle=math.pi / 2) if curvature else xodr.Line(20.0), xodr.Line(10.0)]
    return one_road_map("bend", xodr.Road(1, plan_view(geoms), lanes))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(curvature=st.sampled_from([0.0, 0.05, -0.05, 0.2, -0.2, 0.5, -0.5]),
       left=st.lists(st.floats(2.0, 6.0), min_size=1, max_size=3),
       right=st.lists(st.floats(2.0, 6.0), min_size=1, max_size=3))
def test_no_lane_refuses_a_bend_every_lane_is_imported_or_reported(tmp_path, curvature, left, right):
    """Any bend, however tight for its lanes: the template validates, and each lane is imported or has its line."""
    path = tmp_path / "bend.xodr"
    path.write_bytes(_bend(curvature, left, right))
    result = import_opendrive(path, "bend")
    template = parse_template(result.data)
    imported = {lane.id for lane in template.lanes}
    for lane_id in [k + 1 for k in range(len(left))] + [-(k + 1) for k in range(len(right))]:
        if f"road1_sec0_lane{lane_id}" not in imported:
            assert any(line.startswith(f"road 1, laneSection s=0, lane {lane_id} ") for line in result.report.repairs), \
                (lane_id, result.report.repairs)
    # Lanes on the outside of the bend (and any lane on a straight) never need a repair.
    outside = right if curvature > 0 else left if curvature < 0 else left + right
    sign = -1 if curvature > 0 else 1
    for k in range(len(outside) if curvature else 0):
        assert f"road1_sec0_lane{sign * (k + 1)}" in imported


def test_a_ring_road_is_imported_as_two_halves_that_follow_each_other(tmp_path):
    from scenariogeneration import xodr

    radius = 30.0
    odr = xodr.OpenDrive("ring")
    odr.add_road(xodr.create_road(xodr.Arc(1.0 / radius, angle=2 * math.pi), 1, left_lanes=1, right_lanes=1,
                                  lane_width=3.5))
    odr.adjust_roads_and_lanes()
    result, t = _import(tmp_path, "ring", xml_bytes(odr))
    ids = {lane.id for lane in t.lanes}
    assert ids == {"road1_sec0_lane-1_a", "road1_sec0_lane-1_b", "road1_sec0_lane1_a", "road1_sec0_lane1_b"}
    graph = t.lane_graph
    assert graph.successors["road1_sec0_lane-1_a"] == ("road1_sec0_lane-1_b",)
    assert graph.successors["road1_sec0_lane-1_b"] == ("road1_sec0_lane-1_a",)
    centre = np.array([0.0, radius])
    for lane_id in ids:
        pts = np.array(_lane(t, lane_id).polyline)
        expected = radius + (1.75 if "lane-1" in lane_id else -1.75)
        assert np.abs(np.hypot(*(pts - centre).T) - expected).max() <= TOL_M
    assert any("close on themselves (ring, cul-de-sac): imported as two halves" in line for line in result.report.skipped)


def test_a_lane_that_closes_and_opens_again_is_imported_per_open_stretch(tmp_path):
    from scenariogeneration import xodr

    # Lane -2: 3 m wide to s = 30, closed (0 m) from 40 to 60, 3 m again from 70 (cubic transitions of 10 m).
    closing = xodr.Lane(lane_type=xodr.LaneType.driving, a=3.0)
    closing.add_lane_width(3.0, 0.0, -3 * 3.0 / 100, 2 * 3.0 / 1000, soffset=30.0)
    closing.add_lane_width(0.0, 0.0, 0.0, 0.0, soffset=40.0)
    closing.add_lane_width(0.0, 0.0, 3 * 3.0 / 100, -2 * 3.0 / 1000, soffset=60.0)
    closing.add_lane_width(3.0, 0.0, 0.0, 0.0, soffset=70.0)
    closing.add_roadmark(xodr.std_roadmark_solid())
    lanes = lanes_of(section(0, [lane(xodr.LaneType.driving, 3.5)], [lane(xodr.LaneType.driving, 3.5), closing]))
    result, t = _import(tmp_path, "gap", one_road_map("gap", xodr.Road(1, plan_view([xodr.Line(100.0)]), lanes)))
    first, second = _lane(t, "road1_sec0_lane-2_p0"), _lane(t, "road1_sec0_lane-2_p1")
    assert first.polyline[0][0] == pytest.approx(0.0) and first.polyline[-1][0] == pytest.approx(40.0, abs=2.0)
    assert second.polyline[0][0] == pytest.approx(60.0, abs=2.0) and second.polyline[-1][0] == pytest.approx(100.0)
    assert result.report.repairs == []


def test_the_command_imports_a_repaired_map_and_prints_each_repair(tmp_path, capsys):
    from simready.cli import main

    src = tmp_path / "corner.xodr"
    src.write_bytes(cases.tight_corner())
    out = tmp_path / "corner.yaml"
    rc = main(["template", "import", str(src), "--id", "corner", "--out", str(out)])
    printed = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert any(re.match(r"repair: road 1, laneSection s=0, lane 2 \(line \d+\): folded outline", line) for line in printed)
    template = load_template(out)
    assert template.provenance is not None
    assert any(line.startswith("repair: road 1, laneSection s=0, lane 2") for line in template.provenance.skipped)


def test_a_centreline_folded_round_a_tight_corner_has_its_loop_cut_out(tmp_path):
    # Lanes 3.5 m wide: lane 2's centre (5.25 m) lies past the 5 m bend's centre, so the centre itself folds.
    result, t = _import(tmp_path, "corner35", cases.tight_corner(3.5))
    lane = _lane(t, "road1_sec0_lane2")
    assert any(re.match(r"road 1, laneSection s=0, lane 2 \(line \d+\): centreline folded back on itself: its loop "
                        r"\([\d.]+ of [\d.]+ m\) cut out", line) for line in result.report.repairs), result.report.repairs
    pts = np.array(lane.polyline)
    # Travel order (lane 2 runs against s): from the end of the northward straight (x = 20 + 5 - 5.25) back to the
    # start (y = 5.25).
    lead, r = cases.CORNER["lead"], cases.CORNER["radius"]
    assert pts[0] == pytest.approx([lead + r - 5.25, r + lead], abs=TOL_M)
    assert pts[-1] == pytest.approx([0.0, 5.25], abs=TOL_M)
