"""The samples pass (compiled): a frame's visible samples with surface identity from its primary hits, and
the surface table's columns from the same pass (:class:`simready.truth.correspondence.samples.Samples`).

Why compiled: it runs once per frame over every hit pixel of a full-resolution frame (~10⁶ points); as numpy
each step is a full-array pass and a gather, and the passes, not the arithmetic, were the cost.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.truth.kernels.compile import JIT


@numba.njit(**JIT)
def surface_samples(pix: np.ndarray, body_index: np.ndarray, static_of_body: np.ndarray, rows: np.ndarray,
                    o_in: np.ndarray, d_in: np.ndarray, unit: bool, dist: np.ndarray, plane_ok: np.ndarray,
                    u32: np.ndarray, v32: np.ndarray, v0: np.ndarray, dual1: np.ndarray, dual2: np.ndarray,
                    rays_cam: np.ndarray, time_in: np.ndarray, triangle_in: np.ndarray, width: int, z_img: np.ndarray,
                    compact_of_body: np.ndarray, index_of_body: np.ndarray, step: float, p_body: np.ndarray) -> tuple:
    """A frame's visible samples from its primary hits in one pass (``Samples.of_hits``): per hit pixel
    ``pix[k]`` (ascending), its body (``body_index[pix[k]]``), the float64 barycentrics of static hits
    (``Hits.refine``'s reuse of refined distances, :func:`simready.raycast.kernels.refine_static`'s operations;
    Embree's where the plane gave no distance; moving hits are left for the caller, NaN here), the world point
    (``Hits.point_world_of``'s operations, :func:`simready.raycast.kernels.hit_points`), the optical-frame point
    (pixel ray × distance), the pixel's column and row, triangle (int32: the one array is the samples' and the
    surface table's column) and time; the frame's z-depth buffer ``z_img``
    (in place, every pixel: the z-depth at ``pix``, +inf between them, so the caller's need not be filled first);
    ``p_body`` ((M, 3), in place) all NaN, the body-frame points of the static samples (the caller fills the moving
    ones'); the indices of the samples on moving bodies; ``pix`` as int32; which bodies the samples
    are on ((B,) bool); and the surface table's columns
    (:func:`.tables.surface_columns`' operations: compact id, per-body indices (the body's own), int32 triangle,
    barycentrics rounded to ``step`` — NaN on moving hits, for the caller to fill — and float32 z-depth), so the
    table needs no second pass over the samples.

    Bitwise the numpy path (``Samples.of_hits_numpy``, then ``surface_columns``): each value repeats its
    operations in order; the column and row are ``pix % width`` and ``pix // width`` kept incrementally (a
    division only where a pixel leaves the current row).
    """
    m = len(pix)
    bary = np.empty((m, 2))
    world = np.empty((m, 3))
    cam = np.empty((m, 3))
    u = np.empty(m, np.int64)
    v = np.empty(m, np.int64)
    t_out = np.empty(m)
    body = np.empty(m, np.intp)
    moving = np.empty(m, np.int64)
    compact = np.empty(m, compact_of_body.dtype)
    n_str = index_of_body.shape[0]
    index = np.empty((n_str, m), np.int32)
    tri32 = np.empty(m, np.int32)
    bu, bv, depth32 = np.empty(m, np.float32), np.empty(m, np.float32), np.empty(m, np.float32)
    pix32 = np.empty(m, np.int32)
    seen = np.zeros(len(static_of_body), np.bool_)
    inv_step = 1.0 / step  # a power of two: multiplying by the inverse is dividing, bit for bit
    n_moving = 0
    row = 0
    row_start = 0
    last = -1  # the previous hit pixel: the ones between are +inf in z_img
    for k in range(m):
        i = pix[k]
        for j in range(last + 1, i):
            z_img[j] = np.inf
        last = i
        p_body[k, 0] = np.nan
        p_body[k, 1] = np.nan
        p_body[k, 2] = np.nan
        pix32[k] = np.int32(i)
        b = body_index[i]
        body[k] = b
        seen[b] = True
        t = dist[i]
        d0, d1, d2 = np.float64(d_in[i, 0]), np.float64(d_in[i, 1]), np.float64(d_in[i, 2])
        o0, o1, o2 = np.float64(o_in[i, 0]), np.float64(o_in[i, 1]), np.float64(o_in[i, 2])
        # The world point: hit_points' normalization (a division by the norm summed x0² + x1² + x2²).
        if unit:
            w0, w1, w2 = d0, d1, d2
        else:
            nrm = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            w0, w1, w2 = d0 / nrm, d1 / nrm, d2 / nrm
        world[k, 0] = o0 + t * w0
        world[k, 1] = o1 + t * w1
        world[k, 2] = o2 + t * w2
        if static_of_body[b]:
            if plane_ok[i]:  # refine_static's barycentrics (a product by the inverse norm, summed x0² + x2² + x1²)
                if not unit:
                    inv = 1.0 / math.sqrt(d0 * d0 + d2 * d2 + d1 * d1)
                    d0, d1, d2 = d0 * inv, d1 * inv, d2 * inv
                r = rows[i]
                q0 = o0 + t * d0 - v0[r, 0]
                q1 = o1 + t * d1 - v0[r, 1]
                q2 = o2 + t * d2 - v0[r, 2]
                b0 = q0 * dual1[r, 0] + q2 * dual1[r, 2] + q1 * dual1[r, 1]
                b1 = q0 * dual2[r, 0] + q2 * dual2[r, 2] + q1 * dual2[r, 1]
            else:
                b0 = np.float64(u32[i])
                b1 = np.float64(v32[i])
        else:
            b0 = np.nan
            b1 = np.nan
            moving[n_moving] = k
            n_moving += 1
        bary[k, 0] = b0
        bary[k, 1] = b1
        bu[k] = np.float32(np.rint(b0 * inv_step) * step)
        bv[k] = np.float32(np.rint(b1 * inv_step) * step)
        for a in range(3):
            cam[k, a] = rays_cam[i, a] * t
        z = cam[k, 2]
        z_img[i] = z
        depth32[k] = np.float32(z)
        if not (i >= row_start and i - row_start < width):
            row = i // width
            row_start = row * width
        u[k] = i - row_start
        v[k] = row
        tri32[k] = np.int32(triangle_in[i])
        t_out[k] = time_in[i]
        compact[k] = compact_of_body[b]
        for s in range(n_str):
            index[s, k] = index_of_body[s, b]
    for j in range(last + 1, len(z_img)):
        z_img[j] = np.inf
    return (bary, world, cam, u, v, tri32, t_out, body, moving[:n_moving], pix32, seen,
            (compact, index, tri32, bu, bv, depth32))
