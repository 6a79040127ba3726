"""The OpenDRIVE records the importer reads, immutable, each with its XML line: roads with their plan view, lane
sections, lanes and road marks, links, signals and objects; junctions and their connections; the map."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Poly3:
    """``a + b·ds + c·ds² + d·ds³`` from ``s0`` on (``ds = s − s0``; s0 relative to what holds it)."""

    s0: float
    a: float
    b: float
    c: float
    d: float
    line: int

    def at(self, s: float) -> float:
        ds = s - self.s0
        return self.a + ds * (self.b + ds * (self.c + ds * self.d))


@dataclass(frozen=True)
class Geometry:
    """One plan-view record: start ``s``, ``x``, ``y``, ``hdg`` (rad), ``length`` (m), its kind and parameters."""

    s: float
    x: float
    y: float
    hdg: float
    length: float
    kind: str
    params: tuple[tuple[str, float | str], ...]
    line: int

    def param(self, name: str) -> float:
        return float(dict(self.params)[name])

    def text(self, name: str, default: str) -> str:
        return str(dict(self.params).get(name, default))


@dataclass(frozen=True)
class Lane:
    """A lane of a lane section: ``id`` (<0 right of the reference line, >0 left), type, width records, links."""

    id: int
    type: str
    widths: tuple[Poly3, ...]
    predecessors: tuple[int, ...]
    successors: tuple[int, ...]
    speeds_mps: tuple[tuple[float, float], ...]
    has_border: bool
    line: int
    #: Road marks on the lane's outer border, in order of ``s_offset``.
    road_marks: tuple[RoadMark, ...] = ()
    #: ``(sOffset, inner, outer)`` height records (m above the road surface), e.g. a raised sidewalk.
    heights: tuple[tuple[float, float, float], ...] = ()


@dataclass(frozen=True)
class RoadMark:
    """A ``<roadMark>``: from ``s_offset`` (relative to its lane section) on, ``type`` (solid, broken, solid solid, ...)."""

    s_offset: float
    type: str
    color: str
    width: float
    lane_change: str


@dataclass(frozen=True)
class LaneSection:
    s: float
    lanes: tuple[Lane, ...]
    line: int
    #: Road marks of the centre lane (id 0), along the reference line shifted by the lane offset.
    centre_marks: tuple[RoadMark, ...] = ()


@dataclass(frozen=True)
class RoadLink:
    element_type: str
    element_id: str
    contact_point: str
    line: int


@dataclass(frozen=True)
class Corner:
    """An outline corner: ``local`` (u, v relative to the object) or ``road`` (s, t)."""

    kind: str
    a: float
    b: float


@dataclass(frozen=True)
class MapObject:
    id: str
    type: str
    subtype: str
    s: float
    t: float
    hdg: float
    length: float
    width: float
    corners: tuple[Corner, ...]
    line: int


@dataclass(frozen=True)
class Signal:
    id: str
    name: str
    s: float
    t: float
    dynamic: bool
    orientation: str
    type: str
    subtype: str
    h_offset: float
    validity: tuple[tuple[int, int], ...]
    references: tuple[str, ...]
    line: int
    value: float | None = None
    unit: str = ""
    country: str = ""


@dataclass(frozen=True)
class SignalRef:
    """A ``<signalReference>``: signal ``id`` (defined on another road) also governs this road at ``s``."""

    id: str
    s: float
    orientation: str
    validity: tuple[tuple[int, int], ...]
    line: int


@dataclass(frozen=True)
class Road:
    id: str
    name: str
    length: float
    junction: str
    rule: str
    predecessor: RoadLink | None
    successor: RoadLink | None
    geometries: tuple[Geometry, ...]
    lane_offsets: tuple[Poly3, ...]
    sections: tuple[LaneSection, ...]
    speeds_mps: tuple[tuple[float, float], ...]
    signals: tuple[Signal, ...]
    objects: tuple[MapObject, ...]
    line: int
    #: ``elevationProfile`` records (z of the reference line, m) and ``lateralProfile`` superelevation (rad).
    elevation: tuple[Poly3, ...] = ()
    superelevation: tuple[Poly3, ...] = ()
    signal_refs: tuple[SignalRef, ...] = ()

    @property
    def in_junction(self) -> bool:
        return self.junction not in ("-1", "")


@dataclass(frozen=True)
class Connection:
    id: str
    incoming_road: str
    connecting_road: str
    contact_point: str
    lane_links: tuple[tuple[int, int], ...]
    line: int


@dataclass(frozen=True)
class Junction:
    id: str
    name: str
    connections: tuple[Connection, ...]
    controllers: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class OpenDriveMap:
    """A parsed map. ``controllers`` maps a controller id to the signal ids it switches together."""

    source: str
    version: str
    roads: tuple[Road, ...]
    junctions: tuple[Junction, ...]
    controllers: dict[str, tuple[str, ...]]
    unread: tuple[str, ...] = field(default=())

    def road(self, road_id: str) -> Road | None:
        return next((r for r in self.roads if r.id == road_id), None)
