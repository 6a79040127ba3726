"""Coverage declarations: cells as a cross product, ids, cell specs, bad input."""

from __future__ import annotations

import pytest

from simready.scenario.coverage import CoverageError
from simready.scenario.coverage_file import load_coverage, parse_coverage
from simready.scenario.programs import PROGRAMS

SPEC = {
    "intent": "demo",
    "target_per_cell": 2,
    "dimensions": [
        {"name": "ttc_s", "key": "ttc_s", "bins": [[1.0, 2.0], [2.0, 3.0]]},
        {"name": "occlusion", "key": "occ", "bins": [[0.0, 0.05], [0.05, 0.1]], "labels": ["full", "heavy"]},
        {"name": "illumination", "key": "env.illumination", "values": ["day", "night"]},
    ],
    "targets": [{"where": {"illumination": "night"}, "target": 5}],
}


def test_cells_are_the_cross_product_in_declared_order() -> None:
    spec = parse_coverage(SPEC)
    assert len(spec.cells) == 8
    assert spec.cells[0].id == "ttc_s=1.0..2.0|occlusion=full|illumination=day"
    assert spec.cells[1].id == "ttc_s=1.0..2.0|occlusion=full|illumination=night"
    assert [c.target for c in spec.cells[:2]] == [2, 5]
    assert spec.cells[0].manifest_dict()["dims"] == {"ttc_s.lo": 1.0, "ttc_s.hi": 2.0, "occlusion.lo": 0.0,
                                                     "occlusion.hi": 0.05, "occlusion": "full",
                                                     "illumination": "day"}


def test_bins_are_half_open_except_the_last_which_is_closed() -> None:
    spec = parse_coverage(SPEC)
    assert spec.locate({"ttc_s": 2.0, "occ": 0.1, "env.illumination": "day"}).id == \
        "ttc_s=2.0..3.0|occlusion=heavy|illumination=day"
    assert spec.locate({"ttc_s": 3.0, "occ": 0.0, "env.illumination": "day"}) is not None
    assert spec.locate({"ttc_s": 3.01, "occ": 0.0, "env.illumination": "day"}) is None
    assert spec.locate({"ttc_s": 1.5, "occ": 0.0, "env.illumination": "dusk"}) is None


def test_cell_specs_select_matching_cells() -> None:
    spec = parse_coverage(SPEC)
    assert len(spec.select("ttc_s=1.0..2.0")) == 4
    assert len(spec.select("ttc_s=1..2, illumination=night")) == 2
    assert len(spec.select("occlusion=heavy|illumination=day|ttc_s=2.0..3.0")) == 1
    assert spec.select(spec.cells[3].id) == [spec.cells[3]]


@pytest.mark.parametrize("cell, reason", [
    ("ttc_s=2.0..2.0", "empty range"),
    ("ttc_s=3.0..2.0", "empty range"),
    ("ttc_s=1.5..2.5", "no declared ttc_s"),
    ("ttc_s=a..b", "not lo..hi"),
    ("colour=red", "unknown dimension 'colour'"),
    ("illumination=dusk", "no declared illumination 'dusk'"),
    ("illumination=1..2", "categorical"),
    ("ttc_s", "is not dim=value"),
    ("ttc_s=1.0..2.0|ttc_s=2.0..3.0", "given twice"),
    ("", "empty cell spec"),
])
def test_bad_cell_specs_are_one_line_errors(cell, reason) -> None:
    with pytest.raises(CoverageError) as err:
        parse_coverage(SPEC).select(cell)
    assert reason in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("mutate, reason", [
    (lambda d: d["dimensions"][0].update(bins=[[2.0, 2.0]]), "empty range"),
    (lambda d: d["dimensions"][0].update(bins=[[2.0, 3.0], [1.0, 2.5]]), "overlap"),
    (lambda d: d["dimensions"][1].update(labels=["only_one"]), "one non-empty string per bin"),
    (lambda d: d["dimensions"][2].update(values=["day", "day"]), "repeat"),
    (lambda d: d["dimensions"][2].pop("values"), "exactly one of values and bins"),
    (lambda d: d.update(target_per_cell=0), "positive integer"),
    (lambda d: d.update(dimensions=[]), "at least one dimension"),
    (lambda d: d["targets"][0]["where"].update(weather="wet"), "unknown dimension"),
])
def test_bad_coverage_files_are_one_line_errors(mutate, reason) -> None:
    import copy

    data = copy.deepcopy(SPEC)
    mutate(data)
    with pytest.raises(CoverageError) as err:
        parse_coverage(data, "cov.yaml")
    assert reason in str(err.value)


def test_every_intent_declares_its_cells_in_data() -> None:
    for intent in PROGRAMS:
        spec = load_coverage(intent)
        assert spec.intent == intent and spec.cells
        assert spec.template == PROGRAMS[intent].default_template
    with pytest.raises(CoverageError):
        load_coverage("no_such_intent")
