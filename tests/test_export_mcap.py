"""``simready export mcap`` (issue 18): read back with the ``mcap`` package; counts, times, a decoded cloud vs the PLY."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from mcap.reader import make_reader

from simready.cli import main
from simready.export.mcap_messages import ns
from simready.artifacts.layout import SampleDir
from simready.artifacts.records import Render, Results
from simready.sensors_hw.lidar import firing_times, read_ply
from simready.sensors_hw.models import Rig
from simready.sensors_hw.radar import read_radar_csv
from simready.sim.storage.trace import read_trace
from simready.testing.street import ACTORS
from tests.fixtures.mcap import EVENTS, SMALL, make_sample


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return make_sample(tmp_path_factory.mktemp("export"), time_column=False)


def decoder(schema) -> type:
    """The protobuf class of an MCAP schema record (a FileDescriptorSet, as Foxglove's schemas are stored)."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))


def read_back(path: Path) -> tuple[dict[str, list[tuple[int, object]]], object]:
    """Messages per topic as (log time, decoded message), and the file's summary."""
    out: dict[str, list[tuple[int, object]]] = {}
    classes: dict[int, type] = {}
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        for schema, channel, message in reader.iter_messages(log_time_order=True):
            assert channel.message_encoding == "protobuf" and schema.encoding == "protobuf"
            assert schema.name.startswith("foxglove.")
            cls = classes.setdefault(schema.id, decoder(schema))
            out.setdefault(channel.topic, []).append((message.log_time, cls.FromString(message.data)))
    return out, summary


def cloud_columns(msg) -> dict[str, np.ndarray]:
    """A decoded foxglove.PointCloud's fields as numpy columns (little-endian, by the fields' offsets)."""
    types = {7: "<f4", 8: "<f8", 5: "<u4"}
    dtype = np.dtype({"names": [f.name for f in msg.fields], "formats": [types[f.type] for f in msg.fields],
                      "offsets": [f.offset for f in msg.fields], "itemsize": msg.point_stride})
    rec = np.frombuffer(msg.data, dtype)
    return {f.name: rec[f.name] for f in msg.fields}


def test_the_file_holds_every_sample_at_its_time_and_a_cloud_equal_to_its_ply(sample, tmp_path, capsys):
    out = tmp_path / "sample.mcap"
    assert main(["export", "mcap", str(sample), "--out", str(out)]) == 0
    assert "messages on" in capsys.readouterr().out
    obs = SampleDir(sample).observations
    results, render = Results.read(obs.results), Render.read(obs.render)
    topics, summary = read_back(out)

    frames = results.cameras["front_camera"].frames
    assert [t for t, _ in topics["/front_camera/image"]] == [ns(f.t0_s) for f in frames]
    assert len(topics["/front_camera/depth"]) == len(topics["/front_camera/calibration"]) == len(frames)
    first_png = obs.file(obs.frame_name("front_camera", frames[0].tick, "rgb")).read_bytes()
    assert topics["/front_camera/image"][0][1].data == first_png
    depth = topics["/front_camera/depth"][0][1]
    assert (depth.width, depth.height, depth.encoding) == (SMALL["width_px"], SMALL["height_px"], "32FC1")
    raw = np.fromfile(obs.file(obs.frame_name("front_camera", frames[0].tick, "depth")), "<f4")
    metres = np.frombuffer(depth.data, "<f4")
    near_m = frames[0].projection.near_m
    np.testing.assert_allclose(metres[raw > 0], near_m / raw[raw > 0].astype(np.float64), rtol=1e-6)
    assert np.all(np.isinf(metres[raw == 0])) and (raw == 0).any() and (raw > 0).any()
    assert topics["/front_camera/calibration"][0][1].K[0] == pytest.approx(results.cameras["front_camera"].projection.fx)

    sweeps = results.sweeps["roof_lidar"]
    assert [t for t, _ in topics["/roof_lidar/points"]] == [ns(s.t0_s) for s in sweeps]
    radar = results.sweeps["front_radar"]
    assert [t for t, _ in topics["/front_radar/detections"]] == [ns(r.t_s) for r in radar]

    # One cloud decoded from its bytes against the PLY it came from; times from the beam azimuths.
    k = len(sweeps) // 2
    ply = read_ply(obs.file(obs.frame_name("roof_lidar", sweeps[k].tick, "lidar")))
    cloud = cloud_columns(topics["/roof_lidar/points"][k][1])
    assert topics["/roof_lidar/points"][k][1].frame_id == "roof_lidar"
    for name in ("x", "y", "z", "intensity", "instance_id"):
        np.testing.assert_array_equal(cloud[name], ply[name])
    assert len(cloud["t"]) == sweeps[k].points
    assert sweeps[k].t0_s <= cloud["t"].min() and cloud["t"].max() < sweeps[k].t0_s + sweeps[k].sweep_s
    det = read_radar_csv(obs.file(obs.frame_name("front_radar", radar[0].tick, "radar")))
    got = cloud_columns(topics["/front_radar/detections"][0][1])
    np.testing.assert_array_equal(got["range_m"], det["range_m"])
    np.testing.assert_allclose(np.hypot(np.hypot(got["x"], got["y"]), got["z"]), det["range_m"], rtol=1e-6)
    # The radar contributors (issue 26 item 7): one cloud per frame, equal to the Parquet table beside the CSV.
    assert [t for t, _ in topics["/front_radar/contributors"]] == [ns(r.t_s) for r in radar]
    for (_, msg), frame in zip(topics["/front_radar/contributors"], radar):
        table = pq.read_table(obs.file(obs.frame_name("front_radar", frame.tick, "radar.contributors")))
        cloud = cloud_columns(msg)
        np.testing.assert_array_equal(cloud["power_share"], table.column("power_share").to_numpy())
        np.testing.assert_array_equal(cloud["detection"], table.column("detection").to_numpy())
        np.testing.assert_array_equal(cloud["instance_id"], table.column("instance_id").to_numpy())
        det = read_radar_csv(obs.file(obs.frame_name("front_radar", frame.tick, "radar")))
        shares = np.bincount(cloud["detection"].astype(np.int64), weights=cloud["power_share"], minlength=len(det["range_m"]))
        np.testing.assert_allclose(shares, 1.0, rtol=1e-12)  # every detection's power is accounted for
        np.testing.assert_array_equal(det["instance_id"][cloud["detection"]], cloud["instance_id"])

    # The world: a transform and a box message per trace tick of the window, the tracks once, every event.
    lo, hi = render.settings.window_s
    times = np.unique(read_trace(SampleDir(sample).trace).column("t"))
    tick_times = times[(times >= times[times <= lo].max()) & (times <= times[times >= hi].min())]
    assert [t for t, _ in topics["/tf"]] == [ns(t) for t in tick_times]
    assert len(topics["/boxes"]) == len(tick_times) and len(topics["/tracks"]) == 1
    tf = topics["/tf"][0][1]
    children = {t.child_frame_id for t in tf.transforms}
    assert {"actor:ego", "actor:ped", "front_camera", "roof_lidar", "front_radar"} <= children
    camera = next(t for t in tf.transforms if t.child_frame_id == "front_camera")
    rig = Rig.from_settings(render.rig)
    np.testing.assert_allclose([camera.translation.x, camera.translation.y, camera.translation.z],
                               rig.T_body_sensor("front_camera")[:3, 3])
    box_time, boxes = topics["/boxes"][3]
    ped = next(e for e in boxes.entities if e.id == "box:ped")
    ped_row = next(a for a in ACTORS if a[0] == "ped")
    t_s = box_time / 1e9
    expected = np.asarray(ped_row[1]) + np.asarray(ped_row[2]) * t_s + [0.0, 0.0, ped_row[4][2] / 2]
    cube = ped.cubes[0]
    np.testing.assert_allclose([cube.pose.position.x, cube.pose.position.y, cube.pose.position.z], expected, atol=1e-9)
    assert (cube.size.x, cube.size.y, cube.size.z) == pytest.approx(ped_row[4])
    assert [(t, json.loads(m.message)["type"]) for t, m in topics["/events"]] == [(ns(e["t"]), e["type"]) for e in EVENTS]
    assert topics["/events"][1][1].level == 3  # a collision is a warning

    counts = {topic: len(msgs) for topic, msgs in topics.items()}
    assert summary.statistics.message_count == sum(counts.values())
    by_channel = Counter({summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()})
    assert by_channel == Counter(counts)

    again = tmp_path / "again.mcap"
    assert main(["export", "mcap", str(sample), "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


def test_points_get_their_firing_times_from_their_azimuths(tmp_path):
    timed = make_sample(tmp_path, time_column=True)
    obs = SampleDir(timed).observations
    results, render = Results.read(obs.results), Render.read(obs.render)
    model = Rig.from_settings(render.rig).sensors["roof_lidar"]
    for sweep in results.sweeps["roof_lidar"]:
        ply = read_ply(obs.file(obs.frame_name("roof_lidar", sweep.tick, "lidar")))
        xyz = np.stack([ply["x"], ply["y"], ply["z"]], axis=1).astype(np.float64)
        # The PLY's t counts from the sweep's sampleTime, its start.
        np.testing.assert_allclose(firing_times(xyz, model, sweep.t0_s), sweep.t0_s + ply["t"], atol=1e-6, rtol=0)
    out = tmp_path / "timed.mcap"
    assert main(["export", "mcap", str(timed), "--out", str(out)]) == 0
    topics, _ = read_back(out)
    first = results.sweeps["roof_lidar"][0]
    ply = read_ply(obs.file(obs.frame_name("roof_lidar", first.tick, "lidar")))
    # The cloud's t is the scenario time: the sweep's start plus the PLY's t.
    np.testing.assert_array_equal(cloud_columns(topics["/roof_lidar/points"][0][1])["t"], first.t0_s + ply["t"])


def refused(args: list[str], out: Path, capsys, *needles: str) -> None:
    """Exit 1 with one line holding every needle; nothing beside the sample folder (no file, temp or lock)."""
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    for needle in needles:
        assert needle in err, err
    assert sorted(p.name for p in out.parent.iterdir()) == ["bench-street"]


def test_missing_files_are_named_in_one_line_and_nothing_is_written(sample, tmp_path, capsys):
    broken = make_sample(tmp_path, time_column=False)
    obs = SampleDir(broken).observations
    sweep = Results.read(obs.results).sweeps["roof_lidar"][1]
    ply = obs.file(obs.frame_name("roof_lidar", sweep.tick, "lidar"))
    ply.unlink()
    out = tmp_path / "broken.mcap"
    refused(["export", "mcap", str(broken), "--out", str(out)], out, capsys, str(ply), "missing")
    refused(["export", "mcap", str(sample), "--branch", "brake", "--out", str(out)], out, capsys,
            "branches/brake/trace.parquet", "missing")
    refused(["export", "mcap", str(tmp_path / "nowhere"), "--out", str(out)], out, capsys, "no such sample folder")
