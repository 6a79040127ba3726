"""What every part of the export reads: the manifest, its template, the road each template lane became, the
signal numbering, and the report of what was written or could not be expressed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scenariogeneration import xosc

from simready.maps.errors import MapError
from simready.maps.xosc_export.vocabulary import VERBS
from simready.scenario.manifest import ScenarioManifest
from simready.world.template import WorldTemplate


@dataclass
class XoscReport:
    """Per interaction: what was written, and what could not be expressed (one line each)."""

    written: list[str] = field(default_factory=list)
    not_expressed: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"written: {w}" for w in self.written] + [f"not expressed: {n}" for n in self.not_expressed]

    def to_json(self) -> dict[str, Any]:
        return {"verbs": {k: v or "not expressible" for k, v in VERBS.items()}, "written": self.written,
                "not_expressed": self.not_expressed}


class BuilderBase:
    """The manifest and template being exported, and the report."""

    def __init__(self, m: ScenarioManifest, t: WorldTemplate, road_of_lane: dict[str, int], report: XoscReport) -> None:
        self.m = m
        self.t = t
        self.road_of_lane = road_of_lane
        self.report = report
        self.signal_ids = {s.id: str(k + 1) for k, s in enumerate(sorted(t.signals, key=lambda s: s.id))}

    def time(self, t_s: float) -> float:
        return t_s + self.m.warmup_s

    def lane_position(self, lane: str, s_m: float) -> xosc.LanePosition:
        if lane not in self.road_of_lane:
            raise MapError(self.m.sample_id, "lane", f"lane {lane!r} is not in template {self.t.id}")
        return xosc.LanePosition(s_m, 0.0, "-1", str(self.road_of_lane[lane]))

    def _speed(self, actor_id: str | None) -> float:
        actor = next((a for a in self.m.actors if a.id == actor_id), None)
        return actor.initial.speed_mps if actor is not None else 0.0
