"""Check 2, ``temporal``: positions follow the stored velocities, time advances by dt.

Per actor and tick, |Δx − v̄·dt| with v̄ the mean of the stored velocities at
both ends (exact for constant acceleration), against
:data:`~simready.validity.policy.TEMPORAL_TOL_M` (grown by |Δv|·dt/2 inside a
recorded contact's window, the most an impulse anywhere in the tick can move
the trapezoid rule); time must advance by dt per tick. Score: headroom of the
worst error / tolerance.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from simready.validity import policy
from simready.validity.gate.findings import Findings, clamp_score, count_suffix, fmt_t
from simready.validity.gate.inputs import GateInput, contact_windows, within
from simready.validity.gate.report import CheckResult


def check_temporal(g: GateInput) -> CheckResult:
    ev, rows = g.evidence, g.rows
    found = Findings()
    windows = contact_windows(ev.collisions, ev.dt)
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
                             f"at {fmt_t(rows.t[q][k])}{count_suffix(len(step_bad))}")
        vel_ok = np.isfinite(rows.vx[p]) & np.isfinite(rows.vy[p]) & np.isfinite(rows.vx[q]) & np.isfinite(rows.vy[q])
        if not vel_ok.all():
            k = np.flatnonzero(~vel_ok)[0]
            found.add(actor, f"actor {actor}: non-finite velocity at {fmt_t(rows.t[q][k])}{count_suffix(int((~vel_ok).sum()))}")
        good = np.flatnonzero(vel_ok)
        if len(good) == 0:
            continue
        p, q, h = p[good], q[good], dt_pair[good]
        ex = rows.x[q] - rows.x[p] - 0.5 * (rows.vx[p] + rows.vx[q]) * h
        ey = rows.y[q] - rows.y[p] - 0.5 * (rows.vy[p] + rows.vy[q]) * h
        err = np.hypot(ex, ey)
        # In a recorded contact the velocity jumps within the tick; wherever in the tick a jump |Δv| happens,
        # the trapezoid rule is off by at most |Δv|·dt/2, which the tolerance grows by there (and only there).
        contact = within(rows.t[q], windows.get(actor)) & within(rows.t[p], windows.get(actor))
        tol = policy.TEMPORAL_TOL_M + np.where(
            contact, 0.5 * h * np.hypot(rows.vx[q] - rows.vx[p], rows.vy[q] - rows.vy[p]), 0.0)
        evaluated += len(err)
        found.see(float((err / tol).max()))
        over = np.flatnonzero(err > tol)
        if len(over):
            k = over[np.argmax(err[over] / tol[over])]
            found.add(actor, f"actor {actor}: |Δx − v·dt| = {err[k]:.2f} m exceeds {tol[k]:.2f} m "
                             f"at {fmt_t(rows.t[q][k])}{count_suffix(len(over))}", err[k] / tol[k])
    skipped = int((rows.present & ~rows.valid).sum())
    if skipped:
        found.notes.append(f"{skipped} tick(s) with a non-finite pose or time are not evaluated")
    if evaluated == 0 and not found.texts:
        found.add("", "no consecutive ticks to compare positions and velocities")
    passed = not found.texts
    return CheckResult(check="temporal", passed=passed, score=clamp_score(policy.headroom_score(found.utilisation)),
                       detail=found.detail("positions follow the stored velocities" if passed else f"{len(found.texts)} violation(s)",
                                           ticks_evaluated=evaluated, tolerance_m=policy.TEMPORAL_TOL_M))
