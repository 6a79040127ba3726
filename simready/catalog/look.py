"""What an imported entry's surface looks like, per render triangle: base colour, texture, texture coordinates.

Read from an entry's ``appearance`` (issue 16) by :meth:`simready.catalog.catalog.Catalog.look`, carried by a
:class:`simready.raycast.body.Body`, and sampled by the camera's RGB pass at the barycentrics Embree
reports (depth, id and semantic passes never read it). Colours are linear RGB in [0, 1]: texture PNGs are
sRGB-encoded (as glTF specifies) and decoded here, once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


def srgb_to_linear(srgb_u8: NDArray[np.uint8]) -> NDArray[np.float32]:
    """IEC 61966-2-1 decoding of 8-bit sRGB to linear [0, 1]."""
    c = np.asarray(srgb_u8, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)


@dataclass(frozen=True, eq=False)
class SurfaceLook:
    """Per-triangle appearance, triangles in render.obj source order.

    albedo: (F, 3) float32 linear base colour. texture: (F,) int32 index into ``textures`` (−1: none).
    uv: (F, 3, 2) float32 texture coordinates of each triangle's three corners (v = 0 at the image's top).
    textures: (H, W, 3) float32 linear images.
    """

    albedo: NDArray[np.float32]
    texture: NDArray[np.int32]
    uv: NDArray[np.float32]
    textures: tuple[NDArray[np.float32], ...]

    def __post_init__(self) -> None:
        n = len(self.albedo)
        if self.albedo.shape != (n, 3) or self.texture.shape != (n,) or self.uv.shape != (n, 3, 2):
            raise ValueError("albedo, texture and uv must describe the same triangles")
        if n and self.texture.max() >= len(self.textures):
            raise ValueError("a triangle names a texture that does not exist")

    def sample(self, triangles: NDArray[np.integer], bary_uv: NDArray[np.floating]) -> NDArray[np.float32]:
        """(N, 3) linear albedo at points of ``triangles`` with barycentrics ``(u, v)`` (weights of corners 1, 2).

        Nearest texel, repeating outside [0, 1) (glTF's default wrap).
        """
        out: NDArray[np.float32] = self.albedo[triangles].copy()
        tex = self.texture[triangles]
        for k in np.unique(tex[tex >= 0]).tolist():
            rows = np.flatnonzero(tex == k)
            corners = self.uv[triangles[rows]].astype(np.float64)
            u, v = bary_uv[rows, 0:1], bary_uv[rows, 1:2]
            st = (1.0 - u - v) * corners[:, 0] + u * corners[:, 1] + v * corners[:, 2]
            image = self.textures[k]
            h, w = image.shape[:2]
            col = np.floor(np.mod(st[:, 0], 1.0) * w).astype(np.int64).clip(0, w - 1)
            row = np.floor(np.mod(st[:, 1], 1.0) * h).astype(np.int64).clip(0, h - 1)
            out[rows] *= image[row, col]
        return out
