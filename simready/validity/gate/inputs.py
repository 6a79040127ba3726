"""What the gate's checks read: the evidence's ticks prepared once as arrays (:class:`GateInput`), the declared
classes' limits, and the time windows of the contacts the simulator recorded."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from simready.validity import features as feat
from simready.validity import policy
from simready.validity.evidence import ROW_CLASS_COLUMNS, Collision, ScenarioEvidence

F = NDArray[np.float64]


@dataclass(frozen=True)
class Rows:
    """A ticks table sorted by (actor, tick), one row per (actor, tick), as arrays.

    ``code`` indexes ``names``; ``valid`` = present with finite t and pose.
    """

    names: tuple[str, ...]
    code: NDArray[np.int64]
    tick: NDArray[np.int64]
    t: F
    x: F
    y: F
    yaw: F
    vx: F
    vy: F
    speed: F
    present: NDArray[np.bool_]
    finite_pose: NDArray[np.bool_]
    valid: NDArray[np.bool_]
    row_class: NDArray[np.object_] | None

    def consecutive(self, *, same_tick_step: bool = True) -> NDArray[np.intp]:
        """Indices i with rows i and i+1 of one actor, both valid (and one tick apart)."""
        if len(self.code) < 2:
            return np.empty(0, np.intp)
        ok = (self.code[1:] == self.code[:-1]) & self.valid[1:] & self.valid[:-1]
        if same_tick_step:
            ok &= (self.tick[1:] - self.tick[:-1]) == 1
        return np.flatnonzero(ok)

    def actor_rows(self) -> dict[int, NDArray[np.intp]]:
        bounds = np.flatnonzero(np.diff(self.code)) + 1
        starts = np.concatenate([[0], bounds])
        ends = np.concatenate([bounds, [len(self.code)]])
        return {int(self.code[s]): np.arange(s, e) for s, e in zip(starts, ends) if e > s}


def column(ticks: pd.DataFrame, name: str, default: float = math.nan) -> F:
    if name in ticks:
        return pd.to_numeric(ticks[name], errors="coerce").to_numpy(np.float64)  # type: ignore[no-any-return]
    return np.full(len(ticks), default)


def prepare_rows(ticks: pd.DataFrame) -> Rows:
    codes, uniques = pd.factorize(ticks["actor_id"].astype(str), sort=True)
    tick = pd.to_numeric(ticks["tick"], errors="coerce").fillna(-1).to_numpy(np.int64)
    order = np.lexsort((tick, codes))
    code = codes[order].astype(np.int64)
    tick = tick[order]
    keep = np.ones(len(order), bool)
    if len(order) > 1:
        keep[1:] = ~((code[1:] == code[:-1]) & (tick[1:] == tick[:-1]))
    order, code, tick = order[keep], code[keep], tick[keep]

    def col(name: str, default: float = math.nan) -> F:
        return column(ticks, name, default)[order]

    t, x, y = col("t"), col("x"), col("y")
    qx, qy, qz, qw = col("qx"), col("qy"), col("qz"), col("qw")
    vx, vy = col("vx"), col("vy")
    stored = col("speed_mps") if "speed_mps" in ticks else np.hypot(vx, vy)
    present = feat.present_column(ticks)[order]
    finite_pose = np.isfinite(x) & np.isfinite(y) & np.isfinite(qx) & np.isfinite(qy) & np.isfinite(qz) & np.isfinite(qw)
    if "z" in ticks:
        finite_pose &= np.isfinite(col("z"))
    valid = present & finite_pose & np.isfinite(t)
    with np.errstate(invalid="ignore"):
        yaw = feat.yaw_from_quaternion(qx, qy, qz, qw)
    class_col = next((c for c in ROW_CLASS_COLUMNS if c in ticks), None)
    row_class = ticks[class_col].astype(str).to_numpy(object)[order] if class_col else None
    return Rows(tuple(str(u) for u in uniques), code, tick, t, x, y, yaw, vx, vy, stored, present, finite_pose, valid,
                 row_class)


@dataclass(frozen=True)
class GateInput:
    """What the checks read: the evidence, and its ticks (and the baseline's, None without one) prepared once."""

    evidence: ScenarioEvidence
    rows: Rows
    base: Rows | None

    @classmethod
    def of(cls, evidence: ScenarioEvidence) -> GateInput:
        base = prepare_rows(evidence.baseline_ticks) if evidence.baseline_ticks is not None else None
        return cls(evidence, prepare_rows(evidence.ticks), base)


def limit_class(evidence_classes: Mapping[str, str], actor: str) -> tuple[str, policy.ClassLimit, bool]:
    """``(limit class name, limits, known)``; unknown classes get the most permissive limits (vehicle)."""
    declared = evidence_classes.get(actor)
    key = policy.limit_class(declared) if declared is not None else None
    if key is None:
        return "vehicle", policy.CLASS_LIMITS["vehicle"], False
    return key, policy.CLASS_LIMITS[key], True


def contact_windows(collisions: Iterable[Collision], dt: float) -> dict[str, F]:
    """Per actor, the (k, 2) time windows (s) of its recorded contacts: from one tick before each contact began to
    one tick after it ended (``t_end``; without one, :data:`~simready.validity.policy.COLLISION_EXEMPT_S` after it
    began), so both position differences around an impulse fall inside."""
    out: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for c in collisions:
        end = c.t_end_s if c.t_end_s is not None else c.t_s + policy.COLLISION_EXEMPT_S
        for actor in (c.a, c.b):
            if actor is not None:
                out[actor].append((c.t_s - dt, end + dt))
    return {k: np.asarray(sorted(v), float) for k, v in out.items()}


def within(times: F, windows: F | None) -> NDArray[np.bool_]:
    """Which ``times`` fall in any of ``windows`` (inclusive, with a nanosecond of slack for the tick grid)."""
    if windows is None or len(windows) == 0:
        return np.zeros(len(times), bool)
    return ((times[:, None] >= windows[None, :, 0] - 1e-9) & (times[:, None] <= windows[None, :, 1] + 1e-9)).any(axis=1)  # type: ignore[return-value]
