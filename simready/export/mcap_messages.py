"""The MCAP file's messages, topic by topic (the table in :mod:`simready.export.mcap_file`): camera images, depth
and calibration, LiDAR and radar point clouds, radar contributors, the frame transforms, boxes and tracks, and the
trace's events, each in Foxglove's schema and encoded only when written."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, SupportsFloat

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from foxglove import messages as fg
from numpy.typing import NDArray

from simready.artifacts.records import FileEntry
from simready.export.observed import ExportError, ObservedSample
from simready.sensors_hw.camera import decode_depth, read_depth_file
from simready.sensors_hw.lidar import firing_times, read_ply
from simready.sensors_hw.models import LidarModel
from simready.sensors_hw.radar import read_radar_csv
from simready.world.frames import matrix_from_quat, quat_from_matrix


WORLD_FRAME = "world"
TF_TOPIC, BOXES_TOPIC, TRACKS_TOPIC, EVENTS_TOPIC = "/tf", "/boxes", "/tracks", "/events"
#: Box colours by actor kind (RGBA, 0–1); other kinds grey.
KIND_COLOURS = {"vehicle": (0.2, 0.5, 1.0, 0.5), "pedestrian": (1.0, 0.4, 0.1, 0.6), "cyclist": (0.9, 0.8, 0.1, 0.6)}
NS = 1_000_000_000


@dataclass(frozen=True)
class Message:
    """One message, encoded only when it is written (so a sample's files are never all in memory at once)."""

    log_time_ns: int
    topic: str
    encode: Callable[[], bytes]
    source: Path | None = None


#: An actor at a tick: its id, position and orientation (x y z w) in the world frame.
Pose = tuple[str, tuple[float, float, float], tuple[float, float, float, float]]


def ns(t_s: float) -> int:
    """Scenario seconds as integer nanoseconds (how MCAP and Foxglove count time)."""
    return int(round(t_s * NS))


def timestamp_of(t_ns: int) -> fg.Timestamp:
    return fg.Timestamp(t_ns // NS, t_ns % NS)


def _vector(p: Iterable[SupportsFloat]) -> fg.Vector3:
    x, y, z = (float(v) for v in p)
    return fg.Vector3(x=x, y=y, z=z)


def _quaternion(q_xyzw: Iterable[SupportsFloat]) -> fg.Quaternion:
    x, y, z, w = (float(v) for v in q_xyzw)
    return fg.Quaternion(x=x, y=y, z=z, w=w)


def _pose(position: Iterable[SupportsFloat], q_xyzw: Iterable[SupportsFloat]) -> fg.Pose:
    return fg.Pose(position=_vector(position), orientation=_quaternion(q_xyzw))


def _transform(t_ns: int, parent: str, child: str, position: Iterable[SupportsFloat],
               q_xyzw: Iterable[SupportsFloat]) -> fg.FrameTransform:
    return fg.FrameTransform(timestamp=timestamp_of(t_ns), parent_frame_id=parent, child_frame_id=child,
                             translation=_vector(position), rotation=_quaternion(q_xyzw))


def actor_frame(actor: str) -> str:
    return f"actor:{actor}"


def _packed(columns: dict[str, NDArray[Any]], types: dict[str, str]
            ) -> tuple[bytes, int, list[fg.PackedElementField]]:
    """Columns as one little-endian record per point, with the PointCloud fields that describe them."""
    numeric = {"<f4": fg.PackedElementFieldNumericType.Float32, "<f8": fg.PackedElementFieldNumericType.Float64,
               "<u4": fg.PackedElementFieldNumericType.Uint32}
    dtype = np.dtype([(k, types[k]) for k in columns])
    rec = np.empty(len(next(iter(columns.values()))), dtype)
    for k, v in columns.items():
        rec[k] = v
    layout = dtype.fields
    assert layout is not None  # a structured dtype names its fields
    fields = [fg.PackedElementField(name=k, offset=layout[k][1], type=numeric[types[k]]) for k in columns]
    return rec.tobytes(), dtype.itemsize, fields


def camera_messages(s: ObservedSample, camera: str) -> Iterator[Message]:
    frames = s.results.cameras[camera]
    p = frames.projection
    w, h = p.width_px, p.height_px
    d = p.distortion
    k1, k2 = (d.k1, d.k2) if "rgb" in d.applies_to else (0.0, 0.0)
    K = [p.fx, 0.0, p.cx, 0.0, p.fy, p.cy, 0.0, 0.0, 1.0]
    P = [p.fx, 0.0, p.cx, 0.0, 0.0, p.fy, p.cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    for frame in frames.frames:
        t = ns(frame.t0_s)
        stamp = timestamp_of(t)

        def calibration(stamp: fg.Timestamp = stamp) -> bytes:
            return fg.CameraCalibration(
                timestamp=stamp, frame_id=camera, width=w, height=h, distortion_model="plumb_bob",
                D=[k1, k2, 0.0, 0.0, 0.0], K=K, R=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], P=P).encode()

        yield Message(t, f"/{camera}/calibration", calibration)
        rgb = s.entry(camera, frame.tick, "rgb")
        if rgb is not None:
            def image(stamp: fg.Timestamp = stamp, rgb: FileEntry = rgb) -> bytes:
                return fg.CompressedImage(timestamp=stamp, frame_id=camera, data=s.verified(rgb).read_bytes(),
                                          format="png").encode()

            yield Message(t, f"/{camera}/image", image, s.obs.file(rgb.path))
        depth = s.entry(camera, frame.tick, "depth")
        if depth is not None:
            def depth_image(stamp: fg.Timestamp = stamp, depth: FileEntry = depth,
                            near_m: float = frame.projection.near_m) -> bytes:
                return fg.RawImage(timestamp=stamp, frame_id=camera, width=w, height=h, encoding="32FC1", step=4 * w,
                                   data=depth_metres(s.verified(depth), near_m)).encode()

            yield Message(t, f"/{camera}/depth", depth_image, s.obs.file(depth.path))


def depth_metres(path: Path, near_m: float) -> bytes:
    """A ``depth.f32.bin`` (``near_m / z``, 0: nothing hit) as Foxglove's ``32FC1``: z in metres, +inf: nothing."""
    return decode_depth(read_depth_file(path), near_m).astype("<f4").tobytes()


def lidar_columns(ply: Path, model: LidarModel, t0_s: float) -> dict[str, NDArray[Any]]:
    """A sweep's PLY columns as the point cloud carries them: x y z intensity instance_id and t (s from the scenario
    start; the PLY's ``t`` counts from the sweep's start ``t0_s``)."""
    cols = read_ply(ply)
    if "t" in cols:
        cols["t"] = t0_s + cols["t"].astype(np.float64)
    else:
        xyz = np.stack([cols["x"], cols["y"], cols["z"]], axis=1).astype(np.float64)
        cols["t"] = firing_times(xyz, model, t0_s)
    return {k: cols[k] for k in ("x", "y", "z", "intensity", "instance_id", "t")}


LIDAR_TYPES = {"x": "<f4", "y": "<f4", "z": "<f4", "intensity": "<f4", "instance_id": "<u4", "t": "<f8"}


def lidar_messages(s: ObservedSample, lidar: str) -> Iterator[Message]:
    model = s.rig.sensors[lidar]
    if not isinstance(model, LidarModel):
        raise ExportError(s.obs.render, f"rig.{lidar}.type", "is not lidar, but results.json observed it as one")
    for sweep in s.results.sweeps.get(lidar, []):
        ply = s.entry(lidar, sweep.tick, "lidar")
        if ply is None:
            continue
        t = ns(sweep.t0_s)  # type: ignore[union-attr]

        def encode(ply: FileEntry = ply, t0_s: float = sweep.t0_s, t: int = t) -> bytes:  # type: ignore[union-attr]
            data, stride, fields = _packed(lidar_columns(s.verified(ply), model, t0_s), LIDAR_TYPES)
            return fg.PointCloud(timestamp=timestamp_of(t), frame_id=lidar, pose=_pose((0, 0, 0), (0, 0, 0, 1)),
                                 point_stride=stride, fields=fields, data=data).encode()

        yield Message(t, f"/{lidar}/points", encode, s.obs.file(ply.path))


def radar_columns(csv: Path) -> dict[str, NDArray[Any]]:
    """A radar frame's CSV as its point cloud carries it: x y z in the radar frame, then every column."""
    cols = read_radar_csv(csv)
    r, az, el = cols["range_m"], cols["azimuth_rad"], cols["elevation_rad"]
    xyz = {"x": r * np.cos(el) * np.cos(az), "y": r * np.cos(el) * np.sin(az), "z": r * np.sin(el)}
    return {**xyz, **cols}


def radar_messages(s: ObservedSample, radar: str) -> Iterator[Message]:
    for frame in s.results.sweeps.get(radar, []):
        csv = s.entry(radar, frame.tick, "radar")
        if csv is None:
            continue
        t = ns(frame.t_s)  # type: ignore[union-attr]

        def encode(csv: FileEntry = csv, t: int = t) -> bytes:
            cols = radar_columns(s.verified(csv))
            types = {k: "<f4" if k in ("x", "y", "z") else "<u4" if k == "instance_id" else "<f8" for k in cols}
            data, stride, fields = _packed(cols, types)
            return fg.PointCloud(timestamp=timestamp_of(t), frame_id=radar, pose=_pose((0, 0, 0), (0, 0, 0, 1)),
                                 point_stride=stride, fields=fields, data=data).encode()

        yield Message(t, f"/{radar}/detections", encode, s.obs.file(csv.path))


CONTRIBUTOR_FIELDS = {"x": "<f4", "y": "<f4", "z": "<f4", "detection": "<u4", "instance_id": "<u4", "part": "<u4",
                      "hits": "<u4", "power_share": "<f8", "radial_velocity_mps": "<f8"}


def contributor_columns(parquet: Path) -> dict[str, NDArray[Any]]:
    """A radar frame's contributor table as its point cloud carries it (:data:`CONTRIBUTOR_FIELDS`)."""
    table = pq.read_table(parquet, columns=list(CONTRIBUTOR_FIELDS))
    return {k: table.column(k).to_numpy() for k in CONTRIBUTOR_FIELDS}


def contributor_messages(s: ObservedSample, radar: str) -> Iterator[Message]:
    for frame in s.results.sweeps.get(radar, []):
        entry = s.entry(radar, frame.tick, "radar.contributors")
        if entry is None:
            continue
        t = ns(frame.t_s)  # type: ignore[union-attr]

        def encode(entry: FileEntry = entry, t: int = t) -> bytes:
            data, stride, fields = _packed(contributor_columns(s.verified(entry)), CONTRIBUTOR_FIELDS)
            return fg.PointCloud(timestamp=timestamp_of(t), frame_id=radar, pose=_pose((0, 0, 0), (0, 0, 0, 1)),
                                 point_stride=stride, fields=fields, data=data).encode()

        yield Message(t, f"/{radar}/contributors", encode, s.obs.file(entry.path))


def _tick_groups(rows: pd.DataFrame) -> Iterator[tuple[float, pd.DataFrame]]:
    for t, group in rows.groupby("t", sort=True):
        yield float(t), group.sort_values("actor_id", kind="stable")


def world_messages(s: ObservedSample) -> Iterator[Message]:
    """Frame transforms and boxes at every trace tick of the window, each actor's track once."""
    rows = s.window_ticks()
    dims: dict[str, list[float]] = s.trace.header["actor_dims"]
    kinds: dict[str, str] = s.trace.header.get("actor_kinds", {})
    mounts = {name: s.rig.T_body_sensor(name) for name in s.rig.sensors}
    for t_s, group in _tick_groups(rows):
        t = ns(t_s)
        actors = [(str(r.actor_id), (r.x, r.y, r.z), (r.qx, r.qy, r.qz, r.qw)) for r in group.itertuples()]

        def tf(t: int = t, actors: list[Pose] = actors) -> bytes:
            transforms = [_transform(t, WORLD_FRAME, actor_frame(a), p, q) for a, p, q in actors]
            transforms += [_transform(t, actor_frame(s.ego), name, T[:3, 3], quat_from_matrix(T[:3, :3]))
                           for name, T in mounts.items()]
            return fg.FrameTransforms(transforms=transforms).encode()

        def boxes(t: int = t, actors: list[Pose] = actors) -> bytes:
            entities = [_box(t, a, p, q, dims, kinds) for a, p, q in actors]
            return fg.SceneUpdate(deletions=[fg.SceneEntityDeletion(timestamp=timestamp_of(t),
                                                                    type=fg.SceneEntityDeletionType.All)],
                                  entities=entities).encode()

        yield Message(t, TF_TOPIC, tf)
        yield Message(t, BOXES_TOPIC, boxes)
    if len(rows):
        t0 = ns(float(rows["t"].min()))
        paths = {str(a): g.sort_values("t")[["x", "y", "z"]].to_numpy() for a, g in rows.groupby("actor_id")}
        yield Message(t0, TRACKS_TOPIC, lambda: fg.SceneUpdate(entities=[
            fg.SceneEntity(timestamp=timestamp_of(t0), frame_id=WORLD_FRAME, id=f"track:{a}",
                           metadata=[fg.KeyValuePair(key="actor", value=a)],
                           lines=[fg.LinePrimitive(type=fg.LinePrimitiveLineType.LineStrip, thickness=0.1,
                                                   points=[fg.Point3(x=float(x), y=float(y), z=float(z))
                                                           for x, y, z in xyz],
                                                   color=_colour(kinds.get(a)))])
            for a, xyz in sorted(paths.items())]).encode())


def _colour(kind: str | None) -> fg.Color:
    r, g, b, a = KIND_COLOURS.get(kind or "", (0.6, 0.6, 0.6, 0.5))
    return fg.Color(r=r, g=g, b=b, a=a)


def _box(t: int, actor: str, position: Any, q: Any, dims: dict[str, list[float]], kinds: dict[str, str]
         ) -> fg.SceneEntity:
    """An actor's box: its size from the trace header, its centre half its height above the body origin."""
    length, width, height = (float(v) for v in dims[actor])
    centre = np.asarray(position, np.float64) + matrix_from_quat(q) @ np.array([0.0, 0.0, height / 2.0])
    kind = kinds.get(actor)
    return fg.SceneEntity(
        timestamp=timestamp_of(t), frame_id=WORLD_FRAME, id=f"box:{actor}",
        metadata=[fg.KeyValuePair(key="actor", value=actor), fg.KeyValuePair(key="kind", value=kind or "")],
        cubes=[fg.CubePrimitive(pose=_pose(centre, q), size=fg.Vector3(x=length, y=width, z=height),
                                color=_colour(kind))],
        texts=[fg.TextPrimitive(pose=_pose(centre + np.array([0.0, 0.0, height / 2.0 + 0.3]), (0, 0, 0, 1)),
                                billboard=True, font_size=14.0, scale_invariant=True,
                                color=fg.Color(r=1.0, g=1.0, b=1.0, a=1.0), text=actor)])


def event_messages(s: ObservedSample) -> Iterator[Message]:
    for event in s.trace.events:
        # A warm-up event (background traffic changes lanes and enters before the clip) has a negative scenario
        # time, which an MCAP log time (unsigned) cannot hold: it is logged at the clip's start, its own ``t``
        # in the message.
        t = max(0, ns(float(event.get("t", 0.0))))
        level = fg.LogLevel.Warning if event.get("type") == "collision" else fg.LogLevel.Info
        text = json.dumps(event, sort_keys=True)

        def log(t: int = t, level: fg.LogLevel = level, text: str = text, name: str = str(event.get("type", ""))
                ) -> bytes:
            return fg.Log(timestamp=timestamp_of(t), level=level, message=text, name=name).encode()

        yield Message(t, EVENTS_TOPIC, log)
