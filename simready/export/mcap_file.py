"""One sample's (or one branch's) observations as an MCAP file with Foxglove schemas (issue 18, SPEC §17).

A reviewer opens the file in Foxglove with nothing else. Messages are protobuf, in Foxglove's well-known
schemas (taken from ``foxglove-sdk``); the file is written by the ``mcap`` package. Every time is the
scenario's (seconds from its start, as in the trace and ``results.json``), as integer nanoseconds, and a
message's log time is its sample time:

=========================  ==========================  =============================================================
topic                      schema                      what
=========================  ==========================  =============================================================
``/<camera>/image``        foxglove.CompressedImage    ``rgb.png`` as written, at the frame's first-row time
``/<camera>/depth``        foxglove.RawImage           ``32FC1`` z-depth in metres (+inf where nothing was hit),
                                                       decoded from the file's ``near_m / z``
``/<camera>/calibration``  foxglove.CameraCalibration  K, P, and ``plumb_bob`` D = [k1, k2, 0, 0, 0] of the RGB
``/<lidar>/points``        foxglove.PointCloud         x y z intensity (float32), instance_id (uint32) and t
                                                       (float64, each point's firing time) at the sweep's start
``/<radar>/detections``    foxglove.PointCloud         x y z (float32) from range, azimuth and elevation, then
                                                       every CSV column (float64; instance_id uint32)
``/<radar>/contributors``  foxglove.PointCloud         per detection, each part whose surfaces returned it: x y z
                                                       (float32, its hits' centroid), detection, instance_id,
                                                       part, hits (uint32), power_share, radial_velocity_mps
                                                       (float64); entity and element names in the Parquet file
``/tf``                    foxglove.FrameTransforms    ``world`` → ``actor:<id>`` of every present actor at every
                                                       trace tick of the window, and the ego → each sensor
``/boxes``                 foxglove.SceneUpdate        each present actor's box (``box:<id>``) at every tick
``/tracks``                foxglove.SceneUpdate        each actor's path over the window (``track:<id>``), once
``/events``                foxglove.Log                every event of the trace (warning: collisions); one of the
                                                       warm-up (t < 0) at time 0, its own ``t`` in the message
=========================  ==========================  =============================================================

Frames: ``world`` is the trace's (x east, y north, z up); an actor's frame is its body's (origin at the
footprint centre on the ground, x forward); a sensor's frame is its measurement frame
(:mod:`simready.sensors_hw.frames`: the camera's optical frame x right, y down, z forward, which is what
Foxglove projects with; LiDAR and radar x forward, y left, z up). LiDAR points are in the LiDAR frame at each
beam's own time, as in the PLY; each point carries its firing time ``t`` (float64 seconds from the scenario
start: the PLY's ``t``, seconds since the sweep's ``sampleTime``, plus that time), and a PLY written without
``t`` gets it from the point's azimuth (:func:`~simready.sensors_hw.lidar.firing_times`). The window is ``render.json``'s, widened to the trace
ticks around it.

The same folder gives the same bytes: channels are registered in topic order, messages are written in
(time, topic, sequence) order, and the library string names this module's version, not a clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, SupportsFloat

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from foxglove import Schema
from foxglove import messages as fg
from mcap.writer import CompressionType, Writer
from numpy.typing import NDArray
from pydantic import ValidationError

from simready.common.errors import SimreadyError, pydantic_reason
from simready.artifacts.layout import ObservationDir, SampleDir
from simready.artifacts.records import FileEntry, Record, Render, Results
from simready.scenario.manifest import load_manifest
from simready.sensors_hw.camera import decode_depth, read_depth_file
from simready.sensors_hw.lidar import firing_times, read_ply
from simready.sensors_hw.models import LidarModel, Rig
from simready.sensors_hw.radar import read_radar_csv
from simready.sim.batch import verify_sha256
from simready.sim.storage.trace import Trace, read_trace
from simready.world.frames import matrix_from_quat, quat_from_matrix

#: Written into the MCAP header: a new version when the same folder would give other bytes.
EXPORT_VERSION = "simready-mcap-1"
WORLD_FRAME = "world"
TF_TOPIC, BOXES_TOPIC, TRACKS_TOPIC, EVENTS_TOPIC = "/tf", "/boxes", "/tracks", "/events"
#: The passes a camera's topics are made of, and the sensor passes LiDAR and radar topics read.
CAMERA_PASSES = ("rgb", "depth")
#: Box colours by actor kind (RGBA, 0–1); other kinds grey.
KIND_COLOURS = {"vehicle": (0.2, 0.5, 1.0, 0.5), "pedestrian": (1.0, 0.4, 0.1, 0.6), "cyclist": (0.9, 0.8, 0.1, 0.6)}
NS = 1_000_000_000


class ExportError(SimreadyError):
    """A sample folder that cannot be exported: a missing or unreadable file, or a file missing a field."""

    kind = "export"


@dataclass(frozen=True)
class McapExport:
    """What an export wrote: the file, its size, messages per topic and the first and last log times (ns)."""

    path: Path
    bytes: int
    messages: dict[str, int]
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class _Message:
    """One message, encoded only when it is written (so a sample's files are never all in memory at once)."""

    log_time_ns: int
    topic: str
    encode: Callable[[], bytes]
    source: Path | None = None


#: An actor at a tick: its id, position and orientation (x y z w) in the world frame.
_Pose = tuple[str, tuple[float, float, float], tuple[float, float, float, float]]


def ns(t_s: float) -> int:
    """Scenario seconds as integer nanoseconds (how MCAP and Foxglove count time)."""
    return int(round(t_s * NS))


def _stamp(t_ns: int) -> fg.Timestamp:
    return fg.Timestamp(t_ns // NS, t_ns % NS)


def _read_record(cls: type[Record], path: Path) -> Any:
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
        results = _read_record(Results, obs.results)
        render = _read_record(Render, obs.render)
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


# --- messages -------------------------------------------------------------------------------------------------


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
    return fg.FrameTransform(timestamp=_stamp(t_ns), parent_frame_id=parent, child_frame_id=child,
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


def _camera_messages(s: ObservedSample, camera: str) -> Iterator[_Message]:
    frames = s.results.cameras[camera]
    p = frames.projection
    w, h = p.width_px, p.height_px
    d = p.distortion
    k1, k2 = (d.k1, d.k2) if "rgb" in d.applies_to else (0.0, 0.0)
    K = [p.fx, 0.0, p.cx, 0.0, p.fy, p.cy, 0.0, 0.0, 1.0]
    P = [p.fx, 0.0, p.cx, 0.0, 0.0, p.fy, p.cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    for frame in frames.frames:
        t = ns(frame.t0_s)
        stamp = _stamp(t)

        def calibration(stamp: fg.Timestamp = stamp) -> bytes:
            return fg.CameraCalibration(
                timestamp=stamp, frame_id=camera, width=w, height=h, distortion_model="plumb_bob",
                D=[k1, k2, 0.0, 0.0, 0.0], K=K, R=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], P=P).encode()

        yield _Message(t, f"/{camera}/calibration", calibration)
        rgb = s.entry(camera, frame.tick, "rgb")
        if rgb is not None:
            def image(stamp: fg.Timestamp = stamp, rgb: FileEntry = rgb) -> bytes:
                return fg.CompressedImage(timestamp=stamp, frame_id=camera, data=s.verified(rgb).read_bytes(),
                                          format="png").encode()

            yield _Message(t, f"/{camera}/image", image, s.obs.file(rgb.path))
        depth = s.entry(camera, frame.tick, "depth")
        if depth is not None:
            def depth_image(stamp: fg.Timestamp = stamp, depth: FileEntry = depth,
                            near_m: float = frame.projection.near_m) -> bytes:
                return fg.RawImage(timestamp=stamp, frame_id=camera, width=w, height=h, encoding="32FC1", step=4 * w,
                                   data=depth_metres(s.verified(depth), near_m)).encode()

            yield _Message(t, f"/{camera}/depth", depth_image, s.obs.file(depth.path))


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


def _lidar_messages(s: ObservedSample, lidar: str) -> Iterator[_Message]:
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
            return fg.PointCloud(timestamp=_stamp(t), frame_id=lidar, pose=_pose((0, 0, 0), (0, 0, 0, 1)),
                                 point_stride=stride, fields=fields, data=data).encode()

        yield _Message(t, f"/{lidar}/points", encode, s.obs.file(ply.path))


def radar_columns(csv: Path) -> dict[str, NDArray[Any]]:
    """A radar frame's CSV as its point cloud carries it: x y z in the radar frame, then every column."""
    cols = read_radar_csv(csv)
    r, az, el = cols["range_m"], cols["azimuth_rad"], cols["elevation_rad"]
    xyz = {"x": r * np.cos(el) * np.cos(az), "y": r * np.cos(el) * np.sin(az), "z": r * np.sin(el)}
    return {**xyz, **cols}


def _radar_messages(s: ObservedSample, radar: str) -> Iterator[_Message]:
    for frame in s.results.sweeps.get(radar, []):
        csv = s.entry(radar, frame.tick, "radar")
        if csv is None:
            continue
        t = ns(frame.t_s)  # type: ignore[union-attr]

        def encode(csv: FileEntry = csv, t: int = t) -> bytes:
            cols = radar_columns(s.verified(csv))
            types = {k: "<f4" if k in ("x", "y", "z") else "<u4" if k == "instance_id" else "<f8" for k in cols}
            data, stride, fields = _packed(cols, types)
            return fg.PointCloud(timestamp=_stamp(t), frame_id=radar, pose=_pose((0, 0, 0), (0, 0, 0, 1)),
                                 point_stride=stride, fields=fields, data=data).encode()

        yield _Message(t, f"/{radar}/detections", encode, s.obs.file(csv.path))


CONTRIBUTOR_FIELDS = {"x": "<f4", "y": "<f4", "z": "<f4", "detection": "<u4", "instance_id": "<u4", "part": "<u4",
                      "hits": "<u4", "power_share": "<f8", "radial_velocity_mps": "<f8"}


def contributor_columns(parquet: Path) -> dict[str, NDArray[Any]]:
    """A radar frame's contributor table as its point cloud carries it (:data:`CONTRIBUTOR_FIELDS`)."""
    table = pq.read_table(parquet, columns=list(CONTRIBUTOR_FIELDS))
    return {k: table.column(k).to_numpy() for k in CONTRIBUTOR_FIELDS}


def _contributor_messages(s: ObservedSample, radar: str) -> Iterator[_Message]:
    for frame in s.results.sweeps.get(radar, []):
        entry = s.entry(radar, frame.tick, "radar.contributors")
        if entry is None:
            continue
        t = ns(frame.t_s)  # type: ignore[union-attr]

        def encode(entry: FileEntry = entry, t: int = t) -> bytes:
            data, stride, fields = _packed(contributor_columns(s.verified(entry)), CONTRIBUTOR_FIELDS)
            return fg.PointCloud(timestamp=_stamp(t), frame_id=radar, pose=_pose((0, 0, 0), (0, 0, 0, 1)),
                                 point_stride=stride, fields=fields, data=data).encode()

        yield _Message(t, f"/{radar}/contributors", encode, s.obs.file(entry.path))


def _tick_groups(rows: pd.DataFrame) -> Iterator[tuple[float, pd.DataFrame]]:
    for t, group in rows.groupby("t", sort=True):
        yield float(t), group.sort_values("actor_id", kind="stable")


def _world_messages(s: ObservedSample) -> Iterator[_Message]:
    """Frame transforms and boxes at every trace tick of the window, each actor's track once."""
    rows = s.window_ticks()
    dims: dict[str, list[float]] = s.trace.header["actor_dims"]
    kinds: dict[str, str] = s.trace.header.get("actor_kinds", {})
    mounts = {name: s.rig.T_body_sensor(name) for name in s.rig.sensors}
    for t_s, group in _tick_groups(rows):
        t = ns(t_s)
        actors = [(str(r.actor_id), (r.x, r.y, r.z), (r.qx, r.qy, r.qz, r.qw)) for r in group.itertuples()]

        def tf(t: int = t, actors: list[_Pose] = actors) -> bytes:
            transforms = [_transform(t, WORLD_FRAME, actor_frame(a), p, q) for a, p, q in actors]
            transforms += [_transform(t, actor_frame(s.ego), name, T[:3, 3], quat_from_matrix(T[:3, :3]))
                           for name, T in mounts.items()]
            return fg.FrameTransforms(transforms=transforms).encode()

        def boxes(t: int = t, actors: list[_Pose] = actors) -> bytes:
            entities = [_box(t, a, p, q, dims, kinds) for a, p, q in actors]
            return fg.SceneUpdate(deletions=[fg.SceneEntityDeletion(timestamp=_stamp(t),
                                                                    type=fg.SceneEntityDeletionType.All)],
                                  entities=entities).encode()

        yield _Message(t, TF_TOPIC, tf)
        yield _Message(t, BOXES_TOPIC, boxes)
    if len(rows):
        t0 = ns(float(rows["t"].min()))
        paths = {str(a): g.sort_values("t")[["x", "y", "z"]].to_numpy() for a, g in rows.groupby("actor_id")}
        yield _Message(t0, TRACKS_TOPIC, lambda: fg.SceneUpdate(entities=[
            fg.SceneEntity(timestamp=_stamp(t0), frame_id=WORLD_FRAME, id=f"track:{a}",
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
        timestamp=_stamp(t), frame_id=WORLD_FRAME, id=f"box:{actor}",
        metadata=[fg.KeyValuePair(key="actor", value=actor), fg.KeyValuePair(key="kind", value=kind or "")],
        cubes=[fg.CubePrimitive(pose=_pose(centre, q), size=fg.Vector3(x=length, y=width, z=height),
                                color=_colour(kind))],
        texts=[fg.TextPrimitive(pose=_pose(centre + np.array([0.0, 0.0, height / 2.0 + 0.3]), (0, 0, 0, 1)),
                                billboard=True, font_size=14.0, scale_invariant=True,
                                color=fg.Color(r=1.0, g=1.0, b=1.0, a=1.0), text=actor)])


def _event_messages(s: ObservedSample) -> Iterator[_Message]:
    for event in s.trace.events:
        # A warm-up event (background traffic changes lanes and enters before the clip) has a negative scenario
        # time, which an MCAP log time (unsigned) cannot hold: it is logged at the clip's start, its own ``t``
        # in the message.
        t = max(0, ns(float(event.get("t", 0.0))))
        level = fg.LogLevel.Warning if event.get("type") == "collision" else fg.LogLevel.Info
        text = json.dumps(event, sort_keys=True)

        def log(t: int = t, level: fg.LogLevel = level, text: str = text, name: str = str(event.get("type", ""))
                ) -> bytes:
            return fg.Log(timestamp=_stamp(t), level=level, message=text, name=name).encode()

        yield _Message(t, EVENTS_TOPIC, log)


# --- the file -------------------------------------------------------------------------------------------------


class _MessageClass(Protocol):
    """A Foxglove message class: its schema is what a channel registers."""

    @staticmethod
    def get_schema() -> Schema: ...


def _schemas(s: ObservedSample) -> dict[str, type[_MessageClass]]:
    """Every topic of the export and its message class."""
    topics: dict[str, type[_MessageClass]] = {TF_TOPIC: fg.FrameTransforms, BOXES_TOPIC: fg.SceneUpdate,
                               TRACKS_TOPIC: fg.SceneUpdate, EVENTS_TOPIC: fg.Log}
    for camera in s.results.cameras:
        topics |= {f"/{camera}/calibration": fg.CameraCalibration, f"/{camera}/image": fg.CompressedImage,
                   f"/{camera}/depth": fg.RawImage}
    for sensor, summary in s.results.sensors.items():
        if summary.type == "lidar":
            topics[f"/{sensor}/points"] = fg.PointCloud
        elif summary.type == "radar":
            topics[f"/{sensor}/detections"] = fg.PointCloud
            if any(f.pass_name == "radar.contributors" and f.sensor == sensor for f in s.results.files):
                topics[f"/{sensor}/contributors"] = fg.PointCloud
    return topics


def _messages(s: ObservedSample) -> list[_Message]:
    out: list[_Message] = [*_world_messages(s), *_event_messages(s)]
    for camera in s.results.cameras:
        out += _camera_messages(s, camera)
    for sensor, summary in s.results.sensors.items():
        if summary.type == "lidar":
            out += _lidar_messages(s, sensor)
        elif summary.type == "radar":
            out += _radar_messages(s, sensor)
            out += _contributor_messages(s, sensor)
    return out


def export_mcap(sample_dir: str | Path, out_file: str | Path, *, branch: str | None = None) -> McapExport:
    """Write ``out_file`` (which must not exist: the CLI passes :func:`simready.common.outdir.output_file`'s staged
    path) from the sample folder ``sample_dir``, or from its branch ``branch``'s observations."""
    s = ObservedSample.open(sample_dir, branch)
    topics = _schemas(s)
    messages = sorted(_messages(s), key=lambda m: (m.log_time_ns, m.topic))
    counts = dict.fromkeys(sorted(topics), 0)
    out = Path(out_file)
    with out.open("xb") as f:
        writer = Writer(f, compression=CompressionType.ZSTD)
        writer.start(profile="", library=EXPORT_VERSION)
        schema_ids: dict[str, int] = {}
        channels: dict[str, int] = {}
        for topic in sorted(topics):
            schema = topics[topic].get_schema()
            if schema.name not in schema_ids:
                schema_ids[schema.name] = writer.register_schema(schema.name, schema.encoding, schema.data)
            channels[topic] = writer.register_channel(topic, "protobuf", schema_ids[schema.name])
        writer.add_metadata("simready", {"sample_id": s.render.sample_id, "template_id": s.render.template_id,
                                         "branch": branch or "", "observe_version": s.render.version,
                                         "results_version": s.results.version, "export_version": EXPORT_VERSION,
                                         "time": "scenario seconds from its start, as nanoseconds"})
        for m in messages:
            try:
                data = m.encode()
            except (OSError, ValueError) as exc:
                raise ExportError(m.source or s.obs.root, "", f"unreadable: {exc}") from None
            writer.add_message(channels[m.topic], log_time=m.log_time_ns, data=data,
                               publish_time=m.log_time_ns, sequence=counts[m.topic])
            counts[m.topic] += 1
        writer.finish()
    start = messages[0].log_time_ns if messages else 0
    end = messages[-1].log_time_ns if messages else 0
    return McapExport(out, out.stat().st_size, counts, start, end)

