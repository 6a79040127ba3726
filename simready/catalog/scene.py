"""``simready template import-scene``: a prebuilt multi-object art scene becomes a template's static world.

The mapping (issue 16 item 10; README "Importing a prebuilt scene"):

* Every **top-level node** of the scene is one object (see
  :mod:`simready.catalog.importers.scene_objects`: glTF root nodes, OBJ
  ``o``/``g`` groups, the children of a USD stage's single root prim;
  ``--root`` picks another node). Its meshes are its parts, named by their
  paths below it.
* Each object becomes **one imported catalog entry** ``asset:<family>/<name>``
  (``<name>`` from the node's name) and **one static instance**
  ``<template>/instance:<name>`` of the new template. The entry's body frame
  keeps the scene's axes (units and up converted, no forward turn); its origin
  is the object's footprint centre on its lowest point, as for every static
  asset, so the instance pose is where that point lies in the scene (plus
  ``--at``'s placement of the whole scene in the template's world frame).
* The new template is the base template ``--template`` (regions, lanes, ego,
  rig… unchanged) with those instances added; its id is ``--id``.
* Every object's class must be a static class of the ontology (``--class``
  for all, ``--class-of NAME=CLASS`` per object); each entry is certified
  like any import (collider, size plausibility, license, split key).

Identities come from node names only: a scene whose nodes are listed in
another order gives the same entries, byte for byte, and the same template
hash. Nothing is written unless every entry certifies and the template
validates: entries are staged and certified beside the catalog, the
template is staged and validated against them, then the entries, the
catalog index and the template are published, in that order.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from simready.common.atomic import owned_temp, write_text_atomic
from simready.catalog.add import CONTRACTS_DIR, DEFAULT_ALBEDO, DEFAULT_FRICTION, DEFAULT_REFLECTANCE, \
    DEFAULT_RESTITUTION, GENERATED_DIR, SOURCES_DIR, _copy_sources
from simready.catalog.catalog import generation_lock, load_catalog, load_entry
from simready.catalog.certified import certified_ids
from simready.catalog.certify import EntryCertification, certify_entry
from simready.catalog.contract import CatalogEntry, load_contract
from simready.catalog.generate import write_entry, write_index
from simready.catalog.importers.assemble import ImportedAsset, ImportOptions, convert
from simready.catalog.importers.registry import IMPORT_KIND, read_source, source_format
from simready.catalog.importers.scene_objects import SCENE_OBJECT_PARAM, object_name, split_objects
from simready.catalog.importers.source import MAX_DENSITY_KG_M3, MAX_MASS_KG
from simready.catalog.index import GENERATOR_VERSION, entry_relpath, read_index
from simready.catalog.meshio import component_union
from simready.common.errors import CatalogError, OutputExistsError
from simready.common.hashing import file_sha256
from simready.common.outdir import output_file
from simready.world.identity import ASSET_ID_RE
from simready.world.ontology import Ontology, load_ontology
from simready.world.template import WorldTemplate, canonical_dict, load_template, template_hash
from simready.world.template_build import validate_template_file

#: Decimal places of an instance pose (1 µm, the catalog's grid; yaw in 1e-6 degrees).
POSE_DECIMALS = 6
#: Formats a scene may come in (a URDF is one robot, an STL one mesh: import those with ``simready catalog import``).
SCENE_FORMATS = ("glTF 2.0", "glTF 2.0 (binary)", "Wavefront OBJ", "COLLADA", "USD")


@dataclass(frozen=True)
class SceneImportRequest:
    """One ``simready template import-scene`` call.

    placement: ``(x, y, z, yaw_deg)`` of the scene's origin in the template's world frame.
    classes: ``{object name: class}``; default_class for the objects it does not name.
    exclude: object names left out (a ground plane, a sky dome: the template has its own ground).
    masses_kg: ``{object name: mass}``; the others weigh density_kg_m3 × their solid volume (0 kg without a density:
    only a class without a mass range, such as ``building``, certifies so).
    """

    scene: Path
    base_template: Path
    template_id: str
    family: str
    default_class: str | None = None
    classes: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    density_kg_m3: float | None = None
    masses_kg: dict[str, float] = field(default_factory=dict)
    units: str | None = None
    up: str | None = None
    root: str | None = None
    placement: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    collider: str = "auto"
    threshold: float = 0.05
    repair: bool = False
    license: str | None = None
    split_key: str | None = None

    def options(self) -> ImportOptions:
        return ImportOptions(units=self.units, up=self.up, forward=None, collider=self.collider, threshold=self.threshold,
                             repair=self.repair)


@dataclass(frozen=True)
class SceneObject:
    """One object of the scene: its node path, instance name, catalog entry and pose in the world."""

    path: str
    name: str
    asset_id: str
    semantic_class: str
    asset: ImportedAsset
    pose: dict[str, float]


@dataclass(frozen=True)
class SceneImportResult:
    template_id: str
    template_hash: str
    template_path: Path
    objects: tuple[SceneObject, ...]
    entries: tuple[CatalogEntry, ...]
    certifications: tuple[EntryCertification, ...]

    def lines(self) -> list[str]:
        out = []
        for obj, entry in zip(self.objects, self.entries, strict=True):
            lo, hi = np.asarray(entry.render_bounds_m)
            size = " × ".join(f"{v:.3f}" for v in hi - lo)
            p = obj.pose
            out.append(f"instance:{obj.name:<24} {obj.asset_id}  {obj.semantic_class}  {size} m  at "
                       f"({p['x']:.3f}, {p['y']:.3f}, {p['z']:.3f}) yaw {p['yaw_deg']:g}°  "
                       f"[{len(entry.parts)} parts, {entry.import_.collider.pieces if entry.import_ else 0} "
                       f"collider pieces]  certified")
        out.append(f"{self.template_id}  {self.template_hash}  ({self.template_path})")
        return out


def _check_name(value: str, what: str, source: Path) -> None:
    if ASSET_ID_RE.match(f"asset:{value}/x") is None:
        raise CatalogError(source, what, f"{value!r} is not an identifier (letters, digits, _ . -)")


def _classes(req: SceneImportRequest, names: list[str], ontology: Ontology) -> dict[str, str]:
    for flag, named in (("--class-of", req.classes), ("--mass-of", req.masses_kg), ("--exclude", req.exclude)):
        unknown = sorted(set(named) - set(names))
        if unknown:
            raise CatalogError(req.scene, flag, f"the scene has no object {unknown[0]!r} (its objects: "
                               + ", ".join(names[:12]) + ")")
    out = {}
    for name in names:
        if name in req.exclude:
            continue
        cls = req.classes.get(name, req.default_class)
        if cls is None:
            raise CatalogError(req.scene, "--class", f"object {name!r} has no class: give --class CLASS or "
                               f"--class-of {name}=CLASS")
        if cls not in ontology.classes:
            raise CatalogError(req.scene, "--class", f"{cls!r} is not an ontology class "
                               f"({', '.join(sorted(ontology.classes))})")
        if ontology.classes[cls].category != "static":
            static = ", ".join(sorted(c for c, v in ontology.classes.items() if v.category == "static"))
            raise CatalogError(req.scene, "--class", f"object {name!r}: {cls!r} is not a static class ({static}); "
                               "a movable object needs its own mass: import it with `simready catalog import`")
        out[name] = cls
    return out


def _pose(asset: ImportedAsset, placement: tuple[float, float, float, float]) -> dict[str, float]:
    """The instance pose: the body origin (−translation of the conversion) placed by ``placement``."""
    t = np.asarray(asset.record.conversion, dtype=np.float64)[:3, 3]
    px, py, pz = -t
    ax, ay, az, yaw_deg = placement
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    pose = {"x": ax + c * px - s * py, "y": ay + s * px + c * py, "z": az + pz, "yaw_deg": yaw_deg}
    return {k: round(float(v), POSE_DECIMALS) + 0.0 for k, v in pose.items()}


def _mass(req: SceneImportRequest, name: str, asset: ImportedAsset) -> float:
    if name in req.masses_kg:
        mass = req.masses_kg[name]
        if not (math.isfinite(mass) and 0 <= mass <= MAX_MASS_KG):
            raise CatalogError(req.scene, "--mass-of", f"{name}={mass!r} is not a mass in kg (0 to {MAX_MASS_KG:g})")
        return float(mass)
    if req.density_kg_m3 is None:
        return 0.0
    if not (math.isfinite(req.density_kg_m3) and 0 < req.density_kg_m3 <= MAX_DENSITY_KG_M3):
        raise CatalogError(req.scene, "--density", f"{req.density_kg_m3!r} is not a density in kg/m³ (up to "
                           f"{MAX_DENSITY_KG_M3:g})")
    return round(req.density_kg_m3 * float(component_union([asset.volume if asset.volume is not None else asset.render]).volume()), 6)


def _fields(req: SceneImportRequest, obj_path: str, name: str, cls: str, asset: ImportedAsset,
            ontology: Ontology, relative: str, sha: str) -> dict[str, Any]:
    lo, hi = asset.render.bounds
    ext = np.round(hi - lo, 6)
    return {
        "id": f"asset:{req.family}/{name}", "family": req.family, "variant": name, "units": "meter",
        "scale": [1.0, 1.0, 1.0], "ontology_version": ontology.ontology_version, "semantic_class": cls,
        "body_type": "static", "mass_kg": _mass(req, name, asset), "friction": DEFAULT_FRICTION, "restitution": DEFAULT_RESTITUTION,
        "material": {"albedo_rgb": [round(float(np.clip(c, 0, 1)), 6) for c in (asset.rgba or DEFAULT_ALBEDO)[:3]],
                     "reflectance": DEFAULT_REFLECTANCE},
        "license": req.license,
        "split_lineage_key": req.split_key or f"family:{req.family}",
        "dimensions_m": {"length": float(ext[0]), "width": float(ext[1]), "height": float(ext[2])},
        "generator": {"kind": IMPORT_KIND, "params": {"source": relative, "source_sha256": sha,
                                                      SCENE_OBJECT_PARAM: obj_path, **req.options().params()}},
    }


def _template_data(base: WorldTemplate, req: SceneImportRequest, objects: list[SceneObject]) -> dict[str, Any]:
    data = canonical_dict(base)
    taken = {i["name"] for i in data["instances"]}
    clash = sorted(taken & {o.name for o in objects})
    if clash:
        raise CatalogError(req.scene, "nodes", f"object {clash[0]!r} has the name of an instance of template "
                           f"{base.id}; rename the node or the instance")
    if req.template_id == base.id:
        data["version"] = base.version + 1  # the scene's static world is the base template's next version
    data["id"] = req.template_id
    data["description"] = (f"{base.description.rstrip()} Static world from {req.scene.name} "
                           f"({len(objects)} objects, simready template import-scene).").strip()
    data["instances"] = sorted(data["instances"] + [{"name": o.name, "asset": o.asset_id, "pose": o.pose}
                                                    for o in objects], key=lambda i: i["name"])
    return data


def _template_text(data: dict[str, Any], req: SceneImportRequest, base: WorldTemplate, sha: str) -> str:
    header = (f"# Written by `simready template import-scene {req.scene.name} --template {base.id}`: template "
              f"{base.id} with the\n# objects of {req.scene.name} ({sha[:19]}…) as static instances of "
              f"asset family {req.family}.\n")
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)


def _existing(catalog_dir: Path) -> tuple[list[CatalogEntry], set[str]]:
    """The catalog's entries and the ids of those that certify (nothing when it has no index yet)."""
    generated = catalog_dir / GENERATED_DIR
    index = read_index(generated)
    if index is None:
        return [], set()
    if index.get("generator_version") != GENERATOR_VERSION:
        raise CatalogError(generated, "catalog_index.json", "was written by another generator version; regenerate "
                           "the catalog before importing into it")
    catalog = load_catalog(generated)
    # Verdicts remembered by content (simready.catalog.certified); no memo file is written into the catalog folder,
    # which is left as it was when the import fails.
    return list(catalog.entries.values()), certified_ids(catalog, keep=False)


def import_scene(req: SceneImportRequest, catalog_dir: Path, template_out: Path,
                 ontology: Ontology | None = None) -> SceneImportResult:
    """Import ``req.scene`` into ``catalog_dir`` and write the new template to ``template_out`` (must be new).

    Raises CatalogError, TemplateError or OutputExistsError (one line); nothing is written then.
    """
    source, catalog_dir, template_out = Path(req.scene), Path(catalog_dir), Path(template_out)
    fmt = source_format(source)
    if fmt not in SCENE_FORMATS:
        raise CatalogError(source, "", f"a {fmt} file is one asset, not a scene; import it with "
                           "`simready catalog import`")
    _check_name(req.family, "--family", source)
    if template_out.suffix != ".yaml" or template_out.stem != req.template_id:
        raise CatalogError(template_out, "--out", f"a template's file is named after its id: write {req.template_id}.yaml")
    ontology = ontology or load_ontology()
    base = load_template(req.base_template)
    if not source.is_file():
        raise CatalogError(source, "", "no such file")
    sources_dir = catalog_dir / SOURCES_DIR / req.family
    if sources_dir.exists() or (catalog_dir / GENERATED_DIR / req.family).exists():
        raise OutputExistsError(sources_dir, "", f"asset family {req.family} is already in this catalog; "
                                "choose another --family")

    scene = read_source(source, req.repair)
    split = split_objects(scene, req.root, source)
    names = [object_name(p) for p in split]
    classes = _classes(req, names, ontology)
    split = {path: part_scene for path, part_scene in split.items() if object_name(path) not in req.exclude}
    if not split:
        raise CatalogError(source, "--exclude", "leaves no object of the scene")
    relative = f"{SOURCES_DIR}/{req.family}/{source.name}"
    sha = file_sha256(str(source))
    objects = []
    for path, part_scene in split.items():
        name = object_name(path)
        _check_name(name, f"nodes.{path}", source)
        asset = convert(part_scene, req.options(), source, relative, fmt)
        objects.append(SceneObject(path, name, f"asset:{req.family}/{name}", classes[name], asset,
                                   _pose(asset, req.placement)))
    data = _template_data(base, req, objects)
    existing, certified = _existing(catalog_dir)

    with output_file(template_out) as staged_template, owned_temp(catalog_dir) as tmp:
        _copy_sources(scene.files, source, tmp / SOURCES_DIR)
        staged: list[tuple[Path, Path, Path, CatalogEntry, EntryCertification]] = []
        for obj in objects:
            file_name = f"{req.family}__{obj.name}.yaml"
            contract_path = catalog_dir / CONTRACTS_DIR / file_name
            entry_dir = catalog_dir / GENERATED_DIR / entry_relpath(req.family, obj.name)
            if contract_path.exists() or entry_dir.exists():
                raise OutputExistsError(contract_path, "", f"{obj.asset_id} is already in this catalog; choose "
                                        "another --family")
            fields = _fields(req, obj.path, obj.name, obj.semantic_class, obj.asset, ontology, relative, sha)
            staged_contract = tmp / CONTRACTS_DIR / file_name
            staged_contract.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(staged_contract, f"# Imported by `simready template import-scene` from object "
                              f"{obj.path!r} of {source.name}.\n"
                              + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=120,
                                               default_flow_style=None))
            contract, contract_sha = load_contract(staged_contract)
            staged_entry = tmp / GENERATED_DIR / obj.name
            entry = write_entry(staged_entry, contract, contract_sha, obj.asset, contract_path)
            verdict = certify_entry(staged_entry, ontology)
            if not verdict.passed:
                first = verdict.reasons[0]
                raise CatalogError(source, f"nodes.{obj.path}", f"{obj.asset_id} is not certified: {first.code}: "
                                   f"{first.message}; nothing written")
            staged.append((staged_contract, staged_entry, contract_path, entry, verdict))

        write_text_atomic(staged_template, _template_text(data, req, base, sha))
        new_ids = {obj.asset_id for obj in objects}
        contracts = {e.id: e for e in existing} | {s[3].id: s[3] for s in staged}
        build = validate_template_file(staged_template, certified | new_ids, contracts)
        if not build.valid or build.template is None:
            raise CatalogError(source, "template", f"the new template does not validate: {build.errors[0]}")

        generated = catalog_dir / GENERATED_DIR
        generated.mkdir(parents=True, exist_ok=True)
        with generation_lock(generated):
            index = read_index(generated)
            others = [load_entry(generated / row["dir"]) for row in (index or {"entries": []})["entries"]]
            clash = sorted({e.id for e in others} & new_ids)
            if clash or sources_dir.exists():
                raise OutputExistsError(sources_dir, "", f"{clash[0] if clash else req.family} appeared in this "
                                        "catalog while this command ran; nothing written")
            sources_dir.parent.mkdir(parents=True, exist_ok=True)
            os.rename(tmp / SOURCES_DIR, sources_dir)
            for staged_contract, staged_entry, contract_path, _, _ in staged:
                final_entry = generated / entry_relpath(req.family, staged_entry.name)
                final_entry.parent.mkdir(parents=True, exist_ok=True)
                contract_path.parent.mkdir(parents=True, exist_ok=True)
                os.rename(staged_entry, final_entry)
                os.rename(staged_contract, contract_path)
            write_index(generated, [*others, *(s[3] for s in staged)])
        result_hash = template_hash(build.template)
    return SceneImportResult(req.template_id, result_hash, template_out, tuple(objects),
                             tuple(s[3] for s in staged), tuple(s[4] for s in staged))


__all__ = ["SCENE_FORMATS", "SceneImportRequest", "SceneImportResult", "SceneObject", "import_scene"]
