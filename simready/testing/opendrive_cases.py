"""OpenDRIVE maps reproducing what real maps hold and the importer must survive (issue 24), written by
``scenariogeneration``'s OpenDRIVE writer (never by hand), each with the numbers a test needs for its
analytic reference:

* :func:`tight_corner`: a 90° left bend of radius :data:`CORNER` ``radius`` with two lanes on the inside —
  the outer one's far border lies beyond the bend's centre (a junction corner tighter than its outer lane's
  offset; CARLA towns hold dozens);
* :func:`city_junction`: one signalised four-way junction with two lanes each way and sidewalks;
* :func:`opposite_sign_highway`: a two-lane one-way road into a junction whose connecting road carries its
  lanes on its *left* (ids 1, 2) and is linked from lanes -1, -2 (a highway connection between lanes of
  opposite id sign);
* :func:`stop_line_past_section`: a light at s = 70 m valid for lane -2, which ends with its lane section at
  s = 50 m;
* :func:`controller_lights`: the four-way junction of :mod:`simready.testing.opendrive_maps` whose lights
  carry neither validity nor orientation: only the junction's controllers bind them;
* :func:`crest_road`: a straight road over a crest (cubic elevation), with a constant superelevation and a
  raised sidewalk (lane height);
* :func:`marked_road`: two same-direction lanes with a broken (or solid, or ``solid broken``) mark between them;
* :func:`grid_city`: an n × n grid of signalised four-way junctions with sidewalks (the import benchmark's
  city map, ~3 MB at n = 9).
"""

from __future__ import annotations

import math
import re

from scenariogeneration import xodr

from simready.maps.xodr_export import fresh_ids
from simready.testing.opendrive_maps import junction_map
from simready.testing.xodr_build import (
    four_way_junction,
    junction_arm,
    lane,
    lanes_of,
    one_road_map,
    plan_view,
    section,
    xml_bytes,
)

__all__ = ["CORNER", "CREST", "HIGHWAY", "SIGNS", "STOP_PAST", "controller_lights", "crest_road", "grid_city",
           "marked_road", "opposite_sign_highway", "stop_line_past_section", "tight_corner", "city_junction"]

#: Tight corner: straight lead-in and lead-out (m), bend radius (m), lane width (m): lane 2 spans t = 3..6 m
#: on the inside of a 5 m bend, so its far border folds round the bend's centre while its centre (4.5 m) does not.
CORNER = {"lead": 20.0, "radius": 5.0, "width": 3.0}
#: Highway: incoming road length, connecting road length, outgoing road length (m), lane width (m).
HIGHWAY = {"in": 100.0, "connect": 30.0, "out": 100.0, "width": 3.5}
#: Stop line past its section: road length, where lane -2 ends, where the light stands (m).
STOP_PAST = {"length": 100.0, "section": 50.0, "signal_s": 70.0, "width": 3.5}
#: Crest: road length (m), elevation cubic (a, b, c, d), superelevation (rad), sidewalk kerb height (m).
CREST = {"length": 100.0, "elevation": (1.0, 0.1, -0.001, 0.0), "superelevation": 0.04, "kerb": 0.15,
         "widths": {1: 3.5, -1: 3.5, -2: 2.0}}


def _lane(kind: xodr.LaneType, width: float, *, mark: xodr.RoadMark | None = None) -> xodr.Lane:
    """A constant-width lane, its zero width coefficients written as these maps first had them (``b="0"``)."""
    return lane(kind, width, 0, 0, 0, mark=mark)


def tight_corner(width: float | None = None) -> bytes:
    """Line, a 90° left arc of radius 5 m, line; lanes 1 and 2 (inside) and -1, 3 m each (or ``width``)."""
    fresh_ids()
    w, r, lead = width or CORNER["width"], CORNER["radius"], CORNER["lead"]
    lanes = lanes_of(section(0, [_lane(xodr.LaneType.driving, w), _lane(xodr.LaneType.driving, w)],
                             [_lane(xodr.LaneType.driving, w)]))
    road = xodr.Road(1, plan_view([xodr.Line(lead), xodr.Arc(1.0 / r, angle=math.pi / 2), xodr.Line(lead)]), lanes)
    return one_road_map("tight_corner", road)


def _one_way(road_id: int, length: float, x: float, y: float, left: bool, junction: int = -1) -> xodr.Road:
    both = [_lane(xodr.LaneType.driving, HIGHWAY["width"], mark=xodr.std_roadmark_broken()) for _ in range(2)]
    lanes = lanes_of(section(0, both, []) if left else section(0, [], both))
    return xodr.Road(road_id, plan_view([xodr.Line(length)], x, y, 0.0), lanes, road_type=junction)


def opposite_sign_highway() -> bytes:
    """Road 1 (lanes -1, -2) → junction 100's road 100 (lanes 1, 2, along s) → road 2 (lanes -1, -2), all eastwards.

    Road 100's reference line runs 7 m right of road 1's, so its left lanes
    continue road 1's right lanes: lane -1 → 2 and -2 → 1.
    """
    fresh_ids()
    h = HIGHWAY
    w = h["width"]
    road1 = _one_way(1, h["in"], 0.0, 0.0, left=False)
    road100 = _one_way(100, h["connect"], h["in"], -2 * w, left=True, junction=100)
    road2 = _one_way(2, h["out"], h["in"] + h["connect"], 0.0, left=False)
    road1.add_successor(xodr.ElementType.junction, 100)
    road2.add_predecessor(xodr.ElementType.junction, 100)
    road100.add_predecessor(xodr.ElementType.road, 1, xodr.ContactPoint.end)
    road100.add_successor(xodr.ElementType.road, 2, xodr.ContactPoint.start)
    junction = xodr.Junction("highway", 100)
    enter = xodr.Connection(1, 100, xodr.ContactPoint.start)
    enter.add_lanelink(-1, 2)
    enter.add_lanelink(-2, 1)
    junction.add_connection(enter)
    odr = xodr.OpenDrive("highway")
    for road in (road1, road100, road2):
        road.planview.adjust_geometries()
        odr.add_road(road)
    odr.add_junction(junction)
    return xml_bytes(odr)


def stop_line_past_section() -> bytes:
    """A road whose lane -2 ends at s = 50 m (section 0) and a light at s = 70 m valid for lane -2 only."""
    fresh_ids()
    p = STOP_PAST
    def driving(n: int) -> list[xodr.Lane]:
        return [_lane(xodr.LaneType.driving, p["width"]) for _ in range(n)]

    lanes = lanes_of(section(0, driving(1), driving(2)), section(p["section"], driving(1), driving(1)))
    road = xodr.Road(1, plan_view([xodr.Line(p["length"])]), lanes)
    signal = xodr.Signal(s=p["signal_s"], t=-8.0, country="DEU", Type="1000001", id="7", dynamic=xodr.Dynamic.yes,
                         orientation=xodr.Orientation.positive, zOffset=0.0)
    signal.add_validity(-2, -2)
    road.add_signal(signal)
    return one_road_map("stop_past", road)


def controller_lights() -> bytes:
    """The four-way junction map with every light's orientation removed (``none``): controllers bind them."""
    text = junction_map().decode("utf-8")
    text = re.sub(r'(<signal [^>]*?)orientation="\+"', r'\1orientation="none"', text)
    return text.encode("utf-8")


def crest_road() -> bytes:
    """Straight road over a crest: z = a + b·s + c·s² (+ d·s³), constant superelevation, a 0.15 m kerb on lane -2."""
    fresh_ids()
    c = CREST
    sidewalk = _lane(xodr.LaneType.sidewalk, c["widths"][-2])
    sidewalk.add_height(c["kerb"], c["kerb"])
    lanes = lanes_of(section(0, [_lane(xodr.LaneType.driving, c["widths"][1])],
                             [_lane(xodr.LaneType.driving, c["widths"][-1]), sidewalk]))
    road = xodr.Road(1, plan_view([xodr.Line(c["length"])]), lanes)
    road.add_elevation(0.0, *c["elevation"])
    road.add_superelevation(0.0, c["superelevation"], 0.0, 0.0, 0.0)
    return one_road_map("crest", road)


#: Signs on :func:`marked_road` with ``signs=True``: a stop sign at s = 95 m and a 30 km/h limit at s = 10 m (lane -1),
#: and a 6 m × 2.5 m parking space beside lane 1 at s = 40 m.
SIGNS = {"stop_s": 95.0, "speed_s": 10.0, "speed_kmh": 30.0, "parking_s": 40.0, "parking": (6.0, 2.5)}


def marked_road(mark: str, signs: bool = False) -> bytes:
    """A 100 m road with lanes -1 and -2 (same direction) and lane 1; ``mark`` on the line between -1 and -2.

    With ``signs``: :data:`SIGNS` (a stop sign valid for lanes -1..-2, a speed
    limit valid for lane -1, a ``parkingSpace`` object).
    """
    fresh_ids()
    kinds = {"broken": xodr.RoadMarkType.broken, "solid": xodr.RoadMarkType.solid,
             "solid broken": xodr.RoadMarkType.solid_broken, "broken solid": xodr.RoadMarkType.broken_solid}
    lanes = lanes_of(section(0, [_lane(xodr.LaneType.driving, 3.5)],
                             [_lane(xodr.LaneType.driving, 3.5, mark=xodr.RoadMark(kinds[mark], 0.12)),
                              _lane(xodr.LaneType.driving, 3.5)]))
    road = xodr.Road(1, plan_view([xodr.Line(100.0)]), lanes)
    if signs:
        stop = xodr.Signal(s=SIGNS["stop_s"], t=-8.0, country="DEU", Type="206", id="stop1", zOffset=0.0)
        stop.add_validity(-2, -1)
        road.add_signal(stop)
        limit = xodr.Signal(s=SIGNS["speed_s"], t=-8.0, country="DEU", Type="274", id="limit1",
                            value=SIGNS["speed_kmh"], unit="km/h", zOffset=0.0)
        limit.add_validity(-1, -1)
        road.add_signal(limit)
        length, width = SIGNS["parking"]
        road.add_object(xodr.Object(s=SIGNS["parking_s"], t=3.5 + width / 2, Type=xodr.ObjectType.parkingSpace,
                                    id="p1", length=length, width=width))
    return one_road_map("marked", road)


def _city_arm_side() -> list[xodr.Lane]:
    """The lanes on each side of a :func:`city_junction` arm, from the centre out."""
    return [_lane(xodr.LaneType.driving, 3.5, mark=xodr.std_roadmark_broken()), _lane(xodr.LaneType.driving, 3.5),
            _lane(xodr.LaneType.sidewalk, 2.0)]


def city_junction(block_m: float = 120.0) -> bytes:
    """One signalised four-way junction of :func:`grid_city`: four arms half a block long, two lanes each way and
    sidewalks, every arm connected to every other by ``CommonJunctionCreator``, a light on each arm."""
    fresh_ids()
    radius = 16.0
    arm = 0.5 * block_m - radius
    return four_way_junction("city_junction", [junction_arm(k + 1, arm, _city_arm_side) for k in range(4)], arm,
                             radius, -9.0)


def grid_city(n: int = 9, block_m: float = 120.0) -> bytes:
    """:func:`city_junction` tiled ``n`` × ``n``, ``block_m`` apart (the import benchmark's city map).

    Each tile's ids are offset (roads, junction, signals, controllers) and
    its geometry shifted; neighbouring tiles' arms meet end to end, so their
    lanes join geometrically (the file holds no road links between tiles,
    which the import reports).
    """
    from lxml import etree  # lxml (~20 ms), only for the grid city

    root = etree.fromstring(city_junction(block_m))
    tile = [el for el in root if el.tag in ("road", "controller", "junction")]
    for el in tile:
        root.remove(el)
    for i in range(n):
        for j in range(n):
            prefix = f"{i * n + j + 1}"
            for el in tile:
                copy = etree.fromstring(etree.tostring(el))
                _retag(copy, prefix, i * block_m, j * block_m)
                root.append(copy)
    return etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True)


def _retag(el, prefix: str, dx: float, dy: float) -> None:
    """Offset every id an element holds (and every reference to one) by ``prefix``; shift its geometry."""
    id_attrs = {"road": ("id", "junction"), "controller": ("id",), "junction": ("id",),
                "connection": ("incomingRoad", "connectingRoad"), "predecessor": ("elementId",),
                "successor": ("elementId",), "signal": ("id",), "control": ("signalId",)}
    for node in el.iter():
        for attr in id_attrs.get(node.tag, ()):
            value = node.get(attr)
            if value is not None and value != "-1":
                node.set(attr, f"{prefix}_{value}")
        if node.tag == "geometry":
            node.set("x", repr(float(node.get("x")) + dx))
            node.set("y", repr(float(node.get("y")) + dy))
