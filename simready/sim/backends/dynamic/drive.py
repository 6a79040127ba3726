"""The agents' drive and support model in ``dynamic-v1`` (:func:`agent_drive`, ``agent_model`` "drive-1").

The agents (other moving vehicles) are rigid bodies like the ego, but driven
by a simpler model than its tyres: once a tick (a 50 Hz controller) a
horizontal force and a yaw torque that bring the body to the end-of-tick
velocity and heading its path controller plans, with a correction of the
position and heading error, limited to what tyres deliver (μ·m·g, and
μ·m·g·wheelbase/2 of yaw torque); free of contact they follow their paths to
millimetres, and a harder contact pushes them. The road carries them through
a support force (gravity balanced, height and tilt driven back to the
ground's) rather than through contacts with the ground colliders, which cost
a convex solve per wheel every substep: with four agents on the ground,
stepping cost 3.8× the ego-only world, with the support model 1.1×. They
still collide with the ego, with each other and with every static collider
that is not ground (kerbs, poles, buildings).

A parked vehicle, once woken, is held by its parking brake: this model
braking at μ·g. After any contact between actors the drivers involved brake
to a standstill (:mod:`simready.sim.behavior.impact`); here that means an agent's
drive model brakes along the body's own motion rather than steering back to
its path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simready.sim.core import constants as C
from simready.sim.backends.dynamic.chassis import Chassis
from simready.sim.backends.dynamic.kernels import agent_drive_rows, ground_under
from simready.sim.core.scene import GROUND_RASTER_M, Scene
from simready.sim.core.state import Bodies, SimState

if TYPE_CHECKING:
    from simready.sim.controllers.planner import Plan

#: The agent drive model corrects a position error over this time (s) and a heading error over this one (s).
DRIVE_POSITION_TAU_S = 0.25
DRIVE_YAW_TAU_S = 0.25
#: The agents' support brings the origin to the ground height and the up axis to the vertical over this time (s).
SUPPORT_TAU_S = 0.1


def agent_drive(scene: Scene, ch: Chassis, body: int, i: int, state: SimState, kin: Bodies, yaw: np.ndarray,
                plan: Plan | None, stop: bool) -> tuple[float, ...]:
    """The agent drive model: this tick's force (N) and torque (N·m) on vehicle ``i`` (world frame).

    ``ch``, ``body``: its chassis and PyBullet body; ``kin``, ``yaw``: the
    end-of-tick state its path controller plans; ``plan``: read only for the braking of a stopping agent that
    is not parked (None where none stops); ``stop``: brake to a
    standstill instead (after a crash, or a parked vehicle's brake). Returns
    ``(body, force xyz, torque xyz, centre of mass xyz, velocity xyz)``, held
    for the tick (a 50 Hz controller) and applied at the centre of mass,
    carried along at that velocity, every substep.

    * **Tyres** (horizontal force, yaw torque). Following its path, the
      body's origin velocity is driven to the path controller's end-of-tick
      velocity plus a correction of the position error over
      :data:`DRIVE_POSITION_TAU_S`, and its yaw rate to the path's plus a
      heading correction over :data:`DRIVE_YAW_TAU_S`. Stopping (after a
      crash, or a parked vehicle's brake) the velocity is driven towards
      zero along the body's own motion at the planner's braking (μ·g for a
      parked car) and the yaw rate towards zero. Either way the force is
      limited to the friction circle μ·m·g and the yaw torque to
      μ·m·g·wheelbase/2: what tyres can deliver, so a harder contact pushes
      the body.
    * **Support** (vertical force, roll and pitch torques). The road carries
      the agent instead of a contact with the ground colliders (each
      vehicle–ground contact costs a convex solve every substep, most of
      the physics): gravity is balanced, the origin's height is driven to
      the ground height under it and the body's up axis to the vertical,
      both over :data:`SUPPORT_TAU_S`. A crash that lifts or tilts the
      body is thus undone like by a stiff, damped suspension.
    """
    return agent_drives(scene, [(i, ch, body, stop)], state, kin, yaw, plan)[0]


def agent_drives(scene: Scene, agents: list[tuple[int, Chassis, int, bool]], state: SimState, kin: Bodies,
                 yaw: np.ndarray, plan: Plan | None) -> list[tuple[float, ...]]:
    """The drive model (:func:`agent_drive`) for every agent of a tick at once: ``agents`` lists ``(i, chassis, body, stop)``.

    One compiled call (:func:`~simready.sim.backends.dynamic.kernels.agent_drive_rows`): the same operations in
    the same order on the same floats as the scalar model (so the same bits, tested against it), the ground heights
    by :meth:`~simready.sim.core.scene.GroundModel.at_point`'s arithmetic (``at``'s cells), compiled
    (:func:`~simready.sim.backends.dynamic.kernels.ground_under`).
    """
    if not agents:
        return []
    return [(ag[2], *row) for ag, row in zip(agents, agent_drive_table(scene, agents, state, kin, yaw, plan).tolist())]


def agent_drive_table(scene: Scene, agents: list[tuple[int, Chassis, int, bool]], state: SimState, kin: Bodies,
                      yaw: np.ndarray, plan: Plan | None) -> np.ndarray:
    """:func:`agent_drives`' rows as one (k, 12) array, row ``k`` for ``agents[k]``: force xyz (N), torque xyz (N·m),
    centre of mass xyz (m), velocity xyz (m/s)."""
    if not agents:
        return np.empty((0, 12))
    b = state.bodies
    mu_g = state.world.friction * C.GRAVITY_MPS2
    idx, stop, mass, wheelbase, inertia, com = agent_arrays(tuple(agents))
    # The ground height under each agent: GroundModel.at_point's cells in one compiled call (its operations), or
    # at_point itself where a coordinate is not finite.
    gm = scene.ground
    ground = np.empty(len(agents))
    if not ground_under(gm.heights, gm.x0, gm.y0, 1.0 / GROUND_RASTER_M, b.pos, idx, ground):
        pos_l = b.pos.tolist()
        ground = np.array([gm.at_point(pos_l[ag[0]][0], pos_l[ag[0]][1]) for ag in agents])
    parked = scene.actors.parked
    if plan is not None:
        accel = np.asarray(plan.accel, dtype=np.float64)
    elif any(ag[3] and not parked[ag[0]] for ag in agents):
        raise ValueError("agent_drives: a moving agent that stops brakes at the plan's deceleration; no plan given")
    else:
        accel = np.zeros(len(parked))
    out = np.empty((len(agents), 12))
    agent_drive_rows(idx, stop, parked, accel, b.pos, b.vel, b.omega,
                     b.quat, kin.pos, kin.vel, kin.omega, np.asarray(yaw, dtype=np.float64),
                     np.asarray(state.coords.yaw, dtype=np.float64), ground, mass, wheelbase, inertia, com, mu_g,
                     C.GRAVITY_MPS2, scene.dt, DRIVE_POSITION_TAU_S, DRIVE_YAW_TAU_S, SUPPORT_TAU_S, out)
    return out


#: Per list of agents: their actor indices and stop flags, and their chassis' arrays (:func:`_chassis_arrays`).
_AGENTS: dict[tuple[tuple[int, Chassis, int, bool], ...], tuple[np.ndarray, ...]] = {}


def agent_arrays(agents: tuple[tuple[int, Chassis, int, bool], ...]) -> tuple[np.ndarray, ...]:
    """The drive kernel's per-agent arrays for ``agents`` (:func:`agent_drives`' list; cached per list, as a tick's
    agents are mostly the last tick's): indices, stop flags, masses, wheelbases, inertia tensors, centres of mass."""
    hit = _AGENTS.get(agents)
    if hit is None:
        if len(_AGENTS) > 256:
            _AGENTS.clear()
        hit = _AGENTS[agents] = (np.array([ag[0] for ag in agents], dtype=np.int64),
                                 np.array([ag[3] for ag in agents], dtype=np.bool_),
                                 *_chassis_arrays(tuple(ag[1] for ag in agents)))
    return hit


#: Per list of chassis: their masses, wheelbases, inertia tensors (k, 9) and centres of mass (k, 3).
_ARRAYS: dict[tuple[Chassis, ...], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}


def _chassis_arrays(chassis: tuple[Chassis, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The drive kernel's per-agent chassis arrays (cached per list of chassis)."""
    hit = _ARRAYS.get(chassis)
    if hit is None:
        if len(_ARRAYS) > 256:
            _ARRAYS.clear()
        hit = _ARRAYS[chassis] = (np.array([ch.mass for ch in chassis], dtype=np.float64),
                                  np.array([ch.wheelbase for ch in chassis], dtype=np.float64),
                                  np.array([ch.inertia_flat for ch in chassis], dtype=np.float64).reshape(-1, 9),
                                  np.array([ch.com_xyz for ch in chassis], dtype=np.float64).reshape(-1, 3))
    return hit
