"""Compiled kernel of the float64 hit refinement (numba): :meth:`simready.raycast.hits.Hits.refine` on
static geometry, the bulk of a camera frame's hits, in one pass per hit instead of a dozen full-array
numpy passes and gathers.

Bits: the same float64 operations in numpy's order (the rays' float32 → float64 widening and
normalization of ``Hits.rays64``, the plane intersection, the dual-basis barycentrics), ``fastmath``
off; tested bit for bit against the numpy path. numpy's ``einsum("ij,ij->i")`` over (N, 3) float64
sums the products as ``(x0·y0 + x2·y2) + x1·y1`` (measured here: that order, not the textual one,
gives its bits), so the dot products below are written in that order. Cached beside this module
(``cache=True``).
"""

from __future__ import annotations

import math

from llvmlite import ir
import numba
from numba import types
import numpy as np
from numba.core.extending import intrinsic

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)


@numba.njit(**_JIT)
def refine_static(sel: np.ndarray, rows: np.ndarray, o_in: np.ndarray, d_in: np.ndarray, unit: bool,
                  plane: np.ndarray, n: np.ndarray, v0: np.ndarray, dual1: np.ndarray, dual2: np.ndarray,
                  dist: np.ndarray, uv: np.ndarray, plane_ok: np.ndarray, reuse: bool, barycentrics: bool,
                  compact: bool) -> None:
    """Refine hits ``sel`` (in place on ``dist``, ``uv``, ``plane_ok``) against triangle rows ``rows`` of the
    tables given (the world's for static hits, the bodies' for moving ones).

    ``o_in``/``d_in``: the rays as given (float64 unit directions when ``unit``, else float32 ones that
    are widened and normalized here), indexed by ray, or with ``compact`` by position in ``sel`` (a moving
    body's rays in its own frame); ``reuse``: ``dist``/``plane_ok`` hold a distance refinement already.
    """
    for k in range(len(sel)):
        i = sel[k]
        r = rows[i]
        j = k if compact else i
        o0, o1, o2 = np.float64(o_in[j, 0]), np.float64(o_in[j, 1]), np.float64(o_in[j, 2])
        d0, d1, d2 = np.float64(d_in[j, 0]), np.float64(d_in[j, 1]), np.float64(d_in[j, 2])
        if not unit:
            inv = 1.0 / math.sqrt(d0 * d0 + d2 * d2 + d1 * d1)
            d0, d1, d2 = d0 * inv, d1 * inv, d2 * inv
        if reuse:
            t = dist[i]
            ok = plane_ok[i]
        else:
            t = (plane[r] - (n[r, 0] * o0 + n[r, 2] * o2 + n[r, 1] * o1)) / (n[r, 0] * d0 + n[r, 2] * d2 + n[r, 1] * d1)
            ok = np.isfinite(t)
            if ok:
                dist[i] = t
            plane_ok[i] = ok
        if barycentrics and ok:
            q0 = o0 + t * d0 - v0[r, 0]
            q1 = o1 + t * d1 - v0[r, 1]
            q2 = o2 + t * d2 - v0[r, 2]
            uv[i, 0] = q0 * dual1[r, 0] + q2 * dual1[r, 2] + q1 * dual1[r, 1]
            uv[i, 1] = q0 * dual2[r, 0] + q2 * dual2[r, 2] + q1 * dual2[r, 1]


@numba.njit(**_JIT)
def hit_points(idx: np.ndarray, o_in: np.ndarray, d_in: np.ndarray, unit: bool, dist: np.ndarray) -> np.ndarray:
    """(M, 3) float64 ``o + dist·d`` of rays ``idx``: :meth:`simready.raycast.hits.Hits.point_world_of`'s
    operations (float32 rays widened and divided by ``np.linalg.norm``, whose sum runs x0² + x1² + x2²)."""
    out = np.empty((len(idx), 3))
    for k in range(len(idx)):
        i = idx[k]
        d0, d1, d2 = np.float64(d_in[i, 0]), np.float64(d_in[i, 1]), np.float64(d_in[i, 2])
        if not unit:
            nrm = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            d0, d1, d2 = d0 / nrm, d1 / nrm, d2 / nrm
        t = dist[i]
        out[k, 0] = np.float64(o_in[i, 0]) + t * d0
        out[k, 1] = np.float64(o_in[i, 1]) + t * d1
        out[k, 2] = np.float64(o_in[i, 2]) + t * d2
    return out


@numba.njit(**_JIT)
def body_tables(body: np.ndarray, triangle: np.ndarray, tri_offset_ext: np.ndarray, compact_ext: np.ndarray,
                semantic_ext: np.ndarray, albedo_ext: np.ndarray, albedo: bool, is_static_ext: np.ndarray) -> tuple:
    """Per ray, in one pass: its row in the scene's triangle tables (``tri_offset_ext[body] + triangle``), its
    compact id, semantic class and (with ``albedo``) its body's albedo; body −1 (no hit) reads each
    ``*_ext`` table's last entry, as ``np.take`` does. Also the hit rays split by ``is_static_ext[body]`` (ascending
    indices, as ``np.flatnonzero`` gives them). Returns (rows int64, compact uint32, semantic uint16,
    albedo (N, 3) float32 or (0, 3), static hits int64, moving hits int64)."""
    n = body.shape[0]
    last = tri_offset_ext.shape[0] - 1
    rows = np.empty(n, np.int64)
    compact = np.empty(n, np.uint32)
    semantic = np.empty(n, np.uint16)
    out = np.empty((n if albedo else 0, 3), np.float32)
    static = np.empty(n, np.int64)
    moving = np.empty(n, np.int64)
    n_static = 0
    n_moving = 0
    for i in range(n):
        b = body[i]
        if b < 0:
            b = last
        elif is_static_ext[b]:
            static[n_static] = i
            n_static += 1
        else:
            moving[n_moving] = i
            n_moving += 1
        rows[i] = tri_offset_ext[b] + np.int64(triangle[i])
        compact[i] = compact_ext[b]
        semantic[i] = semantic_ext[b]
        if albedo:
            out[i, 0] = albedo_ext[b, 0]
            out[i, 1] = albedo_ext[b, 1]
            out[i, 2] = albedo_ext[b, 2]
    # The static hits are most rays: a view of the buffer, not a copy (the few moving ones are copied out).
    return rows, compact, semantic, out, static[:n_static], moving[:n_moving].copy()


@numba.njit(**_JIT)
def start_points(o: np.ndarray, d: np.ndarray, r_min: np.ndarray) -> np.ndarray:
    """(N, 3) float32 ``d·r_min + o`` per ray (numpy's float32 product, then sum), one pass, no temporary."""
    n = o.shape[0]
    out = np.empty((n, 3), np.float32)
    for i in range(n):
        r = r_min[i]
        for a in range(3):
            out[i, a] = d[i, a] * r + o[i, a]
    return out


@numba.njit(**_JIT)
def hit_distances(body: np.ndarray, t: np.ndarray, r_min: np.ndarray, cos: np.ndarray) -> tuple:
    """A cast's ``hit`` (body ≥ 0) and float64 distances ``t + r_min`` from the origin (+inf where nothing was
    hit), ``r_min`` one per ray or one for all (shape (1,)), in one pass; ``cos`` (incidence cosines, or (0,))
    becomes NaN where nothing was hit, in place."""
    n = body.shape[0]
    hit = np.empty(n, np.bool_)
    dist = np.empty(n, np.float64)
    per_ray = r_min.shape[0] == n
    incidence = cos.shape[0] == n
    for i in range(n):
        h = body[i] >= 0
        hit[i] = h
        if h:
            dist[i] = np.float64(t[i]) + np.float64(r_min[i if per_ray else 0])
        else:
            dist[i] = np.inf
            if incidence:
                cos[i] = np.nan
    return hit, dist


@intrinsic
def fma(typingctx, a, b, c):  # type: ignore[no-untyped-def]
    """``a·b + c`` rounded once (LLVM's ``llvm.fma``: the CPU's fused multiply-add, or an exact libm call)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.fma(*args)

    return a(a, b, c), codegen


@intrinsic
def _intersect(typingctx, fn, valid, scene, rayhit):  # type: ignore[no-untyped-def]
    """Embree's nearest-hit query through its address ``fn`` (integers: the function, the valid mask, the
    ``RTCScene``, the ray-hit structure's address): ``rtcIntersect1(scene, rayhit, NULL)`` when ``valid`` is 0, else
    ``rtcIntersectK(valid, scene, rayhit, NULL)`` (:mod:`simready.raycast.embree_direct`)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ptr = ir.IntType(8).as_pointer()
        null = ir.Constant(ptr, None)
        fn_, valid_, scene_, rayhit_ = args
        one = ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr])
        packet = ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr, ptr])
        with builder.if_else(builder.icmp_unsigned("==", valid_, ir.Constant(valid_.type, 0))) as (single, many):
            with single:
                builder.call(builder.inttoptr(fn_, one.as_pointer()),
                             [builder.inttoptr(scene_, ptr), builder.inttoptr(rayhit_, ptr), null])
            with many:
                builder.call(builder.inttoptr(fn_, packet.as_pointer()),
                             [builder.inttoptr(valid_, ptr), builder.inttoptr(scene_, ptr),
                              builder.inttoptr(rayhit_, ptr), null])
        return context.get_dummy_value()

    return types.void(types.intp, types.intp, types.intp, types.intp), codegen


@numba.njit(inline="always", **_JIT)
def _pack(f: np.ndarray, w: np.ndarray, k: int, j: int, o0: np.float32, o1: np.float32, o2: np.float32,
          d0: np.float32, d1: np.float32, d2: np.float32, tfar: np.float32) -> None:
    """Ray j of a packet of ``k`` into the ray-hit structure ``f`` (float32 words, structure of arrays: word q of
    ray j at ``q·k + j``; ``k`` 1 is ``RTCRayHit`` itself; ``w`` the same words as uint32) as ``EmbreeScene.run``
    packs a ray (tnear 0, time 0, mask all ones, flags 0, the ids invalid). Its normal and barycentrics are zeroed:
    what embreex's results hold where nothing was hit (measured; Embree writes them only on a hit)."""
    f[j], f[k + j], f[2 * k + j], f[3 * k + j] = o0, o1, o2, np.float32(0.0)
    f[4 * k + j], f[5 * k + j], f[6 * k + j], f[7 * k + j] = d0, d1, d2, np.float32(0.0)
    f[8 * k + j] = tfar
    w[9 * k + j], w[11 * k + j] = np.uint32(0xFFFFFFFF), np.uint32(0)
    for q in range(12, 17):
        f[q * k + j] = np.float32(0.0)
    for q in range(17, 20):
        w[q * k + j] = np.uint32(0xFFFFFFFF)


@numba.njit(inline="always", **_JIT)
def _hit_id(word: np.uint32) -> np.int32:
    """A returned id as embreex writes it: −1 for Embree's invalid id."""
    return np.int32(-1) if word == np.uint32(0xFFFFFFFF) else np.int32(word)


@numba.njit(inline="always", **_JIT)
def _flush(fn: int, scene: int, valid: np.ndarray, f: np.ndarray, m: int) -> None:
    """Cast the packet's first ``m`` rays (all of a packet of one)."""
    k = valid.shape[0]
    if k == 1:
        _intersect(fn, 0, scene, f.ctypes.data)
        return
    for j in range(k):
        valid[j] = np.int32(-1) if j < m else np.int32(0)
    _intersect(fn, valid.ctypes.data, scene, f.ctypes.data)


@numba.njit(inline="always", **_JIT)
def _cast_packet(fn: int, scene: int, valid: np.ndarray, f: np.ndarray, w: np.ndarray, o: np.ndarray,
                 d: np.ndarray, tfar: np.ndarray, first: int) -> int:
    """Rays ``first`` on of ``o``, ``d``, ``tfar`` (at most a packet) packed and cast; returns how many."""
    k = valid.shape[0]
    m = min(k, o.shape[0] - first)
    for j in range(m):
        i = first + j
        _pack(f, w, k, j, o[i, 0], o[i, 1], o[i, 2], d[i, 0], d[i, 1], d[i, 2], tfar[i])
    _flush(fn, scene, valid, f, m)
    return m


@numba.njit(**_JIT)
def intersect_rows(fn: int, scene: int, valid: np.ndarray, f: np.ndarray, w: np.ndarray, o: np.ndarray,
                   d: np.ndarray, tfar: np.ndarray, out_f: np.ndarray, out_i: np.ndarray) -> None:
    """``EmbreeScene.run(o, d, dists=tfar, output=1)`` through :func:`_intersect` in packets of ``len(valid)`` rays:
    ``out_f`` (N, 6) tfar, u, v and the normal, ``out_i`` (N, 2) primID and geomID (the check of
    :mod:`simready.raycast.embree_direct`)."""
    k = valid.shape[0]
    n = o.shape[0]
    for first in range(0, n, k):
        m = _cast_packet(fn, scene, valid, f, w, o, d, tfar, first)
        for j in range(m):
            i = first + j
            out_f[i, 0], out_f[i, 1], out_f[i, 2] = f[8 * k + j], f[15 * k + j], f[16 * k + j]
            out_f[i, 3], out_f[i, 4], out_f[i, 5] = f[12 * k + j], f[13 * k + j], f[14 * k + j]
            out_i[i, 0], out_i[i, 1] = _hit_id(w[17 * k + j]), _hit_id(w[18 * k + j])


@numba.njit(**_JIT)
def cast_static_rows(fn: int, scene: int, valid: np.ndarray, f: np.ndarray, w: np.ndarray, o: np.ndarray,
                     d: np.ndarray, tfar: np.ndarray, body_of_geom_ext: np.ndarray, incidence: bool, r_min: np.ndarray,
                     distances: bool, body: np.ndarray, prim: np.ndarray, u: np.ndarray, v: np.ndarray,
                     cos: np.ndarray, hit: np.ndarray, dist: np.ndarray) -> None:
    """``EmbreeScene.run(o, d, dists=tfar, output=1)`` and :func:`static_hits` after it in one pass, ``len(valid)``
    consecutive rays a packet (:func:`_intersect`): ``tfar`` the segment lengths, overwritten with the nearest
    distances as ``run`` overwrites them, ``body`` the body index of each hit, ``prim``, ``u``, ``v`` Embree's
    triangle and barycentrics, with ``incidence`` ``cos`` (float32 |n·d| / |n|, NaN where nothing was hit), with
    ``distances`` ``hit`` and the float64 ``dist`` = tfar + r_min (+inf where nothing was hit; ``r_min`` one per
    ray or one for all). The same values as those two calls, without embreex's six result arrays."""
    k = valid.shape[0]
    n = o.shape[0]
    per_ray = r_min.shape[0] == n
    for first in range(0, n, k):
        m = _cast_packet(fn, scene, valid, f, w, o, d, tfar, first)
        _unpack(f, w, k, m, first, body_of_geom_ext, incidence, body, prim, u, v, tfar, cos)
        if distances:
            for j in range(m):
                i = first + j
                h = body[i] >= 0
                hit[i] = h
                dist[i] = np.float64(tfar[i]) + np.float64(r_min[i if per_ray else 0]) if h else np.inf


@numba.njit(**_JIT)
def spin_cast_static(fn: int, scene: int, valid: np.ndarray, f: np.ndarray, w: np.ndarray, cos_el: np.ndarray,
                     sin_el: np.ndarray, cos_az: np.ndarray, sin_az: np.ndarray, T: np.ndarray, r_min: np.float32,
                     t_limit: np.float32, body_of_geom_ext: np.ndarray, incidence: bool, d: np.ndarray, s: np.ndarray,
                     body: np.ndarray, prim: np.ndarray, u: np.ndarray, v: np.ndarray, tfar: np.ndarray,
                     cos: np.ndarray) -> None:
    """A spinning sensor's rays and their static cast in one pass: :func:`spin_rays_into`'s directions ``d`` and
    segment starts ``s`` (the column's origin when ``r_min`` is 0), cast against the static scene as they are made,
    ``len(valid)`` at a time (Embree's query, :func:`_intersect`, each ray as ``EmbreeScene.run`` makes it, segment
    length ``t_limit``), each hit written as the cast writes embreex's results and :func:`static_hits` turns them
    (``body`` the body index, ``prim``, ``u``, ``v``, ``tfar`` the nearest distance from the start, with
    ``incidence`` ``cos`` the float32 |n·d| / |n|, NaN where nothing was hit). The same values as those passes in
    turn, without the (N, 3) ray buffers between them (``s`` is still written: the moving bodies' rays are picked
    from it)."""
    _spin_pass(cos_el, sin_el, cos_az, sin_az, T, np.full(1, r_min), d, s, fn, scene, valid, f, w, t_limit,
               body_of_geom_ext, incidence, body, prim, u, v, tfar, cos)


@numba.njit(inline="always", **_JIT)
def _unpack(f: np.ndarray, w: np.ndarray, k: int, m: int, first: int, body_of_geom_ext: np.ndarray, incidence: bool,
            body: np.ndarray, prim: np.ndarray, u: np.ndarray, v: np.ndarray, tfar: np.ndarray,
            cos: np.ndarray) -> None:
    """A cast packet's ``m`` hits into rays ``first`` on: :func:`static_hits`' body index and cosine (its
    operations), Embree's triangle, barycentrics and distance."""
    last = body_of_geom_ext.shape[0] - 1
    for j in range(m):
        i = first + j
        gi = _hit_id(w[18 * k + j])
        b = body_of_geom_ext[last if gi < 0 else gi]
        body[i] = b
        prim[i] = _hit_id(w[17 * k + j])
        u[i] = f[15 * k + j]
        v[i] = f[16 * k + j]
        tfar[i] = f[8 * k + j]
        if incidence:
            if b >= 0:
                n0, n1, n2 = f[12 * k + j], f[13 * k + j], f[14 * k + j]
                d0, d1, d2 = f[4 * k + j], f[5 * k + j], f[6 * k + j]
                dot = n0 * d0
                dot = dot + n1 * d1
                dot = dot + n2 * d2
                nrm = n0 * n0
                nrm = nrm + n1 * n1
                nrm = nrm + n2 * n2
                cos[i] = abs(dot) / np.sqrt(nrm)
            else:
                cos[i] = np.nan


@numba.njit(**_JIT)
def _spin_pass(cos_el: np.ndarray, sin_el: np.ndarray, cos_az: np.ndarray, sin_az: np.ndarray, T: np.ndarray,
               r_min: np.ndarray, d: np.ndarray, s: np.ndarray, fn: int, scene: int, valid: np.ndarray,
               f: np.ndarray, w: np.ndarray, t_limit: np.float32, body_of_geom_ext: np.ndarray, incidence: bool,
               body: np.ndarray, prim: np.ndarray, u: np.ndarray, v: np.ndarray, tfar: np.ndarray,
               cos: np.ndarray) -> None:
    """:func:`spin_rays_into` (``fn`` 0) and :func:`spin_cast_static` (``fn`` the query's address): one loop."""
    g_n, k_n = cos_az.shape[0], cos_el.shape[0]
    n = g_n * k_n
    cast = fn != 0
    per_ray = r_min.shape[0] == n
    # Segment starts d·r_min + o, or with a cast and no minimum range the origin itself (what the cast reads then).
    scaled = s.shape[0] == n and not (cast and r_min[0] == np.float32(0.0))
    k = valid.shape[0]
    lane = 0
    for g in range(g_n):
        pose = _pose32(T, g)
        p0, p1, p2 = pose[9], pose[10], pose[11]
        ca, sa = cos_az[g], sin_az[g]
        for c in range(k_n):
            i = g * k_n + c
            d0, d1, d2 = _spin_direction(cos_el[c], sin_el[c], ca, sa, pose)
            d[i, 0], d[i, 1], d[i, 2] = d0, d1, d2
            s0, s1, s2 = p0, p1, p2
            if scaled:
                r = r_min[i if per_ray else 0]
                s0, s1, s2 = d0 * r + p0, d1 * r + p1, d2 * r + p2
                s[i, 0], s[i, 1], s[i, 2] = s0, s1, s2
            if not cast:
                continue
            if not scaled:
                s[i, 0], s[i, 1], s[i, 2] = s0, s1, s2
            _pack(f, w, k, lane, s0, s1, s2, d0, d1, d2, t_limit)
            lane += 1
            if lane == k:
                _flush(fn, scene, valid, f, k)
                _unpack(f, w, k, k, i + 1 - k, body_of_geom_ext, incidence, body, prim, u, v, tfar, cos)
                lane = 0
    if lane:
        _flush(fn, scene, valid, f, lane)
        _unpack(f, w, k, lane, n - lane, body_of_geom_ext, incidence, body, prim, u, v, tfar, cos)


@numba.njit(**_JIT)
def sensor_rays(local: np.ndarray, T: np.ndarray, group_t: np.ndarray, r_min: np.ndarray, starts: bool) -> tuple:
    """A sensor's world rays in one pass: G groups (a camera's rows, a LiDAR's columns) of K rays each, group g
    posed by ``T[g]`` (4, 4) float64 at time ``group_t[g]``, its rays' sensor-frame unit directions ``local[g]``
    (K, 3) float32. Returns (origins (G·K, 3) float32, directions (G·K, 3) float32, times (G·K,) float64,
    starts (G·K, 3) float32 or (0, 3)): direction ``local @ R^T`` with R = ``T[g, :3, :3]`` rounded to float32,
    origin ``T[g, :3, 3]`` rounded to float32, and with ``starts`` the segment starts ``d·r_min + o`` (float32
    product, then sum, as :func:`start_points`), ``r_min`` one per ray or one for all (shape (1,)).

    Bits: the directions are what ``np.matmul(local, R^T)`` gives on float32 through OpenBLAS (measured here: its
    kernels fuse the products as ``fma(x2, r2, fma(x1, r1, x0·r0))``), written with explicit fused
    multiply-adds, so they no longer depend on the BLAS build. ``np.repeat`` / ``np.matmul`` replaced: the
    batched (K, 3) × (3, 3) products were most of a frame's ray generation.
    """
    g_n, k_n = local.shape[0], local.shape[1]
    n = g_n * k_n
    o = np.empty((n, 3), np.float32)
    d = np.empty((n, 3), np.float32)
    t = np.empty(n, np.float64)
    s = np.empty((n if starts else 0, 3), np.float32)
    sensor_rays_into(local, T, group_t, r_min, o, d, t, s)
    return o, d, t, s


@numba.njit(**_JIT)
def sensor_rays_into(local: np.ndarray, T: np.ndarray, group_t: np.ndarray, r_min: np.ndarray, o: np.ndarray,
                     d: np.ndarray, t: np.ndarray, s: np.ndarray) -> None:
    """:func:`sensor_rays` into the caller's arrays (G·K, 3), (G·K, 3), (G·K,) and ``s`` (G·K, 3) for the
    segment starts or (0, 3) for none (a work array, :func:`simready.common.scratch.work_array`, when they
    are a temporary of the caller's)."""
    g_n, k_n = local.shape[0], local.shape[1]
    n = g_n * k_n
    starts = s.shape[0] == n
    per_ray = r_min.shape[0] == n
    for g in range(g_n):
        r00, r01, r02 = np.float32(T[g, 0, 0]), np.float32(T[g, 0, 1]), np.float32(T[g, 0, 2])
        r10, r11, r12 = np.float32(T[g, 1, 0]), np.float32(T[g, 1, 1]), np.float32(T[g, 1, 2])
        r20, r21, r22 = np.float32(T[g, 2, 0]), np.float32(T[g, 2, 1]), np.float32(T[g, 2, 2])
        p0, p1, p2 = np.float32(T[g, 0, 3]), np.float32(T[g, 1, 3]), np.float32(T[g, 2, 3])
        tg = group_t[g]
        for k in range(k_n):
            i = g * k_n + k
            x0, x1, x2 = local[g, k, 0], local[g, k, 1], local[g, k, 2]
            d0 = fma(x2, r02, fma(x1, r01, x0 * r00))
            d1 = fma(x2, r12, fma(x1, r11, x0 * r10))
            d2 = fma(x2, r22, fma(x1, r21, x0 * r20))
            d[i, 0], d[i, 1], d[i, 2] = d0, d1, d2
            o[i, 0], o[i, 1], o[i, 2] = p0, p1, p2
            t[i] = tg
            if starts:
                r = r_min[i if per_ray else 0]
                s[i, 0] = d0 * r + p0
                s[i, 1] = d1 * r + p1
                s[i, 2] = d2 * r + p2


@numba.njit(inline="always", **_JIT)
def _pose32(T: np.ndarray, g: int) -> tuple:
    """Pose ``T[g]``'s rotation (row by row) and translation rounded to float32: 12 values."""
    return (np.float32(T[g, 0, 0]), np.float32(T[g, 0, 1]), np.float32(T[g, 0, 2]),
            np.float32(T[g, 1, 0]), np.float32(T[g, 1, 1]), np.float32(T[g, 1, 2]),
            np.float32(T[g, 2, 0]), np.float32(T[g, 2, 1]), np.float32(T[g, 2, 2]),
            np.float32(T[g, 0, 3]), np.float32(T[g, 1, 3]), np.float32(T[g, 2, 3]))


@numba.njit(inline="always", **_JIT)
def _spin_direction(cos_el: float, sin_el: float, cos_az: float, sin_az: float, pose: tuple) -> tuple:
    """A spinning sensor's beam in world: ``(cos el·cos az, cos el·sin az, sin el)`` rounded to float32, turned by
    :func:`_pose32`'s rotation (:func:`sensor_rays_into`'s fused products)."""
    x0, x1, x2 = np.float32(cos_el * cos_az), np.float32(cos_el * sin_az), np.float32(sin_el)
    d0 = fma(x2, pose[2], fma(x1, pose[1], x0 * pose[0]))
    d1 = fma(x2, pose[5], fma(x1, pose[4], x0 * pose[3]))
    d2 = fma(x2, pose[8], fma(x1, pose[7], x0 * pose[6]))
    return d0, d1, d2


@numba.njit(**_JIT)
def spin_rays_into(cos_el: np.ndarray, sin_el: np.ndarray, cos_az: np.ndarray, sin_az: np.ndarray, T: np.ndarray,
                   r_min: np.ndarray, d: np.ndarray, s: np.ndarray) -> None:
    """:func:`sensor_rays_into` of a spinning sensor's beams without its (G, K, 3) direction table: group g (a
    column, azimuth az_g) and ray k (a channel, elevation el_k) point along ``(cos el·cos az, cos el·sin az,
    sin el)`` rounded to float32 from the float64 products of the angle tables (``cos_el``/``sin_el`` (K,),
    ``cos_az``/``sin_az`` (G,)), which is how :func:`simready.sensors_hw.lidar.beam_table` makes that table:
    the same directions, then the same operations. Writes the directions ``d`` and the segment starts ``s``
    ((G·K, 3), or (0, 3) for none); origins and times are the groups' (the caller keeps them per group)."""
    no_i, no_f = np.empty(0, np.int32), np.empty(0, np.float32)
    _spin_pass(cos_el, sin_el, cos_az, sin_az, T, r_min, d, s, 0, 0, np.empty(1, np.int32), no_f,
               no_f.view(np.uint32), np.float32(0.0), no_i, False, no_i, no_i, no_f, no_f, no_f, no_f)


@numba.njit(**_JIT)
def tfar_distances(body: np.ndarray, t: np.ndarray, r_min: np.ndarray) -> np.ndarray:
    """(N,) float64 distances of a cast's hits: ``t + r_min`` where ``body`` ≥ 0 (``t`` the float32 nearest
    distance from the segment start, ``r_min`` one per ray or one for all), +inf elsewhere: what
    :func:`static_hits` and :func:`mover_hits` write, for a cast that left them to be read."""
    n = body.shape[0]
    dist = np.empty(n, np.float64)
    per_ray = r_min.shape[0] == n
    for i in range(n):
        dist[i] = np.float64(t[i]) + np.float64(r_min[i if per_ray else 0]) if body[i] >= 0 else np.inf
    return dist


@numba.njit(**_JIT)
def static_hits(geom: np.ndarray, body_of_geom_ext: np.ndarray, ng: np.ndarray, d: np.ndarray,
                incidence: bool, t: np.ndarray, r_min: np.ndarray, distances: bool) -> tuple:
    """After the static scene's cast: its geometry ids become body indices (in place on ``geom``; −1 reads the
    table's last entry, as ``np.take`` does), and with ``incidence`` each ray's float32 |n·d| / |n| of Embree's
    unnormalized normal ``ng`` (:func:`simready.raycast.rays.abs_cos`'s operations in its order; (0,)
    without), NaN where nothing was hit; and :func:`hit_distances` of the static hits (``t`` Embree's nearest
    distances, ``r_min`` one per ray or one for all): ``hit`` and the float64 distances ``t + r_min`` (+inf
    where nothing was hit). One pass instead of a gather, a dozen column passes and a pass for the distances.
    Without ``distances``, ``hit`` and ``dist`` are (0,) (a cast that derives them when read,
    :func:`tfar_distances`). Returns (cos, hit, dist); a moving body's closer hits are written over them by the
    caller."""
    n = geom.shape[0]
    last = body_of_geom_ext.shape[0] - 1
    cos = np.empty(n if incidence else 0, np.float32)
    hit = np.empty(n if distances else 0, np.bool_)
    dist = np.empty(n if distances else 0, np.float64)
    per_ray = r_min.shape[0] == n
    for i in range(n):
        gi = geom[i]
        b = body_of_geom_ext[last if gi < 0 else gi]
        geom[i] = b
        h = b >= 0
        if distances:
            hit[i] = h
            if h:
                dist[i] = np.float64(t[i]) + np.float64(r_min[i if per_ray else 0])
            else:
                dist[i] = np.inf
        if incidence:
            if h:
                dot = ng[i, 0] * d[i, 0]
                dot = dot + ng[i, 1] * d[i, 1]
                dot = dot + ng[i, 2] * d[i, 2]
                nrm = ng[i, 0] * ng[i, 0]
                nrm = nrm + ng[i, 1] * ng[i, 1]
                nrm = nrm + ng[i, 2] * ng[i, 2]
                cos[i] = abs(dot) / np.sqrt(nrm)
            else:
                cos[i] = np.nan
    return cos, hit, dist


@numba.njit(**_JIT)
def rays_to_body(sel: np.ndarray, o: np.ndarray, d: np.ndarray, normalize: bool, T: np.ndarray,
                 pose: np.ndarray) -> tuple:
    """Rays ``sel`` of ``o``/``d`` (float32 or float64, widened) in a body's frame, the k-th with the body's
    world-from-body pose ``T[pose[k]]`` (rotation R, position p; the poses at the distinct ray times, indexed,
    not gathered per ray): ``(o − p)·R`` and ``d·R`` (row vectors), float64 (k, 3) each. With ``normalize``
    the widened direction is first scaled by ``1/sqrt(d·d)`` (:meth:`simready.raycast.hits.Hits.rays64`'s
    operations).

    Bits: ``np.matmul`` of (k, 1, 3) by (k, 3, 3) float64 here sums ``fma(x2, r2, fma(x1, r1, x0·r0))``
    (measured, as for float32), written so."""
    k_n = sel.shape[0]
    ob = np.empty((k_n, 3))
    db = np.empty((k_n, 3))
    for k in range(k_n):
        i = sel[k]
        u = pose[k]
        x0 = np.float64(o[i, 0]) - T[u, 0, 3]
        x1 = np.float64(o[i, 1]) - T[u, 1, 3]
        x2 = np.float64(o[i, 2]) - T[u, 2, 3]
        d0, d1, d2 = np.float64(d[i, 0]), np.float64(d[i, 1]), np.float64(d[i, 2])
        if normalize:
            s = 1.0 / np.sqrt(d0 * d0 + d2 * d2 + d1 * d1)
            d0, d1, d2 = d0 * s, d1 * s, d2 * s
        for j in range(3):
            ob[k, j] = fma(x2, T[u, 2, j], fma(x1, T[u, 1, j], x0 * T[u, 0, j]))
            db[k, j] = fma(d2, T[u, 2, j], fma(d1, T[u, 1, j], d0 * T[u, 0, j]))
    return ob, db


@numba.njit(**_JIT)
def rotate_normals(n: np.ndarray, rows: np.ndarray, T: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """(k, 3) float32 world normals ``R·n[rows[k]]`` of body-frame float64 normals, R the rotation of
    ``T[pose[k]]``, rounded once (``np.matmul(n[:, None, :], R^T)``'s fused products, measured)."""
    k_n = rows.shape[0]
    out = np.empty((k_n, 3), np.float32)
    for k in range(k_n):
        r = rows[k]
        u = pose[k]
        n0, n1, n2 = n[r, 0], n[r, 1], n[r, 2]
        for j in range(3):
            out[k, j] = np.float32(fma(n2, T[u, j, 2], fma(n1, T[u, j, 1], n0 * T[u, j, 0])))
    return out


@numba.njit(**_JIT)
def unique_sorted(t: np.ndarray) -> tuple:
    """``np.unique(t, return_inverse=True)`` of ascending ``t`` in one pass; (empty, empty, False) when ``t``
    is not ascending (the caller then sorts)."""
    n = t.shape[0]
    inv = np.empty(n, np.int64)
    vals = np.empty(n, t.dtype)
    m = 0
    for i in range(n):
        if i and t[i] < t[i - 1]:
            return vals[:0].copy(), inv[:0].copy(), False
        if m == 0 or t[i] != vals[m - 1]:
            vals[m] = t[i]
            m += 1
        inv[i] = m - 1
    return vals[:m].copy(), inv, True


@numba.njit(**_JIT)
def slab_select(o: np.ndarray, d: np.ndarray, idx: np.ndarray, every: bool, lo: np.ndarray, hi: np.ndarray,
                t_max: np.ndarray) -> np.ndarray:
    """Rays (``idx``, or every ray when ``every``) whose segment [0, ``t_max``] meets the box [lo, hi]: the
    float32 slab test of :func:`simready.raycast.rays.slab_candidates` (zero direction components
    replaced by 1e-30), without gathering the candidates first. Returns their indices (int64, ascending as
    given)."""
    n = o.shape[0] if every else idx.shape[0]
    out = np.empty(n, np.int64)
    m = 0
    one = np.float32(1.0)
    tiny = np.float32(1e-30)
    for k in range(n):
        i = k if every else idx[k]
        t_enter = -np.inf
        t_exit = t_max[i]
        for a in range(3):
            da = d[i, a]
            inv = one / (tiny if da == 0.0 else da)
            x = (np.float32(lo[a]) - o[i, a]) * inv
            y = (np.float32(hi[a]) - o[i, a]) * inv
            near = x if x < y else y
            far = y if x < y else x
            t_enter = near if near > t_enter else t_enter
            t_exit = far if far < t_exit else t_exit
        if t_exit >= t_enter and t_exit >= 0.0:
            out[m] = i
            m += 1
    return out[:m].copy()


@numba.njit(**_JIT)
def positions_in(sorted_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Positions in ``sorted_keys`` (ascending, distinct) of the ``values`` (ascending) found there, in order:
    one merge walk that gallops over runs of keys below the next value (a box's few candidate pixels among a
    frame of receivers: about log of the run per gap instead of every key)."""
    out = np.empty(values.shape[0], np.int64)
    m = 0
    j = 0
    n = sorted_keys.shape[0]
    for k in range(values.shape[0]):
        v = values[k]
        if j < n and sorted_keys[j] < v:
            # The first key ≥ v after j: bound it by doubling steps, then bisect (keys[lo] < v ≤ keys[hi]).
            step = 1
            while j + step < n and sorted_keys[j + step] < v:
                step *= 2
            lo = j + step // 2
            hi = min(j + step, n)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if sorted_keys[mid] < v:
                    lo = mid
                else:
                    hi = mid
            j = hi
        if j == n:
            break
        if sorted_keys[j] == v:
            out[m] = j
            m += 1
    return out[:m].copy()


@numba.njit(**_JIT)
def swept_box(T: np.ndarray, present: np.ndarray, vel: np.ndarray, ang: np.ndarray, ts: np.ndarray,
              centre: np.ndarray, half: np.ndarray, radius: float, pad_factor: float, pad_m: float) -> tuple:
    """:meth:`simready.raycast.geometry.SceneGeometry.swept_bounds` after its sampling, in one pass: the world
    box ``centre ± |R|·half`` of a body's local box at each present pose ``T`` (K, 4, 4), over all of them,
    padded by ``pad_factor · (|v|max + |ω|max · radius) · gap + pad_m`` (speeds over every sample, ``gap`` the
    largest step of the sample times ``ts``). Returns (lo (3,), hi (3,), whether any pose is present)."""
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    seen = False
    v2 = 0.0
    w2 = 0.0
    for k in range(T.shape[0]):
        v2 = max(v2, vel[k, 0] * vel[k, 0] + vel[k, 1] * vel[k, 1] + vel[k, 2] * vel[k, 2])
        w2 = max(w2, ang[k, 0] * ang[k, 0] + ang[k, 1] * ang[k, 1] + ang[k, 2] * ang[k, 2])
        if not present[k]:
            continue
        seen = True
        for a in range(3):
            mid = T[k, a, 0] * centre[0] + T[k, a, 1] * centre[1] + T[k, a, 2] * centre[2] + T[k, a, 3]
            ext = abs(T[k, a, 0]) * half[0] + abs(T[k, a, 1]) * half[1] + abs(T[k, a, 2]) * half[2]
            lo[a] = min(lo[a], mid - ext)
            hi[a] = max(hi[a], mid + ext)
    gap = 0.0
    for k in range(1, ts.shape[0]):
        gap = max(gap, ts[k] - ts[k - 1])
    pad = pad_factor * (np.sqrt(v2) + np.sqrt(w2) * radius) * gap + pad_m
    for a in range(3):
        lo[a] -= pad
        hi[a] += pad
    return lo, hi, seen


@numba.njit(**_JIT)
def mover_hits(idx: np.ndarray, prim_b: np.ndarray, u_b: np.ndarray, v_b: np.ndarray, t_b: np.ndarray,
               ng_b: np.ndarray, d_b: np.ndarray, b: int, body: np.ndarray, prim: np.ndarray, u: np.ndarray,
               v: np.ndarray, t_best: np.ndarray, cos: np.ndarray, hit: np.ndarray, dist: np.ndarray,
               r_min: np.ndarray) -> tuple:
    """A moving body's cast merged into a cast's hits in one pass: each of its rays ``idx`` that met it (it was
    cast no further than the nearest hit so far) takes its body ``b``, triangle, barycentrics and distance,
    ``hit``, the float64 distance ``t + r_min`` (``r_min`` one per ray or one for all) and, when ``cos`` has a
    row per ray, the float32 |n·d| / |n| of its body-frame normal and direction
    (:func:`simready.raycast.rays.abs_cos`'s operations); ``hit`` and ``dist`` (0,): not written (a cast that
    derives them when read). Returns (the rays that met it, their positions in ``idx``)."""
    k_n = idx.shape[0]
    n = body.shape[0]
    sel = np.empty(k_n, np.int64)
    closer = np.empty(k_n, np.int64)
    per_ray = r_min.shape[0] == n
    incidence = cos.shape[0] == n
    distances = dist.shape[0] == n
    m = 0
    for k in range(k_n):
        if prim_b[k] < 0:
            continue
        i = idx[k]
        sel[m] = i
        closer[m] = k
        m += 1
        body[i] = b
        prim[i] = prim_b[k]
        u[i] = u_b[k]
        v[i] = v_b[k]
        t_best[i] = t_b[k]
        if distances:
            hit[i] = True
            dist[i] = np.float64(t_b[k]) + np.float64(r_min[i if per_ray else 0])
        if incidence:
            dot = ng_b[k, 0] * d_b[k, 0]
            dot = dot + ng_b[k, 1] * d_b[k, 1]
            dot = dot + ng_b[k, 2] * d_b[k, 2]
            nrm = ng_b[k, 0] * ng_b[k, 0]
            nrm = nrm + ng_b[k, 1] * ng_b[k, 1]
            nrm = nrm + ng_b[k, 2] * ng_b[k, 2]
            cos[i] = abs(dot) / np.sqrt(nrm)
    return sel[:m].copy(), closer[:m].copy()



@numba.njit(**_JIT)
def swept_boxes(off: np.ndarray, T: np.ndarray, pres: np.ndarray, vel: np.ndarray, ang: np.ndarray, t: np.ndarray,
                centre: np.ndarray, half: np.ndarray, radius: np.ndarray, pad_factor: float, pad_m: float) -> tuple:
    """:func:`swept_box` of several bodies in one call: body j's samples are rows ``off[j]:off[j + 1]`` of the
    poses ``T``, presence, speeds and times, its local box ``centre[j]``, ``half[j]``, ``radius[j]``. Returns
    (lo (J, 3), hi (J, 3), whether any pose is present (J,))."""
    n_j = off.shape[0] - 1
    lo = np.empty((n_j, 3))
    hi = np.empty((n_j, 3))
    seen = np.empty(n_j, np.bool_)
    for j in range(n_j):
        s, e = off[j], off[j + 1]
        l_, h_, seen_ = swept_box(T[s:e], pres[s:e], vel[s:e], ang[s:e], t[s:e], centre[j], half[j], radius[j],
                                  pad_factor, pad_m)
        lo[j] = l_
        hi[j] = h_
        seen[j] = seen_
    return lo, hi, seen


@numba.njit(**_JIT)
def _hull_rows(lo: np.ndarray, hi: np.ndarray, e1: np.ndarray, e2: np.ndarray, u0: float, w0: float, size: float,
               cells: int, first: np.ndarray, last: np.ndarray) -> tuple:
    """The cells of a :func:`direction_grid` that box ``lo``/``hi``'s projection covers, row by row: its twelve
    edges projected, each clipped to every row's band of w (widened by a cell each side) and the clipped
    parts' u range taken (the projection is their hull, so its extent in a band is theirs), widened by a cell
    each side. Writes each row's first and last cell (``first`` > ``last``: none) and returns the rows spanned
    (lowest, highest)."""
    pu = np.empty(8)
    pw = np.empty(8)
    for k in range(8):
        x = hi[0] if k & 1 else lo[0]
        y = hi[1] if k & 2 else lo[1]
        z = hi[2] if k & 4 else lo[2]
        pu[k] = e1[0] * x + e1[1] * y + e1[2] * z
        pw[k] = e2[0] * x + e2[1] * y + e2[2] * z
    r0 = max(0, min(cells - 1, int(math.floor((pw.min() - w0) / size)) - 1))
    r1 = max(0, min(cells - 1, int(math.floor((pw.max() - w0) / size)) + 1))
    for j in range(r0, r1 + 1):
        band_lo = w0 + (j - 1) * size
        band_hi = w0 + (j + 2) * size
        umin, umax = np.inf, -np.inf
        for k in range(8):
            for bit in (1, 2, 4):
                if k & bit:
                    continue
                a, b = k, k | bit
                wa, wb, ua, ub = pw[a], pw[b], pu[a], pu[b]
                if wa > wb:
                    wa, wb, ua, ub = wb, wa, ub, ua
                if wb < band_lo or wa > band_hi:
                    continue
                if wb - wa <= 0.0:
                    umin, umax = min(umin, ua, ub), max(umax, ua, ub)
                    continue
                for wc in (max(wa, band_lo), min(wb, band_hi)):
                    uc = ua + (ub - ua) * ((wc - wa) / (wb - wa))
                    umin, umax = min(umin, uc), max(umax, uc)
        if umin > umax:
            first[j], last[j] = 1, 0
        else:
            first[j] = max(0, min(cells - 1, int(math.floor((umin - u0) / size)) - 1))
            last[j] = max(0, min(cells - 1, int(math.floor((umax - u0) / size)) + 1))
    return r0, r1


@numba.njit(**_JIT)
def direction_grid(lo: np.ndarray, hi: np.ndarray, e1: np.ndarray, e2: np.ndarray, cells: int) -> tuple:
    """The boxes ``lo``/``hi`` (B, 3) seen along one direction: each box's eight corners projected onto the plane
    spanned by ``e1``, ``e2`` (unit, orthogonal to the direction and to each other), and a ``cells`` × ``cells``
    grid over all of them listing in each cell the boxes whose projection covers it (:func:`_hull_rows`, a cell's
    margin around it). A ray along the direction keeps its plane coordinates, so only the boxes of its cell can
    lie on it. Returns (u0, w0, 1 / cell size, cell_start (cells² + 1,), boxes by cell (int32)); cell (i, j) is
    entry ``i · cells + j``, i along ``e1``."""
    b_n = lo.shape[0]
    u0, u1, w0, w1 = np.inf, -np.inf, np.inf, -np.inf
    for b in range(b_n):
        for k in range(8):
            x = hi[b, 0] if k & 1 else lo[b, 0]
            y = hi[b, 1] if k & 2 else lo[b, 1]
            z = hi[b, 2] if k & 4 else lo[b, 2]
            u = e1[0] * x + e1[1] * y + e1[2] * z
            w = e2[0] * x + e2[1] * y + e2[2] * z
            u0, u1, w0, w1 = min(u0, u), max(u1, u), min(w0, w), max(w1, w)
    size = max(u1 - u0, w1 - w0, 1e-3) / cells
    count = np.zeros(cells * cells + 1, np.int64)
    first = np.empty(cells, np.int64)
    last = np.empty(cells, np.int64)
    for b in range(b_n):
        r0, r1 = _hull_rows(lo[b], hi[b], e1, e2, u0, w0, size, cells, first, last)
        for j in range(r0, r1 + 1):
            for i in range(first[j], last[j] + 1):
                count[i * cells + j + 1] += 1
    for c in range(cells * cells):
        count[c + 1] += count[c]
    boxes = np.empty(count[-1], np.int32)
    fill = count[:-1].copy()
    for b in range(b_n):
        r0, r1 = _hull_rows(lo[b], hi[b], e1, e2, u0, w0, size, cells, first, last)
        for j in range(r0, r1 + 1):
            for i in range(first[j], last[j] + 1):
                boxes[fill[i * cells + j]] = b
                fill[i * cells + j] += 1
    return u0, w0, 1.0 / size, count, boxes


@numba.njit(inline="always", **_JIT)
def _slab(t0: float, t1: float, lo: float, hi: float, r: float) -> tuple:
    """The ray parameters [t0, t1] narrowed to one axis's slab, given relative to the ray origin (``lo``, ``hi``)
    and the reciprocal ``r`` of the direction along it (0: parallel, the slab holds the origin or nothing)."""
    if r == 0.0:
        if lo > 0.0 or hi < 0.0:
            t1 = -1.0
    elif r > 0.0:
        t0 = max(t0, lo * r)
        t1 = min(t1, hi * r)
    else:
        t0 = max(t0, hi * r)
        t1 = min(t1, lo * r)
    return t0, t1


@numba.njit(**_JIT)
def direction_candidates(o: np.ndarray, s: np.ndarray, t_max: float, e1: np.ndarray, e2: np.ndarray, u0: float,
                         w0: float, inv: float, cells: int, cell_start: np.ndarray, boxes: np.ndarray, lo: np.ndarray,
                         hi: np.ndarray, rel_pad: float, solid: np.ndarray, lo_in: np.ndarray, hi_in: np.ndarray,
                         t_in: float, blocked: np.ndarray, idx: np.ndarray, o_out: np.ndarray) -> int:
    """Which rays from ``o`` (N, 3) float32 along the one direction ``s`` (float64) can meet a box of
    :func:`direction_grid` within [0, ``t_max``]: the float64 slab test against each box of the ray's grid cell,
    each box widened by ``rel_pad`` times the ray origin's largest coordinate (the float32 rounding of the
    origin). Rays with a non-finite coordinate are kept. Writes their indices into ``idx`` and their origins
    into ``o_out`` (ascending; both sized N) and returns how many.

    A box whose body is exactly a closed box surface (``solid``) blocks, with no cast, a ray that starts outside
    its widened box and meets its box narrowed to ``lo_in``/``hi_in`` (widened by the origin's rounding, like the
    outer test, but narrowed overall) before ``t_in``: it crosses the closed surface in between (blocked, as it
    physically is; Embree's cast, not guaranteed watertight, agreed on every ray tested, edges and corners included).
    Those rays are set in ``blocked`` and not kept."""
    n = o.shape[0]
    m = 0
    # Per axis the reciprocal of the direction (0: the axis does not bound t): a ray's entry and exit of a slab are
    # products, not quotients (their rounding, ~1e-16 relative, is far inside the boxes' widening).
    r0 = 1.0 / s[0] if s[0] != 0.0 else 0.0
    r1 = 1.0 / s[1] if s[1] != 0.0 else 0.0
    r2 = 1.0 / s[2] if s[2] != 0.0 else 0.0
    side = np.float64(cells)
    for i in range(n):
        p0, p1, p2 = np.float64(o[i, 0]), np.float64(o[i, 1]), np.float64(o[i, 2])
        keep = True
        u = (e1[0] * p0 + e1[1] * p1 + e1[2] * p2 - u0) * inv
        w = (e2[0] * p0 + e2[1] * p1 + e2[2] * p2 - w0) * inv
        if 0.0 <= u < side and 0.0 <= w < side:
            c = int(u) * cells + int(w)
            pad = rel_pad * max(abs(p0), abs(p1), abs(p2))
            keep = False
            for k in range(cell_start[c], cell_start[c + 1]):
                b = boxes[k]
                t0, t1 = _slab(0.0, t_max, lo[b, 2] - pad - p2, hi[b, 2] + pad - p2, r2)
                if t0 > t1:
                    continue
                t0, t1 = _slab(t0, t1, lo[b, 0] - pad - p0, hi[b, 0] + pad - p0, r0)
                if t0 > t1:
                    continue
                t0, t1 = _slab(t0, t1, lo[b, 1] - pad - p1, hi[b, 1] + pad - p1, r1)
                if t0 > t1:
                    continue
                keep = True
                if not solid[b] or not t0 > 0.0:
                    continue
                s0, s1 = _slab(0.0, t_in, lo_in[b, 2] + pad - p2, hi_in[b, 2] - pad - p2, r2)
                s0, s1 = _slab(s0, s1, lo_in[b, 0] + pad - p0, hi_in[b, 0] - pad - p0, r0)
                s0, s1 = _slab(s0, s1, lo_in[b, 1] + pad - p1, hi_in[b, 1] - pad - p1, r1)
                if s0 <= s1:
                    blocked[i] = True
                    keep = False
                    break
        elif not (u != u or w != w):  # outside the grid (NaN stays kept)
            keep = not (math.isfinite(p0) and math.isfinite(p1) and math.isfinite(p2))
        if keep:
            idx[m] = i
            o_out[m, 0], o_out[m, 1], o_out[m, 2] = o[i, 0], o[i, 1], o[i, 2]
            m += 1
    return m


@numba.njit(**_JIT)
def static_box_shapes(verts: np.ndarray, v_off: np.ndarray, faces: np.ndarray, f_off: np.ndarray) -> tuple:
    """Per body b (its vertices ``verts[v_off[b]:v_off[b + 1]]`` and faces, indices into them,
    ``faces[f_off[b]:f_off[b + 1]]``) the box of its vertices rounded to float32 (as Embree holds them), and whether
    the mesh is exactly that box's closed surface: :func:`simready.raycast.meshes.is_box_surface`'s rules (its
    reference), in one pass over all bodies. Returns (lo (B, 3), hi (B, 3), solid (B,))."""
    b_n = v_off.shape[0] - 1
    lo = np.empty((b_n, 3))
    hi = np.empty((b_n, 3))
    solid = np.zeros(b_n, np.bool_)
    p = np.empty((3, 3))
    for b in range(b_n):
        v0, v1 = v_off[b], v_off[b + 1]
        nv = v1 - v0
        for a in range(3):
            lo[b, a], hi[b, a] = np.inf, -np.inf
        for k in range(v0, v1):
            for a in range(3):
                x = np.float64(np.float32(verts[k, a]))
                lo[b, a] = min(lo[b, a], x)
                hi[b, a] = max(hi[b, a], x)
        f0, f1 = f_off[b], f_off[b + 1]
        if f1 - f0 < 12 or nv < 8 or not (hi[b, 0] > lo[b, 0] and hi[b, 1] > lo[b, 1] and hi[b, 2] > lo[b, 2]):
            continue
        area = np.zeros(6)
        ok = True
        outward = 0
        inward = 0
        for t in range(f0, f1):
            for c in range(3):
                j = faces[t, c]
                if j < 0 or j >= nv:
                    ok = False
                    break
                for a in range(3):
                    p[c, a] = np.float64(np.float32(verts[v0 + j, a]))
            if not ok or faces[t, 0] == faces[t, 1] or faces[t, 1] == faces[t, 2] or faces[t, 2] == faces[t, 0]:
                ok = False
                break
            plane = -1
            for a in range(3):
                if plane < 0 and p[0, a] == lo[b, a] and p[1, a] == lo[b, a] and p[2, a] == lo[b, a]:
                    plane = 2 * a
                if plane < 0 and p[0, a] == hi[b, a] and p[1, a] == hi[b, a] and p[2, a] == hi[b, a]:
                    plane = 2 * a + 1
            if plane < 0:
                ok = False
                break
            ux, uy, uz = p[1, 0] - p[0, 0], p[1, 1] - p[0, 1], p[1, 2] - p[0, 2]
            wx, wy, wz = p[2, 0] - p[0, 0], p[2, 1] - p[0, 1], p[2, 2] - p[0, 2]
            n = (uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx)
            axis = plane // 2
            if (n[axis] > 0.0) == (plane % 2 == 1):
                outward += 1
            else:
                inward += 1
            area[plane] += 0.5 * np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
        if not ok or (outward and inward):
            continue
        ex, ey, ez = hi[b, 0] - lo[b, 0], hi[b, 1] - lo[b, 1], hi[b, 2] - lo[b, 2]
        want = (ey * ez, ey * ez, ex * ez, ex * ez, ex * ey, ex * ey)
        for q in range(6):
            if not abs(area[q] - want[q]) <= 1e-9 * abs(want[q]):
                ok = False
        if not ok:
            continue
        # Closed and consistently wound: the directed edges distinct, and the same set as their reverses.
        m = 3 * (f1 - f0)
        fwd = np.empty(m, np.int64)
        rev = np.empty(m, np.int64)
        for t in range(f0, f1):
            for c in range(3):
                a_, b_ = faces[t, c], faces[t, (c + 1) % 3]
                fwd[3 * (t - f0) + c] = a_ * nv + b_
                rev[3 * (t - f0) + c] = b_ * nv + a_
        fwd.sort()
        rev.sort()
        for k in range(m):
            if (k and fwd[k] == fwd[k - 1]) or fwd[k] != rev[k]:
                ok = False
                break
        solid[b] = ok
    return lo, hi, solid
