"""Observation-layout benchmark: frame throughput per pass and the peak memory of a long sample.

``python -m simready.bench.observe`` builds a synthetic street sample (no
catalog, no simulation: analytic trajectories written as a SPEC §7 ticks
table, so parity and twists are real), runs :func:`~simready.measurement.observe.observe`
into a temporary folder and prints:

* frames per second of each pass on its own (render or scan + encoding its
  file), and of each stage of a whole run (camera render, file writing,
  truth, LiDAR scan, radar, videos) from the timings the observe call returns;
* the perception truth per camera frame beside the camera render of that frame (same process,
  interleaved; in wall and in CPU time, which a loaded host does not swing), and the bytes a
  full-resolution sample writes;
* the rays the sample casts (nearest hit and any hit) priced at bare Embree rates measured in the same child
  (one camera frame's rays against the world frozen), beside the sample's CPU time (issue 29: ≤ 2.5×);
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
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from simready.testing.street import street_sample

#: The observe benchmark reports its peak memory against this budget (MiB).
MEMORY_BUDGET_MB = 2048.0
#: ... and the bytes of a full-resolution sample against this target (issue 29).
BYTES_TARGET_GB = 1.5
#: ... and its CPU time against the same rays at bare Embree rates (issue 29).
SAMPLE_TARGET_X = 2.5


def _observe_once(duration_s: float, passes: tuple[str, ...], rig_kw: dict[str, Any], out: str,
                  writer_thread: bool = True) -> dict[str, Any]:
    # spawned child: the module top is imported by the measured process
    from simready.measurement.observe import observe, peak_rss_mb
    # spawned child: the module top is imported by the measured process
    from simready.measurement.options import ObserveOptions
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.camera import depth_file_bytes, read_depth_file

    built, rig, trace = street_sample(duration_s, **rig_kw)
    counts = _count_rays()
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu_s()
    res = observe(built, rig, trace, out, options=ObserveOptions(passes=passes, writer_thread=writer_thread))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0 + _children_cpu_s() - k0  # every thread, and the encoders it started
    rays = dict(counts)
    rates = bare_rates(built, rig, duration_s / 2.0)
    files = [p for p in Path(out).rglob("*") if p.is_file()]
    depth = [p for p in files if p.name.endswith(".depth.f32.bin")]
    return {"frames": res.frames, "timings_s": res.timings_s, "wall_s": wall, "cpu_s": cpu, "rays": rays,
            "bare_rays_per_s": rates, "peak_rss_mb": peak_rss_mb(),
            "bytes": sum(p.stat().st_size for p in files), "depth_bytes": sum(p.stat().st_size for p in depth),
            # the same depth files in the opt-in lossless variant (depth_format="f32.zst")
            "depth_zst_bytes": sum(len(depth_file_bytes(read_depth_file(p), "f32.zst")) for p in depth)}


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _count_rays() -> dict[str, int]:
    """Count the rays every :class:`~simready.raycast.SceneGeometry` query of this (benchmark) process casts:
    ``cast`` (nearest hit) and ``occluded`` (any hit). The methods are wrapped in place; the counts live in the
    returned dict."""
    # spawned child: the module top is imported by the measured process
    from simready.raycast import SceneGeometry

    counts = {"cast": 0, "occluded": 0}
    for name in counts:
        method = getattr(SceneGeometry, name)

        def counted(self: Any, origins: Any, *args: Any, _m: Any = method, _n: str = name, **kw: Any) -> Any:
            counts[_n] += len(origins)
            return _m(self, origins, *args, **kw)

        setattr(SceneGeometry, name, counted)
    return counts


def bare_rates(built: Any, rig: Any, t_s: float, repeats: int = 3) -> dict[str, float]:
    """Rays per CPU second of a bare Embree query of one camera frame's primary rays, against every body posed at
    ``t_s`` in one scene (the sensors' carrier left out): nearest hit (``cast``) and any hit (``occluded``);
    medians of ``repeats``. The floor a sample's ray counts are priced at."""
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.camera import camera_poses, camera_rays
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.scene_build import ego_track

    rig = rig.on_body(ego_track(built))
    scene = built.scene.embree_scene_at(t_s, ignore=built.ignore)
    o, d = camera_rays(rig.sensors["front_camera"], camera_poses(rig, "front_camera", t_s))
    far = np.full(len(o), rig.sensors["front_camera"].far_m, np.float32)
    out = {}
    for name, query in (("cast", {"output": 1}), ("occluded", {"query": "OCCLUDED"})):
        secs = []
        for _ in range(repeats + 1):  # the first warms Embree's caches
            c0 = time.process_time()
            scene.run(o, d, dists=far.copy(), **query)
            secs.append(time.process_time() - c0)
        out[name] = len(o) / float(np.median(secs[1:]))
    return out


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
          "video": "video (frames to the encoder thread)", "video_wait": "video (waiting for ffmpeg to finish)",
          "scan": "LiDAR scan", "detect": "radar detect"}


def _report(label: str, fig: dict[str, Any]) -> None:
    print(f"[{label}] wall {fig['wall_s']:.1f} s, frames {fig['frames']}, {fig['bytes'] / 1e6:.0f} MB written, "
          f"peak RSS {fig['peak_rss_mb']:.0f} MiB")
    for key, secs in sorted(fig["timings_s"].items()):
        if key == "total":
            continue
        sensor, stage = key.rsplit(".", 1)
        n = fig["frames"].get(sensor, 0)
        if n and secs > 0:
            print(f"  {sensor:<13} {STAGES.get(stage, stage):<32} {n / secs:7.2f} frames/s  "
                  f"({1000 * secs / n:7.1f} ms/frame)")


#: How many times :func:`pass_throughput` observes its radar frames with and without the contributor table.
RADAR_ROUNDS = 10


def pass_throughput(rig_kw: dict[str, Any], frames: int = 4) -> dict[str, float]:
    """Frames per second of each pass on its own: render (or scan / detect) plus encoding its file(s);
    ``radar+contributors`` is the radar pass with its contributor table computed and encoded (issue 26; the
    observer's writer thread writes the file).

    Camera passes share one cast, so each figure includes it; ``truth`` is the per-frame cost of the
    surface table, motion field and both correspondences with the previous frame, encoded.
    """
    # spawned child: the module top is imported by the measured process
    from simready.measurement.folder import OutputFolder
    # spawned child: the module top is imported by the measured process
    from simready.measurement.plan import sensor_rng
    # spawned child: the module top is imported by the measured process
    from simready.measurement.writers import CameraTruth, write_camera
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.camera import render_frame
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.lidar import scan, write_ply_ascii
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.radar import contributors_parquet, detect, write_radar_csv
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.scene_build import ego_track
    # spawned child: the module top is imported by the measured process
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
                                                                         ignore=ignore),
                                 rig.sensors["front_camera"].near_m)
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
        # Radar with and without its contributor table, frame by frame in turn (after one warm-up frame), so a
        # loaded machine slows both alike; the frames RADAR_ROUNDS times over (a frame is ~3 ms, and one pass over
        # them had read anywhere from -8 % to +34 % for the table on one host).
        detect(scene, rig, "front_radar", 0.0, sensor_rng(0, 0), ignore=ignore)
        plain = with_table = 0.0
        for k in list(range(frames)) * RADAR_ROUNDS:
            t0 = time.perf_counter()
            write_radar_csv(Path(tmp) / "r.csv", detect(scene, rig, "front_radar", k / 13.0, sensor_rng(0, k),
                                                        ignore=ignore))
            t1 = time.perf_counter()
            det, contributors = detect(scene, rig, "front_radar", k / 13.0, sensor_rng(0, k), ignore=ignore,
                                       contributors=True)
            write_radar_csv(Path(tmp) / "r.csv", det)
            contributors_parquet(contributors)  # the observer's writer thread writes the file
            plain, with_table = plain + t1 - t0, with_table + time.perf_counter() - t1
        out["radar"] = RADAR_ROUNDS * frames / plain
        out["radar+contributors"] = RADAR_ROUNDS * frames / with_table
    return out


def truth_vs_render(rig_kw: dict[str, Any], frames: int = 3) -> dict[str, float]:
    """ms per frame of the perception truth (surface table, motion field, both correspondences with the
    previous frame, tables encoded: ``truth_ms``), of the tables' encoding alone (Parquet, part of the first
    figure: ``encode_ms``), and of the camera render it sits on (every camera pass, RGB included: ``render_ms``),
    interleaved frame by frame in this process; medians. Each also in CPU time of the process (``*_cpu_ms``):
    both run on this one thread, and on a loaded host the wall figures swing with the other processes while the
    CPU ones do not. Then, over every correspondence, the points in view and how many of them the target's
    buffers could not decide (re-cast), as the tables' metadata records them (``in_view``, ``recast``)."""
    import pyarrow.parquet as pq  # spawned child: the module top is imported by the measured process

    # spawned child: the module top is imported by the measured process
    from simready.measurement.folder import OutputFolder
    # spawned child: the module top is imported by the measured process
    from simready.measurement.writers import CameraTruth
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.camera import render_frame
    # spawned child: the module top is imported by the measured process
    from simready.sensors_hw.scene_build import ego_track
    # spawned child: the module top is imported by the measured process
    from simready.truth.correspondence import FrameView

    class TimedFolder(OutputFolder):
        """Writes at once (no writer thread), adding up the seconds its writers take (wall and CPU)."""
        encode_s = encode_cpu_s = 0.0

        def _later(self, job: Any) -> None:
            t, c = time.perf_counter(), time.process_time()
            job()
            self.encode_s += time.perf_counter() - t
            self.encode_cpu_s += time.process_time() - c

    built, rig, _ = street_sample(frames / 20.0 + 0.2, **rig_kw)
    rig = rig.on_body(ego_track(built))
    model = rig.sensors["front_camera"]
    ms: dict[str, list[float]] = {k: [] for k in ("render_ms", "truth_ms", "encode_ms", "render_cpu_ms",
                                                  "truth_cpu_ms", "encode_cpu_ms")}
    with tempfile.TemporaryDirectory() as tmp:
        folder = TimedFolder(Path(tmp), writer_thread=False)
        try:
            truth = CameraTruth(built, rig, "front_camera")
            for k in range(frames + 1):
                t0, c0 = time.perf_counter(), time.process_time()
                f = render_frame(built.scene, rig, "front_camera", k / 20.0, ("depth", "id", "semantic", "rgb"),
                                 ignore=built.ignore)
                t1, c1 = time.perf_counter(), time.process_time()
                folder.encode_s = folder.encode_cpu_s = 0.0
                truth.frame(folder, FrameView.of_frame(f, model, k), f)
                folder.drain()
                t2, c2 = time.perf_counter(), time.process_time()
                if k:  # frame 0 has no pair yet (and warms the caches)
                    for key, value in (("render_ms", t1 - t0), ("truth_ms", t2 - t1), ("encode_ms", folder.encode_s),
                                       ("render_cpu_ms", c1 - c0), ("truth_cpu_ms", c2 - c1),
                                       ("encode_cpu_ms", folder.encode_cpu_s)):
                        ms[key].append(1000 * value)
        finally:
            folder.close()
        in_view = recast = 0
        for entry in folder.entries:
            if entry.pass_name in ("truth.forward", "truth.backward"):
                meta = pq.read_schema(folder.root / entry.path).metadata[b"simready.truth"]
                counts = json.loads(meta)["visibility"]
                in_view, recast = in_view + counts["in_view"], recast + counts["recast"]
    out = {key: float(np.median(v)) for key, v in ms.items()}
    out["in_view"], out["recast"] = in_view, recast
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
    if width_px * height_px >= 1280 * 720:
        zst = fig["bytes"] - fig["depth_bytes"] + fig["depth_zst_bytes"]
        print(f"  bytes per sample {fig['bytes'] / 1e9:.2f} GB ({fig['bytes'] / 1e6 / max(fig['frames'].values()):.1f} "
              f"MB per camera frame); with the opt-in compressed depth (f32.zst) {zst / 1e9:.2f} GB  "
              f"[target <= {BYTES_TARGET_GB} GB for 200 full-resolution frames]")
    rays, rates = fig["rays"], fig["bare_rays_per_s"]
    floor_s = sum(rays[k] / rates[k] for k in rays)
    print(f"  rays cast {rays['cast'] / 1e6:.0f} M (nearest hit) + {rays['occluded'] / 1e6:.0f} M (any hit); at bare "
          f"Embree rates ({rates['cast'] / 1e6:.1f} and {rates['occluded'] / 1e6:.1f} M rays per CPU second, one "
          f"camera frame against the world frozen) {floor_s:.1f} s; the sample {fig['cpu_s']:.1f} s of CPU: "
          f"{fig['cpu_s'] / floor_s:.2f}x  [target <= {SAMPLE_TARGET_X}x]")
    ok = "within" if fig["peak_rss_mb"] <= MEMORY_BUDGET_MB else "OVER"
    print(f"  peak memory {fig['peak_rss_mb']:.0f} MiB for {sum(fig['frames'].values())} samples "
          f"({ok} the {MEMORY_BUDGET_MB:.0f} MiB budget; the child's VmHWM, imports included)")
    per_pass = pass_throughput(rig_kw)
    print(f"[per pass, camera {width_px}x{height_px} rolling shutter, LiDAR 64x1024 ASCII PLY, radar CSV]")
    for name, fps in per_pass.items():
        print(f"  {name:<18} {fps:7.2f} frames/s  ({1000 / fps:7.1f} ms/frame)")
    extra = per_pass["radar"] / per_pass["radar+contributors"] - 1.0
    print(f"  radar contributor table: +{100 * extra:.1f} % of the radar pass (target <= 10 %)")
    fig["per_pass_fps"] = per_pass
    tr = truth_vs_render(rig_kw)
    for clock, sfx in (("wall", ""), ("CPU", "_cpu")):
        truth_ms, encode_ms, render_ms = tr[f"truth{sfx}_ms"], tr[f"encode{sfx}_ms"], tr[f"render{sfx}_ms"]
        print(f"[truth per camera frame {width_px}x{height_px}, {clock}] {truth_ms:7.1f} ms beside the camera render "
              f"(every pass) {render_ms:7.1f} ms: {truth_ms / render_ms:.2f}x  [target <= 0.7x]; of which the tables' "
              f"Parquet encoding {encode_ms:7.1f} ms ({encode_ms / render_ms:.2f}x), computing them "
              f"{truth_ms - encode_ms:7.1f} ms ({(truth_ms - encode_ms) / render_ms:.2f}x)")
    in_view, recast = tr["in_view"], tr["recast"]
    print(f"  visibility: {recast} of {in_view} correspondence points in view re-cast where the target's buffers "
          f"could not decide ({100 * recast / max(in_view, 1):.1f} %)")
    fig["truth_ms"], fig["truth_encode_ms"], fig["render_ms"] = tr["truth_ms"], tr["encode_ms"], tr["render_ms"]
    fig["truth_cpu_ms"], fig["truth_encode_cpu_ms"], fig["render_cpu_ms"] = (tr["truth_cpu_ms"], tr["encode_cpu_ms"],
                                                                             tr["render_cpu_ms"])
    fig["truth_in_view"], fig["truth_recast"] = in_view, recast
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
