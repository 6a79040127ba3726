"""Adversarial corpus for the validity gate (SPEC §12, issue 6 item 2).

Each case edits the clean street scene of :mod:`simready.testing.synthetic` in one way and
asserts the exact outcome the SPEC's formulas give — rejected, or accepted with the
weight the policy assigns — and that the reason names the actor and the number.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from simready.testing.synthetic import sort_ticks, street_evidence, street_sensor
from simready.validity import policy
from simready.validity.evidence import Collision, DryReference
from simready.validity.gate import ValidityReport, apply_suite_weight_policy, validate_scenario


@pytest.fixture(scope="module")
def clean():
    return street_evidence()


def _with(ev, **changes):
    return dataclasses.replace(ev, **changes)


def _expected_scores(r: ValidityReport) -> tuple[float, float]:
    s = r.scores()
    fidelity = 0.4 * s["physical"] + 0.3 * s["temporal"] + 0.3 * s["sensor"]
    validity = 0.5 * fidelity + 0.2 * s["identity"] + 0.3 * s["distribution"]
    return fidelity, validity


def _assert_formulas(r: ValidityReport) -> None:
    fidelity, validity = _expected_scores(r)
    assert r.fidelity == pytest.approx(fidelity, abs=1e-9)
    assert r.realism == r.check("distribution").score
    assert r.validity == pytest.approx(validity, abs=1e-9)
    accept = r.check("physical").passed and r.check("temporal").passed and r.validity >= 0.5
    assert r.accepted == accept
    if not r.accepted:
        assert (r.weight, r.capped) == (0.0, False)
    elif r.fidelity >= 0.8:
        assert (r.weight, r.capped) == (1.0, False)
    else:
        assert (r.weight, r.capped) == (0.30, True)


def _has(reasons: list[str], *fragments: str) -> None:
    assert any(all(f in r for f in fragments) for r in reasons), reasons


def test_clean_scene_is_accepted_at_full_weight(clean):
    r = validate_scenario(clean)
    assert r.accepted and r.weight == 1.0 and not r.capped and r.rejection_code is None
    assert all(c.passed for c in r.checks)
    assert r.scores() == {"physical": 1.0, "temporal": 1.0, "sensor": 1.0, "identity": 1.0, "distribution": 1.0}
    assert r.reasons == [] and r.policy_version == policy.POLICY_VERSION


def test_teleport_with_lying_velocity_is_rejected(clean):
    t = clean.ticks.copy()
    jump = (t["actor_id"] == "ego") & (t["tick"] >= 200)
    t.loc[jump, "x"] += 5.0  # positions jump 5 m at t = 4.00 s; stored velocity still says 10 m/s
    r = validate_scenario(_with(clean, ticks=t))
    _assert_formulas(r)
    assert not r.accepted and r.weight == 0.0 and r.rejection_code == "physical"
    assert not r.check("physical").passed and not r.check("temporal").passed and not r.check("identity").passed
    _has(r.reasons, "actor ego", "acceleration 12500.0 m/s² from positions", "vehicle limit 12.0 m/s²")
    _has(r.reasons, "actor ego", "speed 260.00 m/s (from positions)", "t=4.00 s")
    _has(r.reasons, "actor ego", "|Δx − v·dt| = 5.00 m", "t=4.00 s")
    _has(r.reasons, "actor ego", "id jumps 5.20 m in 0.02 s")


def _ped_at_6_mps(clean) -> pd.DataFrame:
    t = clean.ticks.copy()
    ped = t["actor_id"] == "ped"
    t.loc[ped, "y"] = -12.0 + 6.0 * t.loc[ped, "t"]
    t.loc[ped, "vy"] = 6.0
    t.loc[ped, "speed_mps"] = 6.0
    return t


def test_pedestrian_at_6_mps_is_rejected(clean):
    t = _ped_at_6_mps(clean)
    r = validate_scenario(_with(clean, ticks=t, baseline_ticks=t))
    _assert_formulas(r)
    assert not r.accepted and r.weight == 0.0
    assert r.check("temporal").passed  # positions and stored velocities agree: only the class limit is broken
    assert r.check("physical").score == pytest.approx(0.5 / (6.0 / 3.5))
    _has(r.reasons, "physical: actor ped: speed 6.00 m/s exceeds pedestrian limit 3.50 m/s at t=0.00 s")


def test_overlap_introduced_by_a_transformation_is_rejected(clean):
    t = clean.ticks.copy()
    t.loc[t["actor_id"] == "van", "y"] = -1.0  # the edit parks the van in the ego's lane
    r = validate_scenario(_with(clean, ticks=t))  # baseline: the untouched scene
    _assert_formulas(r)
    assert not r.accepted
    assert r.check("physical").detail["introduced_overlaps"] == 1
    _has(r.reasons, "actors ego and van: footprints overlap", "m² at t=3.", "not in the baseline")


def test_overlap_already_in_the_baseline_is_not_introduced(clean):
    t = clean.ticks.copy()
    t.loc[t["actor_id"] == "van", "y"] = -1.0
    r = validate_scenario(_with(clean, ticks=t, baseline_ticks=t))
    assert r.check("physical").passed and r.check("physical").detail["introduced_overlaps"] == 0


def test_overlap_after_a_recorded_collision_is_explained(clean):
    t = clean.ticks.copy()
    t.loc[t["actor_id"] == "van", "y"] = -1.0
    r = validate_scenario(_with(clean, ticks=t, collisions=[Collision(3.5, "ego", "van")]))
    assert r.check("physical").passed


def test_overlap_without_baseline_scores_the_absolute(clean):
    t = clean.ticks.copy()
    t.loc[t["actor_id"] == "van", "y"] = -1.0
    r = validate_scenario(_with(clean, ticks=t, baseline_ticks=None))
    assert not r.check("physical").passed
    _has(r.reasons, "actors ego and van", "no baseline to explain it")


def test_class_flip_of_one_id(clean):
    t = clean.ticks.copy()
    t["actor_class"] = t["actor_id"].map(clean.actor_classes)
    t.loc[(t["actor_id"] == "van") & (t["tick"] >= 300), "actor_class"] = "pedestrian"
    r = validate_scenario(_with(clean, ticks=t))
    _assert_formulas(r)
    ident = r.check("identity")
    assert not ident.passed and ident.score == pytest.approx(2 / 3)
    assert ident.detail["ids_with_violations"] == ["van"]
    # Identity weighs 0.2 in validity: 0.5·1 + 0.2·(2/3) + 0.3·1 = 0.9333 ≥ 0.5, physics pass → accepted.
    assert r.accepted and r.validity == pytest.approx(0.5 + 0.2 * 2 / 3 + 0.3)
    _has(r.reasons, "identity: actor van: class changes vehicle → pedestrian at t=6.00 s")


def test_duplicate_id_in_a_frame(clean):
    t = clean.ticks.copy()
    extra = t[(t["actor_id"] == "ped") & (t["tick"] == 120)].assign(x=lambda d: d["x"] + 3.0)
    t = sort_ticks(pd.concat([t, extra], ignore_index=True))
    r = validate_scenario(_with(clean, ticks=t))
    _assert_formulas(r)
    ident = r.check("identity")
    assert not ident.passed and ident.score == pytest.approx(2 / 3)
    assert r.check("physical").passed and r.check("temporal").passed
    assert r.accepted and r.weight == 1.0
    _has(r.reasons, "identity: actor ped: id appears 2 times in frame tick 120 (t=2.40 s)")


def test_nan_poses_are_rejected_not_crashed(clean):
    t = clean.ticks.copy()
    t.loc[(t["actor_id"] == "ped") & t["tick"].between(100, 111), "x"] = np.nan
    t.loc[(t["actor_id"] == "ego") & (t["tick"] == 500), "qw"] = np.nan
    r = validate_scenario(_with(clean, ticks=t))
    _assert_formulas(r)
    assert not r.accepted and r.weight == 0.0
    assert r.check("physical").score == 0.0
    _has(r.reasons, "physical: actor ped: non-finite pose (x=nan) at t=2.00 s (12 ticks)")
    _has(r.reasons, "physical: actor ego: non-finite pose (orientation=nan) at t=10.00 s")
    assert all(0.0 <= c.score <= 1.0 for c in r.checks)
    ValidityReport.model_validate_json(r.model_dump_json())  # the report stays valid JSON (no NaN)


def test_every_pose_nan(clean):
    t = clean.ticks.assign(x=np.nan)
    r = validate_scenario(_with(clean, ticks=t))
    assert not r.accepted and all(0.0 <= c.score <= 1.0 for c in r.checks)


def test_night_camera_detecting_more_than_lidar_is_low_fidelity(clean):
    sensor = street_sensor(clean.ticks, clean.actor_dims, illumination="night", lidar_detects=lambda actor, t: t < 5.0)
    r = validate_scenario(_with(clean, sensor=sensor))
    _assert_formulas(r)
    s = r.check("sensor")
    assert not s.passed and s.score == 0.0 and s.detail["sub_scores"]["night_camera_below_lidar"] == 0.0
    # fidelity = 0.4 + 0.3 + 0 = 0.70 < 0.80: accepted (validity 0.85) with the weight capped at 0.30.
    assert r.fidelity == pytest.approx(0.70) and r.validity == pytest.approx(0.85)
    assert r.accepted and r.weight == 0.30 and r.capped
    _has(r.reasons, "sensor: night: camera detection rate 1.00 exceeds LiDAR rate 0.25", "actor ped: camera 400/400 vs LiDAR 100/400")
    _has(r.reasons, "low fidelity: fidelity 0.70 below 0.80, weight capped at 0.30")


def test_night_with_lidar_at_least_camera_passes(clean):
    sensor = street_sensor(clean.ticks, clean.actor_dims, illumination="night", camera_detects=lambda actor, t: t < 5.0)
    r = validate_scenario(_with(clean, sensor=sensor))
    assert r.check("sensor").passed and r.check("sensor").detail["sub_scores"]["night_camera_below_lidar"] == 1.0


def test_rain_must_attenuate_lidar_against_a_dry_reference(clean):
    wet = street_sensor(clean.ticks, clean.actor_dims, weather="rain", lidar_returns_per_sweep=30000.0)
    same = dataclasses.replace(wet, dry_reference=DryReference(detection_rate=1.0, returns_per_sweep=30000.0))
    r = validate_scenario(_with(clean, sensor=same))
    assert not r.check("sensor").passed
    _has(r.reasons, "rain: LiDAR returns per sweep 30000.00 is not below the dry reference 30000.00")
    fewer = dataclasses.replace(same, lidar_returns_per_sweep=21000.0)
    assert validate_scenario(_with(clean, sensor=fewer)).check("sensor").passed
    unknown = dataclasses.replace(wet, dry_reference=None)
    assert "rain without a dry reference" in " ".join(validate_scenario(_with(clean, sensor=unknown)).check("sensor").detail["notes"])


def test_camera_lidar_position_disagreement_names_the_actor(clean):
    sensor = street_sensor(clean.ticks, clean.actor_dims, lidar_offset_m={"van": 10.0})
    r = validate_scenario(_with(clean, sensor=sensor))
    s = r.check("sensor")
    assert not s.passed and s.score == pytest.approx(0.5)  # half the compared pairs (the van's) disagree
    _has(r.reasons, "sensor: actor van: camera and LiDAR positions differ by", "tolerance")


def test_absent_sensor_evidence_is_said_and_scored_zero(clean):
    r = validate_scenario(_with(clean, sensor=None))
    s = r.check("sensor")
    assert s.passed and s.score == policy.SENSOR_ABSENT_SCORE == 0.0
    assert s.detail["evidence"] == "absent" and "no sensor evidence" in s.detail["summary"]
    assert r.fidelity == pytest.approx(0.70) and r.accepted and r.weight == 0.30 and r.capped


def test_absent_reference_pool_scores_realism_neutral(clean):
    r = validate_scenario(_with(clean, reference_pool=None))
    d = r.check("distribution")
    assert d.passed and d.score == policy.REALISM_ABSENT_SCORE and d.detail["pool"] == "absent"
    assert r.validity == pytest.approx(0.5 + 0.2 + 0.3 * 0.5)


def test_distribution_scores_only_the_added_shift(clean):
    t = clean.ticks.copy()
    ped = t["actor_id"] == "ped"
    t.loc[ped, "x"] += 15.0  # the transformation moves the pedestrian sideways: range and lateral offset shift
    shifted = validate_scenario(_with(clean, ticks=t)).check("distribution")
    assert shifted.score < 1.0
    feats = shifted.detail["features"]
    assert feats["range_m"]["added"] == pytest.approx(feats["range_m"]["divergence"] - feats["range_m"]["baseline"], abs=1e-6)
    # The same trajectory as its own baseline adds nothing, however far it is from the pool.
    assert validate_scenario(_with(clean, ticks=t, baseline_ticks=t)).check("distribution").score == 1.0


def test_undeclared_actor_is_an_identity_violation(clean):
    t = clean.ticks.copy()
    t.loc[t["actor_id"] == "van", "actor_id"] = "ghost"
    r = validate_scenario(_with(clean, ticks=sort_ticks(t)))
    _has(r.reasons, "identity: actor ghost: id not declared")


def test_suite_low_fidelity_share_is_scaled_with_the_solved_factor(clean):
    high = [validate_scenario(_with(clean, sample_id=f"hi-{i}")) for i in range(2)]
    low = [validate_scenario(_with(clean, sample_id=f"lo-{i}", sensor=None)) for i in range(4)]
    rejected = validate_scenario(_with(clean, sample_id="bad", ticks=clean.ticks.assign(x=np.nan)))
    assert all(r.weight == 1.0 for r in high) and all(r.weight == 0.30 and r.capped for r in low)
    out = apply_suite_weight_policy(high + low + [rejected])
    # W_high = 2, W_low = 4 · 0.30 = 1.2: share 1.2 / 3.2 = 0.375 > 0.25.
    assert out["low_fidelity_share_before"] == pytest.approx(0.375)
    f = 0.25 * 2.0 / (0.75 * 1.2)
    assert out["scaled_down"] and out["scale_factor"] == pytest.approx(f) == pytest.approx(0.5555555556)
    assert out["weights"]["hi-0"] == 1.0 and out["weights"]["bad"] == 0.0
    assert out["weights"]["lo-0"] == pytest.approx(0.30 * f) == pytest.approx(1 / 6)
    assert out["low_fidelity_share"] == pytest.approx(0.25)
    assert out["share_cap"] == 0.25 and out["policy"]["policy_version"] == policy.POLICY_VERSION
    assert math.isclose(sum(out["weights"].values()), out["total_weight"])


def test_suite_under_the_share_cap_is_unchanged(clean):
    reports = [validate_scenario(_with(clean, sample_id=f"hi-{i}")) for i in range(3)]
    reports.append(validate_scenario(_with(clean, sample_id="lo", sensor=None)))
    out = apply_suite_weight_policy(reports)
    assert not out["scaled_down"] and out["scale_factor"] == 1.0
    assert out["low_fidelity_share"] == pytest.approx(0.3 / 3.3)
    assert out["weights"]["lo"] == 0.30


def test_low_validity_rejects_even_when_physics_and_time_pass(clean):
    t = clean.ticks.copy()
    ped = t["actor_id"] == "ped"
    t.loc[ped, "y"] = -12.0 + 3.4 * t.loc[ped, "t"]  # 97 % of the pedestrian limit: passes, scores 0.57
    t.loc[ped, ["vy", "speed_mps"]] = 3.4
    t = sort_ticks(pd.concat([t, t[t["tick"] == 50]], ignore_index=True))  # every id twice in one frame
    r = validate_scenario(_with(clean, ticks=t, sensor=None, reference_pool=None))
    _assert_formulas(r)
    assert r.check("physical").passed and r.check("temporal").passed
    assert r.check("physical").score == pytest.approx(policy.headroom_score(3.4 / 3.5))
    assert r.check("identity").score == 0.0
    assert r.validity < 0.5 and not r.accepted and r.rejection_code == "low_validity"
    _has(r.reasons, f"rejected: validity {r.validity:.2f} below 0.50")


def _impact(clean, t0: float, dv: float):
    """The ego's velocity drops by ``dv`` (m/s, along x) at ``t0``; positions integrate it exactly, as a body
    whose impulse came at the very start of the tick after ``t0`` would move."""
    t = clean.ticks.copy()
    ego = t["actor_id"] == "ego"
    after = ego & (t["t"] > t0 + 1e-9)
    t.loc[after, "x"] -= dv * (t.loc[after, "t"] - t0)
    t.loc[after, "vx"] -= dv
    t.loc[after, "speed_mps"] = np.hypot(t.loc[after, "vx"], t.loc[after, "vy"])
    return t


def test_an_impact_inside_its_recorded_contact_window_is_explained(clean):
    """A 6 m/s velocity drop in one tick at t = 4.00 s (300 m/s² from positions, and a trapezoid error of
    0.06 m > 0.05 m): explained by a contact recorded from 4.02 s to 4.10 s, rejected without it, and rejected
    when the contact recorded is another time (the window is the event's own, not a blanket constant)."""
    t = _impact(clean, 4.0, 6.0)
    without = validate_scenario(_with(clean, ticks=t))
    _has(without.reasons, "actor ego", "acceleration 300.0 m/s² from positions")
    _has(without.reasons, "actor ego", "|Δx − v·dt| = 0.06 m exceeds 0.05 m")
    hit = Collision(4.02, "ego", "van", t_end_s=4.1)
    r = validate_scenario(_with(clean, ticks=t, collisions=[hit]))
    assert r.check("physical").passed and r.check("temporal").passed
    elsewhere = validate_scenario(_with(clean, ticks=t, collisions=[Collision(2.0, "ego", "van", t_end_s=2.2)]))
    assert not elsewhere.check("physical").passed and not elsewhere.check("temporal").passed
    # The window is the contact's: a second kick 1 s after it ended is a violation again.
    t2 = _impact(_with(clean, ticks=t), 5.2, 6.0)
    again = validate_scenario(_with(clean, ticks=t2, collisions=[hit]))
    _has(again.reasons, "actor ego", "from positions", "t=5.2")


def test_a_teleport_inside_a_contact_window_still_breaks_the_temporal_check(clean):
    """Positions jump 1 m while the stored velocity stays: |Δv| = 0, so the contact grows no tolerance."""
    t = clean.ticks.copy()
    jump = (t["actor_id"] == "ego") & (t["tick"] >= 203)
    t.loc[jump, "x"] += 1.0
    r = validate_scenario(_with(clean, ticks=t, collisions=[Collision(4.02, "ego", "van", t_end_s=4.1)]))
    assert not r.check("temporal").passed
    _has(r.reasons, "actor ego", "|Δx − v·dt| = 1.00 m exceeds 0.05 m")


def test_a_carried_pedestrian_is_held_to_the_vehicle_speed_only_in_its_contact(clean):
    t = _ped_at_6_mps(clean)
    end = float(t["t"].max())
    carried = validate_scenario(_with(clean, ticks=t, baseline_ticks=t, collisions=[Collision(0.0, "ped", "ego", t_end_s=end)]))
    assert carried.check("physical").passed
    late = validate_scenario(_with(clean, ticks=t, baseline_ticks=t, collisions=[Collision(5.0, "ped", "ego", t_end_s=end)]))
    _has(late.reasons, "physical: actor ped: speed 6.00 m/s exceeds pedestrian limit 3.50 m/s at t=0.00 s")
