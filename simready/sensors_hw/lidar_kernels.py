"""Compiled kernel of a LiDAR sweep's returns (numba): which beams return and their columns, in two passes
over the sweep's beams instead of two dozen full-array numpy passes and gathers.

Bits: :func:`simready.sensors_hw.lidar.returns_numpy`'s operations in its order and precision (the range
noise multiplied in float32 and added in float64, the thresholds compared in float32 as numpy compares a
float32 array with a Python float, the points and the power in float64), ``fastmath`` off; tested bit for bit
against it. Cached beside this module (``cache=True``).

Also the sweep's draws (:func:`pcg64_draws`): numpy's PCG64 generator and its float32 ziggurat normal and
uniform, the same numbers and the same generator state after, in one compiled loop.
"""

from __future__ import annotations

import math

from llvmlite import ir
import numba
from numba import types
from numba.core.extending import intrinsic
# numba's copies of numpy's float32 ziggurat tables (numpy's random/src/distributions/ziggurat_constants.h);
# tests/test_sensor_kernels.py holds the draws to numpy's own, tail and rejection paths included.
from numba.np.random._constants import fi_float, ki_float, wi_float, ziggurat_nor_inv_r_f, ziggurat_nor_r_f
import numpy as np

from simready.raycast.kernels import fma

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)
#: Angle added to :func:`azimuth_beams`' quick rejection bound, radians (rounding there is ~1e-15).
_SLACK_RAD = 1e-7


@numba.njit(**_JIT)
def returns(body: np.ndarray, tfar: np.ndarray, r_min: np.ndarray, cos: np.ndarray, noise: np.ndarray,
            draw: np.ndarray, sigma: np.float32, noisy: bool, dark_ext: np.ndarray, cos_grazing: np.float32,
            probability: np.float32, rain_draw: np.ndarray, two_way: np.ndarray, reflectance: np.ndarray,
            compact_id: np.ndarray, intensity: np.ndarray, ids: np.ndarray, rng_m: np.ndarray,
            beam: np.ndarray, words: np.ndarray) -> int:
    """The returns of N beams (see :func:`simready.sensors_hw.lidar.returns_numpy` for the rules), in one pass
    into the caller's (N,) buffers ``intensity`` float32, ``ids`` uint32, ``rng_m`` float64 and ``beam`` int64,
    sized for every beam returning; returns M, how many did (the first M entries of each buffer: the caller
    shrinks them in place). The points are the beams' directions times ``rng_m``, computed when read
    (:func:`beam_points`).

    The hits as the cast leaves them: ``body`` (−1: none), ``tfar`` the float32 distance from each segment's
    start at ``r_min`` (one per beam or one for all), whose float64 sum is the hit's distance (what
    :attr:`simready.raycast.hits.Hits.distance_m` reads); ``noisy``: ``sigma`` is not zero (the range is
    ``distance + sigma·noise``, the float32 product widened); ``rain_draw`` / ``two_way``: (N,) rain's uniforms
    and two-way transmittance, or (0,) when dry.

    The uniforms: ``draw`` (N,), or with ``draw`` (0,) drawn here, one per beam in beam order, from the PCG64
    state ``words`` (:func:`pcg64_draws`' six words, updated in place): ``Generator.random(dtype=float32)``'s
    numbers (:func:`pcg64_draws`' loop), read where they are drawn instead of written out and read back.
    """
    n = body.shape[0]
    rain = two_way.shape[0] == n
    per_ray = r_min.shape[0] == n
    inline = draw.shape[0] != n
    hi, lo, inc_hi, inc_lo = np.uint64(0), np.uint64(0), np.uint64(0), np.uint64(0)
    has, buf = False, np.uint64(0)
    if inline:
        hi, lo, inc_hi, inc_lo, has, buf = words[0], words[1], words[2], words[3], words[4] != 0, words[5]
    scale = np.float32(1.0 / 16777216.0)
    m = 0
    for i in range(n):
        if inline:
            hi, lo, has, buf, u32 = _next32(hi, lo, inc_hi, inc_lo, has, buf)
            u = np.float32(u32 >> np.uint32(8)) * scale
        else:
            u = draw[i]
        b = body[i]
        if b < 0:
            continue
        dist = np.float64(tfar[i]) + np.float64(r_min[i if per_ray else 0])
        r = dist + np.float64(sigma * noise[i]) if noisy else dist
        if ((dark_ext[b] or cos[i] < cos_grazing) and u < probability) or not r > 0.0:
            continue
        if rain and not np.float64(rain_draw[i]) < two_way[i]:
            continue
        power = reflectance[b] * np.float64(cos[i])
        if rain:
            power = power * two_way[i]
        intensity[m] = np.float32(power)
        ids[m] = compact_id[b]
        rng_m[m] = r
        beam[m] = i
        m += 1
    if inline:
        words[0], words[1], words[4], words[5] = hi, lo, np.uint64(1 if has else 0), buf
    return m


@numba.njit(**_JIT)
def beam_points(beam: np.ndarray, rng_m: np.ndarray, cos_el: np.ndarray, sin_el: np.ndarray, cos_az: np.ndarray,
                sin_az: np.ndarray) -> np.ndarray:
    """(3, M) float64 sensor-frame points of returns on ascending beams ``beam`` at ranges ``rng_m``: the beam
    table's direction times the range, the direction as the products of its angles' cosines and sines
    (:func:`simready.sensors_hw.lidar.beam_table`: ``cos el · cos az``, ``cos el · sin az``, ``sin el``, the same
    float64 products), read instead of an (N, 3) table; columns walked with the beams (no integer division)."""
    m = beam.shape[0]
    channels = cos_el.shape[0]
    points = np.empty((3, m), np.float64)
    s = 0
    first = 0  # beam index of column s's first channel
    for j in range(m):
        i = beam[j]
        while i >= first + channels:
            s += 1
            first += channels
        c = i - first
        r = rng_m[j]
        points[0, j] = (cos_el[c] * cos_az[s]) * r
        points[1, j] = (cos_el[c] * sin_az[s]) * r
        points[2, j] = sin_el[c] * r
    return points


@numba.njit(**_JIT)
def azimuth_beams(corners: np.ndarray, ax: np.ndarray, ay: np.ndarray, px: np.ndarray, py: np.ndarray,
                  azimuth: np.ndarray, margin: float, channels: int, cos_az: np.ndarray,
                  sin_az: np.ndarray) -> np.ndarray:
    """The beams of the columns whose azimuth lies in the arc a box's 8 ``corners`` span seen from each
    column's pose (or all of a column whose origin is inside the box's footprint): the rule of
    :func:`simready.sensors_hw.lidar.azimuth_prefilter`, one pass over the columns instead of a dozen
    (8, steps) numpy passes. ``ax``/``ay`` (3, steps): the sensor's x and y axes in world per column,
    ``px``/``py`` the origin along them; ``margin`` widens the arc (radians). Returns beam indices
    (column·channels + channel), ascending.

    A column far outside the box's arc is rejected without the corners' arc tangents: the corners seen in
    a column's sensor plane lie within the box's half diagonal ρ of its centre's projection (at distance d),
    so the arc lies within ``asin(ρ/d)`` of the centre's direction; a column whose azimuth (``cos_az``,
    ``sin_az``) is further than that plus ``margin`` plus a slack of :data:`_SLACK_RAD` (far above the
    rounding of either test) is one the exact rule rejects too. Only columns with d > 1.001·ρ + 1 mm take
    this path (there the exact rule's "inside" cases cannot arise). The same columns as the rule alone."""
    steps = azimuth.shape[0]
    two_pi = 2.0 * np.pi
    keep = np.zeros(steps, np.bool_)
    n = 0
    az = np.empty(8)
    c0 = 0.5 * (corners[0, 0] + corners[7, 0])
    c1 = 0.5 * (corners[0, 1] + corners[7, 1])
    c2 = 0.5 * (corners[0, 2] + corners[7, 2])
    rho = 0.5 * np.sqrt((corners[7, 0] - corners[0, 0]) ** 2 + (corners[7, 1] - corners[0, 1]) ** 2
                        + (corners[7, 2] - corners[0, 2]) ** 2)
    far = 1.001 * rho + 1e-3
    wide = margin + _SLACK_RAD
    cos_wide, sin_wide = np.cos(wide), np.sin(wide)
    for s in range(steps):
        vx = c0 * ax[0, s] + c1 * ax[1, s] + c2 * ax[2, s] - px[s]
        vy = c0 * ay[0, s] + c1 * ay[1, s] + c2 * ay[2, s] - py[s]
        d2 = vx * vx + vy * vy
        if d2 > far * far:
            d = np.sqrt(d2)
            r = rho / d
            # cos(asin(r) + wide); the column's direction against the centre's: reject when the angle is larger.
            cos_bound = np.sqrt(1.0 - r * r) * cos_wide - r * sin_wide
            if cos_az[s] * vx + sin_az[s] * vy < d * cos_bound:
                continue
        r2_min = np.inf
        level = ax[2, s] == 0.0 and ay[2, s] == 0.0
        for k in range(8):
            # Corners 2m and 2m + 1 differ in z only: seen from a level column (no z in the sensor's x and y
            # axes) their sums differ by a signed zero, which changes nothing when the xy part is not zero.
            sx = corners[k, 0] * ax[0, s] + corners[k, 1] * ax[1, s]
            sy = corners[k, 0] * ay[0, s] + corners[k, 1] * ay[1, s]
            if k % 2 == 1 and level and sx != 0.0 and sy != 0.0:
                az[k] = az[k - 1]  # the same cx, cy (and r2) as corner k − 1
                continue
            cx = sx + corners[k, 2] * ax[2, s] - px[s]
            cy = sy + corners[k, 2] * ay[2, s] - py[s]
            az[k] = np.arctan2(cy, cx)
            r2 = cx * cx + cy * cy
            if r2 < r2_min:
                r2_min = r2
        rel_min = 0.0
        rel_max = 0.0
        for k in range(1, 8):
            rel = az[k] - az[0]
            if rel < -np.pi:
                rel += two_pi
            elif rel >= np.pi:
                rel -= two_pi
            rel_min = min(rel_min, rel)
            rel_max = max(rel_max, rel)
        span = rel_max - rel_min
        inside = span >= np.pi - 1e-9 or r2_min < 1e-12
        offset = (azimuth[s] - (az[0] + rel_min)) % two_pi
        if inside or offset <= span + margin or offset >= two_pi - margin:
            keep[s] = True
            n += 1
    out = np.empty(n * channels, np.int64)
    j = 0
    for s in range(steps):
        if keep[s]:
            for c in range(channels):
                out[j] = s * channels + c
                j += 1
    return out


@numba.njit(**_JIT)
def column_axes(T: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`azimuth_beams`' frames of S column poses ``T`` (S, 4, 4) in one pass: the sensor's x and y axes in
    world, (3, S) each, and the origin's coordinates along them, (S,) each: ``np.einsum("si,is->s", p, ax)``'s
    sums, ``(p0·a0 + p1·a1) + p2·a2`` (measured: its order, no fused products)."""
    s_n = T.shape[0]
    ax = np.empty((3, s_n))
    ay = np.empty((3, s_n))
    px = np.empty(s_n)
    py = np.empty(s_n)
    for s in range(s_n):
        for i in range(3):
            ax[i, s] = T[s, i, 0]
            ay[i, s] = T[s, i, 1]
        p0, p1, p2 = T[s, 0, 3], T[s, 1, 3], T[s, 2, 3]
        px[s] = (p0 * T[s, 0, 0] + p1 * T[s, 1, 0]) + p2 * T[s, 2, 0]
        py[s] = (p0 * T[s, 0, 1] + p1 * T[s, 1, 1]) + p2 * T[s, 2, 1]
    return ax, ay, px, py


@numba.njit(**_JIT)
def mount_poses(P: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``P @ M`` for S poses ``P`` (S, 4, 4) and one mount ``M`` (4, 4), in place on ``P`` (returned): each entry
    ``fma(p3, m3, fma(p2, m2, fma(p1, m1, p0·m0)))``, how np.matmul sums a float64 (S, 4, 4) @ (4, 4) here
    (measured: its BLAS kernels fuse the products so), without its per-matrix calls and a second (S, 4, 4) array."""
    row = np.empty(4)
    for s in range(P.shape[0]):
        for i in range(4):
            for k in range(4):
                row[k] = P[s, i, k]
            for j in range(4):
                inner: float = fma(row[1], M[1, j], row[0] * M[0, j])  # type: ignore[call-arg]
                P[s, i, j] = fma(row[3], M[3, j], fma(row[2], M[2, j], inner))
    return P


@numba.njit(**_JIT)
def planar_mount_poses(pos: np.ndarray, sz: np.ndarray, cz: np.ndarray, qz: np.ndarray, qw: np.ndarray,
                       M: np.ndarray) -> np.ndarray:
    """(S, 4, 4) ``T_world_sensor`` of a body turning about z only, sampled at S times, on one mount ``M`` (4, 4):
    :func:`simready.world.motion_kernels.planar_poses`' quaternion and matrix (its operations in its order) then
    :func:`mount_poses`' product, in one pass without the (S, 4) quaternions and the body's (S, 4, 4) poses
    between them. ``pos`` (S, 3), the yaw half-angle's sine and cosine ``sz``/``cz`` (numpy's) and the interval's
    start quaternion ``qz``/``qw``: :func:`~simready.world.motion_kernels.planar_hermites`'."""
    s_n = pos.shape[0]
    out = np.empty((s_n, 4, 4))
    P = np.zeros((4, 4))
    P[3, 3] = 1.0
    for s in range(s_n):
        z = qw[s] * sz[s] + qz[s] * cz[s]
        w = qw[s] * cz[s] - qz[s] * sz[s]
        nq = np.sqrt(z * z + w * w)
        a0, a1, a2, a3 = 0.0 / nq, 0.0 / nq, z / nq, w / nq
        nrm = np.sqrt(((a0 * a0 + a1 * a1) + a2 * a2) + a3 * a3)
        x, y, z, w = a0 / nrm, a1 / nrm, a2 / nrm, a3 / nrm
        P[0, 0] = 1 - 2 * (y * y + z * z)
        P[0, 1] = 2 * (x * y - z * w)
        P[0, 2] = 2 * (x * z + y * w)
        P[1, 0] = 2 * (x * y + z * w)
        P[1, 1] = 1 - 2 * (x * x + z * z)
        P[1, 2] = 2 * (y * z - x * w)
        P[2, 0] = 2 * (x * z - y * w)
        P[2, 1] = 2 * (y * z + x * w)
        P[2, 2] = 1 - 2 * (x * x + y * y)
        P[0, 3] = pos[s, 0]
        P[1, 3] = pos[s, 1]
        P[2, 3] = pos[s, 2]
        for i in range(4):
            for j in range(4):
                inner: float = fma(P[i, 1], M[1, j], P[i, 0] * M[0, j])  # type: ignore[call-arg]
                out[s, i, j] = fma(P[i, 3], M[3, j], fma(P[i, 2], M[2, j], inner))
    return out


#: Decimal digits of two-digit numbers, "00" to "99": :func:`ascii_rows` writes a value's digits two at a time.
_DIGIT_PAIRS = np.frombuffer("".join(f"{k:02d}" for k in range(100)).encode("ascii"), np.uint8).copy()
#: 10**k as uint64, k = 0..19: a magnitude's digit count.
_POW10_U64 = np.array([10 ** k for k in range(20)], np.uint64)


@numba.njit(**_JIT)
def fixed_point_parts(values: np.ndarray, scale: float, magnitude: np.ndarray, negative: np.ndarray,
                      unsure: np.ndarray) -> int:
    """``%.Nf`` of a numeric column as integers, in one pass: into ``magnitude`` (int64) the digits without the
    point (``|v|·10^N`` rounded, ``scale`` = 10^N), into ``negative`` the sign bit (``%f`` prints ``-0.0000`` for
    -0.0 and for negatives that round to zero); into ``unsure`` the indices whose rounding float64 cannot decide
    (the fraction within an ulp of one half: the caller takes their digits from Python's formatting), their count
    returned; -1 when the column holds a value this cannot format exactly (not finite, 2**50 units of the last
    decimal or more), where the caller formats every point in Python.

    Bits: :func:`simready.sensors_hw.lidar.ply.fixed_point_parts_numpy`'s operations in its order and
    precision (the value widened to float64, then ``|x|·scale``, its floor, the fraction compared with 0.5), the
    ulp ``np.spacing`` of a non-negative finite value as the step to the next double up."""
    n = values.shape[0]
    count = 0
    for i in range(n):
        x = np.float64(values[i])
        if not math.isfinite(x):
            return -1
        scaled = abs(x) * scale
        if scaled >= 1125899906842624.0:  # 2**50
            return -1
        whole = np.floor(scaled)
        frac = scaled - whole
        q = np.int64(whole)
        if frac > 0.5:
            q += 1
        magnitude[i] = q
        negative[i] = math.copysign(1.0, x) < 0.0
        off = abs(frac - 0.5)
        # The ulp of a double is at most 2**-52 of it: the exact test only where that bound cannot rule it out.
        if off <= scaled * 2.3e-16 and off <= np.nextafter(scaled, np.inf) - scaled:
            unsure[count] = i
            count += 1
    return count


@numba.njit(**_JIT)
def ascii_row_bytes(magnitude: np.ndarray, decimals: np.ndarray) -> int:
    """An upper bound of the bytes of any one line :func:`ascii_rows` writes for these columns: per column a
    sign, the digits of its largest magnitude (at least N + 1), a point, a separator."""
    columns, m = magnitude.shape
    total = 0
    for c in range(columns):
        largest = np.uint64(0)
        for i in range(m):
            v = np.uint64(magnitude[c, i])
            if v > largest:
                largest = v
        d = decimals[c]
        k = 1
        while k < 20 and largest >= _POW10_U64[k]:
            k += 1
        if k < d + 1:
            k = d + 1
        total += 1 + k + (1 if d > 0 else 0) + 1
    return total


@numba.njit(**_JIT)
def ascii_rows(magnitude: np.ndarray, negative: np.ndarray, decimals: np.ndarray, out: np.ndarray, start: int) -> int:
    """The ASCII PLY body of C columns × M points, one line per point, written into ``out`` from ``start``
    (at least M · :func:`ascii_row_bytes` bytes after it); returns where it ends: the row-major bytes
    :func:`simready.sensors_hw.lidar.ascii_body` returns.

    ``magnitude`` (C, M) int64 ≥ 0: a value's digits without its point (``%.Nf``'s rounding already done,
    ``|v|·10^N``); ``negative`` (C, M) bool: a leading ``-``; ``decimals`` (C,): N digits after the point,
    -1 for an integer column (``%d``). At least N + 1 digits (``0.0012``), one space between values, a
    newline after the last. Each value's digits are written once, in place from its end, two at a time.
    """
    columns, m = magnitude.shape
    pos = start
    hundred = np.uint64(100)
    ten = np.uint64(10)
    for i in range(m):
        for c in range(columns):
            if negative[c, i]:
                out[pos] = 45  # '-'
                pos += 1
            d = decimals[c]
            v = np.uint64(magnitude[c, i])
            k = d + 1 if d > 0 else 1  # the digits: at least N + 1, more while v reaches 10**k
            while k < 20 and v >= _POW10_U64[k]:
                k += 1
            end = pos + k + (1 if d > 0 else 0)
            w = end
            left = k
            f = d if d > 0 else -1  # digits still to write before the point (none: below zero all along)
            while left > 0:
                if f == 0:
                    w -= 1
                    out[w] = 46  # '.'
                if left >= 2 and f != 1:  # two digits on the same side of the point
                    q = v // hundred
                    r = np.intp(v - q * hundred)
                    w -= 2
                    out[w] = _DIGIT_PAIRS[2 * r]
                    out[w + 1] = _DIGIT_PAIRS[2 * r + 1]
                    left -= 2
                    f -= 2
                else:
                    q = v // ten
                    w -= 1
                    out[w] = np.uint8(48 + (v - q * ten))
                    left -= 1
                    f -= 1
                v = q
            pos = end
            out[pos] = 32 if c < columns - 1 else 10  # ' ', or '\n' after the last column
            pos += 1
    return pos


#: Exact powers of ten (float64 holds 10**k exactly up to 10**22): the divisors of :func:`ascii_table`.
_POW10 = np.array([10.0 ** k for k in range(16)])


@numba.njit(**_JIT)
def ascii_table(body: np.ndarray, count: int, columns: int) -> tuple[np.ndarray, bool]:
    """An ASCII PLY body (bytes as uint8) of ``count`` lines of ``columns`` values as a (count, columns) float64
    table, and whether every value was read: each value ``-?digits[.digits]`` (at most 15 digits), one space
    between, a newline after the last, nothing after the last line; False for anything else (the caller's
    general parser decides). A value is its digits as an integer m (< 10**15, exact) divided by 10**decimals
    (exact): one correctly rounded division, so the double nearest the printed number, as any correct parser's.
    """
    out = np.empty((count, columns), np.float64)
    n = body.shape[0]
    pos = 0
    for i in range(count):
        for c in range(columns):
            negative = pos < n and body[pos] == 45  # '-'
            if negative:
                pos += 1
            m = 0
            digits = 0
            decimals = 0
            point = False
            while pos < n:
                b = body[pos]
                if 48 <= b <= 57:
                    m = m * 10 + (b - 48)
                    digits += 1
                    if point:
                        decimals += 1
                elif b == 46 and not point:  # '.'
                    point = True
                else:
                    break
                pos += 1
            if digits == 0 or digits > 15 or (point and decimals == 0):
                return out, False
            if pos >= n or body[pos] != (32 if c < columns - 1 else 10):
                return out, False
            pos += 1
            v = m / _POW10[decimals]
            out[i, c] = -v if negative else v
    return out, pos == n


# --- the sweep's draws: numpy's PCG64 and float32 ziggurat, compiled ---------------------------------------

#: PCG64's 128-bit multiplier (PCG_DEFAULT_MULTIPLIER_128), high and low halves.
_PCG_MUL_HI = np.uint64(0x2360ED051FC65DA4)
_PCG_MUL_LO = np.uint64(0x4385DF649FCCF645)


@intrinsic
def _mul_hi(typingctx, a, b):  # type: ignore[no-untyped-def]
    """The high 64 bits of the 128-bit product of two uint64 (one widening multiply)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        wide = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(p, ir.Constant(wide, 64)), ir.IntType(64))

    return types.uint64(types.uint64, types.uint64), codegen


@numba.njit(**_JIT)
def _pcg_step(hi: np.uint64, lo: np.uint64, inc_hi: np.uint64,
              inc_lo: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64]:
    """One PCG64 (XSL-RR 128/64) step: the state ``state·MUL + inc`` mod 2**128, then its 64-bit output."""
    nlo = lo * _PCG_MUL_LO
    nhi = _mul_hi(lo, _PCG_MUL_LO) + lo * _PCG_MUL_HI + hi * _PCG_MUL_LO  # type: ignore[call-arg]
    lo2 = nlo + inc_lo
    hi2 = nhi + inc_hi + (np.uint64(1) if lo2 < nlo else np.uint64(0))
    x = hi2 ^ lo2
    rot = hi2 >> np.uint64(58)
    return hi2, lo2, (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@numba.njit(**_JIT)
def _next32(hi: np.uint64, lo: np.uint64, inc_hi: np.uint64, inc_lo: np.uint64, has: bool,
            buf: np.uint64) -> tuple[np.uint64, np.uint64, bool, np.uint64, np.uint32]:
    """numpy's ``pcg64_next32``: the buffered high half when there is one, else a step's low half (the high one
    kept). Returns (hi, lo, has, buf, value)."""
    if has:
        return hi, lo, False, buf, np.uint32(buf)
    hi, lo, v = _pcg_step(hi, lo, inc_hi, inc_lo)
    return hi, lo, True, v >> np.uint64(32), np.uint32(v & np.uint64(0xFFFFFFFF))


@numba.njit(**_JIT)
def pcg64_draws(state: np.ndarray, noise: np.ndarray, draw: np.ndarray) -> None:
    """``Generator.standard_normal(dtype=float32, out=noise)`` then ``Generator.random(dtype=float32, out=draw)``
    of a PCG64 generator whose state is ``state`` (uint64: state high, low, increment high, low, has_uint32,
    uinteger), updated in place to the generator's state after them.

    numpy's C code step for step: ``next_uint32`` buffers the high half of each 64-bit output; a normal is
    ``random_standard_normal_f`` (23-bit ziggurat, its tail by ``logf(1 − u)``, its wedges against the
    double ``exp(−x²/2)``); a uniform is ``(next_uint32 >> 8) · 2**−24``. About 3x numpy's calls through
    the bit generator's function pointers."""
    hi, lo, inc_hi, inc_lo, has, buf = state[0], state[1], state[2], state[3], state[4] != 0, state[5]
    scale = np.float32(1.0 / 16777216.0)
    one = np.float32(1.0)
    i = 0
    n = noise.shape[0]
    while i < n:
        hi, lo, has, buf, r = _next32(hi, lo, inc_hi, inc_lo, has, buf)
        idx = r & np.uint32(0xFF)
        rabs = (r >> np.uint32(9)) & np.uint32(0x7FFFFF)
        x = np.float32(rabs) * wi_float[idx]
        if (r >> np.uint32(8)) & np.uint32(1):
            x = -x
        if rabs < ki_float[idx]:
            noise[i] = x
            i += 1
        elif idx == 0:  # the tail beyond r
            while True:
                hi, lo, has, buf, u1 = _next32(hi, lo, inc_hi, inc_lo, has, buf)
                hi, lo, has, buf, u2 = _next32(hi, lo, inc_hi, inc_lo, has, buf)
                xx = -ziggurat_nor_inv_r_f * np.float32(math.log(one - np.float32(u1 >> np.uint32(8)) * scale))
                yy = -np.float32(math.log(one - np.float32(u2 >> np.uint32(8)) * scale))
                if yy + yy > xx * xx:
                    tail = ziggurat_nor_r_f + xx
                    noise[i] = -tail if (rabs >> np.uint32(8)) & np.uint32(1) else tail
                    i += 1
                    break
        else:  # a wedge: accepted under the density, else a new draw
            hi, lo, has, buf, u1 = _next32(hi, lo, inc_hi, inc_lo, has, buf)
            u = np.float32(u1 >> np.uint32(8)) * scale
            if (fi_float[idx - 1] - fi_float[idx]) * u + fi_float[idx] < math.exp(-0.5 * np.float64(x) * np.float64(x)):
                noise[i] = x
                i += 1
    for j in range(draw.shape[0]):
        hi, lo, has, buf, r = _next32(hi, lo, inc_hi, inc_lo, has, buf)
        draw[j] = np.float32(r >> np.uint32(8)) * scale
    state[0], state[1], state[4], state[5] = hi, lo, np.uint64(1 if has else 0), buf
