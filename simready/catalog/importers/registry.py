"""Source formats, reading and re-importing (see the package docstring).

* :func:`read_source` — a source file (by extension) → :class:`~.source.SourceScene`, in its own conventions.
* :func:`~.assemble.convert` — conventions resolved with the flags, one recorded 4×4 conversion into
  our body frame, parts, colliders → :class:`~.assemble.ImportedAsset`.
* :func:`rebuild` — the same from a contract whose ``generator.kind`` is :data:`IMPORT_KIND` (regeneration).

"""

from __future__ import annotations

from pathlib import Path

from simready.catalog.contract import AssetContract
from simready.catalog.importers.assemble import ImportedAsset, ImportOptions, convert
from simready.catalog.importers.meshfiles import FORMATS, read_mesh_file
from simready.catalog.importers.scene_objects import SCENE_OBJECT_PARAM, select_object
from simready.catalog.importers.source import (
    RepairLog,
    SourceScene,
    check_file_bytes,
    check_geometry_bounds,
    repairing,
)
from simready.catalog.importers.urdf import read_urdf
from simready.catalog.importers.usd import read_usd
from simready.common.errors import CatalogError
from simready.common.hashing import file_sha256

IMPORT_KIND = "import"
#: Extension → format name, for every file ``simready catalog import`` reads.
SOURCE_FORMATS = {
    **{suffix: name for suffix, (_, name) in FORMATS.items()},
    ".urdf": "URDF",
    ".usd": "USD",
    ".usda": "USD",
    ".usdc": "USD",
}

__all__ = ["IMPORT_KIND", "SOURCE_FORMATS", "ImportOptions", "ImportedAsset", "convert", "read_source", "rebuild",
           "source_format"]


def source_format(path: Path) -> str:
    """The format of a source by its extension; CatalogError for one we do not read."""
    fmt = SOURCE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CatalogError(path, "", f"unsupported extension {path.suffix or '(none)'!r}; supported: "
                           + ", ".join(sorted(SOURCE_FORMATS)))
    return fmt


def read_source(path: Path, repair: bool = False) -> SourceScene:
    """Read any supported source; CatalogError (one line naming the file and field) on bad input. With
    ``repair``, the readers' repairs are made and listed in ``scene.repairs``; without, each is a refusal that
    says "rerun with --repair"."""
    fmt = source_format(path)
    if not path.is_file():
        raise CatalogError(path, "", "no such file")
    check_file_bytes(path, path)
    with repairing(RepairLog(repair)) as log:
        scene = read_urdf(path) if fmt == "URDF" else read_usd(path) if fmt == "USD" else read_mesh_file(path)
    scene.repairs = [*log.items, *scene.repairs]
    # Each reader checks what its format declares before reading; this bounds what they read together (URDF links).
    check_geometry_bounds(path, "", sum(len(p.faces) for p in scene.parts), sum(len(p.vertices) for p in scene.parts))
    return scene


def options_from(contract: AssetContract, source: Path) -> ImportOptions:
    """The import options recorded in a contract's ``generator.params``."""
    params = contract.generator.params
    known = {"source", "source_sha256", SCENE_OBJECT_PARAM, *ImportOptions(repair=True).params()}
    unknown = sorted(set(params) - known)
    if unknown:
        raise CatalogError(source, f"generator.params.{unknown[0]}", "not an import option")
    return ImportOptions(**{k: params[k] for k in ImportOptions(repair=True).params() if k in params})


def rebuild(contract: AssetContract, contract_path: Path) -> ImportedAsset:
    """Repeat a recorded import: the copied source under the catalog folder, checked against its sha256."""
    params = contract.generator.params
    catalog_dir = contract_path.resolve().parent.parent
    relative = params.get("source")
    if not isinstance(relative, str):
        raise CatalogError(contract_path, "generator.params.source", "missing: the imported source file")
    source = catalog_dir / relative
    if not source.is_file():
        raise CatalogError(contract_path, "generator.params.source", f"{relative!r} is missing under {catalog_dir}")
    if file_sha256(str(source)) != params.get("source_sha256"):
        raise CatalogError(contract_path, "generator.params.source_sha256", f"{relative} no longer has the recorded sha256")
    options = options_from(contract, contract_path)
    scene = read_source(source, options.repair)
    if SCENE_OBJECT_PARAM in params:  # one object of a scene (``simready template import-scene``)
        scene = select_object(scene, str(params[SCENE_OBJECT_PARAM]), source)
    return convert(scene, options, source, relative, source_format(source), contract.mass_kg)
