"""Poses as rows of 12 — rotation row-major (0:9), translation (9:12) — the one layout that a frame's per-row
camera poses (:attr:`~simready.truth.correspondence.view.FrameView.row_table`), the bodies' pose tables
(:mod:`.bodies`) and the compiled passes (:mod:`simready.truth.kernels`) read, and the one way a point is
moved by such a row (elementwise, so a point's result never depends on the batch it is computed in)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def pose_rows(T: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, 4, 4) poses → (N, 12): rotation row-major (0:9), translation (9:12)."""
    return np.concatenate([T[:, :3, :3].reshape(-1, 9), T[:, :3, 3]], axis=1)


def apply_pose_rows(g: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``R·p + t`` per row from gathered :func:`pose_rows` entries, elementwise only, so a row's
    result never depends on which other rows share the batch (a BLAS kernel may sum in another
    order): that is what makes a static point at B bitwise the point at A."""
    out = np.empty((len(p), 3))
    for i in range(3):
        out[:, i] = p[:, 0] * g[:, 3 * i] + p[:, 1] * g[:, 3 * i + 1] + p[:, 2] * g[:, 3 * i + 2] + g[:, 9 + i]
    return out

