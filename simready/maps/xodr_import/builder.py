"""The whole template: lanes, marks, the walkable graph and signals built in order, with affordances, the ego and
the defaults every imported template carries."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from shapely.geometry import LineString, Polygon

from simready.maps import defaults
from simready.maps.errors import MapError
from simready.maps.xodr_import.lanes import Lanes
from simready.maps.xodr_import.marks import Marks
from simready.maps.xodr_import.model import SampledLane, lane_name
from simready.maps.xodr_import.outlines import rounded
from simready.maps.xodr_import.policy import DRIVING_TYPES
from simready.maps.xodr_import.signals import Signals
from simready.maps.xodr_import.walkable import Walkable


class Builder(Lanes, Marks, Walkable, Signals):
    """Turns sampled lanes and the map's signals and objects into template sections (sorted by id)."""

    def build(self, sampled: list[SampledLane]) -> dict[str, Any]:
        for lane in sorted(sampled, key=lambda ln: lane_name(ln.key)):
            self._add_lane(lane)
        self._links()
        self._drop_reversed()
        if not any(v["kind"] in ("driving", "turn") for v in self.lanes.values()):
            first = self.odr.roads[0]
            why = f"no lane of type {', '.join(DRIVING_TYPES)}"
            if self.report.repairs:
                why = f"{len(self.report.repairs)} repair(s) left nothing drivable (first: {self.report.repairs[0]})"
            raise MapError(self.src, "OpenDRIVE.road", f"no drivable lane in {len(self.odr.roads)} road(s)"
                           + (" inside --bounds" if self.bounds is not None else "")
                           + f": {why} (first road {first.id} at line {first.line})")
        self._lane_changes()
        walkable, crossings, relations = self._walkable()
        signals, instances, controls = self._signals()
        markings = self._markings()
        if self.defaulted_speed:
            self.report.defaults.append(f"{len(self.defaulted_speed)} road(s) without a <speed> record: "
                                        f"{defaults.DEFAULT_SPEED_MPS} m/s")
        self.report.skipped.extend(f"{what} x{n}" if n > 1 else what for what, n in sorted(self.skipped.items()))
        d = defaults.TEMPLATE_DEFAULTS
        ego_lane = max((v for v in self.lanes.values() if v["kind"] == "driving" and not self.lane_by_name[v["id"]].junction),
                       key=lambda v: (LineString(v["polyline"]).length, v["id"]), default=None)
        if ego_lane is None:
            ego_lane = min((v for v in self.lanes.values() if v["kind"] in ("driving", "turn")), key=lambda v: v["id"])
        ego_len = LineString(ego_lane["polyline"]).length
        affordances = [{"id": "ego_start", "type": "ego_start", "lane": ego_lane["id"], "s_m": rounded(min(5.0, 0.1 * ego_len))}]
        for name, row in sorted(self.lanes.items()):
            length = LineString(row["polyline"]).length
            if row["kind"] == "driving" and not self.lane_by_name[name].junction and length >= 10.0:
                affordances.append({"id": f"spawn_{name}", "type": "vehicle_spawn", "lane": name,
                                    "s_range_m": [0.0, rounded(0.9 * length)]})
            if row["kind"] == "parking" and _long_side(Polygon(np.asarray(self.regions[name]["polygon"]))) >= defaults.PARKING_SLOT_M:
                affordances.append({"id": f"parking_{name}", "type": "parking", "region": name,
                                    "slot_length_m": defaults.PARKING_SLOT_M})
        for rid in sorted(self.parking_spaces):
            if _long_side(Polygon(self.regions[rid]["polygon"])) >= defaults.PARKING_SLOT_M:
                affordances.append({"id": f"parking_{rid}", "type": "parking", "region": rid,
                                    "slot_length_m": defaults.PARKING_SLOT_M})
        affordances += [{"id": f"ped_spawn_{name}", "type": "pedestrian_spawn", "region": name} for name in sorted(self.sidewalks)]
        affordances += crossings
        return {
            "id": self.report.template_id,
            "version": d["version"],
            "schema_version": d["schema_version"],
            "ontology_version": d["ontology_version"],
            "description": f"Imported from OpenDRIVE map {self.report.source} by simready template import.",
            "coordinates": dict(d["coordinates"]),
            "regions": [self.regions[k] for k in sorted(self.regions)],
            "lanes": [self.lanes[k] for k in sorted(self.lanes)],
            "walkable": walkable,
            "relations": self._adjacent() + relations + controls,
            "affordances": sorted(affordances, key=lambda a: a["id"]),
            "instances": instances,
            "ego": {"asset": d["ego_asset"], "route": [ego_lane["id"]], "start_s_m": rounded(min(5.0, 0.1 * ego_len)),
                    "cruise_speed_mps": d["ego_cruise_speed_mps"]},
            "sensor_rig": d["sensor_rig"],
            "environment_controls": d["environment_controls"],
            "actor_types": list(d["actor_types"]),
            "behaviors_allowed": list(d["behaviors_allowed"]),
            "signals": signals,
            **({"markings": markings} if markings else {}),
            **({"pedestrian_signals": sorted(self.pedestrian_signals, key=lambda p: p["id"])}
               if self.pedestrian_signals else {}),
        }


def _long_side(poly: Polygon) -> float:
    c = list(poly.minimum_rotated_rectangle.exterior.coords)
    return max(math.dist(c[0], c[1]), math.dist(c[1], c[2]))
