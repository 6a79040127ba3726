"""The program: the draws of the conditional program and of the baseline, and the scene, actors and interactions
they build."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from simready.scenario.api import (DRAWN_APPROACH_M, WALKABLE_SURFACES, Body, Cell, CoarsePath, Draws, EgoRoute, Fail,
                                   Motion, OcclusionSpec, PathConflict, PedestrianCrossing, ProgramContext, Proposal,
                                   Realization, Scene, SpeedProfile, StreamSet, actor, assemble, camera_view,
                                   conditions, correlated_environment, ego_vehicle, family_of, independent_environment,
                                   lwh, parking_sites, rules, seconds_on_grid, solve_emergence_timing, stationary,
                                   wheel_points)
from simready.scenario.programs.pedestrian.layouts import Layout
from simready.scenario.programs.pedestrian.params import SPAWN_TRIES, VAN_FAMILY, PedestrianParams
from simready.scenario.programs.pedestrian.shadow import Spawning
from simready.scenario.programs.pedestrian.walk import Conflict, PedGeometry, walk_start


@dataclass
class _Plan:
    """Everything the builder needs; the conditional program and the baseline fill it differently."""

    layout: Layout | None
    van_asset: str
    van_pose: tuple[float, float, float]
    ped_asset: str
    spawn: tuple[float, float]
    walk_nodes: tuple[str, ...]
    walk_speed: float
    reaction_delay: float
    stop_tendency: float
    aggression: float
    ego_speed: float
    t_go: float
    environment: dict[str, Any]
    geometry: PedGeometry | None = None
    conflict: Conflict | None = None


class PedestrianEmergesBehindVan(Spawning):
    name = "pedestrian_emerges_behind_van"
    abbrev = "ped"
    default_template = "residential_crosswalk_v3"
    description = "a pedestrian steps out from behind a parked delivery van into the ego's path at a crossing"
    #: A parking lane or region, else a kerb by the kerbside rule (``affordances.parking_sites``), and a crosswalk.
    needs = ("parking_or_kerb", "crosswalk")
    local_groups = frozenset({"spawn", "ttc_target", "ego_speed", "van_pose"})

    def __init__(self, params: PedestrianParams | None = None) -> None:
        self.params = params or PedestrianParams()

    def check_template(self, ctx: ProgramContext) -> None:
        t = ctx.template
        self.require(ctx, bool(parking_sites(t)), "regions",
                     "has no parking region, parking lane or passable kerb with a sidewalk")
        self.require(ctx, any(isinstance(a, PedestrianCrossing) for a in t.affordances), "affordances",
                     "has no pedestrian crossing")
        self.require(ctx, bool(self.layouts(ctx)), "relations",
                     "has no parking area or kerb site beside a sidewalk that a crosswalk connects, upstream of that "
                     "crosswalk on a route past it")
        self.require(ctx, bool(ctx.variants(VAN_FAMILY)), "catalog", f"catalog has no {VAN_FAMILY} asset")
        self.require(ctx, any(s.type == "camera" for s in t.sensor_rig.sensors.values()), "sensor_rig",
                     "has no camera")

    def propose(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, streams: StreamSet, *,
                attempt: int = 0, previous: Mapping[str, Mapping[str, Any]] | None = None,
                redraw: Iterable[str] = ()) -> Proposal:
        p = self.params
        t = ctx.template
        draws = Draws(streams, attempt=attempt, previous=previous, redraw=redraw)
        r = Realization()
        options = self.layouts(ctx)
        own_route = not any(o[0].drawn for o in options)
        if own_route:  # every option keeps the template's route: it comes first, as it always has
            r.set("ego.route", list(t.ego.route), source="template", rule="the template's ego route")
        layout_draws = draws.group("layout", "layout")
        option = layout_draws.choice("option", options)
        layout = option[0]
        at_kerb = layout.site.kind == "kerb"
        if at_kerb:
            r.set("parking.site", layout.parking, source="layout", rule="uniform over kerb sites (the kerbside rule) "
                  "beside a sidewalk that a crosswalk connects, upstream of the crosswalk; the map has no parking area")
        else:
            r.set("parking.affordance", layout.parking, source="layout", rule="uniform over parking areas adjacent "
                  "to a sidewalk that a crosswalk on the ego route connects, upstream of the crosswalk")
            r.set("parking.region", layout.parking_region, source="template", parents=["parking.affordance"],
                  rule="the affordance's region")
        where = "parking.site" if at_kerb else "parking.affordance"
        r.set("crossing", layout.crossing, source="template", parents=[where],
              rule="the crossing whose crosswalk connects the adjacent sidewalk")
        r.set("ped.sidewalk", layout.sidewalk, source="template", parents=[where, "crossing"],
              rule=f"the sidewalk {'beside the kerb site' if at_kerb else 'adjacent to the parking region'} that the "
                   f"crosswalk connects")
        if layout.drawn:
            layout = draws.group("route", "route").choice("ego_route", list(option))
            r.set("ego.route", list(layout.route.lanes), source="route", parents=[where, "crossing"],
                  rule="uniform over the lane graph's routes past the site and then across the crossing (the "
                       "template's does not pass it)")
            r.set("ego.start_s_m", layout.route.start_s_m, source="derived", parents=["ego.route", "crossing"],
                  rule=f"{DRAWN_APPROACH_M:g} m before the crossing, at least a body length into the first lane")
        elif not own_route:
            r.set("ego.route", list(t.ego.route), source="template", parents=[where],
                  rule="the template's ego route: it passes the site, then the crossing")
        if layout.route.offset_m:
            r.set("ego.offset_m", layout.route.offset_m, source="derived", parents=[where, "ego.route"],
                  rule=f"left of the lane centre so the ego passes the van at the kerb with "
                       f"{p.pass_clearance_m:g} m to spare (the kerbside rule leaves it the width)")

        assets = draws.group("assets", "actors")
        van_asset = r.set("van.asset", assets.choice("van", ctx.variants(VAN_FAMILY)), source="actors",
                          rule=f"uniform over {VAN_FAMILY} variants")
        family = cell.value("ped_family") if cell is not None else None
        if family is None:
            family = assets.choice("ped_family", ctx.families_of_class("pedestrian"))
            r.set("ped.family", family, source="actors", rule="uniform over pedestrian families")
        else:
            r.set("ped.family", family, source="cell", parents=["cell.ped_family"], rule="the coverage cell's family")
        ped_asset = r.set("ped.asset", assets.choice("ped", ctx.variants(family) or ["asset:missing/none"]),
                          source="actors", parents=["ped.family"], rule="uniform over the family's variants")

        van_l, van_w = ctx.footprints[van_asset]
        route = ctx.geometry.route_path(layout.route.lanes, layout.route.offset_m)
        gap_bin = cell.bin("occlusion") if cell is not None else None
        gap_lo, gap_hi = gap_bin or (0.0, p.max_van_gap_m)
        slot_s = self.memo(ctx, ("slot_s", layout), lambda: [route.s_of(x, y) for x, y, _ in layout.slots])
        slots = [slot for slot, s_slot in zip(layout.slots, slot_s)
                 if gap_lo <= layout.s_cross_in_m - (s_slot + van_l / 2) <= gap_hi]
        if not slots:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.no_slot", f"no slot of {layout.parking} puts a {van_l} m van {gap_lo}-{gap_hi} m before "
                f"{layout.crossing}", structural=True))
        slot_index = layout_draws.choice("slot", list(range(len(slots))))
        sx, sy, syaw = slots[slot_index]
        r.set("van.slot", [round(sx, 4), round(sy, 4)], source="layout",
              parents=[where, "van.asset"] + (["cell.occlusion"] if gap_bin else []),
              rule=f"uniform over slots whose van front is {gap_lo}-{gap_hi} m before the crossing")

        slot_len, strip = layout.slot_length_m, layout.strip_m
        along_max = max(0.0, (slot_len - van_l) / 2 - p.van_margin_m)
        across_max = max(0.0, (strip - van_w) / 2 - p.van_margin_m)
        vp = draws.group("van_pose", "layout")
        along = vp.uniform("along", -along_max, along_max)
        across = vp.uniform("across", -across_max, across_max)
        c, s = math.cos(syaw), math.sin(syaw)
        van_pose = (sx + c * along - s * across, sy + s * along + c * across, syaw)
        r.set("van.offset_m", [round(along, 4), round(across, 4)], source="layout", parents=["van.slot"],
              rule=f"uniform along ±{along_max:.3f} m and across ±{across_max:.3f} m: the footprint stays in the slot")
        r.set("van.pose", [round(v, 6) for v in van_pose], source="derived", parents=["van.slot", "van.offset_m"],
              rule="slot centre + offsets, heading of the traffic lane")
        r.set("van.gap_to_crossing_m", round(layout.s_cross_in_m - route.s_of(van_pose[0], van_pose[1]) - van_l / 2, 4),
              source="derived", parents=["van.pose", "crossing"],
              rule="ego-route distance from the van's front bumper to the crosswalk: how deep its shadow reaches")

        behavior = draws.group("behavior", "behavior")
        walk_speed = r.set("ped.walk_speed_mps", round(behavior.uniform("walk", *p.walk_speed(family)), 4),
                           source="behavior", parents=["ped.family"],
                           rule=f"uniform in {list(p.walk_speed(family))} m/s for {family}")
        reaction = r.set("ped.reaction_delay_s", round(behavior.uniform("reaction", 0.3, 1.2), 4), source="behavior",
                         rule="uniform in [0.3, 1.2] s")
        stop_tendency = r.set("ped.stop_tendency", round(behavior.uniform("stop", 0.0, 0.3), 4), source="behavior",
                              rule="uniform in [0, 0.3]: a pedestrian who steps out rarely stops")
        aggression = round(behavior.uniform("aggression", 0.2, 0.9), 4)

        ped_r = max(ctx.footprints[ped_asset]) / 2 if ped_asset in ctx.catalog.entries else 0.25
        speed_bin = cell.bin("ego_speed_mps") if cell is not None else None
        v_lo, v_hi = speed_bin or p.ego_speed_mps
        v_hi_inside = v_hi - 1e-3
        ttc_bin = cell.bin("ttc_s") if cell is not None else None
        t_lo, t_hi = ttc_bin or p.ttc_s
        t_lo_in, t_hi_in = t_lo + p.ttc_inset_s, t_hi - p.ttc_inset_s
        # Occlusion constrains timing (relations before coordinates): the kerb where the pedestrian steps out must
        # still be in the van's shadow when it does, so the ego must then be at least `need_m` short of its
        # arrival point: speed x (TTC + kerb-to-path walk) >= need_m.
        need_m, walk_leg_s = self._occlusion_need(ctx, layout, van_pose, (van_l, van_w), ped_r, walk_speed)
        v_need = need_m / (t_hi_in + walk_leg_s)
        v_min = max(v_lo, min(v_need, v_hi_inside))
        if v_need > v_hi_inside:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.kerb_in_view", f"the van leaves the crossing's kerb in view unless the ego is {need_m:.1f} m "
                f"short of the conflict at emergence: no speed in [{v_lo}, {v_hi}) m/s with TTC <= {t_hi} s does that",
                ("van_pose",)))
        ego_speed_draw = draws.group("ego_speed", "behavior").uniform("ego_speed", v_min, v_hi_inside)
        r.set("ego.speed_draw", round(ego_speed_draw, 4), source="behavior",
              parents=(["cell.ego_speed_mps"] if speed_bin else []) + ["van.pose"],
              rule=f"uniform in [{v_min:.3f}, {v_hi}) m/s: the bin, above the speed that keeps the kerb hidden")
        ttc_min = min(max(t_lo_in, need_m / ego_speed_draw - walk_leg_s + p.ttc_inset_s), t_hi_in)
        ttc_target = draws.group("ttc_target", "timing").uniform("ttc", ttc_min, t_hi_in)
        r.set("ttc_target_s", round(ttc_target, 4), source="timing",
              parents=(["cell.ttc_s"] if ttc_bin else []) + ["ego.speed_draw", "van.pose"],
              rule=f"uniform in [{ttc_min:.2f}, {t_hi_in:.2f}] s: the cell, above the TTC that keeps the kerb hidden")

        spawn_area, empty_reason = self._spawn_area(ctx, layout, van_pose, (van_l, van_w), ego_speed_draw, v_lo,
                                                    ttc_target, walk_speed, ped_r)
        spawn = None if spawn_area is None else draws.group("spawn", "layout").point_where(
            "spawn", spawn_area.bounds, spawn_area.inside, tries=SPAWN_TRIES)
        if spawn is None:
            kerb_seen = empty_reason.startswith("the kerb")
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.kerb_in_view" if kerb_seen else "sampling.no_hidden_spawn", empty_reason,
                ("ttc_target", "ego_speed") if kerb_seen else ("van_pose", "ttc_target")))
        r.set("ped.spawn", [round(spawn[0], 4), round(spawn[1], 4)], source="layout",
              parents=["van.pose", "ego.route", "ego.speed_draw", "ttc_target_s", "ped.walk_speed_mps"],
              rule=f"uniform in the sidewalk strip near the crossing, inside the van's shadow from the ego camera at "
                   f"its expected positions before emergence")
        nodes = walk_start(ctx, spawn, layout.path)
        r.set("ped.walk_route", list(nodes), source="derived", parents=["ped.spawn", "crossing"],
              rule="the crossing path from its furthest node reachable on foot in a straight line")

        geo = PedGeometry.of(ctx, spawn, nodes, layout.sidewalk, ped_r)
        ego_l, ego_w = ctx.footprints[t.ego.asset]
        conflict = geo.conflict(route, ego_w / 2 + ped_r)
        if conflict is None:
            return self.refused(ctx, cell, sample_id, index, attempt, draws,
                                Fail("sampling.no_conflict", "the crossing path never crosses the ego route"))
        s_arrival = conflict.s_route_m - ego_l / 2 - ped_r
        sol = solve_emergence_timing(
            d_ego_m=max(0.0, s_arrival - layout.route.start_s_m), v_ego_mps=ego_speed_draw,
            d_ped_m=conflict.s_enter_m + walk_speed * (p.warmup_s + p.walk_ramp_s / 2), v_ped_mps=walk_speed,
            ttc_cell_s=(t_lo, t_hi), ttc_target_s=ttc_target, ego_speed_bounds_mps=(v_lo, v_hi_inside),
            max_delay_s=p.clip_s - 1.0)
        if not sol.feasible:
            return self.refused(ctx, cell, sample_id, index, attempt, draws,
                                Fail("sampling.timing_infeasible", sol.reason, ("spawn", "ttc_target")))
        t_go, ego_speed = seconds_on_grid(sol.delay_s or 0.0), float(sol.ego_speed_mps or ego_speed_draw)
        r.set("timing.method", sol.method, source="solve",
              parents=["ttc_target_s", "ego.speed_draw", "ped.spawn", "ped.walk_speed_mps"],
              rule="delay alone when it fits in [0, clip - 1 s], else the ego speed inside its bin")
        r.set("ego.speed_mps", round(ego_speed, 4), source="solve", parents=["ego.speed_draw", "timing.method"],
              rule="the drawn ego speed, or the solve's adjustment inside the same bin")
        r.set("t_trigger_s", t_go, source="solve", parents=["ttc_target_s", "ego.speed_mps", "ped.spawn"],
              rule="pedestrian start delay from the timing solve, on the tick grid")

        illumination, weather = conditions(draws, r, t, cell)
        env = correlated_environment(draws, r, illumination, weather)
        plan = _Plan(layout, van_asset, van_pose, ped_asset, spawn, nodes, walk_speed, reaction, stop_tendency,
                     aggression, ego_speed, t_go, env, geo, conflict)
        return self._build(ctx, plan, sample_id=sample_id, index=index, attempt=attempt, streams=streams, draws=draws,
                           r=r, cell=cell)

    def baseline(self, ctx: ProgramContext, sample_id: str, index: int, streams: StreamSet) -> Proposal:
        p, t = self.params, ctx.template
        draws = Draws(streams)
        r = Realization()
        xmin, ymin, xmax, ymax = t.bounds
        g = draws.group("baseline", "layout")
        a = draws.group("assets", "actors")
        b = draws.group("behavior", "behavior")
        van_asset = r.set("van.asset", a.choice("van", ctx.variants(VAN_FAMILY)), source="actors", rule="uniform")
        van_pose = (g.uniform("van_x", xmin, xmax), g.uniform("van_y", ymin, ymax), g.uniform("van_yaw", -math.pi, math.pi))
        r.set("van.pose", [round(v, 6) for v in van_pose], source="layout", rule="uniform over the map, any heading")
        family = r.set("ped.family", a.choice("ped_family", ctx.families_of_class("pedestrian")), source="actors",
                       rule="uniform")
        ped_asset = r.set("ped.asset", a.choice("ped", ctx.variants(family)), source="actors", rule="uniform")
        spawn = (g.uniform("spawn_x", xmin, xmax), g.uniform("spawn_y", ymin, ymax))
        r.set("ped.spawn", [round(v, 4) for v in spawn], source="layout", rule="uniform over the map")
        crossings = sorted((x for x in t.affordances if isinstance(x, PedestrianCrossing)), key=lambda x: x.id)
        path = g.choice("crossing", crossings).path
        ego_speed = r.set("ego.speed_mps", round(b.uniform("ego_speed", *p.ego_speed_mps), 4), source="behavior",
                          rule="uniform over the full range")
        walk_speed = r.set("ped.walk_speed_mps", round(b.uniform("walk", 0.8, 2.0), 4), source="behavior", rule="uniform")
        t_go = r.set("t_trigger_s", seconds_on_grid(b.uniform("t_go", 0.0, p.clip_s - 1.0)), source="timing",
                     rule="uniform start delay, no solve")
        env = independent_environment(draws, r, t)
        plan = _Plan(None, van_asset, van_pose, ped_asset, spawn, tuple(path), walk_speed, b.uniform("reaction", 0.3, 1.2),
                     b.uniform("stop", 0.0, 1.0), b.uniform("aggression", 0.0, 1.0), ego_speed, t_go, env)
        return self._build(ctx, plan, sample_id=sample_id, index=index, attempt=0, streams=streams, draws=draws, r=r,
                           cell=None)

    def _build(self, ctx: ProgramContext, plan: _Plan, *, sample_id: str, index: int, attempt: int, streams: StreamSet,
               draws: Draws, r: Realization, cell: Cell | None) -> Proposal:
        p, t = self.params, ctx.template
        ego_route = plan.layout.route if plan.layout is not None else EgoRoute(tuple(t.ego.route), t.ego.start_s_m)
        route_lanes = ego_route.lanes
        route = ctx.geometry.route_path(route_lanes, ego_route.offset_m)
        ego_l, ego_w = ctx.footprints[t.ego.asset]
        ped_r = max(ctx.footprints[plan.ped_asset]) / 2 if plan.ped_asset in ctx.catalog.entries else 0.25
        s0 = ego_route.start_s_m
        ego, ego_body = ego_vehicle(ctx, plan.ego_speed, p.warmup_s, route=ego_route)
        ego_motion = ego_body.motion
        van = actor(ctx, "van", kind="vehicle", role="parked", asset_id=plan.van_asset, pose=plan.van_pose, speed_mps=0.0,
                    tags=["occluder", "parked"], behavior_rules=rules(obey_signals=True, yield_=True,
                                                                       collision_avoidance=True, aggression=0.0,
                                                                       speed_factor=1.0))
        ped_points = np.array([plan.spawn] + [t.walk_graph.nodes[n] for n in plan.walk_nodes])
        ped_path = CoarsePath.from_points(ped_points)
        _, _, ped_yaw = ped_path.xy_yaw(0.0)
        ped_profile = SpeedProfile.wait_then_go(-p.warmup_s, 0.0, plan.t_go, plan.walk_speed, p.walk_ramp_s)
        ped = actor(ctx, "ped", kind="pedestrian", role="agent", asset_id=plan.ped_asset,
                    pose=(plan.spawn[0], plan.spawn[1], float(ped_yaw)), speed_mps=0.0, tags=["emerging"],
                    walk={"route": list(plan.walk_nodes), "reaction_delay_s": round(float(plan.reaction_delay), 4),
                          "stop_tendency": round(float(plan.stop_tendency), 4)},
                    behavior_rules=rules(obey_signals=True, yield_=False, collision_avoidance=False,
                                         aggression=plan.aggression, speed_factor=1.0))
        # The walk starts when the ego reaches where the plan has it at t_go (robust to small speed errors).
        s_trig = s0 + plan.ego_speed * (plan.t_go + p.warmup_s)
        trig_lane, trig_s = ctx.geometry.route_lane_at(route_lanes, s_trig)
        width = max(2.0, 3 * plan.ego_speed * 0.02)
        interactions = [{
            "id": "ped_walk",
            "actor_id": "ped",
            "trigger": {"kind": "when",
                        "condition": {"kind": "reaches", "actor": "ego",
                                      "region": {"shape": "lane_window", "lane": trig_lane, "s_from": round(trig_s, 4),
                                                 "s_to": round(trig_s + width, 4)}},
                        "by_latest_s": round(min(p.clip_s, plan.t_go + p.trigger_slack_s), 4), "if_never": "fire"},
            "speed": {"mode": "absolute", "value": round(plan.walk_speed, 4)},
            "dynamics": {"shape": "linear", "constraint": "time", "value": p.walk_ramp_s},
        }]
        r.set("trigger.lane_window", [trig_lane, round(trig_s, 4), round(trig_s + width, 4)], source="derived",
              parents=["t_trigger_s", "ego.speed_mps"], rule="the ego's planned lane position at the trigger time")

        ped_geo = plan.geometry or PedGeometry.of(ctx, plan.spawn, plan.walk_nodes,
                                                   plan.layout.sidewalk if plan.layout else None, ped_r)
        conflict = plan.conflict if plan.geometry is not None else ped_geo.conflict(route, ego_w / 2 + ped_r)
        t_emerge = ped_profile.time_at(ped_geo.s_kerb) if ped_geo.s_kerb is not None else plan.t_go
        r.set("t_emerge_s", round(min(t_emerge, 1e6), 4), source="derived", parents=["t_trigger_s", "ped.spawn"],
              rule="planned time the pedestrian leaves the sidewalk (steps off the kerb)")
        event: Any
        t_end = p.clip_s
        if conflict is None:
            event = _NoConflict()
        else:
            xy = ped_geo.point_at(conflict.s_path_m)
            event = PathConflict("ped", "ego", xy, conflict.s_route_m, ego_w / 2 + ped_r, ego_l / 2 + ped_r,
                                 reveal_key="t_reveal_s")
            t_end = ego_motion.time_at(conflict.s_route_m - ego_l / 2 - ped_r)
        side = "right" if route.lateral(np.array([plan.van_pose[:2]]))[1][0] < 0 else "left"
        r.set("emergence_side", side, source="derived", parents=["van.pose", "ego.route"],
              rule="the side of the ego route the van is parked on")
        occlusion = OcclusionSpec("ped", "ego", camera_view(t), ("van",), t_emerge, t_end, p.max_visible_before,
                                  p.min_visible_after, p.min_frames_after, p.min_frames_before, p.pre_window_s)
        bodies = {
            "ego": ego_body,
            "van": _van_body(ctx, plan, p.warmup_s),
            "ped": Body("ped", "pedestrian", "agent", plan.ped_asset, family_of(plan.ped_asset),
                        *lwh(ctx, plan.ped_asset), Motion(ped_path, ped_profile), WALKABLE_SURFACES,
                        walk=plan.walk_nodes),
        }
        draft, _ = assemble(ctx, sample_id=sample_id, streams=streams, program=self, cell=cell,
                            actors=[ego, van, ped], interactions=interactions,
                            occluders=[{"id": "occ_van", "kind": "actor", "actor_id": "van"}], environment=plan.environment,
                            realization=r, clip_s=p.clip_s, warmup_s=p.warmup_s)
        refs: dict[str, Any] = {"cell_repairs": {"ttc_s": ("ttc_target", "ego_speed"), "occlusion": ("van_pose",)}}
        if plan.layout is not None:
            refs["regions"] = {"ped": (plan.layout.sidewalk, ("sidewalk",))}
            if plan.layout.parking_region is not None:
                refs["regions"]["van"] = (plan.layout.parking_region, ("parking",))
            refs["sites"] = {"van": plan.layout.site}
        scene = Scene(bodies, p.warmup_s, p.clip_s, occlusion=occlusion, event=event)
        return Proposal(sample_id, index, attempt, self.name, t, cell, draft, scene, refs, [], draws.record)


def _van_body(ctx: ProgramContext, plan: _Plan, warmup_s: float) -> Body:
    x, y, yaw = plan.van_pose
    site = plan.layout.site if plan.layout is not None else None
    return Body("van", "vehicle", "parked", plan.van_asset, family_of(plan.van_asset), *lwh(ctx, plan.van_asset),
                stationary(x, y, yaw, -warmup_s), site.surface if site is not None else ("parking",), site=site,
                wheels=wheel_points(ctx, plan.van_asset), wheel_surface=("parking", "drivable"))


@dataclass(frozen=True)
class _NoConflict:
    def measure(self, proposal: Proposal, samples: Any) -> Fail:
        return Fail("rollout.no_event", "the pedestrian's walk never crosses the ego route", ())
