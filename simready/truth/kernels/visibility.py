"""Visibility of projected points from the target frame's own surface-identity and depth buffers (compiled).

The buffers decide most points exactly; the rest are UNDECIDED, for the exact re-cast
(:mod:`simready.truth.correspondence.visibility`). The states are shared with the fused flow pass
(:func:`simready.truth.kernels.flow.flow_of_samples`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.truth.kernels.compile import JIT

#: States :func:`buffer_visibility` returns per point (and :func:`.flow.flow_of_samples`, with OUT_OF_VIEW for a point
#: not in view, which buffer_visibility calls UNDECIDED).
HIDDEN, VISIBLE, UNDECIDED, OUT_OF_VIEW = 0, 1, 2, 3


@numba.njit(**JIT)
def buffer_visibility(uv: np.ndarray, z: np.ndarray, in_view: np.ndarray, body: np.ndarray, triangle: np.ndarray,
                      body_img: np.ndarray, triangle_img: np.ndarray, z_img: np.ndarray, width: int, height: int,
                      hidden_margin_m: float, hidden_margin_rel: float) -> np.ndarray:
    """Per point: VISIBLE, HIDDEN or UNDECIDED from the target frame's surface-identity and depth buffers.

    The four pixel centres around each point's (pinhole) projection decide it:

    * all four see the point's own triangle (same body, same triangle): VISIBLE. The directions that
      meet one triangle from one origin form a convex cone, so the point's own ray, inside the four
      rays' hull, meets that triangle too, at the point.
    * all four see one other triangle, nearer than the point by more than the margin at every one of
      them: HIDDEN. The point's ray meets that triangle too, and on a plane 1/z is affine in the image
      coordinates, so its depth there is at most the largest of the four: nearer than the point.
    * anything else (an edge, two surfaces, nothing hit, the image border, a point not in view): UNDECIDED.

    Args:
        uv: (N, 2) pinhole pixel coordinates; z: (N,) z-depths; in_view: (N,) bool.
        body, triangle: (N,) the points' surface identity.
        body_img, triangle_img: (H·W,) the target frame's per-pixel identity (−1 where nothing is hit).
        z_img: (H·W,) its z-depth (anything where nothing is hit).
    """
    n = len(z)
    out = np.empty(n, np.uint8)
    for i in range(n):
        out[i] = UNDECIDED
        if not in_view[i]:
            continue
        u, v = uv[i, 0], uv[i, 1]
        if not (u >= 0.0 and u <= width - 1.0 and v >= 0.0 and v <= height - 1.0):
            continue
        u0 = min(int(math.floor(u)), width - 2)
        v0 = min(int(math.floor(v)), height - 2)
        p00 = v0 * width + u0
        corners = (p00, p00 + 1, p00 + width, p00 + width + 1)
        b0, t0 = body_img[p00], triangle_img[p00]
        same = True
        for p in corners:
            if body_img[p] != b0 or triangle_img[p] != t0:
                same = False
                break
        if not same or b0 < 0:
            continue
        if b0 == body[i] and t0 == triangle[i]:
            out[i] = VISIBLE
            continue
        limit = z[i] - hidden_margin_m - hidden_margin_rel * z[i]
        nearer = True
        for p in corners:
            if not (z_img[p] < limit):
                nearer = False
                break
        if nearer:
            out[i] = HIDDEN
    return out
