"""Vehicle–vehicle contact in dynamic-v1: momentum exchange, the collision event, and the energy check.

Every vehicle is a force-driven rigid body, so a rear-end passes momentum
from the striking car to the ego; the ego's energy rises while it is not
actuating, which the energy check excuses on ticks the ego touches another
actor. A gain on a tick without contact (here a velocity kick, standing in
for a solver pop) is still reported.

Scene (``residential_crosswalk_v3``, ``lane_eb`` along y = −1.75 m): the
ego shuttle (4.6 m) waits at rest at x = 40 m (cruise 0); a sedan (4.7 m)
starts 10 m behind at 15 m/s. The bumpers are 5.35 m apart, but braking
at its hardest (decel_max 8 m/s²) the sedan needs 15²/16 ≈ 14 m to stop, so
its footprint meets the ego's at t = 0.20 s at ~11.8 m/s (the hulls at 0.22 s).
"""

from __future__ import annotations

import itertools
from typing import Any

import pybullet as p
import pytest

from simready.scenario.manifest import ScenarioManifest
from simready.sim.backends.dynamic import DynamicBackend, capi
from simready.sim.evaluation.evaluate import evaluate_trace
from simready.sim.run import SimResult, run_simulation
from simready.sim.core.scene import substeps_per_tick
from simready.sim.ladder.settle import settle_check
from simready.testing import demo
from tests.fixtures.sim import catalog, template

EGO_X = 40.0
WARMUP_S = 0.2
DT = 0.02


def _manifest(other: dict[str, Any], clip_s: float = 2.0) -> ScenarioManifest:
    """The ego at rest (cruise 0) at x = EGO_X on ``lane_eb`` and one other vehicle."""
    cat = catalog()
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "lane_eb", EGO_X, (EGO_X, -1.75, 0.0), 0.0, role="ego", cruise=0.0)
    return demo.assemble(template(), cat, "energy-shove", [ego, other], [], clip_s=clip_s, warmup_s=WARMUP_S, dt=DT)


def _follower(gap_m: float, speed_mps: float) -> dict[str, Any]:
    """A driven sedan on ``lane_eb``, its centre ``gap_m`` behind the ego's, at ``speed_mps`` (its cruise speed too)."""
    x = EGO_X - gap_m
    return demo.vehicle(catalog(), "car", demo.SEDAN, "lane_eb", x, (x, -1.75, 0.0), speed_mps)


def _rear_end() -> ScenarioManifest:
    return _manifest(_follower(10.0, 15.0))


def _run(m: ScenarioManifest) -> SimResult:
    return run_simulation(m, template(), backend="dynamic-v1", catalog=catalog())


def _check(result: SimResult, name: str) -> dict[str, Any]:
    (found,) = [c for c in result.trace.metrics["rollout_checks"] if c["check"] == name]
    return found


def _collisions(result: SimResult) -> list[dict[str, Any]]:
    return [ev for ev in result.trace.events if ev["type"] == "collision" and {ev["a"], ev["b"]} == {"car", "ego"}]


def _note_times(detail: str) -> list[float]:
    """The ``t=…`` (s) of each note in a rollout check's detail."""
    return [float(part.split(":")[0].removeprefix("t=")) for part in detail.split("; ")]


def test_rear_end_exchanges_momentum_within_the_tyre_impulse() -> None:
    """The sedan (a force-driven body) hits the resting shuttle: one collision event, momentum passes to the ego.

    Summed over the two vehicles, momentum along the lane before the contact
    (the tick before it began) and after it (the tick it ended) may differ only
    by what the tyres can deliver over that window: Σ μ·m·g·(duration + 2 ticks).
    """
    r = _run(_rear_end())
    (hit,) = _collisions(r)
    assert hit["a"] == "car" and hit["b"] == "ego"
    # The event starts at the first tick the footprints overlap (0.20 s), a tick before the hulls meet (the
    # sedan's rounded hull lies inside its footprint).
    assert hit["t"] == pytest.approx(0.20) and hit["relative_speed_mps"] > 10.0
    assert 0.0 < hit["duration_s"] < 0.5 and hit["t_end"] == pytest.approx(hit["t"] + hit["duration_s"])
    assert hit["delta_v_mps"]["car"] > 5.0 and hit["delta_v_mps"]["ego"] > 2.0 and len(hit["point"]) == 2
    cat = catalog()
    mass = {a: cat.entry(a_id).mass_kg for a, a_id in (("car", demo.SEDAN), ("ego", demo.SHUTTLE))}
    df = r.trace.df

    def momentum(t: float) -> float:
        rows = df[(df.t - t).abs() < 1e-9]
        return sum(mass[a] * float(rows[rows.actor_id == a].vx.iloc[0]) for a in mass)

    before, after = momentum(hit["t"] - DT), momentum(hit["t_end"])
    mu = 0.9
    bound = sum(mu * m * 9.81 for m in mass.values()) * (hit["duration_s"] + 2 * DT)
    assert before > 15000.0 and abs(after - before) <= bound, (before, after, bound)
    # Delta-v follows the mass ratio: the momentum the car lost is (within the tyre impulse) what the ego gained.
    assert mass["car"] * hit["delta_v_mps"]["car"] == pytest.approx(mass["ego"] * hit["delta_v_mps"]["ego"], abs=bound)
    # Both drivers brake to a standstill afterwards, and the rollout is accepted.
    kinds = [(e["type"], e.get("actor")) for e in r.trace.events if e["type"] == "post_crash"]
    assert kinds == [("post_crash", "car"), ("post_crash", "ego")]
    last = df[df.t == df.t.max()]
    assert (last.speed_mps < 0.1).all()
    assert _check(r, "energy_gain") == {"check": "energy_gain", "passed": True, "detail": "none"}
    assert not r.issues and evaluate_trace(r.trace).accepted


def test_a_gain_without_contact_is_still_reported_in_the_same_rollout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A +1 m/s kick at the first substep of warm-up tick 5 (the ego at rest, 30 m from the car, nothing touching).

    The brakes take back at most μ·g·dt = 0.9·9.81·0.02 ≈ 0.18 m/s in that tick, so the
    ego ends it at ≳ 0.8 m/s: ≈ ½·3200·0.8² ≈ 1000 J, well over the 50 J + 0.5 % slack.
    Only that tick is reported; the shove 0.2 s into the clip is still excused.
    """
    kick_tick = 5
    substeps = substeps_per_tick(DT)
    calls = itertools.count()
    tyre_forces = DynamicBackend._tyre_forces

    def kicked(self: DynamicBackend, *args: Any, **kwargs: Any) -> float:
        if next(calls) == kick_tick * substeps:
            lin, ang = self.world.call(p.getBaseVelocity, self.ego_body)
            self.world.call(p.resetBaseVelocity, self.ego_body, [lin[0] + 1.0, lin[1], lin[2]], ang)
        return tyre_forces(self, *args, **kwargs)

    monkeypatch.setattr(DynamicBackend, "_tyre_forces", kicked)
    monkeypatch.setattr(capi, "ENABLED", False)  # the binding's substeps, which call the tyre model from Python
    r = _run(_rear_end())
    assert len(_collisions(r)) == 1
    check = _check(r, "energy_gain")
    assert not check["passed"]
    assert _note_times(check["detail"]) == [pytest.approx((kick_tick + 1) * DT - WARMUP_S)], check["detail"]


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(lambda: demo.parked(catalog(), "car", demo.SEDAN, (EGO_X - 4.0, -1.75, 0.0)), id="parked"),
        pytest.param(lambda: demo.vehicle(catalog(), "car", demo.SEDAN, "lane_eb", EGO_X - 4.0, (EGO_X - 4.0, -1.75, 0.0),
                                          0.0, cruise=0.0), id="standing-agent"),
    ],
)
def test_an_ego_spawned_inside_a_vehicle_is_the_settle_stages_to_catch(other: Any) -> None:
    """The ego spawned 0.65 m into a sedan that never moves (bumpers overlap: 4 m apart, half-lengths 2.3 + 2.35).

    In the rollout the solver pushes the two apart (a contact, recorded); the
    ego's gain is the solver popping it out, which the settle stage reports.
    """
    m = _manifest(other(), clip_s=1.0)
    r = _run(m)
    assert _collisions(r)
    codes = [code for code, _ in settle_check(m, template(), catalog=catalog(), rollout=False).reasons]
    assert any(code in ("physics.energy_gain", "physics.unsettled") for code in codes), codes


def test_settle_still_rejects_an_ego_spawned_inside_a_driven_agent() -> None:
    """The rollout excuses a contact between vehicles, so the spawn overlap is the settle stage's to catch (the other vehicles held there)."""
    m = _manifest(_follower(4.0, 8.0), clip_s=1.0)
    report = settle_check(m, template(), catalog=catalog(), rollout=False)
    assert [code for code, _ in report.reasons][:1] in (["physics.energy_gain"], ["physics.unsettled"])


def test_kinematic_vehicles_stop_at_contact_instead_of_passing_through() -> None:
    """Issue 26 item 4: in kinematic-v1 the sedan of the rear-end stops where its footprint meets the shuttle's (to
    the bisection's micrometres), at rest, with a collision event; it never enters or passes the shuttle."""
    m = _rear_end()
    r = run_simulation(m, template(), backend="kinematic-v1", catalog=catalog())
    (hit,) = _collisions(r)
    assert hit["t"] == pytest.approx(0.20) and hit["relative_speed_mps"] > 10.0
    df = r.trace.df
    car, ego = df[df.actor_id == "car"], df[df.actor_id == "ego"]
    dims = {a.id: a.dims.l for a in m.actors}
    gap = (ego.x.to_numpy() - dims["ego"] / 2) - (car.x.to_numpy() + dims["car"] / 2)
    assert gap.min() >= 0.0 and gap[car.t.to_numpy() >= hit["t"] - 1e-9].max() < 1e-4
    assert (car[car.t >= hit["t"] - 1e-9].speed_mps == 0.0).all()
    assert evaluate_trace(r.trace).accepted
