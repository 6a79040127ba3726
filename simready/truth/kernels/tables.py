"""A truth table's float columns from per-sample values in one compiled pass each: the precision's rounding
(:func:`quantized32`), the surface table's columns (:func:`surface_columns`) and the flow table's
(:func:`flow_columns`) — the unfused paths the fused passes (:mod:`.samples`, :mod:`.flow`) are bitwise.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.truth.kernels.compile import JIT


@numba.njit(**JIT)
def quantized32(values: np.ndarray, step: float) -> np.ndarray:
    """:func:`simready.truth.precision.quantized` in one pass: ``rint(x / step) · step`` as float32, bit for bit
    (``step`` a power of two, so dividing by it is multiplying by its exact inverse; NaN stays NaN)."""
    inv_step = 1.0 / step
    out = np.empty(len(values), np.float32)
    for i in range(len(values)):
        out[i] = np.float32(np.rint(values[i] * inv_step) * step)
    return out


@numba.njit(**JIT)
def surface_columns(body: np.ndarray, triangle: np.ndarray, bary: np.ndarray, cam: np.ndarray,
                    compact_of_body: np.ndarray, index_of_body: np.ndarray, step: float) -> tuple:
    """The surface table's per-sample columns in one pass: the compact id, per-body int32 indices
    (``index_of_body``: (K, B), one row per column; the surface table's one row is the body's index), the triangle
    as int32, the barycentrics rounded to ``step`` (:func:`quantized32`'s operations) and the z-depth as float32;
    bit for bit the gathers, casts and roundings one by one."""
    n = len(body)
    compact = np.empty(n, compact_of_body.dtype)
    index = np.empty((index_of_body.shape[0], n), np.int32)
    tri = np.empty(n, np.int32)
    bu, bv, depth = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    inv_step = 1.0 / step
    for i in range(n):
        b = body[i]
        compact[i] = compact_of_body[b]
        for k in range(index_of_body.shape[0]):
            index[k, i] = index_of_body[k, b]
        tri[i] = np.int32(triangle[i])
        bu[i] = np.float32(np.rint(bary[i, 0] * inv_step) * step)
        bv[i] = np.float32(np.rint(bary[i, 1] * inv_step) * step)
        depth[i] = np.float32(cam[i, 2])
    return compact, index, tri, bu, bv, depth


@numba.njit(**JIT)
def flow_columns(uv: np.ndarray, u: np.ndarray, v: np.ndarray, target_world: np.ndarray, source_world: np.ndarray,
                 step: float) -> tuple:
    """A flow table's float columns in one pass: the pinhole flow ``uv − (u, v)`` rounded to ``step``
    (``precision.quantized``' operations) and the scene displacement, float32 each."""
    n = len(u)
    du, dv = np.empty(n, np.float32), np.empty(n, np.float32)
    dx, dy, dz = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    for i in range(n):
        du[i] = np.float32(np.rint((uv[i, 0] - np.float64(u[i])) / step) * step)
        dv[i] = np.float32(np.rint((uv[i, 1] - np.float64(v[i])) / step) * step)
        dx[i] = np.float32(target_world[i, 0] - source_world[i, 0])
        dy[i] = np.float32(target_world[i, 1] - source_world[i, 1])
        dz[i] = np.float32(target_world[i, 2] - source_world[i, 2])
    return du, dv, dx, dy, dz


@numba.njit(**JIT)
def step_differences(values: np.ndarray, step: float, out: np.ndarray) -> tuple:
    """A column held at a declared ``step`` (every finite value a multiple of it, :func:`quantized32`) as the int32
    first differences of its multiples: ``k[i] − k[i−1]`` with ``k = value / step`` (``k[−1]`` = 0), a NaN row
    carrying the previous multiple (difference 0) and marked in ``nan``. ``ok`` is False where a value is infinite or
    not a multiple, or a multiple reaches 2³⁰ (then the differences could leave int32): the caller stores that column
    as it is (:func:`simready.measurement.writers.differenced`). ``out`` (int32, at least as long as ``values``):
    where the differences go (returned as its first ``len(values)``).

    A column without NaN (every one in practice) takes one branch-free pass that the compiler vectorizes (about a
    quarter of the time of the row-by-row loop, which the others take). It works in float32, eight lanes a vector
    where float64 had four (a street frame's eight columns 3.9 → 3.4 ms in cache; from memory, as in a run, the
    pass is bound by memory: 8.0 → 7.6 ms):
    ``step`` ≤ 1 is a power of two, so ``value · 1/step`` is exact in float32 too (or infinite: marked bad), each
    multiple below 2³⁰ converts to int32 exactly and two such differ by less than 2³¹, so the differences are
    the float64 pass's bit for bit; a value that is not a multiple below 2³⁰ marks the pass bad in both."""
    n = len(values)
    inv_step = 1.0 / step  # a power of two: multiplying by the inverse is dividing, bit for bit
    limit = 2.0 ** 30
    # The branch-free pass: each difference from the two multiples (a NaN, infinite or off-step value marks the
    # pass bad and its differences are not used).
    # A step above 1 or not a power of two (no declared one) could round in float32: the row-by-row loop decides.
    bad = not (step <= 1.0 and math.frexp(step)[0] == 0.5)
    scale, limit32 = np.float32(inv_step), np.float32(limit)
    if n:
        m = values[0] * scale
        bad |= not (abs(m) < limit32)
        bad |= m != np.floor(m)
        out[0] = np.int32(m)
    for i in range(1, n):
        m = values[i] * scale
        bad |= not (abs(m) < limit32)
        bad |= m != np.floor(m)
        out[i] = np.int32(m) - np.int32(values[i - 1] * scale)
    nan = np.zeros(n if bad else 0, np.bool_)
    if not bad:
        return out[:n], nan, 0, True
    last = 0
    n_nan = 0
    for i in range(n):
        x = np.float64(values[i])
        if np.isnan(x):
            nan[i] = True
            n_nan += 1
            out[i] = 0
            continue
        k = x * inv_step
        if not (k > -limit and k < limit) or k != np.floor(k):
            return out[:n], nan, n_nan, False
        ki = np.int64(k)
        out[i] = np.int32(ki - last)
        last = ki
    return out[:n], nan, n_nan, True
