"""``simready sim run | inspect | branch``: files written, one-line errors, exit codes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from simready.cli import main
from simready.scenario.manifest import write_manifest
from simready.sim.storage.trace import read_trace
from tests.fixtures.sim import crossing, edit


@pytest.fixture()
def manifest_file(tmp_path: Path) -> Path:
    return write_manifest(crossing(clip_s=6.0), tmp_path / "m.json")


def test_run_then_inspect(manifest_file: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "t.parquet"
    assert main(["sim", "run", str(manifest_file), "--backend", "kinematic-v1", "--out", str(out), "--quiet"]) == 0
    assert read_trace(out).header["backend"] == "kinematic-v1"
    assert "verdict accept" in capsys.readouterr().out
    assert main(["sim", "inspect", str(out)]) == 0
    text = capsys.readouterr().out
    for needle in ("backend         kinematic-v1", "events", "trigger_fired", "min_ttc", "verdict   accept"):
        assert needle in text
    assert main(["sim", "inspect", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"header", "events", "metrics", "verdict"} and doc["verdict"]["verdict"] == "accept"


def test_branch_writes_checkpoint_traces_and_table(manifest_file: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "branches"
    code = main(["sim", "branch", str(manifest_file), "--backend", "kinematic-v1", "--at", "0.5", "--actions", "brake,coast",
                 "--repeats", "independent:1", "--out", str(out), "--quiet"])
    assert code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["brake-independent-1.parquet", "brake.parquet", "branches.csv", "branches.json", "checkpoint.ckpt",
                     "coast-independent-1.parquet", "coast.parquet"]
    doc = json.loads((out / "branches.json").read_text())
    assert doc["decision_t_s"] == 0.5 and doc["decision_source"] == "--at"
    rows = list(csv.DictReader((out / "branches.csv").open()))
    assert [r["label"] for r in rows] == ["brake", "coast", "brake-independent-1", "coast-independent-1"]
    assert {r["parent_checkpoint"] for r in rows} == {doc["checkpoint"]["id"]}
    assert read_trace(out / "coast.parquet").header["branch"]["action"] == "coast"
    assert "checkpoint sha256:" in capsys.readouterr().out


def test_bad_input_exits_1_with_one_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = write_manifest(edit(crossing(clip_s=2.0), lambda d: d["actors"][0]["initial"]["lane_ref"].update(lane="nope")),
                         tmp_path / "bad.json")
    assert main(["sim", "run", str(bad), "--out", str(tmp_path / "x.parquet"), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "unknown lane 'nope'" in err and "\n" not in err
    assert not (tmp_path / "x.parquet").exists()
    assert main(["sim", "inspect", str(tmp_path / "missing.parquet")]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert main(["sim", "branch", str(bad), "--repeats", "dependent:2", "--out", str(tmp_path / "b")]) == 1
