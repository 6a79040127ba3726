"""The OpenDRIVE parser: safe XML (no entities, no network, no DTD), the resource limits checked while reading, and
one located line for every record it cannot read."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from lxml import etree

from simready.common.loading import read_bytes
from simready.maps.errors import MapError
from simready.maps.opendrive.records import (Connection, Corner, Geometry, Junction, Lane, LaneSection, MapObject,
                                             OpenDriveMap, Poly3, Road, RoadLink, RoadMark, Signal, SignalRef)


#: Plan-view records the importer evaluates.
GEOMETRY_KINDS = ("line", "arc", "spiral", "poly3", "paramPoly3")
_SPEED_UNITS = {"m/s": 1.0, "km/h": 1.0 / 3.6, "mph": 0.44704}
#: Road children the importer reads; any other is reported once per tag.
_ROAD_CHILDREN_READ = {"link", "planView", "lanes", "type", "signals", "objects"}
#: Road children read for heights (elevation and superelevation).
_ROAD_CHILDREN_HEIGHT = {"elevationProfile", "lateralProfile"}

#: Resource bounds (issue 27), checked while reading, before any allocation that scales with them. A map past
#: one is refused in one line naming the limit and the value: each is far beyond any real road network
#: (the largest public maps tried, 3.4 MB CARLA towns, hold ~1 300 geometries, 16 lanes per section, roads of 1.3 km).
LIMITS = {
    "road length (m)": 100_000.0,
    "lanes per lane section": 100,
    "geometries per map": 100_000,
    "lane sections per road": 10_000,
    "roads per map": 50_000,
    "|coordinate| (m)": 1.0e5,
    "|heading| (rad)": 1.0e3,
    "|lane id|": 100,
    "|polynomial coefficient|": 1.0e6,
}


class _Reader:
    """Attribute access that fails as one located line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.unread: Counter[str] = Counter()

    def error(self, where: str, reason: str, el: etree._Element) -> MapError:
        return MapError(self.source, where, f"{reason} (line {el.sourceline})")

    def num(self, el: etree._Element, name: str, where: str, default: float | None = None) -> float:
        raw = el.get(name)
        if raw is None:
            if default is None:
                raise self.error(where, f"<{el.tag}> has no {name!r} attribute", el)
            return default
        try:
            value = float(raw)
        except ValueError:
            raise self.error(where, f"<{el.tag}> {name}={raw!r} is not a number", el) from None
        if not math.isfinite(value):
            raise self.error(where, f"<{el.tag}> {name}={raw!r} is not a finite number", el)
        return value

    def integer(self, el: etree._Element, name: str, where: str) -> int:
        value = self.num(el, name, where)
        if value != int(value):
            raise self.error(where, f"<{el.tag}> {name}={el.get(name)!r} is not an integer", el)
        return int(value)

    def text(self, el: etree._Element, name: str, where: str, default: str | None = None) -> str:
        raw: str | None = el.get(name, default)
        if raw is None:
            raise self.error(where, f"<{el.tag}> has no {name!r} attribute", el)
        return raw


#: How far a lane section's start may lie outside its road's [0, length] (rounding in the writer), metres.
S_TOL_M = 1e-3


def read_opendrive(path: str | Path) -> tuple[OpenDriveMap, bytes]:
    """Read and parse ``path``; returns the map and the file's bytes (for its sha256).

    Raises:
        MapError: unreadable file, malformed XML (with its line), or a record
            the importer cannot read (with its location and line).
    """
    path = Path(path)
    raw = read_bytes(path, MapError)
    return parse_opendrive(raw, str(path)), raw


def parse_opendrive(raw: bytes, source: str) -> OpenDriveMap:
    """Parse OpenDRIVE bytes; see :func:`read_opendrive`."""
    # No entity expansion, no network, no DTD loading: a map is data, never a request.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else "?"
        raise MapError(source, "", f"malformed XML at line {line}: {exc.msg}") from None
    tag = etree.QName(root).localname
    if tag != "OpenDRIVE":
        raise MapError(source, "", f"root element is <{tag}>, not <OpenDRIVE> (line {root.sourceline})")
    _strip_namespaces(root)
    rd = _Reader(source)
    header = root.find("header")
    version = "?"
    if header is not None:
        version = f"{header.get('revMajor', '?')}.{header.get('revMinor', '?')}"
    road_els = root.findall("road")
    if not road_els:
        raise MapError(source, "OpenDRIVE.road", f"the map holds no <road> (line {root.sourceline})")
    _check_limit(source, "roads per map", len(road_els), "OpenDRIVE", root)
    n_geometries = sum(1 for _ in root.iterfind("road/planView/geometry"))
    _check_limit(source, "geometries per map", n_geometries, "OpenDRIVE.road.planView", root)
    roads = tuple(_road(rd, el) for el in road_els)
    junctions = tuple(_junction(rd, el) for el in root.findall("junction"))
    controllers = {
        rd.text(el, "id", "controller"): tuple(rd.text(c, "signalId", f"controller {el.get('id')}")
                                               for c in el.findall("control"))
        for el in root.findall("controller")
    }
    for child in root:
        if child.tag not in ("header", "road", "junction", "controller"):
            rd.unread[f"<{child.tag}> (top level)"] += 1
    seen: set[str] = set()
    for road in roads:
        if road.id in seen:
            raise MapError(source, f"road {road.id}", f"duplicate road id (line {road.line})")
        seen.add(road.id)
    unread = tuple(f"{what} x{n}" if n > 1 else what for what, n in sorted(rd.unread.items()))
    return OpenDriveMap(source, version, roads, junctions, controllers, unread)


def _check_limit(source: str, limit: str, value: float, where: str, el: etree._Element) -> None:
    if abs(value) > LIMITS[limit]:
        raise MapError(source, where, f"{limit} {value:g} is over the limit of {LIMITS[limit]:g} (line {el.sourceline})")


def _strip_namespaces(root: etree._Element) -> None:
    """OpenDRIVE 1.8 files may carry a default namespace; tags are read by local name."""
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.startswith("{"):
            el.tag = etree.QName(el).localname


def _road(rd: _Reader, el: etree._Element) -> Road:
    road_id = rd.text(el, "id", "road")
    where = f"road {road_id}"
    for child in el:
        if child.tag not in _ROAD_CHILDREN_READ | _ROAD_CHILDREN_HEIGHT:
            rd.unread[f"<{child.tag}> in a road"] += 1
    length = rd.num(el, "length", where)
    if length <= 0.0:
        raise rd.error(where, f"road length {length:g} m is not positive", el)
    _check_limit(rd.source, "road length (m)", length, where, el)
    link = el.find("link")
    predecessor = successor = None
    if link is not None:
        predecessor = _road_link(rd, link.find("predecessor"), where)
        successor = _road_link(rd, link.find("successor"), where)
    plan = el.find("planView")
    if plan is None or not len(plan.findall("geometry")):
        raise rd.error(where, "road has no <planView> geometry", el)
    geometries = tuple(_geometry(rd, g, where) for g in plan.findall("geometry"))
    lanes = el.find("lanes")
    if lanes is None or not len(lanes.findall("laneSection")):
        raise rd.error(where, "road has no <lanes>/<laneSection>", el)
    offsets = tuple(_poly(rd, o, "s", where + ", laneOffset") for o in lanes.findall("laneOffset"))
    section_els = lanes.findall("laneSection")
    _check_limit(rd.source, "lane sections per road", len(section_els), where, lanes)
    sections = tuple(_section(rd, s, where) for s in section_els)
    for section, section_el in zip(sections, section_els):
        # A section is a stretch of its road: one outside [0, length] would be sampled over its own span.
        if not -S_TOL_M <= section.s <= length + S_TOL_M:
            raise rd.error(where, f"laneSection s={section.s:g} lies outside the road's 0 to {length:g} m", section_el)
    elevation = tuple(_poly(rd, e, "s", where + ", elevation") for e in el.findall("elevationProfile/elevation"))
    superelevation = tuple(_poly(rd, e, "s", where + ", superelevation")
                           for e in el.findall("lateralProfile/superelevation"))
    if el.find("lateralProfile/shape") is not None:
        rd.unread["<lateralProfile><shape> (only superelevation is read)"] += 1
    speeds = []
    for t in el.findall("type"):
        sp = t.find("speed")
        if sp is not None and sp.get("max") not in (None, "no limit", "undefined"):
            speeds.append((rd.num(t, "s", where + ", type"), _speed(rd, sp, where + ", type")))
    return Road(
        id=road_id,
        name=el.get("name", ""),
        length=length,
        junction=el.get("junction", "-1"),
        rule=el.get("rule", "RHT"),
        predecessor=predecessor,
        successor=successor,
        geometries=geometries,
        lane_offsets=offsets,
        sections=sections,
        speeds_mps=tuple(speeds),
        signals=tuple(_signal(rd, s, where) for s in el.findall("signals/signal")),
        objects=tuple(_object(rd, o, where) for o in el.findall("objects/object")),
        line=el.sourceline,
        elevation=elevation,
        superelevation=superelevation,
        signal_refs=tuple(_signal_ref(rd, r, where) for r in el.findall("signals/signalReference")),
    )


def _road_link(rd: _Reader, el: etree._Element | None, where: str) -> RoadLink | None:
    if el is None:
        return None
    where = f"{where}, link.{el.tag}"
    return RoadLink(rd.text(el, "elementType", where, "road"), rd.text(el, "elementId", where),
                    el.get("contactPoint", ""), el.sourceline)


def _geometry(rd: _Reader, el: etree._Element, where: str) -> Geometry:
    s = rd.num(el, "s", where + ", geometry")
    where = f"{where}, geometry s={s:g}"
    kinds = [c for c in el if isinstance(c.tag, str)]
    if len(kinds) != 1:
        raise rd.error(where, f"<geometry> holds {len(kinds)} records, one of {', '.join(GEOMETRY_KINDS)} expected", el)
    rec = kinds[0]
    if rec.tag not in GEOMETRY_KINDS:
        raise rd.error(where, f"unsupported geometry record <{rec.tag}> (supported: {', '.join(GEOMETRY_KINDS)})", rec)
    names = {"line": (), "arc": ("curvature",), "spiral": ("curvStart", "curvEnd"), "poly3": ("a", "b", "c", "d"),
             "paramPoly3": ("aU", "bU", "cU", "dU", "aV", "bV", "cV", "dV")}[rec.tag]
    params: list[tuple[str, float | str]] = [(n, rd.num(rec, n, where)) for n in names]
    if rec.tag in ("poly3", "paramPoly3"):
        _check_limit(rd.source, "|polynomial coefficient|", max(abs(float(v)) for _, v in params), where, rec)
    if rec.tag == "paramPoly3":
        p_range = rec.get("pRange", "normalized")
        if p_range not in ("normalized", "arcLength"):
            raise rd.error(where, f"paramPoly3 pRange={p_range!r} is neither 'normalized' nor 'arcLength'", rec)
        params.append(("pRange", p_range))
    length = rd.num(el, "length", where)
    if length <= 0.0:
        raise rd.error(where, f"geometry length {length:g} m is not positive", el)
    _check_limit(rd.source, "road length (m)", length, where, el)
    x, y = rd.num(el, "x", where), rd.num(el, "y", where)
    _check_limit(rd.source, "|coordinate| (m)", max(abs(x), abs(y)), where, el)
    hdg = rd.num(el, "hdg", where)
    _check_limit(rd.source, "|heading| (rad)", hdg, where, el)
    return Geometry(s, x, y, hdg, length, rec.tag, tuple(params), el.sourceline)


def _poly(rd: _Reader, el: etree._Element, s_name: str, where: str) -> Poly3:
    coeffs = [rd.num(el, k, where) for k in "abcd"]
    _check_limit(rd.source, "|polynomial coefficient|", max(abs(c) for c in coeffs), where, el)
    a, b, c, d = coeffs
    return Poly3(rd.num(el, s_name, where), a, b, c, d, el.sourceline)


def _section(rd: _Reader, el: etree._Element, where: str) -> LaneSection:
    s = rd.num(el, "s", where + ", laneSection")
    where = f"{where}, laneSection s={s:g}"
    lanes = []
    _check_limit(rd.source, "lanes per lane section", len(el.findall("left/lane")) + len(el.findall("right/lane")),
                 where, el)
    for side in ("left", "right"):
        for lane in el.findall(f"{side}/lane"):
            lanes.append(_lane(rd, lane, where, side))
    centre = el.find("center/lane")
    marks = () if centre is None else _marks(rd, centre, where + ", center")
    return LaneSection(s, tuple(sorted(lanes, key=lambda lane: lane.id)), el.sourceline, marks)


def _marks(rd: _Reader, el: etree._Element, where: str) -> tuple[RoadMark, ...]:
    return tuple(sorted((RoadMark(rd.num(m, "sOffset", where, 0.0), m.get("type", "none"), m.get("color", "standard"),
                                  rd.num(m, "width", where, 0.12), m.get("laneChange", ""))
                         for m in el.findall("roadMark")), key=lambda m: m.s_offset))


def _lane(rd: _Reader, el: etree._Element, where: str, side: str) -> Lane:
    lane_id = rd.integer(el, "id", where + ", lane")
    _check_limit(rd.source, "|lane id|", lane_id, where + ", lane", el)
    where = f"{where}, lane {lane_id}"
    if lane_id == 0 or (lane_id > 0) != (side == "left"):
        raise rd.error(where, f"lane id {lane_id} does not belong in <{side}>", el)
    widths = tuple(_poly(rd, w, "sOffset", where + ", width") for w in el.findall("width"))
    link = el.find("link")
    pred: tuple[int, ...] = ()
    succ: tuple[int, ...] = ()
    if link is not None:
        pred = tuple(rd.integer(p, "id", where) for p in link.findall("predecessor"))
        succ = tuple(rd.integer(p, "id", where) for p in link.findall("successor"))
    speeds = tuple((rd.num(sp, "sOffset", where), _speed(rd, sp, where)) for sp in el.findall("speed"))
    for child in el:
        if child.tag in ("material", "access", "rule"):
            rd.unread[f"lane <{child.tag}>"] += 1
    marks = _marks(rd, el, where)
    heights = tuple(sorted((rd.num(h, "sOffset", where, 0.0), rd.num(h, "inner", where, 0.0),
                            rd.num(h, "outer", where, 0.0)) for h in el.findall("height")))
    return Lane(lane_id, el.get("type", "none"), widths, pred, succ, speeds, el.find("border") is not None,
                el.sourceline, marks, heights)


def _speed(rd: _Reader, el: etree._Element, where: str) -> float:
    unit = el.get("unit", "m/s")
    if unit not in _SPEED_UNITS:
        raise rd.error(where, f"speed unit {unit!r} not one of {', '.join(_SPEED_UNITS)}", el)
    value = rd.num(el, "max", where) * _SPEED_UNITS[unit]
    if value <= 0.0:
        raise rd.error(where, f"speed max {el.get('max')} is not positive", el)
    return value


def _signal(rd: _Reader, el: etree._Element, where: str) -> Signal:
    sig_id = rd.text(el, "id", where + ", signal")
    where = f"{where}, signal {sig_id}"
    validity = tuple((rd.integer(v, "fromLane", where), rd.integer(v, "toLane", where)) for v in el.findall("validity"))
    refs = tuple(r.get("elementId", "") for r in el.findall("reference") if r.get("elementType") == "signal")
    raw_value = el.get("value")
    try:
        value = float(raw_value) if raw_value is not None else None
    except ValueError:
        value = None
    if value is not None and not math.isfinite(value):
        value = None
    return Signal(sig_id, el.get("name", ""), rd.num(el, "s", where), rd.num(el, "t", where),
                  el.get("dynamic", "no") == "yes", el.get("orientation", "none"), el.get("type", ""),
                  el.get("subtype", ""), rd.num(el, "hOffset", where, 0.0), validity, refs, el.sourceline,
                  value, el.get("unit", ""), el.get("country", ""))


def _signal_ref(rd: _Reader, el: etree._Element, where: str) -> SignalRef:
    sig_id = rd.text(el, "id", where + ", signalReference")
    where = f"{where}, signalReference {sig_id}"
    validity = tuple((rd.integer(v, "fromLane", where), rd.integer(v, "toLane", where)) for v in el.findall("validity"))
    return SignalRef(sig_id, rd.num(el, "s", where), el.get("orientation", "none"), validity, el.sourceline)


def _object(rd: _Reader, el: etree._Element, where: str) -> MapObject:
    obj_id = rd.text(el, "id", where + ", object")
    where = f"{where}, object {obj_id}"
    corners: list[Corner] = []
    outline = el.find("outline")
    if outline is None:
        outline = el.find("outlines/outline")
    if outline is not None:
        for c in outline:
            if c.tag == "cornerLocal":
                corners.append(Corner("local", rd.num(c, "u", where), rd.num(c, "v", where)))
            elif c.tag == "cornerRoad":
                corners.append(Corner("road", rd.num(c, "s", where), rd.num(c, "t", where)))
    hdg = rd.num(el, "hdg", where, 0.0)
    _check_limit(rd.source, "|heading| (rad)", hdg, where, el)
    return MapObject(obj_id, el.get("type", ""), el.get("subtype", ""), rd.num(el, "s", where),
                     rd.num(el, "t", where), hdg, rd.num(el, "length", where, 0.0),
                     rd.num(el, "width", where, 0.0), tuple(corners), el.sourceline)


def _junction(rd: _Reader, el: etree._Element) -> Junction:
    jid = rd.text(el, "id", "junction")
    where = f"junction {jid}"
    connections = []
    for c in el.findall("connection"):
        cw = f"{where}, connection {c.get('id', '?')}"
        links = tuple((rd.integer(ll, "from", cw), rd.integer(ll, "to", cw)) for ll in c.findall("laneLink"))
        # A direct junction (1.7+) names the road it links to as linkedRoad; the lane links read the same.
        target = "linkedRoad" if c.get("connectingRoad") is None and c.get("linkedRoad") is not None else "connectingRoad"
        connections.append(Connection(c.get("id", ""), rd.text(c, "incomingRoad", cw), rd.text(c, target, cw),
                                      c.get("contactPoint", "start"), links, c.sourceline))
    controllers = tuple(rd.text(c, "id", where) for c in el.findall("controller"))
    return Junction(jid, el.get("name", ""), tuple(connections), controllers, el.sourceline)
