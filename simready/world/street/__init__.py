"""The static street of a template that has only regions and lanes (an imported map; SPEC §5, §18).

A hand-written template lays its road, sidewalks, kerbs and buildings out as
static instances of certified catalog assets (``data/templates/*.yaml``); an
OpenDRIVE map gives lanes and region polygons only. :func:`street_static`
turns those into the same kind of instances, of the catalog assets named
below, so every sensor, the truth labels and both simulation backends see
them exactly as they see a hand-written street — one mechanism, no second
geometry path:

* **road surface** — every ``drivable``, ``parking`` and ``intersection``
  region is cut into quads between its two borders (the importer writes a
  lane region as its inner border forward and its outer border back), and
  each quad is covered by road strip tiles (2.5 m along, 1–3 m across; they
  overlap by 0.5 m along a strip so that no gap opens on the outside of a
  curve, and across a lane where its width is not a tile width). A region
  that is not such a strip is covered by a grid of tiles along its minimum
  rotated rectangle whose centres lie inside it;
* **sidewalks** — ``sidewalk`` regions the same way with raised sidewalk
  tiles, :data:`~.policy.KERB_HEIGHT_M` high (the map gives no kerb height on this
  branch; 0.15 m is the shipped templates' kerb), and a **kerb** along the
  border that faces the road;
* **lane markings** (ontology class ``lane_marking``) — where the template
  has ``markings`` (an imported map's road marks) exactly those, by their
  type (see :func:`~.markings.map_markings`: solid, broken, double); otherwise derived from the lanes: lane borders are
  the two borders of the lane's own strip region (an imported lane has
  one), else its centreline offset by half its width. Along each border, every
  :data:`~.policy.STATION_M` metres: beside a lane of the same direction a broken
  line (:data:`~.policy.DASH_M` on, :data:`~.policy.GAP_M` off), beside an oncoming lane or a
  parking lane a solid line, beside nothing a solid edge line (none on a
  parking lane's own outer edge). Lanes inside junctions carry none, and
  lines stop short of a crosswalk. A shared border is drawn once, by the
  lane with the smaller id;
* **zebra crossings** (class ``crosswalk_marking``) — bars across every
  ``crosswalk`` region, :data:`~.policy.ZEBRA_BAR_M` wide every :data:`~.policy.ZEBRA_PITCH_M`,
  running with the traffic, over the carriageway only;
* **open ground** (class ``terrain``) — 20 m tiles on a world-aligned grid
  within :data:`~.policy.TERRAIN_MARGIN_M` of the street, their top 2 cm below the
  road's, so that the verge, the yards between blocks and the setbacks are
  ground to the camera and the LiDAR rather than sky;
* **buildings** — blocks walked along the outline of everything above
  (the street's footprint), set back :data:`~.policy.SETBACK_RANGE_M` from it, with
  gaps :data:`~.policy.GAP_RANGE_M` between them; sizes, setbacks and gaps are drawn
  from a generator seeded by the map's content hash (``provenance.source_sha256``,
  else the template hash), so the same map always gets the same blocks and
  another map other ones. A block that would come nearer than
  :data:`~.policy.CLEARANCE_M` to the street, another block or an existing instance
  is moved on. Each block also becomes a ``building`` region, as in the
  hand-written templates.

World frame: metres, x east, y north, z up; instance poses as in the
template (origin at the footprint centre on the ground, yaw in degrees).
**Heights.** Where the map gives heights (the importer's region ``z``:
elevation, superelevation, a sidewalk's lane height) every part is laid on
them (:func:`~.heights.lift`, :class:`~.heights.Surface`): road tiles, markings and zebra bars
on the road surface, tilted with it (``pitch_deg`` / ``roll_deg``, so a
2.5 m tile follows a crest within millimetres); sidewalks and kerbs with
their top at the map's sidewalk height (or :data:`~.policy.KERB_HEIGHT_M` above the
road where the map raises it less than :data:`~.policy.RAISED_MIN_M`); terrain
tilted with the nearest road and lowered below it; buildings level on the
lowest ground under their corners. A map without heights gets the street
at z = 0, level, exactly as before heights were drawn.

The package: :mod:`.policy` (assets, sizes, tolerances), :mod:`.tiles` (tiles along strips, grids and
lines), :mod:`.paving` (road surface, sidewalks, kerbs, open ground), :mod:`.markings` (lane lines, a map's
road marks, zebra bars), :mod:`.buildings`, :mod:`.heights` (laying every part on a map's heights).

Everything is computed in sorted order with no global state: the same
template gives the same instances, byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from shapely.geometry import Point
from shapely.geometry.polygon import orient
from shapely.ops import unary_union

from simready.world.street.buildings import buildings
from simready.world.street.heights import Surface, lift
from simready.world.street.markings import lane_markings, map_markings, zebras
from simready.world.street.paving import kerbs, surfaces, terrain
from simready.world.street.policy import (BUILDINGS, KERB_HEIGHT_M, MAX_DERIVED_INSTANCES, ROAD_REGION_TYPES,
                                          ROAD_TILES, SIDEWALK_TILES, STREET_GENERATOR, STREET_PREFIX, STREET_VERSION,
                                          TILE_LENGTH_M)
from simready.world.street.tiles import Placed, rounded
from simready.world.template_model import Instance, Pose, Region, WorldTemplate


__all__ = ["BUILDINGS", "KERB_HEIGHT_M", "MAX_DERIVED_INSTANCES", "STREET_GENERATOR", "STREET_PREFIX", "STREET_VERSION",
           "Street", "derived_street", "expand_street", "street_spec", "street_static", "with_street"]


@dataclass(frozen=True)
class Street:
    """What :func:`street_static` adds: template-format instance and region mappings, sorted by name/id."""

    instances: tuple[dict[str, Any], ...]
    regions: tuple[dict[str, Any], ...]

    def counts(self) -> dict[str, int]:
        """Instances per kind (the name's second word: road, sidewalk, kerb, marking, zebra, terrain, building)."""
        out: dict[str, int] = {}
        for inst in self.instances:
            kind = inst["name"][len(STREET_PREFIX):].split("_")[0]
            out[kind] = out.get(kind, 0) + 1
        return dict(sorted(out.items()))


def _pose(x: float, y: float, z: float, yaw: float, pitch: float = 0.0, roll: float = 0.0) -> dict[str, float]:
    pose = {"x": rounded(x), "y": rounded(y), "z": rounded(z), "yaw_deg": rounded(yaw)}
    if rounded(pitch) != 0.0:
        pose["pitch_deg"] = rounded(pitch)
    if rounded(roll) != 0.0:
        pose["roll_deg"] = rounded(roll)
    return pose


def street_static(template: WorldTemplate) -> Street:
    """Road surfaces, sidewalks, kerbs, lane markings and building blocks for ``template`` (see module docstring)."""
    regions = sorted(template.regions, key=lambda r: r.id)
    road_regions = [r for r in regions if r.type in ROAD_REGION_TYPES]
    sidewalks = [r for r in regions if r.type == "sidewalk"]
    road = unary_union([r.shape for r in road_regions]) if road_regions else None
    junction = {r.id for r in regions if r.type == "intersection"}
    marked = [lane for lane in sorted(template.lanes, key=lambda lane: lane.id) if lane.region not in junction]

    crossings = [r for r in regions if r.type == "crosswalk"]
    crossing_area = unary_union([r.shape for r in crossings]).buffer(TILE_LENGTH_M / 2) if crossings else None
    placed_lines = map_markings(template.markings) if template.markings else lane_markings(marked, template.region_by_id)
    lines = [m for m in placed_lines
             if crossing_area is None or not crossing_area.contains(Point(m[1], m[2]))]  # lines stop at a crossing
    groups: list[tuple[str, list[Placed]]] = [
        ("road", surfaces(road_regions, ROAD_TILES, 0.0)),
        ("sidewalk", surfaces(sidewalks, SIDEWALK_TILES, 0.0)),
        ("kerb", kerbs(sidewalks, road)),
        ("marking", lines),
        ("zebra", zebras(crossings, road)),
    ]
    footprint = unary_union([r.shape for r in regions if r.type != "building"])
    groups.append(("terrain", terrain(footprint)))
    # Where the map gives heights, every part is laid on them (lift); a flat map's street is exactly as before.
    road_surface = Surface(road_regions)
    walk_surface = Surface(sidewalks)
    instances: list[dict[str, Any]] = []
    for kind, placed in groups:
        lifted = lift(placed, kind, road_surface, walk_surface) if road_surface else [(*p, 0.0, 0.0) for p in placed]
        for k, (asset, x, y, z, yaw, pitch, roll) in enumerate(lifted):
            instances.append({"name": f"{STREET_PREFIX}{kind}_{k:05d}", "asset": asset,
                              "pose": _pose(x, y, z, yaw, pitch, roll)})
    new_regions = []
    blocks = buildings(template, footprint)
    base = np.zeros(len(blocks))
    if road_surface and blocks:
        corners = np.array([np.asarray(block.exterior.coords)[:4] for _, block, *_ in blocks]).reshape(-1, 2)
        base = road_surface.at(corners).reshape(len(blocks), 4).min(axis=1)
    for k, ((asset, block, x, y, yaw), z) in enumerate(zip(blocks, base)):
        name = f"{STREET_PREFIX}building_{k:04d}"
        instances.append({"name": name, "asset": asset, "pose": {"x": rounded(x), "y": rounded(y), "z": rounded(z), "yaw_deg": rounded(yaw)}})
        ring = [[rounded(px), rounded(py)] for px, py in orient(block, 1.0).exterior.coords[:-1]]
        new_regions.append({"id": name, "type": "building", "polygon": ring})
    return Street(tuple(sorted(instances, key=lambda i: i["name"])), tuple(new_regions))


def street_spec() -> dict[str, Any]:
    """The ``street:`` section of a template whose street is derived at load time."""
    return {"generator": STREET_GENERATOR, "version": STREET_VERSION}


def derived_street(data: dict[str, Any]) -> dict[str, Any]:
    """Template data (as written to YAML) that names its street instead of listing it: ``street:`` added, the
    instances and building regions left to :func:`expand_street` at load time. The result is a new mapping."""
    return {**data, "street": street_spec()}


#: Pose's fields in their declared order (a dump lists them so) with their defaults (x and y are always given).
_POSE_DEFAULTS = {"x": None, "y": None, "z": 0.0, "yaw_deg": 0.0, "pitch_deg": None, "roll_deg": None}

_INSTANCE_SET = frozenset({"name", "asset", "pose"})

_PRIVATE_DEFAULTS: dict[Any, dict[str, Any]] = {}


def _built(cls: Any, values: dict[str, Any], fields_set: Any, private: dict[str, Any] | None = None) -> Any:
    """A pydantic model from ``values`` holding every field, unvalidated: what ``model_construct`` does without
    resolving defaults per object (a quarter of loading a city's 160 000 derived instances). Private attributes
    take their defaults, then ``private``."""
    defaults = _PRIVATE_DEFAULTS.get(cls)
    if defaults is None:
        defaults = _PRIVATE_DEFAULTS[cls] = {name: attr.get_default()
                                             for name, attr in (cls.__private_attributes__ or {}).items()}
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", {**defaults, **(private or {})} if defaults or private else None)
    return obj


def expand_street(template: WorldTemplate) -> WorldTemplate:
    """``template`` with :func:`street_static`'s instances and building regions, as :func:`with_street` gives them
    (the same sorted instances and regions, so the same template hash) without validating the template again: the
    generated poses are rounded, bounded numbers; the building rings are checked like any region.

    Raises ValueError when the street would exceed :data:`MAX_DERIVED_INSTANCES`.
    """
    street = street_static(template)
    if len(street.instances) > MAX_DERIVED_INSTANCES:
        raise ValueError(f"the derived street has {len(street.instances)} instances, more than the limit of "
                         f"{MAX_DERIVED_INSTANCES}")
    added = [_built(Instance, {"name": i["name"], "asset": i["asset"],
                               "pose": _built(Pose, {k: i["pose"].get(k, d) for k, d in _POSE_DEFAULTS.items()},
                                              set(i["pose"])),
                               "repeat": None}, _INSTANCE_SET, {"_authored_index": -1})
             for i in street.instances]
    fields = {name: getattr(template, name) for name in type(template).model_fields}
    fields["instances"] = tuple(sorted((*template.instances, *added), key=lambda i: i.name))
    fields["regions"] = tuple(sorted((*template.regions, *(Region.model_validate(r) for r in street.regions)),
                                     key=lambda r: r.id))
    return type(template).model_construct(_fields_set=template.model_fields_set, **fields)


def with_street(data: dict[str, Any], source: str = "<memory>") -> dict[str, Any]:
    """Template data (as written to YAML) with :func:`street_static`'s instances and building regions added.

    ``data`` must be a template's fields (pydantic's ValidationError otherwise; the caller validates the result
    as a whole, e.g. with :func:`simready.world.template.parse_template`); the result is a new mapping.
    """
    street = street_static(WorldTemplate.model_validate(data))
    out = dict(data)
    out["regions"] = sorted([*data.get("regions", []), *street.regions], key=lambda r: r["id"])
    out["instances"] = sorted([*data.get("instances", []), *street.instances], key=lambda i: i["name"])
    return out
