"""The committed JSON Schema of the manifest is current and agrees with the models."""

from __future__ import annotations

import json

import pytest

from simready.scenario.manifest import manifest_bytes
from simready.scenario.schema_export import SCHEMA_FILE, export_schema, manifest_schema_text
from tests.fixtures.manifests import make_manifest, manifest_dict


def test_committed_schema_equals_a_fresh_export() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == manifest_schema_text(), (
        "data/schemas/manifest.schema.json is stale: run python -m simready.scenario.schema_export"
    )


def test_export_is_stable(tmp_path: object) -> None:
    path = export_schema(tmp_path / "schema.json")  # type: ignore[operator]
    assert path.read_text(encoding="utf-8") == manifest_schema_text() == manifest_schema_text()


def test_schema_accepts_a_valid_manifest_and_rejects_unknown_keys() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(manifest_schema_text()))
    validator.validate(json.loads(manifest_bytes(make_manifest())))
    bad = manifest_dict()
    bad["actors"][0]["initial"]["pose"]["z"] = 0.0
    assert not validator.is_valid(bad)
