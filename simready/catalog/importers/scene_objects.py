"""A multi-object art scene split into its objects (``simready template import-scene``, issue 16 item 10).

A scene's *objects* are its top-level nodes: the first component of every
part's path (glTF node path, USD prim path, COLLADA node path; an OBJ's
``o``/``g`` names are flat, so each group is an object). When every part sits
under one common root node (USD's ``/World``, a glTF exported with a single
``Scene`` node), that root is stepped over once; ``root`` names the node
whose children are the objects explicitly. An object's parts keep their paths
below the object (a leaf object is one part named like the object).

Everything is keyed by names, never by load order: the objects come sorted by
their path, and each object's parts are sorted by :func:`unique_names`, so a
scene whose nodes are listed in another order splits into the same objects
with the same parts.

A scene has no front: its objects keep the scene's axes (only the up
conversion and the units apply), so the declared glTF "front faces +Z" of a
single asset is dropped for a scene and the scene's x stays the world's x.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from simready.catalog.importers.source import SourcePart, SourceScene, clean_part_name, unique_names
from simready.common.errors import CatalogError

#: ``generator.params`` key of an entry imported from one object of a scene: the object's path in the source.
SCENE_OBJECT_PARAM = "scene_object"
#: What an instance or variant name may hold (SPEC §3 identifiers); anything else becomes ``_``.
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.\-]")
MAX_NAME_CHARS = 128


def object_name(path: str) -> str:
    """An instance/variant name from an object's path: its last component, safe characters, bounded."""
    name = _NAME_CHARS.sub("_", path.rsplit("/", 1)[-1])
    if not name or not (name[0].isalnum() or name[0] == "_"):
        name = "_" + name
    return name[:MAX_NAME_CHARS]


def _scene_frame(scene: SourceScene) -> SourceScene:
    declared = replace(scene.declared, forward=None)
    return replace(scene, declared=declared)


def object_paths(scene: SourceScene, root: str | None, source: str | Path) -> list[str]:
    """The paths of the scene's objects (sorted), under ``root`` or the scene's top level."""
    names = [p.name for p in scene.parts]
    if root is not None:
        prefix = clean_part_name(root)
        below = [n[len(prefix) + 1:] for n in names if n.startswith(prefix + "/")]
        if not prefix or not below:
            tops = sorted({n.split("/")[0] for n in names})
            raise CatalogError(source, "--root", f"no mesh below node {root!r}; the scene's top-level nodes are "
                               + ", ".join(tops[:10]))
        return sorted({f"{prefix}/{n.split('/')[0]}" for n in below})
    components = [n.split("/") for n in names]
    firsts = {c[0] for c in components}
    if len(firsts) == 1 and all(len(c) > 1 for c in components):
        only = next(iter(firsts))
        return sorted({f"{only}/{c[1]}" for c in components})
    return sorted(firsts)


def select_object(scene: SourceScene, path: str, source: str | Path) -> SourceScene:
    """The parts of the object at ``path`` (named below it), in the scene's frame without a front."""
    parts: list[SourcePart] = []
    for part in scene.parts:
        if part.name == path:
            parts.append(replace(part, name=object_name(path)))
        elif part.name.startswith(path + "/"):
            parts.append(replace(part, name=part.name[len(path) + 1:]))
    if not parts:
        raise CatalogError(source, SCENE_OBJECT_PARAM, f"the scene has no object {path!r}")
    return replace(_scene_frame(scene), parts=unique_names(parts, source), collision=None, inertial=None)


def split_objects(scene: SourceScene, root: str | None, source: str | Path) -> dict[str, SourceScene]:
    """``{object path: its parts as a scene}`` in path order; two objects with one name are refused."""
    paths = object_paths(scene, root, source)
    seen: dict[str, str] = {}
    for path in paths:
        name = object_name(path)
        if name in seen:
            raise CatalogError(source, "nodes", f"objects {seen[name]!r} and {path!r} both become instance {name!r}; "
                               "rename one of them")
        seen[name] = path
    return {path: select_object(scene, path, source) for path in paths}
