"""The track facts' per-body pixel counts and boxes in one compiled pass (:mod:`simready.truth.tracks`)."""

from __future__ import annotations

import numba
import numpy as np

from simready.truth.kernels.compile import JIT


@numba.njit(**JIT)
def body_pixel_boxes(hit: np.ndarray, body_index: np.ndarray, width: int, height: int, n_bodies: int) -> tuple:
    """Per body, over the hit pixels ``hit`` (flat v·W + u; ascending, as ``Hits.hit_index``, is fastest) it owns
    (``body_index[hit[k]]``): how many, and the inclusive box of their columns and rows (``lo_u, lo_v, hi_u,
    hi_v``; ``W, H, −1, −1`` for a body with none) — the bincount and minimum/maximum scatters of the track facts
    in one pass (the row ``hit // W`` kept incrementally: a division only where a pixel leaves the current row)."""
    counts = np.zeros(n_bodies, np.int64)
    lo_u, lo_v = np.full(n_bodies, width, np.int64), np.full(n_bodies, height, np.int64)
    hi_u, hi_v = np.full(n_bodies, -1, np.int64), np.full(n_bodies, -1, np.int64)
    v = 0
    row_start = 0
    for k in range(len(hit)):
        p = hit[k]
        b = body_index[p]
        if not (p >= row_start and p - row_start < width):
            v = p // width
            row_start = v * width
        u = p - row_start
        counts[b] += 1
        lo_u[b] = min(lo_u[b], u)
        lo_v[b] = min(lo_v[b], v)
        hi_u[b] = max(hi_u[b], u)
        hi_v[b] = max(hi_v[b], v)
    return counts, lo_u, lo_v, hi_u, hi_v
