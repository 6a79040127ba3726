"""Reading a sample folder into gate evidence, missing stages, and ``simready validate``."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from simready.cli import main
from simready.artifacts.layout import MANIFEST, OBSERVATIONS_DIR, TRACE, SampleDir
from simready.artifacts.records import Results
from simready.testing.synthetic import (
    DT,
    street_header,
    street_pool,
    street_ticks,
    write_street_sample,
    write_trace,
)
from simready.validity.evidence import (
    EvidenceError,
    MissingStageError,
    ScenarioEvidence,
    SensorEvidence,
    collisions_from_events,
)
from simready.validity.evidence_reader import dry_reference_from_observations, evidence_from_sample_dir, read_ply_points
from simready.validity.gate import ValidityReport, validate_scenario


@pytest.fixture(scope="module")
def sample(street_sample_dir):
    return street_sample_dir  # write_street_sample's default sample, read only (tests copy what they break)


@pytest.fixture(scope="module")
def rain(tmp_path_factory):
    """The street sample observed in rain, without a dry sibling (tests copy it to add one)."""
    return write_street_sample(tmp_path_factory.mktemp("rain") / "street-000002", "street-000002", weather="rain")


def _copy(sample, tmp_path, name="s"):
    dst = tmp_path / name
    shutil.copytree(sample, dst)
    return dst


def test_sample_folder_becomes_evidence(sample):
    ev = evidence_from_sample_dir(sample)
    assert ev.sample_id == "street-000001" and ev.ego_id == "ego" and ev.dt == DT
    assert ev.actor_classes == {"ego": "vehicle", "ped": "pedestrian", "van": "vehicle"}
    assert ev.actor_dims["van"] == (5.4, 2.0)
    assert ev.sensor is not None and ev.sensor.notes == []
    lidar = ev.sensor.detections[ev.sensor.detections["sensor_type"] == "lidar"]
    assert lidar["frame"].nunique() == 20  # LIDAR_MAX_SWEEPS of the clip's 200 sweeps
    r = validate_scenario(ev)
    assert r.accepted and r.weight == 1.0
    assert r.check("sensor").passed and r.check("sensor").detail["positions_compared"] > 0


@pytest.mark.parametrize(
    "remove, stage",
    [(MANIFEST, "scenario"), (TRACE, "simulation"), (OBSERVATIONS_DIR, "measurement")],
)
def test_missing_stage_is_named(sample, tmp_path, remove, stage):
    s = _copy(sample, tmp_path)
    target = s / remove
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    with pytest.raises(MissingStageError, match=f"{stage} stage output missing") as err:
        evidence_from_sample_dir(s)
    assert err.value.stage == stage and str(s) in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_observations_allowed_as_trajectory_only(sample, tmp_path):
    s = _copy(sample, tmp_path)
    shutil.rmtree(SampleDir(s).observations.root)
    r = validate_scenario(evidence_from_sample_dir(s, require_sensors=False))
    assert r.check("sensor").detail["evidence"] == "absent" and r.capped and r.weight == 0.30


def test_listed_lidar_sweep_that_is_missing_names_the_file(sample, tmp_path):
    s = _copy(sample, tmp_path)
    obs = SampleDir(s).observations
    obs.file(Results.read(obs.results).files[0].path).unlink()
    with pytest.raises(MissingStageError, match=r"measurement stage output missing \(results.json lists lidar_top/"):
        evidence_from_sample_dir(s)


def test_baseline_and_reference_pool_from_files(sample, tmp_path):
    pool = tmp_path / "pool.parquet"
    street_pool(4).to_parquet(pool)
    r = validate_scenario(evidence_from_sample_dir(sample, baseline=sample, reference_pool=pool))
    d = r.check("distribution")
    assert d.detail["pool"] == "given" and d.detail["baseline"] == "given" and d.score == 1.0


def test_trace_with_entity_ids_maps_to_manifest_actors(sample, tmp_path):
    s = _copy(sample, tmp_path)
    ticks, _, _ = street_ticks()
    ticks["actor_id"] = "street-000001/actor:" + ticks["actor_id"]
    events = [{"type": "collision", "t": 3.0, "actors": ["street-000001/actor:ego", "street-000001/actor:van"]}]
    write_trace(SampleDir(s).trace, ticks, street_header(s, ticks), events)
    ev = evidence_from_sample_dir(s, require_sensors=False)
    assert ev.actor_classes["street-000001/actor:ped"] == "pedestrian"
    assert ev.ego_id == "street-000001/actor:ego"
    assert [(c.t_s, c.a, c.b) for c in ev.collisions] == [(3.0, "ego", "van")]


def test_collision_event_spellings():
    events = [{"kind": "collision", "t_s": 1.0, "a": "x", "b": "y"}, {"type": "spawn", "t": 0.0},
              {"event": "collision", "time": 2.0, "pair": ["p", "q"]}, {"type": "collision", "actors": ["z"]}]
    assert [(c.t_s, c.a, c.b) for c in collisions_from_events(events)] == [(1.0, "x", "y"), (2.0, "p", "q")]


def test_binary_ply(tmp_path):
    rec = np.zeros(3, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("intensity", "<f4"), ("instance_id", "<u4")])
    rec["x"] = [1, 2, 3]
    rec["instance_id"] = [0, 5, 5]
    header = ("ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
              "property float z\nproperty float intensity\nproperty uint instance_id\nend_header\n")
    path = tmp_path / "a.ply"
    path.write_bytes(header.encode() + rec.tobytes())
    xyz, inst = read_ply_points(path)
    assert xyz[:, 0].tolist() == [1, 2, 3] and inst.tolist() == [0, 5, 5]


def test_evidence_missing_columns_is_a_user_error():
    ticks, classes, _ = street_ticks(1.0)
    with pytest.raises(EvidenceError, match="ticks: missing columns vx"):
        ScenarioEvidence(sample_id="a", ticks=ticks.drop(columns=["vx"]), actor_classes=classes, dt=DT)
    with pytest.raises(EvidenceError, match="dt: tick must be a positive"):
        ScenarioEvidence(sample_id="a", ticks=ticks, actor_classes=classes, dt=0.0)
    with pytest.raises(EvidenceError, match="detections: missing columns"):
        SensorEvidence(pd.DataFrame({"t": [0.0]}))


def test_cli_validate_writes_the_report(sample, tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["validate", str(sample), "--out", str(out)]) == 0
    report = ValidityReport.model_validate_json(out.read_text())
    assert report.accepted and report.sample_id == "street-000001"
    printed = capsys.readouterr().out
    assert printed.startswith("ACCEPTED  street-000001") and "pass  physical" in printed


def test_cli_rejected_sample_exits_2_with_reasons(tmp_path, capsys):
    ticks, _, _ = street_ticks()
    ticks.loc[(ticks["actor_id"] == "ped"), ["vy", "speed_mps"]] = 6.0
    ticks.loc[(ticks["actor_id"] == "ped"), "y"] = -12.0 + 6.0 * ticks.loc[ticks["actor_id"] == "ped", "t"]
    s = write_street_sample(tmp_path / "fast-ped", ticks=ticks)
    out = tmp_path / "r.json"
    assert main(["validate", str(s), "--out", str(out)]) == 2
    assert "actor ped: speed 6.00 m/s exceeds pedestrian limit 3.50 m/s" in capsys.readouterr().out
    assert not json.loads(out.read_text())["accepted"]


def test_cli_missing_stage_is_one_line_and_nonzero(sample, tmp_path, capsys):
    s = _copy(sample, tmp_path)
    shutil.rmtree(SampleDir(s).observations.root)
    out = tmp_path / "r.json"
    assert main(["validate", str(s), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "measurement stage output missing" in err
    assert not out.exists()
    assert main(["validate", str(s), "--out", str(out), "--trajectory-only"]) == 0


def test_cli_nonexistent_folder(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope"), "--out", str(tmp_path / "r.json")]) == 1
    assert "sample folder not found" in capsys.readouterr().err


def test_rain_sample_reads_its_dry_sibling_and_flags_unattenuated_lidar(rain, tmp_path):
    """A dry sibling with the very same LiDAR as the rain observation: rain attenuated nothing → flagged."""
    s = _copy(rain, tmp_path, "street-000002")
    sample = SampleDir(s)
    shutil.copytree(sample.observations.root, sample.dry_observations.root)
    dims = {"ego": (4.6, 2.1), "ped": (0.5, 0.5), "van": (5.4, 2.0)}
    dry = dry_reference_from_observations(sample.dry_observations.root, dims)
    ev = evidence_from_sample_dir(s)
    assert ev.sensor.dry_reference == dry and dry.returns_per_sweep == ev.sensor.lidar_returns_per_sweep
    sensor = validate_scenario(ev).check("sensor")
    assert not sensor.passed
    assert "not below the dry reference" in json.dumps(sensor.detail)


def test_rain_without_dry_sibling_is_noted_not_failed(rain):
    s = rain
    sensor = validate_scenario(evidence_from_sample_dir(s)).check("sensor")
    assert sensor.passed and any("dry reference" in n for n in sensor.detail.get("notes", []))


def test_camera_and_lidar_positions_agree_on_the_ground_plane_not_in_height(sample, tmp_path):
    """A LiDAR centroid 0.9 m up a pedestrian's side agrees with the camera's body origin on the ground."""
    ev = evidence_from_sample_dir(sample)
    det = ev.sensor.detections.copy()
    det.loc[det["sensor_type"] == "lidar", "z"] += 0.9
    raised = validate_scenario(replace(ev, sensor=replace(ev.sensor, detections=det)))
    assert raised.check("sensor").passed
    assert raised.check("sensor").score == validate_scenario(ev).check("sensor").score


def test_a_record_file_is_read_once_per_version_within_shared_records(tmp_path):
    from simready.artifacts.records import ObservedFrame, Verdict, shared_records

    path, lines = tmp_path / "verdict.json", tmp_path / "observed-frames.jsonl"
    record = {"sample": "s", "intent": "i", "verdict": "pass", "findings": [], "issues": [], "min_ttc_s": None,
              "collisions": 0, "trace_sha256": "sha256:0"}
    path.write_text(json.dumps(record))
    lines.write_text(json.dumps({"sensor": "cam", "tick": 1, "t_s": 0.1, "actors": {}}) + "\n")
    assert Verdict.read(path) is not Verdict.read(path)  # outside: each read parses
    with shared_records():
        first = Verdict.read(path)
        assert Verdict.read(path) is first
        assert list(ObservedFrame.read_lines(lines)) == list(ObservedFrame.read_lines(lines))
        assert next(ObservedFrame.read_lines(lines)) is next(ObservedFrame.read_lines(lines))
        path.write_text(json.dumps({**record, "verdict": "rejected"}))  # a new version of the file is read again
        assert Verdict.read(path).verdict == "rejected"
    assert Verdict.read(path) is not Verdict.read(path)
