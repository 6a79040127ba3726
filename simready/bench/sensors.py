"""Measurement-engine benchmark on a small procedural street (no catalog needed).

``python -m simready.bench.sensors`` prints, for this machine:

* LiDAR 64 × 1800 with per-beam timing (ms per scan) beside a bare Embree
  cast of the same world rays against the same geometry posed at one time,
  and their ratio (the cost of modelling time inside the sweep); beside the same rays cast through the query the
  sweep casts with (Embree's 8-ray packets, :mod:`simready.raycast.embree_direct`); and the sweep with its points read
  too (a sweep computes them when first read: in a run, on the file writer's thread);
* camera 1280×720 depth + id + semantic with a rolling shutter (ms per frame);
* the same frame with RGB and one sun shadow ray per lit pixel (ms per frame), both beside a bare
  Embree cast of the same frame's rays against the world frozen at one time (the floor);
* the ASCII PLY body of one 64 × 1800 sweep (with per-point time), formatted a string per point (the writer
  before issue 18) and a column at a time (the writer now), ms per sweep, and whether the bytes agree.

Figures are the median of a few repetitions of each call's CPU time (``time.process_time``: every call here
runs on the calling thread, and a loaded machine's waiting is left out), the calls interleaved; the cores are
shared, so read them as ratios within one run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from simready.raycast.embree_direct import intersect_query, ray_packet, scene_handle
from simready.raycast.kernels import intersect_rows
from simready.sensors_hw.camera import Lighting, camera_poses, camera_rays, render_frame
from simready.sensors_hw.lidar import ascii_body, ascii_body_per_point, lidar_rays, scan
from simready.sensors_hw.models import Rig
from simready.testing.street import EGO_ID, street_scene
from simready.world.motion import PoseTrack

def bench_rig(ego: PoseTrack) -> Rig:
    """Roof LiDAR 64 × 1800 at 10 Hz and a 1280×720 rolling-shutter front camera."""
    return Rig.from_dict({
        "mounts": {
            "front_camera": {"type": "camera", "translation_m": [1.5, 0.0, 1.6]},
            "top_lidar": {"type": "lidar", "translation_m": [0.0, 0.0, 1.9]},
        },
        "sensors": {
            "front_camera": {"width_px": 1280, "height_px": 720, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 300.0,
                             "rate_hz": 20.0, "phase_s": 0.0, "shutter": "rolling", "line_time_s": 2.0e-5,
                             "distortion_k1": -0.05},
            "top_lidar": {"channels": 64, "vertical_fov_deg": [-25.0, 15.0], "rotation_hz": 10.0,
                          "azimuth_steps": 1800, "max_range_m": 120.0, "phase_s": 0.0},
        },
    }, body=ego)


def _timings(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, tuple[float, float]]:
    """(median, best) CPU ms per call; the calls are interleaved so a noisy neighbour hits all alike."""
    for fn in calls.values():
        fn()  # warm caches (pixel rays, beam tables, remap taps)
    samples: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            t0 = time.process_time()
            fn()
            samples[name].append(1000.0 * (time.process_time() - t0))
    return {k: (float(np.median(v)), float(np.min(v))) for k, v in samples.items()}


def measure(subdivisions: int, repeats: int) -> dict[str, tuple[float, float]]:
    scene, bodies = street_scene(subdivisions=subdivisions)
    rig = bench_rig(bodies[EGO_ID].track)
    t0 = 0.5
    rng = np.random.default_rng(0)
    origins, dirs, _ = lidar_rays(rig, "top_lidar", t0)
    bare_scene = scene.embree_scene_at(t0, ignore=[EGO_ID])  # the sensors do not see their carrier either
    cam_o, cam_d = camera_rays(rig.sensors["front_camera"], camera_poses(rig, "front_camera", t0))
    # The same rays through the query the sweep casts with (8-ray packets where Embree's check passes), packed from
    # the same arrays: the sweep's own floor beside embreex's one-ray loop.
    fn, k = intersect_query()
    handle = scene_handle(bare_scene)
    tfar = np.full(len(origins), np.float32(rig.lidar("top_lidar").max_range_m))
    packet = ray_packet(max(k, 1))
    out_f, out_i = np.empty((len(origins), 6), np.float32), np.empty((len(origins), 2), np.int32)
    # And the camera's rays through it, 8 consecutive pixels of a row a call (as SceneGeometry.cast casts them).
    cam_far = np.full(len(cam_o), np.float32(rig.sensors["front_camera"].far_m))
    cam_f, cam_i = np.empty((len(cam_o), 6), np.float32), np.empty((len(cam_o), 2), np.int32)
    return _timings({
        "bare": lambda: bare_scene.run(origins, dirs, output=1),
        "bare_query": lambda: intersect_rows(fn, handle, *packet, origins, dirs, tfar, out_f, out_i) if fn else None,
        "bare_camera": lambda: bare_scene.run(cam_o, cam_d, output=1),
        "bare_camera_query": lambda: (intersect_rows(fn, handle, *packet, cam_o, cam_d, cam_far, cam_f, cam_i)
                                      if fn else None),
        "lidar": lambda: scan(scene, rig, "top_lidar", t0, rng, ignore=[EGO_ID]),
        "camera": lambda: render_frame(scene, rig, "front_camera", t0, ("depth", "id", "semantic"), ignore=[EGO_ID]),
        "rgb": lambda: render_frame(scene, rig, "front_camera", t0, ("depth", "id", "semantic", "rgb"),
                                    lighting=Lighting(), ignore=[EGO_ID]),
        "lidar_points": lambda: scan(scene, rig, "top_lidar", t0, rng, ignore=[EGO_ID]).points_sensor,
    }, repeats)


def measure_ply(repeats: int) -> tuple[dict[str, tuple[float, float]], int, bool]:
    """ms per sweep of both ASCII formatters on one street sweep, its point count, and whether they agree."""
    scene, bodies = street_scene(subdivisions=2)
    rig = bench_rig(bodies[EGO_ID].track)
    sweep = scan(scene, rig, "top_lidar", 0.5, np.random.default_rng(0), ignore=[EGO_ID])
    p = sweep.points_sensor
    cols = {"x": p[:, 0], "y": p[:, 1], "z": p[:, 2], "intensity": sweep.intensity,
            "instance_id": sweep.instance_id, "t": sweep.t_s}
    same = ascii_body(cols) == ascii_body_per_point(cols)
    return _timings({"per_point": lambda: ascii_body_per_point(cols), "columns": lambda: ascii_body(cols)},
                    repeats), len(sweep), same


def run(repeats: int = 9) -> dict[str, dict[str, tuple[float, float]]]:
    """Measure and print (median and best of ``repeats``); returns the figures for callers that log them."""
    out = {}
    for label, k in (("street, ~2.5k triangles", 2), ("plain boxes, 156 triangles", 0)):
        m = measure(k, repeats)
        out[label] = m
        (lid, lid_b), (bare, bare_b) = m["lidar"], m["bare"]
        (cam, cam_b), (rgb, rgb_b), (bcam, bcam_b) = m["camera"], m["rgb"], m["bare_camera"]
        print(f"[{label}] CPU time, median (best) of {repeats}")
        print(f"  LiDAR 64x1800 per-beam timing : {lid:6.1f} ({lid_b:5.1f}) ms/scan; bare Embree, same rays, "
              f"world frozen: {bare:5.1f} ({bare_b:5.1f}) ms; ratio {lid / bare:.2f}x ({lid_b / bare_b:.2f}x)"
              f"  [target <= 60 ms, <= 1.3x]")
        query, query_b = m["bare_query"]
        if intersect_query()[0]:
            print(f"  the same rays through the sweep's Embree query ({intersect_query()[1]} rays a call): {query:5.1f} "
                  f"({query_b:5.1f}) ms; LiDAR {lid / query:.2f}x ({lid_b / query_b:.2f}x) that floor")
        pts, pts_b = m["lidar_points"]
        print(f"  the same with its points read   : {pts:6.1f} ({pts_b:5.1f}) ms/scan; ratio {pts / bare:.2f}x "
              f"({pts_b / bare_b:.2f}x)")
        print(f"  camera 1280x720 depth+id+sem RS: {cam:6.1f} ({cam_b:5.1f}) ms/frame  [target <= 300 ms]")
        print(f"  + RGB, sun shadow ray per pixel: {rgb:6.1f} ({rgb_b:5.1f}) ms/frame, {rgb / cam:.2f}x the frame above")
        print(f"  bare Embree cast of the frame's rays, world frozen: {bcam:5.1f} ({bcam_b:5.1f}) ms; camera "
              f"depth+id+sem {cam / bcam:.2f}x, camera + RGB {rgb / bcam:.2f}x ({rgb_b / bcam_b:.2f}x)  [target <= 2x]")
        if intersect_query()[0]:
            (cq, cq_b) = m["bare_camera_query"]
            print(f"  the same rays through the cast's Embree query ({intersect_query()[1]} rays a call): {cq:5.1f} "
                  f"({cq_b:5.1f}) ms; camera depth+id+sem {cam / cq:.2f}x, camera + RGB {rgb / cq:.2f}x that floor")
    ply, points, same = measure_ply(repeats)
    (before, before_b), (after, after_b) = ply["per_point"], ply["columns"]
    print(f"[ASCII PLY, one 64x1800 sweep of the street, {points} points with per-point time] median (best)")
    print(f"  a string per point (before): {before:6.1f} ({before_b:5.1f}) ms/sweep; a column at a time (now): "
          f"{after:6.1f} ({after_b:5.1f}) ms/sweep; {before / after:.1f}x; bytes {'identical' if same else 'DIFFER'}")
    out["ply"] = ply
    return out


if __name__ == "__main__":
    run()
