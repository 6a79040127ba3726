"""Compiled kernels of the perception truth (numba): a frame's samples from its hits, the projection of
body points into another frame fused with the visibility test against that frame's own buffers, the
motion field's and the flow table's per-sample steps.

Why compiled: each runs once per correspondence over every visible sample of a
full-resolution frame (~10⁶ points); as numpy each step is a full-array pass
and a gather, and the passes, not the arithmetic, were the cost.

Bits: ``fastmath`` off and numpy's error model, as :mod:`simready.sim.kernels`.
The compiled code is cached beside this module (``cache=True``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)

#: States :func:`buffer_visibility` returns per point.
HIDDEN, VISIBLE, UNDECIDED = 0, 1, 2


@numba.njit(**_JIT)
def buffer_visibility(uv: np.ndarray, z: np.ndarray, in_view: np.ndarray, body: np.ndarray, triangle: np.ndarray,
                      body_img: np.ndarray, triangle_img: np.ndarray, z_img: np.ndarray, width: int, height: int,
                      hidden_margin_m: float, hidden_margin_rel: float) -> np.ndarray:
    """Per point (N,): VISIBLE, HIDDEN or UNDECIDED (uint8) from the target frame's surface-identity and depth
    buffers; UNDECIDED for points not in view. (:func:`project_points` runs the same test in its pass.)

    The four pixel centres around the point's (pinhole) projection decide it:

    * all four see the point's own triangle (same body, same triangle): VISIBLE. The directions that
      meet one triangle from one origin form a convex cone, so the point's own ray, inside the four
      rays' hull, meets that triangle too, at the point.
    * all four see one other triangle, nearer than the point by more than the margin at every one of
      them: HIDDEN. The point's ray meets that triangle too, and on a plane 1/z is affine in the image
      coordinates, so its depth there is at most the largest of the four: nearer than the point.
    * anything else (an edge, two surfaces, nothing hit, the image border): UNDECIDED.

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
        # Written out here and in project_points: a helper call per point, with its array arguments, cost
        # several times the test itself.
        u, v = uv[i, 0], uv[i, 1]
        if u >= 0.0 and u <= width - 1.0 and v >= 0.0 and v <= height - 1.0:
            p00 = min(int(v), height - 2) * width + min(int(u), width - 2)  # int() is floor here
            p01, p10, p11 = p00 + 1, p00 + width, p00 + width + 1
            b0, t0 = body_img[p00], triangle_img[p00]
            if (b0 >= 0 and body_img[p01] == b0 and body_img[p10] == b0 and body_img[p11] == b0
                    and triangle_img[p01] == t0 and triangle_img[p10] == t0 and triangle_img[p11] == t0):
                if b0 == body[i] and t0 == triangle[i]:
                    out[i] = VISIBLE
                else:
                    limit = z[i] - hidden_margin_m - hidden_margin_rel * z[i]
                    if z_img[p00] < limit and z_img[p01] < limit and z_img[p10] < limit and z_img[p11] < limit:
                        out[i] = HIDDEN
    return out


@numba.njit(**_JIT)
def project_points(cols: np.ndarray, slot: np.ndarray, tables: np.ndarray, present_tab: np.ndarray,
                   p_body: np.ndarray, world_static: np.ndarray, guess: np.ndarray, row_times: np.ndarray,
                   cx: float, cy: float, fx: float, fy: float, width: int, height: int, near: float, far: float,
                   global_shutter: bool, max_iterations: int, test: bool, body: np.ndarray, triangle: np.ndarray,
                   body_img: np.ndarray, triangle_img: np.ndarray, z_img: np.ndarray, hidden_margin_m: float,
                   hidden_margin_rel: float) -> tuple:
    """The whole projection of body points into a frame in one pass per point: the rolling-shutter row
    iteration (from the guess clipped to the image), the pixel and the flags (``_projection``'s numpy
    operations), and with ``test`` the visibility state from the frame's buffers (:func:`buffer_visibility`'s
    test; UNDECIDED for points not in view, and for all without ``test``). Bitwise
    ``project_body_points_numpy`` (tested).

    ``world_static``: (N, 3) the points' world positions, read for static points (slot −1) only;
    cols: (12, H) the frame's per-row pose columns (``FrameView.row_columns``); slot: (N,) each point's
    moving-body slot in ``tables`` (−1: static); tables: (S, H, 12) each moving body's pose per row time,
    present_tab: (S, H) its presence.
    Returns (rows, time_s, world, cam, uv, present, behind, out_of_frame, beyond, in_view, state).
    """
    n = len(slot)
    hmax = float(height - 1)
    rows = np.empty(n, np.int64)
    t_out = np.empty(n)
    world = np.empty((n, 3))
    cam = np.empty((n, 3))
    uv = np.empty((n, 2))
    present = np.ones(n, np.bool_)
    behind = np.empty(n, np.bool_)
    out = np.empty(n, np.bool_)
    beyond = np.empty(n, np.bool_)
    in_view = np.empty(n, np.bool_)
    state = np.empty(n, np.uint8)
    for i in range(n):
        s = slot[i]
        if s < 0:
            world[i, 0], world[i, 1], world[i, 2] = world_static[i, 0], world_static[i, 1], world_static[i, 2]
        # The row iteration, the numpy reference's operations in order (``project_body_points_numpy``): pose
        # (moving points) and project with row r's pose, move to the row the point lands on, until it stays
        # (or alternates between two rows); at the cap, pose and project at the row reached. Written out
        # rather than in helpers: a call per point with array arguments cost several times the arithmetic.
        r = 0 if global_shutter else min(max(guess[i], 0), height - 1)
        before = -1
        iteration = 0
        while True:
            if s >= 0:
                g = tables[s, r]
                for a in range(3):
                    world[i, a] = (p_body[i, 0] * g[3 * a] + p_body[i, 1] * g[3 * a + 1] + p_body[i, 2] * g[3 * a + 2]
                                   + g[9 + a])
                present[i] = present_tab[s, r]
            d0, d1, d2 = world[i, 0] - cols[9, r], world[i, 1] - cols[10, r], world[i, 2] - cols[11, r]
            for a in range(3):
                cam[i, a] = d0 * cols[a, r] + d1 * cols[3 + a, r] + d2 * cols[6 + a, r]
            if global_shutter or iteration == max_iterations:
                break
            iteration += 1
            new = r
            if cam[i, 2] > 0.0:
                vr = np.rint(cy + fy * cam[i, 1] / cam[i, 2])
                if np.isnan(vr):
                    vr = 0.0
                new = int(min(max(vr, 0.0), hmax))
            if new == r or new == before:
                break
            before = r
            r = new
        rows[i] = r
        t_out[i] = row_times[r]
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
        in_view[i] = present[i] and inside and not beyond[i]
        state[i] = UNDECIDED
        if not (test and in_view[i]):
            continue
        # The buffer test (module doc of :func:`buffer_visibility`), written out: a helper call per point,
        # with its array arguments, cost several times the test itself.
        if u >= 0.0 and u <= width - 1.0 and v >= 0.0 and v <= height - 1.0:
            p00 = min(int(v), height - 2) * width + min(int(u), width - 2)  # int() is floor here
            p01, p10, p11 = p00 + 1, p00 + width, p00 + width + 1
            b0, t0 = body_img[p00], triangle_img[p00]
            if (b0 >= 0 and body_img[p01] == b0 and body_img[p10] == b0 and body_img[p11] == b0
                    and triangle_img[p01] == t0 and triangle_img[p10] == t0 and triangle_img[p11] == t0):
                if b0 == body[i] and t0 == triangle[i]:
                    state[i] = VISIBLE
                else:
                    limit = z - hidden_margin_m - hidden_margin_rel * z
                    if z_img[p00] < limit and z_img[p01] < limit and z_img[p10] < limit and z_img[p11] < limit:
                        state[i] = HIDDEN
    return rows, t_out, world, cam, uv, present, behind, out, beyond, in_view, state


@numba.njit(**_JIT)
def image_velocity(rows: np.ndarray, X: np.ndarray, v_c_cam: np.ndarray, w_cam: np.ndarray, moving: np.ndarray,
                   q_moving: np.ndarray, fx: float, fy: float) -> tuple:
    """The motion field's last step per sample (``motion_field``'s numpy operations in order):
    ``Ẋ = q − ω_cam × X`` with ``q = −v_c`` (plus the rotated point velocity ``q_moving[k]`` for the k-th
    moving sample), then ``u̇, v̇`` and ``Ż``. Returns (du, dv, dz) (N,) each."""
    n = len(rows)
    du, dv, dz = np.empty(n), np.empty(n), np.empty(n)
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
        du[i] = fx * (xd0 * x2 - x0 * xd2) / z2
        dv[i] = fy * (xd1 * x2 - x1 * xd2) / z2
        dz[i] = xd2
    return du, dv, dz


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
def surface_samples(pix: np.ndarray, static: np.ndarray, rows: np.ndarray, o_in: np.ndarray, d_in: np.ndarray,
                    unit: bool, dist: np.ndarray, plane_ok: np.ndarray, u32: np.ndarray, v32: np.ndarray,
                    v0: np.ndarray, dual1: np.ndarray, dual2: np.ndarray, rays_cam: np.ndarray,
                    time_in: np.ndarray, triangle_in: np.ndarray, width: int, z_img: np.ndarray) -> tuple:
    """A frame's visible samples from its primary hits in one pass (``Samples.of_hits``): per hit pixel
    ``pix[k]``, the float64 barycentrics of static hits (``Hits.refine``'s reuse of refined distances,
    :func:`simready.raycast.kernels.refine_static`'s operations; Embree's where the plane gave no
    distance; moving hits are left for the caller), the world point (``Hits.point_world_of``'s operations,
    :func:`simready.raycast.kernels.hit_points`), the optical-frame point (pixel ray × distance), the pixel's
    column and row, triangle and time; and the frame's z-depth buffer ``z_img`` (in place, at ``pix``).

    Bitwise the numpy path (``Samples.of_hits_numpy``): each value repeats its operations in order.
    """
    m = len(pix)
    bary = np.empty((m, 2))
    world = np.empty((m, 3))
    cam = np.empty((m, 3))
    u = np.empty(m, np.int64)
    v = np.empty(m, np.int64)
    tri = np.empty(m, np.int64)
    t_out = np.empty(m)
    for k in range(m):
        i = pix[k]
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
        if static[k]:
            if plane_ok[i]:  # refine_static's barycentrics (a product by the inverse norm, summed x0² + x2² + x1²)
                if not unit:
                    inv = 1.0 / math.sqrt(d0 * d0 + d2 * d2 + d1 * d1)
                    d0, d1, d2 = d0 * inv, d1 * inv, d2 * inv
                r = rows[i]
                q0 = o0 + t * d0 - v0[r, 0]
                q1 = o1 + t * d1 - v0[r, 1]
                q2 = o2 + t * d2 - v0[r, 2]
                bary[k, 0] = q0 * dual1[r, 0] + q2 * dual1[r, 2] + q1 * dual1[r, 1]
                bary[k, 1] = q0 * dual2[r, 0] + q2 * dual2[r, 2] + q1 * dual2[r, 1]
            else:
                bary[k, 0] = np.float64(u32[i])
                bary[k, 1] = np.float64(v32[i])
        else:
            bary[k, 0] = np.nan
            bary[k, 1] = np.nan
        for a in range(3):
            cam[k, a] = rays_cam[i, a] * t
        z_img[i] = cam[k, 2]
        u[k] = i % width
        v[k] = i // width
        tri[k] = triangle_in[i]
        t_out[k] = time_in[i]
    return bary, world, cam, u, v, tri, t_out
