"""The distribution check's noise level (issue 19 item 7): a divergence counts only beyond what a nominal scenario
of the pool's own programs shows, measured leave-one-draw-out, with the reference size and confidence reported.

The synthetic scenarios here have what makes real ones hard: rows are ticks of a few actors (not independent),
and each scenario draws its own parameters (start range, speed), so one scenario never fills the pool's bins."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import chi2

from simready.layout import ArtifactLayout
from simready.review.page import render_sample_page
from simready.testing.synthetic import street_evidence, street_pool, write_street_sample
from simready.validity import features as feat
from simready.validity import policy
from simready.validity.batch import validate_sample_dir
from simready.validity.gate import validate_scenario
from simready.validity.evidence import EvidenceError
from simready.validity.gate.distribution import NOT_REQUIRED
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
        assert set(f) == {"divergence", "noise_level", "ceiling", "p_value", "beyond_noise", "baseline", "baseline_beyond_noise",
                          "added", "score"}, name
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


def test_the_review_page_shows_the_reference_size_noise_levels_and_confidence(tmp_path):
    layout = ArtifactLayout(tmp_path)
    sample = layout.batch("street", "b0000").sample("street-000001")
    write_street_sample(sample.root)
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
