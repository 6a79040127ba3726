"""A check's findings as a table on its page, never a JSON dump (issue 19).

Checks find texts (one-line errors), texts per key (reasons per sample or entry) or rows (dicts); each becomes
Dagster's sortable table with a schema, numbers rounded as in the assets' tables
(:func:`simready.assets.metadata.table`); no finding is an empty table, which says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg

from simready.assets.metadata import table

_KINDS = ((bool, "bool"), (int, "int"), (float, "float"))


def findings(found: Mapping[str, Any] | Sequence[Any], *, key: str = "sample", column: str = "finding"
             ) -> dg.MetadataValue:
    """``found`` as a table: texts → one ``column``; ``{k: text or texts}`` → a row per text, ``k`` under ``key``;
    rows (dicts) → their own columns, in the order they first appear."""
    if isinstance(found, Mapping):
        rows = [{key: str(k), column: str(v)} for k, vs in found.items() for v in (vs if isinstance(vs, list) else [vs])]
        return table(rows, [(key, "string"), (column, "string")])
    if found and all(isinstance(r, Mapping) for r in found):
        names = list(dict.fromkeys(n for r in found for n in r))
        return table(list(found), [(n, _kind([r.get(n) for r in found])) for n in names])
    return table([{column: str(v)} for v in found], [(column, "string")])


def _kind(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    for python, name in _KINDS:
        if present and all(isinstance(v, python) and (python is not int or not isinstance(v, bool)) for v in present):
            return name
    return "string"
