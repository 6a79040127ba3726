"""Transition shapes of the shaped verbs (SPEC §6 ``dynamics``).

A verb moves a quantity q (a speed, a gap, a lateral offset) from q0 to q1
over a duration T: ``q(τ) = q0 + (q1 − q0)·f(τ/T)`` with ``f(0) = 0``,
``f(1) = 1``. The four shapes and their derivatives:

=========== ===================== ======================== ==========
shape       f(x)                  f'(x)                    max f'
=========== ===================== ======================== ==========
step        1                     0                        —
linear      x                     1                        1
sinusoidal  (1 − cos πx)/2        (π/2)·sin πx             π/2
cubic       3x² − 2x³             6x − 6x²                 3/2
=========== ===================== ======================== ==========

The duration follows from the constraint: ``time`` gives T directly;
``rate`` bounds the *peak* rate, T = |q1 − q0|·max f' / rate; ``distance``
is the distance travelled during the transition, which for a speed verb is
T·(v0 + v1)/2 for every shape above (each is symmetric about x = ½), and for
a lateral verb T = distance / v (the actor's speed at firing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SHAPES = ("step", "linear", "sinusoidal", "cubic")
_PEAK_RATE = {"step": 0.0, "linear": 1.0, "sinusoidal": math.pi / 2, "cubic": 1.5}


def shape_value(shape: str, x: float) -> tuple[float, float, float]:
    """``(f(x), f'(x), f''(x))`` for x clamped to [0, 1]; derivatives are 0 outside (0, 1)."""
    if shape == "step" or x >= 1.0:
        return 1.0, 0.0, 0.0
    if x <= 0.0:
        return 0.0, 0.0, 0.0
    if shape == "linear":
        return x, 1.0, 0.0
    if shape == "sinusoidal":
        return 0.5 * (1.0 - math.cos(math.pi * x)), 0.5 * math.pi * math.sin(math.pi * x), 0.5 * math.pi**2 * math.cos(math.pi * x)
    if shape == "cubic":
        return x * x * (3.0 - 2.0 * x), 6.0 * x * (1.0 - x), 6.0 - 12.0 * x
    raise ValueError(f"unknown shape {shape!r}")


@dataclass(frozen=True)
class Profile:
    """A transition of one quantity from ``q0`` to ``q1`` starting at tick ``start_tick`` lasting ``duration_s``.

    ``at(tick, dt)`` returns ``(q, dq/dt, d²q/dt²)`` at that tick; before the
    start it is q0, after the end q1.
    """

    shape: str
    q0: float
    q1: float
    start_tick: int
    duration_s: float

    def at(self, tick: int, dt: float) -> tuple[float, float, float]:
        if self.duration_s <= 0.0 or self.shape == "step":
            return (self.q1, 0.0, 0.0) if tick >= self.start_tick else (self.q0, 0.0, 0.0)
        x = (tick - self.start_tick) * dt / self.duration_s
        f, df, ddf = shape_value(self.shape, x)
        span = self.q1 - self.q0
        return self.q0 + span * f, span * df / self.duration_s, span * ddf / self.duration_s**2

    def done(self, tick: int, dt: float) -> bool:
        return self.shape == "step" or (tick - self.start_tick) * dt >= self.duration_s - 1e-9

    def to_json(self) -> list:
        return [self.shape, self.q0, self.q1, self.start_tick, self.duration_s]

    @classmethod
    def from_json(cls, data: list) -> Profile:
        shape, q0, q1, start, duration = data
        return cls(str(shape), float(q0), float(q1), int(start), float(duration))


def duration_s(shape: str, constraint: str, value: float, q0: float, q1: float, *, speed_mps: float | None = None) -> float:
    """Transition time T (s) for a ``dynamics{shape, constraint, value}`` block (see the module docstring).

    ``speed_mps``: for a lateral verb under a ``distance`` constraint, the
    actor's speed; None means the quantity is itself a speed.
    """
    if shape == "step":
        return 0.0
    span = abs(q1 - q0)
    if constraint == "time":
        return float(value)
    if constraint == "rate":
        return span * _PEAK_RATE[shape] / value
    if constraint == "distance":
        if speed_mps is None:
            mean = 0.5 * (q0 + q1)
            return value / mean if mean > 0.0 else 0.0
        return value / speed_mps if speed_mps > 0.0 else 0.0
    raise ValueError(f"unknown constraint {constraint!r}")
