"""Timing solve, before any physics: place a conflict at a chosen time-to-collision.

Model: two actors approach one conflict point at constant speed along their
own paths. For an emergence scenario the conflict point is where the
pedestrian (or other actor) enters the ego's swept path — the reveal. Time 0
is the moment the solve refers to (e.g. the pedestrian's trigger time)::

    ego_arrival_s    = d_ego_m / v_ego_mps
    ped_arrival_s    = delay_s + d_ped_m / v_ped_mps
    ttc_at_emergence = ego_arrival_s - ped_arrival_s

``ttc_at_emergence`` is the ego's time to the conflict point at the moment
the pedestrian enters its path. Setting it to the target gives

    delay_s = d_ego_m / v_ego_mps - d_ped_m / v_ped_mps - ttc_target_s

If that delay lies in [0, max_delay_s] the ego keeps its speed. Otherwise
the ego's speed changes to the nearest one, inside ``ego_speed_bounds_mps``,
for which a delay in range meets the target::

    ego_speed_mps = d_ego_m / (delay_s + d_ped_m / v_ped_mps + ttc_target_s)

(the delay clamped to 0 when the ego was early, to max_delay_s when late).
When no bounded speed works the solve is infeasible and says why.
Seconds and metres throughout; ``math.inf`` means
"never" (an actor at rest never arrives).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

# Rounding noise below this is not a negative delay or an out-of-cell TTC.
TIME_EPS_S = 1e-9


@dataclass(frozen=True)
class TimingSolution:
    """Result of :func:`solve_emergence_timing`.

    When feasible, ``delay_s`` (pedestrian start delay) and ``ego_speed_mps``
    (the ego's speed from time 0) realize ``ttc_at_emergence_s`` =
    ``ttc_target_s``, with the planned arrivals ``ego_arrival_s`` and
    ``ped_arrival_s``; ``method`` says whether the delay alone did it or the
    ego speed had to change. When infeasible those are None and ``reason``
    says why. The ``natural_*`` fields are the arrivals with no delay at the
    ego's own speed.
    """

    feasible: bool
    delay_s: float | None
    ego_speed_mps: float | None
    ttc_at_emergence_s: float | None
    ego_arrival_s: float | None
    ped_arrival_s: float | None
    reason: str
    method: Literal["delay", "ego_speed"] | None
    ttc_target_s: float
    natural_ego_arrival_s: float
    natural_ped_arrival_s: float


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _finite_nonneg(name: str, value: float) -> None:
    _require(math.isfinite(value) and value >= 0, f"{name} must be finite and >= 0, got {value!r}")


def time_to_conflict(d_m: float, v_mps: float) -> float:
    """Seconds to cover ``d_m`` metres at constant ``v_mps``; ``math.inf`` if at rest short of it."""
    _finite_nonneg("d_m", d_m)
    _finite_nonneg("v_mps", v_mps)
    if d_m == 0:
        return 0.0
    return math.inf if v_mps == 0 else d_m / v_mps


def ttc(s_a_m: float, v_a_mps: float, s_b_m: float, v_b_mps: float, *, clearance_m: float = 0.0) -> float:
    """Constant-speed time-to-collision of two actors on one path.

    ``s_*_m``: positions along the path (m); ``v_*_mps``: signed speeds along
    it. ``clearance_m`` is subtracted from the centre distance (e.g. the sum
    of half-lengths, for bumper-to-bumper). 0 if already touching;
    ``math.inf`` if the rear actor is not closing on the front one.
    """
    for name, value in (("s_a_m", s_a_m), ("v_a_mps", v_a_mps), ("s_b_m", s_b_m), ("v_b_mps", v_b_mps)):
        _require(math.isfinite(value), f"{name} must be finite, got {value!r}")
    _finite_nonneg("clearance_m", clearance_m)
    (_, v_rear), (_, v_front) = sorted(((s_a_m, v_a_mps), (s_b_m, v_b_mps)))
    gap = abs(s_b_m - s_a_m) - clearance_m
    if gap <= 0:
        return 0.0
    closing = v_rear - v_front
    return gap / closing if closing > 0 else math.inf


def solve_emergence_timing(
    *,
    d_ego_m: float,
    v_ego_mps: float,
    d_ped_m: float,
    v_ped_mps: float,
    ttc_cell_s: tuple[float, float],
    ttc_target_s: float | None = None,
    ego_speed_bounds_mps: tuple[float, float] | None = None,
    max_delay_s: float = math.inf,
) -> TimingSolution:
    """Pedestrian start delay (or ego speed) that puts the conflict TTC at a target in ``ttc_cell_s``.

    ``ttc_cell_s`` = [lo, hi): the coverage cell; ``ttc_target_s`` defaults
    to its midpoint (a caller drawing the target passes it). With
    ``ego_speed_bounds_mps`` None the ego's speed is fixed. ``max_delay_s``
    caps the delay (e.g. the time left in the clip). Invalid arguments (a
    bug, not a sampled outcome) raise ValueError.
    """
    for name, value in (("d_ego_m", d_ego_m), ("v_ego_mps", v_ego_mps), ("d_ped_m", d_ped_m)):
        _finite_nonneg(name, value)
    _require(math.isfinite(v_ped_mps) and v_ped_mps > 0, f"v_ped_mps must be finite and > 0, got {v_ped_mps!r}")
    lo, hi = ttc_cell_s
    _require(
        math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi, f"ttc_cell_s must be 0 <= lo < hi, got {ttc_cell_s!r}"
    )
    target = (lo + hi) / 2 if ttc_target_s is None else ttc_target_s
    _require(lo <= target < hi, f"ttc_target_s {target!r} is outside the cell [{lo}, {hi})")
    _require(target > 0, "ttc_target_s must be > 0: the ego has not reached the conflict point at emergence")
    _require(max_delay_s >= 0, f"max_delay_s must be >= 0, got {max_delay_s!r}")
    if ego_speed_bounds_mps is not None:
        v_lo, v_hi = ego_speed_bounds_mps
        _require(
            math.isfinite(v_lo) and math.isfinite(v_hi) and 0 < v_lo <= v_hi,
            f"ego_speed_bounds_mps must be 0 < lo <= hi, got {ego_speed_bounds_mps!r}",
        )

    t_ego = time_to_conflict(d_ego_m, v_ego_mps)
    t_ped = d_ped_m / v_ped_mps

    def solution(delay_s: float, ego_speed_mps: float, method: Literal["delay", "ego_speed"]) -> TimingSolution:
        ego_arrival = time_to_conflict(d_ego_m, ego_speed_mps)
        ped_arrival = delay_s + t_ped
        return TimingSolution(
            feasible=True,
            delay_s=delay_s,
            ego_speed_mps=ego_speed_mps,
            ttc_at_emergence_s=ego_arrival - ped_arrival,
            ego_arrival_s=ego_arrival,
            ped_arrival_s=ped_arrival,
            reason="",
            method=method,
            ttc_target_s=target,
            natural_ego_arrival_s=t_ego,
            natural_ped_arrival_s=t_ped,
        )

    def infeasible(reason: str) -> TimingSolution:
        return TimingSolution(
            feasible=False,
            delay_s=None,
            ego_speed_mps=None,
            ttc_at_emergence_s=None,
            ego_arrival_s=None,
            ped_arrival_s=None,
            reason=reason,
            method=None,
            ttc_target_s=target,
            natural_ego_arrival_s=t_ego,
            natural_ped_arrival_s=t_ped,
        )

    delay = t_ego - t_ped - target  # inf when the ego is at rest
    if math.isfinite(delay) and -TIME_EPS_S <= delay <= max_delay_s + TIME_EPS_S:
        return solution(min(max(delay, 0.0), max_delay_s), v_ego_mps, "delay")
    if d_ego_m == 0:
        return infeasible("the ego is already at the conflict point")

    # Speeds whose delay d_ego/v - t_ped - target lies in [0, max_delay_s].
    v_slowest = d_ego_m / (max_delay_s + t_ped + target)  # 0 when the delay is unbounded
    v_fastest = d_ego_m / (t_ped + target)
    if ego_speed_bounds_mps is None:
        if v_ego_mps == 0:
            return infeasible("the ego is at rest and its speed is fixed")
        if delay < 0:
            return infeasible(
                f"the pedestrian would have to start {-delay:.3f} s early and the ego speed is fixed"
                f" (the target needs at most {v_fastest:.3f} m/s)"
            )
        return infeasible(
            f"the delay {delay:.3f} s exceeds max_delay_s {max_delay_s:.3f} and the ego speed is fixed"
            f" (the target needs at least {v_slowest:.3f} m/s)"
        )
    v_lo, v_hi = max(ego_speed_bounds_mps[0], v_slowest), min(ego_speed_bounds_mps[1], v_fastest)
    if v_lo > v_hi:
        return infeasible(
            f"the target needs an ego speed in [{v_slowest:.3f}, {v_fastest:.3f}] m/s,"
            f" outside the bounds [{ego_speed_bounds_mps[0]}, {ego_speed_bounds_mps[1]}] m/s"
        )
    # The feasible speed closest to the ego's own; its delay follows.
    speed = min(max(v_ego_mps, v_lo), v_hi)
    return solution(min(max(d_ego_m / speed - t_ped - target, 0.0), max_delay_s), speed, "ego_speed")
