"""One parse of an ASCII sweep for the validity gate and the review page (issue 29): the same values as each
reader's own parse, bit for bit, and nothing kept once the second reader took it."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready.sensors_hw.lidar import ply
from simready.sensors_hw.lidar.ply import read_ply, shared_sweeps, sweep_bytes, write_ply_ascii
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
        assert len(ply._SHARED.entries or {}) == 1
        shared = read_ply(path, ("x", "y", "z", "instance_id", "t"))  # the second takes them
        assert ply._SHARED.entries == {}
        assert same_bits(xyz, want_xyz) and same_bits(inst, want_id)
        assert list(shared) == list(own) and all(same_bits(shared[k], own[k]) for k in own)
        again = read_ply(path)  # a third reader parses it again: the same values
        assert all(same_bits(again[k], read_ply(path)[k]) for k in again)
    assert ply._SHARED.entries is None


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


def arrow_table(body: bytes, count: int, ncols: int) -> np.ndarray:
    """Arrow's parse of an ASCII body (the general reader the compiled pass stands in front of)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    names = [f"c{i}" for i in range(ncols)]
    table = pcsv.read_csv(pa.py_buffer(body), read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
                          parse_options=pcsv.ParseOptions(delimiter=" "),
                          convert_options=pcsv.ConvertOptions(column_types={n: pa.float64() for n in names}))
    return np.stack([c.to_numpy() for c in table.columns], axis=1)


def test_the_compiled_pass_reads_the_values_arrow_reads():
    from simready.sensors_hw.lidar import ascii_body
    from simready.sensors_hw.lidar_kernels import ascii_table

    for seed, with_time in ((21, True), (22, False)):
        cols = columns(20_000, seed, with_time=with_time)  # tiny negatives print as -0.0000: the sign is kept
        body = ascii_body(cols)
        table, read = ascii_table(np.frombuffer(body, np.uint8), 20_000, len(cols))
        assert read and same_bits(table, arrow_table(body, 20_000, len(cols)))


def test_the_compiled_pass_leaves_what_it_does_not_read_to_the_general_parser():
    from simready.sensors_hw.lidar_kernels import ascii_table

    assert ascii_table(np.frombuffer(b"1.5 -0.0000\n.5 7\n", np.uint8), 2, 2)[1]
    for body in (b"1 2\n3 4\n", b"1  2\n", b"+1 2\n", b"1e3 2\n", b"5. 2\n", b"1 2\r\n", b"1234567890123456 2\n",
                 b"1 nan\n", b"1 2"):
        assert not ascii_table(np.frombuffer(body, np.uint8), 1, 2)[1], body
    # ...and the reader still reads what Arrow or splitting reads, as before.
    assert _parsed(b"1e3 2\n+1 -2.5\n", 2).tolist() == [[1000.0, 2.0], [1.0, -2.5]]


def _parsed(body: bytes, count: int) -> np.ndarray:
    return ply._ascii_table(body, count, 2)


def test_the_second_reader_reads_the_header_alone(tmp_path):
    """Within shared_sweeps a sweep the first reader parsed is not read again: its header gives the second reader
    the names and count, the kept parse the values."""
    path = write_ply_ascii(tmp_path / "sweep.ply", columns(2_000, 3), with_time=True)
    whole = path.read_bytes()
    head = whole[:whole.index(b"end_header\n") + len(b"end_header\n")]
    own = read_ply(path)
    assert sweep_bytes(path) == whole
    with shared_sweeps():
        assert sweep_bytes(path) == whole  # nothing parsed yet
        read_ply_points(path)
        assert sweep_bytes(path) == head
        shared = read_ply(path)
        assert list(shared) == list(own) and all(same_bits(shared[k], own[k]) for k in own)
        assert sweep_bytes(path) == whole  # taken: a third reader reads the file
