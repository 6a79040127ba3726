"""Which catalog entries pass certification, remembered by content: a command that only reads the catalog (the
OpenSCENARIO import matching entities to entries) pays the certification once, not on every start.

The verdict of :func:`simready.catalog.certify.certify_entry` is a function of the entry's files, the ontology
and the certifier's code; :func:`certified_ids` keys each verdict on the sha256 of exactly those (every file in
the entry's folder, ``data/ontology.yaml``, the ``simready/catalog`` sources and the world modules the rules
read) and keeps the verdicts in ``.<generated folder name>.certified.json`` beside the generated folder (not in
it: DVC pins that folder's bytes), like its generation lock. A changed byte anywhere in a key certifies the entry
again; an unwritable folder only means the verdicts are not kept. The process also keeps the verdicts it reached
or read (:data:`_VERDICTS`, by the same keys): a copy of a catalog in another folder (an import staged beside the
catalog, a test's copy) is not certified again entry by entry while its bytes are those already certified.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from simready.catalog.certkey import entry_key
from simready.common.atomic import write_json_atomic
from simready.world.ontology import load_ontology

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

#: Verdicts this process reached or read, by entry key (:func:`entry_key`: the entry's bytes and the code's).
_VERDICTS: dict[str, bool] = {}


def certified_ids(catalog: Catalog, ids: Iterable[str] | None = None, keep: bool = True) -> set[str]:
    """The ids among ``ids`` (default: every entry) whose entries of ``catalog`` (a
    :class:`~simready.catalog.catalog.Catalog`) pass certification, from the remembered verdicts where their key
    still holds (this process's, then the file beside the generated folder), certifying the others. ``keep=False``
    writes no file (a command that must leave the catalog folder as it found it when it fails)."""
    generated = Path(catalog.generated_dir)
    memo_path = generated.parent / f".{generated.name}.certified.json"
    try:
        memo = json.loads(memo_path.read_text())
        memo = memo if isinstance(memo, dict) else {}
    except (OSError, ValueError):
        memo = {}
    out, fresh = set(), {}
    ontology = None
    for aid in sorted(catalog.entries if ids is None else ids):
        entry_dir = Path(catalog.entry_dir(aid))
        key = entry_key(entry_dir)
        verdict = _VERDICTS.get(key, memo.get(key))
        if not isinstance(verdict, bool):
            # heavy: trimesh, USD, coacd; only for an uncertified entry
            from simready.catalog.certify import certify_entry

            ontology = ontology or load_ontology()
            verdict = certify_entry(entry_dir, ontology).passed
        fresh[key] = _VERDICTS[key] = verdict
        if verdict:
            out.add(aid)
    if keep and any(memo.get(k) != v for k, v in fresh.items()):
        try:
            write_json_atomic(memo_path, dict(sorted({**memo, **fresh}.items())))
        except OSError:
            pass
    return out
