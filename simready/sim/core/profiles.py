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

Taking over a moving quantity: a verb that preempts a transition still in
progress (a ``lane_offset`` fired mid lane change) starts from the
quantity's current value *and* rate q̇0, or the body would stop or jerk
sideways in one tick. The inherited motion coasts out over a carry time
T_c, its rate decaying as q̇0·(1 − y)² (y = τ/T_c: smooth at both ends,
peak acceleration 2|q̇0|/T_c at the start), which covers c = q̇0·T_c/3; the
declared transition covers the rest::

    q(τ) = q0 + q̇0·T_c·g(τ/T_c) + (q1 − q0 − c)·f(τ/T),   g(y) = (1 − (1 − y)³)/3

so it still ends at q1 at rest. The carry-over term is monotone, so the
inherited motion swings past the target (and the declared transition brings
it back) only when the target is nearer than c. :func:`carry_s` sizes T_c from an
acceleration bound, and :func:`taking_over` sizes T for the span that
remains. A ``step`` jumps by declaration and carries nothing.

Rounded corners: a ``linear`` transition of a *position* (a lateral offset)
steps its rate at both ends, an acceleration of rate/dt in one tick. Given a
corner acceleration bound a, each corner becomes a parabolic blend of
duration t_b (constant acceleration ±a; a trapezoidal rate, the classic
"linear segment with parabolic blends"), so the transition covers the span
D = a·t_b·(T − t_b) at rest at both ends with at most a. A ``time`` or
``distance`` constraint keeps its duration T, the straight part running a
little faster than D/T (t_b = 2D/(a·(T + √(T² − 4D/a)))); when T is too short
for that (T² < 4D/a) the corners meet at T/2 (a bang-bang of 4D/T², the least
acceleration any transition of D in T from rest to rest needs). A ``rate``
constraint keeps its peak rate v: T = D/v + v/a (t_b = v/a), or for a span
shorter than v²/a a triangle of peak √(a·D). In f's terms, with blend
fraction b = t_b/T and k = 1/(1 − b)::

    f(x) = k·x²/(2b)            x < b
           k·(x − b/2)          b ≤ x ≤ 1 − b
           1 − k·(1 − x)²/(2b)  x > 1 − b

:func:`corner_blend` sizes t_b; b = 0 is the plain linear shape (speeds and
gaps, whose rate step is an acceleration step, keep it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SHAPES = ("step", "linear", "sinusoidal", "cubic")
_PEAK_RATE = {"step": 0.0, "linear": 1.0, "sinusoidal": math.pi / 2, "cubic": 1.5}


def shape_value(shape: str, x: float, blend: float = 0.0) -> tuple[float, float, float]:
    """``(f(x), f'(x), f''(x))`` for x clamped to [0, 1]; derivatives are 0 outside (0, 1).

    ``blend``: for ``linear``, the fraction b ∈ [0, ½] of the transition each rounded corner takes (module
    docstring); ignored by the other shapes.
    """
    if shape == "step" or x >= 1.0:
        return 1.0, 0.0, 0.0
    if x <= 0.0:
        return 0.0, 0.0, 0.0
    if shape == "linear":
        if blend <= 0.0:
            return x, 1.0, 0.0
        b = min(blend, 0.5)
        k = 1.0 / (1.0 - b)
        if x < b:
            return k * x * x / (2.0 * b), k * x / b, k / b
        if x > 1.0 - b:
            r = 1.0 - x
            return 1.0 - k * r * r / (2.0 * b), k * r / b, -k / b
        return k * (x - 0.5 * b), k, 0.0
    if shape == "sinusoidal":
        return 0.5 * (1.0 - math.cos(math.pi * x)), 0.5 * math.pi * math.sin(math.pi * x), 0.5 * math.pi**2 * math.cos(math.pi * x)
    if shape == "cubic":
        return x * x * (3.0 - 2.0 * x), 6.0 * x * (1.0 - x), 6.0 - 12.0 * x
    raise ValueError(f"unknown shape {shape!r}")


@dataclass(frozen=True)
class Profile:
    """A transition of one quantity from ``q0`` to ``q1`` starting at tick ``start_tick`` lasting ``duration_s``.

    ``at(tick, dt)`` returns ``(q, dq/dt, d²q/dt²)`` at that tick; before the
    start it is q0, after the end q1. ``rate0_per_s``: the quantity's rate
    when the transition started (its unit per second), inherited from the
    transition it preempted, shed over ``carry_s`` (see the module
    docstring); 0 for a transition that starts from rest. ``blend_s``: the
    duration of each rounded corner of a ``linear`` transition (0: sharp
    corners).
    """

    shape: str
    q0: float
    q1: float
    start_tick: int
    duration_s: float
    rate0_per_s: float = 0.0
    carry_s: float = 0.0
    blend_s: float = 0.0

    @property
    def carries(self) -> bool:
        """Whether an inherited rate coasts out (never across a declared ``step``)."""
        return self.rate0_per_s != 0.0 and self.carry_s > 0.0 and self.shape != "step"

    @property
    def coast(self) -> float:
        """How far the inherited rate carries the quantity, c = q̇0·T_c/3 (0 when nothing is inherited)."""
        return coast_span(self.rate0_per_s, self.carry_s) if self.carries else 0.0

    def at(self, tick: int, dt: float) -> tuple[float, float, float]:
        hit = _SETTLED.get(id(self))
        if hit is not None and hit[0] is self and hit[1] == dt and tick >= hit[2]:
            return hit[3]
        out = self._at(tick, dt)
        # Past its end (and its carry-over's) a profile's value is the same at every tick: shape_value is (1, 0, 0)
        # for x ≥ 1 and the carry's rest is 0 for τ ≥ T_c, and τ = (tick − start)·dt only grows. Kept from the first
        # such tick, so a held goal costs one lookup a tick.
        if self.shape != "step":
            elapsed_s = (tick - self.start_tick) * dt
            if elapsed_s >= 0.0 and (self.duration_s <= 0.0 or elapsed_s / self.duration_s >= 1.0) and (
                    not self.carries or elapsed_s / self.carry_s >= 1.0):
                if len(_SETTLED) > 256:
                    _SETTLED.clear()
                _SETTLED[id(self)] = (self, dt, tick, out)
        return out

    def settled(self, tick: int, dt: float) -> bool:
        """Whether :meth:`at` gives the same value at every tick from ``tick`` on (kept since an earlier call)."""
        hit = _SETTLED.get(id(self))
        return hit is not None and hit[0] is self and hit[1] == dt and tick >= hit[2]

    def _at(self, tick: int, dt: float) -> tuple[float, float, float]:
        carries = self.carries
        if self.shape == "step" or (self.duration_s <= 0.0 and not carries):
            return (self.q1, 0.0, 0.0) if tick >= self.start_tick else (self.q0, 0.0, 0.0)
        elapsed_s = (tick - self.start_tick) * dt
        blend = self.blend_s / self.duration_s if self.duration_s > 0.0 else 0.0
        if not carries:
            f, df, ddf = shape_value(self.shape, elapsed_s / self.duration_s, blend)
            span = self.q1 - self.q0
            return self.q0 + span * f, span * df / self.duration_s, span * ddf / self.duration_s**2
        r0, tc = self.rate0_per_s, self.carry_s
        rest = 1.0 - min(max(elapsed_s / tc, 0.0), 1.0)
        q, dq, ddq = self.q0 + r0 * tc * (1.0 - rest**3) / 3.0, r0 * rest * rest, -2.0 * r0 * rest / tc
        span = self.q1 - self.q0 - self.coast
        if self.duration_s <= 0.0:
            return q + (span if elapsed_s >= 0.0 else 0.0), dq, ddq
        f, df, ddf = shape_value(self.shape, elapsed_s / self.duration_s, blend)
        return q + span * f, dq + span * df / self.duration_s, ddq + span * ddf / self.duration_s**2

    def done(self, tick: int, dt: float) -> bool:
        end_s = max(self.duration_s, self.carry_s) if self.carries else self.duration_s
        return self.shape == "step" or (tick - self.start_tick) * dt >= end_s - 1e-9

    def to_json(self) -> list[str | float]:
        """Seven fields, and an eighth (``blend_s``) only for rounded corners, so other profiles keep their bytes."""
        data: list[str | float] = [self.shape, self.q0, self.q1, self.start_tick, self.duration_s, self.rate0_per_s,
                                   self.carry_s]
        return data + [self.blend_s] if self.blend_s else data

    @classmethod
    def from_json(cls, data: list[Any]) -> Profile:
        """Reads every form; checkpoints written before the carry-over have five fields (nothing inherited), those
        before rounded corners seven (sharp corners)."""
        shape, q0, q1, start, duration, *extra = data
        rate0, carry_time = (float(extra[0]), float(extra[1])) if extra else (0.0, 0.0)
        blend = float(extra[2]) if len(extra) > 2 else 0.0
        return cls(str(shape), float(q0), float(q1), int(start), float(duration), rate0, carry_time, blend)


#: Per profile (by id, with the profile kept against reuse of the id): ``(profile, dt, tick, value)``, its value at
#: every tick from ``tick`` on (:meth:`Profile.at`).
_SETTLED: dict[int, tuple[Profile, float, int, tuple[float, float, float]]] = {}


def carry_s(rate0_per_s: float, shed_accel_per_s2: float) -> float:
    """Carry time T_c over which an inherited rate coasts out, so that its peak acceleration 2|q̇0|/T_c equals
    ``shed_accel_per_s2``; 0 when nothing is inherited."""
    return 2.0 * abs(rate0_per_s) / shed_accel_per_s2 if rate0_per_s else 0.0


def coast_span(rate0_per_s: float, carry_time_s: float) -> float:
    """Distance the inherited rate covers while it coasts out over ``carry_time_s``: q̇0·T_c/3."""
    return rate0_per_s * carry_time_s / 3.0


def corner_blend(constraint: str, value: float, span: float, duration: float,
                 corner_accel_per_s2: float) -> tuple[float, float]:
    """``(T, t_b)``: a ``linear`` transition of ``span`` with its corners rounded at ``corner_accel_per_s2``.

    ``duration`` is the sharp-cornered T of :func:`duration_s`; a ``rate``
    constraint (peak rate ``value``) lengthens it, the others keep it (module
    docstring). t_b = 0 when there is nothing to move.
    """
    D, a = abs(span), corner_accel_per_s2
    if D == 0.0 or a <= 0.0:
        return duration, 0.0
    if constraint == "rate":
        v = float(value)
        if D * a <= v * v:  # never reaches the declared rate: a triangle
            tb = math.sqrt(D / a)
            return 2.0 * tb, tb
        return D / v + v / a, v / a
    if duration <= 0.0:
        return duration, 0.0
    disc = duration * duration - 4.0 * D / a
    if disc <= 0.0:
        return duration, 0.5 * duration
    return duration, 2.0 * D / (a * (duration + math.sqrt(disc)))


def taking_over(shape: str, constraint: str, value: float, q0: float, rate0_per_s: float, q1: float, start_tick: int,
                shed_accel_per_s2: float, *, speed_mps: float | None = None,
                corner_accel_per_s2: float | None = None) -> Profile:
    """The transition to ``q1`` a verb starts when it takes over a quantity at ``q0`` moving at ``rate0_per_s``.

    The inherited motion coasts out at most ``shed_accel_per_s2`` (see the
    module docstring); the declared ``dynamics{shape, constraint, value}``
    size the transition over what remains, from q0 + c to q1, so a ``rate``
    constraint still bounds the declared transition's own peak rate. From
    rest (or for a ``step``) this is the plain declared transition.
    ``corner_accel_per_s2``: round a ``linear`` shape's corners at this
    acceleration (:func:`corner_blend`); None keeps them sharp.
    """
    tc = carry_s(rate0_per_s, shed_accel_per_s2) if shape != "step" else 0.0
    start = q0 + coast_span(rate0_per_s, tc) if tc > 0.0 else q0
    T = duration_s(shape, constraint, value, start, q1, speed_mps=speed_mps)
    tb = 0.0
    if shape == "linear" and corner_accel_per_s2 is not None:
        T, tb = corner_blend(constraint, value, q1 - start, T, corner_accel_per_s2)
    return Profile(shape, q0, q1, start_tick, T, rate0_per_s if tc > 0.0 else 0.0, tc, tb)


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
