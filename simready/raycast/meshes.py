"""Triangle tables and Embree scenes: the per-triangle float64 tables the refinement and the normals read, the
Embree scenes built once per body set, and the process-wide caches that let the scenes of one template share them
(a static body's world vertices, the static scene of the same static bodies).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import embreex.mesh_construction as embree_mesh
import embreex.rtcore_scene as embree_scene
import numpy as np
from numpy.typing import NDArray

from simready.raycast.body import Body

@dataclass(frozen=True)
class TriangleTable:
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
    def build(cls, vertices: Sequence[NDArray[np.float64]], faces: Sequence[NDArray[np.int64]]) -> "TriangleTable":
        if not faces:  # an empty scene keeps one degenerate row so lookups stay valid
            vertices, faces = [np.zeros((3, 3))], [np.array([[0, 1, 2]])]
        # Every body's triangles' corners gathered at once from the bodies' vertices side by side (the same
        # values as a gather per body: a street has thousands of bodies, and three gathers per body were most of
        # a scene's build).
        corners = np.concatenate(vertices)[_stacked_faces(vertices, faces)]
        v0 = np.ascontiguousarray(corners[:, 0])
        e1 = corners[:, 1] - v0
        e2 = corners[:, 2] - v0
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


def _stacked_faces(vertices: Sequence[NDArray[np.float64]], faces: Sequence[NDArray[np.int64]]) -> NDArray[np.int64]:
    """(T, 3) every body's faces as rows into its vertices side by side (each body's shifted by the vertices
    before it)."""
    start = np.cumsum([0] + [len(v) for v in vertices[:-1]]).astype(np.int64)
    return np.concatenate(faces) + np.repeat(start, [len(f) for f in faces])[:, None]


def embree_scene_of(meshes: Iterable[tuple[NDArray[np.float64], NDArray[np.int64]]]) -> embree_scene.EmbreeScene:
    """An Embree scene of (vertices, faces) meshes, built once (embreex wants float32 / int32)."""
    scene = embree_scene.EmbreeScene()
    for vertices, faces in meshes:
        embree_mesh.TriangleMesh(scene, np.ascontiguousarray(vertices, np.float32), np.ascontiguousarray(faces, np.int32))
    return scene


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


def static_scene_of(bodies: Sequence[Body], world_vertices: Sequence[NDArray[np.float64]]) -> embree_scene.EmbreeScene:
    """The Embree scene of static ``bodies`` (world vertices beside each), built once for the same geometry."""
    def same(kept: tuple[Any, NDArray[np.float64], NDArray[np.int64]], b: Body, v: NDArray[np.float64]) -> bool:
        return kept[0]() is b or (np.array_equal(kept[1], v) and np.array_equal(kept[2], b.faces))

    for kept, scene in _STATIC_SCENES:
        if len(kept) == len(bodies) and all(same(k, b, v) for k, b, v in zip(kept, bodies, world_vertices)):
            return scene
    scene = embree_scene_of(zip(world_vertices, (b.faces for b in bodies)))
    _STATIC_SCENES.append((tuple((weakref.ref(b), v, b.faces) for b, v in zip(bodies, world_vertices)), scene))
    del _STATIC_SCENES[:-_MAX_STATIC_SCENES]
    return scene


def static_world_vertices(b: Body) -> NDArray[np.float64]:
    """World vertices of static body ``b`` (read-only), computed once per body object (a body shared by several
    scenes, :func:`simready.sensors_hw.scene_build.build_scene`'s statics)."""
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


def is_box_surface(vertices: NDArray[np.float64], faces: NDArray[np.int64]) -> bool:
    """Whether a triangle mesh is exactly the closed surface of its axis-aligned bounding box: every triangle in one of
    the box's six face planes (its three vertices on it), all wound outward or all inward, each face's triangles'
    areas summing to the face's, and every edge shared by exactly two triangles that run along it in opposite
    directions (closed and consistently wound: the triangles tile each face, no hole, no fold). A segment from
    outside such a box into its interior crosses the surface (Embree's cast, not guaranteed watertight, agreed on every
    such ray tested).
    Compare ``vertices`` as Embree holds them (float32 values)."""
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    if len(f) < 12 or len(v) < 8:
        return False
    lo, hi = v.min(axis=0), v.max(axis=0)
    ext = hi - lo
    if not np.all(ext > 0.0):
        return False
    tri = v[f]  # (F, 3 vertices, 3 axes)
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    plane = np.full(len(f), -1)
    outward = np.zeros(len(f), bool)
    for a in range(3):
        for side, value in ((0, lo[a]), (1, hi[a])):
            on = np.all(tri[:, :, a] == value, axis=1) & (plane < 0)
            plane[on] = 2 * a + side
            outward[on] = (normal[on, a] > 0.0) == bool(side)
    if np.any(plane < 0) or not (outward.all() or not outward.any()):
        return False
    area = np.bincount(plane, weights=0.5 * np.linalg.norm(normal, axis=1), minlength=6)
    want = np.repeat([ext[1] * ext[2], ext[0] * ext[2], ext[0] * ext[1]], 2)
    if not np.allclose(area, want, rtol=1e-9, atol=0.0):
        return False
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    if len(np.unique(directed, axis=0)) != len(directed):
        return False  # an edge run twice the same way: not consistently wound, or more than two triangles on it
    undirected, counts = np.unique(np.sort(directed, axis=1), axis=0, return_counts=True)
    return bool(len(undirected) and np.all(counts == 2))
