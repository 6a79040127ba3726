"""Counterfactual validity gate (SPEC §12): five deterministic checks, scores, acceptance and weights.

``validate_scenario(evidence) -> ValidityReport`` scores one sample
(:class:`~simready.validity.evidence.ScenarioEvidence`); ``weight_policy`` and
``apply_suite_weight_policy`` turn reports into evaluation weights. Every
constant lives in :mod:`simready.validity.policy` and every report records
its ``policy_version``. No model opinions: each check is arithmetic on the
trace, the detections and the reference pool.

The checks — :class:`GateCheck` objects in :data:`CHECKS`, run by one loop — each
return ``{check, passed, score ∈ [0, 1], detail}``:

1. ``physical`` — per-class speed (stored, and from position first
   differences) and acceleration (from position *second differences*, so a
   teleport is caught even when the stored velocity lies) against
   :data:`~simready.validity.policy.CLASS_LIMITS`; non-finite poses; rotated-
   rectangle footprint overlaps (shapely) *introduced* by the transformation:
   present in the ticks but not, for that pair at that tick, in the baseline
   (every overlap counts when there is no baseline). Overlaps after a
   contact the simulator recorded, and its actors' accelerations within
   that contact's window (from the tick before it began to the tick after
   it ended, as the trace's ``collision`` event records it), are explained,
   not violations, and within it a struck pedestrian or cyclist, carried by
   the vehicle, is held to the vehicle speed limit; outside any window a
   teleport or a velocity kick still is one. Score: :func:`~simready.validity.policy.headroom_score` of the
   worst utilisation (speed / limit, acceleration / limit, and 1 + overlap
   area / smaller footprint for an introduced overlap).
2. ``temporal`` — per actor and tick, |Δx − v̄·dt| with v̄ the mean of the
   stored velocities at both ends (exact for constant acceleration), against
   :data:`~simready.validity.policy.TEMPORAL_TOL_M` (grown by |Δv|·dt/2 inside a
   recorded contact's window, the most an impulse anywhere in the tick can
   move the trapezoid rule); time must advance by dt per tick. Score: headroom of the worst error / tolerance.
3. ``sensor`` — camera vs LiDAR position agreement for the same instance
   on the ground plane (the camera row carries the body origin, on the
   ground; the LiDAR row the centroid of the returns, up the body's side, so
   their heights are not comparable) (camera frame and LiDAR sweep within
   :data:`~simready.validity.policy.SENSOR_PAIR_MAX_DT_S`, tolerance grown by
   both positions' extents and the distance the actor moves in the time
   offset), and condition expectations over the same paired opportunities:
   at night the camera detection rate may not exceed the LiDAR rate; in rain
   LiDAR must be attenuated (fewer returns per sweep, else a lower detection
   rate) against a dry reference when one is given. Score: the minimum of
   the agreeing fraction and each expectation's score (1 met, 0 violated).
   Without sensor evidence, or without any pair to compare, the agreement
   score is :data:`~simready.validity.policy.SENSOR_ABSENT_SCORE` (0: no
   evidence, no credit), which makes trajectory-only samples low-fidelity.
4. ``identity`` — unique ids per frame, a stable class per id (a per-row
   class column, when the ticks have one, against itself and the declared
   class), every id declared, no id teleports (a jump beyond
   max_speed·Δt + :data:`~simready.validity.policy.ID_JUMP_MARGIN_M` between
   consecutive observations, gaps included). Score: share of ids without a
   violation.
5. ``distribution`` — PSI / JS divergence of the features
   (:mod:`simready.validity.features`) against the reference pool; the shift
   the transformation *added* is divergence(ticks) − divergence(baseline),
   clipped at 0 (the baseline's divergence is 0 when there is no baseline).
   Score: the mean over features of 1 − added / max; without a pool
   :data:`~simready.validity.policy.REALISM_ABSENT_SCORE`.

fidelity = 0.4·physical + 0.3·temporal + 0.3·sensor; realism = distribution;
validity = 0.5·fidelity + 0.2·identity + 0.3·realism. Accepted iff physical
and temporal pass and validity ≥ 0.50. Weight: 0 rejected, 1.0 at fidelity
≥ 0.80, else capped at 0.30; a suite's low-fidelity share of the total weight
is capped at 0.25 by f = 0.25·W_high / (0.75·W_low).

Reasons name the actor (or feature / condition) and the number, e.g.
``actor ped_1: speed 6.00 m/s exceeds pedestrian limit 3.50 m/s at t=2.40 s``.
Motion is planar (x, y): height follows the ground and is the physics' business.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from simready.errors import SimreadyError
from simready.validity import features as feat
from simready.validity import policy
from simready.validity.evidence import (
    ROW_CLASS_COLUMNS,
    Collision,
    DryReference,
    EvidenceError,
    MissingStageError,
    ScenarioEvidence,
    SensorEvidence,
    evidence_from_sample_dir,
    local_actor_id,
)

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

CheckName = Literal["physical", "temporal", "sensor", "identity", "distribution"]
F = NDArray[np.float64]


class SuiteError(SimreadyError):
    kind = "suite"


class PolicyVersionError(SuiteError):
    """A suite's reports were scored under different (or other than the current) policy versions."""

    kind = "policy_version"


class CheckResult(BaseModel):
    """One check's outcome. ``detail`` is plain JSON: a summary, the violations and the figures behind the score."""

    model_config = ConfigDict(frozen=True)
    check: CheckName
    passed: bool
    score: float = Field(ge=0.0, le=1.0)
    detail: dict[str, Any]


class ValidityReport(BaseModel):
    """The gate's verdict on one sample (SPEC §12)."""

    model_config = ConfigDict(frozen=True)
    sample_id: str
    policy_version: str
    checks: list[CheckResult]
    fidelity: float = Field(ge=0.0, le=1.0)
    realism: float = Field(ge=0.0, le=1.0)
    validity: float = Field(ge=0.0, le=1.0)
    accepted: bool
    low_fidelity: bool
    weight: float = Field(ge=0.0, le=1.0)
    capped: bool
    reasons: list[str]

    def check(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.check == name)

    def scores(self) -> dict[str, float]:
        return {c.check: c.score for c in self.checks}

    @property
    def rejection_code(self) -> str | None:
        """Short machine-readable reason for the rejection log and coverage (None when accepted):
        the first failed required check (``physical`` | ``temporal``), else ``low_validity``."""
        if self.accepted:
            return None
        failed = [c.check for c in self.checks if c.check in policy.REQUIRED_CHECKS and not c.passed]
        return failed[0] if failed else "low_validity"


# --- shared preparation ---------------------------------------------------------


@dataclass(frozen=True)
class _Rows:
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


def _column(ticks: pd.DataFrame, name: str, default: float = math.nan) -> F:
    if name in ticks:
        return pd.to_numeric(ticks[name], errors="coerce").to_numpy(np.float64)
    return np.full(len(ticks), default)


def _prepare(ticks: pd.DataFrame) -> _Rows:
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
        return _column(ticks, name, default)[order]

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
    return _Rows(tuple(str(u) for u in uniques), code, tick, t, x, y, yaw, vx, vy, stored, present, finite_pose, valid,
                 row_class)


@dataclass(frozen=True)
class GateInput:
    """What the checks read: the evidence, and its ticks (and the baseline's, None without one) prepared once."""

    evidence: ScenarioEvidence
    rows: _Rows
    base: _Rows | None

    @classmethod
    def of(cls, evidence: ScenarioEvidence) -> GateInput:
        base = _prepare(evidence.baseline_ticks) if evidence.baseline_ticks is not None else None
        return cls(evidence, _prepare(evidence.ticks), base)


def _fmt_t(t: float) -> str:
    return f"t={t:.2f} s"


def _count(n: int, unit: str = "tick") -> str:
    return f" ({n} {unit}s)" if n > 1 else ""


class _Findings:
    """Violation texts of one check, keyed by actor, plus the worst utilisation seen."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.bad_units: set[str] = set()
        self.utilisation = 0.0
        self.notes: list[str] = []

    def add(self, unit: str, text: str, utilisation: float = math.inf) -> None:
        self.texts.append(text)
        self.bad_units.add(unit)
        self.see(utilisation)

    def see(self, utilisation: float) -> None:
        u = float(utilisation)
        if math.isnan(u):
            u = math.inf
        self.utilisation = max(self.utilisation, u)

    def detail(self, summary: str, **figures: Any) -> dict[str, Any]:
        return {
            "summary": summary,
            "violations": self.texts[: policy.MAX_REASONS_PER_CHECK],
            "n_violations": len(self.texts),
            "worst_utilisation": _json_number(self.utilisation),
            **({"notes": self.notes} if self.notes else {}),
            **figures,
        }


def _json_number(value: float) -> float | None:
    """Finite floats as they are (rounded), non-finite as None (JSON has no NaN)."""
    return round(float(value), 6) if math.isfinite(value) else None


def _limit_class(evidence_classes: Mapping[str, str], actor: str) -> tuple[str, policy.ClassLimit, bool]:
    """``(limit class name, limits, known)``; unknown classes get the most permissive limits (vehicle)."""
    declared = evidence_classes.get(actor)
    key = policy.limit_class(declared) if declared is not None else None
    if key is None:
        return "vehicle", policy.CLASS_LIMITS["vehicle"], False
    return key, policy.CLASS_LIMITS[key], True


def _contact_windows(collisions: Iterable[Collision], dt: float) -> dict[str, F]:
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


def _within(times: F, windows: F | None) -> NDArray[np.bool_]:
    """Which ``times`` fall in any of ``windows`` (inclusive, with a nanosecond of slack for the tick grid)."""
    if windows is None or len(windows) == 0:
        return np.zeros(len(times), bool)
    return ((times[:, None] >= windows[None, :, 0] - 1e-9) & (times[:, None] <= windows[None, :, 1] + 1e-9)).any(axis=1)


# --- 1. physical plausibility ---------------------------------------------------------


def _footprint_overlaps(rows: _Rows, dims: Mapping[str, tuple[float, float]]) -> dict[tuple[str, str], tuple[NDArray, F, F, F]]:
    """Per actor pair with footprints, ``(ticks, t, overlap area m², area / smaller footprint)`` where they overlap."""
    import shapely

    per_actor = rows.actor_rows()
    idx = {a: per_actor[c][rows.valid[per_actor[c]]] for c, a in enumerate(rows.names) if c in per_actor and a in dims}
    names = sorted(idx)
    out: dict[tuple[str, str], tuple[NDArray, F, F, F]] = {}
    for i, a in enumerate(names):
        la, wa = dims[a]
        for b in names[i + 1:]:
            lb, wb = dims[b]
            ra, rb = idx[a], idx[b]
            _, ia, ib = np.intersect1d(rows.tick[ra], rows.tick[rb], assume_unique=True, return_indices=True)
            if len(ia) == 0:
                continue
            ra, rb = ra[ia], rb[ib]
            reach = 0.5 * (math.hypot(la, wa) + math.hypot(lb, wb))
            near = np.hypot(rows.x[ra] - rows.x[rb], rows.y[ra] - rows.y[rb]) < reach
            if not near.any():
                continue
            ra, rb = ra[near], rb[near]
            area = shapely.area(shapely.intersection(_rectangles(rows, ra, la, wa), _rectangles(rows, rb, lb, wb)))
            hit = area > policy.OVERLAP_MIN_AREA_M2
            if hit.any():
                out[(a, b)] = (rows.tick[ra][hit], rows.t[ra][hit], area[hit], area[hit] / min(la * wa, lb * wb))
    return out


def _rectangles(rows: _Rows, r: NDArray[np.intp], length_m: float, width_m: float) -> Any:
    import shapely

    c, s = np.cos(rows.yaw[r]), np.sin(rows.yaw[r])
    hl, hw = 0.5 * length_m, 0.5 * width_m
    sl = np.array([1.0, -1.0, -1.0, 1.0, 1.0])
    sw = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    px = rows.x[r, None] + c[:, None] * hl * sl - s[:, None] * hw * sw
    py = rows.y[r, None] + s[:, None] * hl * sl + c[:, None] * hw * sw
    return shapely.polygons(np.stack([px, py], axis=-1))


def _finite_differences(rows: _Rows) -> tuple[F, F]:
    """Per row: planar speed from the previous position (first difference) and the magnitude of the
    acceleration from the neighbouring positions (second difference, non-uniform steps allowed); NaN
    where the neighbours are missing, absent or non-finite."""
    speed = np.full(len(rows.code), np.nan)
    accel = np.full(len(rows.code), np.nan)
    pairs = rows.consecutive()
    if len(pairs):
        h = rows.t[pairs + 1] - rows.t[pairs]
        with np.errstate(divide="ignore", invalid="ignore"):
            speed[pairs + 1] = np.hypot(rows.x[pairs + 1] - rows.x[pairs], rows.y[pairs + 1] - rows.y[pairs]) / h
    mid = pairs[1:][pairs[1:] - 1 == pairs[:-1]] if len(pairs) > 1 else pairs[:0]  # (i-1, i) and (i, i+1) both pairs
    if len(mid):
        d1 = rows.t[mid] - rows.t[mid - 1]
        d2 = rows.t[mid + 1] - rows.t[mid]
        with np.errstate(divide="ignore", invalid="ignore"):
            ax = 2.0 * ((rows.x[mid + 1] - rows.x[mid]) / d2 - (rows.x[mid] - rows.x[mid - 1]) / d1) / (d1 + d2)
            ay = 2.0 * ((rows.y[mid + 1] - rows.y[mid]) / d2 - (rows.y[mid] - rows.y[mid - 1]) / d1) / (d1 + d2)
        accel[mid] = np.hypot(ax, ay)
    return speed, accel


def _check_physical(g: GateInput) -> CheckResult:
    ev, rows, base = g.evidence, g.rows, g.base
    found = _Findings()
    if len(rows.code) == 0:
        found.add("", "no ticks: the trace is empty")
    speed_fd, accel = _finite_differences(rows)
    windows = _contact_windows(ev.collisions, ev.dt)
    unknown: list[str] = []
    for code, r in rows.actor_rows().items():
        actor = rows.names[code]
        cls, limit, known = _limit_class(ev.actor_classes, actor)
        if not known:
            unknown.append(actor)
        bad = r[rows.present[r] & ~rows.valid[r]]
        if len(bad):
            i = bad[0]
            what = next((f"{n}={v[i]}" for n, v in (("t", rows.t), ("x", rows.x), ("y", rows.y), ("orientation", rows.yaw))
                         if not math.isfinite(v[i])), "z or quaternion")
            found.add(actor, f"actor {actor}: non-finite pose ({what}) at {_tick_time(rows, i, ev.dt)}{_count(len(bad))}")
        r = r[rows.valid[r]]
        if len(r) == 0:
            continue
        stored = np.where(np.isnan(rows.speed[r]), 0.0, rows.speed[r])  # NaN: no stored speed; inf stays a violation
        fd = np.where(np.isfinite(speed_fd[r]), speed_fd[r], 0.0)
        speed = np.maximum(np.abs(stored), fd)
        exempt = _within(rows.t[r], windows.get(actor))
        # In a recorded contact a struck pedestrian moves with the vehicle that carries it: held to the vehicle limit.
        cap = np.where(exempt, max(limit.max_speed_mps, policy.CLASS_LIMITS["vehicle"].max_speed_mps), limit.max_speed_mps)
        found.see(float((speed / cap).max()))
        over = np.flatnonzero(speed > cap)
        if len(over):
            k = _first_worst(speed / cap, over)
            src = " (from positions)" if fd[k] > abs(stored[k]) + 1e-6 * max(abs(stored[k]), 1.0) else ""
            found.add(actor, f"actor {actor}: speed {speed[k]:.2f} m/s{src} exceeds {cls} limit "
                             f"{cap[k]:.2f} m/s at {_fmt_t(rows.t[r][k])}{_count(len(over))}",
                      speed[k] / cap[k])
        a = np.where(np.isfinite(accel[r]) & ~exempt, accel[r], 0.0)
        found.see(float(a.max()) / limit.max_accel_mps2)
        over = np.flatnonzero(a > limit.max_accel_mps2)
        if len(over):
            k = _first_worst(a, over)
            found.add(actor, f"actor {actor}: acceleration {a[k]:.1f} m/s² from positions exceeds {cls} limit "
                             f"{limit.max_accel_mps2:.1f} m/s² at {_fmt_t(rows.t[r][k])}{_count(len(over))}",
                      a[k] / limit.max_accel_mps2)
    if unknown:
        found.notes.append(f"no declared class for {', '.join(unknown)}: held to the vehicle limits")
    n_overlaps = _introduced_overlaps(ev, rows, base, found)
    no_dims = sorted(set(rows.names) - set(ev.actor_dims))
    if no_dims:
        found.notes.append(f"no footprint for {', '.join(no_dims)}: left out of the overlap check")
    passed = not found.texts
    score = policy.headroom_score(found.utilisation)
    summary = "within class limits, no introduced overlap" if passed else f"{len(found.texts)} violation(s)"
    return CheckResult(check="physical", passed=passed, score=_unit(score),
                       detail=found.detail(summary, introduced_overlaps=n_overlaps,
                                           baseline="given" if base is not None else "absent: every overlap counts"))


def _first_worst(values: F, candidates: NDArray[np.intp]) -> int:
    """The first of ``candidates`` whose value equals the worst up to rounding (stable "at t=" in reasons)."""
    v = values[candidates]
    worst = float(v.max())
    near = v == worst if not math.isfinite(worst) else v >= worst - 1e-9 * max(abs(worst), 1.0)
    return int(candidates[np.flatnonzero(near)[0]])


def _tick_time(rows: _Rows, i: int, dt: float) -> str:
    t = rows.t[i]
    return _fmt_t(t) if math.isfinite(t) else f"tick {rows.tick[i]} (t≈{rows.tick[i] * dt:.2f} s)"


def _introduced_overlaps(ev: ScenarioEvidence, rows: _Rows, base: _Rows | None, found: _Findings) -> int:
    """Record overlaps present in ``rows`` but not in the baseline and not explained by a recorded contact."""
    if not ev.actor_dims:
        return 0
    current = _footprint_overlaps(rows, ev.actor_dims)
    if not current:
        return 0
    before = _footprint_overlaps(base, ev.actor_dims) if base is not None else {}
    n = 0
    for (a, b), (ticks, t, area, ratio) in sorted(current.items()):
        new = ~np.isin(ticks, before[(a, b)][0]) if (a, b) in before else np.ones(len(ticks), bool)
        # Once the simulator recorded a contact of the pair (or of either with the world), the bodies touch.
        contacts = [c.t_s for c in ev.collisions if {c.a, c.b} == {a, b} or (c.b is None and c.a in (a, b))]
        if contacts:
            new &= t + policy.COLLISION_EXEMPT_S < min(contacts)
        if not new.any():
            continue
        n += 1
        k = np.flatnonzero(new)[np.argmax(area[new])]
        origin = "not in the baseline" if base is not None else "no baseline to explain it"
        found.add(f"{a}|{b}", f"actors {a} and {b}: footprints overlap {area[k]:.2f} m² at {_fmt_t(t[k])}, "
                              f"{origin}{_count(int(new.sum()))}", 1.0 + float(ratio[k]))
    return n


# --- 2. temporal consistency ---------------------------------------------------------


def _check_temporal(g: GateInput) -> CheckResult:
    ev, rows = g.evidence, g.rows
    found = _Findings()
    windows = _contact_windows(ev.collisions, ev.dt)
    pairs = rows.consecutive()
    per_actor_pairs: dict[int, NDArray[np.intp]] = {}
    if len(pairs):
        codes = rows.code[pairs]
        for c in np.unique(codes):
            per_actor_pairs[int(c)] = pairs[codes == c]
    evaluated = 0
    for code, p in sorted(per_actor_pairs.items()):
        actor = rows.names[code]
        q = p + 1
        dt_pair = rows.t[q] - rows.t[p]
        step_bad = np.flatnonzero(~(np.abs(dt_pair - ev.dt) <= 1e-6 * max(1.0, ev.dt)))
        if len(step_bad):
            k = step_bad[0]
            found.add(actor, f"actor {actor}: time advances {dt_pair[k]:.4f} s in one tick (dt {ev.dt:.4f} s) "
                             f"at {_fmt_t(rows.t[q][k])}{_count(len(step_bad))}")
        vel_ok = np.isfinite(rows.vx[p]) & np.isfinite(rows.vy[p]) & np.isfinite(rows.vx[q]) & np.isfinite(rows.vy[q])
        if not vel_ok.all():
            k = np.flatnonzero(~vel_ok)[0]
            found.add(actor, f"actor {actor}: non-finite velocity at {_fmt_t(rows.t[q][k])}{_count(int((~vel_ok).sum()))}")
        good = np.flatnonzero(vel_ok)
        if len(good) == 0:
            continue
        p, q, h = p[good], q[good], dt_pair[good]
        ex = rows.x[q] - rows.x[p] - 0.5 * (rows.vx[p] + rows.vx[q]) * h
        ey = rows.y[q] - rows.y[p] - 0.5 * (rows.vy[p] + rows.vy[q]) * h
        err = np.hypot(ex, ey)
        # In a recorded contact the velocity jumps within the tick; wherever in the tick a jump |Δv| happens,
        # the trapezoid rule is off by at most |Δv|·dt/2, which the tolerance grows by there (and only there).
        contact = _within(rows.t[q], windows.get(actor)) & _within(rows.t[p], windows.get(actor))
        tol = policy.TEMPORAL_TOL_M + np.where(
            contact, 0.5 * h * np.hypot(rows.vx[q] - rows.vx[p], rows.vy[q] - rows.vy[p]), 0.0)
        evaluated += len(err)
        found.see(float((err / tol).max()))
        over = np.flatnonzero(err > tol)
        if len(over):
            k = over[np.argmax(err[over] / tol[over])]
            found.add(actor, f"actor {actor}: |Δx − v·dt| = {err[k]:.2f} m exceeds {tol[k]:.2f} m "
                             f"at {_fmt_t(rows.t[q][k])}{_count(len(over))}", err[k] / tol[k])
    skipped = int((rows.present & ~rows.valid).sum())
    if skipped:
        found.notes.append(f"{skipped} tick(s) with a non-finite pose or time are not evaluated")
    if evaluated == 0 and not found.texts:
        found.add("", "no consecutive ticks to compare positions and velocities")
    passed = not found.texts
    return CheckResult(check="temporal", passed=passed, score=_unit(policy.headroom_score(found.utilisation)),
                       detail=found.detail("positions follow the stored velocities" if passed else f"{len(found.texts)} violation(s)",
                                           ticks_evaluated=evaluated, tolerance_m=policy.TEMPORAL_TOL_M))


# --- 3. sensor consistency -----------------------------------------------------------


def _speed_lookup(rows: _Rows) -> dict[str, tuple[F, F]]:
    out = {}
    for code, r in rows.actor_rows().items():
        r = r[rows.valid[r]]
        out[local_actor_id(rows.names[code])] = (rows.t[r], np.where(np.isfinite(rows.speed[r]), rows.speed[r], 0.0))
    return out


def _paired_opportunities(det: pd.DataFrame) -> pd.DataFrame:
    """Camera rows joined to the LiDAR rows of the same actor whose sweep is nearest in time (within the pair window)."""
    cam = det[det["sensor_type"] == "camera"]
    lid = det[det["sensor_type"] == "lidar"]
    if cam.empty or lid.empty:
        return pd.DataFrame()
    lid_times = np.unique(lid["t"].to_numpy(np.float64))
    lid_times = lid_times[np.isfinite(lid_times)]
    if len(lid_times) == 0:
        return pd.DataFrame()
    ct = cam["t"].to_numpy(np.float64)
    i = np.clip(np.searchsorted(lid_times, ct), 1, len(lid_times)) - 1
    j = np.clip(i + 1, 0, len(lid_times) - 1)
    nearest = np.where(np.abs(lid_times[j] - ct) < np.abs(lid_times[i] - ct), lid_times[j], lid_times[i])
    cam = cam.rename(columns={"t": "t_cam"}).assign(t_lidar=nearest)
    cam = cam[np.abs(nearest - ct) <= policy.SENSOR_PAIR_MAX_DT_S]
    lid = lid.rename(columns={"t": "t_lidar"})
    return cam.merge(lid, on=["t_lidar", "actor_id"], suffixes=("_cam", "_lid"))


def _check_sensor(g: GateInput) -> CheckResult:
    ev, rows = g.evidence, g.rows
    found = _Findings()
    sensor = ev.sensor
    if sensor is None:
        found.notes.append(f"no sensor evidence: score {policy.SENSOR_ABSENT_SCORE} (SENSOR_ABSENT_SCORE), "
                           "so this sample counts as low-fidelity evidence")
        return CheckResult(check="sensor", passed=True, score=_unit(policy.SENSOR_ABSENT_SCORE),
                           detail=found.detail("no sensor evidence: camera/LiDAR consistency unverified",
                                               evidence="absent", sub_scores={}))
    found.notes.extend(sensor.notes)
    det = sensor.detections
    sub: dict[str, float] = {}
    figures: dict[str, Any] = {"evidence": "present", "illumination": sensor.illumination, "weather": sensor.weather}
    if ev.ego_id is not None:  # the ego does not observe itself
        det = det[det["actor_id"] != local_actor_id(ev.ego_id)]
    paired = _paired_opportunities(det)
    figures["paired_opportunities"] = len(paired)

    # Position agreement of the same instance seen by both.
    both = paired[paired["detected_cam"].astype(bool) & paired["detected_lid"].astype(bool)] if len(paired) else paired
    if len(both):
        # Ground-plane distance: a body origin (camera row) and a surface centroid (LiDAR row) differ in height by design.
        pc = both[["x_cam", "y_cam"]].to_numpy(np.float64)
        pl = both[["x_lid", "y_lid"]].to_numpy(np.float64)
        diff = pc - pl
        dist = np.sqrt((diff * diff).sum(axis=1))
        comparable = np.isfinite(dist)
    else:
        dist = np.empty(0)
        comparable = np.zeros(0, bool)
    if comparable.any():
        b = both[comparable]
        dist = dist[comparable]
        speeds = _speed_lookup(rows)
        t_cam = b["t_cam"].to_numpy(np.float64)
        moved = _speeds_at(speeds, b["actor_id"].to_numpy(), t_cam) * np.abs(t_cam - b["t_lidar"].to_numpy(np.float64))
        tol = policy.SENSOR_POSITION_TOL_M + b["extent_m_cam"].to_numpy(np.float64) + b["extent_m_lid"].to_numpy(np.float64) + moved
        agree = dist <= tol
        frac = float(agree.mean())
        sub["position_agreement"] = frac
        figures["positions_compared"] = int(len(dist))
        figures["positions_agreeing"] = int(agree.sum())
        found.see(float((dist / tol).max()))
        if frac < policy.SENSOR_AGREEMENT_MIN_FRACTION:
            worst_by_actor = defaultdict(lambda: (-1.0, 0.0, 0.0, 0))
            for a, d, tl, t_c, ok in zip(b["actor_id"], dist, tol, b["t_cam"], agree):
                if not ok:
                    w = worst_by_actor[a]
                    worst_by_actor[a] = max(w[:3], (d, tl, t_c)) + (w[3] + 1,)
            for a, (d, tl, t_c, n) in sorted(worst_by_actor.items()):
                found.add(a, f"actor {a}: camera and LiDAR positions differ by {d:.2f} m at {_fmt_t(t_c)} "
                             f"(tolerance {tl:.2f} m){_count(n, 'frame')}; {frac:.0%} of pairs agree, "
                             f"{policy.SENSOR_AGREEMENT_MIN_FRACTION:.0%} needed", d / tl)
    else:
        sub["position_agreement"] = policy.SENSOR_ABSENT_SCORE
        found.notes.append("no instance detected by both camera and LiDAR with known positions: agreement unverified, "
                           f"score {policy.SENSOR_ABSENT_SCORE}")

    if len(paired):
        cam_det = paired["detected_cam"].astype(bool).to_numpy()
        lid_det = paired["detected_lid"].astype(bool).to_numpy()
        figures["camera_rate"] = round(float(cam_det.mean()), 6)
        figures["lidar_rate"] = round(float(lid_det.mean()), 6)
        if sensor.illumination == "night":
            sub["night_camera_below_lidar"] = _night_expectation(paired, cam_det, lid_det, found)
    if sensor.weather == "rain":
        if sensor.dry_reference is None:
            found.notes.append("rain without a dry reference: LiDAR attenuation not checked")
        else:
            sub["rain_attenuates_lidar"] = _rain_expectation(det, sensor, found)
    score = min(sub.values())
    figures["sub_scores"] = {k: round(v, 6) for k, v in sub.items()}
    passed = not found.texts
    summary = "camera and LiDAR agree" if passed else f"{len(found.texts)} inconsistency(ies)"
    return CheckResult(check="sensor", passed=passed, score=_unit(score), detail=found.detail(summary, **figures))


def _speeds_at(tracks: Mapping[str, tuple[F, F]], actors: NDArray, t: F) -> F:
    """Each row's actor speed at the nearest tick at or after ``t`` (0 where unknown)."""
    out = np.zeros(len(t))
    for a in np.unique(actors):
        track = tracks.get(str(a))
        m = actors == a
        if track is None or len(track[0]) == 0:
            continue
        i = np.clip(np.searchsorted(track[0], np.nan_to_num(t[m])), 0, len(track[0]) - 1)
        out[m] = track[1][i]
    return out


def _night_expectation(paired: pd.DataFrame, cam_det: NDArray, lid_det: NDArray, found: _Findings) -> float:
    cam_rate, lid_rate = float(cam_det.mean()), float(lid_det.mean())
    if cam_rate <= lid_rate:
        return 1.0
    actors = paired["actor_id"].to_numpy()
    excess = {}
    for a in np.unique(actors):
        m = actors == a
        excess[a] = (int(cam_det[m].sum()) - int(lid_det[m].sum()), int(cam_det[m].sum()), int(lid_det[m].sum()), int(m.sum()))
    worst = max(sorted(excess), key=lambda a: excess[a][0])
    _, c, lidar_n, n = excess[worst]
    found.add(worst, f"night: camera detection rate {cam_rate:.2f} exceeds LiDAR rate {lid_rate:.2f} "
                     f"(actor {worst}: camera {c}/{n} vs LiDAR {lidar_n}/{n} paired frames)")
    return policy.SENSOR_CONDITION_FAIL_SCORE


def _rain_expectation(det: pd.DataFrame, sensor: SensorEvidence, found: _Findings) -> float:
    ref = sensor.dry_reference
    assert ref is not None
    if ref.returns_per_sweep is not None and sensor.lidar_returns_per_sweep is not None:
        now, before, what = sensor.lidar_returns_per_sweep, ref.returns_per_sweep, "returns per sweep"
    else:
        lid = det[det["sensor_type"] == "lidar"]
        if lid.empty or ref.detection_rate is None:
            found.notes.append("rain: no LiDAR rate on one side: attenuation not checked")
            return 1.0
        now, before, what = float(lid["detected"].astype(bool).mean()), ref.detection_rate, "detection rate"
    if now < before:
        return 1.0
    found.add("lidar", f"rain: LiDAR {what} {now:.2f} is not below the dry reference {before:.2f}")
    return policy.SENSOR_CONDITION_FAIL_SCORE


# --- 4. identity -----------------------------------------------------------------------


def _check_identity(g: GateInput) -> CheckResult:
    ev, rows = g.evidence, g.rows
    found = _Findings()
    ticks = ev.ticks
    ids = ticks["actor_id"].astype(str)
    dup_mask = pd.DataFrame({"tick": ticks["tick"].to_numpy(), "actor_id": ids.to_numpy()}).duplicated(keep=False).to_numpy()
    if dup_mask.any():
        dups = pd.DataFrame({"tick": ticks["tick"].to_numpy()[dup_mask], "actor_id": ids.to_numpy()[dup_mask],
                             "t": _column(ticks, "t")[dup_mask]})
        for actor, g in dups.groupby("actor_id", sort=True):
            per_tick = g.groupby("tick", sort=True).size()
            k = int(per_tick.index[0])
            t0 = float(g.loc[g["tick"] == k, "t"].iloc[0])
            found.add(str(actor), f"actor {actor}: id appears {int(per_tick.iloc[0])} times in frame tick {k} "
                                  f"({_fmt_t(t0)}){_count(len(per_tick), 'frame')}")
    declared = ev.actor_classes
    for actor in rows.names:
        if actor not in declared:
            found.add(actor, f"actor {actor}: id not declared among the scenario's {len(declared)} actors")
    if rows.row_class is not None:
        for code, r in rows.actor_rows().items():
            actor = rows.names[code]
            classes = rows.row_class[r]
            change = np.flatnonzero(classes[1:] != classes[:-1])
            if len(change):
                k = r[change[0] + 1]
                found.add(actor, f"actor {actor}: class changes {classes[change[0]]} → {rows.row_class[k]} at "
                                 f"{_tick_time(rows, k, ev.dt)} ({len(np.unique(classes))} classes over {len(r)} ticks)")
            elif actor in declared and len(r) and not _same_class(str(classes[0]), declared[actor]):
                found.add(actor, f"actor {actor}: class {classes[0]} in the trace, {declared[actor]} declared "
                                 f"({len(r)} ticks)")
    # Consecutive valid observations of one id, across absences and non-finite ticks.
    seen = np.flatnonzero(rows.valid)
    prev, nxt = seen[:-1], seen[1:]
    same = rows.code[prev] == rows.code[nxt]
    prev, nxt = prev[same], nxt[same]
    if len(prev):
        dt_pair = np.abs(rows.t[nxt] - rows.t[prev])
        jump = np.hypot(rows.x[nxt] - rows.x[prev], rows.y[nxt] - rows.y[prev])
        codes = rows.code[prev]
        for c in np.unique(codes):
            actor = rows.names[int(c)]
            cls, limit, _ = _limit_class(declared, actor)
            m = np.flatnonzero(codes == c)
            allowed = limit.max_speed_mps * dt_pair[m] + policy.ID_JUMP_MARGIN_M
            over = np.flatnonzero(jump[m] > allowed)
            if len(over):
                k = m[_first_worst(jump[m] - allowed, over)]
                found.add(actor, f"actor {actor}: id jumps {jump[k]:.2f} m in {dt_pair[k]:.2f} s at "
                                 f"{_fmt_t(rows.t[nxt[k]])} ({cls} allows "
                                 f"{limit.max_speed_mps * dt_pair[k] + policy.ID_JUMP_MARGIN_M:.2f} m)"
                                 f"{_count(len(over), 'jump')}")
    n_ids = max(len(set(rows.names) | set(declared)), 1)
    bad = {u for u in found.bad_units if u}
    score = 1.0 - len(bad) / n_ids
    passed = not found.texts
    summary = f"{n_ids} ids unique, stable and continuous" if passed else f"{len(bad)} of {n_ids} ids with violations"
    detail = found.detail(summary, ids=n_ids, ids_with_violations=sorted(bad))
    detail.pop("worst_utilisation")
    return CheckResult(check="identity", passed=passed, score=_unit(score), detail=detail)


def _same_class(row_class: str, declared: str) -> bool:
    return row_class == declared or policy.limit_class(row_class) == policy.limit_class(declared) is not None


# --- 5. distribution similarity -----------------------------------------------------------


def _check_distribution(g: GateInput) -> CheckResult:
    ev = g.evidence
    found = _Findings()
    pool = ev.reference_pool
    if pool is None:
        found.notes.append(f"no reference pool: score {policy.REALISM_ABSENT_SCORE} (REALISM_ABSENT_SCORE)")
        detail = found.detail("no reference pool: realism unmeasured", pool="absent")
        detail.pop("worst_utilisation")
        return CheckResult(check="distribution", passed=True, score=_unit(policy.REALISM_ABSENT_SCORE), detail=detail)
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
                          pool="given", baseline="given" if ev.baseline_ticks is not None else "absent: absolute divergence",
                          features=per_feature)
    detail.pop("worst_utilisation")
    return CheckResult(check="distribution", passed=passed, score=_unit(score), detail=detail)


def _opt(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# --- the gate ------------------------------------------------------------------------------


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
        GateCheck("physical", 1, _check_physical),
        GateCheck("temporal", 2, _check_temporal),
        GateCheck("sensor", 3, _check_sensor),
        GateCheck("identity", 4, _check_identity),
        GateCheck("distribution", 5, _check_distribution),
    ],
    key=lambda c: c.order,
))
CHECK_NAMES: tuple[CheckName, ...] = tuple(c.name for c in CHECKS)


def _unit(x: float) -> float:
    """Clamp to [0, 1]; non-finite is 0 (a score never crashes a report)."""
    x = float(x)
    return min(max(x, 0.0), 1.0) if math.isfinite(x) else 0.0


def weight_policy(accepted: bool, fidelity: float) -> tuple[float, bool]:
    """``(weight, capped)``: 0 if rejected, 1.0 at fidelity ≥ 0.80, else the low-fidelity cap 0.30."""
    if not accepted:
        return policy.REJECTED_WEIGHT, False
    if not math.isfinite(fidelity):
        raise ValueError(f"fidelity must be finite, got {fidelity!r}")
    if fidelity >= policy.HIGH_FIDELITY_MIN:
        return policy.ACCEPTED_WEIGHT, False
    return min(policy.ACCEPTED_WEIGHT, policy.LOW_FIDELITY_WEIGHT_CAP), True


def validate_scenario(evidence: ScenarioEvidence) -> ValidityReport:
    """Run the five checks on one sample and decide acceptance and weight (SPEC §12)."""
    inputs = GateInput.of(evidence)
    checks = [c.check(inputs) for c in CHECKS]
    s = {c.check: c.score for c in checks}
    fidelity = _unit(sum(w * s[k] for k, w in policy.FIDELITY_WEIGHTS.items()))
    realism = s["distribution"]
    parts = {"fidelity": fidelity, "identity": s["identity"], "realism": realism}
    validity = _unit(sum(w * parts[k] for k, w in policy.VALIDITY_WEIGHTS.items()))
    required_ok = all(c.passed for c in checks if c.check in policy.REQUIRED_CHECKS)
    accepted = required_ok and validity >= policy.ACCEPT_MIN_VALIDITY
    weight, capped = weight_policy(accepted, fidelity)
    reasons: list[str] = []
    for c in checks:
        reasons.extend(f"{c.check}: {text}" for text in c.detail.get("violations", []))
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
