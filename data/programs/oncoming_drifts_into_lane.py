"""``oncoming_drifts_into_lane``: an oncoming vehicle drifts across the centre line into the ego's lane.

A program on the public interface alone (``simready.scenario.api``), run from a
suite's ``programs:``. On a road with one lane each way, the oncoming driver
drifts left (an inattentive driver, an overtake gone wrong) until its side
intrudes into the ego's lane; the two would meet head-on a few seconds later.
The brake branch slows before the meeting point, the coast branch holds on.

Causes, in dependency order (stream in brackets):

0. ego route [template, route]: the template's ego route when its first lane
   has an oncoming lane beside it, else such a lane drawn.
1. oncoming vehicle [actors]: family (any but the ego's), variant.
2. speeds [behavior]: the ego's and the oncoming vehicle's.
3. drift [behavior, timing]: when it starts, how long it takes, how far the
   oncoming vehicle's side overlaps the ego's (the cell's bin), and
   the time from the drift's start to the head-on meeting (the cell's bin).
4. oncoming position [derived]: solved so the meeting comes when drawn.
5. environment [environment].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from simready.scenario.api import (
    ClosesOnLead,
    Draws,
    Fail,
    IntentProgram,
    CoarsePath,
    PathConflict,
    Proposal,
    Realization,
    ScenarioError,
    Scene,
    SpeedProfile,
    assemble,
    conditions,
    correlated_environment,
    decide_at,
    draw_ego_route,
    ego_vehicle,
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
    clip_s: float = 9.0
    warmup_s: float = 1.0
    ego_speed_mps: tuple[float, float] = (6.0, 8.3)
    oncoming_speed_mps: tuple[float, float] = (4.5, 7.5)
    drift_start_s: tuple[float, float] = (0.5, 1.5)
    drift_s: tuple[float, float] = (1.0, 2.0)
    overlap_m: tuple[float, float] = (0.2, 1.4)
    meet_after_s: tuple[float, float] = (2.0, 4.0)
    lane_margin_m: float = 3.0


class OncomingDriftsIntoLane(IntentProgram):
    name = "oncoming_drifts_into_lane"
    abbrev = "drift"
    description = "an oncoming vehicle drifts across the centre line into the ego's lane"
    default_template = "residential_crosswalk_v3"
    needs = ("route",)
    local_groups = frozenset({"timing"})
    coverage = {
        "intent": "oncoming_drifts_into_lane",
        "template": "residential_crosswalk_v3",
        "target_per_cell": 1,
        "max_proposals_per_cell": 20,
        "dimensions": [
            {"name": "overlap_m", "key": "oncoming.overlap_m", "bins": [[0.2, 0.8], [0.8, 1.4]],
             "labels": ["grazing", "deep"]},
            {"name": "meet_after_s", "key": "meet_after_s", "bins": [[2.0, 3.0], [3.0, 4.0]],
             "labels": ["soon", "later"]},
            {"name": "oncoming_family", "key": "oncoming.family", "values": ["sedan", "delivery_van"]},
        ],
    }

    def __init__(self) -> None:
        self.params = Params()

    def ego_lanes(self, template: Any) -> list[tuple[str, ...]]:
        graph = template.lane_graph
        return [(lane,) for lane in sorted(graph.lanes)
                if graph.lane(lane).kind == "driving" and oncoming_lane(template, lane) is not None]

    def check_template(self, ctx: Any) -> None:
        if not self.ego_lanes(ctx.template):
            raise ScenarioError(ctx.template.source, "lanes", f"{ctx.template.id} has no lane with an oncoming lane "
                                f"beside it ({self.name} needs one)")

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
        other = r.set("oncoming.lane", oncoming_lane(t, lane), source="template", parents=["ego.route"],
                      rule="the lane beside the ego's running the other way")
        asset = other_vehicle(ctx, draws, r, cell, "oncoming")

        speeds = draws.group("speeds", "behavior")
        v_e = r.set("ego.speed_mps", round(speeds.uniform("ego", p.ego_speed_mps[0],
                    min(p.ego_speed_mps[1], graph.lane(lane).speed_limit_mps)), 4), source="behavior",
                    rule="uniform up to the ego lane's limit")
        v_o = r.set("oncoming.speed_mps", round(speeds.uniform("oncoming", p.oncoming_speed_mps[0],
                    min(p.oncoming_speed_mps[1], graph.lane(other).speed_limit_mps)), 4), source="behavior",
                    rule="uniform up to the oncoming lane's limit")
        drift = draws.group("drift", "behavior")
        duration = r.set("oncoming.drift_s", round(drift.uniform("duration", *p.drift_s), 3), source="behavior",
                         rule=f"uniform in {list(p.drift_s)} s")
        overlap = in_cell_bin(r, drift, cell, "overlap_m", "oncoming.overlap_m", p.overlap_m)
        timing = draws.group("timing", "timing")
        t_drift = r.set("t_drift_s", seconds_on_grid(timing.uniform("start", *p.drift_start_s)), source="timing",
                        rule=f"uniform in {list(p.drift_start_s)} s, on the tick grid")
        meet_after = in_cell_bin(r, timing, cell, "meet_after_s", "meet_after_s", p.meet_after_s, inset=0.02)

        ego_l, ego_w = lwh(ctx, t.ego.asset)[:2]
        on_l, on_w = lwh(ctx, asset)[:2]
        t_meet = t_drift + meet_after
        s_e_meet = ego_route.start_s_m + v_e * (t_meet + p.warmup_s)
        mx, my, _ = graph.pose_at(lane, s_e_meet + (ego_l + on_l) / 2)
        s_o_meet = graph.project(other, mx, my)[0]
        s_o0 = s_o_meet - v_o * (t_meet + p.warmup_s)
        r.set("oncoming.s0_m", round(s_o0, 4), source="derived", parents=["meet_after_s", "t_drift_s",
              "ego.speed_mps", "oncoming.speed_mps"], rule="front to front with the ego at the meeting time")
        lo, hi = p.lane_margin_m, graph.lane(other).length_m - p.lane_margin_m
        if not (lo <= s_o0 and s_o0 + v_o * (p.clip_s + p.warmup_s) <= hi):
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.spawn_out_of_range", f"the oncoming vehicle would run from s={s_o0:.1f} m off {other}",
                ("timing",)))
        # How far left (toward the ego lane) its centre moves: its side overlaps the ego's (at the lane centre).
        spacing = abs(graph.project(other, *graph.pose_at(lane, s_e_meet)[:2])[1])
        offset = r.set("oncoming.offset_m", round(spacing - (ego_w + on_w) / 2 + overlap, 4), source="derived",
                       parents=["oncoming.overlap_m"], rule="its side past the ego's side by the overlap")

        illumination, weather = conditions(draws, r, t, cell)
        env = correlated_environment(draws, r, illumination, weather)
        ego, ego_body = ego_vehicle(ctx, v_e, p.warmup_s, ego_route)
        s_drift = s_o0 + v_o * (t_drift + p.warmup_s)
        oncoming, oncoming_body = vehicle_on_route(
            ctx, "oncoming", role="agent", asset_id=asset, lanes=(other,), s0_m=s_o0, speed_mps=v_o,
            warmup_s=p.warmup_s, tags=["drifting"], path=_drift_path(ctx, other, s_drift, v_o * duration, offset),
            profile=SpeedProfile.constant(-p.warmup_s, s_o0, v_o),
            behavior_rules=rules(obey_signals=True, yield_=False, collision_avoidance=False, aggression=0.6,
                                 speed_factor=v_o / graph.lane(other).speed_limit_mps))
        interactions = [{"id": "oncoming_drift", "actor_id": "oncoming", "trigger": {"kind": "at", "t_s": t_drift},
                         "lane_offset": {"value": round(offset, 4), "unit": "metres"},
                         "dynamics": {"shape": "sinusoidal", "constraint": "time", "value": duration}}]
        decide_at(r, t_drift, parents=["t_drift_s"], rule="the oncoming vehicle starts to drift")
        draft, _ = assemble(ctx, sample_id=sample_id, streams=streams, program=self, cell=cell,
                            actors=[ego, oncoming], interactions=interactions, occluders=[], environment=env,
                            realization=r, clip_s=p.clip_s, warmup_s=p.warmup_s)
        s_conflict = s_e_meet + ego_l / 2
        cx, cy, _ = graph.pose_at(lane, s_conflict)
        event = PathConflict("oncoming", "ego", (cx, cy), s_conflict, corridor_half_m=(ego_w + on_w) / 2,
                             passer_clearance_m=ego_l / 2, lead_m=on_l / 2)
        scene = Scene({"ego": ego_body, "oncoming": oncoming_body}, p.warmup_s, p.clip_s, event=event)
        return Proposal(sample_id, index, attempt, self.name, t, cell, draft, scene,
                        {"cell_repairs": {"meet_after_s": ("timing",)}}, [], draws.record)

    def baseline(self, ctx: Any, sample_id: str, index: int, streams: Any) -> Proposal:
        p = self.params
        return independent_vehicle_baseline(self, ctx, sample_id, index, streams, "oncoming", p_clip=p.clip_s,
                                            warmup_s=p.warmup_s, ego_speed=p.ego_speed_mps,
                                            event=lambda t_action, body: ClosesOnLead("ego", "oncoming", t_action))


def _drift_path(ctx: Any, lane: str, s_start_m: float, length_m: float, offset_m: float) -> CoarsePath:
    """The lane's centreline moved left by ``offset_m`` over ``length_m`` from ``s_start_m`` (a sinusoidal blend,
    what the manifest's ``lane_offset`` with sinusoidal dynamics asks of the simulation), then held."""
    base = ctx.geometry.route_path((lane,))
    s = np.unique(np.concatenate([np.arange(0.0, base.length_m, 2.0), [base.length_m],
                                  np.linspace(s_start_m, s_start_m + length_m, 25)]))
    s = s[(s >= 0) & (s <= base.length_m)]
    x, y, yaw = base.xy_yaw(s)
    u = np.clip((s - s_start_m) / max(length_m, 1e-6), 0.0, 1.0)
    d = offset_m * (0.5 - 0.5 * np.cos(np.pi * u))
    return CoarsePath.from_points(np.stack([x - d * np.sin(yaw), y + d * np.cos(yaw)], axis=1))
