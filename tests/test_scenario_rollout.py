"""Coarse rollout and capture on hand-built plans with worked numbers; the correlated environment."""

from __future__ import annotations

import numpy as np
import pytest

from simready.catalog.catalog import ensure_catalog
from simready.scenario.capture import CaptureStage
from simready.scenario.coarse_rollout import ClosesOnLead, PathConflict, RolloutStage
from simready.scenario.generator import make_context, resolve_template
from simready.scenario.geometry import CoarsePath, Motion, SpeedProfile, stationary
from simready.scenario.ladder import Body, Proposal, ProposalScene as Scene
from simready.scenario.manifest import Environment
from simready.scenario.draws import Draws
from simready.scenario.realization import Realization
from simready.scenario.environment import correlated_environment
from simready.scenario.streams import StreamSet


@pytest.fixture(scope="module")
def ctx():
    return make_context(resolve_template("residential_crosswalk_v3"), "pedestrian_emerges_behind_van",
                        catalog=ensure_catalog())


def _proposal(ctx, bodies, event, clip_s=10.0):
    return Proposal("demo-000001", 1, 0, "demo", ctx.template, None, {}, Scene(bodies, 1.0, clip_s, event=event))


def _ego(v=10.0):
    lane = CoarsePath.from_points([(0.0, -1.75), (120.0, -1.75)])
    return Body("ego", "vehicle", "ego", "asset:shuttle/standard", "shuttle", 4.6, 2.1, 2.5,
                Motion(lane, SpeedProfile.constant(-1.0, 0.0, v)), ("drivable",))


def test_path_conflict_measures_ttc_with_worked_numbers(ctx) -> None:
    """Ego 4.6 m long at 10 m/s, centre at x = 0 at t = -1 s, on y = -1.75.
    Pedestrian (radius 0.25) walks north on x = 60 from y = -5.5 at 1.5 m/s from t = 0.

    Corridor half-width 1.05 + 0.25 = 1.3 m: entered at y = -3.05, 2.45 m on: t = 2.45 / 1.5 = 1.6333 s.
    Ego front reaches the pedestrian's edge when its centre is at 60 - 0.25 - 2.3 = 57.45 m: t = 4.745 s.
    At entry the ego centre is at 10 + 10 * 1.6333 = 26.333 m: TTC = (57.45 - 26.333) / 10 = 3.1117 s.
    """
    walk = CoarsePath.from_points([(60.0, -5.5), (60.0, 3.2)])
    # At rest until t = 0, then 1.5 m/s at once.
    profile = SpeedProfile((-1.0, 0.0), (0.0, 0.0), (0.0, 1.5), (0.0, 0.0))
    ped = Body("ped", "pedestrian", "agent", "asset:pedestrian_adult/standard", "pedestrian_adult", 0.24, 0.5, 1.75,
               Motion(walk, profile), ("sidewalk",))
    event = PathConflict("ped", "ego", (60.0, -1.75), 60.0, 1.3, 2.55)
    proposal = _proposal(ctx, {"ego": _ego(), "ped": ped}, event)
    assert RolloutStage(ctx).check(proposal).ok
    m = proposal.measured
    assert m["t_enter_path_s"] == pytest.approx(1.6333, abs=2e-3)
    assert m["t_conflict_s"] == pytest.approx(4.745, abs=1e-3)
    assert m["ttc_s"] == pytest.approx(3.1117, abs=2e-2)
    # The pedestrian clears the 2.6 m corridor at t = (2.45 + 2.6) / 1.5 = 3.37 s, before the ego arrives.
    assert m["t_contact_s"] is None
    assert CaptureStage(ctx).check(proposal).ok
    m["capture.t_first_s"] = 0.5
    assert CaptureStage(ctx).check(proposal).reason == "capture.no_pre_context"


def test_lead_braking_contact_time_with_worked_numbers(ctx) -> None:
    """Both at 10 m/s, lead 4.7 m long centred 20 + 4.65 m ahead (bumper gap 20 m); lead brakes at t = 2 s
    at 5 m/s^2 and stops 10 m later. The ego closes 20 + 10 = 30 m at 10 m/s: contact at t = 2 + 3 = 5 s
    (after the lead stopped at t = 4 s)."""
    lane = CoarsePath.from_points([(0.0, -1.75), (200.0, -1.75)])
    lead = Body("lead", "vehicle", "agent", "asset:sedan/grey", "sedan", 4.7, 1.85, 1.45,
                Motion(lane, SpeedProfile.from_phases(-1.0, 24.65, 10.0, [(3.0, 0.0), (0.0, -5.0)])), ("drivable",))
    proposal = _proposal(ctx, {"ego": _ego(), "lead": lead}, ClosesOnLead("ego", "lead", 2.0))
    assert RolloutStage(ctx).check(proposal).ok
    assert proposal.measured["headway_s"] == pytest.approx(2.0)
    assert proposal.measured["t_contact_nominal_s"] == pytest.approx(5.0, abs=1e-6)
    assert proposal.measured["required_decel_mps2"] == pytest.approx(100 / (2 * 30), abs=1e-4)


def test_rollout_rejects_a_collision_outside_the_event(ctx) -> None:
    """A van parked in the ego lane is hit long before any event."""
    van = Body("van", "vehicle", "parked", "asset:delivery_van/white", "delivery_van", 5.9, 2.05, 2.6,
               stationary(40.0, -1.75, 0.0, -1.0), ("parking",))
    proposal = _proposal(ctx, {"ego": _ego(), "van": van}, None)
    verdict = RolloutStage(ctx).check(proposal)
    assert verdict.reason == "rollout.collision" and "ego and van" in verdict.detail


def test_speed_profile_stops_instead_of_reversing() -> None:
    p = SpeedProfile.from_phases(0.0, 0.0, 10.0, [(1.0, 0.0), (0.0, -5.0)])
    s, v = p.at(np.array([0.0, 1.0, 3.0, 10.0]))
    assert s.tolist() == [0.0, 10.0, 20.0, 20.0] and v.tolist() == [10.0, 10.0, 0.0, 0.0]
    assert p.time_at(17.5) == pytest.approx(2.0)  # 10 + 10 * 1 - 2.5 * 1^2
    assert p.time_at(25.0) == float("inf")


@pytest.mark.parametrize("illumination", ["day", "dusk", "night"])
@pytest.mark.parametrize("weather", ["dry", "wet", "rain"])
def test_correlated_environment_is_consistent(illumination, weather) -> None:
    for k in range(20):
        r = Realization()
        env = correlated_environment(Draws(StreamSet(f"env-{k}")), r, illumination, weather)
        Environment.model_validate(env)  # the manifest's own consistency rules hold
        assert env["headlights"] == (illumination != "day")
        w = env["wetness"]
        assert env["road_reflectance"] == pytest.approx(0.08 + 0.6 * w, abs=1e-3)
        assert 0.85 * (1 - 0.45 * w) - 1e-3 <= env["road_friction"] <= 1.0 * (1 - 0.45 * w) + 1e-3
        assert (w > 0) == (weather != "dry")
