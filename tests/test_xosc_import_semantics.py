"""OpenSCENARIO files written with scenariogeneration, imported, rolled out, and their semantics checked.

The map is a straight two-lane road written with scenariogeneration and imported by the map importer (not a
shipped template), so these also exercise the LogicFile path and lane/relative-lane positions on a real road.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scenariogeneration import xodr, xosc

from simready.maps.xosc_import import import_distribution, import_xosc, read_distribution
from simready.sim.run import run_simulation

BACKEND = "kinematic-v1"
STEP = xosc.TransitionDynamics(xosc.DynamicsShapes.step, xosc.DynamicsDimension.time, 0.0)
LANE_L, LANE_R = "road0_sec0_lane-1", "road0_sec0_lane-2"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("xosc")
    road = xodr.create_road(xodr.Line(400), id=0, left_lanes=0, right_lanes=2, lane_width=3.5)
    odr = xodr.OpenDrive("straight")
    odr.add_road(road)
    odr.adjust_roads_and_lanes()
    odr.write_xml(str(folder / "straight.xodr"))
    return folder


def _car(name: str) -> xosc.Vehicle:
    box = xosc.BoundingBox(1.85, 4.7, 1.45, 1.4, 0.0, 0.7)
    front = xosc.Axle(0.5, 0.6, 1.6, 2.8, 0.3)
    rear = xosc.Axle(0.0, 0.6, 1.6, 0.0, 0.3)
    return xosc.Vehicle(name, xosc.VehicleCategory.car, box, front, rear, 50, 5, 9)


def _time(name: str, t: float) -> xosc.ValueTrigger:
    return xosc.ValueTrigger(name, 0.0, xosc.ConditionEdge.rising, xosc.SimulationTimeCondition(t, xosc.Rule.greaterThan))


def _scenario(folder: Path, name: str, events: list[tuple[str, xosc.Event]], params: xosc.ParameterDeclarations | None
              = None, ego_speed: str | float = 10.0, reach: float | None = None) -> Path:
    """Ego on the left lane at s 20, Target on the right lane 15 m ahead (a relative lane position), both at
    ``ego_speed`` (Target relative to Ego: -2 m/s); ``events`` are ``(actor, event)`` in one act."""
    entities = xosc.Entities()
    entities.add_scenario_object("Ego", _car("ego_car"))
    entities.add_scenario_object("Target", _car("target_car"))
    init = xosc.Init()
    init.add_init_action("Ego", xosc.TeleportAction(xosc.LanePosition(20, 0, -1, 0)))
    init.add_init_action("Ego", xosc.AbsoluteSpeedAction(ego_speed, STEP))
    init.add_init_action("Target", xosc.TeleportAction(xosc.RelativeLanePosition(-1, "Ego", 0, ds=15)))
    init.add_init_action("Target", xosc.RelativeSpeedAction(-2, "Ego", STEP))
    act = xosc.Act("act", _time("act_start", 0.0))
    groups: dict[str, xosc.ManeuverGroup] = {}
    for actor, event in events:
        if actor not in groups:
            groups[actor] = xosc.ManeuverGroup(f"group_{actor}")
            groups[actor].add_actor(actor)
            groups[actor].add_maneuver(xosc.Maneuver(f"maneuver_{actor}"))
        groups[actor].maneuvers[0].add_event(event)
    for actor in groups:
        act.add_maneuver_group(groups[actor])
    if not groups:
        act.add_maneuver_group(xosc.ManeuverGroup("none"))
    story = xosc.Story("story")
    story.add_act(act)
    board = xosc.StoryBoard(init, xosc.ValueTrigger("stop", 0, xosc.ConditionEdge.rising,
                                                    xosc.SimulationTimeCondition(12, xosc.Rule.greaterThan), "stop"))
    board.add_story(story)
    sce = xosc.Scenario(name, "test", params or xosc.ParameterDeclarations(), entities, board,
                        xosc.RoadNetwork(roadfile="straight.xodr"), xosc.Catalog())
    path = folder / f"{name}.xosc"
    sce.write_xml(str(path))
    if reach is not None:
        # scenariogeneration writes only the 1.2+ form; OpenSCENARIO 1.0/1.1 files use ReachPositionCondition.
        text = path.read_text()
        old = f'<DistanceCondition value="{reach}"'
        assert old in text
        head, tail = text.split(old, 1)
        attrs, rest = tail.split(">", 1)
        text = head + f'<ReachPositionCondition tolerance="{reach}">' + rest.replace("</DistanceCondition>",
                                                                                     "</ReachPositionCondition>", 1)
        path.write_text(text)
    return path


def _event(name: str, action: object, trigger: object) -> xosc.Event:
    ev = xosc.Event(name, xosc.Priority.overwrite)
    ev.add_action(f"{name}_action", action)
    ev.add_trigger(trigger)
    return ev


def _rows(trace, actor: str):
    df = trace.df
    return df[df["actor_id"] == actor].sort_values("t")


def _fired(trace, inter: str) -> float:
    return next(e["t"] for e in trace.events if e["type"] == "trigger_fired" and e["interaction"] == inter)


def test_init_positions_speeds_and_the_map_import(folder):
    path = _scenario(folder, "init", [])
    r = import_xosc(path)
    assert r.template_data is not None and r.template.id == "xosc_straight"
    ego, target = r.manifest.actor("Ego"), r.manifest.actor("Target")
    assert ego.role == "ego" and ego.initial.lane_ref.lane == LANE_L
    assert (ego.initial.pose.x, ego.initial.pose.y) == pytest.approx((20.0, -1.75), abs=1e-6)
    assert target.initial.lane_ref.lane == LANE_R  # dLane -1: one lane to the right of travel
    assert (target.initial.pose.x, target.initial.pose.y) == pytest.approx((35.0, -5.25), abs=1e-6)
    assert target.initial.speed_mps == pytest.approx(8.0)
    assert ego.asset_id == "asset:sedan/grey"


def test_speed_action_reaches_its_target_with_its_shape(folder):
    ev = _event("slow", xosc.AbsoluteSpeedAction(
        4.0, xosc.TransitionDynamics(xosc.DynamicsShapes.linear, xosc.DynamicsDimension.time, 2.0)), _time("t1", 1.0))
    r = import_xosc(_scenario(folder, "speed", [("Target", ev)]))
    (inter,) = r.manifest.interactions
    assert inter.speed.mode == "absolute" and inter.dynamics.shape == "linear" and inter.dynamics.value == 2.0
    trace = run_simulation(r.manifest, r.template, backend=BACKEND).trace
    rows = _rows(trace, "Target")
    t, v = rows["t"].to_numpy(), rows["speed_mps"].to_numpy()
    t0 = _fired(trace, "slow")
    assert t0 == pytest.approx(1.0, abs=0.021)
    assert np.interp(t0 + 1.0, t, v) == pytest.approx(6.0, abs=0.3)  # linear: half way at half time
    assert np.interp(t0 + 2.5, t, v) == pytest.approx(4.0, abs=0.1)


def test_lane_change_ends_in_the_target_lane_and_lane_offset_holds(folder):
    lc = _event("change", xosc.RelativeLaneChangeAction(
        1, "Target", xosc.TransitionDynamics(xosc.DynamicsShapes.sinusoidal, xosc.DynamicsDimension.time, 3.0)),
        _time("t1", 1.0))
    off = _event("offset", xosc.AbsoluteLaneOffsetAction(0.5, xosc.DynamicsShapes.sinusoidal, 0.5), _time("t2", 2.0))
    r = import_xosc(_scenario(folder, "lateral", [("Target", lc), ("Ego", off)]))
    inters = {i.id: i for i in r.manifest.interactions}
    assert inters["change"].change_lane.mode == "left"
    assert inters["offset"].lane_offset.value == 0.5
    trace = run_simulation(r.manifest, r.template, backend=BACKEND).trace
    target = _rows(trace, "Target")
    assert target["lane"].iloc[-1] == LANE_L
    assert abs(target["y"].iloc[-1] - (-1.75)) < 0.1
    ego = _rows(trace, "Ego")
    assert abs(ego["y"].iloc[-1] - (-1.75 + 0.5)) < 0.1


def test_absolute_lane_change(folder):
    lc = _event("to_right", xosc.AbsoluteLaneChangeAction(
        -2, xosc.TransitionDynamics(xosc.DynamicsShapes.cubic, xosc.DynamicsDimension.time, 2.5)), _time("t1", 1.0))
    r = import_xosc(_scenario(folder, "absolute_lane", [("Ego", lc)]))
    (inter,) = r.manifest.interactions
    assert inter.change_lane.mode == "lane" and inter.change_lane.lane == LANE_R and inter.dynamics.shape == "cubic"
    trace = run_simulation(r.manifest, r.template, backend=BACKEND).trace
    assert _rows(trace, "Ego")["lane"].iloc[-1] == LANE_R


def test_conditions_fire_at_the_tick_they_become_true(folder):
    light = xosc.LightStateAction(xosc.VehicleLightType.brakeLights, xosc.LightMode.on)
    cond = {
        "on_speed": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.SpeedCondition(6.0, xosc.Rule.lessThan),
                                       "Target"),
        "on_reach": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.DistanceCondition(
            1.25, xosc.Rule.lessThan, xosc.WorldPosition(60, -1.75), alongroute=False), "Ego"),
        "on_distance": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.DistanceCondition(
            2.0, xosc.Rule.lessThan, xosc.WorldPosition(80, -1.75), alongroute=False), "Ego"),
        "on_reldist": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.RelativeDistanceCondition(
            8.0, xosc.Rule.lessThan, xosc.RelativeDistanceType.euclidianDistance, "Target", freespace=False), "Ego"),
        "on_headway": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.TimeHeadwayCondition(
            "Target", 1.0, xosc.Rule.lessThan, alongroute=False, freespace=False), "Ego"),
        "on_ttc": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.TimeToCollisionCondition(
            3.0, xosc.Rule.lessThan, alongroute=False, freespace=False, entity="Target"), "Ego"),
        "on_relspeed": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.RelativeSpeedCondition(
            -1.0, xosc.Rule.lessThan, "Ego"), "Target"),
        "on_travel": xosc.EntityTrigger("c", 0, xosc.ConditionEdge.rising, xosc.TraveledDistanceCondition(30.0), "Ego"),
        "on_state": xosc.ValueTrigger("c", 0.5, xosc.ConditionEdge.none, xosc.StoryboardElementStateCondition(
            xosc.StoryboardElementType.event, "slow", xosc.StoryboardElementState.startTransition)),
    }
    slow = _event("slow", xosc.AbsoluteSpeedAction(
        4.0, xosc.TransitionDynamics(xosc.DynamicsShapes.linear, xosc.DynamicsDimension.rate, 2.0)), _time("t", 1.0))
    events = [("Target", slow)] + [("Ego" if name != "on_speed" else "Target", _event(name, light, trig))
                                   for name, trig in cond.items()]
    r = import_xosc(_scenario(folder, "conditions", events, reach=1.25))
    inters = {i.id: i for i in r.manifest.interactions}
    kinds = {name: getattr(inters[name].trigger, "condition", None) for name in cond}
    assert kinds["on_speed"].kind == "speed" and kinds["on_speed"].op == "lt"
    assert kinds["on_reach"].kind == "reaches" and kinds["on_reach"].region.r == 1.25
    assert kinds["on_distance"].kind == "reaches" and kinds["on_distance"].region.r == 2.0
    assert kinds["on_reldist"].kind == "distance" and kinds["on_reldist"].metric == "euclidean"
    assert kinds["on_headway"].kind == "headway" and kinds["on_ttc"].kind == "ttc"
    assert kinds["on_relspeed"].kind == "speed" and kinds["on_relspeed"].value_mps == pytest.approx(9.0)
    assert kinds["on_travel"].kind == "reaches" and kinds["on_travel"].region.shape == "lane_window"
    assert inters["on_state"].trigger.kind == "after" and inters["on_state"].trigger.delay_s == 0.5
    trace = run_simulation(r.manifest, r.template, backend=BACKEND).trace
    dt = r.manifest.dt
    ego, target = _rows(trace, "Ego"), _rows(trace, "Target")
    t = ego["t"].to_numpy()
    # Each checked condition fires at the first tick it holds (the tick it is evaluated on, or the next).
    truth = {
        "on_speed": t[np.argmax(target["speed_mps"].to_numpy() < 6.0)],
        "on_reach": t[np.argmax(np.hypot(ego["x"].to_numpy() - 60, ego["y"].to_numpy() + 1.75) < 1.25)],
        "on_distance": t[np.argmax(np.hypot(ego["x"].to_numpy() - 80, ego["y"].to_numpy() + 1.75) < 2.0)],
        "on_reldist": t[np.argmax(np.hypot(ego["x"].to_numpy() - target["x"].to_numpy(),
                                           ego["y"].to_numpy() - target["y"].to_numpy()) < 8.0)],
        "on_travel": t[np.argmax(ego["x"].to_numpy() - 20.0 >= 30.0)],
        "on_state": _fired(trace, "slow") + 0.5,
    }
    for name, expected in truth.items():
        assert abs(_fired(trace, name) - expected) <= dt + 1e-9, (name, _fired(trace, name), expected)


def test_routes_trajectories_visibility_and_teleport(folder):
    poly = xosc.Trajectory("poly", False)
    poly.add_shape(xosc.Polyline([], [xosc.WorldPosition(50, -5.25), xosc.WorldPosition(100, -5.25)]))
    clo = xosc.Trajectory("clo", False)
    clo.add_shape(xosc.Clothoid(0.0, 0.0, 60.0, xosc.WorldPosition(40, -1.75, 0, 0)))
    nurbs = xosc.Nurbs(2)
    for x in (60, 80, 100):
        nurbs.add_control_point(xosc.ControlPoint(xosc.WorldPosition(x, -1.75)))
    nurbs.add_knots([0, 0, 1, 2, 2])
    nt = xosc.Trajectory("nurbs", False)
    nt.add_shape(nurbs)
    route = xosc.Route("r")
    route.add_waypoint(xosc.LanePosition(30, 0, -2, 0), xosc.RouteStrategy.shortest)
    route.add_waypoint(xosc.LanePosition(200, 0, -2, 0), xosc.RouteStrategy.shortest)
    events = [
        ("Target", _event("follow_poly", xosc.FollowTrajectoryAction(
            poly, xosc.FollowingMode.position, xosc.ReferenceContext.relative, 1, 0), _time("a", 1.0))),
        ("Ego", _event("follow_clothoid", xosc.FollowTrajectoryAction(
            clo, xosc.FollowingMode.position, xosc.ReferenceContext.relative, 1, 0), _time("b", 1.0))),
        ("Ego", _event("follow_nurbs", xosc.FollowTrajectoryAction(
            nt, xosc.FollowingMode.position, xosc.ReferenceContext.relative, 1, 0), _time("c", 2.0))),
        ("Target", _event("route", xosc.AssignRouteAction(route), _time("d", 0.5))),
        ("Target", _event("hide", xosc.VisibilityAction(False, False, False), _time("e", 6.0))),
        ("Ego", _event("jump", xosc.TeleportAction(xosc.WorldPosition(100, -1.75)), _time("f", 3.0))),
    ]
    r = import_xosc(_scenario(folder, "routes", events))
    inters = {i.id: i for i in r.manifest.interactions}
    assert inters["follow_poly"].route.lanes == [LANE_R]
    assert inters["follow_clothoid"].route.lanes == [LANE_L] and inters["follow_nurbs"].route.lanes == [LANE_L]
    assert inters["route"].route.lanes == [LANE_R]
    assert inters["hide"].exist.state == "absent"
    assert "jump" not in inters
    lines = "\n".join(r.report.not_represented + r.report.approximated)
    assert "Event[jump]" in lines and "teleport during the story" in lines and "(line " in lines
    assert "Polyline trajectory (2 points)" in lines and "Clothoid trajectory" in lines and "Nurbs trajectory" in lines
    trace = run_simulation(r.manifest, r.template, backend=BACKEND).trace
    assert any(e["type"] == "despawn" and e["actor"] == "Target" for e in trace.events)


def test_parameters_and_a_distribution_file_give_a_batch(folder):
    params = xosc.ParameterDeclarations()
    params.add_parameter(xosc.Parameter("EgoSpeed", xosc.ParameterType.double, "10"))
    params.add_parameter(xosc.Parameter("Brake", xosc.ParameterType.double, "${$EgoSpeed / 2}"))
    ev = _event("slow", xosc.AbsoluteSpeedAction(
        "$Brake", xosc.TransitionDynamics(xosc.DynamicsShapes.linear, xosc.DynamicsDimension.rate, 2.0)),
        _time("t1", 1.0))
    path = _scenario(folder, "params", [("Ego", ev)], params, ego_speed="$EgoSpeed")
    r = import_xosc(path)
    assert r.manifest.actor("Ego").initial.speed_mps == 10.0 and r.manifest.interactions[0].speed.value == 5.0
    assert import_xosc(path, parameters={"EgoSpeed": 14}).manifest.interactions[0].speed.value == 7.0
    dist = folder / "dist.xosc"
    dist.write_text("""<?xml version="1.0"?>
<OpenSCENARIO><FileHeader author="t" description="d" revMajor="1" revMinor="1" date="2020-01-01T00:00:00"/>
<ParameterValueDistribution><ScenarioFile filepath="params.xosc"/>
<Deterministic><DeterministicSingleParameterDistribution parameterName="EgoSpeed">
  <DistributionSet><Element value="8"/><Element value="12"/></DistributionSet>
</DeterministicSingleParameterDistribution></Deterministic>
<Stochastic numberOfTestRuns="3" randomSeed="7"><StochasticDistribution parameterName="Brake">
  <UniformDistribution><Range lowerLimit="1" upperLimit="3"/></UniformDistribution></StochasticDistribution>
</Stochastic></ParameterValueDistribution></OpenSCENARIO>""")
    scenario, sets = read_distribution(dist)
    assert scenario == path.resolve() and len(sets) == 6
    assert [s["EgoSpeed"] for s in sets] == ["8"] * 3 + ["12"] * 3
    assert sets == read_distribution(dist)[1]  # the same file, the same draws
    assert all(1 <= float(s["Brake"]) <= 3 for s in sets)
    batch = import_distribution(dist)
    assert [b.manifest.sample_id for b in batch] == [f"xosc-dist-{k:04d}" for k in range(6)]
    assert [b.manifest.actor("Ego").initial.speed_mps for b in batch] == [8.0] * 3 + [12.0] * 3
    assert [b.manifest.interactions[0].speed.value for b in batch] == pytest.approx([float(s["Brake"]) for s in sets])
    assert math.isclose(batch[0].manifest.realized["xosc.param.Brake"], float(sets[0]["Brake"]))
