"""Great Expectations suites on the tabular artifacts, and the reviewers' Data Docs."""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simready.scenario.manifest import parse_manifest
from simready.testing.synthetic import street_evidence, street_manifest_dict
from simready.validity import data_docs as D
from simready.validity import expectations as E
from simready.validity import policy
from simready.validity.gate import validate_scenario
from tests.fixtures.manifests import make_manifest


@pytest.fixture(scope="module")
def evidence():
    return street_evidence(with_pool=False)


@pytest.fixture(scope="module")
def reports(evidence):
    return [validate_scenario(evidence), validate_scenario(dataclasses.replace(evidence, sample_id="low", sensor=None))]


def _failed(result: E.SuiteResult) -> list[str]:
    return [r.expectation for r in result.failures()]


def test_trajectories_suite_passes_on_a_clean_trace(evidence):
    result = E.run_suite("trajectories", E.trajectory_frame(evidence.ticks, evidence.actor_classes))
    assert result.success and result.evaluated == result.successful == len(result.results) > 20
    json.dumps(result.model_dump(mode="json"))  # Dagster metadata is JSON


def test_trajectories_suite_catches_nan_speed_time_and_duplicates(evidence):
    t = evidence.ticks.copy()
    t.loc[3, "x"] = np.nan
    ped = t["actor_id"] == "ped"
    t.loc[ped, "speed_mps"] = 6.0
    t.loc[(t["actor_id"] == "van") & (t["tick"] == 10), "t"] = 0.0  # time runs backwards for the van
    t = pd.concat([t, t.iloc[[0]]], ignore_index=True)
    result = E.run_suite("trajectories", E.trajectory_frame(t, evidence.actor_classes))
    assert not result.success
    failed = _failed(result)
    assert "expect_column_values_to_not_be_null(column=x)" in failed
    speed = next(r for r in result.results if 'actor_class=="pedestrian"' in r.expectation)
    assert not speed.success and speed.observed["unexpected_count"] == ped.sum()
    assert speed.observed["unexpected_values"][:1] == [6.0]
    assert any(e.startswith("expect_column_values_to_be_between(column=t_step_s") for e in failed)
    assert any(e.startswith("expect_compound_columns_to_be_unique") for e in failed)
    json.dumps(result.model_dump(mode="json"))


def test_undeclared_actor_class_fails_the_trajectories_suite(evidence):
    result = E.run_suite("trajectories", E.trajectory_frame(evidence.ticks, {"ego": "vehicle"}))
    assert any(e.startswith("expect_column_values_to_be_in_set(column=actor_class") for e in _failed(result))


def test_rejection_log_suite():
    log = pd.DataFrame({"sample_id": ["a", "b"], "stage": ["geometry", "timing"], "reason": ["overlap", "no_solution"],
                        "detail": ["van overlaps kerb by 0.3 m", "ttc 9 s unreachable"]})
    assert E.run_suite("rejection_log", log).success
    bad = log.assign(reason=["overlap", ""])
    assert "expect_column_value_lengths_to_be_between(column=reason, min_value=1)" in _failed(E.run_suite("rejection_log", bad))
    missing = E.run_suite("rejection_log", log.drop(columns=["detail"]))
    assert "expect_column_to_exist(column=detail)" in _failed(missing)
    assert E.run_suite("rejection_log", log.iloc[:0]).success  # an empty log is a fine log


def test_manifests_suite():
    frame = E.manifest_frame([make_manifest(), parse_manifest(street_manifest_dict(), "synthetic")])
    assert len(frame) == 6
    assert E.run_suite("manifests", frame).success
    fast = frame.copy()
    fast.loc[fast["kind"] == "pedestrian", "initial_speed_mps"] = 6.0
    fast.loc[0, "length_m"] = 0.0
    failed = _failed(E.run_suite("manifests", fast))
    assert any('initial_speed_mps' in e and 'kind=="pedestrian"' in e for e in failed)
    assert any(e.startswith("expect_column_values_to_be_between(column=length_m") for e in failed)


def test_validity_reports_suite(reports):
    assert E.run_suite("validity_reports", E.validity_frame(reports)).success
    tampered = [reports[0], reports[1].model_copy(update={"weight": 1.0})]  # a low-fidelity sample claiming full weight
    failed = _failed(E.run_suite("validity_reports", E.validity_frame(tampered)))
    assert "expect_column_pair_values_to_be_equal(column_A=weight, column_B=policy_weight)" in failed
    other = [reports[0].model_copy(update={"policy_version": "gate-0.9.0"})]
    assert any("policy_version" in e for e in _failed(E.run_suite("validity_reports", E.validity_frame(other))))


def test_one_context_per_process(evidence):
    E.run_suite("rejection_log", pd.DataFrame({"stage": ["s"], "reason": ["r"], "detail": ["d"]}))
    state = E._gx_state()
    E.run_suite("rejection_log", pd.DataFrame({"stage": ["s"], "reason": ["r"], "detail": ["d"]}))
    assert E._gx_state() is state and "rejection_log" in state.definitions


def test_unknown_suite():
    with pytest.raises(ValueError, match="unknown suite 'nope'"):
        E.run_suite("nope", pd.DataFrame())


@pytest.mark.slow
def test_data_docs_site(evidence, reports, tmp_path):
    traj = E.run_suite("trajectories", E.trajectory_frame(evidence.ticks, evidence.actor_classes))
    valid = E.run_suite("validity_reports", E.validity_frame(reports))
    log = ("rejection_log", pd.DataFrame({"stage": ["timing"], "reason": [""], "detail": ["d"]}))
    index = D.build_data_docs([traj, valid, log], tmp_path / "docs")
    assert index == (tmp_path / "docs" / "index.html").resolve() and index.is_file()
    html = index.read_text()
    for suite in ("trajectories", "validity_reports", "rejection_log"):
        assert suite in html
        assert (index.parent / "expectations" / f"{suite}.html").is_file()
    assert len(list((index.parent / "validations").rglob("*.html"))) == 3
    deserialized = E.SuiteResult.model_validate(traj.model_dump())
    with pytest.raises(ValueError, match="carries no table"):
        D.build_data_docs([deserialized], tmp_path / "docs2")


@pytest.mark.slow
def test_data_docs_render_the_checks_stored_results_without_validating_again(evidence, reports, tmp_path, caplog):
    """A check's stored result over the same table renders the page a validation here would (the random ids GX gives
    its collapsible blocks aside); a table with an unexpected value (its page lists them with their counts), one
    changed since its result, or one without a result is validated again, and counted."""
    import re

    frame = E.trajectory_frame(evidence.ticks, evidence.actor_classes)
    bad = frame.assign(x=frame["x"].where(frame.index != 3, np.nan))
    log = pd.DataFrame({"stage": ["timing", "route"], "reason": ["r", "q"], "detail": ["d", "e"]})
    manifests = E.manifest_frame([make_manifest()])
    tables = [("trajectories", frame, "t|b0"), ("manifests", manifests, "t|b0"),
              ("validity_reports", E.validity_frame(reports), "t|b0"), ("rejection_log", log, "t"),
              ("trajectories", bad, "t|b1"), ("rejection_log", log.assign(reason=["", None]), "u")]
    batches = []
    for suite, df, key in tables:
        stored = tmp_path / f"{suite}.{D.partition_label(key)}.json"
        stored.write_bytes(D.result_json(E.run_suite(suite, df).gx_result()))
        batches.append(D.DocsBatch(suite, df, suite, key, stored))
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    with caplog.at_level(logging.INFO, logger=D.__name__):
        D.build_data_docs([b._replace(stored=None) for b in batches], tmp_path / "fresh", when)
        assert "6 of 6 tables validated again (no stored result: 6)" in caplog.text
        caplog.clear()
        D.build_data_docs(batches, tmp_path / "stored", when)
        assert "2 of 6 tables validated again (unexpected values: 2)" in caplog.text

    def page(site: str, suite: str, key: str) -> str:
        html = (tmp_path / site / D.validation_page(suite, suite, key)).read_text(encoding="utf-8")
        return re.sub(r"collapse-body-[0-9a-f-]{36}", "collapse-body", html)

    for suite, _, key in tables:
        assert page("stored", suite, key) == page("fresh", suite, key), (suite, key)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=D.__name__):
        D.build_data_docs([batches[0]._replace(frame=frame.head(5)), batches[3]], tmp_path / "changed", when)
    assert "1 of 2 tables validated again (table changed: 1)" in caplog.text
    edited = json.loads(batches[3].stored.read_text())
    edited["results"][0]["expectation_config"]["kwargs"]["column"] = "elsewhere"
    batches[3].stored.write_text(json.dumps(edited))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=D.__name__):
        D.build_data_docs([batches[3]], tmp_path / "edited", when)
    assert "1 of 1 tables validated again (suite changed: 1)" in caplog.text


@pytest.mark.slow
def test_a_stored_result_is_the_same_bytes_from_another_process(tmp_path):
    """A check's stored result is an artifact: the same table and suite give the same bytes in a new process (its own
    GX context, whose expectation ids are uuid4) and at another time (GX's load, run and validation times)."""
    import subprocess
    import sys

    script = tmp_path / "result.py"
    script.write_text("import sys\n"
                      "from simready.validity import data_docs as D, expectations as E\n"
                      "from tests.fixtures.manifests import make_manifest\n"
                      "frame = E.manifest_frame([make_manifest()])\n"
                      "sys.stdout.buffer.write(D.result_json(E.run_suite('manifests', frame).gx_result()))\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    first, second = (subprocess.run([sys.executable, str(script)], capture_output=True, check=True, env=env).stdout
                     for _ in range(2))
    assert first and first == second
    assert first == D.result_json(E.run_suite("manifests", E.manifest_frame([make_manifest()])).gx_result())


def test_policy_limits_drive_the_speed_expectations():
    import great_expectations.expectations as gxe

    speed = [e for e in E._trajectory_expectations(gxe) if getattr(e, "column", None) == "speed_mps" and e.row_condition]
    assert {e.max_value for e in speed} == {lim.max_speed_mps for lim in policy.CLASS_LIMITS.values()}
