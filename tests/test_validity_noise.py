"""The distribution check's noise level (issue 19 item 7): a divergence counts only beyond what a nominal scenario
of the pool's own programs shows, measured leave-one-draw-out, with the reference size and confidence reported.

The synthetic scenarios here have what makes real ones hard: rows are ticks of a few actors (not independent),
and each scenario draws its own parameters (start range, speed), so one scenario never fills the pool's bins."""

from __future__ import annotations

import json
import shutil
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import chi2

from simready.artifacts.layout import ArtifactLayout
from simready.review.page import render_sample_page
from simready.testing.synthetic import street_evidence, street_pool, street_ticks
from simready.validity import features as feat
from simready.validity import policy
from simready.validity.batch import validate_sample_dir
from simready.validity.gate import validate_scenario
from simready.validity.evidence import EvidenceError
from simready.validity.gate.distribution import NOT_REQUIRED, SCENARIO_STATISTIC
from simready.validity.reference_pool import load_intent_profiles

TICKS = 200


def scenario(rng: np.random.Generator, draw: str = "", *, range_shift_m: float = 0.0) -> pd.DataFrame:
    """Feature rows of one synthetic scenario: two actors approaching from a drawn range at a drawn speed."""
    parts = []
    for actor in ("a1", "a2"):
        start = rng.uniform(30.0, 60.0) + range_shift_m
        speed = rng.uniform(5.0, 12.0)
        t = np.arange(TICKS) * 0.1
        parts.append(pd.DataFrame({
            "tick": np.arange(TICKS), "actor_id": actor,
            "range_m": np.abs(start - speed * t), "lateral_m": rng.normal(3.0, 0.5) + 0.05 * rng.standard_normal(TICKS),
            "speed_mps": speed + 0.1 * rng.standard_normal(TICKS), "actor_class": "vehicle", "sample": draw,
        }))
    return pd.concat(parts, ignore_index=True)


def pool_of(n_draws: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng([seed, 1])
    return pd.concat([scenario(rng, f"ref-{i:03d}") for i in range(n_draws)], ignore_index=True)


def test_noise_level_is_the_order_statistic_bounding_the_quantile_with_the_stated_confidence():
    # 32 draws: only the largest bounds the 95th percentile with ≥ 80 % confidence (1 − 0.95³² = 0.806).
    n32 = feat.NoiseLevel.of(range(32, 0, -1))
    assert (n32.draws, n32.rank, n32.level) == (32, 32, 32.0)
    assert n32.confidence == pytest.approx(1 - 0.95**32, abs=1e-12)
    # 64 draws: the 63rd value, P(Bin(64, 0.95) ≤ 62) = 1 − 0.95⁶⁴ − 64·0.95⁶³·0.05.
    n64 = feat.NoiseLevel.of(np.arange(64.0))
    assert (n64.rank, n64.level) == (63, 62.0)
    assert n64.confidence == pytest.approx(1 - 0.95**64 - 64 * 0.95**63 * 0.05, abs=1e-12)
    assert n64.confidence >= policy.NOISE_CONFIDENCE
    # Too few draws for the target: the largest, with the lower confidence it has.
    n4 = feat.NoiseLevel.of([0.1, 0.4, 0.2, 0.3])
    assert (n4.level, round(n4.confidence, 3)) == (0.4, 0.185)
    # p = (1 + #null ≥ d) / (n + 1), ties counted.
    assert n4.p_value(0.3) == pytest.approx(3 / 5) and n4.p_value(9.0) == pytest.approx(1 / 5)
    assert n4.p_value(0.0) == 1.0


def test_a_profile_of_a_pool_that_names_its_draws_has_a_null_per_feature():
    pool = pool_of(12, seed=0)
    profile = feat.ReferenceProfile.from_pool(pool)
    assert profile.draws == 12
    assert sorted(profile.noise) == sorted(feat.CONTINUOUS_FEATURES + (feat.CATEGORICAL_FEATURE,))
    assert all(n.draws == 12 for n in profile.noise.values())
    # The null is the divergence of each draw from the others' profile: recompute one by hand.
    held = pool["sample"] == "ref-003"
    by_hand = feat.divergences(pool[held], feat.ReferenceProfile.from_pool(pool[~held].drop(columns="sample")))
    assert by_hand["range_m"] in profile.noise["range_m"].null
    # Bins are those of the whole pool, whether or not it names draws.
    plain = feat.ReferenceProfile.from_pool(pool.drop(columns="sample"))
    assert plain.draws == 0 and not plain.noise
    assert all(np.array_equal(plain.edges[k], profile.edges[k]) for k in plain.edges)
    # A single draw gives no null: uncalibrated.
    assert not feat.ReferenceProfile.from_pool(pool_of(1, seed=0)).noise


def test_nominal_scenarios_stay_within_noise_about_as_often_as_the_quantile_says():
    """Identical distributions: across 120 nominal scenarios the p-values are near uniform and about 5 % lie
    beyond the noise level, where the i.i.d. bound PSI ≈ χ²_{B−1}·(1/n_cur + 1/n_ref) at 95 % would flag most of
    them (rows of one scenario are not independent draws: that is why the level is measured, not assumed)."""
    profile = feat.ReferenceProfile.from_pool(pool_of(32, seed=7))
    rng = np.random.default_rng([7, 2])
    p_values, beyond, raw = [], [], []
    for _ in range(120):
        d = feat.divergences(scenario(rng), profile)["range_m"]
        noise = profile.noise["range_m"]
        raw.append(d)
        p_values.append(noise.p_value(d))
        beyond.append(d > noise.level)
    assert np.mean(beyond) <= 0.12  # nominal: 1 − 0.95 expected, at most ~3 σ more
    assert 0.3 <= float(np.median(p_values)) <= 0.7  # near uniform
    assert np.mean(np.array(p_values) <= 0.5) == pytest.approx(0.5, abs=0.15)
    iid_bound = chi2.ppf(0.95, policy.PSI_BINS - 1) * (1 / (2 * TICKS) + 1 / profile.n_rows["range_m"])
    assert np.mean(np.array(raw) > iid_bound) > 0.5


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), n_draws=st.integers(8, 40))
def test_identical_distribution_is_not_flagged_at_the_median_and_a_shift_always_is(seed, n_draws):
    profile = feat.ReferenceProfile.from_pool(pool_of(n_draws, seed))
    noise = profile.noise["range_m"]
    assert noise.draws == n_draws and noise.level in noise.null
    assert 0.0 < noise.confidence <= 1.0
    # A pool draw scored against the whole pool (itself included) is no further than the typical held-out draw.
    median_draw = sorted(profile.noise["range_m"].null)[n_draws // 2]
    assert median_draw <= noise.level
    rng = np.random.default_rng([seed, 3])
    shifted = feat.divergences(scenario(rng, range_shift_m=1000.0), profile)["range_m"]
    assert shifted - noise.level > policy.PSI_ADDED_MAX  # far beyond noise
    assert noise.p_value(shifted) == pytest.approx(1 / (n_draws + 1))  # no nominal draw is as far


def _with_draws(pool: pd.DataFrame, n: int) -> pd.DataFrame:
    """street_pool's rows with the draw each came from (it concatenates ``n`` equal scenes)."""
    return pool.assign(sample=np.repeat([f"street-ref-{i}" for i in range(n)], len(pool) // n))


def test_the_report_states_reference_size_confidence_and_why_a_failure_does_not_reject():
    pool = _with_draws(street_pool(32, clip_s=2.0), 32)
    ev = street_evidence(clip_s=2.0, with_sensor=True)
    profile = feat.ReferenceProfile.from_pool(pool)
    nominal = validate_scenario(ev.__class__(**{**ev.__dict__, "reference_pool": profile}))
    d = nominal.check("distribution").detail
    assert d["reference"]["draws"] == 32 and d["reference"]["rows"] == len(pool)
    assert d["reference"]["noise"] == "leave-one-draw-out" and d["reference"]["quantile"] == policy.NOISE_QUANTILE
    assert d["reference"]["confidence"]["speed_mps"] == round(1 - 0.95**32, 3)
    assert d["reference"]["null_draws"] == {k: 32 for k in profile.noise}
    for name, f in d["features"].items():
        assert set(f) == {"statistic", "divergence", "noise_level", "ceiling", "p_value", "beyond_noise", "baseline",
                          "baseline_beyond_noise", "added", "score", "scenario"}, name
        assert f["statistic"] == ("JS" if name == feat.CATEGORICAL_FEATURE else "PSI"), name  # none saturated here
        if f["divergence"] is not None:
            assert f["beyond_noise"] == pytest.approx(max(f["divergence"] - f["noise_level"], 0.0), abs=1e-5)
            assert 0.0 < f["p_value"] <= 1.0
    # The baseline is the sample itself: nothing beyond noise was added.
    assert all(f["added"] in (0.0, None) for f in d["features"].values())

    # A transformation that moves every other road user 300 m ahead: range beyond the noise, the check fails,
    # the sample stays accepted.
    far = ev.ticks.copy()
    far.loc[far["actor_id"] != "ego", "x"] += 300.0
    shifted = validate_scenario(ev.__class__(**{**ev.__dict__, "ticks": far, "reference_pool": profile}))
    dist = shifted.check("distribution")
    assert not dist.passed and shifted.accepted
    assert NOT_REQUIRED in dist.detail["summary"]
    text = next(v for v in dist.detail["violations"] if v.startswith("feature range_m"))
    assert "beyond noise" in text and "ref n=32 draws" in text and "81% confidence" in text and "p=0.03" in text
    assert shifted.reasons[0].startswith("accepted: distribution failed but not required")


def test_an_uncalibrated_pool_scores_the_raw_divergence_and_says_so():
    ev = street_evidence(clip_s=2.0, with_sensor=False)  # street_pool names no draws
    d = validate_scenario(ev).check("distribution").detail
    assert d["reference"]["noise"] == "uncalibrated" and d["reference"]["draws"] == 0
    assert any(n.startswith("uncalibrated") for n in d.get("notes", []))
    assert all(f["noise_level"] is None for f in d["features"].values())


def test_the_review_page_shows_the_reference_size_noise_levels_and_confidence(tmp_path, street_sample_dir):
    layout = ArtifactLayout(tmp_path)
    sample = layout.batch("street", "b0000").sample("street-000001")
    shutil.copytree(street_sample_dir, sample.root)  # write_street_sample(sample.root), written once per session
    pool = _with_draws(street_pool(32), 32)
    ref = layout.reference("street")
    ref.root.mkdir(parents=True)
    pool.to_parquet(ref.pool, index=False)
    intent = json.loads(sample.manifest.read_text())["intent"]
    ref.record.write_text(json.dumps({"pool_samples": 32, "rows": len(pool), "samples": [
        {"sample": s, "intent": intent, "verdict": "accept"} for s in sorted(set(pool["sample"]))]}))
    validate_sample_dir(sample.root, feat.IntentProfiles.from_pool(pool, {s: intent for s in pool["sample"]}))
    html = render_sample_page(sample, "b0000")
    para = html[html.index('id="reference"'):]
    para = para[:para.index("</p>")]
    assert f"<b>32</b> accepted draws ({intent} 32)" in para
    assert f"scored against the 32 draws of the intent {intent}" in para
    assert "n=32 draws" in para and f"{round(100 * (1 - 0.95**32))} % confidence" in para
    assert "The check is not required" in para
    assert "Each feature is scored by PSI over the pool's bins (the class mix by JS) unless noted" in para
    report = json.loads(sample.validity.read_text())["base"]
    level = next(c for c in report["checks"] if c["check"] == "distribution")["detail"]["features"]["speed_mps"]
    assert f"speed_mps {level['noise_level']:.2f}" in para
    assert math.isfinite(level["noise_level"])


def test_each_sample_is_scored_against_its_own_intents_draws(tmp_path):
    """Per intent: the null of an intent's own draws, not of a template's mixture of programs."""
    near, far = pool_of(12, seed=3), pool_of(12, seed=4)
    far = far.assign(range_m=far["range_m"] + 500.0, sample=far["sample"].str.replace("ref", "far"))
    pool = pd.concat([near, far], ignore_index=True)
    intent_of = {**{s: "near" for s in near["sample"]}, **{s: "far" for s in far["sample"]}}
    profiles = feat.IntentProfiles.from_pool(pool, intent_of)
    assert sorted(profiles.by_intent) == ["far", "near"] and profiles.for_intent("other") is None
    own = profiles.for_intent("near")
    assert (own.draws, own.scope) == (12, "intent near")
    mixed = feat.ReferenceProfile.from_pool(pool)
    assert own.noise["range_m"].level < mixed.noise["range_m"].level  # the mixture widens the null
    # Written as the pool's files: pool.json lists each accepted draw's intent.
    layout = ArtifactLayout(tmp_path).reference("t")
    layout.root.mkdir(parents=True)
    pool.to_parquet(layout.pool, index=False)
    samples = [{"sample": s, "intent": i, "verdict": "accept"} for s, i in sorted(intent_of.items())]
    layout.record.write_text(json.dumps({"samples": samples}))
    loaded = load_intent_profiles(layout.root)
    assert loaded.for_intent("far").noise["range_m"].null == profiles.for_intent("far").noise["range_m"].null
    layout.record.write_text(json.dumps({"samples": samples[1:]}))
    with pytest.raises(EvidenceError, match=r"pool.json: samples: draw 'far-000' of pool.parquet is not listed"):
        load_intent_profiles(layout.root)
    pool.drop(columns="sample").to_parquet(layout.pool, index=False)
    with pytest.raises(EvidenceError, match=r"pool.parquet: sample: missing"):
        load_intent_profiles(layout.root)


# --- the scenario-level statistic, where PSI saturates ----------------------------------------------------------


def cruise(rng: np.random.Generator, draw: str = "", *, speed_shift_mps: float = 0.0) -> pd.DataFrame:
    """One actor holding a cruise speed drawn per scenario (≈ N(10, 1) m/s) all scenario long: its rows fill one
    speed bin, as on the default suite's intersection, so PSI on speed saturates."""
    speed = rng.normal(10.0, 1.0) + speed_shift_mps
    start = rng.uniform(30.0, 60.0)
    t = np.arange(TICKS) * 0.1
    return pd.DataFrame({"tick": np.arange(TICKS), "actor_id": "a1", "range_m": np.abs(start - speed * t),
                         "lateral_m": rng.normal(3.0, 0.5) + 0.05 * rng.standard_normal(TICKS),
                         "speed_mps": speed + 0.01 * rng.standard_normal(TICKS), "actor_class": "vehicle", "sample": draw})


def cruise_pool(n_draws: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng([seed, 11])
    return pd.concat([cruise(rng, f"ref-{i:03d}") for i in range(n_draws)], ignore_index=True)


def _saturated(profile: feat.ReferenceProfile, name: str) -> bool:
    return profile.noise[name].level >= policy.NOISE_SATURATED_SHARE * feat.psi_ceiling(profile, name)


def test_the_scenario_statistic_is_the_robust_z_of_mean_and_spread_with_a_leave_one_draw_out_null():
    pool = cruise_pool(12, seed=0)
    profile = feat.ReferenceProfile.from_pool(pool)
    stat = profile.scenario["speed_mps"]
    by_draw = {d: g["speed_mps"].to_numpy() for d, g in pool.groupby("sample", sort=True)}
    summaries = np.array([[v.mean(), v.std()] for v in by_draw.values()])
    np.testing.assert_allclose(stat.summaries, summaries)
    # One draw held out, by hand: |s − median| / (1.4826·MAD) of the others, the larger of mean and sd.
    others = np.delete(summaries, 4, axis=0)
    center = np.median(others, axis=0)
    scale = np.maximum(1.4826 * np.median(np.abs(others - center), axis=0), policy.SCENARIO_SCALE_FLOOR)
    assert float(np.max(np.abs(summaries[4] - center) / scale)) in stat.noise.null
    assert stat.noise.draws == 12 and stat.noise.level == max(stat.noise.null)  # 12 draws: the largest, 0.46 confidence
    # The two-sided rank p of the mean among the draws' means: the largest mean of 12 is at p = 3/13.
    top = by_draw[max(by_draw, key=lambda d: by_draw[d].mean())]
    assert stat.rank_p_value(top) == pytest.approx(3 / 13)
    assert stat.rank_p_value(np.full(50, 1e3)) == pytest.approx(1 / 13) and stat.distance(np.ones(5)) is None
    # A pool that does not name its draws has no scenario statistic.
    assert not feat.ReferenceProfile.from_pool(pool.drop(columns="sample")).scenario


def test_nominal_scenarios_are_rarely_beyond_the_scenario_level_and_their_p_values_are_near_uniform():
    """Identical programs: 10 pools of 32 draws, 60 nominal scenarios each. Speed's PSI is saturated (each scenario
    fills one bin); the scenario statistic flags about 1/33 of them (the largest of 32 null values; one pool's own
    rate varies, Beta(1, 32)) and its p-values are near uniform."""
    beyond, p = [], []
    for seed in range(10):
        profile = feat.ReferenceProfile.from_pool(cruise_pool(32, seed=seed))
        assert _saturated(profile, "speed_mps")
        stat = profile.scenario["speed_mps"]
        rng = np.random.default_rng([seed, 12])
        zs = [stat.distance(cruise(rng)["speed_mps"].to_numpy()) for _ in range(60)]
        beyond += [z > stat.noise.level for z in zs]
        p += [stat.noise.p_value(z) for z in zs]
    assert np.mean(beyond) <= 0.07  # 1/33 expected; 600 scenarios, ≈ 3 σ more
    quartiles = np.quantile(p, [0.25, 0.5, 0.75])
    assert 0.15 <= quartiles[0] <= 0.35 and 0.4 <= quartiles[1] <= 0.6 and 0.65 <= quartiles[2] <= 0.85


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), n_draws=st.integers(16, 48), shift=st.floats(10.0, 30.0))
def test_a_shifted_mean_speed_on_a_saturated_feature_is_detected(seed, n_draws, shift):
    """PSI cannot tell a cruise speed `shift` m/s (10–30 σ of the draws; with 16 draws the MAD may overstate σ by half and
    the level reach 3.5) faster from a nominal one: both fill one bin.
    The scenario statistic puts it beyond its noise level by more than SCENARIO_Z_ADDED_MAX, at the smallest p."""
    profile = feat.ReferenceProfile.from_pool(cruise_pool(n_draws, seed))
    assert _saturated(profile, "speed_mps")
    rng = np.random.default_rng([seed, 13])
    fast = cruise(rng, speed_shift_mps=shift)
    stat = profile.scenario["speed_mps"]
    z = stat.distance(fast["speed_mps"].to_numpy())
    assert z - stat.noise.level > policy.SCENARIO_Z_ADDED_MAX
    assert stat.noise.p_value(z) == pytest.approx(1 / (n_draws + 1))
    assert stat.rank_p_value(fast["speed_mps"].to_numpy()) == pytest.approx(1 / (n_draws + 1))
    psi = feat.divergences(fast, profile)["speed_mps"]
    assert psi <= feat.psi_ceiling(profile, "speed_mps") + 1e-9  # PSI is at most what a nominal one-bin scenario has


def _walk(ped_speed_mps: float, ego_speed_mps: float = 10.0):
    """The street scene without the parked van: the pedestrian's speed is one number held all scenario long."""
    ticks, classes, dims = street_ticks(20.0, ego_speed_mps=ego_speed_mps, ped_speed_mps=ped_speed_mps)
    return ticks[ticks["actor_id"] != "van"].reset_index(drop=True), classes, dims


def test_the_gate_scores_a_saturated_feature_by_the_scenario_statistic_and_says_so():
    rng = np.random.default_rng(21)
    pool = pd.concat([feat.scenario_features(*_walk(rng.normal(1.4, 0.1), rng.uniform(8.0, 12.0))[:2], "ego")
                      .assign(sample=f"walk-{i:02d}") for i in range(32)], ignore_index=True)
    profile = feat.ReferenceProfile.from_pool(pool)
    assert _saturated(profile, "speed_mps")
    nominal, classes, dims = _walk(1.4)
    ev = street_evidence(with_sensor=False)
    ev = ev.__class__(**{**ev.__dict__, "ticks": nominal, "baseline_ticks": nominal.copy(), "actor_classes": classes,
                         "actor_dims": dims, "reference_pool": profile})
    base = validate_scenario(ev).check("distribution")
    row = base.detail["features"]["speed_mps"]
    assert row["statistic"] == SCENARIO_STATISTIC and row["score"] == 1.0 and base.passed
    assert row["scenario"]["draws"] == 32 and row["scenario"]["confidence"] == round(1 - 0.95**32, 3)
    assert any("scored by the scenario's mean and spread" in n for n in base.detail["notes"])
    # A branch in which the pedestrian hurries at 2.2 m/s (8 σ of the draws; it still crosses after the ego): PSI saw nothing (one bin either way), the scenario statistic
    # fails the check; the sample stays accepted (the check is not required).
    running, _, _ = _walk(2.2)
    report = validate_scenario(ev.__class__(**{**ev.__dict__, "ticks": running}))
    dist = report.check("distribution")
    row = dist.detail["features"]["speed_mps"]
    assert row["statistic"] == SCENARIO_STATISTIC and row["score"] == 0.0 and not dist.passed and report.accepted
    assert row["scenario"]["summary"]["mean"] == pytest.approx(2.2, abs=0.01) and row["scenario"]["p_value"] == 0.03
    assert row["scenario"]["added"] == pytest.approx(row["scenario"]["beyond_noise"] - row["scenario"]["baseline_beyond_noise"],
                                                     abs=1e-3)
    text = next(v for v in dist.detail["violations"] if v.startswith("feature speed_mps"))
    assert "scenario z" in text and "ref n=32 draws" in text and "PSI saturated" in text and "more than the base's" in text


def test_the_review_page_says_which_statistic_scored_a_saturated_feature(tmp_path, street_sample_dir):
    layout = ArtifactLayout(tmp_path)
    sample = layout.batch("street", "b0000").sample("street-000001")
    shutil.copytree(street_sample_dir, sample.root)  # write_street_sample(sample.root), written once per session
    intent = json.loads(sample.manifest.read_text())["intent"]
    rng = np.random.default_rng(22)
    pool = pd.concat([feat.scenario_features(*_walk(rng.normal(1.4, 0.1), rng.uniform(8.0, 12.0))[:2], "ego")
                      .assign(sample=f"walk-{i:02d}") for i in range(32)], ignore_index=True)
    ref = layout.reference("street")
    ref.root.mkdir(parents=True)
    pool.to_parquet(ref.pool, index=False)
    ref.record.write_text(json.dumps({"pool_samples": 32, "rows": len(pool), "samples": [
        {"sample": s, "intent": intent, "verdict": "accept"} for s in sorted(set(pool["sample"]))]}))
    validate_sample_dir(sample.root, feat.IntentProfiles.from_pool(pool, {s: intent for s in pool["sample"]}))
    row = next(c for c in json.loads(sample.validity.read_text())["base"]["checks"]
               if c["check"] == "distribution")["detail"]["features"]["speed_mps"]
    assert row["statistic"] == SCENARIO_STATISTIC
    html = render_sample_page(sample, "b0000")
    para = html[html.index('id="reference"'):]
    para = " ".join(para[:para.index("</p>")].split())
    assert (f"(near the most PSI can reach, so scored instead by the {SCENARIO_STATISTIC}: the robust z of the "
            f"scenario's mean and spread among the draws, noise level {row['scenario']['noise_level']:.2f}, n=32, 81 % "
            f"confidence)") in para
