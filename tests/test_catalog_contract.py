"""Contract YAML parsing: one-line CatalogErrors with field paths; order-free canonical hash."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.common import paths
from simready.catalog.contract import contract_hash, load_contract
from simready.world.identity import parse_asset_id
from simready.common.errors import CatalogError

VAN_YAML = paths.CATALOG_CONTRACTS_DIR / "delivery_van__white.yaml"


def _raw() -> dict[str, Any]:
    return yaml.safe_load(VAN_YAML.read_text())


def _write(tmp_path: Path, raw: dict[str, Any], name: str = "delivery_van__white.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def test_every_contract_loads() -> None:
    for path in sorted(paths.CATALOG_CONTRACTS_DIR.glob("*.yaml")):
        contract, sha = load_contract(path)
        assert sha.startswith("sha256:")
        assert parse_asset_id(contract.id) == (contract.family, contract.variant)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r.pop("mass_kg"), "mass_kg"),
        (lambda r: r.update(colour="white"), "colour"),
        (lambda r: r["material"].update(albedo_rgb=[0.9, 0.9]), "material.albedo_rgb[2]"),
        (lambda r: r["dimensions_m"].update(height=-1), "dimensions_m.height"),
        (lambda r: r.update(body_type="floating"), "body_type"),
        (lambda r: r.update(mounts={"cam": {"translation_m": [0, 0, "up"]}}), "mounts.cam.translation_m[2]"),
    ],
)
def test_bad_fields_name_their_path(tmp_path: Path, mutate: Any, field: str) -> None:
    raw = _raw()
    mutate(raw)
    with pytest.raises(CatalogError) as err:
        load_contract(_write(tmp_path, raw))
    assert err.value.field == field
    assert "\n" not in err.value.one_line() and "delivery_van__white.yaml" in err.value.one_line()


def test_yaml_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "delivery_van__white.yaml"
    path.write_text("id: [unclosed\nfamily: van\n")
    with pytest.raises(CatalogError, match="malformed YAML at line"):
        load_contract(path)


def test_file_name_must_match_family_and_variant(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as err:
        load_contract(_write(tmp_path, _raw(), name="van.yaml"))
    assert err.value.field == "family"


def test_policy_fields_parse_so_certification_can_reject_them(tmp_path: Path) -> None:
    raw = _raw()
    raw.pop("license")
    raw["units"] = "centimeter"
    contract, _ = load_contract(_write(tmp_path, raw))
    assert contract.license is None and contract.units == "centimeter"


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(sorted(paths.CATALOG_CONTRACTS_DIR.glob("*.yaml"))))
def test_hash_ignores_yaml_key_order(rng: random.Random, path: Path) -> None:
    raw = yaml.safe_load(path.read_text())
    text = yaml.safe_dump(_shuffled(raw, rng), sort_keys=False)
    assert contract_hash(yaml.safe_load(text)) == contract_hash(raw)


@settings(max_examples=25, deadline=None)
@given(st.floats(min_value=1500, max_value=5000, allow_nan=False).filter(lambda m: m != 2600))
def test_hash_changes_with_a_value(mass: float) -> None:
    raw = _raw()
    changed = {**raw, "mass_kg": mass}
    assert contract_hash(changed) != contract_hash(raw)


def test_float_spelling_does_not_change_hash() -> None:
    raw = _raw()
    assert contract_hash({**raw, "mass_kg": 2600.0}) == contract_hash({**raw, "mass_kg": 2600})
    assert contract_hash(yaml.safe_load(VAN_YAML.read_text().replace("friction: 0.8", "friction: 8.0e-1"))) == contract_hash(raw)
