"""ASAM OpenSCENARIO XML (1.0–1.3) → scenario manifest (SPEC §6, §19): the inverse of :mod:`.xosc_export`.

``import_xosc(file)`` reads a scenario, the road network its ``LogicFile``
names (relative to the ``.xosc``, as the standard says) or ``map_path``, and
the catalogs its ``CatalogLocations`` point at, and returns a validated
:class:`~simready.scenario.manifest.ScenarioManifest` on a world template,
with a report listing — one line each, with the element path and XML line —
what was approximated or could not be represented. The import is refused
(one :class:`XoscError` naming file, element and line) only when the story
cannot be represented: malformed XML, an undefined parameter, a catalog
reference that resolves to nothing, an entity without a position, a
condition or action on an unknown entity, a map that does not import.

Reading is safe: lxml with no entity expansion, no DTD, no network (the
parser :mod:`.opendrive` uses); parameters and ``${…}`` expressions are
evaluated by :mod:`.xosc_params` (never ``eval``).

What maps to what:

* **Road network** → the template whose exported OpenDRIVE
  (:func:`~simready.maps.xodr_export.export_xodr`) has the same sha256 as
  the file (a simready export comes back to its own template), else the map
  imported by :func:`~simready.maps.xodr_import.import_opendrive` as template
  ``xosc_<map stem>`` (returned as data for the caller to write).
* **Entities** → actors: Vehicle (bicycle / motorbike → cyclist) or
  Pedestrian, inline or a ``CatalogReference`` resolved through the catalog
  directories (with the entry's parameters and the reference's
  assignments); each is matched to the certified catalog entry of its class
  with the nearest dimensions (a simready export's ``simready.asset_id``
  property wins); the ego is the entity named ``ego``/``hero`` (any case),
  else the first vehicle. A ``MiscObject`` becomes a ``structure`` occluder
  (a box at its position).
* **Init** → initial pose from a TeleportAction with a World, Lane,
  RelativeLane, RelativeObject, RelativeWorld, Road, RelativeRoad or Route position (``pathS`` is road s
  driven along the route from its first waypoint; the waypoints' lanes are joined by the lane router; a
  route inline or from a route catalog); initial speed
  from an absolute or relative (to an already placed entity) SpeedAction;
  AssignRouteAction → the behaviour route; VisibilityAction(false) → absent
  at start.
* **Time**: simulation time 0 is the Init. A simready export carries
  ``simready.warmup_s`` in the file header; elsewhere the warm-up is 0, so
  manifest time = simulation time. The storyboard's stop trigger at a
  simulation time sets ``clip_s`` (else :data:`DEFAULT_CLIP_S`).
* **Events** → interactions (one per private action; the event's name, then
  ``<event>_<k>`` for further actions): SpeedAction (absolute → speed
  absolute, or stop at 0; relative delta / factor → speed delta / factor;
  relative to another entity with value 0 continuous → match, otherwise
  absolute at that entity's initial speed plus the value) with its
  transition dynamics (shape, rate / time / distance); LaneChangeAction
  (absolute target lane → change_lane to the template lane there; relative
  ±1 to itself → left / right; 0 relative to another entity → actor_lane);
  LaneOffsetAction (absolute → lane_offset metres with a duration from the
  peak lateral acceleration and shape; an absolute offset that lands on a
  neighbouring lane's centre, continuous false, is a change_lane — how the
  export writes a lane change); LongitudinalDistanceAction → gap;
  AssignRouteAction → route over the template lanes its waypoints lie on;
  AcquirePositionAction → route to the lane of its position (linked from the actor's lane when it fires);
  FollowTrajectoryAction (polyline, clothoid, NURBS control points) → route
  over the lanes its vertices lie on (the trajectory's own path is reported
  as approximated); VisibilityAction → exist; LightStateAction,
  AnimationAction (doors) and EnvironmentAction (friction, rain) → set.
  A TeleportAction in the storyboard, controllers, other global actions and
  custom commands are listed as not represented.
* **Triggers**: SimulationTime → at; StoryboardElementState of an event
  (start / running) → after with the condition's delay, (end / complete) →
  after with the event's duration added; other conditions → when:
  ReachPosition and Distance to a position → reaches a circle (a lane
  position with the export's half-window → reaches a lane window);
  RelativeDistance / Distance to an entity → distance (longitudinal in lane
  coordinates → along_lane, else euclidean); TimeHeadway → headway;
  TimeToCollision to an entity → ttc (to a position, an ``arrival`` trigger
  of the acting actor); Speed → speed; RelativeSpeed → speed of the entity
  against the reference's initial speed plus the value (approximated);
  TraveledDistance → reaches the lane window its route puts that far ahead;
  StandStill → standstill; Collision → collision; TrafficSignal → signal.
  ``lessThan``/``lessOrEqual`` → lt, ``greaterThan``/``greaterOrEqual`` →
  gt (``equalTo`` approximated by gt); a falling edge negates the leaf; a
  rising edge is the manifest's first-holds semantics. Condition groups: one
  group → and, single-leaf groups → or, a group holding only a simulation
  time bound → ``by_latest`` (the export's ``fire``/``skip`` patterns come
  back as they went). Act start triggers are added to each of their events'
  conditions; act and event stop triggers are listed as not represented.
* **Decision checkpoint**: ``decision`` (an event name or seconds), else the
  first event of the main maneuver group (the first maneuver group of the
  first act acting on a non-ego actor, else the first); recorded in
  ``realized.decision_event`` / ``realized.t_decision_s`` (when the event
  fires at a known time) for ``simready sim branch``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from lxml import etree

from simready.catalog.catalog import ensure_catalog
from simready.catalog.certified import certified_ids
from simready.catalog.index import ENTRY_FILE
from simready.common import paths
from simready.common.errors import ManifestError
from simready.common.hashing import file_sha256, sha256_bytes
from simready.common.loading import read_bytes
from simready.maps.errors import MapError
from simready.maps.opendrive import OpenDriveMap, Road, read_opendrive
from simready.maps.refline import reference_poses
from simready.maps.xosc_params import ExpressionError, Parameters, distribution_sets
from simready.scenario.manifest import parse_manifest, SCHEMA_VERSION
from simready.scenario.manifest.base import MAX_CLIP_S
from simready.scenario.streams import StreamSet
from simready.world.lane_graph import lane_network
from simready.world.routing import plan_route, plan_via
from simready.world.template import list_template_files, load_template, parse_template, template_hash

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.scenario.manifest import ScenarioManifest
    from simready.world.template import WorldTemplate

__all__ = ["DEFAULT_CLIP_S", "XoscError", "XoscImport", "XoscReport", "import_distribution", "import_xosc", "is_distribution",
           "manifests_for_sets", "read_distribution"]

#: Clip length when the storyboard's stop trigger is not a simulation time (s).
DEFAULT_CLIP_S = 20.0
#: Largest clip the manifest allows is MAX_CLIP_S; longer stories are cut (and reported).
_ENTITY_ACTIONS = ("SpeedAction", "LaneChangeAction", "LaneOffsetAction", "LongitudinalAction", "LateralAction")
_SHAPES = {"step": "step", "linear": "linear", "sinusoidal": "sinusoidal", "cubic": "cubic"}
_RULE = {"lessThan": "lt", "lessOrEqual": "lt", "greaterThan": "gt", "greaterOrEqual": "gt", "equalTo": "gt",
         "notEqualTo": "gt"}
_INVERT = {"lt": "gt", "gt": "lt"}
_LIGHTS = {"brakeLights": "lights.brake", "warningLights": "lights.hazard", "indicatorLeft": "lights.indicator_left",
           "indicatorRight": "lights.indicator_right"}
_DOORS = {"doorFrontLeft": "doors.front_left", "doorFrontRight": "doors.front_right",
          "doorRearLeft": "doors.rear_left", "doorRearRight": "doors.rear_right", "trunk": "doors.tailgate"}
#: OpenSCENARIO vehicle categories → (manifest kind, catalog semantic classes in order of preference).
_VEHICLE_CLASSES = {"car": ("vehicle", ("car", "shuttle", "van")), "van": ("vehicle", ("van", "shuttle", "car")),
                    "truck": ("vehicle", ("van", "shuttle")), "bus": ("vehicle", ("shuttle", "van")),
                    "trailer": ("vehicle", ("van",)), "semitrailer": ("vehicle", ("van",)),
                    "tram": ("vehicle", ("shuttle", "van")), "train": ("vehicle", ("shuttle", "van")),
                    "bicycle": ("cyclist", ("cyclist",)), "motorbike": ("cyclist", ("cyclist",))}
_DEFAULT_RULES = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.2,
                  "speed_factor": 1.0}
_ENVIRONMENT = {"illumination": "day", "sun_elevation_deg": 45.0, "sun_azimuth_deg": 180.0, "headlights": False,
                "weather": "dry", "wetness": 0.0, "road_friction": 0.9, "road_reflectance": 0.1, "rain_rate_mmph": 0.0}
#: A moving vehicle may start at most this far off the lane it drives (m): the simulator's MAX_ROUTE_OFFSET_M.
MAX_START_OFFSET_M = 3.0
#: A LaneOffsetAction whose offset lies within this of a neighbouring lane's centre is a lane change (m).
LANE_CENTRE_TOLERANCE_M = 0.05
_PEAK = {"sinusoidal": math.pi ** 2 / 2.0, "cubic": 6.0, "linear": 4.0}


class XoscError(MapError):
    """An OpenSCENARIO file that cannot be imported: the field names the element path, the reason ends with its line."""


@dataclass
class XoscReport:
    """What the import did: the template it used, the decision it chose, and one line per approximation or omission."""

    source: str
    template: str = ""
    decision: str = ""
    approximated: list[str] = field(default_factory=list)
    not_represented: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return ([f"template: {self.template}", f"decision: {self.decision}"]
                + [f"approximated: {a}" for a in self.approximated]
                + [f"not represented: {n}" for n in self.not_represented])

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "template": self.template, "decision": self.decision,
                "approximated": self.approximated, "not_represented": self.not_represented}


@dataclass
class XoscImport:
    """The manifest, its template (and the template's YAML data when the map was imported, not matched), the report."""

    manifest: ScenarioManifest
    template: WorldTemplate
    template_data: dict[str, Any] | None
    report: XoscReport
    parameters: dict[str, str]


# --- XML ----------------------------------------------------------------------------------------------------------


def _parse_xml(raw: bytes, source: str) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise XoscError(source, "", f"malformed XML at line {exc.lineno or '?'}: {exc.msg}") from None
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.startswith("{"):
            el.tag = etree.QName(el).localname
    if root.tag != "OpenSCENARIO":
        raise XoscError(source, "", f"root element is <{root.tag}>, not <OpenSCENARIO> (line {root.sourceline})")
    return root


def _path(el: etree._Element) -> str:
    """``Storyboard/Story[s1]/Act[a1]/…``: tags with their name where they have one."""
    parts = []
    node: Any = el
    while node is not None and node.tag != "OpenSCENARIO":
        name = node.get("name")
        parts.append(f"{node.tag}[{name}]" if name else node.tag)
        node = node.getparent()
    return "/".join(reversed(parts))


def _ident(name: str) -> str:
    out = re.sub(r"[^A-Za-z0-9_.:\-]", "_", name)[:128]
    return out if out and out[0] not in ".:-" else f"x{out}"[:128]


class _Reader:
    """Attribute access with parameters resolved and every failure one line with the element and its line."""

    def __init__(self, source: str, params: Parameters) -> None:
        self.source = source
        self.params = params

    def error(self, el: etree._Element, reason: str) -> XoscError:
        return XoscError(self.source, _path(el), f"{reason} (line {el.sourceline})")

    def text(self, el: etree._Element, name: str, default: str | None = None) -> str:
        raw = el.get(name)
        if raw is None:
            if default is not None:
                return default
            raise self.error(el, f"<{el.tag}> has no {name!r} attribute")
        try:
            return self.params.resolve(raw)
        except ExpressionError as exc:
            raise self.error(el, f"{name}={raw!r}: {exc}") from None

    def num(self, el: etree._Element, name: str, default: float | None = None) -> float:
        if el.get(name) is None and default is not None:
            return default
        text = self.text(el, name)
        try:
            value = float(text)
        except ValueError:
            raise self.error(el, f"{name}={text!r} is not a number") from None
        if not math.isfinite(value):
            raise self.error(el, f"{name}={text!r} is not finite")
        return value

    def declare(self, el: etree._Element | None) -> None:
        if el is None:
            return
        for p in el.findall("ParameterDeclaration"):
            name = p.get("name")
            if not name:
                raise self.error(p, "<ParameterDeclaration> has no name")
            self.params.declare(name, p.get("value", ""))


# --- road network geometry ---------------------------------------------------------------------------------------


class _Roads:
    """World poses of OpenDRIVE road and lane positions (the map's inertial frame, the template's world frame)."""

    def __init__(self, odr: OpenDriveMap) -> None:
        self.roads: dict[str, Road] = {r.id: r for r in odr.roads}
        self.by_safe_id: dict[str, Road] = {re.sub(r"[^A-Za-z0-9_.\-]", "_", r.id): r for r in odr.roads}
        self._samples: dict[str, tuple[np.ndarray, Any]] = {}

    def project(self, road: Road, x: float, y: float) -> float:
        """Road ``s`` of the reference-line point nearest ``(x, y)`` (0.5 m samples, then the tangent step)."""
        if road.id not in self._samples:
            s_all = np.linspace(0.0, road.length, max(2, int(road.length / 0.5) + 1))
            self._samples[road.id] = (s_all, reference_poses(road.geometries, s_all))
        s_all, ref = self._samples[road.id]
        k = int(np.argmin(np.hypot(ref.x - x, ref.y - y)))
        s = float(s_all[k])
        for _ in range(3):
            rx, ry, rh = self.reference(road, s)
            step = (x - rx) * math.cos(rh) + (y - ry) * math.sin(rh)
            s = min(max(s + step, 0.0), road.length)
            if abs(step) < 1e-6:
                break
        return s

    def road(self, rd: _Reader, el: etree._Element, road_id: str) -> Road:
        road = self.roads.get(road_id)
        if road is None:
            raise rd.error(el, f"no road {road_id!r} in the road network")
        return road

    @staticmethod
    def _poly(records: Any, s: float, base: float = 0.0) -> float:
        value = 0.0
        for rec in records:
            if base + rec.s0 <= s + 1e-9:
                value = rec.at(s - base)
        return value

    def reference(self, road: Road, s: float) -> tuple[float, float, float]:
        s = min(max(s, 0.0), road.length)
        pose = reference_poses(road.geometries, np.array([s]))
        return float(pose.x[0]), float(pose.y[0]), float(pose.hdg[0])

    def lane_t(self, rd: _Reader, el: etree._Element, road: Road, lane_id: int, s: float) -> float:
        """Lateral position (m, + left of the reference line) of lane ``lane_id``'s centre at road ``s``."""
        sec = next((sec for sec in reversed(road.sections) if sec.s <= s + 1e-9), road.sections[0])
        t = self._poly(road.lane_offsets, s)
        if lane_id == 0:
            return t
        side = 1 if lane_id > 0 else -1
        lanes = {ln.id: ln for ln in sec.lanes}
        if lane_id not in lanes:
            raise rd.error(el, f"road {road.id} has no lane {lane_id} at s={s:g}")
        for k in range(1, abs(lane_id) + 1):
            lane = lanes.get(side * k)
            w = self._poly(lane.widths, s, sec.s) if lane is not None else 0.0
            t += side * (w if k < abs(lane_id) else w / 2.0)
        return t

    def pose(self, road: Road, s: float, t: float) -> tuple[float, float, float]:
        x, y, h = self.reference(road, s)
        return x - math.sin(h) * t, y + math.cos(h) * t, h

    def lane_heading(self, road: Road, lane_id: int, h: float) -> float:
        """Driving direction of a lane: along s for right lanes with right-hand traffic."""
        forward = (lane_id < 0) == (road.rule != "LHT")
        return h if forward else h + math.pi


# --- the import -------------------------------------------------------------------------------------------------


@dataclass
class _Entity:
    name: str
    id: str
    kind: str  # vehicle | pedestrian | cyclist | misc
    category: str
    dims: tuple[float, float, float]  # l, w, h
    props: dict[str, str]
    line: int
    asset_id: str = ""
    pose: tuple[float, float, float] | None = None
    speed: float = 0.0
    route: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    #: A pedestrian's mid-block crossing (the manifest's walk.via): the route's first ``simready.via_points``
    #: waypoints, kept as points.
    via: list[tuple[float, float]] = field(default_factory=list)
    present: bool = True
    road: tuple[str, int, float] | None = None  # (road, lane, s) when placed by a lane position
    controller: str = ""  # the ObjectController's name (or catalog entry), when it has one

    @property
    def placed(self) -> tuple[float, float, float]:
        """``pose``, which every entity left after the Init has (one without is dropped or refused there)."""
        if self.pose is None:
            raise ValueError(f"entity {self.name!r} has no position yet")
        return self.pose


@dataclass
class _Event:
    name: str
    id: str
    el: etree._Element
    actors: list[str]
    group: etree._Element
    act: etree._Element
    interactions: list[dict[str, Any]] = field(default_factory=list)
    duration_s: float = 0.0
    #: The id an after-trigger names: the event's first interaction's (its own id when it has none).
    id_first: str = ""


class _Importer:
    def __init__(self, path: Path, root: etree._Element, params: Parameters, map_path: Path | None,
                 template_dir: Path) -> None:
        self.path = path
        self.src = str(path)
        self.root = root
        self.rd = _Reader(self.src, params)
        self.report = XoscReport(self.src)
        self.template_dir = template_dir
        self.map_path = map_path
        self.entities: dict[str, _Entity] = {}
        self.events: dict[str, _Event] = {}
        self.header: dict[str, str] = {}
        self.env: dict[str, Any] = dict(_ENVIRONMENT)
        self.catalog_dirs: dict[str, list[Path]] = {}
        self._catalogs: dict[Path, etree._Element] = {}
        self._in_init = False
        self._signals_used: set[str] = set()

    # -- helpers --

    def note(self, el: etree._Element, what: str, approximated: bool = False) -> None:
        line = f"{_path(el)} (line {el.sourceline}): {what}"
        (self.report.approximated if approximated else self.report.not_represented).append(line)

    def entity(self, el: etree._Element, name: str) -> _Entity:
        ent = self.entities.get(name)
        if ent is None or ent.kind == "misc":
            what = "a static object, not an actor" if ent is not None else "no such entity"
            raise self.rd.error(el, f"entity {name!r}: {what} (entities: {', '.join(sorted(self.entities))})")
        return ent

    # -- header, map, catalogs --

    def read_header(self) -> None:
        fh = self.root.find("FileHeader")
        if fh is not None:
            for p in fh.iter("Property"):
                if (p.get("name") or "").startswith("simready."):
                    self.header[p.get("name", "")[9:]] = p.get("value", "")
        self.warmup = float(self.header.get("warmup_s", 0.0))
        self.dt = float(self.header.get("dt", 0.02))

    def time(self, t_sim: float) -> float:
        """Manifest time of simulation time ``t_sim``."""
        return t_sim - self.warmup

    def load_map(self) -> None:
        if self.map_path is None:
            net = self.root.find("RoadNetwork")
            logic = net.find("LogicFile") if net is not None else None
            if logic is None:
                el = net if net is not None else self.root
                raise self.rd.error(el, "no <RoadNetwork>/<LogicFile>: name the map with --map")
            self.map_path = (self.path.parent / self.rd.text(logic, "filepath")).resolve()
            if not self.map_path.is_file():
                raise self.rd.error(logic, f"LogicFile {self.map_path} does not exist (paths are relative to the "
                                           "scenario file); name the map with --map")
        raw = read_bytes(self.map_path, XoscError)
        digest = sha256_bytes(raw)
        odr, _ = read_opendrive(self.map_path)
        template: WorldTemplate | None = None
        self.template_data: dict[str, Any] | None = None
        # Only a template whose lane ids are the map's road names can be the map's export: export just those.
        names = {r.name for r in odr.roads}
        files = list_template_files(self.template_dir)
        # A simready export names its template, the template's hash and the map's sha256 in the file header: when
        # the map's bytes and the template's content are both still what they were, the map is that template's
        # export, without exporting the template again (what a cold command would spend most of its time on).
        claimed = self.header.get("template_id")
        if claimed in files and self.header.get("map_sha256") == digest and all(r.id.isdigit() for r in odr.roads):
            t = load_template(files[claimed])
            if template_hash(t) == self.header.get("template_hash") and set(t.lane_graph.lanes) == names:
                template = t
                self.road_of_lane = {r.name: int(r.id) for r in odr.roads}
                self.report.template = (f"{claimed} (the map is its OpenDRIVE export, sha256 {digest[7:19]}, as the "
                                        "file header says)")
        for tid, tpath in sorted(files.items()) if template is None else ():
            # A template that does not even mention every road name cannot be the map's export: not parsed.
            text = tpath.read_text(errors="replace")
            if not names or not all(n and n in text for n in names):
                continue
            t = load_template(tpath)
            if set(t.lane_graph.lanes) != names:
                continue
            from simready.maps.xodr_export import export_xodr  # heavy: scenariogeneration, only when no hash matches

            data, xreport = export_xodr(t)
            if sha256_bytes(data) == digest:
                template = t
                self.road_of_lane = xreport.road_of_lane
                self.report.template = f"{tid} (the map is its OpenDRIVE export, sha256 {digest[7:19]})"
                break
        if template is None:
            # cost: the OpenDRIVE importer, only for a map that is no template's export
            from simready.maps.xodr_import import import_opendrive

            tid = _ident(f"xosc_{self.map_path.stem}").replace(":", "_")
            imported = import_opendrive(self.map_path, tid)
            self.template_data = imported.data
            template = parse_template(imported.data, str(self.map_path))
            self.road_of_lane = {}
            self.report.template = (f"{tid} imported from {self.map_path.name} ({len(imported.data['lanes'])} lanes; "
                                    "write it to data/templates to simulate from the command line)")
        self.template: WorldTemplate = template
        self.roads = _Roads(odr)
        self.graph = self.template.lane_graph

    def read_catalog_locations(self) -> None:
        locs = self.root.find("CatalogLocations")
        if locs is None:
            return
        for loc in locs:
            d = loc.find("Directory")
            if d is None:
                continue
            self.catalog_dirs.setdefault(loc.tag, []).append((self.path.parent / self.rd.text(d, "path")).resolve())

    def catalog_entry(self, ref: etree._Element) -> etree._Element:
        catalog = self.rd.text(ref, "catalogName")
        entry = self.rd.text(ref, "entryName")
        dirs = [d for ds in self.catalog_dirs.values() for d in ds]
        for d in dirs:
            if not d.is_dir():
                continue
            for f in sorted(d.glob("*.xosc")):
                if f not in self._catalogs:
                    self._catalogs[f] = _parse_xml(read_bytes(f, XoscError), str(f))
                cat = self._catalogs[f].find("Catalog")
                if cat is None or cat.get("name") != catalog:
                    continue
                for child in cat:
                    if child.get("name") == entry:
                        return child
        where = ", ".join(f"{d}{'' if d.is_dir() else ' (no such folder)'}" for d in dirs) or "no CatalogLocations"
        elsewhere = next((f"; an entry {entry!r} is in catalog {cat.get('name')!r} of {f.name}"
                          for f, doc in sorted(self._catalogs.items()) for cat in [doc.find("Catalog")]
                          if cat is not None and any(child.get("name") == entry for child in cat)), "")
        raise self.rd.error(ref, f"catalog reference {catalog}/{entry} resolves to nothing (searched: {where})"
                                 f"{elsewhere}")

    # -- entities --

    def read_entities(self) -> None:
        ents = self.root.find("Entities")
        if ents is None:
            raise self.rd.error(self.root, "no <Entities>")
        for obj in ents:
            if obj.tag == "EntitySelection":
                self.note(obj, "entity selections are not represented (their members act alone)")
                continue
            if obj.tag != "ScenarioObject":
                continue
            name = self.rd.text(obj, "name")
            body = next((c for c in obj if c.tag in ("CatalogReference", "Vehicle", "Pedestrian", "MiscObject")), None)
            if body is None:
                raise self.rd.error(obj, f"entity {name!r} has no Vehicle, Pedestrian, MiscObject or CatalogReference")
            pushed = False
            if body.tag == "CatalogReference":
                ref = body
                body = self.catalog_entry(ref)
                self.rd.params.push(self._catalog_scope(ref, body))
                pushed = True
            try:
                self.entities[name] = self._entity(name, obj, body)
            finally:
                if pushed:
                    self.rd.params.pop()
            oc = obj.find("ObjectController")
            if oc is not None:
                self.note(oc, "controller: the simulator's behaviour model drives the actor")
                named = next((c for c in oc.iter("Controller", "CatalogReference")), None)
                self.entities[name].controller = (named.get("name") or named.get("entryName") or "a controller") \
                    if named is not None else "a controller"

    def _entity(self, name: str, obj: etree._Element, body: etree._Element) -> _Entity:
        rd = self.rd
        box = body.find("BoundingBox/Dimensions")
        dims = (rd.num(box, "length"), rd.num(box, "width"), rd.num(box, "height")) if box is not None else (0, 0, 0)
        props = {p.get("name", ""): rd.text(p, "value", "") for p in body.iter("Property")}
        if body.tag == "Pedestrian":
            kind, category = "pedestrian", rd.text(body, "pedestrianCategory", rd.text(body, "category", "pedestrian"))
            if category == "animal":
                self.note(body, "an animal is imported as a pedestrian", approximated=True)
        elif body.tag == "Vehicle":
            category = rd.text(body, "vehicleCategory", "car")
            kind = _VEHICLE_CLASSES.get(category, ("vehicle", ()))[0]
            if category == "motorbike":
                self.note(body, "a motorbike is imported as a cyclist (the catalog's two-wheeler)", approximated=True)
        else:
            kind, category = "misc", rd.text(body, "miscObjectCategory", "obstacle")
        return _Entity(name, _ident(name), kind, category, dims, props, obj.sourceline)

    def match_assets(self) -> None:
        catalog, certified = _certified_catalog()
        for ent in self.entities.values():
            if ent.kind == "misc":
                continue
            wanted = ent.props.get("simready.asset_id")
            if wanted in certified:
                ent.asset_id = wanted
                continue
            classes = ("pedestrian",) if ent.kind == "pedestrian" else _VEHICLE_CLASSES.get(
                ent.category, ("vehicle", ("car", "shuttle", "van")))[1]
            best = None
            for rank, cls in enumerate(classes):
                for aid in sorted(certified):
                    e = catalog.entries[aid]
                    if e.semantic_class != cls:
                        continue
                    d = e.dimensions_m
                    err = sum(abs(a - b) / max(b, 0.1) for a, b in zip(ent.dims, (d.length, d.width, d.height))) \
                        if any(ent.dims) else 0.0
                    key = (err + 0.5 * rank, aid)
                    best = key if best is None or key < best else best
            if best is None:
                raise XoscError(self.src, f"Entities/ScenarioObject[{ent.name}]",
                                f"no certified catalog entry of class {', '.join(classes)} (line {ent.line})")
            ent.asset_id = best[1]
            d = catalog.entries[ent.asset_id].dimensions_m
            if any(ent.dims) and max(abs(a - b) for a, b in zip(ent.dims, (d.length, d.width, d.height))) > 0.05:
                self.report.approximated.append(
                    f"Entities/ScenarioObject[{ent.name}] (line {ent.line}): {ent.category} {ent.dims[0]:g}x"
                    f"{ent.dims[1]:g}x{ent.dims[2]:g} m is catalog entry {ent.asset_id} "
                    f"({d.length:g}x{d.width:g}x{d.height:g} m)")

    # -- positions --

    def position(self, el: etree._Element, actor: str | None = None) -> tuple[float, float, float]:
        """World ``(x, y, yaw)`` of a ``<Position>`` element (its one child)."""
        rd = self.rd
        p = next(iter(el), None)
        if p is None:
            raise rd.error(el, "empty <Position>")
        orient = p.find("Orientation")
        if p.tag == "WorldPosition":
            return rd.num(p, "x"), rd.num(p, "y"), rd.num(p, "h", 0.0)
        if p.tag == "LanePosition":
            road = self.roads.road(rd, p, rd.text(p, "roadId"))
            lane = int(float(rd.text(p, "laneId")))
            s = rd.num(p, "s")
            t = self.roads.lane_t(rd, p, road, lane, s) + rd.num(p, "offset", 0.0)
            x, y, h = self.roads.pose(road, s, t)
            return x, y, self._orient(orient, self.roads.lane_heading(road, lane, h))
        if p.tag == "RoadPosition":
            road = self.roads.road(rd, p, rd.text(p, "roadId"))
            x, y, h = self.roads.pose(road, rd.num(p, "s"), rd.num(p, "t"))
            return x, y, self._orient(orient, h)
        if p.tag in ("RelativeWorldPosition", "RelativeObjectPosition"):
            ref = self.entity(p, rd.text(p, "entityRef"))
            if ref.pose is None:
                raise rd.error(p, f"entity {ref.name!r} is placed after this position refers to it")
            x0, y0, h0 = ref.pose
            dx, dy = rd.num(p, "dx"), rd.num(p, "dy")
            if p.tag == "RelativeObjectPosition":
                dx, dy = dx * math.cos(h0) - dy * math.sin(h0), dx * math.sin(h0) + dy * math.cos(h0)
            return x0 + dx, y0 + dy, self._orient(orient, h0)
        if p.tag == "RelativeLanePosition":
            ref = self.entity(p, rd.text(p, "entityRef"))
            if ref.road is None:
                if ref.pose is None:
                    raise rd.error(p, f"entity {ref.name!r} is placed after this position refers to it")
                ref.road = self._road_of(p, ref.pose)
            road_id, lane0, s0 = ref.road
            road = self.roads.road(rd, p, road_id)
            d_lane = int(float(rd.text(p, "dLane")))
            lane = _lane_step(road, s0, lane0, d_lane)
            ds = rd.num(p, "ds", 0.0) if p.get("ds") is not None else rd.num(p, "dsLane", 0.0)
            sign = 1.0 if lane0 < 0 else -1.0  # ds is along the lane's driving direction
            s = s0 + sign * ds
            t = self.roads.lane_t(rd, p, road, lane, s) + rd.num(p, "offset", 0.0)
            x, y, h = self.roads.pose(road, s, t)
            return x, y, self._orient(orient, self.roads.lane_heading(road, lane, h))
        if p.tag == "RelativeRoadPosition":
            ref = self.entity(p, rd.text(p, "entityRef"))
            if ref.pose is None:
                raise rd.error(p, f"entity {ref.name!r} is placed after this position refers to it")
            road_id, _lane, _s = ref.road or self._road_of(p, ref.pose)
            road = self.roads.road(rd, p, road_id)
            # ds and dt are offsets from the reference entity's own road coordinates (s0, t0).
            s0 = self.roads.project(road, ref.pose[0], ref.pose[1])
            rx, ry, rh = self.roads.reference(road, s0)
            t0 = -(ref.pose[0] - rx) * math.sin(rh) + (ref.pose[1] - ry) * math.cos(rh)
            x, y, h = self.roads.pose(road, s0 + rd.num(p, "ds"), t0 + rd.num(p, "dt"))
            return x, y, self._orient(orient, h)
        if p.tag == "RoutePosition":
            return self._route_position(p, orient)
        raise rd.error(p, f"<{p.tag}> positions are not supported (World, Lane, RelativeLane, RelativeObject, "
                          "RelativeWorld, Road, RelativeRoad, Route are)")

    # -- routes --

    def route_of(self, ref: etree._Element) -> etree._Element:
        """The ``<Route>`` a ``<RouteRef>`` / ``<AssignRouteAction>`` holds inline or names in a route catalog."""
        route = ref.find("Route")
        if route is not None:
            return route
        cat = ref.find("CatalogReference")
        if cat is None:
            raise self.rd.error(ref, "neither a <Route> nor a <CatalogReference> to one")
        route = self.catalog_entry(cat)
        if route.tag != "Route":
            raise self.rd.error(cat, f"catalog entry {cat.get('entryName')!r} is a <{route.tag}>, not a <Route>")
        return route

    def _catalog_scope(self, ref: etree._Element | None, entry: etree._Element) -> dict[str, str]:
        """The parameters a catalog entry sees: its declarations, then the reference's assignments."""
        scope = {}
        decl = entry.find("ParameterDeclarations")
        for p in (decl.findall("ParameterDeclaration") if decl is not None else []):
            scope[p.get("name", "")] = p.get("value", "")
        pa = ref.find("ParameterAssignments") if ref is not None else None
        for a in (pa.findall("ParameterAssignment") if pa is not None else []):
            scope[a.get("parameterRef", "")] = self.rd.text(a, "value")
        return scope

    def waypoints(self, holder: etree._Element) -> tuple[etree._Element, list[tuple[float, float, float]]]:
        """The route a RouteRef / AssignRouteAction names and the world poses of its waypoints (in the catalog
        entry's parameter scope when it comes from a catalog)."""
        route = self.route_of(holder)
        cat = holder.find("CatalogReference")
        self.rd.params.push(self._catalog_scope(cat, route) if cat is not None else {})
        try:
            points = []
            for wp in route.findall("Waypoint"):
                pos = wp.find("Position")
                if pos is None:
                    raise self.rd.error(wp, "waypoint without a position")
                points.append(self.position(pos))
        finally:
            self.rd.params.pop()
        if not points:
            raise self.rd.error(route, "a route without waypoints")
        return route, points

    def road_path(self, holder: etree._Element) -> list[tuple[Road, float, float]]:
        """The route as road pieces ``(road, s_in, s_out)`` in driving order (s_out < s_in: driven against s), from
        its first waypoint to its last: the waypoints' lanes joined by the cheapest lane route
        (:func:`~simready.world.routing.plan_via`), each lane's road and direction read from its geometry."""
        route, points = self.waypoints(holder)
        lanes = []
        for wp, (x, y, h) in zip(route.findall("Waypoint"), points):
            try:
                lanes.append(self.graph.nearest(x, y, h, kinds=("driving", "turn", "parking"))[0])
            except ValueError:
                raise self.rd.error(wp, "no lane of the road network runs through this waypoint in its "
                                        "direction") from None
        planned = plan_via(lane_network(self.template), lanes)
        if planned is None:
            raise self.rd.error(route, f"no lane route through the waypoints' lanes {' -> '.join(lanes)}")
        pieces: list[list[Any]] = []  # [road, s_in, s_out, direction]
        for lane in planned.lanes:
            road = self._road_of_lane(route, lane)
            g = self.graph.lane(lane)
            x, y, h = g.pose_at(g.length_m / 2.0)
            s_mid = self.roads.project(road, x, y)
            direction = 1.0 if math.cos(h - self.roads.reference(road, s_mid)[2]) >= 0.0 else -1.0
            if pieces and pieces[-1][0] is road and pieces[-1][3] == direction:
                continue  # a lane change or the next lane piece on the same road
            s_in = 0.0 if direction > 0 else road.length
            pieces.append([road, s_in, road.length if direction > 0 else 0.0, direction])
        first, last = pieces[0], pieces[-1]
        first[1] = self.roads.project(first[0], points[0][0], points[0][1])
        last[2] = self.roads.project(last[0], points[-1][0], points[-1][1])
        if (last[2] - last[1]) * last[3] < -1e-6:
            raise self.rd.error(route, f"the last waypoint lies behind the route's end on road {last[0].id}")
        return [(road, s_in, s_out) for road, s_in, s_out, _ in pieces]

    def _road_of_lane(self, el: etree._Element, lane: str) -> Road:
        if lane in self.road_of_lane:  # a simready export: one road per template lane
            return self.roads.road(self.rd, el, str(self.road_of_lane[lane]))
        m = re.match(r"road(.+?)_sec\d+_lane-?\d+", lane)
        road = self.roads.by_safe_id.get(m.group(1)) if m else None
        if road is None:
            raise self.rd.error(el, f"lane {lane} of the route belongs to no road of the network")
        return road

    def _route_position(self, p: etree._Element, orient: etree._Element | None) -> tuple[float, float, float]:
        """World pose of a RoutePosition: ``pathS`` is road s driven along the route from its first waypoint."""
        rd = self.rd
        ref = p.find("RouteRef")
        inr = p.find("InRoutePosition")
        which = next(iter(inr), None) if inr is not None else None
        if ref is None or which is None:
            raise rd.error(p, "a RoutePosition needs a <RouteRef> and an <InRoutePosition>")
        if which.tag == "FromCurrentEntity":
            ent = self.entity(which, rd.text(which, "entityRef"))
            if ent.pose is None:
                raise rd.error(which, f"entity {ent.name!r} is placed after this position refers to it")
            if not self._in_init:
                self.note(which, f"the position of {ent.name!r} now is taken as its initial position",
                          approximated=True)
            return ent.pose[0], ent.pose[1], self._orient(orient, ent.pose[2])
        if which.tag not in ("FromLaneCoordinates", "FromRoadCoordinates"):
            raise rd.error(which, f"<{which.tag}> is not an InRoutePosition (FromCurrentEntity, FromLaneCoordinates, "
                                  "FromRoadCoordinates are)")
        path_s = rd.num(which, "pathS")
        pieces = self.road_path(ref)
        total = sum(abs(b - a) for _, a, b in pieces)
        if not -1e-6 <= path_s <= total + 1e-6:
            raise rd.error(which, f"pathS {path_s:g} lies outside the route [0, {total:.3f}] m")
        left = path_s
        for road, s_in, s_out in pieces:
            if left <= abs(s_out - s_in) + 1e-9 or road is pieces[-1][0]:
                break
            left -= abs(s_out - s_in)
        sign = 1.0 if s_out >= s_in else -1.0
        s = min(max(s_in + sign * left, 0.0), road.length)
        if which.tag == "FromLaneCoordinates":
            lane = int(float(rd.text(which, "laneId")))
            t = self.roads.lane_t(rd, which, road, lane, s) + rd.num(which, "laneOffset", 0.0)
        else:
            t = rd.num(which, "t")
        x, y, h = self.roads.pose(road, s, t)
        return x, y, self._orient(orient, h if sign > 0 else h + math.pi)

    def _orient(self, orient: etree._Element | None, base: float) -> float:
        if orient is None:
            return base
        h = self.rd.num(orient, "h", 0.0)
        return h if orient.get("type") == "absolute" else base + h

    def _road_of(self, el: etree._Element, pose: tuple[float, float, float]) -> tuple[str, int, float]:
        """(road, lane, s) nearest a world pose (for relative lane positions of entities placed in world terms)."""
        best = None
        for road in self.roads.roads.values():
            s_all = np.linspace(0.0, road.length, max(2, int(road.length / 0.5) + 1))
            ref = reference_poses(road.geometries, s_all)
            k = int(np.argmin(np.hypot(ref.x - pose[0], ref.y - pose[1])))
            s = float(s_all[k])
            sec = next((sec for sec in reversed(road.sections) if sec.s <= s + 1e-9), road.sections[0])
            for ln in sec.lanes:
                if ln.id == 0 or not ln.widths:
                    continue
                x, y, _ = self.roads.pose(road, s, self.roads.lane_t(self.rd, el, road, ln.id, s))
                d = math.hypot(x - pose[0], y - pose[1])
                key = (d, road.id, ln.id, s)
                best = key if best is None or key < best else best
        if best is None:
            raise self.rd.error(el, "no road lane near the reference entity")
        return best[1], best[2], best[3]

    def lane_ref(self, pose: tuple[float, float, float], kind: str) -> dict[str, Any] | None:
        if kind == "pedestrian":
            return None
        try:
            lane, s, t = self.graph.nearest(pose[0], pose[1], pose[2])
        except ValueError:
            return None
        width = self.template_lane_width(lane)
        if s < 0 or s > self.graph.lane(lane).length_m or abs(t) > width / 2:
            return None
        return {"lane": lane, "s": round(s, 6), "t_frac": round(max(-1.0, min(1.0, t / (width / 2))), 6)}

    def template_lane_width(self, lane: str) -> float:
        return float(self.graph.lane(lane).width_m)

    def lanes_on(self, points: list[tuple[float, float, float]]) -> list[str]:
        lanes: list[str] = []
        for x, y, h in points:
            try:
                lane, _, _ = self.graph.nearest(x, y, h)
            except ValueError:
                continue
            if not lanes or lanes[-1] != lane:
                lanes.append(lane)
        return lanes

    # -- init --

    def read_init(self) -> None:
        init = self.root.find("Storyboard/Init/Actions")
        if init is None:
            raise self.rd.error(self.root, "no <Storyboard>/<Init>/<Actions>")
        for g in init.findall("GlobalAction"):
            env = g.find("EnvironmentAction")
            if env is not None:
                self._environment(env)
            else:
                self.note(g, "global action in Init is not represented")
        privates = init.findall("Private")
        self._in_init = True
        # Positions first (relative positions refer to entities placed before them), speeds after.
        pending = list(privates)
        for _ in range(len(pending) + 1):
            later = []
            for priv in pending:
                ent = self.entity(priv, self.rd.text(priv, "entityRef")) if self.entities.get(
                    priv.get("entityRef", "")) is None or self.entities[priv.get("entityRef", "")].kind != "misc" \
                    else self.entities[priv.get("entityRef", "")]
                tele = priv.find("PrivateAction/TeleportAction/Position")
                if tele is None or ent.pose is not None:
                    continue
                try:
                    ent.pose = self.position(tele, ent.name)
                except XoscError as exc:
                    if "placed after" in exc.reason:
                        later.append(priv)
                        continue
                    raise
                lp = tele.find("LanePosition")
                if lp is not None:
                    ent.road = (self.rd.text(lp, "roadId"), int(float(self.rd.text(lp, "laneId"))), self.rd.num(lp, "s"))
            if not later or len(later) == len(pending):
                pending = later
                break
            pending = later
        if pending:
            self.position(pending[0].find("PrivateAction/TeleportAction/Position"))
        for priv in privates:
            # An entity with no teleport starts where the trajectory it follows from the Init starts.
            unplaced = self.entities.get(priv.get("entityRef", ""))
            ft = priv.find("PrivateAction/RoutingAction/FollowTrajectoryAction")
            if unplaced is None or unplaced.pose is not None or ft is None:
                continue
            got = self._trajectory_points(ft)
            if got is not None and got[1]:
                unplaced.pose = got[1][0]
                self.note(ft, f"{unplaced.name!r} has no TeleportAction: it starts where its trajectory starts",
                          approximated=True)
        self._in_init = False
        for ent in list(self.entities.values()):
            if ent.pose is None and ent.controller:
                # A placeholder for traffic its controller spawns (a SUMO co-simulation, say): not in the story.
                del self.entities[ent.name]
                self.report.not_represented.append(
                    f"Entities/ScenarioObject[{ent.name}] (line {ent.line}): no position; the traffic its controller "
                    f"{ent.controller!r} spawns is not represented")
            elif ent.pose is None:
                raise XoscError(self.src, f"Entities/ScenarioObject[{ent.name}]",
                                f"entity has no position: no TeleportAction in Init (line {ent.line})")
        for priv in privates:
            ent = self.entities[priv.get("entityRef", "")] if priv.get("entityRef") in self.entities else \
                self.entity(priv, self.rd.text(priv, "entityRef"))
            for pa in priv.findall("PrivateAction"):
                action = next(iter(pa), None)
                if action is None or action.tag == "TeleportAction":
                    continue
                speed = action.find("SpeedAction") if action.tag == "LongitudinalAction" else None
                if speed is not None:
                    ent.speed = self._init_speed(speed)
                elif action.tag == "RoutingAction" and action.find("AssignRouteAction") is not None:
                    ent.route, ent.nodes = self._route(action.find("AssignRouteAction"), ent)
                elif action.tag == "RoutingAction" and action.find("FollowTrajectoryAction") is not None:
                    follow = self._trajectory(action.find("FollowTrajectoryAction"), ent)
                    if follow is not None:
                        ent.route = follow["route"].get("lanes", [])
                        ent.nodes = follow["route"].get("nodes", [])
                elif action.tag == "VisibilityAction":
                    ent.present = self.rd.text(action, "graphics", "true") == "true" or \
                        self.rd.text(action, "traffic", "true") == "true"
                else:
                    self.note(action, f"{action.tag} in Init is not represented")

    def _init_speed(self, speed: etree._Element) -> float:
        target = speed.find("SpeedActionTarget")
        abs_ = target.find("AbsoluteTargetSpeed") if target is not None else None
        if abs_ is not None:
            return max(0.0, self.rd.num(abs_, "value"))
        rel = target.find("RelativeTargetSpeed") if target is not None else None
        if rel is None:
            raise self.rd.error(speed, "SpeedAction without a target")
        ref = self.entity(rel, self.rd.text(rel, "entityRef"))
        v = self.rd.num(rel, "value")
        kind = self.rd.text(rel, "speedTargetValueType", "delta")
        return max(0.0, ref.speed * v if kind == "factor" else ref.speed + v)

    def _environment(self, env_action: etree._Element) -> None:
        env = env_action.find("Environment")
        if env is None:
            self.note(env_action, "environment by catalog reference is not read")
            return
        rc = env.find("RoadCondition")
        if rc is not None:
            self.env["road_friction"] = min(2.0, max(0.05, self.rd.num(rc, "frictionScaleFactor", 0.9)))
        pr = env.find("Weather/Precipitation")
        if pr is not None:
            kind = self.rd.text(pr, "precipitationType", "dry")
            rate = self.rd.num(pr, "precipitationIntensity", self.rd.num(pr, "intensity", 0.0))
            if kind != "dry" and rate > 0:
                self.env.update(weather="rain", rain_rate_mmph=min(rate, 500.0),
                                wetness=max(self.env["wetness"], 0.5))
        sun = env.find("Weather/Sun")
        if sun is not None:
            self.env["sun_elevation_deg"] = math.degrees(self.rd.num(sun, "elevation", math.radians(45)))
            self.env["sun_azimuth_deg"] = math.degrees(self.rd.num(sun, "azimuth", math.pi)) % 360.0
        tod = env.find("TimeOfDay")
        if tod is not None and sun is None:
            hour = int(self.rd.text(tod, "dateTime", "2000-01-01T12:00:00")[11:13] or 12)
            self.env["sun_elevation_deg"] = 45.0 if 8 <= hour <= 17 else (0.0 if hour in (7, 18, 19) else -20.0)

    def _route(self, assign: etree._Element, ent: _Entity) -> tuple[list[str], list[str]]:
        route, points = self.waypoints(assign)
        if ent.kind == "pedestrian":
            raw = ent.props.get("simready.via_points", "0")
            k = int(raw) if raw.isdigit() else 0
            ent.via = [(round(x, 9), round(y, 9)) for x, y, _ in points[:k]]
            return [], self._walk(route, ent, self._nodes(points[k:]))
        rol = {v: k for k, v in self.road_of_lane.items()}
        lanes: list[str] = []
        for wp, point in zip(route.findall("Waypoint"), points):
            lp = wp.find("Position/LanePosition")
            road = self.rd.text(lp, "roadId") if lp is not None else ""
            # A simready export names each template lane's road: its waypoints come back as those lanes.
            lane = rol.get(int(road)) if road.isdigit() else None
            if lane is None:
                found = self.lanes_on([point])
                lane = found[0] if found else None
            if lane is not None and (not lanes or lanes[-1] != lane):
                lanes.append(lane)
        return self._lane_chain(route, lanes), []

    def _walk(self, el: etree._Element, ent: _Entity, nodes: list[str]) -> list[str]:
        """``nodes`` when the map's walkable graph joins each to the next; else one line saying where it does not
        (a pedestrian crossing where the map has no crosswalk, say: the walk model walks the graph)."""
        g = self.template.walk_graph
        for a, b in zip(nodes, nodes[1:]):
            if g.shortest_path(a, b) is None:
                raise self.rd.error(el, f"{ent.name!r} walks from walkable node {a} to {b}, which the map's walkable "
                                        "graph does not join (no sidewalk or crosswalk between them)")
        return nodes

    def _nodes(self, points: list[tuple[float, float, float]]) -> list[str]:
        nodes = self.template.walkable.nodes
        out: list[str] = []
        for x, y, _ in points:
            best = min(sorted(nodes), key=lambda n: math.hypot(nodes[n][0] - x, nodes[n][1] - y), default=None)
            if best is not None and (not out or out[-1] != best):
                out.append(best)
        return out

    # -- storyboard --

    def read_storyboard(self) -> None:
        sb = self.root.find("Storyboard")
        stop = sb.find("StopTrigger")
        self.clip = DEFAULT_CLIP_S if "clip_s" not in self.header else float(self.header["clip_s"])
        if stop is not None and "clip_s" not in self.header:
            times = [self.rd.num(c, "value") for c in stop.iter("SimulationTimeCondition")]
            if times:
                self.clip = self.time(min(times))
            elif len(stop):
                self.note(stop, "storyboard stop trigger on a condition: the clip lasts "
                                f"{DEFAULT_CLIP_S:g} s", approximated=True)

        if self.clip > MAX_CLIP_S or self.clip <= 0:
            self.note(stop if stop is not None else sb, f"clip {self.clip:g} s cut to {min(MAX_CLIP_S, DEFAULT_CLIP_S):g} s",
                      approximated=True)
            self.clip = min(MAX_CLIP_S, DEFAULT_CLIP_S) if self.clip <= 0 else MAX_CLIP_S
        self.clip = round(round(self.clip / self.dt) * self.dt, 9)
        # Pass 1: every event and its actors (after-triggers may name events defined later).
        for story in sb.findall("Story"):
            self.rd.declare(story.find("ParameterDeclarations"))
            for act in story.findall("Act"):
                if act.find("StopTrigger") is not None and len(act.find("StopTrigger")):
                    self.note(act.find("StopTrigger"), "act stop trigger: actions hold until another takes their axis")
                for mg in act.findall("ManeuverGroup"):
                    actors = [self.rd.text(e, "entityRef") for e in mg.findall("Actors/EntityRef")]
                    for a in actors:
                        self.entity(mg, a)
                    if mg.find("CatalogReference") is not None:
                        self.note(mg, "maneuver from a catalog is not read")
                    for man in mg.findall("Maneuver"):
                        for ev in man.findall("Event"):
                            name = self.rd.text(ev, "name")
                            if name in self.events:
                                self.note(ev, f"event name {name!r} repeats: state conditions name the first")
                                name = f"{name}@{ev.sourceline}"
                            ident = _ident(name)
                            taken = {e.id for e in self.events.values()}
                            k = 2
                            while ident in taken:
                                ident, k = _ident(f"{_ident(name)}_{k}"), k + 1
                            self.events[name] = _Event(name, ident, ev, actors, mg, act)
        for story in sb.findall("Story"):
            for act in story.findall("Act"):
                for mg in act.findall("ManeuverGroup"):
                    for ev in mg.iter("Event"):
                        self._event(next(e for e in self.events.values() if e.el is ev))

    def _event(self, event: _Event) -> None:
        ev = event.el
        if int(float(ev.get("maximumExecutionCount", "1"))) > 1:
            self.note(ev, "maximumExecutionCount > 1: the event runs once", approximated=True)
        actions = ev.findall("Action")
        k = 0
        for action in actions:
            body = next(iter(action), None)
            if body is None:
                continue
            verbs = self._verbs(body, event)
            for actor, verb in verbs:
                inter_id = event.id if k == 0 else _ident(f"{event.id}_{k}")
                k += 1
                event.interactions.append({"id": inter_id, "actor_id": actor, **verb})

    def _dynamics(self, el: etree._Element | None, owner: etree._Element) -> dict[str, Any]:
        if el is None:
            raise self.rd.error(owner, f"<{owner.tag}> has no dynamics")
        shape = self.rd.text(el, "dynamicsShape")
        dim = self.rd.text(el, "dynamicsDimension")
        value = abs(self.rd.num(el, "value"))
        if shape not in _SHAPES:
            raise self.rd.error(el, f"dynamicsShape {shape!r} is not step, linear, sinusoidal or cubic")
        if dim not in ("rate", "time", "distance"):
            raise self.rd.error(el, f"dynamicsDimension {dim!r} is not rate, time or distance")
        if shape != "step" and value == 0:
            shape = "step"
        if shape == "step":
            return {"shape": "step", "constraint": dim, "value": value}
        return {"shape": shape, "constraint": dim, "value": value}

    def _verbs(self, body: etree._Element, event: _Event) -> list[tuple[str | None, dict[str, Any]]]:
        """``[(actor id, verb fields)]`` for one ``<Action>``'s body, once per maneuver-group actor."""
        if body.tag == "GlobalAction":
            env = body.find("EnvironmentAction/Environment")
            if env is not None:
                before = dict(self.env)
                self._environment(body.find("EnvironmentAction"))
                after, self.env = self.env, before
                out: list[tuple[str | None, dict[str, Any]]] = []
                if after["road_friction"] != before["road_friction"]:
                    out.append((None, {"set": {"key": "env.road_friction", "value": float(after["road_friction"])}}))
                if after["rain_rate_mmph"] != before["rain_rate_mmph"]:
                    out.append((None, {"set": {"key": "env.rain_rate_mmph", "value": float(after["rain_rate_mmph"])}}))
                return out
            self.note(body, f"{next(iter(body)).tag if len(body) else 'GlobalAction'} is not represented")
            return []
        if body.tag in ("UserDefinedAction", "CustomCommandAction"):
            self.note(body, "user-defined action (custom command) is not represented")
            return []
        if body.tag != "PrivateAction":
            self.note(body, f"<{body.tag}> is not represented")
            return []
        out = []
        for name in event.actors:
            ent = self.entity(body, name)
            verb = self._private(body, ent, event)
            if verb is not None:
                out.append((ent.id, verb))
        return out

    def _private(self, pa: etree._Element, ent: _Entity, event: _Event) -> dict[str, Any] | None:
        rd = self.rd
        action = next(iter(pa), None)
        if action is None:
            return None
        inner = next(iter(action), None)
        tag = inner.tag if inner is not None and action.tag in ("LongitudinalAction", "LateralAction",
                                                                 "RoutingAction", "AppearanceAction") else action.tag
        # Where the verb's fields are read: the action's first child (the grouped verb), or the action when it has none.
        verb = inner if inner is not None else action
        if tag == "SpeedAction":
            dyn = self._dynamics(verb.find("SpeedActionDynamics"), verb)
            target = verb.find("SpeedActionTarget")
            if target is None:
                raise rd.error(verb, "SpeedAction without a target")
            absolute = target.find("AbsoluteTargetSpeed")
            if absolute is not None:
                v = rd.num(absolute, "value")
                event.duration_s = _duration(dyn, abs(v - ent.speed), ent.speed)
                speed = {"mode": "stop"} if v <= 0 else {"mode": "absolute", "value": v}
                return {"speed": speed, "dynamics": dyn}
            rel = target.find("RelativeTargetSpeed")
            ref = self.entity(rel, rd.text(rel, "entityRef"))
            value = rd.num(rel, "value")
            kind = rd.text(rel, "speedTargetValueType", "delta")
            continuous = rd.text(rel, "continuous", "false") == "true"
            if ref.name == ent.name:
                if kind == "factor":
                    return {"speed": {"mode": "factor", "value": max(0.0, value)}, "dynamics": dyn}
                return {"speed": {"mode": "delta", "value": value}, "dynamics": dyn}
            if value == 0 and kind == "delta":
                if not continuous:
                    self.note(verb, f"speed to {ref.name}'s speed once is held as a match", approximated=True)
                return {"speed": {"mode": "match", "target": ref.id}, "dynamics": dyn}
            v = ref.speed * value if kind == "factor" else ref.speed + value
            self.note(verb, f"speed relative to {ref.name} ({kind} {value:g}) taken at {ref.name}'s initial speed: "
                             f"absolute {max(v, 0):.3f} m/s", approximated=True)
            return {"speed": {"mode": "absolute", "value": max(v, 0.0)}, "dynamics": dyn}
        if tag == "LongitudinalDistanceAction":
            ref = self.entity(verb, rd.text(verb, "entityRef"))
            if verb.get("timeGap") is not None:
                value, unit = rd.num(verb, "timeGap"), "time"
            else:
                value, unit = rd.num(verb, "distance"), "distance"
            dyn = {"shape": "step", "constraint": "time", "value": 0.0}
            lim = verb.find("DynamicConstraints")
            if lim is not None:
                self.note(lim, "gap dynamic constraints: the gap controller's own limits apply", approximated=True)
            return {"gap": {"target": ref.id, "value": max(value, 1e-3), "unit": unit}, "dynamics": dyn}
        if tag == "LaneChangeAction":
            return self._lane_change(verb, ent, event)
        if tag == "LaneOffsetAction":
            return self._lane_offset(verb, ent, event)
        if tag == "AssignRouteAction":
            lanes, nodes = self._route(verb, ent)
            if not (lanes or nodes):
                self.note(verb, "route lies on no template lane", approximated=False)
                return None
            return {"route": {"lanes": lanes} if ent.kind != "pedestrian" else {"nodes": nodes}}
        if tag == "FollowTrajectoryAction":
            return self._trajectory(verb, ent)
        if tag == "AcquirePositionAction":
            # A route to one position from wherever the actor is then: the simulator links its lane to the target's.
            x, y, h = self.position(verb.find("Position"))
            if ent.kind == "pedestrian":
                return {"route": {"nodes": self._nodes([(x, y, h)])}}
            lanes = self.lanes_on([(x, y, h)])
            if not lanes:
                self.note(verb, "the position to acquire lies on no template lane")
                return None
            return {"route": {"lanes": self._lane_chain(verb, [lanes[0], *self._default_route(lanes[0])[1:]])}}
        if tag == "VisibilityAction":
            shown = rd.text(action, "graphics", "true") == "true" or rd.text(action, "traffic", "true") == "true"
            return {"exist": {"state": "present" if shown else "absent"}}
        if tag == "LightStateAction" or (tag == "AppearanceAction" and inner is not None and inner.tag == "LightStateAction"):
            la = inner if inner is not None and inner.tag == "LightStateAction" else action
            lt = la.find("LightType/VehicleLight")
            mode = la.find("LightState")
            on = mode is not None and rd.text(mode, "mode", "on") != "off"
            kind = rd.text(lt, "vehicleLightType") if lt is not None else ""
            if kind in _LIGHTS and ent.kind == "vehicle":
                return {"set": {"key": _LIGHTS[kind], "value": on}}
            if kind in ("lowBeam", "highBeam"):
                return {"set": {"key": "lights.headlights", "value": ("high" if kind == "highBeam" else "low") if on
                                else "off"}}
            self.note(la, f"light {kind or '?'} is not represented")
            return None
        if tag == "AnimationAction":
            comp = verb.find("AnimationType/ComponentAnimation/VehicleComponent")
            kind = rd.text(comp, "vehicleComponentType") if comp is not None else ""
            state = verb.find("AnimationState")
            if kind in _DOORS and ent.kind == "vehicle":
                opened = state is not None and rd.num(state, "state", 1.0) > 0.5
                return {"set": {"key": _DOORS[kind], "value": "open" if opened else "closed"}}
            self.note(verb, f"animation {kind or '?'} is not represented")
            return None
        if tag == "TeleportAction":
            self.note(action, "a teleport during the story is not represented (actors move continuously)")
            return None
        self.note(action if inner is None else inner, f"{tag} is not represented")
        return None

    def _lane_change(self, lc: etree._Element, ent: _Entity, event: _Event) -> dict[str, Any] | None:
        rd = self.rd
        dyn = self._dynamics(lc.find("LaneChangeActionDynamics"), lc)
        target = lc.find("LaneChangeTarget")
        if rd.num(lc, "targetLaneOffset", 0.0) != 0.0:
            self.note(lc, "targetLaneOffset: the change ends on the target lane's centre", approximated=True)
        rel = target.find("RelativeTargetLane") if target is not None else None
        absolute = target.find("AbsoluteTargetLane") if target is not None else None
        event.duration_s = _duration(dyn, 3.5, ent.speed)
        if rel is not None:
            ref = self.entity(rel, rd.text(rel, "entityRef"))
            n = int(float(rd.text(rel, "value")))
            if ref.name != ent.name:
                if n == 0:
                    return {"change_lane": {"mode": "actor_lane", "actor": ref.id}, "dynamics": dyn}
                lane = self._lanes_beside(ref, n, rel)
                return None if lane is None else {"change_lane": {"mode": "lane", "lane": lane}, "dynamics": dyn}
            if abs(n) == 1:
                return {"change_lane": {"mode": "left" if n > 0 else "right"}, "dynamics": dyn}
            lane = self._lanes_beside(ent, n, rel)
            return None if lane is None else {"change_lane": {"mode": "lane", "lane": lane}, "dynamics": dyn}
        if absolute is not None:
            lane_id = int(float(rd.text(absolute, "value")))
            if ent.road is None:
                ent.road = self._road_of(absolute, ent.placed)
            road = self.roads.road(rd, absolute, ent.road[0])
            s = ent.road[2]
            x, y, h = self.roads.pose(road, s, self.roads.lane_t(rd, absolute, road, lane_id, s))
            found = self.lanes_on([(x, y, self.roads.lane_heading(road, lane_id, h))])
            if not found:
                self.note(absolute, f"target lane {lane_id} is on no template lane")
                return None
            return {"change_lane": {"mode": "lane", "lane": found[0]}, "dynamics": dyn}
        raise rd.error(lc, "LaneChangeAction without a target")

    def _lanes_beside(self, ent: _Entity, n: int, el: etree._Element) -> str | None:
        ref = self.lane_ref(ent.placed, ent.kind)
        lane = ref["lane"] if ref else None
        for _ in range(abs(n)):
            lane = (self.graph.left if n > 0 else self.graph.right).get(lane) if lane else None
        if lane is None:
            self.note(el, f"no lane {abs(n)} to the {'left' if n > 0 else 'right'} of {ent.name}")
        return lane

    def _lane_offset(self, lo: etree._Element, ent: _Entity, event: _Event) -> dict[str, Any] | None:
        rd = self.rd
        dyn_el = lo.find("LaneOffsetActionDynamics")
        target = lo.find("LaneOffsetTarget")
        absolute = target.find("AbsoluteTargetLaneOffset") if target is not None else None
        rel = target.find("RelativeTargetLaneOffset") if target is not None else None
        if absolute is not None:
            value = rd.num(absolute, "value")
        elif rel is not None:
            ref = self.entity(rel, rd.text(rel, "entityRef"))
            ref_lane = self.lane_ref(ref.placed, ref.kind)
            base = ref_lane["t_frac"] * self.template_lane_width(ref_lane["lane"]) / 2 if ref_lane else 0.0
            value = base + rd.num(rel, "value")
            self.note(rel, f"offset relative to {ref.name} taken at {ref.name}'s initial offset: {value:.3f} m",
                      approximated=True)
        else:
            raise rd.error(lo, "LaneOffsetAction without a target")
        shape = rd.text(dyn_el, "dynamicsShape", "step") if dyn_el is not None else "step"
        max_acc = rd.num(dyn_el, "maxLateralAcc", 0.0) if dyn_el is not None else 0.0
        start = self.lane_ref(ent.placed, ent.kind)
        t0 = start["t_frac"] * self.template_lane_width(start["lane"]) / 2 if start else 0.0
        distance = abs(value - t0)
        span = math.sqrt(_PEAK[shape] * distance / max_acc) if shape in _PEAK and max_acc > 0 and distance > 0 else 0.0
        dyn = {"shape": shape, "constraint": "time", "value": round(span, 9)} if span > 0 else \
            {"shape": "step", "constraint": "time", "value": 0.0}
        event.duration_s = span
        continuous = rd.text(lo, "continuous", "true") == "true"
        if start is not None and not continuous:
            # The export writes a lane change as the centre spacing to the target lane: it comes back as one.
            lane = start["lane"]
            x, y = self.graph.lane(lane).point_at(start["s"], value)
            for side in (self.graph.left.get(lane), self.graph.right.get(lane), *self.graph.lanes):
                if side is None or side == lane:
                    continue
                s, t = self.graph.project(side, x, y)
                if abs(t) <= LANE_CENTRE_TOLERANCE_M and 0 <= s <= self.graph.lane(side).length_m:
                    return {"change_lane": {"mode": "lane", "lane": side}, "dynamics": dyn}
        if abs(value) > 10.0:
            self.note(lo, f"lane offset {value:g} m is more than 10 m: not represented")
            return None
        return {"lane_offset": {"value": round(value, 9), "unit": "metres"}, "dynamics": dyn}

    def _trajectory(self, ft: etree._Element, ent: _Entity) -> dict[str, Any] | None:
        got = self._trajectory_points(ft)
        if got is None:
            return None
        kind, points = got
        lanes = self._lane_chain(ft, self.lanes_on(points)) if ent.kind != "pedestrian" else []
        nodes = self._walk(ft, ent, self._nodes(points)) if ent.kind == "pedestrian" else []
        self.note(ft, f"{kind} trajectory ({len(points)} points) followed as a route over "
                      f"{', '.join(lanes or nodes) or 'nothing'}; its lateral path and timing are not kept",
                  approximated=True)
        if not (lanes or nodes):
            return None
        return {"route": {"lanes": lanes} if lanes else {"nodes": nodes}}

    def _trajectory_points(self, ft: etree._Element) -> tuple[str, list[tuple[float, float, float]]] | None:
        """(shape, world poses along it) of a FollowTrajectoryAction's trajectory (inline, or from a catalog);
        None (reported) for a shape that is not read."""
        traj = ft.find("TrajectoryRef/Trajectory")
        traj = traj if traj is not None else ft.find("Trajectory")
        cat = ft.find("TrajectoryRef/CatalogReference")
        if cat is None:
            cat = ft.find("CatalogReference")
        if traj is None and cat is not None:
            traj = self.catalog_entry(cat)
        if traj is None:
            raise self.rd.error(ft, "a FollowTrajectoryAction without a trajectory")
        self.rd.params.push(self._catalog_scope(cat, traj) if cat is not None else {})
        try:
            return self._shape_points(traj)
        finally:
            self.rd.params.pop()

    def _shape_points(self, traj: etree._Element) -> tuple[str, list[tuple[float, float, float]]] | None:
        shape = traj.find("Shape")
        kind = next(iter(shape)).tag if shape is not None and len(shape) else "?"
        points: list[tuple[float, float, float]] = []
        if kind == "Polyline":
            points = [self.position(v.find("Position")) for v in shape.iter("Vertex")]
        elif kind == "Clothoid":
            cl = shape.find("Clothoid")
            x, y, h = self.position(cl.find("Position"))
            k0, dk = self.rd.num(cl, "curvature"), self.rd.num(cl, "curvatureDot", self.rd.num(cl, "curvaturePrime", 0.0))
            length = self.rd.num(cl, "length")
            n = max(2, int(length / 1.0))
            ds = length / n
            points.append((x, y, h))
            for i in range(n):
                k_mid = k0 + dk * (i + 0.5) * ds  # curvature at the step's middle: heading advances by k ds
                x += ds * math.cos(h + k_mid * ds / 2)
                y += ds * math.sin(h + k_mid * ds / 2)
                h += k_mid * ds
                points.append((x, y, h))
        elif kind == "Nurbs":
            points = [self.position(c.find("Position")) for c in shape.iter("ControlPoint")]
        else:
            self.note(traj, f"trajectory shape {kind} is not read")
            return None
        if kind == "Polyline" and len(points) >= 2 and shape.find("Polyline/Vertex/Position//Orientation") is None:
            # A vertex without an orientation faces the next one (the last, the one before it).
            ahead = [math.atan2(b[1] - a[1], b[0] - a[0]) for a, b in zip(points, points[1:])]
            points = [(x, y, ahead[min(i, len(ahead) - 1)]) for i, (x, y, _) in enumerate(points)]
        return kind, points

    def _lane_chain(self, el: etree._Element, lanes: list[str]) -> list[str]:
        """``lanes`` (in driving order) as a chain the actor can follow: lanes between two that are not successors
        are filled in by the lane router (following lanes only); the chain ends (reported) before a lane that
        only a lane change reaches."""
        if not lanes:
            return lanes
        out = [lanes[0]]
        for b in lanes[1:]:
            a = out[-1]
            if b == a:
                continue
            if b in self.graph.successors.get(a, ()):
                out.append(b)
                continue
            leg = plan_route(lane_network(self.template), a, b, lane_changes=False)
            if leg is None:
                self.note(el, f"the route ends at {a}: {b} is reached from it only by a lane change (a "
                              "change_lane interaction, not a route step)", approximated=True)
                break
            out.extend(leg.lanes[1:])
        return out

    # -- triggers --

    def trigger(self, event: _Event) -> dict[str, Any]:
        """The manifest trigger of an event: its start trigger and its act's, combined."""
        groups = self._groups(event.el.find("StartTrigger"))
        # An act that starts at simulation time 0 (or before) adds nothing to its events' conditions.
        act_groups = [[i for i in g if not ("time" in i and i["rule"] == "gt" and i["time"] <= -self.warmup + 1e-9)]
                      for g in self._groups(event.act.find("StartTrigger"))]
        act_groups = [g for g in act_groups if g]
        if act_groups and groups:
            if len(act_groups) > 1 and len(groups) > 1:
                self.note(event.act.find("StartTrigger"), "act and event both have several condition groups: "
                                                          "the act's first group is used", approximated=True)
            combined = [a + g for a in act_groups[:1 if len(groups) > 1 else None] for g in groups]
            groups = combined
        else:
            groups = groups or act_groups
        return self._trigger_from_groups(event, groups)

    def _groups(self, trig: etree._Element | None) -> list[list[dict[str, Any]]]:
        if trig is None:
            return []
        out = []
        for g in trig.findall("ConditionGroup"):
            items = [self._condition(c) for c in g.findall("Condition")]
            out.append([i for i in items if i is not None])
        return out

    def _condition(self, c: etree._Element) -> dict[str, Any] | None:
        """One condition as ``{"time": t}``, ``{"after": id, "delay": d}``, ``{"leaf": {...}}`` or ``None``."""
        rd = self.rd
        delay = rd.num(c, "delay", 0.0)
        edge = rd.text(c, "conditionEdge", "none")
        vc = c.find("ByValueCondition")
        if vc is not None:
            body = next(iter(vc), None)
            if body is None:
                return None
            if body.tag == "SimulationTimeCondition":
                rule = rd.text(body, "rule")
                t = self.time(rd.num(body, "value")) + delay
                return {"time": t, "rule": _RULE.get(rule, "gt"), "el": body}
            if body.tag == "StoryboardElementStateCondition":
                ref = rd.text(body, "storyboardElementRef")
                kind = rd.text(body, "storyboardElementType")
                state = rd.text(body, "state")
                if kind != "event" or ref not in self.events:
                    if kind in ("act", "story", "maneuverGroup", "maneuver") and state in (
                            "startTransition", "runningState"):
                        first = self._first_event_of(ref, kind)
                        if first is not None:
                            return {"after": first, "delay": delay, "el": body}
                    self.note(body, f"state of {kind} {ref!r} is not represented (an event's state is)")
                    return {"never": True, "el": body}
                ev = self.events[ref]
                if state in ("endTransition", "completeState", "stopTransition", "skipTransition"):
                    return {"after": ev.name, "delay": delay, "end": True, "el": body}
                return {"after": ev.name, "delay": delay, "el": body}
            if body.tag == "TrafficSignalCondition":
                sig = rd.text(body, "name")
                signal_state = _signal_state(rd.text(body, "state"))
                if signal_state is None:
                    raise rd.error(body, f"signal state {rd.text(body, 'state')!r} is none of {_SIGNAL_FORMS}")
                found = self.template_signal(sig)
                if found is None:
                    raise rd.error(body, f"no traffic signal {sig!r} in the map (signals: "
                                         f"{', '.join(s.id for s in self.template.signals) or 'none'})")
                self._signals_used.add(found.id)
                return self._leaf({"kind": "signal", "signal": found.id, "state": signal_state}, c, edge, delay)
            self.note(body, f"{body.tag} is not represented")
            return {"never": True, "el": body}
        ec = c.find("ByEntityCondition")
        if ec is None:
            raise rd.error(c, "condition is neither by value nor by entity")
        refs = [rd.text(e, "entityRef") for e in ec.findall("TriggeringEntities/EntityRef")]
        if not refs:
            raise rd.error(c, "entity condition without triggering entities")
        ents = [self.entity(ec, r) for r in refs]
        if len(ents) > 1:
            self.note(ec, f"{len(ents)} triggering entities: the first ({ents[0].name}) is used", approximated=True)
        a = ents[0]
        body = next(iter(ec.find("EntityCondition")), None)
        if body is None:
            raise rd.error(ec, "empty <EntityCondition>")
        op = _RULE.get(body.get("rule", "lessThan"), "lt")
        if body.get("rule") in ("equalTo", "notEqualTo"):
            self.note(body, f"rule {body.get('rule')} read as greaterThan", approximated=True)
        tag = body.tag
        if tag in ("ReachPositionCondition", "DistanceCondition") and body.find("Position") is not None:
            if tag == "ReachPositionCondition":
                r = rd.num(body, "tolerance")
                op = "lt"
            else:
                r = rd.num(body, "value")
            region = self._region(body.find("Position"), r)
            leaf = {"kind": "reaches", "actor": a.id, "region": region}
            if op == "gt":
                return self._leaf(leaf, c, "falling" if edge == "none" else _flip(edge), delay)
            return self._leaf(leaf, c, edge, delay)
        if tag in ("RelativeDistanceCondition", "DistanceCondition"):
            other = self.entity(body, rd.text(body, "entityRef"))
            along = rd.text(body, "relativeDistanceType", "euclidianDistance") == "longitudinal" and \
                rd.text(body, "coordinateSystem", "entity") in ("lane", "road")
            if rd.text(body, "freespace", "false") == "true":
                self.note(body, "freespace distance read as centre distance", approximated=True)
            return self._leaf({"kind": "distance", "a": a.id, "b": other.id, "op": op,
                               "metric": "along_lane" if along else "euclidean",
                               "value_m": max(0.0, rd.num(body, "value"))}, c, edge, delay)
        if tag == "TimeHeadwayCondition":
            other = self.entity(body, rd.text(body, "entityRef"))
            return self._leaf({"kind": "headway", "a": a.id, "b": other.id, "op": op,
                               "value_s": max(0.0, rd.num(body, "value"))}, c, edge, delay)
        if tag == "TimeToCollisionCondition":
            tgt = body.find("TimeToCollisionConditionTarget")
            target_ref = tgt.find("EntityRef") if tgt is not None else None
            if target_ref is not None:
                other = self.entity(target_ref, rd.text(target_ref, "entityRef"))
                return self._leaf({"kind": "ttc", "a": a.id, "b": other.id, "op": op,
                                   "value_s": max(0.0, rd.num(body, "value"))}, c, edge, delay)
            pos = tgt.find("Position") if tgt is not None else None
            if pos is None:
                raise rd.error(body, "TimeToCollisionCondition without a target")
            x, y, _ = self.position(pos)
            return {"arrival": {"sync_with": a.id, "at": {"x": x, "y": y}, "ttc_s": max(0.0, rd.num(body, "value"))},
                    "el": body}
        if tag == "SpeedCondition":
            return self._leaf({"kind": "speed", "actor": a.id, "op": op,
                               "value_mps": max(0.0, rd.num(body, "value"))}, c, edge, delay)
        if tag == "RelativeSpeedCondition":
            other = self.entity(body, rd.text(body, "entityRef"))
            v = max(0.0, other.speed + rd.num(body, "value"))
            self.note(body, f"speed of {a.name} relative to {other.name} read against {other.name}'s initial speed: "
                            f"speed {op} {v:.3f} m/s", approximated=True)
            return self._leaf({"kind": "speed", "actor": a.id, "op": op, "value_mps": v}, c, edge, delay)
        if tag == "TraveledDistanceCondition":
            d = rd.num(body, "value")
            start = self.lane_ref(a.placed, a.kind)
            if start is None:
                self.note(body, f"{a.name} starts on no lane: travelled distance is not represented")
                return {"never": True, "el": body}
            lane, s = start["lane"], start["s"] + d
            for nxt in a.route[1:] if a.route and a.route[0] == lane else []:
                if s <= self.graph.lane(lane).length_m:
                    break
                s -= self.graph.lane(lane).length_m
                lane = nxt
            s = min(s, self.graph.lane(lane).length_m - 0.01)
            self.note(body, f"travelled {d:g} m read as reaching s {s:.2f} on {lane} along its route", approximated=True)
            return self._leaf({"kind": "reaches", "actor": a.id, "region": {
                "shape": "lane_window", "lane": lane, "s_from": round(max(0.0, s), 6),
                "s_to": round(self.graph.lane(lane).length_m, 6)}}, c, edge, delay)
        if tag == "StandStillCondition":
            return self._leaf({"kind": "standstill", "actor": a.id, "for_s": max(self.dt, rd.num(body, "duration"))},
                              c, edge, delay)
        if tag == "CollisionCondition":
            other_ref = body.find("EntityRef")
            other_id = self.entity(other_ref, rd.text(other_ref, "entityRef")).id if other_ref is not None else None
            return self._leaf({"kind": "collision", "a": a.id, "b": other_id}, c, edge, delay)
        self.note(body, f"{tag} is not represented")
        return {"never": True, "el": body}

    def _first_event_of(self, name: str, kind: str) -> str | None:
        tag = {"act": "Act", "story": "Story", "maneuverGroup": "ManeuverGroup", "maneuver": "Maneuver"}[kind]
        for ev in self.events.values():
            node = ev.el.getparent()
            while node is not None:
                if node.tag == tag and node.get("name") == name:
                    return ev.name
                node = node.getparent()
        return None

    def _region(self, pos: etree._Element, r: float) -> dict[str, Any]:
        lp = pos.find("LanePosition")
        rol = {v: k for k, v in self.road_of_lane.items()}
        if lp is not None and rol and self.rd.text(lp, "roadId").isdigit() and \
                int(self.rd.text(lp, "roadId")) in rol and self.rd.num(lp, "offset", 0.0) == 0.0:
            # The export writes a lane window as its middle and half-length on the lane's road.
            lane = rol[int(self.rd.text(lp, "roadId"))]
            mid = self.rd.num(lp, "s")
            return {"shape": "lane_window", "lane": lane, "s_from": round(max(0.0, mid - r), 6),
                    "s_to": round(mid + r, 6)}
        x, y, _ = self.position(pos)
        return {"shape": "circle", "x": x, "y": y, "r": max(r, 1e-3)}

    def _leaf(self, leaf: dict[str, Any], c: etree._Element, edge: str, delay: float) -> dict[str, Any]:
        if delay > 0:
            self.note(c, f"condition delay {delay:g} s is not represented (the interaction fires when it holds)",
                      approximated=True)
        if edge == "falling":
            if leaf["kind"] in ("distance", "ttc", "headway", "speed"):
                leaf = {**leaf, "op": _INVERT[leaf["op"]]}
            else:
                leaf = {"kind": "not", "of": leaf}
        elif edge == "risingOrFalling":
            self.note(c, "a rising-or-falling edge is read as rising", approximated=True)
        return {"leaf": leaf, "el": c}

    def _trigger_from_groups(self, event: _Event, groups: list[list[dict[str, Any]]]) -> dict[str, Any]:
        where = event.el.find("StartTrigger")
        where = where if where is not None else event.el
        if not groups or all(not g for g in groups):
            return {"kind": "at", "t_s": 0.0}
        # by_latest patterns: a group holding only "time >= T" among others is "fire at T";
        # a "time < T" in every group is "skip after T".
        fire = [g for g in groups if g and all("time" in i and i["rule"] == "gt" for i in g)]
        rest = [g for g in groups if g not in fire]
        deadline_fire = min((max(i["time"] for i in g) for g in fire), default=None)
        if not rest:
            assert deadline_fire is not None  # every group is a non-empty "time >= T" group
            return {"kind": "at", "t_s": max(0.0, min(deadline_fire, self.clip))}
        conds: list[list[dict[str, Any]]] = []
        skip_deadline = None
        for g in rest:
            kept = []
            for item in g:
                if "time" in item and item["rule"] == "lt":
                    skip_deadline = item["time"] if skip_deadline is None else min(skip_deadline, item["time"])
                elif "time" in item:
                    kept.append(item)
                else:
                    kept.append(item)
            conds.append(kept)
        if any(any("never" in i for i in g) for g in conds):
            conds = [g for g in conds if not any("never" in i for i in g)]
            if not conds:
                if deadline_fire is not None:
                    return {"kind": "at", "t_s": max(0.0, min(deadline_fire, self.clip))}
                self.note(where, "no condition of this event can be represented: it never fires")
                return {"never": True}
        # One group of an "after" (plus perhaps a time bound) → after; a time-only group → at.
        if len(conds) == 1:
            g = conds[0]
            afters = [i for i in g if "after" in i]
            times = [i for i in g if "time" in i]
            leaves = [i for i in g if "leaf" in i or "arrival" in i]
            own = [i for i in afters if i["after"] == event.name]
            if own:
                self.note(where, "a condition on the event's own state (a repeat) is dropped", approximated=True)
                afters = [i for i in afters if i["after"] != event.name]
                if not afters and not leaves and not times:
                    return {"kind": "at", "t_s": 0.0}
            if afters and not leaves:
                a = afters[0]
                delay = a["delay"] + (self.events[a["after"]].duration_s if a.get("end") else 0.0)
                if a.get("end"):
                    self.note(a["el"], f"end of {a['after']} read as its start + its duration ({delay:g} s)",
                              approximated=True)
                if len(afters) > 1 or times:
                    self.note(where, "an after-condition combined with others: only the first is kept",
                              approximated=True)
                return {"kind": "after", "id": self.events[a["after"]].id_first, "delay_s": max(0.0, delay)}
            if times and not leaves:
                return {"kind": "at", "t_s": max(0.0, min(max(i["time"] for i in times), self.clip))}
            if len(leaves) == 1 and "arrival" in leaves[0]:
                arr = leaves[0]["arrival"]
                return {"kind": "arrival", "of": "@actor", "at": arr["at"], "sync_with": arr["sync_with"],
                        "ttc_s": arr["ttc_s"]}
        by_latest = self.clip
        if_never = "skip"
        if deadline_fire is not None:
            by_latest, if_never = min(deadline_fire, self.clip), "fire"
        elif skip_deadline is not None:
            by_latest = min(skip_deadline, self.clip)
        leaf_groups = []
        for g in conds:
            leaves = [i["leaf"] for i in g if "leaf" in i]
            for i in g:
                if "leaf" not in i:
                    self.note(i["el"], "a time, state or arrival condition mixed with entity conditions is dropped",
                              approximated=True)
            if leaves:
                leaf_groups.append(leaves)
        if not leaf_groups:
            return {"kind": "at", "t_s": max(0.0, min(by_latest, self.clip))}
        if len(leaf_groups) == 1:
            leaves = leaf_groups[0]
            condition = leaves[0] if len(leaves) == 1 else {"kind": "and", "of": _flat(leaves, self, where)}
        elif all(len(g) == 1 for g in leaf_groups):
            condition = {"kind": "or", "of": _flat([g[0] for g in leaf_groups], self, where)}
        else:
            self.note(where, "an or of ands is not represented: the first group is used", approximated=True)
            condition = {"kind": "and", "of": _flat(leaf_groups[0], self, where)}
        return {"kind": "when", "condition": condition, "by_latest_s": max(0.0, by_latest), "if_never": if_never}

    # -- assembly --

    def build(self, decision: str | None) -> dict[str, Any]:
        for ev in self.events.values():
            ev.id_first = ev.interactions[0]["id"] if ev.interactions else ev.id
        interactions = []
        for ev in self.events.values():
            if not ev.interactions:
                continue
            trig = self.trigger(ev)
            if trig.get("never"):
                continue
            for k, inter in enumerate(ev.interactions):
                t = trig
                if k > 0:
                    t = {"kind": "after", "id": ev.interactions[0]["id"], "delay_s": 0.0}
                if t["kind"] == "arrival":
                    t = {**t, "of": inter["actor_id"]}
                    if t["of"] == t["sync_with"] or t["of"] is None:
                        self.note(ev.el, "time to collision with a position read as a time bound", approximated=True)
                        t = {"kind": "at", "t_s": 0.0}
                full = {"id": inter["id"], "actor_id": inter["actor_id"], "trigger": t, "until": None,
                        "dynamics": inter.get("dynamics")}
                for verb in ("speed", "gap", "change_lane", "lane_offset", "route", "exist", "set"):
                    full[verb] = inter.get(verb)
                if full["dynamics"] is None and any(full[v] is not None for v in ("speed", "gap", "change_lane",
                                                                                    "lane_offset")):
                    full["dynamics"] = {"shape": "step", "constraint": "time", "value": 0.0}
                interactions.append(full)
        known = {i["id"] for i in interactions}
        for i in interactions:
            if i["trigger"]["kind"] == "after" and i["trigger"]["id"] not in known:
                self.note(self.root, f"interaction {i['id']} waits for {i['trigger']['id']}, which is not "
                                     "represented: it never fires")
        interactions = [i for i in interactions if i["trigger"]["kind"] != "after" or i["trigger"]["id"] in known]
        actors = self._actors()
        spawned = {i["actor_id"] for i in interactions if i.get("exist") and i["exist"]["state"] == "present"}
        for a in actors:
            if not a["present_at_start"] and a["id"] not in spawned:
                a["present_at_start"] = True
                self.report.approximated.append(f"actor {a['id']}: invisible at start and never shown: present")
        catalog, _ = _certified_catalog()
        assets = sorted({a["asset_id"] for a in actors})
        sample_id = _ident(self.header.get("sample_id") or f"xosc-{self.path.stem}").replace(":", "_")
        ego = next((a["id"] for a in actors if a["role"] == "ego"), actors[0]["id"])
        t_decision, event_name = self.decision(decision, interactions)
        realized: dict[str, Any] = {"xosc.source": self.path.name, "decision_event": event_name or ""}
        if event_name is not None:
            realized["decision_interaction"] = self.events[event_name].interactions[0]["id"]
        if t_decision is not None:
            realized["t_decision_s"] = round(t_decision, 9)
        realized.update({f"xosc.param.{k}"[:128]: v for k, v in sorted(self.param_values().items())})
        occluders: list[dict[str, Any]] = [{"id": _ident(e.props["simready.occluder"]), "kind": "actor", "actor_id": e.id, "pose": None,
                      "dims": None} for e in self.entities.values() if "simready.occluder" in e.props]
        occluders += [{"id": e.id, "kind": "structure", "actor_id": None,
                      "pose": {"x": e.placed[0], "y": e.placed[1], "yaw": e.placed[2]},
                      "dims": {"l": e.dims[0] or 1.0, "w": e.dims[1] or 1.0, "h": e.dims[2] or 1.0}}
                     for e in self.entities.values() if e.kind == "misc"]
        for e in self.entities.values():
            if e.kind == "misc":
                self.report.approximated.append(f"Entities/ScenarioObject[{e.name}] (line {e.line}): misc object "
                                                f"({e.category}) is a structure occluder box")
        env = self._final_environment()
        streams = StreamSet(sample_id)
        return {
            "schema_version": SCHEMA_VERSION, "template_id": self.template.id,
            "template_hash": template_hash(self.template), "sample_id": sample_id, "seed": streams.root_seed,
            "streams": streams.seeds(), "clip_s": self.clip, "warmup_s": self.warmup, "dt": self.dt,
            "metric_subject": self.header.get("metric_subject", ego), "actors": actors,
            "interactions": interactions, "signal_programs": self.signal_programs(), "occluders": occluders, "environment": env,
            "coverage_cell": {"id": "xosc", "dims": {}}, "split": "train", "realized": realized,
            "lineage": {"asset_families": sorted({a.removeprefix("asset:").split("/")[0] for a in assets}),
                        "base_template": self.template.id, "checkpoint_group": sample_id},
            "asset_versions": {a: _asset_hash(catalog, a) for a in assets},
            "intent": f"imported from OpenSCENARIO {self.path.name}",
        }

    def signal_programs(self) -> list[dict[str, Any]]:
        """Traffic signal controllers → fixed-time programs of the template signals they drive.

        A controller's phases start at simulation time 0 (manifest time ``-warmup_s``; its ``delay`` shifts them);
        the program is the same cycle written from the rotation whose offset is smallest. A simready export
        numbers the template's signals 1, 2, … in id order; another map's signal ``N`` is template signal
        ``signal_N`` (the map importer's name)."""
        net = self.root.find("RoadNetwork/TrafficSignals")
        out: dict[str, dict[str, Any]] = {}
        for ctrl in (net.findall("TrafficSignalController") if net is not None else []):
            phases: dict[str, list[tuple[str, float]]] = {}
            for ph in ctrl.findall("Phase"):
                dur = self.rd.num(ph, "duration")
                for st in ph.findall("TrafficSignalState"):
                    state = _signal_state(self.rd.text(st, "state"))
                    if state is None:
                        raise self.rd.error(st, f"signal state {self.rd.text(st, 'state')!r} is none of "
                                                f"{_SIGNAL_FORMS}")
                    phases.setdefault(self.rd.text(st, "trafficSignalId"), []).append((state, dur))
            delay = self.rd.num(ctrl, "delay", 0.0)
            for sig_ref, seq in sorted(phases.items()):
                sig = self.template_signal(sig_ref)
                if sig is None:
                    self.note(ctrl, f"signal {sig_ref} is in no template signal")
                    continue
                seq = [(state, d) for state, d in seq if d > 0]
                start = delay
                if len(seq) > 1 and seq[0][0] == seq[-1][0]:
                    start -= seq[-1][1]
                    seq = [(seq[0][0], seq[0][1] + seq[-1][1])] + seq[1:-1]
                cycle = sum(d for _, d in seq)
                if not seq or cycle <= 0:
                    continue
                best: tuple[float, int] | None = None
                acc = 0.0
                for k in range(len(seq)):
                    offset = round((start + acc - self.warmup) % cycle, 9)
                    offset = 0.0 if abs(offset - cycle) < 1e-6 else offset
                    best = (offset, k) if best is None or offset < best[0] else best
                    acc += seq[k][1]
                assert best is not None  # seq is not empty
                offset, k = best
                rotated = seq[k:] + seq[:k]
                if offset > MAX_CLIP_S or max(d for _, d in rotated) > MAX_CLIP_S:
                    self.note(ctrl, f"signal {sig.id}: a phase or offset longer than {MAX_CLIP_S:g} s")
                    continue
                out[sig.id] = {"id": sig.id, "controls": list(sig.controls), "offset_s": offset,
                               "phases": [{"state": st, "duration_s": d} for st, d in rotated]}
        for sid in sorted(self._signals_used - set(out)):
            # A condition on a signal no controller of the file drives: the map's own fixed-time program.
            sig = next(s for s in self.template.signals if s.id == sid)
            out[sid] = {"id": sid, "controls": list(sig.controls), "offset_s": round(sig.offset_s % sig.cycle_s, 9),
                        "phases": [{"state": "amber" if p.state == "yellow" else p.state, "duration_s": p.duration_s}
                                   for p in sig.program]}
            self.report.approximated.append(
                f"RoadNetwork (signal {sid}): no TrafficSignalController drives it; the map's fixed-time program "
                f"runs it ({', '.join(f'{p.state} {p.duration_s:g} s' for p in sig.program)})")
        return [out[k] for k in sorted(out)]

    def template_signal(self, ref: str) -> Any:
        """The template signal an OpenSCENARIO signal id names: a simready export numbers them in id order; an
        imported map's are ``signal_<OpenDRIVE id>``; None when there is none."""
        by_id = {s.id: s for s in self.template.signals}
        if self.road_of_lane:
            by_index = {str(k + 1): s for k, s in enumerate(sorted(self.template.signals, key=lambda s: s.id))}
            if ref in by_index:
                return by_index[ref]
        return by_id.get(f"signal_{ref}") or by_id.get(ref) or by_id.get(_ident(ref))

    def param_values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        scope = self.rd.params.scopes[0]
        for name in sorted(scope):
            try:
                text = self.rd.params.resolve(scope[name])
            except ExpressionError:
                continue
            try:
                out[_ident(name)] = float(text)
            except ValueError:
                out[_ident(name)] = text[:256]
        return out

    def _final_environment(self) -> dict[str, Any]:
        env = dict(self.env)
        h = self.header
        for key in ("wetness", "road_reflectance", "sun_elevation_deg", "sun_azimuth_deg"):
            if key in h:
                env[key] = float(h[key])
        if "weather" in h:
            env["weather"] = h["weather"]
        if "headlights" in h:
            env["headlights"] = h["headlights"] == "true"
        el = env["sun_elevation_deg"]
        env["illumination"] = "day" if el >= 6.0 else ("night" if el < -6.0 else "dusk")
        if "headlights" not in h:
            env["headlights"] = env["illumination"] != "day"
        if env["rain_rate_mmph"] > 0:
            env["weather"] = "rain"
            env["wetness"] = env["wetness"] or 0.5
        elif env["weather"] == "rain":
            env["weather"] = "wet"
        if env["weather"] == "wet" and env["wetness"] == 0:
            env["weather"] = "dry"
        if env["weather"] == "dry":
            env["wetness"] = 0.0
        return env

    def _actors(self) -> list[dict[str, Any]]:
        catalog, _ = _certified_catalog()
        actors = []
        named_ego = [e for e in self.entities.values() if e.kind == "vehicle" and
                     (e.props.get("simready.role") == "ego" or e.name.lower() in ("ego", "hero"))]
        first_vehicle = next((e for e in self.entities.values() if e.kind == "vehicle"), None)
        ego = named_ego[0] if named_ego else first_vehicle
        for e in self.entities.values():
            if e.kind == "misc":
                continue
            d = catalog.entries[e.asset_id].dimensions_m
            p = e.props
            role = p.get("simready.role") or ("ego" if e is ego else "agent")
            if role == "ego" and e is not ego:
                role = "agent"
            if role == "parked" and e.speed != 0:
                role = "agent"
            rules = dict(_DEFAULT_RULES)
            for key in ("obey_signals", "yield", "collision_avoidance"):
                if f"simready.{key}" in p:
                    rules[key] = p[f"simready.{key}"] == "true"
            for key in ("aggression", "speed_factor"):
                if f"simready.{key}" in p:
                    rules[key] = float(p[f"simready.{key}"])
            cruise = float(p["simready.cruise_speed_mps"]) if "simready.cruise_speed_mps" in p else \
                (None if role == "parked" else e.speed)
            pose = {"x": round(e.placed[0], 8), "y": round(e.placed[1], 8), "yaw": round(math.atan2(
                math.sin(e.placed[2]), math.cos(e.placed[2])), 9)}
            walk = None
            route = e.route
            if e.kind == "pedestrian":
                nodes = e.nodes or self._nodes([e.placed])
                if len(nodes) < 2:
                    nodes = self._walk_default(e)
                walk = {"route": nodes, "reaction_delay_s": float(p.get("simready.reaction_delay_s", 0.4)),
                        "stop_tendency": float(p.get("simready.stop_tendency", 0.0))}
                if e.via:
                    walk["via"] = [{"x": x, "y": y} for x, y in e.via]
                route = []
            else:
                lr = self.lane_ref(e.placed, e.kind)
                if not route and lr is not None and role != "parked":
                    route = self._default_route(lr["lane"])
                if lr is None and role != "parked":
                    self._check_drivable(e, route)
            actors.append({
                "id": e.id, "kind": e.kind, "role": role, "asset_id": e.asset_id,
                "dims": {"l": d.length, "w": d.width, "h": d.height},
                "initial": {"lane_ref": self.lane_ref(e.placed, e.kind), "pose": pose, "speed_mps": round(e.speed, 9)},
                "behavior": {"rules": rules, "route": route, "cruise_speed_mps": cruise},
                "walk": walk, "present_at_start": e.present,
                "tags": p.get("simready.tags", "").split() if p.get("simready.tags") else [f"xosc:{_ident(e.name)}"[:64]],
            })
        return actors

    def _check_drivable(self, e: _Entity, route: list[str]) -> None:
        """A moving vehicle off every lane must still start within reach of a lane it can drive, heading its way;
        else one line saying why (the simulator's behaviour model drives vehicles along lanes)."""
        x, y, h = e.placed
        where = f"Entities/ScenarioObject[{e.name}]"
        try:
            lane, s, t = self.graph.nearest(x, y, h, kinds=("driving", "turn"))
        except ValueError:
            raise XoscError(self.src, where, f"no lane of the map runs in its heading (line {e.line})") from None
        if route:
            lane = route[0]
            s, t = self.graph.lane(lane).project(x, y)
        if abs(t) <= MAX_START_OFFSET_M and s >= -MAX_START_OFFSET_M:
            return
        other, s2, t2 = self.graph.nearest(x, y)
        g = self.graph.lane(other)
        if abs(t2) <= g.width_m / 2 and 0.0 <= s2 <= g.length_m:
            yaw, lane_yaw = (math.degrees(math.remainder(a, math.tau)) for a in (h, g.pose_at(s2)[2]))
            why = (f"starts on lane {other} heading against its direction of travel (yaw {yaw:.0f}°, the lane "
                   f"{lane_yaw:.0f}°): a vehicle drives a lane its way")
        else:
            why = f"starts {abs(t):.2f} m off the nearest lane it can drive ({lane}), more than {MAX_START_OFFSET_M:g} m"
            if e.road is not None and e.road[0] in self.roads.roads:
                road = self.roads.roads[e.road[0]]
                sec = next((sec for sec in reversed(road.sections) if sec.s <= e.road[2] + 1e-9), road.sections[0])
                kind = next((ln.type for ln in sec.lanes if ln.id == e.road[1]), "")
                if kind and kind not in ("driving", "entry", "exit", "onRamp", "offRamp", "connectingRamp"):
                    why += f", on road {road.id} lane {e.road[1]}, a {kind!r} lane (not driven)"
        raise XoscError(self.src, where, f"{e.name!r} {why} (line {e.line})")

    def _default_route(self, lane: str) -> list[str]:
        """The lane and its successors while there is exactly one (a route the behaviour model can drive)."""
        route = [lane]
        while len(route) < 50:
            succ = self.graph.successors.get(route[-1], ())
            if len(succ) != 1 or succ[0] in route:
                break
            route.append(succ[0])
        return route

    def _walk_default(self, e: _Entity) -> list[str]:
        nodes = self.template.walkable.nodes
        if len(nodes) < 2:
            raise XoscError(self.src, f"Entities/ScenarioObject[{e.name}]",
                            f"a pedestrian needs a walkable graph and the map has none (line {e.line})")
        ranked = sorted(sorted(nodes), key=lambda n: math.hypot(nodes[n][0] - e.placed[0], nodes[n][1] - e.placed[1]))
        h = e.placed[2]
        ahead = [n for n in ranked[1:] if (nodes[n][0] - e.placed[0]) * math.cos(h) + (nodes[n][1] - e.placed[1]) *
                 math.sin(h) > 0]
        return [ranked[0], (ahead or ranked[1:])[0]]

    def decision(self, decision: str | None, interactions: list[dict[str, Any]]) -> tuple[float | None, str | None]:
        by_id = {i["id"]: i for i in interactions}
        chosen: _Event | None
        if decision is not None:
            try:
                t = float(decision)
            except ValueError:
                t = None
            if t is not None:
                if not 0 <= t <= self.clip:
                    raise XoscError(self.src, "--decision", f"{t} s is outside the clip [0, {self.clip}]")
                self.report.decision = f"at {t:g} s (--decision)"
                return t, None
            ev = self.events.get(decision)
            if ev is None or not ev.interactions or ev.interactions[0]["id"] not in by_id:
                raise XoscError(self.src, "--decision", f"no represented event {decision!r} "
                                                        f"(events: {', '.join(sorted(self.events))})")
            chosen, source = ev, "--decision"
        else:
            chosen, source = self._main_event(by_id), "the first event of the main maneuver group"
            if chosen is None:
                self.report.decision = "none: no represented event (pass --decision SECONDS)"
                return None, None
        first = chosen.interactions[0]["id"]
        t = _fire_time(by_id, first)
        where = f"{_path(chosen.el)} (line {chosen.el.sourceline})"
        if t is None:
            self.report.decision = f"event {chosen.name} ({source}, {where}); it fires on a condition: the branch " \
                                   "command finds its time in a base rollout"
        else:
            self.report.decision = f"event {chosen.name} at {t:g} s ({source}, {where})"
        return t, chosen.name

    def _main_event(self, by_id: Mapping[str, Any]) -> _Event | None:
        ego = next((a for a in self._ego_names()), None)
        candidates = [ev for ev in self.events.values() if ev.interactions and ev.interactions[0]["id"] in by_id]
        if not candidates:
            return None
        groups: list[etree._Element] = []
        for ev in candidates:
            if ev.group not in groups:
                groups.append(ev.group)
        main = next((g for g in groups if any(a != ego for a in [self.rd.text(e, "entityRef")
                                                                   for e in g.findall("Actors/EntityRef")])), groups[0])
        return next(ev for ev in candidates if ev.group is main)

    def _ego_names(self) -> list[str]:
        names = [e.name for e in self.entities.values() if e.props.get("simready.role") == "ego" or
                 e.name.lower() in ("ego", "hero")]
        first = next((e.name for e in self.entities.values() if e.kind == "vehicle"), None)
        return names or ([first] if first else [])


def _fire_time(by_id: Mapping[str, Any], inter_id: str) -> float | None:
    """The time an interaction fires when its trigger chain is all times and delays; None when it waits on the scene."""
    seen = set()
    total = 0.0
    while inter_id in by_id and inter_id not in seen:
        seen.add(inter_id)
        trig = by_id[inter_id]["trigger"]
        if trig["kind"] == "at":
            return total + float(trig["t_s"])
        if trig["kind"] != "after":
            return None
        total += trig["delay_s"]
        inter_id = trig["id"]
    return None


def _flat(leaves: list[dict[str, Any]], imp: _Importer, where: etree._Element) -> list[dict[str, Any]]:
    """Leaves of an and / or: a ``not`` inside one is not representable (one level of nesting) and is dropped."""
    out = [leaf for leaf in leaves if leaf["kind"] != "not"]
    if len(out) != len(leaves):
        imp.note(where, "a negated condition inside an and/or is dropped", approximated=True)
    if len(out) == 1:
        out = out * 2  # the manifest's and / or need two leaves: the same leaf twice is the leaf
    return out


_SIGNAL_FORMS = ("red, amber (yellow), green, red_amber, off, or lamps each on/off: 'red;amber;green' (a traffic "
                 "light), 'red;green' (a pedestrian light)")
_SIGNAL_NAMES = {"red": "red", "amber": "amber", "yellow": "amber", "green": "green", "off": "off",
                 "red_amber": "red_amber", "redamber": "red_amber", "red-amber": "red_amber"}
_SIGNAL_LAMPS = {(True, False, False): "red", (False, True, False): "amber", (False, False, True): "green",
                 (True, True, False): "red_amber", (False, False, False): "off",
                 (True, False): "red", (False, True): "green", (False, False): "off"}


def _signal_state(text: str) -> str | None:
    """A signal state as the manifest names it: a name (any case), or the lamp form esmini writes, ``on;off;off``
    (red, amber, green lamps) or ``off;on`` (a pedestrian light's red, green); None for anything else."""
    t = text.strip().lower()
    if ";" in t:
        lamps = [x.strip() for x in t.split(";")]
        if len(lamps) in (2, 3) and all(x in ("on", "off", "flashing") for x in lamps):
            return _SIGNAL_LAMPS.get(tuple(x != "off" for x in lamps))
        return None
    return _SIGNAL_NAMES.get(t)


def _flip(edge: str) -> str:
    return {"rising": "falling", "falling": "rising"}.get(edge, edge)


def _lane_step(road: Road, s: float, lane: int, d_lane: int) -> int:
    """The lane ``d_lane`` lanes to the left (+) of ``lane`` in its driving direction (skipping lane 0)."""
    sec = next((sec for sec in reversed(road.sections) if sec.s <= s + 1e-9), road.sections[0])
    ids = sorted(ln.id for ln in sec.lanes if ln.id != 0)
    # Left of travel: for a right lane (negative id) that is towards larger ids; for a left lane, smaller.
    step = d_lane if lane < 0 else -d_lane
    order = ids
    if lane not in order:
        return lane
    k = order.index(lane) + step
    return order[max(0, min(len(order) - 1, k))]


def _duration(dyn: Mapping[str, Any], delta: float, speed: float) -> float:
    if dyn["constraint"] == "time":
        return float(dyn["value"])
    if dyn["constraint"] == "distance":
        return float(dyn["value"]) / max(speed, 0.1)
    return delta / max(float(dyn["value"]), 1e-6)


_CATALOG_CACHE: dict[str, tuple[Catalog, set[str]]] = {}


def _certified_catalog() -> tuple[Catalog, set[str]]:
    """The generated catalog and the ids of its certified actor entries (vehicles, pedestrians, cyclists; certified
    once per process: only those can be an imported entity's asset)."""
    key = str(paths.CATALOG_GENERATED_DIR)
    if key not in _CATALOG_CACHE:
        catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
        actor_classes = {c for _, classes in _VEHICLE_CLASSES.values() for c in classes} | {"pedestrian"}
        certified = certified_ids(catalog, [aid for aid, e in catalog.entries.items()
                                            if e.semantic_class in actor_classes])
        _CATALOG_CACHE[key] = (catalog, certified)
    return _CATALOG_CACHE[key]


def _asset_hash(catalog: Catalog, asset_id: str) -> str:
    return file_sha256(str(catalog.entry_dir(asset_id) / ENTRY_FILE))


# --- entry points ---------------------------------------------------------------------------------------------


def import_xosc(path: str | Path, map_path: str | Path | None = None, decision: str | None = None,
                parameters: Mapping[str, Any] | None = None, template_dir: str | Path = paths.TEMPLATES_DIR,
                sample_id: str | None = None) -> XoscImport:
    """Import one OpenSCENARIO file (see the module docstring); ``parameters`` override its declarations.

    Raises:
        XoscError: one line naming the file, the element and its line, and the reason.
        MapError: the road network does not import.
    """
    path = Path(path)
    raw = read_bytes(path, XoscError)
    root = _parse_xml(raw, str(path))
    if root.find("ParameterValueDistribution") is not None:
        raise XoscError(path, "ParameterValueDistribution",
                        "a parameter distribution file: import it as a batch (import_distribution)")
    params = Parameters(overrides=dict(parameters or {}))
    imp = _Importer(path, root, params, Path(map_path) if map_path else None, Path(template_dir))
    imp.rd.declare(root.find("ParameterDeclarations"))
    unknown = sorted(set(params.overrides) - set(params.scopes[0]))
    if unknown:
        raise XoscError(path, "ParameterDeclarations", f"parameter(s) {', '.join(unknown)} are not declared")
    imp.read_header()
    imp.read_catalog_locations()
    imp.read_entities()
    imp.load_map()
    imp.match_assets()
    imp.read_init()
    imp.read_storyboard()
    if sample_id is not None:
        imp.header["sample_id"] = sample_id
    data = imp.build(decision)
    try:
        manifest = parse_manifest(data, str(path))
    except ManifestError as exc:
        raise XoscError(path, exc.field, f"the imported scenario is not a valid manifest: {exc.reason}") from None
    return XoscImport(manifest, imp.template, imp.template_data, imp.report, imp.param_values())


def is_distribution(path: str | Path) -> bool:
    """Whether ``path`` is a ParameterValueDistribution file (read safely; a malformed file raises XoscError)."""
    path = Path(path)
    return _parse_xml(read_bytes(path, XoscError), str(path)).find("ParameterValueDistribution") is not None


def read_distribution(path: str | Path, root: str | None = None) -> tuple[Path, list[dict[str, str]]]:
    """``(scenario file, parameter sets)`` of a ParameterValueDistribution file (the scenario relative to it)."""
    path = Path(path)
    doc = _parse_xml(read_bytes(path, XoscError), str(path))
    dist = doc.find("ParameterValueDistribution")
    if dist is None:
        raise XoscError(path, "", "no <ParameterValueDistribution>: not a distribution file")
    sf = dist.find("ScenarioFile")
    if sf is None or not sf.get("filepath"):
        raise XoscError(path, "ParameterValueDistribution", f"no <ScenarioFile filepath> (line {dist.sourceline})")
    try:
        sets = distribution_sets(dist, root)
    except (ExpressionError, ValueError) as exc:
        raise XoscError(path, "ParameterValueDistribution", str(exc)) from None
    return (path.parent / sf.get("filepath", "")).resolve(), sets


def manifests_for_sets(scenario: str | Path, sets: Sequence[Mapping[str, Any]], *, map_path: str | Path | None = None,
                       decision: str | None = None, prefix: str | None = None,
                       template_dir: str | Path = paths.TEMPLATES_DIR) -> list[XoscImport]:
    """One import per parameter set (sample ids ``<prefix>-<k:04d>``): what a program drawing a file's parameters
    calls per proposal — :func:`read_distribution` gives the sets, or a program draws its own from named streams."""
    stem = prefix or _ident(f"xosc-{Path(scenario).stem}")
    return [import_xosc(scenario, map_path, decision, params, template_dir, sample_id=f"{stem}-{k:04d}")
            for k, params in enumerate(sets)]


def import_distribution(path: str | Path, map_path: str | Path | None = None, decision: str | None = None,
                        template_dir: str | Path = paths.TEMPLATES_DIR, root: str | None = None) -> list[XoscImport]:
    """A ParameterValueDistribution file as a batch: one manifest per parameter set (see :func:`read_distribution`)."""
    scenario, sets = read_distribution(path, root)
    return manifests_for_sets(scenario, sets, map_path=map_path, decision=decision, template_dir=template_dir,
                              prefix=_ident(f"xosc-{Path(path).stem}"))
