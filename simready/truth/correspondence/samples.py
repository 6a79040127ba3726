"""A frame's visible samples with their surface identity (:class:`Samples`): the samples pass over the camera's
own primary-ray hits, refined in float64 — owner body, triangle index (source order), float64 barycentrics,
the point in its body's frame on moving bodies, its world and optical-frame positions at its row's time — and
the frame's identity and depth buffers that visibility at this frame reads.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from simready.sensors_hw.camera import pixel_rays
from simready.raycast.geometry import Hits, SceneGeometry
from simready.truth.correspondence.bodies import static_bodies
from simready.truth.correspondence.surface_table import (surface_body_tables, surface_bodies, surface_table,
                                                         surface_table_numpy)
from simready.truth.correspondence.view import FrameView
from simready.truth.kernels.samples import surface_samples
from simready.truth.kernels.tables import quantized32
from simready.truth.precision import BARYCENTRIC_STEP


@dataclass
class Samples:
    """The visible samples (hit pixels) of one frame, with surface identity.

    Attributes (M rows, pixel order):
        pixel: (M,) int64 flat index v·W + u; u, v: (M,) int pixel (centre) coordinates.
        body: (M,) int body index; triangle: (M,) int32 triangle in source order (as the hits and the surface
            table hold it).
        barycentric_uv: (M, 2) float64 weights of the triangle's 2nd and 3rd vertex.
        point_body: (M, 3) float64 the surface point in its body frame, on moving bodies (NaN on
            static ones, whose world point is all that is needed).
        time_s: (M,) the pixel's row time.
        point_world: (M, 3) the hit point at that time (float64, refined).
        point_camera: (M, 3) in that row's optical frame (pixel ray × refined distance).
    """

    view: FrameView
    pixel: NDArray[np.int64]
    u: NDArray[np.int64]
    v: NDArray[np.int64]
    body: NDArray[np.intp]
    triangle: NDArray[np.int32]
    barycentric_uv: NDArray[np.float64]
    point_body: NDArray[np.float64]
    time_s: NDArray[np.float64]
    point_world: NDArray[np.float64]
    point_camera: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.pixel)

    @property
    def depth_m(self) -> NDArray[np.float64]:
        return self.point_camera[:, 2]

    @cached_property
    def pixel32(self) -> NDArray[np.int32]:
        """``pixel`` as the tables store it (int32; every table of the frame's samples shares it)."""
        return self.pixel.astype(np.int32)

    def moving_indices(self, scene: SceneGeometry) -> NDArray[np.int64]:
        """Ascending indices of the samples on moving bodies of ``scene`` (:meth:`of_hits` found them in its pass)."""
        cached = self.__dict__.get("_moving")
        if cached is not None and cached[0]() is scene:
            return cached[1]
        return np.flatnonzero(~static_bodies(scene)[self.body])

    def bodies_seen(self, scene: SceneGeometry) -> NDArray[np.bool_]:
        """(B,) whether any sample is on each body of ``scene`` (:meth:`of_hits` marked them in its pass)."""
        cached = self.__dict__.get("_seen")
        if cached is not None and cached[0]() is scene:
            return cached[1]
        seen = np.zeros(len(scene.bodies), bool)
        seen[self.body] = True
        return seen

    @cached_property
    def buffers(self) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.float64]]:
        """The frame's per-pixel (H·W,) body and triangle (−1 where nothing is hit) and z-depth (+inf there)."""
        k = self.view.intrinsics
        n = k.width_px * k.height_px
        body, triangle, z = np.full(n, -1, np.int32), np.full(n, -1, np.int32), np.full(n, np.inf)
        body[self.pixel] = self.body
        triangle[self.pixel] = self.triangle
        z[self.pixel] = self.depth_m
        return body, triangle, z

    @classmethod
    def of_hits(cls, scene: SceneGeometry, view: FrameView, hits: Hits) -> "Samples":
        """Visible samples of a frame from its primary-ray hits, refined in float64 here: the distances
        once (the depth pass's refinement when the frame has one), then the barycentrics, points and the
        frame's identity and depth buffers of every static hit in one compiled pass
        (:func:`simready.truth.kernels.samples.surface_samples`); the few hits on moving bodies through
        :meth:`Hits.refine`. Bitwise :meth:`of_hits_numpy`; ``hits`` itself is left unrefined in
        barycentrics."""
        hits.refine(barycentrics=False)
        if hits._plane_ok is None:  # refined by other means: the reference path
            return cls.of_hits_numpy(scene, view, hits)
        k = view.intrinsics
        pix = hits.hit_index.astype(np.int64, copy=False)
        unit = hits._origin64 is not None
        o_in, d_in = (hits._origin64, hits._dir64) if unit else (hits._origin32, hits._dir32)
        tab = scene._world_tris
        # Filled by the pass (z-depth at the hits, +inf between; NaN), not beforehand: a pass over each fewer.
        z_img = np.empty(k.width_px * k.height_px)
        p_body = np.empty((len(pix), 3))
        compact_of_body, index_of_body = surface_body_tables(scene)
        bary, world, cam, u, v, tri, t, body, moving, pix32, seen, columns = surface_samples(
            pix, hits.body_index, static_bodies(scene), hits.rows, o_in, d_in, unit, hits.distance_m, hits._plane_ok,
            hits._u32, hits._v32, tab.v0, tab.dual1, tab.dual2, pixel_rays(view.model).reshape(-1, 3), hits.time_s,
            hits.triangle_index, k.width_px, z_img, compact_of_body, index_of_body, BARYCENTRIC_STEP, p_body)
        if len(moving):
            sub = hits.take(pix[moving]).refine()
            bary[moving] = sub.barycentric_uv
            p_body[moving] = sub.point_body
            _, _, _, bu, bv, _ = columns  # the moving samples' rounded barycentrics (NaN from the pass)
            bu[moving] = quantized32(bary[moving, 0], BARYCENTRIC_STEP)
            bv[moving] = quantized32(bary[moving, 1], BARYCENTRIC_STEP)
        out = cls(view, pix, u, v, body, tri, bary, p_body, t, world, cam)
        # The identity buffers are the hits' own (−1 where nothing is hit); the depth one was filled above.
        out.__dict__["buffers"] = (hits.body_index, hits.triangle_index, z_img)
        # From the same pass: the int32 pixels, which samples are on moving bodies (the motion field's) and the
        # surface table's columns (table() takes them for this scene).
        out.__dict__["pixel32"] = pix32
        out.__dict__["_moving"] = (weakref.ref(scene), moving)
        out.__dict__["_seen"] = (weakref.ref(scene), seen)
        out.__dict__["_surface_columns"] = (weakref.ref(scene), columns)
        return out

    @classmethod
    def of_hits_numpy(cls, scene: SceneGeometry, view: FrameView, hits: Hits) -> "Samples":
        """:meth:`of_hits` as numpy passes over the refined hits (refines ``hits`` in place): its bit reference."""
        hits.refine()
        w = view.intrinsics.width_px
        pix = hits.hit_index.astype(np.int64)
        body = hits.body_index[pix].astype(np.intp)
        moving = np.flatnonzero(~static_bodies(scene)[body])
        p_body = np.full((len(pix), 3), np.nan)
        p_body[moving] = hits.take(pix[moving]).point_body
        rays = pixel_rays(view.model).reshape(-1, 3)
        cam = np.take(rays, pix, axis=0) * hits.distance_m[pix, None]
        return cls(view, pix, pix % w, pix // w, body, hits.triangle_index[pix].astype(np.int32, copy=False),
                   hits.barycentric_uv[pix], p_body, hits.time_s[pix], hits.point_world_of(pix), cam)

    def table(self, scene: SceneGeometry) -> pa.Table:
        """The surface identity table of these samples (:func:`~.surface_table.surface_table`), from the columns
        :meth:`of_hits` computed in its pass when it did for ``scene``."""
        cached = self.__dict__.pop("_surface_columns", None)  # released once tabled
        columns = cached[1] if cached is not None and cached[0]() is scene else None
        return surface_table(scene, self.pixel32, self.body, self.triangle, self.barycentric_uv, self.point_camera,
                             columns)

    def legend(self, scene: SceneGeometry) -> dict[str, list[Any]]:
        """The legend of the bodies these samples are on (:func:`~.surface_table.surface_bodies`): what the surface
        table's ``body`` column stands for, stored in its metadata."""
        return surface_bodies(scene, self.bodies_seen(scene))

    def table_numpy(self, scene: SceneGeometry) -> pa.Table:
        """:meth:`table` column by column in numpy: its bit reference."""
        return surface_table_numpy(scene, self.pixel32, self.body, self.triangle, self.barycentric_uv, self.depth_m)
