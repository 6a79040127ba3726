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
    truth/<cam>/<tick:08d>.surface.parquet   surface identity per visible sample (its pixel: every table of the tick's)
    truth/<cam>/<tick:08d>.motion.parquet    instantaneous motion field (px/s) from twists
    truth/<cam>/<tick:08d>.forward.parquet   correspondence tick -> next frame (flow, displacement, flags: valid,
                                             occluded, ... one bit each, simready.truth.stored)
    truth/<cam>/<tick:08d>.backward.parquet  correspondence tick -> previous frame (..., disoccluded)
    truth/<cam>/tracks.parquet, track-events.parquet
    video/<sensor>.mp4         review video; LiDAR and radar drawn top-down, sensor forward up, its right on the right
    review/contact_sheet.png   a few camera frames, rgb | depth | id | semantic per row (simready.measurement.review_images)
    review/lidar_topdown.png   one LiDAR sweep top-down, forward up, the sensor's right on the right
    job/render-job.json        exact inputs: provenance, rig, seeds, schedules, pairing tables, camera poses per frame
    job/<cam>.poses.npz        every row's camera pose of every frame (rolling shutter)

Its parts: :mod:`.options` (passes and options, checked before anything is
written), :mod:`.plan` (the rig as observed, the window, the sensor samples in
time order, each one's noise generator), :mod:`.sensor_loop` (each sample
rendered, written and its truth computed), :mod:`.folder` (every file
registered once, the writer thread), :mod:`.writers` (each sample's files and
file formats, perception truth), :mod:`.video` (review videos),
:mod:`.summary` (observed frames, parity, the render job); :mod:`.inputs`
observes a scenario sample from its inputs or files. This module is the run:
the plan, the loop, then the summary files.

Writing streams: each sample is rendered, written and dropped before the
next, so memory does not grow with the clip. Everything is written into a
temporary sibling folder that replaces the output folder only when complete;
the output folder must be new or empty, and every bad input is refused before
anything is written.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from simready.artifacts.records import CameraFrames, Render, RenderSettings, Results, SensorSummary
from simready.common.atomic import atomic_directory, write_json_atomic
from simready.measurement.folder import OutputFolder
from simready.measurement.options import ObserveOptions, Progress, check_output_dir
from simready.measurement.plan import Plan, resolve_overrides, sensor_seeds
from simready.measurement.review_images import write_review_images
from simready.measurement.sensor_loop import SensorLoop
from simready.measurement.summary import (OBSERVE_VERSION, ActorPoses, observed_frame, parity, projection, sensor_passes,
                                          write_job)
from simready.measurement.video import Videos
from simready.measurement.writers import TRUTH_COMPRESSION
from simready.sensors_hw.atmosphere import Atmosphere
from simready.sensors_hw.camera import ROW_TIME_RULE, SEMANTIC_IGNORE_8BIT, SEMANTIC_NOTHING_HIT, Lighting
from simready.sensors_hw.frames import frame_declaration
from simready.sensors_hw.models import Rig
from simready.sensors_hw.scene_build import BuiltScene, ego_track
from simready.sensors_hw.trace_input import TraceInput
from simready.world.identity import write_legend
from simready.world.ontology import load_ontology


@dataclass
class ObserveResult:
    """What :func:`observe` wrote: the folder, counts, and its ``render.json``."""

    out_dir: Path
    files: int
    frames: dict[str, int]
    timings_s: dict[str, float]
    peak_rss_mb: float
    render: Render


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
    rig, resolved, atmosphere = resolve_overrides(rig, atmosphere or Atmosphere(), overrides)
    lighting = lighting or Lighting()
    passes = options.passes
    plan = Plan.of(rig, trace, options)
    kinds, observed, cameras, samples = plan.kinds, plan.observed, plan.cameras, plan.samples
    warnings = list(warnings)
    counts = {n: 0 for n in observed}
    actor_bodies = {e: built.scene.body_indices([e])[0] for e in built.actor_entities.values()}
    # Every actor's pose at every sample time, each track sampled once (observed-frames.jsonl's rows).
    actor_poses = ActorPoses(built, actor_bodies, (s.t_s for s in samples))
    bar = progress(len(samples)) if progress else None
    started = time.perf_counter()
    with _system_arrow_pool(options.writer_thread), atomic_directory(out) as tmp:
        folder = OutputFolder(tmp, options.writer_thread)
        layout = folder.layout
        # One encoder for the folder's videos, each fed until its sensor's last sample (Videos: why at once).
        encoder = Videos()
        last = {s.sensor: i for i, s in enumerate(samples)}
        videos = {n: encoder.video(layout.file(layout.video_name(n)), float(rig.sensors[n].rate_hz))
                  for n in observed if n in last} if options.video else {}
        run = SensorLoop(built, rig, options, folder, sensor_seeds(built.sample_id, streams, rig.sensors), lighting,
                         cameras, videos, atmosphere)
        frames_log = open(layout.observed_frames, "w", encoding="utf-8")
        sampled = False
        try:
            for i, s in enumerate(samples):
                seen = run.sample(s)
                if last[s.sensor] == i and s.sensor in videos:
                    videos[s.sensor].finish()
                counts[s.sensor] += 1
                line = observed_frame(built, s.sensor, s.tick, s.t_s, actor_bodies, set(seen.tolist()),
                                      actor_poses).line()
                frames_log.write(line + "\n")
                if bar is not None:
                    bar.update(1)
            run.finish()
            # The encoder flushes the videos' last frames and exits while the files below are written.
            encoder.finish()
            folder.drain()
            sampled = True
        finally:
            run.close()
            folder.close()
            frames_log.close()
            if not sampled:  # an exception is on its way out: the encoder ends, its error would only hide it
                encoder.kill()
            if bar is not None:
                bar.close()
        try:
            folder.add_written(folder.name_of(layout.observed_frames), None, None, "observed_frames")
            legend = write_legend(layout.legend, built.legend(), _ontology_version(),
                                  nothing_hit_class=SEMANTIC_NOTHING_HIT, semantic_ignore_8bit=SEMANTIC_IGNORE_8BIT,
                                  row_time=ROW_TIME_RULE)
            folder.add_written(folder.name_of(legend), None, None, "legend")
            par = parity(built, trace, plan.t_lo, plan.t_hi)
            if not par.passed:
                warnings.append(f"parity: observed poses differ from the trace by {par.max_position_error_m:.3g} m, "
                                f"{par.max_angle_error_rad:.3g} rad")
            write_json_atomic(layout.parity, par.dump())
            folder.add_written(folder.name_of(layout.parity), None, None, "parity")
            write_job(folder, rig, resolved, options, run.seeds, lighting, plan.schedules, cameras, run.cam_records,
                      run.cam_poses, provenance, atmosphere)
        finally:
            with run.timed("video", "video_wait"):
                encoder.close()
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
                truth_compression=list(TRUTH_COMPRESSION), window_s=[plan.t_lo, plan.t_hi]),
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


def _ontology_version() -> str:
    return load_ontology().ontology_version
