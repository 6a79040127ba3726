"""Simulation stage (SPEC §7–§9): deterministic rollouts, traces, checkpoints and matched branches.

Public API (imported lazily so ``simready --help`` stays fast)::

    run_simulation(manifest, template, *, backend="dynamic-v1", catalog=None) -> SimResult
    evaluate_trace(trace) -> Verdict
    read_trace(path) -> Trace;  write_trace(trace, path) -> Path
    run_branches(manifest, template, *, at_s=None, actions=("brake", "coast"), ...) -> BranchSet

Modules, in the order data flows: :mod:`.scene` (validate and compile) →
:mod:`.state` (the world state) → :mod:`.interactions` (triggers, verbs) →
:mod:`.controllers` (plan) → :mod:`.backend` / :mod:`.backends` (apply) →
:mod:`.engine` (the loop) → :mod:`.trace`, :mod:`.metrics`,
:mod:`.evaluate` → :mod:`.checkpoint`, :mod:`.branch` → :mod:`.settle`.
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
