"""Performance figures of the simulation stage (issue 4); printed by ``run()``, never asserted.

The scenario is :func:`simready.testing.demo.bench_manifest`: ten actors on
``residential_crosswalk_v3``, 20 s clip after a 5 s warm-up at dt = 20 ms
(1 250 ticks; dynamic-v1 steps 5 000 substeps of 5 ms). "× real time" is
simulated time (warm-up included) over wall time. Figures are medians on a
shared machine: read them as orders of magnitude and compare the ratios
printed side by side.
"""

from __future__ import annotations

import os
import statistics
import time
from functools import partial

import numpy as np
import pybullet as p
from collections.abc import Callable
from typing import Any

from simready.catalog.catalog import ensure_catalog
from simready.common import paths
from simready.sim.backends.dynamic import capi, pool
from simready.sim.backends.dynamic.chassis import _SLIP_MIN_MPS
from simready.sim.backends.dynamic.drive import agent_drive_table
from simready.sim.core import constants as C
from simready.sim.branch import _run_branch
from simready.sim.core.scene import build_scene
from simready.sim.engine import Engine
from simready.sim.run import run_simulation
from simready.sim.storage.checkpoint import Checkpoint
from simready.testing import demo
from simready.world.template import load_template


def _median(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Median wall time and median CPU time (s) of ``fn`` (CPU time is steadier on a shared machine)."""
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _load_note() -> str:
    try:
        load = os.getloadavg()[0]
    except OSError:
        return ""
    return f" (load average {load:.1f} on {os.cpu_count()} cores)"


def _setup() -> tuple[Any, Any, Any]:
    catalog = ensure_catalog()
    template = load_template(paths.TEMPLATES_DIR / "residential_crosswalk_v3.yaml")
    return demo.bench_manifest(template, catalog), template, catalog


def _bare_pybullet(scene: Any, steps: int, tyres: bool = False, agents_immovable: bool = False,
                   cpu: list[float] | None = None, compiled: bool = False) -> float:
    """The same PyBullet world (statics, ego, agents) stepped with no engine around it: its wall time (s), and its
    CPU time appended to ``cpu`` when given.

    ``tyres``: also apply the ego's tyre model each substep (no planner, agents
    or logging). Why a second baseline: stepping alone leaves the ego without
    wheels. Any PyBullet vehicle loop reads the body's state and applies its
    tyre forces every substep through the Python binding (two reads, two
    force calls, the slip arithmetic), so that is the floor under dynamic-v1
    for the same model, and the gap above it is what the engine's tick costs.
    ``agents_immovable``: the other vehicles at mass 0, as dynamic-v1 had them
    before they were force-driven bodies (the physics cost they add).
    ``compiled``: the tyre model and the steps through PyBullet's C API in one compiled call
    (:func:`~simready.sim.backends.dynamic.capi.tick_substeps` with no agents and no reads, as dynamic-v1 makes
    them): the same floor without the binding's calls.
    """
    engine = Engine(scene)
    try:
        backend: Any = engine.backend
        client = backend.world.client
        friction = engine.state.world.friction
        setup = backend._tyre_setup(0.0, friction)
        if agents_immovable:
            for i in backend.agent_idx:
                backend._set_mass(i, False)
        handle = capi.client_handle(client) if compiled else None
        if compiled and handle is None:
            raise RuntimeError("PyBullet's C API handle is not found here")
        t0, c0 = time.perf_counter(), time.process_time()
        if handle is not None:
            none = np.empty(0, dtype=np.int64)
            capi.tick_substeps(handle, steps, backend.h, p.WORLD_FRAME, none, np.empty((0, 12)),
                               backend.ego_body if tyres else -1, 0.0, 0.0, np.array(setup), _SLIP_MIN_MPS,
                               C.STANDSTILL_MPS, none, np.empty((0, 13)))
        for _ in range(0 if handle is not None else steps):
            if tyres:
                backend._tyre_forces(0.0, 0.0, friction, setup)
            p.stepSimulation(physicsClientId=client)
        if cpu is not None:
            cpu.append(time.process_time() - c0)
        return time.perf_counter() - t0
    finally:
        engine.close()


def _numpy_bicycle(manifest: Any) -> None:
    """The floor under kinematic-v1: a plain numpy kinematic bicycle of the same actors and ticks, whole arrays per
    tick — speed from the commanded acceleration (clamped at rest), body slip from the steering angle, pose and
    heading — with each tick's pose, heading, speed and slip recorded into preallocated arrays. No planner, paths,
    contacts or events: the arithmetic any engine of this model pays."""
    n = len(manifest.actors)
    ticks = manifest.warmup_ticks + manifest.clip_ticks
    dt = manifest.dt
    x = np.array([a.initial.pose.x for a in manifest.actors])
    y = np.array([a.initial.pose.y for a in manifest.actors])
    yaw = np.array([a.initial.pose.yaw for a in manifest.actors])
    v = np.array([a.initial.speed_mps for a in manifest.actors])
    accel = np.linspace(-0.5, 0.5, n)
    steer = np.linspace(-0.02, 0.02, n)
    lr, wheelbase = np.full(n, 1.35), np.full(n, 2.7)
    pos, heading, speed, slip = np.empty((ticks, n, 2)), np.empty((ticks, n)), np.empty((ticks, n)), np.empty((ticks, n))
    for k in range(ticks):
        v = np.maximum(v + accel * dt, 0.0)
        beta = np.arctan(lr / wheelbase * np.tan(steer))
        x = x + v * np.cos(yaw + beta) * dt
        y = y + v * np.sin(yaw + beta) * dt
        yaw = yaw + v / lr * np.sin(beta) * dt
        pos[k, :, 0], pos[k, :, 1], heading[k], speed[k], slip[k] = x, y, yaw, v, beta


def _agent_drive_cost(scene: Any) -> float:
    """Wall time (s) of the agent drive model for a whole rollout's ticks: each tick's force and torque per moving
    agent (:func:`~simready.sim.backends.dynamic.drive.agent_drive_table`, as dynamic-v1 computes them), and, where
    dynamic-v1 makes its substeps through the binding (no C API here), their application every substep; through the
    C API the commands are ~0.1 µs each inside the compiled substeps, left out."""
    engine = Engine(scene)
    try:
        backend: Any = engine.backend
        state = engine.state
        cid = backend.world.client
        agents = [(i, backend.chassis[i], backend.actor_body[i], False) for i in backend.agent_idx if state.bodies.present[i]]
        binding = not capi.available()
        t0 = time.perf_counter()
        for _ in range(scene.total_ticks):
            table = agent_drive_table(scene, agents, state, state.bodies, state.coords.yaw, None)
            if binding:
                drives = [(ag[2], *row) for ag, row in zip(agents, table.tolist())]
                for _k in range(backend.substeps):
                    for body, fx, fy, fz, tx, ty, tz, cx, cy, cz, _vx, _vy, _vz in drives:
                        p.applyExternalForce(body, -1, [fx, fy, fz], [cx, cy, cz], p.WORLD_FRAME, physicsClientId=cid)
                        p.applyExternalTorque(body, -1, [tx, ty, tz], p.WORLD_FRAME, physicsClientId=cid)
        return time.perf_counter() - t0
    finally:
        engine.close()


def bench_rollouts(repeats: int = 5) -> dict[str, float]:
    manifest, template, catalog = _setup()
    sim_s = manifest.clip_s + manifest.warmup_s
    out: dict[str, float] = {}
    for backend, runs in (("kinematic-v1", repeats), ("dynamic-v1", max(3, repeats // 2))):
        run_simulation(manifest, template, backend=backend, catalog=catalog)
        med, cpu = _median(partial(run_simulation, manifest, template, backend=backend, catalog=catalog), runs)
        out[backend] = med
        out[f"{backend}:cpu"] = cpu
        ticks = manifest.warmup_ticks + manifest.clip_ticks
        print(f"sim          {backend:<13} {len(manifest.actors)} actors × {manifest.clip_s:.0f} s (+{manifest.warmup_s:.0f} s warm-up, "
              f"{ticks} ticks): median {med * 1e3:7.1f} ms/run wall, {cpu * 1e3:7.1f} ms CPU  = {sim_s / med:5.0f}× real time"
              f" (target: kinematic ≤ 40 ms, dynamic ≥ 50×){_load_note()}")
        if backend == "kinematic-v1":
            floor_wall, floor_cpu = _median(lambda: _numpy_bicycle(manifest), repeats)
            out["numpy_bicycle:cpu"] = floor_cpu
            print(f"sim          floor: a plain numpy bicycle of the same {len(manifest.actors)} actors × {ticks} ticks "
                  f"(recorded into preallocated arrays): {floor_cpu * 1e3:6.1f} ms CPU; kinematic-v1 is "
                  f"{cpu / floor_cpu:4.1f}× this floor (CPU; target ≤ 2×)")
    scene = build_scene(manifest, template, backend="dynamic-v1", catalog=catalog)
    steps = scene.total_ticks * round(manifest.dt / 0.005)
    bare = statistics.median(_bare_pybullet(scene, steps) for _ in range(3))
    out["bare"] = bare
    print(f"sim          bare PyBullet {steps} steps of the same bodies: {bare * 1e3:7.1f} ms = {sim_s / bare:6.0f}× real time; "
          f"dynamic-v1 overhead {out['dynamic-v1'] / bare:4.2f}× bare (target ≤ 1.5×)")
    floor_cpus: list[float] = []
    floor = statistics.median(_bare_pybullet(scene, steps, tyres=True, cpu=floor_cpus) for _ in range(3))
    out["vehicle_floor"] = floor
    out["vehicle_floor:cpu"] = statistics.median(floor_cpus)
    ticks = scene.total_ticks
    dyn_cpu = out["dynamic-v1:cpu"]
    print(f"sim          bare PyBullet + the ego's tyre model each substep (no engine): {floor * 1e3:7.1f} ms = "
          f"{floor / bare:4.2f}× bare; dynamic-v1 is {out['dynamic-v1'] / floor:4.2f}× this floor, the engine tick "
          f"{(out['dynamic-v1'] - floor) / ticks * 1e6:5.1f} µs of {out['dynamic-v1'] / ticks * 1e6:5.1f} µs per tick")
    print(f"sim          the same in CPU time (steadier on a shared machine): floor {out['vehicle_floor:cpu'] * 1e3:7.1f} ms, "
          f"dynamic-v1 {dyn_cpu * 1e3:7.1f} ms = {dyn_cpu / out['vehicle_floor:cpu']:4.2f}× (target ≤ 1.5×), the engine tick "
          f"{(dyn_cpu - out['vehicle_floor:cpu']) / ticks * 1e6:5.1f} µs of {dyn_cpu / ticks * 1e6:5.1f} µs CPU per tick")
    if capi.available():
        c_cpus: list[float] = []
        c_floor = statistics.median(_bare_pybullet(scene, steps, tyres=True, cpu=c_cpus, compiled=True) for _ in range(3))
        out["vehicle_floor_c"] = c_floor
        out["vehicle_floor_c:cpu"] = c_cpu = statistics.median(c_cpus)
        print(f"sim          the same floor through PyBullet's C API (the tyre model and the steps in one compiled call, "
              f"as dynamic-v1 makes them): {c_floor * 1e3:7.1f} ms wall, {c_cpu * 1e3:7.1f} ms CPU; dynamic-v1 is "
              f"{dyn_cpu / c_cpu:4.2f}× this floor (CPU), the engine tick {(dyn_cpu - c_cpu) / ticks * 1e6:5.1f} µs CPU")
    still = statistics.median(_bare_pybullet(scene, steps, agents_immovable=True) for _ in range(3))
    drive = statistics.median(_agent_drive_cost(scene) for _ in range(3))
    n_agents = len(scene.actors.is_vehicle.nonzero()[0]) - (scene.actors.ego is not None) - int(scene.actors.parked.sum())
    print(f"sim          agents as force-driven bodies ({n_agents} moving vehicles besides the ego): physics "
          f"{(bare - still) * 1e3:+6.1f} ms over the same world with them immovable ({still * 1e3:6.1f} ms, the old model), "
          f"drive model {drive * 1e3:6.1f} ms ({drive / max(n_agents * ticks, 1) * 1e6:4.1f} µs per agent-tick); "
          f"together {(bare - still + drive) / out['dynamic-v1']:.0%} of dynamic-v1's run")
    ref = np.arange(10.0)
    c0 = time.process_time()
    for _ in range(100_000):
        ref * 2.0
    op_us = (time.process_time() - c0) * 10.0
    print(f"sim          reference: one numpy op on 10 floats costs {op_us:.2f} µs CPU here; kinematic-v1 spends "
          f"{out['kinematic-v1:cpu'] / (manifest.warmup_ticks + manifest.clip_ticks) * 1e6 / op_us:.0f} such ops' worth per tick")
    return out


def _restore_cycle(engine: Any, scene: Any, repeats: int, cold: bool = False) -> tuple[float, float]:
    """Median wall and CPU time (s) of checkpoint + restore.

    Each restored engine is closed (untimed) before the next restore, as a
    branch loop does, so its PyBullet client goes back to the pool and the
    next restore reuses it. ``cold``: the pool is set aside during each
    restore, so it has to open a new client (what a process's first restore pays).
    """
    wall, cpu = [], []
    for _ in range(repeats):
        if cold:
            pool.release_built()
        idle = list(pool._IDLE_CLIENTS) if cold else []
        if cold:
            pool._IDLE_CLIENTS.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        restored = Engine.restore(scene, Checkpoint(engine.checkpoint().data))
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        pool._IDLE_CLIENTS[:0] = idle
        restored.close()
    return statistics.median(wall), statistics.median(cpu)


def bench_checkpoints(repeats: int = 20) -> dict[str, float]:
    manifest, template, catalog = _setup()
    out: dict[str, float] = {}
    for backend in ("kinematic-v1", "dynamic-v1"):
        scene = build_scene(manifest, template, backend=backend, catalog=catalog)
        engine = Engine(scene)
        engine.run(until_tick=scene.warmup_ticks + 150)
        med, cpu = _restore_cycle(engine, scene, repeats)
        size = len(engine.checkpoint().data)
        out[backend] = med
        print(f"sim          checkpoint + restore ({backend}, t = 3 s, {size / 1024:.0f} KiB): median {med * 1e3:6.2f} ms wall, "
              f"{cpu * 1e3:6.2f} ms CPU (target ≤ 3 ms)")
        if backend == "dynamic-v1":
            med_cold, cpu_cold = _restore_cycle(engine, scene, 5, cold=True)
            out[f"{backend}:cold"] = med_cold
            print(f"sim          checkpoint + restore ({backend}) into a new PyBullet client (none idle): median "
                  f"{med_cold * 1e3:6.2f} ms wall, {cpu_cold * 1e3:6.2f} ms CPU (p.connect itself costs most of it)")
        engine.close()
    return out


def bench_branches(repeats: int = 3) -> float:
    manifest, template, catalog = _setup()
    short = manifest.model_copy(update={"clip_s": 9.0})
    scene = build_scene(short, template, backend="dynamic-v1", catalog=catalog)
    parent = Engine(scene)
    parent.run(until_tick=scene.warmup_ticks + 150)
    ckpt = parent.checkpoint()
    parent.close()

    def pair() -> None:
        for action in ("brake", "coast"):
            _run_branch(scene, ckpt, action, "common", None, action, 3.0)

    med, _ = _median(pair, repeats)
    print(f"sim          pair of 6 s branches (brake, coast) from one dynamic-v1 checkpoint: median {med * 1e3:7.1f} ms (target ≤ 500 ms)")
    return med


def bench_struck(repeats: int = 3) -> dict[str, float]:
    """The ten-actor scene's coast branch, whose ego strikes the crossing pedestrian (a thrown rigid body from then
    on, issue 26), against its brake branch (no strike), from one checkpoint: CPU time, the two in turn."""
    manifest, template, catalog = _setup()
    scene = build_scene(manifest, template, backend="dynamic-v1", catalog=catalog)
    parent = Engine(scene)
    parent.run(until_tick=scene.warmup_ticks + 14)  # the decision (0.28 s); the coast branch strikes at 4.04 s
    ckpt = parent.checkpoint()
    parent.close()
    cpu: dict[str, list[float]] = {"brake": [], "coast": []}
    struck = False
    for _ in range(repeats):
        for action in ("brake", "coast"):
            c0 = time.process_time()
            branch = _run_branch(scene, ckpt, action, "common", None, action, 0.28)
            cpu[action].append(time.process_time() - c0)
            struck |= action == "coast" and any(e["type"] == "collision" for e in branch.trace.events)
    out = {k: statistics.median(v) for k, v in cpu.items()}
    ratio = out["coast"] / out["brake"]
    print(f"sim          ten actors, 20 s branch from 0.28 s, dynamic-v1: brake {out['brake'] * 1e3:7.1f} ms CPU, coast "
          f"{'(pedestrian struck, thrown as a body) ' if struck else '(no strike!) '}{out['coast'] * 1e3:7.1f} ms CPU = "
          f"{ratio:4.2f}× (target ≤ 1.10×){_load_note()}")
    return {**out, "ratio": ratio}


def run() -> None:
    bench_rollouts()
    bench_checkpoints()
    bench_branches()
    bench_struck()


if __name__ == "__main__":
    run()
