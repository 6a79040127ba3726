"""Evaluation weights from validity reports: one sample's (:func:`weight_policy`) and a suite's, whose low-fidelity
share of the total weight is capped (:func:`apply_suite_weight_policy`).

Weight: 0 rejected, 1.0 at fidelity ≥ 0.80, else capped at 0.30; a suite's
low-fidelity share of the total weight is capped at 0.25 by
f = 0.25·W_high / (0.75·W_low).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from simready.common.errors import SimreadyError
from simready.validity import policy
from simready.validity.gate.report import ValidityReport


class SuiteError(SimreadyError):
    kind = "suite"


class PolicyVersionError(SuiteError):
    """A suite's reports were scored under different (or other than the current) policy versions."""

    kind = "policy_version"


def weight_policy(accepted: bool, fidelity: float) -> tuple[float, bool]:
    """``(weight, capped)``: 0 if rejected, 1.0 at fidelity ≥ 0.80, else the low-fidelity cap 0.30."""
    if not accepted:
        return policy.REJECTED_WEIGHT, False
    if not math.isfinite(fidelity):
        raise ValueError(f"fidelity must be finite, got {fidelity!r}")
    if fidelity >= policy.HIGH_FIDELITY_MIN:
        return policy.ACCEPTED_WEIGHT, False
    return min(policy.ACCEPTED_WEIGHT, policy.LOW_FIDELITY_WEIGHT_CAP), True


def apply_suite_weight_policy(reports: Sequence[ValidityReport]) -> dict[str, Any]:
    """Suite weights with the low-fidelity share capped (SPEC §12).

    Returns ``{weights: {sample_id: weight}, low_fidelity_share, share_cap,
    scaled_down, policy}`` plus ``scale_factor`` (f, 1.0 when not scaled),
    ``low_fidelity_share_before``, ``w_high``, ``w_low`` (before scaling) and
    ``total_weight`` (after). With W_high = 0 the solved f is 0: a suite of
    only low-fidelity evidence carries no weight, and its share is reported as 0.
    Raises :class:`PolicyVersionError` when the reports' policy versions differ
    from each other or from the current policy.
    """
    versions: dict[str, int] = defaultdict(int)
    for r in reports:
        versions[r.policy_version] += 1
    if len(versions) > 1:
        listed = ", ".join(f"{v} ({n} report{'s' if n > 1 else ''})" for v, n in sorted(versions.items()))
        raise PolicyVersionError("suite", "policy_version", f"reports mix validity policy versions {listed}; "
                                 "re-validate them under one policy")
    if versions and policy.POLICY_VERSION not in versions:
        (only,) = versions
        raise PolicyVersionError("suite", "policy_version", f"reports were scored under policy {only}, this gate is "
                                 f"{policy.POLICY_VERSION}; re-validate them")
    seen: set[str] = set()
    for r in reports:
        if r.sample_id in seen:
            raise SuiteError("suite", "sample_id", f"sample {r.sample_id} appears twice")
        seen.add(r.sample_id)
    w_high = sum(r.weight for r in reports if r.accepted and not r.capped)
    w_low = sum(r.weight for r in reports if r.accepted and r.capped)
    total = w_high + w_low
    share_before = w_low / total if total > 0 else 0.0
    cap = policy.SUITE_LOW_FIDELITY_SHARE_CAP
    scaled = share_before > cap
    f = cap * w_high / ((1.0 - cap) * w_low) if scaled else 1.0
    weights = {r.sample_id: (r.weight * f if (r.accepted and r.capped) else r.weight) for r in reports}
    total_after = w_high + w_low * f
    share_after = (w_low * f) / total_after if total_after > 0 else 0.0
    return {
        "weights": weights,
        "low_fidelity_share": share_after,
        "share_cap": cap,
        "scaled_down": scaled,
        "scale_factor": f,
        "low_fidelity_share_before": share_before,
        "w_high": w_high,
        "w_low": w_low,
        "total_weight": total_after,
        "policy": {
            "policy_version": policy.POLICY_VERSION,
            "high_fidelity_min": policy.HIGH_FIDELITY_MIN,
            "low_fidelity_weight_cap": policy.LOW_FIDELITY_WEIGHT_CAP,
            "share_cap": cap,
            "rule": "f = share_cap·W_high / ((1 − share_cap)·W_low) when the low-fidelity share exceeds share_cap",
        },
    }
