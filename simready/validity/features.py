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
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from simready.validity import policy

CONTINUOUS_FEATURES = ("range_m", "lateral_m", "speed_mps")
CATEGORICAL_FEATURE = "actor_class"
FEATURE_COLUMNS = ("tick", "actor_id") + CONTINUOUS_FEATURES + (CATEGORICAL_FEATURE,)


def yaw_from_quaternion(qx: NDArray, qy: NDArray, qz: NDArray, qw: NDArray) -> NDArray[np.float64]:
    """Yaw (rad, CCW about +z from +x) of quaternions stored ``[x, y, z, w]``."""
    return np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


def speed_column(ticks: pd.DataFrame) -> NDArray[np.float64]:
    """``speed_mps`` when the trace has it, else the norm of the stored world velocity."""
    if "speed_mps" in ticks:
        return ticks["speed_mps"].to_numpy(np.float64)
    v = ticks[["vx", "vy", "vz"]].to_numpy(np.float64)
    return np.sqrt((v * v).sum(axis=1))


def present_column(ticks: pd.DataFrame) -> NDArray[np.bool_]:
    """``present`` as booleans (missing values and a missing column: present)."""
    if "present" not in ticks:
        return np.ones(len(ticks), bool)
    return ticks["present"].fillna(True).astype(bool).to_numpy()


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
    return p / p.sum()


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
class ReferenceProfile:
    """A reference pool frozen into bins.

    Attributes:
        edges: per continuous feature, the interior quantile edges of the pool (ascending).
        proportions: per continuous feature, the pool's share of rows in each bin.
        classes: the class names of the pool, sorted.
        class_mix: the pool's share of rows per class in ``classes`` order.
        n_rows: per feature, how many pool rows it was built from.
    """

    edges: Mapping[str, NDArray[np.float64]]
    proportions: Mapping[str, NDArray[np.float64]]
    classes: tuple[str, ...]
    class_mix: NDArray[np.float64]
    n_rows: Mapping[str, int]

    @classmethod
    def from_pool(cls, pool: pd.DataFrame) -> "ReferenceProfile":
        edges: dict[str, NDArray[np.float64]] = {}
        props: dict[str, NDArray[np.float64]] = {}
        n_rows: dict[str, int] = {}
        for name in CONTINUOUS_FEATURES:
            values = pool[name].to_numpy(np.float64) if name in pool else np.empty(0)
            values = values[np.isfinite(values)]
            n_rows[name] = len(values)
            if len(values) == 0:
                continue
            qs = np.quantile(values, np.linspace(0, 1, policy.PSI_BINS + 1)[1:-1])
            e = np.unique(qs)
            edges[name] = e
            props[name] = _bin_shares(values, e)
        labels = pool[CATEGORICAL_FEATURE].astype(str).to_numpy() if CATEGORICAL_FEATURE in pool else np.empty(0, str)
        classes, counts = np.unique(labels, return_counts=True)
        n_rows[CATEGORICAL_FEATURE] = len(labels)
        mix = counts / counts.sum() if len(labels) else np.empty(0)
        return cls(edges, props, tuple(str(c) for c in classes), mix, n_rows)


def _bin_shares(values: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.float64]:
    counts = np.bincount(np.searchsorted(edges, values, side="right"), minlength=len(edges) + 1)
    return counts / max(counts.sum(), 1)


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


def added_shift_score(added: float, feature: str) -> float:
    """Score in [0, 1] of the divergence a transformation added to one feature."""
    limit = policy.JS_ADDED_MAX if feature == CATEGORICAL_FEATURE else policy.PSI_ADDED_MAX
    if not math.isfinite(added):
        return 0.0
    return float(min(max(1.0 - max(added, 0.0) / limit, 0.0), 1.0))
