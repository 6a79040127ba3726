"""Matched action branches from one checkpoint (SPEC §9).

At a decision time the rollout is checkpointed once; each branch restores
that checkpoint into a fresh engine, hands the subject's longitudinal axis
to its action, and runs to the end of the clip. Siblings therefore share
their pre-decision history exactly (the same recorded rows and events, by
construction) and differ only in what follows.

Actions (:data:`ACTIONS`): ``brake`` (a constant deceleration demand of
:data:`~simready.sim.core.constants.BRANCH_BRAKE_DECEL` through the actuation
delay, capped by μ·g), ``coast`` (no throttle, no brake), ``maintain``
(hold the speed at the decision). A manifest may list its own in
``realized.branch_actions``.

Two kinds of sibling sets, labelled in every branch's header:

* ``common`` — common random numbers: every disturbance is the
  checkpoint's, so brake vs coast differ only by the action;
* ``independent`` — independent-disturbance repeats: the named uncertain
  causes are redrawn per branch from their own streams
  (``disturbance/<label>/<actor>`` for each pedestrian's reaction delay and
  kerb decision, ``disturbance/<label>/environment`` for road friction).

The decision time defaults to 1.0 s before the pedestrian becomes visible
to the subject: ``realized.t_reveal_s`` when the manifest records it, else
the reveal a full base rollout measures (``reveal_to_conflict.t_reveal``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from tqdm import tqdm

from simready.catalog.catalog import Catalog, ensure_catalog
from simready.common.errors import ManifestError
from simready.scenario.manifest import ScenarioManifest
from simready.scenario.streams import StreamSet
from simready.sim.core import constants as C
from simready.sim.behavior import interactions
from simready.sim.storage.checkpoint import Checkpoint
from simready.sim.engine import Engine
from simready.sim.evaluation.metrics import stopping_distance
from simready.sim.core.sight import TickView
from simready.sim.run import SimResult, finish, run_simulation
from simready.sim.core.scene import Scene, build_scene
from simready.sim.storage.trace import Trace
from simready.world.template import WorldTemplate

ACTIONS = ("brake", "coast", "maintain")
DEFAULT_ACTIONS = ("brake", "coast")
#: The decision is this long before the reveal (s).
DECISION_LEAD_S = 1.0


@dataclass(frozen=True, eq=False)
class Branch:
    """One branch: its label, action, disturbance mode (``common`` | ``independent``), repeat index and trace."""

    label: str
    action: str
    disturbance: str
    repeat: int | None
    trace: Trace
    outcome: dict[str, Any]


@dataclass(frozen=True, eq=False)
class BranchSet:
    """Branches of one checkpoint, with the decision time and the base rollout when one was needed to find it."""

    checkpoint: Checkpoint
    decision_t_s: float
    decision_source: str
    branches: list[Branch]
    base: SimResult | None = None
    table: list[dict[str, Any]] = field(default_factory=list)


def _redraw(engine: Engine, label: str) -> None:
    """Independent-disturbance repeat: new reaction delays, kerb decisions and friction from ``disturbance/<label>/…``."""
    scene = engine.scene
    s = engine.state
    streams = StreamSet.from_state(s.rng)
    peds = list(s.control.peds)
    for i, mem in enumerate(peds):
        if mem is None:
            continue
        rng = streams.stream(f"disturbance/{label}/{scene.actors.ids[i]}")
        nominal = float(scene.actors.reaction_delay[i])
        delay = min(nominal * math.exp(C.REACTION_DELAY_SIGMA * float(rng.standard_normal())), C.REACTION_DELAY_MAX_S)
        peds[i] = replace(mem, stop_draw=float(rng.random()), reaction_delay_s=delay)
    env = streams.stream(f"disturbance/{label}/environment")
    r = C.FRICTION_REDRAW_RANGE
    friction = min(max(s.world.friction * float(env.uniform(1.0 - r, 1.0 + r)), 0.05), 2.0)
    engine.state = s.evolve(control=replace(s.control, peds=tuple(peds)), world=replace(s.world, friction=friction),
                            rng=streams.state())


def decision_time(manifest: ScenarioManifest, base: Trace | None) -> tuple[float, str]:
    """``(t_s, source)``: ``realized.t_decision_s`` (an imported scenario's decision), else the time the base rollout
    fires ``realized.decision_interaction``, else 1 s before ``realized.t_reveal_s``, else before the base rollout's
    reveal."""
    decision = manifest.realized.get("t_decision_s")
    if isinstance(decision, (int, float)) and not isinstance(decision, bool):
        return float(decision), "realized.t_decision_s"
    inter = manifest.realized.get("decision_interaction")
    if isinstance(inter, str) and inter and base is not None:
        fired = next((e["t"] for e in base.events if e["type"] == "trigger_fired" and e.get("interaction") == inter),
                     None)
        if fired is not None:
            return max(float(fired), 0.0), f"base rollout: {inter} fired"
    reveal = manifest.realized.get("t_reveal_s")
    if isinstance(reveal, (int, float)) and not isinstance(reveal, bool):
        return max(float(reveal) - DECISION_LEAD_S, 0.0), "realized.t_reveal_s"
    found = (base.metrics.get("reveal_to_conflict") or {}).get("t_reveal") if base is not None else None
    if found is None and isinstance(inter, str) and inter and base is not None:
        raise ManifestError(manifest.sample_id, "realized.decision_interaction",
                            f"the decision interaction {inter!r} never fires in the base rollout "
                            f"({manifest.clip_s:g} s) and nothing becomes visible to the subject; pass --at")
    if found is None:
        raise ManifestError(manifest.sample_id, "realized.t_reveal_s",
                            "no reveal: the manifest records no t_reveal_s and nothing becomes visible to the subject; pass --at")
    return max(float(found) - DECISION_LEAD_S, 0.0), "base rollout reveal"


def outcome(trace: Trace, decision_t_s: float, from_t_s: float | None = None) -> dict[str, Any]:
    """Side-by-side outcome metrics of one branch.

    The subject's first collision at or after the decision: with whom, when,
    the relative speed at impact and each party's delta-v (from the
    ``collision`` event, SPEC §8). The stopping distance is measured from
    ``from_t_s``, the checkpoint tick's time (the decision rounded to the tick
    grid, where the action begins), defaulting to the decision time.
    """
    m = trace.metrics
    subject = trace.header["metric_subject"]
    hits = [c for c in m.get("collisions", []) if subject in (c["a"], c["b"]) and c["t"] >= decision_t_s - 1e-9]
    start = decision_t_s if from_t_s is None else from_t_s
    stop = stopping_distance(trace.df, subject, start)
    conflict = (m.get("reveal_to_conflict") or {}).get("actor") or (m.get("min_ttc", {}).get("pair") or [None, None])[1]
    gap = next((d["value"] for d in m.get("min_distance", []) if d["actor"] == conflict), None)
    first = hits[0] if hits else {}
    return {
        "collision": bool(hits),
        "collision_t": first.get("t"),
        "collision_with": (first["b"] if first["a"] == subject else first["a"]) if hits else None,
        "collision_relative_speed_mps": first.get("relative_speed_mps"),
        "collision_delta_v_mps": first.get("delta_v_mps"),
        "collision_duration_s": first.get("duration_s"),
        "collisions": len(hits),
        "min_ttc_s": m.get("min_ttc", {}).get("value"),
        "min_ttc_t": m.get("min_ttc", {}).get("t"),
        "min_distance_m": gap,
        "conflict_actor": conflict,
        "stopping_distance_m": None if stop is None else round(stop, 6),
        "stopping_from_t_s": round(start, 9),
        "required_decel_max": m.get("required_decel_max", {}).get("value"),
    }


def run_branches(manifest: ScenarioManifest, template: WorldTemplate, *, at_s: float | None = None,
                 actions: tuple[str, ...] | None = None, independent: int = 0, backend: str = C.DEFAULT_BACKEND,
                 catalog: Catalog | None = None, progress: bool = False) -> BranchSet:
    """Checkpoint at the decision time and roll out every action (CRN), plus ``independent`` redrawn repeats of each."""
    if catalog is None:
        catalog = ensure_catalog()
    scene = build_scene(manifest, template, backend=backend, catalog=catalog)
    wanted: tuple[str, ...] = tuple(actions) if actions else tuple(manifest.realized.get("branch_actions") or DEFAULT_ACTIONS)  # type: ignore[arg-type]
    for a in wanted:
        if a not in ACTIONS:
            raise ManifestError(manifest.sample_id, "actions", f"unknown action {a!r}; known: {', '.join(ACTIONS)}")
    if scene.actors.ego is None and manifest.metric_subject not in scene.actors.index:
        raise ManifestError(manifest.sample_id, "metric_subject", "branches need a subject")
    base = None
    if at_s is None:
        if "t_reveal_s" not in manifest.realized and "t_decision_s" not in manifest.realized:
            base = run_simulation(manifest, template, backend=backend, catalog=catalog)
        at_s, source = decision_time(manifest, base.trace if base else None)
    else:
        source = "--at"
    if not 0.0 <= at_s <= manifest.clip_s:
        raise ManifestError(manifest.sample_id, "at", f"decision time {at_s} s is outside the clip [0, {manifest.clip_s}]")
    tick = scene.warmup_ticks + int(round(at_s / scene.dt))
    parent = Engine(scene)
    parent.run(until_tick=tick)
    ckpt = parent.checkpoint()
    parent.close()
    jobs = [(a, "common", None) for a in wanted] + [(a, "independent", k) for k in range(1, independent + 1) for a in wanted]
    branches = []
    bar = None
    if progress:
        bar = tqdm(total=len(jobs), desc="branches", unit="branch", leave=False)
    for action, mode, k in jobs:
        label = action if mode == "common" else f"{action}-independent-{k}"
        branches.append(_run_branch(scene, ckpt, action, mode, k, label, at_s))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    table = [{"label": b.label, "action": b.action, "disturbance": b.disturbance, "repeat": b.repeat,
              "parent_checkpoint": ckpt.id, "decision_t_s": round(at_s, 9), **b.outcome} for b in branches]
    return BranchSet(ckpt, at_s, source, branches, base, table)


def _run_branch(scene: Scene, ckpt: Checkpoint, action: str, mode: str, repeat: int | None, label: str,
                at_s: float) -> Branch:
    engine = Engine.restore(scene, ckpt)
    try:
        if mode == "independent":
            _redraw(engine, label)
        subject = scene.actors.index[scene.manifest.metric_subject]
        view = TickView(scene, engine.state, engine.route.paths)
        draws = {scene.actors.ids[i]: {"reaction_delay_s": p.reaction_delay_s, "stop_draw": p.stop_draw}
                 for i, p in enumerate(engine.state.control.peds) if p is not None}
        events: list[dict[str, Any]] = [interactions.event(view, "branch", label=label, action=action, disturbance=mode,
                                                           repeat=repeat, parent_checkpoint=ckpt.id,
                                                           friction=engine.state.world.friction, disturbances=draws)]
        engine.state = interactions.take_for_branch(engine.state, view, subject, action, events)
        engine.events.extend(events)
        engine.run()
        meta = {"label": label, "action": action, "disturbance": mode, "repeat": repeat,
                "parent_checkpoint": ckpt.id, "decision_t_s": round(at_s, 9), "decision_tick": ckpt.tick}
        trace = finish(engine, branch=meta)
    finally:
        engine.close()
    from_t = round((ckpt.tick - scene.warmup_ticks) * scene.dt, 9)
    return Branch(label, action, mode, repeat, trace, outcome(trace, at_s, from_t))


def shared_prefix(a: Trace, b: Trace, decision_tick: int) -> bool:
    """Whether two traces have identical rows before ``decision_tick`` (every column, bit for bit; NaN equals NaN)."""
    if a.ticks.column_names != b.ticks.column_names:
        return False
    ka, kb = np.asarray(a.column("tick")) < decision_tick, np.asarray(b.column("tick")) < decision_tick
    if ka.sum() != kb.sum():
        return False
    for name in a.ticks.column_names:
        x, y = a.column(name)[ka], b.column(name)[kb]
        if x.dtype == np.float64:
            if not np.array_equal(x.view(np.uint64), y.view(np.uint64)):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


__all__ = ["ACTIONS", "Branch", "BranchSet", "decision_time", "outcome", "run_branches",
           "shared_prefix"]
