"""The observation layout of one sample and branch (SPEC §10), with its perception truth (SPEC §11).

:func:`observe` runs every sensor of a rig over a clip against one world
(:class:`~simready.sensors_hw.scene_build.BuiltScene`) and writes::

    render.json            rig settings as rendered (overrides applied), passes, timings, warnings, version
    results.json           every file (sensor, tick, pass, path, bytes, sha256); per camera its projection and
                           each frame's sample times; per LiDAR sweep / radar frame its times and counts
    observed-frames.jsonl  one line per sensor sample: time, every actor's position, rotation [x,y,z,w], visibility
    legend.json            compact id -> entity, class, family
    parity.json            observed poses vs the trace (max position and angle error)
    <cam>/<tick:08d>.rgb.png | .depth.f32.bin | .semantic.png | .id.png
    <lidar>/<tick:08d>.ply     (ASCII by default; binary little-endian with lidar_format="binary")
    <radar>/<tick:08d>.csv
    truth/<cam>/<tick:08d>.surface.parquet   surface identity per visible sample
    truth/<cam>/<tick:08d>.motion.parquet    instantaneous motion field (px/s) from twists
    truth/<cam>/<tick:08d>.forward.parquet   correspondence tick -> next frame (flow, displacement, valid, occluded)
    truth/<cam>/<tick:08d>.backward.parquet  correspondence tick -> previous frame (..., disoccluded)
    truth/<cam>/tracks.parquet, track-events.parquet
    video/<sensor>.mp4         review video; LiDAR and radar drawn top-down, sensor forward up, its right on the right
    review/contact_sheet.png   a few camera frames, rgb | depth | id | semantic per row (simready.sensors_hw.review)
    review/lidar_topdown.png   one LiDAR sweep top-down, forward up, the sensor's right on the right
    job/render-job.json        exact inputs: provenance, rig, seeds, schedules, pairing tables, camera poses per frame
    job/<cam>.poses.npz        every row's camera pose of every frame (rolling shutter)

File formats: ``depth.f32.bin`` is raw little-endian float32, H×W row-major,
z-depth in metres, +inf where nothing is seen; ``id.png`` is 24-bit RGB
compact ids (R = bits 16–23); ``semantic.png`` is 16-bit grayscale class
ids (0 nothing, 65535 unknown). Truth tables are Parquet (zstd), one row
per visible sample, ``pixel`` = v·W + u (:func:`simready.truth.flow.dense`).

Writing streams: each sample is rendered, written and dropped before the
next (only the previous camera frame's samples are kept, for the
correspondence), so memory does not grow with the clip. Everything is
written into a temporary sibling folder that replaces the output folder
only when complete; the output folder must be new or empty, and every bad
input is refused before anything is written.

Randomness: each sample's noise comes from its own generator, seeded from
the manifest's ``sensor/<name>`` stream and the sample's tick
(``SeedSequence(seed, spawn_key=(tick,))``), so one frame re-renders alike
whatever else is rendered.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import resource
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import imageio.v2 as imageio
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray
from PIL import Image

from simready import paths
from simready.atomic import atomic_directory, write_json_atomic
from simready.catalog.catalog import ensure_catalog
from simready.errors import OutputExistsError, SimreadyError
from simready.hashing import file_sha256
from simready.scenario.manifest import load_manifest, manifest_hash
from simready.scenario.streams import StreamSet
from simready.sensors_hw.atmosphere import Atmosphere, apply_atmosphere_overrides, split_overrides
from simready.sensors_hw.camera import PASSES as CAMERA_PASSES
from simready.sensors_hw.camera import FramePasses, Intrinsics, Lighting, encode_id_rgb, render_frame
from simready.sensors_hw.lidar import LidarScan, scan, write_ply_ascii, write_ply_binary
from simready.sensors_hw.models import CameraModel, LidarModel, RadarModel, Rig, apply_overrides, parse_set_args
from simready.sensors_hw.radar import RadarDetections, detect, write_radar_csv
from simready.sensors_hw.review import (TOPDOWN_PX, TOPDOWN_RANGE_M, lidar_topdown, palette, png_bytes,
                                        topdown_canvas, write_review_images)
from simready.sensors_hw.scene_build import (BuiltScene, build_scene, ego_track, load_rig_data, rig_from_sensor_rig,
                                             template_rig_data)
from simready.sensors_hw.schedule import POLICIES, pairing_table, rig_schedules
from simready.sensors_hw.trace_input import TraceInput, read_trace_input
from simready.truth.correspondence import FrameView, Samples, correspond
from simready.truth.flow import flow_table
from simready.truth.motion_field import motion_field
from simready.truth.tracks import TrackBuilder
from simready.world.frames import quat_angle_between
from simready.world.identity import write_legend
from simready.world.ontology import load_ontology
from simready.world.template import load_template, template_hash

OBSERVE_VERSION = "simready-observe-1"
#: Pass names ``--passes`` accepts: the camera passes, one per other sensor type, and the SPEC §11 truth.
PASSES: tuple[str, ...] = ("rgb", "depth", "id", "semantic", "lidar", "radar", "truth")
#: PNG zlib level: 1 is several times faster than the default and the id/semantic images stay small.
PNG_COMPRESS_LEVEL = 1
#: Parquet codec for truth tables (zstd level 1: fast, and far smaller than raw).
TRUTH_COMPRESSION = ("zstd", 1)
#: Parity: observed poses must match the trace this closely.
PARITY_TOL_M = 1e-6
PARITY_TOL_RAD = 1e-6


class PassError(SimreadyError):
    kind = "passes"


class ObservationError(SimreadyError):
    kind = "observe"


def parse_passes(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"rgb,depth"`` or ``["rgb", "depth"]`` → passes in canonical order; None = every pass."""
    if spec is None:
        return PASSES
    names = [p.strip() for p in (spec.split(",") if isinstance(spec, str) else spec)]
    names = [p for p in names if p]
    unknown = sorted(set(names) - set(PASSES))
    if unknown:
        raise PassError("--passes", ",".join(unknown), f"unknown pass name(s); expected some of {','.join(PASSES)}")
    if not names:
        raise PassError("--passes", "", f"no pass selected; expected some of {','.join(PASSES)}")
    return tuple(p for p in PASSES if p in names)


def check_output_dir(out_dir: str | Path) -> Path:
    """The output folder must be new or empty (SPEC §10)."""
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OutputExistsError(out, "", "output folder exists and is not empty; choose a new or empty folder")
    return out


class Progress(Protocol):
    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


@dataclass(frozen=True)
class ObserveOptions:
    """How to observe (all recorded in ``render.json``).

    Attributes:
        passes: subset of :data:`PASSES`.
        lidar_format: ``ascii`` (SPEC §10) or ``binary`` (little-endian, same columns).
        lidar_time_column: add each point's firing time ``t`` to the PLY.
        video: write ``video/<sensor>.mp4``.
        pairing_policy: camera-centred pairing (:data:`simready.sensors_hw.schedule.POLICIES`).
        from_s: observe only samples whose window starts at or after then, seconds of scenario time
            (None: from the clip start). Ticks keep each sensor's own numbering (tick k still starts at
            ``phase + k/rate``), so a windowed observation's files are named as the full clip's are.
        until_s: observe only samples whose window ends by then (None: the whole clip); with
            ``from_s`` the observed window is [from_s, until_s].
        writer_thread: encode PNG and Parquet on a background thread. Measured on the 200-frame
            1280×720 3-sensor bench sample (2 shared cores): 287 s instead of 407 s, peak resident
            memory 1376 MiB instead of 1209 MiB (the budget is 2 GB).
        truth_thread: compute each frame pair's backward correspondence on a second thread while the
            forward one runs (same results bit for bit; two projections are held at once instead of one).
    """

    passes: tuple[str, ...] = PASSES
    lidar_format: str = "ascii"
    lidar_time_column: bool = False
    video: bool = True
    pairing_policy: str = "nearest_start"
    from_s: float | None = None
    until_s: float | None = None
    writer_thread: bool = True
    truth_thread: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "passes", parse_passes(self.passes))
        if self.lidar_format not in ("ascii", "binary"):
            raise ObservationError("options", "lidar_format", f"must be ascii or binary, got {self.lidar_format!r}")
        if self.pairing_policy not in POLICIES:
            raise ObservationError("options", "pairing_policy", f"must be one of {POLICIES}")
        for name in ("from_s", "until_s"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0.0):
                raise ObservationError("options", name, f"must be a finite time >= 0 s, got {value!r}")
        if self.from_s is not None and self.until_s is not None and self.from_s > self.until_s:
            raise ObservationError("options", "from_s", f"{self.from_s} s is after until_s {self.until_s} s")

    @property
    def camera_passes(self) -> tuple[str, ...]:
        return tuple(p for p in CAMERA_PASSES if p in self.passes)


@dataclass
class ObserveResult:
    """What :func:`observe` wrote: the folder, counts, and the ``render.json`` summary."""

    out_dir: Path
    files: int
    frames: dict[str, int]
    timings_s: dict[str, float]
    peak_rss_mb: float
    render: dict[str, Any]


def sensor_seeds(sample_id: str, streams: Mapping[str, int] | None, sensors: Iterable[str]) -> dict[str, int]:
    """One seed per sensor under the sample's ``sensor`` stream (a redrawn stream seed is honoured)."""
    base = StreamSet.from_seeds(sample_id, dict(streams or {})).seed("sensor")
    return {n: int(np.random.SeedSequence(base, spawn_key=(zlib.crc32(n.encode()),)).generate_state(1, np.uint64)[0]
                   >> np.uint64(1)) for n in sensors}


def sensor_rng(seed: int, tick: int) -> np.random.Generator:
    """The generator of one sample of one sensor: its stream seed and its own tick."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(int(tick),))))


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, MiB.

    Linux's ``VmHWM`` where there is one: ``ru_maxrss`` of a forked-then-exec'd child starts at its
    parent's high-water mark, so it over-reports a child's own peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


# --- file registry -------------------------------------------------------------------


class _Folder:
    """The folder being written: every file goes through here, so results.json lists each exactly once.

    With ``writer_thread``, ``put_later`` / ``write_later`` encode and write
    on one background thread (Parquet and zlib release the GIL, so encoding
    overlaps the next frame's casting) with at most ``MAX_PENDING`` files
    waiting; without, they write at once. ``drain`` waits for them and
    re-raises the first failure.
    """

    MAX_PENDING = 2

    def __init__(self, root: Path, writer_thread: bool) -> None:
        self.root = root
        self.entries: list[dict[str, Any]] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="observe-writer") if writer_thread else None
        self._pending: deque[Future[None]] = deque()

    def _register(self, rel: str, sensor: str | None, tick: int | None, pass_name: str, size: int, digest: str,
                  **extra: Any) -> None:
        self.entries.append({"path": rel, "sensor": sensor, "tick": tick, "pass": pass_name, "bytes": size,
                             "sha256": digest, **extra})

    def put(self, rel: str, data: bytes, sensor: str | None, tick: int | None, pass_name: str, **extra: Any) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self._register(rel, sensor, tick, pass_name, len(data), "sha256:" + hashlib.sha256(data).hexdigest(), **extra)

    def put_later(self, rel: str, encode: Callable[[], bytes], sensor: str | None, tick: int | None, pass_name: str,
                  **extra: Any) -> None:
        """Like :meth:`put`, with the bytes made by ``encode()`` on the writer thread (at once when
        ``MAX_PENDING`` is 0)."""
        self._later(lambda: self.put(rel, encode(), sensor, tick, pass_name, **extra))

    def write_later(self, rel: str, write: Callable[[Path], Any], sensor: str | None, tick: int | None,
                    pass_name: str, **extra: Any) -> None:
        """``write(path)`` on the writer thread (a writer that streams to the file holds no copy of it)."""
        def job() -> None:
            write(self.path(rel))
            self.add_written(rel, sensor, tick, pass_name, **extra)

        self._later(job)

    def _later(self, job: Callable[[], None]) -> None:
        if self._pool is None:
            job()
            return
        while len(self._pending) >= self.MAX_PENDING:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(job))

    def drain(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def close(self) -> None:
        """Stop the writer (after :meth:`drain`, or on failure: queued work is dropped)."""
        for f in self._pending:
            f.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def add_written(self, rel: str, sensor: str | None, tick: int | None, pass_name: str, **extra: Any) -> None:
        """Register a file a writer of its own put at ``rel``."""
        path = self.root / rel
        self._register(rel, sensor, tick, pass_name, path.stat().st_size, file_sha256(str(path)), **extra)

    def path(self, rel: str) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        return p


def _png(image: NDArray) -> bytes:
    return png_bytes(image, PNG_COMPRESS_LEVEL)


def _png16(image: NDArray[np.uint16]) -> bytes:
    buf = io.BytesIO()
    # A little-endian uint16 array becomes mode "I;16" by itself; PNG stores it as 16-bit grey.
    Image.fromarray(np.ascontiguousarray(image, "<u2")).save(buf, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buf.getvalue()


def write_parquet(where: Any, table: pa.Table, metadata: Mapping[str, Any] | None = None) -> None:
    """A truth table as Parquet: zstd, floats byte-stream-split and integers delta-coded (pixel-ordered
    samples make both compress several times better than plain), strings as dictionaries."""
    if metadata:
        table = table.replace_schema_metadata({b"simready.truth": json.dumps(metadata, sort_keys=True).encode()})
    encoding, dictionary = {}, []
    for f in table.schema:
        if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type):
            dictionary.append(f.name)
        elif pa.types.is_floating(f.type):
            encoding[f.name] = "BYTE_STREAM_SPLIT"
        elif pa.types.is_integer(f.type):
            encoding[f.name] = "DELTA_BINARY_PACKED"
    pq.write_table(table, where, compression=TRUTH_COMPRESSION[0], compression_level=TRUTH_COMPRESSION[1],
                   use_dictionary=dictionary or False, column_encoding=encoding or None)


def parquet_bytes(table: pa.Table, metadata: Mapping[str, Any] | None = None) -> bytes:
    """:func:`write_parquet` into memory."""
    sink = pa.BufferOutputStream()
    write_parquet(sink, table, metadata)
    return sink.getvalue().to_pybytes()


# --- review videos ----------------------------------------------------------------------


def _pad16(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Pad to multiples of 16 (H.264 macroblocks) with black, so ffmpeg never rescales."""
    h, w = image.shape[:2]
    ph, pw = -h % 16, -w % 16
    if ph == 0 and pw == 0:
        return image
    return np.pad(image, ((0, ph), (0, pw), (0, 0)))


class _Video:
    """One sensor's review video, written frame by frame."""

    def __init__(self, path: Path, fps: float) -> None:
        self.path, self.fps, self.writer, self.frames = path, fps, None, 0

    def add(self, image: NDArray[np.uint8]) -> None:
        if self.writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = imageio.get_writer(self.path, fps=self.fps, codec="libx264", macro_block_size=1,
                                             pixelformat="yuv420p", ffmpeg_log_level="error", quality=7)
        self.writer.append_data(_pad16(image))
        self.frames += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def radar_topdown(det: RadarDetections, model: RadarModel) -> NDArray[np.uint8]:
    """Top-down review image of a radar frame: field-of-view edges, detections coloured by radial velocity
    (red approaching, blue receding), forward up, the sensor's right on the right."""
    rng = min(model.max_range_m, TOPDOWN_RANGE_M)
    img, to_px = topdown_canvas(rng)
    r = np.linspace(0.0, rng, 400)
    for az in (-0.5, 0.5):
        a = math.radians(model.hfov_deg) * az
        rr, cc = to_px(r * math.cos(a), r * math.sin(a))
        ok = (rr >= 0) & (rr < TOPDOWN_PX) & (cc >= 0) & (cc < TOPDOWN_PX)
        img[rr[ok], cc[ok]] = (90, 90, 0)
    x = det.range_m * np.cos(det.elevation_rad) * np.cos(det.azimuth_rad)
    y = det.range_m * np.cos(det.elevation_rad) * np.sin(det.azimuth_rad)
    rr, cc = to_px(x, y)
    s = np.clip(det.radial_velocity_mps / 10.0, -1.0, 1.0)
    colour = np.stack([np.where(s < 0, 255, 255 * (1 - s)), 255 * (1 - np.abs(s)),
                       np.where(s > 0, 255, 255 * (1 + s))], axis=1).astype(np.uint8)
    for dr in range(-2, 3):
        for dc in range(-2, 3):
            ok = (rr + dr >= 0) & (rr + dr < TOPDOWN_PX) & (cc + dc >= 0) & (cc + dc < TOPDOWN_PX)
            img[rr[ok] + dr, cc[ok] + dc] = colour[ok]
    return img


def camera_review(frame: FramePasses) -> NDArray[np.uint8]:
    """The camera's review frame: RGB when rendered, else depth (near bright), else semantic, else the
    primary hits' entity colours (what the id pass would show)."""
    if frame.rgb is not None:
        return frame.rgb
    if frame.depth is not None:
        d = np.where(np.isfinite(frame.depth), frame.depth, np.inf)
        g = (255.0 * np.clip(1.0 - np.log1p(d) / np.log1p(200.0), 0.0, 1.0)).astype(np.uint8)
        return np.repeat(g[..., None], 3, axis=2)
    if frame.semantic is not None:
        return palette(frame.semantic)
    ids = frame.id if frame.id is not None else frame.hits.compact_id.reshape(frame.sample_times_s.shape[0], -1)
    return palette(ids)


# --- the run ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sample:
    t_s: float
    order: int
    sensor: str
    tick: int


def _samples(rig: Rig, schedules: Mapping[str, Any], t_lo: float, t_hi: float,
             sensors: Iterable[str]) -> list[_Sample]:
    """Every sample of the observed sensors whose window lies in [t_lo, t_hi], in time order."""
    order = {"camera": 0, "lidar": 1, "radar": 2}
    out = []
    for name in sensors:
        sch = schedules[name]
        for k, t in zip(sch.ticks.tolist(), sch.times_s.tolist()):
            if t >= t_lo - 1e-12 and t + sch.duration_s <= t_hi + 1e-12:
                out.append(_Sample(t, order[rig.mounts[name].type.value], name, k))
    return sorted(out, key=lambda s: (s.t_s, s.order, s.sensor, s.tick))


def _pose_json(T: NDArray[np.float64]) -> list[list[float]]:
    return [[float(x) for x in row] for row in T]


def parity(built: BuiltScene, trace: TraceInput, t_lo: float, t_hi: float) -> dict[str, Any]:
    """Observed poses (the geometric authority's tracks at the trace's ticks) vs the trace's rows."""
    df = trace.ticks
    per_actor: dict[str, Any] = {}
    worst_m, worst_rad = 0.0, 0.0
    for actor, entity in sorted(built.actor_entities.items()):
        rows = df[(df["actor_id"] == actor) & df["present"].astype(bool) & (df["t"] >= t_lo) & (df["t"] <= t_hi)]
        if len(rows) == 0:
            continue
        t = rows["t"].to_numpy(np.float64)
        smp = built.track(entity).sample(t, clamp=True)
        pos_err = float(np.max(np.linalg.norm(smp.position_m - rows[["x", "y", "z"]].to_numpy(np.float64), axis=1)))
        quats = rows[["qx", "qy", "qz", "qw"]].to_numpy(np.float64)
        ang_err = max(quat_angle_between(a, b) for a, b in zip(smp.quat_xyzw, quats))
        per_actor[entity] = {"ticks": int(len(rows)), "max_position_error_m": pos_err, "max_angle_error_rad": ang_err}
        worst_m, worst_rad = max(worst_m, pos_err), max(worst_rad, ang_err)
    return {"compared": "geometry-authority pose at every trace tick in the observed window vs the trace row",
            "window_s": [t_lo, t_hi], "tolerance": {"position_m": PARITY_TOL_M, "angle_rad": PARITY_TOL_RAD},
            "max_position_error_m": worst_m, "max_angle_error_rad": worst_rad,
            "passed": worst_m <= PARITY_TOL_M and worst_rad <= PARITY_TOL_RAD, "actors": per_actor}


@contextmanager
def _system_arrow_pool(enabled: bool) -> Iterator[None]:
    """With the writer thread, Arrow allocations on the system allocator while observing: Arrow's default
    mimalloc pool keeps per-thread heaps, and buffers built on the main thread are encoded and freed on
    the writer; the measured figures (:class:`ObserveOptions`) were taken this way. Buffers keep the pool
    they came from, so switching is safe for other Arrow users."""
    if not enabled:
        yield
        return
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


@contextmanager
def _timed(timings: dict[str, float], key: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0


class _CameraTruth:
    """Per camera: the previous frame's samples (for the correspondence pair) and the track builder."""

    def __init__(self, built: BuiltScene, rig: Rig, camera: str, pool: ThreadPoolExecutor | None = None) -> None:
        self.built, self.rig, self.camera, self.pool = built, rig, camera, pool
        self.prev: tuple[Samples, NDArray[np.float64]] | None = None
        self.tracks = TrackBuilder(built.scene, camera, ignore=built.ignore)

    def frame(self, folder: _Folder, view: FrameView, frame: FramePasses) -> None:
        """Truth products of one frame: surface identity, motion field, both correspondences with the
        previous frame, and the frame's track observations."""
        scene = self.built.scene
        self.tracks.add(view, frame.hits)
        samples = Samples.of_hits(scene, view, frame.hits)
        base = f"truth/{self.camera}/{view.tick:08d}"
        meta = {"camera": self.camera, "tick": view.tick, "t0_s": view.t0_s,
                "line_time_s": 0.0 if view.global_shutter else view.model.line_time_s,
                "width_px": view.intrinsics.width_px, "height_px": view.intrinsics.height_px,
                "pixel": "v * width_px + u", "row_time": "t0_s + v * line_time_s"}
        surface = samples.table(scene)
        folder.write_later(f"{base}.surface.parquet", lambda p: write_parquet(p, surface, meta), self.camera,
                           view.tick, "truth.surface")
        field = motion_field(scene, self.rig, samples)
        motion, dv_dt = field.table(), field.dv_dt_pxps
        del field
        folder.write_later(f"{base}.motion.parquet", lambda p: write_parquet(p, motion, meta), self.camera,
                           view.tick, "truth.motion_field")
        if self.prev is not None:
            (a, a_dv), b = self.prev, samples
            dt = b.view.t0_s - a.view.t0_s
            pairs = ((a, a_dv, b, "forward", 1.0), (b, dv_dt, a, "backward", -1.0))

            def table_of(src: Samples, src_dv: NDArray[np.float64], dst: Samples, direction: str,
                         sign: float) -> pa.Table:
                # Where the motion field says each row goes starts the target-row iteration (speed only).
                return flow_table(correspond(scene, src, dst.view, direction, ignore=self.built.ignore,
                                             row_guess=_predicted_rows(src, src_dv, sign * dt)))

            # The two directions are independent computations: with a pool the backward one runs on its
            # thread while this one does the forward (Embree and most numpy kernels release the GIL);
            # each projection is dropped once tabled.
            later = self.pool.submit(table_of, *pairs[1]) if self.pool is not None else None
            tables = [table_of(*pairs[0]), later.result() if later is not None else table_of(*pairs[1])]
            for (src, _, dst, direction, _), table in zip(pairs, tables):
                m = {**meta, "tick": src.view.tick, "t0_s": src.view.t0_s, "target_tick": dst.view.tick,
                     "target_t0_s": dst.view.t0_s, "direction": direction}
                folder.write_later(f"truth/{self.camera}/{src.view.tick:08d}.{direction}.parquet",
                                   lambda p, table=table, m=m: write_parquet(p, table, m), self.camera,
                                   src.view.tick, f"truth.{direction}", target_tick=dst.view.tick)
        self.prev = (samples, dv_dt)

    def finish(self, folder: _Folder) -> None:
        meta = {"camera": self.camera, "track_id": "<entity id>#<life>"}
        folder.put(f"truth/{self.camera}/tracks.parquet", parquet_bytes(self.tracks.tracks_table(), meta), self.camera,
                   None, "truth.tracks")
        folder.put(f"truth/{self.camera}/track-events.parquet", parquet_bytes(self.tracks.events_table(), meta),
                   self.camera, None, "truth.track_events")


def _predicted_rows(samples: Samples, dv_dt_pxps: NDArray[np.float64], dt_s: float) -> NDArray[np.int64]:
    guess = samples.v + np.nan_to_num(dv_dt_pxps * dt_s, posinf=0.0, neginf=0.0)
    return np.rint(guess).astype(np.int64)


@dataclass
class _Run:
    """One observation run: the sensors' steps and what they accumulate for the summary files."""

    built: BuiltScene
    rig: Rig
    options: ObserveOptions
    folder: _Folder
    seeds: dict[str, int]
    lighting: Lighting
    cameras: list[str]
    videos: dict[str, _Video]
    atmosphere: Atmosphere = field(default_factory=Atmosphere)
    timings: dict[str, float] = field(default_factory=dict)
    truth: dict[str, _CameraTruth] = field(default_factory=dict)
    cam_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cam_poses: dict[str, list[NDArray]] = field(default_factory=dict)
    sweep_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    truth_pool: ThreadPoolExecutor | None = None

    def close(self) -> None:
        """Stop the truth thread (idle by then: every submitted job was waited for)."""
        if self.truth_pool is not None:
            self.truth_pool.shutdown(wait=True)
            self.truth_pool = None

    def __post_init__(self) -> None:
        if "truth" in self.options.passes:
            if self.options.truth_thread:
                self.truth_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="observe-truth")
            self.truth = {n: _CameraTruth(self.built, self.rig, n, self.truth_pool) for n in self.cameras}
        self.cam_records = {n: [] for n in self.cameras}
        self.cam_poses = {n: [] for n in self.cameras}

    def timed(self, sensor: str, stage: str) -> Any:
        return _timed(self.timings, f"{sensor}.{stage}")

    def _review(self, sensor: str, make: Callable[[], NDArray[np.uint8]]) -> None:
        if sensor in self.videos:
            with self.timed(sensor, "video"):
                self.videos[sensor].add(make())

    def sample(self, s: _Sample) -> NDArray[np.intp]:
        """Observe one sample; returns the bodies it saw (for observed-frames.jsonl)."""
        model = self.rig.sensors[s.sensor]
        if isinstance(model, CameraModel):
            return self._camera(s, model)
        if isinstance(model, LidarModel):
            return self._lidar(s, model)
        return self._radar(s, model)

    def _camera(self, s: _Sample, model: CameraModel) -> NDArray[np.intp]:
        scene = self.built.scene
        with self.timed(s.sensor, "render"):
            frame = render_frame(scene, self.rig, s.sensor, s.t_s, self.options.camera_passes,
                                 lighting=self.lighting, ignore=self.built.ignore)
        with self.timed(s.sensor, "write"):
            _write_camera(self.folder, s.sensor, s.tick, frame)
        view = FrameView.of_frame(frame, model, s.tick)
        if s.sensor in self.truth:
            with self.timed(s.sensor, "truth"):
                self.truth[s.sensor].frame(self.folder, view, frame)
        self.cam_records[s.sensor].append(_camera_record(view))
        self.cam_poses[s.sensor].append(frame.T_world_camera)
        self._review(s.sensor, lambda: camera_review(frame))
        return np.flatnonzero(np.bincount(frame.hits.body_index[frame.hits.hit_index], minlength=len(scene.bodies)))

    def _lidar(self, s: _Sample, model: LidarModel) -> NDArray[np.intp]:
        with self.timed(s.sensor, "scan"):
            sweep = scan(self.built.scene, self.rig, s.sensor, s.t_s, sensor_rng(self.seeds[s.sensor], s.tick),
                         ignore=self.built.ignore, atmosphere=self.atmosphere)
        with self.timed(s.sensor, "write"):
            # The sweep's pose at mid-sweep lets consumers (the validity gate) put points in world coordinates.
            T_mid = self.rig.T_world_sensor(s.sensor, s.t_s + 0.5 * model.sweep_s)
            _write_lidar(self.folder, s.sensor, s.tick, sweep, self.options, t=s.t_s + 0.5 * model.sweep_s,
                         T_world_sensor=np.asarray(T_mid).round(9).tolist())
        self.sweep_records.setdefault(s.sensor, []).append(
            {"tick": s.tick, "t0_s": s.t_s, "sweep_s": model.sweep_s, "points": len(sweep)})
        self._review(s.sensor, lambda: lidar_topdown(sweep.points_sensor, model.max_range_m))
        return np.unique(sweep.hits.body_index[sweep.beam])

    def _radar(self, s: _Sample, model: RadarModel) -> NDArray[np.intp]:
        scene = self.built.scene
        with self.timed(s.sensor, "detect"):
            det = detect(scene, self.rig, s.sensor, s.t_s, sensor_rng(self.seeds[s.sensor], s.tick),
                         ignore=self.built.ignore)
        with self.timed(s.sensor, "write"):
            rel = f"{s.sensor}/{s.tick:08d}.csv"
            write_radar_csv(self.folder.path(rel), det)
            self.folder.add_written(rel, s.sensor, s.tick, "radar", detections=len(det))
        self.sweep_records.setdefault(s.sensor, []).append({"tick": s.tick, "t_s": s.t_s, "detections": len(det)})
        self._review(s.sensor, lambda: radar_topdown(det, model))
        return np.flatnonzero(np.isin(scene.compact_id_of_body, det.instance_id))

    def finish(self) -> None:
        for n, t in self.truth.items():
            with self.timed(n, "truth"):
                t.finish(self.folder)


def observe(built: BuiltScene, rig: Rig, trace: TraceInput, out_dir: str | Path, *,
            options: ObserveOptions = ObserveOptions(), overrides: Mapping[str, Any] | Iterable[str] = (),
            lighting: Lighting | None = None, streams: Mapping[str, int] | None = None,
            provenance: Mapping[str, Any] | None = None, warnings: Iterable[str] = (),
            progress: Callable[[int], Progress] | None = None, atmosphere: Atmosphere | None = None
            ) -> ObserveResult:
    """Observe a built world with a rig and write the SPEC §10 layout into ``out_dir`` (new or empty).

    Args:
        built: the world; rig: the rig (mounted on any body: it is put on the scene's ego here).
        trace: the trace the world was built from (parity, time range).
        overrides: ``--set`` style rig overrides (recorded in render.json); ``atmosphere.<field>`` keys
            set the atmosphere (``atmosphere.rain_rate_mmph=0``: dry).
        lighting: RGB lighting (default: :class:`Lighting` day).
        atmosphere: weather along the LiDAR beams (default: clear air).
        streams: the manifest's recorded stream seeds (``sensor`` seeds the sensors' noise; derived
            from the sample id when absent).
        provenance: inputs for job/render-job.json (trace, manifest, template hashes …).
        warnings: notes of the caller for render.json.
        progress: ``progress(total)`` → an object with ``update(n)`` and ``close()`` (a tqdm bar).
    """
    out = check_output_dir(out_dir)
    rig = rig.on_body(ego_track(built))
    rig, resolved, atmosphere = _resolve_overrides(rig, atmosphere or Atmosphere(), overrides)
    lighting = lighting or Lighting()
    passes = options.passes
    kinds = {n: rig.mounts[n].type.value for n in rig.sensors}
    observed = [n for n in rig.sensors if (kinds[n] == "camera" and (options.camera_passes or "truth" in passes))
                or kinds[n] in passes]
    cameras = [n for n in observed if kinds[n] == "camera"]
    t_lo = max(0.0, trace.t_start_s, options.from_s or 0.0)
    t_hi = min(trace.clip_s, trace.t_end_s) if options.until_s is None else min(options.until_s, trace.t_end_s)
    schedules = rig_schedules(rig, t_hi)
    samples = _samples(rig, schedules, t_lo, t_hi, observed)
    warnings = list(warnings)
    counts = {n: 0 for n in observed}
    actor_bodies = {e: built.scene.body_indices([e])[0] for e in built.actor_entities.values()}
    bar = progress(len(samples)) if progress else None
    started = time.perf_counter()
    with _system_arrow_pool(options.writer_thread), atomic_directory(out) as tmp:
        folder = _Folder(tmp, options.writer_thread)
        videos = {n: _Video(tmp / "video" / f"{n}.mp4", float(rig.sensors[n].rate_hz)) for n in observed} \
            if options.video else {}
        run = _Run(built, rig, options, folder, sensor_seeds(built.sample_id, streams, rig.sensors), lighting,
                   cameras, videos, atmosphere)
        frames_log = open(tmp / "observed-frames.jsonl", "w", encoding="utf-8")
        try:
            for s in samples:
                seen = run.sample(s)
                counts[s.sensor] += 1
                frames_log.write(_frame_line(built, s, actor_bodies, set(seen.tolist())) + "\n")
                if bar is not None:
                    bar.update(1)
            run.finish()
            folder.drain()
        finally:
            run.close()
            folder.close()
            frames_log.close()
            for v in videos.values():
                v.close()
            if bar is not None:
                bar.close()
        for n, v in videos.items():
            if v.frames:
                folder.add_written(f"video/{n}.mp4", n, None, "video", frames=v.frames, fps=v.fps)
        folder.add_written("observed-frames.jsonl", None, None, "observed_frames")
        legend = write_legend(tmp / "legend.json", built.legend(), _ontology_version())
        folder.add_written(legend.relative_to(tmp).as_posix(), None, None, "legend")
        par = parity(built, trace, t_lo, t_hi)
        if not par["passed"]:
            warnings.append(f"parity: observed poses differ from the trace by {par['max_position_error_m']:.3g} m, "
                            f"{par['max_angle_error_rad']:.3g} rad")
        write_json_atomic(tmp / "parity.json", par)
        folder.add_written("parity.json", None, None, "parity")
        _write_job(folder, rig, resolved, options, run.seeds, lighting, schedules, cameras, run.cam_records,
                   run.cam_poses, provenance, atmosphere)
        camera_json = {n: {"projection": _projection(rig.sensors[n]), "frames": run.cam_records[n]} for n in cameras}
        with run.timed("review", "images"):  # from the files just written, as a reviewer would read them
            shown = write_review_images(tmp, {"cameras": camera_json, "sweeps": run.sweep_records,
                                              "files": folder.entries})
            for path in shown.values():
                folder.add_written(path.relative_to(tmp).as_posix(), None, None, "review")
        render = {
            "version": OBSERVE_VERSION,
            "sample_id": built.sample_id,
            "template_id": built.template_id,
            "passes": list(passes),
            "overrides": resolved["overrides"],
            "rig": resolved["sensors"],
            "settings": {"lidar_format": options.lidar_format, "lidar_time_column": options.lidar_time_column,
                         "video": options.video, "pairing_policy": options.pairing_policy,
                         "writer_thread": options.writer_thread, "truth_thread": options.truth_thread,
                         "from_s": options.from_s, "until_s": options.until_s,
                         "png_compress_level": PNG_COMPRESS_LEVEL,
                         "truth_compression": list(TRUTH_COMPRESSION), "window_s": [t_lo, t_hi]},
            "lighting": asdict(lighting),
            "atmosphere": atmosphere.to_json(),
            "sensors_observed": observed,
            "frames": counts,
            "timings_s": {"total": time.perf_counter() - started, **dict(sorted(run.timings.items()))},
            "peak_rss_mb": peak_rss_mb(),
            "warnings": warnings,
        }
        write_json_atomic(tmp / "render.json", render)
        folder.add_written("render.json", None, None, "render")
        results = {
            "version": OBSERVE_VERSION,
            "passes": list(passes),
            "sensors": {n: {"type": kinds[n], "ticks": counts[n], "passes": _sensor_passes(rig, n, passes)}
                        for n in observed},
            "cameras": camera_json,
            "sweeps": run.sweep_records,
            "files": sorted(folder.entries, key=lambda e: e["path"]),
        }
        write_json_atomic(tmp / "results.json", results)
    return ObserveResult(out, len(folder.entries) + 1, counts, render["timings_s"], render["peak_rss_mb"], render)


def _resolve_overrides(rig: Rig, atmosphere: Atmosphere, overrides: Mapping[str, Any] | Iterable[str]
                       ) -> tuple[Rig, dict[str, Any], Atmosphere]:
    """Rig overrides applied to the rig, ``atmosphere.*`` ones to the atmosphere; the resolved settings list
    both (rig first, each in the order given)."""
    rig_over, atmo_over = split_overrides(overrides if isinstance(overrides, Mapping) else parse_set_args(overrides))
    rig, resolved = apply_overrides(rig, rig_over)
    atmosphere, applied = apply_atmosphere_overrides(atmosphere, atmo_over)
    return rig, {**resolved, "overrides": resolved["overrides"] + applied}, atmosphere


def _ontology_version() -> str:
    return load_ontology().ontology_version


def _sensor_passes(rig: Rig, name: str, passes: tuple[str, ...]) -> list[str]:
    kind = rig.mounts[name].type.value
    if kind == "camera":
        truth = ["truth.surface", "truth.motion_field", "truth.forward", "truth.backward"] if "truth" in passes else []
        return [p for p in CAMERA_PASSES if p in passes] + truth
    return [kind]


def _projection(model: CameraModel) -> dict[str, Any]:
    return {**Intrinsics.of(model).to_json(), "distortion": {"model": "brown", "k1": model.distortion_k1,
                                                             "k2": model.distortion_k2, "applies_to": ["rgb"]},
            "shutter": model.shutter, "line_time_s": model.line_time_s, "near_m": model.near_m, "far_m": model.far_m}


def _camera_record(view: FrameView) -> dict[str, Any]:
    """A camera frame in results.json: its sample times (rule + ends) and first/last-row poses."""
    rt = view.row_times_s
    return {"tick": view.tick, "t0_s": view.t0_s,
            "sample_times_s": {"first_row": float(rt[0]), "last_row": float(rt[-1]), "rows": int(len(rt)),
                               "line_time_s": 0.0 if view.global_shutter else view.model.line_time_s,
                               "rule": "row r is sampled at first_row + r * line_time_s"},
            "T_world_camera_first_row": _pose_json(view.T_world_camera[0]),
            "T_world_camera_last_row": _pose_json(view.T_world_camera[-1])}


def _write_camera(folder: _Folder, camera: str, tick: int, frame: FramePasses) -> None:
    base = f"{camera}/{tick:08d}"
    if frame.rgb is not None:
        rgb = frame.rgb
        folder.put_later(f"{base}.rgb.png", lambda: _png(rgb), camera, tick, "rgb")
    if frame.depth is not None:
        h, w = frame.depth.shape
        folder.put(f"{base}.depth.f32.bin", np.ascontiguousarray(frame.depth, "<f4").tobytes(), camera, tick, "depth",
                   shape=[h, w], dtype="float32-le")
    if frame.semantic is not None:
        semantic = frame.semantic
        folder.put_later(f"{base}.semantic.png", lambda: _png16(semantic), camera, tick, "semantic")
    if frame.id is not None:
        ids = frame.id
        folder.put_later(f"{base}.id.png", lambda: _png(encode_id_rgb(ids)), camera, tick, "id")


def _write_lidar(folder: _Folder, lidar: str, tick: int, sweep: LidarScan, options: ObserveOptions,
                 **extra: Any) -> None:
    rel = f"{lidar}/{tick:08d}.ply"
    writer = write_ply_ascii if options.lidar_format == "ascii" else write_ply_binary
    writer(folder.path(rel), sweep, with_time=options.lidar_time_column)
    folder.add_written(rel, lidar, tick, "lidar", points=len(sweep), **extra)


def _frame_line(built: BuiltScene, s: _Sample, actor_bodies: Mapping[str, int], seen: set[int]) -> str:
    actors = {}
    for entity, b in sorted(actor_bodies.items()):
        smp = built.scene.bodies[b].track.sample([s.t_s], clamp=True)
        actors[entity] = {"position": smp.position_m[0].tolist(), "rotation_xyzw": smp.quat_xyzw[0].tolist(),
                          "present": bool(smp.present[0]), "visible": b in seen}
    return json.dumps({"sensor": s.sensor, "tick": s.tick, "t_s": s.t_s, "actors": actors}, sort_keys=True)


def _write_job(folder: _Folder, rig: Rig, resolved: Mapping[str, Any], options: ObserveOptions,
               seeds: Mapping[str, int], lighting: Lighting, schedules: Mapping[str, Any], cameras: list[str],
               cam_records: Mapping[str, list[dict[str, Any]]], cam_poses: Mapping[str, list[NDArray]],
               provenance: Mapping[str, Any] | None, atmosphere: Atmosphere) -> None:
    pairing = {}
    for cam in cameras:
        others = {n: s for n, s in schedules.items() if n != cam and not isinstance(rig.sensors[n], CameraModel)}
        rows = pairing_table(schedules[cam], others, options.pairing_policy)
        observed_ticks = {r["tick"] for r in cam_records[cam]}
        pairing[cam] = [r for r in rows if r["camera_tick"] in observed_ticks]
    poses = {}
    for cam in cameras:
        rel = f"job/{cam}.poses.npz"
        buf = io.BytesIO()
        ticks = np.array([r["tick"] for r in cam_records[cam]], np.int64)
        T = np.stack(cam_poses[cam]) if cam_poses[cam] else np.zeros((0, 0, 4, 4))
        np.savez_compressed(buf, tick=ticks, T_world_camera=T)
        folder.put(rel, buf.getvalue(), cam, None, "camera_poses")
        poses[cam] = {"every_row": rel, "array": "T_world_camera (frames, rows, 4, 4), optical frame",
                      "frames": [{k: r[k] for k in ("tick", "t0_s", "sample_times_s", "T_world_camera_first_row",
                                                    "T_world_camera_last_row")} for r in cam_records[cam]]}
    job = {
        "version": OBSERVE_VERSION,
        "inputs": dict(provenance or {}),
        "rig": resolved["sensors"],
        "overrides": resolved["overrides"],
        "passes": list(options.passes),
        "options": asdict(options),
        "seeds": {"sensor_streams": dict(seeds), "per_sample": "SeedSequence(seed, spawn_key=(tick,))"},
        "lighting": asdict(lighting),
        "atmosphere": atmosphere.to_json(),
        "ego_body": "T_world_sensor(t) = T_world_body(t) @ T_body_mount @ T_mount_sensor",
        "schedules": {n: {"rate_hz": s.rate_hz, "phase_s": s.phase_s, "duration_s": s.duration_s,
                          "times_s": s.times_s.tolist()} for n, s in sorted(schedules.items())},
        "pairing": {"policy": options.pairing_policy, "selection_only": True, "tables": pairing},
        "camera_poses": poses,
    }
    write_json_atomic(folder.root / "job" / "render-job.json", job)
    folder.add_written("job/render-job.json", None, None, "render_job")


# --- from files ----------------------------------------------------------------------------


def observe_sample(template: Any, catalog: Any, manifest: Any, trace: TraceInput, out_dir: str | Path, *,
                   rig_data: Mapping[str, Any] | None = None, rig_source: str = "template",
                   options: ObserveOptions = ObserveOptions(), overrides: Mapping[str, Any] | Iterable[str] = (),
                   provenance: Mapping[str, Any] | None = None,
                   progress: Callable[[int], Progress] | None = None) -> ObserveResult:
    """Observe one sample from loaded inputs (what a pipeline step calls; :func:`observe_files` reads files).

    Args:
        template: the :class:`~simready.world.template.WorldTemplate`; catalog: the
            :class:`~simready.catalog.catalog.Catalog`; manifest: the
            :class:`~simready.scenario.manifest.ScenarioManifest`; trace: its :class:`TraceInput`.
        rig_data: a template-format rig (default: the template's ``sensor_rig``).
        provenance: extra inputs for job/render-job.json (merged over the template/manifest/geometry ones).
    """
    check_output_dir(out_dir)
    overrides = parse_set_args(overrides) if not isinstance(overrides, Mapping) else dict(overrides)
    rig = rig_from_sensor_rig(template_rig_data(template) if rig_data is None else rig_data, source=rig_source)
    environment = manifest.environment.model_dump()
    _resolve_overrides(rig, Atmosphere.from_environment(environment), overrides)  # fails here, before the build
    built = build_scene(template, catalog, manifest, trace)
    t_hash = template_hash(template)
    inputs = {
        "trace": {"source": trace.source, "sha256": trace.sha256, "header": trace.header},
        "manifest": {"sample_id": manifest.sample_id, "hash": manifest_hash(manifest)},
        "template": {"id": template.id, "hash": t_hash, "manifest_template_hash": manifest.template_hash},
        "rig_source": rig_source,
        "geometry": {e.entity_id: e.geometry_hash for e in built.entities.values()},
        **dict(provenance or {}),
    }
    warnings = [] if t_hash == manifest.template_hash else [
        f"template {template.id} hashes to {t_hash}, the manifest recorded {manifest.template_hash}"]
    return observe(built, rig, trace, out_dir, options=options, overrides=overrides,
                   lighting=Lighting.from_environment(environment), streams=manifest.streams,
                   provenance=inputs, warnings=warnings, progress=progress,
                   atmosphere=Atmosphere.from_environment(environment))


def observe_files(trace_path: str | Path, manifest_path: str | Path, out_dir: str | Path, *,
                  rig_spec: str | Path | None = None, passes: str | Iterable[str] | None = None,
                  overrides: Iterable[str] | Mapping[str, Any] = (), lidar_format: str = "ascii",
                  video: bool = True, until_s: float | None = None, from_s: float | None = None,
                  progress: Callable[[int], Progress] | None = None) -> ObserveResult:
    """``simready sense``: read the trace, manifest, template, catalog and rig; observe; write ``out_dir``.

    The manifest's template is read from ``data/templates/<template_id>.yaml``.
    Every input is checked before anything is written (one-line
    :class:`~simready.errors.SimreadyError` subclasses): unknown pass names,
    an output folder that exists and is not empty, malformed overrides, a
    rig whose sensor names a missing mount, a trace without twists.
    """
    options = ObserveOptions(passes=parse_passes(passes), lidar_format=lidar_format, video=video, from_s=from_s,
                             until_s=until_s)
    check_output_dir(out_dir)
    overrides = parse_set_args(overrides) if not isinstance(overrides, Mapping) else dict(overrides)
    manifest = load_manifest(manifest_path)
    template_file = paths.TEMPLATES_DIR / f"{manifest.template_id}.yaml"
    template = load_template(template_file)
    if rig_spec is None:
        rig_data, rig_source = template_rig_data(template), str(template_file)
    else:
        rig_data, rig_source = load_rig_data(rig_spec)
    _resolve_overrides(rig_from_sensor_rig(rig_data, source=rig_source), Atmosphere(), overrides)  # before the trace
    trace = read_trace_input(trace_path)
    catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    return observe_sample(template, catalog, manifest, trace, out_dir, rig_data=rig_data, rig_source=rig_source,
                          options=options, overrides=overrides,
                          provenance={"files": {"trace": str(trace_path), "manifest": str(manifest_path)}},
                          progress=progress)
