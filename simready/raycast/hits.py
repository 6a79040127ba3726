"""What a cast returns: the nearest surface each ray met, its ids and tables looked up, and its float64 refinement.

Precision: Embree works in float32 (≈1e-7 relative). ``Hits.refine()`` (or
``cast(exact=True)``) re-intersects each hit with its own triangle's plane
in float64, so ``distance_m``, ``barycentric_uv`` and the points are float64
and mutually consistent (the hit point equals the barycentric combination
of the triangle's vertices to ~1e-12 m). It is opt-in because on a full
camera frame it costs about as much as the cast; labels refine what they
publish, the camera refines distances only for its depth pass.

Conventions as in :mod:`simready.raycast.geometry` (barycentrics, triangle order, normals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from simready.raycast.body import Body
from simready.raycast.kernels import (body_tables, hit_points, rays_to_body, refine_static, rotate_normals,
                                      tfar_distances)
from simready.raycast.meshes import TriangleTable
from simready.raycast.rays import RayGroups, unique_inverse
from simready.world.identity import NOTHING_HIT


class CastScene(Protocol):
    """What hits look up in the scene that cast them (:class:`~simready.raycast.geometry.SceneGeometry`): its
    bodies and per-body tables, each ``_ext`` table with a last row for body −1 (nothing hit), and its triangle
    tables in body and world frames. A protocol so that the scene imports its hits and not the other way round."""

    bodies: list[Body]
    entity_ids_of_body: list[str]
    compact_id_of_body: NDArray[np.uint32]
    semantic_of_body: NDArray[np.uint16]
    _compact_id_ext: NDArray[np.uint32]
    _semantic_ext: NDArray[np.uint16]
    _albedo_ext: NDArray[np.float32]
    _is_static_ext: NDArray[np.bool_]
    _tri_offset_ext: NDArray[np.int64]
    _body_tris: TriangleTable
    _world_tris: TriangleTable


@dataclass
class Hits:
    """Nearest surface met by each of N rays.

    No-hit rays have ``hit`` false, ``distance_m`` inf, indices −1 and NaN vectors.

    Attributes:
        hit: (N,) bool.
        distance_m: (N,) float64 from the given origin along the unit direction.
        body_index: (N,) int32 index into ``scene.bodies`` (−1 none).
        triangle_index: (N,) int32 triangle in the body's source order (−1 none).
        time_s: (N,) ray times, seconds.
        exact: whether distances and barycentrics were re-intersected in
            float64 (``refine``); otherwise they are Embree's float32 values.
        exact_distance: whether the distances are (``refine(barycentrics=False)``).
        cos_incidence: (N,) float32 |cos| of the angle between each ray and the
            geometric normal of the triangle it hit (NaN where nothing was hit),
            from Embree's own float32 normal at the ray's time; only when the
            cast was asked for it (``cast(incidence=True)``), else None.

    Derived on first use (float64 unless noted): ``barycentric_uv`` (N, 2),
    ``origin_world``/``dir_world`` (the rays as given), ``point_world``,
    ``point_body`` (barycentric combination of the body-frame vertices),
    ``normal_world`` (float32 geometric normal at the ray's time),
    ``compact_id``, ``semantic``, ``entity_id``, ``geometry_hash``, ``element``.
    """

    #: (N,) hit and distances, or None when the cast left them to be derived on first read (``hit``,
    #: ``distance_m``: from ``body_index`` and ``_tfar``, a grouped cast's).
    _hit: NDArray[np.bool_] | None
    _distance_m: NDArray[np.float64] | None
    body_index: NDArray[np.int32]
    triangle_index: NDArray[np.int32]
    #: (N,) ray times, or None when the cast had them per group (``_groups``): ``time_s`` expands them.
    _time_s: NDArray[np.float64] | None = field(repr=False)
    scene: CastScene = field(repr=False)
    #: (N, 3) float32 origins as cast, or None as for ``_time_s``: ``_origin32`` expands them.
    _o32: NDArray[np.float32] | None = field(repr=False)
    _dir32: NDArray[np.float32] = field(repr=False)
    _u32: NDArray[np.float32] = field(repr=False)
    _v32: NDArray[np.float32] = field(repr=False)
    exact: bool = False
    _origin64: NDArray[np.float64] | None = field(default=None, repr=False)
    _dir64: NDArray[np.float64] | None = field(default=None, repr=False)
    exact_distance: bool = False
    #: Per moving body: (sorted ray indices whose hit was on it when it was cast, its world-from-body poses
    #: (U, 4, 4) at the distinct times of the rays it was cast with, each of those rays' pose index), as the
    #: cast computed them; normals and the refinement reuse them instead of sampling the track again.
    _rotations: dict[int, tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.int64]]] = field(
        default_factory=dict, repr=False)
    cos_incidence: NDArray[np.float32] | None = field(default=None, repr=False)
    #: (N,) after a refinement: whether each ray's own triangle plane gave its distance (else Embree's stays).
    _plane_ok: NDArray[np.bool_] | None = field(default=None, repr=False)
    #: The rays' origins and times per group when the cast was given them so (a LiDAR's columns), else None.
    _groups: RayGroups | None = field(default=None, repr=False)
    #: With ``_distance_m`` None: (N,) float32 nearest distance from each segment's start, and the starts'
    #: distances from the origins (one per ray or one for all): the distance is ``t + r_min`` in float64.
    _tfar: NDArray[np.float32] | None = field(default=None, repr=False)
    _r_min: NDArray[np.float32] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.hit)

    @property
    def hit(self) -> NDArray[np.bool_]:
        """(N,) whether each ray hit (``body_index`` ≥ 0; derived on first read when the cast left it)."""
        if self._hit is None:
            self._hit = self.body_index >= 0
        return self._hit

    @property
    def distance_m(self) -> NDArray[np.float64]:
        """(N,) float64 distances (derived on first read when the cast left them:
        :func:`simready.raycast.kernels.tfar_distances`, the cast's own sums)."""
        if self._distance_m is None:
            assert self._tfar is not None and self._r_min is not None
            self._distance_m = tfar_distances(self.body_index, self._tfar, self._r_min)
        return self._distance_m

    @distance_m.setter
    def distance_m(self, value: NDArray[np.float64]) -> None:
        self._distance_m = value

    @property
    def time_s(self) -> NDArray[np.float64]:
        """(N,) ray times, seconds (expanded from the groups on first read when cast so)."""
        if self._time_s is None:
            assert self._groups is not None
            self._time_s = self._groups.ray_times()
        return self._time_s

    @property
    def _origin32(self) -> NDArray[np.float32]:
        """(N, 3) float32 origins as cast (expanded from the groups on first read when cast so)."""
        if self._o32 is None:
            assert self._groups is not None
            self._o32 = self._groups.ray_origins()
        return self._o32

    def times_of(self, idx: NDArray[np.integer]) -> NDArray[np.float64]:
        """``time_s[idx]`` (from the groups without expanding them when cast so)."""
        if self._time_s is None and self._groups is not None:
            return self._groups.times_of(idx)
        return np.take(self.time_s, idx)

    def take(self, idx: NDArray[np.intp]) -> "Hits":
        """The hits of rays ``idx`` only (same scene, arrays gathered)."""
        out = Hits(*(np.take(getattr(self, f), idx, axis=0) for f in
                     ("hit", "distance_m", "body_index", "triangle_index", "time_s")), self.scene,
                   *(np.take(getattr(self, f), idx, axis=0) for f in ("_origin32", "_dir32", "_u32", "_v32")),
                   self.exact, *(None if getattr(self, f) is None else np.take(getattr(self, f), idx, axis=0)
                                 for f in ("_origin64", "_dir64")), self.exact_distance)
        if "barycentric_uv" in self.__dict__:
            out.__dict__["barycentric_uv"] = self.barycentric_uv[idx]
        if self.cos_incidence is not None:
            out.cos_incidence = np.take(self.cos_incidence, idx)
        if self._plane_ok is not None:
            out._plane_ok = np.take(self._plane_ok, idx)
        return out

    def fill_tables(self, *, albedo: bool = False) -> "Hits":
        """Fill ``rows``, ``compact_id``, ``semantic`` (and with ``albedo`` the bodies' albedo that
        :meth:`SceneGeometry.albedo_at` starts from) in one compiled pass over the rays instead of one
        gather each (:func:`simready.raycast.kernels.body_tables`; the same values). Returns self."""
        sc = self.scene
        rows, compact, semantic, base, static, moving = body_tables(
            self.body_index, self.triangle_index, sc._tri_offset_ext, sc._compact_id_ext, sc._semantic_ext,
            sc._albedo_ext, albedo, sc._is_static_ext)
        self.__dict__.update(rows=rows, compact_id=compact, semantic=semantic, _hits_by_motion=(static, moving))
        if albedo:
            self.__dict__["_base_albedo"] = base
        return self

    @cached_property
    def _hits_by_motion(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """The hit rays on static bodies and those on moving ones (ascending indices each)."""
        h = self.hit_index
        is_static = np.take(self.scene._is_static_ext, np.take(self.body_index, h))
        return h[is_static], h[~is_static]

    @cached_property
    def hit_index(self) -> NDArray[np.intp]:
        return np.flatnonzero(self.hit)

    @cached_property
    def rows(self) -> NDArray[np.int64]:
        """Row in the scene's triangle tables per ray (the zero-normal row T where no hit)."""
        return np.take(self.scene._tri_offset_ext, self.body_index) + self.triangle_index

    @property
    def rays32(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """(N, 3) float32 origins and unit directions exactly as cast (cheap; for shading)."""
        return self._origin32, self._dir32

    @cached_property
    def origin_world(self) -> NDArray[np.float64]:
        """(N, 3) ray origins: the caller's float64 values if given so, else the float32 ones cast."""
        return self._origin32.astype(np.float64) if self._origin64 is None else self._origin64

    @cached_property
    def dir_world(self) -> NDArray[np.float64]:
        """(N, 3) unit directions (float64), as for ``origin_world``."""
        if self._dir64 is not None:
            return self._dir64
        d = self._dir32.astype(np.float64)
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    def dir_world_of(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """``dir_world[idx]`` computed for the rays ``idx`` only (the same operations row by row, so bitwise the
        same values; unlike :meth:`rays64`, which normalizes with other operations)."""
        if "dir_world" in self.__dict__ or self._dir64 is not None:
            return np.take(self.dir_world, idx, axis=0)
        d = np.take(self._dir32, idx, axis=0).astype(np.float64)
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    def rays64(self, idx: NDArray[np.intp]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Float64 origins and unit directions of rays ``idx`` (cheaper than the full ``origin_world``)."""
        if self._origin64 is not None:
            return np.take(self._origin64, idx, axis=0), np.take(self._dir64, idx, axis=0)
        o = np.take(self._origin32, idx, axis=0).astype(np.float64)
        d = np.take(self._dir32, idx, axis=0).astype(np.float64)
        d *= (1.0 / np.sqrt(np.einsum("ij,ij->i", d, d)))[:, None]
        return o, d

    @cached_property
    def barycentric_uv(self) -> NDArray[np.float64]:
        uv = np.full((len(self.hit), 2), np.nan)
        h = self.hit_index
        uv[h, 0] = self._u32[h]
        uv[h, 1] = self._v32[h]
        return uv

    @cached_property
    def point_world(self) -> NDArray[np.float64]:
        out = np.full((len(self.hit), 3), np.nan)
        h = self.hit_index
        out[h] = self.origin_world[h] + self.distance_m[h, None] * self.dir_world[h]
        return out

    def point_world_of(self, idx: NDArray[np.intp], *, compiled: bool = True) -> NDArray[np.float64]:
        """``point_world[idx]`` for hit rays ``idx``, computed for those rays only (the same float64
        operations row by row, so bitwise the same values) rather than for all N; in one compiled pass
        (:func:`simready.raycast.kernels.hit_points`) unless ``compiled=False``."""
        if "point_world" in self.__dict__:
            return self.point_world[idx]
        if compiled:
            unit = self._origin64 is not None
            o, d = (self._origin64, self._dir64) if unit else (self._origin32, self._dir32)
            return hit_points(np.asarray(idx, np.int64), o, d, unit, self.distance_m)
        if self._origin64 is not None:
            o, d = np.take(self._origin64, idx, axis=0), np.take(self._dir64, idx, axis=0)
        else:
            o = np.take(self._origin32, idx, axis=0).astype(np.float64)
            d = np.take(self._dir32, idx, axis=0).astype(np.float64)
            d = d / np.linalg.norm(d, axis=1, keepdims=True)
        return o + np.take(self.distance_m, idx)[:, None] * d

    def point_world32(self) -> NDArray[np.float32]:
        """(N, 3) float32 hit points as Embree saw them (cheap; for shading, not for labels)."""
        return self._origin32 + self._dir32 * np.where(self.hit, self.distance_m, np.nan).astype(np.float32)[:, None]

    @cached_property
    def point_body(self) -> NDArray[np.float64]:
        out = np.full((len(self.hit), 3), np.nan)
        h = self.hit_index
        r = self.rows[h]
        tb = self.scene._body_tris
        uv = self.barycentric_uv[h]
        out[h] = tb.v0[r] + uv[:, :1] * tb.e1[r] + uv[:, 1:] * tb.e2[r]
        return out

    @cached_property
    def normal_world(self) -> NDArray[np.float32]:
        out = np.full((len(self.hit), 3), np.nan, np.float32)
        out[self.hit_index] = self.normals_of(self.hit_index)
        return out

    def normals_or_zero(self) -> NDArray[np.float32]:
        """(N, 3) float32 world normals with zero vectors where nothing was hit (cheap form for shading)."""
        out = np.take(self.scene._world_tris.normal32, self.rows, axis=0)
        moving = np.flatnonzero(~np.take(self.scene._is_static_ext, self.body_index))
        if len(moving):
            out[moving] = self.normals_of(moving)
        return out

    def normals_of(self, idx: NDArray[np.intp]) -> NDArray[np.float32]:
        """(M, 3) float32 world geometric normals of hit rays ``idx`` at their own times."""
        body = self.body_index[idx]
        rows = np.take(self.scene._tri_offset_ext, body) + self.triangle_index[idx]
        out = np.take(self.scene._world_tris.normal32, rows, axis=0)
        moving = np.flatnonzero(~np.take(self.scene._is_static_ext, body))
        for b in np.unique(body[moving]):
            sel = moving[body[moving] == b]
            # R·n rounded to float32 in one compiled pass (np.matmul's fused products)
            out[sel] = rotate_normals(self.scene._body_tris.n, rows[sel], *self._poses_of(int(b), idx[sel]))
        return out

    def _poses_of(self, b: int, rays: NDArray[np.intp]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """World-from-body poses (U, 4, 4) of moving body b and the index of each of ``rays`` (which hit b)
        into them, at the rays' times: the ones the cast used when it has them (no resampling of the
        track), else sampled."""
        known = self._rotations.get(b)
        if known is not None and len(known[0]) == len(rays) and np.array_equal(known[0], rays):
            return known[1], known[2]  # the rays the cast met b with, in its order (no search)
        if known is not None and len(known[0]):
            pos = np.minimum(np.searchsorted(known[0], rays), len(known[0]) - 1)
            if np.array_equal(known[0][pos], rays):
                return known[1], known[2][pos]
        ut, inv = unique_inverse(self.times_of(rays))
        return self.scene.bodies[b].track.poses_at(ut), inv

    def _lookup(self, table: NDArray, fill: object) -> NDArray:
        return np.take(np.append(table, np.array([fill], dtype=table.dtype)), self.body_index)

    @cached_property
    def compact_id(self) -> NDArray[np.uint32]:
        """Compact entity id per ray (0 = nothing hit), as in ``legend.json``."""
        return self._lookup(self.scene.compact_id_of_body, NOTHING_HIT)

    @cached_property
    def semantic(self) -> NDArray[np.uint16]:
        """Semantic class id per ray (0 = nothing hit, 65535 = unknown class)."""
        return self._lookup(self.scene.semantic_of_body, 0)

    @cached_property
    def entity_id(self) -> NDArray[np.object_]:
        return self._lookup(self.scene.names_of_body["entity"], None)

    @cached_property
    def geometry_hash(self) -> NDArray[np.object_]:
        return self._lookup(self.scene.names_of_body["geometry_hash"], None)

    @cached_property
    def element(self) -> NDArray[np.object_]:
        return self._lookup(self.scene.names_of_body["element"], None)

    def refine(self, *, barycentrics: bool = True, compiled: bool = True, copy: bool = True,
               statics: bool = True) -> "Hits":
        """Re-intersect every hit with its own triangle's plane in float64 (in place; returns self).

        Distances (and with ``barycentrics`` the barycentrics, hence the
        points) then agree to ~1e-12 m; the triangle stays Embree's choice.
        ``barycentrics=False`` refines distances only, at about half the cost
        (what an exact depth image needs). Hits on static geometry are refined
        by a compiled kernel (:func:`simready.raycast.kernels.refine_static`);
        ``compiled=False`` runs the numpy passes it repeats bit for bit. ``copy=False``: the distances are
        refined in the array ``distance_m`` holds instead of a copy (a caller that has handed out no view of it:
        a camera frame's depth pass on its own fresh cast saves a frame-sized copy). ``statics=False`` (distances
        only, compiled): the hits on static geometry are left to the caller, which refines them at once with
        :func:`~simready.raycast.kernels.refine_static`'s operations into ``distance_m`` and ``_plane_ok`` (a camera
        frame's depth pass, which computes its z-depth in that same walk:
        :func:`simready.sensors_hw.camera_kernels.refine_z_depth`).
        """
        if not statics and (barycentrics or not compiled or copy):
            raise ValueError("refine(statics=False) refines distances in place, compiled")
        if self.exact or (self.exact_distance and not barycentrics):
            return self
        # Distances refined already (a depth pass): the barycentrics reuse them, and which planes gave one.
        reuse = self.exact_distance and self._plane_ok is not None
        plane_ok = self._plane_ok if reuse else np.zeros(len(self.hit), bool)
        uv = self.barycentric_uv.copy() if barycentrics else None
        dist = self.distance_m.copy() if copy else self.distance_m
        static, moving = self._hits_by_motion
        rows = self.rows
        unit = self._origin64 is not None
        o_in, d_in = (self._origin64, self._dir64) if unit else (self._origin32, self._dir32)
        if compiled and not statics:
            groups = []
        elif compiled:  # static hits in one compiled pass (bitwise the numpy groups below)
            tab = self.scene._world_tris
            refine_static(static, rows, o_in, d_in, unit, tab.plane, tab.n, tab.v0, tab.dual1, tab.dual2, dist,
                          uv if uv is not None else np.zeros((0, 2)), plane_ok, reuse, uv is not None, False)
            groups = []
        else:
            groups = [(static, *self.rays64(static), self.scene._world_tris)]
        for b in np.unique(self.body_index[moving]):
            sel = moving[self.body_index[moving] == b]
            # The rays in b's frame (rays64's widening, the pose the cast used), in one compiled pass.
            o_b, d_b = rays_to_body(sel, o_in, d_in, not unit, *self._poses_of(int(b), sel))
            if compiled:
                tab = self.scene._body_tris
                refine_static(sel, rows, o_b, d_b, True, tab.plane, tab.n, tab.v0, tab.dual1, tab.dual2, dist,
                              uv if uv is not None else np.zeros((0, 2)), plane_ok, reuse, uv is not None, True)
            else:
                groups.append((sel, o_b, d_b, self.scene._body_tris))
        for sel, o, d, tab in groups:
            r = np.take(rows, sel)
            if reuse:  # the same t as below, computed then (where ok; elsewhere uv keeps Embree's)
                t, ok = np.take(dist, sel), np.take(plane_ok, sel)
            else:
                n = np.take(tab.n, r, axis=0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    t = (np.take(tab.plane, r) - np.einsum("ij,ij->i", n, o)) / np.einsum("ij,ij->i", n, d)
                ok = np.isfinite(t)
                dist[sel] = np.where(ok, t, dist[sel])
                plane_ok[sel] = ok
            if uv is not None:
                q = o + t[:, None] * d - np.take(tab.v0, r, axis=0)
                uv[sel, 0] = np.where(ok, np.einsum("ij,ij->i", q, np.take(tab.dual1, r, axis=0)), uv[sel, 0])
                uv[sel, 1] = np.where(ok, np.einsum("ij,ij->i", q, np.take(tab.dual2, r, axis=0)), uv[sel, 1])
        self.distance_m = dist
        self.exact_distance = True
        self._plane_ok = plane_ok
        for name in ("point_world", "point_body"):
            self.__dict__.pop(name, None)
        if uv is not None:
            self.__dict__["barycentric_uv"] = uv
            self.exact = True
        return self
