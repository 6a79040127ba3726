"""Vehicle bodies of ``dynamic-v1``: mass properties (:class:`Chassis`) and the ego's single-track tyre model.

Every vehicle actor is one dynamic rigid body with its certified mass,
centre of mass and inertia tensor (principal axes: :func:`principal_axes`),
contact friction 0 because the tyres are modelled explicitly, driven by
forces and never by setting its pose, so a contact exchanges momentum.

The ego's tyres are a single-track (bicycle) model (:func:`tyre_forces`):
at every 5 ms substep, the longitudinal force of the actuated command and
the front/rear lateral tyre forces (linear in slip angle, cornering
stiffness ∝ axle load, saturated by the friction circle μ·F_z). The other
vehicles are driven by :mod:`~simready.sim.backends.dynamic.drive`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet as p

from simready.sim.core import constants as C
from simready.world.frames import quat_from_matrix

if TYPE_CHECKING:
    from simready.catalog.contract import CatalogEntry

S = C.DYNAMIC_SETTINGS
#: The tyre model's floor on the speed that divides the lateral velocity in a slip angle (m/s).
_SLIP_MIN_MPS = S.slip_min_speed_mps


def principal_axes(inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments and the rotation ``[x, y, z, w]`` from body to principal axes, kept next to the body axes.

    A diagonal tensor keeps its order and the identity rotation; otherwise
    each eigenvector is assigned to the body axis it is most aligned with, so
    the inertial frame differs from the body frame by the product-of-inertia tilt.
    """
    off = inertia - np.diag(np.diag(inertia))
    if np.abs(off).max() <= 1e-9 * max(float(np.abs(inertia).max()), 1.0):
        return np.diag(inertia).copy(), np.array([0.0, 0.0, 0.0, 1.0])
    moments, vecs = np.linalg.eigh(inertia)
    order = [int(np.argmax(np.abs(vecs[k, :]))) for k in range(3)]
    axes = vecs[:, order]
    moments = moments[order]
    for k in range(3):
        if axes[k, k] < 0:
            axes[:, k] = -axes[:, k]
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return moments, quat_from_matrix(axes)


def heading_xy(q: Any) -> tuple[float, float]:
    """Entries (0, 0) and (1, 0) of the rotation matrix of quaternion ``q`` = [x, y, z, w].

    The same operations in the same order as Bullet's ``btMatrix3x3::setRotation``
    (what ``p.getMatrixFromQuaternion`` returns), so the result is bit-identical
    without the ~1 µs call (tested).
    """
    x, y, z, w = q
    s = 2.0 / (x * x + y * y + z * z + w * w)
    ys, zs = y * s, z * s
    return 1.0 - (y * ys + z * zs), x * ys + w * zs


@dataclass(frozen=True, eq=False)
class Chassis:
    """Mass properties of one vehicle body, from its certified catalog entry (SI units, body frame).

    ``com``: centre of mass (m) from the body origin; ``inertia``: the tensor about it (body frame, kg·m²);
    ``inertia_diag``: principal moments (kg·m²);
    ``inertial_quat``: body → principal axes ``[x, y, z, w]`` (identity for a diagonal tensor), and
    ``inertial_inv`` its inverse; ``wheelbase``,
    ``lf``, ``lr``: axle distances (m), the axles from the centre of mass (:func:`axles`: the asset's wheels
    when its entry records them).
    """

    mass: float
    com: np.ndarray
    inertia: tuple[tuple[float, float, float], ...]
    inertia_diag: np.ndarray
    inertial_quat: np.ndarray
    inertial_inv: tuple[float, ...]
    identity_inertial: bool
    wheelbase: float
    lf: float
    lr: float
    restitution: float

    @property
    def com_xyz(self) -> tuple[float, float, float]:
        """``com`` as three Python floats (computed once)."""
        hit: tuple[float, float, float] | None = self.__dict__.get("_com_xyz")
        if hit is None:
            x, y, z = self.com.tolist()
            hit = (x, y, z)
            object.__setattr__(self, "_com_xyz", hit)
        return hit

    @property
    def inertia_flat(self) -> tuple[float, ...]:
        """``inertia`` row by row as nine Python floats (computed once)."""
        hit: tuple[float, ...] | None = self.__dict__.get("_inertia_flat")
        if hit is None:
            hit = tuple(x for row in self.inertia for x in row)
            object.__setattr__(self, "_inertia_flat", hit)
        return hit

    @classmethod
    def of(cls, entry: CatalogEntry) -> Chassis:
        """The chassis of a catalog entry, computed once per entry object (an engine per branch asks again)."""
        hit = _CHASSIS.get(id(entry))
        if hit is None or hit[0] is not entry:
            if len(_CHASSIS) > 256:
                _CHASSIS.clear()
            hit = _CHASSIS[id(entry)] = (entry, cls._of(entry))
        return hit[1]

    @classmethod
    def _of(cls, entry: CatalogEntry) -> Chassis:
        com = np.asarray(entry.center_of_mass_m, dtype=np.float64)
        inertia = np.asarray(entry.inertia_kg_m2, dtype=np.float64)
        diag, quat = principal_axes(inertia)
        wheelbase, front_x = axles(entry)
        inv = tuple(p.invertTransform([0, 0, 0], quat.tolist())[1])
        return cls(float(entry.mass_kg), com, tuple((float(row[0]), float(row[1]), float(row[2])) for row in inertia), diag, quat, inv, bool(quat[3] == 1.0), wheelbase,
                   front_x - float(com[0]), float(com[0]) - (front_x - wheelbase), float(entry.restitution))


def axles(entry: CatalogEntry) -> tuple[float, float]:
    """(wheelbase, front axle x) of a vehicle entry, metres in its body frame: the wheels found on an imported asset
    (``entry.vehicle``, :mod:`simready.catalog.wheels`), else the procedural recipe's ``wheelbase`` (axles at
    ±wheelbase/2), else 0.6 × the body length about the origin (an asset without wheels)."""
    vehicle = getattr(entry, "vehicle", None)
    if vehicle is not None:
        return float(vehicle.wheelbase_m), float(vehicle.front_axle_x_m)
    params = entry.generator.params if entry.generator else {}
    wheelbase = float(params.get("wheelbase", 0.6 * entry.dimensions_m.length))
    return wheelbase, wheelbase / 2


_CHASSIS: dict[int, tuple[CatalogEntry, Chassis]] = {}


def _axle_loads(ch: Chassis) -> tuple[float, float, float, float, float, float, float]:
    """``(m, g, lf, lr, Fz_f, Fz_r, k)``: chassis ``ch``'s mass (kg), gravity (m/s²), axle distances from the centre of
    mass (m), static axle loads (N) and cornering stiffness per load (1/rad): what :func:`tyre_setup` and
    :func:`ego_constants` both start from."""
    m, g = ch.mass, C.GRAVITY_MPS2
    lf, lr = ch.lf, ch.lr
    return m, g, lf, lr, m * g * lr / (lf + lr), m * g * lf / (lf + lr), S.cornering_stiffness_per_load


def tyre_setup(ch: Chassis, steer: float, friction: float, h_s: float) -> tuple[float, ...]:
    """The per-tick constants of :func:`tyre_forces` for chassis ``ch``, each the expression it would evaluate per substep.

    ``(m, lf, lr, k·Fz_f, k·Fz_r, μ·Fz_f, μ·Fz_r, cos δ, sin δ, μ·m·g, h)``: mass (kg),
    axle distances from the centre of mass (m), the axles' cornering
    stiffness (N/rad) and friction limits (N), the steering angle's
    cosine and sine, the holding-force limit (N) and the substep ``h_s`` (s).
    """
    m, g, lf, lr, fz_f, fz_r, k = _axle_loads(ch)
    return (m, lf, lr, k * fz_f, k * fz_r, friction * fz_f, friction * fz_r, math.cos(steer), math.sin(steer),
            friction * m * g, h_s)


def ego_constants(ch: Chassis, dt: float, h_s: float) -> np.ndarray:
    """The per-rollout constants of the ego's steering and tyre model in one compiled call
    (:func:`~.kernels.ego_steer_setup`, slots ``kernels.E_*``): the steering's preview floor and gain, rear axle
    offset, wheelbase, angle limit and largest change in a tick of ``dt`` (s), and :func:`tyre_setup`'s mass, axle
    distances, cornering stiffnesses, axle loads, g and substep ``h_s``, by its expressions."""
    m, g, lf, lr, fz_f, fz_r, k = _axle_loads(ch)
    return np.array([S.preview_min_m, S.preview_gain_s, ch.lr, ch.wheelbase, S.max_steer_rad,
                     S.max_steer_rate_rps * dt, m, lf, lr, k * fz_f, k * fz_r, fz_f, fz_r, g, h_s], dtype=np.float64)


def tyre_forces(client: int, body: int, steer: float, a_cmd: float, setup: tuple[float, ...]) -> float:
    """Apply this substep's tyre forces to ``body``; returns the tyre utilisation (``setup``: :func:`tyre_setup`).

    Runs every 5 ms substep, so it is scalar Python with two PyBullet reads
    and two force calls; the heading is PyBullet's own quaternion-to-matrix
    arithmetic (:func:`heading_xy`), without the call.
    """
    m, lf, lr, kf, kr, limit_f, limit_r, cs, sn, hold, h = setup
    # PyBullet's arguments by position (no keyword parsing: this runs every substep).
    com_w, q_in = p.getBasePositionAndOrientation(body, client)
    lin, ang = p.getBaseVelocity(body, client)
    # Body axes in world (inertial frame == body frame for principal-aligned assets; otherwise close enough
    # for the planar tyre model, which only needs the heading): x = (hx, hy), y = (-hy, hx).
    r0, r3 = heading_xy(q_in)
    norm = math.hypot(r0, r3) or 1.0
    hx, hy = r0 / norm, r3 / norm
    lx, ly = lin[0], lin[1]
    vx = lx * hx + ly * hy
    vy = lx * -hy + ly * hx
    r = ang[2]
    big_v = max(abs(vx), _SLIP_MIN_MPS)
    fy_f = kf * (steer - math.atan2(vy + lf * r, big_v))
    fy_r = kr * -math.atan2(vy - lr * r, big_v)
    if vx <= C.STANDSTILL_MPS and a_cmd <= 0.0:
        # At rest, or pushed backwards, with no drive demand: the brakes (or rolling resistance) hold it.
        fx = max(min(-m * vx / h, hold), -hold)
    else:
        fx = m * a_cmd
    fx_f = fx_r = 0.5 * fx
    total = math.hypot(fx_f, fy_f)
    util = max(0.0, total / limit_f if limit_f > 0 else 0.0)
    if total > limit_f > 0:
        sc = limit_f / total
        fx_f, fy_f = fx_f * sc, fy_f * sc
    total = math.hypot(fx_r, fy_r)
    util = max(util, total / limit_r if limit_r > 0 else 0.0)
    if total > limit_r > 0:
        sc = limit_r / total
        fx_r, fy_r = fx_r * sc, fy_r * sc
    # Front wheel frame: longitudinal rotated by the steering angle.
    fwx, fwy = hx * cs + -hy * sn, hy * cs + hx * sn
    cx, cy, cz = com_w
    p.applyExternalForce(body, -1, [fwx * fx_f + -fwy * fy_f, fwy * fx_f + fwx * fy_f, 0.0],
                         [cx + hx * lf, cy + hy * lf, cz], p.WORLD_FRAME, client)
    p.applyExternalForce(body, -1, [hx * fx_r + -hy * fy_r, hy * fx_r + hx * fy_r, 0.0],
                         [cx - hx * lr, cy - hy * lr, cz], p.WORLD_FRAME, client)
    return util
