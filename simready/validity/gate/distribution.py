"""Check 5, ``distribution``: the feature shift beyond the reference's noise that the transformation added.

PSI / JS divergence of the features (:mod:`simready.validity.features`)
against the reference pool, minus the pool's noise level for that feature
(the leave-one-draw-out level a nominal scenario stays under, see
:mod:`simready.validity.policy`), clipped at 0: the divergence *beyond
noise*. What the transformation added is the sample's beyond-noise minus its
baseline's (a sample without a baseline: all of it). A feature whose PSI noise
level is saturated (a nominal scenario already fills about one bin, so PSI
cannot see its shift) is scored instead by the scenario-level statistic
(:class:`~simready.validity.features.ScenarioStat`: the robust z of the
scenario's mean and spread among the draws, beyond its own leave-one-draw-out
level); ``features.<name>.statistic`` says which scored it, and
``features.<name>.scenario`` gives the scenario statistic for every continuous
feature. Score: the mean over features of 1 − added / max; without a pool
:data:`~simready.validity.policy.REALISM_ABSENT_SCORE`. The check is not
required: a failure lowers realism and never rejects alone, and its detail
says so, with the reference's size and the level's confidence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simready.validity import features as feat
from simready.validity import policy
from simready.validity.gate.findings import Findings, clamp_score
from simready.validity.gate.inputs import GateInput
from simready.validity.gate.report import CheckResult

#: The name the report gives the scenario-level statistic (``features.<name>.statistic``).
SCENARIO_STATISTIC = "scenario z (mean, sd)"
#: What a failure of this check does to the verdict (the check is not in policy.REQUIRED_CHECKS).
NOT_REQUIRED = (f"not required: a shift lowers realism ({policy.VALIDITY_WEIGHTS['realism']:.1f} of validity), "
                f"it does not reject the sample")


def check_distribution(g: GateInput) -> CheckResult:
    ev = g.evidence
    found = Findings()
    pool = ev.reference_pool
    if pool is None:
        found.notes.append(f"no reference pool: score {policy.REALISM_ABSENT_SCORE} (REALISM_ABSENT_SCORE)")
        detail = found.detail("no reference pool: realism unmeasured", utilisation=False, pool="absent")
        return CheckResult(check="distribution", passed=True, score=clamp_score(policy.REALISM_ABSENT_SCORE), detail=detail)
    profile = pool if isinstance(pool, feat.ReferenceProfile) else feat.ReferenceProfile.from_pool(pool)
    rows = feat.scenario_features(ev.ticks, ev.actor_classes, ev.ego_id)
    current = feat.divergences(rows, profile)
    base_rows = None
    if ev.baseline_ticks is not None:
        classes = ev.baseline_actor_classes if ev.baseline_actor_classes is not None else ev.actor_classes
        base_rows = feat.scenario_features(ev.baseline_ticks, classes, ev.ego_id)
    before: dict[str, float | None] = feat.divergences(base_rows, profile) if base_rows is not None else {}
    per_feature: dict[str, dict[str, Any]] = {}
    scores = []
    for name, d in current.items():
        noise = profile.noise.get(name)
        level = noise.level if noise is not None else 0.0
        b = before.get(name)
        ceiling = feat.psi_ceiling(profile, name)
        metric = "JS" if name == feat.CATEGORICAL_FEATURE else "PSI"
        row: dict[str, Any] = {"statistic": metric, "divergence": _opt(d), "noise_level": _opt(level) if noise else None,
                               "ceiling": _opt(ceiling), "p_value": None, "beyond_noise": None, "baseline": _opt(b),
                               "baseline_beyond_noise": None, "added": None, "score": None, "scenario": None}
        saturated = noise is not None and bool(ceiling) and level >= policy.NOISE_SATURATED_SHARE * ceiling  # type: ignore[operator]
        stat = profile.scenario.get(name)
        if stat is not None:
            row["scenario"] = _scenario_row(stat, rows[name].to_numpy(np.float64),
                                            None if base_rows is None else base_rows[name].to_numpy(np.float64))
        by_scenario = saturated and row["scenario"] is not None and row["scenario"]["z"] is not None
        if saturated:
            found.notes.append(f"feature {name}: noise level {level:.2f} is near the most PSI can reach here "
                               f"({ceiling:.2f}, all rows in one bin): a nominal scenario already fills about one bin, "
                               + ("so it is scored by the scenario's mean and spread among the draws (robust z)"
                                  if by_scenario else "so no shift of this feature is detectable"))
        per_feature[name] = row
        if d is not None:  # PSI / JS beyond noise, reported whichever statistic scores the feature
            beyond = max(d - level, 0.0)
            base_beyond = max(b - level, 0.0) if b is not None else 0.0
            added = max(beyond - base_beyond, 0.0)
            row.update(p_value=_opt(noise.p_value(d), 3) if noise else None, beyond_noise=_opt(beyond),
                       baseline_beyond_noise=_opt(base_beyond) if b is not None else None)
        if by_scenario:
            z_row = row["scenario"]
            row.update(statistic=SCENARIO_STATISTIC, added=z_row["added"], score=z_row["score"])
            scores.append(z_row["score"])
            if z_row["score"] <= 0.0:
                found.add(name, _scenario_violation(name, z_row, stat, baseline=base_rows is not None))  # type: ignore[arg-type]  # a scenario row has its stat
        elif d is not None:
            s = feat.added_shift_score(added, name)
            scores.append(s)
            row.update(added=_opt(added), score=_opt(s))
            if s <= 0.0:
                found.add(name, _violation(name, d, beyond, added, noise, profile.draws,
                                           baseline=ev.baseline_ticks is not None))
    if scores:
        score = float(np.mean(scores))
    else:
        score = policy.REALISM_ABSENT_SCORE
        found.notes.append(f"too few feature rows to compare (< {policy.MIN_FEATURE_ROWS}): score {policy.REALISM_ABSENT_SCORE}")
    passed = not found.texts
    calibrated = bool(profile.noise)
    if not calibrated:
        found.notes.append(f"uncalibrated: the pool names {profile.draws} draw(s) (< 2), the raw divergence is scored")
    summary = ("shift added beyond the reference's noise within limits" if passed
               else f"{len(found.texts)} feature(s) shifted beyond the reference's noise ({NOT_REQUIRED})")
    detail = found.detail(summary, utilisation=False, pool="given",
                          baseline="given" if ev.baseline_ticks is not None else "absent: all of the divergence beyond noise",
                          reference=_reference(profile), features=per_feature)
    return CheckResult(check="distribution", passed=passed, score=clamp_score(score), detail=detail)


def _reference(profile: feat.ReferenceProfile) -> dict[str, Any]:
    """What the noise levels rest on: the pool's draws and rows, the quantile, and per feature its confidence."""
    return {
        "scope": profile.scope,
        "draws": profile.draws,
        "rows": int(max(profile.n_rows.values(), default=0)),
        "noise": "leave-one-draw-out" if profile.noise else "uncalibrated",
        "quantile": policy.NOISE_QUANTILE,
        "confidence": {name: round(n.confidence, 3) for name, n in sorted(profile.noise.items())},
        "null_draws": {name: n.draws for name, n in sorted(profile.noise.items())},
    }


def _scenario_row(stat: feat.ScenarioStat, values: np.ndarray, base_values: np.ndarray | None) -> dict[str, Any]:
    """The scenario-level statistic of one feature: the sample's summaries, robust z, level, p-values, and what it
    added beyond noise (a branch: minus its base's)."""
    summary = feat.scenario_summary(values)
    z = stat.distance(values)
    row: dict[str, Any] = {"summary": None if summary is None else dict(zip(feat.SCENARIO_SUMMARIES,
                                                                             (round(float(v), 3) for v in summary))),
                           "z": _opt(z, 3), "noise_level": _opt(stat.noise.level, 3), "draws": stat.noise.draws,
                           "confidence": round(stat.noise.confidence, 3), "p_value": None, "mean_rank_p": None,
                           "beyond_noise": None, "baseline_z": None, "baseline_beyond_noise": None, "added": None,
                           "score": None}
    if z is None:
        return row
    beyond = max(z - stat.noise.level, 0.0)
    base_z = stat.distance(base_values) if base_values is not None else None
    base_beyond = max(base_z - stat.noise.level, 0.0) if base_z is not None else 0.0
    added = max(beyond - base_beyond, 0.0)
    score = float(min(max(1.0 - added / policy.SCENARIO_Z_ADDED_MAX, 0.0), 1.0))
    row.update(p_value=_opt(stat.noise.p_value(z), 3), mean_rank_p=_opt(stat.rank_p_value(values), 3),
               beyond_noise=_opt(beyond, 3), baseline_z=_opt(base_z, 3),
               baseline_beyond_noise=_opt(base_beyond, 3) if base_z is not None else None, added=_opt(added, 3),
               score=_opt(score))
    return row


def _scenario_violation(name: str, z_row: dict[str, Any], stat: feat.ScenarioStat, *, baseline: bool) -> str:
    what = f"{z_row['added']:.2f} more than the base's" if baseline else f"{z_row['added']:.2f} added"
    return (f"feature {name}: scenario z {z_row['z']:.2f} (mean {z_row['summary']['mean']:.2f}, sd "
            f"{z_row['summary']['sd']:.2f}) is {z_row['beyond_noise']:.2f} beyond noise {stat.noise.level:.2f} (ref "
            f"n={stat.noise.draws} draws, {policy.NOISE_QUANTILE:.0%} level at {stat.noise.confidence:.0%} confidence, "
            f"p={z_row['p_value']:.2f}), {what} (max {policy.SCENARIO_Z_ADDED_MAX:.2f}; PSI saturated)")


def _violation(name: str, d: float, beyond: float, added: float, noise: feat.NoiseLevel | None, draws: int, *,
               baseline: bool) -> str:
    metric, limit = ("JS", policy.JS_ADDED_MAX) if name == feat.CATEGORICAL_FEATURE else ("PSI", policy.PSI_ADDED_MAX)
    if noise is None:
        where = f"{metric} {d:.3f} vs the reference pool (uncalibrated: {draws} draw(s))"
    else:
        where = (f"{metric} {d:.3f} is {beyond:.3f} beyond noise {noise.level:.3f} (ref n={noise.draws} draws, "
                 f"{policy.NOISE_QUANTILE:.0%} level at {noise.confidence:.0%} confidence, p={noise.p_value(d):.2f})")
    what = f"{added:.3f} more than the base's" if baseline else f"{added:.3f} added"
    return f"feature {name}: {where}, {what} (max {limit:.2f})"


def _opt(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(float(value), digits)
