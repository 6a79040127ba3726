"""``evaluate_trace``: the deterministic acceptance gate of a trace (SPEC §0.7, §7).

Each check is a small object with a name, a severity and a function that
returns ``(passed, detail)``; they run in a fixed order and each becomes one
finding ``{check, severity, passed, detail}``. The verdict is ``reject`` iff
an ``error`` finding failed; ``info`` findings (collisions, triggers that
never fired) describe the outcome without judging it — a collision is what
many scenarios are for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simready.sim.storage.trace import TICK_COLUMNS, Trace

#: Largest plausible |acceleration| from velocity differences, by class (m/s²).
PLAUSIBLE_ACCEL = {"vehicle": 15.0, "cyclist": 10.0, "pedestrian": 10.0}
QUAT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Verdict:
    """``verdict``: ``accept`` | ``reject``; ``findings``: one dict per check, in order."""

    verdict: str
    findings: list[dict[str, Any]] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.verdict == "accept"

    def reasons(self) -> list[str]:
        """``check: detail`` of every failed error finding."""
        return [f"{f['check']}: {f['detail']}" for f in self.findings if f["severity"] == "error" and not f["passed"]]


@dataclass(frozen=True)
class Check:
    name: str
    severity: str
    run: Callable[[Trace], tuple[bool, str]]


def _completed(tr: Trace) -> tuple[bool, str]:
    term = tr.header.get("termination")
    if term:
        return False, f"rollout stopped at tick {term['tick']}: {term['reason']}"
    return True, "rollout ran to the end of the clip"


def _schema(tr: Trace) -> tuple[bool, str]:
    names = tr.ticks.column_names
    if tuple(names[: len(TICK_COLUMNS)]) != TICK_COLUMNS:
        return False, f"columns {names[: len(TICK_COLUMNS)]} differ from {list(TICK_COLUMNS)}"
    return True, f"{len(names)} columns"


def _grid(tr: Trace) -> tuple[bool, str]:
    h = tr.header
    ids = h["actor_ids"]
    n = len(ids)
    tick = tr.column("tick")
    want_rows = (h["clip_ticks"] + 1) * n
    if len(tick) != want_rows and not h.get("termination"):
        return False, f"{len(tick)} rows, expected {want_rows}"
    r = len(tick) // max(n, 1)
    expect_tick = np.repeat(np.arange(h["warmup_ticks"], h["warmup_ticks"] + r), n)
    if len(tick) != r * n or not np.array_equal(tick, expect_tick):
        return False, "rows are not one per (tick, actor) in tick order"
    actors = tr.column("actor_id")
    if not np.array_equal(actors, np.tile(np.array(ids, dtype=object), r)):
        return False, "actors are not sorted by id within a tick"
    t = tr.column("t")
    if not np.array_equal(t, (expect_tick - h["warmup_ticks"]) * h["dt"]):
        return False, "t is not (tick − warmup_ticks)·dt"
    return True, f"{r} ticks × {n} actors"


def _finite(tr: Trace) -> tuple[bool, str]:
    present = tr.column("present").astype(bool)
    for name in ("x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz"):
        col = tr.column(name)
        if not np.isfinite(col[present]).all():
            return False, f"non-finite {name}"
    q = np.stack([tr.column(c) for c in ("qx", "qy", "qz", "qw")], 1)[present]
    err = np.abs(np.linalg.norm(q, axis=1) - 1.0) if len(q) else np.zeros(1)
    if err.max() > QUAT_TOLERANCE:
        return False, f"quaternion norm off by {err.max():.2e}"
    return True, "finite poses and twists, unit quaternions"


def _bounds(tr: Trace) -> tuple[bool, str]:
    b = tr.header.get("bounds")
    if not b:
        return True, "no bounds in header"
    xmin, ymin, xmax, ymax = b
    margin = tr.header.get("bounds_margin_m", 0.0)
    present = tr.column("present").astype(bool)
    x, y = tr.column("x")[present], tr.column("y")[present]
    out = (x < xmin - margin) | (x > xmax + margin) | (y < ymin - margin) | (y > ymax + margin)
    return (not out.any()), ("every present pose within the map" if not out.any() else f"{int(out.sum())} poses out of bounds")


def _plausible(tr: Trace) -> tuple[bool, str]:
    h = tr.header
    ids, kinds = h["actor_ids"], h.get("actor_kinds", {})
    n = len(ids)
    if n == 0:
        return True, "no actors"
    r = len(tr.ticks) // n
    if r < 2:
        return True, "too short to difference"
    vx = tr.column("vx").reshape(r, n)
    vy = tr.column("vy").reshape(r, n)
    present = tr.column("present").astype(bool).reshape(r, n)
    both = present[1:] & present[:-1]
    # A spawn or despawn (asked for, or leaving the map) is not a stop or a start in one tick: the
    # differences into and out of its tick are not judged, whichever side of it a backend marks absent.
    for ev in tr.events:
        if ev["type"] in ("spawn", "despawn") and ev.get("actor") in ids:
            row = ev["tick"] - h["warmup_ticks"]
            both[max(row - 1, 0):max(row + 1, 0), ids.index(ev["actor"])] = False
    # Contact impulses are expected: the actors of a collision are exempt over its contact window — from the
    # tick before it began to the tick after it ended and its parties landed (the event's own t_settled or
    # t_end; the clip's end if it gives neither).
    dt = h["dt"]
    for ev in tr.events:
        if ev["type"] == "collision":
            row = ev["tick"] - h["warmup_ticks"]
            t_end = ev.get("t_settled", ev.get("t_end"))
            end = int(round(t_end / dt)) if t_end is not None else r - 1
            span = slice(max(row - 1, 0), max(end + 1, 0))
            for actor in (ev["a"], ev["b"]):
                if actor in ids:
                    both[span, ids.index(actor)] = False
    acc = np.hypot(np.diff(vx, axis=0), np.diff(vy, axis=0)) / h["dt"]
    worst = []
    for j, a in enumerate(ids):
        limit = PLAUSIBLE_ACCEL.get(kinds.get(a, "vehicle"), 15.0)
        if both[:, j].any():
            peak = float(acc[both[:, j], j].max())
            if peak > limit:
                worst.append(f"{a} {peak:.1f} m/s² > {limit}")
    return (not worst), ("; ".join(worst) if worst else "accelerations within class limits")


def _rollout_checks(tr: Trace) -> tuple[bool, str]:
    failed = [c for c in tr.metrics.get("rollout_checks", []) if not c.get("passed", True)]
    if failed:
        return False, "; ".join(f"{c['check']}: {c['detail']}" for c in failed)
    return True, "no tunnelling, energy gain or explosion detected"


def _collisions(tr: Trace) -> tuple[bool, str]:
    cols = tr.metrics.get("collisions", [])
    return True, (f"{len(cols)} collision(s): " + ", ".join(f"{c['a']}-{c['b']}@{c['t']}s" for c in cols)) if cols else "no collisions"


def _never_fired(tr: Trace) -> tuple[bool, str]:
    never = tr.metrics.get("trigger_never_fired", [])
    return True, ("never fired: " + ", ".join(never)) if never else "every trigger fired"


CHECKS = (
    Check("completed", "error", _completed),
    Check("schema", "error", _schema),
    Check("tick_grid", "error", _grid),
    Check("finite", "error", _finite),
    Check("bounds", "error", _bounds),
    Check("plausible_acceleration", "error", _plausible),
    Check("rollout_checks", "error", _rollout_checks),
    Check("collisions", "info", _collisions),
    Check("triggers", "info", _never_fired),
)


def evaluate_trace(trace: Trace) -> Verdict:
    """Run every check in order; ``reject`` iff an error-severity check fails."""
    findings = []
    for check in CHECKS:
        try:
            passed, detail = check.run(trace)
        except (KeyError, ValueError, TypeError) as exc:
            passed, detail = False, f"could not evaluate: {exc}"
        findings.append({"check": check.name, "severity": check.severity, "passed": bool(passed), "detail": detail})
    bad = any(f["severity"] == "error" and not f["passed"] for f in findings)
    return Verdict("reject" if bad else "accept", findings)
