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
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import CameraFrames, Legend, LidarSweep, ObservedFrame, Render, Results
from simready.review.camera_kernels import (body_points, box_points, cloud_cells, frame_points, members, moved_points,
                                            place_points, project_points)
from simready.sensors_hw.camera import distort_normalized
from simready.sensors_hw.lidar import firing_times, read_ply
from simready.sensors_hw.models import LidarModel, Rig
from simready.sensors_hw.trace_input import TraceInput, read_trace_input
from simready.world.frames import transform_from_pose

#: Depth of a point on the page, in these steps (m); 255 steps and beyond are drawn alike.
DEPTH_STEP_M = 0.5
#: Box coordinates on the page are rounded to this many decimals (px).
BOX_DECIMALS = 1
#: The 12 edges of a box by corner index (corners: x ±, y ±, z 0/h, in :func:`box_corners` order).
BOX_EDGES = ((0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7))
_EDGES = np.array(BOX_EDGES, np.int64)
#: Where a rolling-shutter projection starts and how often it moves to the row it landed on.
ROW_ITERATIONS = 2
#: Points are kept one per square of this many pixels (the nearest), drawn as that square.
POINT_CELL_PX = 2
#: review-camera.js's gzip level: 6 is half the CPU of 9 for a file ~3 % larger.
GZIP_LEVEL = 6
#: A point the middle row's pose puts this far outside the image (a share of its size) is left out unprojected.
NEAR_IMAGE_MARGIN = 0.1


def rotate(R: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``R[i] @ p[i]`` for every i: (n, 3, 3) and (n, 3) → (n, 3)."""
    return np.einsum("nij,nj->ni", R, p)  # type: ignore[no-any-return]


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

    @cached_property
    def _rows_3x4(self) -> NDArray[np.float64]:
        """Each row's ``[R | t]`` as 12 contiguous values (one gather per projection, not two strided ones)."""
        return np.ascontiguousarray(np.concatenate([self.R, self.t[:, :, None]], axis=2).reshape(len(self.R), 12))

    def to_camera(self, points_world: NDArray[np.float64], rows: NDArray[np.intp]) -> NDArray[np.float64]:
        """World points in the optical frame of the given rows (one row per point)."""
        G = np.take(self._rows_3x4, rows, axis=0).reshape(-1, 3, 4)
        return rotate(G[:, :, :3], points_world) + G[:, :, 3]

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
        return ahead & (u > -mu) & (u < self.width_px + mu) & (v > -mv) & (v < self.height_px + mv)  # type: ignore[no-any-return]

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
    # The corners placed, the edges clipped at the near plane and the centre (compiled), projected together.
    points = box_points(view._rows_3x4, view.height_px // 2, np.ascontiguousarray(T_world_actor),
                        box_corners(length, width, height), height, _EDGES, view.near_m, 1 - 1e-9)
    if not len(points):
        return None
    projected = np.empty((len(points), 2))
    project_points(view._rows_3x4, points, view.fx, view.fy, view.cx, view.cy, view.k1, view.k2, view.near_m,
                   view.height_px, ROW_ITERATIONS, projected, np.empty(len(points)))
    uv, c = projected[:-1], projected[-1]
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
    #: Poses at single moments by (actor, time), filled an actor at a time as :meth:`prefetch` says.
    known: dict[tuple[str, float], NDArray[np.float64]] = field(default_factory=dict, compare=False, repr=False)
    #: The moments :meth:`prefetch` named, by the actors not sampled at them yet.
    ahead: dict[str, list[float]] = field(default_factory=dict, compare=False, repr=False)

    def T_world(self, actor: str, t_s: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.trace.track(actor).poses_at(t_s, clamp=True)

    def pose(self, actor: str, t_s: float) -> NDArray[np.float64]:
        """``actor``'s pose at one moment (the same as :meth:`T_world` there)."""
        T = self.known.get((actor, t_s))
        if T is None and actor in self.ahead:
            times = self.ahead.pop(actor)
            for t, T_t in zip(times, self.T_world(actor, np.array(times))):
                self.known[(actor, t)] = T_t
            T = self.known.get((actor, t_s))
        return T if T is not None else self.T_world(actor, np.array([t_s]))[0]

    def prefetch(self, actors: set[str], times: list[float]) -> None:
        """Sample each actor's track once at all these moments (a sample costs about the same for one time as for
        a hundred), for :meth:`pose`: when it first asks for one of the actor's poses (on a busy street most of
        the actors are never hit by the LiDAR, and their tracks are not built)."""
        if not times:
            return
        for actor in sorted(actors):
            self.ahead[actor] = times


def _distinct(t_s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """``np.unique(t_s, return_inverse=True)``; where the times are sorted already (a sweep's points are listed in
    firing order) by one pass over them, not a sort (a fifth of placing a sweep)."""
    if len(t_s) and bool(np.all(t_s[1:] >= t_s[:-1])):  # NaN fails the test: np.unique decides
        new = np.empty(len(t_s), bool)
        new[0] = True
        np.not_equal(t_s[1:], t_s[:-1], out=new[1:])
        return t_s[new], (np.cumsum(new) - 1).astype(np.intp)
    return np.unique(t_s, return_inverse=True)


def _grouped_poses(scene: _Scene, actor: str, t_s: NDArray[np.float64], then: NDArray[np.float64] | None = None
                   ) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """``actor``'s pose at each time (times ``then``), computed once per distinct time (a sweep fires column by
    column): ``(poses (m, 12), inverse (n,))``, each distinct time's top 3×4 rows and each time's index into them
    (what :mod:`simready.review.camera_kernels` gathers)."""
    times, inverse = _distinct(t_s)
    T = scene.T_world(actor, times)
    if then is not None:
        T = T @ then
    return np.ascontiguousarray(T[:, :3, :]).reshape(len(times), 12), inverse.astype(np.intp, copy=False)


@dataclass(frozen=True)
class SweepPoints:
    """A sweep's points in the world where each beam found them (by the ego's pose at its firing time), with
    their instance ids and firing times (s from the scenario start); and, per actor hit, the points on it in the
    actor's body frame (where it was when each beam fired), to move with it."""

    world: NDArray[np.float64]
    ids: NDArray[np.uint32]
    t_s: NDArray[np.float64]
    on_actor: dict[str, tuple[NDArray[np.intp], NDArray[np.float64]]]

    @classmethod
    def read(cls, ply: Path, sweep: LidarSweep, rig: Rig, lidar: str, scene: _Scene) -> "SweepPoints":
        cols = read_ply(ply, ("x", "y", "z", "instance_id", "t"))
        xyz = np.stack([cols["x"], cols["y"], cols["z"]], axis=1).astype(np.float64)
        ids = cols["instance_id"].astype(np.uint32)
        if "t" in cols:
            t = sweep.t0_s + cols["t"].astype(np.float64)
        else:
            model = rig.sensors[lidar]
            assert isinstance(model, LidarModel)
            t = firing_times(xyz, model, sweep.t0_s)
        poses, inverse = _grouped_poses(scene, scene.ego, t, rig.T_body_sensor(lidar))
        world = place_points(poses, inverse, np.ascontiguousarray(xyz))
        on_actor = {}
        # Each actor's points (its compact ids in ascending order, as np.unique gave the ids hit), found in one pass.
        cids = np.array(sorted(scene.actor_of_id), np.int64)
        index, starts = members(ids, cids)
        for j, cid in enumerate(cids.tolist()):
            if starts[j + 1] > starts[j]:
                actor = scene.actor_of_id[cid]
                on = index[starts[j]:starts[j + 1]]
                poses_then, inverse_then = _grouped_poses(scene, actor, t[on])
                on_actor[actor] = (on, body_points(poses_then, inverse_then, world, on))
        return cls(world, ids, t, on_actor)

    def at(self, scene: _Scene, t_frame_s: float) -> NDArray[np.float64]:
        """The points in the world at ``t_frame_s``: those on actors moved with them."""
        world = self.world.copy()
        for actor, (on, body) in self.on_actor.items():
            moved_points(world, on, body, np.ascontiguousarray(scene.pose(actor, t_frame_s)))
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
    cols, rows, steps = frame_points(view._rows_3x4, world, view.width_px, view.height_px, view.fx, view.fy, view.cx,
                                     view.cy, view.k1, view.k2, view.near_m, view.far_m, NEAR_IMAGE_MARGIN,
                                     ROW_ITERATIONS, POINT_CELL_PX, DEPTH_STEP_M)
    packed: bytes = cols.astype("<u2").tobytes() + rows.astype("<u2").tobytes() + steps.tobytes()
    return packed


@dataclass(frozen=True)
class CameraOverlay:
    """One camera of one observation folder as the page draws it: ``meta`` (the camera, LiDAR, image size, the
    video's frame rate, the observed window and per frame its tick, time, sweep, point count and boxes) and each
    frame's packed points (:func:`_points`)."""

    meta: dict[str, Any]
    points: tuple[bytes, ...]


#: The bird's-eye view's LiDAR: the highest point per square of this side (m), the ground under an actor hidden by
#: it as the view from above hides it.
BEV_CELL_M = 0.4
#: A BEV point's height above the ego's ground (its body origin at the sweep's start) on the page: in these steps
#: (m) from :data:`BEV_Z_FLOOR_M`, 255 steps and beyond drawn alike.
BEV_Z_STEP_M = 0.1
BEV_Z_FLOOR_M = -2.0


def _cloud(world: NDArray[np.float64], ground_z: float, box: tuple[float, float, float, float]) -> bytes:
    """A sweep's world points inside ``box`` (x0, x1, y0, y1) as the BEV draws them: the highest per
    :data:`BEV_CELL_M` square, in row then column order from the box's corner (x0, y0), packed: the squares'
    columns (u16), their rows (u16), then the heights (u8, see :data:`BEV_Z_STEP_M`)."""
    x0, x1, y0, y1 = box
    n_cols, n_rows = int(np.ceil((x1 - x0) / BEV_CELL_M)), int(np.ceil((y1 - y0) / BEV_CELL_M))
    cols, rows, steps = cloud_cells(world, ground_z, x0, y0, n_cols, n_rows, BEV_CELL_M, BEV_Z_FLOOR_M, BEV_Z_STEP_M)
    packed: bytes = cols.astype("<u2").tobytes() + rows.astype("<u2").tobytes() + steps.tobytes()
    return packed


@dataclass(frozen=True)
class Cloud:
    """One observation folder's LiDAR as the bird's-eye view draws it: ``meta`` (the LiDAR, the box the squares
    count from, the square's side, the height steps and per sweep its tick, firing window, the time its points
    are placed at and point count) and each sweep's packed points (:func:`_cloud`)."""

    meta: dict[str, Any]
    points: tuple[bytes, ...]


@dataclass(frozen=True)
class FolderDrawings:
    """What the page draws from one observation folder: each camera's overlay, and the LiDAR of every sweep for
    the bird's-eye view (None without a LiDAR or a box to draw it in)."""

    cameras: dict[str, CameraOverlay]
    cloud: Cloud | None


def folder_drawings(obs: ObservationDir, trace: TraceInput | Path, ego: str, cameras: list[str],
                    box: tuple[float, float, float, float] | None = None) -> FolderDrawings:
    """The page's drawings of one observation folder observed from ``trace`` (its file, or read) with the rig on
    actor ``ego``: the overlay of each of ``cameras`` that has frames and poses (see the module docstring), and,
    given the bird's-eye view's ``box`` (x0, x1, y0, y1, m), every sweep's points in it. Each sweep's PLY is read
    and placed in the world once, for the BEV and for every camera frame it holds; the BEV's points are the same
    world points, those on actors moved with them to the sweep's start (the BEV draws the actors' boxes at the
    scene's steps, and a sweep starts on one)."""
    results = Results.read(obs.results)
    poses: dict[str, dict[int, NDArray[np.float64]]] = {}
    for camera in cameras:
        poses_file = obs.file(ObservationDir.camera_poses_name(camera))
        if camera in results.cameras and results.cameras[camera].frames and poses_file.is_file():
            with np.load(io.BytesIO(poses_file.read_bytes())) as npz:
                poses[camera] = {int(tick): T for tick, T in zip(npz["tick"], npz["T_world_camera"])}
    render = Render.read(obs.render)
    rig = Rig.from_settings(render.rig, source=str(obs.render))
    lidars = sorted(n for n, s in results.sensors.items() if s.type == "lidar" and n in rig.sensors)
    lidar = lidars[0] if lidars else None
    if not poses and (box is None or lidar is None):
        return FolderDrawings({}, None)
    trace = trace if isinstance(trace, TraceInput) else read_trace_input(trace)
    dims: dict[str, list[float]] = trace.header.get("actor_dims", {})
    kinds: dict[str, str] = trace.header.get("actor_kinds", {})
    actors = set(trace.actor_ids)
    legend = Legend.read(obs.legend)
    actor_of_id = {e.compact_id: a for e in legend.entries if "actor:" in e.entity
                   for a in [e.entity.rsplit("actor:", 1)[-1]] if a in actors}
    scene = _Scene(trace, ego, actor_of_id)
    sweeps = [s for s in results.sweeps.get(lidar, []) if isinstance(s, LidarSweep)] if lidar else []
    listed = [f for f in results.files if f.sensor == lidar and f.pass_name == "lidar"]
    plys = {f.tick: ply for f, ply in zip(listed, obs.files(f.path for f in listed))}  # the folder resolved once
    sweeps = [s for s in sweeps if s.tick in plys and plys[s.tick].is_file()]
    observed: dict[str, dict[int, ObservedFrame]] = {c: {} for c in poses}
    if obs.observed_frames.is_file():
        for f in ObservedFrame.read_lines(obs.observed_frames):
            if f.sensor in observed:
                observed[f.sensor][f.tick] = f

    # Every camera frame with its view and boxes, and the sweep whose points it shows.
    records: dict[str, list[dict[str, Any]]] = {c: [] for c in poses}
    packed: dict[str, list[bytes]] = {c: [] for c in poses}
    holds: dict[int, list[tuple[str, int, CameraView, float]]] = {}
    for camera, rows in poses.items():
        frames = results.cameras[camera]
        for frame in frames.frames:
            if frame.tick not in rows:
                continue
            view = CameraView.of(frames, rows[frame.tick])
            record: dict[str, Any] = {"tick": frame.tick, "t": round(frame.t0_s, 6), "sweep": None, "n": 0, "boxes": []}
            sweep = _sweep_for(sweeps, frame.t0_s)
            if sweep is not None:
                holds.setdefault(sweep.tick, []).append((camera, len(records[camera]), view, frame.t0_s))
            seen = observed[camera].get(frame.tick)
            for entity, state in sorted(seen.actors.items()) if seen else ():
                actor = entity.rsplit("actor:", 1)[-1]
                if actor == ego or not state.present or actor not in dims:
                    continue
                box_px = _box(view, transform_from_pose(state.position, state.rotation_xyzw), dims[actor])
                if box_px is not None:
                    record["boxes"].append({"id": actor, "kind": kinds.get(actor, ""), "visible": state.visible, **box_px})
            records[camera].append(record)
            packed[camera].append(b"")

    # Each sweep read and placed once: its BEV cloud, and the points of every camera frame it holds; the actors'
    # poses at those moments sampled together.
    moments = {t for held in holds.values() for *_, t in held}
    scene.prefetch({ego, *actor_of_id.values()}, sorted(moments | ({s.t0_s for s in sweeps} if box is not None else set())))
    bev_meta, bev_points = [], []
    for sweep in sweeps:
        if box is None and sweep.tick not in holds:
            continue
        points = SweepPoints.read(plys[sweep.tick], sweep, rig, lidar, scene)  # type: ignore[arg-type]
        for camera, i, view, t in holds.get(sweep.tick, []):
            record = records[camera][i]
            packed[camera][i] = _points(view, points.at(scene, t))
            record["sweep"], record["n"] = sweep.tick, len(packed[camera][i]) // 5
        if box is not None:
            ground = scene.pose(ego, sweep.t0_s)[2, 3]
            cloud = _cloud(points.at(scene, sweep.t0_s), float(ground), box)
            bev_meta.append({"tick": sweep.tick, "t0": round(sweep.t0_s, 6), "t1": round(sweep.t0_s + sweep.sweep_s, 6),
                             "n": len(cloud) // 5})
            bev_points.append(cloud)

    window = render.settings.window_s
    overlays = {}
    for camera in poses:
        frames = results.cameras[camera]
        video = next((f for f in results.files if f.sensor == camera and f.pass_name == "video"), None)
        overlays[camera] = CameraOverlay(
            {"camera": camera, "lidar": lidar, "width": frames.projection.width_px, "height": frames.projection.height_px,
             "fps": video.fps if video else None, "window": [round(float(window[0]), 6), round(float(window[-1]), 6)],
             "cell_px": POINT_CELL_PX, "depth_step_m": DEPTH_STEP_M, "frames": records[camera]},
            tuple(packed[camera]))
    cloud_drawing = None
    if box is not None and lidar is not None:
        cloud_drawing = Cloud({"lidar": lidar, "box": [round(float(v), 3) for v in box], "cell_m": BEV_CELL_M,
                               "z_step_m": BEV_Z_STEP_M, "z_floor_m": BEV_Z_FLOOR_M, "sweeps": bev_meta},
                              tuple(bev_points))
    return FolderDrawings(overlays, cloud_drawing)


def camera_overlay(obs: ObservationDir, trace: TraceInput | Path, ego: str, camera: str) -> CameraOverlay | None:
    """The page's drawing of one camera of one observation folder, observed from ``trace`` (its file, or read)
    with the rig on actor ``ego`` (see the module docstring); None when the folder has no such camera frames or
    no poses for them."""
    if not obs.results.is_file():
        return None
    return folder_drawings(obs, trace, ego, [camera]).cameras.get(camera)


def overlay_script(drawings: Mapping[str, CameraOverlay | Cloud]) -> str:
    """``review-camera.js``: the drawings by ``"<variant>/<sensor>"`` (a camera's overlay, or a LiDAR's clouds for
    the bird's-eye view), as a script that sets ``window.SIMREADY_CAMERA`` to the base64 of one gzip stream (a page
    opened from disk may run a script beside it, not fetch a file). Unzipped: a little-endian u32 byte count, that
    many bytes of JSON (every drawing's ``meta``, each camera frame or sweep with the byte ``offset`` of its
    points), then every frame's and sweep's packed points."""
    head, arrays, offset = {}, [], 0
    for key in sorted(drawings):
        o = drawings[key]
        meta = json.loads(json.dumps(o.meta))
        for record, points in zip(meta["frames" if isinstance(o, CameraOverlay) else "sweeps"], o.points):
            record["offset"] = offset
            arrays.append(points)
            offset += len(points)
        head[key] = meta
    header = json.dumps(head, sort_keys=True, separators=(",", ":")).encode("utf-8")
    blob = len(header).to_bytes(4, "little") + header + b"".join(arrays)
    packed = gzip.compress(blob, compresslevel=GZIP_LEVEL, mtime=0)
    return f'window.SIMREADY_CAMERA = "{base64.b64encode(packed).decode("ascii")}";\n'


def cameras_of(obs: ObservationDir) -> list[str]:
    """The cameras an observation folder holds frames of, sorted."""
    return sorted(Results.read(obs.results).cameras) if obs.results.is_file() else []
