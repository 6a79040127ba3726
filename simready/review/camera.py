"""The camera as the review page shows it: each frame with the LiDAR points and the truth boxes projected over it
(issue 28 item 8), drawn in the page from ``review-camera.js`` beside ``review.html``.

Everything is derived from an observation folder's published files and the trace it observed, never copied from
the sensors' internals (SPEC §0):

* the camera's intrinsics and distortion from ``results.json`` (``projection``), and its pose at every row of
  every frame from ``job/<camera>.poses.npz`` (``T_world_camera``, optical frame: x right, y down, z forward);
* the LiDAR points from the sweep's PLY (the sensor frame at each beam's own time: x forward, y left, z up), the
  sweep being the one whose firing window holds the frame's first row; a point fired at ``t`` goes to the world
  by the ego's pose at ``t`` from the trace (``T_world_body(t) @ T_body_lidar`` with the rig of ``render.json``),
  which is how the sensor placed it; a point on an actor (its ``instance_id`` is the actor's compact id in
  ``legend.json``) then moves with that actor from ``t`` to the frame's time, so a point fired up to a sweep
  later or earlier than the frame still lies on the actor the camera shows;
* the boxes from ``observed-frames.jsonl`` (each actor's pose at the frame, whether the camera saw it) and the
  trace header's ``actor_dims`` (length, width, height; the box stands on the body origin, the footprint centre);
  the camera's own carrier (the ego) is left out.

A world point projects with the pose of the row that sees it (the rolling shutter): first with the middle row's
pose, then once more with the pose of the row it landed on (the readout moves a point by a fraction of a row).
The RGB pass's lens distortion is applied, so the drawing lies on the video; the id, depth and semantic passes
are undistorted pinhole (``results.json``).

Per frame the page gets the points as packed little-endian arrays in base64 — ``uint16`` column, ``uint16`` row
(pixel centres at integers), ``uint8`` depth in :data:`DEPTH_STEP_M` steps — one point per pixel (the nearest),
and per box its id, kind, whether the camera saw it, its projected centre and its edges clipped at the near plane.
The same files give the same bytes.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.layout import ObservationDir
from simready.records import CameraFrames, Legend, LidarSweep, ObservedFrame, Render, Results
from simready.sensors_hw.camera import distort_normalized
from simready.sensors_hw.lidar import read_ply
from simready.sensors_hw.models import LidarModel, Rig
from simready.sensors_hw.trace_input import TraceInput, read_trace_input
from simready.world.frames import transform_from_pose

#: Depth of a point on the page, in these steps (m); 255 steps and beyond are drawn alike.
DEPTH_STEP_M = 0.5
#: Box coordinates on the page are rounded to this many decimals (px).
BOX_DECIMALS = 1
#: The 12 edges of a box by corner index (corners: x ±, y ±, z 0/h, in :func:`box_corners` order).
BOX_EDGES = ((0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7))
#: Where a rolling-shutter projection starts and how often it moves to the row it landed on.
ROW_ITERATIONS = 2
#: Points are kept one per square of this many pixels (the nearest), drawn as that square.
POINT_CELL_PX = 2
#: A point the middle row's pose puts this far outside the image (a share of its size) is left out unprojected.
NEAR_IMAGE_MARGIN = 0.1


def rotate(R: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``R[i] @ p[i]`` for every i: (n, 3, 3) and (n, 3) → (n, 3)."""
    return np.einsum("nij,nj->ni", R, p)


@dataclass(frozen=True)
class CameraView:
    """One camera frame's projection: intrinsics, the lens distortion of the RGB, and the world → optical
    transform of every row (``R`` (rows, 3, 3), ``t`` (rows, 3): ``p_cam = R @ p + t``)."""

    width_px: int
    height_px: int
    fx: float
    fy: float
    cx: float
    cy: float
    k1: float
    k2: float
    near_m: float
    far_m: float
    R: NDArray[np.float64]
    t: NDArray[np.float64]

    @classmethod
    def of(cls, frames: CameraFrames, T_world_camera_rows: NDArray[np.float64]) -> "CameraView":
        p = frames.projection
        lens = "rgb" in p.distortion.applies_to
        R_wc = T_world_camera_rows[:, :3, :3]
        R = np.transpose(R_wc, (0, 2, 1))
        t = -np.einsum("rij,rj->ri", R, T_world_camera_rows[:, :3, 3])
        return cls(p.width_px, p.height_px, p.fx, p.fy, p.cx, p.cy, p.distortion.k1 if lens else 0.0,
                   p.distortion.k2 if lens else 0.0, p.near_m, p.far_m, R, t)

    def to_camera(self, points_world: NDArray[np.float64], rows: NDArray[np.intp]) -> NDArray[np.float64]:
        """World points in the optical frame of the given rows (one row per point)."""
        return rotate(self.R[rows], points_world) + self.t[rows]

    def pixels(self, p_cam: NDArray[np.float64]) -> NDArray[np.float64]:
        """(u, v) of optical-frame points in front of the camera (z > 0), distorted as the RGB is."""
        xy = p_cam[:, :2] / p_cam[:, 2:3]
        if self.k1 or self.k2:
            xy = distort_normalized(xy, self.k1, self.k2)
        return np.stack([self.fx * xy[:, 0] + self.cx, self.fy * xy[:, 1] + self.cy], axis=1)

    def near_image(self, points_world: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Which world points may land on the image: those that do by the middle row's pose, with
        :data:`NEAR_IMAGE_MARGIN` of the image around it (the rows' poses differ by the camera's motion during
        its readout); a cheap test before :meth:`project`."""
        mid = self.height_px // 2
        p = points_world @ self.R[mid].T + self.t[mid]
        z = p[:, 2]
        ahead = z > self.near_m / 2.0
        with np.errstate(divide="ignore", invalid="ignore"):
            u = self.fx * p[:, 0] / z + self.cx
            v = self.fy * p[:, 1] / z + self.cy
        mu, mv = NEAR_IMAGE_MARGIN * self.width_px, NEAR_IMAGE_MARGIN * self.height_px
        return ahead & (u > -mu) & (u < self.width_px + mu) & (v > -mv) & (v < self.height_px + mv)

    def project(self, points_world: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(uv (n, 2), p_cam (n, 3))`` of world points, each with the pose of the row it lands on; uv is NaN
        where a point lies behind the near plane."""
        n = len(points_world)
        rows = np.full(n, self.height_px // 2, np.intp)
        uv = np.full((n, 2), np.nan)
        p_cam = np.zeros((n, 3))
        for _ in range(ROW_ITERATIONS):
            p_cam = self.to_camera(points_world, rows)
            front = p_cam[:, 2] > self.near_m
            uv[:] = np.nan
            uv[front] = self.pixels(p_cam[front])
            rows = np.where(front, np.clip(np.rint(np.nan_to_num(uv[:, 1])), 0, self.height_px - 1), rows).astype(np.intp)
        return uv, p_cam

    def inside(self, uv: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each (u, v) lies on a pixel of the image."""
        with np.errstate(invalid="ignore"):
            return ((uv[:, 0] >= -0.5) & (uv[:, 0] < self.width_px - 0.5)
                    & (uv[:, 1] >= -0.5) & (uv[:, 1] < self.height_px - 0.5))


def box_corners(length_m: float, width_m: float, height_m: float) -> NDArray[np.float64]:
    """A box's 8 corners in its body frame (x forward, y left, z up; origin at the footprint centre)."""
    return np.array([[sx * length_m / 2.0, sy * width_m / 2.0, z] for z in (0.0, height_m)
                     for sx in (-1.0, 1.0) for sy in (-1.0, 1.0)])


def _box(view: CameraView, T_world_actor: NDArray[np.float64], dims: list[float]) -> dict[str, Any] | None:
    """A box's centre and its edges on the image, each edge clipped at the near plane (in the middle row's
    optical frame); None when no part of it lies in front of the camera."""
    length, width, height = (float(v) for v in dims[:3])
    corners = box_corners(length, width, height) @ T_world_actor[:3, :3].T + T_world_actor[:3, 3]
    mid = np.full(8, view.height_px // 2, np.intp)
    z = view.to_camera(corners, mid)[:, 2]
    ends = []
    for a, b in BOX_EDGES:
        za, zb = z[a] - view.near_m, z[b] - view.near_m
        if za <= 0 and zb <= 0:
            continue
        pa, pb = corners[a], corners[b]
        if za <= 0:
            pa = pb + (pa - pb) * (zb / (zb - za)) * (1 - 1e-9)
        elif zb <= 0:
            pb = pa + (pb - pa) * (za / (za - zb)) * (1 - 1e-9)
        ends += [pa, pb]
    if not ends:
        return None
    uv, _ = view.project(np.array(ends))
    centre_world = T_world_actor[:3, :3] @ np.array([0.0, 0.0, height / 2.0]) + T_world_actor[:3, 3]
    (c,), _ = view.project(centre_world[None])
    edges = [round(float(x), BOX_DECIMALS) for x in np.nan_to_num(uv).reshape(-1)]
    return {"c": [round(float(c[0]), BOX_DECIMALS), round(float(c[1]), BOX_DECIMALS)]
            if np.isfinite(c).all() and view.inside(c[None])[0] else None, "e": edges}


def _sweep_for(sweeps: list[LidarSweep], t_s: float) -> LidarSweep | None:
    """The sweep whose firing window holds ``t_s``, else the one whose middle is nearest (within a sweep)."""
    for s in sweeps:
        if s.t0_s - 1e-9 <= t_s < s.t0_s + s.sweep_s - 1e-9:
            return s
    near = min(sweeps, key=lambda s: abs(s.t0_s + s.sweep_s / 2.0 - t_s), default=None)
    return near if near is not None and abs(near.t0_s + near.sweep_s / 2.0 - t_s) <= near.sweep_s else None


@dataclass(frozen=True)
class _Scene:
    """What every frame of one folder needs: the trace's tracks and sizes, the ego and the compact ids' actors."""

    trace: TraceInput
    ego: str
    actor_of_id: dict[int, str]

    def T_world(self, actor: str, t_s: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.trace.tracks()[actor].poses_at(t_s, clamp=True)


def _grouped_poses(scene: _Scene, actor: str, t_s: NDArray[np.float64], then: NDArray[np.float64] | None = None
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(R (n, 3, 3), t (n, 3))`` of ``actor``'s pose at each time (times ``then``), computed once per distinct
    time (a sweep fires column by column)."""
    times, inverse = np.unique(t_s, return_inverse=True)
    T = scene.T_world(actor, times)
    if then is not None:
        T = T @ then
    return T[inverse, :3, :3], T[inverse, :3, 3]


@dataclass(frozen=True)
class SweepPoints:
    """A sweep's points in the world where each beam found them (by the ego's pose at its firing time), with
    their instance ids and firing times (s from the scenario start); and, per actor hit, the points on it in the
    actor's body frame (where it was when each beam fired), to move with it."""

    world: NDArray[np.float64]
    ids: NDArray[np.uint32]
    t_s: NDArray[np.float64]
    on_actor: dict[str, tuple[NDArray[np.bool_], NDArray[np.float64]]]

    @classmethod
    def read(cls, ply: Path, sweep: LidarSweep, rig: Rig, lidar: str, scene: _Scene) -> "SweepPoints":
        cols = read_ply(ply)
        xyz = np.stack([cols["x"], cols["y"], cols["z"]], axis=1).astype(np.float64)
        ids = cols["instance_id"].astype(np.uint32)
        if "t" in cols:
            t = sweep.t0_s + cols["t"].astype(np.float64)
        else:
            from simready.sensors_hw.lidar import firing_times

            model = rig.sensors[lidar]
            assert isinstance(model, LidarModel)
            t = firing_times(xyz, model, sweep.t0_s)
        R, tr = _grouped_poses(scene, scene.ego, t, rig.T_body_sensor(lidar))
        world = rotate(R, xyz) + tr
        on_actor = {}
        for cid in np.unique(ids):
            actor = scene.actor_of_id.get(int(cid))
            if actor is not None:
                on = ids == cid
                R_then, t_then = _grouped_poses(scene, actor, t[on])
                on_actor[actor] = (on, rotate(np.transpose(R_then, (0, 2, 1)), world[on] - t_then))
        return cls(world, ids, t, on_actor)

    def at(self, scene: _Scene, t_frame_s: float) -> NDArray[np.float64]:
        """The points in the world at ``t_frame_s``: those on actors moved with them."""
        world = self.world.copy()
        for actor, (on, body) in self.on_actor.items():
            now = scene.T_world(actor, np.array([t_frame_s]))[0]
            world[on] = body @ now[:3, :3].T + now[:3, 3]
        return world


def lidar_world_points(ply: Path, sweep: LidarSweep, rig: Rig, lidar: str, scene: _Scene, t_frame_s: float
                       ) -> tuple[NDArray[np.float64], NDArray[np.uint32]]:
    """A sweep's points in the world at the frame's time ``t_frame_s`` and their instance ids (see the module
    docstring: placed by the ego's pose at each beam's time, points on actors moved with them to the frame)."""
    points = SweepPoints.read(ply, sweep, rig, lidar, scene)
    return points.at(scene, t_frame_s), points.ids


def _points(view: CameraView, world: NDArray[np.float64]) -> bytes:
    """The points that land on the image, the nearest per :data:`POINT_CELL_PX` square, in row then column order,
    packed: the squares' columns (u16), their rows (u16), then the depths in :data:`DEPTH_STEP_M` steps (u8)."""
    world = world[view.near_image(world)]
    uv, p_cam = view.project(world)
    depth = p_cam[:, 2]
    keep = view.inside(uv) & (depth <= view.far_m)
    u = np.rint(uv[keep, 0]).astype(np.int64) // POINT_CELL_PX
    v = np.rint(uv[keep, 1]).astype(np.int64) // POINT_CELL_PX
    d = depth[keep]
    cell = v * (view.width_px // POINT_CELL_PX + 1) + u
    order = np.lexsort((d, cell))
    first = np.ones(len(order), bool)
    first[1:] = cell[order][1:] != cell[order][:-1]
    pick = order[first]
    return (u[pick].astype("<u2").tobytes() + v[pick].astype("<u2").tobytes()
            + np.minimum(np.rint(d[pick] / DEPTH_STEP_M), 255).astype(np.uint8).tobytes())


@dataclass(frozen=True)
class CameraOverlay:
    """One camera of one observation folder as the page draws it: ``meta`` (the camera, LiDAR, image size, the
    video's frame rate, the observed window and per frame its tick, time, sweep, point count and boxes) and each
    frame's packed points (:func:`_points`)."""

    meta: dict[str, Any]
    points: tuple[bytes, ...]


def camera_overlay(obs: ObservationDir, trace: TraceInput | Path, ego: str, camera: str) -> CameraOverlay | None:
    """The page's drawing of one camera of one observation folder, observed from ``trace`` (its file, or read)
    with the rig on actor ``ego`` (see the module docstring); None when the folder has no such camera frames or
    no poses for them."""
    results = Results.read(obs.results)
    if camera not in results.cameras:
        return None
    frames = results.cameras[camera]
    poses_file = obs.file(ObservationDir.camera_poses_name(camera))
    if not poses_file.is_file() or not frames.frames:
        return None
    with np.load(io.BytesIO(poses_file.read_bytes())) as npz:
        pose_rows = {int(tick): T for tick, T in zip(npz["tick"], npz["T_world_camera"])}
    render = Render.read(obs.render)
    rig = Rig.from_settings(render.rig, source=str(obs.render))
    trace = trace if isinstance(trace, TraceInput) else read_trace_input(trace)
    dims: dict[str, list[float]] = trace.header.get("actor_dims", {})
    kinds: dict[str, str] = trace.header.get("actor_kinds", {})
    actors = set(trace.tracks())
    legend = Legend.read(obs.legend)
    actor_of_id = {e.compact_id: a for e in legend.entries if "actor:" in e.entity
                   for a in [e.entity.rsplit("actor:", 1)[-1]] if a in actors}
    scene = _Scene(trace, ego, actor_of_id)
    lidars = sorted(n for n, s in results.sensors.items() if s.type == "lidar" and n in rig.sensors)
    lidar = lidars[0] if lidars else None
    sweeps = [s for s in results.sweeps.get(lidar, []) if isinstance(s, LidarSweep)] if lidar else []
    plys = {f.tick: obs.file(f.path) for f in results.files if f.sensor == lidar and f.pass_name == "lidar"}
    observed = {f.tick: f for f in ObservedFrame.read_lines(obs.observed_frames) if f.sensor == camera} \
        if obs.observed_frames.is_file() else {}
    video = next((f for f in results.files if f.sensor == camera and f.pass_name == "video"), None)
    records, packed = [], []
    read: tuple[int, SweepPoints] | None = None  # the last sweep read (a camera faster than the LiDAR shares it)
    for frame in frames.frames:
        if frame.tick not in pose_rows:
            continue
        view = CameraView.of(frames, pose_rows[frame.tick])
        t_s = frame.t0_s
        record: dict[str, Any] = {"tick": frame.tick, "t": round(t_s, 6), "sweep": None, "n": 0, "boxes": []}
        points = b""
        sweep = _sweep_for(sweeps, t_s)
        if sweep is not None and sweep.tick in plys and plys[sweep.tick].is_file():
            if read is None or read[0] != sweep.tick:
                read = (sweep.tick, SweepPoints.read(plys[sweep.tick], sweep, rig, lidar, scene))  # type: ignore[arg-type]
            points = _points(view, read[1].at(scene, t_s))
            record["sweep"], record["n"] = sweep.tick, len(points) // 5
        seen = observed.get(frame.tick)
        for entity, state in sorted(seen.actors.items()) if seen else ():
            actor = entity.rsplit("actor:", 1)[-1]
            if actor == ego or not state.present or actor not in dims:
                continue
            box = _box(view, transform_from_pose(state.position, state.rotation_xyzw), dims[actor])
            if box is not None:
                record["boxes"].append({"id": actor, "kind": kinds.get(actor, ""), "visible": state.visible, **box})
        records.append(record)
        packed.append(points)
    window = render.settings.window_s
    meta = {"camera": camera, "lidar": lidar, "width": frames.projection.width_px,
            "height": frames.projection.height_px, "fps": video.fps if video else None,
            "window": [round(float(window[0]), 6), round(float(window[-1]), 6)], "cell_px": POINT_CELL_PX,
            "depth_step_m": DEPTH_STEP_M, "frames": records}
    return CameraOverlay(meta, tuple(packed))


def overlay_script(overlays: dict[str, CameraOverlay]) -> str:
    """``review-camera.js``: the drawings by ``"<variant>/<camera>"``, as a script that sets
    ``window.SIMREADY_CAMERA`` to the base64 of one gzip stream (a page opened from disk may run a script beside
    it, not fetch a file). Unzipped: a little-endian u32 byte count, that many bytes of JSON (every drawing's
    ``meta``, each frame with the byte ``offset`` of its points), then every frame's packed points."""
    head, arrays, offset = {}, [], 0
    for key in sorted(overlays):
        o = overlays[key]
        meta = json.loads(json.dumps(o.meta))
        for record, points in zip(meta["frames"], o.points):
            record["offset"] = offset
            arrays.append(points)
            offset += len(points)
        head[key] = meta
    header = json.dumps(head, sort_keys=True, separators=(",", ":")).encode("utf-8")
    blob = len(header).to_bytes(4, "little") + header + b"".join(arrays)
    packed = gzip.compress(blob, compresslevel=9, mtime=0)
    return f'window.SIMREADY_CAMERA = "{base64.b64encode(packed).decode("ascii")}";\n'


def cameras_of(obs: ObservationDir) -> list[str]:
    """The cameras an observation folder holds frames of, sorted."""
    return sorted(Results.read(obs.results).cameras) if obs.results.is_file() else []
