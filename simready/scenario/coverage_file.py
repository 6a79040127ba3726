"""The coverage file ``data/coverage/<intent>.yaml`` (format: :mod:`simready.scenario.coverage`): found by intent,
read with bounded strict YAML, and parsed into a :class:`~simready.scenario.coverage.CoverageSpec`, every
problem one :class:`~simready.scenario.coverage.CoverageError` naming the file and field."""

from __future__ import annotations

import math
from itertools import product
from pathlib import Path
from typing import Any

from simready.common.identifiers import check_identifier
from simready.common.loading import load_yaml
from simready.scenario.coverage import (COVERAGE_DIR, DEFAULT_MAX_PROPOSALS_PER_CELL, DEFAULT_TARGET_PER_CELL, Cell,
                                        Coord, CoverageError, CoverageSpec, Dimension, cell_id)


def coverage_path(intent: str, directory: str | Path = COVERAGE_DIR) -> Path:
    return Path(directory) / f"{intent}.yaml"


def load_coverage(intent: str, directory: str | Path = COVERAGE_DIR) -> CoverageSpec:
    """Read ``<directory>/<intent>.yaml``; any problem is one :class:`CoverageError`."""
    check_identifier(intent, directory, "intent", CoverageError)
    path = coverage_path(intent, directory)
    if not path.exists():
        raise CoverageError(path, "", f"no coverage declared for intent {intent!r}")
    data = load_yaml(path, CoverageError)
    spec = parse_coverage(data, path)
    if spec.intent != intent:
        raise CoverageError(path, "intent", f"declares intent {spec.intent!r}, expected {intent!r}")
    return spec


def _require(cond: bool, source: str, field_: str, reason: str) -> None:
    if not cond:
        raise CoverageError(source, field_, reason)


def _positive_int(value: Any, source: str, field_: str) -> int:
    _require(isinstance(value, int) and not isinstance(value, bool) and value > 0, source, field_,
             f"must be a positive integer, got {value!r}")
    return int(value)


def _parse_dimension(raw: Any, where: str, source: str) -> Dimension:
    _require(isinstance(raw, dict), source, where, "a dimension is a mapping with name, key and values or bins")
    unknown = sorted(set(raw) - {"name", "key", "values", "bins", "labels"})
    _require(not unknown, source, where, f"unknown field(s) {', '.join(unknown)}")
    name, key = raw.get("name"), raw.get("key", raw.get("name"))
    _require(isinstance(name, str) and name.isidentifier(), source, f"{where}.name", f"must be an identifier, got {name!r}")
    _require(isinstance(key, str) and bool(key), source, f"{where}.key", "must be a realized parameter name")
    has_values, has_bins = "values" in raw, "bins" in raw
    _require(has_values != has_bins, source, where, "give exactly one of values and bins")
    if has_values:
        values = raw["values"]
        _require(isinstance(values, list) and bool(values), source, f"{where}.values", "must be a non-empty list")
        _require(all(isinstance(v, str) and v and "|" not in v and "=" not in v for v in values), source,
                 f"{where}.values", "values are non-empty strings without '|' or '='")
        _require(len(set(values)) == len(values), source, f"{where}.values", "values repeat")
        _require("labels" not in raw, source, f"{where}.labels", "labels name bins, not values")
        return Dimension(name, key, tuple(Coord(name, value=v) for v in values))
    bins = raw["bins"]
    _require(isinstance(bins, list) and bool(bins), source, f"{where}.bins", "must be a non-empty list of [lo, hi]")
    labels = raw.get("labels")
    if labels is not None:
        _require(isinstance(labels, list) and len(labels) == len(bins) and all(isinstance(x, str) and x for x in labels),
                 source, f"{where}.labels", "one non-empty string per bin")
        _require(len(set(labels)) == len(labels), source, f"{where}.labels", "labels repeat")
    coords: list[Coord] = []
    for i, b in enumerate(bins):
        at = f"{where}.bins[{i}]"
        _require(isinstance(b, list) and len(b) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                            for v in b), source, at, f"a bin is [lo, hi], got {b!r}")
        lo, hi = float(b[0]), float(b[1])
        _require(math.isfinite(lo) and math.isfinite(hi), source, at, "bin edges must be finite")
        _require(lo < hi, source, at, f"empty range [{lo}, {hi}): lo must be below hi")
        if coords:
            prev_hi = coords[-1].hi
            assert prev_hi is not None
            _require(lo >= prev_hi, source, at, f"bins overlap or are out of order ({lo} < {coords[-1].hi})")
        coords.append(Coord(name, lo=lo, hi=hi, closed=i == len(bins) - 1, label=labels[i] if labels else None))
    return Dimension(name, key, tuple(coords))


def parse_coverage(data: Any, source: str | Path = "<memory>") -> CoverageSpec:
    """Validate a coverage mapping into a :class:`CoverageSpec`."""
    source = str(source)
    _require(isinstance(data, dict), source, "", "a coverage file is a mapping")
    unknown = sorted(set(data) - {"intent", "template", "target_per_cell", "max_proposals_per_cell", "dimensions",
                                  "targets", "notes"})
    _require(not unknown, source, "", f"unknown field(s) {', '.join(unknown)}")
    intent = data.get("intent")
    _require(isinstance(intent, str) and bool(intent), source, "intent", "must name the intent")
    template = data.get("template")
    _require(template is None or isinstance(template, str), source, "template", "must be a template id")
    target = _positive_int(data.get("target_per_cell", DEFAULT_TARGET_PER_CELL), source, "target_per_cell")
    budget = _positive_int(data.get("max_proposals_per_cell", DEFAULT_MAX_PROPOSALS_PER_CELL), source,
                           "max_proposals_per_cell")
    raw_dims = data.get("dimensions")
    _require(isinstance(raw_dims, list) and bool(raw_dims), source, "dimensions", "declare at least one dimension")
    dims = tuple(_parse_dimension(raw, f"dimensions[{i}]", source) for i, raw in enumerate(raw_dims))
    names = [d.name for d in dims]
    _require(len(set(names)) == len(names), source, "dimensions", "dimension names repeat")
    overrides = []
    for i, raw in enumerate(data.get("targets") or []):
        where = f"targets[{i}]"
        _require(isinstance(raw, dict) and isinstance(raw.get("where"), dict), source, where,
                 "a target override is {where: {dim: value}, target: n}")
        match = {}
        for name, text in raw["where"].items():
            dim = next((d for d in dims if d.name == name), None)
            _require(dim is not None, source, f"{where}.where", f"unknown dimension {name!r}")
            assert dim is not None
            match[name] = dim.find(str(text), source)
        overrides.append((match, _positive_int(raw.get("target"), source, f"{where}.target")))
    cells = []
    for combo in product(*(d.coords for d in dims)):
        coords = {c.dim: c for c in combo}
        n = target
        for match, value in overrides:
            if all(coords[d] == c for d, c in match.items()):
                n = value
        cells.append(Cell(cell_id(combo), coords, n))
    return CoverageSpec(intent, template, dims, tuple(cells), budget, source)
