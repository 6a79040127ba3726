"""Reading a sample folder into the gate's evidence (:class:`~simready.validity.evidence.ScenarioEvidence`).

Sample folder layout read by :func:`evidence_from_sample_dir` (one stage per
entry; a missing entry raises :class:`~simready.validity.evidence.MissingStageError` naming the stage):

=========================== ============ ==============================================
entry                       stage        what is read
=========================== ============ ==============================================
``manifest.json``           scenario     actor kinds and footprints, ego, environment
``trace.parquet``           simulation   ticks table, header (dt), events (collisions)
``observations/``           measurement  SPEC §10 layout (see below)
=========================== ============ ==============================================

Observations (SPEC §10), read through their records (:mod:`simready.artifacts.records`):

* ``legend.json`` (:class:`~simready.artifacts.records.Legend`): the actor entries
  (``<sample>/actor:<id>``) map LiDAR instance ids to actors.
* ``observed-frames.jsonl`` (:class:`~simready.artifacts.records.ObservedFrame`): the lines of the
  sensors ``results.json`` lists as cameras (every line when it is absent); a camera detects an actor
  in a frame when the line says it is ``visible``; the position is the actor's body centre
  at ``t_s`` (extent 0).
* ``results.json`` (:class:`~simready.artifacts.records.Results`): the LiDAR sweeps (its ``lidar``
  file entries). A sweep detects an actor with at least
  :data:`~simready.validity.policy.LIDAR_MIN_POINTS` points carrying its instance id at
  the entry's time ``t``; its position is the points' centroid, moved to world by
  ``T_world_sensor`` (the pose at mid-sweep) — a surface centroid, so its extent is half
  the actor's footprint diagonal. At most :data:`~simready.validity.policy.LIDAR_MAX_SWEEPS`
  sweeps, evenly spaced, are read.

Before anything is scored the files must belong together
(:mod:`simready.validity.binding`): the trace header and ``render.json``
name the manifest's sample and template, and each file read matches the
sha256 recorded for it (``verdict.json``, ``results.json``); otherwise a
one-line :class:`~simready.common.errors.IntegrityError`.

Frames and units: world frame x east, y north, z up, metres, seconds;
quaternions ``[x, y, z, w]``.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import zstandard

from simready.artifacts import layout
from simready.artifacts.layout import ObservationDir, SampleDir
from simready.artifacts.records import Legend, ObservedFrame, Record, Render, Results
from simready.scenario.manifest import ScenarioManifest, load_manifest
from simready.sensors_hw.lidar.ply import ascii_columns, sweep_bytes
from simready.validity import binding, policy
from simready.validity.evidence import (DETECTION_COLUMNS, DryReference, EvidenceError, MissingStageError,
                                        ScenarioEvidence, SensorEvidence, collisions_from_events, local_actor_id)
from simready.validity.features import ReferenceProfile
from simready.validity.lidar_kernels import instance_centroids


R = TypeVar("R", bound=Record)


def read_trace(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """``(ticks, header, events)`` of a trace Parquet file (SPEC §7)."""
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise EvidenceError(path, "", f"cannot read trace: {exc}".splitlines()[0]) from None
    meta = table.schema.metadata or {}

    def _json(key: bytes, default: Any) -> Any:
        raw = meta.get(key)
        if raw is None:
            return default
        try:
            return json.loads(raw)
        except ValueError:
            raise EvidenceError(path, key.decode(), "metadata is not valid JSON") from None

    header = _json(b"simready.header", {})
    events = _json(b"simready.events", [])
    return table.to_pandas(), header if isinstance(header, dict) else {}, events if isinstance(events, list) else []


class TraceActors(NamedTuple):
    """The manifest's actors under the ids a trace names them by: ``classes`` (kind) and ``dims`` ((length, width),
    m) per trace id, and the trace id of the metric subject (None: no ego)."""

    classes: dict[str, str]
    dims: dict[str, tuple[float, float]]
    ego_id: str | None


def trace_actors(ticks: pd.DataFrame, header: Mapping[str, Any], manifest: ScenarioManifest) -> TraceActors:
    """The actors of ``ticks`` (a trace's ticks table, ``header`` its header) matched to ``manifest``'s."""
    local = {a.id: a for a in manifest.actors}
    # The distinct ids first: a trace has ~10 actors over ~1 000 rows (astype(str) of every row was ~1 ms a trace).
    trace_ids = sorted({str(v) for v in ticks["actor_id"].unique()}) if len(ticks) else []
    by_trace_id = {tid: local[local_actor_id(tid)] for tid in trace_ids if local_actor_id(tid) in local}
    for a in manifest.actors:
        by_trace_id.setdefault(a.id, a)
    subject = header.get("metric_subject") or manifest.metric_subject
    return TraceActors({tid: a.kind for tid, a in by_trace_id.items()},
                       {tid: (a.dims.l, a.dims.w) for tid, a in by_trace_id.items()},
                       next((tid for tid, a in by_trace_id.items() if a.id == local_actor_id(str(subject))), None))


def evidence_from_sample_dir(
    path: str | Path,
    *,
    baseline: str | Path | None = None,
    reference_pool: str | Path | pd.DataFrame | ReferenceProfile | None = None,
    require_sensors: bool = True,
    dry_reference: DryReference | None = None,
    sensors: bool = True,
) -> ScenarioEvidence:
    """Build the gate's evidence from a sample folder (layout in the module docstring).

    ``baseline``: the source trajectory (a trace file or another sample folder);
    ``reference_pool``: feature rows (a Parquet file or a table) or a frozen profile;
    ``require_sensors``: raise :class:`MissingStageError` when the observations are
    missing (False: score the sample as trajectory-only evidence);
    ``sensors`` False: the observations are not read at all (``sensor`` None), for a caller that needs the
    trace and the actors alone (the Data Docs' trajectories table): the LiDAR sweeps are most of a read.
    """
    sample = SampleDir(Path(path))
    root = sample.root
    if not root.is_dir():
        raise EvidenceError(root, "", "sample folder not found")
    if not sample.manifest.is_file():
        raise MissingStageError("scenario", root, f"no {layout.MANIFEST}")
    if not sample.trace.is_file():
        raise MissingStageError("simulation", root, f"no {layout.TRACE}")
    manifest = load_manifest(sample.manifest)
    ticks, header, events = read_trace(sample.trace)
    binding.check_trace(sample, manifest, sample.trace, header)

    actors = trace_actors(ticks, header, manifest)
    actor_classes, actor_dims, ego_id = actors.classes, actors.dims, actors.ego_id
    dt = float(header.get("dt", manifest.dt))

    baseline_ticks = None
    if baseline is not None:
        b = Path(baseline)
        b_trace = SampleDir(b).trace if b.is_dir() else b
        if not b_trace.is_file():
            raise MissingStageError("simulation", b, f"baseline has no {layout.TRACE}")
        baseline_ticks = read_trace(b_trace)[0]

    obs = sample.observations
    sensor = None
    if sensors and (obs.observed_frames.is_file() or obs.results.is_file()):
        check_observations_belong(sample, manifest, obs)
        env = manifest.environment
        if dry_reference is None and sample.dry_observations.results.is_file():
            dry_reference = dry_reference_from_observations(sample.dry_observations.root, actor_dims)
        sensor = sensor_evidence_from_observations(
            obs.root, actor_dims, illumination=env.illumination, weather=env.weather, dry_reference=dry_reference
        )
    elif sensors and require_sensors:
        raise MissingStageError("measurement", root,
                                f"no {obs.observed_frames.relative_to(root).as_posix()}")

    pool: pd.DataFrame | ReferenceProfile | None
    if isinstance(reference_pool, (str, Path)):
        try:
            pool = pd.read_parquet(reference_pool)
        except (OSError, ValueError) as exc:
            raise EvidenceError(reference_pool, "", f"cannot read reference pool: {exc}".splitlines()[0]) from None
    else:
        pool = reference_pool

    return ScenarioEvidence(
        sample_id=manifest.sample_id,
        ticks=ticks,
        actor_classes=actor_classes,
        dt=dt,
        actor_dims=actor_dims,
        ego_id=ego_id,
        baseline_ticks=baseline_ticks,
        sensor=sensor,
        reference_pool=pool,
        collisions=collisions_from_events(events),
        source=str(root),
    )


def check_observations_belong(sample: SampleDir, manifest: ScenarioManifest, obs: ObservationDir) -> None:
    """``obs``'s ``render.json`` (when there is one) names the sample's manifest and is the file results.json lists."""
    if obs.render.is_file():
        binding.check_listed(obs, _results(obs), obs.render)
        binding.check_render(sample, manifest, _read(Render, obs.render), obs.render)


def _read(record: type[R], path: Path) -> R:
    try:
        return record.read(path)
    except (OSError, ValueError) as exc:  # a pydantic ValidationError is a ValueError
        raise EvidenceError(path, "", f"not a readable {path.name}: {exc}".splitlines()[0]) from None


def _frames(path: Path) -> list[ObservedFrame]:
    try:
        return list(ObservedFrame.read_lines(path))
    except (OSError, ValueError) as exc:
        raise EvidenceError(path, "", f"not a readable {path.name}: {exc}".splitlines()[0]) from None


def _camera_rows(path: Path, cameras_only: set[str] | None = None) -> list[dict[str, Any]]:
    """Camera detections per frame; lines of other sensors (LiDAR, radar samples) are skipped when known."""
    rows: list[dict[str, Any]] = []
    for frame in _frames(path):
        if cameras_only is not None and frame.sensor not in cameras_only:
            continue
        for entity, a in frame.actors.items():
            p = a.position
            rows.append(
                {
                    "sensor_type": "camera",
                    "sensor": frame.sensor,
                    "frame": frame.tick,
                    "t": frame.t_s,
                    "actor_id": local_actor_id(entity),
                    "x": float(p[0]),
                    "y": float(p[1]),
                    "z": float(p[2]) if len(p) > 2 else math.nan,
                    "extent_m": 0.0,
                    "detected": a.visible,
                }
            )
    return rows


def read_ply_points(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(xyz (N, 3) float64, instance_id (N,) int64)`` of a SPEC §10 PLY (ASCII or binary little-endian), or of
    its opt-in compressed variant ``<tick>.ply.zst`` (one zstd frame of those bytes)."""
    if path.name.endswith(layout.ZSTD_SUFFIX):
        raw = zstandard.ZstdDecompressor().decompress(path.read_bytes())
    else:
        raw = sweep_bytes(path)  # within shared_sweeps, a sweep parsed already: its header
    end = raw.find(b"end_header\n")
    if end < 0:
        raise EvidenceError(path, "", "not a PLY file (no end_header)")
    header = raw[:end].decode("ascii", "replace").splitlines()
    names, types = [], []
    count = 0
    for line in header:
        parts = line.split()
        if parts[:2] == ["element", "vertex"]:
            count = int(parts[2])
        elif parts and parts[0] == "property":
            types.append(parts[1])
            names.append(parts[2])
    if not {"x", "y", "z", "instance_id"} <= set(names):
        raise EvidenceError(path, "", "PLY lacks x y z instance_id")
    body = memoryview(raw)[end + len(b"end_header\n"):]  # not a copy of the sweep's megabyte
    if "format binary_little_endian" in "\n".join(header):
        ply_types = {"float": "<f4", "double": "<f8", "uint": "<u4", "int": "<i4", "ushort": "<u2", "uchar": "u1"}
        rec = np.frombuffer(body, dtype=[(n, ply_types.get(t, "<f4")) for n, t in zip(names, types)], count=count)
        xyz = np.stack([rec["x"], rec["y"], rec["z"]], axis=1).astype(np.float64)
        return xyz, rec["instance_id"].astype(np.int64)
    if count == 0:
        return np.empty((0, 3)), np.empty(0, np.int64)
    # The sensors' own parse (Arrow's, each number rounded correctly as pandas' is: the same values), shared with the
    # review page's read of the same sweep within shared_sweeps; a body it does not read is left to pandas.
    try:
        table, at = ascii_columns(path, body, count, len(names), [names.index(c) for c in ("x", "y", "z", "instance_id")])
    except ValueError:
        frame = pd.read_csv(io.BytesIO(body), sep=" ", header=None, names=names,
                            usecols=["x", "y", "z", "instance_id"], nrows=count, engine="c")
        return frame[["x", "y", "z"]].to_numpy(np.float64), frame["instance_id"].to_numpy(np.int64)
    return np.ascontiguousarray(table[:, at[:3]]), table[:, at[3]].astype(np.int64)


def _lidar_rows(obs: ObservationDir, results: Results | None, actor_dims: Mapping[str, tuple[float, float]],
                notes: list[str]) -> tuple[list[dict[str, Any]], float | None]:
    if results is None:
        notes.append(f"no {layout.RESULTS}: LiDAR sweeps not read")
        return [], None
    sweeps = [f for f in results.files if f.pass_name == "lidar"]
    if not sweeps:
        notes.append(f"{layout.RESULTS} lists no LiDAR sweep (.ply)")
        return [], None
    if not obs.legend.is_file():
        notes.append(f"no {layout.LEGEND}: LiDAR instance ids cannot be matched to actors")
        return [], None
    binding.check_listed(obs, results, obs.legend)
    compact = {e.compact_id: local_actor_id(e.entity) for e in _read(Legend, obs.legend).entries
               if "actor:" in e.entity}
    sweeps.sort(key=lambda f: (f.sensor or "", f.tick or 0))
    if len(sweeps) > policy.LIDAR_MAX_SWEEPS:
        pick = np.unique(np.linspace(0, len(sweeps) - 1, policy.LIDAR_MAX_SWEEPS).round().astype(int))
        sweeps = [sweeps[i] for i in pick]
    half_diag = {a: 0.5 * math.hypot(l, w) for a, (l, w) in actor_dims.items()}
    wanted = np.array(sorted(compact), np.int64)
    rows: list[dict[str, Any]] = []
    returns = []
    no_pose = 0
    # The sweeps' folder resolved once (a path resolution per sweep was a tenth of the gate's reading).
    for entry, ply in zip(sweeps, obs.each_file(e.path for e in sweeps)):
        if not ply.is_file():
            raise MissingStageError("measurement", ply, f"{layout.RESULTS} lists {entry.path} but it does not exist")
        binding.check_listed(obs, results, ply)
        xyz, inst = read_ply_points(ply)
        returns.append(len(inst))
        T = np.asarray(entry.T_world_sensor, float) if entry.T_world_sensor is not None else None
        if T is None or T.shape != (4, 4):
            T = None
            no_pose += 1
        # Every actor's count and centroid in one pass over the sweep (numpy's mean of its points, in their order).
        counts, centroids = instance_centroids(np.ascontiguousarray(xyz, np.float64), inst, wanted)
        for cid, actor in compact.items():
            j = int(np.searchsorted(wanted, cid))
            n = int(counts[j])
            pos = [math.nan] * 3
            if n and T is not None:
                pos = (T[:3, :3] @ centroids[j] + T[:3, 3]).tolist()
            rows.append(
                {
                    "sensor_type": "lidar",
                    "sensor": entry.sensor,
                    "frame": entry.tick,
                    "t": math.nan if entry.t is None else entry.t,
                    "actor_id": actor,
                    "x": pos[0],
                    "y": pos[1],
                    "z": pos[2],
                    "extent_m": half_diag.get(actor, 0.0),
                    "detected": n >= policy.LIDAR_MIN_POINTS,
                }
            )
    if no_pose:
        notes.append(f"{no_pose} of {len(sweeps)} LiDAR sweeps carry no T_world_sensor: their positions are not compared")
    return rows, float(np.mean(returns)) if returns else None


def _results(obs: ObservationDir) -> Results | None:
    return _read(Results, obs.results) if obs.results.is_file() else None


def dry_reference_from_observations(obs_dir: str | Path, actor_dims: Mapping[str, tuple[float, float]]) -> DryReference:
    """The LiDAR figures of a dry sibling observation: detection rate over (sweep, actor) and mean returns per sweep."""
    obs = ObservationDir(Path(obs_dir))
    rows, returns = _lidar_rows(obs, _results(obs), actor_dims, [])
    rate = float(np.mean([bool(r["detected"]) for r in rows])) if rows else None
    return DryReference(detection_rate=rate, returns_per_sweep=returns)


def sensor_evidence_from_observations(
    obs_dir: str | Path,
    actor_dims: Mapping[str, tuple[float, float]],
    *,
    illumination: str,
    weather: str,
    dry_reference: DryReference | None = None,
) -> SensorEvidence:
    """Camera and LiDAR detections of one observations folder (layout in the module docstring)."""
    obs = ObservationDir(Path(obs_dir))
    results = _results(obs)
    notes: list[str] = []
    cameras = {n for n, sensor in results.sensors.items() if sensor.type == "camera"} if results is not None else None
    if obs.observed_frames.is_file():
        binding.check_listed(obs, results, obs.observed_frames)
    rows = _camera_rows(obs.observed_frames, cameras) if obs.observed_frames.is_file() else []
    if not obs.observed_frames.is_file():
        notes.append(f"no {layout.OBSERVED_FRAMES}: no camera detections")
    elif not rows:
        notes.append(f"{layout.OBSERVED_FRAMES} gives no actor visibility: no camera detections")
    lidar, returns = _lidar_rows(obs, results, actor_dims, notes)
    table = pd.DataFrame(rows + lidar, columns=list(DETECTION_COLUMNS))
    return SensorEvidence(table, illumination, weather, returns, dry_reference, notes)
