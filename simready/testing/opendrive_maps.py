"""OpenDRIVE test maps written by ``scenariogeneration``'s OpenDRIVE writer, not by hand (issue 17).

The issue's four maps and a lane split, each a function returning the XML bytes, plus the numbers a test
needs to compute its analytic reference independently of the importer:

* :func:`straight_road`: 100 m straight road, one driving lane each way, a
  parking lane on the right, sidewalks both sides, a crosswalk across all of
  it at s = 50 m, a town speed record;
* :func:`curved_road`: line, spiral, arc, spiral, line (a clothoid-arc-clothoid
  bend) and a paramPoly3, with lane widths that change along s (cubic width
  records) and a second lane section;
* :func:`junction_map`: four arms (one lane each way) into a four-way junction
  built by ``CommonJunctionCreator`` (every arm to every other), a traffic
  light on each arm facing the junction, two controllers (east–west,
  north–south). No sidewalks: the creator copies every lane of an arm into
  its connecting roads, so a sidewalk would become a lane across the junction;
* :func:`offset_road`: a straight road whose lanes sit on a cubic lane offset;
* :func:`kerb_road`: the straight road's kerbside twin: one driving lane
  each way and a sidewalk on each side, no parking lane (the van parks at the
  kerb by the kerbside rule), a crosswalk at s = 70 m; ``sidewalks=False``
  leaves the sidewalks (and with them the crosswalk's route) out;
* :func:`bike_road`: a straight town road, one driving lane, a bike lane
  and a sidewalk each way (220 m, long enough for the lead-vehicle intent),
  a crosswalk at s = 110 m under a pedestrian light,
  and a traffic light for each direction before it (no controllers: one
  program, so the pedestrians walk while the vehicles have red);
* :func:`split_road`: a right lane that appears (width 0 → 3.5 m over 30 m, the
  writer's lane split), in three lane sections with lane links.

The pieces they share (lanes, sections, the four-way junction) are :mod:`simready.testing.xodr_build`'s.
"""

from __future__ import annotations

import math
from pathlib import Path

from scenariogeneration import xodr

from simready.maps.xodr_export import fresh_ids
from simready.testing.xodr_build import (
    four_way_junction,
    junction_arm,
    lane as _lane,
    lanes_of,
    one_road_map,
    plan_view,
    section,
)

__all__ = ["BIKE", "CURVED", "JUNCTION_ARM_M", "KERB", "OFFSET", "SPLIT", "STRAIGHT", "curved_road", "junction_map",
           "kerb_road", "bike_road", "offset_road", "split_road", "straight_road", "write_all"]

#: Straight map: lane widths (m) by lane id, length, crosswalk.
STRAIGHT = {"length": 100.0, "widths": {2: 2.0, 1: 3.5, -1: 3.5, -2: 2.5, -3: 2.0}, "crosswalk_s": 50.0,
            "crosswalk_width": 3.0, "speed_kmh": 40.0}
#: Kerb map: lane widths (m) by lane id, length, crosswalk.
KERB = {"length": 120.0, "widths": {2: 2.0, 1: 3.5, -1: 3.5, -2: 2.0}, "crosswalk_s": 70.0, "crosswalk_width": 3.0,
        "speed_kmh": 30.0}
#: Bike map: lane widths (m) by lane id (driving ±1, biking ±2, sidewalk ±3), length, crosswalk, lights' s.
BIKE = {"length": 220.0, "widths": {3: 2.0, 2: 1.5, 1: 3.5, -1: 3.5, -2: 1.5, -3: 2.0}, "crosswalk_s": 110.0,
        "crosswalk_width": 3.0, "speed_kmh": 40.0, "light_s": {"+": 105.0, "-": 115.0}, "ped_light_s": 110.0}
#: Curved map: plan view records (kind, params, length) and, per section, each lane's width records
#: (sOffset, a, b, c, d): lane -1 widens by 0.5 m over 40 m of the second section, then stays 4 m wide.
CURVED = {
    "records": (("line", (), 20.0), ("spiral", (0.0, 0.04), 25.0), ("arc", (0.04,), 30.0),
                ("spiral", (0.04, 0.0), 25.0), ("line", (), 10.0),
                ("paramPoly3", (0.0, 30.0, 0.0, 0.0, 0.0, 0.0, 6.0, -4.0), None)),
    "sections": ((0.0, {1: ((0.0, 3.5, 0.0, 0.0, 0.0),), -1: ((0.0, 3.5, 0.0, 0.0, 0.0),),
                        -2: ((0.0, 3.0, 0.0, 0.0, 0.0),)}),
                 (60.0, {1: ((0.0, 3.5, 0.0, 0.0, 0.0),),
                         -1: ((0.0, 3.5, 0.0, 3.0 * 0.5 / 40.0 ** 2, -2.0 * 0.5 / 40.0 ** 3), (40.0, 4.0, 0.0, 0.0, 0.0)),
                         -2: ((0.0, 3.0, 0.0, 0.0, 0.0),)})),
}
#: Offset map: road length, lane offset cubic (a, b, c, d), lane width.
OFFSET = {"length": 80.0, "offset": (0.5, 0.0, 3.0 * 1.5 / 80.0 ** 2, -2.0 * 1.5 / 80.0 ** 3), "width": 3.25}
#: Split map: road length, where the new right lane starts and reaches full width (m), lane width.
SPLIT = {"length": 120.0, "from": 30.0, "to": 60.0, "width": 3.5}
#: Junction arms: length (m) of each incoming road; lanes 3.5 m, sidewalks 2 m.
JUNCTION_ARM_M = 60.0


def straight_road() -> bytes:
    """The straight road with sidewalks, a parking lane and a crosswalk (see module docstring)."""
    fresh_ids()
    w = STRAIGHT["widths"]
    lanes = lanes_of(section(0, [_lane(xodr.LaneType.driving, w[1]), _lane(xodr.LaneType.sidewalk, w[2])],
                             [_lane(xodr.LaneType.driving, w[-1]), _lane(xodr.LaneType.parking, w[-2]),
                              _lane(xodr.LaneType.sidewalk, w[-3])]))
    road = xodr.Road(1, plan_view([xodr.Line(STRAIGHT["length"])]), lanes)
    road.add_type(xodr.RoadType.town, 0, speed=STRAIGHT["speed_kmh"], speed_unit="km/h")
    right = -(w[-1] + w[-2] + w[-3])
    left = w[1] + w[2]
    # The crosswalk spans kerb to kerb: from the inner edge of one sidewalk to the inner edge of the other.
    t_lo, t_hi = right + w[-3], left - w[2]
    road.add_object(xodr.Object(s=STRAIGHT["crosswalk_s"], t=0.5 * (t_lo + t_hi), Type=xodr.ObjectType.crosswalk,
                                id="cw1", hdg=math.pi / 2, length=t_hi - t_lo, width=STRAIGHT["crosswalk_width"]))
    return one_road_map("straight", road)


def kerb_road(*, sidewalks: bool = True) -> bytes:
    """A straight town road, one lane each way, sidewalks and kerbs but no parking lane (see module docstring)."""
    fresh_ids()
    w = KERB["widths"]
    left, right = [_lane(xodr.LaneType.driving, w[1])], [_lane(xodr.LaneType.driving, w[-1])]
    if sidewalks:
        left.append(_lane(xodr.LaneType.sidewalk, w[2]))
        right.append(_lane(xodr.LaneType.sidewalk, w[-2]))
    road = xodr.Road(1, plan_view([xodr.Line(KERB["length"])]), lanes_of(section(0, left, right)))
    road.add_type(xodr.RoadType.town, 0, speed=KERB["speed_kmh"], speed_unit="km/h")
    # Kerb to kerb across both driving lanes.
    road.add_object(xodr.Object(s=KERB["crosswalk_s"], t=0.5 * (w[1] - w[-1]), Type=xodr.ObjectType.crosswalk, id="cw1",
                                hdg=math.pi / 2, length=w[1] + w[-1], width=KERB["crosswalk_width"]))
    return one_road_map("kerb", road)


def curved_road() -> bytes:
    """The curved road: line, clothoid–arc–clothoid, line, paramPoly3; widths changing in a second section."""
    geoms = []
    for kind, p, length in CURVED["records"]:
        if kind == "line":
            geoms.append(xodr.Line(length))
        elif kind == "spiral":
            geoms.append(xodr.Spiral(p[0], p[1], length=length))
        elif kind == "arc":
            geoms.append(xodr.Arc(p[0], length=length))
        else:
            geoms.append(xodr.ParamPoly3(*p, prange="normalized"))
    sections = []
    for k, (s, widths) in enumerate(CURVED["sections"]):
        new = {}
        for lane_id in (1, -1, -2):
            first, *more = widths[lane_id]
            lane = _lane(xodr.LaneType.shoulder if lane_id == -2 else xodr.LaneType.driving, *first[1:])
            for s_offset, a, b, c, d in more:
                lane.add_lane_width(a, b, c, d, soffset=s_offset)
            new[lane_id] = lane
        for lane_id, lane in new.items():
            # Lane links across the section boundary, written like any map's.
            if k > 0:
                lane.add_link("predecessor", lane_id)
            if k + 1 < len(CURVED["sections"]):
                lane.add_link("successor", lane_id)
        sections.append(section(s, [new[1]], [new[-1], new[-2]]))
    return one_road_map("curved", xodr.Road(1, plan_view(geoms), lanes_of(*sections)))


def offset_road() -> bytes:
    """A straight road whose two lanes sit on a cubic lane offset."""
    lanes = lanes_of(section(0, [_lane(xodr.LaneType.driving, OFFSET["width"])],
                             [_lane(xodr.LaneType.driving, OFFSET["width"])]))
    lanes.add_laneoffset(xodr.LaneOffset(0, *OFFSET["offset"]))
    return one_road_map("offset", xodr.Road(1, plan_view([xodr.Line(OFFSET["length"])]), lanes))


def split_road() -> bytes:
    """A straight road on which a second right lane opens (see module docstring)."""
    road = xodr.create_road(xodr.Line(SPLIT["length"]), 1, left_lanes=1,
                            right_lanes=[xodr.LaneDef(SPLIT["from"], SPLIT["to"], 1, 2, -2)], lane_width=SPLIT["width"])
    return one_road_map("split", road)


def bike_road() -> bytes:
    """A straight road with bike lanes, a crosswalk, a pedestrian light and traffic lights (see module docstring)."""
    fresh_ids()
    w = BIKE["widths"]
    left = [_lane(xodr.LaneType.driving, w[1]), _lane(xodr.LaneType.biking, w[2]), _lane(xodr.LaneType.sidewalk, w[3])]
    right = [_lane(xodr.LaneType.driving, w[-1]), _lane(xodr.LaneType.biking, w[-2]),
             _lane(xodr.LaneType.sidewalk, w[-3])]
    road = xodr.Road(1, plan_view([xodr.Line(BIKE["length"])]), lanes_of(section(0, left, right)))
    road.add_type(xodr.RoadType.town, 0, speed=BIKE["speed_kmh"], speed_unit="km/h")
    kerb_left, kerb_right = w[1] + w[2], w[-1] + w[-2]
    road.add_object(xodr.Object(s=BIKE["crosswalk_s"], t=0.5 * (kerb_left - kerb_right), Type=xodr.ObjectType.crosswalk,
                                id="cw1", hdg=math.pi / 2, length=kerb_left + kerb_right, width=BIKE["crosswalk_width"]))
    for sign, t, orientation in (("+", -kerb_right - 1.0, xodr.Orientation.positive),
                                 ("-", kerb_left + 1.0, xodr.Orientation.negative)):
        road.add_signal(xodr.Signal(s=BIKE["light_s"][sign], t=t, country="DEU", Type="1000001", id="11" if sign == "+" else "12", dynamic=xodr.Dynamic.yes, orientation=orientation,
                                    zOffset=0.0))
    road.add_signal(xodr.Signal(s=BIKE["ped_light_s"], t=-kerb_right - 1.0, country="DEU", Type="1000002", id="21",
                                dynamic=xodr.Dynamic.yes, orientation=xodr.Orientation.negative, zOffset=0.0))
    return one_road_map("bike", road)


def junction_map() -> bytes:
    """Four arms into a signalised four-way junction (see module docstring)."""
    fresh_ids()
    arms = [junction_arm(i + 1, JUNCTION_ARM_M, lambda: [_lane(xodr.LaneType.driving, 3.5)]) for i in range(4)]
    # A traffic light at the junction end of each arm, beside the lane driving towards it (right, along s).
    return four_way_junction("junction", arms, JUNCTION_ARM_M, 14.0, -4.0)


def write_all(folder: str | Path) -> dict[str, Path]:
    """Write the test maps into ``folder``; ``{name: path}``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, make in (("straight", straight_road), ("curved", curved_road), ("junction", junction_map),
                       ("offset", offset_road), ("split", split_road)):
        out[name] = folder / f"{name}.xodr"
        out[name].write_bytes(make())
    return out
