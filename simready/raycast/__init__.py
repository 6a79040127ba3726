"""Ray casting against the scene: the one geometric authority every sensor and every truth label casts against.

It sits below both :mod:`simready.sensors_hw` (camera, LiDAR, radar) and
:mod:`simready.truth` (surface identity, correspondence, tracks), so neither
has to import the other for it.

Its rooms: :mod:`~simready.raycast.geometry` (``SceneGeometry``: the scene, its swept bounds, the casts and the
moving bodies), :mod:`~simready.raycast.body` (a body and its OBJ mesh), :mod:`~simready.raycast.hits` (what a cast
returns, and its float64 refinement), :mod:`~simready.raycast.rays` (rays as cast), :mod:`~simready.raycast.meshes`
(triangle tables, Embree scenes, the static-scene cache) and :mod:`~simready.raycast.kernels` (their compiled passes).
"""

from simready.raycast.geometry import Body, Hits, SceneGeometry, read_obj_triangles

__all__ = ["Body", "Hits", "SceneGeometry", "read_obj_triangles"]
