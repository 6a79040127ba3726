"""Rays as a cast takes them: float32 origins and unit directions for Embree (and the caller's float64 rays for the
refinement), their segment starts, the distinct ray times, and the numpy references of the compiled per-ray passes
(incidence cosines, the slab test) in :mod:`simready.raycast.kernels`.

A sensor's ``RayPrefilter`` lives here too: given a world box, the rays (a superset) that can meet it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simready.raycast.kernels import start_points, unique_sorted

#: Given a world box (lo, hi), a superset of the ray indices that can meet it (sorted), or None for all.
RayPrefilter = Callable[[NDArray[np.float64], NDArray[np.float64]], "NDArray[np.intp] | None"]


def rows_f32(a: ArrayLike) -> NDArray[np.float32]:
    return np.ascontiguousarray(np.asarray(a), dtype=np.float32).reshape(-1, 3)


def _float64_rays(origins: ArrayLike, dirs: ArrayLike, normalized: bool) -> tuple[NDArray | None, NDArray | None]:
    """The caller's rays kept in float64 (unit directions) when given in float64, so refinement is
    exact for the rays asked for, not their float32 rounding; (None, None) for float32 input."""
    o, d = np.asarray(origins), np.asarray(dirs)
    if o.dtype != np.float64 or d.dtype != np.float64:
        return None, None
    o = np.ascontiguousarray(o).reshape(-1, 3)
    d = d.reshape(-1, 3)
    return o, (d if normalized else d / np.linalg.norm(d, axis=1, keepdims=True))


@dataclass(frozen=True)
class RayBatch:
    """Rays as cast: float32 origins and unit directions for Embree, times, and the caller's
    float64 rays when given so (see :func:`_float64_rays`)."""

    o32: NDArray[np.float32]
    d32: NDArray[np.float32]
    t: NDArray[np.float64]
    o64: NDArray[np.float64] | None
    d64: NDArray[np.float64] | None

    @classmethod
    def of(cls, origins: ArrayLike, dirs: ArrayLike, times: ArrayLike, normalized: bool) -> "RayBatch":
        dirs = np.asarray(dirs)
        origins = np.broadcast_to(np.asarray(origins), dirs.shape)  # one origin may serve every ray
        o64, d64 = _float64_rays(origins, dirs, normalized)
        o32 = rows_f32(origins if o64 is None else o64)
        d32 = rows_f32(dirs if d64 is None else d64)
        if not normalized and d64 is None:
            d32 = d32 / np.sqrt(np.einsum("ij,ij->i", d32, d32))[:, None]
        return cls(o32, d32, np.broadcast_to(np.asarray(times, np.float64), (len(o32),)), o64, d64)


@dataclass(frozen=True)
class RayGroups:
    """N = G·K rays in G groups of K consecutive rays, each group from one origin at one time (a LiDAR's columns):
    what a cast and its hits keep instead of (N, 3) origins and (N,) times, expanded only when read.

    Attributes:
        size: K, rays per group.
        origins32: (G, 3) float32 origins.
        times: (G,) float64 times.
    """

    size: int
    origins32: NDArray[np.float32]
    times: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.times) * self.size

    def ray_origins(self) -> NDArray[np.float32]:
        """(N, 3) float32: each group's origin repeated for its rays."""
        return np.repeat(self.origins32, self.size, axis=0)

    def ray_times(self) -> NDArray[np.float64]:
        """(N,): each group's time repeated for its rays."""
        return np.repeat(self.times, self.size)

    def times_of(self, idx: NDArray[np.integer]) -> NDArray[np.float64]:
        """The times of rays ``idx`` (the same values as ``ray_times()[idx]``)."""
        return np.take(self.times, np.asarray(idx) // self.size)


def segment_starts(o32: NDArray[np.float32], d32: NDArray[np.float32], r_min: NDArray[np.float32]) -> NDArray[np.float32]:
    """Where each segment starts, ``o + r_min·d`` (float32, one new array), or ``o`` itself when r_min is 0."""
    if not np.any(r_min):
        return o32
    if r_min.ndim == 1 and o32.flags.c_contiguous and d32.flags.c_contiguous:
        return start_points(o32, d32, r_min)  # the same float32 operations in one compiled pass
    start = np.multiply(d32, r_min[:, None] if r_min.ndim else r_min)
    start += o32
    return start


def abs_cos(ng: NDArray[np.float32], d: NDArray[np.float32]) -> NDArray[np.float32]:
    """|n·d| / |n| per row of Embree's unnormalized normals ``ng`` and unit directions ``d`` (float32).

    Column by column with in-place updates: (N, 3) row reductions are several times slower in numpy.
    Rows without a hit hold stale normals; the caller masks them.
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        dot = ng[:, 0] * d[:, 0]
        dot += ng[:, 1] * d[:, 1]
        dot += ng[:, 2] * d[:, 2]
        norm2 = ng[:, 0] * ng[:, 0]
        norm2 += ng[:, 1] * ng[:, 1]
        norm2 += ng[:, 2] * ng[:, 2]
        np.sqrt(norm2, out=norm2)
        np.abs(dot, out=dot)
        dot /= norm2
    return dot



def unique_inverse(times: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``np.unique(times, return_inverse=True)``, in one pass when the times ascend (a sensor's rays do)."""
    ut, inv, ok = unique_sorted(np.ascontiguousarray(times, np.float64))
    return (ut, inv) if ok else np.unique(times, return_inverse=True)


def slab_candidates(o: NDArray[np.float32], inv_d: NDArray[np.float32], lo: NDArray, hi: NDArray,
                     t_max: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Which rays' segments [0, t_max] meet the box [lo, hi]; o, inv_d are (3, M) (vectorized slab test): the
    reference of the compiled :func:`simready.raycast.kernels.slab_select` the casts use."""
    t_enter = np.full(o.shape[1], -np.inf, np.float32)
    t_exit = t_max.copy()
    for axis in range(3):
        a = (np.float32(lo[axis]) - o[axis]) * inv_d[axis]
        b = (np.float32(hi[axis]) - o[axis]) * inv_d[axis]
        np.maximum(t_enter, np.minimum(a, b), out=t_enter)
        np.minimum(t_exit, np.maximum(a, b), out=t_exit)
    return (t_exit >= t_enter) & (t_exit >= 0.0)
