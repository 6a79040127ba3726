"""The `simready` CLI for the world stage: exit codes and one-line errors."""

from __future__ import annotations

import shutil
import subprocess
import sys

import yaml

from simready.common import paths
from simready.cli import main


def test_template_validate_prints_hashes_and_exits_zero(capsys):
    files = [str(p) for p in sorted(paths.TEMPLATES_DIR.glob("*.yaml"))]
    assert main(["template", "validate", *files]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == len(files)
    assert all(" sha256:" in line for line in out)


def test_template_validate_unknown_asset_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "residential_crosswalk_v3.yaml"
    data = yaml.safe_load((paths.TEMPLATES_DIR / "residential_crosswalk_v3.yaml").read_text())
    data["instances"][1]["asset"] = "asset:no_such/thing"
    bad.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["template", "validate", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(bad) in err and "instances[1]" in err and "asset:no_such/thing" in err


def test_template_validate_malformed_yaml(tmp_path, capsys):
    bad = tmp_path / "broken.yaml"
    bad.write_text("id: broken\nregions: [\n")
    assert main(["template", "validate", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err and "line" in err


def test_catalog_certify_real_catalog_passes(capsys):
    assert main(["catalog", "certify"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out
    n = len(list(paths.CATALOG_GENERATED_DIR.glob("*/*/entry.json")))
    assert f"{n}/{n} entries certified" in out


def test_catalog_certify_broken_copy_fails(tmp_path, capsys):
    from simready.catalog.catalog import ensure_catalog

    ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    copy = tmp_path / "generated"
    shutil.copytree(paths.CATALOG_GENERATED_DIR, copy)
    entry = next(copy.glob("delivery_van/white/entry.json"))
    data = yaml.safe_load(entry.read_text())
    data["license"] = ""
    import json

    entry.write_text(json.dumps(data))
    assert main(["catalog", "certify", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  asset:delivery_van/white" in out and "licen" in out


def test_console_script_help_runs():
    result = subprocess.run([sys.executable, "-m", "simready.cli", "--help"], capture_output=True, text=True, check=True)
    assert "catalog" in result.stdout and "template" in result.stdout
