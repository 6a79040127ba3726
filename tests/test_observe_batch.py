"""The measurement stage over a real sample folder: base around the decision, each branch after it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from simready.artifacts.layout import ObservationDir, SampleDir
from simready.measurement.batch import ObservationWindow, observe_batch, observe_sample_dir, results_versions
from simready.artifacts.records import ObservedFrame, Outcomes, Render, Results
from simready.scenario.manifest import manifest_bytes
from tests.fixtures.samples import SMALL, TLA, WINDOW, make_sample
from tests.fixtures.sim import catalog, template


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[Path, dict]:
    d = make_sample(tmp_path_factory.mktemp("batch"))
    row = observe_sample_dir(d, template(TLA), catalog(), window=WINDOW, overrides=SMALL, video=False)
    return d, row


def render(folder: ObservationDir) -> Render:
    return Render.read(folder.render)


def results(folder: ObservationDir) -> Results:
    return Results.read(folder.results)


def test_base_is_observed_around_the_decision(sample):
    d, row = sample
    s = SampleDir(d)
    t_d = Outcomes.read(s.outcomes).decision_t_s
    assert row["decision_t_s"] == t_d
    lo, hi = render(s.observations).settings.window_s
    assert (lo, hi) == (pytest.approx(t_d - 0.2), pytest.approx(t_d + 0.3))
    assert row["window_s"] == [lo, hi]
    ts = [f.t_s for f in ObservedFrame.read_lines(s.observations.observed_frames)]
    assert ts and min(ts) >= lo - 1e-9 and max(ts) <= hi + 1e-9


def test_each_branch_is_observed_from_the_decision_with_truth(sample):
    d, row = sample
    t_d = row["decision_t_s"]
    assert sorted(row["branches"]) == ["brake", "coast"]
    base_settings = render(SampleDir(d).observations)
    for label, b in row["branches"].items():
        out = SampleDir(d).branch(label).observations
        r = render(out)
        assert r.settings.window_s == [pytest.approx(t_d), pytest.approx(t_d + 0.3)]
        assert r.overrides == base_settings.overrides and r.rig == base_settings.rig
        assert b["files"] > 0 and b["frames"] == r.frames and all(n > 0 for n in b["frames"].values())
        passes = {e.pass_name for e in results(out).files}
        assert {"truth.surface", "truth.tracks"} <= passes


def test_branch_frames_pair_with_the_base_by_tick_and_differ_between_actions(sample):
    """Branch files keep the sensors' own ticks (a branch frame pairs with the base frame of the same name),
    and the brake and coast branches see different worlds after the decision."""
    d, _ = sample

    def files(folder: ObservationDir) -> dict[str, str]:
        return {e.path: e.sha256 for e in results(folder).files if e.pass_name in ("depth", "lidar")}

    s = SampleDir(d)
    base, brake, coast = (files(o) for o in (s.observations, s.branch("brake").observations,
                                             s.branch("coast").observations))
    assert set(brake) == set(coast) and set(brake) & set(base)
    last = max(p for p in brake if p.endswith(".depth.f32.bin"))
    assert brake[last] != coast[last]


def test_versions_include_branch_files_and_change_with_them(sample, tmp_path):
    d, _ = sample
    obs, truth = results_versions([d])
    copy = tmp_path / d.name
    shutil.copytree(d, copy)
    assert results_versions([copy]) == (obs, truth)
    shutil.rmtree(SampleDir(copy).branch("coast").observations.root)
    obs2, truth2 = results_versions([copy])
    assert obs2 != obs and truth2 != truth


def test_a_sample_without_branches_observes_the_clip_start(tmp_path):
    d = make_sample(tmp_path, branches=False)
    row = observe_sample_dir(d, template(TLA), catalog(), window=ObservationWindow(0.1, 0.15, True),
                             overrides=SMALL + ["camera.rate_hz=10"], video=False)
    assert row["decision_t_s"] is None and row["branches"] == {}
    assert render(SampleDir(d).observations).settings.window_s == [0.0, pytest.approx(0.25)]


def test_rerun_replaces_stale_branch_observations(sample, tmp_path):
    d, _ = sample
    copy = tmp_path / d.name
    shutil.copytree(d, copy)
    row = observe_sample_dir(copy, template(TLA), catalog(), window=ObservationWindow(0.1, 0.1, branches=False),
                             overrides=SMALL + ["camera.rate_hz=10"], video=False)
    assert row["branches"] == {}
    assert not SampleDir(copy).branch_observations()


def test_window_must_not_be_negative():
    with pytest.raises(ValueError):
        ObservationWindow(-1.0, 0.5, True)


def make_rainy(d: Path, rain_mmph: float = 25.0) -> None:
    """The sample's manifest with rain (the rollout stays: observation reads the weather from the manifest)."""
    from simready.scenario.manifest import parse_manifest

    manifest = SampleDir(d).manifest
    data = json.loads(manifest.read_text())
    data["environment"] |= {"weather": "rain", "wetness": 0.6, "rain_rate_mmph": rain_mmph}
    manifest.write_bytes(manifest_bytes(parse_manifest(data, "test")))


def test_a_rain_sample_gets_a_lidar_only_dry_sibling(sample, tmp_path):
    d, _ = sample
    copy = tmp_path / d.name
    shutil.copytree(d, copy)
    make_rainy(copy)
    window = ObservationWindow(0.2, 0.3, branches=False)
    row = observe_sample_dir(copy, template(TLA), catalog(), window=window, overrides=SMALL, video=True)
    s = SampleDir(copy)
    dry = results(s.dry_observations)
    assert row["dry"] is not None and row["dry"]["window_s"] == row["window_s"]
    assert set(dry.sensors) == {"roof_lidar"}
    assert not any(e.pass_name in ("rgb", "depth", "video") or e.pass_name.startswith("truth") for e in dry.files)
    r = render(s.dry_observations)
    assert r.atmosphere["rain_rate_mmph"] == 0.0 and r.settings.video is False
    assert render(s.observations).atmosphere["rain_rate_mmph"] == 25.0
    points = {o.root.name: sum(sweep.points for sweep in results(o).sweeps.get("roof_lidar", []))
              for o in (s.observations, s.dry_observations)}
    assert 0 < points[s.observations.root.name] < points[s.dry_observations.root.name]
    # The dry sibling is the dry scene's LiDAR, byte for byte.
    base = {e.path: e.sha256 for e in results(SampleDir(d).observations).files if e.pass_name == "lidar"}
    dry_lidar = {e.path: e.sha256 for e in dry.files if e.pass_name == "lidar"}
    assert dry_lidar and dry_lidar == base  # same window as the fixture's dry base observation
    obs, _ = results_versions([copy])
    shutil.rmtree(s.dry_observations.root)
    assert results_versions([copy])[0] != obs


def test_a_batch_observed_folder_by_folder_on_two_workers_is_the_same(sample, tmp_path, monkeypatch):
    """observe_batch: every folder of the batch (bases, branches, a rain sample's dry sibling) one item on two
    worker processes, the longest first; the same files and rows as each sample one after the other."""
    d, _ = sample
    rainy = tmp_path / "one" / d.name
    shutil.copytree(d, rainy)
    make_rainy(rainy)
    window = ObservationWindow(0.2, 0.3, branches=True, branch_truth=False)
    alone = observe_sample_dir(rainy, template(TLA), catalog(), window=window, overrides=SMALL, video=False)
    expected = {o.root.relative_to(rainy): Results.read(o.results).files
                for o in [SampleDir(rainy).observations, SampleDir(rainy).dry_observations,
                          *SampleDir(rainy).branch_observations()]}
    dry = tmp_path / "dry" / d.name
    shutil.copytree(d, dry)
    again = tmp_path / "rainy" / d.name
    shutil.copytree(rainy, again)
    monkeypatch.setenv("SIMREADY_WORKERS", "2")
    rows = observe_batch([dry, again], template(TLA), catalog(), window=window, overrides=SMALL, video=False)
    assert [r["sample"] for r in rows] == [d.name, d.name]
    assert rows[0]["dry"] is None and rows[1]["dry"] is not None
    figures = ("files", "frames", "window_s", "decision_t_s")
    assert {k: rows[1][k] for k in figures} == {k: alone[k] for k in figures}
    assert sorted(rows[1]["branches"]) == sorted(alone["branches"]) == ["brake", "coast"]
    got = {o.root.relative_to(again): Results.read(o.results).files
           for o in [SampleDir(again).observations, SampleDir(again).dry_observations,
                     *SampleDir(again).branch_observations()]}
    assert got == expected and len(got) == 4


def test_a_dry_sample_has_no_dry_sibling(sample):
    d, row = sample
    assert row["dry"] is None and not SampleDir(d).dry_observations.root.exists()


def test_branches_without_truth_keep_every_sensor_pass(sample, tmp_path):
    d, _ = sample
    copy = tmp_path / d.name
    shutil.copytree(d, copy)
    window = ObservationWindow(0.2, 0.3, branches=True, branch_truth=False)
    row = observe_sample_dir(copy, template(TLA), catalog(), window=window, overrides=SMALL, video=False)
    assert sorted(row["branches"]) == ["brake", "coast"]
    s = SampleDir(copy)
    assert "truth.surface" in {e.pass_name for e in results(s.observations).files}
    for label in row["branches"]:
        obs = s.branch(label).observations
        passes = {e.pass_name for e in results(obs).files}
        assert not any(p.startswith("truth") for p in passes)
        assert {"rgb", "depth", "id", "semantic"} <= passes and obs.observed_frames.is_file()


# --- a colliding branch is observed to its outcome (issue 28) ------------------------------------------------


def _trace_with(tmp_path: Path, collisions: list[dict]) -> Path:
    import pyarrow as pa

    from simready.sim.storage.trace import Trace, write_trace

    ticks = pa.table({"tick": [0], "t": [0.0], "actor_id": ["ego"]})
    return write_trace(Trace({"metric_subject": "ego"}, [], {"collisions": collisions}, ticks), tmp_path / "t.parquet")


def test_a_colliding_branch_is_observed_until_its_collision_is_over(tmp_path):
    from simready.measurement.batch import collision_settled_s

    window = ObservationWindow(pre_s=0.5, post_s=1.5, outcome_tail_s=0.5)
    # No collision: the review window. A late collision: until 0.5 s after it settled, clamped to the clip.
    assert window.branch_span(4.0, 20.0) == (4.0, 5.5)
    assert window.branch_span(4.0, 20.0, settled_s=8.0) == (4.0, 8.5)
    assert window.branch_span(4.0, 8.2, settled_s=8.0) == (4.0, 8.2)
    assert window.branch_span(4.0, 20.0, settled_s=4.2) == (4.0, 5.5)  # never shorter than post_s
    assert ObservationWindow(0.5, 1.5).branch_span(4.0, 20.0, settled_s=8.0) == (4.0, 5.5)  # tail off
    with pytest.raises(ValueError):
        ObservationWindow(0.5, 1.5, outcome_tail_s=-1.0)

    hit = {"t": 6.66, "a": "ego", "b": "ped", "t_end": 6.9, "t_settled": 7.4}
    other = {"t": 5.0, "a": "lead", "b": "ped", "t_settled": 9.0}  # not the subject's
    before = {"t": 3.0, "a": "ego", "b": "van", "t_settled": 3.5}  # before the decision
    assert collision_settled_s(_trace_with(tmp_path, [before, other, hit]), 4.0) == 7.4
    assert collision_settled_s(_trace_with(tmp_path, [{**hit, "t_settled": None}]), 4.0) == 6.9
    assert collision_settled_s(_trace_with(tmp_path, [other]), 4.0) is None


def test_the_default_suite_follows_colliding_branches_for_half_a_second(tmp_path):
    from simready.scenario.suite import OUTCOME_TAIL_S, load_suite

    assert load_suite().observation.outcome_tail_s == OUTCOME_TAIL_S == 0.5
