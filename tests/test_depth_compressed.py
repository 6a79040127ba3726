"""The opt-in compressed depth variant (``depth.f32.bin.zst``): lossless, found through results.json, read by the
exports and the review sheet; the published ``depth.f32.bin`` stays the default."""

from __future__ import annotations

import numpy as np
import pytest

from simready.common.errors import SimreadyError
from simready.export.mcap_messages import depth_metres
from simready.artifacts.layout import ObservationDir
from simready.measurement.observe import observe
from simready.measurement.options import ObserveOptions
from simready.artifacts.records import Render, Results
from simready.sensors_hw.camera import depth_file_bytes, read_depth_file
from simready.testing.street import street_sample

SMALL = {"width_px": 96, "height_px": 64, "line_time_s": 3e-4, "azimuth_steps": 128, "channels": 8}


def test_compressed_depth_file_round_trips_bit_for_bit(tmp_path):
    raw = np.random.default_rng(0).uniform(0.0, 1.0, 5000).astype("<f4")
    raw[::7] = 0.0
    (tmp_path / "a.depth.f32.bin.zst").write_bytes(depth_file_bytes(raw, "f32.zst"))
    (tmp_path / "a.depth.f32.bin").write_bytes(depth_file_bytes(raw))
    assert read_depth_file(tmp_path / "a.depth.f32.bin.zst").tobytes() == raw.tobytes()
    assert read_depth_file(tmp_path / "a.depth.f32.bin").tobytes() == raw.tobytes()
    with pytest.raises(ValueError, match="depth format"):
        depth_file_bytes(raw, "png")


def test_observing_with_compressed_depth_writes_the_same_values_smaller(tmp_path):
    built, rig, trace = street_sample(0.3, **SMALL)
    folders = {}
    for fmt in ("f32", "f32.zst"):
        out = tmp_path / fmt
        observe(built, rig, trace, out, options=ObserveOptions(passes=("depth", "id"), depth_format=fmt, video=False))
        folders[fmt] = ObservationDir(out)
    entries = {fmt: sorted((f for f in Results.read(d.results).files if f.pass_name == "depth"), key=lambda f: f.tick)
               for fmt, d in folders.items()}
    assert len(entries["f32"]) == len(entries["f32.zst"]) >= 5
    assert Render.read(folders["f32.zst"].render).settings.depth_format == "f32.zst"
    near = rig.sensors["front_camera"].near_m
    for plain, packed in zip(entries["f32"], entries["f32.zst"]):
        assert plain.path.endswith(".depth.f32.bin") and packed.path == plain.path + ".zst"
        assert packed.shape == plain.shape and packed.bytes < plain.bytes
        a, b = folders["f32"].file(plain.path), folders["f32.zst"].file(packed.path)
        assert read_depth_file(b).tobytes() == a.read_bytes()
        assert depth_metres(b, near) == depth_metres(a, near)  # what the MCAP export publishes


def test_an_unknown_depth_format_is_refused():
    with pytest.raises(SimreadyError, match="depth_format"):
        ObserveOptions(depth_format="png")
