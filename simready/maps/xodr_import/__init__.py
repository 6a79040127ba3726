"""OpenDRIVE map → world template (SPEC §5, §15, §18): lanes, regions, heights, marks, walkable graph, signals.

World frame = the map's inertial frame (metres, x east, y north, z up, yaw
counter-clockwise from +x). What becomes what:

* every lane of every lane section is sampled along its road's reference
  line (:mod:`simready.maps.refline`) at the geometry, section, offset and
  width breakpoints and at least every :data:`~.policy.MAX_STEP_M` (closer on curves,
  so that chords stay within :data:`~.policy.CHORD_TOLERANCE_M` of the arc, never
  closer than :data:`~.policy.MIN_STEP_M`); its borders are the lane offset plus the
  summed width polynomials, its region the polygon between them;
* nothing about one lane refuses the map: a folded outline is resampled
  finer, then cut to its valid part, and a lane that cannot be saved is left
  out — each with one report line naming road, lane section, lane and XML
  line (:attr:`ImportReport.repairs`); only a map with no drivable lane left
  is refused;
* driving-type lanes (and parking lanes) become directed template lanes:
  with right-hand traffic a lane with a negative id runs along s, a positive
  one against it (``rule="LHT"`` the other way round); a junction's
  connecting lanes are directed by the approach they are entered from
  (:func:`~.links.orient_junction_lanes`), whatever their id's sign. Successors are derived from
  geometry (0.5 m endpoint tolerance, as the template derives them); every
  disagreement with the file's road, lane and junction links is reported,
  never refused;
* ``elevationProfile``, ``lateralProfile`` superelevation and lane
  ``<height>`` give lanes and regions a height per vertex (``z``); a flat
  road has none;
* road marks give each lane whether a change to its same-direction
  neighbour is allowed (``change_left``/``change_right``) and become
  ``markings`` (polyline, type, colour, width) for the street geometry;
* ``biking`` lanes outside junctions become directed ``biking`` template lanes
  (background cyclists ride them; no vehicle routes or changes onto them);
* sidewalks become sidewalk regions and walkable chains; each crosswalk object
  a crosswalk region joined to the two sidewalks it touches; parking lanes
  and ``parkingSpace`` objects parking regions;
* each pedestrian light (type 1000002 or 1000007) a template pedestrian
  signal over the crosswalks near it on its road (15 m along s), walking
  while the vehicles' default program is red;
* each traffic light a fixed-time template signal over the lanes it binds to
  (validity, orientation, ``<signalReference>``, the junction's controllers),
  its stop line clamped to its lane; stop, yield and speed-limit signs lane
  facts (:meth:`~.signals.Signals._sign`);
* everything else met is named in the report, never dropped silently.

Ids: ``road<id>_sec<k>_lane<id>`` for lanes and lane regions, ``crosswalk_<road>_<object>``,
``parking_<road>_<object>``, ``signal_<id>``, ``mark_<lane>``; the output is sorted by id and rounded to
0.1 mm, so the same map gives the same bytes. Resource bounds (issue 27): :data:`~simready.maps.opendrive.LIMITS`
while reading, :data:`~.policy.MAX_SAMPLES_PER_ROAD` and :data:`~.policy.MAX_LANE_SAMPLES` before sampling.

The package: :mod:`.policy` (every tolerance and bound), :mod:`.model` (lane keys, the sampled lane, the
report), :mod:`.sampling` (roads and their lanes sampled along the reference line), :mod:`.links`
(the file's links, junction lanes directed, lane ends joined as the template joins them),
:mod:`.outlines` (outlines and polylines as written: rounded, unlooped, trimmed), and the builder's
parts over :mod:`.base`: :mod:`.lanes`, :mod:`.marks`, :mod:`.walkable` (sidewalks, crosswalks,
parking spaces), :mod:`.signals`, combined in :mod:`.builder`.
"""

from __future__ import annotations

from pathlib import Path

from simready.common.hashing import sha256_bytes
from simready.maps.errors import MapError
from simready.maps.opendrive import read_opendrive
from simready.maps.xodr_import.builder import Builder
from simready.maps.xodr_import.links import checked_links, file_successors, orient_junction_lanes
from simready.maps.xodr_import.model import ImportReport, ImportedMap, LaneKey, SampledLane, lane_name
from simready.maps.xodr_import.policy import CHORD_TOLERANCE_M, MAX_LANE_SAMPLES, MAX_STEP_M
from simready.maps.xodr_import.sampling import sample_road


__all__ = ["CHORD_TOLERANCE_M", "MAX_STEP_M", "ImportReport", "ImportedMap", "LaneKey", "file_successors",
           "import_opendrive", "lane_name"]


def import_opendrive(path: str | Path, template_id: str,
                     bounds: tuple[float, float, float, float] | None = None) -> ImportedMap:
    """Read ``path`` and build template ``template_id`` from it (optionally only what lies in ``bounds``).

    A lane that cannot be imported is repaired or left out, each with one
    report line; only a map with no drivable lane left is refused.

    Raises:
        MapError: one line naming the XML element and its line.
    """
    path = Path(path)
    odr, raw = read_opendrive(path)
    src = str(path)
    report = ImportReport(template_id, path.name, sha256_bytes(raw).removeprefix("sha256:"), odr.version)
    report.skipped.extend(odr.unread)
    odr, link_lines = checked_links(odr)
    report.link_mismatches.extend(link_lines)
    sampled: list[SampledLane] = []
    total = 0
    for road in odr.roads:
        lanes, problems = sample_road(src, road, report)
        report.repairs.extend(problems)
        total += sum(len(ln.s) for ln in lanes)
        if total > MAX_LANE_SAMPLES:
            raise MapError(src, f"road {road.id}", f"lane samples per map {total} is over the limit of "
                                                   f"{MAX_LANE_SAMPLES} (line {road.line})")
        sampled.extend(lanes)
    sampled, orient_lines = orient_junction_lanes(odr, sampled)
    report.link_mismatches.extend(orient_lines)
    builder = Builder(src, odr, report, bounds)
    data = builder.build(sampled)
    report.counts = {"lanes": len(data["lanes"]), "regions": len(data["regions"]), "signals": len(data["signals"]),
                     "walkable nodes": len(data["walkable"]["nodes"]), "crosswalks": builder.crosswalks,
                     "junctions": len(odr.junctions), "markings": len(data.get("markings", ()))}
    data["provenance"] = {"format": "ASAM OpenDRIVE", "format_version": odr.version, "source": path.name,
                          "source_sha256": report.source_sha256, "importer": "simready.maps.xodr_import 2",
                          "skipped": list(report.skipped) + [f"repair: {line}" for line in report.repairs],
                          "defaults": list(report.defaults)}
    return ImportedMap(data, report, builder.lane_by_name, builder.file_succ)
