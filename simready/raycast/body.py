"""The rigid bodies a scene is made of: an entity's mesh in its body frame with its track, ids and surface, and
the OBJ reader that keeps the source's triangle order (the order the geometry hash pins and hits index).

Frames as in :mod:`simready.raycast.geometry`: vertices in the body frame, metres; ``track`` places the body
frame in the world over time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simready.catalog.look import SurfaceLook
from simready.world.motion import PoseTrack

UNKNOWN_CLASS_ID = 65535


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


def box_corners(lo: ArrayLike, hi: ArrayLike) -> NDArray[np.float64]:
    """(8, 3) corners of the axis-aligned box [lo, hi]."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])

