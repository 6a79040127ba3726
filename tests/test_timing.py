"""Timing solve: worked numbers first, then invariants over random inputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.scenario.timing import solve_emergence_timing, time_to_conflict, ttc

# Ego 40 m from the conflict point at 8 m/s, pedestrian 3 m from it at 1.5 m/s.
BASE = {"d_ego_m": 40.0, "v_ego_mps": 8.0, "d_ped_m": 3.0, "v_ped_mps": 1.5}


def test_time_to_conflict() -> None:
    """40 m at 8 m/s is 5 s; 3 m at 1.5 m/s is 2 s; at rest never arrives; at the point already 0."""
    assert time_to_conflict(40.0, 8.0) == 5.0
    assert time_to_conflict(3.0, 1.5) == 2.0
    assert time_to_conflict(5.0, 0.0) == math.inf
    assert time_to_conflict(0.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        time_to_conflict(-1.0, 1.0)


def test_ttc_on_a_common_path() -> None:
    """Rear at s=0 doing 10 m/s, front at s=30 doing 4 m/s: gap 30 m / closing 6 m/s = 5 s.

    With 4.5 m clearance (half-lengths) the gap is 25.5 m: 25.5 / 6 = 4.25 s.
    """
    assert ttc(0.0, 10.0, 30.0, 4.0) == 5.0
    assert ttc(30.0, 4.0, 0.0, 10.0) == 5.0  # order of the actors does not matter
    assert ttc(0.0, 10.0, 30.0, 4.0, clearance_m=4.5) == pytest.approx(4.25)
    assert ttc(0.0, 4.0, 30.0, 10.0) == math.inf  # the front one pulls away
    assert ttc(0.0, 5.0, 30.0, 5.0) == math.inf
    assert ttc(0.0, 5.0, 3.0, 0.0, clearance_m=4.0) == 0.0  # already overlapping


def test_delay_places_the_ttc_at_the_cell_midpoint() -> None:
    """Ego arrives at 40/8 = 5 s, pedestrian at 3/1.5 = 2 s if it starts now.

    Cell [1.5, 2.5) → target 2.0 s. delay = 5 - 2 - 2 = 1 s, so the pedestrian
    enters the path at 1 + 2 = 3 s, when the ego is 5 - 3 = 2 s away.
    """
    sol = solve_emergence_timing(**BASE, ttc_cell_s=(1.5, 2.5))
    assert sol.feasible and sol.method == "delay" and sol.reason == ""
    assert sol.ttc_target_s == 2.0
    assert sol.delay_s == pytest.approx(1.0)
    assert sol.ego_speed_mps == 8.0
    assert (sol.ego_arrival_s, sol.ped_arrival_s) == pytest.approx((5.0, 3.0))
    assert sol.ttc_at_emergence_s == pytest.approx(2.0)
    assert (sol.natural_ego_arrival_s, sol.natural_ped_arrival_s) == (5.0, 2.0)


def test_a_drawn_target_inside_the_cell() -> None:
    """Target 1.7 s in [1.5, 2.5): delay = 5 - 2 - 1.7 = 1.3 s."""
    sol = solve_emergence_timing(**BASE, ttc_cell_s=(1.5, 2.5), ttc_target_s=1.7)
    assert sol.delay_s == pytest.approx(1.3)
    assert sol.ttc_at_emergence_s == pytest.approx(1.7)


def test_negative_delay_slows_the_ego() -> None:
    """Target 4 s in [3.5, 4.5): delay = 5 - 2 - 4 = -1 s, impossible.

    Start the pedestrian now (delay 0); the ego must arrive at 2 + 4 = 6 s:
    40 m / 6 s = 6.667 m/s, inside [4, 12] m/s.
    """
    sol = solve_emergence_timing(**BASE, ttc_cell_s=(3.5, 4.5), ego_speed_bounds_mps=(4.0, 12.0))
    assert sol.feasible and sol.method == "ego_speed"
    assert sol.delay_s == 0.0
    assert sol.ego_speed_mps == pytest.approx(40.0 / 6.0)
    assert sol.ego_arrival_s == pytest.approx(6.0)
    assert sol.ttc_at_emergence_s == pytest.approx(4.0)


def test_negative_delay_with_fixed_ego_speed_is_infeasible() -> None:
    """Same as above without speed bounds: the pedestrian would have to start 1 s early."""
    sol = solve_emergence_timing(**BASE, ttc_cell_s=(3.5, 4.5))
    assert not sol.feasible
    assert sol.delay_s is None and sol.ego_speed_mps is None and sol.ttc_at_emergence_s is None
    assert "start 1.000 s early" in sol.reason
    assert "6.667 m/s" in sol.reason
    assert (sol.natural_ego_arrival_s, sol.natural_ped_arrival_s) == (5.0, 2.0)


def test_needed_speed_outside_bounds_is_infeasible() -> None:
    """The 4 s target needs at most 40/6 = 6.667 m/s; bounds [7, 12] m/s exclude it."""
    sol = solve_emergence_timing(**BASE, ttc_cell_s=(3.5, 4.5), ego_speed_bounds_mps=(7.0, 12.0))
    assert not sol.feasible
    assert "[0.000, 6.667] m/s" in sol.reason and "[7.0, 12.0]" in sol.reason


def test_delay_beyond_max_speeds_the_ego_up() -> None:
    """Target 1 s in [0.5, 1.5): delay = 5 - 2 - 1 = 2 s, but at most 1.5 s is allowed.

    With delay 1.5 s the pedestrian enters at 3.5 s; the ego must arrive at
    4.5 s: 40 / 4.5 = 8.889 m/s.
    """
    sol = solve_emergence_timing(
        **BASE, ttc_cell_s=(0.5, 1.5), max_delay_s=1.5, ego_speed_bounds_mps=(4.0, 12.0)
    )
    assert sol.feasible and sol.method == "ego_speed"
    assert sol.delay_s == 1.5
    assert sol.ego_speed_mps == pytest.approx(40.0 / 4.5)
    assert sol.ttc_at_emergence_s == pytest.approx(1.0)
    fixed = solve_emergence_timing(**BASE, ttc_cell_s=(0.5, 1.5), max_delay_s=1.5)
    assert not fixed.feasible and "exceeds max_delay_s" in fixed.reason


def test_ego_at_rest() -> None:
    """Ego stopped 40 m away. With bounds [4, 12] m/s the nearest speed is 4 m/s:
    arrival 10 s, so delay = 10 - 2 - 2 = 6 s. Without bounds it never arrives."""
    sol = solve_emergence_timing(
        d_ego_m=40.0, v_ego_mps=0.0, d_ped_m=3.0, v_ped_mps=1.5, ttc_cell_s=(1.5, 2.5), ego_speed_bounds_mps=(4.0, 12.0)
    )
    assert sol.feasible and sol.ego_speed_mps == 4.0 and sol.delay_s == pytest.approx(6.0)
    assert sol.natural_ego_arrival_s == math.inf
    fixed = solve_emergence_timing(d_ego_m=40.0, v_ego_mps=0.0, d_ped_m=3.0, v_ped_mps=1.5, ttc_cell_s=(1.5, 2.5))
    assert not fixed.feasible and "at rest" in fixed.reason


def test_ego_at_the_conflict_point_is_infeasible() -> None:
    sol = solve_emergence_timing(
        d_ego_m=0.0, v_ego_mps=8.0, d_ped_m=3.0, v_ped_mps=1.5, ttc_cell_s=(1.5, 2.5), ego_speed_bounds_mps=(1.0, 12.0)
    )
    assert not sol.feasible and "already at the conflict point" in sol.reason


@pytest.mark.parametrize(
    "changes",
    [
        {"ttc_target_s": 2.5},  # the cell is half-open
        {"ttc_target_s": 1.0},
        {"ttc_cell_s": (2.5, 1.5)},
        {"ttc_cell_s": (0.0, 0.0)},
        {"v_ped_mps": 0.0},
        {"d_ego_m": -1.0},
        {"v_ego_mps": math.nan},
        {"ego_speed_bounds_mps": (0.0, 5.0)},
        {"max_delay_s": -1.0},
    ],
)
def test_invalid_arguments_are_bugs(changes: dict[str, object]) -> None:
    kwargs: dict[str, object] = {**BASE, "ttc_cell_s": (1.5, 2.5), **changes}
    with pytest.raises(ValueError):
        solve_emergence_timing(**kwargs)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    d_ego_m=st.floats(0.0, 200.0),
    v_ego_mps=st.just(0.0) | st.floats(0.5, 30.0),
    d_ped_m=st.floats(0.0, 20.0),
    v_ped_mps=st.floats(0.3, 3.0),
    lo=st.floats(0.1, 6.0),
    width=st.floats(0.1, 3.0),
    frac=st.floats(0.0, 0.99),
    max_delay_s=st.floats(0.0, 20.0) | st.just(math.inf),
    bounds=st.none() | st.tuples(st.floats(0.5, 10.0), st.floats(0.0, 20.0)),
)
def test_feasible_solutions_meet_the_target(
    d_ego_m: float,
    v_ego_mps: float,
    d_ped_m: float,
    v_ped_mps: float,
    lo: float,
    width: float,
    frac: float,
    max_delay_s: float,
    bounds: tuple[float, float] | None,
) -> None:
    target = lo + frac * width
    speed_bounds = None if bounds is None else (bounds[0], bounds[0] + bounds[1])
    sol = solve_emergence_timing(
        d_ego_m=d_ego_m,
        v_ego_mps=v_ego_mps,
        d_ped_m=d_ped_m,
        v_ped_mps=v_ped_mps,
        ttc_cell_s=(lo, lo + width),
        ttc_target_s=target,
        ego_speed_bounds_mps=speed_bounds,
        max_delay_s=max_delay_s,
    )
    if not sol.feasible:
        assert sol.reason
        return
    assert sol.ttc_at_emergence_s == pytest.approx(target, abs=1e-6)
    assert 0.0 <= sol.delay_s <= max_delay_s
    assert sol.ped_arrival_s == pytest.approx(sol.delay_s + d_ped_m / v_ped_mps)
    if sol.method == "delay":
        assert sol.ego_speed_mps == v_ego_mps
    else:
        assert speed_bounds is not None
        assert speed_bounds[0] - 1e-9 <= sol.ego_speed_mps <= speed_bounds[1] + 1e-9
