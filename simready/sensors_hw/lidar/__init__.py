"""Spinning LiDAR: every beam fires at its own time against the world at that time.

Its rooms: the beam pattern (:mod:`~.beams`), the return model and its draws (:mod:`~.return_model`), the sweep
that puts them together (:mod:`~.sweep`) and its file (:mod:`~.ply`); their compiled passes in
:mod:`simready.sensors_hw.lidar_kernels`. Every name callers use is imported from here.

Beam pattern: ``azimuth_steps`` columns per turn, ``channels`` beams per
column fired together. Column j points at azimuth ``2π·j / azimuth_steps``
(counter-clockwise from the sensor's +x, the head spinning
counter-clockwise seen from above) and fires at
``t0 + j / (azimuth_steps · rotation_hz)``. Each beam starts at the sensor's
pose at its firing time, so ego motion during the sweep is in the data
(the rolling-shutter analogue: no de-skewing).

Points are in the sensor frame (x forward, y left, z up, declared in
:mod:`simready.sensors_hw.frames`) *at the beam's own time*: the measured
range along the beam's fixed sensor-frame direction.

Intensity is ``reflectance · |cos(incidence)|`` in [0, 1]. Range noise
(Gaussian, ``range_noise_m``) and dropout (:class:`DropoutModel`) come from
the ``numpy.random.Generator`` passed in (a named stream of the caller);
one normal and one uniform are drawn for *every* beam in beam order, hit or
not, so two worlds that differ slightly reuse the same draws per beam.

Weather (:class:`~simready.sensors_hw.atmosphere.Atmosphere`): in rain each
return survives the two-way extinction ``exp(−2·α·r)`` by a third uniform
per beam (drawn only when it rains, after the other two, so a dry sweep is
unchanged bit for bit), its intensity is scaled by the same factor, and the
range noise widens to ``sqrt(σ² + σ_rain²)`` on the same normal draw. More
rain keeps a subset of the returns a lighter rain keeps.

Noise off (``LidarModel.noise`` False, ``--set noise=off``): nothing is
drawn; the normal draw is taken as 0 and every uniform as ½. So there is
no range noise and no rain range spread, a weak return is lost only when
``dropout.probability`` > ½, and in rain a return is kept where T² > ½ —
the random decisions take their more likely outcome — while the
intensity is still scaled by T² (extinction is deterministic physics).
"""

from simready.sensors_hw.lidar.beams import (BeamTable, azimuth_prefilter, beam_table, firing_times, lidar_poses,
                                             lidar_rays)
from simready.sensors_hw.lidar.ply import (LIDAR_FORMATS, PLY_COLUMNS, PLY_ZSTD_LEVEL, PLY_ZSTD_SUFFIX, TIME_COMMENT,
                                           ascii_body, ascii_body_per_point, ply_bytes, ply_name, read_ply,
                                           write_ply_ascii, write_ply_binary)
from simready.sensors_hw.lidar.return_model import normals_then_uniforms, returns_numpy
from simready.sensors_hw.lidar.sweep import LidarScan, scan

__all__ = [
    "LIDAR_FORMATS", "PLY_COLUMNS", "PLY_ZSTD_LEVEL", "PLY_ZSTD_SUFFIX", "TIME_COMMENT", "BeamTable", "LidarScan",
    "ascii_body", "ascii_body_per_point", "azimuth_prefilter", "beam_table", "firing_times", "lidar_poses",
    "lidar_rays", "normals_then_uniforms", "ply_bytes", "ply_name", "read_ply", "returns_numpy", "scan",
    "write_ply_ascii", "write_ply_binary",
]
