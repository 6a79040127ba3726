"""The spinning LiDAR's beam pattern: the fixed beam table (directions, firing times, the angles' cosines and
sines), the sensor's pose per column, the world rays of a sweep, the azimuth prefilter of the casts, and a point's
firing time recovered from its azimuth. Conventions in :mod:`simready.sensors_hw.lidar`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from simready.raycast.body import box_corners
from simready.raycast.kernels import sensor_rays
from simready.raycast.rays import RayPrefilter
from simready.sensors_hw.lidar_kernels import azimuth_beams, column_axes, mount_poses, planar_mount_poses
from simready.sensors_hw.models import LidarModel, Rig
from simready.world.motion import _H, _PHI, _Q0, TIME_EPS_S
from simready.world.motion_kernels import planar_hermites


@dataclass(frozen=True)
class BeamTable:
    """Fixed beam geometry of a LiDAR model.

    Attributes:
        dirs_sensor: (steps, channels, 3) unit directions in the sensor frame.
        time_offset_s: (steps,) firing time of each column after the sweep start.
        azimuth_rad: (steps,) column azimuths.
        elevation_rad: (channels,) channel elevations.
        dirs_sensor32: ``dirs_sensor`` in float32 (what is cast).
        beam_offset_s: (steps·channels,) firing time of each beam after the sweep start.
        dirs_sensor_t: (3, steps·channels) ``dirs_sensor`` by component (points are gathered from it:
            a gather along the long axis is several times faster than of (N, 3) rows).
        cos_az, sin_az: (steps,) and cos_el, sin_el: (channels,) the angles' cosines and sines, whose products
            are ``dirs_sensor`` (the compiled passes read them instead of the (N, 3) table).
    """

    dirs_sensor: NDArray[np.float64]
    time_offset_s: NDArray[np.float64]
    azimuth_rad: NDArray[np.float64]
    elevation_rad: NDArray[np.float64]
    dirs_sensor32: NDArray[np.float32]
    beam_offset_s: NDArray[np.float64]
    dirs_sensor_t: NDArray[np.float64]
    cos_az: NDArray[np.float64]
    sin_az: NDArray[np.float64]
    cos_el: NDArray[np.float64]
    sin_el: NDArray[np.float64]


@lru_cache(maxsize=8)
def beam_table(model: LidarModel) -> BeamTable:
    az = 2.0 * np.pi * np.arange(model.azimuth_steps) / model.azimuth_steps
    el = model.elevations_rad()
    d = np.empty((model.azimuth_steps, model.channels, 3))
    d[..., 0] = np.cos(el)[None, :] * np.cos(az)[:, None]
    d[..., 1] = np.cos(el)[None, :] * np.sin(az)[:, None]
    d[..., 2] = np.sin(el)[None, :]
    dt = np.arange(model.azimuth_steps) / (model.azimuth_steps * model.rotation_hz)
    table = BeamTable(d, dt, az, el, d.astype(np.float32), np.repeat(dt, model.channels),
                      np.ascontiguousarray(d.reshape(-1, 3).T), np.cos(az), np.sin(az), np.cos(el), np.sin(el))
    for a in (table.dirs_sensor, table.time_offset_s, table.azimuth_rad, table.elevation_rad, table.dirs_sensor32,
              table.beam_offset_s, table.dirs_sensor_t, table.cos_az, table.sin_az, table.cos_el, table.sin_el):
        a.setflags(write=False)
    return table


def lidar_poses(rig: Rig, lidar_name: str, t0_s: float) -> NDArray[np.float64]:
    """(steps, 4, 4) ``T_world_sensor`` at each column's firing time: ``Rig.T_world_sensor``'s product, bit for bit,
    in one compiled pass over the body's poses (:func:`simready.sensors_hw.lidar_kernels.mount_poses`); a body
    turning about z only whose track holds the sweep strictly inside it (every sweep but one at a track's ends):
    its compiled samples (:func:`~simready.world.motion_kernels.planar_hermites`) posed and mounted in one pass
    (:func:`~simready.sensors_hw.lidar_kernels.planar_mount_poses`), the same values without ``PoseTrack.sample``'s
    quaternions and poses in between."""
    t = t0_s + beam_table(rig.lidar(lidar_name)).time_offset_s
    track = rig.body
    M = np.ascontiguousarray(rig.T_body_sensor(lidar_name), np.float64)
    if track._planar and not track.is_constant and track.t_start < t[0] and t[-1] < track.t_end:
        pos, _, _, _, half, qz, qw = planar_hermites(t, track.t_s, track._segments, track.present, TIME_EPS_S,
                                                     _PHI, _Q0, _H)
        T: NDArray[np.float64] = planar_mount_poses(pos, np.sin(half), np.cos(half), qz, qw, M)
        return T
    T = mount_poses(np.ascontiguousarray(track.poses_at(t), np.float64), M)
    return T


def lidar_rays(rig: Rig, lidar_name: str, t0_s: float,
               T_cols: NDArray[np.float64] | None = None
               ) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float64]]:
    """World origins and unit directions (N, 3) float32, and firing times (N,), N = steps·channels, column-major."""
    table = beam_table(rig.lidar(lidar_name))
    T = lidar_poses(rig, lidar_name, t0_s) if T_cols is None else T_cols
    origins, dirs, times, _ = sensor_rays(table.dirs_sensor32, T, t0_s + table.time_offset_s, np.zeros(1, np.float32),
                                          False)
    return origins, dirs, times


def azimuth_prefilter(model: LidarModel, T_cols: NDArray[np.float64],
                      compiled: bool = True) -> RayPrefilter:
    """Beams whose column azimuth lies in the azimuth arc a world box spans from that column's pose.

    Why it is conservative: every beam of column j has sensor-frame azimuth
    az_j, and so does any point it hits; a box seen from outside its
    footprint spans an arc < π given by its corners. Columns whose origin is
    inside the footprint keep all beams. Near-vertical channels (no
    azimuth) disable the filter. The filter runs as one compiled pass over the columns
    (:func:`simready.sensors_hw.lidar_kernels.azimuth_beams`, its column frames from another,
    :func:`~simready.sensors_hw.lidar_kernels.column_axes`); ``compiled=False``: the numpy passes.
    """
    table = beam_table(model)
    if np.any(np.abs(table.elevation_rad) > math.radians(89.9)):
        return lambda lo, hi: None
    # Sensor x and y axes in world per column, and the origin's coordinates along them.
    if compiled:
        ax, ay, px, py = column_axes(np.ascontiguousarray(T_cols, np.float64))
    else:
        ax, ay = np.ascontiguousarray(T_cols[:, :3, 0].T), np.ascontiguousarray(T_cols[:, :3, 1].T)
        px = np.einsum("si,is->s", T_cols[:, :3, 3], ax)
        py = np.einsum("si,is->s", T_cols[:, :3, 3], ay)
    margin = 2.0 * np.pi / model.azimuth_steps + 1e-6
    channels = np.arange(model.channels)
    two_pi = 2.0 * np.pi

    if compiled:
        return lambda lo, hi: azimuth_beams(box_corners(lo, hi), ax, ay, px, py, table.azimuth_rad, margin,
                                            model.channels, table.cos_az, table.sin_az)

    def candidates(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> NDArray[np.intp]:
        corners = box_corners(lo, hi)
        cx = corners @ ax  # (8, steps): corners in each column's sensor frame
        cx -= px
        cy = corners @ ay
        cy -= py
        az = np.arctan2(cy, cx)
        # Corner azimuths relative to the first corner's, wrapped to [-π, π) (in place: no np.mod on 8·steps).
        rel = az - az[0]
        rel += np.where(rel < -np.pi, two_pi, 0.0) - np.where(rel >= np.pi, two_pi, 0.0)
        rel_min = rel.min(axis=0)
        span = rel.max(axis=0) - rel_min
        cx *= cx
        cy *= cy
        cx += cy
        inside = (span >= np.pi - 1e-9) | (cx.min(axis=0) < 1e-12)
        offset = np.mod(table.azimuth_rad - (az[0] + rel_min), two_pi)
        cols = np.flatnonzero(inside | (offset <= span + margin) | (offset >= two_pi - margin))
        return (cols[:, None] * model.channels + channels[None, :]).reshape(-1)

    return candidates


def firing_times(points_sensor: NDArray[np.float64], model: LidarModel, t0_s: float) -> NDArray[np.float64]:
    """Each point's firing time from its azimuth, for a sweep written without its ``t`` column.

    A point lies on its beam, and a beam's column is its azimuth: column j (at 2π·j / azimuth_steps) fires at
    ``t0 + j / (azimuth_steps · rotation_hz)``. Exact while a point's azimuth is known to better than half a
    column — the PLY's 0.1 mm at the 0.3 m minimum range is 0.4 mrad, a column of 1800 is 3.5 mrad.
    """
    steps = model.azimuth_steps
    az = np.arctan2(points_sensor[:, 1], points_sensor[:, 0])
    column = np.mod(np.rint(az * (steps / (2.0 * np.pi))).astype(np.int64), steps)
    return t0_s + beam_table(model).time_offset_s[column]
