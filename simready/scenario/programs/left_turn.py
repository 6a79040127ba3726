"""Left turns across oncoming traffic: ``signalized_left_turn`` (on green, at a junction with traffic lights) and
``unprotected_left_turn`` (no signal; the oncoming vehicle going straight has the right of way).

Causes, in dependency order (stream in brackets):

0. **ego route** [template, route] — the template's ``ego.route`` when it turns
   left at a junction of the right kind (joining ≥ 3 roads, with or without
   lights) across an oncoming straight path, else such a left turn
   (approach, junction lane, exit) drawn from the lane graph (SPEC §18); a
   drawn route starts 45 m before the junction.
1. **conflict** [template, layout] — the oncoming approach is a vehicle spawn
   (or, on an approach lane without spawns, the whole lane) whose
   straight-through route crosses the ego route inside the junction heading
   the other way. The crossing point is the conflict point.
2. **oncoming vehicle** [actors] — family (the cell's, or drawn), variant.
3. **ego speed** [behavior] — in the cell's bin, at most the turn lane's limit.
4. **TTC target** [timing] — the oncoming vehicle's time to the conflict
   point when the ego's front enters its path, inside the cell.
5. **oncoming position, then speed** [layout, solve] — a start inside the
   spawn's s-range narrowed to the positions whose solved speed (distance to
   the conflict over the time the TTC target leaves) is within
   ``oncoming_speed_mps``; the speed follows.
6. **signals** [template] — signalized: the template's fixed-time programs,
   copied into the manifest; both vehicles must cross their stop lines on
   green. Unprotected: none; the oncoming vehicle does not yield (the lane
   graph gives it the right of way), the ego does.
7. **environment** [environment].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from simready.scenario.api import (
    Cell,
    Draws,
    Fail,
    IntentProgram,
    CoarsePath,
    PathConflict,
    ProgramContext,
    Proposal,
    Realization,
    StreamSet,
    VehicleIntentParams,
    angle_diff,
    draw_ego_route,
    ego_under_conditions,
    in_cell_bin,
    independent_vehicle_baseline,
    lane_as_spawn,
    lane_network,
    left_turns_across_oncoming,
    lwh,
    other_vehicle,
    pair_proposal,
    scripted_vehicle_rules,
    spawn_affordances,
    straight_through,
    vehicle_on_route,
)


@dataclass(frozen=True)
class LeftTurnParams(VehicleIntentParams):
    warmup_s: float = 1.0
    ego_speed_mps: tuple[float, float] = (6.0, 8.3)
    oncoming_speed_mps: tuple[float, float] = (4.0, 13.9)
    ttc_s: tuple[float, float] = (1.0, 4.5)
    ttc_inset_s: float = 0.05
    #: Oncoming headings within this of the ego's reversed heading count as oncoming (rad).
    oncoming_tolerance_rad: float = 0.6
    step_m: float = 0.1


@dataclass(frozen=True)
class _Conflict:
    """The oncoming approach and where its route crosses the ego's."""

    spawn: Any
    lanes: tuple[str, ...]
    xy: tuple[float, float]
    s_ego_m: float
    s_other_m: float


class SignalizedLeftTurn(IntentProgram):
    name = "signalized_left_turn"
    abbrev = "lturn"
    default_template = "urban_signalized_intersection"
    description = "the ego turns left on green across an oncoming vehicle going straight"
    needs = ("signalized_junction", "signalized_left_turn")
    local_groups = frozenset({"timing", "layout"})
    #: Junctions with traffic lights (True) or without (False).
    signalized = True

    def __init__(self, params: LeftTurnParams | None = None) -> None:
        self.params = params or LeftTurnParams()

    def ego_routes(self, ctx: ProgramContext) -> list[tuple[str, ...]]:
        """Left turns (approach, junction lane, exit) of the lane graph with at least one oncoming conflict."""
        return self.memo(ctx, ("ego_routes", self.signalized), lambda: [
            route for route in left_turns_across_oncoming(ctx.template, signalized=self.signalized)
            if self.conflicts(ctx, route)])

    def conflicts(self, ctx: ProgramContext, route: tuple[str, ...]) -> list[_Conflict]:
        return self.memo(ctx, ("conflicts", route), lambda: self._conflicts(ctx, route))

    def _conflicts(self, ctx: ProgramContext, route: tuple[str, ...]) -> list[_Conflict]:
        t = ctx.template
        graph = t.lane_graph
        net = lane_network(t)
        ego_route = ctx.geometry.route_path(route)
        junctions = [rg.shape for rg in t.regions if rg.type == "intersection"]
        ego_yaw0 = ego_route.xy_yaw(0.0)[2]
        out = []
        for lane in sorted(graph.lanes):
            if lane in route:
                continue
            approach = lane not in net.junction_of and any(n in net.junction_of for n in graph.successors[lane])
            for spawn in spawn_affordances(t, lane) or ([lane_as_spawn(t, lane)] if approach else []):
                lanes = straight_through(net, lane)
                path = ctx.geometry.route_path(lanes)
                if angle_diff(path.xy_yaw(0.0)[2], ego_yaw0 + np.pi) > self.params.oncoming_tolerance_rad:
                    continue
                cross = ego_route.line.intersection(path.line)
                points = [(p.x, p.y) for p in getattr(cross, "geoms", [cross]) if isinstance(p, shapely.Point)]
                points = [xy for xy in points if any(j.contains(shapely.Point(xy)) for j in junctions)]
                if not points:
                    continue
                xy = min(points, key=lambda q: ego_route.s_of(*q))
                out.append(_Conflict(spawn, tuple(lanes), xy, ego_route.s_of(*xy), path.s_of(*xy)))
        return out

    def check_template(self, ctx: ProgramContext) -> None:
        self.require(ctx, bool(self.ego_routes(ctx)), "affordances",
                     "has no left turn whose path an oncoming straight route crosses in the junction")

    def propose(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, streams: StreamSet, *,
                attempt: int = 0, previous: Mapping[str, Mapping[str, Any]] | None = None,
                redraw: Iterable[str] = ()) -> Proposal:
        p, t = self.params, ctx.template
        draws = Draws(streams, attempt=attempt, previous=previous, redraw=redraw)
        r = Realization()
        candidates = self.ego_routes(ctx)
        ego_route = draw_ego_route(ctx, r, draws, candidates, lambda lanes: lanes in candidates,
                                   f"turning left across oncoming traffic at a junction "
                                   f"{'with' if self.signalized else 'without'} traffic lights", before_junction=True)
        layout = draws.group("layout", "layout")
        conflict = layout.choice("conflict", self.conflicts(ctx, ego_route.lanes))
        r.set("oncoming.spawn", conflict.spawn.id, source="layout", parents=["ego.route"],
              rule="uniform over spawns whose straight route crosses the ego route in the junction, heading toward it")
        r.set("oncoming.route", list(conflict.lanes), source="template", parents=["oncoming.spawn"],
              rule="straight-through successors")
        r.set("conflict_point_planned", [round(v, 4) for v in conflict.xy], source="derived",
              parents=["ego.route", "oncoming.route"], rule="where the two routes cross")

        asset = other_vehicle(ctx, draws, r, cell, "oncoming")
        ego_speed = in_cell_bin(r, draws.group("ego_speed", "behavior"), cell, "ego_speed_mps", "ego.speed_mps",
                                p.ego_speed_mps)
        ttc = in_cell_bin(r, draws.group("timing", "timing"), cell, "ttc_s", "ttc_target_s", p.ttc_s,
                          inset=p.ttc_inset_s)

        ego_l, ego_w = ctx.footprints[t.ego.asset]
        on_l, on_w, _ = lwh(ctx, asset)
        other_path = ctx.geometry.route_path(conflict.lanes)
        corridor = on_w / 2 + ego_w / 2
        s_enter = self._ego_entry_s(ctx, ego_route.lanes, other_path, conflict, ego_l / 2, corridor)
        t_enter = (s_enter - ego_route.start_s_m) / ego_speed - p.warmup_s
        clearance = on_l / 2 + ego_w / 2
        reach = conflict.s_other_m - clearance
        horizon = t_enter + p.warmup_s + ttc
        lo, hi = conflict.spawn.s_range_m
        s_lo = max(lo, reach - p.oncoming_speed_mps[1] * horizon)
        s_hi = min(hi, reach - p.oncoming_speed_mps[0] * horizon)
        if s_lo > s_hi:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.no_oncoming_start", f"no start in {conflict.spawn.id} [{lo}, {hi}] m lets the oncoming "
                f"vehicle reach the conflict {ttc:.2f} s after the ego enters its path at "
                f"{list(p.oncoming_speed_mps)} m/s", ("timing",)))
        s0 = r.set("oncoming.s0_m", round(layout.uniform("s0", s_lo, s_hi), 4), source="layout",
                   parents=["oncoming.spawn", "ttc_target_s", "ego.speed_mps"],
                   rule="uniform over the spawn's starts whose solved speed is in range")
        v_on = r.set("oncoming.speed_mps", round((reach - s0) / horizon, 4), source="solve",
                     parents=["oncoming.s0_m", "ttc_target_s", "ego.speed_mps"],
                     rule="distance to the conflict over the time the TTC target leaves it")

        env, ego, ego_body = ego_under_conditions(ctx, draws, r, cell, ego_speed, p.warmup_s, ego_route)
        limit = t.lane_graph.lane(conflict.lanes[0]).speed_limit_mps
        other = vehicle_on_route(
            ctx, "oncoming", role="agent", asset_id=asset, lanes=conflict.lanes, s0_m=s0, speed_mps=v_on,
            warmup_s=p.warmup_s, tags=["oncoming"],
            behavior_rules=scripted_vehicle_rules(aggression=0.5, speed_mps=v_on, limit_mps=limit))
        event = PathConflict("ego", "oncoming", conflict.xy, conflict.s_other_m, corridor, clearance, lead_m=ego_l / 2)
        return pair_proposal(self, ctx, sample_id, index, streams, draws, r, cell=cell, attempt=attempt,
                             ego=(ego, ego_body), other=other, interactions=[], environment=env, event=event,
                             refs={"cell_repairs": {"ttc_s": ("timing", "layout")}}, clip_s=p.clip_s,
                             warmup_s=p.warmup_s, with_signals=self.signalized,
                             stop_lines=self._stop_lines(ctx, {"ego": ego_route.lanes, "oncoming": conflict.lanes}))

    def _ego_entry_s(self, ctx: ProgramContext, lanes: tuple[str, ...], other_path: CoarsePath, conflict: _Conflict,
                     lead_m: float, corridor_m: float) -> float:
        """Ego route arc length (centre) at which its front first comes within ``corridor_m`` of the other path."""
        route = ctx.geometry.route_path(lanes)
        s = np.arange(max(0.0, conflict.s_ego_m - 30.0), conflict.s_ego_m, self.params.step_m)
        x, y, yaw = route.xy_yaw(s)
        front = np.stack([x + lead_m * np.cos(yaw), y + lead_m * np.sin(yaw)], axis=1)
        s_other, t_other = other_path.lateral(front)
        inside = (np.abs(t_other) <= corridor_m) & (np.abs(s_other - conflict.s_other_m) <= corridor_m + 5.0)
        return float(s[int(np.argmax(inside))]) if inside.any() else conflict.s_ego_m

    def _stop_lines(self, ctx: ProgramContext, routes: dict[str, tuple[str, ...]]) -> list[tuple[str, float, str]]:
        out = []
        for actor_id, lanes in routes.items():
            for sig in ctx.template.signals:
                lane = sig.stop_line.lane
                if lane in lanes:
                    offset = ctx.geometry.route_path(lanes[: lanes.index(lane)]).length_m if lanes.index(lane) else 0.0
                    out.append((actor_id, offset + sig.stop_line.s_m, sig.id))
        return out

    def baseline(self, ctx: ProgramContext, sample_id: str, index: int, streams: StreamSet) -> Proposal:
        conflict = self.conflicts(ctx, tuple(ctx.template.ego.route))[0]
        ego_l, ego_w = ctx.footprints[ctx.template.ego.asset]

        def event(t_action: float, body: Any) -> PathConflict:
            s_x = body.motion.path.s_of(*conflict.xy)
            return PathConflict("ego", "oncoming", conflict.xy, s_x, body.width_m / 2 + ego_w / 2,
                                body.length_m / 2 + ego_w / 2, lead_m=ego_l / 2)

        return independent_vehicle_baseline(self, ctx, sample_id, index, streams, "oncoming", p_clip=self.params.clip_s,
                                            warmup_s=self.params.warmup_s, ego_speed=self.params.ego_speed_mps,
                                            event=event)


class UnprotectedLeftTurn(SignalizedLeftTurn):
    """The ego turns left at a junction without traffic lights across an oncoming vehicle going straight, which has
    the right of way (the lane graph's default rule: straight beats a left turn)."""

    name = "unprotected_left_turn"
    abbrev = "ulturn"
    default_template = "urban_unsignalized_intersection"
    description = "the ego turns left at a junction without signals across an oncoming vehicle that has priority"
    needs = ("unsignalized_junction", "unprotected_left_turn")
    signalized = False
