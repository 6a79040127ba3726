"""``signalized_left_turn``: the ego turns left on green across an oncoming vehicle going straight.

Causes, in dependency order (stream in brackets):

1. **conflict** [template, layout] — the ego route turns left through a
   signalized junction; the oncoming approach is a vehicle spawn whose
   straight-through route (successors of kind ``driving``) crosses the ego
   route inside the junction heading the other way. The crossing point is
   the conflict point.
2. **oncoming vehicle** [actors] — family (the cell's, or drawn), variant.
3. **ego speed** [behavior] — in the cell's bin, at most the turn lane's limit.
4. **TTC target** [timing] — the oncoming vehicle's time to the conflict
   point when the ego's front enters its path, inside the cell.
5. **oncoming position, then speed** [layout, solve] — a start inside the
   spawn's s-range narrowed to the positions whose solved speed (distance to
   the conflict over the time the TTC target leaves) is within
   ``oncoming_speed_mps``; the speed follows.
6. **signals** [template] — the template's fixed-time programs, copied into
   the manifest; both vehicles must cross their stop lines on green.
7. **environment** [environment].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from simready.scenario.coarse_rollout import PathConflict
from simready.scenario.context import ProgramContext
from simready.scenario.coverage import Cell
from simready.scenario.geometry import Path, angle_diff
from simready.scenario.ladder import Fail, Proposal, Scene
from simready.scenario.programs.base import (
    Draws,
    IntentProgram,
    Realization,
    assemble,
    ego_vehicle,
    in_cell_bin,
    lwh,
    other_vehicle,
    rules,
    spawn_affordances,
    vehicle_on_route,
)
from simready.scenario.programs.environment import conditions, correlated_environment
from simready.scenario.programs.lead_vehicle import independent_vehicle_baseline
from simready.scenario.streams import StreamSet


@dataclass(frozen=True)
class LeftTurnParams:
    clip_s: float = 12.0
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
    local_groups = frozenset({"timing", "layout"})

    def __init__(self, params: LeftTurnParams | None = None) -> None:
        self.params = params or LeftTurnParams()

    def conflicts(self, ctx: ProgramContext) -> list[_Conflict]:
        return self.memo(ctx, "conflicts", lambda: self._conflicts(ctx))

    def _conflicts(self, ctx: ProgramContext) -> list[_Conflict]:
        t = ctx.template
        graph = t.lane_graph
        ego_route = ctx.geometry.route_path(t.ego.route)
        junctions = [rg.shape for rg in t.regions if rg.type == "intersection"]
        ego_yaw0 = ego_route.xy_yaw(0.0)[2]
        out = []
        for lane in sorted(graph.lanes):
            if lane in t.ego.route:
                continue
            for spawn in spawn_affordances(t, lane):
                lanes = [lane]
                while graph.successors[lanes[-1]] and len(lanes) < 3:
                    straight = [n for n in graph.successors[lanes[-1]] if graph.lane(n).kind == "driving"]
                    if not straight:
                        break
                    lanes.append(straight[0])
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
        t = ctx.template
        self.require(ctx, bool(t.signals), "signals", "has no signals")
        self.require(ctx, any(rg.type == "intersection" for rg in t.regions), "regions", "has no intersection region")
        self.require(ctx, bool(self.conflicts(ctx)), "affordances",
                     "has no oncoming vehicle spawn whose straight route crosses the ego route in the junction")

    def propose(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, streams: StreamSet, *,
                attempt: int = 0, previous: Mapping[str, Mapping[str, Any]] | None = None,
                redraw: Iterable[str] = ()) -> Proposal:
        p, t = self.params, ctx.template
        draws = Draws(streams, attempt=attempt, previous=previous, redraw=redraw)
        r = Realization()
        r.set("ego.route", list(t.ego.route), source="template", rule="the template's ego route")
        layout = draws.group("layout", "layout")
        conflict = layout.choice("conflict", self.conflicts(ctx))
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
        s_enter = self._ego_entry_s(ctx, other_path, conflict, ego_l / 2, corridor)
        t_enter = (s_enter - t.ego.start_s_m) / ego_speed - p.warmup_s
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

        illumination, weather = conditions(draws, r, t, cell)
        env = correlated_environment(draws, r, illumination, weather)
        ego, ego_body = ego_vehicle(ctx, ego_speed, p.warmup_s)
        limit = t.lane_graph.lane(conflict.lanes[0]).speed_limit_mps
        other, other_body = vehicle_on_route(
            ctx, "oncoming", role="agent", asset_id=asset, lanes=conflict.lanes, s0_m=s0, speed_mps=v_on,
            warmup_s=p.warmup_s, tags=["oncoming"],
            behavior_rules=rules(obey_signals=True, yield_=False, collision_avoidance=False, aggression=0.5,
                                 speed_factor=v_on / limit))
        draft, _ = assemble(ctx, sample_id=sample_id, streams=streams, program=self, cell=cell,
                            actors=[ego, other], interactions=[], occluders=[], environment=env, realization=r,
                            clip_s=p.clip_s, warmup_s=p.warmup_s, with_signals=True)
        event = PathConflict("ego", "oncoming", conflict.xy, conflict.s_other_m, corridor, clearance, lead_m=ego_l / 2)
        scene = Scene({"ego": ego_body, "oncoming": other_body}, p.warmup_s, p.clip_s, event=event,
                      stop_lines=self._stop_lines(ctx, {"ego": tuple(t.ego.route), "oncoming": conflict.lanes}))
        refs = {"cell_repairs": {"ttc_s": ("timing", "layout")}}
        return Proposal(sample_id, index, attempt, self.name, t, cell, draft, scene, refs, [], draws.record)

    def _ego_entry_s(self, ctx: ProgramContext, other_path: Path, conflict: _Conflict, lead_m: float,
                     corridor_m: float) -> float:
        """Ego route arc length (centre) at which its front first comes within ``corridor_m`` of the other path."""
        route = ctx.geometry.route_path(ctx.template.ego.route)
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
        conflict = self.conflicts(ctx)[0]
        ego_l, ego_w = ctx.footprints[ctx.template.ego.asset]

        def event(t_action: float, body: Any) -> PathConflict:
            s_x = body.motion.path.s_of(*conflict.xy)
            return PathConflict("ego", "oncoming", conflict.xy, s_x, body.width_m / 2 + ego_w / 2,
                                body.length_m / 2 + ego_w / 2, lead_m=ego_l / 2)

        return independent_vehicle_baseline(self, ctx, sample_id, index, streams, "oncoming", p_clip=self.params.clip_s,
                                            warmup_s=self.params.warmup_s, ego_speed=self.params.ego_speed_mps,
                                            event=event)
