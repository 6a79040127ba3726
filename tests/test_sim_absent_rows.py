"""Absent rows and the spawn/despawn transition are not judged; a kick or a teleport on a present actor is.

``exist: absent`` on a moving vehicle is a despawn the scenario asked for:
neither ``evaluate_trace`` (velocity differences) nor the validity gate's
physical and temporal checks (position differences, |Δx − v̄·dt|) may read
the step from moving to gone as a stop in one tick. The same checks must
still catch a velocity kick or a teleport of an actor that stays present.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.sim.evaluation.evaluate import evaluate_trace
from simready.sim.run import run_simulation
from simready.sim.storage.trace import Trace
from simready.testing import demo
from simready.validity.gate import ScenarioEvidence, validate_scenario
from tests.fixtures.sim import catalog, ego_only, template

CAR_SPEED_MPS = 8.0
VANISH_S, RETURN_S = 1.0, 2.0


@functools.lru_cache(maxsize=None)
def _vanishing_car(back: bool) -> Trace:
    """The ego behind a car at 8 m/s that despawns at t = 1 s (and, if ``back``, spawns again at t = 2 s)."""
    cat = catalog()
    car = demo.vehicle(cat, "car", demo.SEDAN, "lane_eb", 30.0, (30.0, -1.75, 0.0), CAR_SPEED_MPS)
    inters = [{"id": "vanish", "actor_id": "car", "trigger": {"kind": "at", "t_s": VANISH_S}, "exist": {"state": "absent"}}]
    if back:
        inters.append({"id": "return", "actor_id": "car", "trigger": {"kind": "at", "t_s": RETURN_S},
                       "exist": {"state": "present"}})
    m = ego_only(clip_s=3.0, speed=CAR_SPEED_MPS, extra=[car], interactions=inters)
    return run_simulation(m, template(), backend="kinematic-v1", catalog=cat).trace


def _edited(trace: Trace, actor: str, t_s: float, **values: object) -> Trace:
    """A copy of the trace with the columns in ``values`` overwritten on ``actor``'s row at ``t_s``."""
    df = trace.df.copy()
    row = (df.actor_id == actor) & np.isclose(df.t, t_s)
    assert row.sum() == 1
    for name, value in values.items():
        df.loc[row, name] = value
    return Trace(trace.header, trace.events, trace.metrics, pa.Table.from_pandas(df, schema=trace.ticks.schema))


def _gate(trace: Trace):  # type: ignore[no-untyped-def]
    ev = ScenarioEvidence(sample_id="absent-rows", ticks=trace.df, actor_classes={"ego": "vehicle", "car": "vehicle"},
                          dt=trace.header["dt"], ego_id="ego")
    report = validate_scenario(ev)
    return report.check("physical"), report.check("temporal")


@pytest.mark.parametrize("back", [False, True], ids=["despawn", "despawn-and-spawn"])
def test_a_requested_despawn_is_not_a_finding(back: bool) -> None:
    tr = _vanishing_car(back)
    assert [e["t"] for e in tr.events if e["type"] in ("spawn", "despawn")] == ([VANISH_S, RETURN_S] if back else [VANISH_S])
    car = tr.df[tr.df.actor_id == "car"]
    assert car.present.sum() < len(car) and car.speed_mps[car.present].max() == pytest.approx(CAR_SPEED_MPS)
    verdict = evaluate_trace(tr)
    assert verdict.accepted, verdict.reasons()
    physical, temporal = _gate(tr)
    assert physical.passed, physical.detail
    assert temporal.passed, temporal.detail


@pytest.mark.parametrize("rest_at_s", [VANISH_S, VANISH_S + 0.02], ids=["on-the-despawn-tick", "first-absent-tick"])
def test_the_transition_tick_is_not_judged_whichever_side_records_the_body_at_rest(rest_at_s: float) -> None:
    """A backend may bring the body to rest on the tick it leaves: still not a 400 m/s² stop."""
    tr = _edited(_vanishing_car(False), "car", rest_at_s, vx=0.0, vy=0.0, speed_mps=0.0, present=True)
    verdict = evaluate_trace(tr)
    assert verdict.accepted, verdict.reasons()


@settings(max_examples=25, deadline=None)
@given(t_s=st.sampled_from([0.1, 0.5, 0.9, 0.96, 2.5]), kick_mps=st.floats(6.0, 20.0))
def test_a_velocity_kick_on_a_present_actor_is_still_rejected(t_s: float, kick_mps: float) -> None:
    """Two or more ticks from the despawn, and after the car is gone for the ego, a kick is judged as before."""
    tr = _vanishing_car(False)
    who = "car" if t_s < VANISH_S else "ego"
    row = tr.df[(tr.df.actor_id == who) & np.isclose(tr.df.t, t_s)]
    kicked = _edited(tr, who, t_s, vx=float(row.vx.iloc[0]) + kick_mps)
    verdict = evaluate_trace(kicked)
    assert not verdict.accepted and any(f"{who} " in r for r in verdict.reasons())
    physical, temporal = _gate(kicked)
    assert not temporal.passed and any(f"actor {who}" in v for v in temporal.detail["violations"])


@pytest.mark.parametrize("t_s", [0.5, 0.96])
def test_a_teleport_of_a_present_actor_is_still_rejected_by_the_gate(t_s: float) -> None:
    tr = _vanishing_car(False)
    row = tr.df[(tr.df.actor_id == "car") & np.isclose(tr.df.t, t_s)]
    jumped = _edited(tr, "car", t_s, x=float(row.x.iloc[0]) + 2.0)
    physical, _ = _gate(jumped)
    assert not physical.passed and any("actor car: acceleration" in v for v in physical.detail["violations"])
