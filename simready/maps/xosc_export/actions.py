"""Verbs → actions: speed, gap, lane change and lane offset (with their dynamics), route, visibility, lights,
doors and the environment."""

from __future__ import annotations

import math
from typing import Any

from scenariogeneration import xosc

from simready.maps.xosc_export.scene import Scene
from simready.maps.xosc_export.vocabulary import DIMENSIONS, DOORS, DOOR_MOTION_S, LIGHTS, SHAPES, STEP_LATERAL_ACC
from simready.scenario.manifest import Dynamics


class Actions(Scene):
    """An interaction's verbs as OpenSCENARIO actions."""

    def actions(self, inter: Any) -> list[tuple[Any, bool]]:
        """``[(action, private)]`` for the interaction's verb; [] when not expressible (reported)."""
        where = f"interaction {inter.id}"
        dyn = inter.dynamics
        trans = xosc.TransitionDynamics(SHAPES[dyn.shape], DIMENSIONS[dyn.constraint], dyn.value) if dyn else \
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
            return [(xosc.AbsoluteLaneOffsetAction(value, SHAPES[dyn.shape] if dyn else xosc.DynamicsShapes.step,
                                                   max_acc), True)]
        if inter.route is not None:
            route = self.route(f"route_{inter.id}", inter.route.lanes or [], inter.route.nodes or [])
            return [(xosc.AssignRouteAction(route), True)]
        if inter.exist is not None:
            shown = inter.exist.state == "present"
            return [(xosc.VisibilityAction(shown, shown, shown), True)]
        if inter.set is not None:
            key, value = inter.set.key, inter.set.value
            if key in LIGHTS:
                mode = xosc.LightMode.on if value else xosc.LightMode.off
                return [(xosc.LightStateAction(getattr(xosc.VehicleLightType, LIGHTS[key]), mode), True)]
            if key == "lights.headlights":
                return [(xosc.LightStateAction(xosc.VehicleLightType.lowBeam,
                                               xosc.LightMode.off if value == "off" else xosc.LightMode.on), True),
                        (xosc.LightStateAction(xosc.VehicleLightType.highBeam,
                                               xosc.LightMode.on if value == "high" else xosc.LightMode.off), True)]
            if key == "env.road_friction":
                return [(xosc.EnvironmentAction(self.environment(friction=float(value))), False)]
            if key == "env.rain_rate_mmph":
                return [(xosc.EnvironmentAction(self.environment(rain_mmph=float(value))), False)]
            if key in DOORS:
                # A door is a vehicle component animated from closed (0) to open (1).
                return [(xosc.AnimationAction(getattr(xosc.VehicleComponentType, DOORS[key]), DOOR_MOTION_S, False,
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
        return [(xosc.AbsoluteLaneOffsetAction(offset, SHAPES[dyn.shape] if dyn else xosc.DynamicsShapes.step,
                                               max_acc, continuous=False), True)]


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
