"""Check 5, ``distribution``: the feature shift the transformation added against the reference pool.

PSI / JS divergence of the features (:mod:`simready.validity.features`)
against the reference pool; the shift the transformation *added* is
divergence(ticks) − divergence(baseline), clipped at 0 (the baseline's
divergence is 0 when there is no baseline). Score: the mean over features of
1 − added / max; without a pool
:data:`~simready.validity.policy.REALISM_ABSENT_SCORE`.
"""

from __future__ import annotations

import numpy as np

from simready.validity import features as feat
from simready.validity import policy
from simready.validity.gate.findings import Findings, clamp_score
from simready.validity.gate.inputs import GateInput
from simready.validity.gate.report import CheckResult


def check_distribution(g: GateInput) -> CheckResult:
    ev = g.evidence
    found = Findings()
    pool = ev.reference_pool
    if pool is None:
        found.notes.append(f"no reference pool: score {policy.REALISM_ABSENT_SCORE} (REALISM_ABSENT_SCORE)")
        detail = found.detail("no reference pool: realism unmeasured", utilisation=False, pool="absent")
        return CheckResult(check="distribution", passed=True, score=clamp_score(policy.REALISM_ABSENT_SCORE), detail=detail)
    profile = pool if isinstance(pool, feat.ReferenceProfile) else feat.ReferenceProfile.from_pool(pool)
    current = feat.divergences(feat.scenario_features(ev.ticks, ev.actor_classes, ev.ego_id), profile)
    if ev.baseline_ticks is not None:
        classes = ev.baseline_actor_classes if ev.baseline_actor_classes is not None else ev.actor_classes
        before = feat.divergences(feat.scenario_features(ev.baseline_ticks, classes, ev.ego_id), profile)
    else:
        before = {k: 0.0 for k in current}
    per_feature: dict[str, dict[str, float | None]] = {}
    scores = []
    for name, d in current.items():
        b = before.get(name)
        if d is None:
            per_feature[name] = {"divergence": None, "baseline": _opt(b), "added": None, "score": None}
            continue
        added = max(d - (b or 0.0), 0.0)
        s = feat.added_shift_score(added, name)
        scores.append(s)
        per_feature[name] = {"divergence": round(d, 6), "baseline": _opt(b), "added": round(added, 6), "score": round(s, 6)}
        if s <= 0.0:
            metric, limit = ("JS", policy.JS_ADDED_MAX) if name == feat.CATEGORICAL_FEATURE else ("PSI", policy.PSI_ADDED_MAX)
            found.add(name, f"feature {name}: {metric} {d:.3f} vs the reference pool, {added:.3f} added by the "
                            f"transformation (max {limit:.2f})")
    if scores:
        score = float(np.mean(scores))
    else:
        score = policy.REALISM_ABSENT_SCORE
        found.notes.append(f"too few feature rows to compare (< {policy.MIN_FEATURE_ROWS}): score {policy.REALISM_ABSENT_SCORE}")
    passed = not found.texts
    detail = found.detail("shift added by the transformation within limits" if passed else f"{len(found.texts)} feature(s) shifted",
                          utilisation=False, pool="given",
                          baseline="given" if ev.baseline_ticks is not None else "absent: absolute divergence", features=per_feature)
    return CheckResult(check="distribution", passed=passed, score=clamp_score(score), detail=detail)


def _opt(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
