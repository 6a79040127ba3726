"""``lead_vehicle_brakes``: the vehicle ahead of the ego in its lane brakes hard.

Causes, in dependency order (stream in brackets):

0. **ego route** [template, route] — the template's ``ego.route`` when it is
   at least 170 m long (the slowest ego closing on a lead over the clip),
   else such a lane chain drawn from the lane graph (SPEC §18).
1. **lead spawn** [layout] — a vehicle-spawn affordance on a lane of the
   ego route, or on a route without any, one of its lanes whole (the lead
   shares the ego's path; relation before coordinates).
2. **lead vehicle** [actors] — family (the cell's, or any vehicle family
   but the ego's), variant.
3. **speeds** [behavior] — ego speed in the cell's bin; lead speed = ego
   speed + a small offset (a follower matches its leader).
4. **braking** [behavior, timing] — deceleration in the cell's ``brake``
   bin, brake onset time, and the time headway at onset in the cell's bin.
5. **lead position** [derived] — placed so the bumper gap at onset is
   headway × ego speed; it must fall inside the spawn's s-range.
6. **environment** [environment].

The ladder's rollout measures the headway at onset and the contact time
with no reaction from the ego (the brake / coast branches are the
simulation's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from simready.scenario.api import (
    LONG_ROUTE_M,
    Cell,
    ClosesOnLead,
    Draws,
    Fail,
    IntentProgram,
    ProgramContext,
    Proposal,
    Realization,
    SpeedProfile,
    StreamSet,
    VehicleIntentParams,
    draw_ego_route,
    ego_under_conditions,
    family_of,
    in_cell_bin,
    independent_vehicle_baseline,
    lane_as_spawn,
    lane_network,
    lwh,
    other_vehicle,
    pair_proposal,
    route_length_m,
    routes_of_length,
    scripted_vehicle_rules,
    seconds_on_grid,
    spawn_affordances,
    vehicle_families,
    vehicle_on_route,
)


@dataclass(frozen=True)
class LeadParams(VehicleIntentParams):
    lead_speed_offset_mps: tuple[float, float] = (-1.0, 0.5)
    brake_onset_s: tuple[float, float] = (2.0, 4.0)
    decel_mps2: tuple[float, float] = (2.0, 6.0)
    headway_s: tuple[float, float] = (1.0, 2.5)
    #: Headway targets are drawn this far inside the cell (s).
    headway_inset_s: float = 0.02


class LeadVehicleBrakes(IntentProgram):
    name = "lead_vehicle_brakes"
    abbrev = "lead"
    default_template = "two_lane_arterial"
    description = "the vehicle ahead of the ego in its lane brakes hard"
    needs = ("long_route",)
    local_groups = frozenset({"timing", "lead_speed"})

    def __init__(self, params: LeadParams | None = None) -> None:
        self.params = params or LeadParams()

    def spawns(self, ctx: ProgramContext, route: tuple[str, ...] | None = None) -> list[Any]:
        """Vehicle spawns on the ego route's lanes; on a route without any, its lanes whole (any route will do)."""
        route = route or tuple(ctx.template.ego.route)
        declared = [a for lane in route for a in spawn_affordances(ctx.template, lane)]
        return declared or [lane_as_spawn(ctx.template, lane) for lane in route]

    def ego_routes(self, ctx: ProgramContext) -> list[tuple[str, ...]]:
        """Lane chains long enough for the slowest ego to close on a lead over the clip."""
        return self.memo(ctx, "ego_routes", lambda: routes_of_length(lane_network(ctx.template), LONG_ROUTE_M))

    def check_template(self, ctx: ProgramContext) -> None:
        self.require(ctx, bool(vehicle_families(ctx, [family_of(ctx.template.ego.asset)])), "catalog",
                     "has no vehicle family for the lead")

    def propose(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, streams: StreamSet, *,
                attempt: int = 0, previous: Mapping[str, Mapping[str, Any]] | None = None,
                redraw: Iterable[str] = ()) -> Proposal:
        p, t = self.params, ctx.template
        draws = Draws(streams, attempt=attempt, previous=previous, redraw=redraw)
        r = Realization()
        ego_route = draw_ego_route(ctx, r, draws, self.ego_routes(ctx),
                                   lambda lanes: route_length_m(t.lane_graph, lanes) >= LONG_ROUTE_M,
                                   f"at least {LONG_ROUTE_M:g} m long")
        route = ego_route.lanes
        layout = draws.group("layout", "layout")
        spawn = layout.choice("spawn", self.spawns(ctx, route))
        r.set("lead.spawn", spawn.id, source="layout", parents=["ego.route"],
              rule="uniform over vehicle spawns on the ego route's lanes")

        lead_asset = other_vehicle(ctx, draws, r, cell, "lead")
        ego_speed = in_cell_bin(r, draws.group("ego_speed", "behavior"), cell, "ego_speed_mps", "ego.speed_mps",
                                p.ego_speed_mps)
        dv = draws.group("lead_speed", "behavior").uniform("dv", *p.lead_speed_offset_mps)
        lead_speed = r.set("lead.speed_mps", round(max(0.5, ego_speed + dv), 4), source="behavior",
                           parents=["ego.speed_mps"], rule=f"ego speed + uniform {list(p.lead_speed_offset_mps)} m/s")
        decel = in_cell_bin(r, draws.group("brake", "behavior"), cell, "brake", "lead.decel_mps2", p.decel_mps2)
        timing = draws.group("timing", "timing")
        t_brake = r.set("t_brake_s", seconds_on_grid(timing.uniform("t_brake", *p.brake_onset_s)), source="timing",
                        rule=f"uniform in {list(p.brake_onset_s)} s, on the tick grid")
        headway = in_cell_bin(r, timing, cell, "headway_s", "headway_target_s", p.headway_s, inset=p.headway_inset_s)

        ego_l = ctx.footprints[t.ego.asset][0]
        lead_l = lwh(ctx, lead_asset)[0]
        s_ego_brake = ego_route.start_s_m + ego_speed * (t_brake + p.warmup_s)
        s_lead_brake = s_ego_brake + (ego_l + lead_l) / 2 + headway * ego_speed
        s_lead0 = s_lead_brake - lead_speed * (t_brake + p.warmup_s)
        offset = ctx.geometry.route_path(route[: route.index(spawn.lane)]).length_m if route.index(spawn.lane) else 0.0
        lo, hi = (offset + spawn.s_range_m[0], offset + spawn.s_range_m[1])
        r.set("lead.s0_m", round(s_lead0, 4), source="derived",
              parents=["headway_target_s", "t_brake_s", "ego.speed_mps", "lead.speed_mps"],
              rule="bumper gap headway x ego speed at brake onset, back-propagated at the lead's speed")
        if not lo <= s_lead0 <= hi:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.spawn_out_of_range", f"the lead would start at s={s_lead0:.1f} m, outside {spawn.id} "
                f"[{lo:.1f}, {hi:.1f}] m", ("timing", "lead_speed")))

        env, ego, ego_body = ego_under_conditions(ctx, draws, r, cell, ego_speed, p.warmup_s, ego_route)
        profile = SpeedProfile.from_phases(-p.warmup_s, s_lead0, lead_speed, [(t_brake + p.warmup_s, 0.0), (0.0, -decel)])
        lead = vehicle_on_route(
            ctx, "lead", role="agent", asset_id=lead_asset, lanes=route, s0_m=s_lead0, speed_mps=lead_speed,
            warmup_s=p.warmup_s, profile=profile, tags=["lead"],
            behavior_rules=scripted_vehicle_rules(aggression=0.5, speed_mps=lead_speed,
                                                  limit_mps=t.lane_graph.lane(spawn.lane).speed_limit_mps))
        interactions = [
            {"id": "lead_brake", "actor_id": "lead", "trigger": {"kind": "at", "t_s": t_brake},
             "speed": {"mode": "stop"}, "dynamics": {"shape": "linear", "constraint": "rate", "value": decel}},
            {"id": "lead_brake_lights", "actor_id": "lead", "trigger": {"kind": "at", "t_s": t_brake},
             "set": {"key": "lights.brake", "value": True}},
        ]
        return pair_proposal(self, ctx, sample_id, index, streams, draws, r, cell=cell, attempt=attempt,
                             ego=(ego, ego_body), other=lead, interactions=interactions, environment=env,
                             event=ClosesOnLead("ego", "lead", t_brake),
                             refs={"cell_repairs": {"headway_s": ("timing",)}}, clip_s=p.clip_s, warmup_s=p.warmup_s)

    def baseline(self, ctx: ProgramContext, sample_id: str, index: int, streams: StreamSet) -> Proposal:
        """Independent draws: lead anywhere on the map facing anywhere, every speed and time over its full range."""
        return independent_vehicle_baseline(self, ctx, sample_id, index, streams, "lead", p_clip=self.params.clip_s,
                                            warmup_s=self.params.warmup_s, ego_speed=self.params.ego_speed_mps,
                                            event=lambda t_action, body: ClosesOnLead("ego", "lead", t_action))
