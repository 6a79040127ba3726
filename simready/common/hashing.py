"""Canonical content hashing.

Why: a world template or manifest must hash the same whatever its key order,
whitespace or float spelling (``1``, ``1.0``, ``1.000``, ``1e0``), and differently
as soon as a value really changes (a curb moved by 1 cm). Floats are rounded to
``FLOAT_DECIMALS`` decimals (1 nm in metres) and printed in Python's shortest
round-trip repr, so equal values always serialize to equal bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

FLOAT_DECIMALS = 9
HASH_PREFIX = "sha256:"


def _canonical_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite float {value!r} cannot be hashed canonically")
        rounded = round(value, FLOAT_DECIMALS)
        if rounded == int(rounded) and abs(rounded) < 2**53:
            # 1.0 and 1 are the same quantity: hash them identically.
            return int(rounded)
        return rounded
    if isinstance(value, dict):
        return {str(k): _canonical_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical_value(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _canonical_value(value.tolist())
    raise TypeError(f"cannot hash value of type {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """Serialize ``value`` to canonical JSON: sorted keys, no spaces, rounded floats."""
    return json.dumps(
        _canonical_value(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def sha256_bytes(data: bytes) -> str:
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()


def content_hash(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return sha256_bytes(canonical_json(value).encode("utf-8"))


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return HASH_PREFIX + h.hexdigest()
