"""The content key of a catalog entry's certification: what :func:`simready.catalog.certify.certify_entry`'s verdict
is a function of (every file in the entry's folder, ``data/ontology.yaml``, the ``simready/catalog`` sources and the
world modules the rules read), hashed. Read by the remembered verdicts (:mod:`simready.catalog.certified`) and
certifications (:func:`simready.catalog.certify.certify_catalog`); light, so that a command that only reads the
catalog need not load the certifier to find its verdicts.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from simready.common import paths

_PACKAGE = Path(__file__).resolve().parent
_RULE_SOURCES = (_PACKAGE.parent / "world" / "ontology.py", _PACKAGE.parent / "world" / "identity.py",
                 _PACKAGE.parent / "world" / "frames.py")
_CODE: list[str] = []


def _code_key() -> str:
    """sha256 of the certifier's code and the ontology (once per process)."""
    if not _CODE:
        h = hashlib.sha256()
        for path in [*sorted(_PACKAGE.rglob("*.py")), *_RULE_SOURCES, paths.ONTOLOGY_FILE]:
            h.update(str(path.relative_to(_PACKAGE.parent.parent) if path.is_relative_to(_PACKAGE.parent.parent)
                         else path.name).encode() + b"\0" + path.read_bytes() + b"\0")
        _CODE.append(h.hexdigest())
    return _CODE[0]


def entry_key(entry_dir: Path) -> str:
    """sha256 of every file in ``entry_dir`` (names and bytes) and of :func:`_code_key`."""
    h = hashlib.sha256(_code_key().encode())
    for f in sorted(p for p in entry_dir.rglob("*") if p.is_file()):
        h.update(f.relative_to(entry_dir).as_posix().encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()
