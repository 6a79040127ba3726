"""Contact with consequences (SPEC §8): what the parties of a collision do afterwards.

Two documented models, shared by both backends:

* **Post-crash behaviour.** A vehicle whose body touched another actor (a
  vehicle, a pedestrian or a cyclist; a kerb or a pole does not count) gets
  the longitudinal goal ``stop`` owned by :data:`POST_CRASH`: its driver
  brakes fully (the actor's maximum deceleration, capped by μ·g) to a
  standstill and holds it, and any lateral manoeuvre is abandoned. It never
  hands the axis back, so the clip runs on to its horizon with the
  outcome measurable. The engine sets the goal (:func:`post_crash_goals`);
  in dynamic-v1 the ego's wheels also return to straight, and the agents'
  drive model brakes along the body's motion instead of steering back to
  the path (:mod:`simready.sim.backends.dynamic`).
* **A pedestrian or cyclist struck by a vehicle** (their footprints touch
  for the first time) has a perfectly inelastic impact with it: the
  vehicle's velocity changes by ``m_r / (m_v + m_r) · (v_r − v_v)``
  (:func:`impact_dv`). What the road user does next depends on the backend:

  - **dynamic-v1: a thrown body** (:func:`push_out`, :func:`thrown_twist`).
    At the tick of first contact the road user is moved out of the
    vehicle's footprint along the axis of least overlap (contact at the
    surfaces, not inside the box), becomes a rigid body with its certified
    mass, centre of mass, inertia and collision pieces, and takes the
    impulse: its velocity becomes the common velocity of the inelastic
    impact, applied at bumper height (:data:`BUMPER_HEIGHT_M`) below its
    centre of mass, so it also spins (legs swept forward, the upper body
    towards the vehicle) and, where that spin would drive its sole into
    the road, leaves the road at the speed that keeps the sole's corners
    from sinking (the swept legs lift off). From then on PyBullet moves
    it: it is thrown, falls, slides on the road with friction
    :data:`BODY_ROAD_FRICTION` (rolling resistance :data:`BODY_ROLLING_M`,
    its tumbling damped by :data:`BODY_ANGULAR_DAMPING`: limbs and soft
    tissue dissipate what a rigid body would keep) to rest, and can be
    struck again by any vehicle. Its contact with the
    striking vehicle lasts (one ``collision`` event) until the body is at
    rest. Limits: one rigid body, no articulation (limbs do not fold, the
    body does not wrap over the bonnet); the impact is inelastic in the
    horizontal plane and its point is the bumper height on the road user's
    centre line.
  - **kinematic-v1: carried.** Vehicles are path followers there and do
    not take the impulse; the road user keeps its pose in the vehicle's
    frame (pose and twist derive from the vehicle's, so it never passes
    through it) until the vehicle is at rest, and then lies still where it
    came to rest for the rest of the clip.

  A struck road user is recorded in
  :attr:`~simready.sim.core.state.ControlState.struck` as
  ``(actor, carrier, x, y, z, yaw)``: in kinematic-v1 the carrier's index
  (−1 once at rest) and the pose in the carrier's body frame (m, rad); in
  dynamic-v1 the striking vehicle's index while the body moves (−1 once
  at rest) and zeros (the body's pose is the actor's row).

The impact point of such a strike is the road user's position (its
footprint centre) at the tick of first contact.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from simready.sim.core import constants as C
from simready.sim.core.state import GapGoal, LateralGoal, SpeedGoal

if TYPE_CHECKING:
    from simready.sim.core.scene import Scene

#: Owner of the post-crash longitudinal goal.
POST_CRASH = "post-crash"
#: Mass assumed for a road user whose asset is not in the catalog (kg).
DEFAULT_ROAD_USER_MASS_KG = 75.0
#: Height above the road at which a vehicle's front strikes a pedestrian or cyclist in dynamic-v1 (m): the bumper.
BUMPER_HEIGHT_M = 0.5
#: Friction coefficient between a thrown road user's body and the road (or anything else it slides on).
BODY_ROAD_FRICTION = 0.6
#: Rolling (and spinning) resistance of a thrown body on the road: the lever of the normal force (m). A body is no wheel.
BODY_ROLLING_M = 0.1
#: A thrown body's angular damping (PyBullet's: the fraction of its angular velocity lost per second): a body's limbs
#: and soft tissue dissipate the tumbling a rigid body would keep.
BODY_ANGULAR_DAMPING = 0.9
#: A thrown body is at rest once its speed and its angular speed are below these (m/s, rad/s).
BODY_REST_MPS = 0.05
BODY_REST_RPS = 0.1

Struck = tuple[int, int, float, float, float, float]


def post_crash(goal: object) -> bool:
    """Whether an actor's longitudinal goal is the post-crash stop."""
    return isinstance(goal, SpeedGoal) and goal.owner == POST_CRASH


def post_crash_goals(longitudinal: tuple[SpeedGoal | GapGoal | None, ...], lateral: tuple[LateralGoal | None, ...],
                     actors: list[int]) -> tuple[tuple[SpeedGoal | GapGoal | None, ...], tuple[LateralGoal | None, ...], list[int]]:
    """The goals with the post-crash stop given to ``actors`` (vehicles that were not parked); also the ones newly given it."""
    lon, lat = list(longitudinal), list(lateral)
    new = []
    for i in actors:
        if not post_crash(lon[i]):
            lon[i] = SpeedGoal("stop", POST_CRASH)
            lat[i] = None
            new.append(i)
    return tuple(lon), tuple(lat), new


def struck_actors(struck: tuple[Struck, ...]) -> set[int]:
    return {s[0] for s in struck}


def strike(actor: int, carrier: int, pos: np.ndarray, yaw: np.ndarray) -> Struck:
    """The struck record of ``actor`` carried by ``carrier``: its pose in the carrier's body frame (planar rotation)."""
    c, s = math.cos(float(yaw[carrier])), math.sin(float(yaw[carrier]))
    dx, dy = float(pos[actor, 0] - pos[carrier, 0]), float(pos[actor, 1] - pos[carrier, 1])
    rel_yaw = (float(yaw[actor]) - float(yaw[carrier]) + math.pi) % (2 * math.pi) - math.pi
    return (actor, carrier, c * dx + s * dy, -s * dx + c * dy, float(pos[actor, 2] - pos[carrier, 2]), rel_yaw)


def impact_dv(m_vehicle_kg: float, m_road_user_kg: float, v_vehicle: np.ndarray, v_road_user: np.ndarray) -> np.ndarray:
    """The vehicle's velocity change (m/s, world xy) in a perfectly inelastic impact with a road user."""
    dv: np.ndarray = m_road_user_kg / (m_vehicle_kg + m_road_user_kg) * (np.asarray(v_road_user[:2]) - np.asarray(v_vehicle[:2]))
    return dv


def carry(struck: tuple[Struck, ...], prev_pos: np.ndarray, prev_quat: np.ndarray, pos: np.ndarray, quat: np.ndarray,
          vel: np.ndarray, omega: np.ndarray, yaw: np.ndarray) -> tuple[Struck, ...]:
    """Write the rows of struck road users (in place) from their carriers' final rows; release those whose carrier is at rest.

    A carried actor's pose is its carrier's pose composed with the recorded
    relative pose, its velocity the carrier's body velocity at that point
    (v + ω × r), its angular velocity the carrier's. An actor at rest keeps
    its previous pose (``prev_pos``, ``prev_quat``) with zero twist.
    """
    out = []
    for actor, carrier, lx, ly, lz, lyaw in struck:
        if carrier >= 0 and math.hypot(float(vel[carrier, 0]), float(vel[carrier, 1])) < C.STANDSTILL_MPS:
            carrier = -1
        if carrier < 0:
            pos[actor] = prev_pos[actor]
            quat[actor] = prev_quat[actor]
            vel[actor] = 0.0
            omega[actor] = 0.0
            yaw[actor] = 2.0 * math.atan2(float(prev_quat[actor, 2]), float(prev_quat[actor, 3]))
        else:
            c, s = math.cos(float(yaw[carrier])), math.sin(float(yaw[carrier]))
            rx, ry = c * lx - s * ly, s * lx + c * ly
            pos[actor] = (pos[carrier, 0] + rx, pos[carrier, 1] + ry, pos[carrier, 2] + lz)
            wz = float(omega[carrier, 2])
            vel[actor] = (vel[carrier, 0] - wz * ry, vel[carrier, 1] + wz * rx, vel[carrier, 2])
            omega[actor] = (0.0, 0.0, wz)
            y = (float(yaw[carrier]) + lyaw + math.pi) % (2 * math.pi) - math.pi
            yaw[actor] = y
            quat[actor] = (0.0, 0.0, math.sin(0.5 * y), math.cos(0.5 * y))
        out.append((actor, carrier, lx, ly, lz, lyaw))
    return tuple(out)


def push_out(xy_user: tuple[float, float], yaw_user: float, half_user: tuple[float, float], xy_vehicle: tuple[float, float],
             yaw_vehicle: float, half_vehicle: tuple[float, float]) -> tuple[float, float]:
    """The translation (m, world xy) that moves a road user's footprint out of a vehicle's, along the axis of least overlap.

    Separating-axis test over the four edge normals of the two rectangles
    (half-extents ``(half length, half width)``); (0, 0) if they do not overlap.
    """
    dx, dy = xy_user[0] - xy_vehicle[0], xy_user[1] - xy_vehicle[1]
    best, axis = math.inf, (0.0, 0.0)
    rects = ((yaw_user, half_user), (yaw_vehicle, half_vehicle))
    for yaw, _ in rects:
        c, s = math.cos(yaw), math.sin(yaw)
        for nx, ny in ((c, s), (-s, c)):
            reach = sum(abs(math.cos(y) * nx + math.sin(y) * ny) * h[0] + abs(-math.sin(y) * nx + math.cos(y) * ny) * h[1]
                        for y, h in rects)
            d = dx * nx + dy * ny
            overlap = reach - abs(d)
            if overlap <= 0.0:
                return 0.0, 0.0
            if overlap < best:
                sign = 1.0 if d >= 0.0 else -1.0
                best, axis = overlap, (sign * nx, sign * ny)
    return best * axis[0], best * axis[1]


def _corners(xy: tuple[float, float], yaw: float, half: tuple[float, float]) -> list[tuple[float, float]]:
    c, s = math.cos(yaw), math.sin(yaw)
    return [(xy[0] + c * a * half[0] - s * b * half[1], xy[1] + s * a * half[0] + c * b * half[1])
            for a, b in ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))]


def overlap_centre(xy_a: tuple[float, float], yaw_a: float, half_a: tuple[float, float], xy_b: tuple[float, float],
                   yaw_b: float, half_b: tuple[float, float]) -> tuple[float, float] | None:
    """The centroid (world x, y, m) of the overlap of two footprint rectangles, None if they do not overlap.

    Sutherland–Hodgman: rectangle a clipped by each (counter-clockwise) edge of rectangle b.
    """
    poly = _corners(xy_a, yaw_a, half_a)
    clip = _corners(xy_b, yaw_b, half_b)
    for k in range(4):
        (x1, y1), (x2, y2) = clip[k], clip[(k + 1) % 4]
        inside = [(x2 - x1) * (py - y1) - (y2 - y1) * (px - x1) >= 0.0 for px, py in poly]
        out = []
        for m in range(len(poly)):
            (px, py), (qx, qy) = poly[m], poly[(m + 1) % len(poly)]
            if inside[m]:
                out.append((px, py))
            if inside[m] != inside[(m + 1) % len(poly)]:
                d1 = (x2 - x1) * (py - y1) - (y2 - y1) * (px - x1)
                d2 = (x2 - x1) * (qy - y1) - (y2 - y1) * (qx - x1)
                f = d1 / (d1 - d2)
                out.append((px + f * (qx - px), py + f * (qy - py)))
        poly = out
        if len(poly) < 3:
            return None
    area = cx = cy = 0.0
    for m in range(len(poly)):
        (px, py), (qx, qy) = poly[m], poly[(m + 1) % len(poly)]
        cross = px * qy - qx * py
        area += cross
        cx += (px + qx) * cross
        cy += (py + qy) * cross
    if area <= 0.0:
        return None
    return cx / (3.0 * area), cy / (3.0 * area)


def thrown_twist(m_vehicle_kg: float, m_road_user_kg: float, v_vehicle: np.ndarray, v_road_user: np.ndarray,
                 inertia_world: np.ndarray, com_height_m: float) -> tuple[np.ndarray, np.ndarray]:
    """A struck road user's velocity (m/s, world xyz) and angular velocity (rad/s, world) just after the impact.

    The common velocity of the inelastic impact (horizontal; the vertical
    component is the road user's own), and the spin of its impulse
    ``J = m_r·(v_c − v_r)`` applied at :data:`BUMPER_HEIGHT_M` on the
    vertical through the centre of mass (``com_height_m`` above the road):
    ``ω = I⁻¹ (r × J)``, ``inertia_world`` the tensor about the centre of
    mass in world axes (kg·m²).
    """
    v_r = np.asarray(v_road_user, dtype=np.float64)
    v_c = np.asarray(v_vehicle[:2], dtype=np.float64) + impact_dv(m_vehicle_kg, m_road_user_kg, v_vehicle, v_r)
    J = np.array([m_road_user_kg * (v_c[0] - v_r[0]), m_road_user_kg * (v_c[1] - v_r[1]), 0.0])
    r = np.array([0.0, 0.0, min(BUMPER_HEIGHT_M, com_height_m) - com_height_m])
    omega = np.linalg.solve(inertia_world, np.cross(r, J))
    return np.array([v_c[0], v_c[1], float(v_r[2]) if len(v_r) > 2 else 0.0]), omega


def road_user_mass(scene: Scene, i: int) -> float:
    """Catalog mass of actor ``i`` (kg), or :data:`DEFAULT_ROAD_USER_MASS_KG` without a catalog entry."""
    cat = scene.catalog
    asset = scene.actors.asset_ids[i]
    if cat is not None and asset in cat.entries:
        return float(cat.entries[asset].mass_kg)
    return DEFAULT_ROAD_USER_MASS_KG


def new_strikes(scene: Scene, contacts: frozenset[tuple[int, int]], before: frozenset[tuple[int, int]],
                struck: tuple[Struck, ...], present: np.ndarray) -> list[tuple[int, int]]:
    """``(road user, vehicle)`` for each vehicle–pedestrian/cyclist pair touching for the first time, the road user not yet struck.

    Sorted by the pair; a road user touched by two vehicles in one tick is
    struck by the first in that order. Parked vehicles strike too (the road
    user walked into one: it is stopped there).
    """
    a = scene.actors
    done = struck_actors(struck)
    out = []
    for i, j in sorted(contacts - before):
        if j < 0 or a.is_vehicle[i] == a.is_vehicle[j] or not (present[i] and present[j]):
            continue
        user, vehicle = (j, i) if a.is_vehicle[i] else (i, j)
        if user in done:
            continue
        done.add(user)
        out.append((user, vehicle))
    return out
