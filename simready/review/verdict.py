"""Why the gate accepted or rejected a sample, in the reviewer's words, from the report and the policy alone.

The gate (:mod:`simready.validity.gate.verdict`) accepts iff the required checks pass and validity reaches
the threshold; every other check only moves a score. A reviewer who sees "distribution: failed" beside
"accepted" needs that sentence, with the numbers that decided it, so :func:`explain` derives it from the
report's own scores and :mod:`simready.validity.policy` — never from a second copy of the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from simready.validity import policy
from simready.validity.gate import ValidityReport


@dataclass(frozen=True)
class CheckRow:
    """One row of a variant's check table.

    Attributes:
        check: the check's name (report order).
        required: whether acceptance needs it to pass (:data:`simready.validity.policy.REQUIRED_CHECKS`).
        passed, score: the check's outcome; score in [0, 1].
        summary: the check's one-line summary.
        reasons: every violation the check reported (empty when it passed).
        figures: the sub-scores behind the score (name → value in [0, 1]), where the check has them.
        effect: what a failure of this check did to the verdict ("" when it passed).
    """

    check: str
    required: bool
    passed: bool
    score: float
    summary: str
    reasons: tuple[str, ...]
    figures: tuple[tuple[str, float], ...]
    effect: str


def _feeds(check: str) -> str:
    """Which score a check that is not required feeds, and with which weight."""
    if check in policy.FIDELITY_WEIGHTS:
        w_f = policy.FIDELITY_WEIGHTS[check]
        return (f"lowers fidelity (weight {w_f:.1f}), which is {policy.VALIDITY_WEIGHTS['fidelity']:.1f} of "
                f"validity and decides the weight cap")
    if check == "distribution":
        return f"lowers realism, {policy.VALIDITY_WEIGHTS['realism']:.1f} of validity"
    return f"lowers validity (weight {policy.VALIDITY_WEIGHTS[check]:.1f})"


def pass_rules() -> list[tuple[str, str]]:
    """When each check passes, in report order, with the policy's own limits: a check passes when it finds no
    violation; its score measures the headroom inside the limits, so it does not decide pass or fail."""
    return [
        ("physical", "no speed or acceleration beyond its class's limit and no overlap a transformation "
                     "introduced (required)"),
        ("temporal", f"every step's |Δx − v·dt| within {policy.TEMPORAL_TOL_M:.2f} m (required)"),
        ("sensor", f"camera and LiDAR place each actor within {policy.SENSOR_POSITION_TOL_M:.1f} m of each other in "
                   f"at least {100 * policy.SENSOR_AGREEMENT_MIN_FRACTION:.0f} % of pairs, and each weather or light "
                   f"expectation holds (scored, not required)"),
        ("identity", "ids unique in every frame, one class per id, no id jumping (scored, not required)"),
        ("distribution", f"no feature shifted beyond its noise level against the realism reference; the score falls "
                         f"to 0 at an added PSI of {policy.PSI_ADDED_MAX:.2f} (class mix: JS {policy.JS_ADDED_MAX:.2f}) "
                         f"(scored, not required)"),
    ]


def check_rows(report: ValidityReport) -> list[CheckRow]:
    """The report's checks as table rows, with each failure's reasons and its effect on the verdict."""
    rows = []
    for c in report.checks:
        required = c.check in policy.REQUIRED_CHECKS
        if c.passed:
            effect = ""
        elif required:
            effect = "required: its failure rejects the sample"
        else:
            effect = "not required: " + _feeds(c.check)
        sub = c.detail.get("sub_scores") or {}
        rows.append(CheckRow(
            check=c.check, required=required, passed=c.passed, score=c.score,
            summary=str(c.detail.get("summary", "")), reasons=tuple(str(v) for v in c.detail.get("violations", [])),
            figures=tuple(sorted((str(k), float(v)) for k, v in sub.items())), effect=effect,
        ))
    return rows


def explain(report: ValidityReport) -> list[str]:
    """Sentences that say why the report is accepted or rejected and why its weight is what it is."""
    s = report.scores()
    failed_required = [c.check for c in report.checks if c.check in policy.REQUIRED_CHECKS and not c.passed]
    failed_other = [c.check for c in report.checks if c.check not in policy.REQUIRED_CHECKS and not c.passed]
    fw, vw = policy.FIDELITY_WEIGHTS, policy.VALIDITY_WEIGHTS
    fidelity_sum = " + ".join(f"{w:.1f}·{k} {s[k]:.2f}" for k, w in fw.items())
    validity_sum = (f"{vw['fidelity']:.1f}·fidelity {report.fidelity:.2f} + {vw['identity']:.1f}·identity "
                    f"{s['identity']:.2f} + {vw['realism']:.1f}·realism {report.realism:.2f}")
    required = " and ".join(policy.REQUIRED_CHECKS)
    lines = []
    if report.accepted:
        lines.append(f"Accepted: the required checks ({required}) passed and validity {report.validity:.2f} "
                     f"reaches the threshold {policy.ACCEPT_MIN_VALIDITY:.2f}.")
        if failed_other:
            lines.append(f"Failed but not required: {', '.join(failed_other)}. A failure there lowers the "
                         f"validity score rather than rejecting the sample.")
    elif failed_required:
        lines.append(f"Rejected: the required {' and '.join(failed_required)} check"
                     f"{'s' if len(failed_required) > 1 else ''} failed; a required check decides alone, "
                     f"whatever the validity ({report.validity:.2f}).")
    else:
        lines.append(f"Rejected: the required checks ({required}) passed, but validity {report.validity:.2f} is "
                     f"below the threshold {policy.ACCEPT_MIN_VALIDITY:.2f}.")
    lines.append(f"fidelity = {fidelity_sum} = {report.fidelity:.2f}; validity = {validity_sum} = "
                 f"{report.validity:.2f}.")
    if not report.accepted:
        lines.append(f"Weight {report.weight:.2f}: a rejected sample carries no weight.")
    elif report.capped:
        lines.append(f"Weight {report.weight:.2f}: fidelity {report.fidelity:.2f} is below "
                     f"{policy.HIGH_FIDELITY_MIN:.2f}, so this is low-fidelity evidence and its weight is capped at "
                     f"{policy.LOW_FIDELITY_WEIGHT_CAP:.2f} (the suite may scale it down further).")
    else:
        lines.append(f"Weight {report.weight:.2f}: fidelity {report.fidelity:.2f} is at least "
                     f"{policy.HIGH_FIDELITY_MIN:.2f} (high-fidelity evidence).")
    return lines
