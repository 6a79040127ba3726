"""glTF 2.0, Wavefront OBJ (+MTL), COLLADA and STL through trimesh (and pygltflib for glTF's declarations).

trimesh reads the geometry and the scene graph; what it does not check we
check here: every file a source references (MTL, textures, glTF buffers and
images) must exist, and be inside the source's folder (a missing one is an
error, not a warning); a glTF must be version 2.0 and require no extension
we do not support; COLLADA's ``<unit>`` and ``<up_axis>`` are read from its
``<asset>`` (trimesh does not apply them; we do, once, in the conversion).

Repairs (``--repair``, each recorded; without it, a refusal that says so): a texture image that is missing
is left out, the part keeping its material's base colour (:data:`NEUTRAL_RGBA` when it states none); COLLADA
number lists written with commas (``<float_array>``, ``<p>``, ``<matrix>``, …) are read with the commas as
separators. Any other missing file (an MTL, a glTF buffer) is still refused.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import cast
from urllib.parse import unquote

import numpy as np
import pygltflib
import trimesh

from simready.catalog.importers.conventions import Declared
from simready.catalog.importers.source import (
    MAX_SOURCE_BYTES,
    SourcePart,
    SourceScene,
    check_file_bytes,
    check_geometry_bounds,
    clean_part_name,
    first_line,
    repair_log,
    unique_names,
)
from simready.common.errors import CatalogError

#: File extension → (trimesh file type, format name for messages).
FORMATS = {
    ".glb": ("glb", "glTF 2.0 (binary)"),
    ".gltf": ("gltf", "glTF 2.0"),
    ".obj": ("obj", "Wavefront OBJ"),
    ".dae": ("dae", "COLLADA"),
    ".stl": ("stl", "STL"),
}
#: glTF extensions a file may *require* and still be read correctly (they change no geometry).
SUPPORTED_REQUIRED_GLTF_EXTENSIONS = frozenset({"KHR_materials_unlit", "KHR_materials_emissive_strength"})
GLTF_DECLARED = Declared(meters_per_unit=1.0, up="y", forward="-y", by="the glTF 2.0 specification")
#: COLLADA 1.4 defaults when ``<asset>`` states nothing: 1 metre, Y_UP.
_COLLADA_UP = {"Y_UP": "y", "Z_UP": "z"}
#: What a part whose texture is missing and whose material states no colour is drawn with (mid grey, opaque).
NEUTRAL_RGBA = (0.5, 0.5, 0.5, 1.0)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tga", ".gif", ".tif", ".tiff", ".webp", ".ktx2", ".dds")
#: COLLADA elements whose text is a list of numbers (separated by white space, as the schema says).
_COLLADA_NUMBERS = re.compile(
    rb"(<(float_array|int_array|p|v|vcount|matrix|translate|rotate|scale|lookat|skew|color|float)\b[^>]*>)([^<]*)(</\2>)")


class _RecordingResolver(trimesh.resolvers.FilePathResolver):
    """trimesh's file resolver, recording every file read and every name that did not resolve."""

    def __init__(self, source: Path) -> None:
        super().__init__(str(source))
        self.source = source
        self.read: list[Path] = []
        self.missing: list[str] = []

    def get(self, name: str) -> bytes:
        for candidate in (name.strip(), name.strip().lstrip("/")):
            try:
                path = self.absolute(candidate)
            except ValueError:
                continue
            if path.is_file():
                check_file_bytes(self.source, path, "referenced file")
                self.read.append(path)
                return path.read_bytes()
        self.missing.append(name)
        raise FileNotFoundError(name)


def _collada_commas(path: Path, data: bytes) -> bytes:
    """COLLADA number lists with commas read as white space (``--repair``), each element's first one recorded."""
    found: list[tuple[bytes, bytes]] = []

    def fix(m: re.Match[bytes]) -> bytes:
        if b"," not in m.group(3):
            return m.group(0)
        found.append((m.group(2), m.group(3)))
        return m.group(1) + m.group(3).replace(b",", b" ") + m.group(4)

    fixed = _COLLADA_NUMBERS.sub(fix, data)
    if found:
        tag, text = found[0]
        before = text.strip()[:60].decode("utf-8", "replace")
        repair_log().fix(path, f"<{tag.decode()}>", "vector separators", f"{before} ({len(found)} elements)",
                         before.replace(",", " "), f"{len(found)} number lists separate their numbers with commas "
                         f"(<{tag.decode()}> {before[:30]!r})", "read the commas as spaces")
    return fixed


def _trimesh_scene(path: Path, file_type: str, fmt: str) -> tuple[trimesh.Scene, list[Path]]:
    resolver = _RecordingResolver(path)
    options = {}
    if file_type == "obj":
        # One part per `o`/`g` name, faces in file order (trimesh's defaults merge by material and may reorder).
        options = {"split_objects": True, "split_groups": True, "maintain_order": True, "group_material": False}
    data = path.read_bytes()
    if file_type == "dae":
        data = _collada_commas(path, data)
    try:
        with io.BytesIO(data) as handle:
            scene = trimesh.load(handle, file_type=file_type, resolver=resolver, force="scene", process=False, **options)
    except CatalogError:  # the resolver's: a referenced file over the bound
        raise
    except Exception as exc:  # trimesh and pycollada raise many types (their own among them) on malformed input
        raise CatalogError(path, "", f"cannot be read as {fmt}: {first_line(exc)}") from None
    for name in sorted(set(resolver.missing)):
        problem = f"{name!r} is missing or outside the source's folder {path.resolve().parent}"
        if Path(name.strip()).suffix.lower() not in IMAGE_SUFFIXES:
            raise CatalogError(path, "referenced file", problem)
        repair_log().fix(path, "referenced file", "missing texture", name, "the material's base colour (or neutral "
                         f"{NEUTRAL_RGBA[:3]})", problem, "draw its parts in their material's base colour")
    return cast(trimesh.Scene, scene), sorted(set(resolver.read))  # force="scene": always a Scene


def _look(geom: trimesh.Trimesh) -> tuple[tuple[float, ...] | None, np.ndarray | None, np.ndarray | None]:
    """(rgba base colour, per-vertex uv, sRGB texture) of a geometry as trimesh decoded its material.

    A glTF base colour factor multiplies its texture; an MTL ``map_Kd`` replaces ``Kd`` (white base).
    trimesh stores uv with v = 0 at the image's bottom (OBJ's convention); flipped here to glTF's.
    """
    visual = geom.visual
    material = getattr(visual, "material", None)
    image = None
    if getattr(visual, "kind", None) == "texture" and material is not None:
        image = getattr(material, "baseColorTexture", None) if hasattr(material, "baseColorTexture") else material.image
    uv = getattr(visual, "uv", None)
    if image is not None and uv is not None and len(uv) == len(geom.vertices):
        texture = np.asarray(image.convert("RGB"), dtype=np.uint8)
        st = np.asarray(uv, dtype=np.float64)
        st = np.stack([st[:, 0], 1.0 - st[:, 1]], axis=1)
        factor = getattr(material, "baseColorFactor", None)
        rgba = (1.0, 1.0, 1.0, 1.0) if factor is None else tuple(float(c) / 255.0 for c in np.asarray(factor)[:4])
        return rgba, st, texture
    color = getattr(material, "main_color", None) if material is not None else None
    if color is None and getattr(visual, "kind", None) == "face":
        color = visual.main_color  # type: ignore[union-attr]  # a "face" visual is a ColorVisuals
    if color is None:
        return None, None, None
    return tuple(float(c) / 255.0 for c in np.asarray(color, dtype=np.float64)[:4]), None, None


def scene_parts(scene: trimesh.Scene, source: Path, unnamed_nodes: frozenset[str] = frozenset()) -> list[SourcePart]:
    """One part per geometry instance, named by its node path (unnamed nodes left out of the path)."""
    parents = scene.graph.transforms.parents
    base = scene.graph.base_frame
    parts = []
    for node in sorted(scene.graph.nodes_geometry):
        transform, geom_name = scene.graph[node]
        geom = scene.geometry[geom_name]
        if not isinstance(geom, trimesh.Trimesh) or len(geom.faces) == 0:
            continue
        path, n = [], node
        while n is not None and n != base:
            if n not in unnamed_nodes:
                path.append(n)
            n = parents.get(n)
        faces = np.asarray(geom.faces, dtype=np.int64)
        if np.linalg.det(np.asarray(transform)[:3, :3]) < 0:
            faces = faces[:, ::-1]  # a mirroring node turns triangles inside out; keep them facing outwards
        vertices = trimesh.transform_points(np.asarray(geom.vertices, dtype=np.float64), transform)
        rgba, uv, texture = _look(geom)
        parts.append(SourcePart(clean_part_name("/".join(reversed(path))), vertices, faces, rgba, uv, texture))  # type: ignore[arg-type]
    if not parts:
        raise CatalogError(source, "", "holds no triangle geometry")
    return unique_names(parts, source)


def _gltf_checks(path: Path) -> frozenset[str]:
    """Version and required extensions of a glTF; the trimesh node names of its unnamed nodes."""
    try:
        gltf = pygltflib.GLTF2().load(str(path))
    except Exception as exc:  # pygltflib raises what its JSON/struct decoding raises
        raise CatalogError(path, "", f"cannot be read as glTF 2.0: {type(exc).__name__}: {first_line(exc)}") from None
    if gltf is None:
        raise CatalogError(path, "", "cannot be read as glTF 2.0")
    version = getattr(gltf.asset, "version", None)
    if version != "2.0":
        raise CatalogError(path, "asset.version", f"{version!r}; only glTF 2.0 is supported")
    unsupported = sorted(set(gltf.extensionsRequired or ()) - SUPPORTED_REQUIRED_GLTF_EXTENSIONS)
    if unsupported:
        raise CatalogError(path, "extensionsRequired", f"extension {unsupported[0]} is not supported")
    _gltf_sizes(gltf, path)
    # trimesh names an unnamed node by its index: that is load order, so it never enters an identifier.
    return frozenset(str(i) for i, node in enumerate(gltf.nodes or ()) if not node.name)


_COMPONENT_BYTES = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}
_TYPE_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _buffer_bytes(gltf: pygltflib.GLTF2, index: int, uri: str | None, path: Path) -> int | None:
    """The bytes a glTF buffer actually has (GLB chunk, data URI, file beside the source); None when its file is
    missing (the file check says so)."""
    if uri is None:
        blob = gltf.binary_blob() if index == 0 else None
        return len(blob) if blob is not None else 0
    if uri.startswith("data:"):
        header, _, payload = uri.partition(",")
        if not header.endswith(";base64"):
            return len(unquote(payload).encode("utf-8", "surrogateescape"))
        try:
            return len(base64.b64decode(payload, validate=False))
        except (binascii.Error, ValueError):
            raise CatalogError(path, f"buffers[{index}].uri", "data URI is not base64") from None
    try:
        target = path.parent / unquote(uri)
        return target.stat().st_size if target.is_file() else None
    except (OSError, ValueError):  # a name no file can have (a NUL byte, too long): the resolver refuses it
        return None


def _gltf_sizes(gltf: pygltflib.GLTF2, path: Path) -> None:
    """Every size a glTF declares, checked against its data before trimesh allocates by it: a buffer's
    ``byteLength`` against the bytes it has, each buffer view inside its buffer, each accessor inside its view;
    and the triangles and vertices its nodes instance against the bounds."""
    buffers = []
    for i, b in enumerate(gltf.buffers or ()):
        declared = b.byteLength
        if not _whole(declared) or declared > MAX_SOURCE_BYTES:
            raise CatalogError(path, f"buffers[{i}].byteLength", f"{declared!r}; a buffer's length is a whole number "
                               f"of bytes up to the limit {MAX_SOURCE_BYTES}")
        actual = _buffer_bytes(gltf, i, b.uri, path)
        if actual is not None and actual < declared:
            raise CatalogError(path, f"buffers[{i}].byteLength", f"declares {declared} bytes, and its data has {actual}")
        buffers.append(declared)
    views = []
    for i, v in enumerate(gltf.bufferViews or ()):
        offset = v.byteOffset or 0
        if not isinstance(v.buffer, int) or not 0 <= v.buffer < len(buffers) or not _whole(offset) \
                or not _whole(v.byteLength) or offset + v.byteLength > buffers[v.buffer]:
            raise CatalogError(path, f"bufferViews[{i}]", "does not lie inside its buffer (buffer, byteOffset, byteLength)")
        views.append(v)
    counts: list[int] = []
    for i, a in enumerate(gltf.accessors or ()):
        size = _COMPONENT_BYTES.get(a.componentType, 0) * _TYPE_COMPONENTS.get(a.type, 0)
        if not _whole(a.count) or a.count < 1 or not size:
            raise CatalogError(path, f"accessors[{i}]", "count, componentType or type is not glTF 2.0's")
        if a.bufferView is not None:
            if not isinstance(a.bufferView, int) or not 0 <= a.bufferView < len(views):
                raise CatalogError(path, f"accessors[{i}].bufferView", f"{a.bufferView!r} is not a buffer view")
            view = views[a.bufferView]
            stride = view.byteStride or size
            end = (a.byteOffset or 0) + (a.count - 1) * stride + size
            if not _whole(a.byteOffset or 0) or end > view.byteLength:
                raise CatalogError(path, f"accessors[{i}]", f"{a.count} elements of {size} bytes need {end} bytes, "
                                   f"and buffer view {a.bufferView} has {view.byteLength}")
        counts.append(a.count)

    def count(index: object, field: str) -> int:
        if not isinstance(index, int) or not 0 <= index < len(counts):
            raise CatalogError(path, field, f"{index!r} is not an accessor")
        return counts[index]

    per_mesh = []
    for m, mesh in enumerate(gltf.meshes or ()):
        tris = verts = 0
        for p, prim in enumerate(mesh.primitives or ()):
            field = f"meshes[{m}].primitives[{p}]"
            position = getattr(prim.attributes, "POSITION", None)
            n = count(position, f"{field}.attributes.POSITION") if position is not None else 0
            k = count(prim.indices, f"{field}.indices") if prim.indices is not None else n
            mode = 4 if prim.mode is None else prim.mode
            tris += k // 3 if mode == 4 else max(k - 2, 0) if mode in (5, 6) else 0
            verts += n
        per_mesh.append((tris, verts))
    instanced = [per_mesh[node.mesh] for node in gltf.nodes or () if isinstance(node.mesh, int)
                 and 0 <= node.mesh < len(per_mesh)]
    check_geometry_bounds(path, "meshes", sum(t for t, _ in instanced), sum(v for _, v in instanced))


_OBJ_LINE = re.compile(rb"^[ \t]*(v|f)[ \t]", re.MULTILINE)


def _declared_counts(path: Path, file_type: str) -> None:
    """The triangles and vertices an OBJ, STL or COLLADA file holds, counted from its text or header before
    trimesh reads it (a polygon of n corners is n - 2 triangles)."""
    if file_type == "obj":
        data = path.read_bytes()
        # Each face line is at least one triangle, each vertex line one vertex: a quick floor first.
        check_geometry_bounds(path, "", data.count(b"\nf "), data.count(b"\nv "))
        verts = tris = 0
        for m in _OBJ_LINE.finditer(data):
            if m.group(1) == b"v":
                verts += 1
            else:
                end = data.find(b"\n", m.end())
                tris += max(len(data[m.end():end if end >= 0 else len(data)].split()) - 2, 1)
        check_geometry_bounds(path, "", tris, verts)
    elif file_type == "stl":
        with open(path, "rb") as f:
            head = f.read(84)
        size = path.stat().st_size
        if len(head) == 84 and size == 84 + 50 * struct.unpack("<I", head[80:84])[0]:
            n = struct.unpack("<I", head[80:84])[0]
        else:
            n = path.read_bytes().count(b"facet")
        check_geometry_bounds(path, "", n, 3 * n)
    elif file_type == "dae":
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as exc:
            raise CatalogError(path, "", f"cannot be read as COLLADA: {first_line(exc)}") from None
        tris = 0
        for el in root.iter():
            tag = el.tag.rsplit("}", 1)[-1]
            if tag in ("triangles", "polylist", "polygons", "tristrips", "trifans"):
                tris += _int_attr(el, "count", path)
        check_geometry_bounds(path, "", tris, 0)  # vertices: float arrays hold normals and uvs too; bytes bound them


def _int_attr(el: ET.Element, name: str, path: Path) -> int:
    text = el.get(name, "0")
    if not text.isdigit():
        raise CatalogError(path, f"<{el.tag.rsplit('}', 1)[-1]} {name}>", f"{text[:40]!r} is not a whole number")
    return int(text)


def collada_declared(path: Path) -> Declared:
    """COLLADA ``<asset><unit meter>`` and ``<up_axis>`` (1 m and Y_UP when absent, as the schema says)."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise CatalogError(path, "", f"cannot be read as COLLADA: {first_line(exc)}") from None
    unit = root.find("{*}asset/{*}unit")
    up_el = root.find("{*}asset/{*}up_axis")
    meter = unit.get("meter", "1") if unit is not None else "1"
    try:
        mpu = float(meter)
    except ValueError:
        raise CatalogError(path, "asset.unit.meter", f"{meter!r} is not a number") from None
    up_text = (up_el.text or "").strip() if up_el is not None else "Y_UP"
    if up_text not in _COLLADA_UP:
        raise CatalogError(path, "asset.up_axis", f"{up_text!r} is not supported (Y_UP or Z_UP)")
    by = f'COLLADA <asset> (unit meter="{meter}", up_axis {up_text})'
    return Declared(meters_per_unit=mpu, up=_COLLADA_UP[up_text], by=by)


def read_mesh_file(path: Path) -> SourceScene:
    """Read a glTF/GLB, OBJ, COLLADA or STL file into named parts with its declarations."""
    suffix = path.suffix.lower()
    file_type, fmt = FORMATS[suffix]
    check_file_bytes(path, path)
    unnamed: frozenset[str] = frozenset()
    declared = Declared()
    if file_type in ("glb", "gltf"):
        unnamed = _gltf_checks(path)
        declared = GLTF_DECLARED
    elif file_type == "dae":
        declared = collada_declared(path)
    _declared_counts(path, file_type)
    scene, read = _trimesh_scene(path, file_type, fmt)
    return SourceScene(parts=scene_parts(scene, path, unnamed), declared=declared, files=[path, *read])
