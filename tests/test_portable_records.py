"""Records name the project's input files relative to the project root, so the same inputs give the same bytes
in every checkout (and the same dataset release id wherever it is built)."""

from __future__ import annotations

import json
from pathlib import Path

from simready.common import paths
from simready.catalog.build import build_certified_catalog
from simready.world.template_build import validate_template_file


def test_portable_is_relative_under_the_project_and_unchanged_outside(tmp_path: Path) -> None:
    assert paths.portable(paths.TEMPLATES_DIR / "x.yaml") == "data/templates/x.yaml"
    assert paths.portable(tmp_path / "x.yaml") == str(tmp_path / "x.yaml")


def test_template_validation_names_its_source_from_the_project_root() -> None:
    source = sorted(paths.TEMPLATES_DIR.glob("*.yaml"))[0]
    assert validate_template_file(source).report()["source"] == f"data/templates/{source.name}"


def test_certification_names_the_generated_folder_from_the_project_root(tmp_path: Path) -> None:
    build = build_certified_catalog(tmp_path / "catalog", paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    assert json.loads(build.report_path.read_text())["generated_dir"] == "data/catalog/generated"
