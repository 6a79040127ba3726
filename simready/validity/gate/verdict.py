"""The gate's loop: the five checks as :class:`GateCheck` objects in :data:`CHECKS`, run in order by
:func:`validate_scenario`, which combines their scores into the sample's verdict.

fidelity = 0.4·physical + 0.3·temporal + 0.3·sensor; realism = distribution;
validity = 0.5·fidelity + 0.2·identity + 0.3·realism. Accepted iff physical
and temporal pass and validity ≥ 0.50; the weight is :func:`~simready.validity.gate.weights.weight_policy`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from simready.validity import policy
from simready.validity.evidence import ScenarioEvidence
from simready.validity.gate.distribution import check_distribution
from simready.validity.gate.findings import clamp_score
from simready.validity.gate.identity import check_identity
from simready.validity.gate.inputs import GateInput
from simready.validity.gate.physical import check_physical
from simready.validity.gate.report import CheckName, CheckResult, ValidityReport
from simready.validity.gate.sensor import check_sensor
from simready.validity.gate.temporal import check_temporal
from simready.validity.gate.weights import weight_policy


@dataclass(frozen=True)
class GateCheck:
    """One of the gate's checks: its ``name`` in the report, its ``order`` there (SPEC §12's numbering) and
    ``check(inputs) -> CheckResult``. Unlike the ladder's stages every check runs (no early exit): acceptance
    and the weights need all five scores."""

    name: CheckName
    order: int
    check: Callable[[GateInput], CheckResult]


#: The five checks in report order; :func:`validate_scenario` runs them in one loop.
CHECKS: tuple[GateCheck, ...] = tuple(sorted(
    [
        GateCheck("physical", 1, check_physical),
        GateCheck("temporal", 2, check_temporal),
        GateCheck("sensor", 3, check_sensor),
        GateCheck("identity", 4, check_identity),
        GateCheck("distribution", 5, check_distribution),
    ],
    key=lambda c: c.order,
))
CHECK_NAMES: tuple[CheckName, ...] = tuple(c.name for c in CHECKS)


def validate_scenario(evidence: ScenarioEvidence) -> ValidityReport:
    """Run the five checks on one sample and decide acceptance and weight (SPEC §12)."""
    inputs = GateInput.of(evidence)
    checks = [c.check(inputs) for c in CHECKS]
    s: dict[str, float] = {c.check: c.score for c in checks}
    fidelity = clamp_score(sum(w * s[k] for k, w in policy.FIDELITY_WEIGHTS.items()))
    realism = s["distribution"]
    parts = {"fidelity": fidelity, "identity": s["identity"], "realism": realism}
    validity = clamp_score(sum(w * parts[k] for k, w in policy.VALIDITY_WEIGHTS.items()))
    required_ok = all(c.passed for c in checks if c.check in policy.REQUIRED_CHECKS)
    accepted = required_ok and validity >= policy.ACCEPT_MIN_VALIDITY
    weight, capped = weight_policy(accepted, fidelity)
    reasons: list[str] = []
    for c in checks:
        reasons.extend(f"{c.check}: {text}" for text in c.detail.get("violations", []))
    failed_other = [c.check for c in checks if c.check not in policy.REQUIRED_CHECKS and not c.passed]
    if accepted and failed_other:
        # First, so that a reader of a truncated reason list sees why failures sit beside "accepted".
        reasons.insert(0, f"accepted: {' and '.join(failed_other)} failed but not required (a failure lowers a "
                          f"score), validity {validity:.2f} ≥ {policy.ACCEPT_MIN_VALIDITY:.2f}")
    if not required_ok:
        failed = [c.check for c in checks if c.check in policy.REQUIRED_CHECKS and not c.passed]
        reasons.append(f"rejected: {' and '.join(failed)} check failed")
    elif validity < policy.ACCEPT_MIN_VALIDITY:
        reasons.append(f"rejected: validity {validity:.2f} below {policy.ACCEPT_MIN_VALIDITY:.2f}")
    if capped:
        reasons.append(f"low fidelity: fidelity {fidelity:.2f} below {policy.HIGH_FIDELITY_MIN:.2f}, "
                       f"weight capped at {weight:.2f}")
    return ValidityReport(
        sample_id=evidence.sample_id,
        policy_version=policy.POLICY_VERSION,
        checks=checks,
        fidelity=fidelity,
        realism=realism,
        validity=validity,
        accepted=accepted,
        low_fidelity=fidelity < policy.HIGH_FIDELITY_MIN,
        weight=weight,
        capped=capped,
        reasons=reasons,
    )
