"""Entities → actors: each ScenarioObject (inline or from a catalog) with its kind, dimensions and properties, and
the certified catalog entry of its class with the nearest dimensions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lxml import etree

from simready.catalog.catalog import ensure_catalog
from simready.catalog.certified import certified_ids
from simready.catalog.index import ENTRY_FILE
from simready.common import paths
from simready.common.hashing import file_sha256
from simready.maps.xosc_import.context import Context, Entity
from simready.maps.xosc_import.document import XoscError, identifier

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog


#: OpenSCENARIO vehicle categories → (manifest kind, catalog semantic classes in order of preference).
_VEHICLE_CLASSES = {"car": ("vehicle", ("car", "shuttle", "van")), "van": ("vehicle", ("van", "shuttle", "car")),
                    "truck": ("vehicle", ("van", "shuttle")), "bus": ("vehicle", ("shuttle", "van")),
                    "trailer": ("vehicle", ("van",)), "semitrailer": ("vehicle", ("van",)),
                    "tram": ("vehicle", ("shuttle", "van")), "train": ("vehicle", ("shuttle", "van")),
                    "bicycle": ("cyclist", ("cyclist",)), "motorbike": ("cyclist", ("cyclist",))}


class Entities(Context):
    """The ``<Entities>`` section and the catalog asset each actor becomes."""

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

    def _entity(self, name: str, obj: etree._Element, body: etree._Element) -> Entity:
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
        return Entity(name, identifier(name), kind, category, dims, props, obj.sourceline)

    def match_assets(self) -> None:
        catalog, certified = certified_catalog()
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


_CATALOG_CACHE: dict[str, tuple[Catalog, set[str]]] = {}


def certified_catalog() -> tuple[Catalog, set[str]]:
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


def asset_hash(catalog: Catalog, asset_id: str) -> str:
    return file_sha256(str(catalog.entry_dir(asset_id) / ENTRY_FILE))
