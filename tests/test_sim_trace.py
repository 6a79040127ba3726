"""The trace file (SPEC §7): columns, order, time from integer ticks, metadata documents, round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from simready.sim.evaluation.evaluate import evaluate_trace
from simready.sim.run import run_simulation
from simready.sim.storage.trace import TICK_COLUMNS, TraceError, read_trace, write_trace
from simready.world.motion import tracks_from_ticks
from tests.fixtures.sim import catalog, crossing, template


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    return run_simulation(crossing(clip_s=4.0), template(), backend="kinematic-v1", catalog=catalog())


def test_columns_rows_and_time(result) -> None:  # type: ignore[no-untyped-def]
    tr = result.trace
    assert tuple(tr.ticks.column_names[: len(TICK_COLUMNS)]) == TICK_COLUMNS
    assert tr.ticks.column_names[len(TICK_COLUMNS):] == ["accel_mps2", "throttle", "brake", "steer_rad", "slip_rad"]
    h = tr.header
    ids = h["actor_ids"]
    assert ids == sorted(ids) == ["ego", "ped", "van"]
    n = len(ids)
    tick = tr.column("tick")
    assert len(tick) == (h["clip_ticks"] + 1) * n == 201 * 3
    assert tick[0] == h["warmup_ticks"] == 250 and tick[-1] == 250 + 200
    assert np.all(np.diff(tick) >= 0)
    assert list(tr.column("actor_id")[:n]) == ids
    t = tr.column("t")
    assert t[0] == 0.0 and t[-1] == 4.0
    assert np.array_equal(t, (tick - h["warmup_ticks"]) * h["dt"])
    q = np.stack([tr.column(c) for c in ("qx", "qy", "qz", "qw")], 1)
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0)
    df = tr.df
    ego = df[df.actor_id == "ego"]
    assert set(ego.lane) == {"lane_eb"} and ego.s.is_monotonic_increasing
    assert df[df.actor_id == "van"].lane.isna().all()


def test_header_documents(result) -> None:  # type: ignore[no-untyped-def]
    h = result.trace.header
    for key in ("engine_version", "backend", "input_hash", "seed", "template_id", "template_hash", "dt", "substep_s",
                "clip_s", "warmup_s", "frame", "actor_ids", "metric_subject", "config_hash"):
        assert key in h, key
    assert h["backend"] == "kinematic-v1" and h["substep_s"] == h["dt"] == 0.02
    m = result.trace.metrics
    for key in ("min_ttc", "min_distance", "required_decel_max", "reveal_to_conflict", "collisions",
                "trigger_never_fired", "ticks_simulated"):
        assert key in m, key
    assert m["ticks_simulated"] == 250 + 200
    assert set(m["min_ttc"]) == {"value", "t", "pair"}
    types = [e["type"] for e in result.trace.events]
    assert types[:2] == ["trigger_fired", "trigger_fired"] and "state_set" in types
    assert [e["tick"] for e in result.trace.events] == sorted(e["tick"] for e in result.trace.events)


def test_round_trip_and_metadata_keys(result, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_trace(result.trace, tmp_path / "t.parquet")
    meta = pq.read_metadata(path)
    assert meta.row_group(0).column(0).compression == "ZSTD"
    keys = set(meta.metadata)
    assert {b"simready.header", b"simready.events", b"simready.metrics"} <= keys
    back = read_trace(path)
    assert back.header == result.trace.header and back.events == result.trace.events and back.metrics == result.trace.metrics
    assert back.to_bytes() == result.trace.to_bytes() == path.read_bytes()
    assert evaluate_trace(back).verdict == "accept"


def test_sensor_side_reads_the_ticks_table(result) -> None:  # type: ignore[no-untyped-def]
    tracks = tracks_from_ticks(result.trace.df)
    assert sorted(tracks) == ["ego", "ped", "van"]
    ego = tracks["ego"]
    x0 = float(result.trace.df.query("actor_id == 'ego'").x.iloc[0])
    assert ego.pose_at(0.0)[0, 3] == pytest.approx(x0)


def test_reading_something_else_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(TraceError, match="not a Parquet trace"):
        read_trace(bad)
    with pytest.raises(TraceError, match="cannot read"):
        read_trace(tmp_path / "missing.parquet")
    plain = tmp_path / "plain.parquet"
    import pyarrow as pa

    pq.write_table(pa.table({"a": [1]}), plain)
    with pytest.raises(TraceError, match="not a simready trace"):
        read_trace(plain)
