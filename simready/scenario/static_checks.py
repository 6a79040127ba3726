"""Stage 2 of the ladder: static geometry (bounds, support, non-penetration, reachability, occlusion).

All checks look at the initial poses (t = -warmup_s) except occlusion, which
replays the planned motions at the ego camera's frame times. Surfaces and
static obstacles come from :class:`~simready.scenario.geometry.TemplateGeometry`
(shapely, prepared once per template).

Occlusion is approximate but three-dimensional where it matters: rays go
from the camera origin — the rig's camera mount composed onto the
observer's planned pose at that frame, ``T_world_cam = T_world_ego @
T_ego_mount`` — to points sampled on the target's body (a grid across its
width as seen from the camera × heights), and a ray is blocked when it
passes through an occluder's upright box (slab test in the box frame, so a
ray passing over a low box is not blocked). A point outside the camera's
field of view or range is not visible either. The visible fraction of a
frame is the share of its points with a clear ray.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry import Polygon

from simready.scenario.context import ProgramContext
from simready.scenario.geometry import CROSSING_SURFACES, Box, rect_polygon
from simready.scenario.ladder import PASS, Body, Fail, Proposal, ProposalScene, Verdict
from simready.world.frames import footprint_corners, mount_transform
from simready.world.rig_view import camera_frustums
from simready.world.routing import route_issue

FloatArray = NDArray[np.float64]

#: Footprints may touch their region's edge within this (m): authored polygons are rounded to cm.
SUPPORT_TOLERANCE_M = 0.02
#: Overlap area below this is touching, not penetration (m²).
PENETRATION_AREA_M2 = 1e-4
#: Lateral × vertical sample grid on a target body.
BODY_POINTS_ACROSS = 5
BODY_HEIGHT_FRACTIONS = (0.1, 0.28, 0.46, 0.64, 0.82, 0.95)
#: Rays ending this close to an occluder's surface are not blocked by it (the target's own skin).
RAY_EPS = 1e-6


def _initial_pose(body: Body, warmup_s: float) -> tuple[float, float, float]:
    x, y, yaw, _ = body.motion.pose(-warmup_s)
    return float(x), float(y), float(yaw)


def initial_footprints(scene: ProposalScene) -> dict[str, Polygon]:
    """Footprint polygons of every body at t = -warmup_s (computed once per scene)."""
    if "footprints" not in scene.cache:
        out = {}
        for actor_id, body in scene.bodies.items():
            x, y, yaw = _initial_pose(body, scene.warmup_s)
            out[actor_id] = rect_polygon(x, y, yaw, body.length_m, body.width_m)
        scene.cache["footprints"] = out
    footprints: dict[str, Polygon] = scene.cache["footprints"]
    return footprints


class _StaticStage:
    level = 2

    def __init__(self, ctx: ProgramContext) -> None:
        self.ctx = ctx


class BoundsStage(_StaticStage):
    """Every initial footprint lies inside the template's map bounds."""

    name = "bounds"
    cost_rank = 20

    def check(self, proposal: Proposal) -> Verdict:
        bounds = self.ctx.geometry.bounds_polygon
        scene = proposal.scene
        fps = initial_footprints(scene)
        for body in scene.bodies.values():
            fp = fps[body.actor_id]
            if not bounds.covers(fp):
                x, y, _ = _initial_pose(body, scene.warmup_s)
                return Fail("bounds.outside_map", f"{body.actor_id} at ({x:.2f}, {y:.2f}) is outside the map "
                            f"{tuple(round(v, 2) for v in proposal.template.bounds)}", ("layout",))
        return PASS


class SupportStage(_StaticStage):
    """Footprints on their surfaces (and inside their parking site); wheel contacts on the wheel surface."""

    name = "support"
    cost_rank = 21

    def check(self, proposal: Proposal) -> Verdict:
        scene = proposal.scene
        geo = self.ctx.geometry
        fps = initial_footprints(scene)
        for body in scene.bodies.values():
            fp = fps[body.actor_id]
            x, y, yaw = _initial_pose(body, scene.warmup_s)
            inner = rect_polygon(x, y, yaw, max(body.length_m - 2 * SUPPORT_TOLERANCE_M, 1e-3),
                                 max(body.width_m - 2 * SUPPORT_TOLERANCE_M, 1e-3))
            surface = geo.surface(body.surface)
            if not surface.covers(inner):
                outside = fp.difference(surface).area
                return Fail("support.off_surface", f"{body.actor_id} footprint is {outside:.2f} m^2 off its "
                            f"surface ({'/'.join(body.surface)})", ("layout",))
            site = body.site
            if site is not None:
                region = proposal.template.region_by_id.get(site.region) if site.region is not None else None
                lost = site.region is not None and region is None
                if lost or not geo.site_area(site, SUPPORT_TOLERANCE_M).covers(fp):
                    outside = fp.area if lost else fp.difference(region.shape if region is not None else site.shape).area
                    what = f"region {site.region}" if site.region is not None else f"kerb site {site.id}"
                    return Fail("support.outside_region", f"{body.actor_id} footprint is {outside:.2f} m^2 outside "
                                f"{what}", ("layout",))
            if body.wheels:
                x, y, yaw = _initial_pose(body, scene.warmup_s)
                c, s = math.cos(yaw), math.sin(yaw)
                wx = np.array([x + c * px - s * py for px, py in body.wheels])
                wy = np.array([y + s * px + c * py for px, py in body.wheels])
                on = shapely.contains_xy(geo.surface(body.wheel_surface), wx, wy)
                if not on.all():
                    k = int(np.argmin(on))
                    return Fail("support.wheel_off_surface", f"{body.actor_id} wheel {k} at ({wx[k]:.2f}, {wy[k]:.2f})"
                                f" is off {'/'.join(body.wheel_surface)}", ("layout",))
        return PASS


class NonPenetrationStage(_StaticStage):
    """No two initial footprints overlap, and none overlaps a static obstacle at its height."""

    name = "non_penetration"
    cost_rank = 22

    def check(self, proposal: Proposal) -> Verdict:
        scene = proposal.scene
        ids = sorted(scene.bodies)
        fps = initial_footprints(scene)
        for n, a in enumerate(ids):
            for b in ids[n + 1:]:
                overlap = fps[a].intersection(fps[b]).area
                if overlap > PENETRATION_AREA_M2:
                    return Fail("non_penetration.actors", f"{a} and {b} overlap by {overlap:.3f} m^2 at start",
                                _repair_of(scene.bodies[a], scene.bodies[b]))
        for i in ids:
            body = scene.bodies[i]
            for obstacle in self.ctx.geometry.obstacles_near(fps[i]):
                if obstacle.z0 >= body.height_m or obstacle.z1 <= 0.0:
                    continue
                overlap = fps[i].intersection(obstacle.footprint).area
                if overlap > PENETRATION_AREA_M2:
                    return Fail("non_penetration.static", f"{i} overlaps static instance {obstacle.instance} by "
                                f"{overlap:.3f} m^2", _repair_of(body))
        return PASS


def _repair_of(*bodies: Body) -> tuple[str, ...]:
    # A moving agent's start is local to it; the ego's is the template's.
    return tuple(sorted({"spawn" if b.kind == "pedestrian" else "layout" for b in bodies if b.role != "ego"}))


class ReachabilityStage(_StaticStage):
    """Lane routes are successor chains the body starts on; walk routes are connected and reachable on foot."""

    name = "reachability"
    cost_rank = 23

    def check(self, proposal: Proposal) -> Verdict:
        scene = proposal.scene
        template = proposal.template
        graph = template.lane_graph
        walk = template.walk_graph
        for body in scene.bodies.values():
            if body.lanes:
                issue = route_issue(graph, body.lanes)
                if issue is not None and issue.code == "unknown_lane":
                    return Fail("reachability.unknown_lane", f"{body.actor_id} route names unknown lane {issue.lane}", ())
                if issue is not None:
                    return Fail("reachability.lane_gap", f"{body.actor_id} route: {issue.lane} does not succeed "
                                f"{issue.previous}", ())
                x, y, _ = _initial_pose(body, scene.warmup_s)
                lane = graph.lane(body.lanes[0])
                s, t = lane.project(x, y)
                if not (0.0 <= s <= lane.length_m and abs(t - body.lane_offset_m) <= lane.width_m / 2):
                    return Fail("reachability.off_route", f"{body.actor_id} starts at s={s:.2f}, t={t:.2f} m, not on "
                                f"its first lane {lane.id}", ("layout",))
            if body.walk:
                unknown = [n for n in body.walk if n not in walk.nodes]
                if unknown:
                    return Fail("reachability.unknown_node", f"{body.actor_id} walk names unknown node {unknown[0]}", ())
                for a, b in zip(body.walk, body.walk[1:]):
                    if not walk.has_edge(a, b):
                        return Fail("reachability.walk_gap", f"{body.actor_id} walk: no walkable edge {a} - {b}", ())
                x, y, _ = _initial_pose(body, scene.warmup_s)
                first = walk.nodes[body.walk[0]]
                start = (x, y)
                if body.via:
                    # A mid-block crossing: straight legs through the via points over footways and carriageway
                    # (never through a building), then the far footway to the first node.
                    crossing = self.ctx.geometry.surface(CROSSING_SURFACES)
                    legs = [(x, y), *body.via]
                    for k, (p, q) in enumerate(zip(legs, legs[1:])):
                        if not crossing.covers(shapely.LineString([p, q])):
                            return Fail("reachability.no_crossing_path", f"{body.actor_id}'s mid-block crossing leg "
                                        f"{k} ({p[0]:.2f}, {p[1]:.2f}) -> ({q[0]:.2f}, {q[1]:.2f}) leaves the "
                                        "footways and carriageway", ("spawn",))
                    start = body.via[-1]
                leg = shapely.LineString([start, first])
                surface = self.ctx.geometry.surface(("sidewalk", "crosswalk"))
                if not surface.covers(leg):
                    return Fail("reachability.no_footpath", f"{body.actor_id} at ({start[0]:.2f}, {start[1]:.2f}) has "
                                f"no walkable straight path to {body.walk[0]}", ("spawn",))
        return PASS


# --- occlusion -------------------------------------------------------------------


@dataclass(frozen=True)
class CameraView:
    """What the occlusion check needs of a camera: its mount on the observer and its frustum.

    ``T_body_mount``: 4×4 mount on the observer body (x forward, y left, z
    up). Angles in radians; times in seconds.
    """

    T_body_mount: FloatArray
    hfov_rad: float
    vfov_rad: float
    near_m: float
    far_m: float
    rate_hz: float
    phase_s: float

    def frame_times(self, t0_s: float, t1_s: float) -> FloatArray:
        """Frame start times in [t0, t1) (the camera's own clock: phase + k / rate)."""
        k0 = max(0, math.ceil((t0_s - self.phase_s) * self.rate_hz - 1e-9))
        k1 = math.ceil((t1_s - self.phase_s) * self.rate_hz - 1e-9)
        return self.phase_s + np.arange(k0, max(k0, k1)) / self.rate_hz


@dataclass(frozen=True)
class OcclusionSpec:
    """The intent's visibility requirement, thresholds named as the intent names them.

    Before emergence (camera frames in ``[t_emerge_s - pre_window_s,
    t_emerge_s)``, at least ``min_frames_before`` of them) the target's
    visible fraction stays ≤ ``max_visible_before``; from emergence to
    ``t_end_s`` it is ≥ ``min_visible_after`` in at least
    ``min_frames_after`` frames. ``occluders`` are actor ids whose boxes
    block rays (static obstacles always do).
    """

    target: str
    observer: str
    camera: CameraView
    occluders: tuple[str, ...]
    t_emerge_s: float
    t_end_s: float
    max_visible_before: float
    min_visible_after: float
    min_frames_after: int
    min_frames_before: int
    pre_window_s: float


def blocked_by_boxes(origins: FloatArray, points: FloatArray, boxes: FloatArray) -> NDArray[np.bool_]:
    """Which rays origin → point pass through any box.

    Args:
        origins: (F, 3) ray origins (one per frame), world metres.
        points: (F, P, 3) ray ends.
        boxes: (F, B, 7) or (B, 7) rows ``(x, y, yaw, half_length, half_width, z0, z1)``.

    Returns:
        (F, P) bool.
    """
    F, P = points.shape[:2]
    if boxes.size == 0:
        return np.zeros((F, P), dtype=bool)
    if boxes.ndim == 2:
        boxes = np.broadcast_to(boxes, (F,) + boxes.shape)
    o = origins[:, None, None, :]  # F,1,1,3
    d = points[:, :, None, :] - o  # F,P,1,3
    b = boxes[:, None, :, :]  # F,1,B,7
    c, s = np.cos(b[..., 2]), np.sin(b[..., 2])
    rx, ry = o[..., 0] - b[..., 0], o[..., 1] - b[..., 1]
    # Origin and direction in each box's frame (rotation about z by -yaw).
    ox, oy = c * rx + s * ry, -s * rx + c * ry
    dx, dy = c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1]
    oz, dz = np.broadcast_to(o[..., 2], ox.shape), d[..., 2]
    t_in = np.zeros(np.broadcast_shapes(ox.shape, dx.shape))
    t_out = np.ones_like(t_in)
    with np.errstate(divide="ignore", invalid="ignore"):
        for origin, direction, lo, hi in ((ox, dx, -b[..., 3], b[..., 3]), (oy, dy, -b[..., 4], b[..., 4]),
                                          (oz, dz, b[..., 5], b[..., 6])):
            t1 = (lo - origin) / direction
            t2 = (hi - origin) / direction
            parallel = np.abs(direction) < 1e-12
            inside = (origin >= lo) & (origin <= hi)
            near = np.where(parallel, np.where(inside, -np.inf, np.inf), np.minimum(t1, t2))
            far = np.where(parallel, np.where(inside, np.inf, -np.inf), np.maximum(t1, t2))
            t_in = np.maximum(t_in, near)
            t_out = np.minimum(t_out, far)
    hit = (t_in < t_out) & (t_out > RAY_EPS) & (t_in < 1.0 - RAY_EPS)
    return np.asarray(hit.any(axis=2))  # an array for axis=2 (numpy's stubs say ``bool | NDArray``)


def body_points(x: FloatArray, y: FloatArray, radius_m: float, height_m: float,
                eye_xy: FloatArray) -> FloatArray:
    """(F, P, 3) sample points on an upright body at (x, y), spread across it as seen from ``eye_xy`` (F, 2)."""
    bearing = np.arctan2(y - eye_xy[:, 1], x - eye_xy[:, 0])
    across = np.linspace(-0.8, 0.8, BODY_POINTS_ACROSS) * radius_m
    px = x[:, None] - np.sin(bearing)[:, None] * across[None, :]
    py = y[:, None] + np.cos(bearing)[:, None] * across[None, :]
    z = np.asarray(BODY_HEIGHT_FRACTIONS) * height_m
    F = len(x)
    pts = np.empty((F, BODY_POINTS_ACROSS, len(z), 3))
    pts[..., 0] = px[:, :, None]
    pts[..., 1] = py[:, :, None]
    pts[..., 2] = z[None, None, :]
    return pts.reshape(F, -1, 3)


def camera_poses(observer: Body, camera: CameraView, t_s: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Camera origins (F, 3) and rotations world←camera (F, 3, 3): ``T_world_ego(t) @ T_ego_mount``."""
    x, y, yaw, _ = observer.motion.pose(t_s)
    c, s = np.cos(yaw), np.sin(yaw)
    R_world_body = np.zeros((len(t_s), 3, 3))
    R_world_body[:, 0, 0], R_world_body[:, 0, 1] = c, -s
    R_world_body[:, 1, 0], R_world_body[:, 1, 1] = s, c
    R_world_body[:, 2, 2] = 1.0
    mount = camera.T_body_mount
    origins = np.einsum("fij,j->fi", R_world_body, mount[:3, 3]) + np.stack([x, y, np.zeros_like(x)], axis=1)
    return origins, R_world_body @ mount[:3, :3]


def in_frustum(camera: CameraView, origins: FloatArray, R_world_cam: FloatArray, points: FloatArray) -> NDArray[np.bool_]:
    """(F, P): point inside the camera's horizontal/vertical field of view and range (mount frame: x forward)."""
    rel = np.einsum("fji,fpj->fpi", R_world_cam, points - origins[:, None, :])
    fwd, left, up = rel[..., 0], rel[..., 1], rel[..., 2]
    dist = np.linalg.norm(rel, axis=-1)
    az = np.abs(np.arctan2(left, fwd))
    el = np.abs(np.arctan2(up, np.hypot(fwd, left)))
    inside: NDArray[np.bool_] = (fwd > camera.near_m) & (dist <= camera.far_m) & (az <= camera.hfov_rad / 2) \
        & (el <= camera.vfov_rad / 2)
    return inside


def visible_fractions(scene_bodies: dict[str, Body], spec: OcclusionSpec, t_s: FloatArray,
                      static_boxes: list[Box]) -> FloatArray:
    """Visible fraction of ``spec.target`` to ``spec.observer``'s camera at each time in ``t_s``."""
    if len(t_s) == 0:
        return np.zeros(0)
    target = scene_bodies[spec.target]
    origins, R = camera_poses(scene_bodies[spec.observer], spec.camera, t_s)
    tx, ty, _, _ = target.motion.pose(t_s)
    pts = body_points(tx, ty, target.radius_m, target.height_m, origins[:, :2])
    rows = [b.as_row() for b in static_boxes]
    F = len(t_s)
    dynamic = []
    for actor in spec.occluders:
        body = scene_bodies[actor]
        x, y, yaw, _ = body.motion.pose(t_s)
        dynamic.append(np.stack([x, y, yaw, np.full(F, body.length_m / 2), np.full(F, body.width_m / 2),
                                 np.zeros(F), np.full(F, body.height_m)], axis=1))
    boxes = np.concatenate([np.broadcast_to(np.asarray(rows, dtype=np.float64).reshape(-1, 7), (F, len(rows), 7)),
                            np.stack(dynamic, axis=1) if dynamic else np.zeros((F, 0, 7))], axis=1)
    clear = in_frustum(spec.camera, origins, R, pts) & ~blocked_by_boxes(origins, pts, boxes)
    fractions: FloatArray = clear.mean(axis=1)
    return fractions


def occlusion_area(scene_bodies: dict[str, Body], spec: OcclusionSpec, t_s: FloatArray):  # type: ignore[no-untyped-def]
    """Bounding box of every camera origin and target position in the windows (+1 m): occluders outside cannot block."""
    ox, oy, _, _ = scene_bodies[spec.observer].motion.pose(t_s)
    tx, ty, _, _ = scene_bodies[spec.target].motion.pose(t_s)
    xs, ys = np.concatenate([ox, tx]), np.concatenate([oy, ty])
    return shapely.box(xs.min() - 1.0, ys.min() - 1.0, xs.max() + 1.0, ys.max() + 1.0)


class OcclusionStage(_StaticStage):
    """Target hidden before emergence, seen after (for intents that declare an :class:`OcclusionSpec`)."""

    name = "occlusion"
    cost_rank = 24

    def check(self, proposal: Proposal) -> Verdict:
        spec: OcclusionSpec | None = proposal.scene.occlusion
        if spec is None:
            return PASS
        bodies = proposal.scene.bodies
        before = spec.camera.frame_times(max(0.0, spec.t_emerge_s - spec.pre_window_s), spec.t_emerge_s)
        after = spec.camera.frame_times(spec.t_emerge_s, min(spec.t_end_s, proposal.scene.clip_s))
        if len(before) < spec.min_frames_before:
            return Fail("occlusion.pre_window_short", f"only {len(before)} camera frames before emergence at "
                        f"t={spec.t_emerge_s:.2f} s (need {spec.min_frames_before})", ("ttc_target", "ego_speed"))
        boxes = self.ctx.geometry.obstacle_boxes(occlusion_area(bodies, spec, np.concatenate([before, after])))
        vis_before = visible_fractions(bodies, spec, before, boxes)
        worst = float(vis_before.max())
        proposal.measured["occlusion.max_visible_before"] = round(worst, 4)
        if worst > spec.max_visible_before:
            k = int(np.argmax(vis_before))
            return Fail("occlusion.visible_before_emergence", f"{spec.target} is {worst:.2f} visible at "
                        f"t={before[k]:.2f} s before emergence at {spec.t_emerge_s:.2f} s "
                        f"(max_visible_before {spec.max_visible_before})", ("spawn",))
        # After emergence, look a second at a time: the reveal is usually in the first, and the rest is not needed.
        seen_times: list[float] = []
        chunk = max(1, int(round(spec.camera.rate_hz)))
        for start in range(0, len(after), chunk):
            part = after[start:start + chunk]
            seen_times.extend(part[visible_fractions(bodies, spec, part, boxes) >= spec.min_visible_after].tolist())
            if len(seen_times) >= spec.min_frames_after:
                break
        proposal.measured["occlusion.frames_visible_after"] = len(seen_times)
        if len(seen_times) < spec.min_frames_after:
            return Fail("occlusion.not_revealed", f"{spec.target} is >= {spec.min_visible_after} visible in "
                        f"{len(seen_times)} frames after emergence (need {spec.min_frames_after})", ("spawn",))
        proposal.measured["t_reveal_s"] = round(float(seen_times[0]), 4)
        return PASS


def rect_footprints(bodies: dict[str, Body], t_s: FloatArray) -> dict[str, FloatArray]:
    """(T, 4, 2) footprint corners of every body at times ``t_s``."""
    out = {}
    for actor, body in bodies.items():
        x, y, yaw, _ = body.motion.pose(t_s)
        out[actor] = footprint_corners(x, y, yaw, body.length_m / 2, body.width_m / 2)
    return out


_CAMERAS: dict[tuple[int, str | None], tuple[object, CameraView]] = {}


def camera_view(template, sensor: str | None = None) -> CameraView:  # type: ignore[no-untyped-def]
    """The template rig's camera (``sensor``, or the first camera by name) as a :class:`CameraView` (cached)."""
    hit = _CAMERAS.get((id(template), sensor))
    if hit is not None and hit[0] is template:
        return hit[1]
    view = _camera_view(template, sensor)
    _CAMERAS[(id(template), sensor)] = (template, view)
    return view


def _camera_view(template, sensor: str | None) -> CameraView:  # type: ignore[no-untyped-def]
    """The camera as the rig's scenario view gives it (mount and frustum only: what the world hash covers)."""
    cams = {c.name: c for c in camera_frustums(template.sensor_rig)}
    if not cams:
        raise ValueError(f"{template.id}: the sensor rig has no camera")
    cam = cams[sensor if sensor is not None else next(iter(cams))]
    hfov = math.radians(cam.hfov_deg)
    vfov = 2 * math.atan(math.tan(hfov / 2) * cam.aspect_h_over_w)
    mount = mount_transform(cam.mount_translation_m, cam.mount_rpy_deg)
    return CameraView(mount, hfov, vfov, cam.near_m, cam.far_m, cam.rate_hz, cam.phase_s)
