"""Perception ground truth: the one geometric authority every sensor casts against (SPEC §11)."""

from simready.truth.geometry import Body, Hits, SceneGeometry, read_obj_triangles

__all__ = ["Body", "Hits", "SceneGeometry", "read_obj_triangles"]
