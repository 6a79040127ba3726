"""The release datasheet for a reader (issue 28 item 6): the coverage gap, collisions, what weights mean, as
Markdown and as the same page in HTML, which a browser shows within 1600 px."""

from __future__ import annotations


import pytest

from simready.release.datasheet import coverage_gap, datasheet_html, datasheet_markdown

COVERAGE = {"cells": [
    {"intent": "cut_in", "cell": "a=1|b=2", "target": 2, "proposals": 0, "accepted": 0, "under_target": True,
     "dominant_rejection": "never proposed"},
    {"intent": "cut_in", "cell": "a=1|b=3", "target": 3, "proposals": 4, "accepted": 0, "under_target": True,
     "dominant_rejection": "interaction.gap"},
    {"intent": "cut_in", "cell": "a=2|b=2", "target": 1, "proposals": 2, "accepted": 1, "under_target": False,
     "dominant_rejection": ""},
    {"intent": "cut_in", "cell": "a=2|b=3", "target": 2, "proposals": 2, "accepted": 1, "under_target": True,
     "dominant_rejection": ""},
]}


def _sheet() -> dict:
    return {"suite_id": "default",
            "counts": {s: {"samples": 1, "branches": 2, "weight": 3.0, "files": 5, "bytes": 2_000_000}
                       for s in ("train", "val", "test")},
            "by_intent": {"cut_in": {"train": 1, "val": 1, "test": 1}}, "by_cell": {"a=2|b=2": {"train": 1, "val": 0, "test": 0}},
            "by_branch": {"coast": {"train": 1, "val": 1, "test": 1}},
            "gate": {"policy_version": ["gate-1.4.0"], "bases_accepted": 3, "bases_rejected": 0,
                     "branches": {"coast": {"accepted": 3}}, "matched_sets_whole": "3/3", "low_fidelity_share": 0.0,
                     "scale_factor": 1.0, "released_mean": {"validity": 0.9}},
            "versions": {"sim": "sim-9"}, "coverage_gap": coverage_gap(COVERAGE),
            "collisions": {"coast": {"lead": 2, "ped": 1}}}


ITEMS = [{"item": "identity", "passed": True, "checks": [
    {"check": "gate.identity", "result": "3/3 passed", "blocking": False},
    {"check": "catalog_certified", "result": "9/9 passed", "blocking": True}]}]


def test_the_gap_names_the_empty_cells_and_why():
    gap = coverage_gap(COVERAGE)
    assert (gap["cells"], gap["with_none"], gap["with_some"], gap["filled"]) == (4, 2, 1, 1)
    assert [(c["cell"], c["why"]) for c in gap["largest_empty"]] == [
        ("a=1|b=3", "infeasible: 4 proposed, all rejected (interaction.gap)"), ("a=1|b=2", "not yet drawn")]
    assert coverage_gap(None) is None


def test_markdown_and_html_say_the_same():
    md = datasheet_markdown("sha256:ab", _sheet(), ITEMS)
    assert "gate.identity 3/3 passed (scored, not required)" in md and "catalog_certified 9/9 passed |" in md
    assert "| coast | lead | 2 |" in md and "2 with no sample, 1 with some (under target), 1 filled" in md
    assert "weight 45.00 is worth 45 high-fidelity variants" in md
    html = datasheet_html("sha256:ab", _sheet(), ITEMS)
    assert html == datasheet_html("sha256:ab", _sheet(), ITEMS)  # deterministic
    assert "<h2>Coverage gap</h2>" in html and "<td>a=1|b=3</td>" in html and "<script" not in html


@pytest.mark.slow
def test_the_html_datasheet_reads_in_a_browser_at_1600_px(tmp_path, browser):
    page_file = tmp_path / "datasheet.html"
    page_file.write_text(datasheet_html("sha256:ab", _sheet(), ITEMS))
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    try:
        page.goto(page_file.as_uri())
        headings = page.locator("h2").all_inner_texts()
        assert {"Coverage gap", "Collisions", "What a weight means", "World-trajectory QA checklist"} <= set(headings)
        assert page.locator("table").count() >= 6
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        page.close()
