"""``cut_in``: a vehicle from the neighbouring lane changes into the ego's lane just ahead of it.

Causes, in dependency order (stream in brackets):

0. **ego route** [template, route] — the template's ``ego.route`` when its
   first lane has a same-direction neighbour it may change to over at least
   60 m, else such a lane drawn from the lane graph (SPEC §18).
1. **side and lane** [cell, layout] — the side the cutter comes from (the
   cell's, or drawn); the lane is the ego lane's neighbour on that side where
   the lane graph allows the change. Its starts are its vehicle-spawn
   affordances, or, on a lane without any, the whole lane. A route without
   such a neighbour on a side cannot realize that side.
2. **cutter** [actors] — family (the cell's, or drawn), variant.
3. **speeds** [behavior] — ego speed in its bin; cutter speed = ego speed +
   the cell's relative-speed bin.
4. **manoeuvre** [behavior, timing] — lane-change duration, start time, and
   the time gap at completion in the cell's bin.
5. **cutter position** [derived] — placed so the bumper gap at completion is
   gap × ego speed; it must lie in the spawn's s-range.
6. **environment** [environment].

The plan for the ladder is the cutter's path along its lane, a sinusoidal
blend into the ego lane over the lane-change distance, then the ego lane —
what the manifest's ``change_lane`` with sinusoidal dynamics asks of the
simulation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from simready.scenario.api import (
    Cell,
    CutsIn,
    Draws,
    Fail,
    IntentProgram,
    ProgramContext,
    Proposal,
    Realization,
    SpeedProfile,
    StreamSet,
    VehicleIntentParams,
    cell_or_choice,
    draw_ego_route,
    ego_under_conditions,
    in_cell_bin,
    independent_vehicle_baseline,
    lane_as_spawn,
    lane_change_path,
    lane_network,
    lwh,
    multi_lane_stretches,
    other_vehicle,
    pair_proposal,
    scripted_vehicle_rules,
    seconds_on_grid,
    spawn_affordances,
    vehicle_on_route,
)

SIDES = ("left", "right")


@dataclass(frozen=True)
class CutInParams(VehicleIntentParams):
    relative_speed_mps: tuple[float, float] = (-3.0, 1.0)
    lane_change_s: tuple[float, float] = (2.5, 4.0)
    start_s: tuple[float, float] = (1.5, 3.5)
    gap_s: tuple[float, float] = (0.6, 2.0)
    gap_inset_s: float = 0.02
    #: The turn signal comes on this long before the lane change (s).
    indicator_lead_s: float = 1.0


class CutIn(IntentProgram):
    name = "cut_in"
    abbrev = "cutin"
    default_template = "two_lane_arterial"
    description = "a vehicle from the neighbouring lane cuts in just ahead of the ego"
    needs = ("multi_lane",)
    local_groups = frozenset({"timing", "manoeuvre"})

    def __init__(self, params: CutInParams | None = None) -> None:
        self.params = params or CutInParams()

    def neighbours(self, ctx: ProgramContext, ego_lane: str) -> dict[str, str | None]:
        """The ego lane's same-direction neighbours on each side where the lane graph allows the change."""
        net = lane_network(ctx.template)
        return {"left": net.neighbour(ego_lane, "left"), "right": net.neighbour(ego_lane, "right")}

    def ego_lanes(self, ctx: ProgramContext) -> list[tuple[str, ...]]:
        """Single-lane ego routes with a neighbour to cut in from (the lane graph's multi-lane stretches)."""
        return sorted({(lane,) for lane, _, _ in multi_lane_stretches(lane_network(ctx.template))})

    def check_template(self, ctx: ProgramContext) -> None:
        self.require(ctx, bool(self.ego_lanes(ctx)), "lanes", "has no lane with a same-direction neighbour")

    def propose(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, streams: StreamSet, *,
                attempt: int = 0, previous: Mapping[str, Mapping[str, Any]] | None = None,
                redraw: Iterable[str] = ()) -> Proposal:
        p, t = self.params, ctx.template
        draws = Draws(streams, attempt=attempt, previous=previous, redraw=redraw)
        r = Realization()
        candidates = self.ego_lanes(ctx)
        ego_route = draw_ego_route(ctx, r, draws, candidates, lambda lanes: lanes[:1] in candidates,
                                   "along a lane with a same-direction neighbour")
        ego_lane = ego_route.lanes[0]
        layout = draws.group("layout", "layout")
        neighbours = self.neighbours(ctx, ego_lane)
        side = cell_or_choice(r, layout, cell, "side", "cut_in.side",
                             [s for s, lane in neighbours.items() if lane is not None], "sides with a lane")
        lane = neighbours[side]
        if lane is None:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.no_neighbour_lane", f"{ego_lane} has no lane on its {side} in {t.id}", structural=True))
        spawns = spawn_affordances(t, lane) or [lane_as_spawn(t, lane)]
        spawn = layout.choice("spawn", spawns)
        r.set("cutter.lane", lane, source="template", parents=["cut_in.side", "ego.route"],
              rule=f"the ego lane's derived {side} neighbour")
        r.set("cutter.spawn", spawn.id, source="layout", parents=["cutter.lane"], rule="uniform over its spawns")

        asset = other_vehicle(ctx, draws, r, cell, "cutter")
        ego_speed = in_cell_bin(r, draws.group("ego_speed", "behavior"), cell, "ego_speed_mps", "ego.speed_mps",
                                p.ego_speed_mps)
        dv = in_cell_bin(r, draws.group("speed", "behavior"), cell, "relative_speed", "cutter.relative_speed_mps",
                         p.relative_speed_mps)
        cut_speed = r.set("cutter.speed_mps", round(max(1.0, ego_speed + dv), 4), source="derived",
                          parents=["ego.speed_mps", "cutter.relative_speed_mps"], rule="ego speed + relative speed")
        manoeuvre = draws.group("manoeuvre", "behavior")
        duration = r.set("cutter.lane_change_s", round(manoeuvre.uniform("duration", *p.lane_change_s), 3),
                         source="behavior", rule=f"uniform in {list(p.lane_change_s)} s")
        timing = draws.group("timing", "timing")
        t_start = r.set("t_lane_change_s", seconds_on_grid(timing.uniform("start", *p.start_s)), source="timing",
                        rule=f"uniform in {list(p.start_s)} s, on the tick grid")
        gap = in_cell_bin(r, timing, cell, "gap_s", "gap_target_s", p.gap_s, inset=p.gap_inset_s)

        graph = t.lane_graph
        ego_l, cut_l = ctx.footprints[t.ego.asset][0], lwh(ctx, asset)[0]
        t_end = t_start + duration
        s_ego_end = ego_route.start_s_m + ego_speed * (t_end + p.warmup_s)
        ex, ey, _ = graph.pose_at(ego_lane, s_ego_end + (ego_l + cut_l) / 2 + gap * ego_speed)
        s_cut_end = graph.project(lane, ex, ey)[0]
        s_cut0 = s_cut_end - cut_speed * (t_end + p.warmup_s)
        r.set("cutter.s0_m", round(s_cut0, 4), source="derived",
              parents=["gap_target_s", "t_lane_change_s", "cutter.lane_change_s", "ego.speed_mps", "cutter.speed_mps"],
              rule="bumper gap gap x ego speed at lane-change end, back-propagated at the cutter's speed")
        lo, hi = spawn.s_range_m
        if not lo <= s_cut0 <= hi:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.spawn_out_of_range", f"the cutter would start at s={s_cut0:.1f} m on {lane}, outside "
                f"{spawn.id} [{lo}, {hi}] m", ("timing", "manoeuvre")))

        env, ego, ego_body = ego_under_conditions(ctx, draws, r, cell, ego_speed, p.warmup_s, ego_route)
        s_blend = s_cut0 + cut_speed * (t_start + p.warmup_s)
        path = lane_change_path(ctx, lane, ego_lane, s_blend, cut_speed * duration)
        cutter = vehicle_on_route(
            ctx, "cutter", role="agent", asset_id=asset, lanes=(lane,), s0_m=s_cut0, speed_mps=cut_speed,
            warmup_s=p.warmup_s, path=path, profile=SpeedProfile.constant(-p.warmup_s, s_cut0, cut_speed),
            tags=["cut_in"], behavior_rules=scripted_vehicle_rules(aggression=0.8, speed_mps=cut_speed,
                                                                   limit_mps=graph.lane(lane).speed_limit_mps))
        toward = "right" if side == "left" else "left"
        interactions = [
            {"id": "cutter_indicator", "actor_id": "cutter",
             "trigger": {"kind": "at", "t_s": seconds_on_grid(max(0.0, t_start - p.indicator_lead_s))},
             "set": {"key": f"lights.indicator_{toward}", "value": True}},
            {"id": "cutter_change_lane", "actor_id": "cutter", "trigger": {"kind": "at", "t_s": t_start},
             "change_lane": {"mode": "lane", "lane": ego_lane},
             "dynamics": {"shape": "sinusoidal", "constraint": "time", "value": duration}},
        ]
        half = graph.lane(ego_lane).width_m / 2
        return pair_proposal(self, ctx, sample_id, index, streams, draws, r, cell=cell, attempt=attempt,
                             ego=(ego, ego_body), other=cutter, interactions=interactions, environment=env,
                             event=CutsIn("cutter", "ego", half, t_start, t_end),
                             refs={"cell_repairs": {"gap_s": ("timing",)}}, clip_s=p.clip_s, warmup_s=p.warmup_s)

    def baseline(self, ctx: ProgramContext, sample_id: str, index: int, streams: StreamSet) -> Proposal:
        half = ctx.template.lane_graph.lane(ctx.template.ego.route[0]).width_m / 2
        return independent_vehicle_baseline(self, ctx, sample_id, index, streams, "cutter", p_clip=self.params.clip_s,
                                            warmup_s=self.params.warmup_s, ego_speed=self.params.ego_speed_mps,
                                            event=lambda t_action, body: CutsIn("cutter", "ego", half, t_action,
                                                                                t_action + 3.0))

