"""Write ``data/maps/city_crossing.xodr``: the default suite's imported map (issue 24 item 6).

Run from the repository root: ``PYTHONPATH=. .venv/bin/python data/maps/make_city_crossing.py``, then re-import
the template (``simready template import``, README "Bringing your own maps"). The map is written by ``scenariogeneration``'s
OpenDRIVE writer (pinned in pyproject.toml); the writer's date stamp is removed so the same script gives the same
bytes. What it holds:

* a four-way junction centred at (EW_M + R_M, 0) (the writer starts the west arm at the origin), built by
  ``CommonJunctionCreator`` from per-lane connections (only driving lanes cross it; the sidewalks end at its
  corners);
* west and east arms (roads 1 and 3, :data:`EW_M` long): two driving lanes per direction, a broken mark between
  same-direction lanes (a lane change is allowed), sidewalks with kerbs on both sides;
* south and north arms (roads 2 and 4, :data:`NS_M` long): one driving lane per direction, a parking lane and a
  sidewalk on both sides;
* a traffic light at the junction end of each arm, bound through two ``<controller>`` elements (east–west,
  north–south) named in the junction, and a mid-block zebra ``crosswalk`` across the south arm;
* a town road type with a 50 km/h limit on every arm.
"""

from __future__ import annotations

import math
import re
import sys
import tempfile
from pathlib import Path

from scenariogeneration import xodr

from simready.maps.xodr_export import fresh_ids

#: Arm lengths (m): the east–west arms carry the long routes (a lead vehicle needs a 170 m chain, a cut-in 60 m of
#: two same-direction lanes); the north–south arms the parked van and the crosswalk.
EW_M = 150.0
NS_M = 100.0
#: Distance (m) from the junction centre to each arm's junction end.
R_M = 16.0
LANE_M, PARKING_M, SIDEWALK_M = 3.5, 2.5, 2.0
#: The crosswalk: its centre line's station on the south arm (m; mid-block, so an ego starting near the arm's far
#: end reaches it within a 10 s clip), and its width along the road.
CROSSWALK_S_M, CROSSWALK_W_M = 50.0, 4.0


def _lane(kind: xodr.LaneType, width: float, mark: xodr.RoadMark) -> xodr.Lane:
    lane = xodr.Lane(lane_type=kind, a=width)
    lane.add_roadmark(mark)
    return lane


def _arm(road_id: int, length: float, two_lanes: bool) -> xodr.Road:
    centre = xodr.Lane(lane_type=xodr.LaneType.none)
    centre.add_roadmark(xodr.std_roadmark_solid())
    section = xodr.LaneSection(0, centre)
    for add in (section.add_left_lane, section.add_right_lane):
        if two_lanes:
            add(_lane(xodr.LaneType.driving, LANE_M, xodr.std_roadmark_broken()))
            add(_lane(xodr.LaneType.driving, LANE_M, xodr.std_roadmark_solid()))
        else:
            add(_lane(xodr.LaneType.driving, LANE_M, xodr.std_roadmark_solid()))
            add(_lane(xodr.LaneType.parking, PARKING_M, xodr.std_roadmark_solid()))
        add(_lane(xodr.LaneType.sidewalk, SIDEWALK_M, xodr.std_roadmark_solid()))
    lanes = xodr.Lanes()
    lanes.add_lanesection(section)
    plan = xodr.PlanView()
    plan.add_geometry(xodr.Line(length))
    road = xodr.Road(road_id, plan, lanes)
    road.add_type(xodr.RoadType.town, 0, speed=50, speed_unit="km/h")
    return road


def city_crossing() -> bytes:
    """The map's XML bytes (see the module docstring); the same bytes in any process, at any time."""
    fresh_ids()  # the writer's process-wide signal/object id registry would rename ids seen before
    west, south, east, north = _arm(1, EW_M, True), _arm(2, NS_M, False), _arm(3, EW_M, True), _arm(4, NS_M, False)
    arms = (west, south, east, north)
    creator = xodr.CommonJunctionCreator(id=100, name="crossing", startnum=100)
    # Each arm ends at the junction (its right lanes drive towards it), heading into it.
    for road, pose in zip(arms, ((-R_M, 0.0, 0.0), (0.0, -R_M, math.pi / 2), (R_M, 0.0, math.pi),
                                 (0.0, R_M, -math.pi / 2))):
        creator.add_incoming_road_cartesian_geometry(road, *pose, road_connection="successor")
    # Straight on: lane for lane; right turns from the outer lane, left turns from the inner lane.
    creator.add_connection(1, 3, [-1, -2], [1, 2])
    creator.add_connection(3, 1, [-1, -2], [1, 2])
    creator.add_connection(2, 4, -1, 1)
    creator.add_connection(4, 2, -1, 1)
    for a, b, lane_a, lane_b in ((1, 2, -2, 1), (1, 4, -1, 1), (3, 4, -2, 1), (3, 2, -1, 1),
                                 (2, 3, -1, 2), (2, 1, -1, 1), (4, 1, -1, 2), (4, 3, -1, 1)):
        creator.add_connection(a, b, lane_a, lane_b)
    for road in arms:
        length = EW_M if road.id in (1, 3) else NS_M
        kerb = -(2 * LANE_M if road.id in (1, 3) else LANE_M + PARKING_M)
        road.add_signal(xodr.Signal(s=length - 1.0, t=kerb - 0.5, country="DEU", Type="1000001", id=f"{road.id}1",
                                    dynamic=xodr.Dynamic.yes, orientation=xodr.Orientation.positive, zOffset=0.0))
    # A mid-block zebra across the south arm's carriageway (kerb to kerb).
    half = LANE_M + PARKING_M
    south.add_object(xodr.Object(s=CROSSWALK_S_M, t=0.0, Type=xodr.ObjectType.crosswalk, id="cw1",
                                 hdg=math.pi / 2, length=2 * half, width=CROSSWALK_W_M))
    odr = xodr.OpenDrive("city_crossing")
    for road in arms:
        odr.add_road(road)
    odr.add_junction_creator(creator)
    odr.adjust_roads_and_lanes()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "map.xodr"
        odr.write_xml(str(path))
        text = path.read_text(encoding="utf-8")
    text = re.sub(r' date="[^"]*"', "", text)
    return _with_controllers(text).encode("utf-8")


def _with_controllers(text: str) -> str:
    """Add the controllers (east–west: arms 1 and 3; north–south: arms 2 and 4), which the writer has no call for,
    after the roads (the schema's order) and name them in the junction."""
    controllers = ('    <controller id="c_ew" name="east_west"><control signalId="11" type="0"/>'
                   '<control signalId="31" type="0"/></controller>\n'
                   '    <controller id="c_ns" name="north_south"><control signalId="21" type="0"/>'
                   '<control signalId="41" type="0"/></controller>\n')
    text = text.replace("    <junction ", controllers + "    <junction ", 1)
    return re.sub(r'(<junction [^>]*>)', r'\1\n        <controller id="c_ew" sequence="1"/>'
                  r'\n        <controller id="c_ns" sequence="2"/>', text, count=1)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).with_name("city_crossing.xodr")
    tmp = out.with_suffix(".xodr.tmp")
    tmp.write_bytes(city_crossing())
    tmp.replace(out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
