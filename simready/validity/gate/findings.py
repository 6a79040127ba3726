"""How a check words and weighs what it found: :class:`Findings` (violation texts, worst utilisation, notes) and
the formatting of times, counts and scores in its reasons."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.validity import policy
from simready.validity.gate.inputs import F, Rows


def fmt_t(t: float) -> str:
    return f"t={t:.2f} s"


def count_suffix(n: int, unit: str = "tick") -> str:
    return f" ({n} {unit}s)" if n > 1 else ""


class Findings:
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

    def detail(self, summary: str, *, utilisation: bool = True, **figures: Any) -> dict[str, Any]:
        """The check's ``detail``: ``summary``, the violations (the first few), their count, the worst utilisation
        (left out for a check whose score is not one: ``utilisation`` False), the notes and ``figures``."""
        worst = {"worst_utilisation": json_number(self.utilisation)} if utilisation else {}
        return {
            "summary": summary,
            "violations": self.texts[: policy.MAX_REASONS_PER_CHECK],
            "n_violations": len(self.texts),
            **worst,
            **({"notes": self.notes} if self.notes else {}),
            **figures,
        }


def json_number(value: float) -> float | None:
    """Finite floats as they are (rounded), non-finite as None (JSON has no NaN)."""
    return round(float(value), 6) if math.isfinite(value) else None


def first_worst(values: F, candidates: NDArray[np.intp]) -> int:
    """The first of ``candidates`` whose value equals the worst up to rounding (stable "at t=" in reasons)."""
    v = values[candidates]
    worst = float(v.max())
    near = v == worst if not math.isfinite(worst) else v >= worst - 1e-9 * max(abs(worst), 1.0)
    return int(candidates[np.flatnonzero(near)[0]])


def tick_time(rows: Rows, i: int, dt: float) -> str:
    t = rows.t[i]
    return fmt_t(t) if math.isfinite(t) else f"tick {rows.tick[i]} (t≈{rows.tick[i] * dt:.2f} s)"


def clamp_score(x: float) -> float:
    """Clamp to [0, 1]; non-finite is 0 (a score never crashes a report)."""
    x = float(x)
    return min(max(x, 0.0), 1.0) if math.isfinite(x) else 0.0
