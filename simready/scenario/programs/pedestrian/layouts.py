"""Where the template lets the story happen: each (parking site or kerb site, sidewalk, crossing) the relations
allow, with the ego routes that pass the site and then the crossing."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import Polygon

from simready.scenario.api import (DRAWN_APPROACH_M, KERB_GAP_M, PARKED_WIDTH_M, SIDEWALK_PROBE_M, EgoRoute,
                                   IntentProgram, ParkingAffordance, ParkingSite, PedestrianCrossing, ProgramContext,
                                   WorldTemplate, kerb_slots, lane_network, parking_sites, parking_slots,
                                   straight_through)
from simready.scenario.programs.pedestrian.params import PedestrianParams


@dataclass(frozen=True)
class Place:
    """Where the van may stand: the site, its id in the realization (a parking affordance's, or the kerb site's),
    its slots ``(x, y, yaw)``, their length and the strip's width across (m)."""

    site: ParkingSite
    parking: str
    slots: tuple[tuple[float, float, float], ...]
    slot_length_m: float
    strip_m: float


@dataclass(frozen=True)
class Layout:
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


class Layouts(IntentProgram):
    """The template's layouts for the intent (memoized per template)."""

    params: PedestrianParams

    def layouts(self, ctx: ProgramContext) -> list[tuple[Layout, ...]]:
        """Every (parking site, sidewalk, crossing) the template's relations allow, sorted by ids; each option with
        its layouts, one per ego route (the template's alone when it passes the site)."""
        return self.memo(ctx, "layouts", lambda: self._layouts(ctx))

    def _layouts(self, ctx: ProgramContext) -> list[tuple[Layout, ...]]:
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
                        place = Place(site, parking.id, tuple(parking_slots(t, parking.id)), parking.slot_length_m,
                                       short_side(t.region_by_id[parking.region].shape))
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
        by_crossing: dict[str, list[tuple[Place, str]]] = {}
        for site in (x for x in sites if x.kind == "kerb"):
            beside = {ids[k] for k in tree.query(site.shape.buffer(KERB_GAP_M + SIDEWALK_PROBE_M),
                                                 predicate="intersects")}
            if not beside:
                continue
            slots = tuple(kerb_slots(t.lane_graph.lane(site.lane), site, self.params.kerb_slot_m))
            place = Place(site, site.id, slots, self.params.kerb_slot_m, PARKED_WIDTH_M)
            for side in sorted(beside):
                for crossing in crossings_from.get(side, []):
                    by_crossing.setdefault(crossing.id, []).append((place, side))
        for crossing in crossings:
            for place, side in by_crossing.get(crossing.id, []):
                out += self._options(ctx, place, side, crossing)
        return out

    def _options(self, ctx: ProgramContext, place: Place, side: str,
                 crossing: PedestrianCrossing) -> list[tuple[Layout, ...]]:
        """The option of one (site, sidewalk, crossing): a layout per ego route past the site, then the crossing."""
        t = ctx.template
        path = oriented_path(t, crossing.path, side)
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

    def _on_route(self, ctx: ProgramContext, place: Place, side: str, crossing: PedestrianCrossing,
                  path: tuple[str, ...], route: EgoRoute, *, drawn: bool = False) -> Layout | None:
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
        s_in = min(ego_path.s_of(x, y) for x, y in coords_of(window))
        ego_l = ctx.footprints[t.ego.asset][0]
        if drawn:
            route = EgoRoute(route.lanes, round(max(ego_l, s_in - DRAWN_APPROACH_M), 4), route.offset_m)
        lo = route.start_s_m + ego_l if site.kind == "kerb" else -math.inf
        kept = tuple(x for x in place.slots if lo < ego_path.s_of(x[0], x[1]) < s_in)
        if not kept:
            return None
        return Layout(place.parking, site.region, side, crossing.id, crossing.region, path, kept, s_in, site,
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


def coords_of(geom: shapely.Geometry) -> list[tuple[float, float]]:
    parts = getattr(geom, "geoms", [geom])
    return [tuple(c) for part in parts for c in part.coords]


def oriented_path(template: WorldTemplate, path: tuple[str, ...], sidewalk: str) -> tuple[str, ...] | None:
    """The crossing path starting on ``sidewalk`` (reversed if it ends there), or None."""
    shape = template.region_by_id[sidewalk].shape
    nodes = template.walk_graph.nodes
    if shape.buffer(0.05).contains(shapely.Point(nodes[path[0]])):
        return tuple(path)
    if shape.buffer(0.05).contains(shapely.Point(nodes[path[-1]])):
        return tuple(reversed(path))
    return None


def short_side(poly: Polygon) -> float:
    c = np.asarray(poly.minimum_rotated_rectangle.exterior.coords)[:3]
    return float(min(np.hypot(*(c[1] - c[0])), np.hypot(*(c[2] - c[1]))))
