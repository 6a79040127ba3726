"""Camera: pinhole geometry, rolling shutter, and the depth / id / semantic / RGB passes.

Its rooms: the optics and shutter (:mod:`~.lens`), the passes' file encodings (:mod:`~.encoding`), a frame's
primary rays (:mod:`~.primary_rays`), the projection prefilters (:mod:`~.prefilters`), the illumination
(:mod:`~.lighting`), the shading (:mod:`~.shading`), the RGB finish (:mod:`~.finish`) and the frame that puts them
together (:mod:`~.render`); their compiled passes in :mod:`simready.sensors_hw.camera_kernels`. Every name callers
use is imported from here.

Conventions (SPEC §10):

* Optical frame (declared in :mod:`simready.sensors_hw.frames`): x right,
  y down, z forward.
* Intrinsics ``fx = fy = (W/2) / tan(hfov/2)``; principal point at the image
  centre ``cx = (W−1)/2, cy = (H−1)/2``, with pixel *centres* at integer
  coordinates, so the image spans [−0.5, W−0.5] × [−0.5, H−0.5] and a point
  at ±hfov/2 lands on the outer edge of the first/last column.
* ``depth`` is float32 metres along the optical axis (z-depth, not ray
  length), undistorted pinhole; pixels that see nothing within [near, far]
  hold ``+inf``. On disk ``near_m / z``, 0 where nothing is hit
  (:func:`encode_depth`).
* ``id`` holds compact entity ids (:func:`simready.world.identity.compact_ids`
  over the scene's entities; 0 = nothing), as uint32; on disk RGB with
  id = R + 256·G + 65536·B (:func:`encode_id_rgb`).
* ``semantic`` is uint16 ontology class ids: 0 = nothing hit (sky),
  65535 = unknown class (ignore); on disk the blue channel of an 8-bit RGB
  PNG, the ignore class as 255 (:func:`encode_semantic_rgb`). The observation writes its PNGs through
  :func:`rgb_png_bytes`, :func:`id_png_bytes` and :func:`semantic_png_bytes` (compiled, Up-filtered rows).
* Rolling shutter: row r (0 = top) is sampled at ``t0 + r·line_time_s``;
  a global shutter samples every row at ``t0``. Each row uses the camera's
  pose at its own time and sees the world at that time.
* RGB: Lambertian shading in linear light (sun with one shadow ray per lit
  pixel, ambient sky term, ego headlights as two spot lights without
  shadows), exposure ``2**exposure_ev``, Reinhard tone map, vignette, sRGB
  encoding, then Brown distortion (k1, k2) by remapping the pinhole image.
  With k1 = k2 = 0 no remap happens: RGB geometry *is* the pinhole geometry.
  Row times refer to pinhole rows.
"""

from simready.sensors_hw.camera.encoding import (DEPTH_CONVENTION, DEPTH_FORMATS, DEPTH_ZSTD_LEVEL, DEPTH_ZSTD_SUFFIX,
                                                 ROW_TIME_RULE, SEMANTIC_IGNORE, SEMANTIC_IGNORE_8BIT,
                                                 SEMANTIC_NOTHING_HIT, decode_depth, decode_id_rgb,
                                                 decode_semantic_rgb, depth_file_bytes, encode_depth, encode_depth_numpy,
                                                 encode_id_rgb, encode_semantic_rgb, id_png_bytes, read_depth_file,
                                                 rgb_png_bytes, semantic_png_bytes)
from simready.sensors_hw.camera.finish import finish_rgb, finish_rgb_numpy
from simready.sensors_hw.camera.lens import (apply_distortion, distort_normalized, pinhole, pixel_rays, project,
                                             row_times, undistort_normalized, unproject)
from simready.sensors_hw.camera.lighting import Lighting
from simready.sensors_hw.camera.prefilters import (BoxFilter, projection_candidates, projection_prefilter,
                                                   projection_spans, shadow_prefilter)
from simready.sensors_hw.camera.primary_rays import camera_poses, camera_rays
from simready.sensors_hw.camera.render import PASSES, FramePasses, render_frame, z_depth, z_depth_numpy
from simready.sensors_hw.camera.shading import SHADOW_BIAS_M, SHADOW_RANGE_M, shade, shade_numpy

__all__ = [
    "DEPTH_CONVENTION", "DEPTH_FORMATS", "DEPTH_ZSTD_LEVEL", "DEPTH_ZSTD_SUFFIX", "PASSES", "ROW_TIME_RULE",
    "SEMANTIC_IGNORE", "SEMANTIC_IGNORE_8BIT", "SEMANTIC_NOTHING_HIT", "SHADOW_BIAS_M", "SHADOW_RANGE_M", "BoxFilter",
    "FramePasses", "Lighting", "apply_distortion", "camera_poses", "camera_rays", "decode_depth", "decode_id_rgb",
    "decode_semantic_rgb", "depth_file_bytes", "distort_normalized", "encode_depth", "encode_depth_numpy",
    "encode_id_rgb", "encode_semantic_rgb", "id_png_bytes", "rgb_png_bytes", "semantic_png_bytes", "finish_rgb",
    "finish_rgb_numpy", "pinhole", "pixel_rays", "project",
    "projection_candidates", "projection_prefilter", "projection_spans", "read_depth_file", "render_frame",
    "row_times", "shade", "shade_numpy", "shadow_prefilter", "undistort_normalized", "unproject", "z_depth",
    "z_depth_numpy",
]
