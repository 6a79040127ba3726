"""Canonical hashing: key order and float spelling never change the hash."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.common.hashing import canonical_json, content_hash

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False, width=64), st.text(max_size=8))
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)),
    max_leaves=20,
)


def _reverse_keys(value):
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(v) for v in value]
    return value


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_key_order_does_not_change_hash(value):
    assert content_hash(value) == content_hash(_reverse_keys(value))


def test_float_spelling_does_not_change_hash():
    assert content_hash({"x": 1}) == content_hash({"x": 1.0}) == content_hash({"x": float("1.000")})
    assert content_hash({"x": 0.1 + 0.2}) == content_hash({"x": 0.3})


def test_one_centimetre_changes_hash():
    assert content_hash({"x": 12.30}) != content_hash({"x": 12.31})


def test_non_finite_refused():
    with pytest.raises(ValueError):
        canonical_json({"x": math.nan})
