"""Fuzzing the manifest parser: bad input raises ManifestError and nothing else.

Any other exception (KeyError, TypeError, ValueError, RecursionError...)
escaping ``parse_manifest`` / ``load_manifest`` is a bug; hypothesis reports
it as a test failure with the input that caused it.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready.common.errors import ManifestError
from simready.scenario.manifest import ScenarioManifest, load_manifest, manifest_bytes, parse_manifest
from tests.fixtures.manifests import manifest_dict

_VALID = manifest_dict()
_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_NASTY = st.sampled_from(
    [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 10**30, -(10**30), 2**63, -1, 0, 0.0, -0.0, "", "x" * 300,
     None, True, False, [], {}, [None], {"kind": "at"}, "ego", "sha256:" + "0" * 64]
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_FIELD_NAMES = sorted(
    set(ScenarioManifest.model_fields)
    | {"kind", "shape", "id", "actor_id", "trigger", "condition", "of", "x", "y", "yaw", "speed", "dynamics", "yield"}
)
_KEYS = st.sampled_from(_FIELD_NAMES) | st.text(max_size=8)
_JSON = st.recursive(
    _SCALARS | _NASTY,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=5),
    max_leaves=25,
)


def _check_parse(data: Any) -> ScenarioManifest | None:
    """Parse; a ManifestError must carry a field path and a reason; a success must round-trip."""
    try:
        m = parse_manifest(data, "fuzz.json")
    except ManifestError as err:
        assert isinstance(err.field, str)
        assert err.reason
        assert err.one_line().startswith("fuzz.json")
        assert "\n" not in err.reason
        return None
    again = parse_manifest(json.loads(manifest_bytes(m)), "again")
    assert again == m
    assert manifest_bytes(again) == manifest_bytes(m)
    return m


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    data = copy.deepcopy(_VALID)
    for _ in range(draw(st.integers(1, 3))):
        # Index draws (not sampled_from over mutable nodes) keep generation replayable; drawn values are copied,
        # since _NASTY's [] and {} are shared objects that a later "add_key" or "duplicate" would otherwise grow,
        # changing the paths of later examples (hypothesis: FlakyStrategyDefinition).
        paths = _paths(data)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        node = _at(data, path)
        op = draw(st.sampled_from(["delete", "replace", "replace", "add_key", "duplicate"]))
        if op == "add_key" and isinstance(node, dict):
            node[draw(_KEYS)] = copy.deepcopy(draw(_JSON))
        elif op == "duplicate" and isinstance(node, list) and node:
            node.append(copy.deepcopy(node[draw(st.integers(0, len(node) - 1))]))
        elif not path:
            continue
        else:
            parent = _at(data, path[:-1])
            if op == "delete":
                del parent[path[-1]]
            else:
                parent[path[-1]] = copy.deepcopy(draw(_JSON))
    return data


@_FUZZ
@given(st.dictionaries(_KEYS, _JSON, max_size=8))
def test_arbitrary_dicts_raise_only_manifest_error(data: dict[str, Any]) -> None:
    assert _check_parse(data) is None


@_FUZZ
@given(_JSON)
def test_arbitrary_json_values_raise_only_manifest_error(data: Any) -> None:
    assert _check_parse(data) is None


@settings(_FUZZ, max_examples=300)
@given(_mutated())
def test_mutated_manifests_raise_only_manifest_error(data: dict[str, Any]) -> None:
    _check_parse(data)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z_]{1,10}", fullmatch=True),
        st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**62), 2**62),
        max_size=6,
    ),
    st.floats(min_value=-1e6, max_value=1e6),
)
def test_any_finite_numbers_round_trip_exactly(realized: dict[str, float], x_m: float) -> None:
    data = copy.deepcopy(_VALID)
    data["realized"] = realized
    data["actors"][1]["initial"]["pose"]["x"] = x_m
    assert _check_parse(data) is not None


_VALID_BYTES = json.dumps(_VALID).encode()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, len(_VALID_BYTES) - 1), st.binary(min_size=1, max_size=3))
def test_corrupted_files_raise_only_manifest_error(tmp_path_factory: Any, pos: int, junk: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "m.json"
    path.write_bytes(_VALID_BYTES[:pos] + junk + _VALID_BYTES[pos + 1 :])
    try:
        load_manifest(path)
    except ManifestError as err:
        assert err.source == str(path)
