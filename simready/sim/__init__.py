"""Simulation stage (SPEC §7–§9): deterministic rollouts, traces, checkpoints and matched branches.

Public API (imported lazily so ``simready --help`` stays fast)::

    run_simulation(manifest, template, *, backend="dynamic-v1", catalog=None) -> SimResult
    evaluate_trace(trace) -> Verdict
    read_trace(path) -> Trace;  write_trace(trace, path) -> Path
    run_branches(manifest, template, *, at_s=None, actions=("brake", "coast"), ...) -> BranchSet

Rooms, from the entry points down (each imports only the rooms below it; import-linter's ``sim`` contract):

* entry points: :mod:`.cli` (``simready sim``), :mod:`.batch` (the stage over one sample folder:
  trace, checkpoint, branches), :mod:`.branch` (matched branches from a checkpoint), :mod:`.run`
  (``run_simulation``: manifest + template → trace); :mod:`.ladder` holds the scenario ladder's stages
  that roll a sample out (settle, background traffic);
* :mod:`.engine`, the loop: triggers → plan → backend step → bookkeeping, one tick at a time (a package: the
  loop, tick 0, collision events, divergence, the recorder, the compiled quiet ticks);
* :mod:`.backends` (kinematic-v1, dynamic-v1 on PyBullet) behind the one interface in :mod:`.backend`;
  :mod:`.evaluation` (metrics, verdict, rollout plot) and :mod:`.storage` (trace and checkpoint files);
* :mod:`.controllers`: each actor's plan and actuation;
* :mod:`.behavior`: what actors do beyond tracking their paths — the scenario's interactions (triggers,
  verbs), right of way at junctions, background pedestrians and lane changes, respawn, crash consequences;
* :mod:`.core`: the world a rollout steps — constants, the compiled scene, reference paths, the state,
  kinematics, geometry, sight (what actors and triggers observe) and the compiled kernels.

Why these rooms: the entry points, the loop and the backend interface are what a reader looks for first, so
they stay at the top; the rest is grouped by what it is about. The engine is not part of ``core``: it drives
the backends and controllers, which build on ``core``, so ``core`` would import upward. ``core`` imports
nothing else of the stage, so the world model reads (and tests) on its own.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "run_simulation": "simready.sim.run",
    "SimResult": "simready.sim.run",
    "evaluate_trace": "simready.sim.evaluation.evaluate",
    "Verdict": "simready.sim.evaluation.evaluate",
    "Trace": "simready.sim.storage.trace",
    "read_trace": "simready.sim.storage.trace",
    "write_trace": "simready.sim.storage.trace",
    "Checkpoint": "simready.sim.storage.checkpoint",
    "run_branches": "simready.sim.branch",
    "BranchSet": "simready.sim.branch",
    "settle_check": "simready.sim.ladder.settle",
    "PhysicsSettleStage": "simready.sim.ladder.settle",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'simready.sim' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
