"""Places derived from a template: the parking slots of an affordance, the window a crossing cuts from a lane."""

from __future__ import annotations

import math

from simready.world.template_model.relations import ParkingAffordance
from simready.world.template_model.world_template import WorldTemplate


def parking_slots(template: WorldTemplate, affordance_id: str) -> list[tuple[float, float, float]]:
    """Slot centres ``(x, y, yaw_rad)`` of a parking affordance, in traffic order.

    Slots of ``slot_length_m`` are laid along the long axis of the region's
    minimum rotated rectangle, centred across it. Their heading is that of
    the nearest driving lane (parked cars face the traffic flow of their
    side), derived rather than authored.
    """
    a = template.affordance(affordance_id)
    if not isinstance(a, ParkingAffordance):
        raise ValueError(f"{affordance_id!r} is a {a.type} affordance, not parking")
    c = list(template.region_by_id[a.region].shape.minimum_rotated_rectangle.exterior.coords)[:4]
    if math.dist(c[0], c[1]) >= math.dist(c[1], c[2]):
        start, end = _midpoint(c[3], c[0]), _midpoint(c[1], c[2])
    else:
        start, end = _midpoint(c[0], c[1]), _midpoint(c[2], c[3])
    length = math.dist(start, end)
    axis_yaw = math.atan2(end[1] - start[1], end[0] - start[0])
    mid = _midpoint(start, end)
    yaw = _traffic_heading(template, mid[0], mid[1], axis_yaw)
    if math.cos(yaw - axis_yaw) < 0.0:
        start, axis_yaw = end, axis_yaw + math.pi
    ux, uy = math.cos(axis_yaw), math.sin(axis_yaw)
    count = int(length / a.slot_length_m + 1e-9)
    margin = 0.5 * (length - count * a.slot_length_m)
    along = [margin + (k + 0.5) * a.slot_length_m for k in range(count)]
    return [(start[0] + d * ux, start[1] + d * uy, yaw) for d in along]


def _midpoint(p: tuple[float, ...], q: tuple[float, ...]) -> tuple[float, float]:
    return 0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1])


def _traffic_heading(template: WorldTemplate, x: float, y: float, fallback_yaw: float) -> float:
    """Heading (rad) of the driving lane nearest to (x, y); ``fallback_yaw`` when there is none."""
    if not any(lane.kind == "driving" for lane in template.lanes):
        return fallback_yaw
    lane, s, _ = template.lane_graph.nearest(x, y, kinds=("driving",))
    return template.lane_graph.pose_at(lane, s)[2]


def crossing_s_window(template: WorldTemplate, lane_id: str, region_id: str) -> tuple[float, float] | None:
    """Where lane ``lane_id`` runs through region ``region_id`` (e.g. a crosswalk), as ``(s_in, s_out)`` metres."""
    return template.lane_graph.s_window(lane_id, template.region_by_id[region_id].shape)
