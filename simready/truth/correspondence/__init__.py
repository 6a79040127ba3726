"""Surface identity and frame-to-frame correspondence for one camera (SPEC §11).

Everything here is computed from the world state through the one geometric
authority (:class:`~simready.raycast.geometry.SceneGeometry`), never from
images:

* **Surface identity** of a visible sample (a pixel of frame A): owner
  entity, geometry hash, element, triangle index (source order) and float64
  barycentrics — from the camera's own primary-ray hits, refined in float64
  (:mod:`.samples`, tabled by :mod:`.surface_table`).
* **Where that surface point is at B**: the point is fixed in its body
  (``p_body`` = the barycentric combination of the body-frame triangle), so
  at any time it is ``T_world_body(t) · p_body``. For a static body the pose
  is one constant matrix, so the world point at B is bitwise the world
  point at A and the scene displacement is exactly zero (:mod:`.bodies`).
* **Projection into B with a rolling shutter**: each point at the time of
  the row that sees it, by fixed-point iteration on the row (:mod:`.projection`).
* **Visibility at B**: by an exact float64 re-cast, or from B's own identity
  and depth buffers with the re-cast only where they cannot decide
  (:mod:`.visibility`).

Pixel conventions as the camera (:mod:`simready.sensors_hw.camera`): optical
frame x right, y down, z forward; pixel centres at integers; depth, id and
the pinhole coordinates ``uv`` undistorted; ``uv_distorted`` are the RGB
image's coordinates (Brown k1, k2; equal to ``uv`` with the lens off).
Rolling-shutter row times refer to pinhole rows.

One module per concept, in the order the computation runs:

- :mod:`.poses`: poses as rows of 12 (rotation, translation), the layout every table and kernel reads.
- :mod:`.view`: :class:`FrameView`, when and from where a frame samples the world; :func:`distorted_uv`.
- :mod:`.bodies`: body points in the world; which bodies are static; moving bodies' poses per row.
- :mod:`.samples`: :class:`Samples`, a frame's visible samples with surface identity (the samples pass).
- :mod:`.surface_table`: the surface identity table of a frame's samples.
- :mod:`.projection`: :func:`project_body_points`, the rolling-shutter projection (:class:`ShutterProjection`).
- :mod:`.visibility`: the exact re-cast (:func:`recast_visible`) and the buffers' answer (:func:`buffer_visible`).
- :mod:`.correspond`: :func:`correspond`, a source frame's samples in a target frame (:class:`Correspondence`);
  forward (A → B, hidden flag ``occluded``) and backward (B → A from B's own samples, ``disoccluded``) are
  computed separately, never one by negating the other.

Flow and scene displacement are derived from a correspondence in :mod:`simready.truth.flow`. Every name above is
also imported from this package, its public face.
"""

from __future__ import annotations

from simready.truth.correspondence.bodies import (moving_pose_tables, moving_pose_tables_of_bodies, static_bodies,
                                                  static_world_points, world_points_at)
from simready.truth.correspondence.correspond import Correspondence, correspond
from simready.truth.correspondence.poses import apply_pose_rows, pose_rows
from simready.truth.correspondence.projection import (MAX_ROW_ITERATIONS, ShutterProjection, camera_coords,
                                                      project_body_points, project_body_points_numpy)
from simready.truth.correspondence.samples import Samples
from simready.truth.correspondence.surface_table import surface_table, surface_table_numpy
from simready.truth.correspondence.view import FrameView, distorted_uv
from simready.truth.correspondence.visibility import (HIDDEN_MARGIN_M, HIDDEN_MARGIN_REL, VISIBILITY_TOL_M,
                                                      buffer_visible, recast_visible)

__all__ = [
    "HIDDEN_MARGIN_M", "HIDDEN_MARGIN_REL", "MAX_ROW_ITERATIONS", "VISIBILITY_TOL_M", "Correspondence", "FrameView",
    "Samples", "ShutterProjection", "apply_pose_rows", "buffer_visible", "camera_coords", "correspond",
    "distorted_uv", "moving_pose_tables", "moving_pose_tables_of_bodies", "pose_rows", "project_body_points",
    "project_body_points_numpy", "recast_visible", "static_bodies", "static_world_points", "surface_table",
    "surface_table_numpy", "world_points_at",
]
