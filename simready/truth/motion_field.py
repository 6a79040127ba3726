"""Instantaneous motion field of a camera frame from recorded twists (SPEC §11).

For each visible sample, at its own row time t: the surface point P on body
b moves with ``v_P = v_b + ω_b × (P − o_b)`` (the body's twist; zero on
static geometry) and the camera's optical centre o_c moves with its
owner's twist through the lever arm, ``v_c = v_e + ω_e × (o_c − o_e)``,
while the camera turns at ``ω_e`` (a rigid mount). In the optical frame
(``R`` = camera-to-world rotation, X = Rᵀ(P − o_c)):

    Ẋ = Rᵀ [ (v_P − v_c) − ω_e × (P − o_c) ]
    u̇ = f_x (Ẋ_x Z − X_x Ż) / Z²,   v̇ = f_y (Ẋ_y Z − X_y Ż) / Z²

in pixels per second (pinhole coordinates), with ``Ż`` the depth rate in
m/s. Twists come from the trace (through :class:`~simready.world.motion.PoseTrack`,
exact at ticks, interpolated between) — never from finite differences of
poses or images.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from simready.sensors_hw.models import Rig
from simready.truth.correspondence.samples import Samples
from simready.truth.kernels.motion_field import image_velocity
from simready.truth.kernels.tables import quantized32
from simready.truth.precision import MOTION_STEP_PXPS
from simready.raycast.geometry import SceneGeometry


@dataclass
class MotionField:
    """Image velocity of the visible samples of one frame (M rows, as ``samples``).

    Attributes:
        du_dt_pxps, dv_dt_pxps: (M,) pinhole image velocity, pixels per second.
        ddepth_dt_mps: (M,) rate of change of the z-depth, m/s.
        moving: (K,) ascending indices of the samples on moving bodies; moving_velocity_mps: (K, 3) their surface
            points' world velocities (:attr:`point_velocity_mps` puts them in an (M, 3) array, zero elsewhere).
    """

    samples: Samples
    du_dt_pxps: NDArray[np.float64]
    dv_dt_pxps: NDArray[np.float64]
    ddepth_dt_mps: NDArray[np.float64]
    moving: NDArray[np.intp]
    moving_velocity_mps: NDArray[np.float64]
    #: The table's float32 columns (du, dv rounded to the declared step, depth rate) when the compiled pass made
    #: them with the field (bitwise the roundings below); None: rounded here.
    columns: tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]] | None = field(
        default=None, repr=False, compare=False)

    @property
    def point_velocity_mps(self) -> NDArray[np.float64]:
        """(M, 3) world velocity of each sample's surface point (zero on static geometry). Made when read: a
        frame-sized zero array every frame, which nothing in a run reads, was ~2 000 page faults and its zeroing."""
        out = np.zeros((len(self.du_dt_pxps), 3))
        out[self.moving] = self.moving_velocity_mps
        return out

    def table(self) -> pa.Table:
        if self.columns is not None:
            du, dv, dz = self.columns
            return pa.table({"pixel": self.samples.pixel32, "du_dt_pxps": du, "dv_dt_pxps": dv, "ddepth_dt_mps": dz})
        return pa.table({
            "pixel": self.samples.pixel32,
            "du_dt_pxps": quantized32(self.du_dt_pxps, MOTION_STEP_PXPS),  # the declared precision, compiled
            "dv_dt_pxps": quantized32(self.dv_dt_pxps, MOTION_STEP_PXPS),
            "ddepth_dt_mps": self.ddepth_dt_mps.astype(np.float32),
        })


def _cross(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row-wise a × b of (N, 3) arrays (a few elementwise passes; faster than np.cross here)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def moving_point_velocities(scene: SceneGeometry, body: NDArray[np.intp], point_world: NDArray[np.float64],
                            times_s: NDArray[np.float64], moving: NDArray[np.intp]) -> NDArray[np.float64]:
    """(K, 3) world velocity of the surface points ``moving`` (the indices of the points on moving bodies) from their
    bodies' twists: ``v_b + ω_b × (P − o_b)``."""
    out = np.zeros((len(moving), 3))
    for b in np.unique(body[moving]):
        at = np.flatnonzero(body[moving] == b)
        sel = moving[at]
        ut, inv = np.unique(times_s[sel], return_inverse=True)
        smp = scene.bodies[int(b)].track.sample(ut, clamp=True)
        out[at] = smp.velocity_mps[inv] + _cross(smp.angular_velocity_rps[inv], point_world[sel] - smp.position_m[inv])
    return out


def motion_field(scene: SceneGeometry, rig: Rig, samples: Samples, *, compiled: bool = True) -> MotionField:
    """The motion field of a frame's visible samples (module doc).

    The per-sample step runs compiled (:func:`simready.truth.kernels.motion_field.image_velocity`) unless
    ``compiled=False`` (the numpy passes it repeats bit for bit).

    Worked in the optical frame of each row: with ``q = Rᵀ(v_P − v_c)`` and
    ``ω_cam = Rᵀ ω_e``, ``Ẋ = q − ω_cam × X``; ``v_c`` and ``ω_cam`` are per
    row, and ``v_P`` (zero on static geometry) is rotated only for the samples
    on moving bodies.
    """
    view = samples.view
    k = view.intrinsics
    rows = samples.v
    ego = rig.body.sample(view.row_times_s, clamp=True)
    R_rows = view.T_world_camera[:, :3, :3]
    o_rows = view.T_world_camera[:, :3, 3]
    v_c = ego.velocity_mps + _cross(ego.angular_velocity_rps, o_rows - ego.position_m)
    v_c_cam = np.einsum("hji,hj->hi", R_rows, v_c)  # Rᵀ v_c per row
    w_cam = np.einsum("hji,hj->hi", R_rows, ego.angular_velocity_rps)
    X = samples.point_camera
    moving = samples.moving_indices(scene)
    v_p = moving_point_velocities(scene, samples.body, samples.point_world, samples.time_s, moving)  # (K, 3)
    q_moving = np.einsum("nji,nj->ni", R_rows[rows[moving]], v_p) if len(moving) else np.zeros((0, 3))
    if compiled:  # one pass per sample, bitwise the numpy passes below
        du, dv, dz, columns = image_velocity(rows.astype(np.int64, copy=False), np.ascontiguousarray(X),
                                             np.ascontiguousarray(v_c_cam), np.ascontiguousarray(w_cam),
                                             moving.astype(np.int64), q_moving, k.fx, k.fy, MOTION_STEP_PXPS)
        return MotionField(samples, du, dv, dz, moving, v_p, columns)
    q = -np.take(v_c_cam, rows, axis=0)
    if len(moving):
        q[moving] += q_moving
    Xd = q - _cross(np.take(w_cam, rows, axis=0), X)
    z2 = X[:, 2] * X[:, 2]
    du = k.fx * (Xd[:, 0] * X[:, 2] - X[:, 0] * Xd[:, 2]) / z2
    dv = k.fy * (Xd[:, 1] * X[:, 2] - X[:, 1] * Xd[:, 2]) / z2
    return MotionField(samples, du, dv, Xd[:, 2], moving, v_p)
