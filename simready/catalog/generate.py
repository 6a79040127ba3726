"""Generate the catalog: contracts in ``data/catalog/contracts`` → files in ``data/catalog/generated``.

Per entry, ``<out>/<family>/<variant>/`` holds:

* ``render.obj`` — watertight render mesh, triangles grouped by part (``o <part>``),
* ``collision_00.obj`` … — convex collision pieces,
* ``model.urdf`` — one link: inertial from the computed mass properties, one
  ``<collision>`` per piece, one ``<visual>`` for render.obj,
* ``entry.json`` — the :class:`~simready.catalog.contract.CatalogEntry`.

and ``<out>/catalog_index.json`` lists the entries sorted by id. The whole
output directory is built under a temporary name and moved into place, so a
failing contract leaves the previous catalog untouched. Same contracts →
byte-identical files.

Run: ``python -m simready.catalog.generate [--contracts DIR] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import imageio.v3 as iio
import numpy as np
from numpy.typing import NDArray

from simready.common import paths
from simready.common.atomic import atomic_directory, write_bytes_atomic, write_json_atomic, write_text_atomic
from simready.catalog.contract import (
    Appearance,
    AssetContract,
    CatalogEntry,
    FileRef,
    Mount,
    PartLook,
    PartRange,
    contract_paths,
    load_contract,
)
from simready.catalog.importers.assemble import ImportedAsset
from simready.catalog.index import ENTRY_FILE, GENERATOR_VERSION, INDEX_FILE, entry_relpath, read_index  # noqa: F401  (re-exported)
from simready.catalog.importers.registry import IMPORT_KIND, rebuild
from simready.catalog.meshio import (
    UrdfSpec,
    bounds,
    component_union,
    manifold_mesh,
    mass_properties,
    obj_text,
    parse_obj,
    union,
    urdf_text,
)
from simready.catalog.procedural import ProceduralAsset, RecipeError, build
from simready.catalog.wheels import vehicle_record
from simready.common.errors import CatalogError
from simready.common.hashing import file_sha256, sha256_bytes
from simready.common.identifiers import confine
from simready.common.loading import load_json

RENDER_FILE = "render.obj"
#: The watertight solid of an imported entry whose render mesh is open (``--repair``, issue 30).
VOLUME_FILE = "volume.obj"
URDF_FILE = "model.urdf"
UV_FILE = "uv.f32.bin"
#: Significant digits kept for computed floats in entry.json. Why: the last
#: bits of a mass-property sum may differ between BLAS builds; 12 digits are
#: far below every certification tolerance and make the bytes portable.
COMPUTED_SIGNIFICANT_DIGITS = 12
#: Centre of mass is kept on a 1 nm grid, so round-off around a symmetry plane prints as 0.
COM_DECIMALS = 9
#: Inertia terms below this fraction of the largest are round-off (the 1 µm vertex
#: grid breaking a symmetry) and are written as 0.
INERTIA_FLOOR_REL = 1e-9


def collision_file(index: int) -> str:
    return f"collision_{index:02d}.obj"


def _sig(x: float) -> float:
    return float(f"{float(x):.{COMPUTED_SIGNIFICANT_DIGITS}g}") + 0.0


def _tensor(inertia: np.ndarray) -> tuple[tuple[float, float, float], ...]:
    """Inertia with round-off terms (below :data:`INERTIA_FLOOR_REL` of the largest) set to 0."""
    floor = float(np.abs(inertia).max()) * INERTIA_FLOOR_REL
    return tuple(tuple(_sig(v) if abs(v) > floor else 0.0 for v in row) for row in inertia)  # type: ignore[misc]


def _write(entry_dir: Path, name: str, text: str) -> FileRef:
    data = text.encode("utf-8")
    write_text_atomic(entry_dir / name, text)
    return FileRef(file=name, sha256=sha256_bytes(data))


def _write_bytes(entry_dir: Path, name: str, data: bytes) -> FileRef:
    write_bytes_atomic(entry_dir / name, data)
    return FileRef(file=name, sha256=sha256_bytes(data))


def texture_file(index: int) -> str:
    return f"texture_{index:02d}.png"


def _write_appearance(entry_dir: Path, asset: ImportedAsset, default_rgb: Sequence[float]) -> Appearance:
    """Per-part base colours, each textured part's image (PNG) and the triangles' corner uv (``uv.f32.bin``)."""
    parts: list[PartLook] = []
    uv_rows: list[NDArray[np.float64]] = []
    for (name, _first, count), look in zip(asset.part_ranges, asset.looks, strict=True):
        texture = None
        if look.texture is not None and look.corner_uv is not None:
            png = iio.imwrite("<bytes>", look.texture, extension=".png")
            texture = _write_bytes(entry_dir, texture_file(sum(p.texture is not None for p in parts)), png)
            uv_rows.append(look.corner_uv)
        else:
            uv_rows.append(np.zeros((count, 3, 2)))
        rgb = look.rgba[:3] if look.rgba is not None else default_rgb
        parts.append(PartLook(part=name, base_color_rgb=tuple(round(float(np.clip(c, 0, 1)), 6) for c in rgb),
                              texture=texture))
    uv = None
    if any(p.texture is not None for p in parts):
        uv = _write_bytes(entry_dir, UV_FILE, np.concatenate(uv_rows).astype("<f4").tobytes())
    return Appearance(parts=parts, uv=uv)


def _merged_mounts(contract: AssetContract, asset: ProceduralAsset | ImportedAsset, source: str | Path) -> dict[str, Mount]:
    clash = sorted(set(contract.mounts) & set(asset.mounts))
    if clash:
        raise CatalogError(source, f"mounts.{clash[0]}", "name is reserved: the generator defines this mount")
    return dict(sorted({**contract.mounts, **asset.mounts}.items()))


def write_entry(
    entry_dir: Path, contract: AssetContract, contract_sha256: str, asset: ProceduralAsset | ImportedAsset,
    source: str | Path,
) -> CatalogEntry:
    """Write one entry's geometry, URDF and entry.json; mass properties come from the file text.

    The render and collision OBJ text is parsed back before measuring, so the
    certified numbers are those of the 1 µm-rounded geometry on disk.
    """
    entry_dir.mkdir(parents=True, exist_ok=True)
    render_text = obj_text(asset.render.vertices, asset.render.faces, asset.part_ranges)
    render = parse_obj(render_text)
    piece_texts = [obj_text(piece.vertices, piece.faces) for piece in asset.collision]
    collider = union([parse_obj(t) for t in piece_texts])
    record = asset.record if isinstance(asset, ImportedAsset) else None
    # An imported render mesh may hold overlapping shells: its mass comes from the collider (issue 16).
    props = mass_properties(render if record is None else manifold_mesh(collider), contract.mass_kg)
    volume = getattr(asset, "volume", None)
    volume_text = None if volume is None else obj_text(volume.vertices, volume.faces)
    measured = render if volume_text is None else parse_obj(volume_text)
    render_volume = props.volume_m3 if record is None else component_union([measured]).volume()
    lo, hi = bounds([render])
    fields = contract.model_dump()
    fields["mounts"] = _merged_mounts(contract, asset, source)
    entry = CatalogEntry(
        **fields,
        parts=[PartRange(name=n, first_triangle=f, triangle_count=c) for n, f, c in render.groups],
        center_of_mass_m=tuple(float(v) for v in np.round(props.center_of_mass_m, COM_DECIMALS) + 0.0),
        inertia_kg_m2=_tensor(props.inertia_kg_m2),
        render_volume_m3=_sig(render_volume),
        render_bounds_m=(tuple(float(v) for v in lo), tuple(float(v) for v in hi)),
        collision_volume_m3=_sig(collider.volume()),
        render_geometry=_write(entry_dir, RENDER_FILE, render_text),
        collision_geometry=[_write(entry_dir, collision_file(i), t) for i, t in enumerate(piece_texts)],
        urdf=FileRef(file=URDF_FILE, sha256=""),
        generator_version=GENERATOR_VERSION,
        contract_sha256=contract_sha256,
        import_=record,
        # A record is set only for an ImportedAsset.
        appearance=None if record is None else _write_appearance(entry_dir, asset, contract.material.albedo_rgb),  # type: ignore[arg-type]
        volume_geometry=None if volume_text is None else _write(entry_dir, VOLUME_FILE, volume_text),
        vehicle=None if record is None else vehicle_record(render),
    )
    return write_entry_metadata(entry_dir, entry)


def urdf_spec(entry: CatalogEntry) -> UrdfSpec:
    """The URDF an entry implies; certification re-renders it to check model.urdf."""
    return UrdfSpec(
        name=f"{entry.family}__{entry.variant}",
        mass_kg=entry.mass_kg,
        center_of_mass_m=entry.center_of_mass_m,
        inertia_kg_m2=entry.inertia_kg_m2,
        friction=entry.friction,
        restitution=entry.restitution,
        albedo_rgb=entry.material.albedo_rgb,
        visual_file=entry.render_geometry.file,
        collision_files=[ref.file for ref in entry.collision_geometry],
    )


def write_entry_metadata(entry_dir: Path, entry: CatalogEntry) -> CatalogEntry:
    """(Re)write model.urdf from ``entry`` and then entry.json with the URDF's hash."""
    entry = entry.model_copy(update={"urdf": _write(entry_dir, URDF_FILE, urdf_text(urdf_spec(entry)))})
    write_json_atomic(entry_dir / ENTRY_FILE, entry.json_dict())
    return entry


def generate_entry(out_dir: Path, source: Path, contract: AssetContract, contract_sha256: str) -> CatalogEntry:
    asset: ProceduralAsset | ImportedAsset
    if contract.generator.kind == IMPORT_KIND:
        asset = rebuild(contract, source)
    else:
        try:
            asset = build(contract.generator)
        except RecipeError as exc:
            raise CatalogError(source, f"generator.{exc.field}", exc.reason) from None
    entry_dir = out_dir / entry_relpath(contract.family, contract.variant)
    return write_entry(entry_dir, contract, contract_sha256, asset, source)


def write_index(out_dir: Path, entries: Sequence[CatalogEntry]) -> Path:
    """``catalog_index.json``: per entry its id, directory, contract hash and entry.json hash, sorted by id."""
    rows = [
        {
            "id": e.id,
            "dir": entry_relpath(e.family, e.variant).as_posix(),
            "contract_sha256": e.contract_sha256,
            "entry_sha256": file_sha256(str(out_dir / entry_relpath(e.family, e.variant) / ENTRY_FILE)),
        }
        for e in sorted(entries, key=lambda e: e.id)
    ]
    return write_json_atomic(out_dir / INDEX_FILE, {"generator_version": GENERATOR_VERSION, "entries": rows})


def generate_catalog(
    contracts_dir: str | Path = paths.CATALOG_CONTRACTS_DIR, out_dir: str | Path = paths.CATALOG_GENERATED_DIR
) -> list[CatalogEntry]:
    """Generate every contract into ``out_dir`` (replaced as a whole); entries sorted by id."""
    loaded = [(path, *load_contract(path)) for path in contract_paths(contracts_dir)]
    if not loaded:
        raise CatalogError(contracts_dir, "", "no contract YAMLs (*.yaml) found")
    ids = [c.id for _, c, _ in loaded]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise CatalogError(contracts_dir, "id", f"{duplicate!r} is declared by more than one contract")
    with atomic_directory(out_dir) as tmp:
        entries = [generate_entry(tmp, path, contract, sha) for path, contract, sha in loaded]
        write_index(tmp, entries)
    return sorted(entries, key=lambda e: e.id)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simready.catalog.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--contracts", type=Path, default=paths.CATALOG_CONTRACTS_DIR, help="contract YAML directory")
    parser.add_argument("--out", type=Path, default=paths.CATALOG_GENERATED_DIR, help="generated catalog directory")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        entries = generate_catalog(args.contracts, args.out)
    except CatalogError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 2
    print(f"wrote {len(entries)} catalog entries to {args.out} in {time.perf_counter() - start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
