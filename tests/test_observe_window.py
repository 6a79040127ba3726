"""Observation windows: ``from_s`` / ``until_s`` select sensor samples, ticks keep their own numbers."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from simready.testing.street import street_sample
from simready.common.errors import SimreadyError
from simready.artifacts.layout import ObservationDir
from simready.measurement.observe import ObserveOptions, observe
from simready.artifacts.records import ObservedFrame, Render, Results
from simready.world.rig_view import exact

SMALL = {"width_px": 48, "height_px": 32, "line_time_s": 2e-4, "azimuth_steps": 128, "channels": 8}
DURATION_S = 0.6
FROM_S, UNTIL_S = 0.17, 0.5


@pytest.fixture(scope="module")
def windowed(tmp_path_factory) -> Path:
    built, rig, trace = street_sample(DURATION_S, **SMALL)
    out = tmp_path_factory.mktemp("window") / "obs"
    observe(built, rig, trace, out, options=ObserveOptions(from_s=FROM_S, until_s=UNTIL_S, video=False))
    return out


def test_window_is_recorded_and_every_sample_lies_inside_it(windowed):
    obs = ObservationDir(windowed)
    render = Render.read(obs.render)
    assert render.settings.from_s == FROM_S and render.settings.until_s == UNTIL_S
    assert render.settings.window_s == [FROM_S, UNTIL_S]
    job = json.loads(obs.render_job.read_text())
    results = Results.read(obs.results)
    for s in ObservedFrame.read_lines(obs.observed_frames):
        duration = job["schedules"][s.sensor]["duration_s"]
        assert s.t_s >= FROM_S - 1e-12 and s.t_s + duration <= UNTIL_S + 1e-12
        # Tick k is still phase + k / rate of the sensor's own schedule (not renumbered from 0).
        assert s.t_s == job["schedules"][s.sensor]["times_s"][s.tick]
    assert all(n > 0 for n in render.frames.values())
    assert sorted(results.sensors) == sorted(render.frames)


def test_ticks_keep_the_sensors_own_numbering(windowed):
    obs = ObservationDir(windowed)
    results = Results.read(obs.results)
    cam = Render.read(obs.render).rig["front_camera"]["model"]
    ticks = sorted({e.tick for e in results.files if e.sensor == "front_camera" and e.pass_name == "rgb"})
    first = min(k for k in range(100) if exact(cam["phase_s"]) + Fraction(k) / exact(cam["rate_hz"]) >= exact(FROM_S))
    assert ticks[0] == first > 0
    assert ticks == list(range(first, first + len(ticks)))
    assert obs.file(obs.frame_name("front_camera", first, "rgb")).is_file()
    assert not obs.file(obs.frame_name("front_camera", 0, "rgb")).exists()
    # The first observed frame has no predecessor: its forward correspondence exists, its backward does not.
    truth = {e.path for e in results.files if e.pass_name.startswith("truth")}
    assert obs.frame_name("front_camera", first, "truth.forward") in truth
    assert obs.frame_name("front_camera", first, "truth.backward") not in truth


def test_windowed_frames_are_the_full_clips_frames(windowed, tmp_path):
    """A sample re-renders alike whatever else is rendered: the window's files equal the full run's."""
    built, rig, trace = street_sample(DURATION_S, **SMALL)
    full = tmp_path / "full"
    observe(built, rig, trace, full, options=ObserveOptions(until_s=UNTIL_S, video=False, passes=("rgb", "lidar")))
    part = {e.path: e.sha256 for e in Results.read(ObservationDir(windowed).results).files
            if e.pass_name in ("rgb", "lidar")}
    whole = {e.path: e.sha256 for e in Results.read(ObservationDir(full).results).files
             if e.pass_name in ("rgb", "lidar")}
    assert part and set(part) < set(whole)
    assert all(whole[p] == h for p, h in part.items())


@pytest.mark.parametrize("kw", [{"from_s": -0.1}, {"from_s": float("nan")}, {"from_s": 0.5, "until_s": 0.4}])
def test_bad_windows_are_refused(kw):
    with pytest.raises(SimreadyError):
        ObserveOptions(**kw)


def test_sense_cli_takes_from(tmp_path):
    import argparse

    from simready.measurement.cli import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["sense", "t.parquet", "--manifest", "m.json", "--out", str(tmp_path / "o"),
                              "--from", "0.25", "--until", "1.0"])
    assert args.from_s == 0.25 and args.until == 1.0
