"""Scenario manifest → ASAM OpenSCENARIO 1.3 (+ its road network as OpenDRIVE), written with ``scenariogeneration``.

Time: OpenSCENARIO simulation time starts at the manifest's initial poses,
which are the poses at the start of the warm-up, so manifest time ``t`` is
simulation time ``t + warmup_s``. Frames: the template's world frame is the
OpenDRIVE inertial frame the road network is written in (metres, radians).
Lanes: the road network is :func:`simready.maps.xodr_export.export_xodr`'s,
where template lane ``L`` is road ``road_of_lane[L]``, lane −1.

What maps to what (the report lists, per interaction, what was written and
what could not be):

* actors → Vehicle (car, van, bicycle for cyclists) or Pedestrian with the
  manifest's catalog dimensions; initial pose (TeleportAction) and speed;
  behaviour rules as entity properties (OpenSCENARIO has no action for them);
  an actor absent at start is made invisible (VisibilityAction);
* triggers → start triggers: ``at`` a SimulationTimeCondition, ``after`` a
  StoryboardElementStateCondition on the other event with its delay, ``when``
  its condition (distance, ttc, headway, reaches, speed, standstill, signal,
  collision; and/or as condition groups; ``not`` by the inverted rule) with
  ``by_latest`` as a time condition (``fire``: an alternative group;
  ``skip``: a bound in every group); ``arrival`` approximated by the
  partner's time-to-collision with the point; ``visible`` is not expressible;
* verbs → actions: speed (Absolute/RelativeSpeedAction), gap
  (LongitudinalDistanceAction), lane_offset (LaneOffsetAction), route
  (AssignRouteAction), exist (VisibilityAction), set lights.* (LightStateAction),
  doors.* (AnimationAction of the door component; a sliding door has none)
  and env.road_friction / env.rain_rate_mmph (EnvironmentAction), change_lane
  an AbsoluteLaneOffsetAction onto the target lane's centre (each template
  lane is its own road in the exported network, so a LaneChangeAction would
  find no neighbouring lane); doors.sliding, env.wetness, env.road_reflectance
  and ``until`` are not expressible;
* signal programs → traffic signal controllers whose phases are rotated so
  that simulation time 0 shows the state the manifest has at −warmup.
"""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenariogeneration import xosc

from simready.common import paths
from simready.common.atomic import json_bytes
from simready.common.hashing import sha256_bytes
from simready.maps.errors import MapError
from simready.maps.xodr_export import export_xodr
from simready.scenario.manifest import Condition, Dynamics, Interaction, ScenarioManifest, load_manifest
from simready.scenario.manifest.base import SignalState
from simready.scenario.manifest.triggers import (
    AfterTrigger,
    AndCondition,
    ArrivalTrigger,
    AtTrigger,
    CollisionCondition,
    DistanceCondition,
    HeadwayCondition,
    NotCondition,
    OrCondition,
    ReachesCondition,
    SignalCondition,
    SpeedCondition,
    StandstillCondition,
    TtcCondition,
    VisibleCondition,
)
from simready.world.template import WorldTemplate, load_template, template_hash

__all__ = ["VERBS", "XoscReport", "build_scenario", "export_xosc", "scenario_bytes"]

#: OpenSCENARIO minor version written: 1.3, because the 1.2 XML schema makes a LightStateAction need a user-defined
#: light *and* a vehicle light (a sequence where 1.3 has a choice), so no 1.2 light action validates.
OSC_MINOR_VERSION = 3
#: The file header's date: fixed, so the same manifest gives the same bytes (the date means nothing here).
HEADER_DATE = datetime.datetime(2000, 1, 1, 0, 0, 0)
#: Each verb and the OpenSCENARIO action it becomes (None: not expressible).
VERBS: dict[str, str | None] = {
    "speed": "AbsoluteSpeedAction / RelativeSpeedAction",
    "gap": "LongitudinalDistanceAction",
    "change_lane": "AbsoluteLaneOffsetAction (the centre spacing to the target lane)",
    "lane_offset": "AbsoluteLaneOffsetAction",
    "route": "AssignRouteAction",
    "exist": "VisibilityAction",
    "set": "LightStateAction (lights.*), AnimationAction (doors.* but doors.sliding), EnvironmentAction "
           "(env.road_friction, env.rain_rate_mmph)",
}
_LIGHTS = {"lights.brake": "brakeLights", "lights.hazard": "warningLights", "lights.indicator_left": "indicatorLeft",
           "lights.indicator_right": "indicatorRight"}
_DOORS = {"doors.front_left": "doorFrontLeft", "doors.front_right": "doorFrontRight",
          "doors.rear_left": "doorRearLeft", "doors.rear_right": "doorRearRight", "doors.tailgate": "trunk"}
#: How long a door takes to open or close (s): the manifest sets the state, not the motion.
DOOR_MOTION_S = 1.0
#: Peak lateral acceleration written for a step lane offset (m/s²): as good as immediate.
STEP_LATERAL_ACC = 100.0
_SHAPES = {"step": xosc.DynamicsShapes.step, "linear": xosc.DynamicsShapes.linear,
           "sinusoidal": xosc.DynamicsShapes.sinusoidal, "cubic": xosc.DynamicsShapes.cubic}
_DIMENSIONS = {"rate": xosc.DynamicsDimension.rate, "time": xosc.DynamicsDimension.time,
               "distance": xosc.DynamicsDimension.distance}
_RULES = {"lt": xosc.Rule.lessThan, "gt": xosc.Rule.greaterThan}
_INVERTED = {"lt": xosc.Rule.greaterOrEqual, "gt": xosc.Rule.lessOrEqual}
_TIME_OF_DAY = {"day": (12, 0), "dusk": (19, 30), "night": (23, 0)}


@dataclass
class XoscReport:
    """Per interaction: what was written, and what could not be expressed (one line each)."""

    written: list[str] = field(default_factory=list)
    not_expressed: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"written: {w}" for w in self.written] + [f"not expressed: {n}" for n in self.not_expressed]

    def to_json(self) -> dict[str, Any]:
        return {"verbs": {k: v or "not expressible" for k, v in VERBS.items()}, "written": self.written,
                "not_expressed": self.not_expressed}


class _Builder:
    def __init__(self, m: ScenarioManifest, t: WorldTemplate, road_of_lane: dict[str, int], report: XoscReport) -> None:
        self.m = m
        self.t = t
        self.road_of_lane = road_of_lane
        self.report = report
        self.signal_ids = {s.id: str(k + 1) for k, s in enumerate(sorted(t.signals, key=lambda s: s.id))}

    def time(self, t_s: float) -> float:
        return t_s + self.m.warmup_s

    def lane_position(self, lane: str, s_m: float) -> xosc.LanePosition:
        if lane not in self.road_of_lane:
            raise MapError(self.m.sample_id, "lane", f"lane {lane!r} is not in template {self.t.id}")
        return xosc.LanePosition(s_m, 0.0, "-1", str(self.road_of_lane[lane]))

    # -- entities and init --

    def entities(self) -> xosc.Entities:
        entities = xosc.Entities()
        for actor in sorted(self.m.actors, key=lambda a: a.id):
            d = actor.dims
            box = xosc.BoundingBox(d.w, d.l, d.h, 0.0, 0.0, d.h / 2)
            if actor.kind == "pedestrian":
                obj = xosc.Pedestrian(actor.id, 75.0, xosc.PedestrianCategory.pedestrian, box, model=actor.asset_id)
            else:
                category = xosc.VehicleCategory.bicycle if actor.kind == "cyclist" else (
                    xosc.VehicleCategory.van if "van" in actor.asset_id else xosc.VehicleCategory.car)
                front = xosc.Axle(0.5, 0.7, min(d.w, 1.8), d.l * 0.3, 0.35)
                rear = xosc.Axle(0.0, 0.7, min(d.w, 1.8), -d.l * 0.3, 0.35)
                obj = xosc.Vehicle(actor.id, category, box, front, rear, 70.0, 10.0, 10.0)
            rules = actor.behavior.rules
            for key, value in (("obey_signals", rules.obey_signals), ("yield", rules.yield_),
                               ("collision_avoidance", rules.collision_avoidance), ("aggression", rules.aggression),
                               ("speed_factor", rules.speed_factor), ("role", actor.role), ("asset_id", actor.asset_id)):
                obj.add_property(f"simready.{key}", str(value).lower() if isinstance(value, bool) else str(value))
            # What the import (simready.maps.xosc_import) needs to be this export's inverse.
            if actor.tags:
                obj.add_property("simready.tags", " ".join(actor.tags))
            if actor.behavior.cruise_speed_mps is not None:
                obj.add_property("simready.cruise_speed_mps", repr(actor.behavior.cruise_speed_mps))
            for occ in self.m.occluders:
                if occ.actor_id == actor.id:
                    obj.add_property("simready.occluder", occ.id)
            if actor.walk is not None:
                obj.add_property("simready.reaction_delay_s", repr(actor.walk.reaction_delay_s))
                obj.add_property("simready.stop_tendency", repr(actor.walk.stop_tendency))
                if actor.walk.via:
                    # The route's first waypoints are the mid-block crossing's points, not walkable nodes.
                    obj.add_property("simready.via_points", str(len(actor.walk.via)))
            entities.add_scenario_object(actor.id, obj)
        self.report.written.append("behaviour rules, role and asset id of each actor: entity properties "
                                   "(OpenSCENARIO has no action for them)")
        return entities

    def init(self) -> xosc.Init:
        init = xosc.Init()
        for actor in sorted(self.m.actors, key=lambda a: a.id):
            p = actor.initial.pose
            init.add_init_action(actor.id, xosc.TeleportAction(xosc.WorldPosition(p.x, p.y, 0.0, p.yaw, 0.0, 0.0)))
            init.add_init_action(actor.id, xosc.AbsoluteSpeedAction(
                actor.initial.speed_mps, xosc.TransitionDynamics(xosc.DynamicsShapes.step, xosc.DynamicsDimension.time, 0.0)))
            if not actor.present_at_start:
                init.add_init_action(actor.id, xosc.VisibilityAction(False, False, False))
            route = self.route(f"route_{actor.id}", actor.behavior.route, actor.walk.route if actor.walk else [],
                               [(v.x, v.y) for v in actor.walk.via] if actor.walk else [])
            if route is not None:
                init.add_init_action(actor.id, xosc.AssignRouteAction(route))
        init.add_global_action(xosc.EnvironmentAction(self.environment()))
        return init

    def environment(self, friction: float | None = None, rain_mmph: float | None = None) -> xosc.Environment:
        env = self.m.environment
        hour, minute = _TIME_OF_DAY[env.illumination]
        rain = env.rain_rate_mmph if rain_mmph is None else rain_mmph
        weather = xosc.Weather(
            sun=xosc.Sun(1.0 if env.illumination == "day" else 0.1, math.radians(env.sun_azimuth_deg),
                         math.radians(env.sun_elevation_deg)),
            precipitation=xosc.Precipitation(xosc.PrecipitationType.rain if rain > 0 else xosc.PrecipitationType.dry,
                                             rain))
        return xosc.Environment("environment", xosc.TimeOfDay(False, 2000, 6, 21, hour, minute, 0), weather,
                                xosc.RoadCondition(env.road_friction if friction is None else friction))

    def route(self, name: str, lanes: list[str], nodes: list[str],
              via: list[tuple[float, float]] | None = None) -> xosc.Route | None:
        """A route through template lanes (their starts) or walkable nodes, after a pedestrian's mid-block ``via``
        points; None when all are empty (and one waypoint cannot make a route, so a single lane or node gets its
        end too)."""
        points: list[Any] = [xosc.WorldPosition(x, y) for x, y in via or []]
        for lane in lanes:
            points.append(self.lane_position(lane, 0.0))
        if len(lanes) == 1:
            points.append(self.lane_position(lanes[0], self.t.lane_graph.lane(lanes[0]).length_m))
        for node in nodes:
            x, y = self.t.walkable.nodes[node]
            points.append(xosc.WorldPosition(x, y))
        if len(points) < 2:
            return None
        route = xosc.Route(name)
        for p in points:
            route.add_waypoint(p, xosc.RouteStrategy.shortest)
        return route

    # -- signals --

    def controllers(self, network: xosc.RoadNetwork) -> None:
        for prog in sorted(self.m.signal_programs, key=lambda p: p.id):
            cycle = sum(ph.duration_s for ph in prog.phases)
            shift = (-self.m.warmup_s - prog.offset_s) % cycle
            phases = [(ph.state, ph.duration_s) for ph in prog.phases]
            rotated: list[tuple[SignalState, float]] = []
            start = 0.0
            for state, dur in phases:
                if start + dur > shift and not rotated:
                    rotated.append((state, start + dur - shift))
                    head = phases[phases.index((state, dur)) + 1:]
                    tail = phases[:phases.index((state, dur))]
                    rotated += head + tail + ([(state, shift - start)] if shift - start > 1e-9 else [])
                start += dur
            ctrl = xosc.TrafficSignalController(f"controller_{prog.id}")
            signal = self.signal_ids.get(prog.id)
            if signal is None:
                self.report.not_expressed.append(f"signal program {prog.id}: no such signal in template {self.t.id}")
                continue
            for k, (state, dur) in enumerate(rotated):
                phase = xosc.Phase(f"{k}_{state}", dur)
                phase.add_signal_state(signal, state)
                ctrl.add_phase(phase)
            network.add_traffic_signal_controller(ctrl)
            self.report.written.append(f"signal program {prog.id}: TrafficSignalController on signal {signal}")

    # -- triggers --

    def _leaf(self, where: str, cond: Condition, negate: bool = False) -> tuple[Any, str | None] | None:
        """(condition, triggering entity or None for a value condition); None when not expressible."""
        rule = (_INVERTED if negate else _RULES).get(getattr(cond, "op", ""), None)
        if isinstance(cond, DistanceCondition):
            kind = xosc.RelativeDistanceType.longitudinal if cond.metric == "along_lane" else \
                xosc.RelativeDistanceType.euclidianDistance
            system = xosc.CoordinateSystem.lane if cond.metric == "along_lane" else xosc.CoordinateSystem.entity
            return xosc.RelativeDistanceCondition(cond.value_m, rule, kind, cond.b, alongroute=False, freespace=False,
                                                  coordinate_system=system), cond.a
        if isinstance(cond, TtcCondition):
            return xosc.TimeToCollisionCondition(cond.value_s, rule, alongroute=False, freespace=False,
                                                 entity=cond.b), cond.a
        if isinstance(cond, HeadwayCondition):
            return xosc.TimeHeadwayCondition(cond.b, cond.value_s, rule, alongroute=False, freespace=False), cond.a
        if isinstance(cond, SpeedCondition):
            return xosc.SpeedCondition(cond.value_mps, rule), cond.actor
        if negate:
            self.report.not_expressed.append(f"{where}: not({cond.kind}) (no inverse in OpenSCENARIO)")
            return None
        if isinstance(cond, ReachesCondition):
            region = cond.region
            if region.shape == "circle":
                return _within(xosc.WorldPosition(region.x, region.y), region.r), cond.actor
            if region.shape == "lane_window":
                mid = 0.5 * (region.s_from + region.s_to)
                return _within(self.lane_position(region.lane, mid), 0.5 * (region.s_to - region.s_from)), cond.actor
            xs = [p.x for p in region.points]
            ys = [p.y for p in region.points]
            cx, cy = sum(xs) / len(xs), sum(ys) / len(ys)
            r = max(math.hypot(x - cx, y - cy) for x, y in zip(xs, ys))
            self.report.not_expressed.append(f"{where}: reaches a polygon, approximated by the circle around it "
                                             f"(centre {cx:.2f}, {cy:.2f}, radius {r:.2f} m)")
            return _within(xosc.WorldPosition(cx, cy), r), cond.actor
        if isinstance(cond, StandstillCondition):
            return xosc.StandStillCondition(cond.for_s), cond.actor
        if isinstance(cond, SignalCondition):
            signal = self.signal_ids.get(cond.signal, cond.signal)
            return xosc.TrafficSignalCondition(signal, cond.state), None
        if isinstance(cond, CollisionCondition):
            return xosc.CollisionCondition(cond.b if cond.b is not None else xosc.ObjectType.vehicle), cond.a
        if isinstance(cond, VisibleCondition):
            self.report.not_expressed.append(f"{where}: visible({cond.a} to {cond.to}) has no OpenSCENARIO condition")
            return None
        self.report.not_expressed.append(f"{where}: condition {cond.kind}")
        return None

    def _trigger_item(self, name: str, leaf: tuple[Any, str | None]) -> Any:
        cond, entity = leaf
        if entity is None:
            return xosc.ValueTrigger(name, 0.0, xosc.ConditionEdge.none, cond)
        return xosc.EntityTrigger(name, 0.0, xosc.ConditionEdge.none, cond, entity)

    def _time_item(self, name: str, t_s: float, rule: xosc.Rule) -> Any:
        return xosc.ValueTrigger(name, 0.0, xosc.ConditionEdge.none, xosc.SimulationTimeCondition(self.time(t_s), rule))

    def start_trigger(self, inter: Interaction) -> xosc.Trigger:
        where = f"interaction {inter.id} trigger"
        trig = inter.trigger
        out = xosc.Trigger()
        if isinstance(trig, AtTrigger):
            out.add_conditiongroup(_group(self._time_item(f"{inter.id}_at", trig.t_s, xosc.Rule.greaterOrEqual)))
            self.report.written.append(f"{where}: at {trig.t_s} s -> SimulationTimeCondition {self.time(trig.t_s):g} s")
            return out
        if isinstance(trig, AfterTrigger):
            cond = xosc.StoryboardElementStateCondition(xosc.StoryboardElementType.event, trig.id,
                                                        xosc.StoryboardElementState.startTransition)
            out.add_conditiongroup(_group(xosc.ValueTrigger(f"{inter.id}_after", trig.delay_s, xosc.ConditionEdge.none,
                                                            cond)))
            self.report.written.append(f"{where}: after {trig.id} + {trig.delay_s} s -> StoryboardElementStateCondition")
            return out
        if isinstance(trig, ArrivalTrigger):
            return self._arrival(inter, trig, out)
        groups = self._condition_groups(inter, trig.condition)
        deadline = trig.by_latest_s
        if trig.if_never == "fire":
            groups = (groups or []) + [[self._time_item(f"{inter.id}_by_latest", deadline, xosc.Rule.greaterOrEqual)]]
        elif groups:
            groups = [g + [self._time_item(f"{inter.id}_before", deadline, xosc.Rule.lessThan)] for g in groups]
        else:
            # Nothing expressible and skipped when it never holds: an event that never starts.
            groups = [[self._time_item(f"{inter.id}_never", self.m.clip_s + 1.0, xosc.Rule.greaterThan)]]
        for g in groups:
            out.add_conditiongroup(_group(*g))
        self.report.written.append(f"{where}: when {trig.condition.kind} (by_latest {deadline} s, {trig.if_never}) "
                                   f"-> {len(groups)} condition group(s)")
        return out

    def _condition_groups(self, inter: Interaction, cond: Condition) -> list[list[Any]] | None:
        where = f"interaction {inter.id} trigger"
        if isinstance(cond, AndCondition):
            leaves = [self._leaf(where, c) for c in cond.of]
            present = [leaf for leaf in leaves if leaf is not None]
            if len(present) < len(leaves):
                return None
            return [[self._trigger_item(f"{inter.id}_c{k}", leaf) for k, leaf in enumerate(present)]]
        if isinstance(cond, OrCondition):
            leaves = [self._leaf(where, c) for c in cond.of]
            return [[self._trigger_item(f"{inter.id}_c{k}", leaf)] for k, leaf in enumerate(leaves) if leaf is not None] or None
        leaf = self._leaf(where, cond.of, negate=True) if isinstance(cond, NotCondition) else self._leaf(where, cond)
        return None if leaf is None else [[self._trigger_item(f"{inter.id}_c0", leaf)]]

    def _arrival(self, inter: Interaction, trig: ArrivalTrigger, out: xosc.Trigger) -> xosc.Trigger:
        where = f"interaction {inter.id} trigger"
        if trig.at is None:
            self.report.not_expressed.append(f"{where}: arrival at conflict point {trig.conflict_point} "
                                             "(a template place OpenDRIVE does not hold); written: never starts")
            out.add_conditiongroup(_group(self._time_item(f"{inter.id}_never", self.m.clip_s + 1.0, xosc.Rule.greaterThan)))
            return out
        value = trig.ttc_s if trig.ttc_s is not None else abs(trig.delta_t_s or 0.0)  # exactly one is set
        cond = xosc.TimeToCollisionCondition(value, xosc.Rule.lessOrEqual, alongroute=False, freespace=False,
                                             position=xosc.WorldPosition(trig.at.x, trig.at.y))
        out.add_conditiongroup(_group(xosc.EntityTrigger(f"{inter.id}_arrival", 0.0, xosc.ConditionEdge.none, cond,
                                                         trig.sync_with)))
        self.report.not_expressed.append(f"{where}: arrival of {trig.of} in sync with {trig.sync_with} is solved at "
                                         f"run time; approximated as {trig.sync_with}'s time to ({trig.at.x}, "
                                         f"{trig.at.y}) <= {value} s")
        return out

    # -- verbs --

    def actions(self, inter: Any) -> list[tuple[Any, bool]]:
        """``[(action, private)]`` for the interaction's verb; [] when not expressible (reported)."""
        where = f"interaction {inter.id}"
        dyn = inter.dynamics
        trans = xosc.TransitionDynamics(_SHAPES[dyn.shape], _DIMENSIONS[dyn.constraint], dyn.value) if dyn else \
            xosc.TransitionDynamics(xosc.DynamicsShapes.step, xosc.DynamicsDimension.time, 0.0)
        if inter.until is not None:
            self.report.not_expressed.append(f"{where}: until {inter.until.kind} (an OpenSCENARIO action holds until "
                                             "another takes its axis)")
        if inter.speed is not None:
            v = inter.speed
            if v.mode == "absolute":
                return [(xosc.AbsoluteSpeedAction(v.value, trans), True)]
            if v.mode == "stop":
                return [(xosc.AbsoluteSpeedAction(0.0, trans), True)]
            if v.mode == "match":
                return [(xosc.RelativeSpeedAction(0.0, v.target, trans, xosc.SpeedTargetValueType.delta, True), True)]
            kind = xosc.SpeedTargetValueType.delta if v.mode == "delta" else xosc.SpeedTargetValueType.factor
            return [(xosc.RelativeSpeedAction(v.value, inter.actor_id, trans, kind, False), True)]
        if inter.gap is not None:
            g = inter.gap
            kw = {"distance": g.value} if g.unit == "distance" else {"timeGap": g.value}
            return [(xosc.LongitudinalDistanceAction(g.target, freespace=True, continuous=True, **kw), True)]
        if inter.lane_offset is not None:
            value = inter.lane_offset.value
            if inter.lane_offset.unit == "fraction":
                actor = next(a for a in self.m.actors if a.id == inter.actor_id)
                lane = actor.initial.lane_ref.lane if actor.initial.lane_ref else None
                width = self.t.lane_graph.lane(lane).width_m if lane in self.t.lane_graph.lanes else 3.5
                value *= width
            max_acc = _lateral_acc(dyn, abs(value), _span(dyn, abs(value), self._speed(inter.actor_id)))
            return [(xosc.AbsoluteLaneOffsetAction(value, _SHAPES[dyn.shape] if dyn else xosc.DynamicsShapes.step,
                                                   max_acc), True)]
        if inter.route is not None:
            route = self.route(f"route_{inter.id}", inter.route.lanes or [], inter.route.nodes or [])
            return [(xosc.AssignRouteAction(route), True)]
        if inter.exist is not None:
            shown = inter.exist.state == "present"
            return [(xosc.VisibilityAction(shown, shown, shown), True)]
        if inter.set is not None:
            key, value = inter.set.key, inter.set.value
            if key in _LIGHTS:
                mode = xosc.LightMode.on if value else xosc.LightMode.off
                return [(xosc.LightStateAction(getattr(xosc.VehicleLightType, _LIGHTS[key]), mode), True)]
            if key == "lights.headlights":
                return [(xosc.LightStateAction(xosc.VehicleLightType.lowBeam,
                                               xosc.LightMode.off if value == "off" else xosc.LightMode.on), True),
                        (xosc.LightStateAction(xosc.VehicleLightType.highBeam,
                                               xosc.LightMode.on if value == "high" else xosc.LightMode.off), True)]
            if key == "env.road_friction":
                return [(xosc.EnvironmentAction(self.environment(friction=float(value))), False)]
            if key == "env.rain_rate_mmph":
                return [(xosc.EnvironmentAction(self.environment(rain_mmph=float(value))), False)]
            if key in _DOORS:
                # A door is a vehicle component animated from closed (0) to open (1).
                return [(xosc.AnimationAction(getattr(xosc.VehicleComponentType, _DOORS[key]), DOOR_MOTION_S, False,
                                              1.0 if value == "open" else 0.0), True)]
            self.report.not_expressed.append(f"{where}: set {key} (no OpenSCENARIO 1.3 action)")
            return []
        if inter.change_lane is not None:
            return self._change_lane(inter, where)
        self.report.not_expressed.append(f"{where}: no verb")
        return []

    def _change_lane(self, inter: Any, where: str) -> list[tuple[Any, bool]]:
        """A lane change as a lane offset of the centre spacing to the target lane.

        Why: each template lane is its own road in the exported network, so a
        LaneChangeAction would find no neighbouring lane; an offset moves the
        actor onto the target lane's centre with the manifest's shape, its
        duration turned into the peak lateral acceleration the action takes.
        """
        cl = inter.change_lane
        actor = next(a for a in self.m.actors if a.id == inter.actor_id)
        graph = self.t.lane_graph
        if actor.initial.lane_ref is None or actor.initial.lane_ref.lane not in graph.lanes:
            self.report.not_expressed.append(f"{where}: change_lane of an actor that starts on no template lane")
            return []
        lane = actor.initial.lane_ref.lane
        target = {"left": graph.left.get(lane), "right": graph.right.get(lane), "lane": cl.lane}.get(cl.mode)
        if cl.mode == "actor_lane":
            other = next((a for a in self.m.actors if a.id == cl.actor), None)
            target = other.initial.lane_ref.lane if other and other.initial.lane_ref else None
        if target is None or target not in graph.lanes:
            self.report.not_expressed.append(f"{where}: change_lane {cl.mode}: no target lane beside {lane}")
            return []
        x, y = graph.lane(target).point_at(min(actor.initial.lane_ref.s, graph.lane(target).length_m))
        _, offset = graph.project(lane, x, y)
        dyn = inter.dynamics
        max_acc = _lateral_acc(dyn, abs(offset), _span(dyn, abs(offset), actor.initial.speed_mps))
        self.report.written.append(f"{where}: change_lane {cl.mode} to {target} as AbsoluteLaneOffsetAction "
                                   f"{offset:.2f} m, max lateral acceleration {max_acc:.2f} m/s^2")
        return [(xosc.AbsoluteLaneOffsetAction(offset, _SHAPES[dyn.shape] if dyn else xosc.DynamicsShapes.step,
                                               max_acc, continuous=False), True)]

    def _speed(self, actor_id: str | None) -> float:
        actor = next((a for a in self.m.actors if a.id == actor_id), None)
        return actor.initial.speed_mps if actor is not None else 0.0

    def storyboard(self) -> xosc.StoryBoard:
        act = xosc.Act("simready", xosc.ValueTrigger("act_start", 0.0, xosc.ConditionEdge.none,
                                                       xosc.SimulationTimeCondition(0.0, xosc.Rule.greaterOrEqual)))
        groups: dict[str, xosc.ManeuverGroup] = {}
        maneuvers: dict[str, xosc.Maneuver] = {}
        for inter in sorted(self.m.interactions, key=lambda i: i.id):
            actions = self.actions(inter)
            if not actions:
                continue
            owner = inter.actor_id or "world"
            if owner not in groups:
                groups[owner] = xosc.ManeuverGroup(f"group_{owner}")
                if inter.actor_id is not None:
                    groups[owner].add_actor(inter.actor_id)
                maneuvers[owner] = xosc.Maneuver(f"maneuver_{owner}")
            event = xosc.Event(inter.id, xosc.Priority.parallel)
            for k, (action, _private) in enumerate(actions):
                event.add_action(f"{inter.id}_action{k}", action)
            event.add_trigger(self.start_trigger(inter))
            maneuvers[owner].add_event(event)
            self.report.written.append(f"interaction {inter.id}: {', '.join(type(a).__name__ for a, _ in actions)}")
        for owner in sorted(groups):
            groups[owner].add_maneuver(maneuvers[owner])
            act.add_maneuver_group(groups[owner])
        if not groups:
            # The schema wants at least one maneuver group in an act: an empty one for a manifest without events.
            act.add_maneuver_group(xosc.ManeuverGroup("group_none"))
        story = xosc.Story("simready")
        story.add_act(act)
        stop = xosc.ValueTrigger("stop", 0.0, xosc.ConditionEdge.none,
                                 xosc.SimulationTimeCondition(self.time(self.m.clip_s), xosc.Rule.greaterOrEqual),
                                 "stop")
        board = xosc.StoryBoard(self.init(), stop)
        board.add_story(story)
        return board


def _span(dyn: Dynamics | None, distance_m: float, speed_mps: float) -> float:
    """Duration (s) of a lateral move of ``distance_m`` under the manifest's dynamics constraint."""
    if dyn is None:
        return 0.0
    if dyn.constraint == "time":
        return dyn.value
    if dyn.constraint == "distance":
        return dyn.value / max(speed_mps, 0.1)
    return distance_m / max(dyn.value, 1e-6)


def _lateral_acc(dyn: Dynamics | None, distance_m: float, span_s: float) -> float:
    """Peak lateral acceleration (m/s²) of a move of ``distance_m`` in ``span_s`` with the manifest's shape.

    A LaneOffsetAction is bounded by acceleration, not duration: sinusoidal
    y = d(1 − cos(πt/T))/2 peaks at π²d/(2T²), cubic (smoothstep) at 6d/T²,
    linear is taken as the bang-bang profile covering d in T (4d/T²); a step
    (or no duration) gets :data:`STEP_LATERAL_ACC`.
    """
    peak = {"sinusoidal": math.pi ** 2 / 2.0, "cubic": 6.0, "linear": 4.0}.get(dyn.shape if dyn else "step")
    if peak is None or span_s <= 0.0:
        return STEP_LATERAL_ACC
    return max(peak * distance_m / span_s ** 2, 1e-3)


def _within(position: Any, radius_m: float) -> xosc.DistanceCondition:
    """The actor is within ``radius_m`` of ``position`` (the form that replaces the deprecated ReachPositionCondition)."""
    return xosc.DistanceCondition(radius_m, xosc.Rule.lessThan, position, alongroute=False, freespace=False,
                                  distance_type=xosc.RelativeDistanceType.euclidianDistance)


def _group(*items: Any) -> xosc.ConditionGroup:
    group = xosc.ConditionGroup()
    for item in items:
        group.add_condition(item)
    return group


def header_properties(m: ScenarioManifest, map_source: tuple[str, str] | None = None) -> xosc.Properties:
    """The manifest's clock and the environment fields OpenSCENARIO has no place for, as file header properties
    (``simready.*``), so that the import is this export's inverse: simulation time 0 is manifest time
    ``-warmup_s``, which the file's times alone cannot tell. ``map_source`` — ``(template hash, sha256 of the
    OpenDRIVE written beside)`` — lets the import recognise the map as the template's export without exporting
    the template again (both must still hold when it reads them)."""
    props = xosc.Properties()
    if map_source is not None:
        props.add_property("simready.template_hash", map_source[0])
        props.add_property("simready.map_sha256", map_source[1])
    env = m.environment
    for key, value in (("sample_id", m.sample_id), ("template_id", m.template_id), ("warmup_s", m.warmup_s),
                       ("clip_s", m.clip_s), ("dt", m.dt), ("metric_subject", m.metric_subject),
                       ("weather", env.weather), ("wetness", env.wetness), ("road_reflectance", env.road_reflectance),
                       ("headlights", env.headlights), ("sun_elevation_deg", env.sun_elevation_deg),
                       ("sun_azimuth_deg", env.sun_azimuth_deg)):
        props.add_property(f"simready.{key}", str(value).lower() if isinstance(value, bool) else
                           repr(value) if isinstance(value, float) else str(value))
    return props


def build_scenario(m: ScenarioManifest, t: WorldTemplate, road_file: str, road_of_lane: dict[str, int],
                   map_sha256: str | None = None) -> tuple[xosc.Scenario, XoscReport]:
    """The OpenSCENARIO object of manifest ``m`` on template ``t`` (road network ``road_file``, whose sha256 is
    ``map_sha256`` when known) and its report."""
    if m.template_id != t.id:
        raise MapError(m.sample_id, "template_id", f"manifest is on template {m.template_id!r}, not {t.id!r}")
    report = XoscReport()
    b = _Builder(m, t, road_of_lane, report)
    network = xosc.RoadNetwork(roadfile=road_file)
    b.controllers(network)
    for occ in m.occluders:
        if occ.kind != "actor":
            report.not_expressed.append(f"occluder {occ.id} ({occ.kind}): static world, held by the template")
    scenario = xosc.Scenario(f"{m.sample_id}", "simready", xosc.ParameterDeclarations(), b.entities(), b.storyboard(),
                             network, xosc.Catalog(), osc_minor_version=OSC_MINOR_VERSION, creation_date=HEADER_DATE,
                             header_properties=header_properties(
                                 m, None if map_sha256 is None else (template_hash(t), map_sha256)))
    return scenario, report


def scenario_bytes(scenario: xosc.Scenario) -> bytes:
    """The scenario's XML, with the one fix the schema needs: scenariogeneration 0.16.7 writes a
    LightStateAction's LightState before its LightType; the schema's sequence is the other way round."""
    root: ET.Element = scenario.get_element()
    for action in root.iter("LightStateAction"):
        light_type = action.find("LightType")
        if light_type is not None:
            action.remove(light_type)
            action.insert(0, light_type)
    ET.indent(root, space="    ")
    xml: bytes = ET.tostring(root, encoding="utf-8")
    return b"<?xml version='1.0' encoding='utf-8'?>\n" + xml + b"\n"


def export_xosc(manifest: Path, template: Path | None, out: Path) -> XoscReport:
    """Write ``<sample_id>.xosc``, ``<template_id>.xodr`` and ``export_report.json`` into folder ``out``."""
    m = load_manifest(manifest)
    t = load_template(template or paths.TEMPLATES_DIR / f"{m.template_id}.yaml")
    xodr_bytes, xodr_report = export_xodr(t)
    road_file = f"{t.id}.xodr"
    scenario, report = build_scenario(m, t, road_file, xodr_report.road_of_lane, sha256_bytes(xodr_bytes))
    (out / road_file).write_bytes(xodr_bytes)
    (out / f"{m.sample_id}.xosc").write_bytes(scenario_bytes(scenario))
    report.not_expressed += [f"road network: {line}" for line in xodr_report.not_expressed]
    (out / "export_report.json").write_bytes(json_bytes(report.to_json()))
    return report



