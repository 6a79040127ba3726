"""``simready export nuscenes`` (issue 18): the official nuScenes devkit loads the export, walks every sample, and
its own projection of each annotation box onto the camera encloses the instance's pixels in our id image."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from simready.common import paths
from simready.cli import main
from simready.export.nuscenes import VERSION, token
from simready.artifacts.layout import SampleDir
from simready.measurement.options import ObserveOptions
from simready.artifacts.records import Legend, Results
from simready.sensors_hw.camera import decode_id_rgb
from simready.testing.observed import observed_street_sample
from simready.world.identity import actor_id

NUSC_PYTHON = paths.PROJECT_ROOT / ".venv-nuscenes" / "bin" / "python"
CHECK = Path(__file__).with_name("nuscenes_devkit_check.py")
# A near-global shutter (0.04 ms over 48 rows) so the annotations, at each frame's first-row time, are where
# every row saw the actors; lens distortion reaches only the RGB, never the id pass.
SMALL = {"width_px": 96, "height_px": 48, "line_time_s": 1e-6, "azimuth_steps": 256, "channels": 16}
DURATION_S = 0.44


def _nuscenes_venv() -> None:
    """Build the devkit's venv through the Makefile (what CI's ``make test`` does first) when it is missing."""
    if not NUSC_PYTHON.exists():
        subprocess.run(["make", "-s", "nuscenes-venv"], cwd=paths.PROJECT_ROOT, check=True, timeout=900)


@pytest.mark.slow
def test_the_devkit_loads_the_export_and_projects_every_box_around_its_pixels(tmp_path):
    _nuscenes_venv()
    options = ObserveOptions(passes=("rgb", "id", "lidar", "radar"), video=False, writer_thread=False)
    sample = observed_street_sample(tmp_path / "in", DURATION_S, options, **SMALL)
    out = tmp_path / "nuscenes"
    assert main(["export", "nuscenes", str(sample.root), "--out", str(out)]) == 0
    again = tmp_path / "again"
    assert main(["export", "nuscenes", str(sample.root), "--out", str(again)]) == 0
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((out / f).read_bytes() == (again / f).read_bytes() for f in files)  # the same samples, the same bytes
    done = subprocess.run([str(NUSC_PYTHON), str(CHECK), str(out), VERSION], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)

    obs = SampleDir(sample.root).observations
    results = Results.read(obs.results)
    frames = results.cameras["front_camera"].frames
    assert seen["scenes"] == 1 and len(seen["samples"]) == len(frames)
    legend = {e.compact_id: e.entity for e in Legend.read(obs.legend).entries}
    lidar = {f"{s.tick:08d}": s.points for s in results.sweeps["roof_lidar"]}
    for filename, n in seen["clouds"].items():  # every key cloud the devkit read has its points
        if filename.endswith(".pcd.bin"):
            assert n == lidar[filename[-16:-8]]
    checked = 0
    for got, frame in zip(seen["samples"], frames):
        assert (got["width"], got["height"]) == (SMALL["width_px"], SMALL["height_px"])
        ids = decode_id_rgb(np.asarray(Image.open(obs.file(obs.frame_name("front_camera", frame.tick, "id")))))
        boxes = {b["instance"]: b for b in got["boxes"]}
        for cid in np.unique(ids[ids > 0]):
            entity = legend[int(cid)]
            if "/actor:" not in entity:
                continue  # static scenery has no annotation
            box = boxes[token("instance", sample.sample_id, entity.split("/actor:")[1])]
            assert box["in_front"]
            v, u = np.nonzero(ids == cid)
            assert box["u"][0] - 1 <= u.min() and u.max() <= box["u"][1] + 1, (entity, box, u.min(), u.max())
            assert box["v"][0] - 1 <= v.min() and v.max() <= box["v"][1] + 1, (entity, box, v.min(), v.max())
            checked += 1
    assert checked >= 5
    assert actor_id(sample.sample_id, "ego")  # the ego carries the rig and is never annotated
    assert all(token("instance", sample.sample_id, "ego") not in {b["instance"] for b in s["boxes"]}
               for s in seen["samples"])


def test_a_sample_folder_missing_a_file_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys):
    options = ObserveOptions(passes=("rgb", "lidar"), video=False, writer_thread=False)
    sample = observed_street_sample(tmp_path / "in", 0.24, options, **SMALL)
    obs = SampleDir(sample.root).observations
    ply = obs.file(obs.frame_name("roof_lidar", Results.read(obs.results).sweeps["roof_lidar"][0].tick, "lidar"))
    ply.unlink()
    out = tmp_path / "nuscenes"
    assert main(["export", "nuscenes", str(sample.root), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(ply) in err and "missing" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_lidar_clouds_are_ego_motion_compensated_to_the_sweep_timestamp(tmp_path):
    """Issue 26 item 5: each exported point, posed with the sweep's one sensor pose (at its sample_data timestamp,
    the sweep's start), lands where its beam hit: the sensor's pose at the point's own firing time (the PLY's
    ``t`` after ``sampleTime``) applied to the PLY point. The ego moves, so the raw cloud would not."""
    from simready.sensors_hw.lidar import read_ply
    from simready.sensors_hw.scene_build import ego_track
    from simready.testing.street import street_sample

    options = ObserveOptions(passes=("rgb", "lidar"), video=False, writer_thread=False)
    sample = observed_street_sample(tmp_path / "in", DURATION_S, options, **SMALL)
    built, rig, _ = street_sample(DURATION_S, **SMALL)
    rig = rig.on_body(ego_track(built))
    out = tmp_path / "nuscenes"
    assert main(["export", "nuscenes", str(sample.root), "--out", str(out)]) == 0
    obs = SampleDir(sample.root).observations
    results = Results.read(obs.results)
    entries = {(e.sensor, e.tick): e for e in results.files if e.pass_name == "lidar"}
    checked = 0
    worst_raw = 0.0
    for sweep in results.sweeps["roof_lidar"]:
        entry = entries[("roof_lidar", sweep.tick)]
        assert entry.sample_time is not None and entry.sample_time.seconds == sweep.t0_s
        ply = read_ply(obs.file(entry.path))
        assert ply["t"].min() >= 0.0 and ply["t"].max() < 0.1  # seconds since the sweep's start, within the sweep
        (path,) = out.rglob(f"*__roof_lidar__{sweep.tick:08d}.pcd.bin")
        cloud = np.fromfile(path, "<f4").reshape(-1, 5)[:, :3].astype(np.float64)
        raw = np.stack([ply["x"], ply["y"], ply["z"]], axis=1).astype(np.float64)
        T_hit = rig.T_world_sensor("roof_lidar", entry.sample_time.seconds + ply["t"].astype(np.float64), clamp=True)
        hit = np.einsum("nij,nj->ni", T_hit[:, :3, :3], raw) + T_hit[:, :3, 3]
        T0 = rig.T_world_sensor("roof_lidar", sweep.t0_s, clamp=True)
        posed = cloud @ T0[:3, :3].T + T0[:3, 3]
        assert np.abs(posed - hit).max() < 2e-3  # float32 in the file
        worst_raw = max(worst_raw, float(np.abs(raw @ T0[:3, :3].T + T0[:3, 3] - hit).max()))
        checked += len(cloud)
    assert checked > 1000
    assert worst_raw > 0.05  # the ego moves during a sweep: the uncompensated cloud is off by v·Δt
