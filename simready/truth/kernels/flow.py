"""A correspondence's flow table in one compiled call (:func:`simready.truth.flow.flow_table_of`): the row guess,
the rolling-shutter row iteration, pixels and flags, the target buffers' visibility and the float columns, fused
from :mod:`.projection`, :mod:`.visibility` and :mod:`.tables`' operations and bitwise their unfused path.

Why compiled: it runs once per correspondence over every visible sample of a full-resolution frame (~10⁶ points);
as numpy each step is a full-array pass and a gather, and the passes, not the arithmetic, were the cost.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simready.sim.core.cache_stamp import stamp_callees
from simready.truth.kernels import projection as projection_kernels
from simready.truth.kernels.compile import JIT
from simready.truth.kernels.projection import camera_coords_at, world_at
from simready.truth.kernels.visibility import HIDDEN, OUT_OF_VIEW, UNDECIDED, VISIBLE
from simready.truth.stored import ABSENT, BEHIND_CAMERA, BEYOND_RANGE, OUT_OF_FRAME, STATIC, VALID
from simready.truth.stored import HIDDEN as HIDDEN_BIT

# The cached kernel here carries compiled copies of the projection helpers it calls: its cache follows that file too.
stamp_callees(__file__, (projection_kernels.__file__,))

#: Points a block of :func:`flow_of_samples`' first loop iterates side by side (16 and 32 measured alike, 4 slower).
LANES = 16


@numba.njit(**JIT)
def flow_of_samples(cols: np.ndarray, slot_of_body: np.ndarray, static_of_body: np.ndarray, tables: np.ndarray,
                    present_tab: np.ndarray, p_body: np.ndarray, world_src: np.ndarray, u_src: np.ndarray,
                    v_src: np.ndarray, dv_dt: np.ndarray, dt: float, cx: float, cy: float, fx: float, fy: float,
                    width: int, height: int, near: float, far: float, global_shutter: bool, max_iterations: int,
                    body: np.ndarray, triangle: np.ndarray, body_img: np.ndarray, triangle_img: np.ndarray,
                    z_img: np.ndarray, hidden_margin_m: float, hidden_margin_rel: float, step: float,
                    z_cam: np.ndarray, cell: np.ndarray, undecided: np.ndarray, und_world: np.ndarray,
                    und_cam: np.ndarray, und_uv: np.ndarray) -> tuple:
    """A correspondence's flow-table columns in two compiled passes over the source samples: the row guess
    (the source row moved by ``dv_dt · dt``, the motion field's prediction), the row iteration
    (:func:`.projection.settle_rows`), pixels and flags (:func:`.projection.pixels_and_flags`) and the float
    columns (:func:`.tables.flow_columns`) in the first, :data:`LANES` points at a time (their row iterations
    pass by pass side by side); the target buffers' visibility state
    (:func:`.visibility.buffer_visibility`) in the second. Each value repeats those kernels' operations in order,
    so every column is bitwise the unfused path's (the caller re-projects the few UNDECIDED points to re-cast them).

    Each point's moving-body slot in ``tables`` and whether its body is static are read per body
    (``slot_of_body``: −1 on static bodies; ``static_of_body``), as the gathers ``slot_of_body[body]`` would.

    ``z_cam`` (N,) float64 and ``cell`` (N,) int32 are what the first pass leaves the second (each point's
    optical-frame z, and its pixel cell: −1 not in view, −2 in view without a cell of four pixel centres), and
    ``undecided`` (N,) int64 the second's output, with ``und_world``, ``und_cam`` (N, 3) and ``und_uv`` (N, 2) float64:
    scratch (the caller's, reused across calls: a frame-sized temporary each call cost page faults), written before
    read.

    Returns ``du, dv`` (float32, rounded to ``step``), ``depth`` (float32 z at the target), ``row`` (int16),
    ``dx, dy, dz`` (float32 scene displacement), ``flags`` (uint8, the stored bit field of
    :mod:`simready.truth.stored`: absent, behind the camera, out of frame, beyond range, static, and the buffers'
    verdicts valid and hidden — the visibility states VISIBLE, HIDDEN; neither bit on an UNDECIDED point), the indices
    of the UNDECIDED points (in view, the buffers cannot tell: to re-cast), how many points are in view, and the
    UNDECIDED points' projection as the first pass settled it (world point, optical-frame point, pinhole pixel: the
    same operations again at the settled row, so the same bits; :func:`.projection.settle_rows`' and
    :func:`.projection.pixels_and_flags`' values for them): what the re-cast needs, without projecting them again.
    """
    n = len(body)
    hmax = float(height - 1)
    du, dv = np.empty(n, np.float32), np.empty(n, np.float32)
    depth = np.empty(n, np.float32)
    row_out = np.empty(n, np.int16)
    dx, dy, dz = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    flags = np.empty(n, np.uint8)
    # step is a power of two: dividing by it is multiplying by its exact inverse, bit for bit (and several
    # times cheaper than a division)
    inv_step = 1.0 / step
    iterations = 1 if global_shutter else max_iterations
    # Two loops: (1) the row guess and iteration, then from the settled optical-frame point the pixels, flags and
    # the table's columns (one pass: the point stays in a few lanes' registers instead of a frame-sized float64
    # array written and read back); (2) the target buffers' test. Each value repeats the unfused kernels'
    # operations. The first loop walks the points in blocks of LANES: each pass of the row iteration is taken for
    # every point of the block still moving before the next pass, so the points' chains (a pose, a division, a
    # rounding, the next row's pose) are independent work side by side instead of one point's chain after another
    # (the same operations per point, in the same order: the same bits).
    row_l = np.empty(LANES, np.int64)
    before_l = np.empty(LANES, np.int64)
    world_l = np.empty((LANES, 3))
    cam_l = np.empty((LANES, 3))
    pres_l = np.empty(LANES, np.bool_)
    moving_l = np.empty(LANES, np.bool_)
    for i0 in range(0, n, LANES):
        m = min(LANES, n - i0)
        for k in range(m):
            i = i0 + k
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
            row_l[k] = 0 if global_shutter else r
            before_l[k] = -1
            for a in range(3):
                world_l[k, a] = world_src[i, a]
            pres_l[k] = True
            moving_l[k] = True
        left = m
        it = 0  # every point still moving has taken ``it`` passes
        while left > 0:
            for k in range(m):
                if not moving_l[k]:
                    continue
                i = i0 + k
                r = row_l[k]
                s = slot_of_body[body[i]]
                w0, w1, w2 = world_l[k, 0], world_l[k, 1], world_l[k, 2]
                if s >= 0:  # _place
                    gp = tables[s, r]
                    w0 = p_body[i, 0] * gp[0] + p_body[i, 1] * gp[1] + p_body[i, 2] * gp[2] + gp[9]
                    w1 = p_body[i, 0] * gp[3] + p_body[i, 1] * gp[4] + p_body[i, 2] * gp[5] + gp[10]
                    w2 = p_body[i, 0] * gp[6] + p_body[i, 1] * gp[7] + p_body[i, 2] * gp[8] + gp[11]
                    world_l[k, 0], world_l[k, 1], world_l[k, 2] = w0, w1, w2
                    pres_l[k] = present_tab[s, r]
                d0 = w0 - cols[9, r]  # camera_coords_at
                d1 = w1 - cols[10, r]
                d2 = w2 - cols[11, r]
                c1 = d0 * cols[1, r] + d1 * cols[4, r] + d2 * cols[7, r]
                c2 = d0 * cols[2, r] + d1 * cols[5, r] + d2 * cols[8, r]
                cam_l[k, 0] = d0 * cols[0, r] + d1 * cols[3, r] + d2 * cols[6, r]
                cam_l[k, 1], cam_l[k, 2] = c1, c2
                new = r
                if not global_shutter and it < iterations and c2 > 0.0:
                    vv = np.rint(cy + fy * c1 / c2)
                    if np.isnan(vv):
                        vv = 0.0
                    new = int(min(max(vv, 0.0), hmax))
                # settled: one pass, the cap's pose at the row reached, or the row stays (or goes back)
                if global_shutter or it == iterations or new == r or new == before_l[k]:
                    moving_l[k] = False
                    left -= 1
                else:
                    before_l[k] = r
                    row_l[k] = new  # moved at the last iteration: the extra pass poses it at new (the cap)
            it += 1
        for k in range(m):
            i = i0 + k
            c0, c1, c2 = cam_l[k, 0], cam_l[k, 1], cam_l[k, 2]
            z_cam[i] = c2
            dx[i] = np.float32(world_l[k, 0] - world_src[i, 0])
            dy[i] = np.float32(world_l[k, 1] - world_src[i, 1])
            dz[i] = np.float32(world_l[k, 2] - world_src[i, 2])
            row_out[i] = np.int16(row_l[k])
            # pixels_and_flags (v: the iteration's last cy + fy·c1/c2, the same operands)
            f = (STATIC if static_of_body[body[i]] else 0) | (0 if pres_l[k] else ABSENT)
            front = c2 > 0.0
            if front:
                u = cx + fx * c0 / c2
                v = cy + fy * c1 / c2
            else:
                u = np.nan
                v = np.nan
            inside = front and u >= -0.5 and u <= width - 0.5 and v >= -0.5 and v <= height - 0.5
            be = inside and not (c2 >= near and c2 <= far)
            seen = pres_l[k] and inside and not be  # in view
            if not front:
                f |= BEHIND_CAMERA
            elif not inside:
                f |= OUT_OF_FRAME
            if be:
                f |= BEYOND_RANGE
            flags[i] = f
            # buffer_visibility's pixel cell, read in the second loop (−1: not in view; −2: in view, no cell)
            cell[i] = -2 if seen else -1
            if seen and u >= 0.0 and u <= width - 1.0 and v >= 0.0 and v <= height - 1.0:
                cell[i] = min(int(math.floor(v)), height - 2) * width + min(int(math.floor(u)), width - 2)
            # flow_columns
            du[i] = np.float32(np.rint((u - np.float64(u_src[i])) * inv_step) * step)
            dv[i] = np.float32(np.rint((v - np.float64(v_src[i])) * inv_step) * step)
            depth[i] = np.float32(c2)
    # The buffer test in a loop of its own: its reads of the target's buffers miss the cache, and in a short loop
    # the processor overlaps many points' misses (inside the long pass above it measured twice as slow).
    n_undecided = n_in_view = 0
    for i in range(n):
        p00 = cell[i]
        st = OUT_OF_VIEW if p00 == -1 else UNDECIDED
        if p00 >= 0:
            b0, t0 = body_img[p00], triangle_img[p00]
            same = (body_img[p00 + 1] == b0 and triangle_img[p00 + 1] == t0 and body_img[p00 + width] == b0
                    and triangle_img[p00 + width] == t0 and body_img[p00 + width + 1] == b0
                    and triangle_img[p00 + width + 1] == t0)
            if same and b0 >= 0:
                if b0 == body[i] and t0 == triangle[i]:
                    st = VISIBLE
                else:
                    z = z_cam[i]
                    limit = z - hidden_margin_m - hidden_margin_rel * z
                    if (z_img[p00] < limit and z_img[p00 + 1] < limit and z_img[p00 + width] < limit
                            and z_img[p00 + width + 1] < limit):
                        st = HIDDEN
        if st == VISIBLE:
            flags[i] |= VALID
        elif st == HIDDEN:
            flags[i] |= HIDDEN_BIT
        elif st == UNDECIDED:
            # The point as the first loop left it at its settled row (the same operations: the same bits).
            j = n_undecided
            r = np.int64(row_out[i])
            s = slot_of_body[body[i]]
            if s >= 0:
                world_at(i, s, r, tables, p_body, und_world, j)
            else:
                for a in range(3):
                    und_world[j, a] = world_src[i, a]
            camera_coords_at(j, r, cols, und_world, und_cam)
            und_uv[j, 0] = cx + fx * und_cam[j, 0] / und_cam[j, 2]
            und_uv[j, 1] = cy + fy * und_cam[j, 1] / und_cam[j, 2]
            undecided[j] = i
            n_undecided += 1
        n_in_view += p00 != -1
    m = n_undecided
    return du, dv, depth, row_out, dx, dy, dz, flags, undecided[:m], n_in_view, und_world[:m], und_cam[:m], und_uv[:m]
