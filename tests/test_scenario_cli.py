"""``simready scenario``: sample into a folder, explain, bad input (one line, exit 1, nothing written)."""

from __future__ import annotations

import json

import pytest

from simready.cli import main
from simready.artifacts.layout import COVERAGE, REJECTIONS
from simready.scenario.manifest import load_manifest, manifest_bytes


def test_sample_writes_manifests_rejections_and_coverage(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    rc = main(["scenario", "sample", "--template", "residential_crosswalk_v3", "--intent",
               "pedestrian_emerges_behind_van", "--n", "5", "--out", str(out), "--quiet"])
    assert rc == 0
    files = sorted(p.name for p in out.iterdir())
    manifests = [f for f in files if f.startswith("rc3-ped-")]
    assert len(manifests) == 5 and COVERAGE in files and REJECTIONS in files
    for name in manifests:
        m = load_manifest(out / name)
        assert (out / name).read_bytes() == manifest_bytes(m)
    coverage = json.loads((out / COVERAGE).read_text())
    assert coverage["accepted"] == 5 and coverage["proposals"] == coverage["accepted"] + coverage["rejected"]
    rows = [json.loads(line) for line in (out / REJECTIONS).read_text().splitlines()]
    assert len(rows) == coverage["rejected"] and all(r["reason"] for r in rows)
    assert "5 accepted" in capsys.readouterr().out

    rc = main(["scenario", "explain", str(out / manifests[0])])
    story = capsys.readouterr().out
    assert rc == 0
    assert "Causes, in sampling order" in story and "ped.spawn" in story and "Timeline" in story


def test_sample_refuses_a_non_empty_folder_and_deletes_nothing(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    args = ["scenario", "sample", "--template", "two_lane_arterial", "--intent", "lead_vehicle_brakes", "--n", "2",
            "--out", str(out), "--quiet"]
    assert main(args) == 1
    assert "not empty" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (out / "keep.txt").read_text() == "x"
    (out / "keep.txt").unlink()
    assert main(args) == 0
    assert (out / COVERAGE).exists()


@pytest.mark.parametrize("args, message", [
    (["--template", "nowhere", "--intent", "cut_in"], "unknown template 'nowhere'"),
    (["--template", "two_lane_arterial", "--intent", "teleport"], "unknown intent 'teleport'"),
    # The intents' feasibility lines (SPEC §18): the first map affordance the template lacks.
    (["--template", "two_lane_arterial", "--intent", "pedestrian_emerges_behind_van"],
     "no crosswalk (pedestrian_emerges_behind_van needs it)"),
    (["--template", "two_lane_arterial", "--intent", "cut_in", "--cell", "gap_s=1.0..1.0"], "empty range"),
    (["--template", "two_lane_arterial", "--intent", "cut_in", "--cell", "side=up"], "no declared side 'up'"),
    (["--template", "two_lane_arterial", "--intent", "signalized_left_turn"],
     "no junction joining ≥ 3 roads with traffic lights"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, args, message) -> None:
    out = tmp_path / "out"
    rc = main(["scenario", "sample", *args, "--n", "2", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert message in err and len(err.splitlines()) == 1 and err.startswith("error: ")
    assert not out.exists()
    assert not list(tmp_path.iterdir())


def test_explain_of_a_broken_manifest_is_one_line(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "1.0.0"}')
    assert main(["scenario", "explain", str(bad)]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_cells_lists_the_declared_cells(capsys) -> None:
    assert main(["scenario", "cells", "--intent", "cut_in", "--cell", "side=right"]) == 0
    out = capsys.readouterr().out
    assert "side=right" in out and "side=left" not in out
