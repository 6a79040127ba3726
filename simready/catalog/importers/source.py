"""What a reader gets out of a source file: named parts, collision pieces, declarations, mass facts.

Every reader (glTF, OBJ, COLLADA, STL through trimesh; USD through usd-core;
URDF through its XML) returns one :class:`SourceScene` in the *source's* units
and axes, node transforms already applied (so a node's non-uniform scale is
frozen into the vertices, never left on a node). Conversion into our frame
happens once, afterwards (:mod:`simready.catalog.importers.assemble`).

Part identifiers come from the source's names and paths (glTF node path, OBJ
group, USD prim path, URDF link), never from load order: an unnamed node is
named by the content hash of its geometry, and two parts that end up with
one name are told apart by that hash too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from simready.catalog.contract import Repair
from simready.catalog.importers.conventions import Declared
from simready.common.errors import CatalogError
from simready.common.hashing import content_hash

#: Bounds on one imported source (SPEC §14), checked before the geometry is read where the file declares it
#: (glTF accessors, STL's triangle count, OBJ's lines, COLLADA's counts, USD's face counts) and again on what
#: was read: the bytes of the source and of each file it references, its triangles and its vertices.
MAX_SOURCE_BYTES = 128 * 1024 * 1024
MAX_TRIANGLES = 1_000_000
MAX_VERTICES = 3_000_000
#: The heaviest body a catalog entry may declare (a loaded lorry is ~4e4 kg) and the densest material (osmium is
#: 22 590 kg/m³): larger values are typing errors, and their inertia overflows float64 arithmetic.
MAX_MASS_KG = 1e6
MAX_DENSITY_KG_M3 = 1e5

#: Characters kept in a part identifier; anything else becomes ``_``.
_PART_CHARS = re.compile(r"[^A-Za-z0-9_.:/\-]")
MAX_PART_CHARS = 200


@dataclass(frozen=True)
class SourcePart:
    """One named piece of render geometry: (N, 3) float64 vertices in source units/axes, (M, 3) int faces.

    rgba: linear base colour (a glTF baseColorFactor, an MTL Kd, a URDF colour), None when the source has none.
    uv: (N, 2) texture coordinates per vertex (v = 0 at the image's top, glTF's convention) and texture:
    the (H, W, 3) uint8 sRGB image, both None for an untextured part.
    """

    name: str
    vertices: NDArray[np.float64]
    faces: NDArray[np.int64]
    rgba: tuple[float, float, float, float] | None = None
    uv: NDArray[np.float64] | None = None
    texture: NDArray[np.uint8] | None = None


@dataclass(frozen=True)
class SourceInertial:
    """A source's own mass properties (URDF ``<inertial>`` of every link, combined), source frame.

    mass_kg: total. center_of_mass: (3,) source units. inertia: (3, 3) about the
    centre of mass, source axes, kg·(source unit)².
    """

    mass_kg: float
    center_of_mass: NDArray[np.float64]
    inertia: NDArray[np.float64]


@dataclass
class SourceScene:
    """Everything an import reads from one source file (and the files it references).

    collision: the source's own collision pieces (vertex arrays; each becomes its
    convex hull), or None when the source has none. files: every file read, the
    source first. friction/restitution: as the source states them, or None.
    """

    parts: list[SourcePart]
    declared: Declared
    files: list[Path]
    collision: list[NDArray[np.float64]] | None = None
    inertial: SourceInertial | None = None
    friction: float | None = None
    restitution: float | None = None
    notes: list[str] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)
    #: Frames without geometry (URDF links with neither visual nor collision): name → 4×4 pose, source frame.
    frames: dict[str, NDArray[np.float64]] = field(default_factory=dict)


class RepairLog:
    """The repairs of one import (``--repair``), or the refusals that name them (without it).

    Readers call :func:`fix` where a known quirk is found; with repairs on it is recorded (what, where, before →
    after) and the reader goes on with the repaired value, otherwise the import stops with one line that ends
    "rerun with --repair to …".
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.items: list[Repair] = []

    def fix(self, source: str | Path, where: str, what: str, before: str, after: str, problem: str, remedy: str) -> None:
        if not self.enabled:
            raise CatalogError(source, where, f"{problem}; rerun with --repair to {remedy}")
        self.items.append(Repair(what=what, where=where, before=_short(before), after=_short(after)))


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_LOG: ContextVar[RepairLog] = ContextVar("simready_import_repairs", default=RepairLog(False))


@contextmanager
def repairing(log: RepairLog) -> Iterator[RepairLog]:
    """Make ``log`` the one :func:`repair_log` returns while a source is read (readers deep in a format call it)."""
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def repair_log() -> RepairLog:
    """The repair log of the import being read (repairs off outside :func:`repairing`)."""
    return _LOG.get()


def geometry_digest(vertices: NDArray[np.float64], faces: NDArray[np.int64]) -> str:
    """Short content hash of a piece of geometry (names an unnamed part; independent of load order)."""
    return content_hash({"v": np.round(vertices, 6).tolist(), "f": np.asarray(faces).tolist()})[7:15]


def clean_part_name(raw: str) -> str:
    """A part identifier from a source name or path: safe characters, no leading ``/``, bounded length."""
    name = _PART_CHARS.sub("_", raw.strip()).strip("/")
    return name[:MAX_PART_CHARS]


def unique_names(parts: list[SourcePart], source: str | Path) -> list[SourcePart]:
    """Parts sorted by identifier; an empty or repeated identifier gets its geometry digest appended.

    Sorting by name (then digest) is what makes the result independent of the
    order in which the source lists its nodes.
    """
    counts: dict[str, int] = {}
    for p in parts:
        counts[p.name] = counts.get(p.name, 0) + 1
    named = []
    for p in parts:
        if not p.name or counts[p.name] > 1:
            digest = geometry_digest(p.vertices, p.faces)
            name = f"{p.name}#{digest}" if p.name else f"mesh-{digest}"
            p = replace(p, name=name)
        named.append(p)
    names = [p.name for p in named]
    if len(set(names)) != len(names):
        dup = sorted(n for n in names if names.count(n) > 1)[0]
        raise CatalogError(source, "parts", f"two parts have identical names and geometry ({dup!r}); remove the duplicate")
    return sorted(named, key=lambda p: p.name)


def first_line(exc: BaseException) -> str:
    """A third-party parser's exception as one short line (usd-core's cannot always render its own message: it
    quotes the file's bytes, which need not be UTF-8)."""
    try:
        text = str(exc).strip().splitlines()
    except UnicodeDecodeError:
        return f"{type(exc).__name__}: the file holds bytes that are not UTF-8 text where the format wants text"
    return (text[0] if text else type(exc).__name__)[:300]


def check_geometry_bounds(source: str | Path, field: str, triangles: int, vertices: int) -> None:
    """One line naming the bound and the value when a source declares or holds more triangles or vertices than
    :data:`MAX_TRIANGLES` / :data:`MAX_VERTICES`."""
    if triangles > MAX_TRIANGLES:
        raise CatalogError(source, field, f"{triangles} triangles; the limit is {MAX_TRIANGLES} per source "
                           "(decimate it first)")
    if vertices > MAX_VERTICES:
        raise CatalogError(source, field, f"{vertices} vertices; the limit is {MAX_VERTICES} per source "
                           "(decimate it first)")


def check_file_bytes(source: str | Path, path: Path, field: str = "") -> int:
    """The size of a file a source is or references; one line when it is over :data:`MAX_SOURCE_BYTES`."""
    size = path.stat().st_size
    if size > MAX_SOURCE_BYTES:
        raise CatalogError(source, field, f"{path.name} is {size} bytes; the limit is {MAX_SOURCE_BYTES} bytes")
    return size
