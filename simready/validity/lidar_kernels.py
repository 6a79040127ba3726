"""Compiled kernel of the gate's LiDAR rows (numba): each actor's point count and centroid in a sweep, in one
pass over its points instead of one full-length comparison and gather per actor of the legend.

Bits: the centroid is numpy's ``xyz[ids == cid].mean(axis=0)`` (the rows summed in order from the first, then
divided by the count), ``fastmath`` off; ``tests/test_validity_evidence.py`` holds it to numpy.
"""

from __future__ import annotations

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)


@numba.njit(**_JIT)
def instance_centroids(xyz: np.ndarray, ids: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(counts (k,) int64, centroids (k, 3) float64)`` of the points ``xyz`` (n, 3) whose id ``ids`` (n,) is
    ``wanted[j]`` (k ids, sorted ascending); a centroid with no point is NaN."""
    k = wanted.shape[0]
    counts = np.zeros(k, np.int64)
    sums = np.zeros((k, 3), np.float64)
    for i in range(ids.shape[0]):
        j = np.searchsorted(wanted, ids[i])
        if j < k and wanted[j] == ids[i]:
            if counts[j] == 0:
                sums[j, 0], sums[j, 1], sums[j, 2] = xyz[i, 0], xyz[i, 1], xyz[i, 2]
            else:
                sums[j, 0] += xyz[i, 0]
                sums[j, 1] += xyz[i, 1]
                sums[j, 2] += xyz[i, 2]
            counts[j] += 1
    for j in range(k):
        if counts[j]:
            sums[j, 0] /= counts[j]
            sums[j, 1] /= counts[j]
            sums[j, 2] /= counts[j]
        else:
            sums[j, 0] = sums[j, 1] = sums[j, 2] = np.nan
    return counts, sums
