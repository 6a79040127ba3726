"""Synthetic gate evidence: a small, exactly known street scene for tests, the bench and demos.

The scene (world frame, metres, seconds; quaternions ``[x, y, z, w]``): an ego
vehicle drives east along y = 0 at ``ego_speed_mps`` from x = 0; a van is
parked at (40, −3.5) facing east; a pedestrian walks north from (46, −12) at
``ped_speed_mps``; optional extra vehicles drive east in the next lane.
Motion is at constant velocity, so positions and stored velocities agree
exactly and every check of a clean scene passes. Adversarial cases are made
by editing the ticks table a builder returns.

Sensors: a 20 Hz camera (frames at k·0.05 s) reports each actor's body
centre; a 10 Hz LiDAR (sweeps at 0.01 + k·0.1 s) reports each actor's
surface centroid (offset toward the ego by half the actor's length, extent
the half footprint diagonal). Detection flags default to True.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from simready.common.atomic import write_bytes_atomic, write_json_atomic, write_text_atomic
from simready.common.hashing import content_hash, sha256_bytes
from simready.artifacts.layout import ObservationDir, SampleDir
from simready.artifacts.records import FileEntry, Legend, LegendEntry, ObservedActor, ObservedFrame, Results, SensorSummary
from simready.scenario.manifest import SCHEMA_VERSION, load_manifest
from simready.scenario.streams import StreamSet
from simready.validity.binding import identity
from simready.validity.evidence import DETECTION_COLUMNS, ScenarioEvidence, SensorEvidence
from simready.validity.features import scenario_features
from simready.world.identity import COMPACT_ID_BITS, NOTHING_HIT
from simready.world.ontology import load_ontology

DT = 0.02
CAMERA_PERIOD_S = 0.05
LIDAR_PERIOD_S = 0.1
LIDAR_PHASE_S = 0.01
TICK_COLUMNS = ("tick", "t", "actor_id", "x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz",
                "speed_mps", "lane", "s", "present")


def _track(actor: str, t: np.ndarray, x0: float, y0: float, vx: float, vy: float, yaw: float) -> pd.DataFrame:
    n = len(t)
    return pd.DataFrame(
        {
            "tick": np.arange(n, dtype=np.int64),
            "t": t,
            "actor_id": actor,
            "x": x0 + vx * t,
            "y": y0 + vy * t,
            "z": np.zeros(n),
            "qx": np.zeros(n),
            "qy": np.zeros(n),
            "qz": np.full(n, math.sin(yaw / 2)),
            "qw": np.full(n, math.cos(yaw / 2)),
            "vx": np.full(n, vx),
            "vy": np.full(n, vy),
            "vz": np.zeros(n),
            "wx": np.zeros(n),
            "wy": np.zeros(n),
            "wz": np.zeros(n),
            "speed_mps": np.full(n, math.hypot(vx, vy)),
            "lane": "",
            "s": np.zeros(n),
            "present": np.ones(n, bool),
        }
    )


def sort_ticks(ticks: pd.DataFrame) -> pd.DataFrame:
    """Canonical trace order (SPEC §7): by tick, then actor id."""
    return ticks.sort_values(["tick", "actor_id"], kind="stable").reset_index(drop=True)


def street_ticks(
    clip_s: float = 20.0,
    dt: float = DT,
    *,
    ego_speed_mps: float = 10.0,
    ped_speed_mps: float = 1.4,
    extra_vehicles: int = 0,
) -> tuple[pd.DataFrame, dict[str, str], dict[str, tuple[float, float]]]:
    """``(ticks, actor_classes, actor_dims)`` of the scene in the module docstring."""
    n = int(round(clip_s / dt)) + 1
    t = np.arange(n) * dt
    tracks = [
        _track("ego", t, 0.0, 0.0, ego_speed_mps, 0.0, 0.0),
        _track("van", t, 40.0, -3.5, 0.0, 0.0, 0.0),
        _track("ped", t, 46.0, -12.0, 0.0, ped_speed_mps, math.pi / 2),
    ]
    classes = {"ego": "vehicle", "van": "vehicle", "ped": "pedestrian"}
    dims = {"ego": (4.6, 1.9), "van": (5.4, 2.0), "ped": (0.5, 0.6)}
    for i in range(extra_vehicles):
        name = f"car_{i}"
        tracks.append(_track(name, t, -20.0 - 12.0 * i, 3.5, 9.0, 0.0, 0.0))
        classes[name] = "vehicle"
        dims[name] = (4.5, 1.8)
    return sort_ticks(pd.concat(tracks, ignore_index=True)), classes, dims


def _positions_at(ticks: pd.DataFrame, times: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    out = {}
    for actor, g in ticks.groupby("actor_id", sort=True):
        g = g.sort_values("t")
        tt = g["t"].to_numpy(float)
        ok = np.isfinite(tt) & np.isfinite(g["x"].to_numpy(float))
        out[str(actor)] = (np.interp(times, tt[ok], g["x"].to_numpy(float)[ok]),
                           np.interp(times, tt[ok], g["y"].to_numpy(float)[ok]), np.zeros(len(times)))
    return out


Detect = Callable[[str, float], bool]


def street_sensor(
    ticks: pd.DataFrame,
    actor_dims: Mapping[str, tuple[float, float]],
    *,
    ego_id: str = "ego",
    illumination: str = "day",
    weather: str = "dry",
    camera_detects: Detect = lambda actor, t: True,
    lidar_detects: Detect = lambda actor, t: True,
    lidar_offset_m: Mapping[str, float] | None = None,
    lidar_returns_per_sweep: float | None = 30000.0,
) -> SensorEvidence:
    """Camera and LiDAR detections of every non-ego actor (see the module docstring).

    ``lidar_offset_m``: extra eastward error of the LiDAR position per actor (to break agreement).
    """
    clip = float(ticks["t"].max())
    cam_t = np.arange(0.0, clip + 1e-9, CAMERA_PERIOD_S)
    lid_t = np.arange(LIDAR_PHASE_S, clip + 1e-9, LIDAR_PERIOD_S)
    cam_pos = _positions_at(ticks, cam_t)
    lid_pos = _positions_at(ticks, lid_t)
    rows = []
    for actor in sorted(cam_pos):
        if actor == ego_id:
            continue
        l, w = actor_dims.get(actor, (0.0, 0.0))
        for k, t in enumerate(cam_t):
            x, y, z = (c[k] for c in cam_pos[actor])
            rows.append(("camera", "cam_front", k, t, actor, x, y, z, 0.0, bool(camera_detects(actor, t))))
        ex, ey, _ = lid_pos[ego_id]
        for k, t in enumerate(lid_t):
            x, y, z = (c[k] for c in lid_pos[actor])
            d = math.hypot(ex[k] - x, ey[k] - y) or 1.0
            sx = x + 0.5 * l * (ex[k] - x) / d + (lidar_offset_m or {}).get(actor, 0.0)
            sy = y + 0.5 * l * (ey[k] - y) / d
            rows.append(("lidar", "lidar_top", k, t, actor, sx, sy, z, 0.5 * math.hypot(l, w),
                         bool(lidar_detects(actor, t))))
    table = pd.DataFrame(rows, columns=list(DETECTION_COLUMNS))
    return SensorEvidence(table, illumination=illumination, weather=weather, lidar_returns_per_sweep=lidar_returns_per_sweep)


def street_pool(n_variants: int = 8, seed: int = 0, clip_s: float = 20.0) -> pd.DataFrame:
    """Feature rows of ``n_variants`` street scenes with drawn ego and pedestrian speeds (a reference pool)."""
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(n_variants):
        ticks, classes, _ = street_ticks(clip_s, ego_speed_mps=float(rng.uniform(8.0, 12.0)),
                                         ped_speed_mps=float(rng.uniform(1.1, 1.7)))
        parts.append(scenario_features(ticks, classes, "ego"))
    return pd.concat(parts, ignore_index=True)


def street_evidence(
    sample_id: str = "street-000001",
    *,
    clip_s: float = 20.0,
    with_sensor: bool = True,
    with_pool: bool = True,
    extra_vehicles: int = 0,
    **sensor_kwargs,
) -> ScenarioEvidence:
    """A clean, fully evidenced sample: every check passes with score 1 (or near it for the distribution)."""
    ticks, classes, dims = street_ticks(clip_s, extra_vehicles=extra_vehicles)
    return ScenarioEvidence(
        sample_id=sample_id,
        ticks=ticks,
        actor_classes=classes,
        dt=DT,
        actor_dims=dims,
        ego_id="ego",
        baseline_ticks=ticks.copy(),
        sensor=street_sensor(ticks, dims, **sensor_kwargs) if with_sensor else None,
        reference_pool=street_pool(clip_s=clip_s) if with_pool else None,
    )


# --- a sample folder on disk ----------------------------------------------------------


def street_manifest_dict(sample_id: str = "street-000001", *, illumination: str = "day", weather: str = "dry") -> dict:
    """A valid manifest (SPEC §6) for the street scene: its actors, kinds and footprints match :func:`street_ticks`."""
    rules = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.2, "speed_factor": 1.0}
    _, _, dims = street_ticks(1.0)

    def actor(actor_id: str, kind: str, role: str, asset: str, pose: tuple[float, float, float], speed: float) -> dict:
        l, w = dims[actor_id]
        return {
            "id": actor_id, "kind": kind, "role": role, "asset_id": asset,
            "dims": {"l": l, "w": w, "h": 1.7},
            "initial": {"lane_ref": None, "pose": {"x": pose[0], "y": pose[1], "yaw": pose[2]}, "speed_mps": speed},
            "behavior": {"rules": dict(rules), "route": [], "cruise_speed_mps": None},
            "walk": {"route": ["a", "b"], "reaction_delay_s": 0.4, "stop_tendency": 0.1} if kind == "pedestrian" else None,
            "present_at_start": True, "tags": [],
        }

    actors = [
        actor("ego", "vehicle", "ego", "asset:sedan/white", (0.0, 0.0, 0.0), 10.0),
        actor("ped", "pedestrian", "agent", "asset:pedestrian_adult/a", (46.0, -12.0, 1.570796327), 1.4),
        actor("van", "vehicle", "parked", "asset:delivery_van/white", (40.0, -3.5, 0.0), 0.0),
    ]
    night = illumination == "night"
    rain = weather == "rain"
    streams = StreamSet(sample_id)
    return {
        "schema_version": SCHEMA_VERSION, "template_id": "street", "template_hash": content_hash({"template": "street"}),
        "sample_id": sample_id, "seed": streams.root_seed, "streams": streams.seeds(),
        "clip_s": 20.0, "warmup_s": 5.0, "dt": DT, "metric_subject": "ego",
        "actors": actors, "interactions": [], "signal_programs": [], "occluders": [],
        "environment": {
            "illumination": illumination, "sun_elevation_deg": -20.0 if night else 35.0, "sun_azimuth_deg": 180.0,
            "headlights": night, "weather": weather, "wetness": 0.5 if weather != "dry" else 0.0,
            "road_friction": 0.9, "road_reflectance": 0.1, "rain_rate_mmph": 5.0 if rain else 0.0,
        },
        "coverage_cell": {"id": f"illumination={illumination}|weather={weather}", "dims": {}},
        "split": "train", "realized": {},
        "lineage": {"asset_families": ["delivery_van", "pedestrian_adult", "sedan"], "base_template": "street",
                    "checkpoint_group": sample_id},
        "asset_versions": {a["asset_id"]: content_hash({"asset": a["asset_id"]}) for a in actors},
        "intent": "a pedestrian crosses ahead of the ego past a parked van",
    }


def write_trace(path, ticks: pd.DataFrame, header: Mapping, events: list | None = None):
    """A trace Parquet file (SPEC §7): the ticks with header and events as JSON metadata."""
    table = pa.Table.from_pandas(ticks, preserve_index=False)
    meta = {b"simready.header": json.dumps(dict(header)).encode(), b"simready.events": json.dumps(events or []).encode(),
            b"simready.metrics": b"{}"}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return write_bytes_atomic(path, sink.getvalue().to_pybytes())


def street_header(sample_dir, ticks: pd.DataFrame) -> dict:
    """A trace header for ``ticks`` bound to the sample folder's manifest (sample and template ids and hashes)."""
    manifest = load_manifest(SampleDir(Path(sample_dir)).manifest)
    return {"dt": DT, "actor_ids": sorted(set(ticks["actor_id"])), "metric_subject": "ego", **identity(manifest)}


def write_observations(obs_dir, sample_id: str, sensor: SensorEvidence, *, points_per_instance: int = 40,
                       background_points: int = 2000):
    """An observations folder (SPEC §10 subset the gate reads) reproducing ``sensor``'s detections.

    Camera rows become ``observed-frames.jsonl`` lines (``visible`` as detected); LiDAR rows become one
    ASCII PLY per sweep with ``points_per_instance`` points around each detected position (sensor
    frame = world frame shifted by the sweep's ``T_world_sensor`` translation) plus background;
    ``results.json`` lists the sweeps and says which sensor is the camera.
    """
    folder = ObservationDir(Path(obs_dir))
    folder.root.mkdir(parents=True, exist_ok=True)
    det = sensor.detections
    actors = sorted(set(det["actor_id"]))
    compact = {a: i + 1 for i, a in enumerate(actors)}
    legend = Legend(ontology_version=load_ontology().ontology_version, nothing_hit=NOTHING_HIT,
                    compact_id_bits=COMPACT_ID_BITS,
                    entries=[LegendEntry(compact_id=compact[a], entity=f"{sample_id}/actor:{a}", semantic_class=None,
                                         class_id=0, family=None) for a in actors])
    write_json_atomic(folder.legend, legend.dump())
    cam = det[det["sensor_type"] == "camera"]
    lines = []
    for (sensor_name, frame), g in cam.groupby(["sensor", "frame"], sort=True):
        seen = {f"{sample_id}/actor:{r.actor_id}": ObservedActor(position=[r.x, r.y, r.z], rotation_xyzw=[0.0, 0.0, 0.0, 1.0],
                                                                present=True, visible=bool(r.detected))
                for r in g.itertuples()}
        lines.append(ObservedFrame(sensor=sensor_name, tick=int(frame), t_s=float(g["t"].iloc[0]), actors=seen).line())
    write_text_atomic(folder.observed_frames, "\n".join(lines) + "\n")
    lid = det[det["sensor_type"] == "lidar"]
    rng = np.random.default_rng(0)
    files = []
    for (sensor_name, frame), g in lid.groupby(["sensor", "frame"], sort=True):
        origin = np.array([float(g["x"].mean()), float(g["y"].mean()), 0.0])
        parts = [np.column_stack([rng.uniform(-50, 50, (background_points, 3)), rng.uniform(0, 1, background_points),
                                  np.zeros(background_points)])]
        for r in g.itertuples():
            if r.detected:
                p = np.array([r.x, r.y, r.z]) - origin + rng.normal(0, 0.05, (points_per_instance, 3))
                p -= p.mean(axis=0) - (np.array([r.x, r.y, r.z]) - origin)
                parts.append(np.column_stack([p, np.full(points_per_instance, 0.5), np.full(points_per_instance, compact[r.actor_id])]))
        pts = np.concatenate(parts)
        rel = folder.frame_name(sensor_name, int(frame), "lidar")
        # One %-format over the whole sweep (the bytes a row-by-row f"{x:.4f} …" gives, a third of its time).
        body = ("%.4f %.4f %.4f %.4f %d\n" * len(pts)) % tuple(pts.ravel().tolist())
        header = (f"ply\nformat ascii 1.0\nelement vertex {len(pts)}\nproperty float x\nproperty float y\n"
                  "property float z\nproperty float intensity\nproperty uint instance_id\nend_header\n")
        data = (header + body).encode("utf-8")
        write_bytes_atomic(folder.file(rel), data)
        T = np.eye(4)
        T[:3, 3] = origin
        files.append(FileEntry(path=rel, sensor=sensor_name, tick=int(frame), pass_name="lidar", bytes=len(data),
                               sha256=sha256_bytes(data), points=len(pts), t=float(g["t"].iloc[0]),
                               T_world_sensor=T.tolist()))
    sensors = {**{name: SensorSummary(type="camera", ticks=int(g["frame"].nunique()), passes=[])
                  for name, g in cam.groupby("sensor")},
               **{name: SensorSummary(type="lidar", ticks=int(g["frame"].nunique()), passes=["lidar"])
                  for name, g in lid.groupby("sensor")}}
    results = Results(version="synthetic", passes=["lidar"], sensors=sensors, cameras={}, sweeps={},
                      files=sorted(files, key=lambda e: e.path))
    write_json_atomic(folder.results, results.dump())
    return folder.root


def write_street_sample(root, sample_id: str = "street-000001", *, ticks: pd.DataFrame | None = None,
                        illumination: str = "day", weather: str = "dry", observations: bool = True, **sensor_kwargs):
    """A complete sample folder (``manifest.json``, ``trace.parquet``, ``observations/``) of the street scene."""
    sample = SampleDir(Path(root))
    sample.root.mkdir(parents=True, exist_ok=True)
    clean, _, dims = street_ticks()
    ticks = clean if ticks is None else ticks
    write_json_atomic(sample.manifest, street_manifest_dict(sample_id, illumination=illumination, weather=weather))
    write_trace(sample.trace, ticks, street_header(sample.root, ticks))
    if observations:
        sensor = street_sensor(ticks, dims, illumination=illumination, weather=weather, **sensor_kwargs)
        write_observations(sample.observations.root, sample_id, sensor)
    return sample.root
