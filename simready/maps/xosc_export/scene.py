"""The scene before the story: entities with their catalog dimensions and rules, the Init (poses, speeds, routes,
visibility), the environment, routes, and the road network's signal controllers."""

from __future__ import annotations

import math
from typing import Any

from scenariogeneration import xosc

from simready.maps.xosc_export.base import BuilderBase
from simready.maps.xosc_export.vocabulary import TIME_OF_DAY
from simready.scenario.manifest.base import SignalState


class Scene(BuilderBase):
    """Entities, Init, environment, routes and signal controllers."""

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
        hour, minute = TIME_OF_DAY[env.illumination]
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
