"""The generated catalog's index and file names, without the generators: what reading a catalog needs.

:mod:`.generate` writes ``catalog_index.json`` and the entry directories; the
readers (:func:`simready.catalog.catalog.ensure_catalog`, the commands that only
look entries up) read them through this module, so that looking an entry up
does not import the mesh libraries the generators use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simready.common.errors import CatalogError
from simready.common.identifiers import confine
from simready.common.loading import load_json

#: Bump whenever a generator's output changes, so that ``ensure_catalog`` regenerates (re-exported by
#: :mod:`simready.catalog.procedural`, where the generators live).
GENERATOR_VERSION = "1.0.0"
INDEX_FILE = "catalog_index.json"
ENTRY_FILE = "entry.json"


def entry_relpath(family: str, variant: str) -> Path:
    return Path(family) / variant


def read_index(out_dir: Path) -> dict[str, Any] | None:
    """The index as written by :func:`simready.catalog.generate.write_index`, or None when there is none."""
    path = Path(out_dir) / INDEX_FILE
    if not path.exists():
        return None
    index: dict[str, Any] = load_json(path, CatalogError)
    rows = index.get("entries") if isinstance(index, dict) else None
    if not isinstance(rows, list):
        raise CatalogError(path, "entries", "expected a list of entry rows")
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("dir"), str) or not isinstance(row.get("id"), str):
            raise CatalogError(path, f"entries[{i}]", "expected a mapping with string 'id' and 'dir'")
        if row["dir"] in seen or row["id"] in seen:
            raise CatalogError(path, f"entries[{i}]", f"entry {row['id']!r} ({row['dir']}) listed twice")
        seen.update((row["dir"], row["id"]))
        confine(out_dir, row["dir"], path, f"entries[{i}].dir", CatalogError)
    return index
