"""Observation-layout benchmark: frame throughput per pass and the peak memory of a long sample.

``python -m simready.bench.observe`` builds a synthetic street sample (no
catalog, no simulation: analytic trajectories written as a SPEC §7 ticks
table, so parity and twists are real), runs :func:`~simready.measurement.observe.observe`
into a temporary folder and prints:

* frames per second of each pass on its own (render or scan + encoding its
  file), and of each stage of a whole run (camera render, file writing,
  truth, LiDAR scan, radar, videos) from ``render.json``'s timings;
* the peak resident memory of a 200-camera-frame, 3-sensor sample (camera,
  LiDAR, radar), measured in a fresh child process as its ``VmHWM`` (the
  child's whole-process peak, imports included; not ``ru_maxrss``, which a
  forked child inherits from its parent), against the 2 GB budget.

:func:`street_sample` is also what the observation tests observe.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simready.bench.sensors import box_body
from simready.raycast.geometry import SceneGeometry
from simready.sensors_hw.models import Rig
from simready.sensors_hw.scene_build import BuiltScene, Entity, rig_from_sensor_rig
from simready.sensors_hw.trace_input import TraceInput, trace_from_ticks
from simready.world.frames import make_transform, quat_from_yaw
from simready.world.identity import actor_id
from simready.world.motion import PoseTrack

SAMPLE_ID = "bench-street"
TEMPLATE_ID = "bench_street"
DT_S = 0.02
MEMORY_BUDGET_MB = 2048.0

#: (actor id, start xyz, velocity xyz, yaw, box extents, class id, class, albedo, reflectance)
ACTORS = (
    ("ego", (0.0, -1.75, 0.0), (8.0, 0.0, 0.0), 0.0, (4.6, 1.9, 1.5), 12, "shuttle", (0.8, 0.8, 0.8), 0.6),
    ("car_1", (60.0, 1.75, 0.0), (-7.0, 0.0, 0.0), np.pi, (4.5, 1.9, 1.5), 10, "car", (0.7, 0.1, 0.1), 0.6),
    ("car_2", (22.0, -1.75, 0.0), (9.0, 0.0, 0.0), 0.0, (4.5, 1.9, 1.5), 10, "car", (0.1, 0.2, 0.7), 0.6),
    ("ped", (30.0, 6.5, 0.0), (0.0, -1.3, 0.0), -np.pi / 2, (0.5, 0.6, 1.75), 20, "pedestrian", (0.4, 0.5, 0.3), 0.3),
)
#: (instance name, extents, centre xyz of the footprint, class id, class, albedo, reflectance)
INSTANCES = (
    ("road", (300.0, 14.0, 0.2), (100.0, 0.0, -0.2), 1, "road", (0.25, 0.25, 0.27), 0.15),
    ("sidewalk_n", (300.0, 4.0, 0.15), (100.0, 9.0, 0.0), 2, "sidewalk", (0.6, 0.6, 0.58), 0.3),
    ("sidewalk_s", (300.0, 4.0, 0.15), (100.0, -9.0, 0.0), 2, "sidewalk", (0.6, 0.6, 0.58), 0.3),
    *((f"building_{i}", (18.0, 10.0, float(h)), (x, side * 17.0, 0.0), 5, "building", (0.55, 0.45, 0.4), 0.4)
      for i, (x, side, h) in enumerate([(10, 1, 12), (35, 1, 20), (60, 1, 9), (85, 1, 14), (15, -1, 15),
                                        (45, -1, 25), (75, -1, 11), (105, -1, 16)])),
)


def street_rig_data(width_px: int = 640, height_px: int = 360, line_time_s: float = 5.0e-5,
                    azimuth_steps: int = 1024, channels: int = 32) -> dict[str, Any]:
    """A template-format rig: front camera (20 Hz, rolling), roof LiDAR (10 Hz), front radar (13 Hz)."""
    return {
        "mounts": {
            "front_camera": {"type": "camera", "parent": "ego", "translation_m": [1.8, 0.0, 1.45]},
            "roof_lidar": {"type": "lidar", "parent": "ego", "translation_m": [0.9, 0.0, 2.0]},
            "front_radar": {"type": "radar", "parent": "ego", "translation_m": [2.3, 0.0, 0.6]},
        },
        "sensors": {
            "front_camera": {"type": "camera", "mount": "front_camera", "width_px": width_px, "height_px": height_px,
                             "hfov_deg": 90.0, "near_m": 0.1, "far_m": 200.0, "rate_hz": 20.0, "phase_s": 0.0,
                             "shutter": "rolling", "line_time_s": line_time_s, "distortion_k1": -0.05},
            "roof_lidar": {"type": "lidar", "mount": "roof_lidar", "channels": channels,
                           "vertical_fov_deg": [-24.9, 2.0], "rotation_hz": 10.0, "azimuth_steps": azimuth_steps,
                           "max_range_m": 120.0, "phase_s": 0.0},
            "front_radar": {"type": "radar", "mount": "front_radar", "rate_hz": 13.0, "phase_s": 0.0,
                            "hfov_deg": 60.0, "vfov_deg": 10.0, "max_range_m": 150.0},
        },
    }


def street_ticks(duration_s: float) -> pd.DataFrame:
    """SPEC §7 ticks (one row per tick × actor, sorted) of constant-velocity actors over [0, duration]."""
    n = int(round(duration_s / DT_S)) + 1
    t = np.arange(n) * DT_S
    frames = []
    for name, start, vel, yaw, *_ in ACTORS:
        v = np.asarray(vel, np.float64)
        p = np.asarray(start, np.float64) + t[:, None] * v
        q = np.tile(quat_from_yaw(yaw), (n, 1))
        frames.append(pd.DataFrame({
            "tick": np.arange(n, dtype=np.int64), "t": t, "actor_id": name,
            "x": p[:, 0], "y": p[:, 1], "z": p[:, 2], "qx": q[:, 0], "qy": q[:, 1], "qz": q[:, 2], "qw": q[:, 3],
            "vx": v[0], "vy": v[1], "vz": v[2], "wx": 0.0, "wy": 0.0, "wz": 0.0,
            "speed_mps": float(np.hypot(v[0], v[1])), "lane": None, "s": 0.0, "present": True}))
    return pd.concat(frames).sort_values(["tick", "actor_id"], kind="stable").reset_index(drop=True)


def street_world(trace: TraceInput) -> BuiltScene:
    """The street's static boxes and its actors, posed by ``trace`` (box meshes, analytic classes)."""
    bodies, entities = [], {}
    for name, ext, centre, cid, cls, albedo, refl in INSTANCES:
        eid = f"{TEMPLATE_ID}/instance:{name}"
        b = box_body(eid, ext, PoseTrack.constant(make_transform(np.eye(3), centre)), cid, albedo, refl)
        bodies.append(b)
        entities[eid] = Entity(eid, "instance", None, cls, cls, cid, b.geometry_hash)
    tracks = trace.tracks()
    for name, _, _, _, ext, cid, cls, albedo, refl in ACTORS:
        eid = actor_id(SAMPLE_ID, name)
        b = box_body(eid, ext, tracks[name], cid, albedo, refl)
        bodies.append(b)
        entities[eid] = Entity(eid, "actor", None, cls, cls, cid, b.geometry_hash, actor=name)
    ego = actor_id(SAMPLE_ID, "ego")
    return BuiltScene(SceneGeometry(bodies, separate=[ego]), dict(sorted(entities.items())), ego, SAMPLE_ID,
                      TEMPLATE_ID)


def street_sample(duration_s: float = 2.0, **rig_kw: Any) -> tuple[BuiltScene, Rig, TraceInput]:
    """World, rig and trace of the synthetic street (``rig_kw`` as :func:`street_rig_data`)."""
    trace = trace_from_ticks(street_ticks(duration_s), {"dt": DT_S, "clip_s": duration_s,
                                                        "template_id": TEMPLATE_ID, "metric_subject": "ego"},
                             source="bench_observe")
    built = street_world(trace)
    return built, rig_from_sensor_rig(street_rig_data(**rig_kw), source="bench_observe"), trace


def _observe_once(duration_s: float, passes: tuple[str, ...], rig_kw: dict[str, Any], out: str,
                  writer_thread: bool = True) -> dict[str, Any]:
    from simready.measurement.observe import observe, peak_rss_mb
    from simready.measurement.options import ObserveOptions

    built, rig, trace = street_sample(duration_s, **rig_kw)
    t0 = time.perf_counter()
    res = observe(built, rig, trace, out, options=ObserveOptions(passes=passes, writer_thread=writer_thread))
    return {"frames": res.frames, "timings_s": res.timings_s, "wall_s": time.perf_counter() - t0,
            "peak_rss_mb": peak_rss_mb()}


def _child(queue: Any, *args: Any) -> None:
    queue.put(_observe_once(*args))


def observe_in_child(duration_s: float, passes: tuple[str, ...], rig_kw: dict[str, Any],
                     writer_thread: bool = True) -> dict[str, Any]:
    """Run one observation in a fresh process (so its peak memory is its own) and return its figures."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        proc = ctx.Process(target=_child, args=(queue, duration_s, passes, rig_kw, str(Path(tmp) / "obs"),
                                                writer_thread))
        proc.start()
        out = queue.get()
        proc.join()
    return out


#: Stage names of render.json's timings. PNG and Parquet encoding run on the writer thread, so "write"
#: is what the main thread spends; the rest overlaps the next frame.
STAGES = {"render": "camera render (cast + passes)", "write": "write (main-thread part)", "truth": "perception truth",
          "video": "video (frames to ffmpeg)", "scan": "LiDAR scan", "detect": "radar detect"}


def _report(label: str, fig: dict[str, Any]) -> None:
    print(f"[{label}] wall {fig['wall_s']:.1f} s, frames {fig['frames']}, peak RSS {fig['peak_rss_mb']:.0f} MiB")
    for key, secs in sorted(fig["timings_s"].items()):
        if key == "total":
            continue
        sensor, stage = key.rsplit(".", 1)
        n = fig["frames"].get(sensor, 0)
        if n and secs > 0:
            print(f"  {sensor:<13} {STAGES.get(stage, stage):<32} {n / secs:7.2f} frames/s  "
                  f"({1000 * secs / n:7.1f} ms/frame)")


def pass_throughput(rig_kw: dict[str, Any], frames: int = 4) -> dict[str, float]:
    """Frames per second of each pass on its own: render (or scan / detect) plus encoding its file(s).

    Camera passes share one cast, so each figure includes it; ``truth`` is the per-frame cost of the
    surface table, motion field and both correspondences with the previous frame, encoded.
    """
    from simready.measurement.folder import OutputFolder
    from simready.measurement.observe import sensor_rng
    from simready.measurement.writers import CameraTruth, write_camera
    from simready.sensors_hw.camera import render_frame
    from simready.sensors_hw.lidar import scan, write_ply_ascii
    from simready.sensors_hw.radar import detect, write_radar_csv
    from simready.sensors_hw.scene_build import ego_track
    from simready.truth.correspondence import FrameView

    built, rig, _ = street_sample(frames / 10.0 + 0.1, **rig_kw)  # the last LiDAR sweep fits inside
    rig = rig.on_body(ego_track(built))
    scene, ignore = built.scene, built.ignore
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = OutputFolder(Path(tmp), writer_thread=False)  # each pass's own cost, encoding included
        try:
            for p in ("depth", "id", "semantic", "rgb"):
                t0 = time.perf_counter()
                for k in range(frames):
                    write_camera(folder, "front_camera", k, render_frame(scene, rig, "front_camera", k / 20.0, (p,),
                                                                         ignore=ignore))
                    folder.drain()
                out[p] = frames / (time.perf_counter() - t0)
            truth = CameraTruth(built, rig, "front_camera")
            views = []
            for k in range(frames + 1):
                f = render_frame(scene, rig, "front_camera", k / 20.0, (), ignore=ignore)
                views.append((FrameView.of_frame(f, rig.sensors["front_camera"], k), f))
            truth.frame(folder, *views[0])
            folder.drain()
            t0 = time.perf_counter()
            for view, f in views[1:]:
                truth.frame(folder, view, f)
                folder.drain()
            out["truth"] = frames / (time.perf_counter() - t0)
        finally:
            folder.close()
        t0 = time.perf_counter()
        for k in range(frames):
            write_ply_ascii(Path(tmp) / "l.ply", scan(scene, rig, "roof_lidar", k / 10.0, sensor_rng(0, k),
                                                      ignore=ignore))
        out["lidar"] = frames / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        for k in range(frames):
            write_radar_csv(Path(tmp) / "r.csv", detect(scene, rig, "front_radar", k / 13.0, sensor_rng(0, k),
                                                        ignore=ignore))
        out["radar"] = frames / (time.perf_counter() - t0)
    return out


def run(frames: int = 200, width_px: int = 1280, height_px: int = 720, quick: bool = False,
        writer_thread: bool = True) -> dict[str, Any]:
    """Print frames/s per pass, throughput per stage and the peak memory of a ``frames``-camera-frame
    3-sensor sample.

    ``quick`` observes 20 frames at 640×360 instead (a smoke run); ``writer_thread`` as
    :class:`~simready.measurement.options.ObserveOptions`.
    """
    if quick:
        frames, width_px, height_px = 20, 640, 360
    duration = (frames - 1) / 20.0 + 0.03  # the camera's last readout fits inside
    rig_kw = {"width_px": width_px, "height_px": height_px, "line_time_s": 3.0e-5 * 720 / height_px,
              "azimuth_steps": 1024, "channels": 64}
    passes = ("rgb", "depth", "id", "semantic", "lidar", "radar", "truth")
    fig = observe_in_child(duration, passes, rig_kw, writer_thread)  # first, while this process is small
    _report(f"{frames} camera frames {width_px}x{height_px} + LiDAR 64x1024 + radar, every pass"
            f"{', writer thread' if writer_thread else ', no writer thread'}", fig)
    ok = "within" if fig["peak_rss_mb"] <= MEMORY_BUDGET_MB else "OVER"
    print(f"  peak memory {fig['peak_rss_mb']:.0f} MiB for {sum(fig['frames'].values())} samples "
          f"({ok} the {MEMORY_BUDGET_MB:.0f} MiB budget; the child's VmHWM, imports included)")
    per_pass = pass_throughput(rig_kw)
    print(f"[per pass, camera {width_px}x{height_px} rolling shutter, LiDAR 64x1024 ASCII PLY, radar CSV]")
    for name, fps in per_pass.items():
        print(f"  {name:<9} {fps:7.2f} frames/s  ({1000 / fps:7.1f} ms/frame)")
    fig["per_pass_fps"] = per_pass
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-writer-thread", action="store_true", help="encode files on the main thread")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    fig = run(args.frames, args.width, args.height, args.quick, not args.no_writer_thread)
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
