"""Distribution features of a scenario and their divergence from a reference pool (SPEC §12, check 5).

Features are rows per (tick, actor) of every present, finite, non-ego actor:

* ``range_m``: distance from the ego's centre (m),
* ``lateral_m``: offset to the left of the ego's heading, in the ego body frame (m),
* ``speed_mps``: the actor's speed (m/s),
* ``actor_class``: its limit class (vehicle | cyclist | pedestrian) or given class.

Without an ego (no metric subject in the trace) range and lateral offset are
NaN and only speed and class mix are compared. A *reference pool* is the
concatenation of such rows from accepted source scenarios; a
:class:`ReferenceProfile` freezes its bins once so that many samples are
scored against it cheaply.

Divergences: the population stability index over :data:`~simready.validity.policy.PSI_BINS`
quantile bins of the pool for the continuous features, and the Jensen–Shannon
divergence (base 2, in [0, 1]) of the class mix. Probabilities are floored
at :data:`~simready.validity.policy.DIVERGENCE_EPS` so that empty bins stay finite.

Noise (:class:`NoiseLevel`): rows of one scenario are not independent, so what
divergence a nominal scenario shows is measured, not assumed: when the pool's
rows name their draw (column ``sample``), each draw in turn is scored against
the profile of the others (leave-one-draw-out), and the profile keeps those
values per feature as the null of "a scenario of the same programs"; see
:mod:`simready.validity.policy` for the level, its confidence and the p-value.

Scenario-level statistic (:class:`ScenarioStat`): where PSI over row bins
saturates (a nominal scenario already puts about all its rows in one bin, as a
held cruise speed does), each continuous feature is also summarised once per
scenario — its mean and its standard deviation over the scenario's rows — and
the sample's distance from the draws is the larger robust z of the two,
|s − median| / (1.4826·MAD) over the reference draws (scale floored at
:data:`~simready.validity.policy.SCENARIO_SCALE_FLOOR`); its null is the same
statistic of each draw against the others, so the same level, confidence and
p-value apply.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from simready.validity import policy

CONTINUOUS_FEATURES = ("range_m", "lateral_m", "speed_mps")
CATEGORICAL_FEATURE = "actor_class"
#: The pool's column naming the reference draw (scenario) a row comes from: the unit of the noise null.
DRAW_COLUMN = "sample"
FEATURE_COLUMNS = ("tick", "actor_id") + CONTINUOUS_FEATURES + (CATEGORICAL_FEATURE,)


def yaw_from_quaternion(qx: NDArray[Any], qy: NDArray[Any], qz: NDArray[Any], qw: NDArray[Any]) -> NDArray[np.float64]:
    """Yaw (rad, CCW about +z from +x) of quaternions stored ``[x, y, z, w]``."""
    return np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))  # type: ignore[no-any-return]


def speed_column(ticks: pd.DataFrame) -> NDArray[np.float64]:
    """``speed_mps`` when the trace has it, else the norm of the stored world velocity."""
    if "speed_mps" in ticks:
        return ticks["speed_mps"].to_numpy(np.float64)  # type: ignore[no-any-return]
    v = ticks[["vx", "vy", "vz"]].to_numpy(np.float64)
    return np.sqrt((v * v).sum(axis=1))  # type: ignore[no-any-return]


def present_column(ticks: pd.DataFrame) -> NDArray[np.bool_]:
    """``present`` as booleans (missing values and a missing column: present)."""
    if "present" not in ticks:
        return np.ones(len(ticks), bool)
    return ticks["present"].fillna(True).astype(bool).to_numpy()  # type: ignore[no-any-return]


def scenario_features(ticks: pd.DataFrame, actor_classes: Mapping[str, str], ego_id: str | None) -> pd.DataFrame:
    """Feature rows (see the module docstring) of one trace's ticks table."""
    ids = ticks["actor_id"].to_numpy()
    tick = ticks["tick"].to_numpy(np.int64)
    x = ticks["x"].to_numpy(np.float64)
    y = ticks["y"].to_numpy(np.float64)
    speed = speed_column(ticks)
    present = present_column(ticks)
    finite = np.isfinite(x) & np.isfinite(y) & np.isfinite(speed)
    range_m = np.full(len(ticks), np.nan)
    lateral_m = np.full(len(ticks), np.nan)
    is_ego = ids == ego_id if ego_id is not None else np.zeros(len(ticks), bool)
    ego_rows = np.flatnonzero(is_ego & finite & present)
    if len(ego_rows):
        ego_tick = tick[ego_rows]
        order = np.argsort(ego_tick, kind="stable")
        ego_tick, ego_rows = ego_tick[order], ego_rows[order]
        pos = np.searchsorted(ego_tick, tick)
        pos_c = np.minimum(pos, len(ego_tick) - 1)
        has_ego = ego_tick[pos_c] == tick
        e = ego_rows[pos_c]
        with np.errstate(invalid="ignore"):
            yaw = yaw_from_quaternion(*(ticks[c].to_numpy(np.float64)[e] for c in ("qx", "qy", "qz", "qw")))
            dx, dy = x - x[e], y - y[e]
            range_m = np.where(has_ego, np.hypot(dx, dy), np.nan)
            lateral_m = np.where(has_ego, -np.sin(yaw) * dx + np.cos(yaw) * dy, np.nan)
    keep = present & finite & ~is_ego
    uniq, inverse = np.unique(ids[keep].astype(str), return_inverse=True)
    classes = np.array([_feature_class(actor_classes.get(a)) for a in uniq], dtype=object)[inverse]
    return pd.DataFrame(
        {
            "tick": tick[keep],
            "actor_id": ids[keep],
            "range_m": range_m[keep],
            "lateral_m": lateral_m[keep],
            "speed_mps": speed[keep],
            "actor_class": classes,
        }
    )


def _feature_class(actor_class: str | None) -> str:
    if actor_class is None:
        return "unknown"
    return policy.limit_class(actor_class) or actor_class


def _floored(p: NDArray[np.float64]) -> NDArray[np.float64]:
    p = np.maximum(p, policy.DIVERGENCE_EPS)
    return p / p.sum()  # type: ignore[no-any-return]


def psi(p_ref: NDArray[np.float64], p_cur: NDArray[np.float64]) -> float:
    """Population stability index Σ (c − r)·ln(c / r) of two bin distributions."""
    r, c = _floored(np.asarray(p_ref, float)), _floored(np.asarray(p_cur, float))
    return float(np.sum((c - r) * np.log(c / r)))


def js_divergence(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    """Jensen–Shannon divergence, base 2, in [0, 1]."""
    p, q = _floored(np.asarray(p, float)), _floored(np.asarray(q, float))
    m = 0.5 * (p + q)
    value = 0.5 * np.sum(p * np.log2(p / m)) + 0.5 * np.sum(q * np.log2(q / m))
    return float(min(max(value, 0.0), 1.0))


@dataclass(frozen=True)
class NoiseLevel:
    """The leave-one-draw-out null of one feature: the divergence of each reference draw from the others' profile.

    ``level`` is the order statistic x_(k) of the ``draws`` values chosen as the upper bound of their
    :data:`~simready.validity.policy.NOISE_QUANTILE` quantile with ``confidence`` = P(Binomial(n, q) ≤ k − 1)
    ≥ :data:`~simready.validity.policy.NOISE_CONFIDENCE` (the largest value, with the confidence it has, when
    the draws are too few for that).
    """

    null: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> "NoiseLevel":
        return cls(tuple(sorted(float(v) for v in values)))

    @property
    def draws(self) -> int:
        return len(self.null)

    @property
    def rank(self) -> int:
        """k, 1-based: the smallest with P(Binomial(n, q) ≤ k − 1) ≥ NOISE_CONFIDENCE, else n."""
        n = self.draws
        for k in range(1, n + 1):
            if _binom_cdf(k - 1, n, policy.NOISE_QUANTILE) >= policy.NOISE_CONFIDENCE:
                return k
        return n

    @property
    def level(self) -> float:
        return self.null[self.rank - 1]

    @property
    def confidence(self) -> float:
        """Probability that ``level`` is at least the null's true NOISE_QUANTILE quantile (continuous null)."""
        return _binom_cdf(self.rank - 1, self.draws, policy.NOISE_QUANTILE)

    def p_value(self, divergence: float) -> float:
        """(1 + #{null ≥ divergence}) / (n + 1): how often a nominal draw is at least as far (ties count)."""
        tol = 1e-9 * max(abs(divergence), 1.0)
        return (1 + sum(1 for v in self.null if v >= divergence - tol)) / (self.draws + 1)


@functools.lru_cache(maxsize=4096)
def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) ≤ k), exactly (n is a pool's draw count: small); remembered, as every feature of every
    sample asks the same few (a noise level's rank asks them one by one)."""
    return float(min(sum(math.comb(n, i) * p**i * (1.0 - p) ** (n - i) for i in range(0, k + 1)), 1.0))


#: The per-scenario summaries of a continuous feature (:func:`scenario_summary`), in order.
SCENARIO_SUMMARIES = ("mean", "sd")
#: 1.4826·MAD estimates the standard deviation of a normal distribution.
_MAD_TO_SD = 1.4826


def scenario_summary(values: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """(mean, standard deviation) of one scenario's finite values of a feature; None under MIN_FEATURE_ROWS rows.

    One number each per scenario, the sampling unit: where the scenario sits (a cruise speed, a typical gap) and
    how much it moves within itself (a brake, a stop-and-go, a lane change)."""
    v = np.asarray(values, np.float64)
    v = v[np.isfinite(v)]
    if len(v) < policy.MIN_FEATURE_ROWS:
        return None
    return np.array([float(np.mean(v)), float(np.std(v))])


def _robust_z(s: NDArray[np.float64], draws: NDArray[np.float64]) -> float:
    """max over summaries of |s − median| / max(1.4826·MAD, floor) against ``draws`` (rows: draws)."""
    center = np.median(draws, axis=0)
    scale = np.maximum(_MAD_TO_SD * np.median(np.abs(draws - center), axis=0), policy.SCENARIO_SCALE_FLOOR)
    return float(np.max(np.abs(s - center) / scale))


@dataclass(frozen=True)
class ScenarioStat:
    """One continuous feature summarised per reference draw (:func:`scenario_summary`), with the null of its distance.

    ``summaries``: one row (mean, sd) per draw, in draw order; ``noise``: each draw's robust z against the others
    (leave-one-draw-out), the null of "a scenario of these programs" for :meth:`distance`."""

    summaries: NDArray[np.float64]
    noise: NoiseLevel

    @classmethod
    def of(cls, summaries: NDArray[np.float64]) -> "ScenarioStat":
        n = len(summaries)
        null = [_robust_z(summaries[i], np.delete(summaries, i, axis=0)) for i in range(n)]
        return cls(summaries, NoiseLevel.of(null))

    def distance(self, values: NDArray[np.float64]) -> float | None:
        """The robust z of a scenario's values against every draw; None when too few rows to summarise."""
        s = scenario_summary(values)
        return None if s is None else _robust_z(s, self.summaries)

    def rank_p_value(self, values: NDArray[np.float64]) -> float | None:
        """Two-sided empirical p of the scenario's mean among the draws' means: 2·min(#{≤}, #{≥}) + 1 over n + 1,
        capped at 1 (how unusual its mean is, without the scale the robust z assumes)."""
        s = scenario_summary(values)
        if s is None:
            return None
        means = self.summaries[:, 0]
        tail = min(int(np.count_nonzero(means <= s[0])), int(np.count_nonzero(means >= s[0])))
        return min((2 * tail + 1) / (len(means) + 1), 1.0)


@dataclass(frozen=True)
class ReferenceProfile:
    """A reference pool frozen into bins.

    Attributes:
        edges: per continuous feature, the interior quantile edges of the pool (ascending).
        proportions: per continuous feature, the pool's share of rows in each bin.
        classes: the class names of the pool, sorted.
        class_mix: the pool's share of rows per class in ``classes`` order.
        n_rows: per feature, how many pool rows it was built from.
        draws: how many reference draws (scenarios) the rows name (0: the pool names none).
        noise: per feature, its leave-one-draw-out null (features without one are uncalibrated).
        scope: which draws of the pool it was frozen from, in words (``template pool`` or ``intent <name>``).
        scenario: per continuous feature, its per-draw summaries and their null (pools naming two or more draws).
    """

    edges: Mapping[str, NDArray[np.float64]]
    proportions: Mapping[str, NDArray[np.float64]]
    classes: tuple[str, ...]
    class_mix: NDArray[np.float64]
    n_rows: Mapping[str, int]
    draws: int = 0
    noise: Mapping[str, NoiseLevel] = field(default_factory=dict)
    scope: str = "template pool"
    scenario: Mapping[str, ScenarioStat] = field(default_factory=dict)

    @classmethod
    def from_pool(cls, pool: pd.DataFrame) -> "ReferenceProfile":
        """Freeze ``pool``; with a :data:`DRAW_COLUMN` naming two or more draws, also their noise null."""
        columns = _PoolColumns.of(pool)
        profile = columns.profile(np.ones(columns.n, bool))
        if DRAW_COLUMN not in pool:
            return profile
        draw_ids, draw_of_row = np.unique(pool[DRAW_COLUMN].astype(str).to_numpy(), return_inverse=True)
        null: dict[str, list[float]] = {}
        scenario: dict[str, ScenarioStat] = {}
        if len(draw_ids) >= 2:
            for name in CONTINUOUS_FEATURES:
                per_draw = [scenario_summary(columns.values[name][draw_of_row == i]) for i in range(len(draw_ids))]
                kept = [s for s in per_draw if s is not None]
                if len(kept) >= 2:
                    scenario[name] = ScenarioStat.of(np.array(kept))
            for i in range(len(draw_ids)):
                held = draw_of_row == i
                others = columns.profile(~held)
                for name, d in divergences(pool[held], others).items():
                    if d is not None:
                        null.setdefault(name, []).append(d)
        return cls(profile.edges, profile.proportions, profile.classes, profile.class_mix, profile.n_rows,
                   draws=len(draw_ids), noise={k: NoiseLevel.of(v) for k, v in sorted(null.items()) if len(v) >= 2},
                   scenario=scenario)


@dataclass(frozen=True)
class IntentProfiles:
    """A template's pool frozen once per intent.

    A sample is one draw of its own intent's program, so the draws it is exchangeable with — the null its
    divergence is calibrated against — are that intent's; a pool that mixes a template's intents widens the
    null (on the arterial, lateral offset 7.69 mixed vs 4.08 for lead_vehicle_brakes alone; docs/realism.md).
    """

    by_intent: Mapping[str, ReferenceProfile]

    @classmethod
    def from_pool(cls, pool: pd.DataFrame, intent_of: Mapping[str, str]) -> "IntentProfiles":
        """``intent_of``: each draw's intent (every draw that ``pool``'s :data:`DRAW_COLUMN` names must have one)."""
        intents = pool[DRAW_COLUMN].astype(str).map(dict(intent_of))
        return cls({str(intent): replace(ReferenceProfile.from_pool(rows), scope=f"intent {intent}")
                    for intent, rows in pool.groupby(intents, sort=True)})

    def for_intent(self, intent: str) -> ReferenceProfile | None:
        """The profile of ``intent``'s draws; None when the pool has none (realism then goes unmeasured)."""
        return self.by_intent.get(intent)


@dataclass(frozen=True)
class _PoolColumns:
    """A pool's feature columns read once (finite values and row masks), so that the profile of any subset of
    its rows (leave-one-draw-out) costs quantiles and counts, not another pass over the table."""

    n: int
    values: Mapping[str, NDArray[np.float64]]
    finite: Mapping[str, NDArray[np.bool_]]
    class_names: NDArray[np.str_]
    class_codes: NDArray[np.intp]

    @classmethod
    def of(cls, pool: pd.DataFrame) -> "_PoolColumns":
        n = len(pool)
        values, finite = {}, {}
        for name in CONTINUOUS_FEATURES:
            v = pool[name].to_numpy(np.float64) if name in pool else np.full(n, np.nan)
            values[name], finite[name] = v, np.isfinite(v)
        labels = pool[CATEGORICAL_FEATURE].astype(str).to_numpy() if CATEGORICAL_FEATURE in pool else np.empty(0, str)
        names, codes = np.unique(labels, return_inverse=True)
        if len(labels) != n:  # no class column: no class mix
            codes = np.full(n, -1)
        return cls(n, values, finite, names, codes)

    def profile(self, rows: NDArray[np.bool_]) -> ReferenceProfile:
        edges: dict[str, NDArray[np.float64]] = {}
        props: dict[str, NDArray[np.float64]] = {}
        n_rows: dict[str, int] = {}
        for name in CONTINUOUS_FEATURES:
            values = self.values[name][rows & self.finite[name]]
            n_rows[name] = len(values)
            if len(values) == 0:
                continue
            qs = np.quantile(values, np.linspace(0, 1, policy.PSI_BINS + 1)[1:-1])
            e = np.unique(qs)
            edges[name] = e
            props[name] = _bin_shares(values, e)
        codes = self.class_codes[rows]
        codes = codes[codes >= 0]
        counts = np.bincount(codes, minlength=len(self.class_names))
        present = counts > 0
        n_rows[CATEGORICAL_FEATURE] = len(codes)
        mix = counts[present] / counts.sum() if len(codes) else np.empty(0)
        return ReferenceProfile(edges, props, tuple(str(c) for c in self.class_names[present]), mix, n_rows)


def _bin_shares(values: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.float64]:
    counts = np.bincount(np.searchsorted(edges, values, side="right"), minlength=len(edges) + 1)
    return counts / max(counts.sum(), 1)  # type: ignore[no-any-return]


def divergences(features: pd.DataFrame, profile: ReferenceProfile) -> dict[str, float | None]:
    """Per feature, PSI (continuous) or JS (class mix) of ``features`` against the profile; None if unmeasurable."""
    out: dict[str, float | None] = {}
    for name in CONTINUOUS_FEATURES:
        values = features[name].to_numpy(np.float64)
        values = values[np.isfinite(values)]
        if name not in profile.edges or len(values) < policy.MIN_FEATURE_ROWS or profile.n_rows[name] < policy.MIN_FEATURE_ROWS:
            out[name] = None
            continue
        out[name] = psi(profile.proportions[name], _bin_shares(values, profile.edges[name]))
    labels = features[CATEGORICAL_FEATURE].astype(str).to_numpy()
    if len(labels) < policy.MIN_FEATURE_ROWS or profile.n_rows[CATEGORICAL_FEATURE] < policy.MIN_FEATURE_ROWS:
        out[CATEGORICAL_FEATURE] = None
    else:
        classes = sorted(set(profile.classes) | set(labels.tolist()))
        ref = np.array([dict(zip(profile.classes, profile.class_mix)).get(c, 0.0) for c in classes])
        cur = np.array([np.count_nonzero(labels == c) for c in classes], float) / len(labels)
        out[CATEGORICAL_FEATURE] = js_divergence(ref, cur)
    return out


def psi_ceiling(profile: ReferenceProfile, name: str) -> float | None:
    """The largest PSI a sample can reach on continuous feature ``name``: all its rows in one bin (the bins are
    open-ended, so a sample far outside the pool reaches no more). None when the profile has no bins for it."""
    if name not in profile.proportions:
        return None
    shares = profile.proportions[name]
    return max(psi(shares, np.eye(len(shares))[j]) for j in range(len(shares)))


def added_shift_score(added: float, feature: str) -> float:
    """Score in [0, 1] of the divergence a transformation added to one feature."""
    limit = policy.JS_ADDED_MAX if feature == CATEGORICAL_FEATURE else policy.PSI_ADDED_MAX
    if not math.isfinite(added):
        return 0.0
    return float(min(max(1.0 - max(added, 0.0) / limit, 0.0), 1.0))
