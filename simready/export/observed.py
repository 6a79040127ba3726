"""One observed sample (or branch) as the exporters read it (MCAP, nuScenes): its manifest, trace, rig and
observation records, checked before anything is written; a file that cannot be read is one :class:`ExportError`
line naming it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from simready.artifacts.layout import ObservationDir, SampleDir
from simready.artifacts.records import FileEntry, Record, Render, Results
from simready.common.errors import SimreadyError, pydantic_reason
from simready.scenario.manifest import load_manifest
from simready.sensors_hw.models import Rig
from simready.sim.batch import verify_sha256
from simready.sim.storage.trace import Trace, read_trace


#: The passes a camera's topics are made of, and the sensor passes LiDAR and radar topics read.
CAMERA_PASSES = ("rgb", "depth")


class ExportError(SimreadyError):
    """A sample folder that cannot be exported: a missing or unreadable file, or a file missing a field."""

    kind = "export"


def read_record(cls: type[Record], path: Path) -> Any:
    """A JSON record, or one line naming the file and the field at fault."""
    if not path.is_file():
        raise ExportError(path, "", "missing; the export needs it")
    try:
        return cls.read(path)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ExportError(path, ".".join(str(p) for p in err["loc"]), pydantic_reason(err)) from None
    except (OSError, ValueError) as exc:
        raise ExportError(path, "", f"unreadable: {exc}") from None


@dataclass(frozen=True)
class ObservedSample:
    """What the export reads of one observed sample or branch, checked before anything is written."""

    obs: ObservationDir
    results: Results
    render: Render
    rig: Rig
    trace: Trace
    ego: str
    files: dict[tuple[str, int, str], FileEntry]

    @classmethod
    def open(cls, sample_dir: str | Path, branch: str | None) -> "ObservedSample":
        sample = SampleDir(Path(sample_dir))
        if not sample.root.is_dir():
            raise ExportError(sample.root, "", "no such sample folder")
        where = sample.branch(branch) if branch is not None else sample
        obs = where.observations
        if not where.trace.is_file():
            raise ExportError(where.trace, "", "missing; the export needs the trace")
        results = read_record(Results, obs.results)
        render = read_record(Render, obs.render)
        try:
            rig = Rig.from_settings(render.rig, source=str(obs.render))
        except SimreadyError as exc:
            raise ExportError(obs.render, f"rig.{exc.field}".rstrip("."), exc.reason) from None
        if not sample.manifest.is_file():
            raise ExportError(sample.manifest, "", "missing; the export needs it for the rig's carrier")
        egos = [a.id for a in load_manifest(sample.manifest).actors if a.role == "ego"]
        if not egos:
            raise ExportError(sample.manifest, "actors", "no actor has role 'ego' to carry the sensor rig")
        trace = read_trace(where.trace)
        actors = set(map(str, trace.df["actor_id"].unique()))
        if egos[0] not in actors:
            raise ExportError(where.trace, "actor_id", f"has no rows of {egos[0]!r}, the ego of {sample.manifest}")
        dims = trace.header.get("actor_dims")
        unsized = sorted(actors - set(dims if isinstance(dims, dict) else ()))
        if unsized:
            raise ExportError(where.trace, f"simready.header.actor_dims.{unsized[0]}",
                              "missing; the boxes need every actor's size")
        unknown = sorted(set(results.sensors) - set(rig.sensors))
        if unknown:
            raise ExportError(obs.results, f"sensors.{unknown[0]}", f"is not in {obs.render}'s rig")
        files = {(e.sensor, e.tick, e.pass_name): e for e in results.files if e.sensor is not None and e.tick is not None}
        wanted = [e for e in files.values() if e.pass_name in CAMERA_PASSES + ("lidar", "radar")]
        missing = [e.path for e in wanted if not obs.file(e.path).is_file()]
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise ExportError(obs.file(missing[0]), "", f"missing{more}: results.json lists it")
        return cls(obs, results, render, rig, trace, egos[0], files)

    def entry(self, sensor: str, tick: int, pass_name: str) -> FileEntry | None:
        return self.files.get((sensor, tick, pass_name))

    def verified(self, entry: FileEntry) -> Path:
        """The entry's file, once its bytes are the ones ``results.json`` records for it (else an IntegrityError)."""
        path = self.obs.file(entry.path)
        verify_sha256(path, entry.sha256, self.obs.results)
        return path

    def window_ticks(self) -> pd.DataFrame:
        """The trace's rows from the last tick at or before the window's start to the first at or after its end."""
        df = self.trace.df
        lo, hi = self.render.settings.window_s
        times = np.unique(df["t"].to_numpy())
        first = times[max(int(np.searchsorted(times, lo, side="right")) - 1, 0)]
        last = times[min(int(np.searchsorted(times, hi, side="left")), len(times) - 1)]
        rows = df[(df["t"] >= first) & (df["t"] <= last)]
        return rows[rows["present"].astype(bool)]
