"""The ``dynamic-v1`` backend (:class:`DynamicBackend`): the PyBullet world built from a scene, stepped a tick at a time.

The world is built once per engine in a DIRECT client (:mod:`.pool`), in
sorted order so the call sequence (and so the result) is the same every time:
the statics from the scene's (cached) plan (:mod:`.plan`), then every vehicle
in actor order, a rigid body with its chassis (:mod:`.chassis`).

Each tick, at every 5 ms substep, the ego gets its tyre forces
(:func:`~.chassis.tyre_forces`) under the steering angle of the tick:
pure pursuit of the offset path a preview distance ahead, rate- and
angle-limited (:class:`~simready.sim.core.constants.DynamicSettings`); the agents
get the force and torque of their drive model (:mod:`.drive`), computed once
a tick. PyBullet supplies gravity, support and collisions. The ego's steering,
the agents' drive rows, the substeps and the end-of-tick reads are one compiled
call through PyBullet's C API (:func:`.capi.tick_step`; where the ground under an
agent is unknown, the drive model's fallback and :func:`.capi.tick_substeps`), or
the binding's calls where its handle is not found.

* **Parked vehicles** are immovable (mass 0) while no moving vehicle body is
  within reach of them in a tick; once one is (:meth:`DynamicBackend._wake`)
  they get their mass for the rest of the rollout and are held by their
  parking brake (the drive model braking at μ·g), so a car that hits one
  shoves it, and it skids to rest.
* **Pedestrians and cyclists** have no rigid body while they walk or ride:
  their contacts come from their footprints. A vehicle that strikes one has
  the inelastic impact of :mod:`simready.sim.behavior.impact` (the vehicle's
  momentum change follows the mass ratio), and from that tick the road
  user is a rigid body (:meth:`DynamicBackend._throw`: its certified mass,
  inertia and collision pieces, moved out of the vehicle's footprint) that
  takes the impulse, is thrown, falls and slides with friction to rest.
* After any contact between actors the drivers involved brake to a
  standstill (:mod:`simready.sim.behavior.impact`); here that means the ego's wheels
  return to straight and an agent's drive model brakes along the body's own
  motion rather than steering back to its path.
* **Absent vehicles** are immovable and collide with nothing, underground.
* **Far background vehicles** (SPEC §20) are driven by the kinematic step
  (kinematic-v1's model, the planner's commands) while no anchor (the ego,
  a scenario vehicle that moves, a thrown road user) is within
  :data:`PHYSICS_RADIUS_M` of them: their bodies are hidden as absent ones
  are (no stepping, no reads, no drive forces) and their contacts come from
  their footprints. One that comes within reach gets its body back at the
  tick's state (its kinematic pose and twist), as CARLA's hybrid physics
  mode does for vehicles away from the ego. The rule is a function of the tick's state,
  so a restored engine hides the same bodies; samples without traffic have
  no such vehicles.

The ego's rollout checks are :mod:`.checks`'. The class is built up by concept: :class:`~.world.DynamicWorld` (the
tables and the world's construction), :class:`~.exchange.BodyExchange` (bodies to and from the engine's state),
:class:`~.thrown.ThrownBodies` (struck road users' bodies), and here the stepping.
"""

from __future__ import annotations

import math
from collections import deque as drain
from dataclasses import dataclass
from itertools import starmap
from operator import call
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pybullet as p

from simready.sim.core import constants as C
from simready.sim.behavior import impact
from simready.sim.backend import COMMON_EXTRAS, StepOutcome
from simready.sim.backends.dynamic.checks import (ENERGY_GAIN, ENERGY_SLACK_J, MAX_ANGULAR_RATE_RPS, TUNNEL_DEPTH_M,
                                                 body_energy, crossed_collider)
from simready.sim.backends.dynamic import capi
from simready.sim.backends.dynamic.chassis import _SLIP_MIN_MPS, tyre_forces, tyre_setup
from simready.sim.backends.dynamic.drive import (DRIVE_POSITION_TAU_S, DRIVE_YAW_TAU_S, SUPPORT_TAU_S, agent_arrays,
                                                 agent_drive, agent_drive_table, agent_drives)
from simready.sim.backends.dynamic.kernels import CHECK_FIND, CHECK_RAY, check_flags, finish_rows
from simready.sim.controllers.lateral import preview_steer
from simready.sim.behavior.impact import post_crash
from simready.sim.core.kinematics import footprint_contacts, step_on_paths
from simready.sim.core.scene import GROUND_RASTER_M
from simready.sim.core.state import Bodies, PathCoords, SimState, frozen, ro
from simready.sim.backends.dynamic.thrown import ThrownBodies

if TYPE_CHECKING:
    from simready.sim.controllers.planner import Plan, RouteTable

#: Segments searched around a body's previous arc length when it is projected back onto its path
#: (:meth:`simready.sim.core.reference_paths.ReferencePath.project_near`'s default, :func:`simready.sim.core.kernels.project_near`).
PROJECT_WINDOW = 6

S = C.DYNAMIC_SETTINGS
#: A parked vehicle gets its mass when a moving vehicle body is this much nearer than both bounding radii plus
#: the mover's travel in a tick (m).
WAKE_MARGIN_M = 1.0

#: A background vehicle is a force-driven body while its centre is this near an anchor's (the ego, a moving scenario
#: vehicle, a thrown road user), else kinematic (m).
PHYSICS_RADIUS_M = 30.0

#: The reads, frames and lever arms where no body moved (:func:`~.kernels.finish_rows`).
_NO_READS = np.empty((0, 13))
#: No ego state known before a tick (:func:`.capi.tick_step`'s ``known``: its first substep reads it).
_UNKNOWN = np.empty(0)
_NO_FRAMES = (np.empty((0, 4)), np.empty((0, 9)), np.empty((0, 3, 1)))

#: The tyre constants passed where there is no ego this tick (unread).
_NO_TYRES: tuple[float, ...] = (0.0,) * 11


@dataclass(eq=False)
class _Layout:
    """Which vehicles' bodies a tick moves, stands or reads, and their index arrays (:meth:`DynamicBackend._hand_over`):
    a function of the tick's presence, far background vehicles, woken parked vehicles and goals, kept while those
    stay (most ticks), so the lists are not rebuilt tick after tick."""

    present: np.ndarray
    far: set[int]
    goals: tuple[Any, ...]
    woken: frozenset[int]
    #: Whether a present parked vehicle still sleeps (then :meth:`DynamicBackend._wake` looks at it).
    sleeping: bool
    #: The ego's index where it is present, else None.
    ego: int | None
    #: The vehicles moving under forces, and the agents among them (``(i, chassis, body, stop)``).
    live: list[int]
    agents: list[tuple[int, Any, int, bool]]
    #: The present vehicles standing still (sleeping parked ones).
    stand: list[int]
    #: The agents' bodies; the live vehicles' read specs (:meth:`~.exchange.BodyExchange._read_specs`) and the agents'
    #: drive arrays (:func:`~.drive.agent_arrays`).
    agent_bodies: np.ndarray
    specs: tuple[Any, ...]
    drive: tuple[np.ndarray, ...]
    moved_rows: np.ndarray
    stand_rows: np.ndarray
    #: The ego's row in ``live`` (-1: not moving).
    ego_row: int

class DynamicBackend(ThrownBodies):
    name: ClassVar[str] = "dynamic-v1"
    extras: ClassVar[tuple[str, ...]] = COMMON_EXTRAS + ("tyre_util",)

    def start(self, state: SimState) -> StepOutcome:
        woken = frozenset(state.world.woken)
        built: frozenset[int] = frozenset()
        if self._world is None:
            # The woken parked vehicles (a restored state's) are created dynamic at once, not immovable and then
            # replaced (:meth:`_make_dynamic`: two more bodies created and one removed each).
            self._build(woken)
            built = woken
        self._layout = None
        self._woken = woken
        for i in sorted(woken):
            if i in built:
                self._place(i, state.bodies)
            else:
                self._make_dynamic(i, state.bodies)
        for i in self.vehicles:
            if state.bodies.present[i]:
                self._place(i, state.bodies)
            else:
                self._hide(i)
        for rec in state.control.struck:
            if rec[0] not in self.thrown:
                self._create_thrown(rec[0], state.bodies)
        return StepOutcome(state.bodies, state.coords, state.world.contacts, {})

    # --- stepping -------------------------------------------------------------------------------

    def _tyre_setup(self, steer: float, friction: float) -> tuple[float, ...]:
        """The ego's tyre constants for this tick (:func:`~simready.sim.backends.dynamic.chassis.tyre_setup`)."""
        return tyre_setup(self.chassis[self._ego], steer, friction, self.h)

    def _tyre_forces(self, steer: float, a_cmd: float, friction: float, setup: tuple[float, ...] | None = None) -> float:
        """Apply this substep's tyre forces to the ego (:func:`~simready.sim.backends.dynamic.chassis.tyre_forces`);
        returns the tyre utilisation."""
        return tyre_forces(self.world.client, self.ego_body, steer, a_cmd,
                           self._tyre_setup(steer, friction) if setup is None else setup)

    def _energy_now(self) -> float:
        """Kinetic + potential energy of the ego (J): :func:`~.checks.body_energy`, through the C API in one compiled
        call where the handle and the C library's ``pow`` are found (:func:`.capi.ego_energy`, its bits)."""
        sm = self._client_handle()
        fp = capi.pow_address() if sm is not None else 0
        if sm is not None and fp:
            ix, iy, iz = self._inertia_list
            energy: float = capi.ego_energy(sm, self.ego_body, self.mass, ix, iy, iz, C.GRAVITY_MPS2, fp,
                                            self._state_ptrs)
            if energy == energy:
                return energy
        return body_energy(self.world.client, self.ego_body, self.mass, self._inertia_list)

    def _steer(self, state: SimState, route: RouteTable, plan: Plan, crashed: bool) -> float:
        """The ego's steering angle for this tick: pure pursuit of its path, or straight after a crash (rate-limited)."""
        e = self._ego
        if crashed:
            want = 0.0
        else:
            path = route.paths.paths[e]
            c = state.coords
            # Python floats (``item``): the same IEEE operations as on numpy's scalars, without them.
            v = c.v.item(e)
            look = max(S.preview_min_m, S.preview_gain_s * v)
            pos = state.bodies.pos
            x, y = pos.item(e, 0), pos.item(e, 1)
            yaw = c.yaw.item(e)
            rear_x, rear_y = x - math.cos(yaw) * self.lr, y - math.sin(yaw) * self.lr
            tx, ty = path.point_at(float(c.u[e]) + look, float(plan.d_ref[e]))
            want = preview_steer(rear_x, rear_y, yaw, tx, ty, self.wheelbase)
            want = max(min(want, S.max_steer_rad), -S.max_steer_rad)
        step = S.max_steer_rate_rps * self.scene.dt
        prev = state.control.steer_rad
        return prev + max(min(want - prev, step), -step)

    def _wake(self, state: SimState) -> None:
        """Give a parked vehicle its mass once a moving vehicle body is near enough to touch it within a tick.

        Near: centre distance below both bounding radii, the other's travel in a tick and
        :data:`WAKE_MARGIN_M`. From then on it is a dynamic body held by its parking brake
        (:meth:`_drive`), pushed when something pushes harder than μ·m·g.
        """
        b = state.bodies
        present = b.present.tolist()
        sleeping = [i for i in self.parked_idx if i not in self._woken and present[i]]
        if not sleeping:
            return
        movers = [j for j in self.vehicles if self._dynamic(j) and present[j]]
        # The same floats as element by element: the movers' speeds by numpy's hypot (one ufunc call), the sums and
        # differences the same IEEE operations on Python floats.
        sel = np.array(movers, dtype=np.int64)
        speeds = np.hypot(b.vel[sel, 0], b.vel[sel, 1]).tolist()
        radius, pos, dt = self._radius, b.pos.tolist(), self.scene.dt
        woken = set(self._woken)
        for i in sleeping:
            xi, yi, _ = pos[i]
            for j, speed in zip(movers, speeds):
                reach = (radius[i] + radius[j]) + WAKE_MARGIN_M + speed * dt
                if math.hypot(xi - pos[j][0], yi - pos[j][1]) < reach:
                    woken.add(i)
                    self._woken = frozenset(woken)
                    self._make_dynamic(i, b)
                    break
        self._woken = frozenset(woken)

    def _far(self, state: SimState) -> set[int]:
        """The background vehicles beyond :data:`PHYSICS_RADIUS_M` of every present anchor at ``state`` (kinematic this
        tick)."""
        bg = self.background_idx
        if not len(bg):
            return set()
        b = state.bodies
        anchors = self.anchor_idx[b.present[self.anchor_idx]]
        if self.thrown:
            anchors = np.concatenate([anchors, np.array(sorted(self.thrown), dtype=np.int64)])
        bg = bg[b.present[bg]]
        if not len(anchors):
            return set(bg.tolist())
        d = b.pos[bg, None, :2] - b.pos[None, anchors, :2]
        near = ((d * d).sum(axis=2) <= PHYSICS_RADIUS_M * PHYSICS_RADIUS_M).any(axis=1)
        return set(bg[~near].tolist())

    def _drive(self, i: int, state: SimState, kin: Bodies, yaw: np.ndarray, plan: Plan | None, stop: bool) -> tuple[float, ...]:
        """This tick's force and torque on agent ``i`` (:func:`~simready.sim.backends.dynamic.drive.agent_drive`)."""
        return agent_drive(self.scene, self.chassis[i], self.actor_body[i], i, state, kin, yaw, plan, stop)

    def _client_handle(self) -> int | None:
        """The C API handle of this world's client (:func:`~.capi.client_handle`, looked up once per world), or None:
        the binding's path (also while :data:`.capi.ENABLED` is off)."""
        if not capi.ENABLED:
            return None
        w = self.world
        if w.capi_handle == -1:
            w.capi_handle = capi.client_handle(w.client)
        return w.capi_handle

    def _index_array(self, items: Iterable[int]) -> np.ndarray:
        """``items`` (actor or body indices) as an int64 array, cached per tuple (a tick's lists are mostly the last
        tick's)."""
        key = tuple(items)
        hit = self._int_arrays.get(key)
        if hit is None:
            if len(self._int_arrays) > 256:
                self._int_arrays.clear()
            hit = self._int_arrays[key] = np.array(key, dtype=np.int64)
        return hit

    def _substeps_binding(self, drives: list[tuple[float, ...]], e: int | None, steer: float, a_cmd: float,
                          friction: float, setup: tuple[float, ...]) -> float:
        """A tick's substeps through the Python binding (where the C API is not used, :func:`~.capi.client_handle`):
        each agent's force and torque, the ego's tyre forces (:meth:`_tyre_forces`), the step. Returns the ego's
        largest tyre utilisation."""
        cid = self.world.client
        force, torque, world, stepper = p.applyExternalForce, p.applyExternalTorque, p.WORLD_FRAME, p.stepSimulation
        h = self.h
        util = 0.0
        # Each substep's calls, in order (each agent's force, then its torque), built once a tick and made by one
        # C-level loop (``starmap``) per substep: the point of substep k is cx + vx·h·k, the same arithmetic as at
        # the substep, and every call takes PyBullet's positional arguments (no keyword parsing).
        calls: list[list[tuple[Any, ...]]] = [[] for _ in range(self.substeps)]
        for body, fx, fy, fz, tx, ty, tz, cx, cy, cz, vx, vy, vz in drives:
            f, twist = [fx, fy, fz], (torque, body, -1, [tx, ty, tz], world, cid)
            vxh, vyh, vzh = vx * h, vy * h, vz * h
            for k, row in enumerate(calls):
                row.append((force, body, -1, f, [cx + vxh * k, cy + vyh * k, cz + vzh * k], world, cid))
                row.append(twist)  # the same call every substep
        tyres = self._tyre_forces
        for row in calls:
            drain(starmap(call, row), 0)
            if e is not None:
                util = max(util, tyres(steer, a_cmd, friction, setup))
            stepper(cid)
        return util

    def _hand_over(self, state: SimState, kin: Bodies, far: set[int], goals: tuple[Any, ...]) -> _Layout:
        """Hide the vehicles absent or far this tick and show those back in reach (:meth:`_hide`, :meth:`_show`), and
        the tick's layout of the bodies that follows from it (:class:`_Layout`), kept for the next ticks: it holds while
        presence (the same array), the far vehicles, the woken parked ones and the goals are the same."""
        present = state.bodies.present
        present_l = present.tolist()
        hidden, was_far = self._hidden, self._was_far
        for i in self.vehicles:
            if not present_l[i] or i in far:
                if i not in hidden:
                    self._hide(i)
            elif i in hidden:
                # Handed over to physics: its body at the tick's state (where a restored engine places it too); one
                # that appears (a spawned reserve) at the step's pose.
                self._show(i, state.bodies if i in was_far else kin)
        parked, woken = self.scene.actors.parked.tolist(), self._woken
        e = self.ego if self.ego is not None and present_l[self.ego] else None
        # The vehicles whose bodies move under forces this tick (absent, far and sleeping parked ones excepted).
        live = [i for i in self.vehicles if present_l[i] and i not in hidden and (not parked[i] or i in woken)]
        agents = [(i, self.chassis[i], self.actor_body[i], post_crash(goals[i]) or parked[i]) for i in live if i != self.ego]
        live_set = set(live)
        # Sleeping parked vehicles stand; far background ones keep the kinematic step's rows.
        stand = [i for i in self.vehicles if present_l[i] and i not in live_set and i not in far]
        lay = self._layout = _Layout(
            present=present, far=set(far), goals=goals, woken=woken,
            sleeping=any(i not in woken and present_l[i] for i in self.parked_idx), ego=e, live=live, agents=agents,
            stand=stand, agent_bodies=self._index_array(ag[2] for ag in agents), specs=self._read_specs(live),
            drive=agent_arrays(tuple(agents)), moved_rows=self._index_array(live), stand_rows=self._index_array(stand),
            ego_row=live.index(e) if e is not None and e in live_set else -1)
        return lay

    def advance(self, state: SimState, route: RouteTable, plan: Plan) -> StepOutcome:
        scene = self.scene
        a = scene.actors
        c = state.coords
        present = state.bodies.present
        step = step_on_paths(scene, route.paths, state.bodies, c.yaw, c.u, c.v, plan.accel, plan.d_ref, plan.d_rate,
                             plan.d_acc)
        kin, yaw, slip, accel = step.bodies, step.yaw, step.slip, step.accel
        goals = state.control.longitudinal
        far = self._far(state)
        lay = self._layout
        if lay is None or lay.present is not present or lay.far != far or lay.goals is not goals:
            lay = self._hand_over(state, kin, far, goals)
        self._was_far = far
        if lay.sleeping:
            self._wake(state)
            if self._woken != lay.woken:
                lay = self._hand_over(state, kin, far, goals)
        e = lay.ego
        steer = 0.0
        util = 0.0
        live, agents = lay.live, lay.agents
        a_cmd = float(plan.accel[e]) if e is not None else 0.0
        crashed = e is not None and post_crash(goals[e])
        sm = self._client_handle()
        reads = frames = None
        arms: np.ndarray | None = None
        pending, self._pending = self._pending, None
        if pending is not None:
            # The compiled quiet ticks stepped this tick's physics and stopped after it (.ticks.run_dynamic_ticks): its
            # reads, frames and lever arms, the same commands' results.
            tick, util, steer, energy, reads, frame_q, frame_r, arms = pending
            if tick != state.tick:
                raise RuntimeError(f"dynamic-v1: the pending physics of tick {tick} met tick {state.tick}")
            e_before = None if energy != energy else energy
            frames = (frame_q, frame_r)
            if util < 0.0:
                raise RuntimeError(f"dynamic-v1: PyBullet could not read a body's state at tick {state.tick}")
        # The energy check only applies to a tick without actuation; reading the energy changes nothing.
        elif e is not None and plan.throttle[e] <= 0.0 and plan.accel[e] <= 0.0:
            e_before = self._energy_now()
        else:
            e_before = None
        if sm is not None and pending is None:
            # The ego's steering and tyre constants, the agents' drive rows, the substeps, the end-of-tick reads and
            # the read bodies' frames in one compiled call through PyBullet's C API (the same commands).
            n_live = len(live)
            reads, frames = np.empty((n_live, 13)), (np.empty((n_live, 4)), np.empty((n_live, 9)))
            levers = np.empty((n_live, 3, 1))
            gemv = capi.gemv_address()
            b, gm = state.bodies, scene.ground
            idx, stop, mass, wheelbase, inertia, com = lay.drive
            coms, _, bodies, invs, has_inv, any_inv = lay.specs
            cum, base, last, pts, dirs = route.paths.kernel_arrays[:5]
            ego_body, setup_a = self.ego_body if e is not None else -1, np.zeros(len(_NO_TYRES))
            util, steer = capi.tick_step(sm, self.substeps, self.h, p.WORLD_FRAME, lay.agent_bodies, ego_body,
                                         -1 if e is None else e, crashed, state.control.steer_rad,
                                         state.world.friction, self._ego_k, c.u, np.asarray(plan.d_ref, dtype=np.float64),
                                         c.v, cum, base, last, pts, dirs, a_cmd, setup_a, _SLIP_MIN_MPS,
                                         C.STANDSTILL_MPS, bodies, reads, gm.heights, gm.x0, gm.y0,
                                         1.0 / GROUND_RASTER_M, idx, stop, a.parked,
                                         np.asarray(plan.accel, dtype=np.float64), b.pos, b.vel, b.omega, b.quat,
                                         kin.pos, kin.vel, kin.omega, yaw, c.yaw, mass, wheelbase, inertia, com,
                                         state.world.friction * C.GRAVITY_MPS2, C.GRAVITY_MPS2, scene.dt,
                                         DRIVE_POSITION_TAU_S, DRIVE_YAW_TAU_S, SUPPORT_TAU_S, invs, has_inv, any_inv,
                                         *frames, gemv, coms, levers, _UNKNOWN)
            if gemv and util >= 0.0:
                # The lever arms came with the frames (the bits of _read_frames' numpy product: its BLAS call).
                arms = levers
            if util == -2.0:
                # A coordinate under an agent is not finite: the drive rows with their fallback, then the substeps.
                frames = None
                util = capi.tick_substeps(sm, self.substeps, self.h, p.WORLD_FRAME, lay.agent_bodies,
                                          agent_drive_table(scene, agents, state, kin, yaw, plan), ego_body, steer,
                                          a_cmd, setup_a, _SLIP_MIN_MPS, C.STANDSTILL_MPS, bodies, reads)
            if util < 0.0:
                raise RuntimeError(f"dynamic-v1: PyBullet could not read a body's state at tick {state.tick}")
        elif pending is None:
            setup = _NO_TYRES
            if e is not None:
                steer = self._steer(state, route, plan, crashed)
                setup = self._tyre_setup(steer, state.world.friction)
            util = self._substeps_binding(agent_drives(scene, agents, state, kin, yaw, plan), e, steer, a_cmd,
                                          state.world.friction, setup)
        pos, quat, vel, omega = np.array(kin.pos), np.array(kin.quat), np.array(kin.vel), np.array(kin.omega)
        yaw = np.array(yaw)
        u_out, d_out, v_out = np.array(step.u), np.array(plan.d_ref, dtype=np.float64), np.array(step.v)
        slip = np.array(slip)
        extras = {"accel_mps2": accel, "throttle": plan.throttle, "brake": plan.brake,
                  "steer_rad": np.zeros(len(a)), "slip_rad": slip, "tyre_util": np.zeros(len(a))}
        lever = (0.0, 0.0, 0.0)
        frame_quat, frame_rot, levers = _NO_FRAMES
        if live:
            # Each moved body's reads, its frame and its lever arm (origin to centre of mass).
            if frames is not None and arms is not None:
                (frame_quat, frame_rot), levers = frames, arms
            else:
                reads, frame_quat, frame_rot, levers = self._read_frames(live, reads, frames)
            if lay.ego_row >= 0:
                lx, ly, lz = levers[lay.ego_row, :, 0].tolist()
                lever = (lx, ly, lz)
        # The moved bodies' rows, the standing rows and every moved body back onto its path (ReferencePath.project_near's
        # operations, its bits), the footprints' overlaps and the engine's verdict on the bodies, in one compiled call.
        paths = route.paths
        cum, base, last, pts, dirs = paths.kernel_arrays[:5]
        reach2, hl, hw, *limits = self._finish_args
        n = len(a)
        pairs = np.empty((n * (n - 1) // 2, 2), dtype=np.int64)
        m, ok = finish_rows(_NO_READS if reads is None else reads, frame_quat, frame_rot, levers, lay.moved_rows,
                            lay.stand_rows, state.bodies.pos, state.bodies.quat, c.yaw, c.u, c.d, cum, base, last, pts,
                            dirs, PROJECT_WINDOW, pos, quat, vel, omega, yaw, u_out, d_out, v_out, slip, present, reach2,
                            hl, hw, pairs, *limits, paths.leaves, paths.lengths)
        if e is not None:
            extras["steer_rad"][e] = steer
            extras["tyre_util"][e] = util
        struck = self._read_thrown(state, pos, quat, vel, omega, yaw)
        # The overlaps found above hold unless a thrown body's row was read since.
        footprints = None if self.thrown else (
            frozenset(zip(pairs[:m, 0].tolist(), pairs[:m, 1].tolist())) if m else frozenset())
        contacts, impacts = self._contacts(state, pos, yaw, present, struck, footprints)
        struck, hit = self._strike(state, contacts, struck, pos, quat, vel, omega, yaw)
        if struck or hit or self.thrown:
            ok = 0  # rows changed after the verdict: the engine checks them
        for i in impact.struck_actors(struck):
            u_out[i], d_out[i], v_out[i] = c.u[i], c.d[i], 0.0
        for user, vehicle in hit:
            impacts.setdefault((min(user, vehicle), max(user, vehicle)), (float(pos[user, 0]), float(pos[user, 1])))
        if e is not None:
            touching = any(e in pair and pair[0] + pair[1] - e >= 0 for pair in contacts)
            self._check(state, pos[e], vel[e], omega[e], lever, e_before, plan, touching or any(e == v for _, v in hit))
        # The rows copied above are this tick's own float arrays: marked read-only in place (frozen()'s first case).
        # PathCoords, Bodies and StepOutcome have no __post_init__: filling their fields is what their (frozen)
        # __init__ does, cheaper.
        coords = object.__new__(PathCoords)
        coords.__dict__.update(path_keys=c.path_keys, u=ro(u_out), d=ro(d_out), d_rate=frozen(plan.d_rate),
                               v=ro(v_out), a=frozen(accel), yaw=ro(yaw))
        bodies = object.__new__(Bodies)
        bodies.__dict__.update(pos=ro(pos), quat=ro(quat), vel=ro(vel), omega=ro(omega), present=present)
        out = object.__new__(StepOutcome)
        out.__dict__.update(bodies=bodies, coords=coords, contacts=frozenset(contacts), extras=extras, impacts=impacts,
                            struck=struck, woken=self._woken, ok=ok)
        return out

    def _contact_points(self) -> list[tuple[int, int, float, float]]:
        """PyBullet's contact points between two actors' bodies or an actor's and a static collider other than the
        ground, in its order: body A, body B and the x, y of the point on A (world, m). Through the C API in one
        compiled call where the handle is found (:func:`.capi.contact_points`, the same request), else the binding's
        ``getContactPoints``."""
        body_actor, statics, ground = self.body_actor, self.static_names, self.ground_bodies
        sm = self._client_handle()
        if sm is None:
            rows: list[tuple[int, int, float, float]] = []
            for cp in p.getContactPoints(physicsClientId=self.world.client):
                ba, bb = cp[1], cp[2]
                a_actor, b_actor = ba in body_actor, bb in body_actor
                if not (a_actor or b_actor):
                    continue
                other = ba if b_actor else bb
                if (a_actor and b_actor) or (other in statics and other not in ground):
                    rows.append((ba, bb, float(cp[5][0]), float(cp[5][1])))
            return rows
        roles = self._contact_roles()
        buf = self._contact_buf
        m = capi.contact_points(sm, roles, buf)
        if m > len(buf):
            buf = self._contact_buf = np.empty((2 * m, 4))
            m = capi.contact_points(sm, roles, buf)
        if m < 0:
            raise RuntimeError("dynamic-v1: PyBullet could not report its contact points")
        return [(int(ba), int(bb), x, y) for ba, bb, x, y in buf[:m].tolist()] if m else []

    def _contact_roles(self) -> np.ndarray:
        """Per body id its role in a contact the backend reads (:func:`.capi.contact_points`): 1 an actor's body, 2 a
        static collider other than the ground, 0 any other; built again after a body is created."""
        roles = self._roles
        if roles is None:
            body_actor, statics, ground = self.body_actor, self.static_names, self.ground_bodies
            ids = [*body_actor, *statics, 0]
            roles = self._roles = np.zeros(max(ids) + 1, dtype=np.int8)
            for body in statics:
                if body not in ground:
                    roles[body] = 2
            for body in body_actor:
                roles[body] = 1
        return roles

    def quiet_args(self, state: SimState) -> tuple[Any, ...] | None:
        """The backend's arguments of the compiled quiet ticks from ``state`` (:func:`.ticks.run_dynamic_ticks`, after
        ``d`` and ``lat_own``), or None where its next tick needs Python: a tick whose physics is pending, a struck
        road user without its body, contacts other than the struck road users' with their strikers, no C API handle or no exact lever arms and powers
        (:func:`.capi.gemv_address`, :func:`.capi.pow_address`), far background vehicles, a vehicle to show again.
        The tick's layout is built here where it does not hold for ``state`` (:meth:`_hand_over`, as :meth:`advance`
        builds it before the physics)."""
        struck = state.control.struck
        if self._pending is not None or any(rec[0] not in self.thrown for rec in struck):
            return None
        if state.world.contacts != {(min(rec[0], rec[1]), max(rec[0], rec[1])) for rec in struck if rec[1] >= 0}:
            return None
        sm = self._client_handle()
        gemv, pw = capi.gemv_address(), capi.pow_address()
        goals = state.control.longitudinal
        if sm is None or not gemv or not pw or self._far(state):
            return None
        lay = self._layout
        if lay is None or lay.present is not state.bodies.present or lay.goals is not goals or lay.far:
            # The layout advance() would build first (it hides the vehicles gone since): here, unless a body would be
            # shown (placed at the step's pose, which is not computed yet).
            present_l = state.bodies.present.tolist()
            if any(present_l[i] and i in self._hidden for i in self.vehicles):
                return None
            lay = self._hand_over(state, state.bodies, set(), goals)
        e = lay.ego
        b = state.bodies
        prev_com = np.zeros(3)
        inertia: list[float] = [0.0, 0.0, 0.0]
        mass = 0.0
        if e is not None:
            # _check's centre of mass before the tick: the last check's, or from the state's pose.
            prev_com = np.array(self._prev_com if self._prev_tick == state.tick else (
                b.pos[e] + np.array(p.getMatrixFromQuaternion(b.quat[e].tolist())).reshape(3, 3) @ self.com).tolist())
            inertia, mass = self._inertia_list, self.mass
        present = b.present.tolist()
        sleeping = self._index_array(i for i in self.parked_idx if i not in self._woken and present[i])
        idx, stop, d_mass, wheelbase, d_inertia, com = lay.drive
        coms, _, bodies, invs, has_inv, any_inv = lay.specs
        n_live = len(lay.live)
        thrown = [rec[0] for rec in struck]
        t_coms, _, t_bodies, t_invs, t_has, _ = self._read_specs(thrown)
        body_actor = np.full(max(self.body_actor, default=-1) + 1, -1, dtype=np.int64)
        for body, i in self.body_actor.items():
            body_actor[body] = i
        di = np.array([sm, self.substeps, p.WORLD_FRAME, self.ego_body if e is not None else -1,
                       e is not None and post_crash(goals[e]), gemv, pw, PROJECT_WINDOW, any_inv, lay.ego_row,
                       -1 if e is None else e],
                      dtype=np.int64)
        df = np.array([self.h, _SLIP_MIN_MPS, DRIVE_POSITION_TAU_S, DRIVE_YAW_TAU_S, SUPPORT_TAU_S, WAKE_MARGIN_M,
                       TUNNEL_DEPTH_M, MAX_ANGULAR_RATE_RPS, ENERGY_GAIN, ENERGY_SLACK_J, mass, *inertia,
                       state.control.steer_rad, impact.BODY_REST_MPS, impact.BODY_REST_RPS], dtype=np.float64)
        return (di, df, lay.agent_bodies, self._ego_k, bodies, idx, stop, self.scene.actors.parked, d_mass, wheelbase,
                d_inertia, com, invs, has_inv, coms, lay.moved_rows, lay.stand_rows, self._contact_roles(),
                self._contact_buf, self.physical, self._radius_array, sleeping, self._static_boxes(),
                self._index_array(thrown), t_bodies, t_coms, t_invs, t_has,
                np.array([rec[1] for rec in struck], dtype=np.int64), body_actor, prev_com,
                np.empty((n_live, 13)), np.empty((n_live, 4)), np.empty((n_live, 9)), np.empty((n_live, 3, 1)),
                np.empty(3))

    def quiet_done(self, tick: int, stopped_after: bool, args: tuple[Any, ...]) -> None:
        """After the compiled quiet ticks reached ``tick`` (:meth:`quiet_args`' ``args``, written): the ego's centre of
        mass for the next check, and where they stopped after that tick's physics, its results pending for
        :meth:`advance`."""
        prev_com, raw, frame_q, frame_r, levers, pend = args[-6:]
        if self._layout is not None and self._layout.ego is not None:
            self._prev_com, self._prev_tick = prev_com.tolist(), tick
        if stopped_after:
            util, steer, energy = pend.tolist()
            self._pending = (tick, util, steer, energy, raw, frame_q, frame_r, levers)

    def _contacts(self, state: SimState, pos: np.ndarray, yaw: np.ndarray, present: np.ndarray,
                  struck: tuple[impact.Struck, ...] = (), footprints: frozenset[tuple[int, int]] | None = None,
                  ) -> tuple[set[tuple[int, int]], dict[tuple[int, int], tuple[float, float]]]:
        """This tick's contacts and the impact point (world x, y) of each new one.

        Between vehicles, and between a vehicle and a static collider other
        than the ground: PyBullet's contact points. Any pair of actors whose
        footprints overlap at the tick's final poses is in contact too (a
        pair with a pedestrian or cyclist, and two vehicles whose footprints
        meet before their hulls do; two parked vehicles excepted). A thrown
        road user stays in contact with the vehicle that struck it until its
        body is at rest (``struck``: the records after this tick's read).
        ``footprints``: the footprint overlaps of these poses where already found
        (:func:`~simready.sim.core.kinematics.footprint_contacts`' answer).
        """
        out: set[tuple[int, int]] = set()
        points: dict[tuple[int, int], tuple[float, float]] = {}
        body_actor, statics = self.body_actor, self.static_names
        for ba, bb, x, y in self._contact_points():
            i, j = body_actor.get(ba), body_actor.get(bb)
            if i is None or j is None:
                other = bb if i is not None else ba
                actor = i if i is not None else j
                assert actor is not None  # one of the two is an actor
                pair = (actor, -1 - self.static_key[other])
                self.static_contact_names[pair] = statics[other]
            else:
                pair = (min(i, j), max(i, j))
            if pair not in out:
                out.add(pair)
                points[pair] = (round(x, 6), round(y, 6))
        phys, parked = self.physical, self.scene.actors.parked
        for pair in footprint_contacts(self.scene, pos, yaw, present) if footprints is None else footprints:
            # Two vehicle bodies are in contact from the first tick their footprints overlap, even where their
            # collision hulls (inside the footprint) have not met yet, so every overlap lies inside its event.
            if not (phys[pair[0]] and phys[pair[1]]) or not (parked[pair[0]] and parked[pair[1]]):
                out.add(pair)
                if pair not in points and phys[pair[0]] and phys[pair[1]]:
                    # Footprints first: the impact point is the centre of their overlap.
                    i, j = pair
                    a = self.scene.actors
                    c = impact.overlap_centre((float(pos[i, 0]), float(pos[i, 1])), float(yaw[i]), (float(a.hl[i]), float(a.hw[i])),
                                              (float(pos[j, 0]), float(pos[j, 1])), float(yaw[j]), (float(a.hl[j]), float(a.hw[j])))
                    if c is not None:
                        points[pair] = (round(c[0], 6), round(c[1], 6))
        for user, striker, *_ in struck:
            if striker >= 0:
                out.add((min(user, striker), max(user, striker)))
        before = state.world.contacts
        return out, {k: v for k, v in points.items() if k not in before}

    def _check(self, state: SimState, pos: np.ndarray, vel: np.ndarray, omega: np.ndarray, lever: tuple[float, float, float],
               e_before: float | None, plan: Plan, touching: bool = False) -> None:
        """This tick's rollout checks on the ego (:mod:`~simready.sim.backends.dynamic.checks`).

        ``lever``: the origin-to-centre-of-mass arm :meth:`_read_ego` computed (world, m).

        ``e_before``: the ego's energy (J) before the tick, None when it was
        actuated; ``touching``: the ego touches another actor at the end of the
        tick (or struck one), which skips the energy comparison — momentum
        exchanged in a contact is not a solver error.
        """
        e = self._ego
        prev_com = self._prev_com if self._prev_tick == state.tick else (
            state.bodies.pos[e] + np.array(p.getMatrixFromQuaternion(state.bodies.quat[e].tolist())).reshape(3, 3) @ self.com).tolist()
        # pos + lever, as numpy's elementwise sum would give it.
        com = [x + r for x, r in zip(pos.tolist(), lever)]
        self._prev_com, self._prev_tick = com, state.tick + 1
        unactuated = e_before is not None and not touching and plan.throttle[e] <= 0.0 and plan.accel[e] <= 0.0
        e_after = self._energy_now() if unactuated else None
        # The ray and the Python check only where they can find something (check_flags: the same comparisons).
        g = self.scene.ground
        flags = check_flags(np.array(prev_com), np.array(com), self._static_boxes(), pos, omega, g.heights, g.x0, g.y0,
                            1.0 / GROUND_RASTER_M, TUNNEL_DEPTH_M, MAX_ANGULAR_RATE_RPS,
                            math.nan if e_before is None else e_before, math.nan if e_after is None else e_after,
                            ENERGY_GAIN, ENERGY_SLACK_J)
        crossed = crossed_collider(self.world.client, prev_com, com, self.static_names, self.ground_bodies) \
            if flags & CHECK_RAY else None
        if crossed is not None or flags & CHECK_FIND:
            self.checks.tick(state, pos, omega, crossed, e_before, e_after)

    def _static_boxes(self) -> np.ndarray:
        """The axis-aligned boxes (k, 6: lower and upper corners, m) of the world's static colliders other than the
        ground, each link's, as PyBullet bounds them, taken once per world (statics do not move); a segment that meets
        none of them crosses none (:func:`~.kernels.check_flags`)."""
        w = self.world
        if w.static_boxes is None:
            cid, rows = w.client, []
            for body in sorted(self.static_names):
                if body in self.ground_bodies:
                    continue
                for link in range(-1, p.getNumJoints(body, physicsClientId=cid)):
                    lo, hi = p.getAABB(body, link, physicsClientId=cid)
                    rows.append((*lo, *hi))
            w.static_boxes = np.array(rows, dtype=np.float64).reshape(-1, 6)
        return w.static_boxes

    def rollout_checks(self) -> list[dict[str, Any]]:
        return self.checks.records()

    def substep_s(self) -> float:
        return self.h
