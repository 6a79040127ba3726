"""The import's shared state: the file and its parameters, its header, its catalogs, its entities and events, the
road network (matched to a template's export, or imported as a new template) and the report of what was
approximated or left out.

Each part of the import (:mod:`.entities`, :mod:`.positions`, :mod:`.actions`, :mod:`.init_actions`,
:mod:`.storyboard`, :mod:`.triggers`, :mod:`.signals`, :mod:`.decision`, :mod:`.assembly`) is a class over this
one; the importer (:mod:`simready.maps.xosc_import`) combines them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lxml import etree

from simready.common.hashing import sha256_bytes
from simready.common.loading import read_bytes
from simready.maps.opendrive import read_opendrive
from simready.maps.xosc_import.document import Reader, XoscError, element_path, identifier, parse_xml
from simready.maps.xosc_import.roads import Roads
from simready.maps.xosc_params import Parameters
from simready.world.template import list_template_files, load_template, parse_template, template_hash

if TYPE_CHECKING:
    from simready.world.template import WorldTemplate


#: The environment before any EnvironmentAction (the manifest's defaults).
_ENVIRONMENT = {"illumination": "day", "sun_elevation_deg": 45.0, "sun_azimuth_deg": 180.0, "headlights": False,
                "weather": "dry", "wetness": 0.0, "road_friction": 0.9, "road_reflectance": 0.1, "rain_rate_mmph": 0.0}


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
class Entity:
    """A ScenarioObject as the import knows it: what it is, where it starts (world pose, m and rad), how it moves."""

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
class Event:
    """A storyboard event: its element, actors, maneuver group and act, and the interactions it became."""

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


class Context:
    """What every part of the import reads and writes (one instance per imported file)."""

    #: The clip length (s), set when the storyboard is read.
    clip: float

    def __init__(self, path: Path, root: etree._Element, params: Parameters, map_path: Path | None,
                 template_dir: Path) -> None:
        self.path = path
        self.src = str(path)
        self.root = root
        self.rd = Reader(self.src, params)
        self.report = XoscReport(self.src)
        self.template_dir = template_dir
        self.map_path = map_path
        self.entities: dict[str, Entity] = {}
        self.events: dict[str, Event] = {}
        self.header: dict[str, str] = {}
        self.env: dict[str, Any] = dict(_ENVIRONMENT)
        self.catalog_dirs: dict[str, list[Path]] = {}
        self._catalogs: dict[Path, etree._Element] = {}
        self._in_init = False
        self._signals_used: set[str] = set()

    def note(self, el: etree._Element, what: str, approximated: bool = False) -> None:
        line = f"{element_path(el)} (line {el.sourceline}): {what}"
        (self.report.approximated if approximated else self.report.not_represented).append(line)

    def entity(self, el: etree._Element, name: str) -> Entity:
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

            tid = identifier(f"xosc_{self.map_path.stem}").replace(":", "_")
            imported = import_opendrive(self.map_path, tid)
            self.template_data = imported.data
            template = parse_template(imported.data, str(self.map_path))
            self.road_of_lane = {}
            self.report.template = (f"{tid} imported from {self.map_path.name} ({len(imported.data['lanes'])} lanes; "
                                    "write it to data/templates to simulate from the command line)")
        self.template: WorldTemplate = template
        self.roads = Roads(odr)
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
                    self._catalogs[f] = parse_xml(read_bytes(f, XoscError), str(f))
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
