"""Reading and writing manifests: parse and load (one :class:`~simready.common.errors.ManifestError` per problem), canonical
bytes, hash and atomic write.

``parse_manifest`` / ``load_manifest`` turn every problem into one
:class:`~simready.common.errors.ManifestError` naming the field path
(``actors[1].initial.speed_mps``) and the reason. A manifest equals its own
canonical serialization: ``parse_manifest(json.loads(manifest_bytes(m))) ==
m`` and the bytes of the re-serialization are identical.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from simready.common.atomic import write_bytes_atomic
from simready.common.errors import ManifestError, pydantic_reason
from simready.common.hashing import canonical_json, sha256_bytes
from simready.common.loading import load_json
from simready.scenario.manifest.base import CROSS_FIELD_ERROR
from simready.scenario.manifest.model import ScenarioManifest

_DISCRIMINATOR_KEYS = ("kind", "shape")
_IDENTIFIER_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _join(base: str, tail: str) -> str:
    if not tail:
        return base
    if not base:
        return tail.lstrip(".")
    return base + tail if tail.startswith("[") else f"{base}.{tail}"


def _format_loc(loc: tuple[Any, ...], data: Any) -> str:
    """Pydantic's error location as ``actors[1].initial.speed_mps``, guided by the input.

    The input tells apart a field name from a discriminated union's tag
    (``trigger.at.t_s`` is really ``trigger.t_s``) and from a union member
    label; those are dropped.
    """
    path = ""
    node = data
    for elem in loc:
        if isinstance(node, dict):
            if elem in node:
                node = node[elem]
            elif any(node.get(k) == elem for k in _DISCRIMINATOR_KEYS):
                continue
            else:
                node = None
            key = str(elem)
            path = _join(path, key if _IDENTIFIER_KEY.match(key) else f"[{json.dumps(key)}]")
        elif isinstance(node, list) and isinstance(elem, int):
            path = _join(path, f"[{elem}]")
            node = node[elem] if -len(node) <= elem < len(node) else None
        else:
            break
    return path


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_line(text: str, limit: int = 300) -> str:
    # Pydantic quotes raw input into some messages; the CLI prints one line.
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _manifest_error(exc: ValidationError, data: Any, source: str) -> ManifestError:
    err = exc.errors(include_url=False)[0]
    path = _format_loc(tuple(err["loc"]), data)
    if err["type"] == CROSS_FIELD_ERROR:
        ctx = err.get("ctx") or {}
        return ManifestError(source, _join(path, str(ctx.get("path", ""))), _one_line(str(ctx.get("reason", ""))))
    reason = pydantic_reason(err)
    if err["loc"] and err["loc"][-1] == "[key]":
        reason = f"invalid key: {reason}"
    elif err["type"] not in ("missing", "extra_forbidden") and isinstance(err.get("input"), (bool, int, float, str)):
        reason = f"{reason} (got {_short_repr(err['input'])})"
    return ManifestError(source, path, _one_line(reason))


def parse_manifest(data: Any, source: str | Path) -> ScenarioManifest:
    """Validate a JSON-like value as a manifest; any problem raises :class:`ManifestError`."""
    if not isinstance(data, dict):
        raise ManifestError(source, "", f"a manifest is a JSON object, not {type(data).__name__}")
    try:
        return ScenarioManifest.model_validate(data)
    except ValidationError as exc:
        raise _manifest_error(exc, data, str(source)) from None


def load_manifest(path: str | Path) -> ScenarioManifest:
    """Read and validate a manifest file; unreadable, malformed or invalid input raises :class:`ManifestError`."""
    return parse_manifest(load_json(path, ManifestError, allow_nan=True), path)


def manifest_bytes(m: ScenarioManifest) -> bytes:
    """Canonical JSON of ``m`` (sorted keys, rounded floats), in its declared order."""
    return canonical_json(m.model_dump(mode="json", by_alias=True)).encode("utf-8")


def canonicalize(m: ScenarioManifest) -> ScenarioManifest:
    """``m`` with its id-keyed lists sorted by id, so declaration order cannot matter downstream."""

    def by_id(items: list[Any]) -> list[Any]:
        return sorted(items, key=lambda item: item.id)

    return m.model_copy(
        update={
            "actors": by_id(m.actors),
            "interactions": by_id(m.interactions),
            "signal_programs": by_id(m.signal_programs),
            "occluders": by_id(m.occluders),
        }
    )


def manifest_hash(m: ScenarioManifest) -> str:
    """``sha256:<hex>`` of the canonicalized manifest: equal for manifests that differ only in order."""
    return sha256_bytes(manifest_bytes(canonicalize(m)))


def write_manifest(m: ScenarioManifest, path: str | Path) -> Path:
    """Write ``manifest_bytes(m)`` atomically; the file's sha256 is ``manifest_hash(m)`` when m is canonical."""
    return write_bytes_atomic(path, manifest_bytes(m))
