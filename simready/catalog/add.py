"""``simready catalog import``: one source file → a contract, its sources and a certified entry in a catalog.

Layout under the catalog folder ``DIR`` (default ``data/catalog``), exactly as
procedural entries, plus the sources:

* ``contracts/<family>__<variant>.yaml`` — ``generator.kind: import``; its params name the copied source,
  its sha256 and the import options, so that regeneration repeats the import byte for byte;
* ``sources/<family>__<variant>/`` — the source file and every file it references, relative layout kept;
* ``generated/<family>/<variant>/`` — render.obj, collision_NN.obj, model.urdf, entry.json (with ``import``);
* ``generated/catalog_index.json`` — gains the entry's row.

Nothing is written unless everything succeeded: the files are built in a
temporary sibling folder, the entry is certified there, and only then are the
sources, the entry and the contract moved in and the index rewritten (last,
since the index is what readers trust). An entry that fails certification is
not published unless ``allow_uncertified`` (the reasons are returned either way).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from simready.common.atomic import owned_temp, write_text_atomic
from simready.catalog.catalog import generation_lock, load_entry
from simready.catalog.certify import EntryCertification, certify_entry
from simready.catalog.contract import CatalogEntry, load_contract
from simready.catalog.generate import write_entry, write_index
from simready.catalog.importers.assemble import ImportedAsset, ImportOptions, convert
from simready.catalog.importers.registry import IMPORT_KIND, read_source, source_format
from simready.catalog.importers.source import MAX_MASS_KG, SourceScene
from simready.catalog.index import ENTRY_FILE, GENERATOR_VERSION, entry_relpath, read_index
from simready.common.errors import CatalogError, OutputExistsError
from simready.common.hashing import file_sha256
from simready.world.identity import ASSET_ID_RE
from simready.world.ontology import Ontology, load_ontology

SOURCES_DIR = "sources"
CONTRACTS_DIR = "contracts"
GENERATED_DIR = "generated"
DEFAULT_FRICTION = 0.8
DEFAULT_RESTITUTION = 0.1
DEFAULT_ALBEDO = (0.5, 0.5, 0.5)
DEFAULT_REFLECTANCE = 0.5
#: Relative agreement within which ``--mass-kg`` and a source's declared mass are the same mass.
MASS_MATCH_REL = 1e-6


@dataclass(frozen=True)
class ImportRequest:
    """One ``simready catalog import`` call: the source, the identity and class, and the user's declarations."""

    source: Path
    asset_id: str
    semantic_class: str
    options: ImportOptions = ImportOptions()
    mass_kg: float | None = None
    license: str | None = None
    split_key: str | None = None


@dataclass(frozen=True)
class ImportResult:
    entry: CatalogEntry
    certification: EntryCertification
    published: bool
    entry_dir: Path


def _family_variant(asset_id: str, source: Path) -> tuple[str, str]:
    m = ASSET_ID_RE.match(asset_id)
    if m is None:
        raise CatalogError(source, "--id", f"{asset_id!r} is not asset:<family>/<variant> (identifiers)")
    return m.group(1), m.group(2)


def _mass_and_body(req: ImportRequest, ontology: Ontology, declared_kg: float | None) -> tuple[float, str]:
    """Mass (``--mass-kg`` or the source's; both must agree) and body type (static classes stay static)."""
    static = ontology.classes[req.semantic_class].category == "static"
    if req.mass_kg is not None and not (np.isfinite(req.mass_kg) and 0 <= req.mass_kg <= MAX_MASS_KG):
        raise CatalogError(req.source, "--mass-kg", f"{req.mass_kg!r} is not a mass in kg (0 to {MAX_MASS_KG:g})")
    if declared_kg is not None and not (np.isfinite(declared_kg) and 0 <= declared_kg <= MAX_MASS_KG):
        raise CatalogError(req.source, "inertial.mass", f"the file's masses add up to {declared_kg:g} kg; the limit "
                           f"is {MAX_MASS_KG:g} kg")
    if req.mass_kg is not None and declared_kg is not None and not req.options.repair:
        if abs(req.mass_kg - declared_kg) > MASS_MATCH_REL * declared_kg:  # with --repair, convert records it
            raise CatalogError(req.source, "--mass-kg", f"--mass-kg {req.mass_kg:g} contradicts the file: its "
                               f"<inertial> masses add up to {declared_kg:g} kg; rerun with --repair to let "
                               "--mass-kg override it")
    mass = req.mass_kg if req.mass_kg is not None else declared_kg
    if mass is None:
        if not static:
            raise CatalogError(req.source, "--mass-kg", f"the file declares no mass; class {req.semantic_class!r} "
                               "is not static, so say it with --mass-kg")
        mass = 0.0
    return float(mass), "static" if static else "dynamic"


def _copy_sources(files: list[Path], source: Path, dest: Path) -> None:
    """Copy the source and what it references, keeping paths relative to the source's folder."""
    root = source.resolve().parent
    for f in files:
        real = f.resolve()
        if not real.is_relative_to(root):
            raise CatalogError(source, "referenced file", f"{f} is outside {root}; keep an asset's files together")
        target = dest / real.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real, target)


def _contract_text(req: ImportRequest, family: str, variant: str, fields: dict[str, Any]) -> str:
    header = (f"# Imported by `simready catalog import` from {req.source.name}; regenerated from the copy under "
              f"{SOURCES_DIR}/{family}__{variant}/.\n")
    return header + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)


@dataclass(frozen=True)
class PreparedImport:
    """An import read and converted (decomposition included), not yet written: what :func:`write_import` takes."""

    req: ImportRequest
    family: str
    variant: str
    scene: SourceScene
    asset: ImportedAsset
    fields: dict[str, Any]
    ontology: Ontology


def import_asset(req: ImportRequest, catalog_dir: Path, allow_uncertified: bool = False,
                 ontology: Ontology | None = None) -> ImportResult:
    """Import ``req.source`` into ``catalog_dir``; CatalogError/OutputExistsError (one line) on bad input."""
    return write_import(prepare_import(req, catalog_dir, ontology), catalog_dir, allow_uncertified)


def _paths(catalog_dir: Path, family: str, variant: str) -> tuple[Path, Path, Path, Path]:
    """(contract, sources folder, generated folder, entry folder) of one entry in a catalog folder."""
    name = f"{family}__{variant}"
    generated = catalog_dir / GENERATED_DIR
    return (catalog_dir / CONTRACTS_DIR / f"{name}.yaml", catalog_dir / SOURCES_DIR / name, generated,
            generated / entry_relpath(family, variant))


def _refuse_existing(asset_id: str, *paths: Path) -> None:
    for path in paths:
        if path.exists():
            raise OutputExistsError(path, "", f"{asset_id} is already in this catalog; choose another --id")


def prepare_import(req: ImportRequest, catalog_dir: Path, ontology: Ontology | None = None) -> PreparedImport:
    """Check the request and the destination, read the source and convert it; nothing is written."""
    source = req.source
    fmt = source_format(source)
    family, variant = _family_variant(req.asset_id, source)
    ontology = ontology or load_ontology()
    if req.semantic_class not in ontology.classes:
        raise CatalogError(source, "--class", f"{req.semantic_class!r} is not an ontology class "
                           f"({', '.join(sorted(ontology.classes))})")
    name = f"{family}__{variant}"
    contract_path, sources_dir, _, entry_dir = _paths(Path(catalog_dir), family, variant)
    _refuse_existing(req.asset_id, contract_path, sources_dir, entry_dir)
    if not source.is_file():
        raise CatalogError(source, "", "no such file")

    scene = read_source(source, req.options.repair)
    relative = f"{SOURCES_DIR}/{name}/{source.name}"
    mass, body_type = _mass_and_body(req, ontology, scene.inertial.mass_kg if scene.inertial else None)
    asset = convert(scene, req.options, source, relative, fmt, mass)
    lo, hi = asset.render.bounds
    ext = np.round(hi - lo, 6)
    fields = {
        "id": req.asset_id, "family": family, "variant": variant, "units": "meter", "scale": [1.0, 1.0, 1.0],
        "ontology_version": ontology.ontology_version, "semantic_class": req.semantic_class, "body_type": body_type,
        "mass_kg": mass,
        "friction": scene.friction if scene.friction is not None else DEFAULT_FRICTION,
        "restitution": scene.restitution if scene.restitution is not None else DEFAULT_RESTITUTION,
        "material": {"albedo_rgb": [round(float(np.clip(c, 0, 1)), 6) for c in (asset.rgba or DEFAULT_ALBEDO)[:3]],
                     "reflectance": DEFAULT_REFLECTANCE},
        "license": req.license,
        "split_lineage_key": req.split_key or f"family:{family}",
        "dimensions_m": {"length": float(ext[0]), "width": float(ext[1]), "height": float(ext[2])},
        "generator": {"kind": IMPORT_KIND, "params": {"source": relative, "source_sha256": file_sha256(str(source)),
                                                      **req.options.params()}},
    }
    return PreparedImport(req, family, variant, scene, asset, fields, ontology)


def write_import(prep: PreparedImport, catalog_dir: Path, allow_uncertified: bool = False) -> ImportResult:
    """Stage the sources, contract and entry; certify the entry; publish all of it (index last) if it passed
    or ``allow_uncertified``."""
    req, family, variant, asset, ontology = prep.req, prep.family, prep.variant, prep.asset, prep.ontology
    name = f"{family}__{variant}"
    catalog_dir = Path(catalog_dir)
    contract_path, sources_dir, generated, entry_dir = _paths(catalog_dir, family, variant)
    catalog_dir.parent.mkdir(parents=True, exist_ok=True)
    # Staged beside the catalog folder (same file system, so the moves are renames), which is not touched
    # unless the entry is published.
    with owned_temp(catalog_dir) as tmp:
        _copy_sources(prep.scene.files, req.source, tmp / SOURCES_DIR)
        staged_contract = tmp / f"{name}.yaml"
        write_text_atomic(staged_contract, _contract_text(req, family, variant, prep.fields))
        contract, sha = load_contract(staged_contract)
        staged_entry = tmp / GENERATED_DIR
        entry = write_entry(staged_entry, contract, sha, asset, contract_path)
        verdict = certify_entry(staged_entry, ontology)
        if not verdict.passed and not allow_uncertified:
            return ImportResult(entry, verdict, False, entry_dir)
        generated.mkdir(parents=True, exist_ok=True)
        with generation_lock(generated):
            _refuse_existing(req.asset_id, contract_path, sources_dir, entry_dir)  # another import may have won
            index = read_index(generated)
            if index is not None and index.get("generator_version") != GENERATOR_VERSION:
                raise CatalogError(generated, "catalog_index.json", "was written by another generator version; "
                                   "regenerate the catalog before importing into it")
            others = [load_entry(generated / row["dir"]) for row in (index or {"entries": []})["entries"]]
            for folder in (sources_dir.parent, entry_dir.parent, contract_path.parent):
                folder.mkdir(parents=True, exist_ok=True)
            os.rename(tmp / SOURCES_DIR, sources_dir)
            os.rename(staged_entry, entry_dir)
            os.rename(staged_contract, contract_path)
            write_index(generated, [*others, entry])
    return ImportResult(entry, verdict.model_copy(update={"entry_dir": str(entry_dir)}), True, entry_dir)


def summary_lines(result: ImportResult) -> list[str]:
    """What the command prints: conventions, conversion, parts, collider, mass, certification."""
    e, rec = result.entry, result.entry.import_
    assert rec is not None
    lo, hi = np.asarray(e.render_bounds_m)
    size = " × ".join(f"{v:.3f}" for v in hi - lo)
    col = rec.collider
    lines = [
        f"{e.id}  {rec.format} {rec.source_file}",
        f"  units {rec.units.applied} ({rec.units.decided_by}), up {rec.up_axis.applied} ({rec.up_axis.decided_by}), "
        f"forward {rec.forward_axis.applied} ({rec.forward_axis.decided_by}); declared by {rec.declared_by}",
        "  conversion " + " | ".join(" ".join(f"{x:g}" for x in row) for row in rec.conversion),
        f"  size {size} m (x forward, y left, z up), {len(e.parts)} parts, "
        f"{sum(p.triangle_count for p in e.parts)} triangles",
        f"  collider: {col.pieces} pieces from the {col.origin}" + (f" ({col.method})" if col.method else "")
        + (f", volume error {col.volume_error:+.2%}" if col.volume_error is not None else ""),
        f"  mass {e.mass_kg:g} kg ({e.body_type}), inertia diagonal "
        f"{[round(e.inertia_kg_m2[i][i], 6) for i in range(3)]} kg·m²",
        *(f"  repaired {r.what} at {r.where}: {r.before} → {r.after}" for r in rec.repairs),
    ]
    verdict = result.certification
    if verdict.passed:
        lines.append(f"  certified; written to {result.entry_dir}")
    else:
        lines += [f"  NOT certified: {r.code}: {r.message}" for r in verdict.reasons]
        lines.append(f"  written to {result.entry_dir} (--allow-uncertified)" if result.published
                     else "  nothing written (pass --allow-uncertified to write it anyway)")
    return lines


__all__ = ["ENTRY_FILE", "ImportRequest", "ImportResult", "PreparedImport", "import_asset", "prepare_import",
           "summary_lines", "write_import"]
