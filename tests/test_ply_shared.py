"""One parse of an ASCII sweep for the validity gate and the review page (issue 29): the same values as each
reader's own parse, bit for bit, and nothing kept once the second reader took it."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready.sensors_hw.lidar import ply
from simready.sensors_hw.lidar.ply import read_ply, shared_sweeps, write_ply_ascii
from simready.validity.evidence_reader import read_ply_points
from tests.test_ply_ascii import columns


def pandas_points(path) -> tuple[np.ndarray, np.ndarray]:
    """The gate's former reader of an ASCII body (pandas' C parser): the reference for its values."""
    raw = path.read_bytes()
    header, body = raw.split(b"end_header\n", 1)
    names = [line.split()[2] for line in header.decode().splitlines() if line.startswith("property")]
    table = pd.read_csv(io.BytesIO(body), sep=" ", header=None, names=names, usecols=["x", "y", "z", "instance_id"],
                        engine="c")
    return table[["x", "y", "z"]].to_numpy(np.float64), table["instance_id"].to_numpy(np.int64)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_the_gate_and_the_review_read_the_same_values_shared_or_not(tmp_path):
    path = write_ply_ascii(tmp_path / "sweep.ply", columns(20_000, 11), with_time=True)
    want_xyz, want_id = pandas_points(path)
    own = read_ply(path, ("x", "y", "z", "instance_id", "t"))
    xyz, inst = read_ply_points(path)
    assert same_bits(xyz, want_xyz) and same_bits(inst, want_id)
    with shared_sweeps():
        xyz, inst = read_ply_points(path)  # the first reader parses every column and leaves them
        assert len(ply._SHARED) == 1
        shared = read_ply(path, ("x", "y", "z", "instance_id", "t"))  # the second takes them
        assert ply._SHARED == {}
        assert same_bits(xyz, want_xyz) and same_bits(inst, want_id)
        assert list(shared) == list(own) and all(same_bits(shared[k], own[k]) for k in own)
        again = read_ply(path)  # a third reader parses it again: the same values
        assert all(same_bits(again[k], read_ply(path)[k]) for k in again)
    assert ply._SHARED is None


def test_a_sweep_written_again_is_not_served_from_before(tmp_path):
    path = tmp_path / "sweep.ply"
    with shared_sweeps():
        write_ply_ascii(path, columns(500, 1))
        read_ply_points(path)
        write_ply_ascii(path, columns(700, 2))
        assert same_bits(read_ply(path)["x"], read_ply(path, ("x",))["x"])
        assert len(read_ply(path)["x"]) == 700


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=32), min_size=1, max_size=200),
       st.integers(0, 2 ** 32 - 1))
def test_printed_values_parse_as_pandas_does(tmp_path, values, instance):
    v = np.array(values, np.float32)
    cols = {"x": v, "y": -v, "z": v[::-1].copy(), "intensity": np.abs(v) % 1,
            "instance_id": np.full(len(v), instance, np.uint32)}
    path = write_ply_ascii(tmp_path / "sweep.ply", cols)
    want_xyz, want_id = pandas_points(path)
    with shared_sweeps():
        xyz, inst = read_ply_points(path)
    assert same_bits(xyz, want_xyz) and same_bits(inst, want_id)
