"""The certified collision pieces of a catalog asset as ``dynamic-v1`` builds them, and reduced hull files.

An axis-aligned 8-vertex box piece becomes an exact ``GEOM_BOX``, any other
piece a convex ``GEOM_MESH``. A convex mesh is read from a copy without its
repeated face corners wherever that gives PyBullet the very same hull
(:func:`_reduced_hulls`, a third of the hull's cost). Both are cached per
process (per catalog contract), and neither cache changes a result.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet as p

from simready.sim.backends.dynamic.pool import World

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog


def _box_piece(vertices: np.ndarray) -> tuple[list[float], list[float]] | None:
    """``(half extents, centre)`` when an 8-vertex mesh is an axis-aligned box, else None."""
    if len(vertices) != 8:
        return None
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    for k in range(3):
        if not np.all(np.isclose(vertices[:, k], lo[k], atol=1e-9) | np.isclose(vertices[:, k], hi[k], atol=1e-9)):
            return None
    return ((hi - lo) / 2).tolist(), ((hi + lo) / 2).tolist()


#: Collision pieces per (catalog folder, asset, contract hash): ("box", half extents, centre) or
#: ("mesh", catalog file, reduced file or None) (:func:`_reduced_hulls`).
_PIECES: dict[tuple[str, str, str], tuple[tuple[Any, ...], ...]] = {}


def asset_pieces(catalog: Catalog, asset: str) -> tuple[tuple[Any, ...], ...]:
    """The certified collision pieces of an asset, each an exact box or a convex mesh file (cached)."""
    entry = catalog.entry(asset)
    key = (str(catalog.generated_dir), asset, entry.contract_sha256)
    hit = _PIECES.get(key)
    if hit is None:
        pieces: list[tuple[Any, ...]] = []
        meshes = []
        for ref, mesh in zip(entry.collision_geometry, catalog.collision_meshes(asset)):
            box = _box_piece(np.asarray(mesh.vertices, dtype=np.float64))
            if box is not None:
                pieces.append(("box", *box))
            else:
                meshes.append(str(catalog.entry_file(asset, ref.file)))
                pieces.append(("mesh", meshes[-1], None))
        reduced = iter(_reduced_hulls(meshes))
        hit = _PIECES[key] = tuple(("mesh", pc[1], next(reduced)) if pc[0] == "mesh" else pc for pc in pieces)
    return hit


#: This process's folder of reduced hull files (:func:`_reduced_hulls`): made on first use, removed at exit.
_HULL_DIR: Path | None = None


def _reduced_obj(text: str) -> str | None:
    """The vertices ``text``'s faces use, each once, in file order (their lines verbatim), covered by triangles.

    PyBullet builds a mesh's convex hull from every face corner: a 96-triangle wheel lists each of its 50
    vertices ~6 times, and the hull of the 288 points costs ~3× the hull of the 50. None for a file with
    anything but vertices, faces and comments (objects, groups, materials: PyBullet splits a file by object)
    or with relative or malformed face indices.
    """
    verts: list[str] = []
    used: set[int] = set()
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "v":
            verts.append(line)
        elif words[0] == "f":
            try:
                used.update(int(w.split("/")[0]) for w in words[1:])
            except ValueError:
                return None
        else:
            return None
    if not used or min(used) < 1 or max(used) > len(verts) or len(used) < 4:
        return None
    keep = [verts[i - 1] for i in sorted(used)]
    n = len(keep)
    return "\n".join(keep + [f"f {k + 1} {(k + 1) % n + 1} {(k + 2) % n + 1}" for k in range(0, n, 3)]) + "\n"


def _reduced_hulls(files: list[str]) -> list[str | None]:
    """For each collision mesh file, a reduced copy (:func:`_reduced_obj`) that gives PyBullet the same hull, or None.

    The same hull means the same vertices in the same order (the order decides ties in support queries)
    and the same bounds, as PyBullet reports them (``getMeshData``, ``getAABB``): checked once per file
    (per process) in a pooled client, which is reset afterwards, so the worlds built are the same either
    way. Without the repeats, the hull of some cylinders lists its vertices in another order (6 of the
    catalog's 61 meshes: pole, signal head, pedestrian legs); those keep their catalog file.
    """
    global _HULL_DIR
    out: list[str | None] = [None] * len(files)
    candidates = []
    try:
        for k, source in enumerate(files):
            text = _reduced_obj(Path(source).read_text(encoding="utf-8"))
            if text is not None:
                if _HULL_DIR is None:
                    _HULL_DIR = Path(tempfile.mkdtemp(prefix="simready-hulls-"))
                    atexit.register(shutil.rmtree, _HULL_DIR, True)
                reduced = _HULL_DIR / f"{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}.obj"
                reduced.write_text(text, encoding="utf-8")
                candidates.append((k, source, str(reduced)))
    except OSError:
        return out
    if candidates:
        w = World()
        try:
            for k, source, hull in candidates:
                seen = []
                try:
                    for f in (source, hull):
                        body = w.call(p.createMultiBody, 0.0, w.call(p.createCollisionShape, p.GEOM_MESH, fileName=f))
                        seen.append((w.call(p.getMeshData, body), w.call(p.getAABB, body)))
                except p.error:
                    continue
                if seen[0][0][0] > 0 and seen[0] == seen[1]:
                    out[k] = hull
        finally:
            w.close()
    return out

