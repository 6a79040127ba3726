"""Road marks: whether a lane may change to its same-direction neighbour (the mark between them) and the painted
lines (``markings``) the street geometry draws."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from shapely.geometry import LineString

from simready.maps.opendrive import RoadMark
from simready.maps.xodr_import.base import BuilderBase
from simready.maps.xodr_import.model import lane_name, safe_id
from simready.maps.xodr_import.outlines import as_points_z, rounded
from simready.maps.xodr_import.policy import CROSSABLE_MARKS, MAX_STEP_M
from simready.maps.xodr_import.sampling import RoadFrame, main_mark


class Marks(BuilderBase):
    """Lane changes and markings from the road marks."""

    def _lane_changes(self) -> None:
        """``change_left`` / ``change_right`` of each lane with a same-direction driving neighbour, from the road mark
        between them (SPEC §18: broken or none = allowed); see :func:`_change_allowed`."""
        for name, lane in sorted(self.lane_by_name.items()):
            road_id, k, lid = lane.key
            side = 1 if lid > 0 else -1
            inner_is_left = (lid < 0) == lane.forward
            for neighbour_id, outward in ((lid - side, False), (lid + side, True)):
                if neighbour_id == 0:
                    continue
                other = self.lane_by_name.get(lane_name((road_id, k, neighbour_id)))
                if other is None or other.forward != lane.forward \
                        or self.lanes[name]["kind"] in ("parking", "biking") \
                        or self.lanes[lane_name(other.key)]["kind"] in ("parking", "biking"):
                    continue
                # The mark between them is on the outer border of the one nearer the reference line.
                mark = lane.mark if outward else other.mark
                allowed = _change_allowed(mark, from_inner=outward, increasing=neighbour_id > lid)
                key = "change_right" if inner_is_left == outward else "change_left"
                self.lanes[name][key] = allowed

    def _markings(self) -> list[dict[str, Any]]:
        """Painted lines: each imported lane's outer-border road mark and each lane section's centre mark."""
        out = []
        for name, lane in sorted(self.lane_by_name.items()) + sorted(self.sidewalks.items()):
            if lane.mark is None or lane.mark.type in ("none", "") or name not in self.regions:
                continue
            pts, zs = as_points_z(lane.outer, None if lane.z is None else lane.z[1])
            if len(pts) >= 2:
                out.append(_marking(f"mark_{name}", lane.mark, pts, zs))
        for road in self.odr.roads:
            if self.bounds is not None:
                continue  # a centre mark is not clipped to --bounds
            ends = [sec.s for sec in road.sections[1:]] + [road.length]
            for k, (sec, end) in enumerate(zip(road.sections, ends)):
                mark = main_mark(sec, sec.centre_marks, end)
                if mark is None or mark.type in ("none", "") or end - sec.s < 0.1:
                    continue
                if not any(lane_name((road.id, k, ln.id)) in self.lanes for ln in sec.lanes):
                    continue
                n = max(2, math.ceil((end - sec.s) / MAX_STEP_M) + 1)
                frame = RoadFrame.at(road, np.linspace(sec.s, end, n))
                z = None
                if frame.z is not None or frame.tan_roll is not None:
                    z = (frame.z if frame.z is not None else 0.0) + \
                        (frame.offset * frame.tan_roll if frame.tan_roll is not None else 0.0) + np.zeros(n)
                pts, zs = as_points_z(frame.ref + frame.normal * frame.offset[:, None], z)
                if len(pts) >= 2 and LineString(np.asarray(pts)).is_simple:
                    out.append(_marking(f"mark_road{safe_id(road.id)}_sec{k}_centre", mark, pts, zs))
        return out


def _change_allowed(mark: RoadMark | None, from_inner: bool, increasing: bool) -> bool:
    """May a vehicle cross ``mark`` from the lane on its inner (``from_inner``) or outer side?

    The mark's ``laneChange`` attribute decides where the map gives it
    (``increase``/``decrease``: towards higher/lower lane ids, ``both``,
    ``none``); else its type: a single line by :data:`CROSSABLE_MARKS`, a
    double line (``solid broken``, ``broken solid``) read inner line first,
    crossable from the side its broken line faces.
    """
    if mark is None:
        return True
    if mark.lane_change in ("both", "none"):
        return mark.lane_change == "both"
    if mark.lane_change in ("increase", "decrease"):
        return (mark.lane_change == "increase") == increasing
    words = mark.type.split()
    if len(words) == 2 and words[0] != words[1]:
        return (words[0] if from_inner else words[1]) in CROSSABLE_MARKS
    return mark.type in CROSSABLE_MARKS


def _marking(mid: str, mark: RoadMark, pts: list[list[float]], zs: list[float] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": mid, "type": mark.type, "color": mark.color,
                           "width_m": rounded(mark.width) if mark.width > 0 else 0.12, "polyline": pts}
    if zs is not None:
        out["z"] = zs
    return out
