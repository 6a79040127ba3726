"""Counterfactual validity gate (SPEC §12): five deterministic checks, scores, acceptance and weights.

``validate_scenario(evidence) -> ValidityReport`` scores one sample
(:class:`~simready.validity.evidence.ScenarioEvidence`); ``weight_policy`` and
``apply_suite_weight_policy`` turn reports into evaluation weights. Every
constant lives in :mod:`simready.validity.policy` and every report records
its ``policy_version``. No model opinions: each check is arithmetic on the
trace, the detections and the reference pool.

The checks — :class:`GateCheck` objects in :data:`CHECKS`, run by one loop
(:mod:`.verdict`) — each return ``{check, passed, score ∈ [0, 1], detail}``
(:mod:`.report`), one module each: :mod:`.physical`, :mod:`.temporal`,
:mod:`.sensor`, :mod:`.identity`, :mod:`.distribution`. They read the ticks
prepared once (:mod:`.inputs`) and word what they found alike
(:mod:`.findings`); :mod:`.weights` turns verdicts into weights.

Reasons name the actor (or feature / condition) and the number, e.g.
``actor ped_1: speed 6.00 m/s exceeds pedestrian limit 3.50 m/s at t=2.40 s``.
Motion is planar (x, y): height follows the ground and is the physics' business.
"""

from __future__ import annotations

from simready.validity.evidence import (
    Collision,
    DryReference,
    EvidenceError,
    MissingStageError,
    ScenarioEvidence,
    SensorEvidence,
)
from simready.validity.evidence_reader import evidence_from_sample_dir
from simready.validity.gate.inputs import GateInput
from simready.validity.gate.report import CheckResult, ValidityReport
from simready.validity.gate.verdict import CHECK_NAMES, CHECKS, GateCheck, validate_scenario
from simready.validity.gate.weights import PolicyVersionError, SuiteError, apply_suite_weight_policy, weight_policy

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "CheckResult",
    "Collision",
    "DryReference",
    "EvidenceError",
    "GateCheck",
    "GateInput",
    "MissingStageError",
    "PolicyVersionError",
    "ScenarioEvidence",
    "SensorEvidence",
    "SuiteError",
    "ValidityReport",
    "apply_suite_weight_policy",
    "evidence_from_sample_dir",
    "validate_scenario",
    "weight_policy",
]
