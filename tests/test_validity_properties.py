"""Property tests of the validity gate: scores in [0, 1], weights per policy, the suite share cap."""

from __future__ import annotations

import re

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready.testing.synthetic import DT, sort_ticks, street_pool, street_sensor, street_ticks
from simready.validity import policy
from simready.validity.features import ReferenceProfile
from simready.validity.gate import (
    CHECK_NAMES,
    CheckResult,
    PolicyVersionError,
    ScenarioEvidence,
    SuiteError,
    ValidityReport,
    apply_suite_weight_policy,
    validate_scenario,
    weight_policy,
)

CLIP_S = 2.0
TICKS, CLASSES, DIMS = street_ticks(CLIP_S)
PROFILE = ReferenceProfile.from_pool(street_pool(4, clip_s=CLIP_S))
SENSOR = street_sensor(TICKS, DIMS)
COLUMNS = ("x", "y", "qz", "qw", "vx", "vy", "speed_mps", "t")
VALUES = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1e9, -3.0, 250.0])


@st.composite
def corruptions(draw):
    """A list of edits to the clean short scene: bad values, jumps, flips, duplicates, absences."""
    edits = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["value", "jump", "flip", "duplicate", "absent", "scale_v"]))
        actor = draw(st.sampled_from(sorted(CLASSES)))
        lo = draw(st.integers(0, len(TICKS) // 3 - 1))
        hi = lo + draw(st.integers(0, 20))
        edits.append((kind, actor, lo, hi, draw(st.sampled_from(COLUMNS)), draw(VALUES), draw(st.floats(-50, 50))))
    return edits


def _apply(edits) -> pd.DataFrame:
    t = TICKS.copy()
    t["actor_class"] = t["actor_id"].map(CLASSES)
    for kind, actor, lo, hi, column, value, amount in edits:
        m = (t["actor_id"] == actor) & t["tick"].between(lo, hi)
        if kind == "value":
            t.loc[m, column] = value
        elif kind == "jump":
            t.loc[(t["actor_id"] == actor) & (t["tick"] >= lo), "x"] += amount
        elif kind == "flip":
            t.loc[m, "actor_class"] = "cyclist"
        elif kind == "duplicate":
            t = sort_ticks(pd.concat([t, t[m]], ignore_index=True))
        elif kind == "absent":
            t.loc[m, "present"] = False
        else:
            t.loc[m, ["vx", "vy"]] *= amount
    return t


def _check_report(r: ValidityReport) -> None:
    s = r.scores()
    assert set(s) == set(CHECK_NAMES)
    for value in (*s.values(), r.fidelity, r.realism, r.validity, r.weight):
        assert 0.0 <= value <= 1.0
    assert r.fidelity == pytest.approx(0.4 * s["physical"] + 0.3 * s["temporal"] + 0.3 * s["sensor"], abs=1e-12)
    assert r.validity == pytest.approx(0.5 * r.fidelity + 0.2 * s["identity"] + 0.3 * s["distribution"], abs=1e-12)
    assert r.accepted == (r.check("physical").passed and r.check("temporal").passed and r.validity >= 0.5)
    assert (r.weight, r.capped) == weight_policy(r.accepted, r.fidelity)
    assert r.accepted or r.reasons
    json.loads(r.model_dump_json())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corruptions(), st.booleans(), st.booleans(), st.booleans())
def test_scores_stay_in_unit_interval_and_follow_the_formulas(edits, with_sensor, with_pool, with_baseline):
    ticks = _apply(edits)
    ev = ScenarioEvidence(
        sample_id="prop", ticks=ticks, actor_classes=CLASSES, dt=DT, actor_dims=DIMS, ego_id="ego",
        baseline_ticks=TICKS if with_baseline else None, sensor=SENSOR if with_sensor else None,
        reference_pool=PROFILE if with_pool else None,
    )
    _check_report(validate_scenario(ev))


@given(st.booleans(), st.floats(0.0, 1.0))
def test_weight_policy(accepted, fidelity):
    weight, capped = weight_policy(accepted, fidelity)
    if not accepted:
        assert (weight, capped) == (0.0, False)
    elif fidelity >= policy.HIGH_FIDELITY_MIN:
        assert (weight, capped) == (1.0, False)
    else:
        assert (weight, capped) == (policy.LOW_FIDELITY_WEIGHT_CAP, True)


def _report(sample_id: str, accepted: bool, fidelity: float, version: str = policy.POLICY_VERSION) -> ValidityReport:
    weight, capped = weight_policy(accepted, fidelity)
    checks = [CheckResult(check=c, passed=accepted, score=fidelity, detail={}) for c in CHECK_NAMES]
    return ValidityReport(sample_id=sample_id, policy_version=version, checks=checks, fidelity=fidelity, realism=fidelity,
                          validity=fidelity, accepted=accepted, low_fidelity=fidelity < policy.HIGH_FIDELITY_MIN,
                          weight=weight, capped=capped, reasons=[] if accepted else ["rejected"])


@given(st.lists(st.tuples(st.booleans(), st.floats(0.0, 1.0)), max_size=40))
def test_suite_share_is_capped_whenever_high_fidelity_weight_exists(items):
    reports = [_report(f"s{i}", a, f) for i, (a, f) in enumerate(items)]
    out = apply_suite_weight_policy(reports)
    w = out["weights"]
    assert set(w) == {r.sample_id for r in reports}
    w_high = sum(r.weight for r in reports if r.accepted and not r.capped)
    w_low = sum(r.weight for r in reports if r.capped)
    if w_high > 0:
        assert out["low_fidelity_share"] <= policy.SUITE_LOW_FIDELITY_SHARE_CAP + 1e-12
    elif w_low > 0:
        assert all(w[r.sample_id] == 0.0 for r in reports if r.capped)
    for r in reports:
        if r.capped:
            assert w[r.sample_id] == pytest.approx(r.weight * out["scale_factor"])
            assert 0.0 <= w[r.sample_id] <= r.weight
        else:
            assert w[r.sample_id] == r.weight
    before = w_low / (w_high + w_low) if w_high + w_low else 0.0
    assert out["scaled_down"] == (before > policy.SUITE_LOW_FIDELITY_SHARE_CAP)
    if out["scaled_down"] and w_high > 0:
        assert out["low_fidelity_share"] == pytest.approx(policy.SUITE_LOW_FIDELITY_SHARE_CAP)
        assert out["scale_factor"] == pytest.approx(0.25 * w_high / (0.75 * w_low))


def test_suite_mixing_policy_versions_is_refused():
    reports = [_report("a", True, 0.9), _report("b", True, 0.9, version="gate-0.9.0")]
    current = re.escape(policy.POLICY_VERSION)
    with pytest.raises(PolicyVersionError, match=rf"mix validity policy versions gate-0\.9\.0 \(1 report\), {current} \(1 report\)"):
        apply_suite_weight_policy(reports)


def test_suite_under_another_policy_is_refused():
    with pytest.raises(PolicyVersionError, match="scored under policy gate-0.9.0"):
        apply_suite_weight_policy([_report("a", True, 0.9, version="gate-0.9.0")])


def test_suite_listing_a_sample_twice_is_refused():
    with pytest.raises(SuiteError, match="sample a appears twice"):
        apply_suite_weight_policy([_report("a", True, 0.9), _report("a", True, 0.5)])


def test_empty_suite():
    out = apply_suite_weight_policy([])
    assert out["weights"] == {} and out["low_fidelity_share"] == 0.0 and not out["scaled_down"]


@pytest.mark.parametrize("u, score", [(0.0, 1.0), (0.8, 1.0), (0.9, 0.75), (1.0, 0.5), (2.0, 0.25), (float("inf"), 0.0),
                                      (float("nan"), 0.0)])
def test_headroom_score(u, score):
    assert policy.headroom_score(u) == pytest.approx(score)


def test_policy_record_names_every_constant():
    rec = policy.policy_record()
    assert rec["POLICY_VERSION"] == policy.POLICY_VERSION
    assert rec["CLASS_LIMITS"]["pedestrian"] == {"max_speed_mps": 3.5, "max_accel_mps2": 8.0}
    assert rec["FIDELITY_WEIGHTS"] == {"physical": 0.4, "temporal": 0.3, "sensor": 0.3}
    json.dumps(rec)


def test_scene_without_ticks_is_rejected():
    ev = ScenarioEvidence(sample_id="empty", ticks=TICKS.iloc[:0], actor_classes=CLASSES, dt=DT)
    r = validate_scenario(ev)
    assert not r.accepted
    _check_report(r)
