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
  vehicle's velocity changes by ``m_r / (m_v + m_r) · (v_r − v_v)`` (dynamic-v1
  applies it to the vehicle's rigid body; kinematic-v1's vehicles are
  path followers and do not take it), and the road user is *carried*: from
  that tick it keeps its pose in the vehicle's frame (pose and twist derive
  from the vehicle's, so it never passes through it) until the vehicle is
  at rest, and then lies still where it came to rest for the rest of the
  clip. A struck road user is recorded in
  :attr:`~simready.sim.state.ControlState.struck` as
  ``(actor, carrier, x, y, z, yaw)``: the carrier's index (−1 once at rest)
  and the pose in the carrier's body frame (m, rad).

The impact point of such a strike is the road user's position (its
footprint centre) at the tick of first contact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from simready.sim import constants as C
from simready.sim.state import SpeedGoal

#: Owner of the post-crash longitudinal goal.
POST_CRASH = "post-crash"
#: Mass assumed for a road user whose asset is not in the catalog (kg).
DEFAULT_ROAD_USER_MASS_KG = 75.0

Struck = tuple[int, int, float, float, float, float]


def post_crash(goal: Any) -> bool:
    """Whether an actor's longitudinal goal is the post-crash stop."""
    return isinstance(goal, SpeedGoal) and goal.owner == POST_CRASH


def post_crash_goals(longitudinal: tuple, lateral: tuple, actors: list[int]) -> tuple[tuple, tuple, list[int]]:
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
    return m_road_user_kg / (m_vehicle_kg + m_road_user_kg) * (np.asarray(v_road_user[:2]) - np.asarray(v_vehicle[:2]))


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


def road_user_mass(scene: Any, i: int) -> float:
    """Catalog mass of actor ``i`` (kg), or :data:`DEFAULT_ROAD_USER_MASS_KG` without a catalog entry."""
    cat = scene.catalog
    asset = scene.actors.asset_ids[i]
    if cat is not None and asset in cat.entries:
        return float(cat.entries[asset].mass_kg)
    return DEFAULT_ROAD_USER_MASS_KG


def new_strikes(scene: Any, contacts: frozenset[tuple[int, int]], before: frozenset[tuple[int, int]],
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
