"""Objects for pedestrians and parking: sidewalk chains as the walkable graph, crosswalk objects as crosswalk regions
joined to the sidewalks they touch, ``parkingSpace`` objects as parking regions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from shapely import prepare
from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from simready.maps.opendrive import MapObject, Road
from simready.maps.refline import reference_poses
from simready.maps.xodr_import.base import BuilderBase
from simready.maps.xodr_import.model import safe_id
from simready.maps.xodr_import.outlines import as_points, rounded
from simready.maps.xodr_import.policy import CROSSWALK_TOUCH_M, SIDEWALK_JOIN_M, WALK_NODE_SPACING_M


def _object_polygon(road: Road, obj: MapObject) -> Polygon | None:
    s = np.array([min(max(obj.s, 0.0), road.length)])
    pose = reference_poses(road.geometries, s)
    hdg = float(pose.hdg[0])
    nx, ny = -math.sin(hdg), math.cos(hdg)
    ox, oy = float(pose.x[0]) + obj.t * nx, float(pose.y[0]) + obj.t * ny
    heading = hdg + obj.hdg
    c, sn = math.cos(heading), math.sin(heading)
    local = [(k.a, k.b) for k in obj.corners if k.kind == "local"]
    road_corners = [(k.a, k.b) for k in obj.corners if k.kind == "road"]
    if road_corners:
        ss = np.array([min(max(a, 0.0), road.length) for a, _ in road_corners])
        order = np.argsort(ss, kind="stable")
        p = reference_poses(road.geometries, ss[order])
        pts = [(0.0, 0.0)] * len(ss)
        for i, j in enumerate(order):
            t = road_corners[j][1]
            pts[j] = (float(p.x[i]) - t * math.sin(p.hdg[i]), float(p.y[i]) + t * math.cos(p.hdg[i]))
    else:
        if not local:
            if obj.length <= 0.0 or obj.width <= 0.0:
                return None
            hl, hw = 0.5 * obj.length, 0.5 * obj.width
            local = [(-hl, -hw), (hl, -hw), (hl, hw), (-hl, hw)]
        pts = [(ox + u * c - v * sn, oy + u * sn + v * c) for u, v in local]
    if len(pts) < 3:
        return None
    poly = Polygon(pts)
    return poly if poly.is_valid and poly.area > 0.01 else None


class Walkable(BuilderBase):
    """The walkable graph, crossings and parking spaces."""

    def _walkable(self) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        walk_area = unary_union([Polygon(np.asarray(self.regions[n]["polygon"])) for n in self.sidewalks])
        crosswalks = self._crosswalk_regions()
        if crosswalks:
            walk_area = unary_union([walk_area] + [p for _, _, p in crosswalks])
        cover = walk_area.buffer(0.04)
        prepare(cover)
        chains: dict[str, list[tuple[float, tuple[float, float]]]] = {}
        for name, lane in sorted(self.sidewalks.items()):
            line = LineString(np.asarray(as_points(lane.centre)))
            chains[name] = [(0.0, line.coords[0]), (line.length, line.coords[-1])]
        crossings: list[dict[str, Any]] = []
        relations: list[dict[str, Any]] = []
        extra_edges: list[tuple[str, str]] = []
        nodes: dict[str, list[float]] = {}
        # (crosswalk, sidewalk a, foot arc length on a, crossing end on a's side, the same for b)
        pending: list[tuple[str, str, float, tuple[float, float], str, float, tuple[float, float]]] = []
        for cw_id, _obj, poly in crosswalks:
            touching = [n for n in sorted(self.sidewalks) if Polygon(self.regions[n]["polygon"]).distance(poly) <= CROSSWALK_TOUCH_M]
            centre = poly.centroid
            feet = {}
            for n in touching:
                line = LineString(as_points(self.sidewalks[n].centre))
                d = line.project(centre)
                feet[n] = (d, line.interpolate(d).coords[0])
            best = None
            for i, a in enumerate(touching):
                for b in touching[i + 1:]:
                    gap = math.dist(feet[a][1], feet[b][1])
                    if best is None or gap > best[0]:
                        best = (gap, a, b)
            if best is None or best[0] < 1.0:
                self.skipped["crosswalks that do not join two sidewalks (no crossing route)"] += 1
                continue
            _, a, b = best
            ends = []
            for side in (a, b):
                foot = Point(feet[side][1])
                edge_pt = poly.exterior.interpolate(poly.exterior.project(foot))
                inward = (centre.x - edge_pt.x, centre.y - edge_pt.y)
                norm = math.hypot(*inward) or 1.0
                ends.append((edge_pt.x + 0.1 * inward[0] / norm, edge_pt.y + 0.1 * inward[1] / norm))
            path = [(a, feet[a][1]), ends[0], ends[1], (b, feet[b][1])]
            segs = [LineString([path[0][1], ends[0]]), LineString([ends[0], ends[1]]), LineString([ends[1], path[3][1]])]
            if not all(cover.covers(sg) for sg in segs):
                self.skipped["crosswalks whose crossing line leaves the sidewalks and crosswalk"] += 1
                continue
            self.crosswalks += 1
            chains[a].append(feet[a])
            chains[b].append(feet[b])
            pending.append((cw_id, a, feet[a][0], ends[0], b, feet[b][0], ends[1]))
        names: dict[tuple[str, float], str] = {}
        edges: set[tuple[str, str]] = set()
        for name, pts in sorted(chains.items()):
            line = LineString(as_points(self.sidewalks[name].centre))
            marks = sorted({round(d, 3) for d, _ in pts} | set(self._chain_stops(line, cover)))
            # Marks closer than a millimetre would be one point twice: keep the first.
            marks = [d for i, d in enumerate(marks) if i == 0 or d - marks[i - 1] >= 1e-3]
            prev = None
            for i, d in enumerate(marks):
                node = f"{name}_n{i}"
                x, y = line.interpolate(d).coords[0]
                nodes[node] = [rounded(x), rounded(y)]
                names[(name, d)] = node
                if prev is not None:
                    edges.add((prev, node))
                prev = node
        for cw_id, a, da, end_a, b, db, end_b in pending:
            fa, fb = self._node_at(names, a, da), self._node_at(names, b, db)
            ea, eb = f"{cw_id}_a", f"{cw_id}_b"
            nodes[ea] = [rounded(end_a[0]), rounded(end_a[1])]
            nodes[eb] = [rounded(end_b[0]), rounded(end_b[1])]
            extra_edges += [(fa, ea), (ea, eb), (eb, fb)]
            crossings.append({"id": f"crossing_{cw_id}", "type": "pedestrian_crossing", "region": cw_id, "path": [fa, ea, eb, fb]})
            relations.append({"type": "connects", "route": cw_id, "a": a, "b": b})
        edges.update(extra_edges)
        edges.update(self._joins(nodes, chains, cover))
        walkable = {"nodes": {k: nodes[k] for k in sorted(nodes)},
                    "edges": sorted([sorted(e) for e in edges])}
        return walkable, crossings, relations

    def _chain_stops(self, line: LineString, cover: BaseGeometry) -> list[float]:
        """Arc lengths of nodes along a sidewalk centre: chords at most WALK_NODE_SPACING_M and inside the walkable area."""
        coords = list(line.coords)
        dist = [0.0]
        for p, q in zip(coords, coords[1:]):
            dist.append(dist[-1] + math.dist(p, q))
        stops = [0.0]
        i = 0
        while i < len(coords) - 1:
            j = i + 1
            while (j + 1 < len(coords) and dist[j + 1] - dist[i] <= WALK_NODE_SPACING_M
                   and cover.covers(LineString([coords[i], coords[j + 1]]))):
                j += 1
            stops.append(round(dist[j], 3))
            i = j
        return stops

    @staticmethod
    def _node_at(names: dict[tuple[str, float], str], chain: str, d: float) -> str:
        """The node of sidewalk ``chain`` at arc length ``d`` (a crosswalk's foot, which is one of its marks)."""
        return names[min((k for k in names if k[0] == chain), key=lambda k: (abs(k[1] - d), k[1]))]

    def _joins(self, nodes: dict[str, list[float]], chains: dict[str, Any], cover: BaseGeometry) -> set[tuple[str, str]]:
        """Edges between sidewalk chains whose end nodes meet (sections and linked roads), found on a grid."""
        by_chain: dict[str, list[str]] = {}
        for n in nodes:
            head, _, tail = n.rpartition("_n")
            if head in chains and tail.isdigit():
                by_chain.setdefault(head, []).append(n)
        ends = []
        for name in sorted(chains):
            ids = sorted(by_chain.get(name, ()), key=lambda n: int(n.rsplit("_n", 1)[1]))
            if ids:
                ends += [(ids[0], name), (ids[-1], name)]
        cell = max(SIDEWALK_JOIN_M, 1e-3)
        grid: dict[tuple[int, int], list[int]] = {}
        for i, (node, _) in enumerate(ends):
            x, y = nodes[node]
            grid.setdefault((math.floor(x / cell), math.floor(y / cell)), []).append(i)
        out = set()
        for i, (a, chain_a) in enumerate(ends):
            x, y = nodes[a]
            gx, gy = math.floor(x / cell), math.floor(y / cell)
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for j in grid.get((gx + dx, gy + dy), ()):
                        b, chain_b = ends[j]
                        if j > i and chain_a != chain_b and math.dist(nodes[a], nodes[b]) <= SIDEWALK_JOIN_M \
                                and cover.covers(LineString([nodes[a], nodes[b]])):
                            out.add((a, b))
        return out

    def _crosswalk_regions(self) -> list[tuple[str, MapObject, Polygon]]:
        out = []
        for road in self.odr.roads:
            for obj in road.objects:
                if obj.type == "parkingSpace":
                    self._parking_space(road, obj)
                    continue
                if obj.type.lower() != "crosswalk" and not (obj.type == "roadMark" and obj.subtype.lower() == "crosswalk"):
                    self.skipped[f"objects of type {obj.type or '(none)'!r}"] += 1
                    continue
                poly = _object_polygon(road, obj)
                if poly is None:
                    self.skipped["crosswalk objects without an outline or size"] += 1
                    continue
                if self.bounds is not None and not self.bounds.contains(poly):
                    self.skipped["outside --bounds"] += 1
                    continue
                cw_id = f"crosswalk_{safe_id(road.id)}_{safe_id(obj.id)}"
                self.crosswalk_at[cw_id] = (road.id, float(obj.s))
                ring = as_points(np.asarray(poly.exterior.coords[:-1]))
                self.regions[cw_id] = {"id": cw_id, "type": "crosswalk", "polygon": ring}
                out.append((cw_id, obj, Polygon(ring)))
        return out

    def _parking_space(self, road: Road, obj: MapObject) -> None:
        """A ``parkingSpace`` object: a parking region (and a parking affordance where a slot fits along it)."""
        poly = _object_polygon(road, obj)
        if poly is None:
            self.skipped["parkingSpace objects without an outline or size"] += 1
            return
        if self.bounds is not None and not self.bounds.contains(poly):
            self.skipped["outside --bounds"] += 1
            return
        rid = f"parking_{safe_id(road.id)}_{safe_id(obj.id)}"
        self.regions[rid] = {"id": rid, "type": "parking", "polygon": as_points(np.asarray(poly.exterior.coords[:-1]))}
        self.parking_spaces.append(rid)
