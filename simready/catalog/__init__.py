"""Certified asset catalog (SPEC §4): contracts → procedural geometry → certification.

No Dagster here: the Dagster layer (``simready.assets.catalog``) wraps these functions.

* :func:`generate_catalog` — write ``data/catalog/generated`` from ``data/catalog/contracts``.
* :func:`ensure_catalog` — regenerate when stale, then :class:`Catalog` to read entries.
* :func:`certify_catalog` / :func:`certify_entry` — every failing rule, with a code and numbers.

Names are imported lazily so that ``python -m simready.catalog.generate`` does
not import its own module twice.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AssetContract": "contract",
    "CatalogEntry": "contract",
    "load_contract": "contract",
    "generate_catalog": "generate",
    "Catalog": "catalog",
    "ensure_catalog": "catalog",
    "load_catalog": "catalog",
    "load_entry": "catalog",
    "CatalogCertification": "certify",
    "EntryCertification": "certify",
    "Rejection": "certify",
    "certify_catalog": "certify",
    "certify_entry": "certify",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'simready.catalog' has no attribute {name!r}")
    return getattr(importlib.import_module(f"simready.catalog.{_EXPORTS[name]}"), name)
