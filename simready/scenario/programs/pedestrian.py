"""``pedestrian_emerges_behind_van``: a pedestrian steps out from behind a parked van into the ego's path.

Causes, in dependency order (stream in brackets):

0. **ego route** [template, route] — the template's ``ego.route`` when it
   passes the chosen site and then the crossing, else one of the lane
   graph's routes that does (drawn after step 1); past a kerb site the ego
   holds a lateral offset that clears the van (``ego.offset_m``).
1. **parking site** [layout] — a parking affordance whose region is
   ``adjacent`` to a sidewalk that a crosswalk ``connects``, upstream of
   that crosswalk on the ego route (the relation comes first; there may be
   several); on a map without one, a kerb site by the kerbside rule
   (:func:`simready.world.affordances.parking_sites`) beside such a sidewalk.
2. **van** [actors, layout] — a delivery-van variant, then a slot of that
   site whose front bumper lies the cell's ``occlusion`` gap before the
   crossing (a near van hides the crossing deeply, a far one shallowly),
   then an along / across offset inside the slot that keeps the whole
   footprint inside the site's polygon (the wheels then sit on it too).
3. **pedestrian** [actors, behavior] — family (the cell's, or drawn), variant,
   walking speed for that family, reaction delay, stop tendency.
4. **occlusion relative to the ego route** [derived] — the last ego position
   from which the van still hides the kerb where the crossing starts (the
   route's overlap with the van's shadows cast from that kerb point): the ego
   must be that far short of the conflict when the pedestrian steps out.
5. **ego speed, TTC target** [behavior, timing] — inside the cell's bins and
   above the values step 4 requires (speed x (TTC + kerb-to-path walk) must
   cover that distance); a cell no value of which does is refused
   (``sampling.kerb_in_view``).
6. **spawn** [layout] — on the adjacent sidewalk near the crossing (within the
   walking distance the timing allows), inside the van's shadow cast from the
   ego camera at its expected positions at emergence and ``pre_window_s``
   before it. The walk route is the crossing path from the furthest node the
   pedestrian can walk to in a straight line.
7. **timing** [solve] — :func:`~simready.scenario.timing.solve_emergence_timing`
   places the pedestrian's start (a ``when(reaches)`` trigger on the ego's
   lane position at that time) so the ego's time to the conflict point when
   the pedestrian enters its path equals the TTC target; if no delay works
   it adjusts the ego speed inside the cell's speed bin.
8. **environment** [environment] — illumination and weather from the cell,
   the rest correlated (:mod:`.environment`).

The ladder then measures what the program only planned: the visible
fraction before / after emergence (thresholds below), the TTC, the reveal
time, and the capture context.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from shapely.geometry import Polygon

from simready.scenario.api import (
    DRAWN_APPROACH_M,
    KERB_GAP_M,
    PARKED_WIDTH_M,
    SIDEWALK_PROBE_M,
    WALKABLE_SURFACES,
    WorldTemplate,
    Body,
    Cell,
    Draws,
    EgoRoute,
    Fail,
    IntentProgram,
    Motion,
    OcclusionSpec,
    ParkingAffordance,
    ParkingSite,
    CoarsePath,
    PathConflict,
    PedestrianCrossing,
    ProgramContext,
    Proposal,
    Realization,
    Scene,
    SpeedProfile,
    StreamSet,
    actor,
    assemble,
    camera_view,
    conditions,
    correlated_environment,
    ego_vehicle,
    family_of,
    footprint_corners,
    independent_environment,
    kerb_slots,
    lane_network,
    lwh,
    parking_sites,
    parking_slots,
    rules,
    seconds_on_grid,
    solve_emergence_timing,
    stationary,
    straight_through,
    wheel_points,
)

VAN_FAMILY = "delivery_van"
#: Sampling step along the pedestrian's path when locating the kerb and the corridor entry (m).
PATH_STEP_M = 0.02
#: Spawn candidates drawn at once in the strip's bounding box (the shadow may cover a small part of it).
SPAWN_TRIES = 256


@dataclass(frozen=True)
class PedestrianParams:
    """Named parameters of the intent (thresholds the ladder applies, ranges the program draws from)."""

    clip_s: float = 10.0
    warmup_s: float = 1.0
    #: Occlusion: visible fraction before emergence at most this …
    max_visible_before: float = 0.1
    #: … and after emergence at least this in ``min_frames_after`` camera frames.
    min_visible_after: float = 0.5
    min_frames_after: int = 6
    #: Frames of the pre-emergence window that must exist (the window is ``pre_window_s`` long).
    min_frames_before: int = 10
    pre_window_s: float = 1.0
    #: Largest gap from the van's front bumper to the crossing when the cell does not bin it (m).
    max_van_gap_m: float = 17.0
    #: Clearance kept between the van's footprint and the parking polygon's edges (m).
    van_margin_m: float = 0.03
    #: Slot length at a kerb site (m; a parking area's is its affordance's), and the gap the ego leaves when it
    #: passes a van parked at the kerb of its own lane (m).
    kerb_slot_m: float = 7.0
    pass_clearance_m: float = 0.3
    #: Spawn: within this of the crossing's first node, and this far at most from the kerb (m).
    spawn_reach_m: float = 6.0
    spawn_kerb_band_m: float = 1.3
    #: Spawn clearance inside the shadow (m): the whole body hides, with margin.
    full_inset_m: float = 0.15
    #: Walking speed range per pedestrian family (m/s); ``default_walk_speed_mps`` for others.
    walk_speed_mps: tuple[tuple[str, float, float], ...] = (("pedestrian_adult", 1.1, 1.7),
                                                            ("pedestrian_child", 0.9, 1.4))
    default_walk_speed_mps: tuple[float, float] = (1.0, 1.6)
    #: The pedestrian's start: a linear speed ramp this long (s), modelled exactly in the plan.
    walk_ramp_s: float = 0.5
    #: Ego speed and TTC ranges when the cell does not bin them (m/s, s).
    ego_speed_mps: tuple[float, float] = (4.0, 8.3)
    ttc_s: tuple[float, float] = (1.0, 4.0)
    #: TTC targets are drawn this far inside the cell, so the tick grid cannot push them out (s).
    ttc_inset_s: float = 0.05
    #: The walk trigger's by_latest is this long after the planned start (s); if_never fires it.
    trigger_slack_s: float = 1.0

    def walk_speed(self, family: str) -> tuple[float, float]:
        return next(((lo, hi) for f, lo, hi in self.walk_speed_mps if f == family), self.default_walk_speed_mps)


@dataclass(frozen=True)
class _Place:
    """Where the van may stand: the site, its id in the realization (a parking affordance's, or the kerb site's),
    its slots ``(x, y, yaw)``, their length and the strip's width across (m)."""

    site: ParkingSite
    parking: str
    slots: tuple[tuple[float, float, float], ...]
    slot_length_m: float
    strip_m: float


@dataclass(frozen=True)
class _Layout:
    """One way the template realizes the relations: where the van stands (a parking area or a kerb site), its
    sidewalk, the crossing, and the ego route past them (the template's, or one drawn from the lane graph)."""

    parking: str
    parking_region: str | None
    sidewalk: str
    crossing: str
    crosswalk: str
    path: tuple[str, ...]
    slots: tuple[tuple[float, float, float], ...]
    s_cross_in_m: float
    site: ParkingSite
    slot_length_m: float
    strip_m: float
    route: EgoRoute
    drawn: bool = False


@dataclass
class _Plan:
    """Everything the builder needs; the conditional program and the baseline fill it differently."""

    layout: _Layout | None
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
    geometry: _PedGeometry | None = None
    conflict: _Conflict | None = None


class PedestrianEmergesBehindVan(IntentProgram):
    name = "pedestrian_emerges_behind_van"
    abbrev = "ped"
    default_template = "residential_crosswalk_v3"
    description = "a pedestrian steps out from behind a parked delivery van into the ego's path at a crossing"
    #: A parking lane or region, else a kerb by the kerbside rule (``affordances.parking_sites``), and a crosswalk.
    needs = ("parking_or_kerb", "crosswalk")
    local_groups = frozenset({"spawn", "ttc_target", "ego_speed", "van_pose"})

    def __init__(self, params: PedestrianParams | None = None) -> None:
        self.params = params or PedestrianParams()

    # --- the template's relations -----------------------------------------------------

    def layouts(self, ctx: ProgramContext) -> list[tuple[_Layout, ...]]:
        """Every (parking site, sidewalk, crossing) the template's relations allow, sorted by ids; each option with
        its layouts, one per ego route (the template's alone when it passes the site)."""
        return self.memo(ctx, "layouts", lambda: self._layouts(ctx))

    def _layouts(self, ctx: ProgramContext) -> list[tuple[_Layout, ...]]:
        """The options, sorted by ids: each a (site, sidewalk, crossing) with its ego routes. Parking areas (the
        template's parking affordances) where the map has them, else kerb sites by the kerbside rule. An option's
        route is the template's when it passes the site and then the crossing, else every lane-graph route that does
        (drawn per sample)."""
        t = ctx.template
        sites = parking_sites(t)
        adjacent = {frozenset((r.a, r.b)) for r in t.relations if r.type == "adjacent"}
        connects = {r.route: (r.a, r.b) for r in t.relations if r.type == "connects"}
        crossings = sorted((a for a in t.affordances if isinstance(a, PedestrianCrossing)), key=lambda a: a.id)
        out = []
        for crossing in crossings:
            for parking in sorted((a for a in t.affordances if isinstance(a, ParkingAffordance)), key=lambda a: a.id):
                site = next((x for x in sites if x.kind == "parking" and x.region == parking.region), None)
                if site is None or crossing.region not in connects:
                    continue
                for side in connects[crossing.region]:
                    if frozenset((parking.region, side)) in adjacent:
                        place = _Place(site, parking.id, tuple(parking_slots(t, parking.id)), parking.slot_length_m,
                                       _short_side(t.region_by_id[parking.region].shape))
                        out += self._options(ctx, place, side, crossing)
        if out:
            return out
        # Kerb sites: each with the sidewalks beside it (a tree query, not every pair), then the crossings those
        # connect; options by crossing, then site.
        ids = sorted(rg.id for rg in t.regions if rg.type == "sidewalk")
        tree = shapely.STRtree([t.region_by_id[i].shape for i in ids])
        crossings_from: dict[str, list[PedestrianCrossing]] = {}
        for crossing in crossings:
            for side in connects.get(crossing.region, ()):
                crossings_from.setdefault(side, []).append(crossing)
        by_crossing: dict[str, list[tuple[_Place, str]]] = {}
        for site in (x for x in sites if x.kind == "kerb"):
            beside = {ids[k] for k in tree.query(site.shape.buffer(KERB_GAP_M + SIDEWALK_PROBE_M),
                                                 predicate="intersects")}
            if not beside:
                continue
            slots = tuple(kerb_slots(t.lane_graph.lane(site.lane), site, self.params.kerb_slot_m))
            place = _Place(site, site.id, slots, self.params.kerb_slot_m, PARKED_WIDTH_M)
            for side in sorted(beside):
                for crossing in crossings_from.get(side, []):
                    by_crossing.setdefault(crossing.id, []).append((place, side))
        for crossing in crossings:
            for place, side in by_crossing.get(crossing.id, []):
                out += self._options(ctx, place, side, crossing)
        return out

    def _options(self, ctx: ProgramContext, place: _Place, side: str,
                 crossing: PedestrianCrossing) -> list[tuple[_Layout, ...]]:
        """The option of one (site, sidewalk, crossing): a layout per ego route past the site, then the crossing."""
        t = ctx.template
        path = _oriented_path(t, crossing.path, side)
        if path is None:
            return []
        own = EgoRoute(tuple(t.ego.route), t.ego.start_s_m, self._pass_offset(ctx, place.site))
        layout = self._on_route(ctx, place, side, crossing, path, own)
        if layout is not None:
            return [(layout,)]
        drawn = []
        for lanes in self._routes_past(ctx, place.site.lane):
            layout = self._on_route(ctx, place, side, crossing, path, EgoRoute(lanes, 0.0, own.offset_m), drawn=True)
            if layout is not None:
                drawn.append(layout)
        return [tuple(drawn)] if drawn else []

    def _on_route(self, ctx: ProgramContext, place: _Place, side: str, crossing: PedestrianCrossing,
                  path: tuple[str, ...], route: EgoRoute, *, drawn: bool = False) -> _Layout | None:
        """The layout on one ego route, None when the route misses the crossing or has no slot before it.

        A drawn route starts :data:`DRAWN_APPROACH_M` before the crossing (at least a body length into its first
        lane). Past a kerb site the route runs through the site's lane and turns nowhere (the ego holds its
        passing offset for the whole clip, so it goes straight through a junction), and a slot lies ahead of the
        ego's start."""
        site = place.site
        t = ctx.template
        net = lane_network(t)
        if site.kind == "kerb" and (site.lane not in route.lanes
                                    or any(net.turn(lane) != "straight" for lane in route.lanes)):
            return None
        ego_path = ctx.geometry.route_path(route.lanes, route.offset_m)
        window = ego_path.line.intersection(t.region_by_id[crossing.region].shape)
        if window.is_empty:
            return None
        s_in = min(ego_path.s_of(x, y) for x, y in _coords(window))
        ego_l = ctx.footprints[t.ego.asset][0]
        if drawn:
            route = EgoRoute(route.lanes, round(max(ego_l, s_in - DRAWN_APPROACH_M), 4), route.offset_m)
        lo = route.start_s_m + ego_l if site.kind == "kerb" else -math.inf
        kept = tuple(x for x in place.slots if lo < ego_path.s_of(x[0], x[1]) < s_in)
        if not kept:
            return None
        return _Layout(place.parking, site.region, side, crossing.id, crossing.region, path, kept, s_in, site,
                       place.slot_length_m, place.strip_m, route, drawn)

    def _routes_past(self, ctx: ProgramContext, lane: str) -> list[tuple[str, ...]]:
        """Lane-graph routes through ``lane``: it and its straight successors (through a junction), after each
        non-junction predecessor or from it; sorted."""
        net = lane_network(ctx.template)
        ahead = straight_through(net, lane)
        before = [(p,) + ahead for p in net.graph.predecessors[lane]
                  if p not in net.junction_of and net.kinds.get(p) == "driving" and p not in ahead]
        return sorted({ahead, *before})

    def _pass_offset(self, ctx: ProgramContext, site: ParkingSite) -> float:
        """The lateral offset (m, + left) at which the ego passes a van at a kerb site with
        :attr:`PedestrianParams.pass_clearance_m` to spare; 0 beside a parking area (the van is off the lane)."""
        if site.kind != "kerb":
            return 0.0
        lane = ctx.template.lane_graph.lane(site.lane)
        van_inner = -lane.width_m / 2 + KERB_GAP_M + PARKED_WIDTH_M
        ego_w = ctx.footprints[ctx.template.ego.asset][1]
        return round(max(0.0, van_inner + self.params.pass_clearance_m + ego_w / 2), 4)

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

    # --- the conditional program ---------------------------------------------------------

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
        nodes = _walk_start(ctx, spawn, layout.path)
        r.set("ped.walk_route", list(nodes), source="derived", parents=["ped.spawn", "crossing"],
              rule="the crossing path from its furthest node reachable on foot in a straight line")

        geo = _PedGeometry.of(ctx, spawn, nodes, layout.sidewalk, ped_r)
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

    def _spawn_area(self, ctx: ProgramContext, layout: _Layout, van_pose: tuple[float, float, float],
                    van_lw: tuple[float, float], ego_speed: float, speed_lo: float, ttc: float, walk_speed: float,
                    ped_r: float) -> tuple[_SpawnArea | None, str]:
        """Sidewalk near the crossing inside the van's shadow from the expected ego camera positions, or None
        and why there is none."""
        p, t = self.params, ctx.template
        route = ctx.geometry.route_path(layout.route.lanes, layout.route.offset_m)
        ego_l, ego_w = ctx.footprints[t.ego.asset]
        hit, entry_node, entry_leg, strip_base, kerb_xy = self.memo(ctx, ("spawn_base", layout, ped_r),
                                                                    lambda: self._spawn_base(ctx, layout, ped_r))
        if hit is None:
            return None, "the crossing path never crosses the ego route"
        s_emerge = hit.s_route_m - ego_l / 2 - ped_r - ego_speed * (ttc + (hit.s_enter_m - hit.s_kerb_m) / walk_speed)
        mount = camera_view(t).T_body_mount[:2, 3]
        corners = footprint_corners(van_pose[0], van_pose[1], van_pose[2], van_lw[0] / 2, van_lw[1] / 2)
        wedges = []
        for s_view in (s_emerge, s_emerge - ego_speed * p.pre_window_s):
            x, y, yaw = (float(v) for v in route.xy_yaw(s_view))
            c, s = math.cos(yaw), math.sin(yaw)
            wedges.append(_wedge_planes((x + c * mount[0] - s * mount[1], y + s * mount[0] + c * mount[1]), corners))
        # The pedestrian steps off the kerb where the crossing leaves the sidewalk: if the ego already sees that spot
        # at emergence, no spawn can be hidden in time (repair: another TTC target or ego speed moves the ego).
        kx, ky = np.array([kerb_xy[0]]), np.array([kerb_xy[1]])
        if not all(_in_wedge(w, kx, ky, ped_r)[0] for w in wedges):
            return None, "the kerb where the crossing starts is in view of the ego camera at emergence"
        # Timing feasibility bounds the walk: the pedestrian must reach the corridor by the time the slowest ego
        # speed of the bin leaves the TTC target, so it waits within that walking distance of the crosswalk.
        t_ego_max = (hit.s_route_m - ego_l / 2 - ped_r - layout.route.start_s_m) / speed_lo - p.warmup_s
        reach = min(p.spawn_reach_m, walk_speed * (t_ego_max - ttc - p.walk_ramp_s / 2) - entry_leg)
        if reach <= 0:
            return None, "the timing leaves no walking distance to the crossing"
        ex, ey = t.walk_graph.nodes[entry_node]
        sx0, sy0, sx1, sy1 = strip_base.bounds
        bounds = (max(sx0, ex - reach), max(sy0, ey - reach), min(sx1, ex + reach), min(sy1, ey + reach))
        if bounds[0] >= bounds[2] or bounds[1] >= bounds[3]:
            return None, "no sidewalk strip within walking distance of the crossing"
        inset = ped_r + p.full_inset_m

        def inside(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            ok: np.ndarray = (np.hypot(x - ex, y - ey) <= reach) & _in_wedge(wedges[0], x, y, inset) & _in_wedge(wedges[1], x, y, inset)
            ok[ok] = shapely.contains_xy(strip_base, x[ok], y[ok])
            return ok

        return _SpawnArea(bounds, inside), "no sidewalk point near the crossing lies inside the van's shadow"

    def _occlusion_need(self, ctx: ProgramContext, layout: _Layout, van_pose: tuple[float, float, float],
                        van_lw: tuple[float, float], ped_r: float, walk_speed: float) -> tuple[float, float]:
        """How far short of its arrival point the ego must be when the pedestrian steps off the kerb (m), and the
        kerb-to-path walking time (s).

        The last camera position on the ego route from which the van still hides the kerb exit (its centre and
        both sides of the body); 2D suffices because the van is taller than anyone behind it.
        """
        t = ctx.template
        route = ctx.geometry.route_path(layout.route.lanes, layout.route.offset_m)
        ego_l, _ = ctx.footprints[t.ego.asset]
        hit, _, _, _, kerb_xy = self.memo(ctx, ("spawn_base", layout, ped_r), lambda: self._spawn_base(ctx, layout, ped_r))
        if hit is None:
            return math.inf, 0.0
        s_arrival = hit.s_route_m - ego_l / 2 - ped_r
        walk_leg_s = (hit.s_enter_m - hit.s_kerb_m) / walk_speed
        corners = footprint_corners(van_pose[0], van_pose[1], van_pose[2], van_lw[0] / 2, van_lw[1] / 2)
        mount_x = float(camera_view(t).T_body_mount[0, 3])
        # A point K is hidden from camera C exactly when C lies in the van's shadow as seen from K, so the camera
        # route positions that hide the kerb are the route's overlap with those shadows (centre and both sides).
        kx, ky = kerb_xy
        hi = _last_hidden_s(route, (kx, ky), corners)
        if hi > -math.inf:
            # The body's sides as seen from the camera at that position (one refinement is plenty).
            cx, cy, _ = (float(v) for v in route.xy_yaw(hi))
            d = math.hypot(kx - cx, ky - cy) or 1.0
            nx, ny = -(ky - cy) / d * ped_r, (kx - cx) / d * ped_r
            hi = min(_last_hidden_s(route, k, corners) for k in ((kx, ky), (kx + nx, ky + ny), (kx - nx, ky - ny)))
        if hi == -math.inf:
            return math.inf, walk_leg_s
        # Camera at route arc length s_cam sits mount_x ahead of the ego's centre.
        last_hidden_ego_s = hi - mount_x
        if last_hidden_ego_s <= layout.route.start_s_m:
            return math.inf, walk_leg_s
        return max(0.0, s_arrival - last_hidden_ego_s), walk_leg_s

    def _spawn_base(self, ctx: ProgramContext, layout: _Layout, ped_r: float) -> tuple[Any, str, float, Any, Any]:
        """Per layout and body size: the crossing's conflict, kerb node and leg, kerb-side strip, kerb exit point."""
        t = ctx.template
        route = ctx.geometry.route_path(layout.route.lanes, layout.route.offset_m)
        _, ego_w = ctx.footprints[t.ego.asset]
        crossing = _PedGeometry.of(ctx, t.walk_graph.nodes[layout.path[0]], layout.path, layout.sidewalk, ped_r)
        hit = crossing.conflict(route, ego_w / 2 + ped_r)
        entry_node = _first_crosswalk_node(t, layout)
        entry_leg = (hit.s_enter_m if hit else 0.0) - _path_s_of(t, layout.path, entry_node)
        side = t.region_by_id[layout.sidewalk].shape
        kerb = route.line.buffer(route.line.distance(side) + self.params.spawn_kerb_band_m)
        kerb_xy = crossing.point_at(hit.s_kerb_m) if hit else t.walk_graph.nodes[layout.path[0]]
        return hit, entry_node, entry_leg, side.buffer(-ped_r - 0.05).intersection(kerb), kerb_xy

    # --- the baseline ---------------------------------------------------------------------

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

    # --- shared: plan → manifest draft + scene ---------------------------------------------

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

        ped_geo = plan.geometry or _PedGeometry.of(ctx, plan.spawn, plan.walk_nodes,
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


@dataclass(frozen=True)
class _PedGeometry:
    """The pedestrian's path sampled every :data:`PATH_STEP_M`: kerb exit and the ego-route crossing."""

    path: CoarsePath
    s: np.ndarray
    xy: np.ndarray
    s_kerb: float | None

    @classmethod
    def of(cls, ctx: ProgramContext, spawn: tuple[float, float], nodes: Iterable[str], sidewalk: str | None,
           ped_r: float) -> _PedGeometry:
        t = ctx.template
        path = CoarsePath.from_points([spawn] + [t.walk_graph.nodes[n] for n in nodes])
        s = np.arange(0.0, path.length_m + PATH_STEP_M / 2, PATH_STEP_M)
        x, y, _ = path.xy_yaw(s)
        xy = np.stack([x, y], axis=1)
        s_kerb = None
        if sidewalk is None:
            regions = [rg.shape for rg in t.regions if rg.type == "sidewalk"]
            inside_any = [rg for rg in regions if rg.contains(shapely.Point(spawn))]
            shape = inside_any[0] if inside_any else None
        else:
            shape = t.region_by_id[sidewalk].shape
        if shape is not None:
            inside = shapely.contains_xy(shape, x, y)
            if inside[0] and not inside.all():
                s_kerb = float(s[int(np.argmin(inside))])
        return cls(path, s, xy, s_kerb)

    def conflict(self, route: CoarsePath, corridor_half_m: float) -> _Conflict | None:
        """Where the path enters the ego's corridor and crosses its route; None if it never does."""
        s_route, t_lat = route.lateral(self.xy)
        inside = (np.abs(t_lat) <= corridor_half_m) & (s_route > 0) & (s_route < route.length_m)
        if not inside.any():
            return None
        k_enter = int(np.argmax(inside))
        cross = np.nonzero(np.sign(t_lat[k_enter:]) != np.sign(t_lat[k_enter]))[0]
        k_x = k_enter + (int(cross[0]) if len(cross) else 0)
        return _Conflict(float(s_route[k_x]), float(self.s[k_x]), float(self.s[k_enter]),
                         self.s_kerb if self.s_kerb is not None else 0.0)

    def point_at(self, s_m: float) -> tuple[float, float]:
        x, y, _ = self.path.xy_yaw(s_m)
        return float(x), float(y)


@dataclass(frozen=True)
class _SpawnArea:
    """Where a spawn may be drawn: a bounding box and a vectorized membership test ``inside(x, y) -> bool[]``."""

    bounds: tuple[float, float, float, float]
    inside: Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class _Conflict:
    """Arc lengths (m): on the ego route at the crossing point; on the pedestrian path at it, at corridor entry, at the kerb."""

    s_route_m: float
    s_path_m: float
    s_enter_m: float
    s_kerb_m: float


def _coords(geom: shapely.Geometry) -> list[tuple[float, float]]:
    parts = getattr(geom, "geoms", [geom])
    return [tuple(c) for part in parts for c in part.coords]


def _oriented_path(template: WorldTemplate, path: tuple[str, ...], sidewalk: str) -> tuple[str, ...] | None:
    """The crossing path starting on ``sidewalk`` (reversed if it ends there), or None."""
    shape = template.region_by_id[sidewalk].shape
    nodes = template.walk_graph.nodes
    if shape.buffer(0.05).contains(shapely.Point(nodes[path[0]])):
        return tuple(path)
    if shape.buffer(0.05).contains(shapely.Point(nodes[path[-1]])):
        return tuple(reversed(path))
    return None


def _first_crosswalk_node(template: WorldTemplate, layout: _Layout) -> str:
    """The first node of the crossing path that lies on its crosswalk (where the walk leaves the kerb)."""
    shape = template.region_by_id[layout.crosswalk].shape.buffer(0.05)
    return next((n for n in layout.path if shape.contains(shapely.Point(template.walk_graph.nodes[n]))), layout.path[0])


def _path_s_of(template: WorldTemplate, path: tuple[str, ...], node: str) -> float:
    """Walked length along ``path`` from its first node to ``node``."""
    return template.walk_graph.path_length_m(path[: path.index(node) + 1])


def _walk_start(ctx: ProgramContext, spawn: tuple[float, float], path: tuple[str, ...]) -> tuple[str, ...]:
    """The crossing path from the furthest node (up to the first one on the crosswalk) walkable in a straight line."""
    t = ctx.template
    surface = ctx.geometry.surface(WALKABLE_SURFACES)
    sidewalks = ctx.geometry.surface(("sidewalk",))
    last = 0
    for k, node in enumerate(path[:-1]):
        xy = t.walk_graph.nodes[node]
        if surface.covers(shapely.LineString([spawn, xy])):
            last = k
        if not sidewalks.contains(shapely.Point(xy)):
            break
    return tuple(path[last:])


def _silhouette(eye: tuple[float, float], corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two corners of a convex footprint that bound it as seen from ``eye``, as offsets from the eye:
    the first clockwise-most, the second counter-clockwise-most."""
    d = corners - np.asarray(eye, dtype=np.float64)
    centre = d.mean(axis=0)
    rel = np.arctan2(centre[0] * d[:, 1] - centre[1] * d[:, 0], centre @ d.T)
    return d[int(np.argmin(rel))], d[int(np.argmax(rel))]


def _wedge_planes(eye: tuple[float, float], corners: np.ndarray) -> tuple[tuple[float, float, float], ...]:
    """The region a convex footprint hides from ``eye`` (2D) as three half-planes ``n . X + c >= 0`` with unit
    normals: counter-clockwise of one silhouette ray, clockwise of the other, and beyond the chord joining the
    silhouette corners."""
    kx, ky = eye
    (ax_, ay_), (bx_, by_) = _silhouette(eye, corners)
    a = (kx + ax_, ky + ay_)
    ex, ey = bx_ - ax_, by_ - ay_
    side = 1.0 if ex * (ky - a[1]) - ey * (kx - a[0]) > 0 else -1.0
    planes = []
    for nx, ny, c in ((-ay_, ax_, ay_ * kx - ax_ * ky), (by_, -bx_, -kx * by_ + ky * bx_),
                      (side * ey, -side * ex, -side * (ey * a[0] - ex * a[1]))):
        norm = math.hypot(nx, ny) or 1.0
        planes.append((nx / norm, ny / norm, c / norm))
    return tuple(planes)


def _in_wedge(planes: tuple[tuple[float, float, float], ...], x: np.ndarray, y: np.ndarray,
              inset_m: float = 0.0) -> np.ndarray:
    """Points at least ``inset_m`` inside every half-plane (deep enough in the shadow for a body of that radius)."""
    ok = np.ones(np.shape(x), dtype=bool)
    for nx, ny, c in planes:
        ok &= nx * x + ny * y + c >= inset_m
    return ok


def _last_hidden_s(path: CoarsePath, eye: tuple[float, float], corners: np.ndarray) -> float:
    """Largest arc length of ``path`` whose point the footprint hides from ``eye`` (-inf if none).

    Each half-plane of :func:`_wedge_planes` is linear along a path segment, so a segment's hidden part is one
    interval of its parameter.
    """
    planes = _wedge_planes(eye, corners)
    best = -math.inf
    pts, cum = path.points, path.cum_s
    for i in range(len(pts) - 1):
        px, py = pts[i]
        dx, dy = pts[i + 1][0] - px, pts[i + 1][1] - py
        lo, hi = 0.0, 1.0
        for nx, ny, c in planes:
            f0, fd = nx * px + ny * py + c, nx * dx + ny * dy
            if abs(fd) < 1e-12:
                if f0 < 0:
                    lo, hi = 1.0, 0.0
                continue
            u = -f0 / fd
            if fd > 0:
                lo = max(lo, u)
            else:
                hi = min(hi, u)
        if lo <= hi:
            best = max(best, float(cum[i] + hi * (cum[i + 1] - cum[i])))
    return best


def _short_side(poly: Polygon) -> float:
    c = np.asarray(poly.minimum_rotated_rectangle.exterior.coords)[:3]
    return float(min(np.hypot(*(c[1] - c[0])), np.hypot(*(c[2] - c[1]))))
