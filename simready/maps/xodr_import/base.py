"""The template under construction: the regions, lanes, sidewalks, crosswalks and counts the builder's parts
(:mod:`.lanes`, :mod:`.marks`, :mod:`.walkable`, :mod:`.signals`) write into."""

from __future__ import annotations

from collections import Counter
from typing import Any

from shapely.geometry import box

from simready.maps.opendrive import OpenDriveMap
from simready.maps.xodr_import.model import ImportReport, LaneKey, SampledLane


class BuilderBase:
    """The sections of the template being built and what the report counts."""

    def __init__(self, src: str, odr: OpenDriveMap, report: ImportReport,
                 bounds: tuple[float, float, float, float] | None) -> None:
        self.src = src
        self.odr = odr
        self.report = report
        self.bounds = None if bounds is None else box(*bounds)
        self.regions: dict[str, dict[str, Any]] = {}
        self.lanes: dict[str, dict[str, Any]] = {}
        self.lane_by_name: dict[str, SampledLane] = {}
        self.lane_key_by_name: dict[str, LaneKey] = {}
        self.sidewalks: dict[str, SampledLane] = {}
        #: Crosswalk region id → (road id, s of its object), for the pedestrian lights (:meth:`_pedestrian_light`).
        self.crosswalk_at: dict[str, tuple[str, float]] = {}
        self.pedestrian_signals: list[dict[str, Any]] = []
        self.file_succ: dict[str, tuple[str, ...]] = {}
        self.crosswalks = 0
        self.parking_spaces: list[str] = []
        self.skipped: Counter[str] = Counter()
        self.defaulted_speed: set[str] = set()

    def _where(self, lane: SampledLane) -> str:
        road, k, lid = lane.key
        record = self.odr.road(road)
        assert record is not None  # the lane was sampled from it
        sec = record.sections[k]
        return f"road {road}, laneSection s={sec.s:g}, lane {lid} (line {lane.line})"
