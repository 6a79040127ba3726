"""The observation of one sample and branch (SPEC §10), with its perception truth (SPEC §11): the run.

:func:`observe` runs every sensor of a rig over a clip against one world
(:class:`~simready.sensors_hw.scene_build.BuiltScene`) and writes (names and
paths from :class:`simready.artifacts.layout.ObservationDir`, JSON through
:mod:`simready.artifacts.records`)::

    render.json            rig settings as rendered (overrides applied), passes, each sensor's frame, warnings, version
    results.json           ``artifacts``: every file (sensorId, tick, pass, path, bytes, sha256); per camera frame
                           its ``projection`` and ``sampleTime`` (and beside them the rows' sample times), per
                           camera its intrinsics; per LiDAR sweep / radar frame its times and counts
    observed-frames.jsonl  one line per sensor sample: time, every actor's position, rotation [x,y,z,w], visibility
    legend.json            compact id -> entity, class, family; nothing_hit_class (semantic 0: sky), row_time rule
    parity.json            observed poses vs the trace (max position and angle error)
    <cam>/<tick:08d>.rgb.png | .depth.f32.bin | .semantic.png | .id.png
                               (.depth.f32.bin.zst with depth_format="f32.zst")
    <lidar>/<tick:08d>.ply     (ASCII by default; binary little-endian with lidar_format="binary"; .ply.zst with
                               "ascii.zst" / "binary.zst": ObserveOptions.compressed() asks for each variant)
    <radar>/<tick:08d>.csv
    <radar>/<tick:08d>.contributors.parquet  per detection, the parts whose surfaces returned it (power share,
                                             radial velocity; SPEC §11)
    truth/<cam>/<tick:08d>.surface.parquet   surface identity per visible sample
    truth/<cam>/<tick:08d>.motion.parquet    instantaneous motion field (px/s) from twists
    truth/<cam>/<tick:08d>.forward.parquet   correspondence tick -> next frame (flow, displacement, valid, occluded)
    truth/<cam>/<tick:08d>.backward.parquet  correspondence tick -> previous frame (..., disoccluded)
    truth/<cam>/tracks.parquet, track-events.parquet
    video/<sensor>.mp4         review video; LiDAR and radar drawn top-down, sensor forward up, its right on the right
    review/contact_sheet.png   a few camera frames, rgb | depth | id | semantic per row (simready.measurement.review_images)
    review/lidar_topdown.png   one LiDAR sweep top-down, forward up, the sensor's right on the right
    job/render-job.json        exact inputs: provenance, rig, seeds, schedules, pairing tables, camera poses per frame
    job/<cam>.poses.npz        every row's camera pose of every frame (rolling shutter)

Its parts: :mod:`.options` (passes and options, checked before anything is
written), :mod:`.folder` (every file registered once, the writer thread),
:mod:`.writers` (each sample's files and file formats, perception truth),
:mod:`.video` (review videos), :mod:`.summary` (observed frames, parity, the
render job); this module is the frame loop and the entry points.

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

import resource
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from simready.common import paths
from simready.common.atomic import atomic_directory, write_json_atomic
from simready.catalog.catalog import Catalog, ensure_catalog
from simready.artifacts.layout import ObservationDir
from simready.measurement.folder import OutputFolder
from simready.measurement.options import ObserveOptions, Progress, check_output_dir, parse_passes
from simready.measurement.summary import (OBSERVE_VERSION, camera_record, observed_frame, parity, projection,
                                          sensor_passes, write_job)
from simready.measurement.video import Video, camera_review, radar_topdown
from simready.measurement.writers import (TRUTH_COMPRESSION, CameraTruth, write_camera,
                                          write_lidar, write_radar)
from simready.artifacts.records import (CameraFrame, CameraFrames, LidarSweep, RadarFrame, Render, RenderSettings, Results,
                              SensorSummary)
from simready.scenario.manifest import ScenarioManifest, load_manifest, manifest_hash
from simready.scenario.streams import StreamSet
from simready.sensors_hw.atmosphere import Atmosphere, apply_atmosphere_overrides, split_overrides
from simready.sensors_hw.camera import (ROW_TIME_RULE, SEMANTIC_IGNORE_8BIT, SEMANTIC_NOTHING_HIT, Lighting,
                                         render_frame)
from simready.sensors_hw.frames import frame_declaration
from simready.sensors_hw.lidar import scan
from simready.sensors_hw.models import CameraModel, LidarModel, RadarModel, Rig, apply_overrides, parse_set_args
from simready.sensors_hw.radar import detect
from simready.measurement.review_images import lidar_topdown, write_review_images
from simready.sensors_hw.scene_build import (BuiltScene, build_scene, ego_track, load_rig_data, rig_from_sensor_rig,
                                             template_rig_data)
from simready.sensors_hw.schedule import rig_schedules
from simready.sensors_hw.trace_input import TraceInput, read_trace_input
from simready.truth.correspondence import FrameView
from simready.world.identity import write_legend
from simready.world.ontology import load_ontology
from simready.world.template import WorldTemplate, load_template, template_hash


@dataclass
class ObserveResult:
    """What :func:`observe` wrote: the folder, counts, and its ``render.json``."""

    out_dir: Path
    files: int
    frames: dict[str, int]
    timings_s: dict[str, float]
    peak_rss_mb: float
    render: Render


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


@dataclass
class _Run:
    """One observation run: the sensors' steps and what they accumulate for the summary files."""

    built: BuiltScene
    rig: Rig
    options: ObserveOptions
    folder: OutputFolder
    seeds: dict[str, int]
    lighting: Lighting
    cameras: list[str]
    videos: dict[str, Video]
    atmosphere: Atmosphere = field(default_factory=Atmosphere)
    timings: dict[str, float] = field(default_factory=dict)
    truth: dict[str, CameraTruth] = field(default_factory=dict)
    cam_records: dict[str, list[CameraFrame]] = field(default_factory=dict)
    cam_poses: dict[str, list[NDArray]] = field(default_factory=dict)
    sweep_records: dict[str, list[LidarSweep | RadarFrame]] = field(default_factory=dict)
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
            self.truth = {n: CameraTruth(self.built, self.rig, n, self.truth_pool) for n in self.cameras}
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
            write_camera(self.folder, s.sensor, s.tick, frame, model.near_m, self.options.depth_format,
                         self.options.png_compress_level)
        view = FrameView.of_frame(frame, model, s.tick)
        if s.sensor in self.truth:
            with self.timed(s.sensor, "truth"):
                self.truth[s.sensor].frame(self.folder, view, frame)
        self.cam_records[s.sensor].append(camera_record(view))
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
            write_lidar(self.folder, s.sensor, s.tick, sweep, self.options, sampleTime={"seconds": s.t_s},
                        t=s.t_s + 0.5 * model.sweep_s,
                        T_world_sensor=np.asarray(T_mid).round(9).tolist())
        self.sweep_records.setdefault(s.sensor, []).append(
            LidarSweep(tick=s.tick, t0_s=s.t_s, sweep_s=model.sweep_s, points=len(sweep)))
        self._review(s.sensor, lambda: lidar_topdown(sweep.points_sensor, model.max_range_m))
        return np.unique(sweep.hits.body_index[sweep.beam])

    def _radar(self, s: _Sample, model: RadarModel) -> NDArray[np.intp]:
        scene = self.built.scene
        with self.timed(s.sensor, "detect"):
            det, contributors = detect(scene, self.rig, s.sensor, s.t_s, sensor_rng(self.seeds[s.sensor], s.tick),
                                       ignore=self.built.ignore, contributors=True)
        with self.timed(s.sensor, "write"):
            write_radar(self.folder, s.sensor, s.tick, det, contributors)
        self.sweep_records.setdefault(s.sensor, []).append(RadarFrame(tick=s.tick, t_s=s.t_s, detections=len(det)))
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
        folder = OutputFolder(tmp, options.writer_thread)
        layout = folder.layout
        videos = {n: Video(layout.file(layout.video_name(n)), float(rig.sensors[n].rate_hz)) for n in observed} \
            if options.video else {}
        run = _Run(built, rig, options, folder, sensor_seeds(built.sample_id, streams, rig.sensors), lighting,
                   cameras, videos, atmosphere)
        frames_log = open(layout.observed_frames, "w", encoding="utf-8")
        sampled = False
        try:
            for s in samples:
                seen = run.sample(s)
                counts[s.sensor] += 1
                line = observed_frame(built, s.sensor, s.tick, s.t_s, actor_bodies, set(seen.tolist())).line()
                frames_log.write(line + "\n")
                if bar is not None:
                    bar.update(1)
            run.finish()
            # The encoders flush their last frames and exit together, while the files below are written.
            for v in videos.values():
                v.finish()
            folder.drain()
            sampled = True
        finally:
            run.close()
            folder.close()
            frames_log.close()
            if not sampled:
                for v in videos.values():
                    v.close()
            if bar is not None:
                bar.close()
        try:
            folder.add_written(folder.name_of(layout.observed_frames), None, None, "observed_frames")
            legend = write_legend(layout.legend, built.legend(), _ontology_version(),
                                  nothing_hit_class=SEMANTIC_NOTHING_HIT, semantic_ignore_8bit=SEMANTIC_IGNORE_8BIT,
                                  row_time=ROW_TIME_RULE)
            folder.add_written(folder.name_of(legend), None, None, "legend")
            par = parity(built, trace, t_lo, t_hi)
            if not par.passed:
                warnings.append(f"parity: observed poses differ from the trace by {par.max_position_error_m:.3g} m, "
                                f"{par.max_angle_error_rad:.3g} rad")
            write_json_atomic(layout.parity, par.dump())
            folder.add_written(folder.name_of(layout.parity), None, None, "parity")
            write_job(folder, rig, resolved, options, run.seeds, lighting, schedules, cameras, run.cam_records,
                      run.cam_poses, provenance, atmosphere)
        finally:
            for n, v in videos.items():
                with run.timed(n, "video_wait"):
                    v.close()
        for n, v in videos.items():
            if v.frames:
                folder.add_written(layout.video_name(n), n, None, "video", frames=v.frames, fps=v.fps)
        results = Results(
            version=OBSERVE_VERSION,
            passes=list(passes),
            sensors={n: SensorSummary(type=kinds[n], ticks=counts[n], passes=sensor_passes(rig, n, passes))
                     for n in observed},
            cameras={n: CameraFrames(projection=projection(rig.sensors[n]), frames=run.cam_records[n])
                     for n in cameras},
            sweeps=run.sweep_records,
            files=list(folder.entries),
        )
        with run.timed("review", "images"):  # from the files just written, as a reviewer would read them
            shown = write_review_images(tmp, results)
            for path in shown.values():
                folder.add_written(folder.name_of(path), None, None, "review")
        render = Render(
            version=OBSERVE_VERSION,
            sample_id=built.sample_id,
            template_id=built.template_id,
            passes=list(passes),
            overrides=resolved["overrides"],
            rig=resolved["sensors"],
            settings=RenderSettings(
                lidar_format=options.lidar_format, lidar_time_column=options.lidar_time_column,
                depth_format=options.depth_format, video=options.video, pairing_policy=options.pairing_policy,
                writer_thread=options.writer_thread, truth_thread=options.truth_thread,
                from_s=options.from_s, until_s=options.until_s, png_compress_level=options.png_compress_level,
                truth_compression=list(TRUTH_COMPRESSION), window_s=[t_lo, t_hi]),
            lighting=asdict(lighting),
            atmosphere=atmosphere.to_json(),
            sensors_observed=observed,
            sensor_frames={n: frame_declaration(kinds[n]) for n in observed},
            frames=counts,
            warnings=warnings,
        )
        write_json_atomic(layout.render, render.dump())
        folder.add_written(folder.name_of(layout.render), None, None, "render")
        results = results.model_copy(update={"files": sorted(folder.entries, key=lambda e: e.path)})
        write_json_atomic(layout.results, results.dump())
    # Timings and memory are how this run went, not what it observed: they are returned (the CLI prints them, the
    # asset shows them), never written, so the same inputs give the same bytes on every machine.
    timings = {"total": time.perf_counter() - started, **dict(sorted(run.timings.items()))}
    return ObserveResult(out, len(folder.entries) + 1, counts, timings, peak_rss_mb(), render)


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


# --- from files ----------------------------------------------------------------------------



def _relative_to_job(source: str, out_dir: str | Path) -> str:
    """The trace's path as seen from the render job's folder: the same bytes wherever the artifacts live (a
    local folder, a worker's cache of S3), and still the way to the trace from the job file."""
    if not source:
        return source
    return Path(os.path.relpath(Path(source).absolute(), ObservationDir(Path(out_dir).absolute()).render_job.parent)).as_posix()

def observe_sample(template: WorldTemplate, catalog: Catalog, manifest: ScenarioManifest, trace: TraceInput, out_dir: str | Path, *,
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
        "trace": {"source": _relative_to_job(trace.source, out_dir), "sha256": trace.sha256, "header": trace.header},
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
                  depth_format: str = "f32", lidar_time: bool = True, video: bool = True,
                  until_s: float | None = None, from_s: float | None = None, compressed: bool = False,
                  progress: Callable[[int], Progress] | None = None) -> ObserveResult:
    """``simready sense``: read the trace, manifest, template, catalog and rig; observe; write ``out_dir``.

    The manifest's template is read from ``data/templates/<template_id>.yaml``.
    Every input is checked before anything is written (one-line
    :class:`~simready.common.errors.SimreadyError` subclasses): unknown pass names,
    an output folder that exists and is not empty, malformed overrides, a
    rig whose sensor names a missing mount, a trace without twists. ``compressed`` writes each published
    file's opt-in compressed variant (:meth:`ObserveOptions.compressed`; the depth then as ``f32.zst``).
    """
    chosen = dict(passes=parse_passes(passes), lidar_format=lidar_format, depth_format=depth_format,
                  lidar_time_column=lidar_time, video=video, from_s=from_s, until_s=until_s)
    options = (ObserveOptions.compressed(**{**chosen, "depth_format": "f32.zst"}) if compressed
               else ObserveOptions(**chosen))
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
