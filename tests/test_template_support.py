"""Shared helpers for the template tests: cached loads and a mutate-and-write fixture."""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from simready import paths
from simready.world.template import WorldTemplate, load_template

TEMPLATE_IDS = ("city_crossing", "residential_crosswalk_v3", "two_lane_arterial", "urban_signalized_intersection",
                "urban_unsignalized_intersection")
CONTRACTS_DIR = paths.CATALOG_CONTRACTS_DIR


def template_path(template_id: str) -> Path:
    return paths.TEMPLATES_DIR / f"{template_id}.yaml"


@lru_cache(maxsize=None)
def loaded(template_id: str) -> WorldTemplate:
    """Parsed template, loaded once per test session (templates are immutable)."""
    return load_template(template_path(template_id))


@lru_cache(maxsize=None)
def _raw(template_id: str) -> Any:
    return yaml.safe_load(template_path(template_id).read_text())


def raw(template_id: str) -> dict[str, Any]:
    """A fresh, mutable copy of the authored YAML data."""
    return copy.deepcopy(_raw(template_id))


def write_yaml(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@lru_cache(maxsize=None)
def contracts() -> dict[str, dict[str, Any]]:
    """Catalog contracts as plain dicts, keyed by asset id (hand-authored YAML)."""
    out = {}
    for f in sorted(CONTRACTS_DIR.glob("*.yaml")):
        c = yaml.safe_load(f.read_text())
        out[c["id"]] = c
    return out


def footprints() -> dict[str, tuple[float, float]]:
    return {k: (c["dimensions_m"]["length"], c["dimensions_m"]["width"]) for k, c in contracts().items()}
