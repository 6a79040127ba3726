"""Certification: the real catalog passes; each broken fixture fails for its own reason."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from simready.catalog.certification import RULES
from simready.catalog.certification.policy import COLLIDER_VOLUME_REL_TOL
from simready.catalog.certify import certify_catalog, certify_entry
from simready.catalog.generate import read_index
from tests.fixtures.catalog import (
    EXPECTED_CODES,
    VAN,
    centimetre_units,
    chassis_box_collider,
    entry_dir_of,
    hidden_scale_geometry,
    inertia_times_10000,
    no_license,
)

REQUIRED_IDS = {
    "asset:delivery_van/white",
    "asset:delivery_van/red",
    "asset:sedan/grey",
    "asset:shuttle/standard",
    "asset:pedestrian_adult/standard",
    "asset:pedestrian_child/standard",
    "asset:cyclist/standard",
    "asset:road_surface/tile_10x3p5",
    "asset:road_surface/tile_10x10",
    "asset:curb/segment_10m",
    "asset:sidewalk/tile_10x2",
    "asset:crosswalk_marking/zebra_3x7",
    "asset:building/block_20x10x9",
    "asset:pole/street_light_6m",
    "asset:traffic_light/signal_head_5m",
    # The street of an imported map (simready.world.street).
    "asset:road_surface/strip_2p5x1",
    "asset:road_surface/strip_2p5x2",
    "asset:road_surface/strip_2p5x3",
    "asset:sidewalk/strip_2p5x1",
    "asset:sidewalk/strip_2p5x2",
    "asset:curb/segment_2p5m",
    "asset:lane_marking/dash_3m",
    "asset:lane_marking/line_2p5m",
    "asset:building/block_12x10x12",
    "asset:building/block_16x12x15",
    "asset:building/block_24x14x21",
    "asset:terrain/tile_20x20",
    "asset:crosswalk_marking/bar_3x0p5",
}


def test_real_catalog_all_passes(generated_catalog: Path) -> None:
    report = certify_catalog(generated_catalog)
    failures = {e.id: [r.message for r in e.reasons] for e in report.entries if not e.passed}
    assert failures == {}
    assert report.all_passed and report.n_failed == 0
    ids = [e.id for e in report.entries]
    assert len(ids) >= 15 and ids == sorted(ids)
    assert REQUIRED_IDS <= set(ids)


def test_table_has_a_row_per_entry(generated_catalog: Path) -> None:
    rows = certify_catalog(generated_catalog).to_table()
    assert [r["id"] for r in rows] == sorted(REQUIRED_IDS)
    assert {r["passed"] for r in rows} == {True}


def test_rule_codes_are_unique() -> None:
    codes = [r.code for r in RULES]
    # 10 procedural rules, plus import, plausibility and source_inertia (issue 16).
    assert len(codes) == len(set(codes)) == 13


@pytest.mark.parametrize("builder", list(EXPECTED_CODES), ids=lambda b: b.__name__)
def test_broken_entry_fails_for_its_own_reason(
    generated_catalog: Path, tmp_path: Path, builder: Callable[[Path, Path], Path]
) -> None:
    broken = builder(entry_dir_of(generated_catalog, VAN), tmp_path)
    result = certify_entry(broken)
    assert not result.passed
    assert result.codes == EXPECTED_CODES[builder], [r.message for r in result.reasons]
    assert result.id == VAN


def test_messages_name_the_numbers(generated_catalog: Path, tmp_path: Path) -> None:
    van = entry_dir_of(generated_catalog, VAN)
    msg = lambda builder, sub: certify_entry(builder(van, tmp_path / sub)).reasons[0].message  # noqa: E731
    assert msg(centimetre_units, "a") == "units 'centimeter' not allowed; only meter"
    assert msg(hidden_scale_geometry, "b") == "render extent z 2.678 m vs declared 2.600 m (×1.030)"
    assert "×10000" in msg(inertia_times_10000, "c")
    assert msg(no_license, "d") == "license missing or empty"
    box = msg(chassis_box_collider, "e")
    assert "outside the render volume" in box and f"tolerance {COLLIDER_VOLUME_REL_TOL * 100:g} %" in box


def test_chassis_box_keeps_bounds_but_adds_volume(generated_catalog: Path, tmp_path: Path) -> None:
    """The box fixture matches the render bounds exactly; the rule catches it on volume alone."""
    result = certify_entry(chassis_box_collider(entry_dir_of(generated_catalog, VAN), tmp_path))
    assert len(result.reasons) == 1 and "face" not in result.reasons[0].message


def test_all_failing_rules_are_reported(generated_catalog: Path, tmp_path: Path) -> None:
    """Faults stack: cm units on top of a stretched geometry gives both codes."""
    stretched = hidden_scale_geometry(entry_dir_of(generated_catalog, VAN), tmp_path / "a")
    both = centimetre_units(stretched, tmp_path / "b")
    assert certify_entry(both).codes == {"units", "hidden_scale"}


def test_catalog_with_one_broken_entry(generated_catalog: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "generated"
    shutil.copytree(generated_catalog, copy)
    van = entry_dir_of(copy, VAN)
    shutil.rmtree(van)
    no_license(entry_dir_of(generated_catalog, VAN), copy)
    report = certify_catalog(copy)
    assert not report.all_passed
    assert (report.n_passed, report.n_failed) == (len(read_index(copy)["entries"]) - 1, 1)
    row = next(r for r in report.to_table() if r["id"] == VAN)
    assert row == {"id": VAN, "passed": False, "codes": "license", "reasons": "license missing or empty"}


def test_unreadable_entry_json_is_a_rejection(generated_catalog: Path, tmp_path: Path) -> None:
    import shutil

    dst = tmp_path / "delivery_van" / "white"
    shutil.copytree(entry_dir_of(generated_catalog, VAN), dst)
    (dst / "entry.json").write_text('{"id": "asset:delivery_van/white"}')
    result = certify_entry(dst)
    assert result.codes == {"entry_schema"} and result.id == VAN
