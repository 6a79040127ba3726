"""OpenDRIVE import (issue 17): maps written by scenariogeneration, checked against an analytic reference.

The reference line here is integrated independently of the importer (1 mm
trapezoid steps of the heading the records define, chained from the map's
origin), lane centres and widths come from the map's own width and offset
cubics (``simready.testing.opendrive_maps``), and every polyline vertex must
lie within 1 cm of the reference plus offsets at the s where it projects.
"""

from __future__ import annotations

import hashlib
import re
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scenariogeneration import xodr
from shapely.geometry import LineString

from simready.maps.xodr_import import import_opendrive
from simready.maps.template_yaml import template_yaml
from simready.testing import opendrive_maps as maps
from simready.world.template import parse_template, template_hash

TOL_M = 0.01


@pytest.fixture(scope="module")
def map_files(tmp_path_factory) -> dict[str, Path]:
    return maps.write_all(tmp_path_factory.mktemp("xodr"))


@pytest.fixture(scope="module")
def imported(map_files):
    out = {}
    for name, path in map_files.items():
        result = import_opendrive(path, f"imported_{name}")
        out[name] = (result, parse_template(result.data, f"imported_{name}.yaml"))
    return out


# --- the analytic reference ---------------------------------------------------------------------------------------


def _reference(records, step=1e-3):
    """Dense (s, x, y, hdg) of a chain of plan-view records starting at the origin, heading 0."""
    s_out, x_out, y_out, h_out = [], [], [], []
    x0 = y0 = h0 = s0 = 0.0
    for kind, p, length in records:
        if kind == "paramPoly3":
            q = np.linspace(0.0, 1.0, 200_001)
            au, bu, cu, du, av, bv, cv, dv = p
            u = au + q * (bu + q * (cu + q * du))
            v = av + q * (bv + q * (cv + q * dv))
            seg = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(u), np.diff(v)))])
            du_ = bu + q * (2 * cu + 3 * q * du)
            dv_ = bv + q * (2 * cv + 3 * q * dv)
            xs = x0 + math.cos(h0) * u - math.sin(h0) * v
            ys = y0 + math.sin(h0) * u + math.cos(h0) * v
            hs = h0 + np.arctan2(dv_, du_)
            ds = seg
        else:
            n = int(round(length / step))
            ds = np.linspace(0.0, length, n + 1)
            if kind == "line":
                k = np.zeros_like(ds)
            elif kind == "arc":
                k = np.full_like(ds, p[0])
            else:
                k = p[0] + (p[1] - p[0]) * ds / length
            hs = h0 + np.concatenate([[0.0], np.cumsum(0.5 * (k[1:] + k[:-1]) * np.diff(ds))])
            xs = x0 + np.concatenate([[0.0], np.cumsum(0.5 * (np.cos(hs[1:]) + np.cos(hs[:-1])) * np.diff(ds))])
            ys = y0 + np.concatenate([[0.0], np.cumsum(0.5 * (np.sin(hs[1:]) + np.sin(hs[:-1])) * np.diff(ds))])
        s_out.append(s0 + ds)
        x_out.append(xs)
        y_out.append(ys)
        h_out.append(hs)
        x0, y0, h0, s0 = float(xs[-1]), float(ys[-1]), float(hs[-1]), s0 + float(ds[-1])
    return tuple(np.concatenate(a) for a in (s_out, x_out, y_out, h_out))


def _cubic(coef, ds):
    a, b, c, d = coef
    return a + ds * (b + ds * (c + ds * d))


def _project(ref, points):
    """s of each point's foot on the dense reference, and the reference pose there."""
    s, x, y, h = ref
    out = []
    for px, py in points:
        i = int(np.argmin((x - px) ** 2 + (y - py) ** 2))
        out.append((s[i], x[i], y[i], h[i]))
    return out


def _check_lane(ref, polyline, t_of_s, forward):
    """Every vertex within TOL_M of reference + t(s); travel along s when ``forward``; returns the worst error."""
    feet = _project(ref, polyline)
    worst = 0.0
    for (px, py), (s, x, y, h) in zip(polyline, feet):
        t = t_of_s(s)
        ex, ey = x - t * math.sin(h), y + t * math.cos(h)
        worst = max(worst, math.hypot(px - ex, py - ey))
    ss = [f[0] for f in feet]
    assert (ss[-1] > ss[0]) == forward, "lane runs the wrong way for its id"
    return worst


def _lane(template, name):
    return next(lane for lane in template.lanes if lane.id == name)


def _borders(template, name):
    """(inner, outer) border vertex pairs of a lane's region polygon (inner forward, then outer backward)."""
    ring = template.region_by_id[name].polygon
    n = len(ring) // 2
    assert len(ring) == 2 * n
    inner, outer = ring[:n], ring[n:][::-1]
    return list(zip(inner, outer))


# --- tests ----------------------------------------------------------------------------------------------------------


def test_every_map_imports_to_a_valid_template_with_its_source_hash(map_files, imported):
    for name, (result, template) in imported.items():
        assert template.provenance is not None
        assert template.provenance.source_sha256 == hashlib.sha256(map_files[name].read_bytes()).hexdigest()
        assert template.provenance.format == "ASAM OpenDRIVE"
        assert result.report.link_mismatches == [], name
        again = import_opendrive(map_files[name], f"imported_{name}")
        assert template_yaml(again.data) == template_yaml(result.data), "import is not deterministic"


def test_straight_road_lanes_regions_and_speeds(imported):
    result, t = imported["straight"]
    w = maps.STRAIGHT["widths"]
    ref = _reference((("line", (), maps.STRAIGHT["length"]),))
    expected = {-1: -w[-1] / 2, 1: w[1] / 2, -2: -(w[-1] + w[-2] / 2)}
    kinds = {-1: "driving", 1: "driving", -2: "parking"}
    for lane_id, t_c in expected.items():
        lane = _lane(t, f"road1_sec0_lane{lane_id}")
        assert lane.kind == kinds[lane_id]
        assert _check_lane(ref, lane.polyline, lambda s, t_c=t_c: t_c, forward=lane_id < 0) <= TOL_M
        assert lane.speed_limit_mps == pytest.approx(maps.STRAIGHT["speed_kmh"] / 3.6, abs=1e-3)
        for p, q in _borders(t, lane.id):
            assert math.dist(p, q) == pytest.approx(w[lane_id], abs=TOL_M)
    types = {r.id: r.type for r in t.regions}
    assert types["road1_sec0_lane-3"] == types["road1_sec0_lane2"] == "sidewalk"
    assert types["road1_sec0_lane-2"] == "parking"
    assert [r.type for r in t.regions if r.id.startswith("crosswalk_")] == ["crosswalk"]
    assert len(t.lanes) == 3 and len(t.lane_graph.successors) == 3


def test_pedestrian_route_from_each_sidewalk_across_each_crosswalk(imported):
    for name in ("straight",):
        _, t = imported[name]
        crosswalks = [r for r in t.regions if r.type == "crosswalk"]
        sidewalks = [r.id for r in t.regions if r.type == "sidewalk"]
        assert crosswalks and len(sidewalks) == 2
        graph = t.walk_graph
        for cw in crosswalks:
            for a in sidewalks:
                for b in sidewalks:
                    if a == b:
                        continue
                    start = next(n for n in sorted(graph.nodes) if n.startswith(a + "_n"))
                    goal = next(n for n in sorted(graph.nodes) if n.startswith(b + "_n"))
                    path = graph.shortest_path(start, goal)
                    assert path is not None, f"no walk from {a} to {b}"
                    assert LineString(graph.path_points(path)).intersects(cw.shape)
        crossings = [a for a in t.affordances if a.type == "pedestrian_crossing"]
        assert {c.region for c in crossings} == {cw.id for cw in crosswalks}


def test_curved_road_centres_and_widths_follow_spirals_arcs_and_width_cubics(map_files, imported):
    _, t = imported["curved"]
    records = list(maps.CURVED["records"])
    # The paramPoly3's length is the writer's; the reference integrates its own.
    ref = _reference(records)
    starts = [float(g.get("s")) for g in ET.parse(map_files["curved"]).getroot().iter("geometry")]
    (s0a, w0), (s1a, w1) = maps.CURVED["sections"]

    def width(lane_id, s):
        start, records = (s1a, w1) if s >= s1a else (s0a, w0)
        s_offset, *coef = [r for r in records[lane_id] if r[0] <= s - start + 1e-9][-1]
        return _cubic(coef, s - start - s_offset)

    worst = 0.0
    for k in (0, 1):
        for lane_id in (1, -1):
            lane = _lane(t, f"road1_sec{k}_lane{lane_id}")
            side = 1 if lane_id > 0 else -1
            worst = max(worst, _check_lane(ref, lane.polyline, lambda s, i=lane_id, sd=side: sd * width(i, s) / 2,
                                           forward=lane_id < 0))
            for p, q in _borders(t, lane.id):
                (s, *_), = _project(ref, [((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)])
                assert math.dist(p, q) == pytest.approx(width(lane_id, s), abs=TOL_M)
    assert worst <= TOL_M
    assert len(starts) == len(records)
    # The width change is real: lane -1 ends wider than it starts.
    pairs = _borders(t, "road1_sec1_lane-1")
    assert math.dist(*pairs[-1]) - math.dist(*pairs[0]) == pytest.approx(0.5, abs=TOL_M)
    # The shoulder is a region without a lane, and the report says so.
    assert t.region_by_id["road1_sec0_lane-2"].type == "drivable"
    assert all(lane.id != "road1_sec0_lane-2" for lane in t.lanes)
    assert any("shoulder" in line for line in t.provenance.skipped)


def test_lane_offset_moves_every_lane(imported):
    _, t = imported["offset"]
    ref = _reference((("line", (), maps.OFFSET["length"]),))
    w = maps.OFFSET["width"]
    for lane_id in (1, -1):
        lane = _lane(t, f"road1_sec0_lane{lane_id}")
        centre = lambda s, i=lane_id: _cubic(maps.OFFSET["offset"], s) + math.copysign(w / 2, i)  # noqa: E731
        assert _check_lane(ref, lane.polyline, centre, forward=lane_id < 0) <= TOL_M
    # The offset really moves the road: lane -1's centre drifts by the offset's change (1.5 m).
    lane = _lane(t, "road1_sec0_lane-1")
    assert lane.polyline[-1][1] - lane.polyline[0][1] == pytest.approx(1.5, abs=TOL_M)


def _lane_links(path: Path) -> int:
    """Lane links of the file's junction connections, between driving lanes."""
    root = ET.parse(path).getroot()
    return sum(len(c.findall("laneLink")) for c in root.iter("connection"))


def test_junction_successors_equal_the_files_links(map_files, imported):
    result, t = imported["junction"]
    graph = t.lane_graph
    edges = sum(len(v) for v in graph.successors.values())
    assert edges == _lane_links(map_files["junction"]) == 24
    for arm in "1234":
        inbound, outbound = f"road{arm}_sec0_lane-1", f"road{arm}_sec0_lane1"
        assert len(graph.successors[inbound]) == 3, "every arm reaches the three others"
        assert len(graph.predecessors[outbound]) == 3
    connecting = [lane for lane in t.lanes if t.region_by_id[lane.region].type == "intersection"]
    assert len(connecting) == 12
    assert all(len(graph.successors[c.id]) == 1 and len(graph.predecessors[c.id]) == 1 for c in connecting)
    assert {c.kind for c in connecting} == {"driving", "turn"}
    assert result.file_successors == {k: tuple(sorted(v)) for k, v in graph.successors.items()}


def test_junction_signals_stop_lines_and_controllers(imported):
    _, t = imported["junction"]
    assert len(t.signals) == 4
    offsets = {}
    for sig in t.signals:
        arm = sig.id.removeprefix("signal_")[0]
        assert sig.controls == (f"road{arm}_sec0_lane-1",)
        assert sig.stop_line.lane == f"road{arm}_sec0_lane-1"
        assert sig.stop_line.s_m == pytest.approx(maps.JUNCTION_ARM_M - 1.0, abs=TOL_M)
        offsets[arm] = sig.offset_s
    cycle = sum(p.duration_s for p in t.signals[0].program)
    assert offsets["1"] == offsets["3"] != offsets["2"] == offsets["4"]
    assert abs(offsets["2"] - offsets["1"]) == pytest.approx(cycle / 2)
    heads = [r for r in t.relations if r.type == "controls"]
    assert sorted(r.signal for r in heads) == sorted(s.id for s in t.signals)


def test_editing_one_lane_width_changes_the_hash(map_files, tmp_path):
    src = map_files["straight"].read_text()
    edited = tmp_path / "straight.xodr"
    # Lane -2 (parking) is the only lane 2.5 m wide.
    assert src.count('a="2.5"') == 1
    edited.write_text(src.replace('a="2.5"', 'a="2.6"'))
    before = import_opendrive(map_files["straight"], "x")
    after = import_opendrive(edited, "x")
    h_before = template_hash(parse_template(before.data))
    h_after = template_hash(parse_template(after.data))
    assert h_before != h_after
    assert before.data["provenance"]["source_sha256"] != after.data["provenance"]["source_sha256"]


def test_bounds_keep_only_lanes_inside(map_files):
    whole = import_opendrive(map_files["junction"], "x")
    part = import_opendrive(map_files["junction"], "x", bounds=(-1.0, -20.0, 61.0, 20.0))
    kept = {lane["id"] for lane in part.data["lanes"]}
    assert kept == {"road1_sec0_lane-1", "road1_sec0_lane1"}
    assert len(whole.data["lanes"]) == 20
    assert any("--bounds" in line for line in part.report.skipped)
    parse_template(part.data)


def _curved_with(map_files, record: str) -> str:
    """The curved map with its last plan-view record (the paramPoly3) replaced by ``record``."""
    text = map_files["curved"].read_text()
    start = text.index("<paramPoly3 ")
    return text[:start] + record + text[text.index("/>", start) + 2:]


@pytest.mark.parametrize("variant", ["poly3", "paramPoly3_arcLength"])
def test_poly3_and_arclength_parampoly3_give_the_same_curve(variant, map_files, tmp_path):
    # The curve of the normalized paramPoly3 u = 30p, v = 6p^2 - 4p^3, written two other ways: as a poly3 in u,
    # and as a paramPoly3 over p in [0, length].
    text = map_files["curved"].read_text()
    length = float(re.search(r'length="([0-9.]+)">\s*<paramPoly3', text).group(1))
    if variant == "poly3":
        record = f'<poly3 a="0" b="0" c="{6 / 900!r}" d="{-4 / 27000!r}"/>'
    else:
        record = (f'<paramPoly3 aU="0" bU="{30 / length!r}" cU="0" dU="0" aV="0" bV="0" cV="{6 / length ** 2!r}" '
                  f'dV="{-4 / length ** 3!r}" pRange="arcLength"/>')
    path = tmp_path / "curved.xodr"
    path.write_text(_curved_with(map_files, record))
    t = parse_template(import_opendrive(path, "variant").data)
    ref = _reference(list(maps.CURVED["records"]))
    (s1a, w1) = maps.CURVED["sections"][1]
    for lane_id in (1, -1):
        lane = _lane(t, f"road1_sec1_lane{lane_id}")
        tail = [p for p in lane.polyline if _project(ref, [p])[0][0] >= 110.0]
        assert len(tail) > 10, "the last record is sampled"

        def centre(s, i=lane_id):
            s_offset, *coef = [r for r in w1[i] if r[0] <= s - s1a + 1e-9][-1]
            return math.copysign(_cubic(coef, s - s1a - s_offset) / 2, i)

        assert _check_lane(ref, tail, centre, forward=lane_id < 0) <= TOL_M


def test_left_hand_traffic_reverses_directions(map_files, tmp_path):
    path = tmp_path / "lht.xodr"
    path.write_text(map_files["straight"].read_text().replace('rule="RHT"', 'rule="LHT"'))
    t = parse_template(import_opendrive(path, "lht").data)
    east = _lane(t, "road1_sec0_lane1").polyline
    west = _lane(t, "road1_sec0_lane-1").polyline
    assert east[-1][0] > east[0][0] and west[-1][0] < west[0][0]


def test_biking_border_and_walking_lanes(map_files, tmp_path):
    text = map_files["straight"].read_text()
    text = text.replace('type="parking"', 'type="biking"')
    # The outer right lane becomes a border; the left sidewalk keeps walking under its OpenDRIVE 1.8 name.
    first, second = text.index('type="sidewalk"'), text.rindex('type="sidewalk"')
    text = text[:first] + 'type="walking"' + text[first + len('type="sidewalk"'):second] + 'type="border"' + \
        text[second + len('type="sidewalk"'):]
    path = tmp_path / "types.xodr"
    path.write_text(text)
    result = import_opendrive(path, "types")
    t = parse_template(result.data)
    types = {r.id: r.type for r in t.regions}
    assert types["road1_sec0_lane-2"] == "drivable" and types["road1_sec0_lane-3"] == "median"
    assert types["road1_sec0_lane2"] == "sidewalk"
    # A bike lane outside a junction is a lane of its own kind (cyclists ride it; vehicles never route onto it).
    assert {lane.id: lane.kind for lane in t.lanes} == {"road1_sec0_lane-1": "driving", "road1_sec0_lane-2": "biking",
                                                        "road1_sec0_lane1": "driving"}
    skipped = "\n".join(t.provenance.skipped)
    assert "biking lanes" not in skipped and "border lanes: kept as median regions" in skipped


def test_opendrive_1_8_namespace_and_version(map_files, tmp_path):
    text = map_files["straight"].read_text()
    text = text.replace("<OpenDRIVE>", '<OpenDRIVE xmlns="http://code.asam.net/simulation/standard/opendrive_schema">')
    text = text.replace('revMinor="5"', 'revMinor="8"')
    path = tmp_path / "v18.xodr"
    path.write_text(text)
    result = import_opendrive(path, "v18")
    assert result.data["provenance"]["format_version"] == "1.8"
    plain = import_opendrive(map_files["straight"], "v18")
    assert result.data["lanes"] == plain.data["lanes"] and result.data["regions"] == plain.data["regions"]


def test_a_lane_that_opens_from_zero_width(imported):
    result, t = imported["split"]
    ref = _reference((("line", (), maps.SPLIT["length"]),))
    w, s0, s1 = maps.SPLIT["width"], maps.SPLIT["from"], maps.SPLIT["to"]
    opening = _lane(t, "road1_sec1_lane-2")
    # The writer's split is a cubic from 0 to full width with zero slope at both ends.
    growth = lambda s: w * (3 * ((s - s0) / (s1 - s0)) ** 2 - 2 * ((s - s0) / (s1 - s0)) ** 3)  # noqa: E731
    assert _check_lane(ref, opening.polyline, lambda s: -(w + growth(s) / 2), forward=True) <= TOL_M
    graph = t.lane_graph
    assert graph.successors["road1_sec1_lane-2"] == ("road1_sec2_lane-2",)
    assert graph.successors["road1_sec0_lane-1"] == ("road1_sec1_lane-1",)
    assert result.report.link_mismatches == []


def test_direct_junction_links_an_exit(tmp_path):
    # A three-lane road that splits into a two-lane road and a one-lane exit ramp (an OpenDRIVE 1.7 direct junction,
    # whose connections name a linkedRoad), written by scenariogeneration.
    main_road = xodr.create_road(xodr.Line(100), 1, 0, 3)
    through = xodr.create_road(xodr.Line(100), 2, 0, 2)
    ramp = xodr.create_road([xodr.Spiral(-0.0001, -0.02, 30), xodr.Arc(-0.02, 40)], 3, 0, 1)
    main_road.add_successor(xodr.ElementType.junction, 100)
    through.add_predecessor(xodr.ElementType.junction, 100)
    ramp.add_predecessor(xodr.ElementType.junction, 100)
    creator = xodr.DirectJunctionCreator(id=100, name="exit")
    creator.add_connection(main_road, through, [-1, -2], [-1, -2])
    creator.add_connection(main_road, ramp, -3, -1)
    odr = xodr.OpenDrive("exit")
    for road in (main_road, through, ramp):
        odr.add_road(road)
    odr.add_junction_creator(creator)
    odr.adjust_roads_and_lanes()
    path = tmp_path / "exit.xodr"
    odr.write_xml(str(path))
    assert "linkedRoad" in path.read_text()
    result = import_opendrive(path, "exit")
    graph = parse_template(result.data).lane_graph
    assert result.report.link_mismatches == []
    assert graph.successors["road1_sec0_lane-3"] == ("road3_sec0_lane-1",)
    assert graph.successors["road1_sec0_lane-1"] == ("road2_sec0_lane-1",)
    assert graph.successors["road1_sec0_lane-2"] == ("road2_sec0_lane-2",)
