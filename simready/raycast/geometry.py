"""Scene geometry: the one geometric authority every sensor and label casts against.

Why one module: camera pixels, LiDAR beams, radar rays and surface-identity
labels must agree on which triangle of which entity a ray meets, at which
distance, at the ray's own time. They all go through ``SceneGeometry.cast``.

How time is handled without rebuilding acceleration structures:

* Static bodies (constant tracks) are put into one Embree scene once, in
  world coordinates.
* Every moving body has its own Embree scene, built once in its *body*
  frame. A ray at time t is moved into the body frame with the body's pose at
  t (``T_body_world(t)``) and cast there; a rigid transform keeps ray
  parameters, so the distance is the world distance.
* Only rays whose segment can meet the body's world bounds *swept over the
  rays' time window* are transformed (a vectorized slab test), because
  transforming every ray into every body was the measured cost of the naive
  version (NOTES.md: ~490 ms a frame, numpy not Embree). A sensor may pass a
  ``prefilter`` that finds a superset of those rays from its own structure
  without touching every ray (the camera projects the box per row, the
  LiDAR takes its azimuth arc per column); the slab test still decides.
* Each moving cast is limited to the nearest distance found so far, so
  Embree itself keeps the nearest hit across static and moving bodies.

Precision: Embree works in float32 (≈1e-7 relative). ``Hits.refine()`` (or
``cast(exact=True)``) re-intersects each hit with its own triangle's plane
in float64, so ``distance_m``, ``barycentric_uv`` and the points are float64
and mutually consistent (the hit point equals the barycentric combination
of the triangle's vertices to ~1e-12 m). It is opt-in because on a full
camera frame it costs about as much as the cast; labels refine what they
publish, the camera refines distances only for its depth pass.

Conventions: world frame x east, y north, z up; body frames as in
:mod:`simready.world.frames`; quaternions (inside tracks) are ``[x, y, z, w]``.
Barycentrics ``(u, v)`` weight the triangle's second and third vertex:
``p = (1 − u − v)·v0 + u·v1 + v·v2`` (Embree's convention). Triangle indices
are positions in the body's ``faces`` array (source order). Normals are
geometric face normals ``(v1 − v0) × (v2 − v0)``, unit length, outward for
counter-clockwise winding; they are not flipped toward the ray.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import embreex.mesh_construction as embree_mesh
import embreex.rtcore_scene as embree_scene
import numpy as np
from numpy.typing import ArrayLike, NDArray

from simready.catalog.look import SurfaceLook
from simready.common.scratch import work_array
from simready.raycast.kernels import (body_tables, hit_points, mover_hits, rays_to_body, refine_static,
                                      rotate_normals, slab_select, start_points, static_hits, swept_box,
                                      unique_sorted)
from simready.world.identity import NOTHING_HIT, compact_ids
from simready.world.motion import TIME_EPS_S, PoseTrack

UNKNOWN_CLASS_ID = 65535

#: Largest gap, seconds, between the poses sampled to bound a body's sweep.
SWEEP_SAMPLE_S = 0.005
#: Safety factor on the motion allowed between two sampled poses.
SWEEP_PAD_FACTOR = 2.0
#: Absolute padding of swept bounds, metres (float32 slab-test slack).
SWEEP_PAD_M = 1e-3


@dataclass(frozen=True)
class Body:
    """One rigid piece of geometry owned by an entity.

    Attributes:
        entity_id: stable identifier (SPEC §3), e.g. ``scene/instance:bldg_1``.
        mesh_vertices: (V, 3) float64 vertex positions in the body frame, metres.
        faces: (F, 3) int vertex indices, counter-clockwise seen from outside.
        geometry_hash: content hash of the mesh source (pins vertex/triangle order).
        element: which element of the entity this is (``render.obj``).
        semantic_class_id: ontology class id; 65535 = unknown (ignore).
        albedo: linear RGB diffuse reflectance in [0, 1] (camera).
        reflectance: near-infrared / radar reflectance in [0, 1].
        track: world trajectory of the body frame; constant = static.
        look: per-triangle base colour and textures (an imported asset), which the camera samples
            instead of ``albedo``; None: ``albedo`` everywhere.
    """

    entity_id: str
    mesh_vertices: NDArray[np.float64]
    faces: NDArray[np.int64]
    geometry_hash: str
    element: str = "render.obj"
    semantic_class_id: int = UNKNOWN_CLASS_ID
    albedo: tuple[float, float, float] = (0.5, 0.5, 0.5)
    reflectance: float = 0.5
    track: PoseTrack = field(default_factory=PoseTrack.constant)
    look: SurfaceLook | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        v = np.array(self.mesh_vertices, np.float64).reshape(-1, 3)
        f = np.array(self.faces, np.int64).reshape(-1, 3)
        if len(f) == 0:
            raise ValueError(f"{self.entity_id}: body has no triangles")
        if self.look is not None and len(self.look.albedo) != len(f):
            raise ValueError(f"{self.entity_id}: look describes {len(self.look.albedo)} triangles, body has {len(f)}")
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"{self.entity_id}: face index out of range")
        v.setflags(write=False)
        f.setflags(write=False)
        object.__setattr__(self, "mesh_vertices", v)
        object.__setattr__(self, "faces", f)
        object.__setattr__(self, "albedo", tuple(float(a) for a in self.albedo))


def read_obj_triangles(path: str | Path) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Vertices and triangles of an OBJ file in file order.

    Why not trimesh: its loader may merge or reorder vertices, and the
    triangle index must be the source order the geometry hash pins. Polygons
    are fan-triangulated in order; ``v/vt/vn`` references use the vertex part.
    """
    verts: list[list[float]] = []
    tris: list[tuple[int, int, int]] = []
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v":
            verts.append([float(x) for x in parts[1:4]])
        elif parts[0] == "f":
            idx = [int(p.split("/")[0]) for p in parts[1:]]
            idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
            tris.extend((idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1))
    return np.asarray(verts, np.float64).reshape(-1, 3), np.asarray(tris, np.int64).reshape(-1, 3)


#: Given a world box (lo, hi), a superset of the ray indices that can meet it (sorted), or None for all.
RayPrefilter = Callable[[NDArray[np.float64], NDArray[np.float64]], "NDArray[np.intp] | None"]


@dataclass(frozen=True)
class _TriangleTable:
    """Per-triangle data of many bodies, concatenated; row = offset[body] + triangle.

    ``plane`` is ``n·v0`` and ``dual1``/``dual2`` the in-plane dual basis of
    (e1, e2), so a plane point p has barycentrics ``((p−v0)·dual1, (p−v0)·dual2)``.
    """

    v0: NDArray[np.float64]
    e1: NDArray[np.float64]
    e2: NDArray[np.float64]
    n: NDArray[np.float64]
    plane: NDArray[np.float64]
    dual1: NDArray[np.float64]
    dual2: NDArray[np.float64]
    normal32: NDArray[np.float32]  # (T + 1, 3): unit normals, NaN-free, last row zero

    @classmethod
    def build(cls, vertices: Sequence[NDArray[np.float64]], faces: Sequence[NDArray[np.int64]]) -> "_TriangleTable":
        if not faces:  # an empty scene keeps one degenerate row so lookups stay valid
            vertices, faces = [np.zeros((3, 3))], [np.array([[0, 1, 2]])]
        v0 = np.concatenate([v[f[:, 0]] for v, f in zip(vertices, faces)])
        e1 = np.concatenate([v[f[:, 1]] for v, f in zip(vertices, faces)]) - v0
        e2 = np.concatenate([v[f[:, 2]] for v, f in zip(vertices, faces)]) - v0
        n = np.cross(e1, e2)
        norm = np.linalg.norm(n, axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            n = n / norm
            g11, g12, g22 = (np.einsum("ij,ij->i", a, b) for a, b in ((e1, e1), (e1, e2), (e2, e2)))
            det = (g11 * g22 - g12 * g12)[:, None]
            dual1 = (g22[:, None] * e1 - g12[:, None] * e2) / det
            dual2 = (g11[:, None] * e2 - g12[:, None] * e1) / det
        plane = np.einsum("ij,ij->i", n, v0)
        # One extra zero row: the row of "no hit" (see SceneGeometry._tri_offset_ext).
        normal32 = np.concatenate([np.nan_to_num(n), np.zeros((1, 3))]).astype(np.float32)
        return cls(v0, e1, e2, n, plane, dual1, dual2, normal32)


def _embree_scene(meshes: Iterable[tuple[NDArray[np.float64], NDArray[np.int64]]]) -> embree_scene.EmbreeScene:
    """An Embree scene of (vertices, faces) meshes, built once (embreex wants float32 / int32)."""
    scene = embree_scene.EmbreeScene()
    for vertices, faces in meshes:
        embree_mesh.TriangleMesh(scene, np.ascontiguousarray(vertices, np.float32), np.ascontiguousarray(faces, np.int32))
    return scene


def box_corners(lo: ArrayLike, hi: ArrayLike) -> NDArray[np.float64]:
    """(8, 3) corners of the axis-aligned box [lo, hi]."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def _rows_f32(a: ArrayLike) -> NDArray[np.float32]:
    return np.ascontiguousarray(np.asarray(a), dtype=np.float32).reshape(-1, 3)


def _float64_rays(origins: ArrayLike, dirs: ArrayLike, normalized: bool) -> tuple[NDArray | None, NDArray | None]:
    """The caller's rays kept in float64 (unit directions) when given in float64, so refinement is
    exact for the rays asked for, not their float32 rounding; (None, None) for float32 input."""
    o, d = np.asarray(origins), np.asarray(dirs)
    if o.dtype != np.float64 or d.dtype != np.float64:
        return None, None
    o = np.ascontiguousarray(o).reshape(-1, 3)
    d = d.reshape(-1, 3)
    return o, (d if normalized else d / np.linalg.norm(d, axis=1, keepdims=True))


@dataclass(frozen=True)
class _RayBatch:
    """Rays as cast: float32 origins and unit directions for Embree, times, and the caller's
    float64 rays when given so (see :func:`_float64_rays`)."""

    o32: NDArray[np.float32]
    d32: NDArray[np.float32]
    t: NDArray[np.float64]
    o64: NDArray[np.float64] | None
    d64: NDArray[np.float64] | None

    @classmethod
    def of(cls, origins: ArrayLike, dirs: ArrayLike, times: ArrayLike, normalized: bool) -> "_RayBatch":
        dirs = np.asarray(dirs)
        origins = np.broadcast_to(np.asarray(origins), dirs.shape)  # one origin may serve every ray
        o64, d64 = _float64_rays(origins, dirs, normalized)
        o32 = _rows_f32(origins if o64 is None else o64)
        d32 = _rows_f32(dirs if d64 is None else d64)
        if not normalized and d64 is None:
            d32 = d32 / np.sqrt(np.einsum("ij,ij->i", d32, d32))[:, None]
        return cls(o32, d32, np.broadcast_to(np.asarray(times, np.float64), (len(o32),)), o64, d64)


def _start_points(o32: NDArray[np.float32], d32: NDArray[np.float32], r_min: NDArray[np.float32]) -> NDArray[np.float32]:
    """Where each segment starts, ``o + r_min·d`` (float32, one new array), or ``o`` itself when r_min is 0."""
    if not np.any(r_min):
        return o32
    if r_min.ndim == 1 and o32.flags.c_contiguous and d32.flags.c_contiguous:
        return start_points(o32, d32, r_min)  # the same float32 operations in one compiled pass
    start = np.multiply(d32, r_min[:, None] if r_min.ndim else r_min)
    start += o32
    return start


def _abs_cos(ng: NDArray[np.float32], d: NDArray[np.float32]) -> NDArray[np.float32]:
    """|n·d| / |n| per row of Embree's unnormalized normals ``ng`` and unit directions ``d`` (float32).

    Column by column with in-place updates: (N, 3) row reductions are several times slower in numpy.
    Rows without a hit hold stale normals; the caller masks them.
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        dot = ng[:, 0] * d[:, 0]
        dot += ng[:, 1] * d[:, 1]
        dot += ng[:, 2] * d[:, 2]
        norm2 = ng[:, 0] * ng[:, 0]
        norm2 += ng[:, 1] * ng[:, 1]
        norm2 += ng[:, 2] * ng[:, 2]
        np.sqrt(norm2, out=norm2)
        np.abs(dot, out=dot)
        dot /= norm2
    return dot


#: ``slab_select``'s candidates when every ray is one.
_ALL = np.zeros(0, np.int64)
#: ``mover_hits``' cosines when a cast has none.
_NO_COS = np.zeros(0, np.float32)
#: What :meth:`SceneGeometry._mover_rays` returns when no ray can meet the body.
_NO_RAYS = (np.zeros(0, np.intp), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4, 4)), np.zeros(0, np.int64))


def _unique_inverse(times: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``np.unique(times, return_inverse=True)``, in one pass when the times ascend (a sensor's rays do)."""
    ut, inv, ok = unique_sorted(np.ascontiguousarray(times, np.float64))
    return (ut, inv) if ok else np.unique(times, return_inverse=True)


def _slab_candidates(o: NDArray[np.float32], inv_d: NDArray[np.float32], lo: NDArray, hi: NDArray,
                     t_max: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Which rays' segments [0, t_max] meet the box [lo, hi]; o, inv_d are (3, M) (vectorized slab test): the
    reference of the compiled :func:`simready.raycast.kernels.slab_select` the casts use."""
    t_enter = np.full(o.shape[1], -np.inf, np.float32)
    t_exit = t_max.copy()
    for axis in range(3):
        a = (np.float32(lo[axis]) - o[axis]) * inv_d[axis]
        b = (np.float32(hi[axis]) - o[axis]) * inv_d[axis]
        np.maximum(t_enter, np.minimum(a, b), out=t_enter)
        np.minimum(t_exit, np.maximum(a, b), out=t_exit)
    return (t_exit >= t_enter) & (t_exit >= 0.0)


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

    hit: NDArray[np.bool_]
    distance_m: NDArray[np.float64]
    body_index: NDArray[np.int32]
    triangle_index: NDArray[np.int32]
    time_s: NDArray[np.float64]
    scene: "SceneGeometry" = field(repr=False)
    _origin32: NDArray[np.float32] = field(repr=False)
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

    def __len__(self) -> int:
        return len(self.hit)

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
        if known is not None and len(known[0]):
            pos = np.minimum(np.searchsorted(known[0], rays), len(known[0]) - 1)
            if np.array_equal(known[0][pos], rays):
                return known[1], known[2][pos]
        ut, inv = _unique_inverse(self.time_s[rays])
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
        return self._lookup(np.array(self.scene.entity_ids_of_body, dtype=object), None)

    @cached_property
    def geometry_hash(self) -> NDArray[np.object_]:
        return self._lookup(np.array([b.geometry_hash for b in self.scene.bodies], dtype=object), None)

    @cached_property
    def element(self) -> NDArray[np.object_]:
        return self._lookup(np.array([b.element for b in self.scene.bodies], dtype=object), None)

    def refine(self, *, barycentrics: bool = True, compiled: bool = True, copy: bool = True) -> "Hits":
        """Re-intersect every hit with its own triangle's plane in float64 (in place; returns self).

        Distances (and with ``barycentrics`` the barycentrics, hence the
        points) then agree to ~1e-12 m; the triangle stays Embree's choice.
        ``barycentrics=False`` refines distances only, at about half the cost
        (what an exact depth image needs). Hits on static geometry are refined
        by a compiled kernel (:func:`simready.raycast.kernels.refine_static`);
        ``compiled=False`` runs the numpy passes it repeats bit for bit. ``copy=False``: the distances are
        refined in the array ``distance_m`` holds instead of a copy (a caller that has handed out no view of it:
        a camera frame's depth pass on its own fresh cast saves a frame-sized copy).
        """
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
        if compiled:  # static hits in one compiled pass (bitwise the numpy groups below)
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


#: World vertices of static bodies by body object (a weak reference to it, the read-only vertices).
_WORLD_VERTICES: dict[int, tuple[Any, NDArray[np.float64]]] = {}
_MAX_WORLD_VERTICES = 100_000

#: Embree scenes of the static bodies by the body objects they hold, in order (per body a weak reference to it,
#: its world vertices and faces; the scene): a sample's base and branches, and a worker's samples of one template,
#: share their static bodies (:func:`simready.sensors_hw.scene_build.build_scene` keeps them per template), so the
#: static scene (a street of thousands of instances) is built once. Bodies are frozen with read-only arrays: the
#: same objects, the same scene; a body built again (a parked actor of the sample) matches by its arrays.
_STATIC_SCENES: list[tuple[tuple[tuple[Any, NDArray[np.float64], NDArray[np.int64]], ...], embree_scene.EmbreeScene]] = []
_MAX_STATIC_SCENES = 4


def _static_scene_of(bodies: Sequence[Body], world_vertices: Sequence[NDArray[np.float64]]) -> embree_scene.EmbreeScene:
    """The Embree scene of static ``bodies`` (world vertices beside each), built once for the same geometry."""
    def same(kept: tuple[Any, NDArray[np.float64], NDArray[np.int64]], b: Body, v: NDArray[np.float64]) -> bool:
        return kept[0]() is b or (np.array_equal(kept[1], v) and np.array_equal(kept[2], b.faces))

    for kept, scene in _STATIC_SCENES:
        if len(kept) == len(bodies) and all(same(k, b, v) for k, b, v in zip(kept, bodies, world_vertices)):
            return scene
    scene = _embree_scene(zip(world_vertices, (b.faces for b in bodies)))
    _STATIC_SCENES.append((tuple((weakref.ref(b), v, b.faces) for b, v in zip(bodies, world_vertices)), scene))
    del _STATIC_SCENES[:-_MAX_STATIC_SCENES]
    return scene


class SceneGeometry:
    """All bodies of one world, ready to cast rays at any time inside their tracks.

    Bodies are ordered by ``(entity_id, element)`` so body indices do not
    depend on the caller's order. ``separate`` names entities cast on their
    own even when static (e.g. a parked ego), so a sensor can ignore its
    carrier body.
    """

    def __init__(self, bodies: Iterable[Body], *, separate: Iterable[str] = ()) -> None:
        self.bodies: list[Body] = sorted(bodies, key=lambda b: (b.entity_id, b.element))
        keys = [(b.entity_id, b.element) for b in self.bodies]
        if len(set(keys)) != len(keys):
            raise ValueError("two bodies share an (entity_id, element)")
        separate = set(separate)
        self.entity_ids_of_body: list[str] = [b.entity_id for b in self.bodies]
        self.compact_ids: dict[str, int] = compact_ids(self.entity_ids_of_body)
        self.compact_id_of_body = np.array([self.compact_ids[e] for e in self.entity_ids_of_body], np.uint32)
        self.semantic_of_body = np.array([b.semantic_class_id for b in self.bodies], np.uint16)
        self.albedo_of_body = np.array([b.albedo for b in self.bodies], np.float32).reshape(-1, 3)
        # The per-body tables with a last row for body −1 (nothing hit).
        self._compact_id_ext = np.append(self.compact_id_of_body, np.uint32(NOTHING_HIT))
        self._semantic_ext = np.append(self.semantic_of_body, np.uint16(0))
        self._albedo_ext = np.append(self.albedo_of_body, np.zeros((1, 3), np.float32), axis=0)  # misses: 0
        self._looks = {i: b.look for i, b in enumerate(self.bodies) if b.look is not None}
        self.reflectance_of_body = np.array([b.reflectance for b in self.bodies], np.float64)
        is_static = np.array([b.track.is_static and b.entity_id not in separate for b in self.bodies], bool)
        self._is_static = is_static
        self._is_static_ext = np.append(is_static, True)
        counts = np.array([len(b.faces) for b in self.bodies], np.int64)
        offset = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        # Index −1 (no hit) maps to offset T + 1, so its row T + 1 − 1 = T is the zero row of normal32.
        self._tri_offset_ext = np.append(offset, int(counts.sum()) + 1)
        self._body_tris = _TriangleTable.build([b.mesh_vertices for b in self.bodies], [b.faces for b in self.bodies])
        world_vertices = [self._static_world_vertices(i) for i in range(len(self.bodies))]
        self._world_tris = _TriangleTable.build(world_vertices, [b.faces for b in self.bodies])
        static_bodies = np.flatnonzero(is_static).astype(np.int32)
        # Embree numbers geometries 0, 1, … in the order they are added; −1 (no hit) maps to −1.
        self._body_of_static_geom_ext = np.append(static_bodies, np.int32(-1))
        self._static_scene = _static_scene_of([self.bodies[i] for i in static_bodies],
                                              [world_vertices[i] for i in static_bodies])
        self.moving: list[int] = np.flatnonzero(~is_static).tolist()
        # Bodies whose track is never present (background reserves that do not enter in the clip): no swept bounds.
        self._never_present = {i: not np.any(self.bodies[i].track.present) for i in self.moving}
        self._moving_scene = {i: _embree_scene([(self.bodies[i].mesh_vertices, self.bodies[i].faces)])
                              for i in self.moving}
        self._local_box = {i: (self.bodies[i].mesh_vertices.min(axis=0), self.bodies[i].mesh_vertices.max(axis=0))
                           for i in self.moving}
        # (centre, half extents, radius of the furthest corner from the body origin) of each local box.
        self._local_box_shape = {i: ((lo + hi) / 2, (hi - lo) / 2, float(np.linalg.norm(box_corners(lo, hi), axis=1).max()))
                                 for i, (lo, hi) in self._local_box.items()}

    def _static_world_vertices(self, i: int) -> NDArray[np.float64]:
        """World vertices of a static body (NaN for moving ones: they have no single pose), computed once per body
        object (a body shared by several scenes, :func:`simready.sensors_hw.scene_build.build_scene`'s statics)."""
        b = self.bodies[i]
        if not self._is_static[i]:
            return np.full_like(b.mesh_vertices, np.nan)
        hit = _WORLD_VERTICES.get(id(b))
        if hit is not None and hit[0]() is b:
            return hit[1]
        T = b.track.pose_at(b.track.t_start)
        v = b.mesh_vertices @ T[:3, :3].T + T[:3, 3]
        v.setflags(write=False)
        if len(_WORLD_VERTICES) >= _MAX_WORLD_VERTICES:
            for key in [k for k, (ref, _) in _WORLD_VERTICES.items() if ref() is None]:
                del _WORLD_VERTICES[key]
            if len(_WORLD_VERTICES) >= _MAX_WORLD_VERTICES:
                _WORLD_VERTICES.clear()
        _WORLD_VERTICES[id(b)] = (weakref.ref(b), v)
        return v

    # --- lookups ------------------------------------------------------------

    def body_indices(self, entity_ids: Iterable[str]) -> list[int]:
        wanted = set(entity_ids)
        return [i for i, e in enumerate(self.entity_ids_of_body) if e in wanted]

    def is_static(self, body_index: int) -> bool:
        return bool(self._is_static[body_index])

    # --- swept bounds -------------------------------------------------------

    def swept_bounds(self, body_index: int, t0_s: float, t1_s: float) -> tuple[NDArray, NDArray] | None:
        """Conservative world AABB of a moving body over [t0, t1] (None if absent throughout).

        Poses are sampled at the track's ticks inside the window, both ends and
        at most ``SWEEP_SAMPLE_S`` apart; the box of the transformed local box
        corners is padded by the furthest any body point can move between two
        samples, ``(|v|max + |ω|max·r)·gap``, times ``SWEEP_PAD_FACTOR``.
        """
        track = self.bodies[body_index].track
        if self._never_present[body_index] and (track.is_constant or (
                t0_s >= track.t_start - TIME_EPS_S and t1_s <= track.t_end + TIME_EPS_S)):
            return None  # what sampling the window would say (a reserve that never enters), without sampling it
        n = max(2, math.ceil((t1_s - t0_s) / SWEEP_SAMPLE_S) + 1)
        knots = track.t_s[(track.t_s > t0_s) & (track.t_s < t1_s)]
        # Sorted, duplicates harmless: they only add zero gaps.
        ts = np.sort(np.concatenate([np.linspace(t0_s, t1_s, n), knots])) if len(knots) else np.linspace(t0_s, t1_s, n)
        smp = track.sample(ts)
        centre, half, radius = self._local_box_shape[body_index]
        # The world AABB of a rotated box is centre ± |R|·half (exact, no corner enumeration): one compiled pass
        # over the sampled poses (:func:`simready.raycast.kernels.swept_box`).
        lo, hi, seen = swept_box(smp.matrices(), smp.present, smp.velocity_mps, smp.angular_velocity_rps, ts,
                                 centre, half, radius, SWEEP_PAD_FACTOR, SWEEP_PAD_M)
        return (lo, hi) if seen else None

    # --- casting ------------------------------------------------------------

    def _to_body(self, b: int, o: NDArray, d: NDArray, sel: NDArray[np.intp],
                 times: NDArray) -> tuple[NDArray, NDArray, NDArray[np.bool_], NDArray[np.float64], NDArray[np.int64]]:
        """Rays ``sel`` of (N, 3) ``o``, ``d`` at ``times`` (one per selected ray) in body b's frame (float64),
        whether b is present then, and b's world-from-body poses (U, 4, 4) at the distinct times with each
        ray's index into them (kept for the hits' normals and refinement)."""
        ut, inv = _unique_inverse(times)
        smp = self.bodies[b].track.sample(ut)
        T = smp.matrices()
        # Row-vector form of R^T·(x − p), one compiled pass (np.matmul's fused products).
        o_b, d_b = rays_to_body(sel, o, d, False, T, inv)
        return o_b, d_b, smp.present[inv], T, inv

    def _movers(self, ignore: Iterable[str]) -> list[int]:
        ignored = set(self.body_indices(ignore))
        if any(self._is_static[i] for i in ignored):
            raise ValueError("cannot ignore a body in the static scene; build the scene with separate=[...]")
        return [b for b in self.moving if b not in ignored]

    def _mover_rays(self, b: int, o: NDArray[np.float32], d: NDArray[np.float32], times: NDArray,
                    t_limit: NDArray[np.float32], window: tuple[float, float],
                    prefilter: RayPrefilter | None) -> tuple[NDArray[np.intp], NDArray, NDArray, NDArray, NDArray]:
        """Rays that can meet moving body b (swept bounds, prefilter, slab test, presence), in its frame,
        with b's world-from-body poses at their distinct times and each one's index into them."""
        box = self.swept_bounds(b, *window)
        if box is None:
            return _NO_RAYS
        idx = prefilter(*box) if prefilter is not None else None
        if idx is not None and len(idx) == 0:
            return _NO_RAYS
        # The slab test over the candidates where they lie (one compiled pass, no gathered copies).
        every = idx is None
        idx = slab_select(o, d, _ALL if every else np.asarray(idx, np.int64), every, np.asarray(box[0], np.float64),
                          np.asarray(box[1], np.float64), t_limit)
        if len(idx) == 0:
            return _NO_RAYS
        o_b, d_b, present, T, pose = self._to_body(b, o, d, idx, times[idx])
        if present.all():
            return idx, o_b, d_b, T, pose
        return idx[present], o_b[present], d_b[present], T, pose[present]

    def albedo_at(self, hits: Hits) -> NDArray[np.float32]:
        """(N, 3) float32 linear albedo where each ray hit (0 for misses): the body's ``albedo``, or its
        ``look`` sampled at the hit's triangle and barycentrics."""
        out = hits.__dict__.pop("_base_albedo", None)  # filled by Hits.fill_tables (handed out once: callers write)
        if out is None:
            out = np.take(self._albedo_ext, hits.body_index, axis=0)
        for b, look in self._looks.items():
            rays = np.flatnonzero(hits.body_index == b)
            if len(rays):
                out[rays] = look.sample(hits.triangle_index[rays], hits.take(rays).barycentric_uv)
        return out

    def cast(self, origins: ArrayLike, dirs: ArrayLike, times: ArrayLike, max_range_m: float | ArrayLike,
             min_range_m: float | ArrayLike = 0.0, *, exact: bool = False, ignore: Iterable[str] = (),
             prefilter: RayPrefilter | None = None, normalized: bool = False, incidence: bool = False,
             starts: NDArray[np.float32] | None = None, window: tuple[float, float] | None = None) -> Hits:
        """Nearest hit of each ray against the world at that ray's time.

        Args:
            origins: (N, 3) world ray origins, metres.
            dirs: (N, 3) world directions; normalized here unless ``normalized``.
            times: (N,) or scalar ray times, seconds (inside every moving track).
            max_range_m, min_range_m: segment along each ray, metres (scalar or (N,)).
            exact: refine every hit in float64 now (see :meth:`Hits.refine`).
            ignore: entity ids not to hit (must be cast on their own: moving
                or ``separate``), e.g. the sensor's carrier.
            prefilter: optional sensor-specific superset of the rays that can
                meet a world box (a camera projects it, a LiDAR takes its
                azimuth range); the exact slab test still follows.
            incidence: also fill ``Hits.cos_incidence`` (cheap here: Embree
                returns the normal anyway; a LiDAR's intensity needs it).
            starts: (N, 3) float32 segment starts ``o + min_range·d`` exactly as
                this method would compute them (float32 product, then sum), from a
                sensor that generates them with its rays in one compiled pass
                (:func:`simready.raycast.kernels.sensor_rays`); None: computed here.
            window: the least and the greatest of ``times`` when the caller knows them without a pass over
                every ray (a sensor's rows or columns); None: computed here.
        """
        rays = _RayBatch.of(origins, dirs, times, normalized)
        o32, d32, t, n = rays.o32, rays.d32, rays.t, len(rays.t)
        r_min = np.asarray(min_range_m, np.float32)
        r_max = np.asarray(max_range_m, np.float32)
        o_start = _start_points(o32, d32, r_min) if starts is None else starts
        # The segment lengths, then Embree's nearest hits in place: a work array (read below, not kept).
        t_best = work_array("cast.t_best", n, np.float32)
        np.subtract(r_max, r_min, out=t_best)  # no temporary (broadcast when either is one value)
        res = self._static_scene.run(o_start, d32, dists=t_best, output=1)
        body = res["geomID"]  # reused in place (no new array): geometry ids become body indices
        # One pass: the body of each geometry id, with ``incidence`` the cosines (_abs_cos's operations), and
        # hit_distances' hit and t + r_min (+inf where nothing was hit, the cosine NaN there).
        r_min_1 = r_min.reshape(-1)
        cos_all, hit, dist = static_hits(body, self._body_of_static_geom_ext, res["Ng"], d32, incidence, res["tfar"],
                                         r_min_1)
        cos = cos_all if incidence else None
        prim, u, v = res["primID"], res["u"], res["v"]
        t_best = res["tfar"]  # the same buffer, now the nearest static hit; movers must beat it
        rotations: dict[int, tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.int64]]] = {}
        for b, idx, o_b, d_b, T, pose in self._mover_batches(ignore, o_start, d32, t, t_best, prefilter, window):
            r = self._moving_scene[b].run(o_b, d_b, dists=t_best[idx], output=1)
            # The rays that met b (closer than the nearest hit so far) take its hit, hit_distances' float64
            # t + r_min and the cosine of the body-frame normal and direction (the same angle): one pass.
            sel, closer = mover_hits(np.asarray(idx, np.int64), r["primID"], r["u"], r["v"], r["tfar"], r["Ng"], d_b, b,
                                     body, prim, u, v, t_best, _NO_COS if cos is None else cos, hit, dist, r_min_1)
            rotations[b] = (sel, T, pose[closer])
        hits = Hits(hit, dist, body, prim, t, self, o32, d32, u, v, False, rays.o64, rays.d64)
        hits._rotations = rotations
        if cos is not None:
            hits.cos_incidence = cos
        return hits.refine() if exact else hits

    def occluded(self, origins: ArrayLike, dirs: ArrayLike, times: ArrayLike, max_range_m: float,
                 *, ignore: Iterable[str] = (), prefilter: RayPrefilter | None = None,
                 normalized: bool = False, window: tuple[float, float] | None = None) -> NDArray[np.bool_]:
        """Whether anything lies on each segment [0, max_range] (shadow rays): any hit, not the nearest;
        ``window`` as for :meth:`cast`.

        Float32 ``dirs`` that are one direction broadcast to every ray (``np.broadcast_to``, a sun) are
        never copied: Embree reads the one row for every ray, the moving bodies a view of it."""
        d_in = np.asarray(dirs)
        if (d_in.ndim == 2 and len(d_in) > 1 and d_in.strides[0] == 0 and d_in.dtype == np.float32
                and np.asarray(origins).dtype == np.float32):
            o32 = _rows_f32(origins)
            d_one = np.ascontiguousarray(d_in[:1])
            if not normalized:  # _RayBatch's normalization of that one row
                d_one = d_one / np.sqrt(np.einsum("ij,ij->i", d_one, d_one))[:, None]
            d_all = np.broadcast_to(d_one, o32.shape)
            t = np.broadcast_to(np.asarray(times, np.float64), (len(o32),))
        else:
            rays = _RayBatch.of(origins, dirs, times, normalized)
            o32, d_one, d_all, t = rays.o32, rays.d32, rays.d32, rays.t
        n = len(t)
        # Each ray's limit: the range (Embree's occlusion query reads it, never writes it), then −1 where a ray is
        # already blocked, so no moving body is tested against it. A work array (not kept).
        limit = work_array("occluded.limit", n, np.float32)
        limit.fill(max_range_m)
        blocked = self._static_scene.run(o32, d_one, dists=limit, query="OCCLUDED") != -1
        np.putmask(limit, blocked, np.float32(-1.0))
        for b, idx, o_b, d_b, _, _ in self._mover_batches(ignore, o32, d_all, t, limit, prefilter, window):
            r = self._moving_scene[b].run(o_b, d_b, dists=np.full(len(idx), max_range_m, np.float32), query="OCCLUDED")
            newly = idx[r != -1]
            blocked[newly] = True
            limit[newly] = -1.0
        return blocked

    def _mover_batches(self, ignore: Iterable[str], o: NDArray[np.float32], d: NDArray[np.float32], t: NDArray,
                       limit: NDArray[np.float32], prefilter: RayPrefilter | None,
                       window: tuple[float, float] | None = None
                       ) -> Iterator[tuple[int, NDArray[np.intp], NDArray[np.float32], NDArray[np.float32], NDArray,
                                           NDArray]]:
        """Per moving body: the rays that can reach it, those rays in its frame (float32, for Embree), and
        its world-from-body poses at the rays' distinct times with each ray's index into them; ``window``: the
        times' least and greatest (None: computed here).

        ``limit`` is read as each body comes up, so a caller that lowers it
        in between (nearest hit so far) prunes the later bodies' rays.
        """
        movers = self._movers(ignore)
        if not movers or len(t) == 0:
            return
        window = (float(t.min()), float(t.max())) if window is None else window
        for b in movers:
            idx, o_b, d_b, T, pose = self._mover_rays(b, o, d, t, limit, window, prefilter)
            if len(idx):
                yield b, idx, o_b.astype(np.float32), d_b.astype(np.float32), T, pose

    def embree_scene_at(self, t_s: float, *, ignore: Iterable[str] = ()) -> embree_scene.EmbreeScene:
        """One Embree scene of every body (but ``ignore``) posed at ``t_s``: the world frozen at one
        time, a reference for tests and benchmarks, not for sensors."""
        skip = set(ignore)
        meshes = []
        for b in self.bodies:
            smp = b.track.sample([t_s], clamp=True)
            if b.entity_id in skip or not smp.present[0]:
                continue
            T = smp.matrices()[0]
            meshes.append((b.mesh_vertices @ T[:3, :3].T + T[:3, 3], b.faces))
        return _embree_scene(meshes)
