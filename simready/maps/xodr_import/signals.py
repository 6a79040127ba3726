"""Signals: traffic lights over the lanes they bind to (validity, orientation, references, junction controllers)
with their stop lines, pedestrian lights over their crosswalks, and static signs as lane facts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from shapely.geometry import LineString

from simready.maps import defaults
from simready.maps.opendrive import Road, Signal
from simready.maps.refline import reference_poses
from simready.maps.xodr_import.base import BuilderBase
from simready.maps.xodr_import.model import lane_name, safe_id
from simready.maps.xodr_import.outlines import rounded
from simready.maps.xodr_import.policy import PEDESTRIAN_LIGHT_REACH_M, PEDESTRIAN_LIGHT_TYPES, STOP_LINE_END_MARGIN_M
from simready.maps.xodr_import.sampling import poly_at


class Signals(BuilderBase):
    """Traffic lights, pedestrian lights and signs."""

    def _signals(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """Traffic lights over the lanes they bind to, and static signs as lane facts (:meth:`_sign`).

        A light binds to the imported driving lanes its ``validity`` names (or,
        without one, the lanes its ``orientation`` faces), on its own road and
        on every road holding a ``<signalReference>`` to it; a light that
        binds to none but is switched by a junction's ``<controller>`` binds
        to its road's lanes flowing into that junction. Its stop line is on
        the first bound lane at the signal's s, clamped to that lane section.
        Signal groups are the controllers (their phases offset, see
        :meth:`_signal_offsets`).
        """
        signals, instances, controls = [], [], []
        by_id = {sig.id: (road, sig) for road in self.odr.roads for sig in road.signals}
        refs: dict[str, list[tuple[Road, Any]]] = {}
        for road in self.odr.roads:
            for ref in road.signal_refs:
                refs.setdefault(ref.id, []).append((road, ref))
        offset_of = self._signal_offsets()
        junction_of = {sig: j.id for j in self.odr.junctions for c in j.controllers
                       for sig in self.odr.controllers.get(c, ())}
        cycle = sum(p["duration_s"] for p in defaults.DEFAULT_SIGNAL_PROGRAM)
        for road in self.odr.roads:
            for sig in road.signals:
                if not sig.validity and sig.orientation not in ("+", "-") and sig.id in junction_of:
                    bound = []  # neither validity nor orientation: the junction's controller says which approach
                else:
                    bound = [(name, road, s) for name, s in self._controlled(road, sig.s, sig.validity,
                                                                            sig.orientation)]
                for ref_road, ref in refs.get(sig.id, ()):
                    bound += [(name, ref_road, s)
                              for name, s in self._controlled(ref_road, ref.s, ref.validity, ref.orientation)]
                if not bound and sig.id in junction_of:
                    bound = [(name, road, sig.s) for name in self._into_junction(road, junction_of[sig.id])]
                    if bound:
                        self.skipped["traffic lights bound through their junction's controller"] += 1
                if sig.dynamic and sig.type in PEDESTRIAN_LIGHT_TYPES:
                    self._pedestrian_light(road, sig, refs.get(sig.id, ()), offset_of.get(sig.id, 0.0) * cycle)
                    continue
                if not sig.dynamic:
                    self._sign(sig, sorted({name for name, _, _ in bound}))
                    continue
                if not bound:
                    self.skipped["traffic lights valid for no imported driving lane"] += 1
                    continue
                lanes = sorted({name for name, _, _ in bound})
                stop_lane, stop_road, stop_s = bound[0]
                for ref_id in sig.references:
                    if ref_id in by_id and by_id[ref_id][1].type == "294" and by_id[ref_id][0].id == stop_road.id:
                        stop_s = by_id[ref_id][1].s
                length = LineString(self.lanes[stop_lane]["polyline"]).length
                s_m = min(max(self._lane_s(stop_lane, stop_s), 0.0), max(0.0, length - STOP_LINE_END_MARGIN_M))
                sid = f"signal_{safe_id(sig.id)}"
                signals.append({
                    "id": sid, "controls": lanes,
                    "stop_line": {"lane": stop_lane, "s_m": rounded(s_m)},
                    "program": [dict(p) for p in defaults.DEFAULT_SIGNAL_PROGRAM],
                    "offset_s": rounded(offset_of.get(sig.id, 0.0) * cycle),
                })
                at = np.array([min(max(sig.s, 0.0), road.length)])
                pose = reference_poses(road.geometries, at)
                h = float(pose.hdg[0])
                x = float(pose.x[0]) - sig.t * math.sin(h)
                y = float(pose.y[0]) + sig.t * math.cos(h)
                z = float(poly_at(road.elevation, at)[0]) if road.elevation else 0.0
                faces = h + sig.h_offset + (math.pi if sig.orientation != "-" else 0.0)
                yaw = math.degrees((faces + math.pi) % (2 * math.pi) - math.pi)
                instances.append({"name": f"head_{sid}", "asset": defaults.SIGNAL_HEAD_ASSET,
                                  "pose": {"x": rounded(x), "y": rounded(y), "z": rounded(z), "yaw_deg": rounded(yaw)}})
                controls.append({"type": "controls", "instance": f"head_{sid}", "signal": sid})
        if signals:
            self.report.defaults.append(f"{len(signals)} traffic light(s): OpenDRIVE holds no timing; fixed-time "
                                        f"{cycle:g} s program, junction controllers offset by cycle/n")
        return sorted(signals, key=lambda s: s["id"]), sorted(instances, key=lambda i: i["name"]), \
            sorted(controls, key=lambda c: c["instance"])

    def _pedestrian_light(self, road: Road, sig: Any, refs: Any, offset_s: float) -> None:
        """A pedestrian light (:data:`PEDESTRIAN_LIGHT_TYPES`) over the crosswalks of its road (and of the roads
        referencing it) whose object lies within :data:`PEDESTRIAN_LIGHT_REACH_M` of it along s; the program is
        :data:`~simready.maps.defaults.PEDESTRIAN_SIGNAL_PROGRAM` (walk while the vehicles' default program is red)
        with the offset its controller gives the vehicles' lights."""
        near = sorted(cw for cw, (rid, s) in self.crosswalk_at.items()
                      if (rid == road.id and abs(s - sig.s) <= PEDESTRIAN_LIGHT_REACH_M)
                      or any(rid == ref_road.id and abs(s - ref.s) <= PEDESTRIAN_LIGHT_REACH_M for ref_road, ref in refs))
        if not near:
            self.skipped["pedestrian lights near no imported crosswalk"] += 1
            return
        self.pedestrian_signals.append({"id": f"ped_signal_{safe_id(sig.id)}", "crosswalks": near,
                                        "program": [dict(p) for p in defaults.PEDESTRIAN_SIGNAL_PROGRAM],
                                        "offset_s": rounded(offset_s)})
        self.skipped["pedestrian lights: imported as pedestrian signals over their crosswalks"] += 1

    def _sign(self, sig: Any, lanes: list[str]) -> None:
        """A static sign as lane facts: stop (206) and yield (205) a lane's right of way, a speed limit (274) its speed.

        Types are the German catalogue's, which OpenDRIVE samples and CARLA
        maps use; a 274's limit is its ``value`` (in its ``unit``, km/h by
        default), else its ``subtype`` in km/h. A stop-line marking (294) is
        read by the lights that reference it. Anything else is counted.
        """
        if sig.type == "294":
            return
        if sig.type in ("205", "206") and lanes:
            rule = "stop" if sig.type == "206" else "yield"
            for name in lanes:
                if self.lanes[name].get("right_of_way") != "stop":
                    self.lanes[name]["right_of_way"] = rule
            self.skipped[f"{rule} signs: imported as lane right of way"] += 1
            return
        if sig.type == "274" and lanes:
            limit = _speed_sign_mps(sig)
            if limit is not None:
                for name in lanes:
                    self.lanes[name]["speed_limit_mps"] = round(limit, 3)
                    if "speed_limit_mps" in self.regions.get(name, {}):
                        self.regions[name]["speed_limit_mps"] = round(limit, 3)
                self.skipped["speed limit signs: imported as lane speed limits"] += 1
                return
        self.skipped[f"static signals (type {sig.type or '?'})"] += 1

    def _into_junction(self, road: Road, junction: str) -> list[str]:
        """Imported driving lanes of ``road`` that flow into ``junction`` (at the road end the junction is at)."""
        link = road.successor
        at_end = link is not None and link.element_type == "junction" and link.element_id == junction
        k = len(road.sections) - 1 if at_end else 0
        out = []
        for lane in road.sections[k].lanes:
            name = lane_name((road.id, k, lane.id))
            if name in self.lane_by_name and self.lanes[name]["kind"] in ("driving", "turn") \
                    and self.lane_by_name[name].forward == at_end:
                out.append(name)
        return sorted(out)

    def _signal_offsets(self) -> dict[str, float]:
        """Fraction of the cycle each signal's controller is offset by: controller k of n in its junction → k/n."""
        out: dict[str, float] = {}
        for j in self.odr.junctions:
            ctrls = [c for c in j.controllers if c in self.odr.controllers]
            for k, cid in enumerate(ctrls):
                for sig in self.odr.controllers[cid]:
                    out[sig] = k / len(ctrls)
        return out

    def _controlled(self, road: Road, s: float, validity: tuple[tuple[int, int], ...],
                    orientation: str) -> list[tuple[str, float]]:
        """Imported driving lanes named by ``validity`` (else those ``orientation`` faces) with the road s of their
        stop line: in the lane section at ``s``, or — where a validity names lanes that section lacks — in the
        last earlier section holding them, the stop line clamped to that section's end (reported)."""
        k_at = max((i for i, sec in enumerate(road.sections) if sec.s <= max(s, 0.0) + 1e-9), default=0)
        for k in range(k_at, -1, -1):
            out = []
            for lane in road.sections[k].lanes:
                name = lane_name((road.id, k, lane.id))
                if name not in self.lane_by_name or self.lanes[name]["kind"] not in ("driving", "turn", "biking"):
                    continue
                if validity:
                    if not any(min(a, b) <= lane.id <= max(a, b) for a, b in validity):
                        continue
                elif orientation in ("+", "-") and self.lane_by_name[name].forward != (orientation == "+"):
                    continue
                out.append((abs(lane.id), name))
            if out:
                end = road.sections[k + 1].s if k + 1 < len(road.sections) else road.length
                if k != k_at or s > end:
                    self.report.repairs.append(f"road {road.id}: signal at s={s:g} is past the end of lane section "
                                               f"s={road.sections[k].s:g} (its lanes {', '.join(n for _, n in sorted(out))}): "
                                               f"stop line clamped to s={end:g}")
                return [(name, min(s, end)) for _, name in sorted(out)]
            if not validity:
                return []
        return []

    def _lane_s(self, name: str, road_s: float) -> float:
        """Arc length along lane ``name`` (in travel order) at road ``road_s``."""
        lane = self.lane_by_name[name]
        along = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(lane.centre, axis=0).T))])
        s = float(np.interp(road_s, lane.s, along))
        return s if lane.forward else float(along[-1]) - s


def _speed_sign_mps(sig: Signal) -> float | None:
    """The limit of a speed sign (m/s): its value in its unit (km/h when none), else its subtype in km/h."""
    units = {"km/h": 1.0 / 3.6, "mph": 0.44704, "m/s": 1.0, "": 1.0 / 3.6}
    if sig.value is not None and sig.value > 0 and sig.unit in units:
        return sig.value * units[sig.unit]
    try:
        kmh = float(sig.subtype)
    except ValueError:
        return None
    return kmh / 3.6 if 0 < kmh <= 300 else None
