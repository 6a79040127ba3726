"""OpenDRIVE road and lane positions as world poses: the road network geometry the positions of a scenario name.

Poses are in the map's inertial frame, which is the template's world frame (m, rad, yaw counter-clockwise from +x).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
from lxml import etree

from simready.maps.opendrive import OpenDriveMap, Road
from simready.maps.refline import reference_poses
from simready.maps.xosc_import.document import Reader


class Roads:
    """World poses of OpenDRIVE road and lane positions (the map's inertial frame, the template's world frame)."""

    def __init__(self, odr: OpenDriveMap) -> None:
        self.roads: dict[str, Road] = {r.id: r for r in odr.roads}
        self.by_safe_id: dict[str, Road] = {re.sub(r"[^A-Za-z0-9_.\-]", "_", r.id): r for r in odr.roads}
        self._samples: dict[str, tuple[np.ndarray, Any]] = {}

    def project(self, road: Road, x: float, y: float) -> float:
        """Road ``s`` of the reference-line point nearest ``(x, y)`` (0.5 m samples, then the tangent step)."""
        if road.id not in self._samples:
            s_all = np.linspace(0.0, road.length, max(2, int(road.length / 0.5) + 1))
            self._samples[road.id] = (s_all, reference_poses(road.geometries, s_all))
        s_all, ref = self._samples[road.id]
        k = int(np.argmin(np.hypot(ref.x - x, ref.y - y)))
        s = float(s_all[k])
        for _ in range(3):
            rx, ry, rh = self.reference(road, s)
            step = (x - rx) * math.cos(rh) + (y - ry) * math.sin(rh)
            s = min(max(s + step, 0.0), road.length)
            if abs(step) < 1e-6:
                break
        return s

    def road(self, rd: Reader, el: etree._Element, road_id: str) -> Road:
        road = self.roads.get(road_id)
        if road is None:
            raise rd.error(el, f"no road {road_id!r} in the road network")
        return road

    @staticmethod
    def _poly(records: Any, s: float, base: float = 0.0) -> float:
        value = 0.0
        for rec in records:
            if base + rec.s0 <= s + 1e-9:
                value = rec.at(s - base)
        return value

    def reference(self, road: Road, s: float) -> tuple[float, float, float]:
        s = min(max(s, 0.0), road.length)
        pose = reference_poses(road.geometries, np.array([s]))
        return float(pose.x[0]), float(pose.y[0]), float(pose.hdg[0])

    def lane_t(self, rd: Reader, el: etree._Element, road: Road, lane_id: int, s: float) -> float:
        """Lateral position (m, + left of the reference line) of lane ``lane_id``'s centre at road ``s``."""
        sec = next((sec for sec in reversed(road.sections) if sec.s <= s + 1e-9), road.sections[0])
        t = self._poly(road.lane_offsets, s)
        if lane_id == 0:
            return t
        side = 1 if lane_id > 0 else -1
        lanes = {ln.id: ln for ln in sec.lanes}
        if lane_id not in lanes:
            raise rd.error(el, f"road {road.id} has no lane {lane_id} at s={s:g}")
        for k in range(1, abs(lane_id) + 1):
            lane = lanes.get(side * k)
            w = self._poly(lane.widths, s, sec.s) if lane is not None else 0.0
            t += side * (w if k < abs(lane_id) else w / 2.0)
        return t

    def pose(self, road: Road, s: float, t: float) -> tuple[float, float, float]:
        x, y, h = self.reference(road, s)
        return x - math.sin(h) * t, y + math.cos(h) * t, h

    def lane_heading(self, road: Road, lane_id: int, h: float) -> float:
        """Driving direction of a lane: along s for right lanes with right-hand traffic."""
        forward = (lane_id < 0) == (road.rule != "LHT")
        return h if forward else h + math.pi


def lane_step(road: Road, s: float, lane: int, d_lane: int) -> int:
    """The lane ``d_lane`` lanes to the left (+) of ``lane`` in its driving direction (skipping lane 0)."""
    sec = next((sec for sec in reversed(road.sections) if sec.s <= s + 1e-9), road.sections[0])
    ids = sorted(ln.id for ln in sec.lanes if ln.id != 0)
    # Left of travel: for a right lane (negative id) that is towards larger ids; for a left lane, smaller.
    step = d_lane if lane < 0 else -d_lane
    order = ids
    if lane not in order:
        return lane
    k = order.index(lane) + step
    return order[max(0, min(len(order) - 1, k))]
