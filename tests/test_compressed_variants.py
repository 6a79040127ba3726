"""The published files' opt-in compressed variants (issue 29 item 3): ``depth.f32.bin.zst``, ``<tick>.ply.zst`` and
PNGs at a higher zlib level hold the same data, and every reader of the layout (the exports, the review pictures,
the gate's LiDAR evidence, a release's completeness checks, the truth reader) reads a compressed folder as it reads
the published one."""

from __future__ import annotations

import numpy as np
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from mcap.reader import make_reader
from PIL import Image

from simready.common.errors import SimreadyError
from simready.export.mcap_file import export_mcap
from simready.export.nuscenes import export_nuscenes
from simready.artifacts.layout import SampleDir
from simready.measurement.integrity import incomplete_frames, missing_or_corrupt
from simready.measurement.options import COMPRESSED, ObserveOptions
from simready.artifacts.records import Render, Results
from simready.sensors_hw.lidar import LIDAR_FORMATS, ply_bytes, ply_name, read_ply
from simready.testing.observed import observed_street_sample
from simready.truth.reader import TruthReader
from simready.validity.evidence_reader import read_ply_points

SMALL = {"width_px": 96, "height_px": 48, "line_time_s": 1e-5, "azimuth_steps": 256, "channels": 16}
DURATION_S = 0.34


def _cloud(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-80, 80, n).astype(np.float32), "y": rng.uniform(-80, 80, n).astype(np.float32),
            "z": rng.uniform(-3, 5, n).astype(np.float32), "intensity": rng.uniform(0, 1, n).astype(np.float32),
            "instance_id": rng.integers(0, 2 ** 24, n).astype(np.uint32), "t": rng.uniform(0, 0.1, n)}


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 2 ** 32 - 1), plain=st.sampled_from(["ascii", "binary"]),
       with_time=st.booleans())
def test_a_compressed_ply_is_the_plain_ply_in_one_zstd_frame(tmp_path_factory, n, seed, plain, with_time):
    cloud = _cloud(n, seed)
    data, packed = ply_bytes(cloud, plain, with_time=with_time), ply_bytes(cloud, plain + ".zst", with_time=with_time)
    assert zstandard.ZstdDecompressor().decompress(packed) == data  # `zstd -d` gives the published file back
    d = tmp_path_factory.mktemp("ply")
    (d / "a.ply").write_bytes(data)
    (d / ply_name("a.ply", plain + ".zst")).write_bytes(packed)
    a, b = read_ply(d / "a.ply"), read_ply(d / "a.ply.zst")
    assert list(a) == list(b) and all(np.array_equal(a[k], b[k]) for k in a)
    for got, want in zip(read_ply_points(d / "a.ply.zst"), read_ply_points(d / "a.ply")):  # the gate's own reader
        np.testing.assert_array_equal(got, want)


def test_unknown_formats_and_levels_are_refused():
    assert set(LIDAR_FORMATS) == {"ascii", "binary", "ascii.zst", "binary.zst"}
    for bad in ({"lidar_format": "ply.gz"}, {"depth_format": "f16"}, {"png_compress_level": 10},
                {"png_compress_level": True}):
        with pytest.raises(SimreadyError, match=next(iter(bad))):
            ObserveOptions(**bad)
    assert ObserveOptions.compressed(lidar_format="binary").lidar_format == "binary.zst"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The same street observed twice: the published files, and every compressed variant."""
    root = tmp_path_factory.mktemp("variants")
    plain = observed_street_sample(root / "plain", DURATION_S, ObserveOptions(video=False), **SMALL)
    packed = observed_street_sample(root / "packed", DURATION_S, ObserveOptions.compressed(video=False), **SMALL)
    return plain, packed


def _files(sample: SampleDir) -> dict[tuple, str]:
    return {(f.sensor, f.tick, f.pass_name): f.path for f in Results.read(sample.observations.results).files}


def test_the_compressed_folder_holds_the_same_data_in_fewer_bytes(pair):
    plain, packed = pair
    a, b = _files(plain), _files(packed)
    assert a.keys() == b.keys()
    settings_ = Render.read(packed.observations.render).settings
    assert (settings_.depth_format, settings_.lidar_format, settings_.png_compress_level) == (
        COMPRESSED["depth_format"], COMPRESSED["lidar_format"], COMPRESSED["png_compress_level"])
    renamed = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
    assert {k[2] for k in renamed} == {"depth", "lidar"}
    assert all(q == p + ".zst" for p, q in renamed.values())
    size = {s: sum(p.stat().st_size for p in s.observations.root.rglob("*") if p.is_file()) for s in pair}
    assert size[packed] < 0.8 * size[plain]
    for key, path in a.items():
        if path.endswith(".png") and key[1] is not None:
            with Image.open(plain.observations.file(path)) as x, Image.open(packed.observations.file(b[key])) as y:
                assert np.array_equal(np.asarray(x), np.asarray(y)), path
    # The review pictures decode the files they show: the same pictures from either folder.
    for name in ("contact_sheet", "lidar_topdown"):
        assert getattr(plain.observations, name).read_bytes() == getattr(packed.observations, name).read_bytes()
    # A release proves a folder whole as the observation checks do: every listed file, every frame's passes.
    assert missing_or_corrupt(packed.observations.root) == [] and incomplete_frames(packed.observations.root) == []
    # Truth is not a layout file: its tables are the same bytes.
    truth = [p for p in a.values() if p.startswith("truth/")]
    assert truth and all(plain.observations.file(p).read_bytes() == packed.observations.file(p).read_bytes()
                         for p in truth)


def test_the_exports_read_either_variant(pair, tmp_path):
    plain, packed = pair
    out = {s: tmp_path / name for s, name in zip(pair, ("plain", "packed"))}
    for s in pair:
        export_nuscenes([s.root], out[s] / "nuscenes")
        export_mcap(s.root, out[s] / "sample.mcap")
    files = sorted(p.relative_to(out[plain]) for p in out[plain].rglob("*") if p.is_file() and p.suffix != ".mcap")
    assert files == sorted(p.relative_to(out[packed]) for p in out[packed].rglob("*")
                           if p.is_file() and p.suffix != ".mcap")
    assert all((out[plain] / f).read_bytes() == (out[packed] / f).read_bytes() for f in files)

    def messages(path):
        with path.open("rb") as f:
            return [(c.topic, m.log_time, m.data) for _, c, m in make_reader(f).iter_messages(log_time_order=True)]

    x, y = messages(out[plain] / "sample.mcap"), messages(out[packed] / "sample.mcap")
    assert [m[:2] for m in x] == [m[:2] for m in y]
    # Depth, clouds, boxes, poses: the same bytes; only the camera image carries the PNG as written.
    differ = {m[0] for m, n in zip(x, y) if m[2] != n[2]}
    assert differ <= {"/front_camera/image"} and any(t.endswith("/depth") for t, _, _ in x)


def test_the_truth_reader_reads_both_folders_alike(pair):
    plain, packed = pair
    r, s = TruthReader(plain.observations), TruthReader(packed.observations)
    assert r.table("front_camera", 2, "forward").equals(s.table("front_camera", 2, "forward"))


@pytest.mark.parametrize("compressed", [False, True])
def test_a_suites_observation_plan_chooses_the_variant(monkeypatch, tmp_path, compressed):
    """``observation: {compressed: true}`` in a suite reaches every folder the pipeline observes."""
    from types import SimpleNamespace

    from simready.measurement import batch
    from simready.scenario.suite import ObservationPlan

    assert ObservationPlan.model_validate({"compressed": compressed}).compressed is compressed
    seen = []

    def fake_observe(*args, options, **kw):
        seen.append(options)
        return SimpleNamespace(files=0, frames={}, render=SimpleNamespace(settings=SimpleNamespace(window_s=[0, 1])),
                               timings_s={}, peak_rss_mb=0.0)

    monkeypatch.setattr(batch, "observe_sample", fake_observe)
    monkeypatch.setattr(batch, "read_trace_input", lambda path: None)
    batch._observe_one(None, None, None, tmp_path / "trace.parquet", tmp_path / "obs", (0.5, None), [], False,
                       passes=("depth", "lidar"), compressed=compressed)
    (options,) = seen
    assert options == (ObserveOptions.compressed if compressed else ObserveOptions)(
        passes=("depth", "lidar"), from_s=0.5, until_s=None, video=False)
