"""Check 1, ``physical``: per-class speed and acceleration limits, finite poses, introduced footprint overlaps.

Per-class speed (stored, and from position first differences) and acceleration
(from position *second differences*, so a teleport is caught even when the
stored velocity lies) against :data:`~simready.validity.policy.CLASS_LIMITS`;
non-finite poses; rotated- rectangle footprint overlaps (shapely) *introduced*
by the transformation: present in the ticks but not, for that pair at that
tick, in the baseline (every overlap counts when there is no baseline).
Overlaps after a contact the simulator recorded, and its actors' accelerations
within that contact's window (from the tick before it began to the tick after
it ended, as the trace's ``collision`` event records it), are explained, not
violations, and within it a struck pedestrian or cyclist, carried by the
vehicle, is held to the vehicle speed limit; outside any window a teleport or
a velocity kick still is one. Score:
:func:`~simready.validity.policy.headroom_score` of the worst utilisation
(speed / limit, acceleration / limit, and 1 + overlap area / smaller footprint
for an introduced overlap).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray
import shapely

from simready.validity import policy
from simready.validity.evidence import ScenarioEvidence
from simready.validity.gate.findings import Findings, clamp_score, count_suffix, first_worst, fmt_t, tick_time
from simready.validity.gate.inputs import F, GateInput, Rows, contact_windows, limit_class, within
from simready.validity.gate.report import CheckResult
from simready.world.frames import footprint_corners


def _footprint_overlaps(rows: Rows, dims: Mapping[str, tuple[float, float]]) -> dict[tuple[str, str], tuple[NDArray[Any], F, F, F]]:
    """Per actor pair with footprints, ``(ticks, t, overlap area m², area / smaller footprint)`` where they overlap."""
    per_actor = rows.actor_rows()
    idx = {a: per_actor[c][rows.valid[per_actor[c]]] for c, a in enumerate(rows.names) if c in per_actor and a in dims}
    names = sorted(idx)
    out: dict[tuple[str, str], tuple[NDArray[Any], F, F, F]] = {}
    # Pairs whose paths' bounding boxes lie farther apart than their reach in x or y are never near (|dx| ≤ the
    # distance, and the rounded differences keep the order): skipped before their ticks are matched, the same pairs
    # found (the heavy-traffic samples' ~4 000 pairs a trace, most of them far apart). NaN compares false: kept.
    half_diag = np.array([math.hypot(*dims[a]) for a in names])
    box = np.array([[np.min(rows.x[idx[a]]), np.max(rows.x[idx[a]]), np.min(rows.y[idx[a]]), np.max(rows.y[idx[a]])]
                    if len(idx[a]) else [np.nan] * 4 for a in names]).reshape(-1, 4)
    reach_all = 0.5 * (half_diag[:, None] + half_diag[None, :])
    gap_x = np.maximum(box[None, :, 0] - box[:, None, 1], box[:, None, 0] - box[None, :, 1])
    gap_y = np.maximum(box[None, :, 2] - box[:, None, 3], box[:, None, 2] - box[None, :, 3])
    apart = (gap_x > reach_all) | (gap_y > reach_all)
    for i, a in enumerate(names):
        la, wa = dims[a]
        for j in range(i + 1, len(names)):
            if apart[i, j]:
                continue
            b = names[j]
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


def _rectangles(rows: Rows, r: NDArray[np.intp], length_m: float, width_m: float) -> Any:
    """The footprints of rows ``r`` as shapely polygons (:func:`~simready.world.frames.footprint_corners`)."""
    return shapely.polygons(footprint_corners(rows.x[r], rows.y[r], rows.yaw[r], 0.5 * length_m, 0.5 * width_m))


def _finite_differences(rows: Rows) -> tuple[F, F]:
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


def check_physical(g: GateInput) -> CheckResult:
    ev, rows, base = g.evidence, g.rows, g.base
    found = Findings()
    if len(rows.code) == 0:
        found.add("", "no ticks: the trace is empty")
    speed_fd, accel = _finite_differences(rows)
    windows = contact_windows(ev.collisions, ev.dt)
    unknown: list[str] = []
    for code, r in rows.actor_rows().items():
        actor = rows.names[code]
        cls, limit, known = limit_class(ev.actor_classes, actor)
        if not known:
            unknown.append(actor)
        bad = r[rows.present[r] & ~rows.valid[r]]
        if len(bad):
            i = bad[0]
            what = next((f"{n}={v[i]}" for n, v in (("t", rows.t), ("x", rows.x), ("y", rows.y), ("orientation", rows.yaw))
                         if not math.isfinite(v[i])), "z or quaternion")
            found.add(actor, f"actor {actor}: non-finite pose ({what}) at {tick_time(rows, i, ev.dt)}{count_suffix(len(bad))}")
        r = r[rows.valid[r]]
        if len(r) == 0:
            continue
        stored = np.where(np.isnan(rows.speed[r]), 0.0, rows.speed[r])  # NaN: no stored speed; inf stays a violation
        fd = np.where(np.isfinite(speed_fd[r]), speed_fd[r], 0.0)
        speed = np.maximum(np.abs(stored), fd)
        exempt = within(rows.t[r], windows.get(actor))
        # In a recorded contact a struck pedestrian moves with the vehicle that carries it: held to the vehicle limit.
        cap = np.where(exempt, max(limit.max_speed_mps, policy.CLASS_LIMITS["vehicle"].max_speed_mps), limit.max_speed_mps)
        found.see(float((speed / cap).max()))
        over = np.flatnonzero(speed > cap)
        if len(over):
            k = first_worst(speed / cap, over)
            src = " (from positions)" if fd[k] > abs(stored[k]) + 1e-6 * max(abs(stored[k]), 1.0) else ""
            found.add(actor, f"actor {actor}: speed {speed[k]:.2f} m/s{src} exceeds {cls} limit "
                             f"{cap[k]:.2f} m/s at {fmt_t(rows.t[r][k])}{count_suffix(len(over))}",
                      speed[k] / cap[k])
        a = np.where(np.isfinite(accel[r]) & ~exempt, accel[r], 0.0)
        found.see(float(a.max()) / limit.max_accel_mps2)
        over = np.flatnonzero(a > limit.max_accel_mps2)
        if len(over):
            k = first_worst(a, over)
            found.add(actor, f"actor {actor}: acceleration {a[k]:.1f} m/s² from positions exceeds {cls} limit "
                             f"{limit.max_accel_mps2:.1f} m/s² at {fmt_t(rows.t[r][k])}{count_suffix(len(over))}",
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
    return CheckResult(check="physical", passed=passed, score=clamp_score(score),
                       detail=found.detail(summary, introduced_overlaps=n_overlaps,
                                           baseline="given" if base is not None else "absent: every overlap counts"))


def _introduced_overlaps(ev: ScenarioEvidence, rows: Rows, base: Rows | None, found: Findings) -> int:
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
        found.add(f"{a}|{b}", f"actors {a} and {b}: footprints overlap {area[k]:.2f} m² at {fmt_t(t[k])}, "
                              f"{origin}{count_suffix(int(new.sum()))}", 1.0 + float(ratio[k]))
    return n
