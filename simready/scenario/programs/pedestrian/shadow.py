"""The van's shadow: what the van hides from an eye (silhouette, wedge), the last ego position from which it still
hides the kerb, and the spawn area inside the shadow near the crossing."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from simready.scenario.api import CoarsePath, ProgramContext, camera_view, footprint_corners
from simready.scenario.programs.pedestrian.layouts import Layout, Layouts
from simready.scenario.programs.pedestrian.walk import PedGeometry, first_crosswalk_node, path_s_of


@dataclass(frozen=True)
class SpawnArea:
    """Where a spawn may be drawn: a bounding box and a vectorized membership test ``inside(x, y) -> bool[]``."""

    bounds: tuple[float, float, float, float]
    inside: Callable[[np.ndarray, np.ndarray], np.ndarray]


class Spawning(Layouts):
    """Spawn areas and the occlusion a layout needs, memoized per layout."""

    def _spawn_area(self, ctx: ProgramContext, layout: Layout, van_pose: tuple[float, float, float],
                    van_lw: tuple[float, float], ego_speed: float, speed_lo: float, ttc: float, walk_speed: float,
                    ped_r: float) -> tuple[SpawnArea | None, str]:
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

        return SpawnArea(bounds, inside), "no sidewalk point near the crossing lies inside the van's shadow"

    def _occlusion_need(self, ctx: ProgramContext, layout: Layout, van_pose: tuple[float, float, float],
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
        hi = last_hidden_s(route, (kx, ky), corners)
        if hi > -math.inf:
            # The body's sides as seen from the camera at that position (one refinement is plenty).
            cx, cy, _ = (float(v) for v in route.xy_yaw(hi))
            d = math.hypot(kx - cx, ky - cy) or 1.0
            nx, ny = -(ky - cy) / d * ped_r, (kx - cx) / d * ped_r
            hi = min(last_hidden_s(route, k, corners) for k in ((kx, ky), (kx + nx, ky + ny), (kx - nx, ky - ny)))
        if hi == -math.inf:
            return math.inf, walk_leg_s
        # Camera at route arc length s_cam sits mount_x ahead of the ego's centre.
        last_hidden_ego_s = hi - mount_x
        if last_hidden_ego_s <= layout.route.start_s_m:
            return math.inf, walk_leg_s
        return max(0.0, s_arrival - last_hidden_ego_s), walk_leg_s

    def _spawn_base(self, ctx: ProgramContext, layout: Layout, ped_r: float) -> tuple[Any, str, float, Any, Any]:
        """Per layout and body size: the crossing's conflict, kerb node and leg, kerb-side strip, kerb exit point."""
        t = ctx.template
        route = ctx.geometry.route_path(layout.route.lanes, layout.route.offset_m)
        _, ego_w = ctx.footprints[t.ego.asset]
        crossing = PedGeometry.of(ctx, t.walk_graph.nodes[layout.path[0]], layout.path, layout.sidewalk, ped_r)
        hit = crossing.conflict(route, ego_w / 2 + ped_r)
        entry_node = first_crosswalk_node(t, layout)
        entry_leg = (hit.s_enter_m if hit else 0.0) - path_s_of(t, layout.path, entry_node)
        side = t.region_by_id[layout.sidewalk].shape
        kerb = route.line.buffer(route.line.distance(side) + self.params.spawn_kerb_band_m)
        kerb_xy = crossing.point_at(hit.s_kerb_m) if hit else t.walk_graph.nodes[layout.path[0]]
        return hit, entry_node, entry_leg, side.buffer(-ped_r - 0.05).intersection(kerb), kerb_xy


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


def last_hidden_s(path: CoarsePath, eye: tuple[float, float], corners: np.ndarray) -> float:
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
