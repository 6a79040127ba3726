"""Private actions → the manifest's verbs: speed, gap, lane change, lane offset, routes and trajectories, visibility,
lights and doors, with their transition dynamics; an environment action → the environment it sets."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from lxml import etree

from simready.maps.xosc_import.context import Entity, Event
from simready.maps.xosc_import.positions import Positions


_SHAPES = {"step": "step", "linear": "linear", "sinusoidal": "sinusoidal", "cubic": "cubic"}


_LIGHTS = {"brakeLights": "lights.brake", "warningLights": "lights.hazard", "indicatorLeft": "lights.indicator_left",
           "indicatorRight": "lights.indicator_right"}


_DOORS = {"doorFrontLeft": "doors.front_left", "doorFrontRight": "doors.front_right",
          "doorRearLeft": "doors.rear_left", "doorRearRight": "doors.rear_right", "trunk": "doors.tailgate"}

#: A LaneOffsetAction whose offset lies within this of a neighbouring lane's centre is a lane change (m).
LANE_CENTRE_TOLERANCE_M = 0.05

_PEAK = {"sinusoidal": math.pi ** 2 / 2.0, "cubic": 6.0, "linear": 4.0}


class Actions(Positions):
    """One private action of an event (or of the Init) as a verb, and an EnvironmentAction as the environment."""

    def _environment(self, env_action: etree._Element) -> None:
        env = env_action.find("Environment")
        if env is None:
            self.note(env_action, "environment by catalog reference is not read")
            return
        rc = env.find("RoadCondition")
        if rc is not None:
            self.env["road_friction"] = min(2.0, max(0.05, self.rd.num(rc, "frictionScaleFactor", 0.9)))
        pr = env.find("Weather/Precipitation")
        if pr is not None:
            kind = self.rd.text(pr, "precipitationType", "dry")
            rate = self.rd.num(pr, "precipitationIntensity", self.rd.num(pr, "intensity", 0.0))
            if kind != "dry" and rate > 0:
                self.env.update(weather="rain", rain_rate_mmph=min(rate, 500.0),
                                wetness=max(self.env["wetness"], 0.5))
        sun = env.find("Weather/Sun")
        if sun is not None:
            self.env["sun_elevation_deg"] = math.degrees(self.rd.num(sun, "elevation", math.radians(45)))
            self.env["sun_azimuth_deg"] = math.degrees(self.rd.num(sun, "azimuth", math.pi)) % 360.0
        tod = env.find("TimeOfDay")
        if tod is not None and sun is None:
            hour = int(self.rd.text(tod, "dateTime", "2000-01-01T12:00:00")[11:13] or 12)
            self.env["sun_elevation_deg"] = 45.0 if 8 <= hour <= 17 else (0.0 if hour in (7, 18, 19) else -20.0)

    def _dynamics(self, el: etree._Element | None, owner: etree._Element) -> dict[str, Any]:
        if el is None:
            raise self.rd.error(owner, f"<{owner.tag}> has no dynamics")
        shape = self.rd.text(el, "dynamicsShape")
        dim = self.rd.text(el, "dynamicsDimension")
        value = abs(self.rd.num(el, "value"))
        if shape not in _SHAPES:
            raise self.rd.error(el, f"dynamicsShape {shape!r} is not step, linear, sinusoidal or cubic")
        if dim not in ("rate", "time", "distance"):
            raise self.rd.error(el, f"dynamicsDimension {dim!r} is not rate, time or distance")
        if shape != "step" and value == 0:
            shape = "step"
        if shape == "step":
            return {"shape": "step", "constraint": dim, "value": value}
        return {"shape": shape, "constraint": dim, "value": value}

    def _private(self, pa: etree._Element, ent: Entity, event: Event) -> dict[str, Any] | None:
        rd = self.rd
        action = next(iter(pa), None)
        if action is None:
            return None
        inner = next(iter(action), None)
        tag = inner.tag if inner is not None and action.tag in ("LongitudinalAction", "LateralAction",
                                                                 "RoutingAction", "AppearanceAction") else action.tag
        # Where the verb's fields are read: the action's first child (the grouped verb), or the action when it has none.
        verb = inner if inner is not None else action
        if tag == "SpeedAction":
            dyn = self._dynamics(verb.find("SpeedActionDynamics"), verb)
            target = verb.find("SpeedActionTarget")
            if target is None:
                raise rd.error(verb, "SpeedAction without a target")
            absolute = target.find("AbsoluteTargetSpeed")
            if absolute is not None:
                v = rd.num(absolute, "value")
                event.duration_s = _duration(dyn, abs(v - ent.speed), ent.speed)
                speed = {"mode": "stop"} if v <= 0 else {"mode": "absolute", "value": v}
                return {"speed": speed, "dynamics": dyn}
            rel = target.find("RelativeTargetSpeed")
            ref = self.entity(rel, rd.text(rel, "entityRef"))
            value = rd.num(rel, "value")
            kind = rd.text(rel, "speedTargetValueType", "delta")
            continuous = rd.text(rel, "continuous", "false") == "true"
            if ref.name == ent.name:
                if kind == "factor":
                    return {"speed": {"mode": "factor", "value": max(0.0, value)}, "dynamics": dyn}
                return {"speed": {"mode": "delta", "value": value}, "dynamics": dyn}
            if value == 0 and kind == "delta":
                if not continuous:
                    self.note(verb, f"speed to {ref.name}'s speed once is held as a match", approximated=True)
                return {"speed": {"mode": "match", "target": ref.id}, "dynamics": dyn}
            v = ref.speed * value if kind == "factor" else ref.speed + value
            self.note(verb, f"speed relative to {ref.name} ({kind} {value:g}) taken at {ref.name}'s initial speed: "
                             f"absolute {max(v, 0):.3f} m/s", approximated=True)
            return {"speed": {"mode": "absolute", "value": max(v, 0.0)}, "dynamics": dyn}
        if tag == "LongitudinalDistanceAction":
            ref = self.entity(verb, rd.text(verb, "entityRef"))
            if verb.get("timeGap") is not None:
                value, unit = rd.num(verb, "timeGap"), "time"
            else:
                value, unit = rd.num(verb, "distance"), "distance"
            dyn = {"shape": "step", "constraint": "time", "value": 0.0}
            lim = verb.find("DynamicConstraints")
            if lim is not None:
                self.note(lim, "gap dynamic constraints: the gap controller's own limits apply", approximated=True)
            return {"gap": {"target": ref.id, "value": max(value, 1e-3), "unit": unit}, "dynamics": dyn}
        if tag == "LaneChangeAction":
            return self._lane_change(verb, ent, event)
        if tag == "LaneOffsetAction":
            return self._lane_offset(verb, ent, event)
        if tag == "AssignRouteAction":
            lanes, nodes = self._route(verb, ent)
            if not (lanes or nodes):
                self.note(verb, "route lies on no template lane", approximated=False)
                return None
            return {"route": {"lanes": lanes} if ent.kind != "pedestrian" else {"nodes": nodes}}
        if tag == "FollowTrajectoryAction":
            return self._trajectory(verb, ent)
        if tag == "AcquirePositionAction":
            # A route to one position from wherever the actor is then: the simulator links its lane to the target's.
            x, y, h = self.position(verb.find("Position"))
            if ent.kind == "pedestrian":
                return {"route": {"nodes": self._nodes([(x, y, h)])}}
            lanes = self.lanes_on([(x, y, h)])
            if not lanes:
                self.note(verb, "the position to acquire lies on no template lane")
                return None
            return {"route": {"lanes": self._lane_chain(verb, [lanes[0], *self._default_route(lanes[0])[1:]])}}
        if tag == "VisibilityAction":
            shown = rd.text(action, "graphics", "true") == "true" or rd.text(action, "traffic", "true") == "true"
            return {"exist": {"state": "present" if shown else "absent"}}
        if tag == "LightStateAction" or (tag == "AppearanceAction" and inner is not None and inner.tag == "LightStateAction"):
            la = inner if inner is not None and inner.tag == "LightStateAction" else action
            lt = la.find("LightType/VehicleLight")
            mode = la.find("LightState")
            on = mode is not None and rd.text(mode, "mode", "on") != "off"
            kind = rd.text(lt, "vehicleLightType") if lt is not None else ""
            if kind in _LIGHTS and ent.kind == "vehicle":
                return {"set": {"key": _LIGHTS[kind], "value": on}}
            if kind in ("lowBeam", "highBeam"):
                return {"set": {"key": "lights.headlights", "value": ("high" if kind == "highBeam" else "low") if on
                                else "off"}}
            self.note(la, f"light {kind or '?'} is not represented")
            return None
        if tag == "AnimationAction":
            comp = verb.find("AnimationType/ComponentAnimation/VehicleComponent")
            kind = rd.text(comp, "vehicleComponentType") if comp is not None else ""
            state = verb.find("AnimationState")
            if kind in _DOORS and ent.kind == "vehicle":
                opened = state is not None and rd.num(state, "state", 1.0) > 0.5
                return {"set": {"key": _DOORS[kind], "value": "open" if opened else "closed"}}
            self.note(verb, f"animation {kind or '?'} is not represented")
            return None
        if tag == "TeleportAction":
            self.note(action, "a teleport during the story is not represented (actors move continuously)")
            return None
        self.note(action if inner is None else inner, f"{tag} is not represented")
        return None

    def _lane_change(self, lc: etree._Element, ent: Entity, event: Event) -> dict[str, Any] | None:
        rd = self.rd
        dyn = self._dynamics(lc.find("LaneChangeActionDynamics"), lc)
        target = lc.find("LaneChangeTarget")
        if rd.num(lc, "targetLaneOffset", 0.0) != 0.0:
            self.note(lc, "targetLaneOffset: the change ends on the target lane's centre", approximated=True)
        rel = target.find("RelativeTargetLane") if target is not None else None
        absolute = target.find("AbsoluteTargetLane") if target is not None else None
        event.duration_s = _duration(dyn, 3.5, ent.speed)
        if rel is not None:
            ref = self.entity(rel, rd.text(rel, "entityRef"))
            n = int(float(rd.text(rel, "value")))
            if ref.name != ent.name:
                if n == 0:
                    return {"change_lane": {"mode": "actor_lane", "actor": ref.id}, "dynamics": dyn}
                lane = self._lanes_beside(ref, n, rel)
                return None if lane is None else {"change_lane": {"mode": "lane", "lane": lane}, "dynamics": dyn}
            if abs(n) == 1:
                return {"change_lane": {"mode": "left" if n > 0 else "right"}, "dynamics": dyn}
            lane = self._lanes_beside(ent, n, rel)
            return None if lane is None else {"change_lane": {"mode": "lane", "lane": lane}, "dynamics": dyn}
        if absolute is not None:
            lane_id = int(float(rd.text(absolute, "value")))
            if ent.road is None:
                ent.road = self._road_of(absolute, ent.placed)
            road = self.roads.road(rd, absolute, ent.road[0])
            s = ent.road[2]
            x, y, h = self.roads.pose(road, s, self.roads.lane_t(rd, absolute, road, lane_id, s))
            found = self.lanes_on([(x, y, self.roads.lane_heading(road, lane_id, h))])
            if not found:
                self.note(absolute, f"target lane {lane_id} is on no template lane")
                return None
            return {"change_lane": {"mode": "lane", "lane": found[0]}, "dynamics": dyn}
        raise rd.error(lc, "LaneChangeAction without a target")

    def _lanes_beside(self, ent: Entity, n: int, el: etree._Element) -> str | None:
        ref = self.lane_ref(ent.placed, ent.kind)
        lane = ref["lane"] if ref else None
        for _ in range(abs(n)):
            lane = (self.graph.left if n > 0 else self.graph.right).get(lane) if lane else None
        if lane is None:
            self.note(el, f"no lane {abs(n)} to the {'left' if n > 0 else 'right'} of {ent.name}")
        return lane

    def _lane_offset(self, lo: etree._Element, ent: Entity, event: Event) -> dict[str, Any] | None:
        rd = self.rd
        dyn_el = lo.find("LaneOffsetActionDynamics")
        target = lo.find("LaneOffsetTarget")
        absolute = target.find("AbsoluteTargetLaneOffset") if target is not None else None
        rel = target.find("RelativeTargetLaneOffset") if target is not None else None
        if absolute is not None:
            value = rd.num(absolute, "value")
        elif rel is not None:
            ref = self.entity(rel, rd.text(rel, "entityRef"))
            ref_lane = self.lane_ref(ref.placed, ref.kind)
            base = ref_lane["t_frac"] * self.template_lane_width(ref_lane["lane"]) / 2 if ref_lane else 0.0
            value = base + rd.num(rel, "value")
            self.note(rel, f"offset relative to {ref.name} taken at {ref.name}'s initial offset: {value:.3f} m",
                      approximated=True)
        else:
            raise rd.error(lo, "LaneOffsetAction without a target")
        shape = rd.text(dyn_el, "dynamicsShape", "step") if dyn_el is not None else "step"
        max_acc = rd.num(dyn_el, "maxLateralAcc", 0.0) if dyn_el is not None else 0.0
        start = self.lane_ref(ent.placed, ent.kind)
        t0 = start["t_frac"] * self.template_lane_width(start["lane"]) / 2 if start else 0.0
        distance = abs(value - t0)
        span = math.sqrt(_PEAK[shape] * distance / max_acc) if shape in _PEAK and max_acc > 0 and distance > 0 else 0.0
        dyn = {"shape": shape, "constraint": "time", "value": round(span, 9)} if span > 0 else \
            {"shape": "step", "constraint": "time", "value": 0.0}
        event.duration_s = span
        continuous = rd.text(lo, "continuous", "true") == "true"
        if start is not None and not continuous:
            # The export writes a lane change as the centre spacing to the target lane: it comes back as one.
            lane = start["lane"]
            x, y = self.graph.lane(lane).point_at(start["s"], value)
            for side in (self.graph.left.get(lane), self.graph.right.get(lane), *self.graph.lanes):
                if side is None or side == lane:
                    continue
                s, t = self.graph.project(side, x, y)
                if abs(t) <= LANE_CENTRE_TOLERANCE_M and 0 <= s <= self.graph.lane(side).length_m:
                    return {"change_lane": {"mode": "lane", "lane": side}, "dynamics": dyn}
        if abs(value) > 10.0:
            self.note(lo, f"lane offset {value:g} m is more than 10 m: not represented")
            return None
        return {"lane_offset": {"value": round(value, 9), "unit": "metres"}, "dynamics": dyn}

    def _trajectory(self, ft: etree._Element, ent: Entity) -> dict[str, Any] | None:
        got = self._trajectory_points(ft)
        if got is None:
            return None
        kind, points = got
        lanes = self._lane_chain(ft, self.lanes_on(points)) if ent.kind != "pedestrian" else []
        nodes = self._walk(ft, ent, self._nodes(points)) if ent.kind == "pedestrian" else []
        self.note(ft, f"{kind} trajectory ({len(points)} points) followed as a route over "
                      f"{', '.join(lanes or nodes) or 'nothing'}; its lateral path and timing are not kept",
                  approximated=True)
        if not (lanes or nodes):
            return None
        return {"route": {"lanes": lanes} if lanes else {"nodes": nodes}}

    def _trajectory_points(self, ft: etree._Element) -> tuple[str, list[tuple[float, float, float]]] | None:
        """(shape, world poses along it) of a FollowTrajectoryAction's trajectory (inline, or from a catalog);
        None (reported) for a shape that is not read."""
        traj = ft.find("TrajectoryRef/Trajectory")
        traj = traj if traj is not None else ft.find("Trajectory")
        cat = ft.find("TrajectoryRef/CatalogReference")
        if cat is None:
            cat = ft.find("CatalogReference")
        if traj is None and cat is not None:
            traj = self.catalog_entry(cat)
        if traj is None:
            raise self.rd.error(ft, "a FollowTrajectoryAction without a trajectory")
        self.rd.params.push(self._catalog_scope(cat, traj) if cat is not None else {})
        try:
            return self._shape_points(traj)
        finally:
            self.rd.params.pop()

    def _shape_points(self, traj: etree._Element) -> tuple[str, list[tuple[float, float, float]]] | None:
        shape = traj.find("Shape")
        kind = next(iter(shape)).tag if shape is not None and len(shape) else "?"
        points: list[tuple[float, float, float]] = []
        if kind == "Polyline":
            points = [self.position(v.find("Position")) for v in shape.iter("Vertex")]
        elif kind == "Clothoid":
            cl = shape.find("Clothoid")
            x, y, h = self.position(cl.find("Position"))
            k0, dk = self.rd.num(cl, "curvature"), self.rd.num(cl, "curvatureDot", self.rd.num(cl, "curvaturePrime", 0.0))
            length = self.rd.num(cl, "length")
            n = max(2, int(length / 1.0))
            ds = length / n
            points.append((x, y, h))
            for i in range(n):
                k_mid = k0 + dk * (i + 0.5) * ds  # curvature at the step's middle: heading advances by k ds
                x += ds * math.cos(h + k_mid * ds / 2)
                y += ds * math.sin(h + k_mid * ds / 2)
                h += k_mid * ds
                points.append((x, y, h))
        elif kind == "Nurbs":
            points = [self.position(c.find("Position")) for c in shape.iter("ControlPoint")]
        else:
            self.note(traj, f"trajectory shape {kind} is not read")
            return None
        if kind == "Polyline" and len(points) >= 2 and shape.find("Polyline/Vertex/Position//Orientation") is None:
            # A vertex without an orientation faces the next one (the last, the one before it).
            ahead = [math.atan2(b[1] - a[1], b[0] - a[0]) for a, b in zip(points, points[1:])]
            points = [(x, y, ahead[min(i, len(ahead) - 1)]) for i, (x, y, _) in enumerate(points)]
        return kind, points


def _duration(dyn: Mapping[str, Any], delta: float, speed: float) -> float:
    if dyn["constraint"] == "time":
        return float(dyn["value"])
    if dyn["constraint"] == "distance":
        return float(dyn["value"]) / max(speed, 0.1)
    return delta / max(float(dyn["value"]), 1e-6)
