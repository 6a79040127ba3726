"""The bytes of an imported template: YAML in the section order of the hand-written ones, deterministic.

Keys keep the order the importer builds (id, regions, lanes, … as in
``data/templates``); leaf lists (points, polygons) are written in flow
style so a polygon is one line; floats are already rounded by the importer.

A city map's template holds hundreds of thousands of points; PyYAML's
representer spends ~10 µs on each number. So the numeric leaves — a list of
numbers (``[x, y]``, a ``z`` profile) or a list of such lists (a polyline, a
polygon) held by a mapping key — are formatted here, exactly as PyYAML's
emitter writes them (floats as its ``represent_float``, flow sequences
wrapped past column 120 at its indentation), and PyYAML writes the rest. The
bytes are PyYAML's own (``tests/test_maps_template_yaml.py`` compares them);
a 13 MB city template is written ~8x faster.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["template_yaml"]

#: PyYAML's line width for the flow sequences written here (``width=120``).
WIDTH = 120
_TOKEN = "__simready_leaf_{}__"
_TOKEN_RE = re.compile(r"^((?:- |  )*?)(- |)([^\s-][^\n]*?): \[__simready_leaf_(\d+)__\]$", re.MULTILINE)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe YAML that never writes anchors or aliases (the template loader refuses them).

    libyaml's emitter when built in: the same bytes as PyYAML's (checked on the
    test maps and a 30 MB city template), 2-3x faster on a city map.
    """

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _number(v: Any) -> str | None:
    """``v`` as PyYAML writes a plain int or float; None for anything else (a bool, a string, inf/nan)."""
    kind = type(v)
    if kind is float:
        text = repr(v)
        if "e" in text or "n" in text:  # an exponent (PyYAML writes 1.0e-05 for 1e-05), inf or nan
            if v != v or v in (float("inf"), float("-inf")):
                return None
            return text.replace("e", ".0e", 1) if "." not in text else text
        return text
    if kind is int:
        return str(v)
    return None


def _numbers(v: Any) -> list[str] | None:
    if type(v) is not list or not v:
        return None
    out = [_number(x) for x in v]
    return None if None in out else out  # type: ignore[return-value]


def _flow(items: list[str], column: int, indent: int) -> str:
    """``[a, b, ...]`` starting at ``column``, wrapped as PyYAML's emitter wraps a flow sequence."""
    joined = ", ".join(items)
    if column + 1 + len(joined) <= WIDTH:  # no item starts past the width: one line
        return f"[{joined}]"
    parts, col, space = ["["], column + 1, False
    for i, item in enumerate(items):
        if i:
            parts.append(",")
            col += 1
            space = True
        if col > WIDTH:
            parts.append("\n" + " " * indent)
            col, space = indent, False
        text = " " + item if space else item
        parts.append(text)
        col += len(text)
    parts.append("]")
    return "".join(parts)


def _lift(data: Any, leaves: list[Any]) -> Any:
    """``data`` with each numeric leaf held by a mapping key replaced by a token naming its place in ``leaves``."""
    if isinstance(data, dict):
        out = {}
        for key, value in data.items():
            flat = _numbers(value)
            rows = None if flat is not None or not isinstance(value, list) or not value else [_numbers(v) for v in value]
            if flat is not None or (rows is not None and all(r is not None for r in rows)):
                out[key] = [_TOKEN.format(len(leaves))]  # a collection, so its mapping stays in block style
                leaves.append(flat if flat is not None else rows)
            else:
                out[key] = _lift(value, leaves)
        return out
    if isinstance(data, list):
        return [_lift(v, leaves) for v in data]
    return data


def template_yaml(data: dict[str, Any]) -> str:
    provenance = data.get("provenance", {})
    head = (f"# World template imported from the OpenDRIVE map {provenance.get('source', '?')} "
            f"(sha256 {provenance.get('source_sha256', '?')}).\n"
            "# Written by `simready template import`; re-import rather than edit. World frame = the map's inertial\n"
            "# frame: metres, x east, y north, z up, yaw counter-clockwise from +x.\n")
    leaves: list[Any] = []
    skeleton = yaml.dump(_lift(data, leaves), Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=WIDTH,
                         allow_unicode=True)

    def fill(m: re.Match[str]) -> str:
        lead, dash, key, k = m.group(1), m.group(2), m.group(3), int(m.group(4))
        key_col = len(lead) + len(dash)
        leaf = leaves[k]
        if isinstance(leaf[0], str):  # a list of numbers: flow, on the key's line
            return f"{lead}{dash}{key}: " + _flow(leaf, key_col + len(key) + 2, key_col + 2)
        rows = "\n".join(" " * key_col + "- " + _flow(row, key_col + 2, key_col + 2) for row in leaf)
        return f"{lead}{dash}{key}:\n{rows}"

    return head + _TOKEN_RE.sub(fill, skeleton)
