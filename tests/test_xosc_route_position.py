"""OpenSCENARIO RoutePosition (issue 25 item 5): a route inline or from a route catalog, positions in it from lane
coordinates, road coordinates or the current entity, checked against positions worked out by hand.

The map (written with scenariogeneration) is three roads in a chain: road 1 a 100 m straight along +x from the
origin, road 2 a 90° left arc of radius 50 m (centre (100, 50)), road 3 a 100 m straight along +y from (150, 50);
one left lane, two right lanes, 3.5 m each. ``pathS`` is road s driven along the route from its first waypoint.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scenariogeneration import xodr, xosc

from simready.maps.xosc_import import XoscError, import_xosc
from simready.maps.xosc_import.signals import parse_signal_state
from simready.sim.run import run_simulation

W = 3.5
R = 50.0
ARC = R * math.pi / 2.0
TOL = 0.01


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("route")
    roads = [xodr.create_road(xodr.Line(100), id=1, left_lanes=1, right_lanes=2, lane_width=W),
             xodr.create_road(xodr.Arc(1.0 / R, angle=math.pi / 2.0), id=2, left_lanes=1, right_lanes=2, lane_width=W),
             xodr.create_road(xodr.Line(100), id=3, left_lanes=1, right_lanes=2, lane_width=W)]
    for a, b in zip(roads, roads[1:]):
        a.add_successor(xodr.ElementType.road, b.id, xodr.ContactPoint.start)
        b.add_predecessor(xodr.ElementType.road, a.id, xodr.ContactPoint.end)
    odr = xodr.OpenDrive("chain")
    for road in roads:
        odr.add_road(road)
    odr.adjust_roads_and_lanes()
    odr.write_xml(str(folder / "chain.xodr"))
    # The backward route lives in a route catalog.
    (folder / "routes").mkdir()
    cat = xosc.CatalogFile()
    cat.create_catalog(str(folder / "routes" / "routes.xosc"), "RouteCatalog", "routes", "test")
    back = xosc.Route("back")
    back.add_waypoint(xosc.LanePosition(50, 0, 1, 3), xosc.RouteStrategy.shortest)
    back.add_waypoint(xosc.LanePosition(10, 0, 1, 1), xosc.RouteStrategy.shortest)
    cat.add_to_catalog(back)
    cat.dump()
    return folder


def _car() -> xosc.Vehicle:
    box = xosc.BoundingBox(1.85, 4.7, 1.45, 1.4, 0.0, 0.7)
    return xosc.Vehicle("car", xosc.VehicleCategory.car, box, xosc.Axle(0.5, 0.6, 1.6, 2.8, 0.3),
                        xosc.Axle(0.0, 0.6, 1.6, 0.0, 0.3), 50, 5, 9)


def _forward() -> xosc.Route:
    route = xosc.Route("forward")
    route.add_waypoint(xosc.LanePosition(10, 0, -1, 1), xosc.RouteStrategy.shortest)
    route.add_waypoint(xosc.LanePosition(50, 0, -1, 3), xosc.RouteStrategy.shortest)
    return route


def _write(folder: Path, name: str, positions: dict[str, object], events: list[tuple[str, object]] = ()) -> Path:
    entities = xosc.Entities()
    init = xosc.Init()
    step = xosc.TransitionDynamics(xosc.DynamicsShapes.step, xosc.DynamicsDimension.time, 0.0)
    for actor, pos in positions.items():
        entities.add_scenario_object(actor, _car())
        init.add_init_action(actor, xosc.TeleportAction(pos))
        init.add_init_action(actor, xosc.AbsoluteSpeedAction(8.0, step))
    board = xosc.StoryBoard(init, xosc.ValueTrigger("stop", 0, xosc.ConditionEdge.rising,
                                                    xosc.SimulationTimeCondition(6, xosc.Rule.greaterThan), "stop"))
    story = xosc.Story("story")
    act = xosc.Act("act", xosc.ValueTrigger("go", 0, xosc.ConditionEdge.rising,
                                            xosc.SimulationTimeCondition(0, xosc.Rule.greaterThan)))
    if not events:
        act.add_maneuver_group(xosc.ManeuverGroup("none"))
    for actor, event in events:
        group = xosc.ManeuverGroup(f"group_{actor}")
        group.add_actor(actor)
        maneuver = xosc.Maneuver(f"maneuver_{actor}")
        maneuver.add_event(event)
        group.add_maneuver(maneuver)
        act.add_maneuver_group(group)
    story.add_act(act)
    board.add_story(story)
    catalog = xosc.Catalog()
    catalog.add_catalog("RouteCatalog", "routes")
    sce = xosc.Scenario(name, "test", xosc.ParameterDeclarations(), entities, board,
                        xosc.RoadNetwork(roadfile="chain.xodr"), catalog)
    path = folder / f"{name}.xosc"
    sce.write_xml(str(path))
    return path


def _pose(manifest, actor):
    p = manifest.actor(actor).initial.pose
    return p.x, p.y, p.yaw


def _assert_pose(got, want):
    assert math.hypot(got[0] - want[0], got[1] - want[1]) <= TOL, (got, want)
    assert abs(math.remainder(got[2] - want[2], math.tau)) <= 1e-3, (got, want)


def test_route_positions_match_the_analytic_poses(folder):
    back = xosc.CatalogReference("RouteCatalog", "back")
    theta = (150.0 - 90.0) / R  # pathS 150: 90 m of road 1 (s 10 -> 100), then 60 m into the arc
    path = _write(folder, "route_positions", {
        "Ego": xosc.RoutePositionInLaneCoordinates(_forward(), 40.0, -2, 0.3),  # road 1, s 50, t -5.25 + 0.3
        "OnArc": xosc.RoutePositionInLaneCoordinates(_forward(), 150.0, -1, 0.0),
        "OnRoad3": xosc.RoutePositionInRoadCoordinates(_forward(), 200.0, -5.25),
        "Back": xosc.RoutePositionInLaneCoordinates(back, 30.0, 1, 0.0),  # against s on road 3: s 50 -> 20
        "Twin": xosc.RoutePositionOfCurrentEntity(_forward(), "OnArc"),
    })
    r = import_xosc(path)
    m = r.manifest
    _assert_pose(_pose(m, "Ego"), (50.0, -4.95, 0.0))
    _assert_pose(_pose(m, "OnArc"), (100.0 + (R + W / 2) * math.sin(theta), 50.0 - (R + W / 2) * math.cos(theta), theta))
    _assert_pose(_pose(m, "OnRoad3"), (150.0 + 5.25, 50.0 + 200.0 - 90.0 - ARC, math.pi / 2))
    _assert_pose(_pose(m, "Back"), (150.0 - W / 2, 70.0, -math.pi / 2))
    _assert_pose(_pose(m, "Twin"), _pose(m, "OnArc"))
    assert m.actor("Ego").initial.lane_ref.lane == "road1_sec0_lane-2"
    assert m.actor("OnArc").initial.lane_ref.lane == "road2_sec0_lane-1"
    assert m.actor("Back").initial.lane_ref.lane == "road3_sec0_lane1"
    # They drive from there (without the twin, which stands on OnArc): no collision, the car on the arc follows
    # its lane into road 3 within the 6 s clip (8 m/s: 48 m from 60 m into the 78.5 m arc).
    path = _write(folder, "route_drive", {
        "Ego": xosc.RoutePositionInLaneCoordinates(_forward(), 40.0, -2, 0.3),
        "OnArc": xosc.RoutePositionInLaneCoordinates(_forward(), 150.0, -1, 0.0),
        "Back": xosc.RoutePositionInLaneCoordinates(back, 30.0, 1, 0.0)})
    r = import_xosc(path)
    trace = run_simulation(r.manifest, r.template, backend="kinematic-v1").trace
    assert not [e for e in trace.events if e["type"] == "collision"]
    df = trace.df
    on_arc = df[df["actor_id"] == "OnArc"]
    assert on_arc["lane"].iloc[-1] == "road3_sec0_lane-1" and on_arc["y"].iloc[-1] > 50.0 + 10.0


def test_a_route_position_past_the_route_end_is_one_line(folder):
    path = _write(folder, "route_past_end", {"Ego": xosc.RoutePositionInLaneCoordinates(_forward(), 300.0, -1, 0.0)})
    with pytest.raises(XoscError, match=r"pathS 300 lies outside the route \[0, 218\.540\] m"):
        import_xosc(path)


def test_a_route_in_a_missing_catalog_entry_is_one_line(folder):
    path = _write(folder, "route_missing", {
        "Ego": xosc.RoutePositionInLaneCoordinates(xosc.CatalogReference("RouteCatalog", "nope"), 1.0, -1, 0.0)})
    with pytest.raises(XoscError, match="catalog reference RouteCatalog/nope resolves to nothing"):
        import_xosc(path)


def test_relative_road_positions_offset_the_reference_entitys_own_t_and_acquire_position_is_a_route(folder):
    """RelativeRoadPosition: ds and dt from the reference's road coordinates (Ego at s 20, t -1.75: s 30, t -5.25);
    AcquirePositionAction: a route to the lane of the position (road 3, lane -1), linked when it fires."""
    go = xosc.Event("go", xosc.Priority.override)
    go.add_action("acquire", xosc.AcquirePositionAction(xosc.LanePosition(50, 0, -1, 3)))
    go.add_trigger(xosc.ValueTrigger("t1", 0, xosc.ConditionEdge.rising,
                                     xosc.SimulationTimeCondition(1, xosc.Rule.greaterThan)))
    path = _write(folder, "relative_road", {"Ego": xosc.LanePosition(20, 0, -1, 1),
                                            "Other": xosc.RelativeRoadPosition(10, -3.5, "Ego")}, [("Ego", go)])
    m = import_xosc(path).manifest
    _assert_pose(_pose(m, "Other"), (30.0, -5.25, 0.0))
    (acquire,) = m.interactions
    assert acquire.verb == "route" and acquire.route.lanes[0] == "road3_sec0_lane-1"


def test_signal_states_by_name_and_by_lamps():
    assert [parse_signal_state(x) for x in ("Red", "yellow", "GREEN", "off", "on;off;off", "off;on;off", "off;off;on",
                                       "on;on;off", "off;on", "on;off")] == \
        ["red", "amber", "green", "off", "red", "amber", "green", "red_amber", "green", "red"]
    assert parse_signal_state("blue") is None and parse_signal_state("on;off;off;off") is None


def test_a_car_driving_against_its_lane_is_refused_in_one_line(folder, capsys):
    """The left lane of road 1 runs against s; a car on it turned to face along s cannot be driven there."""
    from simready.cli import main

    wrong = xosc.LanePosition(30, 0, 1, 1, xosc.Orientation(h=math.pi, reference=xosc.ReferenceContext.relative))
    path = _write(folder, "wrong_way", {"Ego": xosc.LanePosition(20, 0, -1, 1), "Ghost": wrong})
    out = folder / "wrong_way_out"
    assert main(["scenario", "import-xosc", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Entities/ScenarioObject[Ghost]" in err[0] and \
        "starts on lane road1_sec0_lane1 heading against its direction of travel" in err[0], err
    assert not out.exists()
