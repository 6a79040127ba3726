"""What a rule looks at (the parsed entry, the ontology, the meshes as on disk), what a rule is (a stable code and a
check returning one message per violation), and what the rules measure on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from simready.catalog.contract import CatalogEntry
from simready.catalog.index import ENTRY_FILE
from simready.catalog.meshio import ObjMesh, component_union, manifold_mesh, mass_properties, union
from simready.common.errors import CatalogError
from simready.common.identifiers import confine
from simready.world.ontology import Ontology


@dataclass
class RuleContext:
    """What the rules look at: the parsed entry, the ontology and the geometry as on disk.

    ``render``/``pieces`` are None when a file is missing or unreadable;
    geometry rules then stay silent and ``geometry_hash`` reports why.
    """

    entry_dir: Path
    entry: CatalogEntry
    ontology: Ontology
    render: ObjMesh | None = None
    pieces: list[ObjMesh] | None = None
    #: volume.obj of an imported entry whose render mesh is open (``--repair``): what its volume is measured on.
    volume: ObjMesh | None = None
    load_problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Rule:
    code: str
    check: Callable[[RuleContext], list[str]]


def entry_file(entry_dir: Path, file: str, problems: list[str]) -> Path | None:
    """A file entry.json names, confined to the entry's folder; None (and a problem) when it leads out."""
    try:
        return confine(entry_dir, file, entry_dir / ENTRY_FILE, "file", CatalogError)
    except CatalogError as exc:
        problems.append(exc.reason)
        return None


def render_volume(c: RuleContext) -> float:
    """Render volume: of render.obj (procedural), of the union of its closed shells (imported)."""
    assert c.render is not None
    if c.entry.import_ is None:
        return mass_properties(c.render, 0.0).volume_m3
    return float(component_union([c.volume if c.volume is not None else c.render]).volume())


def mass_basis(c: RuleContext) -> ObjMesh:
    """What mass properties are measured on: render.obj (procedural) or the collider's union (imported)."""
    assert c.render is not None and (c.entry.import_ is None or c.pieces is not None)
    return c.render if c.entry.import_ is None else manifold_mesh(union(c.pieces or []))
