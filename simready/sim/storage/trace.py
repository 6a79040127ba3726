"""The trace (SPEC §7): one self-contained, canonical Parquet file per rollout.

Layout: the ticks table in long form — one row per (tick, actor), sorted by
tick then actor id — compressed with zstd, and three JSON documents in the
file's key-value metadata: ``simready.header``, ``simready.events``,
``simready.metrics`` (sorted keys, no whitespace).

Columns, in order (world frame x east, y north, z up; SI units;
quaternions ``[x, y, z, w]``):

============== ======= ==========================================================
column         type    meaning
============== ======= ==========================================================
tick           int64   engine tick i, counted from the start of the warm-up
t              float64 scenario time (i − warmup_ticks)·dt, s (0 … clip_s)
actor_id       string  manifest actor id (sorted within a tick)
x, y, z        float64 body origin (footprint centre on the ground), m
qx, qy, qz, qw float64 world-from-body rotation
vx, vy, vz     float64 world velocity of the body origin, m/s
wx, wy, wz     float64 world angular velocity, rad/s
speed_mps      float64 horizontal speed |(vx, vy)|, m/s
lane           string  current lane id; null off the lane graph
s              float64 arc length on ``lane`` (m); along the walk route for pedestrians
present        bool    the body exists at this tick
accel_mps2     float64 (extra) longitudinal acceleration applied, m/s²
throttle       float64 (extra) ego throttle fraction [0, 1]
brake          float64 (extra) ego brake fraction [0, 1]
steer_rad      float64 (extra) ego steering angle (dynamic-v1), rad
slip_rad       float64 (extra) body slip angle: velocity direction − heading, rad
tyre_util      float64 (extra, dynamic-v1) ego tyre force / (μ·load), [0, ∞)
============== ======= ==========================================================

Writing is deterministic: equal traces give equal bytes (no timestamps;
pyarrow's writer is byte-stable for equal tables).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from simready.common.atomic import write_bytes_atomic
from simready.common.errors import SimreadyError

HEADER_KEY = b"simready.header"
EVENTS_KEY = b"simready.events"
METRICS_KEY = b"simready.metrics"
TICK_COLUMNS = ("tick", "t", "actor_id", "x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz",
                "wx", "wy", "wz", "speed_mps", "lane", "s", "present")
TRACE_FORMAT = "simready-trace-1"


class TraceError(SimreadyError):
    kind = "trace"


def dumps(value: Any) -> str:
    """Canonical JSON of a header / events / metrics document."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True, eq=False)
class Trace:
    """A rollout: header, events (time-ordered), metrics, and the ticks table (pyarrow)."""

    header: dict[str, Any]
    events: list[dict[str, Any]]
    metrics: dict[str, Any]
    ticks: pa.Table

    @cached_property
    def df(self) -> Any:
        """The ticks table as a pandas DataFrame (what :func:`simready.world.motion.tracks_from_ticks` reads)."""
        return self.ticks.to_pandas()

    def to_bytes(self) -> bytes:
        meta = {HEADER_KEY: dumps(self.header), EVENTS_KEY: dumps(self.events), METRICS_KEY: dumps(self.metrics)}
        table = self.ticks.replace_schema_metadata(meta)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd", use_dictionary=["actor_id", "lane"], write_statistics=False)
        data: bytes = sink.getvalue().to_pybytes()
        return data

    def column(self, name: str) -> np.ndarray:
        values: np.ndarray = self.ticks.column(name).to_numpy(zero_copy_only=False)
        return values


def build_table(actor_ids: tuple[str, ...], lane_ids: tuple[str, ...], warmup_ticks: int, dt: float,
                arrays: dict[str, np.ndarray], extras: tuple[str, ...]) -> pa.Table:
    """Long-form ticks table from recorder arrays shaped (rows, actors, ...)."""
    r, n = arrays["speed"].shape
    tick = np.repeat(np.arange(warmup_ticks, warmup_ticks + r, dtype=np.int64), n)
    t = np.repeat((np.arange(r, dtype=np.int64)) * dt, n)
    pos = arrays["pos"].reshape(-1, 3)
    quat = arrays["quat"].reshape(-1, 4)
    vel = arrays["vel"].reshape(-1, 3)
    omega = arrays["omega"].reshape(-1, 3)
    # The string columns as takes from their few values (one C++ gather, not a Python object per row).
    lanes = pa.array([None, *lane_ids], pa.string()).take(pa.array(arrays["lane"].reshape(-1) + 1))
    cols: dict[str, Any] = {
        "tick": tick,
        "t": t,
        "actor_id": pa.array(actor_ids, pa.string()).take(pa.array(np.tile(np.arange(n, dtype=np.int64), r))),
        "x": pos[:, 0], "y": pos[:, 1], "z": pos[:, 2],
        "qx": quat[:, 0], "qy": quat[:, 1], "qz": quat[:, 2], "qw": quat[:, 3],
        "vx": vel[:, 0], "vy": vel[:, 1], "vz": vel[:, 2],
        "wx": omega[:, 0], "wy": omega[:, 1], "wz": omega[:, 2],
        "speed_mps": arrays["speed"].reshape(-1),
        "lane": lanes,
        "s": arrays["s"].reshape(-1),
        "present": arrays["present"].reshape(-1),
    }
    for name in extras:
        cols[name] = arrays[f"x:{name}"].reshape(-1)
    return pa.table(cols)


def trace_from_bytes(data: bytes, source: str = "<bytes>") -> Trace:
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise TraceError(source, "", f"not a Parquet trace: {exc}") from None
    meta = table.schema.metadata or {}
    missing = [k.decode() for k in (HEADER_KEY, EVENTS_KEY, METRICS_KEY) if k not in meta]
    if missing:
        raise TraceError(source, "", f"not a simready trace: metadata lacks {', '.join(missing)}")
    return Trace(json.loads(meta[HEADER_KEY]), json.loads(meta[EVENTS_KEY]), json.loads(meta[METRICS_KEY]),
                 table.replace_schema_metadata(None))


def write_trace(trace: Trace, path: str | Path) -> Path:
    """Write atomically (temp file, fsync, rename)."""
    return write_bytes_atomic(path, trace.to_bytes())


def read_trace(path: str | Path) -> Trace:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TraceError(path, "", f"cannot read: {exc.strerror or exc}") from None
    return trace_from_bytes(data, str(path))
