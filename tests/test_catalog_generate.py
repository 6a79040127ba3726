"""Generation: byte-identical output, atomic replacement, staleness, CLI."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from simready.common import paths
from simready.catalog import catalog as catalog_mod
from simready.catalog.catalog import ensure_catalog, is_up_to_date, load_catalog
from simready.catalog.contract import load_contract
from simready.catalog.generate import INDEX_FILE, generate_catalog, main, read_index
from simready.common.errors import CatalogError
from tests.fixtures.catalog import VAN


def _file_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _contracts_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "contracts"
    shutil.copytree(paths.CATALOG_CONTRACTS_DIR, dst)
    return dst


def test_generation_is_byte_identical(generated_catalog: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate_catalog(paths.CATALOG_CONTRACTS_DIR, again)
    first, second = _file_hashes(generated_catalog), _file_hashes(again)
    assert len(first) >= 15 * 4
    assert first == second


def test_layout_and_index(generated_catalog: Path) -> None:
    index = read_index(generated_catalog)
    ids = [row["id"] for row in index["entries"]]
    assert ids == sorted(ids) and len(ids) >= 15
    van = generated_catalog / "delivery_van" / "white"
    names = sorted(p.name for p in van.iterdir())
    assert names == ["collision_00.obj", "collision_01.obj", "collision_02.obj", "collision_03.obj",
                     "collision_04.obj", "entry.json", "model.urdf", "render.obj"]
    assert not list(generated_catalog.parent.glob(".*tmp"))


def test_entry_records_contract_and_hashes(generated_catalog: Path) -> None:
    cat = load_catalog(generated_catalog)
    entry = cat.entry(VAN)
    _, sha = load_contract(paths.CATALOG_CONTRACTS_DIR / "delivery_van__white.yaml")
    assert entry.contract_sha256 == sha
    assert entry.render_geometry.sha256.startswith("sha256:")
    assert [ref.file for ref in entry.collision_geometry] == [f"collision_0{i}.obj" for i in range(5)]


def test_template_views(generated_catalog: Path) -> None:
    """What template validation and plotting read: mounts per contract, footprints per asset."""
    cat = load_catalog(generated_catalog)
    assert cat.footprints()[VAN] == (5.9, 2.05)
    assert cat.contracts()["asset:shuttle/standard"].mounts["front_camera"].translation_m == (1.8, 0.0, 1.45)
    with pytest.raises(CatalogError, match="no catalog entry"):
        cat.entry("asset:teapot/blue")


def test_colour_variants_share_geometry(generated_catalog: Path) -> None:
    cat = load_catalog(generated_catalog)
    white, red = cat.entry("asset:delivery_van/white"), cat.entry("asset:delivery_van/red")
    assert white.render_geometry == red.render_geometry
    assert white.material.albedo_rgb != red.material.albedo_rgb
    assert white.split_lineage_key == red.split_lineage_key == "family:delivery_van"


def test_failed_generation_leaves_previous_catalog(tmp_path: Path) -> None:
    contracts = _contracts_copy(tmp_path)
    out = tmp_path / "generated"
    generate_catalog(contracts, out)
    before = _file_hashes(out)
    bad = contracts / "sedan__grey.yaml"
    bad.write_text(bad.read_text().replace("ground_clearance: 0.17", "ground_clearance: 0.5"))
    with pytest.raises(CatalogError) as err:
        generate_catalog(contracts, out)
    assert err.value.field == "generator.params.wheel_radius"
    assert "sedan__grey.yaml" in err.value.one_line()
    assert _file_hashes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contracts", "generated"]


def test_ensure_catalog_regenerates_only_when_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    contracts = _contracts_copy(tmp_path)
    out = tmp_path / "generated"
    assert not is_up_to_date(contracts, out)
    cat = ensure_catalog(contracts, out)
    assert VAN in cat.entries and is_up_to_date(contracts, out)

    def refuse(*_: object) -> None:
        raise AssertionError("regenerated an up-to-date catalog")

    monkeypatch.setattr(catalog_mod, "generate_catalog", refuse)
    ensure_catalog(contracts, out)
    monkeypatch.undo()

    van = contracts / "delivery_van__white.yaml"
    van.write_text(van.read_text().replace("mass_kg: 2600", "mass_kg: 2700"))
    assert not is_up_to_date(contracts, out)
    assert ensure_catalog(contracts, out).entry(VAN).mass_kg == 2700.0


def test_reordered_contract_is_not_stale(tmp_path: Path) -> None:
    contracts = _contracts_copy(tmp_path)
    out = tmp_path / "generated"
    ensure_catalog(contracts, out)
    van = contracts / "delivery_van__white.yaml"
    lines = van.read_text().splitlines()
    van.write_text("\n".join([lines[8], *lines[:8], *lines[9:]]) + "\n")  # mass_kg first
    assert is_up_to_date(contracts, out)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "generated"
    assert main(["--contracts", str(paths.CATALOG_CONTRACTS_DIR), "--out", str(out)]) == 0
    assert (out / INDEX_FILE).is_file()
    assert "catalog entries" in capsys.readouterr().out
    assert main(["--contracts", str(tmp_path / "none"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
