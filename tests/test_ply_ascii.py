"""ASCII PLY formatted a column at a time (issue 18): the same bytes as Python's per-point ``%`` formatting."""

from __future__ import annotations

import numpy as np
import pytest

from simready.sensors_hw.lidar import (PLY_COLUMNS, ascii_body, ascii_body_per_point, read_ply, scan,
                                       write_ply_ascii)
from simready.bench.sensors import bench_rig
from simready.testing.street import EGO_ID, street_scene


def columns(n: int, seed: int, *, with_time: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.integers(-6, 3, size=(n, 3))  # sub-0.1 mm to hundreds of metres, both signs
    xyz = rng.normal(size=(n, 3)) * scale
    cols = {"x": xyz[:, 0], "y": xyz[:, 1], "z": xyz[:, 2],
            "intensity": rng.random(n, dtype=np.float32),
            "instance_id": rng.integers(0, 2 ** 32, size=n, dtype=np.uint64).astype(np.uint32)}
    if with_time:
        cols["t"] = rng.integers(0, 20_000_000, size=n) * 1e-6 + rng.normal(size=n) * 1e-9
    return cols


def test_random_columns_format_like_python():
    cols = columns(50_000, 1)
    assert ascii_body(cols) == ascii_body_per_point(cols)
    no_time = columns(10_000, 2, with_time=False)
    assert ascii_body(no_time) == ascii_body_per_point(no_time)


def test_halves_signs_and_rounding_edges_format_like_python():
    # Exact binary halves of the last decimal (k/32 for %.4f, k/2**7·1e-6-ish for %.6f), values a rounding
    # carries into the next integer, -0.0 and negatives that round to zero, zero ids and the largest uint32.
    k = np.arange(-4000, 4000)
    halves = np.concatenate([k / 32.0, k / 64.0, k / 1024.0, k * 0.00005, k * 0.00015])
    edges = np.array([0.0, -0.0, -1e-5, 1e-5, 0.99995, 0.999949999, 0.99996, -9.99995, 123.45675, 1e5 + 0.00005,
                      2.5e-5, -2.5e-5, 7.5e-5, 0.5, 1.5, 2.5])
    x = np.concatenate([halves, edges])
    n = len(x)
    ids = np.zeros(n, np.uint32)
    ids[1::2] = np.iinfo(np.uint32).max
    t = np.concatenate([k / 2.0 ** 21, k * 5e-7, k * 1.5e-6])[:n]
    t = np.resize(t, n)
    cols = {"x": x, "y": -x, "z": x[::-1].copy(), "intensity": np.resize(k / 32.0, n).astype(np.float32),
            "instance_id": ids, "t": t}
    assert ascii_body(cols) == ascii_body_per_point(cols)
    line = ascii_body({"x": np.array([1 / 32, -0.0]), "y": np.array([-1e-5, 0.99995]), "z": np.array([2.5, 3.0]),
                       "intensity": np.array([0.5, 0.25], np.float32), "instance_id": np.array([0, 7], np.uint32)})
    assert line == b"0.0312 -0.0000 2.5000 0.5000 0\n-0.0000 1.0000 3.0000 0.2500 7\n"


def test_what_it_cannot_format_exactly_goes_to_python():
    cols = columns(100, 3)
    cols["x"] = cols["x"].copy()
    cols["x"][5] = np.inf
    cols["y"] = cols["y"] * 1e12  # past 2**50 units of the last decimal
    cols["instance_id"] = cols["instance_id"].astype(np.float64)  # %d of floats truncates: Python's rule
    assert ascii_body(cols) == ascii_body_per_point(cols)
    assert ascii_body({k: v[:0] for k, v in columns(3, 4).items()}) == b""


@pytest.mark.parametrize("with_time", [False, True])
def test_a_real_sweep_writes_the_bytes_of_the_per_point_writer(tmp_path, with_time):
    scene, bodies = street_scene(subdivisions=1)
    rig = bench_rig(bodies[EGO_ID].track)  # 64 x 1800 beams
    sweep = scan(scene, rig, "top_lidar", 0.4, np.random.default_rng(7), ignore=[EGO_ID])
    assert len(sweep) > 1000
    path = write_ply_ascii(tmp_path / "sweep.ply", sweep, with_time=with_time)
    raw = path.read_bytes()
    header, body = raw.split(b"end_header\n", 1)
    p = sweep.points_sensor
    cols = {"x": p[:, 0], "y": p[:, 1], "z": p[:, 2], "intensity": sweep.intensity, "instance_id": sweep.instance_id}
    if with_time:
        cols["t"] = sweep.t_s - sweep.t0_s  # seconds since the sweep's sampleTime (its start)
    assert body == ascii_body_per_point(cols)
    back = read_ply(path)
    assert list(back) == list(PLY_COLUMNS) + (["t"] if with_time else [])
    np.testing.assert_allclose(back["x"], p[:, 0], atol=5e-5 + 1e-6)
    np.testing.assert_array_equal(back["instance_id"], sweep.instance_id)


def test_compiled_fixed_point_parts_match_numpy_reference():
    # The compiled rounding pass (values float64 cannot round certainly left to Python) against its numpy passes.
    from simready.sensors_hw.lidar.ply import _fixed_point_into, fixed_point_parts_numpy

    k = np.arange(-4000, 4000)
    cols = columns(20_000, 5)
    for values, places in ((cols["x"], 4), (cols["intensity"], 4), (cols["t"], 6), (k / 32.0, 4), (k * 0.00005, 4),
                           (k / 2.0 ** 21, 6), (np.array([0.0, -0.0, -1e-5, 0.99995, 2.5e-5]), 4),
                           (k.astype(np.int32), 4)):
        magnitude, negative = np.empty(len(values), np.int64), np.empty(len(values), np.bool_)
        assert _fixed_point_into(values, places, magnitude, negative)
        want = fixed_point_parts_numpy(values, places)
        assert want is not None
        np.testing.assert_array_equal(magnitude, want[0])
        np.testing.assert_array_equal(negative, want[1])
    for bad in (np.array([1.0, np.nan]), np.array([1.0, np.inf]), np.array([2.0 ** 50 / 1e4])):
        assert not _fixed_point_into(bad, 4, np.empty(2, np.int64), np.empty(2, np.bool_))
        assert fixed_point_parts_numpy(bad, 4) is None
