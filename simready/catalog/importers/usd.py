"""USD (``.usd``, ``.usda``, ``.usdc``) through usd-core: every ``Mesh`` prim is a part named by its prim path.

Declarations: the stage's ``metersPerUnit`` and ``upAxis``. When a stage does
not author them, USD's own fallbacks apply (0.01 m per unit, Y up) and the
record says so. Points are placed with ``ComputeLocalToWorldTransform`` at the
default time (USD's row-vector convention: ``p' = p · M``); polygons are fanned
into triangles in the order the file lists them; a ``leftHanded`` mesh has its
triangles reversed so that every part faces outwards counter-clockwise.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from pxr import Sdf, Tf, Usd, UsdGeom

from simready.catalog.importers.conventions import Declared
from simready.catalog.importers.source import (
    SourcePart,
    SourceScene,
    check_file_bytes,
    check_geometry_bounds,
    clean_part_name,
    first_line,
    unique_names,
)
from simready.common.errors import CatalogError

_UP = {"Y": "y", "Z": "z"}


def _fan(counts: np.ndarray, indices: np.ndarray, source: Path, prim: str) -> np.ndarray:
    if counts.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if counts.min() < 3 or int(counts.sum()) != indices.size:
        raise CatalogError(source, f"{prim}.faceVertexCounts", "do not match faceVertexIndices (or a face has < 3 vertices)")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    tris = [
        (indices[s], indices[s + k], indices[s + k + 1])
        for s, c in zip(starts.tolist(), counts.tolist(), strict=True)
        for k in range(1, c - 1)
    ]
    return np.asarray(tris, dtype=np.int64).reshape(-1, 3)


def _display_color(mesh: UsdGeom.Mesh) -> tuple[float, float, float, float] | None:
    """A constant ``primvars:displayColor`` (linear RGB, as USD specifies) as the part's base colour."""
    primvar = UsdGeom.PrimvarsAPI(mesh).GetPrimvar("displayColor")
    value = primvar.Get() if primvar and primvar.HasValue() else None
    if value is None or len(value) != 1 or primvar.GetInterpolation() != UsdGeom.Tokens.constant:
        return None
    r, g, b = (float(c) for c in value[0])
    return (r, g, b, 1.0)


def _declared(stage: Usd.Stage) -> Declared:
    mpu_authored = stage.HasAuthoredMetadata(UsdGeom.Tokens.metersPerUnit)
    up_authored = stage.HasAuthoredMetadata(UsdGeom.Tokens.upAxis)
    mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
    up = _UP.get(str(UsdGeom.GetStageUpAxis(stage)))
    by = "USD stage (" + ", ".join(
        [f"metersPerUnit {mpu:g}" + ("" if mpu_authored else " by USD's fallback"),
         f"upAxis {UsdGeom.GetStageUpAxis(stage)}" + ("" if up_authored else " by USD's fallback")]) + ")"
    return Declared(meters_per_unit=mpu, up=up, by=by)


#: The files a composition arc (sublayer, reference, payload) may name: USD's own layer formats.
USD_SUFFIXES = (".usd", ".usda", ".usdc")
#: The most layers one asset may compose (the root included).
MAX_LAYERS = 256
#: The most bytes of one text layer (.usda, or a .usd that is not a crate file): usd-core parses text at about
#: 4 MB/s into about 30 bytes of memory a byte, all before a face can be counted (a 9.6 MB layer: 2.3 s, 300 MB).
#: A crate file (.usdc) is read lazily and is bounded by :data:`~.source.MAX_SOURCE_BYTES`.
MAX_TEXT_LAYER_BYTES = 8 * 1024 * 1024
_CRATE_MAGIC = b"PXR-USDC"


def _check_layer_bytes(source: Path, layer_path: Path, field: str) -> None:
    check_file_bytes(source, layer_path, field)
    with open(layer_path, "rb") as f:
        crate = f.read(len(_CRATE_MAGIC)) == _CRATE_MAGIC
    size = layer_path.stat().st_size
    if not crate and size > MAX_TEXT_LAYER_BYTES:
        raise CatalogError(source, field, f"{layer_path.name} is a text layer of {size} bytes; the limit is "
                           f"{MAX_TEXT_LAYER_BYTES} bytes for text (save it as .usdc)")


def _open_layer(path: Path, source: Path, field: str) -> Sdf.Layer:
    try:
        layer = Sdf.Layer.FindOrOpen(str(path))
    except Tf.ErrorException as exc:
        what = re.search(r" : '(.*)'", first_line(exc))
        raise CatalogError(source, field, f"cannot be read as USD: {what.group(1) if what else first_line(exc)}") from None
    if layer is None:
        raise CatalogError(source, field, "cannot be read as USD")
    return layer


def check_composition(path: Path) -> None:
    """Every composition arc (sublayer, reference, payload) of the asset's layers, followed from its root layer
    before the stage is composed: each must name a USD layer (.usd/.usda/.usdc) that exists inside the asset's
    folder (the source file's folder), so that nothing outside it is read or copied and no arc is silently
    skipped (usd-core only warns). One line naming the layer and the arc otherwise; at most
    :data:`MAX_LAYERS` layers."""
    folder = path.resolve().parent
    seen: set[Path] = set()
    todo = [path.resolve()]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if len(seen) > MAX_LAYERS:
            raise CatalogError(path, "", f"composes more than {MAX_LAYERS} layers (the limit)")
        field = "" if current == path.resolve() else f"layer {current.name}"
        _check_layer_bytes(path, current, field)
        layer = _open_layer(current, path, field)
        for arc in sorted(layer.GetCompositionAssetDependencies()):
            where = f"{current.name}: @{arc}@"
            if "://" in arc:
                raise CatalogError(path, where, "a composition arc names a file by path, not a URL or resolver asset")
            target = Path(Sdf.ComputeAssetPathRelativeToLayer(layer, arc)).resolve()
            if not target.is_relative_to(folder):
                raise CatalogError(path, where, f"names a file outside the asset's folder {folder}; copy it into "
                                   "the folder and name it relatively")
            if target.suffix.lower() not in USD_SUFFIXES:
                raise CatalogError(path, where, f"names a {target.suffix or 'suffix-less'} file; a sublayer, "
                                   f"reference or payload is a USD layer ({', '.join(USD_SUFFIXES)})")
            if not target.is_file():
                raise CatalogError(path, where, "names a file that does not exist")
            todo.append(target)


def read_usd(path: Path) -> SourceScene:
    """Every Mesh prim of the stage (instance proxies included), in prim-path order; its composition arcs are
    checked first (:func:`check_composition`)."""
    check_composition(path)
    try:
        stage = Usd.Stage.Open(str(path))
    except Tf.ErrorException as exc:
        # USD's message is "Error in '<function>' at line N in file <its source> : '<what>'": keep the what.
        what = re.search(r" : '(.*)'", first_line(exc))
        raise CatalogError(path, "", f"cannot be read as USD: {what.group(1) if what else first_line(exc)}") from None
    if stage is None:
        raise CatalogError(path, "", "cannot be read as USD")
    parts = []
    n_triangles = n_vertices = 0
    for prim in stage.Traverse(Usd.TraverseInstanceProxies()):
        if not prim.IsA(UsdGeom.Mesh):
            continue
        mesh = UsdGeom.Mesh(prim)
        name = str(prim.GetPath())
        counts = np.asarray(mesh.GetFaceVertexCountsAttr().Get() or [], dtype=np.int64)
        n_triangles += int(np.clip(counts - 2, 0, None).sum())
        check_geometry_bounds(path, f"{name}.faceVertexCounts", n_triangles, n_vertices)
        points = np.asarray(mesh.GetPointsAttr().Get() or [], dtype=np.float64).reshape(-1, 3)
        n_vertices += len(points)
        check_geometry_bounds(path, f"{name}.points", n_triangles, n_vertices)
        indices = np.asarray(mesh.GetFaceVertexIndicesAttr().Get() or [], dtype=np.int64)
        faces = _fan(counts, indices, path, name)
        if faces.size == 0:
            continue
        if faces.max() >= len(points) or faces.min() < 0:
            raise CatalogError(path, f"{name}.faceVertexIndices", f"index out of range of {len(points)} points")
        if mesh.GetOrientationAttr().Get() == UsdGeom.Tokens.leftHanded:
            faces = faces[:, ::-1]
        m = np.asarray(mesh.ComputeLocalToWorldTransform(Usd.TimeCode.Default()), dtype=np.float64)
        if np.linalg.det(m[:3, :3]) < 0:
            faces = faces[:, ::-1]
        vertices = points @ m[:3, :3] + m[3, :3]
        parts.append(SourcePart(clean_part_name(name), vertices, faces, _display_color(mesh)))
    if not parts:
        raise CatalogError(path, "", "holds no Mesh prim with faces")
    files = [path] + sorted(Path(layer.realPath) for layer in stage.GetUsedLayers()
                            if layer.realPath and Path(layer.realPath) != path.resolve())
    return SourceScene(parts=unique_names(parts, path), declared=_declared(stage), files=files)
