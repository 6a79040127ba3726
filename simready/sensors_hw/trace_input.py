"""The trace as the measurement stage reads it: header + ticks table, checked for what sensors need.

Why a reader of its own: the measurement stage needs only the header and
the ticks table of a SPEC §7 trace, and it needs more than a trace is
obliged to carry to *parse*: every present row must hold a finite pose and
a finite twist, because the motion field and the radar's radial velocity
come from recorded twists (never finite differences), and pose
interpolation between ticks is Hermite in the recorded velocities. A
trace that lacks them is refused here, with one line, before anything is
written.

Format read (SPEC §7): one Parquet file; the ticks table in long form (one
row per (tick, actor), sorted by tick then actor id) with columns ``tick,
t, actor_id, x, y, z, qx, qy, qz, qw, vx, vy, vz, wx, wy, wz, speed_mps,
lane, s, present`` (+ extras); the header as JSON under the Parquet
key-value metadata key ``simready.header`` (``dt``, ``clip_s``,
``template_id``, ``template_hash``, ``actor_ids``, ``metric_subject``, …).
World frame x east, y north, z up; quaternions ``[x, y, z, w]``; SI units.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from simready.common.errors import SimreadyError
from simready.common.hashing import file_sha256, sha256_bytes
from simready.world.motion import PoseTrack, SortedTicks, tracks_from_ticks

HEADER_KEY = b"simready.header"
POSE_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw")
TWIST_COLUMNS = ("vx", "vy", "vz", "wx", "wy", "wz")
REQUIRED_COLUMNS = ("tick", "t", "actor_id", *POSE_COLUMNS, "present")


class TraceInputError(SimreadyError):
    """A trace the measurement stage cannot observe (unreadable, or missing what sensors need)."""

    kind = "trace"


@dataclass(frozen=True, eq=False)
class TraceInput:
    """What the measurement stage reads of a trace.

    Attributes:
        header: the ``simready.header`` document (may be empty for synthetic ticks).
        ticks: the ticks table (pandas), checked: required columns, finite pose
            and twist on every present row.
        source: file path or a label, for error messages.
        sha256: content hash of the file (or of the ticks table when built in memory).
    """

    header: dict[str, Any]
    ticks: pd.DataFrame
    source: str = "<memory>"
    sha256: str = ""
    _tracks: dict[str, PoseTrack] = field(default_factory=dict, repr=False)
    #: Tracks built one actor at a time (:meth:`track`), and the sorted ticks they come from.
    _single: dict[str, PoseTrack] = field(default_factory=dict, repr=False)
    _sorted: list[SortedTicks] = field(default_factory=list, repr=False)

    @property
    def actor_ids(self) -> list[str]:
        """Actor ids in the ticks table, sorted."""
        return sorted(str(a) for a in self.ticks["actor_id"].unique())

    @property
    def t_start_s(self) -> float:
        return float(self.ticks["t"].min())

    @property
    def t_end_s(self) -> float:
        return float(self.ticks["t"].max())

    @property
    def clip_s(self) -> float:
        """The header's ``clip_s``, else the last recorded time."""
        return float(self.header.get("clip_s", self.t_end_s))

    def tracks(self) -> dict[str, PoseTrack]:
        """``{actor id: PoseTrack}`` (built once)."""
        if not self._tracks:
            self._tracks.update(tracks_from_ticks(self.ticks))
        return self._tracks

    def track(self, actor: str) -> PoseTrack:
        """``actor``'s track (KeyError for an actor without rows): :meth:`tracks`' when they are built, else built
        alone, the same arrays (a reader of a few actors of a busy street need not build every actor's)."""
        if self._tracks:
            return self._tracks[actor]
        if actor not in self._single:
            if not self._sorted:
                self._sorted.append(SortedTicks(self.ticks))
            self._single[actor] = self._sorted[0].track(actor)
        return self._single[actor]


def check_ticks(df: pd.DataFrame, source: str) -> None:
    """Refuse a ticks table sensors cannot observe; one line naming what is missing and why it matters."""
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise TraceInputError(source, "ticks", f"lacks columns {', '.join(missing)}")
    no_twist = [c for c in TWIST_COLUMNS if c not in df.columns]
    if no_twist:
        raise TraceInputError(source, "ticks", f"has no twists ({', '.join(no_twist)} missing): the motion field and "
                              "radar radial velocity need recorded twists (never finite differences), so this trace "
                              "cannot be observed")
    if len(df) == 0:
        raise TraceInputError(source, "ticks", "is empty")
    present = df["present"].to_numpy(bool)
    for columns, what in ((POSE_COLUMNS, "pose"), (TWIST_COLUMNS, "twist")):
        values = df.loc[present, list(columns)].to_numpy(np.float64, na_value=np.nan)
        bad = ~np.all(np.isfinite(values), axis=1)
        if np.any(bad):
            row = df.loc[present].iloc[int(np.flatnonzero(bad)[0])]
            reason = f"actor {row['actor_id']!r} at t={float(row['t']):.6g} s has a non-finite or null {what}"
            if what == "twist":
                reason += ": the motion field needs recorded twists"
            raise TraceInputError(source, "ticks", reason)


def trace_from_ticks(df: pd.DataFrame, header: Mapping[str, Any] | None = None,
                     source: str = "<memory>") -> TraceInput:
    """A checked :class:`TraceInput` from an in-memory ticks table (tests, synthetic traces)."""
    check_ticks(df, source)
    digest = sha256_bytes(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return TraceInput(dict(header or {}), df.reset_index(drop=True), source, digest)


def read_trace_input(path: str | Path) -> TraceInput:
    """Read and check a SPEC §7 trace file."""
    path = Path(path)
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise TraceInputError(path, "", "file not found") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise TraceInputError(path, "", f"not a Parquet trace: {exc}") from None
    meta = table.schema.metadata or {}
    if HEADER_KEY not in meta:
        raise TraceInputError(path, "", f"not a simready trace: metadata lacks {HEADER_KEY.decode()}")
    try:
        header = json.loads(meta[HEADER_KEY])
    except json.JSONDecodeError as exc:
        raise TraceInputError(path, HEADER_KEY.decode(), f"not JSON: {exc}") from None
    df = table.replace_schema_metadata(None).to_pandas()
    check_ticks(df, str(path))
    return TraceInput(header, df, str(path), file_sha256(str(path)))
