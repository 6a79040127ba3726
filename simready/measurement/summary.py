"""What an observation folder says about itself besides the sensor files: the records of
``results.json``, ``observed-frames.jsonl`` and ``parity.json`` (:mod:`simready.artifacts.records`) and the render
job (``job/render-job.json``, ``job/<camera>.poses.npz``)."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.common.atomic import write_json_atomic
from simready.artifacts.layout import ObservationDir
from simready.measurement.folder import OutputFolder
from simready.measurement.options import ObserveOptions
from simready.artifacts.records import (ActorParity, CameraFrame, Distortion, FrameProjection, ObservedActor, ObservedFrame,
                              Parity, ParityTolerance, Projection, SampleTime, SampleTimes)
from simready.sensors_hw.atmosphere import Atmosphere
from simready.sensors_hw.camera import PASSES as CAMERA_PASSES
from simready.sensors_hw.camera import DEPTH_CONVENTION, Lighting, pinhole
from simready.sensors_hw.models import CameraModel, Rig
from simready.sensors_hw.scene_build import BuiltScene
from simready.sensors_hw.schedule import pairing_table
from simready.sensors_hw.trace_input import TraceInput
from simready.truth.correspondence import FrameView
from simready.world.frames import quat_angle_between

#: 2: render.json without timings or memory, render-job.json with its trace relative to the job (issue 15).
#: 3: the published layout exactly (issue 18): results.json ``artifacts`` with ``sensorId``, each camera frame's
#: ``projection`` and ``sampleTime``; depth as near_m / z (0: no hit), id = R + 256·G + 65536·B, the semantic class
#: in the blue channel of an 8-bit RGB PNG; the sensors' frames declared in render.json and the PLY header.
OBSERVE_VERSION = "simready-observe-3"
#: Parity: observed poses must match the trace this closely.
PARITY_TOL_M = 1e-6
PARITY_TOL_RAD = 1e-6


def sensor_passes(rig: Rig, name: str, passes: tuple[str, ...]) -> list[str]:
    """The passes a sensor wrote: a camera's rendered passes and its truth, else the sensor's type."""
    kind = rig.mounts[name].type.value
    if kind == "camera":
        truth = ["truth.surface", "truth.motion_field", "truth.forward", "truth.backward"] if "truth" in passes else []
        return [p for p in CAMERA_PASSES if p in passes] + truth
    return [kind]


def projection(model: CameraModel) -> Projection:
    """A camera's projection as results.json gives it: intrinsics, distortion, shutter and clip range."""
    return Projection(**pinhole(model).dump(),
                      distortion=Distortion(model="brown", k1=model.distortion_k1, k2=model.distortion_k2,
                                            applies_to=["rgb"]),
                      shutter=model.shutter, line_time_s=model.line_time_s, near_m=model.near_m, far_m=model.far_m)


def _pose_json(T: NDArray[np.float64]) -> list[list[float]]:
    return [[float(x) for x in row] for row in T]


def frame_projection(model: CameraModel) -> FrameProjection:
    """A camera frame's projection in the published layout's terms (SPEC §10)."""
    half_h = math.tan(math.radians(model.hfov_deg) / 2.0) * model.height_px / model.width_px
    return FrameProjection(kind="pinhole", fov_y_deg=math.degrees(2.0 * math.atan(half_h)), near_m=model.near_m,
                           far_m=model.far_m, depth=DEPTH_CONVENTION)


def camera_record(view: FrameView) -> CameraFrame:
    """A camera frame in results.json: its projection and sample time as the published layout gives them, and
    beside them its row sample times (rule + ends) and first/last-row poses."""
    rt = view.row_times_s
    return CameraFrame(tick=view.tick, t0_s=view.t0_s, projection=frame_projection(view.model),
                       sample_time=SampleTime(seconds=float(rt[0])),
                       sample_times_s=SampleTimes(first_row=float(rt[0]), last_row=float(rt[-1]), rows=int(len(rt)),
                                                  line_time_s=0.0 if view.global_shutter else view.model.line_time_s,
                                                  rule="row r is sampled at first_row + r * line_time_s"),
                       T_world_camera_first_row=_pose_json(view.T_world_camera[0]),
                       T_world_camera_last_row=_pose_json(view.T_world_camera[-1]))


class ActorPoses:
    """Every actor's state at every sample time of one observation, each actor's track sampled once for all of
    them (one vectorized :meth:`~simready.world.motion.PoseTrack.sample` per actor instead of one per actor and
    sample: the same rows, element by element, for a fraction of the Python calls)."""

    def __init__(self, built: BuiltScene, actor_bodies: Mapping[str, int], times_s: Iterable[float]) -> None:
        times = np.array(list(times_s), np.float64)
        self._row = {float(t): i for i, t in enumerate(times.tolist())}
        self._samples = {entity: built.scene.bodies[b].track.sample(times, clamp=True)
                         for entity, b in actor_bodies.items()}

    def actor(self, entity: str, t_s: float, visible: bool) -> ObservedActor | None:
        """The entity's :class:`ObservedActor` at ``t_s`` (None: a time or an actor not sampled here)."""
        i, smp = self._row.get(t_s), self._samples.get(entity)
        if i is None or smp is None:
            return None
        return ObservedActor(position=smp.position_m[i].tolist(), rotation_xyzw=smp.quat_xyzw[i].tolist(),
                             present=bool(smp.present[i]), visible=visible)


def observed_frame(built: BuiltScene, sensor: str, tick: int, t_s: float, actor_bodies: Mapping[str, int],
                   seen: set[int], poses: ActorPoses | None = None) -> ObservedFrame:
    """One sensor sample's line of observed-frames.jsonl: every actor's pose at ``t_s`` and whether the sample
    saw it (``seen``: the body indices it hit); ``poses``: the actors' states sampled ahead (:class:`ActorPoses`)."""
    actors = {}
    for entity, b in sorted(actor_bodies.items()):
        ahead = poses.actor(entity, t_s, b in seen) if poses is not None else None
        if ahead is not None:
            actors[entity] = ahead
            continue
        smp = built.scene.bodies[b].track.sample([t_s], clamp=True)
        actors[entity] = ObservedActor(position=smp.position_m[0].tolist(), rotation_xyzw=smp.quat_xyzw[0].tolist(),
                                       present=bool(smp.present[0]), visible=b in seen)
    return ObservedFrame(sensor=sensor, tick=tick, t_s=t_s, actors=actors)


def parity(built: BuiltScene, trace: TraceInput, t_lo: float, t_hi: float) -> Parity:
    """Observed poses (the geometric authority's tracks at the trace's ticks) vs the trace's rows."""
    df = trace.ticks
    per_actor: dict[str, ActorParity] = {}
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
        per_actor[entity] = ActorParity(ticks=int(len(rows)), max_position_error_m=pos_err, max_angle_error_rad=ang_err)
        worst_m, worst_rad = max(worst_m, pos_err), max(worst_rad, ang_err)
    return Parity(compared="geometry-authority pose at every trace tick in the observed window vs the trace row",
                  window_s=[t_lo, t_hi], tolerance=ParityTolerance(position_m=PARITY_TOL_M, angle_rad=PARITY_TOL_RAD),
                  max_position_error_m=worst_m, max_angle_error_rad=worst_rad,
                  passed=worst_m <= PARITY_TOL_M and worst_rad <= PARITY_TOL_RAD, actors=per_actor)


def write_job(folder: OutputFolder, rig: Rig, resolved: Mapping[str, Any], options: ObserveOptions,
              seeds: Mapping[str, int], lighting: Lighting, schedules: Mapping[str, Any], cameras: Iterable[str],
              cam_records: Mapping[str, list[CameraFrame]], cam_poses: Mapping[str, list[NDArray]],
              provenance: Mapping[str, Any] | None, atmosphere: Atmosphere) -> None:
    """The render job: exact inputs (provenance, rig, seeds, schedules, pairing tables) and every camera
    row's pose of every frame."""
    pairing = {}
    for cam in cameras:
        others = {n: s for n, s in schedules.items() if n != cam and not isinstance(rig.sensors[n], CameraModel)}
        rows = pairing_table(schedules[cam], others, options.pairing_policy)
        observed_ticks = {r.tick for r in cam_records[cam]}
        pairing[cam] = [r for r in rows if r["camera_tick"] in observed_ticks]
    poses = {}
    for cam in cameras:
        rel = ObservationDir.camera_poses_name(cam)
        buf = io.BytesIO()
        ticks = np.array([r.tick for r in cam_records[cam]], np.int64)
        T = np.stack(cam_poses[cam]) if cam_poses[cam] else np.zeros((0, 0, 4, 4))
        np.savez_compressed(buf, tick=ticks, T_world_camera=T)
        folder.put(rel, buf.getvalue(), cam, None, "camera_poses")
        poses[cam] = {"every_row": rel, "array": "T_world_camera (frames, rows, 4, 4), optical frame",
                      "frames": [r.dump() for r in cam_records[cam]]}
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
    write_json_atomic(folder.layout.render_job, job)
    folder.add_written(ObservationDir.RENDER_JOB_NAME, None, None, "render_job")
