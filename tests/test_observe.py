"""The observation layout (SPEC §10): every file listed with its hash, passes, overrides, parity, job, videos."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from simready.testing.street import street_sample
from simready.common.hashing import file_sha256
from simready.artifacts.layout import RESULTS, ObservationDir
from simready.measurement.observe import observe
from simready.measurement.options import PASSES, ObserveOptions
from simready.artifacts.records import Legend, ObservedFrame, Parity, Render, Results
from simready.sensors_hw.camera import decode_id_rgb
from simready.sensors_hw.lidar import read_ply
from simready.truth.flow import dense
from simready.truth.reader import TruthReader

SMALL = {"width_px": 96, "height_px": 64, "line_time_s": 2e-4, "azimuth_steps": 256, "channels": 16}
DURATION_S = 0.32


def run(tmp: Path, name: str = "obs", *, duration_s: float = DURATION_S, **kw) -> tuple[Path, object]:
    built, rig, trace = street_sample(duration_s, **SMALL)
    out = tmp / name
    return out, observe(built, rig, trace, out, **kw)


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> Path:
    out, _ = run(tmp_path_factory.mktemp("observe"))
    return out


def results_of(out: Path) -> Results:
    return Results.read(ObservationDir(out).results)


def render_of(out: Path) -> Render:
    return Render.read(ObservationDir(out).render)


def job_of(out: Path) -> dict:
    return json.loads(ObservationDir(out).render_job.read_text())


def test_every_file_is_listed_once_with_its_size_and_hash(full):
    listed = {e.path: e for e in results_of(full).files}
    on_disk = {p.relative_to(full).as_posix() for p in full.rglob("*") if p.is_file()}
    assert on_disk - set(listed) == {RESULTS}
    assert set(listed) <= on_disk
    for path, e in listed.items():
        assert e.bytes == (full / path).stat().st_size
        assert e.sha256 == file_sha256(str(full / path))
        assert {"sensorId", "tick", "pass", "path", "bytes", "sha256"} <= set(e.dump())  # SPEC §10's names
    assert "artifacts" in json.loads((full / RESULTS).read_text())
    assert not list(full.parent.glob(".obs.*"))  # the temporary sibling is gone


def test_layout_names_and_frames_have_all_their_passes(full):
    results = results_of(full)
    files = results.files
    cams = [e for e in files if e.sensor == "front_camera" and e.tick is not None
            and not e.pass_name.startswith("truth")]
    by_tick: dict[int, set[str]] = {}
    for e in cams:
        by_tick.setdefault(e.tick, set()).add(e.pass_name)
        assert re.fullmatch(r"front_camera/\d{8}\.(rgb\.png|depth\.f32\.bin|semantic\.png|id\.png)", e.path)
    assert by_tick and all(p == {"rgb", "depth", "id", "semantic"} for p in by_tick.values())
    assert sorted(by_tick) == list(range(len(by_tick)))
    lidar = [e.path for e in files if e.pass_name == "lidar"]
    radar = [e.path for e in files if e.pass_name == "radar"]
    assert lidar and all(re.fullmatch(r"roof_lidar/\d{8}\.ply", p) for p in lidar)
    assert radar and all(re.fullmatch(r"front_radar/\d{8}\.csv", p) for p in radar)
    assert (full / radar[0]).read_text().splitlines()[0].startswith("range_m,azimuth_rad,elevation_rad")
    assert (full / lidar[0]).read_text().splitlines()[:2] == ["ply", "format ascii 1.0"]
    # Own rates: camera 20 Hz, LiDAR 10 Hz, radar 13 Hz, each window inside the 0.32 s clip.
    assert results.sensors["front_camera"].ticks == 7
    assert results.sensors["roof_lidar"].ticks == 3
    assert results.sensors["front_radar"].ticks == 5
    obs = ObservationDir(full)
    raw = np.fromfile(obs.file(obs.frame_name("front_camera", 0, "depth")), "<f4").reshape(64, 96)
    assert (raw > 0).mean() > 0.5 and np.all(np.isfinite(raw)) and raw.max() <= 1.0  # near_m / z, 0: no hit
    semantic = Image.open(obs.file(obs.frame_name("front_camera", 0, "semantic")))
    assert semantic.mode == "RGB" and not np.asarray(semantic)[..., :2].any()  # the class in the blue channel


def test_camera_frames_record_projection_and_sample_times(full):
    cam = results_of(full).cameras["front_camera"]
    proj = cam.projection
    assert proj.fx == proj.fy == pytest.approx(48.0) and (proj.cx, proj.cy) == (47.5, 31.5)
    assert proj.distortion.k1 == -0.05 and proj.shutter == "rolling"
    f1 = cam.frames[1]
    assert f1.t0_s == pytest.approx(0.05)
    st = f1.sample_times_s
    assert st.last_row == pytest.approx(st.first_row + 63 * 2e-4) and st.rows == 64
    poses = job_of(full)["camera_poses"]["front_camera"]
    assert [f["tick"] for f in poses["frames"]] == [f.tick for f in cam.frames]
    every = np.load(ObservationDir(full).file(poses["every_row"]))
    assert every["T_world_camera"].shape == (7, 64, 4, 4)
    np.testing.assert_allclose(every["T_world_camera"][1, 0], f1.T_world_camera_first_row)
    # The ego moves at 8 m/s: the last row's camera is 8·63·line_time further along x.
    dx = every["T_world_camera"][1, -1, 0, 3] - every["T_world_camera"][1, 0, 0, 3]
    assert dx == pytest.approx(8.0 * 63 * 2e-4)


def test_pairing_table_selects_with_exact_offsets(full):
    job = job_of(full)
    rows = job["pairing"]["tables"]["front_camera"]
    assert job["pairing"]["selection_only"] is True and len(rows) == 7
    r3 = rows[3]  # camera at 0.15 s: LiDAR sweep 1 (0.1 s start) or 2 (0.2 s), radar frame 2 (2/13 s)
    assert r3["camera_t_s"] == pytest.approx(0.15)
    assert r3["front_radar_tick"] == 2 and r3["front_radar_offset_s"] == pytest.approx(2 / 13 - 0.15)
    assert r3["roof_lidar_offset_s"] == pytest.approx(r3["roof_lidar_t_s"] - 0.15)


def test_render_json_records_passes_rig_and_no_timings(full):
    render = render_of(full)
    assert render.passes == list(PASSES)
    assert render.rig["front_camera"]["model"]["width_px"] == 96
    assert render.rig["roof_lidar"]["type"] == "lidar"
    assert render.overrides == [] and render.warnings == []
    assert render.frames == {"front_camera": 7, "front_radar": 5, "roof_lidar": 3}
    # How long it took is not what was observed: the same inputs give the same render.json on every machine.
    assert "timings_s" not in json.loads(ObservationDir(full).render.read_text())


def test_observed_frames_and_parity(full):
    lines = list(ObservedFrame.read_lines(ObservationDir(full).observed_frames))
    assert len(lines) == 7 + 3 + 5
    assert [x.t_s for x in lines] == sorted(x.t_s for x in lines)
    ego = lines[0].actors["bench-street/actor:ego"]
    assert ego.present and len(ego.rotation_xyzw) == 4 and not ego.visible  # sensors ignore their carrier
    car = [x.actors["bench-street/actor:car_2"] for x in lines if x.sensor == "front_camera"]
    assert all(c.visible for c in car)  # the car ahead in the same lane
    parity = Parity.read(ObservationDir(full).parity)
    assert parity.passed and parity.max_position_error_m < 1e-9 and parity.max_angle_error_rad < 1e-9
    assert set(parity.actors) == {f"bench-street/actor:{a}" for a in ("car_1", "car_2", "ego", "ped")}


def test_truth_files_are_listed_and_readable(full):
    obs = ObservationDir(full)
    truth = [e for e in results_of(full).files if e.pass_name.startswith("truth")]
    kinds = {e.pass_name for e in truth}
    assert kinds == {"truth.surface", "truth.motion_field", "truth.forward", "truth.backward", "truth.tracks",
                     "truth.track_events"}
    assert all(obs.is_truth(e.path) for e in truth)
    fwd = [e for e in truth if e.pass_name == "truth.forward"]
    bwd = [e for e in truth if e.pass_name == "truth.backward"]
    assert [e.tick for e in fwd] == list(range(6)) and [e.tick for e in bwd] == list(range(1, 7))
    assert all(e.target_tick == e.tick + 1 for e in fwd)
    meta = json.loads(pq.read_schema(obs.file(fwd[0].path)).metadata[b"simready.truth"])
    assert meta["direction"] == "forward" and meta["target_tick"] == 1
    reader = TruthReader(obs)  # the files store pixel once (surface) and the flags as bits: the reader puts them back
    t = reader.table("front_camera", fwd[0].tick, "forward")
    flow = dense(t.column("pixel").to_numpy(), np.stack([t.column("flow_du_px").to_numpy(),
                                                         t.column("flow_dv_px").to_numpy()], 1), 64, 96)
    assert flow.shape == (64, 96, 2) and np.isfinite(flow).any()
    static = t.column("static").to_numpy()
    assert static.any() and np.all(t.column("disp_x_m").to_numpy()[static] == 0.0)
    assert "disoccluded" in reader.table("front_camera", bwd[0].tick, "backward").column_names
    tracks = pq.read_table(obs.file(obs.truth_table_name("front_camera", "truth.tracks"))).to_pandas()
    assert tracks["track_id"].str.fullmatch(r".+#\d+").all()


def test_legend_names_every_id_the_sensors_wrote(full):
    obs = ObservationDir(full)
    legend = {e.compact_id: e for e in Legend.read(obs.legend).entries}
    ids = set(np.unique(decode_id_rgb(np.array(Image.open(obs.file(obs.frame_name("front_camera", 2, "id"))))))
              .tolist()) - {0}
    ids |= set(read_ply(obs.file(obs.frame_name("roof_lidar", 1, "lidar")))["instance_id"].tolist())
    assert ids and ids <= set(legend)
    assert legend[min(ids)].entity.startswith(("bench_street/instance:", "bench-street/actor:"))


def test_videos_exist_per_sensor(full):
    obs = ObservationDir(full)
    for name in ("front_camera", "roof_lidar", "front_radar"):
        data = obs.file(obs.video_name(name)).read_bytes()
        assert data[4:8] == b"ftyp" and len(data) > 500


def test_passes_select_what_is_written(tmp_path):
    out, res = run(tmp_path, options=ObserveOptions(passes=("rgb", "depth"), video=False))
    written = {e.pass_name for e in results_of(out).files}
    assert {"rgb", "depth"} <= written and not written & {"id", "semantic", "lidar", "radar", "truth.surface"}
    obs = ObservationDir(out)
    assert not (out / "roof_lidar").exists() and not obs.truth.exists() and not obs.video_dir.exists()
    assert render_of(out).passes == ["rgb", "depth"]
    assert res.frames == {"front_camera": 7}


def test_set_overrides_are_applied_and_recorded(tmp_path):
    out, _ = run(tmp_path, duration_s=0.12, overrides=["lens.distortion=0", "roof_lidar.range_noise_m=0"],
                 options=ObserveOptions(video=False, lidar_format="binary"))
    render = render_of(out)
    assert render.rig["front_camera"]["model"]["distortion_k1"] == 0.0
    assert render.rig["roof_lidar"]["model"]["range_noise_m"] == 0.0
    assert [o.key for o in render.overrides] == ["lens.distortion", "roof_lidar.range_noise_m"]
    assert render.settings.lidar_format == "binary"
    obs = ObservationDir(out)
    assert obs.file(obs.frame_name("roof_lidar", 0, "lidar")).read_bytes().startswith(
        b"ply\nformat binary_little_endian 1.0\n")


def test_same_inputs_give_the_same_files_with_or_without_the_writer_thread(tmp_path):
    a, _ = run(tmp_path, "a", duration_s=0.12, options=ObserveOptions(video=False, writer_thread=False))
    b, _ = run(tmp_path, "b", duration_s=0.12, options=ObserveOptions(video=False, writer_thread=True))
    # render.json holds timings and both it and the render job record the options; every product is equal.
    fa = {e.path: e.sha256 for e in results_of(a).files if e.pass_name not in ("render", "render_job")}
    fb = {e.path: e.sha256 for e in results_of(b).files if e.pass_name not in ("render", "render_job")}
    assert fa == fb and len(fa) > 30
    assert render_of(b).settings.writer_thread is True


def test_top_down_reviews_put_the_sensors_right_on_the_right():
    from simready.measurement.review_images import TOPDOWN_PX, lidar_topdown

    img = lidar_topdown(np.array([[20.0, -10.0, 0.0]]), 60.0)  # ahead and to the right (sensor −y)
    rows, cols = np.nonzero(img[..., 0] + img[..., 1] + img[..., 2] > 200)
    ahead_right = (rows < TOPDOWN_PX // 2 - 10) & (cols > TOPDOWN_PX // 2 + 10)
    assert ahead_right.sum() == 1  # the one point; the rest is the sensor marker at the centre


def test_pass_names_are_checked():
    from simready.measurement.options import PassError, parse_passes

    assert parse_passes("depth, rgb") == ("rgb", "depth")
    with pytest.raises(PassError, match="normals"):
        ObserveOptions(passes=("rgb", "normals"))
    with pytest.raises(PassError, match="no pass"):
        parse_passes(" , ")


def test_a_video_encoded_in_the_background_is_whole_when_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Video`` feeds its encoder on a thread of its own and ``finish`` lets it flush there; ``close`` waits, so the
    file holds every frame (each frame was the caller's to reuse once added), and an encoder's failure is raised."""
    import imageio.v2 as imageio

    from simready.measurement import video

    v = video.Video(tmp_path / "v.mp4", 10.0)
    frame = np.zeros((36, 64, 3), dtype=np.uint8)
    for k in range(12):
        frame[:] = 20 * k
        v.add(frame)
    v.finish()
    v.close()
    reader = imageio.get_reader(tmp_path / "v.mp4")
    try:
        assert reader.count_frames() == 12
        means = [float(np.asarray(f).mean()) for f in reader]
    finally:
        reader.close()
    # Twelve different greys, in order (the encoder's colour range changes the values, not their order).
    assert all(a + 5.0 < b for a, b in zip(means, means[1:])), means

    def gone(*args: object) -> list[str]:
        return [str(tmp_path / "encoder-gone")]

    monkeypatch.setattr(video, "encoder_command", gone)
    bad = video.Video(tmp_path / "bad.mp4", 10.0)
    with pytest.raises(OSError, match="encoder-gone"):
        for _ in range(3):
            bad.add(frame)
        bad.close()
    bad.close()  # raised once; closing again waits for nothing

    def fails(*args: object) -> list[str]:
        return ["sh", "-c", "exit 3"]

    monkeypatch.setattr(video, "encoder_command", fails)
    dead = video.Video(tmp_path / "dead.mp4", 10.0)
    # Its pipe broken or its exit status, whichever comes first: either way the status and the file, not a bare
    # "[Errno 32] Broken pipe".
    with pytest.raises(OSError, match=r"status 3 writing the review video .*dead\.mp4"):
        dead.add(frame)
        dead.close()
    # A frame smaller than the feeder's buffer: ffmpeg's end found when the input's end flushes it (or by its status).
    small = video.Video(tmp_path / "small.mp4", 10.0)
    small.add(np.zeros((16, 16, 3), dtype=np.uint8))
    with pytest.raises(OSError, match=r"status 3 writing the review video .*small\.mp4"):
        small.close()

    def stops(*args: object) -> list[str]:  # an encoder that fails mid-stream (its disk full, say)
        return ["sh", "-c", "head -c 500000 >/dev/null; exit 4"]

    monkeypatch.setattr(video, "encoder_command", stops)
    big = np.zeros((272, 480, 3), dtype=np.uint8)  # 392 kB a frame: more than the pipe holds
    gone = video.Video(tmp_path / "gone.mp4", 10.0)
    with pytest.raises(OSError, match=r"status 4 writing the review video .*gone\.mp4"):
        for _ in range(20):
            gone.add(big)
        gone.close()
    gone.close()


def test_a_folders_videos_share_one_encoder_and_are_the_bytes_of_one_each(tmp_path: Path) -> None:
    """``Videos``: a folder's videos encoded by one ffmpeg are the same files as each encoded by an ffmpeg of its own,
    and sensors of different rates fed in time order do not stall it (one ffmpeg reads its inputs in step, x264
    holds back frames, not seconds: a faster sensor's frames wait for a slower one's first output)."""
    import hashlib

    from simready.measurement import video

    rates = {"cam": 20.0, "lidar": 10.0, "radar": 13.0}
    shapes = {"cam": (36, 64), "lidar": (48, 48), "radar": (40, 40)}  # the radar's padded to 48 x 48
    events = sorted((k / rate, name, k) for name, rate in rates.items() for k in range(int(3.0 * rate)))
    last = {name: max(i for i, e in enumerate(events) if e[1] == name) for name in rates}

    def frame(name: str, k: int) -> np.ndarray:
        h, w = shapes[name]
        return ((np.arange(h)[:, None, None] * 3 + np.arange(w)[None, :, None] * 5 + 7 * k) % 256
                + np.zeros((1, 1, 3), int)).astype(np.uint8)

    together = video.Videos()
    shared = {n: together.video(tmp_path / "one" / f"{n}.mp4", r) for n, r in rates.items()}
    for i, (_, name, k) in enumerate(events):
        shared[name].add(frame(name, k))
        if last[name] == i:
            shared[name].finish()
    together.close()
    for name, rate in rates.items():
        alone = video.Video(tmp_path / "own" / f"{name}.mp4", rate)
        for _, n, k in events:
            if n == name:
                alone.add(frame(name, k))
        alone.close()
        digests = {hashlib.sha256((tmp_path / d / f"{name}.mp4").read_bytes()).hexdigest() for d in ("one", "own")}
        assert len(digests) == 1, name
    assert [v.frames for v in shared.values()] == [60, 30, 39]


def test_actor_poses_sampled_ahead_are_the_one_by_one_samples():
    """observed-frames.jsonl's actors from each track sampled once at every time: the same values as one sample
    per time (the lines are the same bytes), including times clamped past a track's end."""
    from simready.measurement.summary import ActorPoses, observed_frame

    built, _, _ = street_sample(DURATION_S, **SMALL)
    bodies = {e: built.scene.body_indices([e])[0] for e in built.actor_entities.values()}
    times = [0.0, 0.013, 0.05, 0.1, 0.1, 0.2371, DURATION_S, DURATION_S + 0.5]
    poses = ActorPoses(built, bodies, times)
    seen = {next(iter(bodies.values()))}
    for t in times + [0.3]:  # 0.3: a time not sampled ahead, sampled on its own
        ahead = observed_frame(built, "front_camera", 3, t, bodies, seen, poses)
        assert ahead.line() == observed_frame(built, "front_camera", 3, t, bodies, seen).line()
