"""Lanes and regions: each sampled lane's outline (repaired or left out), its region, its directed template lane and
centreline, lanes meeting against their direction left out, adjacency between lane regions."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from shapely import get_parts, is_valid_reason, make_valid, node
from shapely.geometry import LineString, Polygon

from simready.maps import defaults
from simready.maps.refline import Array
from simready.maps.xodr_import.base import BuilderBase
from simready.maps.xodr_import.links import LaneEnds, file_successors
from simready.maps.xodr_import.model import SampledLane, lane_name
from simready.maps.xodr_import.outlines import (as_points, as_points_z, cut_loop, is_loop, open_pieces, outline_ring,
                                                rounded, trimmed_lane, z_part)
from simready.maps.xodr_import.policy import (CENTRE_IN_REGION_M, DRIVING_TYPES, FOLD_TOLERANCE_M2, MAX_FOLD_PIECES,
                                              MAX_LOOP_SHARE, MAX_REPAIR_VERTICES, REGION_ONLY_TYPES,
                                              REPAIR_MIN_AREA_SHARE, SIDEWALK_TYPES, TURN_DEG)
from simready.maps.xodr_import.sampling import densified


class Lanes(BuilderBase):
    """Sampled lanes as template regions and lanes."""

    def _outline(self, lane: SampledLane) -> tuple[SampledLane, Polygon, list[list[float]], list[float] | None] | None:
        """The lane (resampled if that repaired it), its region outline, the ring written and the ring's heights.

        A folded outline (a lane wider than its curve's radius at a tight
        junction corner, borders crossing at a plan-view kink) is repaired in
        two steps, each reported: sampled four times finer, which removes folds
        that are sampling artefacts; then cut to its valid part on the lane's
        own side — the largest piece of the repaired polygon, which holds the
        lane's centre. A lane whose valid part keeps less than
        :data:`REPAIR_MIN_AREA_SHARE` of its area is left out (reported).
        """
        trimmed = trimmed_lane(lane)
        if trimmed is None:
            self.skipped[f"{lane.type} lanes of zero width"] += 1
            return None
        if trimmed is not lane:
            self.skipped["lanes trimmed to where their width is positive (a lane opening or closing)"] += 1
        lane = trimmed
        ring, z = outline_ring(lane)
        if len(ring) < 3:
            return None
        poly = Polygon(np.asarray(ring))
        if poly.is_valid:
            return lane, poly, ring, z
        reason = is_valid_reason(poly)
        if lane.resample is not None:
            assert lane.s_full is not None  # set with resample
            geo = lane.resample(4)
            finer = trimmed_lane(replace(lane, s=densified(lane.s_full, 4), inner=geo["inner"], outer=geo["outer"],
                                     centre=geo["centre"], width=geo["width"], z=geo["z"], resample=None))
        else:
            finer = None
        if finer is not None:
            ring2, z2 = outline_ring(finer)
            poly2 = Polygon(np.asarray(ring2)) if len(ring2) >= 3 else poly
            if poly2.is_valid:
                self.report.repairs.append(f"{self._where(lane)}: folded outline ({reason}) repaired by sampling "
                                           "4x finer")
                return finer, poly2, ring2, z2
            lane, poly, ring, z = finer, poly2, ring2, z2
        if len(ring) > MAX_REPAIR_VERTICES:
            self.report.repairs.append(f"{self._where(lane)}: left out: folded outline ({reason}) of {len(ring)} "
                                       f"vertices, over the {MAX_REPAIR_VERTICES} a repair is tried on")
            return None
        # A fold crosses its outline a few times (real maps: at most ~60 pieces once noded); hundreds of crossings
        # are not a fold but a record gone wrong, and would make the repair itself quadratic.
        pieces = len(get_parts(node(LineString(np.asarray(ring + ring[:1])))))
        if pieces > MAX_FOLD_PIECES:
            self.report.repairs.append(f"{self._where(lane)}: left out: outline crosses itself into {pieces} pieces "
                                       f"(over {MAX_FOLD_PIECES}): not a fold a repair can cut")
            return None
        fixed = make_valid(poly)
        parts = sorted((g for g in getattr(fixed, "geoms", [fixed]) if isinstance(g, Polygon) and g.area > 0.0),
                       key=lambda g: -g.area)
        expected = float(np.mean(lane.width)) * LineString(lane.centre).length
        if not parts:
            self.report.repairs.append(f"{self._where(lane)}: left out: outline has no valid part ({reason})")
            return None
        # The fold's loop is a hole or a separate piece: the outline is the largest piece's exterior.
        part = Polygon(parts[0].exterior)
        dropped = sum(g.area for g in parts[1:]) + sum(Polygon(h).area for h in parts[0].interiors)
        if dropped <= FOLD_TOLERANCE_M2 and part.is_valid:
            self.skipped["lane outlines folded by a sliver at a plan-view kink: repaired"] += 1
        elif not part.is_valid or not REPAIR_MIN_AREA_SHARE * expected <= part.area <= expected / REPAIR_MIN_AREA_SHARE:
            self.report.repairs.append(f"{self._where(lane)}: left out: folded outline ({reason}) cut to its valid "
                                       f"part holds {part.area:.1f} m^2, not about its {expected:.1f} m^2")
            return None
        else:
            self.report.repairs.append(f"{self._where(lane)}: folded outline ({reason}) cut to its valid part: "
                                       f"{part.area:.1f} m^2 kept (width x length {expected:.1f} m^2), "
                                       f"{dropped:.2f} m^2 of fold loop")
        ring_out = as_points(np.asarray(part.exterior.coords[:-1]))
        z_out = None
        if z is not None:
            src = np.asarray(ring)
            zs = np.asarray(z)
            z_out = [rounded(zs[int(np.argmin(np.hypot(*(src - p).T)))]) for p in np.asarray(ring_out)]
        return lane, Polygon(np.asarray(ring_out)), ring_out, z_out

    def _region(self, rid: str, rtype: str, lane: SampledLane) -> tuple[SampledLane, Polygon] | None:
        out = self._outline(lane)
        if out is None:
            return None
        lane, poly, ring, z = out
        if not poly.is_valid:
            self.report.repairs.append(f"{self._where(lane)}: left out: outline not valid once rounded")
            return None
        if self.bounds is not None:
            if not self.bounds.contains(poly):
                self.skipped["lanes not wholly inside --bounds"] += 1
                return None
        if poly.area <= 0.01:
            self.skipped[f"{lane.type} lane of zero area"] += 1
            return None
        entry: dict[str, Any] = {"id": rid, "type": rtype, "polygon": ring}
        if z is not None:
            entry["z"] = z
        if rtype in ("drivable", "intersection"):
            entry["speed_limit_mps"] = self._speed(lane)
        self.regions[rid] = entry
        return lane, poly

    def _speed(self, lane: SampledLane) -> float:
        if lane.speed_mps > 0.0:
            return round(lane.speed_mps, 3)
        self.defaulted_speed.add(lane.key[0])
        return defaults.DEFAULT_SPEED_MPS

    def _centreline(self, lane: SampledLane, poly: Polygon) -> tuple[list[list[float]], list[float] | None] | None:
        """The lane's centre in travel order (with heights), checked as the template checks it; None: left out."""
        centre = lane.centre if lane.forward else lane.centre[::-1]
        zc = None if lane.z is None else (lane.z[2] if lane.forward else lane.z[2][::-1])
        pts, zs = as_points_z(centre, zc)
        if len(pts) < 2:
            self.report.repairs.append(f"{self._where(lane)}: left out: centreline shorter than 1 mm")
            return None
        line = LineString(np.asarray(pts))
        if not line.is_simple:
            length = line.length
            unlooped = cut_loop(pts, zs)
            if unlooped is None or unlooped[2] > MAX_LOOP_SHARE * length:
                self.report.repairs.append(f"{self._where(lane)}: left out: centreline crosses itself")
                return None
            pts, zs, cut = unlooped
            line = LineString(np.asarray(pts))
            self.report.repairs.append(f"{self._where(lane)}: centreline folded back on itself: its loop "
                                       f"({cut:.2f} of {length:.1f} m) cut out")
        if not poly.buffer(CENTRE_IN_REGION_M, quad_segs=2).covers(line):
            self.report.repairs.append(f"{self._where(lane)}: left out: centreline leaves its repaired outline")
            return None
        return pts, zs

    def _add_lane(self, lane: SampledLane, name: str | None = None) -> None:
        if name is None and is_loop(lane):
            # A lane that closes on itself (a ring road, a cul-de-sac) is no simple polygon: imported as two halves.
            mid = len(lane.s) // 2
            for suffix, cut in (("_a", slice(0, mid + 1)), ("_b", slice(mid, None))):
                half = replace(lane, s=lane.s[cut], inner=lane.inner[cut], outer=lane.outer[cut],
                               centre=lane.centre[cut], width=lane.width[cut], resample=None,
                               z=z_part(lane.z, cut))
                self._add_lane(half, lane_name(lane.key) + suffix)
            self.skipped["lanes that close on themselves (ring, cul-de-sac): imported as two halves"] += 1
            return
        if name is None:
            pieces = open_pieces(lane)
            if len(pieces) > 1:
                # A lane that closes to zero width and opens again is imported as one lane per open stretch.
                for k, piece in enumerate(pieces):
                    self._add_lane(piece, f"{lane_name(lane.key)}_p{k}")
                self.skipped["lanes closing to zero width and opening again: imported per open stretch"] += 1
                return
        name = name or lane_name(lane.key)
        biking = lane.type == "biking" and not lane.junction
        if lane.type in DRIVING_TYPES or lane.type == "parking" or biking:
            rtype = "parking" if lane.type == "parking" else ("intersection" if lane.junction else "drivable")
            got = self._region(name, rtype, lane)
            if got is None:
                return
            lane, poly = got
            centre = self._centreline(lane, poly)
            if centre is None:
                del self.regions[name]
                return
            pts, zs = centre
            kind = "parking" if lane.type == "parking" else ("biking" if biking else "driving")
            if lane.junction and kind == "driving":
                c = np.asarray(pts)
                turn = math.degrees(abs((_heading(c, -1) - _heading(c, 0) + math.pi) % (2 * math.pi) - math.pi))
                kind = "turn" if turn > TURN_DEG else "driving"
            entry: dict[str, Any] = {"id": name, "region": name, "kind": kind, "width_m": rounded(float(np.mean(lane.width))),
                                     "speed_limit_mps": self._speed(lane), "polyline": pts}
            if zs is not None:
                entry["z"] = zs
            self.lanes[name] = entry
            self.lane_by_name[name] = lane
            self.lane_key_by_name[name] = lane.key
        elif lane.type in SIDEWALK_TYPES:
            got = self._region(name, "sidewalk", lane)
            if got is not None:
                self.sidewalks[name] = got[0]
        elif lane.type in REGION_ONLY_TYPES:
            if self._region(name, REGION_ONLY_TYPES[lane.type], lane) is not None:
                self.skipped[f"{lane.type} lanes: kept as {REGION_ONLY_TYPES[lane.type]} regions without a lane"] += 1
        else:
            self.skipped[f"lanes of type {lane.type!r}"] += 1

    def _links(self) -> None:
        keys = set(self.lane_key_by_name.values())
        forward = {ln.key: ln.forward for ln in self.lane_by_name.values()}
        succ, problems = file_successors(self.odr, keys, forward)
        self.file_succ = {lane_name(k): tuple(sorted(lane_name(v) for v in vs)) for k, vs in succ.items()}
        self.report.link_mismatches.extend(problems)
        graph = LaneEnds(self.lanes)
        for name in sorted(self.lanes):
            derived = set(graph.successors(name))
            declared = set(self.file_succ.get(name, ()))
            if derived != declared:
                self.report.link_mismatches.append(
                    f"lane {name}: file links {sorted(declared)}, geometry joins {sorted(derived)}")

    def _drop_reversed(self) -> None:
        """Leave out (and report) each lane that still meets another only against its direction.

        The template refuses such a lane (:meth:`LaneGraph.direction_errors`):
        it ends where another lane ends, or meets a start at a reversal.
        After junction lanes are directed by their approach, what remains is
        a map whose geometry contradicts its own links; one lane of it must not
        refuse the map.
        """
        for _ in range(len(self.lanes)):
            errors = LaneEnds(self.lanes).direction_errors()
            if not errors:
                return
            dropped: set[str] = set()
            for err in errors:
                # Of two lanes that meet against each other, the first (by id) goes; the other may then be fine.
                if err.lane in self.lanes and err.other not in dropped:
                    self.report.repairs.append(f"{self._where(self.lane_by_name[err.lane])}: left out: {err.reason}")
                    self._drop_lane(err.lane)
                    dropped.add(err.lane)

    def _drop_lane(self, name: str) -> None:
        del self.lanes[name]
        self.lane_by_name.pop(name, None)
        self.lane_key_by_name.pop(name, None)
        self.regions.pop(name, None)

    def _adjacent(self) -> list[dict[str, Any]]:
        """``adjacent`` relations between side-by-side lane regions of one lane section (across the centre too)."""
        out = []
        for road in self.odr.roads:
            for k, sec in enumerate(road.sections):
                order = [lane.id for lane in sorted(sec.lanes, key=lambda ln: -ln.id)]
                for a, b in zip(order, order[1:]):
                    na, nb = lane_name((road.id, k, a)), lane_name((road.id, k, b))
                    if na in self.regions and nb in self.regions:
                        out.append({"type": "adjacent", "a": na, "b": nb})
        return out


def _heading(points: Array, i: int) -> float:
    if i == 0:
        d = points[1] - points[0]
    else:
        d = points[-1] - points[-2]
    return math.atan2(d[1], d[0])
