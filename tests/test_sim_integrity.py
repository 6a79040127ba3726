"""Finished simulation files are checked against their recorded sha256 (issue 14): trace (verdict.json),
branch traces (outcomes.json), manifest (batch.json), checkpoint (its file name)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from simready.artifacts.layout import BatchDir, SampleDir
from simready.artifacts.records import Outcomes
from simready.scenario.manifest import load_manifest, manifest_hash
from simready.sim.batch import branches_share_history, restore_reproduces, sample_intact
from tests.fixtures.samples import TLA, change_one_value, make_sample
from tests.fixtures.sim import catalog, template


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    d = make_sample(tmp_path_factory.mktemp("integrity"))
    m = load_manifest(SampleDir(d).manifest)
    BatchDir(d.parent).record.write_text(json.dumps({"samples": {m.sample_id: manifest_hash(m)}}))
    return d


@pytest.fixture
def sample(built, tmp_path) -> SampleDir:
    root = tmp_path / "batch" / built.name
    shutil.copytree(built, root)
    shutil.copy(BatchDir(built.parent).record, BatchDir(root.parent).record)
    return SampleDir(root)


def test_intact_sample_passes(sample) -> None:
    assert sample_intact(sample.root)[0]
    assert branches_share_history(sample.root)[0]


def test_one_changed_value_in_the_trace_is_caught(sample) -> None:
    recorded = json.loads(sample.verdict.read_text())["trace_sha256"]
    change_one_value(sample.trace)
    for ok, why in (sample_intact(sample.root), branches_share_history(sample.root)):
        assert not ok
        assert why.startswith(f"{sample.trace}: sha256: expected {recorded} ") and "got sha256:" in why and "\n" not in why


def test_one_changed_value_in_a_branch_trace_is_caught(sample) -> None:
    label = sorted(Outcomes.read(sample.outcomes).trace_sha256)[0]
    change_one_value(sample.branch(label).trace, row=-1)
    ok, why = branches_share_history(sample.root)
    assert not ok and why.startswith(f"{sample.branch(label).trace}: sha256: expected ")


def test_manifest_not_the_batch_records_is_caught(sample) -> None:
    manifest = json.loads(sample.manifest.read_text())
    manifest["seed"] += 1
    sample.manifest.write_text(json.dumps(manifest))
    ok, why = sample_intact(sample.root)
    assert not ok and why.startswith(f"{sample.manifest}: sha256: expected ")


def test_changed_checkpoint_byte_fails_restore_check(sample) -> None:
    ckpt = sample.checkpoint(Outcomes.read(sample.outcomes).checkpoint)
    data = bytearray(ckpt.read_bytes())
    data[-1] ^= 1
    ckpt.write_bytes(bytes(data))
    ok, why = restore_reproduces(sample.root, template(TLA), catalog(), "kinematic-v1")
    assert not ok and why.startswith(f"{ckpt}: sha256: expected ") and "\n" not in why


def test_sim_inspect_refuses_a_changed_trace_in_one_line(sample, capsys) -> None:
    """``simready sim inspect`` of a sample's base or branch trace checks the sha256 recorded for it."""
    from simready.cli import main

    assert main(["sim", "inspect", str(sample.trace)]) == 0
    capsys.readouterr()
    change_one_value(sample.trace)
    assert main(["sim", "inspect", str(sample.trace)]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{sample.trace}: sha256: expected" in err
    (label,) = sorted(Outcomes.read(sample.outcomes).trace_sha256)[:1]
    branch = sample.branch(label).trace
    assert main(["sim", "inspect", str(branch)]) == 0
    capsys.readouterr()
    change_one_value(branch)
    assert main(["sim", "inspect", str(branch)]) != 0
    assert f"{branch}: sha256: expected" in capsys.readouterr().err
