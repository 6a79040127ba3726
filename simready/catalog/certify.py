"""Certification of generated catalog entries against the asset contract (SPEC §4).

Each rule is a small object — a stable ``code`` and a check returning one
message per violation, each message naming the numbers involved. All rules
run on every entry, in cost order (field checks, then file hashes, then
geometry), and *every* violation is reported, not only the first: a reviewer
fixes an entry in one pass. Certification trusts nothing typed into
``entry.json`` that it can recompute from the files on disk.

Tolerances (:mod:`simready.catalog.certification.policy`, versioned with :data:`CERTIFICATION_VERSION`):

* declared dimensions vs render extents: the larger of 1 cm and 1 % per axis,
* collider bounds vs render bounds: 5 cm per face,
* collider volume outside the render volume, and render volume the collider
  leaves uncovered: each ≤ 5 % of the render volume (this also bounds the
  difference of the two volumes),
* inertia: relative Frobenius error ≤ 2 % against the tensor recomputed from
  render.obj with uniform density; centre of mass within 1 cm.

Imported entries (``entry.json`` has an ``import`` block, issue 16) are judged
by the same rules, with what an imported asset differs in: its render mesh may
hold overlapping closed shells, so its volume is that of their union and its
mass properties are measured on the collider's union; its family need not be
in the ontology and its parts are the source's; its ``import`` block must
describe a rotation and a uniform scale equal to the recorded unit
(``import``), and a source's own ``<inertial>`` must agree with what the
geometry implies for the same mass within :data:`~simready.catalog.meshio.SOURCE_INERTIA_REL_TOL`
(relative Frobenius error; ``source_inertia``), centre of mass within
:data:`~simready.catalog.meshio.SOURCE_COM_REL_TOL` of the size. Every entry's extents must lie in its
class's ``size_m`` ranges (``plausibility``): what catches wrong units.

The rules are :mod:`simready.catalog.certification` (one module per kind); this module runs them and
reports.

Units: metres, kilograms, kg·m², body frame.

Run: ``python -m simready.catalog.certify [GENERATED_DIR]`` prints the table
and exits 1 when an entry fails.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from simready.catalog.catalog import load_entry
from simready.catalog.certification import RULES, RuleContext
from simready.catalog.certification.context import entry_file
from simready.catalog.certification.policy import CERTIFICATION_VERSION
from simready.catalog.certkey import entry_key
from simready.catalog.contract import CatalogEntry
from simready.catalog.index import ENTRY_FILE, read_index
from simready.catalog.meshio import ObjMesh, mass_properties, read_obj, to_manifold
from simready.common import paths
from simready.common.errors import CatalogError
from simready.world.ontology import Ontology, load_ontology


class Rejection(BaseModel):
    """One violated rule: a stable ``code`` and a message with the numbers."""

    code: str
    message: str


class EntryCertification(BaseModel):
    id: str
    entry_dir: str
    passed: bool
    reasons: list[Rejection]

    @property
    def codes(self) -> set[str]:
        return {r.code for r in self.reasons}


class CatalogCertification(BaseModel):
    """Certification of a whole generated catalog; ``entries`` sorted by id."""

    certification_version: str = CERTIFICATION_VERSION
    entries: list[EntryCertification]

    @property
    def all_passed(self) -> bool:
        return all(e.passed for e in self.entries)

    @property
    def n_passed(self) -> int:
        return sum(e.passed for e in self.entries)

    @property
    def n_failed(self) -> int:
        return len(self.entries) - self.n_passed

    def to_table(self) -> list[dict[str, object]]:
        """Rows for display: id, passed (bool), the failing codes and their messages (strings)."""
        return [
            {
                "id": e.id,
                "passed": e.passed,
                "codes": ", ".join(sorted(e.codes)),
                "reasons": "; ".join(r.message for r in e.reasons),
            }
            for e in self.entries
        ]


def _load_mesh(entry_dir: Path, file: str, problems: list[str], closed: bool = True) -> ObjMesh | None:
    path = entry_file(entry_dir, file, [])
    if path is None or not path.is_file():
        return None  # reported by the hash check
    try:
        mesh = read_obj(path)
        if not closed:  # an imported render mesh kept as drawn; volume.obj is measured instead
            return mesh
        to_manifold(mesh)
        mass_properties(mesh, 0.0)  # refuses inside-out or empty meshes
    except ValueError as exc:
        problems.append(f"{file} is not a readable closed mesh: {exc}")
        return None
    return mesh


def _context(entry_dir: Path, entry: CatalogEntry, ontology: Ontology) -> RuleContext:
    ctx = RuleContext(entry_dir, entry, ontology)
    ctx.render = _load_mesh(entry_dir, entry.render_geometry.file, ctx.load_problems,
                            closed=entry.volume_geometry is None or entry.import_ is None)
    if entry.volume_geometry is not None and entry.import_ is not None:
        ctx.volume = _load_mesh(entry_dir, entry.volume_geometry.file, ctx.load_problems)
        if ctx.volume is None:
            ctx.render = None  # nothing to measure the volume on: the geometry rules stay silent, the load says why
    pieces = [_load_mesh(entry_dir, ref.file, ctx.load_problems) for ref in entry.collision_geometry]
    loaded = [piece for piece in pieces if piece is not None]
    ctx.pieces = loaded if loaded and len(loaded) == len(pieces) else None
    if not entry.collision_geometry:
        ctx.load_problems.append("no collision pieces")
    return ctx


def _read_entry(entry_dir: Path) -> CatalogEntry | Rejection:
    try:
        return load_entry(entry_dir)
    except CatalogError as exc:
        where = f"{ENTRY_FILE}: {exc.field}" if exc.field else ENTRY_FILE
        return Rejection(code="entry_schema", message=f"{where}: {exc.reason}")


def certify_entry(entry_dir: str | Path, ontology: Ontology | None = None) -> EntryCertification:
    """Certify one generated entry directory; every failing rule is reported.

    An ``entry.json`` that does not parse is rejected with code ``entry_schema``
    (no other rule can run on it).
    """
    entry_dir = Path(entry_dir)
    ontology = ontology or load_ontology()
    entry = _read_entry(entry_dir)
    if isinstance(entry, Rejection):
        fallback_id = f"asset:{entry_dir.parent.name}/{entry_dir.name}"
        return EntryCertification(id=fallback_id, entry_dir=str(entry_dir), passed=False, reasons=[entry])
    ctx = _context(entry_dir, entry, ontology)
    reasons = [Rejection(code=rule.code, message=msg) for rule in RULES for msg in rule.check(ctx)]
    return EntryCertification(id=entry.id, entry_dir=str(entry_dir), passed=not reasons, reasons=reasons)


#: Certifications this process reached against the project's ontology, by the entry's content key
#: (:func:`simready.catalog.certkey.entry_key`: its files' bytes, the certifier's code, the ontology file) and its
#: folder below the generated folder (a rejected entry is named after its folder).
_CERTIFIED: dict[tuple[str, str], EntryCertification] = {}


def certify_catalog(generated_dir: str | Path = paths.CATALOG_GENERATED_DIR, ontology: Ontology | None = None) -> CatalogCertification:
    """Certify every entry listed in ``catalog_index.json``; entries sorted by id.

    With the project's ontology (``ontology`` None), an entry whose bytes this process certified before (here or
    in a copy of the catalog) is not certified again: its certification is the one reached then, every reason
    included. A changed byte in the entry's folder, the certifier's code or the ontology certifies it again."""
    generated_dir = Path(generated_dir)
    index = read_index(generated_dir)
    if index is None:
        raise CatalogError(generated_dir, "catalog_index.json", "missing; run python -m simready.catalog.generate")
    remember = ontology is None
    results = []
    for row in index["entries"]:
        entry_dir = generated_dir / row["dir"]
        key = (entry_key(entry_dir), str(row["dir"])) if remember else None
        kept = _CERTIFIED.get(key) if key is not None else None
        if kept is None:
            ontology = ontology or load_ontology()
            kept = certify_entry(entry_dir, ontology)
            if key is not None:
                _CERTIFIED[key] = kept
        results.append(kept.model_copy(update={"entry_dir": str(entry_dir)}, deep=True))
    return CatalogCertification(entries=sorted(results, key=lambda r: r.id))


def format_table(rows: Sequence[dict[str, object]]) -> str:
    """Plain-text table of :meth:`CatalogCertification.to_table` rows."""
    if not rows:
        return "(no entries)"
    cells = [{k: ("yes" if v else "NO") if isinstance(v, bool) else str(v) for k, v in r.items()} for r in rows]
    keys = list(cells[0])
    widths = {k: max(len(k), *(len(r[k]) for r in cells)) for k in keys}
    lines = ["  ".join(k.ljust(widths[k]) for k in keys)]
    lines += ["  ".join(r[k].ljust(widths[k]) for k in keys) for r in cells]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    generated = Path(args[0]) if args else paths.CATALOG_GENERATED_DIR
    try:
        report = certify_catalog(generated)
    except CatalogError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 2
    print(format_table(report.to_table()))
    print(f"{report.n_passed}/{len(report.entries)} entries certified")
    return 0 if report.all_passed else 1


if __name__ == "__main__":
    sys.exit(main())
