"""Frames and transforms (SPEC §2).

Conventions, fixed for the whole project:

* SI units: metres, seconds, radians. Degrees appear only in human-facing
  config and are converted at the boundary by functions named ``*_deg``.
* World frame: right-handed, x east, y north, z up. Yaw is counter-clockwise
  about +z, measured from +x.
* Body frame of every actor (vehicles, pedestrians, cyclists): x forward,
  y left, z up, origin at the centre of the footprint on the ground.
* Quaternions are ``[x, y, z, w]`` (scalar last) everywhere, unit length.
* Poses are 4×4 homogeneous matrices ``T_parent_child`` mapping child-frame
  points into the parent frame; chains compose by matrix product,
  ``T_world_child = T_world_parent @ T_parent_child``. Offsets are never
  added as vectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

Mat4 = NDArray[np.float64]
Vec3 = NDArray[np.float64]
Quat = NDArray[np.float64]  # [x, y, z, w]
#: Signs of the footprint corners along the body x and y axes, counter-clockwise from front-left (as (4, 1) columns).
_CORNER_SL = np.array([1.0, -1.0, -1.0, 1.0])[:, None]
_CORNER_SW = np.array([1.0, 1.0, -1.0, -1.0])[:, None]


def identity() -> Mat4:
    return np.eye(4)


def make_transform(rotation: ArrayLike, translation: ArrayLike) -> Mat4:
    """4×4 transform from a 3×3 rotation matrix and a translation in metres."""
    T = np.eye(4)
    T[:3, :3] = np.asarray(rotation, dtype=np.float64)
    T[:3, 3] = np.asarray(translation, dtype=np.float64)
    return T


def invert(T: Mat4) -> Mat4:
    """Inverse of a rigid transform (rotation transposed, translation rotated back)."""
    R = T[:3, :3]
    t = T[:3, 3]
    return make_transform(R.T, -R.T @ t)


def compose(*transforms: Mat4) -> Mat4:
    """``compose(A, B, C) = A @ B @ C`` — parent to child, left to right."""
    out = np.eye(4)
    for T in transforms:
        out = out @ T
    return out


def transform_points(T: Mat4, points: ArrayLike) -> NDArray[np.float64]:
    """Apply ``T`` to an (N, 3) or (3,) array of points in metres."""
    p = np.asarray(points, dtype=np.float64)
    flat = p.reshape(-1, 3)
    out = flat @ T[:3, :3].T + T[:3, 3]
    return out.reshape(p.shape)


def transform_vectors(T: Mat4, vectors: ArrayLike) -> NDArray[np.float64]:
    """Rotate free vectors (directions, velocities) by ``T``; translation ignored."""
    v = np.asarray(vectors, dtype=np.float64)
    return (v.reshape(-1, 3) @ T[:3, :3].T).reshape(v.shape)


# --- rotations -------------------------------------------------------------


def rot_x(angle_rad: float) -> NDArray[np.float64]:
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle_rad: float) -> NDArray[np.float64]:
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle_rad: float) -> NDArray[np.float64]:
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rotation_from_rpy(roll_rad: float, pitch_rad: float, yaw_rad: float) -> NDArray[np.float64]:
    """Intrinsic z-y'-x'' (yaw, then pitch, then roll): ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    return rot_z(yaw_rad) @ rot_y(pitch_rad) @ rot_x(roll_rad)


def rpy_from_rotation(R: ArrayLike) -> tuple[float, float, float]:
    """Inverse of :func:`rotation_from_rpy` (pitch in [-π/2, π/2])."""
    R = np.asarray(R, dtype=np.float64)
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    roll = float(np.arctan2(R[2, 1], R[2, 2]))
    yaw = float(np.arctan2(R[1, 0], R[0, 0]))
    return roll, pitch, yaw


def rotation_from_rpy_deg(roll_deg: float, pitch_deg: float, yaw_deg: float) -> NDArray[np.float64]:
    """Config boundary: degrees in, rotation matrix out."""
    return rotation_from_rpy(np.radians(roll_deg), np.radians(pitch_deg), np.radians(yaw_deg))


def pose_2d(x_m: float, y_m: float, yaw_rad: float, z_m: float = 0.0) -> Mat4:
    """Planar pose on the ground: position in metres, yaw about +z."""
    return make_transform(rot_z(yaw_rad), [x_m, y_m, z_m])


def yaw_of(T: Mat4) -> float:
    """Heading of the body x axis projected on the ground plane, radians."""
    return float(np.arctan2(T[1, 0], T[0, 0]))


def footprint_corners(x_m: ArrayLike, y_m: ArrayLike, yaw_rad: ArrayLike, half_length_m: ArrayLike,
                      half_width_m: ArrayLike) -> NDArray[np.float64]:
    """(..., 4, 2) world corners of body footprints, counter-clockwise from front-left; broadcasts over ``...``.

    A footprint is the oriented rectangle of the body frame on the ground:
    corner k is ``(x, y) + sl_k·(hl·u) + sw_k·(hw·n)`` with ``u = (cos yaw,
    sin yaw)``, ``n = (−sin yaw, cos yaw)`` and ``(sl, sw)`` = (+, +), (−, +),
    (−, −), (+, −); edge k runs from corner k to corner k + 1 (mod 4). The one
    definition: the planner's compiled kernels carry a numba twin with the
    same operations in the same order
    (:func:`simready.sim.core.planner_kernels._corners`).
    """
    yaw = np.asarray(yaw_rad, dtype=np.float64)
    c, s = np.cos(yaw), np.sin(yaw)
    u, n = np.stack([c, s], -1), np.stack([-s, c], -1)
    centre = np.stack(np.broadcast_arrays(np.asarray(x_m, dtype=np.float64), np.asarray(y_m, dtype=np.float64)), -1)
    hl = np.asarray(half_length_m, dtype=np.float64)[..., None, None]
    hw = np.asarray(half_width_m, dtype=np.float64)[..., None, None]
    return centre[..., None, :] + _CORNER_SL * (hl * u[..., None, :]) + _CORNER_SW * (hw * n[..., None, :])  # type: ignore[no-any-return]


# --- quaternions [x, y, z, w] ---------------------------------------------


def quat_normalize(q: ArrayLike) -> Quat:
    q = np.asarray(q, dtype=np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise ValueError("zero quaternion has no rotation")
    qn = q / n
    # Canonical sign: w >= 0, so that equal rotations hash equally.
    sign = np.where(qn[..., 3:4] < 0.0, -1.0, 1.0)
    return qn * sign  # type: ignore[no-any-return]


def quat_from_matrix(R: ArrayLike) -> Quat:
    """Rotation matrix → unit quaternion ``[x, y, z, w]`` with w ≥ 0 (Shepperd's method)."""
    R = np.asarray(R, dtype=np.float64)[:3, :3]
    tr = np.trace(R)
    if tr > 0.0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    return quat_normalize(q)


def matrix_from_quat(q: ArrayLike) -> NDArray[np.float64]:
    """Unit quaternion ``[x, y, z, w]`` → 3×3 rotation matrix."""
    x, y, z, w = quat_normalize(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_from_yaw(yaw_rad: ArrayLike) -> Quat:
    """Quaternion(s) ``[x, y, z, w]`` of a rotation about +z; vectorized over yaw."""
    half = 0.5 * np.asarray(yaw_rad, dtype=np.float64)
    z = np.sin(half)
    w = np.cos(half)
    zeros = np.zeros_like(half)
    return quat_normalize(np.stack([zeros, zeros, z, w], axis=-1))


def quat_multiply(a: ArrayLike, b: ArrayLike) -> Quat:
    """Hamilton product ``a ⊗ b`` (apply b first, then a), both ``[x, y, z, w]``."""
    ax, ay, az, aw = np.asarray(a, dtype=np.float64)
    bx, by, bz, bw = np.asarray(b, dtype=np.float64)
    return quat_normalize(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def quat_angle_between(a: ArrayLike, b: ArrayLike) -> float:
    """Smallest rotation angle (radians) taking ``a`` to ``b``."""
    d = abs(float(np.dot(quat_normalize(a), quat_normalize(b))))
    return float(2.0 * np.arccos(min(1.0, d)))


def transform_from_pose(position: ArrayLike, quat_xyzw: ArrayLike) -> Mat4:
    return make_transform(matrix_from_quat(quat_xyzw), position)


# --- source-convention converters -----------------------------------------

#: Change of basis from a y-up, right-handed source (x right, y up, -z forward
#: as in glTF/OBJ exports) to our z-up world: ``world = (x, -z, y)``.
Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def convert_points_y_up_to_z_up(points: ArrayLike) -> NDArray[np.float64]:
    """Explicit importer conversion for y-up sources: ``(x, y, z) → (x, -z, y)``."""
    return np.asarray(points, dtype=np.float64) @ Y_UP_TO_Z_UP.T  # type: ignore[no-any-return]


def source_to_world_basis(up: str, handedness: str = "right") -> NDArray[np.float64]:
    """Basis change for a declared source convention; refuses what it cannot convert.

    Only right-handed sources are accepted: a left-handed source would need a
    reflection, which flips triangle winding, and must be fixed at authoring.
    """
    if handedness != "right":
        raise ValueError(f"handedness {handedness!r} not supported; only right-handed sources convert cleanly")
    if up == "z":
        return np.eye(3)
    if up == "y":
        return Y_UP_TO_Z_UP.copy()
    raise ValueError(f"up axis {up!r} not supported (expected 'z' or 'y')")


# --- scene graph -----------------------------------------------------------


@dataclass
class SceneGraph:
    """Named frames, each with a parent and ``T_parent_child``.

    The root is ``"world"``. ``world_from(name)`` composes the chain from the
    root down: ``T_world_name = T_world_a @ T_a_b @ ... @ T_y_name``.
    """

    parents: dict[str, str] = field(default_factory=dict)
    local: dict[str, Mat4] = field(default_factory=dict)

    ROOT = "world"

    def add(self, name: str, parent: str, T_parent_child: Mat4) -> None:
        if name == self.ROOT or name in self.parents:
            raise ValueError(f"frame {name!r} already defined")
        if parent != self.ROOT and parent not in self.parents:
            raise ValueError(f"frame {name!r}: parent {parent!r} is not defined")
        self.parents[name] = parent
        self.local[name] = np.asarray(T_parent_child, dtype=np.float64)

    def set_local(self, name: str, T_parent_child: Mat4) -> None:
        if name not in self.parents:
            raise KeyError(name)
        self.local[name] = np.asarray(T_parent_child, dtype=np.float64)

    def chain(self, name: str) -> list[str]:
        out = []
        while name != self.ROOT:
            out.append(name)
            name = self.parents[name]
        return out[::-1]

    def world_from(self, name: str) -> Mat4:
        if name == self.ROOT:
            return np.eye(4)
        return compose(*(self.local[n] for n in self.chain(name)))

    def relative(self, target: str, source: str) -> Mat4:
        """``T_target_source``: maps points in ``source`` into ``target``."""
        return invert(self.world_from(target)) @ self.world_from(source)


def batch_pose_matrices(positions: ArrayLike, quats_xyzw: ArrayLike) -> NDArray[np.float64]:
    """(N, 4, 4) transforms from (N, 3) positions and (N, 4) quaternions ``[x,y,z,w]``."""
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    q = np.asarray(quats_xyzw, dtype=np.float64).reshape(-1, 4)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    T = np.zeros((len(p), 4, 4))
    T[:, 0, 0] = 1 - 2 * (y * y + z * z)
    T[:, 0, 1] = 2 * (x * y - z * w)
    T[:, 0, 2] = 2 * (x * z + y * w)
    T[:, 1, 0] = 2 * (x * y + z * w)
    T[:, 1, 1] = 1 - 2 * (x * x + z * z)
    T[:, 1, 2] = 2 * (y * z - x * w)
    T[:, 2, 0] = 2 * (x * z - y * w)
    T[:, 2, 1] = 2 * (y * z + x * w)
    T[:, 2, 2] = 1 - 2 * (x * x + y * y)
    T[:, :3, 3] = p
    T[:, 3, 3] = 1.0
    return T


def mount_transform(translation_m: Sequence[float], rpy_deg: Sequence[float]) -> Mat4:
    """Mount of a sensor or part on a body, from config (metres, degrees)."""
    return make_transform(rotation_from_rpy_deg(*rpy_deg), translation_m)


def frames_from_mapping(mounts: Mapping[str, tuple[str, Mat4]]) -> SceneGraph:
    """Build a scene graph from ``{name: (parent, T_parent_child)}`` in dependency order."""
    graph = SceneGraph()
    pending = dict(sorted(mounts.items()))
    while pending:
        progressed = False
        for name, (parent, T) in list(pending.items()):
            if parent == SceneGraph.ROOT or parent in graph.parents:
                graph.add(name, parent, T)
                del pending[name]
                progressed = True
        if not progressed:
            raise ValueError(f"frames with unresolved or cyclic parents: {sorted(pending)}")
    return graph
