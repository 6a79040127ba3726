"""Physics settle and rollout checks as ladder stage 5: each problem is a rejection reason."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from simready.scenario.ladder import Fail, Ladder
from simready.sim.ladder.settle import PhysicsSettleStage, settle_check
from tests.fixtures.sim import catalog, crossing, edit, template


def _ego_into_the_van(d: dict) -> None:
    ego = d["actors"][0]
    ego["initial"]["lane_ref"] = None
    ego["initial"]["pose"] = {"x": 47.0, "y": -3.6, "yaw": 0.0}


@pytest.mark.slow
def test_clean_scenario_settles_and_rolls_out() -> None:
    report = settle_check(crossing(clip_s=2.0), template(), catalog=catalog())
    assert report.passed, report.reasons
    assert report.measured["settle_drift_m"] < 0.05
    assert report.measured["rollout_ticks"] == 250 + 100


def test_interpenetrating_start_is_rejected_with_reasons() -> None:
    m = edit(crossing(clip_s=2.0), _ego_into_the_van)
    report = settle_check(m, template(), catalog=catalog(), rollout=False)
    codes = [code for code, _ in report.reasons]
    assert "physics.energy_gain" in codes and "physics.unsettled" in codes
    assert all(detail for _, detail in report.reasons)


def test_stage_plugs_into_the_ladder() -> None:
    stage = PhysicsSettleStage(catalog(), rollout=False)
    assert (stage.name, stage.cost_rank, stage.level) == ("physics_settle", 50, 5)
    ladder = Ladder([stage])
    bad = SimpleNamespace(manifest=edit(crossing(clip_s=2.0), _ego_into_the_van), template=template(), draft=None,
                          sample_id="x", measured={}, measured_by={})
    result = ladder.evaluate(bad)
    assert isinstance(result.failure, Fail) and result.failure.stage == "physics_settle"
    assert result.failure.reason == "physics.energy_gain"
    assert bad.measured["physics.settle_energy_gain_j"] > 100.0
    good = SimpleNamespace(manifest=crossing(clip_s=2.0), template=template(), draft=None, sample_id="y", measured={},
                           measured_by={})
    assert ladder.evaluate(good).accepted
