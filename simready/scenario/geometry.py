"""Planar geometry and coarse kinematics for scenario programs and the constraint ladder.

Frames and units (SPEC §2): world frame x east, y north, z up; metres,
seconds, radians; yaw counter-clockwise about +z from +x. Scenario time
``t_s`` is 0 at the end of the warm-up, so an actor's initial state is at
``t = -warmup_s``.

Three things live here, because the programs, the static checks and the
coarse rollout all need the same ones:

* :class:`CoarsePath` (a polyline with arc length) and :class:`SpeedProfile`
  (arc length over time, piecewise-constant acceleration) make a
  :class:`Motion`: where a body is at any time, the plan a program derived
  and the ladder replays. No physics: the simulation owns that.
* Oriented rectangles and boxes (footprints, occluder boxes).
* :class:`TemplateGeometry`: shapely unions of a template's surfaces and its
  static obstacles, built once per template and cached, since every
  proposal asks the same questions of the same map.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import shapely
from numpy.typing import ArrayLike, NDArray
from shapely.geometry import LineString, Polygon
from shapely.ops import unary_union

from simready.world.frames import footprint_corners
from simready.world.lanes import wrap_angle
from simready.world.polyline import Polyline

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.world.affordances import ParkingSite
    from simready.world.template import WorldTemplate

FloatArray = NDArray[np.float64]

#: Semantic classes that are surfaces a body stands on, not obstacles it can hit or hide behind.
GROUND_CLASSES = frozenset({"road", "sidewalk", "curb", "crosswalk_marking", "lane_marking", "terrain"})
#: Region types a vehicle may stand on.
VEHICLE_SURFACES = ("drivable", "intersection", "parking")
#: Region types a pedestrian may stand on.
WALKABLE_SURFACES = ("sidewalk", "crosswalk")
#: Region types a pedestrian crossing mid-block (off the walkable graph, between parked vehicles) may stand on.
CROSSING_SURFACES = WALKABLE_SURFACES + VEHICLE_SURFACES
#: Sampling step of a route's offset line (m).
OFFSET_STEP_M = 1.0
#: Slivers between touching region polygons are closed by this buffer (m).
UNION_TOLERANCE_M = 0.01


# --- paths and speed profiles ------------------------------------------------


@dataclass(frozen=True, eq=False)
class CoarsePath(Polyline):
    """A plan's polyline for the coarse stages (N ≥ 2 points, world metres): the primitive plus shapely's view of it
    (the simulation's controllers follow :class:`simready.sim.core.reference_paths.ReferencePath`)."""

    @cached_property
    def line(self) -> LineString:
        return LineString(self.points)

    def s_of(self, x_m: float, y_m: float) -> float:
        """Arc length of the path point nearest to (x, y), clamped to [0, length] (shapely's projection)."""
        return float(self.line.project(shapely.Point(x_m, y_m)))

    def lateral(self, xy: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """``(s, t)`` of (M, 2) points: arc length and signed offset (+ left of travel), metres."""
        s, t, _ = self.project_many(xy)
        return s, t


@dataclass(frozen=True)
class SpeedProfile:
    """Arc length over time: piecewise-constant acceleration, never reversing.

    Segment k starts at ``t_s[k]`` at arc length ``s_m[k]`` with speed
    ``v_mps[k]`` and accelerates at ``a_mps2[k]`` until ``t_s[k+1]``; the
    last segment runs on for ever. Times before ``t_s[0]`` read as ``t_s[0]``.
    """

    t_s: tuple[float, ...]
    s_m: tuple[float, ...]
    v_mps: tuple[float, ...]
    a_mps2: tuple[float, ...]

    @classmethod
    def from_phases(cls, t0_s: float, s0_m: float, v0_mps: float, phases: Sequence[tuple[float, float]]) -> SpeedProfile:
        """Start at (t0, s0, v0), then each ``(duration_s, accel_mps2)`` in turn; the last phase's duration is ignored.

        A deceleration that would reverse the body stops it instead (a
        knot is added at the stop and the body rests from there).
        """
        ts, ss, vs, accs = [t0_s], [s0_m], [v0_mps], []
        for k, (duration, accel) in enumerate(phases):
            v = vs[-1]
            last = k == len(phases) - 1
            if accel < 0 and v + accel * (math.inf if last else duration) < 0:
                t_stop = v / -accel
                accs.append(accel)
                ts.append(ts[-1] + t_stop)
                ss.append(ss[-1] + v * t_stop / 2)
                vs.append(0.0)
                accs.append(0.0)
                if last:
                    break
                # The rest of this phase and every later one start from rest.
                remaining = duration - t_stop
                ts.append(ts[-1] + remaining)
                ss.append(ss[-1])
                vs.append(0.0)
                continue
            accs.append(accel)
            if last:
                break
            ts.append(ts[-1] + duration)
            ss.append(ss[-1] + v * duration + accel * duration**2 / 2)
            vs.append(v + accel * duration)
        if not phases:
            accs.append(0.0)
        # Zero-length knots (a zero-duration phase) carry no information; drop them.
        keep = [0] + [i for i in range(1, len(ts)) if ts[i] > ts[i - 1]]
        return cls(tuple(ts[i] for i in keep), tuple(ss[i] for i in keep), tuple(vs[i] for i in keep),
                   tuple(accs[i] for i in keep))

    @classmethod
    def constant(cls, t0_s: float, s0_m: float, v_mps: float) -> SpeedProfile:
        return cls.from_phases(t0_s, s0_m, v_mps, [(0.0, 0.0)])

    @classmethod
    def wait_then_go(cls, t0_s: float, s0_m: float, t_go_s: float, v_mps: float, ramp_s: float) -> SpeedProfile:
        """At rest until ``t_go_s``, then a linear speed ramp to ``v_mps`` over ``ramp_s``, then constant."""
        return cls.from_phases(t0_s, s0_m, 0.0, [(t_go_s - t0_s, 0.0), (ramp_s, v_mps / ramp_s), (0.0, 0.0)])

    def at(self, t_s: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """``(s, v)`` at time(s) ``t_s``."""
        if isinstance(t_s, (float, int)):
            t1 = max(float(t_s), self.t_s[0])
            k = bisect_right(self.t_s, t1) - 1
            dt = t1 - self.t_s[k]
            return (self.s_m[k] + self.v_mps[k] * dt + 0.5 * self.a_mps2[k] * dt * dt,
                    self.v_mps[k] + self.a_mps2[k] * dt)
        t = np.maximum(np.asarray(t_s, dtype=np.float64), self.t_s[0])
        k = np.searchsorted(np.asarray(self.t_s), t, side="right") - 1
        dt = t - np.asarray(self.t_s)[k]
        v0 = np.asarray(self.v_mps)[k]
        a = np.asarray(self.a_mps2)[k]
        return np.asarray(self.s_m)[k] + v0 * dt + 0.5 * a * dt * dt, v0 + a * dt

    def time_at(self, s_m: float) -> float:
        """First time the arc length reaches ``s_m``; ``math.inf`` if it never does."""
        if s_m <= self.s_m[0]:
            return self.t_s[0]
        for k in range(len(self.t_s)):
            s0, v0, a = self.s_m[k], self.v_mps[k], self.a_mps2[k]
            s_end = self.s_m[k + 1] if k + 1 < len(self.t_s) else math.inf
            if s_m > s_end:
                continue
            ds = s_m - s0
            if abs(a) < 1e-12:
                return math.inf if v0 <= 0 else self.t_s[k] + ds / v0
            disc = v0 * v0 + 2 * a * ds
            if disc < 0:
                return math.inf
            return self.t_s[k] + (-v0 + math.sqrt(disc)) / a
        return math.inf


@dataclass(frozen=True)
class Motion:
    """A body moving along ``path`` by ``profile`` (arc length measured on the path)."""

    path: CoarsePath
    profile: SpeedProfile

    def pose(self, t_s: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """``(x, y, yaw, speed)`` at time(s) ``t_s``; a body past its path's end rests there."""
        s, v = self.profile.at(t_s)
        x, y, yaw = self.path.xy_yaw(s)
        if isinstance(s, float):
            return x, y, yaw, (0.0 if s >= self.path.length_m else v)
        return x, y, yaw, np.where(s >= self.path.length_m, 0.0, v)

    def s_at(self, t_s: ArrayLike) -> FloatArray:
        return self.profile.at(t_s)[0]

    def time_at(self, s_m: float) -> float:
        return self.profile.time_at(s_m)


def stationary(x_m: float, y_m: float, yaw_rad: float, t0_s: float) -> Motion:
    """A body at rest at a pose (a parked vehicle)."""
    path = CoarsePath.from_points([[x_m, y_m], [x_m + 1e-3 * math.cos(yaw_rad), y_m + 1e-3 * math.sin(yaw_rad)]])
    return Motion(path, SpeedProfile.constant(t0_s, 0.0, 0.0))


# --- rectangles and boxes -------------------------------------------------------


def rect_polygon(x: float, y: float, yaw: float, length_m: float, width_m: float) -> Polygon:
    return Polygon(footprint_corners(x, y, yaw, length_m / 2, width_m / 2))


def rects_overlap(a: FloatArray, b: FloatArray) -> NDArray[np.bool_]:
    """Separating-axis test of two stacks of convex quads (..., 4, 2): True where they overlap (touching is not)."""
    hit = np.ones(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), dtype=bool)
    for poly in (a, b):
        edges = np.roll(poly, -1, axis=-2) - poly
        for k in range(2):  # a rectangle has two edge directions
            axis = np.stack([-edges[..., k, 1], edges[..., k, 0]], axis=-1)
            pa = np.einsum("...ij,...j->...i", a, axis)
            pb = np.einsum("...ij,...j->...i", b, axis)
            hit &= (pa.max(-1) > pb.min(-1)) & (pb.max(-1) > pa.min(-1))
    return hit


@dataclass(frozen=True)
class Box:
    """An upright box: centre (x, y), yaw, length along its x, width, and z from ``z0`` to ``z1`` (m)."""

    x: float
    y: float
    yaw: float
    length: float
    width: float
    z0: float
    z1: float

    def as_row(self) -> tuple[float, ...]:
        """``(x, y, yaw, half_length, half_width, z0, z1)``: the row :func:`~simready.scenario.static_checks.blocked_by_boxes` reads."""
        return (self.x, self.y, self.yaw, self.length / 2, self.width / 2, self.z0, self.z1)


def box_of_polygon(poly: Polygon, z0: float, z1: float) -> Box:
    """The minimum rotated rectangle of a footprint as a :class:`Box`."""
    rect = poly.minimum_rotated_rectangle
    c = np.asarray(rect.exterior.coords)[:4]
    e0, e1 = c[1] - c[0], c[2] - c[1]
    length, width = float(np.hypot(*e0)), float(np.hypot(*e1))
    yaw = math.atan2(e0[1], e0[0])
    centre = c.mean(axis=0)
    return Box(float(centre[0]), float(centre[1]), yaw, max(length, 1e-3), max(width, 1e-3), z0, z1)


# --- template geometry ----------------------------------------------------------


@dataclass(frozen=True)
class Obstacle:
    """One convex collision piece of a static template instance: world footprint and height range (m)."""

    instance: str
    asset_id: str
    footprint: Polygon
    z0: float
    z1: float


@dataclass(frozen=True, eq=False)
class TemplateGeometry:
    """Shapely views of one template, computed once: surfaces, obstacles, routes."""

    template: WorldTemplate
    obstacles: tuple[Obstacle, ...]
    obstacle_tree: shapely.STRtree = field(repr=False)

    @classmethod
    def build(cls, template: WorldTemplate, catalog: Catalog) -> TemplateGeometry:
        obstacles = tuple(_static_obstacles(template, catalog))
        return cls(template, obstacles, shapely.STRtree([o.footprint for o in obstacles]))

    def surface(self, types: Iterable[str]) -> Polygon:
        """Union of every region of the given types (slivers closed), prepared for fast queries."""
        key = tuple(sorted(types))
        cache = self.__dict__.setdefault("_surfaces", {})
        if key not in cache:
            shapes = [r.shape for r in sorted(self.template.regions, key=lambda r: r.id) if r.type in key]
            union = unary_union([s.buffer(UNION_TOLERANCE_M) for s in shapes]) if shapes else Polygon()
            shapely.prepare(union)
            cache[key] = union
        return cache[key]

    def region_with_tolerance(self, region_id: str, tolerance_m: float) -> Polygon:
        """One region's polygon grown by ``tolerance_m``, prepared (cached)."""
        cache = self.__dict__.setdefault("_grown", {})
        key = (region_id, tolerance_m)
        if key not in cache:
            grown = self.template.region_by_id[region_id].shape.buffer(tolerance_m, join_style="mitre")
            shapely.prepare(grown)
            cache[key] = grown
        return cache[key]

    @cached_property
    def bounds_polygon(self) -> Polygon:
        xmin, ymin, xmax, ymax = self.template.bounds
        poly = shapely.box(xmin, ymin, xmax, ymax)
        shapely.prepare(poly)
        return poly

    def route_path(self, lanes: Sequence[str], offset_m: float = 0.0) -> CoarsePath:
        """Centreline of a lane sequence, joined end to start; with ``offset_m`` the line that far to its left
        (+) or right (-), sampled every :data:`OFFSET_STEP_M` (a vehicle holding a lateral offset in its lane)."""
        cache: dict[tuple[str, ...] | tuple[tuple[str, ...], float], CoarsePath] = self.__dict__.setdefault("_routes", {})
        key = (tuple(lanes), float(offset_m)) if offset_m else tuple(lanes)
        if key not in cache:
            if offset_m:
                centre = self.route_path(lanes)
                s = np.unique(np.concatenate([np.arange(0.0, centre.length_m, OFFSET_STEP_M), [centre.length_m]]))
                x, y, yaw = centre.xy_yaw(s)
                offset = np.stack([x - np.sin(yaw) * offset_m, y + np.cos(yaw) * offset_m], axis=1)
                cache[key] = CoarsePath.from_points(offset)
            else:
                graph = self.template.lane_graph
                pts = np.concatenate([graph.lane(lane).points for lane in lanes])
                cache[key] = CoarsePath.from_points(pts)
        return cache[key]

    def site_area(self, site: ParkingSite, tolerance_m: float) -> Polygon:
        """A parking site's polygon grown by ``tolerance_m``, prepared (cached): its region's for a parking site."""
        if site.region is not None:
            return self.region_with_tolerance(site.region, tolerance_m)
        cache = self.__dict__.setdefault("_sites", {})
        key = (site.id, tolerance_m)
        if key not in cache:
            grown = site.shape.buffer(tolerance_m, join_style="mitre")
            shapely.prepare(grown)
            cache[key] = grown
        return cache[key]

    def route_lane_at(self, lanes: Sequence[str], s_m: float) -> tuple[str, float]:
        """``(lane id, lane s)`` of route arc length ``s_m`` (the last lane extends past its end)."""
        graph = self.template.lane_graph
        offset = 0.0
        for lane in lanes[:-1]:
            length = graph.lane(lane).length_m
            if s_m < offset + length:
                return lane, s_m - offset
            offset += length
        return lanes[-1], s_m - offset

    def obstacles_near(self, geom: shapely.Geometry) -> list[Obstacle]:
        return [self.obstacles[i] for i in sorted(self.obstacle_tree.query(geom, predicate="intersects"))]

    def obstacle_boxes(self, area: shapely.Geometry) -> list[Box]:
        """Occluder boxes of the static obstacles whose footprint meets ``area``."""
        return [box_of_polygon(o.footprint, o.z0, o.z1) for o in self.obstacles_near(area)]


def _static_obstacles(template: WorldTemplate, catalog: Catalog) -> Iterable[Obstacle]:
    """Collision pieces of every non-ground static instance, in instance-name order."""
    pieces_by_asset: dict[str, list[tuple[FloatArray, float, float]]] = {}
    for inst in sorted(template.instances, key=lambda i: i.name):
        entry = catalog.entry(inst.asset)
        if entry.semantic_class in GROUND_CLASSES:
            continue
        if inst.asset not in pieces_by_asset:
            pieces = []
            for mesh in catalog.collision_meshes(inst.asset):
                v = np.asarray(mesh.vertices, dtype=np.float64)
                pieces.append((v[:, :2], float(v[:, 2].min()), float(v[:, 2].max())))
            pieces_by_asset[inst.asset] = pieces
        c, s = math.cos(inst.pose.yaw_rad), math.sin(inst.pose.yaw_rad)
        for xy, z0, z1 in pieces_by_asset[inst.asset]:
            world = np.stack([inst.pose.x + c * xy[:, 0] - s * xy[:, 1], inst.pose.y + s * xy[:, 0] + c * xy[:, 1]], axis=1)
            hull = shapely.MultiPoint(world).convex_hull
            if hull.area <= 0:
                continue
            yield Obstacle(inst.name, inst.asset, hull, inst.pose.z + z0, inst.pose.z + z1)


def angle_diff(a_rad: float, b_rad: float) -> float:
    """|a − b| wrapped to [0, π]."""
    return abs(wrap_angle(a_rad - b_rad))
