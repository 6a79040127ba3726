"""Compiled kernels of the camera's RGB pass (numba): exposure, tone map, vignette, lens resampling and
sRGB encoding in two passes over the frame instead of a dozen full-frame numpy passes.

Bits: every step repeats :func:`simready.sensors_hw.camera.finish_rgb`'s float32 operations in numpy's
order (no fused multiply-add, ``fastmath`` off, constants typed float32), so the image is byte for byte
the numpy one (tested). The compiled code is cached beside this module (``cache=True``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np

from simready.raycast.kernels import fma

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)
_Kernel = TypeVar("_Kernel", bound=Callable[..., Any])


def _compiled(fn: _Kernel) -> _Kernel:
    """``numba.njit(**_JIT)``, typed as the function it compiles (numba's own types are not read by the check)."""
    return cast(_Kernel, numba.njit(**_JIT)(fn))


@_compiled
def _tone(x: np.float32, exposure: np.float32, scale: bool, reinhard: bool, g: np.float32,
          vignette: bool) -> np.float32:
    """One float32 value exposed (``scale``), tone-mapped (Reinhard or clipped to [0, 1]) and vignetted by ``g``:
    the operator :func:`tone_map` and :func:`radiance` share (inlined by numba's LLVM, the same float32 steps)."""
    one = np.float32(1.0)
    if scale:
        x = x * exposure
    if reinhard:
        x = x / (x + one)
    else:
        x = min(max(x, np.float32(0.0)), one)
    if vignette:
        x = x * g
    return x


@_compiled
def tone_map(radiance: np.ndarray, exposure: np.float32, reinhard: bool, gain: np.ndarray) -> np.ndarray:
    """(P, 3) float32 linear radiance → exposed, tone-mapped (Reinhard or clipped to [0, 1]) and
    vignetted, float32; ``exposure`` 1 skips the product, an empty ``gain`` the vignette."""
    p = radiance.shape[0]
    out = np.empty((p, 3), np.float32)
    scale = exposure != np.float32(1.0)
    vignette = gain.shape[0] > 0
    for i in range(p):
        g = gain[i] if vignette else np.float32(1.0)
        for c in range(3):
            out[i, c] = _tone(radiance[i, c], exposure, scale, reinhard, g, vignette)
    return out


@_compiled
def encode_srgb(x: np.ndarray, base: np.ndarray, dx: int, dy: int, wts: np.ndarray, lut: np.ndarray,
                levels: np.float32) -> np.ndarray:
    """(P, 3) float32 in [0, 1] → (P, 3) uint8 sRGB through ``lut``, resampled by bilinear taps when given
    (``base`` (P,) empty: no lens): output pixel i reads source pixels ``base[i]``, ``+ dx``, ``+ dy`` and
    ``+ dx + dy`` (the taps of :func:`simready.sensors_hw.camera.lens.distortion_taps`, whose corners are always
    those four) with weights ``wts`` (4, P), summed in that order. Storing one int32 index instead of four
    int64 ones reads 29 MB less per 1280×720 frame."""
    p = x.shape[0]
    out = np.empty((p, 3), np.uint8)
    half = np.float32(0.5)
    lens = base.shape[0] > 0
    for i in range(p):
        if lens:
            i0 = np.int64(base[i])
            i1 = i0 + dx
            i2 = i0 + dy
            i3 = i2 + dx
            w0, w1, w2, w3 = wts[0, i], wts[1, i], wts[2, i], wts[3, i]
            for c in range(3):
                y = x[i0, c] * w0
                y = y + x[i1, c] * w1
                y = y + x[i2, c] * w2
                y = y + x[i3, c] * w3
                y = y * levels
                y = y + half
                out[i, c] = lut[np.int32(y)]
        else:
            for c in range(3):
                y = x[i, c] * levels
                y = y + half
                out[i, c] = lut[np.int32(y)]
    return out


@_compiled
def z_depth(d: np.ndarray, axis_z: np.ndarray, width: int, dist: np.ndarray) -> np.ndarray:
    """(P,) float32 z-depth ``distance · (d · optical z) / |d|`` of float32 ray directions ``d`` (P, 3) whose
    rows share row ``p // width``'s optical axis ``axis_z`` (H, 3): :func:`simready.sensors_hw.camera.z_depth_numpy`'s
    float64 operations in its order, one pass instead of a dozen."""
    p = d.shape[0]
    out = np.empty(p, np.float32)
    for r in range(p // width):  # by row and column: no integer division per pixel
        for col in range(width):
            i = r * width + col
            out[i] = _z(d, i, axis_z, r, dist[i])
    return out


def _inlined(fn: _Kernel) -> _Kernel:
    """``numba.njit(inline="always", **_JIT)``, typed as the function it compiles: a step the kernels share, inlined
    into each (the same floating-point operations as written out there)."""
    return cast(_Kernel, numba.njit(inline="always", **_JIT)(fn))


@_inlined
def _z(d: np.ndarray, i: int, axis_z: np.ndarray, r: int, dist: float) -> np.float32:
    """Ray i's float32 z-depth ``dist · (d · optical z) / |d|`` (row r's axis), z_depth_numpy's float64 steps."""
    dot = 0.0
    norm2 = 0.0
    for a in range(3):
        c = np.float64(d[i, a])
        dot += c * axis_z[r, a]
        norm2 += c * c
    return np.float32(dist * dot / np.sqrt(norm2))


@_compiled
def refine_z_depth(static: np.ndarray, rows: np.ndarray, o_rows: np.ndarray, d: np.ndarray, plane: np.ndarray,
                   n: np.ndarray, dist: np.ndarray, plane_ok: np.ndarray, axis_z: np.ndarray, width: int) -> np.ndarray:
    """A camera frame's depth pass in one walk over its pixels: each static hit ``static`` (ascending) refined in
    place on ``dist`` and ``plane_ok`` with :func:`simready.raycast.kernels.refine_static`'s float64 operations
    (distances only, float32 rays widened and normalized; the world's triangle rows ``rows``, tables ``plane`` and
    ``n``), then every pixel's :func:`z_depth` from its distance (the moving bodies' hits refined before, misses
    +inf): the same values as the two passes, the frame's directions and distances read once. The rays come in
    rows of ``width`` from one origin (``o_rows`` (H, 3), each row's first ray's)."""
    p = d.shape[0]
    out = np.empty(p, np.float32)
    k = 0
    n_static = static.shape[0]
    for g in range(p // width):
        o0, o1, o2 = np.float64(o_rows[g, 0]), np.float64(o_rows[g, 1]), np.float64(o_rows[g, 2])
        for i in range(g * width, (g + 1) * width):
            if k < n_static and static[k] == i:
                k += 1
                r = rows[i]
                d0, d1, d2 = np.float64(d[i, 0]), np.float64(d[i, 1]), np.float64(d[i, 2])
                inv = 1.0 / math.sqrt(d0 * d0 + d2 * d2 + d1 * d1)
                d0, d1, d2 = d0 * inv, d1 * inv, d2 * inv
                t = (plane[r] - (n[r, 0] * o0 + n[r, 2] * o2 + n[r, 1] * o1)) / (n[r, 0] * d0 + n[r, 2] * d2
                                                                               + n[r, 1] * d1)
                ok = np.isfinite(t)
                if ok:
                    dist[i] = t
                plane_ok[i] = ok
            out[i] = _z(d, i, axis_z, g, dist[i])
    return out


@_compiled
def sun_setup(normal_table: np.ndarray, rows: np.ndarray, moving: np.ndarray, n_moving: np.ndarray,
              o_rows: np.ndarray, d: np.ndarray, dist: np.ndarray, hit: np.ndarray, sun: np.ndarray,
              bias: np.float32, t_rows: np.ndarray, width: int, n: np.ndarray, facing: np.ndarray, ndl: np.ndarray,
              lit: np.ndarray, start: np.ndarray, lit_t: np.ndarray) -> tuple[Any, ...]:
    """The shading's first pass (:func:`simready.sensors_hw.camera.shade_numpy`'s float32 operations per pixel):
    each ray's geometric normal (``normal_table[rows]``, or ``n_moving[k]`` for the k-th ray in ``moving``),
    ``facing`` (−sign(n·d): the normal turned toward the viewer), and for the lit rays (n·sun, facing, > 0) their
    indices, that ``ndl`` and shadow-ray starts ``o + d·dist + bias·n·facing`` (only the lit rays' ``ndl`` is ever
    read: written beside their indices, not a frame of it). A camera frame's rays come in rows of ``width`` from
    one origin at one time: ``o_rows`` (H, 3) and ``t_rows`` (H,) give each row's (its first ray's), read once
    per row instead of once per ray.
    Written into the caller's arrays (work arrays: every one is a temporary of the shading): ``n`` (P, 3) and
    ``facing`` (P,), or (0, 3) and (0,) when only the headlights would read them and there are none; ``ndl``
    (P,), ``lit`` (P,), ``start`` (P, 3) and ``lit_t`` (P,) (the lit rays' ``time``), of which the first L entries
    are written. Returns (n, facing, ndl[:L], lit[:L], start[:L], lit_t[:L], the least start z (float32), the least
    and the greatest lit time): what the shadow cast's prefilter and time window read, without passes of their
    own (NaN where numpy's min or max would give NaN)."""
    p = len(rows)
    normals = n.shape[0] == p
    zero = np.float32(0.0)
    k = 0
    count = 0
    z_min = np.float32(np.inf)
    t_min = np.inf
    t_max = -np.inf
    z_nan = False
    t_nan = False
    for g in range(p // width):
        o0, o1, o2 = o_rows[g, 0], o_rows[g, 1], o_rows[g, 2]
        tl = t_rows[g]
        for i in range(g * width, (g + 1) * width):
            if k < len(moving) and moving[k] == i:
                n0, n1, n2 = n_moving[k, 0], n_moving[k, 1], n_moving[k, 2]
                k += 1
            else:
                r = rows[i]
                n0, n1, n2 = normal_table[r, 0], normal_table[r, 1], normal_table[r, 2]
            dot = n0 * d[i, 0] + n1 * d[i, 1] + n2 * d[i, 2]
            f = -np.sign(dot)
            if normals:
                n[i, 0], n[i, 1], n[i, 2] = n0, n1, n2
                facing[i] = f
            x = (n0 * sun[0] + n1 * sun[1] + n2 * sun[2]) * f
            if x > zero:
                ndl[count] = x
                lit[count] = i
                t = np.float32(dist[i]) if hit[i] else zero
                start[count, 0] = (o0 + d[i, 0] * t) + bias * (n0 * f)
                start[count, 1] = (o1 + d[i, 1] * t) + bias * (n1 * f)
                start[count, 2] = (o2 + d[i, 2] * t) + bias * (n2 * f)
                z = start[count, 2]
                if z != z:
                    z_nan = True
                elif z < z_min:
                    z_min = z
                lit_t[count] = tl
                if tl != tl:
                    t_nan = True
                else:
                    t_min = min(t_min, tl)
                    t_max = max(t_max, tl)
                count += 1
    if z_nan:
        z_min = np.float32(np.nan)
    if t_nan:
        t_min = np.nan
        t_max = np.nan
    return n, facing, ndl[:count], lit[:count], start[:count], lit_t[:count], z_min, t_min, t_max


@_compiled
def headlight_irradiance(o: np.ndarray, d: np.ndarray, dist: np.ndarray, hit: np.ndarray, n: np.ndarray,
                         facing: np.ndarray, row_of: np.ndarray, width: int, lamps: np.ndarray, axis: np.ndarray,
                         cos_edge: np.float32, span: np.float32, intensity: np.float32,
                         out: np.ndarray) -> np.ndarray:
    """(P,) float32 irradiance from the ego's lamps at each ray's hit (:func:`~simready.sensors_hw.camera.shading.
    _headlight_irradiance`'s float32 operations per pixel, in its order, lamp after lamp), written into ``out``.

    A frame's rays come in rows of ``width`` at one time each: row g's lamp positions are ``lamps[:, row_of[g]]``
    (L, U, 3) and its beam axis ``axis[row_of[g]]`` (U, 3), given per distinct row time. The point is
    ``o + d·dist`` (``dist`` as float32, 0 where nothing was hit), its normal ``n·facing``; ``cos_edge`` and
    ``span`` (1 − cos of the half angle) are the float32 values numpy's arithmetic with the Python floats took,
    and each dot product is summed as ``einsum("ij,ij->i")`` sums three float32 products (no fused multiply-add).
    """
    zero = np.float32(0.0)
    one = np.float32(1.0)
    floor = np.float32(1e-6)
    for i in range(hit.shape[0]):
        k = row_of[i // width]
        t = np.float32(dist[i]) if hit[i] else zero
        p0 = o[i, 0] + d[i, 0] * t
        p1 = o[i, 1] + d[i, 1] * t
        p2 = o[i, 2] + d[i, 2] * t
        f = facing[i]
        n0, n1, n2 = n[i, 0] * f, n[i, 1] * f, n[i, 2] * f
        a0, a1, a2 = axis[k, 0], axis[k, 1], axis[k, 2]
        total = zero
        for lamp in range(lamps.shape[0]):
            x0 = lamps[lamp, k, 0] - p0
            x1 = lamps[lamp, k, 1] - p1
            x2 = lamps[lamp, k, 2] - p2
            r2 = x0 * x0 + x1 * x1 + x2 * x2
            r2 = r2 if (r2 != r2 or r2 > floor) else floor  # np.maximum: NaN wins
            root = np.sqrt(r2)
            l0, l1, l2 = x0 / root, x1 / root, x2 / root
            cos_off = -(l0 * a0 + l1 * a1 + l2 * a2)
            c = (cos_off - cos_edge) / span
            if c < zero:  # np.clip: NaN stays
                c = zero
            elif c > one:
                c = one
            facing_lamp = n0 * l0 + n1 * l1 + n2 * l2
            facing_lamp = facing_lamp if (facing_lamp != facing_lamp or facing_lamp > zero) else zero
            total += intensity * np.sqrt(c) * facing_lamp / r2
        out[i] = total
    return out


@_compiled
def radiance(albedo: np.ndarray, body: np.ndarray, albedo_ext: np.ndarray, hit: np.ndarray, ndl: np.ndarray,
             lit: np.ndarray, shadowed: np.ndarray, sun_rgb: np.ndarray, ambient: np.ndarray, headlight: np.ndarray,
             sky: np.ndarray, tone: bool, exposure: np.float32, reinhard: bool, gain: np.ndarray) -> np.ndarray:
    """(P, 3) float32 linear radiance (in place on ``albedo``): ``albedo · (ndl·sun_rgb [where sunlit] + ambient
    [+ headlight irradiance when given])``, the sky where nothing was hit; ``shade_numpy``'s float32
    operations in order. ``albedo`` empty ((0, 3): no body has a textured look): each ray's is its body's,
    ``albedo_ext[body]`` (the scene's per-body table, −1 reading its last row), read here instead of a
    frame-sized array written for it, and the radiance is a new array. Sunlit: the rays ``lit`` (ascending)
    whose shadow ray was not ``shadowed`` (one entry each, as ``ndl``, their n·sun; ``lit`` empty: none), read by a
    walk along them (no frame-sized mask). With ``tone`` each value then goes through :func:`tone_map`'s operations (exposure, tone
    map, vignette ``gain``) in the same pass, so a frame is not read and written once more for it."""
    p = hit.shape[0]
    per_body = albedo.shape[0] != p
    out = np.empty((p, 3), np.float32) if per_body else albedo
    last = albedo_ext.shape[0] - 1
    zero = np.float32(0.0)
    one = np.float32(1.0)
    lamps = headlight.shape[0] > 0
    scale = exposure != one
    vignette = gain.shape[0] > 0
    k = 0
    n_lit = lit.shape[0]
    for i in range(p):
        s = zero
        if k < n_lit and lit[k] == i:
            if not shadowed[k]:
                s = ndl[k]
            k += 1
        b = body[i] if per_body else 0
        b = last if b < 0 else b
        for c in range(3):
            if hit[i]:
                light = s * sun_rgb[c]
                light = light + ambient[c]
                if lamps:
                    light = light + headlight[i]
                x = (albedo_ext[b, c] if per_body else albedo[i, c]) * light
            else:
                x = sky[c]
            if tone:
                x = _tone(x, exposure, scale, reinhard, gain[i] if vignette else one, vignette)
            out[i, c] = x
    return out


@_compiled
def spans(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The index ranges [start, start + count) of each span, concatenated in order (int64): one pass writing
    each index once (:func:`simready.sensors_hw.camera.prefilters.concat_ranges`' numpy repeat and arange did three)."""
    total = 0
    for j in range(starts.shape[0]):
        total += counts[j]
    out = np.empty(total, np.int64)
    k = 0
    for j in range(starts.shape[0]):
        s0 = starts[j]
        for c in range(counts[j]):
            out[k] = s0 + c
            k += 1
    return out


@_compiled
def _fused_dot(p: np.ndarray, j: int, a: np.ndarray, r: int) -> float:
    """Point ``p[j]`` dotted with column ``r`` of ``a`` (3, H) as OpenBLAS's dgemm sums it (measured here):
    ``fma(x2, a2, fma(x1, a1, x0·a0))``."""
    inner: float = fma(p[j, 1], a[1, r], p[j, 0] * a[0, r])  # type: ignore[call-arg]
    out: float = fma(p[j, 2], a[2, r], inner)
    return out


@_compiled
def projection_candidates(corners: np.ndarray, ax: np.ndarray, ay: np.ndarray, az: np.ndarray, ox: np.ndarray,
                          oy: np.ndarray, oz: np.ndarray, cx: float, cy: float, fx: float, fy: float, near: float,
                          width: int) -> np.ndarray:
    """:func:`simready.sensors_hw.camera.projection_prefilter`'s pixels in one pass over the rows: each row's
    8 box ``corners`` in its optical frame (axes ``ax``/``ay``/``az`` (3, H), origin offsets ``ox``/``oy``/``oz``
    (H,); the products fused as numpy's matrix product through OpenBLAS fuses them, measured:
    ``fma(x2, a2, fma(x1, a1, x0·a0))``), projected; the row's columns [floor(min u) − 1, ceil(max u) + 1]
    when the box is wholly in front and the row lies within its rows ± 1, the whole row when it straddles the
    camera plane, none when it lies wholly nearer than ``near``. Returns the pixel indices (int64, ascending),
    the rule's numpy passes' and :func:`spans`' in one."""
    h = ax.shape[1]
    c0s = np.empty(h, np.int64)
    counts = np.zeros(h, np.int64)
    total = 0
    for r in range(h):
        front = True
        unreachable = True
        u_min, u_max, v_min, v_max = np.inf, -np.inf, np.inf, -np.inf
        for j in range(8):
            x = _fused_dot(corners, j, ax, r) - ox[r]
            y = _fused_dot(corners, j, ay, r) - oy[r]
            z = _fused_dot(corners, j, az, r) - oz[r]
            front = front and z > 1e-6
            unreachable = unreachable and z < near
            u = cx + fx * x / z
            v = cy + fy * y / z
            u_min, u_max = min(u_min, u), max(u_max, u)
            v_min, v_max = min(v_min, v), max(v_max, v)
        if front:
            c0 = min(max(np.floor(u_min) - 1.0, 0.0), float(width))
            c1 = min(max(np.ceil(u_max) + 1.0, -1.0), float(width - 1))
            in_rows = r >= np.floor(v_min) - 1.0 and r <= np.ceil(v_max) + 1.0
        else:
            c0, c1, in_rows = 0.0, float(width - 1), True
        if in_rows and not unreachable and c1 >= c0:
            c0s[r] = np.int64(c0)
            counts[r] = np.int64(c1 - c0 + 1.0)
            total += counts[r]
    out = np.empty(total, np.int64)
    k = 0
    for r in range(h):
        start = r * width + c0s[r]
        for c in range(counts[r]):
            out[k] = start + c
            k += 1
    return out


# --- published files: PNG scanlines and the depth file's values ---------------------------------------------------
# PNG filter type 2 ("Up"): each byte minus the byte above it (mod 256; row 0 minus zeros), one filter byte ahead of
# each row. The image stays the same pixels whatever the filter; rows of a street frame repeat their row above
# (sky, road, flat-shaded bodies; ids and classes in whole regions), so Up leaves long runs of zeros that zlib's
# run-length strategy codes fast.

PNG_FILTER_UP = 2


@_compiled
def png_scanlines(rows: np.ndarray) -> np.ndarray:
    """(H, B) uint8 rows of an 8-bit image → H·(B + 1) bytes: each row Up-filtered behind its filter byte."""
    h, b = rows.shape
    out = np.empty(h * (b + 1), np.uint8)
    for v in range(h):
        o = v * (b + 1)
        out[o] = PNG_FILTER_UP
        if v == 0:
            for i in range(b):
                out[o + 1 + i] = rows[0, i]
        else:
            for i in range(b):
                out[o + 1 + i] = (np.int32(rows[v, i]) - np.int32(rows[v - 1, i])) & 255
    return out


@_compiled
def id_scanlines(ids: np.ndarray) -> tuple[np.ndarray, bool]:
    """(H, W) uint32 compact ids → their RGB image's (R + 256·G + 65536·B) Up-filtered scanlines, and whether
    every id fits 24 bits (the bytes are not the image otherwise)."""
    h, w = ids.shape
    b = 3 * w
    out = np.empty(h * (b + 1), np.uint8)
    ok = True
    for v in range(h):
        o = v * (b + 1)
        out[o] = PNG_FILTER_UP
        for u in range(w):
            a = np.int64(ids[v, u])
            if a >= 1 << 24:
                ok = False
            p = np.int64(ids[v - 1, u]) if v > 0 else np.int64(0)
            for c in range(3):
                out[o + 1 + 3 * u + c] = (((a >> (8 * c)) & 255) - ((p >> (8 * c)) & 255)) & 255
    return out, ok


@_compiled
def semantic_scanlines(classes: np.ndarray, ignore: int, ignore_8bit: int) -> tuple[np.ndarray, bool]:
    """(H, W) uint16 class ids → their RGB image's (the class in blue, ``ignore`` as ``ignore_8bit``) Up-filtered
    scanlines, and whether every other class is below ``ignore_8bit``."""
    h, w = classes.shape
    b = 3 * w
    out = np.empty(h * (b + 1), np.uint8)
    ok = True
    for v in range(h):
        o = v * (b + 1)
        out[o] = PNG_FILTER_UP
        for u in range(w):
            c = np.int64(classes[v, u])
            if c == ignore:
                c = np.int64(ignore_8bit)
            elif c >= ignore_8bit:
                ok = False
            p = np.int64(classes[v - 1, u]) if v > 0 else np.int64(0)
            if p == ignore:
                p = np.int64(ignore_8bit)
            out[o + 1 + 3 * u] = 0
            out[o + 2 + 3 * u] = 0
            out[o + 3 + 3 * u] = (c - p) & 255
    return out, ok


@_compiled
def depth_raw(z: np.ndarray, near_m: float) -> np.ndarray:
    """(N,) float32 z-depth → ``near_m / z`` in float64 rounded to float32, 0 where z is not finite or not
    positive: :func:`simready.sensors_hw.camera.encode_depth`'s numpy steps in one pass, bit for bit."""
    out = np.empty(z.shape[0], np.float32)
    for i in range(z.shape[0]):
        zi = np.float64(z[i])
        out[i] = np.float32(near_m / zi) if np.isfinite(zi) and zi > 0.0 else np.float32(0.0)
    return out


@_compiled
def undistort(xy_d: np.ndarray, k1: float, k2: float, iterations: int) -> np.ndarray:
    """(N, 2) distorted normalized points → undistorted, by :func:`simready.sensors_hw.camera.undistort_normalized`'s
    fixed-point iteration point by point, its float64 steps in its order (bit for bit)."""
    out = np.empty_like(xy_d)
    for i in range(xy_d.shape[0]):
        xd, yd = xy_d[i, 0], xy_d[i, 1]
        x, y = xd, yd
        for _ in range(iterations):
            r2 = x * x + y * y
            s = 1.0 + k1 * r2 + k2 * r2 * r2
            x, y = xd / s, yd / s
        out[i, 0], out[i, 1] = x, y
    return out
