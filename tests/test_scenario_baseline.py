"""The independent baseline: same variables, same ladder, far lower yield."""

from __future__ import annotations

from simready.catalog.catalog import ensure_catalog
from simready.scenario.baseline import run_baseline
from simready.scenario.coverage_counts import UNASSIGNED
from simready.scenario.generator import generate


def test_baseline_goes_through_the_same_ladder_and_rarely_survives() -> None:
    catalog = ensure_catalog()
    base = run_baseline("residential_crosswalk_v3", "pedestrian_emerges_behind_van", 150, catalog=catalog)
    cond = generate("residential_crosswalk_v3", "pedestrian_emerges_behind_van", 10, catalog=catalog)
    b, c = base.coverage, cond.coverage
    assert b.proposals == 150 == b.accepted + b.rejected
    assert b.accepted / b.proposals < 0.05 < c.accepted / c.proposals
    stages = {r.stage for r in base.rejections}
    assert stages <= {"semantics", "schema", "bounds", "support", "non_penetration", "reachability", "occlusion",
                      "rollout", "coverage_cell", "capture"}
    assert "sampling" not in stages  # the baseline asks no relation of the template
    assert all(r.sample_id.startswith("rc3-ped-base-") for r in base.rejections)
    assert UNASSIGNED in b.cells and b.cells[UNASSIGNED].rejected > 0
