"""``cyclist_overtaken_oncoming``: the ego closes on a cyclist in its lane while oncoming traffic blocks the overtake.

A program on the public interface alone (``simready.scenario.api``), run from a
suite's ``programs:``. On a road with one lane each way, the ego comes up behind
a slower cyclist; an oncoming vehicle is a few seconds from the cyclist when
the ego must decide, so passing is not on: the brake branch follows the
cyclist, the coast branch runs into it.

Causes, in dependency order (stream in brackets):

0. ego route [template, route]: the template's ego route when its first lane
   has an oncoming lane beside it, else such a lane drawn.
1. cyclist speed, ego speed [behavior]: in the cell's bins.
2. decision time, headway at it [timing]: the headway in the cell's bin.
3. oncoming vehicle [actors, behavior]: family, variant, speed, and its time
   gap to the cyclist at the decision (the cell's bin).
4. positions [derived]: the cyclist and the oncoming vehicle placed so that
   headway and gap come out as drawn.
5. environment [environment].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from simready.scenario.api import (
    ClosesOnLead,
    Draws,
    Fail,
    IntentProgram,
    Proposal,
    Realization,
    ScenarioError,
    Scene,
    assemble,
    conditions,
    correlated_environment,
    decide_at,
    draw_ego_route,
    ego_vehicle,
    gap_for_headway,
    in_cell_bin,
    independent_vehicle_baseline,
    lwh,
    oncoming_lane,
    other_vehicle,
    rules,
    seconds_on_grid,
    vehicle_on_route,
)


@dataclass(frozen=True)
class Params:
    clip_s: float = 12.0
    warmup_s: float = 2.0
    ego_speed_mps: tuple[float, float] = (6.5, 8.3)
    cyclist_speed_mps: tuple[float, float] = (2.0, 3.6)
    decision_s: tuple[float, float] = (2.0, 3.5)
    headway_s: tuple[float, float] = (1.0, 2.6)
    oncoming_speed_mps: tuple[float, float] = (6.0, 8.3)
    oncoming_gap_s: tuple[float, float] = (1.0, 4.0)
    #: An oncoming lane runs within this lateral distance of the ego lane's centre (m), heading the other way.
    oncoming_within_m: tuple[float, float] = (2.0, 8.0)
    lane_margin_m: float = 3.0


class CyclistOvertakenOncoming(IntentProgram):
    name = "cyclist_overtaken_oncoming"
    abbrev = "cyc"
    description = "the ego closes on a cyclist in its lane while an oncoming vehicle rules out overtaking"
    default_template = "residential_crosswalk_v3"
    needs = ("route",)
    local_groups = frozenset({"timing", "oncoming"})
    coverage = {
        "intent": "cyclist_overtaken_oncoming",
        "template": "residential_crosswalk_v3",
        "target_per_cell": 1,
        "max_proposals_per_cell": 20,
        "dimensions": [
            {"name": "headway_s", "key": "headway_s", "bins": [[1.0, 1.8], [1.8, 2.6]]},
            {"name": "oncoming_gap_s", "key": "oncoming.gap_s", "bins": [[1.0, 2.5], [2.5, 4.0]],
             "labels": ["close", "far"]},
            {"name": "cyclist_speed", "key": "cyclist.speed_mps", "bins": [[2.0, 2.8], [2.8, 3.6]],
             "labels": ["slow", "steady"]},
        ],
    }

    def __init__(self) -> None:
        self.params = Params()

    def ego_lanes(self, template: Any) -> list[tuple[str, ...]]:
        graph = template.lane_graph
        return [(lane,) for lane in sorted(graph.lanes) if graph.lane(lane).kind == "driving"
                and oncoming_lane(template, lane, self.params.oncoming_within_m) is not None]

    def check_template(self, ctx: Any) -> None:
        if not self.ego_lanes(ctx.template):
            raise ScenarioError(ctx.template.source, "lanes", f"{ctx.template.id} has no lane with an oncoming lane "
                                f"beside it ({self.name} needs one)")
        if not ctx.variants("cyclist"):
            raise ScenarioError(ctx.template.source, "catalog", f"no cyclist in the catalog ({self.name} needs one)")

    def propose(self, ctx: Any, cell: Any, sample_id: str, index: int, streams: Any, *, attempt: int = 0,
                previous: Mapping[str, Mapping[str, Any]] | None = None, redraw: Iterable[str] = ()) -> Proposal:
        p, t = self.params, ctx.template
        graph = t.lane_graph
        draws = Draws(streams, attempt=attempt, previous=previous, redraw=redraw)
        r = Realization()
        candidates = self.ego_lanes(t)
        ego_route = draw_ego_route(ctx, r, draws, candidates, lambda lanes: lanes[:1] in candidates,
                                   "along a lane with an oncoming lane beside it")
        lane = ego_route.lanes[0]
        other = r.set("oncoming.lane", oncoming_lane(t, lane, p.oncoming_within_m), source="template",
                      parents=["ego.route"], rule="the lane beside the ego's running the other way")

        cyclist_asset = r.set("cyclist.asset", draws.group("assets", "actors").choice("cyclist",
                              ctx.variants("cyclist")), source="actors", rule="uniform over the cyclist variants")
        v_c = in_cell_bin(r, draws.group("cyclist_speed", "behavior"), cell, "cyclist_speed", "cyclist.speed_mps",
                          p.cyclist_speed_mps)
        limit = graph.lane(lane).speed_limit_mps
        v_e = in_cell_bin(r, draws.group("ego_speed", "behavior"), cell, "ego_speed_mps", "ego.speed_mps",
                          (p.ego_speed_mps[0], min(p.ego_speed_mps[1], limit)))
        timing = draws.group("timing", "timing")
        t_dec = r.set("t_overtake_s", seconds_on_grid(timing.uniform("t_decision", *p.decision_s)),
                      source="timing", rule=f"uniform in {list(p.decision_s)} s, on the tick grid")
        headway = in_cell_bin(r, timing, cell, "headway_s", "headway_target_s", p.headway_s, inset=0.02)

        oncoming_asset = other_vehicle(ctx, draws, r, cell, "oncoming")
        g = draws.group("oncoming", "behavior")
        v_o = r.set("oncoming.speed_mps", round(g.uniform("speed", p.oncoming_speed_mps[0],
                    min(p.oncoming_speed_mps[1], graph.lane(other).speed_limit_mps)), 4), source="behavior",
                    rule="uniform up to the oncoming lane's limit")
        gap_o = in_cell_bin(r, g, cell, "oncoming_gap_s", "oncoming.gap_s", p.oncoming_gap_s, inset=0.02)

        ego_l, cyc_l = lwh(ctx, t.ego.asset)[0], lwh(ctx, cyclist_asset)[0]
        s_e_dec = ego_route.start_s_m + v_e * (t_dec + p.warmup_s)
        s_c_dec = s_e_dec + (ego_l + cyc_l) / 2 + gap_for_headway(headway, v_e)
        s_c0 = s_c_dec - v_c * (t_dec + p.warmup_s)
        r.set("cyclist.s0_m", round(s_c0, 4), source="derived", parents=["headway_target_s", "t_overtake_s",
              "ego.speed_mps", "cyclist.speed_mps"], rule="bumper gap headway x ego speed at the decision")
        cx, cy, _ = graph.pose_at(lane, s_c_dec)
        s_meet = graph.project(other, cx, cy)[0]
        s_o0 = s_meet - v_o * gap_o - v_o * (t_dec + p.warmup_s)
        r.set("oncoming.s0_m", round(s_o0, 4), source="derived", parents=["oncoming.gap_s", "oncoming.speed_mps",
              "t_overtake_s", "cyclist.s0_m"], rule="gap x speed before the cyclist at the decision")
        if not p.lane_margin_m <= s_o0 <= graph.lane(other).length_m - p.lane_margin_m - v_o * (p.clip_s + p.warmup_s):
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.spawn_out_of_range", f"the oncoming vehicle would start at s={s_o0:.1f} m on {other} "
                "(or leave it before the clip ends)",
                ("timing", "oncoming")))
        s_end = s_c0 + v_c * (p.clip_s + p.warmup_s)
        if s_end > graph.lane(lane).length_m - p.lane_margin_m:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.spawn_out_of_range", f"the cyclist would leave {lane} before the clip ends", ("timing",)))

        illumination, weather = conditions(draws, r, t, cell)
        env = correlated_environment(draws, r, illumination, weather)
        ego, ego_body = ego_vehicle(ctx, v_e, p.warmup_s, ego_route)
        cyclist, cyclist_body = vehicle_on_route(
            ctx, "cyclist", role="agent", asset_id=cyclist_asset, lanes=(lane,), s0_m=s_c0, speed_mps=v_c,
            warmup_s=p.warmup_s, tags=["cyclist"],
            behavior_rules=rules(obey_signals=True, yield_=False, collision_avoidance=False, aggression=0.3,
                                 speed_factor=v_c / limit))
        cyclist["kind"] = "cyclist"
        oncoming, oncoming_body = vehicle_on_route(
            ctx, "oncoming", role="agent", asset_id=oncoming_asset, lanes=(other,), s0_m=s_o0, speed_mps=v_o,
            warmup_s=p.warmup_s, tags=["oncoming"],
            behavior_rules=rules(obey_signals=True, yield_=False, collision_avoidance=False, aggression=0.5,
                                 speed_factor=v_o / graph.lane(other).speed_limit_mps))
        decide_at(r, t_dec, parents=["t_overtake_s"],
                  rule="the ego must choose: overtake into oncoming traffic, or not")
        draft, _ = assemble(ctx, sample_id=sample_id, streams=streams, program=self, cell=cell,
                            actors=[ego, cyclist, oncoming], interactions=[], occluders=[], environment=env,
                            realization=r, clip_s=p.clip_s, warmup_s=p.warmup_s)
        bodies = {"ego": ego_body, "cyclist": _as_cyclist(cyclist_body), "oncoming": oncoming_body}
        scene = Scene(bodies, p.warmup_s, p.clip_s, event=ClosesOnLead("ego", "cyclist", t_dec))
        return Proposal(sample_id, index, attempt, self.name, t, cell, draft, scene,
                        {"cell_repairs": {"headway_s": ("timing",), "oncoming_gap_s": ("oncoming",)}}, [],
                        draws.record)

    def baseline(self, ctx: Any, sample_id: str, index: int, streams: Any) -> Proposal:
        return independent_vehicle_baseline(self, ctx, sample_id, index, streams, "oncoming",
                                            p_clip=self.params.clip_s, warmup_s=self.params.warmup_s,
                                            ego_speed=self.params.ego_speed_mps,
                                            event=lambda t_action, body: ClosesOnLead("ego", "oncoming", t_action))


def _as_cyclist(body: Any) -> Any:
    """The plan's body of the cyclist: a vehicle body on its lane, of kind cyclist."""
    return replace(body, kind="cyclist")
