"""``child_between_parked_cars``: a child runs out into the ego's lane from between two parked cars, mid-block.

A program on the public interface alone (``simready.scenario.api``), run from a
suite's ``programs:``. Where a street has a parking lane, a parking region or a
kerb by the kerbside rule with a footway beside it and another across the
carriageway (``kerb_gap``), a row of vehicles is parked beside the ego's lane
with one gap in it; a child waits on the footway behind the gap, hidden by the
row, and runs across the carriageway through the gap (a mid-block crossing, off
the walkable graph: the manifest's ``walk.via``) so that the ego is the cell's
time-to-collision from it when it enters the ego's path. The decision is the
moment the child emerges from between the cars: the brake branch stops short,
the coast branch runs into it.

Causes, in dependency order (stream in brackets):

0. gap site [layout]: uniform over the parking lanes and regions beside a
   driving lane where the map has any, else over its kerb sites.
1. ego route [template, route]: the template's when it starts on the site's
   lane, else that lane and its straight successors; past a kerb site the ego
   holds the offset that clears the parked row.
2. vehicles [actors]: the rear one (the cell's family: it hides the child), the
   front one, the child (``pedestrian_child``).
3. child run speed, TTC target [behavior, timing]: in the cell's bins; ego
   speed up to the lane's limit [behavior]; when the child starts [timing].
4. gap [gap]: its width, how far behind the kerb the child waits, where along
   the site it opens (late enough that the ego starts on its lane).
5. the rest of the row [gap]: vehicles upstream of the rear one, small gaps
   between them, until the row is ``row_m`` long or the site ends.
6. crossing, conflict and ego start [derived]: the crossing through the gap,
   where it enters the ego's corridor, and where the ego must start so the TTC
   at entry is the target. The child starts at 2.8 m/s² and, reaching the far
   footway, slows to a walk before it turns along it (two speed interactions,
   the plan's profile the same).
7. environment [environment].

The child is the catalog's ``pedestrian_child`` (1.2 m tall; the smallest
pedestrian when a catalog has none). The ladder checks what was planned: the
child hidden by the row (visible fraction ≤ 0.1) in the second before it
emerges and seen after, the crossing's legs on footways and carriageway, the
TTC in the cell's bin.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from simready.scenario.api import (
    KERB_GAP_M,
    PARKED_WIDTH_M,
    WALKABLE_SURFACES,
    Body,
    Draws,
    EgoRoute,
    Fail,
    IntentProgram,
    Motion,
    OcclusionSpec,
    PathConflict,
    Proposal,
    Realization,
    ScenarioError,
    Scene,
    SpeedProfile,
    actor,
    assemble,
    camera_view,
    parkable,
    conditions,
    correlated_environment,
    decide_at,
    family_of,
    in_cell_bin,
    independent_environment,
    kerb_gap,
    kerb_gap_sites,
    lane_network,
    lwh,
    midblock_crossing,
    other_vehicle,
    rules,
    seconds_on_grid,
    site_pose,
    stationary,
    straight_through,
    ego_vehicle,
    wheel_points,
)

CHILD_FAMILY = "pedestrian_child"
PARKED_FAMILIES = ("sedan", "delivery_van")


@dataclass(frozen=True)
class Params:
    clip_s: float = 10.0
    warmup_s: float = 1.0
    ego_speed_mps: tuple[float, float] = (5.0, 8.3)
    child_speed_mps: tuple[float, float] = (1.8, 3.4)
    ttc_s: tuple[float, float] = (0.6, 1.8)
    #: When the child starts running (s of scenario time): late enough for the pre-emergence window.
    start_s: tuple[float, float] = (1.2, 2.4)
    #: The child's start: a linear speed ramp at this acceleration (m/s²; the simulator's pedestrians reach 3),
    #: modelled exactly in the plan.
    accel_mps2: float = 2.8
    #: Reaching the far footway it slows to a walk (m/s) at this deceleration (m/s²), done this far before the far
    #: footway (m), so it turns along the footway at walking pace.
    walk_on_mps: float = 1.0
    slow_decel_mps2: float = 1.8
    slow_done_m: float = 0.9
    #: Bumper-to-bumper gap the child runs through, and how far behind the kerb it waits (m).
    gap_m: tuple[float, float] = (0.9, 1.8)
    depth_m: tuple[float, float] = (0.35, 0.9)
    #: The parked row reaches this far upstream of the gap when the site allows (m), gaps between its vehicles (m).
    row_m: float = 26.0
    row_gap_m: tuple[float, float] = (0.5, 1.1)
    #: The ego passes a row parked at the kerb of its own lane with this to spare (m).
    pass_clearance_m: float = 0.3
    #: Occlusion thresholds (as the built-in pedestrian intent's).
    max_visible_before: float = 0.1
    min_visible_after: float = 0.5
    min_frames_after: int = 6
    min_frames_before: int = 10
    pre_window_s: float = 1.0
    #: The child emerges when its front is this close to the parked row's traffic-side edge (m): an approaching
    #: camera sees into the gap that much before the edge.
    emerge_margin_m: float = 0.15
    #: The walk trigger's by_latest is this long after the planned start (s); if_never fires it.
    trigger_slack_s: float = 1.0


class ChildBetweenParkedCars(IntentProgram):
    name = "child_between_parked_cars"
    abbrev = "chd"
    description = "a child runs out from between two parked cars across the ego's lane, mid-block"
    default_template = "residential_crosswalk_v3"
    needs = ("kerb_gap",)
    local_groups = frozenset({"timing", "gap"})
    coverage = {
        "intent": "child_between_parked_cars",
        "template": "residential_crosswalk_v3",
        "target_per_cell": 1,
        "max_proposals_per_cell": 40,
        "dimensions": [
            # The ego's time to the child's path when the child enters it; a child clears the ego's path in about
            # 0.7-1.4 s, so "close" is mostly a collision when coasting and "near" mostly not.
            {"name": "ttc_s", "key": "ttc_s", "bins": [[0.6, 1.1], [1.1, 1.8]], "labels": ["close", "near"]},
            {"name": "child_speed", "key": "child.speed_mps", "bins": [[1.8, 2.6], [2.6, 3.4]],
             "labels": ["trot", "run"]},
            {"name": "rear_family", "key": "rear.family", "values": ["sedan", "delivery_van"]},
        ],
    }

    def __init__(self) -> None:
        self.params = Params()

    def gap_sites(self, ctx: Any) -> list[Any]:
        """The template's gap sites on driving lanes outside junctions (the ego drives past them): its parking
        lanes and regions where it has any (cars park there), else its kerb sites (the kerbside rule)."""
        net = lane_network(ctx.template)
        sites = [g for g in kerb_gap_sites(ctx.template)
                 if net.kinds.get(g.site.lane) == "driving" and g.site.lane not in net.junction_of]
        return [g for g in sites if g.site.kind == "parking"] or sites

    def check_template(self, ctx: Any) -> None:
        if not self.gap_sites(ctx):
            raise ScenarioError(ctx.template.source, "lanes", f"{ctx.template.id} has no parking site with footways "
                                f"on both sides beside a driving lane ({self.name} needs one)")
        if not ctx.variants(CHILD_FAMILY) and not ctx.families_of_class("pedestrian"):
            raise ScenarioError(ctx.template.source, "catalog", f"no pedestrian in the catalog ({self.name} needs one)")
        if not any(ctx.variants(f) for f in PARKED_FAMILIES):
            raise ScenarioError(ctx.template.source, "catalog", f"no {' or '.join(PARKED_FAMILIES)} in the catalog")

    def child_asset(self, ctx: Any) -> list[str]:
        """The child's variants: ``pedestrian_child``, else the smallest pedestrian (by height)."""
        if ctx.variants(CHILD_FAMILY):
            return ctx.variants(CHILD_FAMILY)
        peds = [a for f in ctx.families_of_class("pedestrian") for a in ctx.variants(f)]
        return [min(peds, key=lambda a: (lwh(ctx, a)[2], a))]

    def pass_offset(self, ctx: Any, site: Any) -> float:
        """Left of the lane centre (m) so the ego passes a row parked at the kerb of its own lane; 0 beside a
        parking area (the row is off the lane)."""
        if site.kind != "kerb":
            return 0.0
        lane = ctx.template.lane_graph.lane(site.lane)
        inner = -lane.width_m / 2 + KERB_GAP_M + PARKED_WIDTH_M
        return round(max(0.0, inner + self.params.pass_clearance_m + lwh(ctx, ctx.template.ego.asset)[1] / 2), 4)

    def propose(self, ctx: Any, cell: Any, sample_id: str, index: int, streams: Any, *, attempt: int = 0,
                previous: Mapping[str, Mapping[str, Any]] | None = None, redraw: Iterable[str] = ()) -> Proposal:
        p, t = self.params, ctx.template
        graph = t.lane_graph
        draws = Draws(streams, attempt=attempt, previous=previous, redraw=redraw)
        r = Realization()

        gap_site = draws.group("layout", "layout").choice("site", self.gap_sites(ctx))
        site = gap_site.site
        r.set("gap.site", site.id, source="layout",
              rule="uniform over parking sites with footways on both sides, beside a driving lane (parking lanes and "
                   "regions where the map has any, else kerb sites)")
        own = tuple(t.ego.route)
        if own[0] == site.lane:
            lanes = own
            r.set("ego.route", list(lanes), source="template", parents=["gap.site"],
                  rule="the template's ego route: it starts on the site's lane")
        else:
            lanes = straight_through(lane_network(t), site.lane)
            r.set("ego.route", list(lanes), source="route", parents=["gap.site"],
                  rule="the site's lane and its straight successors (the template's route does not start on it)")
        offset = self.pass_offset(ctx, site)
        if offset:
            r.set("ego.offset_m", offset, source="derived", parents=["gap.site"],
                  rule=f"left of the lane centre so the ego passes the row at the kerb with {p.pass_clearance_m:g} m "
                       "to spare")

        assets = draws.group("assets", "actors")
        rear_asset = other_vehicle(ctx, draws, r, cell, "rear")
        families = [f for f in PARKED_FAMILIES if ctx.variants(f)]
        front_family = r.set("front.family", assets.choice("front_family", families), source="actors",
                             rule=f"uniform over {', '.join(families)}")
        front_asset = r.set("front.asset", assets.choice("front", ctx.variants(front_family)), source="actors",
                            parents=["front.family"], rule="uniform over the family's variants")
        child_asset = r.set("child.asset", assets.choice("child", self.child_asset(ctx)), source="actors",
                            rule=f"uniform over the {CHILD_FAMILY} variants (else the smallest pedestrian)")

        v_c = in_cell_bin(r, draws.group("child_speed", "behavior"), cell, "child_speed", "child.speed_mps",
                          p.child_speed_mps)
        limit = graph.lane(site.lane).speed_limit_mps
        v_e = r.set("ego.speed_mps", round(draws.group("ego_speed", "behavior").uniform(
            "ego_speed", p.ego_speed_mps[0], min(p.ego_speed_mps[1], limit)), 4), source="behavior",
            rule="uniform up to the lane's limit")
        timing = draws.group("timing", "timing")
        ttc = in_cell_bin(r, timing, cell, "ttc_s", "ttc_target_s", p.ttc_s, inset=0.06)
        t_go = r.set("t_trigger_s", seconds_on_grid(timing.uniform("t_go", *p.start_s)), source="timing",
                     rule=f"uniform in {list(p.start_s)} s, on the tick grid")

        g = draws.group("gap", "layout")
        width = r.set("gap.width_m", round(g.uniform("width", *p.gap_m), 4), source="layout",
                      rule=f"uniform in {list(p.gap_m)} m, bumper to bumper")
        depth = r.set("child.depth_m", round(g.uniform("depth", *p.depth_m), 4), source="layout",
                      rule=f"uniform in {list(p.depth_m)} m behind the kerb, in line with the gap")
        rear_lw, front_lw = lwh(ctx, rear_asset), lwh(ctx, front_asset)
        ego_l, ego_w, _ = lwh(ctx, t.ego.asset)
        child_r = max(lwh(ctx, child_asset)[:2]) / 2
        route = ctx.geometry.route_path(lanes, offset)
        corridor = ego_w / 2 + child_r

        # Relations before coordinates: where the crossing enters the ego's corridor depends on the street's cross
        # section, not on where along it the gap opens, so one probe at the site's middle fixes the timing; the gap
        # then opens where the ego, starting on its lane, is the TTC target from it at entry.
        probe = self._probe(ctx, gap_site, width, depth, rear_lw, front_lw, route, corridor)
        if probe is None:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.no_crossing", f"no crossing through a {width:.2f} m gap in {site.id} reaches the far "
                "footway", ("gap",)))
        s_enter = probe
        t_enter = self._run(t_go, v_c).time_at(s_enter)
        ahead_m = v_e * (t_enter + p.warmup_s + ttc) + ego_l / 2 + child_r
        s_lo = max(site.s0_m + rear_lw[0] + width / 2 + 0.1, ego_l + ahead_m)
        # The ego stays on its route for the whole clip (the coarse rollout does not brake it).
        s_hi = min(site.s1_m - front_lw[0] - width / 2 - 0.1,
                   route.length_m - ego_l / 2 - 0.5 - v_e * (p.clip_s + p.warmup_s) + ahead_m)
        if s_lo >= s_hi:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.spawn_out_of_range", f"{site.id} (or the ego's route) ends before a gap {ahead_m:.1f} m "
                "ahead of the ego's start (the TTC target at this speed)", ("timing",)))
        s_gap = r.set("gap.s_m", round(g.uniform("s", s_lo, s_hi), 4), source="layout",
                      parents=["gap.site", "ttc_target_s", "ego.speed_mps", "child.speed_mps", "t_trigger_s"],
                      rule="uniform along the site, where the ego starts on its lane")
        gap = kerb_gap(ctx, gap_site, s_gap, width, rear_lw, front_lw)
        if gap is None:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.no_room", f"no room for two parked vehicles around s={s_gap:.1f} m of {site.lane} (the "
                "site's ends or width, a crosswalk, or the template's own instances)", ("gap",)))
        crossing = midblock_crossing(ctx, gap, depth)
        hit = None if crossing is None else crossing.conflict(route, corridor)
        if hit is None:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.no_crossing", f"no crossing through the gap at s={s_gap:.1f} m of {site.lane} reaches the "
                "far footway across the ego's path", ("gap",)))
        s_route, s_cross, s_in = hit
        t_enter = self._run(t_go, v_c).time_at(s_in)
        s0 = s_route - ego_l / 2 - child_r - v_e * (t_enter + p.warmup_s + ttc)
        if s0 < ego_l / 2 + 0.5:
            return self.refused(ctx, cell, sample_id, index, attempt, draws, Fail(
                "sampling.spawn_out_of_range", f"the ego would start at s={s0:.1f} m, before its lane", ("timing",)))
        r.set("ego.start_s_m", round(s0, 4), source="derived",
              parents=["gap.s_m", "ttc_target_s", "ego.speed_mps", "child.speed_mps", "t_trigger_s"],
              rule="so the ego is the TTC target from the conflict when the child enters its path")
        r.set("child.spawn", list(crossing.start), source="derived", parents=["gap.s_m", "child.depth_m"],
              rule="on the footway behind the gap, depth behind the kerb")
        r.set("child.via", [c for v in crossing.via for c in v], source="derived", parents=["gap.s_m"],
              rule="straight across the carriageway at right angles to the lane, onto the far footway (x, y)")
        r.set("child.walk_route", list(crossing.route), source="derived", parents=["child.via"],
              rule="on along the far footway from its nearest node")

        # The rest of the row: upstream of the rear vehicle, bumper gaps drawn, until row_m or the site's start.
        row = [("rear", rear_asset, gap.rear), ("front", front_asset, gap.front)]
        s_back = s_gap - width / 2 - rear_lw[0]
        k = 0
        while s_gap - s_back < p.row_m:
            fam = g.choice(f"row{k}_family", families)
            asset = g.choice(f"row{k}", ctx.variants(fam))
            length = lwh(ctx, asset)[0]
            s_c = s_back - g.uniform(f"row{k}_gap", *p.row_gap_m) - length / 2
            pose = site_pose(ctx, site, s_c)
            if s_c - length / 2 < site.s0_m + 0.1 or pose is None or not parkable(ctx, pose, *lwh(ctx, asset)):
                break
            row.append((f"row{k}", asset, pose))
            s_back = s_c - length / 2
            k += 1
        r.set("row.assets", [a for _, a, _ in row], source="layout", parents=["gap.s_m", "rear.asset", "front.asset"],
              rule=f"the rear and front vehicles, then vehicles upstream with {list(p.row_gap_m)} m gaps over "
                   f"{p.row_m:g} m or to the site's start")

        illumination, weather = conditions(draws, r, t, cell)
        env = correlated_environment(draws, r, illumination, weather)
        return self._build(ctx, cell, sample_id, index, attempt, streams, draws, r, env,
                           lanes=lanes, offset=offset, s0=s0, v_e=v_e, site=site, row=row, child_asset=child_asset,
                           crossing=crossing, s_route=s_route, s_cross=s_cross, v_c=v_c, t_go=t_go)

    def _run(self, t_go: float, v_c: float, s_slow: float | None = None) -> Any:
        """The child's planned speed profile: at rest until ``t_go``, up to ``v_c`` at :attr:`Params.accel_mps2`,
        and (from arc length ``s_slow``) down to :attr:`Params.walk_on_mps` at :attr:`Params.slow_decel_mps2`."""
        p = self.params
        ramp = v_c / p.accel_mps2
        phases = [(t_go + p.warmup_s, 0.0), (ramp, p.accel_mps2)]
        if s_slow is not None:
            cruise = max(0.0, (s_slow - 0.5 * v_c * ramp) / v_c)
            phases += [(cruise, 0.0), ((v_c - p.walk_on_mps) / p.slow_decel_mps2, -p.slow_decel_mps2)]
        return SpeedProfile.from_phases(-p.warmup_s, 0.0, 0.0, phases + [(0.0, 0.0)])

    def _probe(self, ctx: Any, gap_site: Any, width: float, depth: float, rear_lw: Any, front_lw: Any, route: Any,
               corridor: float) -> float | None:
        """Arc length along the crossing where it enters the ego's corridor: at the site's middle, else the first
        of its quarter, three-quarter, tenth and nine-tenth points where a crossing exists (cached)."""
        site = gap_site.site

        def build() -> float | None:
            for f in (0.5, 0.25, 0.75, 0.1, 0.9):
                gap = kerb_gap(ctx, gap_site, site.s0_m + f * (site.s1_m - site.s0_m), width, rear_lw, front_lw)
                crossing = None if gap is None else midblock_crossing(ctx, gap, depth)
                hit = None if crossing is None else crossing.conflict(route, corridor)
                if hit is not None:
                    return hit[2]
            return None

        key = ("probe", site.id, round(width, 2), round(depth, 2), tuple(rear_lw), tuple(front_lw), route.length_m,
               round(corridor, 3))
        return self.memo(ctx, key, build)

    def _build(self, ctx: Any, cell: Any, sample_id: str, index: int, attempt: int, streams: Any, draws: Any,
               r: Any, env: Any, *, lanes: tuple[str, ...], offset: float, s0: float, v_e: float, site: Any,
               row: list[tuple[str, str, tuple[float, float, float]]], child_asset: str, crossing: Any,
               s_route: float | None, s_cross: float | None, v_c: float, t_go: float) -> Proposal:
        p, t = self.params, ctx.template
        ego_route = EgoRoute(tuple(lanes), s0, offset)
        ego, ego_body = ego_vehicle(ctx, v_e, p.warmup_s, ego_route)
        ego_l, ego_w, _ = lwh(ctx, t.ego.asset)
        child_r = max(lwh(ctx, child_asset)[:2]) / 2
        parked_rules = rules(obey_signals=True, yield_=True, collision_avoidance=True, aggression=0.0,
                             speed_factor=1.0)
        actors, bodies, occluders = [ego], {"ego": ego_body}, []
        for pid, asset, pose in row:
            actors.append(actor(ctx, pid, kind="vehicle", role="parked", asset_id=asset, pose=pose, speed_mps=0.0,
                                tags=["occluder", "parked"], behavior_rules=parked_rules))
            bodies[pid] = Body(pid, "vehicle", "parked", asset, family_of(asset), *lwh(ctx, asset),
                               stationary(*pose, -p.warmup_s), site.surface if site is not None else ("parking",),
                               site=site, wheels=wheel_points(ctx, asset), wheel_surface=("parking", "drivable"))
            occluders.append({"id": f"occ_{pid}", "kind": "actor", "actor_id": pid})
        s_via = crossing.path.s_of(*crossing.via[-1])
        s_slow = s_via - p.slow_done_m - (v_c ** 2 - p.walk_on_mps ** 2) / (2 * p.slow_decel_mps2)
        profile = self._run(t_go, v_c, s_slow)
        _, _, yaw = crossing.path.xy_yaw(0.0)
        start = crossing.start
        actors.append(actor(ctx, "child", kind="pedestrian", role="agent", asset_id=child_asset,
                            pose=(start[0], start[1], float(yaw)), speed_mps=0.0, tags=["emerging", "child"],
                            walk={"route": list(crossing.route), "via": [{"x": x, "y": y} for x, y in crossing.via],
                                  "reaction_delay_s": 0.3, "stop_tendency": 0.0},
                            behavior_rules=rules(obey_signals=False, yield_=False, collision_avoidance=False,
                                                 aggression=0.9, speed_factor=1.0)))
        bodies["child"] = Body("child", "pedestrian", "agent", child_asset, family_of(child_asset),
                               *lwh(ctx, child_asset), Motion(crossing.path, profile), WALKABLE_SURFACES,
                               walk=tuple(crossing.route), via=tuple(crossing.via))
        # The run starts when the ego reaches where the plan has it at t_go (robust to small speed errors).
        s_trig = s0 + v_e * (t_go + p.warmup_s)
        trig_lane, trig_s = ctx.geometry.route_lane_at(lanes, s_trig)
        width = max(2.0, 3 * v_e * 0.02)
        interactions = [{
            "id": "child_run", "actor_id": "child",
            "trigger": {"kind": "when",
                        "condition": {"kind": "reaches", "actor": "ego",
                                      "region": {"shape": "lane_window", "lane": trig_lane, "s_from": round(trig_s, 4),
                                                 "s_to": round(trig_s + width, 4)}},
                        "by_latest_s": round(min(p.clip_s, t_go + p.trigger_slack_s), 4), "if_never": "fire"},
            "speed": {"mode": "absolute", "value": round(v_c, 4)},
            "dynamics": {"shape": "linear", "constraint": "time", "value": round(v_c / p.accel_mps2, 4)},
        }, {
            # Onto the far footway at walking pace: slowing starts where the plan has it (a circle round the
            # crossing's end), so the turn along the footway is not taken at a run.
            "id": "child_walk_on", "actor_id": "child",
            "trigger": {"kind": "when",
                        "condition": {"kind": "reaches", "actor": "child",
                                      "region": {"shape": "circle", "x": crossing.via[-1][0], "y": crossing.via[-1][1],
                                                 "r": round(s_via - s_slow, 4)}},
                        "by_latest_s": p.clip_s, "if_never": "skip"},
            "speed": {"mode": "absolute", "value": p.walk_on_mps},
            "dynamics": {"shape": "linear", "constraint": "time",
                         "value": round((v_c - p.walk_on_mps) / p.slow_decel_mps2, 4)},
        }]
        t_emerge = profile.time_at(crossing.s_row_m - child_r - p.emerge_margin_m)
        r.set("t_emerge_s", round(min(t_emerge, 1e6), 4), source="derived", parents=["t_trigger_s", "gap.s_m"],
              rule=f"planned time the child's front comes within {p.emerge_margin_m:g} m of the parked row's "
                   "traffic-side edge (it emerges from between the cars)")
        decide_at(r, t_emerge, parents=["t_emerge_s"],
                  rule="the child appears from between the parked cars: the ego brakes or does not")
        t_end = p.clip_s
        event: Any = None
        if s_route is not None and s_cross is not None:
            xy = crossing.point_at(s_cross)
            event = PathConflict("child", "ego", xy, s_route, ego_w / 2 + child_r, ego_l / 2 + child_r,
                                 reveal_key="t_reveal_s")
            t_end = ego_body.motion.time_at(s_route - ego_l / 2 - child_r)
        occlusion = OcclusionSpec("child", "ego", camera_view(t), tuple(pid for pid, _, _ in row), t_emerge, t_end,
                                  p.max_visible_before, p.min_visible_after, p.min_frames_after, p.min_frames_before,
                                  p.pre_window_s)
        draft, _ = assemble(ctx, sample_id=sample_id, streams=streams, program=self, cell=cell, actors=actors,
                            interactions=interactions, occluders=occluders, environment=env, realization=r,
                            clip_s=p.clip_s, warmup_s=p.warmup_s)
        refs: dict[str, Any] = {"cell_repairs": {"ttc_s": ("timing",)}}
        if site is not None:
            refs["sites"] = {pid: site for pid, _, _ in row}
        scene = Scene(bodies, p.warmup_s, p.clip_s, occlusion=occlusion, event=event)
        return Proposal(sample_id, index, attempt, self.name, t, cell, draft, scene, refs, [], draws.record)

    def baseline(self, ctx: Any, sample_id: str, index: int, streams: Any) -> Proposal:
        """The same variables drawn on their own over their full ranges: site, gap position and width, depth,
        speeds, start time and the ego's start — no timing solve, no TTC target."""
        p, t = self.params, ctx.template
        draws = Draws(streams)
        r = Realization()
        g = draws.group("baseline", "layout")
        a = draws.group("assets", "actors")
        b = draws.group("behavior", "behavior")
        gap_site = g.choice("site", self.gap_sites(ctx))
        site = gap_site.site
        r.set("gap.site", site.id, source="layout", rule="uniform")
        families = [f for f in PARKED_FAMILIES if ctx.variants(f)]
        rear = r.set("rear.asset", a.choice("rear", ctx.variants(a.choice("rear_family", families))),
                     source="actors", rule="uniform")
        front = r.set("front.asset", a.choice("front", ctx.variants(a.choice("front_family", families))),
                      source="actors", rule="uniform")
        child = r.set("child.asset", a.choice("child", self.child_asset(ctx)), source="actors", rule="uniform")
        width = r.set("gap.width_m", round(g.uniform("width", *p.gap_m), 4), source="layout", rule="uniform")
        depth = r.set("child.depth_m", round(g.uniform("depth", *p.depth_m), 4), source="layout", rule="uniform")
        s_gap = r.set("gap.s_m", round(g.uniform("s", site.s0_m, site.s1_m), 4), source="layout", rule="uniform")
        v_c = r.set("child.speed_mps", round(b.uniform("child_speed", *p.child_speed_mps), 4), source="behavior",
                    rule="uniform")
        v_e = r.set("ego.speed_mps", round(b.uniform("ego_speed", *p.ego_speed_mps), 4), source="behavior",
                    rule="uniform")
        t_go = r.set("t_trigger_s", seconds_on_grid(b.uniform("t_go", 0.0, p.clip_s - 1.0)), source="timing",
                     rule="uniform")
        lanes = straight_through(lane_network(t), site.lane)
        s0 = r.set("ego.start_s_m", round(g.uniform("ego_start", 0.0, t.lane_graph.lane(site.lane).length_m), 4),
                   source="layout", rule="uniform along the lane")
        r.set("ego.route", list(lanes), source="route", rule="the site's lane and its straight successors")
        env = independent_environment(draws, r, t)
        rear_lw, front_lw = lwh(ctx, rear), lwh(ctx, front)
        gap = kerb_gap(ctx, gap_site, s_gap, width, rear_lw, front_lw)
        crossing = None if gap is None else midblock_crossing(ctx, gap, depth)
        if gap is None or crossing is None:
            return self.refused(ctx, None, sample_id, index, 0, draws, Fail(
                "sampling.no_crossing", f"no crossing through a {width:.2f} m gap at s={s_gap:.1f} m of {site.id}"))
        offset = self.pass_offset(ctx, site)
        route = ctx.geometry.route_path(lanes, offset)
        ego_w = lwh(ctx, t.ego.asset)[1]
        hit = crossing.conflict(route, ego_w / 2 + max(lwh(ctx, child)[:2]) / 2)
        row = [("rear", rear, gap.rear), ("front", front, gap.front)]
        return self._build(ctx, None, sample_id, index, 0, streams, draws, r, env, lanes=lanes, offset=offset, s0=s0,
                           v_e=v_e, site=site, row=row, child_asset=child, crossing=crossing,
                           s_route=None if hit is None else hit[0], s_cross=None if hit is None else hit[1], v_c=v_c,
                           t_go=t_go)
