"""The template's realism reference pool: independent of the judged samples, deterministic, used by the gate."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from simready.artifacts.layout import ReferencePoolDir
from simready.scenario.generator import generate
from simready.scenario.manifest import canonicalize, manifest_bytes
from simready.validity.evidence_reader import evidence_from_sample_dir
from simready.validity.gate import validate_scenario
from simready.validity.reference_pool import build_reference_pool, load_intent_profiles, load_reference_pool
from tests.fixtures.sim import catalog, template

TLA = "two_lane_arterial"
INTENTS = {"lead_vehicle_brakes": 2}


@pytest.fixture(scope="module")
def pool_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / TLA
    build_reference_pool(template(TLA), catalog(), INTENTS, out)
    return out


def test_pool_is_built_from_accepted_rollouts_and_recorded(pool_dir):
    pool_layout = ReferencePoolDir(pool_dir)
    record = json.loads(pool_layout.record.read_text())
    assert record["template_id"] == TLA and record["root"] == "reference"
    assert record["intents"] == INTENTS
    assert record["pool_samples"] == sum(1 for s in record["samples"] if s["verdict"] == "accept") >= 1
    pool = pd.read_parquet(pool_layout.pool)
    assert len(pool) == record["rows"] > 0
    assert set(pool["sample"]) == {s["sample"] for s in record["samples"] if s["verdict"] == "accept"}
    for s in record["samples"]:
        assert pool_layout.sample(s["sample"]).trace.is_file()
        assert not pool_layout.sample(s["sample"]).rollout_plot.exists()  # no picture: half a draw's cost
    profile = load_reference_pool(pool_dir)
    assert profile is not None and profile.n_rows["speed_mps"] == len(pool)
    # What the gate scores a sample against: its intent's draws, each held out once to measure the noise.
    (own,) = load_intent_profiles(pool_dir).by_intent.values()
    assert own.scope == "intent lead_vehicle_brakes" and own.draws == record["pool_samples"]
    assert own.n_rows == profile.n_rows


def test_pool_draws_differ_from_the_suites_and_rebuild_identically(pool_dir, tmp_path):
    """Another root: the pool's scenarios are not the suite's; the same inputs rebuild the same bytes."""
    suite_draws = generate(TLA, "lead_vehicle_brakes", 2, catalog=catalog(), template=template(TLA)).manifests
    suite_bytes = {m.sample_id: manifest_bytes(canonicalize(m)) for m in suite_draws}
    pool_manifests = [s.manifest for s in ReferencePoolDir(pool_dir).samples()]
    assert pool_manifests and all(p.parent.name in suite_bytes for p in pool_manifests)  # same ids, same format
    for path in pool_manifests:
        assert path.read_bytes() != suite_bytes[path.parent.name]  # other draws
    again = build_reference_pool(template(TLA), catalog(), INTENTS, tmp_path / TLA)
    assert again == json.loads(ReferencePoolDir(pool_dir).record.read_text())


def test_gate_scores_a_sample_against_the_pool(pool_dir):
    sample = ReferencePoolDir(pool_dir).samples()[0].root
    report = validate_scenario(evidence_from_sample_dir(sample, reference_pool=load_reference_pool(pool_dir),
                                                        require_sensors=False))
    realism = next(c for c in report.checks if c.check == "distribution")
    assert realism.detail["pool"] == "given"
    assert 0.0 <= realism.score <= 1.0
