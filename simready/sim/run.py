"""``run_simulation``: manifest + template → trace (SPEC §7), and the trace's header.

The public entry point of the stage. It validates and compiles the scene
(bad input raises :class:`~simready.common.errors.ManifestError` before any
stepping), runs the rollout to the end of the clip, and assembles the trace:
header (provenance), events (in order), metrics and the ticks table. A
rollout that diverges stops with its reason in ``header.termination`` and in
``issues``; :func:`~simready.sim.evaluation.evaluate.evaluate_trace` then rejects it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from shapely.geometry import LineString, Point
from tqdm import tqdm

from simready.catalog.catalog import Catalog, ensure_catalog
from simready.scenario.manifest import ScenarioManifest
from simready.sim.core import constants as C
from simready.sim.evaluation import metrics as M
from simready.sim.storage.checkpoint import DYNAMIC_REPLAY_TOLERANCE, Checkpoint
from simready.sim.engine import Engine, close_collision
from simready.sim.core.scene import Scene, build_scene
from simready.sim.storage.trace import TRACE_FORMAT, Trace, build_table
from simready.world.template import WorldTemplate

FRAME = ("world: x east, y north, z up, metres; body origin at the footprint centre on the ground; "
         "quaternions [x, y, z, w] world-from-body; velocities of the body origin in world axes")


@dataclass(frozen=True, eq=False)
class SimResult:
    """A finished rollout.

    ``trace``: the :class:`~simready.sim.storage.trace.Trace`. ``issues``: one line
    per problem found (divergence, failed rollout checks); empty when clean.
    ``arrival``: the realized timing of the conflict — the subject's and the
    conflicting actor's arrival at the point where their tracks cross
    (``{actor, point, subject_arrival_s, actor_arrival_s, delta_s}``), the
    rollout's answer to the scenario's timing solve; None without a crossing.
    """

    trace: Trace
    issues: list[str] = field(default_factory=list)
    arrival: dict[str, Any] | None = None


def header(scene: Scene, engine: Engine, branch: dict[str, Any] | None = None) -> dict[str, Any]:
    m = scene.manifest
    term = engine.state.termination
    return {
        "format": TRACE_FORMAT,
        "engine_version": C.ENGINE_VERSION,
        "backend": scene.backend,
        "input_hash": scene.input_hash,
        "seed": m.seed,
        "sample_id": m.sample_id,
        "template_id": m.template_id,
        "template_hash": scene.template_hash,
        "dt": m.dt,
        "substep_s": engine.backend.substep_s(),
        "clip_s": m.clip_s,
        "warmup_s": m.warmup_s,
        "clip_ticks": m.clip_ticks,
        "warmup_ticks": m.warmup_ticks,
        "frame": FRAME,
        "actor_ids": list(scene.actors.ids),
        "actor_kinds": dict(zip(scene.actors.ids, scene.actors.kinds)),
        "actor_dims": {i: [round(2 * float(l), 9), round(2 * float(w), 9), round(float(h), 9)]
                       for i, l, w, h in zip(scene.actors.ids, scene.actors.hl, scene.actors.hw, scene.actors.h)},
        "metric_subject": m.metric_subject,
        "config_hash": scene.config_hash,
        "config": scene.config,
        "asset_versions": dict(sorted(m.asset_versions.items())),
        "bounds": list(scene.bounds),
        "bounds_margin_m": C.OUT_OF_BOUNDS_MARGIN_M,
        "extras": list(engine.backend.extras),
        "termination": None if term is None else {"tick": term[0], "t": round((term[0] - m.warmup_ticks) * m.dt, 9), "reason": term[1]},
        "branch": branch,
    }


def finish(engine: Engine, branch: dict[str, Any] | None = None) -> Trace:
    """The trace of everything the engine has recorded so far."""
    scene = engine.scene
    arrays = engine.recorder.arrays()
    # Contacts still on at the end complete their events as ongoing (copies: the engine may run on).
    events = [dict(ev) for ev in engine.events]
    for pair in sorted(engine.state.world.contacts):
        close_collision(events, [], scene, engine.parties(pair), engine.state, ongoing=True)
    settle_times(events, scene, arrays)
    table = build_table(scene.actors.ids, scene.lane_ids, scene.warmup_ticks, scene.dt, arrays, engine.backend.extras)
    metrics = M.compute(scene, arrays, events, engine.state.interactions.status, engine.ticks_simulated)
    checks = getattr(engine.backend, "rollout_checks", None)
    if checks is not None:
        metrics["rollout_checks"] = checks()
    return Trace(header(scene, engine, branch), events, metrics, table)


#: A party of a collision is back on its wheels once its vertical speed is below this (m/s) ...
SETTLED_VZ_MPS = 0.05
#: ... and its roll and pitch rates below this (rad/s).
SETTLED_TILT_RPS = 0.2


def settle_times(events: list[dict[str, Any]], scene: Scene, arrays: dict[str, np.ndarray]) -> None:
    """Give each completed ``collision`` event ``t_settled``: when its consequences are over — the first recorded
    time, from the contact's start, at which the contact has ended or every party is at rest, and every party is
    back on its wheels (:data:`SETTLED_VZ_MPS`, :data:`SETTLED_TILT_RPS`, not falling); the end of the clip if never.

    Why not simply ``t_end``: an impact can throw a body off the ground for a moment (a rear-ended shuttle hops a
    few centimetres), and until it lands its motion is the contact's consequence; and two cars that came to rest
    against each other stay in contact to the horizon, though nothing happens any more. The plausibility checks
    exempt the contact's parties up to this time.
    """
    ids = scene.actors.ids
    vel, omega = arrays["vel"], arrays["omega"]
    rows = len(vel)
    # Supported, not in flight: over the next tick vz changes by less than half of what gravity would do.
    fall = 0.5 * C.GRAVITY_MPS2 * scene.dt
    for ev in events:
        if ev["type"] != "collision" or "t_end" not in ev:
            continue
        parties = [ids.index(k) for k in (ev["a"], ev["b"]) if k in ids]
        k = int(round(ev["t"] / scene.dt))
        end = int(round(ev["t_end"] / scene.dt))

        def over(k: int) -> bool:
            if k < end and any(math.hypot(vel[k, j, 0], vel[k, j, 1]) >= C.STANDSTILL_MPS for j in parties):
                return False
            return all(abs(vel[k, j, 2]) < SETTLED_VZ_MPS and abs(vel[k + 1, j, 2] - vel[k, j, 2]) < fall
                       and abs(omega[k, j, 0]) < SETTLED_TILT_RPS and abs(omega[k, j, 1]) < SETTLED_TILT_RPS for j in parties)

        while k < rows - 1 and not over(k):
            k += 1
        ev["t_settled"] = round(k * scene.dt, 9)


def issues_of(trace: Trace) -> list[str]:
    out = []
    term = trace.header.get("termination")
    if term:
        out.append(f"rollout stopped at t = {term['t']} s: {term['reason']}")
    for c in trace.metrics.get("rollout_checks", []):
        if not c.get("passed", True):
            out.append(f"{c['check']}: {c['detail']}")
    return out


def arrival_of(trace: Trace) -> dict[str, Any] | None:
    """Where and when the subject's track crosses the conflicting actor's (see :class:`SimResult`)."""
    m = trace.metrics
    subject = trace.header["metric_subject"]
    other = (m.get("reveal_to_conflict") or {}).get("actor")
    if other is None and m.get("min_ttc", {}).get("pair"):
        other = m["min_ttc"]["pair"][1]
    if other is None:
        return None
    ids = trace.header["actor_ids"]
    n = len(ids)
    r = len(trace.ticks) // n
    xy = np.stack([trace.column("x"), trace.column("y")], 1).reshape(r, n, 2)
    present = trace.column("present").astype(bool).reshape(r, n)
    t = trace.column("t").reshape(r, n)[:, 0]
    a, b = ids.index(subject), ids.index(other)
    pa_, pb = xy[present[:, a], a], xy[present[:, b], b]
    ta, tb = t[present[:, a]], t[present[:, b]]
    if len(pa_) < 2 or len(pb) < 2:
        return None
    crossing = LineString(pa_).intersection(LineString(pb))
    if crossing.is_empty:
        return None
    first = min((Point(c) for g in getattr(crossing, "geoms", [crossing]) for c in g.coords),
                key=lambda q: (LineString(pa_).project(q), q.x, q.y))
    point = np.array([first.x, first.y])
    i = int(np.argmin(np.hypot(*(pa_ - point).T)))
    j = int(np.argmin(np.hypot(*(pb - point).T)))
    return {"actor": other, "point": [round(float(point[0]), 6), round(float(point[1]), 6)],
            "subject_arrival_s": round(float(ta[i]), 9), "actor_arrival_s": round(float(tb[j]), 9),
            "delta_s": round(float(ta[i] - tb[j]), 9)}


def verify_continuation(ckpt: Checkpoint, scene: Scene, trace: Trace) -> tuple[bool, str]:
    """Restore ``ckpt`` in a fresh engine, run to the end, compare with ``trace`` (the uninterrupted rollout).

    Exact (bit for bit) for kinematic-v1; within
    :data:`~simready.sim.storage.checkpoint.DYNAMIC_REPLAY_TOLERANCE`
    with identical event order for dynamic-v1. Returns ``(ok, detail)``.
    """
    engine = Engine.restore(scene, ckpt)
    try:
        engine.run()
        again = finish(engine, branch=trace.header.get("branch"))
    finally:
        engine.close()
    if scene.backend == "kinematic-v1":
        same = again.to_bytes() == trace.to_bytes()
        return same, "bit-identical continuation" if same else "continuation differs from the trace"
    kinds = [(e["type"], e["tick"]) for e in again.events if e["type"] != "checkpoint"]
    want = [(e["type"], e["tick"]) for e in trace.events if e["type"] != "checkpoint"]
    if kinds != want or len(again.ticks) != len(trace.ticks):
        return False, "event order or row count differs"
    worst = {}
    for key, cols in (("position_m", ("x", "y", "z")), ("velocity_mps", ("vx", "vy", "vz")), ("quaternion", ("qx", "qy", "qz", "qw"))):
        worst[key] = max(float(np.abs(again.column(c) - trace.column(c)).max()) for c in cols)
    ok = all(worst[k] <= DYNAMIC_REPLAY_TOLERANCE[k] for k in worst)
    return ok, ", ".join(f"{k} {v:.2e} (≤ {DYNAMIC_REPLAY_TOLERANCE[k]:.0e})" for k, v in worst.items())


def run_simulation(manifest: ScenarioManifest, template: WorldTemplate, *, backend: str = C.DEFAULT_BACKEND,
                   catalog: Catalog | None = None, progress: bool = False) -> SimResult:
    """Roll out ``manifest`` on ``template`` with ``backend`` (``kinematic-v1`` | ``dynamic-v1``).

    ``catalog`` defaults to the project's generated catalog. Raises
    :class:`~simready.common.errors.ManifestError` for invalid input before stepping;
    never raises for a diverging rollout (see ``SimResult.issues``).
    """
    scene = build_scene(manifest, template, backend=backend, catalog=catalog if catalog is not None else ensure_catalog())
    engine = Engine(scene)
    try:
        bar = None
        if progress:
            bar = tqdm(total=scene.total_ticks, desc=f"{backend} {manifest.sample_id}", unit="tick", leave=False)
        engine.run(progress=bar)
        if bar is not None:
            bar.close()
        trace = finish(engine)
    finally:
        engine.close()
    return SimResult(trace, issues_of(trace), arrival_of(trace))


__all__ = ["SimResult", "arrival_of", "finish", "header", "issues_of", "run_simulation", "verify_continuation"]
