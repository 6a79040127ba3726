"""Roads and their lanes sampled along the reference line (:mod:`simready.maps.refline`): where to sample, the
road frame (points, normals, lane offset, elevation, superelevation), each lane's borders, centre, width and heights."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from simready.maps.errors import MapError
from simready.maps.opendrive import Lane, LaneSection, Poly3, Road, RoadMark
from simready.maps.refline import Array, max_curvature, reference_poses
from simready.maps.xodr_import.model import ImportReport, SampledLane
from simready.maps.xodr_import.policy import (CHORD_TOLERANCE_M, DRIVING_TYPES, MAX_CURVATURE, MAX_SAMPLES_PER_ROAD,
                                              MAX_STEP_M, MIN_STEP_M, NEGATIVE_WIDTH_TOLERANCE_M, REGION_ONLY_TYPES,
                                              SAMPLE_MERGE_M, SIDEWALK_TYPES)
from simready.world.template_model.base import MAX_LANE_WIDTH_M


def _breakpoints(road: Road) -> list[float]:
    pts = {0.0, road.length}
    pts.update(g.s for g in road.geometries)
    pts.update(o.s0 for o in road.lane_offsets)
    for sec in road.sections:
        pts.add(sec.s)
        for lane in sec.lanes:
            pts.update(sec.s + w.s0 for w in lane.widths)
    return sorted(p for p in pts if 0.0 <= p <= road.length)


def _road_samples(src: str, road: Road) -> Array:
    """Sorted road s values: every breakpoint, and enough between them for chords within tolerance.

    The step is never below :data:`MIN_STEP_M` (a curvature of 1e12 is not a
    reason to allocate gigabytes), and the count is checked against
    :data:`MAX_SAMPLES_PER_ROAD` before any array of that size exists.
    """
    bps = _breakpoints(road)
    starts = [g.s for g in road.geometries]
    curvature: dict[int, float] = {}
    spans = []
    total = len(bps)
    for a, b in zip(bps, bps[1:]):
        i = max(0, int(np.searchsorted(starts, a, side="right")) - 1)
        if i not in curvature:
            curvature[i] = max_curvature(road.geometries[i])
        k = curvature[i]
        step = MAX_STEP_M if k == 0.0 else min(MAX_STEP_M, max(MIN_STEP_M, math.sqrt(8.0 * CHORD_TOLERANCE_M / k)))
        n = max(1, math.ceil((b - a) / step))
        total += n
        spans.append((a, b, n))
    for i, k in sorted(curvature.items()):
        g = road.geometries[i]
        if k > MAX_CURVATURE and k * g.length > math.pi / 2:
            raise LaneProblem(f"road {road.id}, geometry s={g.s:g}: curvature {k:g} 1/m (radius below "
                              f"{1.0 / MAX_CURVATURE:g} m) turning {k * g.length:.3g} rad is not a road: road left out "
                              f"(line {g.line})")
    if total > MAX_SAMPLES_PER_ROAD:
        raise MapError(src, f"road {road.id}", f"samples per road {total} is over the limit of {MAX_SAMPLES_PER_ROAD} "
                                               f"(length {road.length:g} m, curvature up to "
                                               f"{max(curvature.values(), default=0.0):g} 1/m) (line {road.line})")
    out = [np.array(bps)] + [np.linspace(a, b, n + 1) for a, b, n in spans]
    s = np.unique(np.concatenate(out))
    # Breakpoints from different records closer than this are one point (a sliver sample would fold an outline).
    keep = np.concatenate([[True], np.diff(s) > SAMPLE_MERGE_M])
    samples: Array = s[keep]
    return samples


def densified(s: Array, factor: int) -> Array:
    """``s`` with ``factor − 1`` evenly spaced values inserted in every interval (finer sampling near a fold)."""
    steps = np.linspace(0.0, 1.0, factor + 1)[:-1]
    fine = (s[:-1, None] + np.diff(s)[:, None] * steps[None, :]).ravel()
    return np.concatenate([fine, s[-1:]])


def poly_at(records: tuple[Poly3, ...], s: Array, base: float = 0.0) -> Array:
    """Piecewise cubic: each s on the last record whose start (``base + s0``) is at or before it; 0 before all."""
    out = np.zeros_like(s)
    for i, rec in enumerate(records):
        start = base + rec.s0
        end = base + records[i + 1].s0 if i + 1 < len(records) else math.inf
        mask = (s >= start - 1e-9) & (s < end - 1e-9) if end != math.inf else s >= start - 1e-9
        ds = s[mask] - start
        out[mask] = rec.a + ds * (rec.b + ds * (rec.c + ds * rec.d))
    return out


def _step_at(records: tuple[tuple[float, float, float], ...], s: Array, base: float) -> tuple[Array, Array]:
    """Lane ``<height>`` records (sOffset, inner, outer) as piecewise-constant inner and outer heights at ``s``."""
    inner, outer = np.zeros_like(s), np.zeros_like(s)
    for s0, a, b in records:
        mask = s >= base + s0 - 1e-9
        inner[mask], outer[mask] = a, b
    return inner, outer


class LaneProblem(Exception):
    """One lane that cannot be imported: the reason, ending with its XML line; the lane is left out and reported."""


def _lane_width(road: Road, sec: LaneSection, lane: Lane, s: Array) -> Array:
    if not lane.widths:
        reason = "lane <border> records are not supported (give <width>)" if lane.has_border else "lane has no <width>"
        raise LaneProblem(f"{reason} (line {lane.line})")
    w = poly_at(lane.widths, s, base=sec.s)
    wide = np.flatnonzero(w > MAX_LANE_WIDTH_M)
    if wide.size:
        i = int(wide[0])
        rec = next(r for r in reversed(lane.widths) if sec.s + r.s0 <= s[i] + 1e-9)
        raise LaneProblem(f"lane width {w[i]:.4g} m at s={s[i]:.2f} is over the {MAX_LANE_WIDTH_M:g} m a lane may be "
                          f"(line {rec.line})")
    bad = np.flatnonzero(w < -NEGATIVE_WIDTH_TOLERANCE_M)
    if bad.size:
        i = int(bad[0])
        rec = next(r for r in reversed(lane.widths) if sec.s + r.s0 <= s[i] + 1e-9)
        raise LaneProblem(f"negative lane width {w[i]:.3f} m at s={s[i]:.2f} (line {rec.line})")
    return np.maximum(w, 0.0)


def _lane_speed(road: Road, sec: LaneSection, lane: Lane) -> float | None:
    if lane.speeds_mps:
        return lane.speeds_mps[0][1]
    for s0, v in reversed(road.speeds_mps):
        if s0 <= sec.s + 1e-9:
            return v
    return road.speeds_mps[0][1] if road.speeds_mps else None


def main_mark(sec: LaneSection, road_marks: tuple[RoadMark, ...], end: float) -> RoadMark | None:
    """The road mark covering most of the lane section among a lane's ``road_marks`` (along its outer border; the
    centre lane's: along the reference line) (None: no record)."""
    if not road_marks:
        return None
    length = end - sec.s
    best, best_len = None, -1.0
    for i, m in enumerate(road_marks):
        stop = road_marks[i + 1].s_offset if i + 1 < len(road_marks) else length
        if stop - m.s_offset > best_len:
            best, best_len = m, stop - m.s_offset
    return best


@dataclass(frozen=True)
class RoadFrame:
    """A road's reference line sampled once: s, points, normals, lane offset, height and superelevation at s."""

    road: Road
    s: Array
    ref: Array
    normal: Array
    offset: Array
    z: Array | None
    tan_roll: Array | None

    @classmethod
    def at(cls, road: Road, s: Array) -> RoadFrame:
        pose = reference_poses(road.geometries, s)
        normal = np.stack([-np.sin(pose.hdg), np.cos(pose.hdg)], axis=1)
        z = poly_at(road.elevation, s) if road.elevation else None
        roll = np.tan(np.clip(poly_at(road.superelevation, s), -1.2, 1.2)) if road.superelevation else None
        return cls(road, s, np.stack([pose.x, pose.y], axis=1), normal, poly_at(road.lane_offsets, s), z, roll)


def _lane_geometry(frame: RoadFrame, sec: LaneSection, lane: Lane, s: Array, ids: dict[int, Lane],
                   flat: bool) -> dict[str, Any]:
    """Borders, centre, width and heights of ``lane`` at road arc lengths ``s`` (a subset of, or finer than, the frame)."""
    road = frame.road
    if s is frame.s:
        ref, normal, offset = frame.ref, frame.normal, frame.offset
        z_ref, roll = frame.z, frame.tan_roll
    else:
        sub = RoadFrame.at(road, s)
        ref, normal, offset, z_ref, roll = sub.ref, sub.normal, sub.offset, sub.z, sub.tan_roll
    side = 1 if lane.id > 0 else -1
    t_inner = offset.copy()
    for j, inner_lane in sorted(ids.items()):
        if j * side > 0 and abs(j) < abs(lane.id):
            t_inner = t_inner + side * _lane_width(road, sec, inner_lane, s)
    w = _lane_width(road, sec, lane, s)
    t_outer = t_inner + side * w
    t_centre = 0.5 * (t_inner + t_outer)
    inner, outer, centre = (ref + normal * t[:, None] for t in (t_inner, t_outer, t_centre))
    heights = None
    if not flat:
        base = z_ref if z_ref is not None else np.zeros_like(s)
        h_in, h_out = _step_at(lane.heights, s, sec.s) if lane.heights else (0.0, 0.0)

        def z_at(t: Array, h: Array | float) -> Array:
            return base + (t * roll if roll is not None else 0.0) + h

        heights = (z_at(t_inner, h_in), z_at(t_outer, h_out), z_at(t_centre, 0.5 * (np.asarray(h_in) + h_out)))
    return {"inner": inner, "outer": outer, "centre": centre, "width": w, "z": heights}


def sample_road(src: str, road: Road, report: ImportReport) -> tuple[list[SampledLane], list[str]]:
    """Every lane of ``road`` sampled, and one report line per lane that cannot be (the lane is left out)."""
    try:
        s_all = _road_samples(src, road)
    except LaneProblem as exc:
        return [], [str(exc)]
    frame = RoadFrame.at(road, s_all)
    flat = not road.elevation and not road.superelevation and not any(ln.heights for sec in road.sections
                                                                      for ln in sec.lanes)
    forward_sign = -1 if road.rule != "LHT" else 1
    out, problems = [], []
    ends = [sec.s for sec in road.sections[1:]] + [road.length]
    for k, (sec, end) in enumerate(zip(road.sections, ends)):
        if end - sec.s < 1e-6:
            report.skipped.append(f"road {road.id}, laneSection s={sec.s:g}: zero length")
            continue
        mask = (s_all >= sec.s - 1e-9) & (s_all <= end + 1e-9)
        s = s_all[mask]
        if s.size < 2:
            report.skipped.append(f"road {road.id}, laneSection s={sec.s:g}: shorter than the sample spacing")
            continue
        sub = RoadFrame(road, s, frame.ref[mask], frame.normal[mask], frame.offset[mask],
                         None if frame.z is None else frame.z[mask],
                         None if frame.tan_roll is None else frame.tan_roll[mask])
        if end < road.length and any(abs(o.s0 - end) < 1e-6 for o in road.lane_offsets):
            # A lane offset record starting where this section ends (CARLA steps the offset there) belongs to the
            # next section: this section's last sample is taken a micrometre before it.
            s = s.copy()
            s[-1] = end - 1e-6
            sub = RoadFrame.at(road, s)
        ids = {ln.id: ln for ln in sec.lanes}
        for lane in sorted(sec.lanes, key=lambda ln: (abs(ln.id), ln.id)):
            try:
                geo = _lane_geometry(sub, sec, lane, s, ids, flat)
            except LaneProblem as exc:
                if lane.type in DRIVING_TYPES + SIDEWALK_TYPES + ("parking",) + tuple(REGION_ONLY_TYPES):
                    problems.append(f"road {road.id}, laneSection s={sec.s:g}, lane {lane.id}: left out: {exc}")
                continue
            speed = _lane_speed(road, sec, lane)

            def resample(factor: int, sub: RoadFrame = sub, sec: LaneSection = sec, lane: Lane = lane,
                         ids: dict[int, Lane] = ids) -> dict[str, Any]:
                return _lane_geometry(sub, sec, lane, densified(sub.s, factor), ids, flat)

            out.append(SampledLane((road.id, k, lane.id), lane.type, s, geo["inner"], geo["outer"], geo["centre"],
                                    geo["width"], (lane.id * forward_sign) > 0, road.in_junction,
                                    speed if speed is not None else -1.0, geo["z"], main_mark(sec, lane.road_marks, end),
                                    lane.line, sec.line, resample, s))
    return out, problems
