"""Ray casting against the scene: the one geometric authority every sensor and every truth label casts against.

It sits below both :mod:`simready.sensors_hw` (camera, LiDAR, radar) and
:mod:`simready.truth` (surface identity, correspondence, tracks), so neither
has to import the other for it.
"""

from simready.raycast.geometry import Body, Hits, SceneGeometry, read_obj_triangles

__all__ = ["Body", "Hits", "SceneGeometry", "read_obj_triangles"]
