"""Reading the generated catalog, and keeping it in step with its contracts.

:func:`ensure_catalog` is what every consumer calls first: it regenerates the
catalog when the generated directory is missing, or when any contract's
canonical hash or the generator version differs from what was generated —
and costs only a YAML parse per contract when everything is up to date.
It does not certify; :func:`simready.catalog.certify.certify_catalog` does.

Poses are 4×4 transforms ``T_body_mount`` (body frame: x forward, y left,
z up, origin at the footprint centre on the ground). No quaternions here.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from simready.common import paths

from simready.catalog.contract import CatalogEntry, catalog_error, contract_paths, load_contract
from simready.catalog.index import ENTRY_FILE, GENERATOR_VERSION, entry_relpath, read_index
from simready.catalog.look import SurfaceLook, srgb_to_linear
from simready.common.errors import CatalogError
from simready.common.identifiers import confine
from simready.common.loading import load_json
from simready.world.frames import Mat4, mount_transform

if TYPE_CHECKING:
    from simready.catalog.meshio import ObjMesh

# The mesh readers (trimesh, manifold3d), image decoding and the generators are imported where they are used:
# looking entries up (what the commands that only read the catalog do) needs none of them.


def load_entry(entry_dir: str | Path) -> CatalogEntry:
    """Parse one ``entry.json``; CatalogError naming the field when it does not parse."""
    path = Path(entry_dir) / ENTRY_FILE
    if not path.exists():
        raise CatalogError(path, "", "missing; run python -m simready.catalog.generate")
    try:
        return CatalogEntry.model_validate(load_json(path, CatalogError))
    except ValidationError as exc:
        raise catalog_error(path, exc) from None


@dataclass(frozen=True)
class Catalog:
    """A generated catalog on disk; ``entries`` keyed by asset id, sorted."""

    generated_dir: Path
    entries: dict[str, CatalogEntry]

    def contracts(self) -> dict[str, CatalogEntry]:
        """``{asset id: entry}`` — what template validation reads mounts from."""
        return dict(self.entries)

    def footprints(self) -> dict[str, tuple[float, float]]:
        """``{asset id: (length_m, width_m)}``: declared extents along body x and y."""
        return {i: (e.dimensions_m.length, e.dimensions_m.width) for i, e in self.entries.items()}

    def entry(self, asset_id: str) -> CatalogEntry:
        if asset_id not in self.entries:
            raise CatalogError(self.generated_dir, "id", f"no catalog entry {asset_id!r}")
        return self.entries[asset_id]

    def entry_dir(self, asset_id: str) -> Path:
        e = self.entry(asset_id)
        return self.generated_dir / entry_relpath(e.family, e.variant)

    def entry_file(self, asset_id: str, name: str) -> Path:
        """A file ``entry.json`` names, beside it; CatalogError when the name leads out of the entry's folder."""
        d = self.entry_dir(asset_id)
        confine(d, name, d / ENTRY_FILE, "file", CatalogError)
        return d / name

    def render_mesh(self, asset_id: str) -> ObjMesh:
        """render.obj as stored (vertex/triangle order = source order; groups = parts)."""
        from simready.catalog.meshio import read_obj  # heavy: trimesh, manifold3d; only when a mesh is read

        return read_obj(self.entry_file(asset_id, self.entry(asset_id).render_geometry.file))

    def collision_meshes(self, asset_id: str) -> list[ObjMesh]:
        from simready.catalog.meshio import read_obj  # heavy: trimesh, manifold3d; only when a mesh is read

        return [read_obj(self.entry_file(asset_id, ref.file)) for ref in self.entry(asset_id).collision_geometry]

    def look(self, asset_id: str) -> SurfaceLook | None:
        """Per-triangle base colour and textures of an imported entry (None: the entry's one ``material``)."""
        import imageio.v3 as iio  # heavy: imageio; only when a texture is read

        entry = self.entry(asset_id)
        appearance = entry.appearance
        if appearance is None:
            return None
        counts = {p.name: p.triangle_count for p in entry.parts}
        albedo = np.concatenate([np.tile(np.asarray(p.base_color_rgb, np.float32), (counts[p.part], 1))
                                 for p in appearance.parts]).reshape(-1, 3)
        textures: list[NDArray[np.float32]] = []
        index: list[NDArray[np.int32]] = []
        for p in appearance.parts:
            index.append(np.full(counts[p.part], len(textures) if p.texture else -1, np.int32))
            if p.texture:
                textures.append(srgb_to_linear(iio.imread(self.entry_file(asset_id, p.texture.file))[..., :3]))
        uv = (np.fromfile(self.entry_file(asset_id, appearance.uv.file), dtype="<f4").reshape(-1, 3, 2)
              if appearance.uv else np.zeros((len(albedo), 3, 2), np.float32))
        try:
            return SurfaceLook(albedo, np.concatenate(index) if index else np.zeros(0, np.int32), uv, tuple(textures))
        except ValueError as exc:
            raise CatalogError(self.entry_dir(asset_id) / ENTRY_FILE, "appearance", str(exc)) from None

    def urdf_path(self, asset_id: str) -> Path:
        """model.urdf; load in pybullet with ``flags=p.URDF_USE_INERTIA_FROM_FILE``."""
        return self.entry_dir(asset_id) / self.entry(asset_id).urdf.file

    def mount(self, asset_id: str, name: str) -> Mat4:
        """``T_body_mount`` of a named mount (sensor, wheel centre, lamp)."""
        mounts = self.entry(asset_id).mounts
        if name not in mounts:
            raise CatalogError(self.generated_dir, f"{asset_id}.mounts", f"no mount {name!r}; has {sorted(mounts)}")
        m = mounts[name]
        return mount_transform(m.translation_m, m.rpy_deg)


def load_catalog(generated_dir: str | Path = paths.CATALOG_GENERATED_DIR) -> Catalog:
    """Every entry listed in ``catalog_index.json``."""
    generated_dir = Path(generated_dir)
    index = read_index(generated_dir)
    if index is None:
        raise CatalogError(generated_dir, "catalog_index.json", "missing; run python -m simready.catalog.generate")
    entries = {row["id"]: load_entry(generated_dir / row["dir"]) for row in index["entries"]}
    return Catalog(generated_dir, dict(sorted(entries.items())))


def is_up_to_date(contracts_dir: str | Path, generated_dir: str | Path) -> bool:
    """True when the generated catalog was made by this generator version from exactly these contracts."""
    generated_dir = Path(generated_dir)
    index = read_index(generated_dir)
    if index is None or index.get("generator_version") != GENERATOR_VERSION:
        return False
    generated = {row["id"]: row["contract_sha256"] for row in index["entries"]}
    wanted = {}
    for path in contract_paths(contracts_dir):
        contract, sha = load_contract(path)
        wanted[contract.id] = sha
    if wanted != generated:
        return False
    return all((generated_dir / row["dir"] / ENTRY_FILE).is_file() for row in index["entries"])


@contextlib.contextmanager
def generation_lock(generated_dir: Path) -> Iterator[None]:
    """Serialize regeneration between processes (Dagster runs, tests) sharing one directory."""
    generated_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(generated_dir.parent / f".{generated_dir.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def generate_catalog(contracts_dir: str | Path, generated_dir: str | Path) -> object:
    """:func:`simready.catalog.generate.generate_catalog`, imported when a catalog is (re)generated."""
    # heavy: trimesh, USD, coacd; only when the catalog is generated
    from simready.catalog.generate import generate_catalog as generate

    return generate(Path(contracts_dir), Path(generated_dir))


def ensure_catalog(
    contracts_dir: str | Path = paths.CATALOG_CONTRACTS_DIR, generated_dir: str | Path = paths.CATALOG_GENERATED_DIR
) -> Catalog:
    """Regenerate the catalog if it is missing or stale, then load it."""
    generated_dir = Path(generated_dir)
    if not is_up_to_date(contracts_dir, generated_dir):
        with generation_lock(generated_dir):
            if not is_up_to_date(contracts_dir, generated_dir):
                generate_catalog(contracts_dir, generated_dir)
    return load_catalog(generated_dir)

