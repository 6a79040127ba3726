"""Poses and twists of bodies that follow their reference paths (kinematic-v1, and dynamic-v1's agents).

Given each actor's ``(u, d)`` on its path, its speed ``v`` and acceleration,
and the lateral offset's rate and acceleration, the body's centre is at the
offset path point and it moves along the path tangent (plus ḋ across it).
Its heading is that of a kinematic bicycle whose axles straddle the centre:
the direction of the chord from ``u − L/2`` to ``u + L/2`` (L the class's
chord length, the wheelbase for a car), precomputed at the path vertices
and interpolated linearly along each segment (so the yaw rate is
``v·dψ/du``, piecewise constant), plus the heading change a lateral
manoeuvre needs, ``atan2(ḋ, max(v, 1))``. In a curve the chord cuts inside
the tangent: the difference between the velocity direction and the heading
is the body slip angle, reported as ``slip_rad``.

Height: z follows the ground raster and vz is 0 — except for a pedestrian
on its walk route. Stepping off a kerb there would otherwise change z by
the kerb height (0.15 m) within one tick at vz = 0, so positions and
recorded velocities would disagree (SPEC §8). Instead a walker's height is
a function of its arc length along the route: the raster sampled along the
route's centreline (:func:`walk_profile`), every change of height spread
over a smoothstep ramp :data:`~simready.sim.core.constants.PED_STEP_RAMP_M` long
centred on it, and vz = v·dz/du is that height's time derivative
(:func:`simready.sim.core.kernels.walk_heights`). Away from a change z is the
raster's height. Vehicles and cyclists keep the raster height and vz = 0.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simready.sim.core import constants as C
from simready.sim.core import kernels as K
from simready.sim.core import numpy_loops, tick_kernels
from simready.sim.core.reference_paths import PathTable
from simready.sim.core.scene import GROUND_RASTER_M, Scene
from simready.sim.core.state import Bodies, frozen, ro

F = NDArray[np.float64]


#: Rotates a unit direction (dx, dy) to its left normal (−dy, dx) after a column swap.
_LEFT = np.array([-1.0, 1.0])


def path_bodies(scene: Scene, table: PathTable, u: F, d: F, d_rate: F, d_acc: F, v: F, a: F,
                present: NDArray[np.bool_]) -> tuple[Bodies, F, F]:
    """Bodies on their paths, their headings and body slip angles (all (N,) / (N, k)).

    The per-actor arithmetic runs in the compiled kernels of
    :mod:`simready.sim.core.kernels` (the same IEEE operations, in the same order,
    as the vectorized form :func:`path_bodies_np`, so the same bits); the two
    arctangents run as numpy calls on whole arrays. A non-finite input (a
    diverging rollout, which stops on this tick) takes the vectorized form.
    The (N,) inputs are float64 arrays (the kernels are compiled for them).
    """
    n = len(u)
    if n == 0:
        return path_bodies_np(scene, table, u, d, d_rate, d_acc, v, a, present)
    cum, base, last, pts, dirs, psi, dpsi = table.kernel_arrays
    g = scene.ground
    placed = np.empty((8, n))
    flags = K.place_on_paths(cum, base, last, pts, dirs, psi, dpsi, g.heights, g.x0, g.y0, 1.0 / GROUND_RASTER_M,
                             u, d, d_rate, v, placed)
    if not flags & K.FINITE:
        return path_bodies_np(scene, table, u, d, d_rate, d_acc, v, a, present)
    lateral, yaw, heading_v = _headings(placed, d_rate, flags)
    big = np.empty(13 * n)
    slip = np.empty(n)
    K.pack_bodies(placed, yaw, heading_v, d_rate, d_acc, v, a, lateral, big, slip)
    walk = walk_profile(scene, table)
    if walk is not None:
        K.walk_heights(*walk, 1.0 / C.PED_STEP_RAMP_M, u, v, np.ones(n, dtype=np.bool_), big)
    tilt_on_ground(scene, big, n, yaw, present)
    return _bodies_from(big, n, present), yaw, slip


def _headings(placed: F, d_rate: F, flags: int) -> tuple[bool, F, F]:
    """Between the placement and packing kernels: whether any actor moves laterally, the body headings and the
    velocity directions (rad), as numpy arctangents (numba's ``atan2`` bits differ from numpy's)."""
    lateral = bool(flags & K.LATERAL)
    # arctan2(±0, V) is that same ±0 for a finite V ≥ 1: without lateral motion the sum needs no arctangent.
    yaw = placed[K.YAW_C] + (np.arctan2(d_rate, placed[K.BIG_V]) if lateral else d_rate)
    return lateral, yaw, np.arctan2(placed[K.VY], placed[K.VX])


class PathStep(NamedTuple):
    """One tick along the paths (:func:`step_on_paths`).

    ``bodies``: the new poses and twists (absent actors at their previous
    pose, at rest); ``yaw``, ``slip``: (N,) headings and body slip angles,
    rad; ``u``, ``v``: (N,) new arc lengths (m) and speeds (m/s);
    ``accel``: (N,) the accelerations applied (m/s², 0 for absent actors);
    ``contacts``: footprint overlaps (i < j) of the new bodies; ``ok``: the
    engine's divergence predicate of these bodies, computed with them
    (:data:`simready.sim.core.kernels.OK_STATE` / ``OK_BOUNDS`` bits; 0:
    not computed, or failed), and ``OK_STAYS``: no present actor on a path
    leaving the map is past its end (the engine's despawn test).
    """

    bodies: Bodies
    yaw: F
    slip: F
    u: F
    v: F
    accel: F
    contacts: frozenset[tuple[int, int]]
    ok: int = 0


def step_on_paths(scene: Scene, table: PathTable, prev: Bodies, prev_yaw: F, u: F, v: F, accel: F, d: F, d_rate: F,
                  d_acc: F) -> PathStep:
    """Advance every present actor one tick along its path at its commanded acceleration and place the bodies.

    ``prev``, ``prev_yaw``: the bodies and headings before the tick;
    ``u``, ``v``: (N,) arc lengths (m) and speeds (m/s) before it;
    ``accel``: (N,) commanded accelerations (m/s²); ``d``, ``d_rate``,
    ``d_acc``: (N,) lateral offsets for the new tick (m, m/s, m/s²).
    Absent actors (``prev.present`` False) stay where they were, at rest.

    Why fused: integration, placement, the new lanes (kept by the table for
    the tick's readers), the absent actors and the contacts are one compiled
    call (:func:`simready.sim.core.tick_kernels.step_paths`, which calls
    numpy's own float64 ``arctan2`` loop), instead of a dozen array operations
    a tick; where that loop is not found, two compiled calls
    (:func:`simready.sim.core.kernels.advance_place_lanes`,
    :func:`simready.sim.core.kernels.pack_step_walk_ok`) around numpy's
    ``arctan2``. The values are those of integrating, masking with
    ``np.where``, :func:`path_bodies` and :func:`footprint_contacts`
    (:func:`_step_reference`, which a non-finite state takes).
    """
    n = len(u)
    present = prev.present
    (cum, base, last, pts, dirs, psi, dpsi, heights, g_x0, g_y0, g_inv, reach2, hl, hw, w_rows, w_first, w_z_start,
     w_step_u, w_step_dh, inv_ramp, sloped, seg_lane, lane_u0, limits) = _step_args(scene, table)
    u1, v1, a1 = np.empty(n), np.empty(n), np.empty(n)
    lane, s = np.empty(n, dtype=np.int64), np.empty(n)
    accel = accel if type(accel) is np.ndarray and accel.dtype is _F8 else _f64(accel)
    # The arctangent loop reads its rows with fixed 8-byte steps: a contiguous float64 d_rate.
    d_rate = d_rate if type(d_rate) is np.ndarray and d_rate.dtype is _F8 and d_rate.flags.c_contiguous \
        else _f64(d_rate)
    big, slip = np.empty(13 * n), np.empty(n)
    pairs = np.empty((n * (n - 1) // 2, 2), dtype=np.int64)
    fp = numpy_loops.numpy_loop(np.arctan2)  # 0: none usable, then numpy's arctan2 is called from here
    if fp:
        yaw = np.empty(n)
        flags, m, ok = tick_kernels.step_paths(u, v, accel, present, scene.dt, cum, base, last, pts, dirs, psi, dpsi,
                                               heights, g_x0, g_y0, g_inv, d, d_rate, d_acc, seg_lane, lane_u0,
                                               prev.pos, prev.quat, prev_yaw, reach2, hl, hw, w_rows, w_first,
                                               w_z_start, w_step_u, w_step_dh, inv_ramp, *limits, table.leaves,
                                               table.lengths, fp, u1, v1, a1, lane, s, yaw, big, slip, pairs)
    else:
        placed = np.empty((8, n))
        flags = K.advance_place_lanes(u, v, accel, present, scene.dt, cum, base, last, pts, dirs, psi, dpsi, heights,
                                      g_x0, g_y0, g_inv, d, d_rate, seg_lane, lane_u0, u1, v1, a1, placed, lane, s)
    # The new arc lengths are final (read-only from here): their lanes are what every reader of the next tick asks.
    u1.setflags(write=False)
    table.remember_lanes(u1, lane, s)
    if n == 0 or not flags & K.FINITE:
        return _step_reference(scene, table, prev, prev_yaw, u1, v1, a1, d, d_rate, d_acc)
    if not fp:
        lateral, yaw, heading_v = _headings(placed, d_rate, flags)
        m, ok = K.pack_step_walk_ok(placed, yaw, heading_v, d_rate, d_acc, v1, a1, lateral, present, prev.pos,
                                    prev.quat, prev_yaw, reach2, hl, hw, w_rows, w_first, w_z_start, w_step_u,
                                    w_step_dh, inv_ramp, u1, big, slip, pairs, *limits, table.leaves, table.lengths)
    if sloped:
        tilt_on_ground(scene, big, n, yaw, present)
        ok = 0  # the tilt changed the bodies after the check
    return PathStep(_bodies_from(big, n, present), yaw, slip, u1, v1, a1,
                    frozenset(zip(pairs[:m, 0].tolist(), pairs[:m, 1].tolist())) if m else _NO_CONTACTS, ok)


_F8 = np.dtype(np.float64)
_B1 = np.dtype(np.bool_)
_STEP_ARGS: dict[int, tuple[PathTable, Any, Any, Any, tuple[Any, ...]]] = {}


def _step_args(scene: Scene, table: PathTable) -> tuple[Any, ...]:
    """The arguments of :func:`step_on_paths`' kernels that depend only on the path table, the ground, the actors
    and the map's bounds (paths, raster, footprints, walk profiles, the divergence limits), gathered once per table:
    one lookup a tick instead of a dozen. Kept against the ground, actor table and bounds it was built for (not the
    scene, which it does not hold)."""
    hit = _STEP_ARGS.get(id(table))
    g, a, bounds = scene.ground, scene.actors, scene.bounds
    if hit is not None and hit[0] is table and hit[1] is g and hit[2] is a and hit[3] is bounds:
        return hit[4]
    if len(_STEP_ARGS) > 64:
        _STEP_ARGS.clear()
    walk = walk_profile(scene, table) or _NO_WALK
    args = (*table.kernel_arrays, g.heights, g.x0, g.y0, 1.0 / GROUND_RASTER_M, *_reach(a), walk.rows, walk.first,
            walk.z_start, walk.step_u, walk.step_dh, 1.0 / C.PED_STEP_RAMP_M, bool(g.sloped), table.seg_lane,
            table.lane_u0, divergence_limits(bounds))
    _STEP_ARGS[id(table)] = (table, g, a, bounds, args)
    return args


def divergence_limits(bounds: tuple[float, float, float, float]) -> tuple[float, float, float, float, float, float]:
    """The limits of the engine's divergence predicate (:func:`simready.sim.core.kernels.state_ok`) on a map with
    these bounds: the explosion speed (m/s), the box x and y (the bounds widened by the out-of-bounds margin, m)
    and the margin as the largest |z| (m)."""
    xmin, ymin, xmax, ymax = bounds
    mgn = C.OUT_OF_BOUNDS_MARGIN_M
    return C.EXPLOSION_SPEED_MPS, xmin - mgn, xmax + mgn, ymin - mgn, ymax + mgn, mgn


def tilt_on_ground(scene: Scene, big: F, n: int, yaw: F, present: NDArray[np.bool_]) -> None:
    """On a sloped ground (:attr:`~simready.sim.core.scene.GroundModel.sloped`), pitch and roll each vehicle with it.

    The ground heights ``h`` under the body's front and back (± its
    half-length along ``yaw``) and left and right (± its half-width) give
    slopes ``sa`` along and ``sc`` across; the body's orientation becomes
    ``Rz(yaw)·Ry(pitch)·Rx(roll)`` with pitch = −atan(sa) (nose up on a rise)
    and roll = atan(sc / √(1 + sa²)) (as the street's tiles:
    :func:`simready.world.street.heights.tilts`), and its vertical velocity the
    climb rate, horizontal speed × sa. Its z stays the ground under its
    centre. Pedestrians, cyclists and absent actors stay as placed. Writes ``big`` in place
    (pos, quat, vel, omega, 13·N).
    """
    g = scene.ground
    a = scene.actors
    if not g.sloped:
        return
    rows = np.flatnonzero(a.is_vehicle & np.asarray(present, dtype=bool))
    if not g.sloped or n == 0 or len(rows) == 0:
        return
    pos = big[: 3 * n].reshape(n, 3)[rows]
    quat = big[3 * n : 7 * n].reshape(n, 4)
    vel = big[7 * n : 10 * n].reshape(n, 3)
    psi = yaw[rows]
    c, s = np.cos(psi), np.sin(psi)
    hl, hw = a.hl[rows], a.hw[rows]
    fwd = np.column_stack([c, s])
    left = np.column_stack([-s, c])
    xy = pos[:, :2]
    h = g.at(np.vstack([xy + fwd * hl[:, None], xy - fwd * hl[:, None], xy + left * hw[:, None], xy - left * hw[:, None]]))
    h = h.reshape(4, -1)
    sa = (h[0] - h[1]) / (2.0 * hl)
    sc = (h[2] - h[3]) / (2.0 * hw)
    pitch, roll = -np.arctan(sa), np.arctan(sc / np.sqrt(1.0 + sa * sa))
    sz, cz = np.sin(0.5 * psi), np.cos(0.5 * psi)
    sp, cp = np.sin(0.5 * pitch), np.cos(0.5 * pitch)
    sr, cr = np.sin(0.5 * roll), np.cos(0.5 * roll)
    ax, ay, az, aw = -sz * sp, cz * sp, sz * cp, cz * cp  # Rz(yaw)·Ry(pitch)
    quat[rows] = np.column_stack([aw * sr + ax * cr, ay * cr + az * sr, az * cr - ay * sr, aw * cr - ax * sr])
    vel[rows, 2] = np.hypot(vel[rows, 0], vel[rows, 1]) * sa


def _bodies_from(big: F, n: int, present: NDArray[np.bool_]) -> Bodies:
    """Read-only :class:`Bodies` over the packed 13·N array (pos, quat, vel, omega)."""
    big.setflags(write=False)
    n3, n7, n10 = 3 * n, 7 * n, 10 * n
    # Bodies has no __post_init__: setting its fields directly is what its (frozen) __init__ does, cheaper.
    bodies = object.__new__(Bodies)
    bodies.__dict__.update(pos=big[:n3].reshape(n, 3), quat=big[n3:n7].reshape(n, 4), vel=big[n7:n10].reshape(n, 3),
                           omega=big[n10:].reshape(n, 3),
                           present=present if type(present) is np.ndarray and present.dtype is _B1 and not
                           present.flags.writeable else frozen(present, bool))
    return bodies


def _step_reference(scene: Scene, table: PathTable, prev: Bodies, prev_yaw: F, u1: F, v1: F, a1: F, d: F, d_rate: F,
                    d_acc: F) -> PathStep:
    """:func:`step_on_paths` after the integration, as whole-array operations (a diverging state takes this)."""
    present = prev.present
    bodies, yaw, slip = path_bodies_np(scene, table, u1, d, d_rate, d_acc, v1, a1, present)
    keep = ~present
    if keep.any():
        pos, quat, vel, omega = (np.array(x) for x in (bodies.pos, bodies.quat, bodies.vel, bodies.omega))
        pos[keep], quat[keep] = prev.pos[keep], prev.quat[keep]
        vel[keep], omega[keep] = 0.0, 0.0
        yaw = np.where(keep, prev_yaw, yaw)
        bodies = Bodies(frozen(pos), frozen(quat), frozen(vel), frozen(omega), present)
    return PathStep(bodies, yaw, slip, u1, v1, a1, footprint_contacts(scene, bodies.pos, yaw, present))


def _f64(x: ArrayLike) -> F:
    """``x`` as a C-contiguous float64 array (no copy when it already is one)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.flags.c_contiguous:
        return x
    return np.ascontiguousarray(x, dtype=np.float64)


def path_bodies_np(scene: Scene, table: PathTable, u: F, d: F, d_rate: F, d_acc: F, v: F, a: F,
                   present: NDArray[np.bool_]) -> tuple[Bodies, F, F]:
    """The vectorized form of :func:`path_bodies` (the reference its scalar loop reproduces bit for bit)."""
    k = table.locate(u)
    tangent = table.dirs[k]
    along = u - table.cum[k]
    xy = table.pts[k] + tangent * along[:, None] + (tangent[:, ::-1] * _LEFT) * d[:, None]
    rate = table.dpsi[k]
    yaw_c = table.psi[k] + rate * along
    omega_c = v * rate
    big_v = np.maximum(v, 1.0)
    yaw = yaw_c + np.arctan2(d_rate, big_v)
    tx, ty = tangent[:, 0], tangent[:, 1]
    vx = tx * v - ty * d_rate
    vy = ty * v + tx * d_rate
    if d_rate.any():
        big_v_dot = np.where(v > 1.0, a, 0.0)
        omega = omega_c + (d_acc * big_v - d_rate * big_v_dot) / (big_v * big_v + d_rate * d_rate)
    else:
        omega = omega_c
    slip = wrap(np.arctan2(vy, vx) - yaw)
    moving = np.hypot(vx, vy) > 1e-9
    if not moving.all():
        slip = np.where(moving, slip, 0.0)
    n = len(u)
    pos = np.empty((n, 3))
    pos[:, :2] = xy
    pos[:, 2] = scene.ground.at(xy)
    half = 0.5 * yaw
    quat = np.zeros((n, 4))
    quat[:, 2] = np.sin(half)
    quat[:, 3] = np.cos(half)
    vel = np.zeros((n, 3))
    vel[:, 0] = vx
    vel[:, 1] = vy
    walk = walk_profile(scene, table)
    if walk is not None:
        _walk_heights_py(walk, u, v, pos, vel)
    omg = np.zeros((n, 3))
    omg[:, 2] = omega
    return Bodies(ro(pos), ro(quat), ro(vel), ro(omg), frozen(present, bool)), yaw, slip


class WalkProfile(NamedTuple):
    """The ground heights along the walkers' routes, for :func:`simready.sim.core.kernels.walk_heights`.

    ``rows``: (W,) actor indices of the walkers; ``first``: (W + 1,) walker
    r's changes are ``first[r]:first[r + 1]`` of ``step_u`` (arc length of
    the change on the route, m) and ``step_dh`` (height change, m);
    ``z_start``: (W,) the raster height at the route's start (m).
    """

    rows: NDArray[np.int64]
    first: NDArray[np.int64]
    z_start: F
    step_u: F
    step_dh: F


#: No walker meets a height change: the walk arrays :func:`simready.sim.core.kernels.pack_step_walk` then takes.
_NO_WALK = WalkProfile(np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0))

#: Spacing of the raster samples along a walk route (m): a quarter raster cell, so every cell the centreline
#: crosses for more than this is sampled.
WALK_SAMPLE_M = GROUND_RASTER_M / 4
_WALKS: dict[int, tuple[PathTable, Any, WalkProfile | None]] = {}


def walk_profile(scene: Scene, table: PathTable) -> WalkProfile | None:
    """The pedestrians' height changes along their walk routes (None: no walker meets one), cached per table.

    The raster is sampled every :data:`WALK_SAMPLE_M` along each route's
    centreline from u = 0 to its end; each change between neighbouring
    samples is one step at their midpoint. A pure function of the paths and
    the ground, so a rebuilt table gives the same profile.
    """
    hit = _WALKS.get(id(table))
    if hit is not None and hit[0] is table and hit[1] is scene.ground:
        return hit[2]
    if len(_WALKS) > 64:
        _WALKS.clear()
    rows: list[int] = []
    first, z_start, step_u, step_dh = [0], [], [], []
    for i, path in enumerate(table.paths):
        if not (scene.actors.is_ped[i] and path.key[0] == "walk"):
            continue
        us = np.linspace(0.0, path.length_m, int(math.ceil(path.length_m / WALK_SAMPLE_M)) + 1)
        k = np.minimum(np.searchsorted(path.cum_s, us, "right") - 1, len(path.seg_dir) - 1)
        h = scene.ground.at(path.points[k] + path.seg_dir[k] * (us - path.cum_s[k])[:, None])
        ch = np.flatnonzero(h[1:] != h[:-1])
        rows.append(i)
        z_start.append(float(h[0]))
        step_u.extend((0.5 * (us[ch] + us[ch + 1])).tolist())
        step_dh.extend((h[ch + 1] - h[ch]).tolist())
        first.append(len(step_u))
    prof = None
    if step_u:
        prof = WalkProfile(np.array(rows, dtype=np.int64), np.array(first, dtype=np.int64), np.array(z_start),
                           np.array(step_u), np.array(step_dh))
    _WALKS[id(table)] = (table, scene.ground, prof)
    return prof


def _walk_heights_py(walk: WalkProfile, u: F, v: F, pos: F, vel: F) -> None:
    """The reference of :func:`simready.sim.core.kernels.walk_heights` in Python floats (every walker; the same operations)."""
    inv = 1.0 / C.PED_STEP_RAMP_M
    first = walk.first.tolist()
    for r, i in enumerate(walk.rows.tolist()):
        z, dz = float(walk.z_start[r]), 0.0
        for k in range(first[r], first[r + 1]):
            uk, dh = float(walk.step_u[k]), float(walk.step_dh[k])
            x = (float(u[i]) - uk) * inv + 0.5
            if x >= 1.0:
                z = z + dh
            elif x > 0.0:
                z = z + dh * (x * x * (3.0 - 2.0 * x))
                dz = dz + dh * (6.0 * x * (1.0 - x)) * inv
        pos[i, 2] = z
        vel[i, 2] = float(v[i]) * dz


def wrap_scalar(angle: float) -> float:
    """:func:`wrap` for one float (Python's float ``%`` is numpy's: the result takes the divisor's sign)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def wrap(angle: F) -> F:
    return (angle + np.pi) % (2 * np.pi) - np.pi


def footprint_contacts(scene: Scene, xy: F, yaw: F, present: NDArray[np.bool_]) -> frozenset[tuple[int, int]]:
    """Pairs (i < j) of present actors whose footprints overlap (``xy``: (N, ≥ 2) positions, m; ``yaw``: (N,), rad).

    Bounding circles filter the pairs; the few that survive get the
    four-axis separating-axis test (:func:`simready.sim.core.kernels.contact_pairs`).
    """
    n = len(yaw)
    if n < 2:
        return frozenset()
    reach2, hl, hw = _reach(scene.actors)
    out = np.empty((n * (n - 1) // 2, 2), dtype=np.int64)
    xy = np.ascontiguousarray(xy, dtype=np.float64)
    m = K.contact_pairs(xy, _f64(yaw), np.ascontiguousarray(present, dtype=np.bool_), reach2, hl, hw, out)
    if m == 0:
        return _NO_CONTACTS
    return frozenset(zip(out[:m, 0].tolist(), out[:m, 1].tolist()))


_NO_CONTACTS: frozenset[tuple[int, int]] = frozenset()
_REACH: dict[int, tuple[Any, F, F, F]] = {}


def footprint_arrays(scene: Scene) -> tuple[F, F, F]:
    """The arrays :func:`footprint_contacts` tests the footprints with (squared bounding-circle reach of every actor
    pair, m²; half-lengths and half-widths, m), for a compiled caller of
    :func:`simready.sim.core.kernels.contact_pairs`."""
    return _reach(scene.actors)


def _reach(a: Any) -> tuple[F, F, F]:
    """Squared bounding-circle reach of every actor pair (m²), half-lengths and half-widths (m) (cached per actor table)."""
    hit = _REACH.get(id(a))
    if hit is None or hit[0] is not a:
        if len(_REACH) > 64:
            _REACH.clear()
        r = a.radius
        hit = _REACH[id(a)] = (a, np.ascontiguousarray((r[:, None] + r[None, :]) ** 2, dtype=np.float64),
                               _f64(a.hl), _f64(a.hw))
    return hit[1], hit[2], hit[3]
