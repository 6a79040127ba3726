"""Perception ground truth (SPEC §11): surface identity, correspondence and flow, motion field, tracks.

Computed per camera frame from the world through the camera's own model
(:mod:`simready.sensors_hw`) and the scene's ray casting (:mod:`simready.raycast`), never from images.
"""
