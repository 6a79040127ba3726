"""Measurement-engine benchmark on a small procedural street (no catalog needed).

``python -m simready.bench.sensors`` prints, for this machine:

* LiDAR 64 × 1800 with per-beam timing (ms per scan) beside a bare Embree
  cast of the same world rays against the same geometry posed at one time,
  and their ratio (the cost of modelling time inside the sweep);
* camera 1280×720 depth + id + semantic with a rolling shutter (ms per frame);
* the same frame with RGB and one sun shadow ray per lit pixel (ms per frame).

Figures are the median of a few repetitions; the cores are shared, so read
them as ratios within one run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import trimesh

from simready.raycast.geometry import Body, SceneGeometry
from simready.sensors_hw.camera import Lighting, render_frame
from simready.sensors_hw.lidar import lidar_rays, scan
from simready.sensors_hw.models import Rig
from simready.world.frames import make_transform, quat_from_yaw, rot_z
from simready.world.motion import PoseTrack

EGO_ID = "bench/actor:ego"


def linear_track(start_xyz: tuple[float, float, float], velocity_mps: tuple[float, float, float],
                 yaw_rad: float = 0.0, t_end_s: float = 2.0, dt_s: float = 0.02) -> PoseTrack:
    """Constant-velocity track sampled like a trace (ticks every ``dt_s``)."""
    t = np.round(np.arange(0.0, t_end_s + dt_s / 2, dt_s), 12)
    v = np.asarray(velocity_mps, np.float64)
    return PoseTrack(t_s=t, position_m=np.asarray(start_xyz) + t[:, None] * v,
                     quat_xyzw=np.tile(quat_from_yaw(yaw_rad), (len(t), 1)),
                     velocity_mps=np.tile(v, (len(t), 1)), angular_velocity_rps=np.zeros((len(t), 3)))


def box_body(entity_id: str, extents_m: tuple[float, float, float], track: PoseTrack,
             semantic_class_id: int, albedo: tuple[float, float, float], reflectance: float,
             centre_body_m: tuple[float, float, float] | None = None, subdivisions: int = 0) -> Body:
    """A box body; by default its base sits on the body origin (the footprint convention).

    ``subdivisions`` splits every triangle into four that many times (same
    shape, 12·4^k triangles), to give the casts a realistic triangle count.
    """
    mesh = trimesh.creation.box(extents_m)
    v, f = mesh.vertices, mesh.faces
    for _ in range(subdivisions):
        v, f = trimesh.remesh.subdivide(v, f)
    centre = (0.0, 0.0, extents_m[2] / 2) if centre_body_m is None else centre_body_m
    return Body(entity_id, v + np.asarray(centre), f, f"procedural:box:{extents_m}:{subdivisions}", "render.obj",
                semantic_class_id, albedo, reflectance, track)


def street_scene(t_end_s: float = 2.0, subdivisions: int = 0) -> tuple[SceneGeometry, dict[str, Body]]:
    """Road slab, two sidewalks, six buildings, two cars and a pedestrian (moving), plus the ego.

    The road runs along +x; the ego drives at 10 m/s along it from x = 0.
    With ``subdivisions=2`` the street has about 2 500 triangles, like the
    street measured in NOTES.md.
    """
    static = PoseTrack.constant
    k = subdivisions

    def box(*args, **kw) -> Body:
        return box_body(*args, **kw, subdivisions=k)

    bodies = [
        box("bench/instance:road", (200.0, 14.0, 0.2), static(make_transform(np.eye(3), [40, 0, -0.2])),
            1, (0.25, 0.25, 0.27), 0.15),
        box("bench/instance:sidewalk_n", (200.0, 4.0, 0.15), static(make_transform(np.eye(3), [40, 9, 0])),
            2, (0.6, 0.6, 0.58), 0.3),
        box("bench/instance:sidewalk_s", (200.0, 4.0, 0.15), static(make_transform(np.eye(3), [40, -9, 0])),
            2, (0.6, 0.6, 0.58), 0.3),
    ]
    for i, (x, side, h) in enumerate([(10, 1, 12), (35, 1, 20), (60, 1, 9), (15, -1, 15), (45, -1, 25), (75, -1, 11)]):
        bodies.append(box(f"bench/instance:building_{i}", (18.0, 10.0, float(h)),
                          static(make_transform(rot_z(0.0), [x, side * 17.0, 0.0])), 3, (0.55, 0.45, 0.4), 0.4))
    bodies += [
        box("bench/actor:car_1", (4.5, 1.9, 1.5), linear_track((25.0, -3.5, 0.0), (-8.0, 0.0, 0.0), np.pi, t_end_s),
            10, (0.7, 0.1, 0.1), 0.6),
        box("bench/actor:car_2", (4.5, 1.9, 1.5), linear_track((18.0, 3.5, 0.0), (12.0, 0.0, 0.0), 0.0, t_end_s),
            10, (0.1, 0.2, 0.7), 0.6),
        box("bench/actor:ped_1", (0.5, 0.6, 1.75), linear_track((14.0, 7.0, 0.0), (0.0, -1.4, 0.0), -np.pi / 2, t_end_s),
            20, (0.4, 0.5, 0.3), 0.3),
        box(EGO_ID, (4.6, 1.9, 1.5), linear_track((0.0, 0.0, 0.0), (10.0, 0.0, 0.0), 0.0, t_end_s), 10,
            (0.8, 0.8, 0.8), 0.6),
    ]
    scene = SceneGeometry(bodies, separate=[EGO_ID])
    return scene, {b.entity_id: b for b in bodies}


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
    """(median, best) ms per call; the calls are interleaved so a noisy neighbour hits all alike."""
    for fn in calls.values():
        fn()  # warm caches (pixel rays, beam tables, remap taps)
    samples: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(1000.0 * (time.perf_counter() - t0))
    return {k: (float(np.median(v)), float(np.min(v))) for k, v in samples.items()}


def measure(subdivisions: int, repeats: int) -> dict[str, tuple[float, float]]:
    scene, bodies = street_scene(subdivisions=subdivisions)
    rig = bench_rig(bodies[EGO_ID].track)
    t0 = 0.5
    rng = np.random.default_rng(0)
    origins, dirs, _ = lidar_rays(rig, "top_lidar", t0)
    bare_scene = scene.embree_scene_at(t0, ignore=[EGO_ID])  # the sensors do not see their carrier either
    return _timings({
        "bare": lambda: bare_scene.run(origins, dirs, output=1),
        "lidar": lambda: scan(scene, rig, "top_lidar", t0, rng, ignore=[EGO_ID]),
        "camera": lambda: render_frame(scene, rig, "front_camera", t0, ("depth", "id", "semantic"), ignore=[EGO_ID]),
        "rgb": lambda: render_frame(scene, rig, "front_camera", t0, ("depth", "id", "semantic", "rgb"),
                                    lighting=Lighting(), ignore=[EGO_ID]),
    }, repeats)


def run(repeats: int = 5) -> dict[str, dict[str, tuple[float, float]]]:
    """Measure and print (median and best of ``repeats``); returns the figures for callers that log them."""
    out = {}
    for label, k in (("street, ~2.5k triangles", 2), ("plain boxes, 156 triangles", 0)):
        m = measure(k, repeats)
        out[label] = m
        (lid, lid_b), (bare, bare_b) = m["lidar"], m["bare"]
        (cam, cam_b), (rgb, rgb_b) = m["camera"], m["rgb"]
        print(f"[{label}] median (best) of {repeats}")
        print(f"  LiDAR 64x1800 per-beam timing : {lid:6.1f} ({lid_b:5.1f}) ms/scan; bare Embree, same rays, "
              f"world frozen: {bare:5.1f} ({bare_b:5.1f}) ms; ratio {lid / bare:.2f}x ({lid_b / bare_b:.2f}x)"
              f"  [target <= 60 ms, <= 1.5x]")
        print(f"  camera 1280x720 depth+id+sem RS: {cam:6.1f} ({cam_b:5.1f}) ms/frame  [target <= 300 ms]")
        print(f"  + RGB, sun shadow ray per pixel: {rgb:6.1f} ({rgb_b:5.1f}) ms/frame, {rgb / cam:.2f}x the frame above"
              f"  [target <= 2x]")
    return out


if __name__ == "__main__":
    run()
