"""dynamic-v1's "energy gain without actuation" check when a kinematic agent drives into the ego.

Agents are kinematic PyBullet bodies (mass 0): one that rear-ends the
resting ego cannot take an impulse, so the solver pushes the ego out of its
way and the ego's energy rises while it is not actuating. That energy comes
from the agent's prescribed motion, not from a solver error, so the check
skips a tick that ends with a driven agent touching the ego after moving
that tick. Before that rule the rear-end below failed the check with
"t=0.52: ego energy rose 303 J without actuation; t=0.64: … 1948 J; t=1.02:
… 604 J; t=1.66: … 452 J". Contact with a parked vehicle or with an agent
that stands still excuses nothing, and a gain on a tick without contact
(here a velocity kick, standing in for a solver pop) is still reported.

Scene (``residential_crosswalk_v3``, ``lane_eb`` along y = −1.75 m): the
ego shuttle (4.6 m) waits at rest at x = 40 m (cruise 0); a sedan (4.7 m)
starts 10 m behind at 15 m/s. The bumpers are 5.35 m apart, but braking
at its hardest (decel_max 8 m/s²) the sedan needs 15²/16 ≈ 14 m to stop, so
it hits the ego at t = 0.2 s at ~11.6 m/s.
"""

from __future__ import annotations

import itertools
from typing import Any

import pybullet as p
import pytest

from simready.scenario.manifest import ScenarioManifest
from simready.sim import demo
from simready.sim.backends.dynamic import DynamicBackend
from simready.sim.run import SimResult, run_simulation
from simready.sim.scene import substeps_per_tick
from simready.sim.settle import settle_check
from tests.test_sim_fixtures import catalog, template

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


def test_rear_end_by_a_driven_agent_is_not_an_energy_gain() -> None:
    r = _run(_rear_end())
    (hit,) = _collisions(r)
    assert hit["t"] == pytest.approx(0.2) and hit["relative_speed_mps"] > 10.0
    df = r.trace.df
    ego = df[df.actor_id == "ego"]
    at_hit = ego[ego.tick == hit["tick"]].iloc[0]
    assert at_hit.throttle == 0.0 and at_hit.accel_mps2 <= 0.0  # the ego was not actuating when it was struck
    assert ego.x.max() > EGO_X + 5.0  # and it was shoved several metres down the lane
    assert _check(r, "energy_gain") == {"check": "energy_gain", "passed": True, "detail": "none"}
    assert not r.issues


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
def test_a_kinematic_body_that_does_not_move_excuses_nothing(other: Any) -> None:
    """The ego spawned 0.65 m into a sedan that never moves (bumpers overlap: 4 m apart, half-lengths 2.3 + 2.35).

    Both are mass-0 bodies in contact with the ego, but neither supplies energy: the
    ego's gain is the solver popping it out, reported by the rollout and by the settle stage.
    """
    m = _manifest(other(), clip_s=1.0)
    r = _run(m)
    assert _collisions(r)
    assert not _check(r, "energy_gain")["passed"]
    codes = [code for code, _ in settle_check(m, template(), catalog=catalog(), rollout=False).reasons]
    assert "physics.energy_gain" in codes


def test_settle_still_rejects_an_ego_spawned_inside_a_driven_agent() -> None:
    """The rollout excuses a driven agent's contact, so the spawn overlap is the settle stage's to catch (no agent moves there)."""
    m = _manifest(_follower(4.0, 8.0), clip_s=1.0)
    report = settle_check(m, template(), catalog=catalog(), rollout=False)
    assert [code for code, _ in report.reasons][:1] == ["physics.energy_gain"]
    assert report.measured["settle_energy_gain_j"] > 1000.0
