"""Observed samples as a nuScenes dataset (issue 18, SPEC §17), loadable by the official ``nuscenes-devkit``.

``DIR/<version>/*.json`` holds the nuScenes v1.0 schema (category, attribute, visibility, instance, sensor,
calibrated_sensor, ego_pose, log, scene, sample, sample_data, sample_annotation, map); ``DIR/samples/<channel>/``
the key frames and ``DIR/sweeps/<channel>/`` the rest: camera JPEGs (from ``rgb.png``, quality 95), LiDAR
``.pcd.bin`` (float32 x y z intensity ring, the ring the channel whose elevation is nearest the point's;
ego-motion compensated to the sweep's timestamp, its start, from each point's firing time) and radar
``.pcd`` (PCD v0.7 binary with the devkit's 18 fields; our radial velocity along the line of sight as vx, vy, the
cluster states "valid, unambiguous, moving").

Mapping (why each choice):

* Every observed folder is a **scene**: a sample's base window and each of its branches; branch siblings share the
  sample's **log** (and its **map** record: the sample's top-down rollout picture when it has one — simready keeps
  no raster semantic prior — else no file).
* A **sample** is a frame of the rig's first camera (in name order): its time is the frame's first-row time, so
  the annotations are where the camera saw the actors. Every other sensor frame belongs to the sample nearest in
  time and is its key frame for that channel when it is the nearest of its channel; the rest are sweeps.
* Channels are the rig's sensor names; a **calibrated_sensor** is a sensor's pose on the ego (its measurement
  frame: the camera's optical frame, as nuScenes' cameras) per log; **ego_pose** is the ego body's pose at each
  sample_data's time, from the trace (Hermite between ticks, as the sensors were posed).
* A **sample_annotation** is every actor but the ego present at a sample: the box centre half its height above the
  body origin, size [width, length, height] from the trace header, and counts of the key LiDAR and radar returns
  carrying its id; an **instance** is an actor in one scene. Categories: vehicle → ``vehicle.car``, pedestrian →
  ``human.pedestrian.adult``, cyclist → ``vehicle.bicycle``; attributes moving/parked (vehicles) and
  moving/standing (pedestrians) by speed above 0.2 m/s. **visibility** is ``4`` (80–100 %) when the key camera
  frame has pixels of the actor, else ``1`` (0–40 %): simready knows whether, not how much.
* Timestamps are the scenario's microseconds; tokens are sha256 of what they name, so the same samples give the
  same dataset.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image

from simready.common.atomic import write_json_atomic
from simready.export.mcap_messages import radar_columns
from simready.export.observed import ExportError, ObservedSample
from simready.artifacts.layout import SampleDir
from simready.artifacts.records import Legend, LidarSweep
from simready.sensors_hw.camera import decode_id_rgb
from simready.sensors_hw.lidar import firing_times, read_ply
from simready.sensors_hw.models import CameraModel, LidarModel
from simready.sensors_hw.trace_input import read_trace_input
from simready.world.frames import matrix_from_quat, quat_from_matrix
from simready.world.identity import actor_id

VERSION = "v1.0-simready"
CATEGORIES = {"vehicle": "vehicle.car", "pedestrian": "human.pedestrian.adult", "cyclist": "vehicle.bicycle"}
ATTRIBUTES = ("vehicle.moving", "vehicle.parked", "pedestrian.moving", "pedestrian.standing", "cycle.with_rider")
VISIBILITY = {"1": "v0-40", "2": "v40-60", "3": "v60-80", "4": "v80-100"}
MOVING_MPS = 0.2
JPEG_QUALITY = 95
RADAR_FIELDS = (("x", "F", 4), ("y", "F", 4), ("z", "F", 4), ("dyn_prop", "I", 1), ("id", "I", 2), ("rcs", "F", 4),
                ("vx", "F", 4), ("vy", "F", 4), ("vx_comp", "F", 4), ("vy_comp", "F", 4), ("is_quality_valid", "I", 1),
                ("ambig_state", "I", 1), ("x_rms", "I", 1), ("y_rms", "I", 1), ("invalid_state", "I", 1),
                ("pdh0", "I", 1), ("vx_rms", "I", 1), ("vy_rms", "I", 1))


def token(*parts: object) -> str:
    """A nuScenes token (32 hex digits) for what ``parts`` name: the same name, the same token."""
    return hashlib.sha256("/".join(map(str, parts)).encode("utf-8")).hexdigest()[:32]


def us(t_s: float) -> int:
    """Scenario seconds as integer microseconds (nuScenes timestamps)."""
    return int(round(t_s * 1e6))


def _wxyz(R: npt.ArrayLike) -> list[float]:
    x, y, z, w = (float(v) for v in quat_from_matrix(np.asarray(R)[:3, :3]))
    return [w, x, y, z]


@dataclass
class _Tables:
    """The dataset's tables, filled scene by scene."""

    rows: dict[str, list[dict[str, Any]]]

    @classmethod
    def empty(cls) -> "_Tables":
        names = ("category", "attribute", "visibility", "instance", "sensor", "calibrated_sensor", "ego_pose", "log",
                 "scene", "sample", "sample_data", "sample_annotation", "map")
        return cls({n: [] for n in names})

    def add(self, table: str, row: dict[str, Any]) -> dict[str, Any]:
        self.rows[table].append(row)
        return row


def _chain(rows: list[dict[str, Any]]) -> None:
    """prev/next tokens along ``rows`` (in time order)."""
    for i, row in enumerate(rows):
        row["prev"] = rows[i - 1]["token"] if i else ""
        row["next"] = rows[i + 1]["token"] if i + 1 < len(rows) else ""


def _radar_pcd(path: Path, csv: Path) -> None:
    """A radar frame as the devkit's PCD (binary, one trailing newline: its reader wants bytes past the last)."""
    cols = radar_columns(csv)
    n = len(cols["x"])
    numpy_type = {("F", 4): "<f4", ("I", 1): "i1", ("I", 2): "<i2"}
    dtype = np.dtype([(name, numpy_type[(kind, size)]) for name, kind, size in RADAR_FIELDS])
    rec = np.zeros(max(n, 1), dtype)
    if n:
        az, v = cols["azimuth_rad"], cols["radial_velocity_mps"]
        for k in ("x", "y", "z"):
            rec[k] = cols[k]
        rec["id"] = np.arange(n)
        rec["rcs"] = cols["rcs_dbsm"]
        rec["vx"] = rec["vx_comp"] = v * np.cos(az)
        rec["vy"] = rec["vy_comp"] = v * np.sin(az)
        rec["is_quality_valid"], rec["ambig_state"], rec["invalid_state"] = 1, 3, 0
    else:  # the devkit's empty cloud: one point whose first field is NaN
        rec["x"] = np.nan
    header = "\n".join([
        "# .PCD v0.7 - Point Cloud Data file format", "VERSION 0.7",
        "FIELDS " + " ".join(f[0] for f in RADAR_FIELDS), "SIZE " + " ".join(str(f[2]) for f in RADAR_FIELDS),
        "TYPE " + " ".join(f[1] for f in RADAR_FIELDS), "COUNT " + " ".join("1" for _ in RADAR_FIELDS),
        f"WIDTH {len(rec)}", "HEIGHT 1", "VIEWPOINT 0 0 0 1 0 0 0", f"POINTS {len(rec)}", "DATA binary"]) + "\n"
    path.write_bytes(header.encode("ascii") + rec.tobytes() + b"\n")


def _lidar_bin(path: Path, ply: Path, model: LidarModel, ego: Any, T_body_sensor: np.ndarray, t0_s: float) -> dict[int, int]:
    """A sweep as ``.pcd.bin`` (float32 x y z intensity ring); returns points per instance id.

    Ego-motion compensated, as the devkit expects: each point (in the sensor frame at its beam's firing time,
    the PLY's ``t`` after the sweep's start ``t0_s``, or from its azimuth without one) is moved to the sensor
    frame at the sample_data's timestamp, the sweep's start: ``T_ws(t0)⁻¹ · T_ws(t) · p`` with ``T_ws`` the
    ego's pose (``ego``: its track, Hermite between ticks as the sensors were posed) times ``T_body_sensor``.
    """
    cols = read_ply(ply)
    raw = np.stack([cols["x"], cols["y"], cols["z"]], axis=1).astype(np.float64)
    t = t0_s + cols["t"].astype(np.float64) if "t" in cols else firing_times(raw, model, t0_s)
    times, which = np.unique(t, return_inverse=True)
    T_ws = ego.poses_at(np.concatenate([[t0_s], times]), clamp=True) @ T_body_sensor
    T_rel = np.linalg.inv(T_ws[0]) @ T_ws[1:]
    xyz = np.einsum("nij,nj->ni", T_rel[which.reshape(-1), :3, :3], raw) + T_rel[which.reshape(-1), :3, 3]
    cols["x"], cols["y"], cols["z"] = (xyz[:, k].astype(np.float32) for k in range(3))
    elevation = np.arctan2(raw[:, 2], np.hypot(raw[:, 0], raw[:, 1]))  # the beam's, in the sensor frame at its time
    ring = np.abs(elevation[:, None] - model.elevations_rad()[None, :]).argmin(axis=1)
    table = np.stack([cols["x"], cols["y"], cols["z"], cols["intensity"], ring.astype(np.float32)], axis=1)
    path.write_bytes(table.astype("<f4").tobytes())
    ids, counts = np.unique(cols["instance_id"], return_counts=True)
    return dict(zip(ids.tolist(), counts.tolist()))


class _Writer:
    """Writes files under the dataset root and rows into the tables."""

    def __init__(self, root: Path) -> None:
        self.root, self.t = root, _Tables.empty()
        for kind, name in CATEGORIES.items():
            self.t.add("category", {"token": token("category", name), "name": name,
                                    "description": f"simready {kind} actors"})
        for name in ATTRIBUTES:
            self.t.add("attribute", {"token": token("attribute", name), "name": name, "description": name})
        for level, name in VISIBILITY.items():
            self.t.add("visibility", {"token": level, "level": name,
                                      "description": f"visibility of whole object is between {name[1:]} %"})
        self.sensors: set[str] = set()
        self.calibrated: set[str] = set()

    def file(self, key_frame: bool, channel: str, name: str) -> tuple[Path, str]:
        rel = f"{'samples' if key_frame else 'sweeps'}/{channel}/{name}"
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        return path, rel

    def log(self, sample: SampleDir, template_id: str) -> str:
        log_token = token("log", sample.sample_id)
        self.t.add("log", {"token": log_token, "logfile": sample.sample_id, "vehicle": "simready-ego",
                           "date_captured": "1970-01-01", "location": template_id})
        filename = ""
        if sample.rollout_plot.is_file():
            filename = f"maps/{log_token}.png"
            (self.root / "maps").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(sample.rollout_plot, self.root / filename)
        self.t.add("map", {"token": token("map", sample.sample_id), "log_tokens": [log_token],
                           "category": "top-down rollout" if filename else "none", "filename": filename})
        return log_token

    def scene(self, sample: SampleDir, branch: str | None, log_token: str) -> None:
        s = ObservedSample.open(sample.root, branch)
        name = sample.sample_id if branch is None else f"{sample.sample_id}/{branch}"
        tracks = read_trace_input(sample.branch(branch).trace if branch else sample.trace).tracks()
        ego = tracks[s.ego]
        dims, kinds = s.trace.header["actor_dims"], s.trace.header.get("actor_kinds", {})
        legend = {e.entity: e.compact_id for e in Legend.read(s.obs.legend).entries}
        cameras = [n for n in s.rig.sensors if isinstance(s.rig.sensors[n], CameraModel) and n in s.results.cameras]
        if not cameras:
            raise ExportError(s.obs.results, "cameras", "no camera frame: nuScenes samples are camera frames")
        frames = s.results.cameras[cameras[0]].frames
        sample_times = np.array([f.t0_s for f in frames])
        samples = [self.t.add("sample", {"token": token("sample", name, f.tick), "timestamp": us(f.t0_s),
                                         "scene_token": token("scene", name)}) for f in frames]
        _chain(samples)

        # Every sensor frame: (channel, time, tick, pass) -> its sample; the nearest of a channel is the key frame.
        items: list[tuple[str, float, int, str]] = []
        for cam in cameras:
            items += [(cam, f.t0_s, f.tick, "rgb") for f in s.results.cameras[cam].frames]
        for sensor, summary in s.results.sensors.items():
            if summary.type in ("lidar", "radar"):
                items += [(sensor, r.t0_s if isinstance(r, LidarSweep) else r.t_s, r.tick, summary.type)
                          for r in s.results.sweeps.get(sensor, [])]
        nearest = {it: int(np.abs(sample_times - it[1]).argmin()) for it in items}
        key: dict[tuple[str, int], tuple[str, float, int, str]] = {}
        for it, k in nearest.items():
            best = key.get((it[0], k))
            if best is None or abs(it[1] - sample_times[k]) < abs(best[1] - sample_times[k]):
                key[(it[0], k)] = it
        key_items = set(key.values())
        lidar_counts: dict[int, dict[int, int]] = {}
        radar_counts: dict[int, dict[int, int]] = {}
        camera_ids: dict[int, set[int]] = {}
        by_channel: dict[str, list[dict[str, Any]]] = {}
        for it in sorted(items, key=lambda i: (i[0], i[1])):
            channel, t_s, tick, pass_name = it
            entry = s.entry(channel, tick, pass_name)
            if entry is None:
                continue
            src = s.verified(entry)
            is_key = it in key_items
            k = nearest[it]
            cal_token = token("calibrated_sensor", log_token, channel)
            if channel not in self.sensors:
                self.sensors.add(channel)
                modality = {"rgb": "camera"}.get(pass_name, pass_name)
                self.t.add("sensor", {"token": token("sensor", channel), "channel": channel, "modality": modality})
            if cal_token not in self.calibrated:
                self.calibrated.add(cal_token)
                T = s.rig.T_body_sensor(channel)
                model = s.rig.sensors[channel]
                intrinsic: list[list[float]] = []
                if isinstance(model, CameraModel):
                    p = s.results.cameras[channel].projection
                    intrinsic = [[p.fx, 0.0, p.cx], [0.0, p.fy, p.cy], [0.0, 0.0, 1.0]]
                self.t.add("calibrated_sensor", {"token": cal_token, "sensor_token": token("sensor", channel),
                                                 "translation": [float(v) for v in T[:3, 3]], "rotation": _wxyz(T),
                                                 "camera_intrinsic": intrinsic})
            sd_token = token("sample_data", name, channel, tick)
            stem = f"{name.replace('/', '__')}__{channel}__{tick:08d}"
            width = height = 0
            if pass_name == "rgb":
                path, rel = self.file(is_key, channel, stem + ".jpg")
                with Image.open(src) as im:
                    width, height = im.size
                    im.convert("RGB").save(path, format="JPEG", quality=JPEG_QUALITY)
                if is_key:
                    id_entry = s.entry(channel, tick, "id")
                    if id_entry is not None and channel == cameras[0]:
                        with Image.open(s.verified(id_entry)) as im:
                            camera_ids[k] = set(np.unique(decode_id_rgb(np.asarray(im))).tolist())
            elif pass_name == "lidar":
                path, rel = self.file(is_key, channel, stem + ".pcd.bin")
                counts = _lidar_bin(path, src, s.rig.sensors[channel], ego,  # type: ignore[arg-type]
                                    s.rig.T_body_sensor(channel), t_s)
                if is_key:
                    lidar_counts[k] = counts
            else:
                path, rel = self.file(is_key, channel, stem + ".pcd")
                _radar_pcd(path, src)
                if is_key:
                    ids, n = np.unique(radar_columns(src)["instance_id"], return_counts=True)
                    radar_counts[k] = {**radar_counts.get(k, {}), **dict(zip(ids.tolist(), n.tolist()))}
            T_ego = ego.poses_at(np.array([t_s]), clamp=True)[0]
            pose_token = token("ego_pose", name, channel, tick)
            self.t.add("ego_pose", {"token": pose_token, "timestamp": us(t_s), "rotation": _wxyz(T_ego),
                                    "translation": [float(v) for v in T_ego[:3, 3]]})
            by_channel.setdefault(channel, []).append(self.t.add("sample_data", {
                "token": sd_token, "sample_token": samples[k]["token"], "ego_pose_token": pose_token,
                "calibrated_sensor_token": cal_token, "timestamp": us(t_s), "fileformat": rel.rsplit(".", 1)[-1],
                "is_key_frame": is_key, "height": height, "width": width, "filename": rel}))
        for rows in by_channel.values():
            _chain(rows)

        # Annotations: every actor but the ego present at each sample.
        for actor in sorted(a for a in tracks if a != s.ego):
            anns = []
            for k, t_s in enumerate(sample_times):
                smp = tracks[actor].sample(np.array([t_s]), clamp=True)
                if not bool(smp.present[0]):
                    continue
                length_m, width_m, height_m = (float(v) for v in dims[actor])
                R = matrix_from_quat(smp.quat_xyzw[0])
                centre = smp.position_m[0] + R @ np.array([0.0, 0.0, height_m / 2.0])
                compact = legend.get(actor_id(s.render.sample_id, actor), -1)
                kind = kinds.get(actor, "vehicle")
                speed = float(np.linalg.norm(smp.velocity_mps[0]))
                attribute = {"vehicle": "vehicle.moving" if speed > MOVING_MPS else "vehicle.parked",
                             "pedestrian": "pedestrian.moving" if speed > MOVING_MPS else "pedestrian.standing",
                             "cyclist": "cycle.with_rider"}.get(kind, "vehicle.moving")
                anns.append(self.t.add("sample_annotation", {
                    "token": token("sample_annotation", name, actor, k), "sample_token": samples[k]["token"],
                    "instance_token": token("instance", name, actor), "attribute_tokens": [token("attribute", attribute)],
                    "visibility_token": "4" if compact in camera_ids.get(k, set()) else "1",
                    "translation": [float(v) for v in centre], "size": [width_m, length_m, height_m],
                    "rotation": _wxyz(R), "num_lidar_pts": int(lidar_counts.get(k, {}).get(compact, 0)),
                    "num_radar_pts": int(radar_counts.get(k, {}).get(compact, 0))}))
            if not anns:
                continue
            _chain(anns)
            self.t.add("instance", {"token": token("instance", name, actor),
                                    "category_token": token("category", CATEGORIES.get(kinds.get(actor, "vehicle"),
                                                                                       "vehicle.car")),
                                    "nbr_annotations": len(anns), "first_annotation_token": anns[0]["token"],
                                    "last_annotation_token": anns[-1]["token"]})
        self.t.add("scene", {"token": token("scene", name), "log_token": log_token, "nbr_samples": len(samples),
                             "first_sample_token": samples[0]["token"], "last_sample_token": samples[-1]["token"],
                             "name": name, "description": f"simready {name}"})

    def finish(self) -> dict[str, int]:
        tables = self.root / VERSION
        tables.mkdir(parents=True, exist_ok=True)
        for name, rows in self.t.rows.items():
            write_json_atomic(tables / f"{name}.json", rows)
        return {name: len(rows) for name, rows in self.t.rows.items()}


def export_nuscenes(sample_dirs: Iterable[str | Path], out_dir: str | Path) -> dict[str, int]:
    """Write a nuScenes dataset of ``sample_dirs`` (each: its base window and every observed branch) into
    ``out_dir`` (the CLI passes :func:`simready.common.outdir.output_folder`'s staged folder); returns rows per table."""
    dirs = [Path(d) for d in sample_dirs]
    seen: dict[str, Path] = {}
    for d in dirs:  # before anything is written
        sample_id = SampleDir(d.resolve()).sample_id
        if sample_id in seen:
            raise ExportError(d, "", f"sample {sample_id} is given twice (also as {seen[sample_id]}); nuScenes "
                                "tokens are named by the sample, so give each sample once")
        seen[sample_id] = d
    writer = _Writer(Path(out_dir))
    for d in dirs:
        sample = SampleDir(d)
        s = ObservedSample.open(sample.root, None)  # the base is checked (and must exist) before anything is written
        log_token = writer.log(sample, s.render.template_id)
        writer.scene(sample, None, log_token)
        for obs in sample.branch_observations():
            writer.scene(sample, obs.root.parent.name, log_token)
    return writer.finish()

