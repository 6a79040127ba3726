"""A small procedural street for tests and benchmarks: boxes for the road, sidewalks, buildings, cars, a
pedestrian and the ego, with constant-velocity tracks (no catalog needed).

``street_scene`` is the Embree scene of it (the sensor benchmarks cast against it); ``street_sample`` the
same street as a built scene, rig and trace, as the measurement stage gets them (the observe benchmark and
the observation tests render it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import trimesh

from simready.raycast.geometry import Body, SceneGeometry
from simready.sensors_hw.models import Rig
from simready.sensors_hw.scene_build import BuiltScene, Entity, rig_from_sensor_rig
from simready.sensors_hw.trace_input import TraceInput, trace_from_ticks
from simready.world.frames import make_transform, quat_from_yaw, rot_z
from simready.world.identity import actor_id
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


SAMPLE_ID = "bench-street"
TEMPLATE_ID = "bench_street"
DT_S = 0.02

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
