"""Positions and routes: a ``<Position>`` of any supported kind as a world pose, and a route (waypoints, a
trajectory's vertices) as the template lanes or walkable nodes an actor follows."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
from lxml import etree

from simready.maps.opendrive import Road
from simready.maps.refline import reference_poses
from simready.maps.xosc_import.context import Context, Entity
from simready.maps.xosc_import.roads import lane_step
from simready.world.lane_graph import lane_network
from simready.world.routing import plan_route, plan_via


class Positions(Context):
    """World poses of positions, template lanes of poses, and routes over the template's lanes and walkable graph."""

    def position(self, el: etree._Element, actor: str | None = None) -> tuple[float, float, float]:
        """World ``(x, y, yaw)`` of a ``<Position>`` element (its one child)."""
        rd = self.rd
        p = next(iter(el), None)
        if p is None:
            raise rd.error(el, "empty <Position>")
        orient = p.find("Orientation")
        if p.tag == "WorldPosition":
            return rd.num(p, "x"), rd.num(p, "y"), rd.num(p, "h", 0.0)
        if p.tag == "LanePosition":
            road = self.roads.road(rd, p, rd.text(p, "roadId"))
            lane = int(float(rd.text(p, "laneId")))
            s = rd.num(p, "s")
            t = self.roads.lane_t(rd, p, road, lane, s) + rd.num(p, "offset", 0.0)
            x, y, h = self.roads.pose(road, s, t)
            return x, y, self._orient(orient, self.roads.lane_heading(road, lane, h))
        if p.tag == "RoadPosition":
            road = self.roads.road(rd, p, rd.text(p, "roadId"))
            x, y, h = self.roads.pose(road, rd.num(p, "s"), rd.num(p, "t"))
            return x, y, self._orient(orient, h)
        if p.tag in ("RelativeWorldPosition", "RelativeObjectPosition"):
            ref = self.entity(p, rd.text(p, "entityRef"))
            if ref.pose is None:
                raise rd.error(p, f"entity {ref.name!r} is placed after this position refers to it")
            x0, y0, h0 = ref.pose
            dx, dy = rd.num(p, "dx"), rd.num(p, "dy")
            if p.tag == "RelativeObjectPosition":
                dx, dy = dx * math.cos(h0) - dy * math.sin(h0), dx * math.sin(h0) + dy * math.cos(h0)
            return x0 + dx, y0 + dy, self._orient(orient, h0)
        if p.tag == "RelativeLanePosition":
            ref = self.entity(p, rd.text(p, "entityRef"))
            if ref.road is None:
                if ref.pose is None:
                    raise rd.error(p, f"entity {ref.name!r} is placed after this position refers to it")
                ref.road = self._road_of(p, ref.pose)
            road_id, lane0, s0 = ref.road
            road = self.roads.road(rd, p, road_id)
            d_lane = int(float(rd.text(p, "dLane")))
            lane = lane_step(road, s0, lane0, d_lane)
            ds = rd.num(p, "ds", 0.0) if p.get("ds") is not None else rd.num(p, "dsLane", 0.0)
            sign = 1.0 if lane0 < 0 else -1.0  # ds is along the lane's driving direction
            s = s0 + sign * ds
            t = self.roads.lane_t(rd, p, road, lane, s) + rd.num(p, "offset", 0.0)
            x, y, h = self.roads.pose(road, s, t)
            return x, y, self._orient(orient, self.roads.lane_heading(road, lane, h))
        if p.tag == "RelativeRoadPosition":
            ref = self.entity(p, rd.text(p, "entityRef"))
            if ref.pose is None:
                raise rd.error(p, f"entity {ref.name!r} is placed after this position refers to it")
            road_id, _lane, _s = ref.road or self._road_of(p, ref.pose)
            road = self.roads.road(rd, p, road_id)
            # ds and dt are offsets from the reference entity's own road coordinates (s0, t0).
            s0 = self.roads.project(road, ref.pose[0], ref.pose[1])
            rx, ry, rh = self.roads.reference(road, s0)
            t0 = -(ref.pose[0] - rx) * math.sin(rh) + (ref.pose[1] - ry) * math.cos(rh)
            x, y, h = self.roads.pose(road, s0 + rd.num(p, "ds"), t0 + rd.num(p, "dt"))
            return x, y, self._orient(orient, h)
        if p.tag == "RoutePosition":
            return self._route_position(p, orient)
        raise rd.error(p, f"<{p.tag}> positions are not supported (World, Lane, RelativeLane, RelativeObject, "
                          "RelativeWorld, Road, RelativeRoad, Route are)")

    def _route_position(self, p: etree._Element, orient: etree._Element | None) -> tuple[float, float, float]:
        """World pose of a RoutePosition: ``pathS`` is road s driven along the route from its first waypoint."""
        rd = self.rd
        ref = p.find("RouteRef")
        inr = p.find("InRoutePosition")
        which = next(iter(inr), None) if inr is not None else None
        if ref is None or which is None:
            raise rd.error(p, "a RoutePosition needs a <RouteRef> and an <InRoutePosition>")
        if which.tag == "FromCurrentEntity":
            ent = self.entity(which, rd.text(which, "entityRef"))
            if ent.pose is None:
                raise rd.error(which, f"entity {ent.name!r} is placed after this position refers to it")
            if not self._in_init:
                self.note(which, f"the position of {ent.name!r} now is taken as its initial position",
                          approximated=True)
            return ent.pose[0], ent.pose[1], self._orient(orient, ent.pose[2])
        if which.tag not in ("FromLaneCoordinates", "FromRoadCoordinates"):
            raise rd.error(which, f"<{which.tag}> is not an InRoutePosition (FromCurrentEntity, FromLaneCoordinates, "
                                  "FromRoadCoordinates are)")
        path_s = rd.num(which, "pathS")
        pieces = self.road_path(ref)
        total = sum(abs(b - a) for _, a, b in pieces)
        if not -1e-6 <= path_s <= total + 1e-6:
            raise rd.error(which, f"pathS {path_s:g} lies outside the route [0, {total:.3f}] m")
        left = path_s
        for road, s_in, s_out in pieces:
            if left <= abs(s_out - s_in) + 1e-9 or road is pieces[-1][0]:
                break
            left -= abs(s_out - s_in)
        sign = 1.0 if s_out >= s_in else -1.0
        s = min(max(s_in + sign * left, 0.0), road.length)
        if which.tag == "FromLaneCoordinates":
            lane = int(float(rd.text(which, "laneId")))
            t = self.roads.lane_t(rd, which, road, lane, s) + rd.num(which, "laneOffset", 0.0)
        else:
            t = rd.num(which, "t")
        x, y, h = self.roads.pose(road, s, t)
        return x, y, self._orient(orient, h if sign > 0 else h + math.pi)

    def _orient(self, orient: etree._Element | None, base: float) -> float:
        if orient is None:
            return base
        h = self.rd.num(orient, "h", 0.0)
        return h if orient.get("type") == "absolute" else base + h

    def _road_of(self, el: etree._Element, pose: tuple[float, float, float]) -> tuple[str, int, float]:
        """(road, lane, s) nearest a world pose (for relative lane positions of entities placed in world terms)."""
        best = None
        for road in self.roads.roads.values():
            s_all = np.linspace(0.0, road.length, max(2, int(road.length / 0.5) + 1))
            ref = reference_poses(road.geometries, s_all)
            k = int(np.argmin(np.hypot(ref.x - pose[0], ref.y - pose[1])))
            s = float(s_all[k])
            sec = next((sec for sec in reversed(road.sections) if sec.s <= s + 1e-9), road.sections[0])
            for ln in sec.lanes:
                if ln.id == 0 or not ln.widths:
                    continue
                x, y, _ = self.roads.pose(road, s, self.roads.lane_t(self.rd, el, road, ln.id, s))
                d = math.hypot(x - pose[0], y - pose[1])
                key = (d, road.id, ln.id, s)
                best = key if best is None or key < best else best
        if best is None:
            raise self.rd.error(el, "no road lane near the reference entity")
        return best[1], best[2], best[3]

    def lane_ref(self, pose: tuple[float, float, float], kind: str) -> dict[str, Any] | None:
        if kind == "pedestrian":
            return None
        try:
            lane, s, t = self.graph.nearest(pose[0], pose[1], pose[2])
        except ValueError:
            return None
        width = self.template_lane_width(lane)
        if s < 0 or s > self.graph.lane(lane).length_m or abs(t) > width / 2:
            return None
        return {"lane": lane, "s": round(s, 6), "t_frac": round(max(-1.0, min(1.0, t / (width / 2))), 6)}

    def template_lane_width(self, lane: str) -> float:
        return float(self.graph.lane(lane).width_m)

    def lanes_on(self, points: list[tuple[float, float, float]]) -> list[str]:
        lanes: list[str] = []
        for x, y, h in points:
            try:
                lane, _, _ = self.graph.nearest(x, y, h)
            except ValueError:
                continue
            if not lanes or lanes[-1] != lane:
                lanes.append(lane)
        return lanes

    # -- routes --

    def route_of(self, ref: etree._Element) -> etree._Element:
        """The ``<Route>`` a ``<RouteRef>`` / ``<AssignRouteAction>`` holds inline or names in a route catalog."""
        route = ref.find("Route")
        if route is not None:
            return route
        cat = ref.find("CatalogReference")
        if cat is None:
            raise self.rd.error(ref, "neither a <Route> nor a <CatalogReference> to one")
        route = self.catalog_entry(cat)
        if route.tag != "Route":
            raise self.rd.error(cat, f"catalog entry {cat.get('entryName')!r} is a <{route.tag}>, not a <Route>")
        return route

    def waypoints(self, holder: etree._Element) -> tuple[etree._Element, list[tuple[float, float, float]]]:
        """The route a RouteRef / AssignRouteAction names and the world poses of its waypoints (in the catalog
        entry's parameter scope when it comes from a catalog)."""
        route = self.route_of(holder)
        cat = holder.find("CatalogReference")
        self.rd.params.push(self._catalog_scope(cat, route) if cat is not None else {})
        try:
            points = []
            for wp in route.findall("Waypoint"):
                pos = wp.find("Position")
                if pos is None:
                    raise self.rd.error(wp, "waypoint without a position")
                points.append(self.position(pos))
        finally:
            self.rd.params.pop()
        if not points:
            raise self.rd.error(route, "a route without waypoints")
        return route, points

    def road_path(self, holder: etree._Element) -> list[tuple[Road, float, float]]:
        """The route as road pieces ``(road, s_in, s_out)`` in driving order (s_out < s_in: driven against s), from
        its first waypoint to its last: the waypoints' lanes joined by the cheapest lane route
        (:func:`~simready.world.routing.plan_via`), each lane's road and direction read from its geometry."""
        route, points = self.waypoints(holder)
        lanes = []
        for wp, (x, y, h) in zip(route.findall("Waypoint"), points):
            try:
                lanes.append(self.graph.nearest(x, y, h, kinds=("driving", "turn", "parking"))[0])
            except ValueError:
                raise self.rd.error(wp, "no lane of the road network runs through this waypoint in its "
                                        "direction") from None
        planned = plan_via(lane_network(self.template), lanes)
        if planned is None:
            raise self.rd.error(route, f"no lane route through the waypoints' lanes {' -> '.join(lanes)}")
        pieces: list[list[Any]] = []  # [road, s_in, s_out, direction]
        for lane in planned.lanes:
            road = self._road_of_lane(route, lane)
            g = self.graph.lane(lane)
            x, y, h = g.pose_at(g.length_m / 2.0)
            s_mid = self.roads.project(road, x, y)
            direction = 1.0 if math.cos(h - self.roads.reference(road, s_mid)[2]) >= 0.0 else -1.0
            if pieces and pieces[-1][0] is road and pieces[-1][3] == direction:
                continue  # a lane change or the next lane piece on the same road
            s_in = 0.0 if direction > 0 else road.length
            pieces.append([road, s_in, road.length if direction > 0 else 0.0, direction])
        first, last = pieces[0], pieces[-1]
        first[1] = self.roads.project(first[0], points[0][0], points[0][1])
        last[2] = self.roads.project(last[0], points[-1][0], points[-1][1])
        if (last[2] - last[1]) * last[3] < -1e-6:
            raise self.rd.error(route, f"the last waypoint lies behind the route's end on road {last[0].id}")
        return [(road, s_in, s_out) for road, s_in, s_out, _ in pieces]

    def _road_of_lane(self, el: etree._Element, lane: str) -> Road:
        if lane in self.road_of_lane:  # a simready export: one road per template lane
            return self.roads.road(self.rd, el, str(self.road_of_lane[lane]))
        m = re.match(r"road(.+?)_sec\d+_lane-?\d+", lane)
        road = self.roads.by_safe_id.get(m.group(1)) if m else None
        if road is None:
            raise self.rd.error(el, f"lane {lane} of the route belongs to no road of the network")
        return road

    def _route(self, assign: etree._Element, ent: Entity) -> tuple[list[str], list[str]]:
        route, points = self.waypoints(assign)
        if ent.kind == "pedestrian":
            raw = ent.props.get("simready.via_points", "0")
            k = int(raw) if raw.isdigit() else 0
            ent.via = [(round(x, 9), round(y, 9)) for x, y, _ in points[:k]]
            return [], self._walk(route, ent, self._nodes(points[k:]))
        rol = {v: k for k, v in self.road_of_lane.items()}
        lanes: list[str] = []
        for wp, point in zip(route.findall("Waypoint"), points):
            lp = wp.find("Position/LanePosition")
            road = self.rd.text(lp, "roadId") if lp is not None else ""
            # A simready export names each template lane's road: its waypoints come back as those lanes.
            lane = rol.get(int(road)) if road.isdigit() else None
            if lane is None:
                found = self.lanes_on([point])
                lane = found[0] if found else None
            if lane is not None and (not lanes or lanes[-1] != lane):
                lanes.append(lane)
        return self._lane_chain(route, lanes), []

    def _lane_chain(self, el: etree._Element, lanes: list[str]) -> list[str]:
        """``lanes`` (in driving order) as a chain the actor can follow: lanes between two that are not successors
        are filled in by the lane router (following lanes only); the chain ends (reported) before a lane that
        only a lane change reaches."""
        if not lanes:
            return lanes
        out = [lanes[0]]
        for b in lanes[1:]:
            a = out[-1]
            if b == a:
                continue
            if b in self.graph.successors.get(a, ()):
                out.append(b)
                continue
            leg = plan_route(lane_network(self.template), a, b, lane_changes=False)
            if leg is None:
                self.note(el, f"the route ends at {a}: {b} is reached from it only by a lane change (a "
                              "change_lane interaction, not a route step)", approximated=True)
                break
            out.extend(leg.lanes[1:])
        return out

    def _default_route(self, lane: str) -> list[str]:
        """The lane and its successors while there is exactly one (a route the behaviour model can drive)."""
        route = [lane]
        while len(route) < 50:
            succ = self.graph.successors.get(route[-1], ())
            if len(succ) != 1 or succ[0] in route:
                break
            route.append(succ[0])
        return route

    def _walk(self, el: etree._Element, ent: Entity, nodes: list[str]) -> list[str]:
        """``nodes`` when the map's walkable graph joins each to the next; else one line saying where it does not
        (a pedestrian crossing where the map has no crosswalk, say: the walk model walks the graph)."""
        g = self.template.walk_graph
        for a, b in zip(nodes, nodes[1:]):
            if g.shortest_path(a, b) is None:
                raise self.rd.error(el, f"{ent.name!r} walks from walkable node {a} to {b}, which the map's walkable "
                                        "graph does not join (no sidewalk or crosswalk between them)")
        return nodes

    def _nodes(self, points: list[tuple[float, float, float]]) -> list[str]:
        nodes = self.template.walkable.nodes
        out: list[str] = []
        for x, y, _ in points:
            best = min(sorted(nodes), key=lambda n: math.hypot(nodes[n][0] - x, nodes[n][1] - y), default=None)
            if best is not None and (not out or out[-1] != best):
                out.append(best)
        return out
