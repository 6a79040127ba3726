"""Compiled kernels of the perception truth (numba): a frame's samples from its hits, the row iteration of
the projection into another frame, visibility from that frame's own buffers, the motion field's and the
flow table's per-sample steps.

Why compiled: each runs once per correspondence over every visible sample of a
full-resolution frame (~10⁶ points); as numpy each step is a full-array pass
and a gather, and the passes, not the arithmetic, were the cost.

Bits: ``fastmath`` off and numpy's error model, as :mod:`simready.sim.core.kernels`.
The compiled code is cached beside this module (``cache=True``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)

#: States :func:`buffer_visibility` returns per point (and :func:`flow_of_samples`, with OUT_OF_VIEW for a point
#: not in view, which buffer_visibility calls UNDECIDED).
HIDDEN, VISIBLE, UNDECIDED, OUT_OF_VIEW = 0, 1, 2, 3


@numba.njit(**_JIT)
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


@numba.njit(**_JIT)
def _place(i: int, s: int, r: int, tables: np.ndarray, present_tab: np.ndarray, p_body: np.ndarray,
           world: np.ndarray, present: np.ndarray) -> None:
    """World position of moving point i on pose-table slot s at row r (``apply_pose_rows``' operation order)."""
    g = tables[s, r]
    for a in range(3):
        world[i, a] = p_body[i, 0] * g[3 * a] + p_body[i, 1] * g[3 * a + 1] + p_body[i, 2] * g[3 * a + 2] + g[9 + a]
    present[i] = present_tab[s, r]


@numba.njit(**_JIT)
def _coords(i: int, r: int, cols: np.ndarray, world: np.ndarray, cam: np.ndarray) -> None:
    """Optical-frame coordinates of point i with row r's pose (``camera_coords``' operation order)."""
    d0 = world[i, 0] - cols[9, r]
    d1 = world[i, 1] - cols[10, r]
    d2 = world[i, 2] - cols[11, r]
    for a in range(3):
        cam[i, a] = d0 * cols[a, r] + d1 * cols[3 + a, r] + d2 * cols[6 + a, r]


@numba.njit(**_JIT)
def settle_rows(cols: np.ndarray, slot: np.ndarray, tables: np.ndarray, present_tab: np.ndarray,
                p_body: np.ndarray, world: np.ndarray, present: np.ndarray, rows: np.ndarray, cam: np.ndarray,
                cy: float, fy: float, height: int, global_shutter: bool, max_iterations: int) -> None:
    """The rolling-shutter row iteration of :func:`simready.truth.correspondence.project_body_points`,
    point by point (in place: ``rows`` in as the clipped guesses, out settled; ``world`` in for static
    points, out for moving ones; ``present``, ``cam`` out). Bitwise the numpy reference
    (``project_body_points_numpy``): the same operations in the same order per point.

    Args:
        cols: (12, H) the frame's per-row pose columns (``FrameView.row_columns``).
        slot: (N,) each point's moving-body slot in ``tables`` (−1: static).
        tables: (S, H, 12) each moving body's pose per row time; present_tab: (S, H) its presence.
    """
    hmax = float(height - 1)
    for i in range(len(slot)):
        s = slot[i]
        if global_shutter:
            rows[i] = 0
            if s >= 0:
                _place(i, s, 0, tables, present_tab, p_body, world, present)
            _coords(i, 0, cols, world, cam)
            continue
        r = rows[i]
        before = -1
        moved = False
        for _ in range(max_iterations):
            if s >= 0:
                _place(i, s, r, tables, present_tab, p_body, world, present)
            _coords(i, r, cols, world, cam)
            new = r
            if cam[i, 2] > 0.0:
                v = np.rint(cy + fy * cam[i, 1] / cam[i, 2])
                if np.isnan(v):
                    v = 0.0
                new = int(min(max(v, 0.0), hmax))
            moved = new != r and new != before
            before = r
            if not moved:
                break
            r = new
        if moved:  # the cap: pose and project at the row reached
            if s >= 0:
                _place(i, s, r, tables, present_tab, p_body, world, present)
            _coords(i, r, cols, world, cam)
        rows[i] = r


@numba.njit(**_JIT)
def image_velocity(rows: np.ndarray, X: np.ndarray, v_c_cam: np.ndarray, w_cam: np.ndarray, moving: np.ndarray,
                   q_moving: np.ndarray, fx: float, fy: float, step: float) -> tuple:
    """The motion field's last step per sample (``motion_field``'s numpy operations in order):
    ``Ẋ = q − ω_cam × X`` with ``q = −v_c`` (plus the rotated point velocity ``q_moving[k]`` for the k-th
    moving sample), then ``u̇, v̇`` and ``Ż``. Returns (du, dv, dz) (N,) each, and the motion table's columns
    from the same pass: ``du, dv`` rounded to ``step`` (:func:`quantized32`'s operations) and ``dz``, float32."""
    n = len(rows)
    du, dv, dz = np.empty(n), np.empty(n), np.empty(n)
    du32, dv32, dz32 = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    inv_step = 1.0 / step  # a power of two: multiplying by the inverse is dividing, bit for bit
    k = 0
    for i in range(n):
        r = rows[i]
        q0, q1, q2 = -v_c_cam[r, 0], -v_c_cam[r, 1], -v_c_cam[r, 2]
        if k < len(moving) and moving[k] == i:
            q0, q1, q2 = q0 + q_moving[k, 0], q1 + q_moving[k, 1], q2 + q_moving[k, 2]
            k += 1
        w0, w1, w2 = w_cam[r, 0], w_cam[r, 1], w_cam[r, 2]
        x0, x1, x2 = X[i, 0], X[i, 1], X[i, 2]
        xd0 = q0 - (w1 * x2 - w2 * x1)
        xd1 = q1 - (w2 * x0 - w0 * x2)
        xd2 = q2 - (w0 * x1 - w1 * x0)
        z2 = x2 * x2
        a = fx * (xd0 * x2 - x0 * xd2) / z2
        b = fy * (xd1 * x2 - x1 * xd2) / z2
        du[i] = a
        dv[i] = b
        dz[i] = xd2
        du32[i] = np.float32(np.rint(a * inv_step) * step)
        dv32[i] = np.float32(np.rint(b * inv_step) * step)
        dz32[i] = np.float32(xd2)
    return du, dv, dz, (du32, dv32, dz32)


@numba.njit(**_JIT)
def pixels_and_flags(cam: np.ndarray, cx: float, cy: float, fx: float, fy: float, width: int, height: int,
                     near: float, far: float) -> tuple:
    """Pinhole pixels (N, 2; NaN behind the camera) and the behind / out-of-frame / beyond-range flags of
    optical-frame points, with ``_projection``'s numpy operations per point."""
    n = cam.shape[0]
    uv = np.empty((n, 2))
    behind = np.empty(n, np.bool_)
    out = np.empty(n, np.bool_)
    beyond = np.empty(n, np.bool_)
    for i in range(n):
        z = cam[i, 2]
        front = z > 0.0
        if front:
            u = cx + fx * cam[i, 0] / z
            v = cy + fy * cam[i, 1] / z
        else:
            u = np.nan
            v = np.nan
        uv[i, 0] = u
        uv[i, 1] = v
        inside = front and u >= -0.5 and u <= width - 0.5 and v >= -0.5 and v <= height - 0.5
        behind[i] = not front
        out[i] = front and not inside
        beyond[i] = inside and not (z >= near and z <= far)
    return uv, behind, out, beyond


@numba.njit(**_JIT)
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


@numba.njit(**_JIT)
def surface_samples(pix: np.ndarray, body_index: np.ndarray, static_of_body: np.ndarray, rows: np.ndarray,
                    o_in: np.ndarray, d_in: np.ndarray, unit: bool, dist: np.ndarray, plane_ok: np.ndarray,
                    u32: np.ndarray, v32: np.ndarray, v0: np.ndarray, dual1: np.ndarray, dual2: np.ndarray,
                    rays_cam: np.ndarray, time_in: np.ndarray, triangle_in: np.ndarray, width: int, z_img: np.ndarray,
                    compact_of_body: np.ndarray, index_of_body: np.ndarray, step: float) -> tuple:
    """A frame's visible samples from its primary hits in one pass (``Samples.of_hits``): per hit pixel
    ``pix[k]`` (ascending), its body (``body_index[pix[k]]``), the float64 barycentrics of static hits
    (``Hits.refine``'s reuse of refined distances, :func:`simready.raycast.kernels.refine_static`'s operations;
    Embree's where the plane gave no distance; moving hits are left for the caller, NaN here), the world point
    (``Hits.point_world_of``'s operations, :func:`simready.raycast.kernels.hit_points`), the optical-frame point
    (pixel ray × distance), the pixel's column and row, triangle and time; the frame's z-depth buffer ``z_img``
    (in place, at ``pix``); the indices of the samples on moving bodies; ``pix`` as int32; which bodies the samples
    are on ((B,) bool); and the surface table's columns
    (:func:`surface_columns`' operations: compact id, dictionary indices, int32 triangle, barycentrics rounded to
    ``step`` — NaN on moving hits, for the caller to fill — and float32 z-depth), so the table needs no second
    pass over the samples.

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
    tri = np.empty(m, np.int64)
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
    for k in range(m):
        i = pix[k]
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
        tri[k] = triangle_in[i]
        tri32[k] = np.int32(triangle_in[i])
        t_out[k] = time_in[i]
        compact[k] = compact_of_body[b]
        for s in range(n_str):
            index[s, k] = index_of_body[s, b]
    return (bary, world, cam, u, v, tri, t_out, body, moving[:n_moving], pix32, seen,
            (compact, index, tri32, bu, bv, depth32))


@numba.njit(**_JIT)
def flow_of_samples(cols: np.ndarray, slot_of_body: np.ndarray, static_of_body: np.ndarray, tables: np.ndarray,
                    present_tab: np.ndarray, p_body: np.ndarray, world_src: np.ndarray, u_src: np.ndarray,
                    v_src: np.ndarray, dv_dt: np.ndarray, dt: float, cx: float, cy: float, fx: float, fy: float,
                    width: int, height: int, near: float, far: float, global_shutter: bool, max_iterations: int,
                    body: np.ndarray, triangle: np.ndarray, body_img: np.ndarray, triangle_img: np.ndarray,
                    z_img: np.ndarray, hidden_margin_m: float, hidden_margin_rel: float, step: float,
                    cam: np.ndarray, cell: np.ndarray, in_view: np.ndarray, undecided: np.ndarray) -> tuple:
    """A correspondence's flow-table columns in three compiled passes over the source samples: the row guess
    (the source row moved by ``dv_dt · dt``, the motion field's prediction), the row iteration
    (:func:`settle_rows`), pixels and flags (:func:`pixels_and_flags`), the target buffers' visibility state
    (:func:`buffer_visibility`) and the float columns (:func:`flow_columns`), each with those kernels'
    operations in order, so every column is bitwise the unfused path's. Only the settled optical-frame points are
    kept in float64 between the passes, inside this call (the caller re-projects the few UNDECIDED points to
    re-cast them).

    Each point's moving-body slot in ``tables`` and whether its body is static are read per body
    (``slot_of_body``: −1 on static bodies; ``static_of_body``), as the gathers ``slot_of_body[body]`` would.

    ``cam`` (N, 3) float64, ``cell`` (N,) int32, ``in_view`` (N,) bool and ``undecided`` (N,) int64 are scratch
    (the caller's, reused across calls: a frame-sized temporary each call cost page faults), written before read.

    Returns ``du, dv`` (float32, rounded to ``step``), ``depth`` (float32 z at the target), ``row`` (int16),
    ``dx, dy, dz`` (float32 scene displacement), ``absent``, ``behind``, ``out``, ``beyond``, ``static`` (bool),
    the buffers' verdicts ``visible`` and ``hidden`` (bool: the visibility state VISIBLE, HIDDEN), the indices
    of the UNDECIDED points (in view, the buffers cannot tell: to re-cast) and how many points are in view.
    """
    n = len(body)
    hmax = float(height - 1)
    du, dv = np.empty(n, np.float32), np.empty(n, np.float32)
    depth = np.empty(n, np.float32)
    row_out = np.empty(n, np.int16)
    dx, dy, dz = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    absent = np.empty(n, np.bool_)
    behind = np.empty(n, np.bool_)
    out = np.empty(n, np.bool_)
    beyond = np.empty(n, np.bool_)
    static = np.empty(n, np.bool_)
    visible = np.empty(n, np.bool_)
    hidden = np.empty(n, np.bool_)
    # Three loops, each with few arrays live (one loop doing everything kept too many array pointers and values in
    # registers at once and measured slower): (1) the row guess and iteration: the settled row, the optical-frame
    # point there, presence and the scene displacement; (2) pixels, flags and the float columns from that point;
    # (3) the target buffers' test. Each value repeats the fused loop's (and the unfused kernels') operations.
    for i in range(n):
        # The row guess: rint(v + nan_to_num(dv_dt · dt)) as int64 (an overflow reads as INT64_MIN, as numpy's
        # cast does on this hardware), clipped to the frame.
        y = dv_dt[i] * dt
        if not np.isfinite(y):
            y = 0.0
        g = np.rint(np.float64(v_src[i]) + y)
        if g >= -9.223372036854775808e18 and g < 9.223372036854775808e18:
            r = min(max(np.int64(g), 0), height - 1)
        else:
            r = 0
        b = body[i]
        s = slot_of_body[b]
        static[i] = static_of_body[b]
        w0, w1, w2 = world_src[i, 0], world_src[i, 1], world_src[i, 2]
        pres = True
        c0 = c1 = c2 = 0.0
        if global_shutter:
            r = 0
            iterations = 1
        else:
            iterations = max_iterations
        before = -1
        for it in range(iterations + 1):
            if s >= 0:  # _place
                gp = tables[s, r]
                w0 = p_body[i, 0] * gp[0] + p_body[i, 1] * gp[1] + p_body[i, 2] * gp[2] + gp[9]
                w1 = p_body[i, 0] * gp[3] + p_body[i, 1] * gp[4] + p_body[i, 2] * gp[5] + gp[10]
                w2 = p_body[i, 0] * gp[6] + p_body[i, 1] * gp[7] + p_body[i, 2] * gp[8] + gp[11]
                pres = present_tab[s, r]
            d0 = w0 - cols[9, r]  # _coords
            d1 = w1 - cols[10, r]
            d2 = w2 - cols[11, r]
            c0 = d0 * cols[0, r] + d1 * cols[3, r] + d2 * cols[6, r]
            c1 = d0 * cols[1, r] + d1 * cols[4, r] + d2 * cols[7, r]
            c2 = d0 * cols[2, r] + d1 * cols[5, r] + d2 * cols[8, r]
            if global_shutter or it == iterations:  # one pass, or the cap's pose at the row reached
                break
            new = r
            if c2 > 0.0:
                vv = np.rint(cy + fy * c1 / c2)
                if np.isnan(vv):
                    vv = 0.0
                new = int(min(max(vv, 0.0), hmax))
            moved = new != r and new != before
            before = r
            if not moved:
                break
            r = new  # moved at the last iteration: the extra pass poses it at r (the cap)
        cam[i, 0] = c0
        cam[i, 1] = c1
        cam[i, 2] = c2
        absent[i] = not pres
        dx[i] = np.float32(w0 - world_src[i, 0])
        dy[i] = np.float32(w1 - world_src[i, 1])
        dz[i] = np.float32(w2 - world_src[i, 2])
        row_out[i] = np.int16(r)
    # step is a power of two: dividing by it is multiplying by its exact inverse, bit for bit (and several
    # times cheaper than a division)
    inv_step = 1.0 / step
    for i in range(n):
        # pixels_and_flags (v: the iteration's last cy + fy·c1/c2, the same operands)
        z = cam[i, 2]
        front = z > 0.0
        if front:
            u = cx + fx * cam[i, 0] / z
            v = cy + fy * cam[i, 1] / z
        else:
            u = np.nan
            v = np.nan
        inside = front and u >= -0.5 and u <= width - 0.5 and v >= -0.5 and v <= height - 0.5
        be = inside and not (z >= near and z <= far)
        pres = not absent[i]
        in_view[i] = pres and inside and not be
        behind[i] = not front
        out[i] = front and not inside
        beyond[i] = be
        # buffer_visibility's pixel cell, read in the third loop
        cell[i] = -1
        if pres and inside and not be and u >= 0.0 and u <= width - 1.0 and v >= 0.0 and v <= height - 1.0:
            cell[i] = min(int(math.floor(v)), height - 2) * width + min(int(math.floor(u)), width - 2)
        # flow_columns
        du[i] = np.float32(np.rint((u - np.float64(u_src[i])) * inv_step) * step)
        dv[i] = np.float32(np.rint((v - np.float64(v_src[i])) * inv_step) * step)
        depth[i] = np.float32(z)
    # The buffer test in a loop of its own: its reads of the target's buffers miss the cache, and in a short loop
    # the processor overlaps many points' misses (inside the long pass above it measured twice as slow).
    n_undecided = n_in_view = 0
    for i in range(n):
        st = UNDECIDED if in_view[i] else OUT_OF_VIEW
        p00 = cell[i]
        if p00 >= 0:
            b0, t0 = body_img[p00], triangle_img[p00]
            same = (body_img[p00 + 1] == b0 and triangle_img[p00 + 1] == t0 and body_img[p00 + width] == b0
                    and triangle_img[p00 + width] == t0 and body_img[p00 + width + 1] == b0
                    and triangle_img[p00 + width + 1] == t0)
            if same and b0 >= 0:
                if b0 == body[i] and t0 == triangle[i]:
                    st = VISIBLE
                else:
                    z = cam[i, 2]
                    limit = z - hidden_margin_m - hidden_margin_rel * z
                    if (z_img[p00] < limit and z_img[p00 + 1] < limit and z_img[p00 + width] < limit
                            and z_img[p00 + width + 1] < limit):
                        st = HIDDEN
        visible[i] = st == VISIBLE
        hidden[i] = st == HIDDEN
        if st == UNDECIDED:
            undecided[n_undecided] = i
            n_undecided += 1
        n_in_view += in_view[i]
    return (du, dv, depth, row_out, dx, dy, dz, absent, behind, out, beyond, static, visible, hidden,
            undecided[:n_undecided], n_in_view)


@numba.njit(**_JIT)
def quantized32(values: np.ndarray, step: float) -> np.ndarray:
    """:func:`simready.truth.precision.quantized` in one pass: ``rint(x / step) · step`` as float32, bit for bit
    (``step`` a power of two, so dividing by it is multiplying by its exact inverse; NaN stays NaN)."""
    inv_step = 1.0 / step
    out = np.empty(len(values), np.float32)
    for i in range(len(values)):
        out[i] = np.float32(np.rint(values[i] * inv_step) * step)
    return out


@numba.njit(**_JIT)
def surface_columns(body: np.ndarray, triangle: np.ndarray, bary: np.ndarray, cam: np.ndarray,
                    compact_of_body: np.ndarray, index_of_body: np.ndarray, step: float) -> tuple:
    """The surface table's per-sample columns in one pass: the compact id, the dictionary indices of the
    per-body strings (``index_of_body``: (K, B) int32, one row per string column), the triangle as int32, the
    barycentrics rounded to ``step`` (:func:`quantized32`'s operations) and the z-depth as float32; bit for
    bit the gathers, casts and roundings one by one."""
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


@numba.njit(**_JIT)
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
