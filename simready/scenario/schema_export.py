"""Export the manifest's JSON Schema to ``data/schemas/manifest.schema.json``.

Run ``python -m simready.scenario.schema_export``. The file is committed so
that tools outside Python can validate manifests, and a test fails when it
differs from a fresh export (the models changed but the schema was not
regenerated).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from simready.common.atomic import write_text_atomic
from simready.common.paths import SCHEMAS_DIR
from simready.scenario.manifest import ScenarioManifest

SCHEMA_FILE = SCHEMAS_DIR / "manifest.schema.json"


def manifest_schema_text() -> str:
    """The manifest's JSON Schema (validation mode, field aliases), sorted keys, two-space indent."""
    schema = ScenarioManifest.model_json_schema(by_alias=True, mode="validation")
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def export_schema(path: str | Path = SCHEMA_FILE) -> Path:
    return write_text_atomic(path, manifest_schema_text())


def main() -> int:
    print(export_schema())
    return 0


if __name__ == "__main__":
    sys.exit(main())
