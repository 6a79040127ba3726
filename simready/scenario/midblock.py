"""Mid-block crossings (SPEC §18, §19): a pedestrian leaves the footway between two parked vehicles and crosses
the carriageway where no crosswalk is.

The walkable graph has footways and crosswalks only; a mid-block crossing is
the manifest's ``walk.via`` — points walked from the pedestrian's start before
its walk route, off the graph — over one of the map's parking sites
(:func:`simready.world.affordances.kerb_gap_sites`: a parking lane or region,
or a kerb by the kerbside rule, with a footway beside it and another across the
carriageway). Two helpers build one:

* :func:`kerb_gap` — two vehicles parked nose to tail in a site with a gap of a
  given width between their bumpers at a given lane arc length, centred across
  the site (:func:`site_pose` places any parked vehicle the same way, and
  :func:`parkable` keeps it off the template's own static instances and off crosswalks);
* :func:`midblock_crossing` — the straight path from a start that far behind the
  kerb, through the gap, across the carriageway at right angles to the site's
  lane, onto the far footway and on to its walkable-graph nodes; with the arc
  lengths where it leaves the footway and passes the parked row's traffic-side
  edge (where it emerges from between the vehicles), and the conflict with a
  route (:meth:`MidBlockCrossing.conflict`).

The ladder checks what the program planned: the reachability stage walks the
via legs over footways and carriageway (never through a building), the coarse
rollout lets the pedestrian stand on the carriageway only on such a crossing.
Frames: the template's world frame; lateral offsets ``t`` are + left of the
site's lane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely

from simready.scenario.context import ProgramContext
from simready.scenario.geometry import CROSSING_SURFACES, WALKABLE_SURFACES, CoarsePath, rect_polygon
from simready.world.affordances import GapSite, ParkingSite, crossing_sidewalks

Point = tuple[float, float]
Pose = tuple[float, float, float]
#: Sampling step along a crossing path when locating the conflict with a route (m).
CROSSING_STEP_M = 0.02
#: The crossing ends this far onto the far footway, or half its width when narrower (m).
FAR_INSET_M = 0.6
#: Clearance between a parked footprint and its site's outline, and between the row and the site's ends (m).
SITE_MARGIN_M = 0.05


@dataclass(frozen=True)
class KerbGap:
    """A gap of ``width_m`` between the bumpers of two vehicles parked nose to tail in ``site`` (``rear`` before
    the gap in traffic order, ``front`` after it), its centre at lane arc length ``s_m`` of the site's lane.

    ``t_row_m`` is the lateral offset of the parked row's traffic-side edge (where a pedestrian coming through the
    gap emerges), ``t_kerb_m`` of the near footway's edge (the kerb), ``t_far_m`` of the far footway's edge.
    """

    gap_site: GapSite
    s_m: float
    width_m: float
    rear: Pose
    front: Pose
    t_row_m: float
    t_kerb_m: float
    t_far_m: float

    @property
    def site(self) -> ParkingSite:
        return self.gap_site.site


@dataclass(frozen=True)
class MidBlockCrossing:
    """A pedestrian's planned mid-block crossing: ``start`` (on the near footway), ``via`` (the manifest's
    ``walk.via``: where it reaches the far footway), ``route`` (two walkable-graph nodes of the far footway it
    walks on to) and ``path`` (start → via → route). Arc lengths along ``path`` (m): ``s_kerb_m`` where it leaves
    the near footway, ``s_row_m`` where its centre passes the parked row's traffic-side edge."""

    start: Point
    via: tuple[Point, ...]
    route: tuple[str, ...]
    path: CoarsePath
    s_kerb_m: float
    s_row_m: float

    def conflict(self, route: CoarsePath, corridor_half_m: float) -> tuple[float, float, float] | None:
        """Where the crossing meets ``route``'s corridor (± ``corridor_half_m``): ``(s on route at the crossing
        point, s on the crossing there, s on the crossing where it enters the corridor)``; None if it never does."""
        s = np.arange(0.0, self.path.length_m + CROSSING_STEP_M / 2, CROSSING_STEP_M)
        x, y, _ = self.path.xy_yaw(s)
        s_route, t_lat = route.lateral(np.stack([x, y], axis=1))
        inside = (np.abs(t_lat) <= corridor_half_m) & (s_route > 0) & (s_route < route.length_m)
        if not inside.any():
            return None
        k_enter = int(np.argmax(inside))
        cross = np.nonzero(np.sign(t_lat[k_enter:]) != np.sign(t_lat[k_enter]))[0]
        k_x = k_enter + (int(cross[0]) if len(cross) else 0)
        return float(s_route[k_x]), float(s[k_x]), float(s[k_enter])

    def point_at(self, s_m: float) -> Point:
        x, y, _ = self.path.xy_yaw(s_m)
        return float(x), float(y)


def site_pose(ctx: ProgramContext, site: ParkingSite, s_m: float) -> Pose | None:
    """The pose ``(x, y, yaw)`` of a vehicle parked in ``site`` at lane arc length ``s_m``: centred across the site
    (its extent on the perpendicular to the lane there), heading with the lane; None where the perpendicular
    misses the site."""
    g = ctx.template.lane_graph.lane(site.lane)
    if not 0.0 <= s_m <= g.length_m:
        return None
    span = _site_span(ctx, site, s_m)
    if span is None:
        return None
    x, y = g.point_at(s_m, 0.5 * (span[0] + span[1]))
    return float(x), float(y), float(g.pose_at(s_m)[2])


def parkable(ctx: ProgramContext, pose: Pose, length_m: float, width_m: float, height_m: float) -> bool:
    """Whether a vehicle ``length_m`` × ``width_m`` × ``height_m`` may stand at ``pose``: its footprint (with
    :data:`SITE_MARGIN_M` to spare) meets no static obstacle of the template below its roof (a vehicle the
    template parks there itself, a pole; not a street light's arm above it: the non-penetration stage's test) and
    no crosswalk (no one parks on a crossing)."""
    fp = rect_polygon(pose[0], pose[1], pose[2], length_m + 2 * SITE_MARGIN_M, width_m + 2 * SITE_MARGIN_M)
    if fp.intersects(ctx.geometry.surface(("crosswalk",))):
        return False
    return not any(o.z1 > 0.0 and o.z0 < height_m and fp.intersection(o.footprint).area > 0.0
                   for o in ctx.geometry.obstacles_near(fp))


def kerb_gap(ctx: ProgramContext, gap_site: GapSite, s_m: float, width_m: float, rear_lw: tuple[float, ...],
             front_lw: tuple[float, ...]) -> KerbGap | None:
    """Two vehicles (``(length, width, height)`` each) parked nose to tail in ``gap_site``'s site, ``width_m`` apart
    bumper to bumper around lane arc length ``s_m``; None when either footprint would leave the site (its ends or
    its width, less :data:`SITE_MARGIN_M`) or is not :func:`parkable`, or the footways are not there at ``s_m``."""
    site = gap_site.site
    s_rear = s_m - width_m / 2 - rear_lw[0] / 2
    s_front = s_m + width_m / 2 + front_lw[0] / 2
    if s_rear - rear_lw[0] / 2 < site.s0_m + SITE_MARGIN_M or s_front + front_lw[0] / 2 > site.s1_m - SITE_MARGIN_M:
        return None
    stations = (s_rear - rear_lw[0] / 2, s_rear, s_m, s_front, s_front + front_lw[0] / 2)
    spans = [_site_span(ctx, site, s) for s in stations]
    if any(sp is None or sp[1] - sp[0] < max(rear_lw[1], front_lw[1]) for sp in spans):
        return None
    rear, front = site_pose(ctx, site, s_rear), site_pose(ctx, site, s_front)
    found = crossing_sidewalks(ctx.template, site, s_m)
    if rear is None or front is None or found is None or found[:2] != (gap_site.near_sidewalk, gap_site.far_sidewalk):
        return None
    if not (parkable(ctx, rear, *rear_lw[:3]) and parkable(ctx, front, *front_lw[:3])):
        return None
    span = spans[2]
    assert span is not None
    t_row = 0.5 * (span[0] + span[1]) + 0.5 * max(rear_lw[1], front_lw[1])
    return KerbGap(gap_site, round(s_m, 4), round(width_m, 4), rear, front, round(t_row, 4), found[2], found[3])


def midblock_crossing(ctx: ProgramContext, gap: KerbGap, depth_m: float) -> MidBlockCrossing | None:
    """The straight crossing through ``gap`` from ``depth_m`` behind the kerb on the near footway, at right angles to
    the site's lane, to :data:`FAR_INSET_M` onto the far footway, then on to the far footway's nearest
    walkable-graph node (reached in a straight line on foot) and a neighbour of it. None when the line leaves the
    footways and carriageway, the start is off the near footway, or the far footway has no node in reach."""
    t = ctx.template
    g = t.lane_graph.lane(gap.site.lane)
    far_shape = t.region_by_id[gap.gap_site.far_sidewalk].shape
    near_shape = t.region_by_id[gap.gap_site.near_sidewalk].shape
    start = g.point_at(gap.s_m, gap.t_kerb_m - depth_m)
    if not near_shape.contains(shapely.Point(start)):
        return None
    # How deep the far footway is on this line, so the crossing ends inside it.
    probe = far_shape.intersection(shapely.LineString([g.point_at(gap.s_m, gap.t_far_m),
                                                       g.point_at(gap.s_m, gap.t_far_m + 10.0)]))
    depth_far = probe.length if not probe.is_empty else 0.0
    if depth_far <= 0.1:
        return None
    far = g.point_at(gap.s_m, gap.t_far_m + min(FAR_INSET_M, 0.5 * depth_far))
    if not ctx.geometry.surface(CROSSING_SURFACES).covers(shapely.LineString([start, far])):
        return None
    walkable = ctx.geometry.surface(WALKABLE_SURFACES)
    walk = t.walk_graph
    nodes = sorted((math.dist(far, xy), n) for n, xy in walk.nodes.items()
                   if far_shape.buffer(0.05).contains(shapely.Point(xy)))
    first = next((n for _, n in nodes if walk.adjacency.get(n) and
                  walkable.covers(shapely.LineString([far, walk.nodes[n]]))), None)
    if first is None:
        return None
    # On along the far footway: its first neighbour by id.
    neighbour = sorted(walk.adjacency[first])[0]
    path = CoarsePath.from_points([start, far, walk.nodes[first], walk.nodes[neighbour]])
    s_kerb = path.s_of(*g.point_at(gap.s_m, gap.t_kerb_m))
    s_row = path.s_of(*g.point_at(gap.s_m, gap.t_row_m))
    return MidBlockCrossing((round(start[0], 4), round(start[1], 4)), ((round(far[0], 4), round(far[1], 4)),),
                            (first, neighbour), path, round(s_kerb, 4), round(s_row, 4))


def _site_span(ctx: ProgramContext, site: ParkingSite, s_m: float) -> tuple[float, float] | None:
    """The lateral offsets ``(t_outer, t_inner)`` (m, + left of the lane) of the site on the perpendicular at
    ``s_m``, less :data:`SITE_MARGIN_M` each side; None where it misses the site."""
    g = ctx.template.lane_graph.lane(site.lane)
    line = shapely.LineString([g.point_at(s_m, g.width_m), g.point_at(s_m, -12.0)])
    hit = ctx.geometry.site_area(site, 0.0).intersection(line)
    if hit.is_empty:
        return None
    ts = [g.project(x, y)[1] for part in getattr(hit, "geoms", [hit]) for x, y in part.coords]
    return min(ts) + SITE_MARGIN_M, max(ts) - SITE_MARGIN_M
