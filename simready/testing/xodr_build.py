"""The pieces every OpenDRIVE test map is built of (:mod:`simready.testing.opendrive_maps`,
:mod:`simready.testing.opendrive_cases`), all through ``scenariogeneration``'s OpenDRIVE writer, never by hand.

The writer stamps the date in the header; :func:`xml_bytes` removes it so that the same map gives the same
bytes (and the same sha256) every time.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from scenariogeneration import xodr


def xml_bytes(odr: xodr.OpenDrive) -> bytes:
    """The map as the writer writes it, less the header's date."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "map.xodr"
        odr.write_xml(str(path))
        text = path.read_text(encoding="utf-8")
    return re.sub(r' date="[^"]*"', "", text).encode("utf-8")


def lane(kind: xodr.LaneType, a: float, b: float = 0.0, c: float = 0.0, d: float = 0.0, *,
         mark: xodr.RoadMark | None = None) -> xodr.Lane:
    """A lane of width ``a + b·ds + c·ds² + d·ds³`` with ``mark`` on its outer border (a solid line by default)."""
    out = xodr.Lane(lane_type=kind, a=a, b=b, c=c, d=d)
    out.add_roadmark(mark if mark is not None else xodr.std_roadmark_solid())
    return out


def centre_lane() -> xodr.Lane:
    """The centre lane (id 0) with a broken line."""
    centre = xodr.Lane(lane_type=xodr.LaneType.none)
    centre.add_roadmark(xodr.std_roadmark_broken())
    return centre


def section(s: float, left: Sequence[xodr.Lane] = (), right: Sequence[xodr.Lane] = ()) -> xodr.LaneSection:
    """A lane section from ``s`` with ``left`` lanes (ids 1, 2, … outwards) and ``right`` ones (-1, -2, …)."""
    out = xodr.LaneSection(s, centre_lane())
    for item in left:
        out.add_left_lane(item)
    for item in right:
        out.add_right_lane(item)
    return out


def lanes_of(*sections: xodr.LaneSection) -> xodr.Lanes:
    """A road's lanes: its sections in order."""
    lanes = xodr.Lanes()
    for item in sections:
        lanes.add_lanesection(item)
    return lanes


def plan_view(geoms: list, x: float = 0.0, y: float = 0.0, h: float = 0.0) -> xodr.PlanView:
    """A reference line from ``(x, y)`` heading ``h``: the geometries one after the other."""
    pv = xodr.PlanView(x, y, h)
    for g in geoms:
        pv.add_geometry(g)
    return pv


def one_road_map(name: str, road: xodr.Road) -> bytes:
    """A map of one road, links and geometry adjusted by the writer."""
    odr = xodr.OpenDrive(name)
    odr.add_road(road)
    odr.adjust_roads_and_lanes()
    return xml_bytes(odr)


def junction_arm(road_id: int, length_m: float, side: Callable[[], list[xodr.Lane]]) -> xodr.Road:
    """A straight town road (50 km/h) into a junction, the lanes ``side()`` makes on each side (from the centre
    outwards), with no fixed start: the writer places it from the junction's geometry."""
    left, right = side(), side()
    plan = xodr.PlanView()
    plan.add_geometry(xodr.Line(length_m))
    road = xodr.Road(road_id, plan, lanes_of(section(0, left, right)))
    road.add_type(xodr.RoadType.town, 0, speed=50, speed_unit="km/h")
    return road


def four_way_junction(name: str, arms: Sequence[xodr.Road], arm_m: float, radius_m: float,
                      signal_t_m: float | None) -> bytes:
    """Four arms ``arm_m`` long (west, south, east, north of the centre, ending ``radius_m`` from it) joined every
    one to every other by ``CommonJunctionCreator`` (junction 100), a traffic light ``signal_t_m`` beside the
    junction end of each arm (id ``<road>1``, 1 m before the end, facing along s), and the two controllers of
    :func:`with_controllers`; ``signal_t_m=None``: no lights and no controllers."""
    creator = xodr.CommonJunctionCreator(id=100, name="crossing", startnum=100)
    r = radius_m
    for k, road in enumerate(arms):
        creator.add_incoming_road_cartesian_geometry(road, *((-r, 0.0, 0.0), (0.0, -r, math.pi / 2),
                                                             (r, 0.0, math.pi), (0.0, r, -math.pi / 2))[k],
                                                     road_connection="successor")
    for a in range(4):
        for b in range(a + 1, 4):
            creator.add_connection(a + 1, b + 1)
    for road in arms if signal_t_m is not None else ():
        road.add_signal(xodr.Signal(s=arm_m - 1.0, t=signal_t_m, country="DEU", Type="1000001", id=f"{road.id}1",
                                    dynamic=xodr.Dynamic.yes, orientation=xodr.Orientation.positive, zOffset=0.0))
    odr = xodr.OpenDrive(name)
    for road in arms:
        odr.add_road(road)
    odr.add_junction_creator(creator)
    odr.adjust_roads_and_lanes()
    return xml_bytes(odr) if signal_t_m is None else with_controllers(xml_bytes(odr))


def with_controllers(xml: bytes) -> bytes:
    """Add the two controllers (arms 1 and 3, arms 2 and 4) the writer has no call for, and name them in the
    junction."""
    text = xml.decode("utf-8")
    controllers = ('    <controller id="c_ew" name="east_west"><control signalId="11" type="0"/>'
                   '<control signalId="31" type="0"/></controller>\n'
                   '    <controller id="c_ns" name="north_south"><control signalId="21" type="0"/>'
                   '<control signalId="41" type="0"/></controller>\n')
    # The schema orders a map's children: roads, then controllers, then junctions.
    text = text.replace("    <junction ", controllers + "    <junction ", 1)
    text = re.sub(r'(<junction [^>]*>)', r'\1\n        <controller id="c_ew" sequence="1"/>'
                  r'\n        <controller id="c_ns" sequence="2"/>', text, count=1)
    return text.encode("utf-8")
