"""MOBIL's lane-change decision (SPEC §20, :func:`simready.sim.behavior.lane_changes.lane_changes`) against hand-computed values.

Each case puts a few background vehicles by hand on road 1 of the city map (two lanes one way, 150 m, x from 0 to
150: ``lane-1`` at y = −1.75, its right neighbour ``lane-2`` at y = −5.25), builds the real scene and engine, and
calls the decision on the first tick's view. The scenario's own ego and lead drive on road 4, far away.

Every background vehicle here is 4.7 m long (half length 2.35 m), cruises at 14 m/s and follows with
s0 = 2 m, T = 1.5 s, a = 1.5 m/s², b = 2 m/s² (2·√(a·b) = 2·√3 = 3.46410), braking limit 8 m/s². The planner's
law, which MOBIL evaluates: min(2·(14 − v), a·(1 − (s*/gap)²)) clamped to [−8, 1.5], s* = s0 + max(0, v·T + v·Δv/3.46410).
Vehicles that must not decide themselves crawl below the 4 m/s at which changes start.
"""

from __future__ import annotations

import pytest

from simready.scenario.generator import generate, resolve_template
from simready.scenario.traffic import BACKGROUND_TAG, TrafficSpec
from simready.sim.engine import Engine
from simready.sim.behavior.lane_changes import POLITENESS, SAFE_DECEL_MPS2, THRESHOLD_MPS2, lane_changes
from simready.sim.core.scene import build_scene
from simready.sim.core.sight import TickView

L1, L2 = "road1_sec0_lane-1", "road1_sec0_lane-2"
Y = {L1: -1.75, L2: -5.25}
LENGTH = 4.7


@pytest.fixture(scope="module")
def city():  # type: ignore[no-untyped-def]
    return resolve_template("city_crossing")


@pytest.fixture(scope="module")
def base(city):  # type: ignore[no-untyped-def]
    (m,) = generate(city.id, "lead_vehicle_brakes", 1, template=city,
                    traffic=TrafficSpec(vehicles_per_lane_km=40.0)).manifests
    proto = next(a for a in m.actors if BACKGROUND_TAG in a.tags)
    assert (proto.dims.l, proto.kind) == (LENGTH, "vehicle")
    own = [a for a in m.actors if BACKGROUND_TAG not in a.tags]
    assert {a.initial.lane_ref.lane for a in own} == {"road4_sec0_lane-1"}
    return m, proto, own


def car(proto, actor_id: str, lane: str, s: float, v: float):  # type: ignore[no-untyped-def]
    """A background vehicle at ``s`` on ``lane`` (rear to front: ``s`` ± 2.35 m) driving at ``v``."""
    initial = proto.initial.model_copy(update={
        "lane_ref": proto.initial.lane_ref.model_copy(update={"lane": lane, "s": s, "t_frac": 0.0}),
        "pose": proto.initial.pose.model_copy(update={"x": s, "y": Y[lane], "yaw": 0.0}), "speed_mps": v})
    idm = proto.behavior.idm.model_copy(update={"s0_m": 2.0, "time_gap_s": 1.5, "accel_max_mps2": 1.5,
                                                "decel_comfort_mps2": 2.0})
    behavior = proto.behavior.model_copy(update={"route": [lane], "cruise_speed_mps": 14.0, "idm": idm})
    return proto.model_copy(update={"id": actor_id, "initial": initial, "behavior": behavior})


def behind(s_ahead: float, gap: float) -> float:
    """The s of a vehicle ``gap`` m bumper to bumper behind one at ``s_ahead``."""
    return s_ahead - LENGTH - gap


def ahead(s_behind: float, gap: float) -> float:
    return s_behind + LENGTH + gap


def decide(base, city, cars: list[tuple[str, str, float, float]]) -> list[dict]:  # type: ignore[no-untyped-def]
    """The lane-change events of the first tick with these background vehicles (id, lane, s, v), ``bg_c`` first."""
    m, proto, own = base
    mm = m.model_copy(update={"actors": [car(proto, *c) for c in cars] + own})
    scene = build_scene(mm, city, backend="kinematic-v1")
    engine = Engine(scene)
    view = TickView(scene, engine.state, engine.route.paths)
    assert scene.actors.decel_max.tolist()[:len(cars)] == [8.0] * len(cars)
    state, events = lane_changes(view, engine._cruise, engine.route)
    assert (state is engine.state) == (not events)
    return events


# c at 50 m, 10 m/s, 20 m behind its leader crawling at 3 m/s on lane-1:
#   s* = 2 + 10·1.5 + 10·(10 − 3)/3.46410 = 2 + 15 + 20.20726 = 37.20726 m
#   a_c = 1.5·(1 − (37.20726/20)²) = 1.5·(1 − 3.46095) = −3.69143 m/s²  (speed tracking 2·(14 − 10) = 8 is larger)
C = ("bg_c", L1, 50.0, 10.0)
LEADER = ("bg_l", L1, ahead(50.0, 20.0), 3.0)
A_C = -3.69143


def test_free_lane_beside_pays_and_the_old_follower_counts(base, city):
    # The old follower o crawls 25 m behind c at 3.5 m/s.
    #   Before: v·T + v·Δv/3.46410 = 5.25 + 3.5·(3.5 − 10)/3.46410 = 5.25 − 6.56733 < 0 → s* = 2;
    #           a_o = 1.5·(1 − (2/25)²) = 1.5·0.9936 = 1.49040
    #   After c leaves, o follows the leader 25 + 4.7 + 20 = 49.7 m ahead at 3 m/s:
    #           s* = 2 + 5.25 + 3.5·0.5/3.46410 = 7.75518; a_o = 1.5·(1 − (7.75518/49.7)²) = 1.46348
    #   gain_o = 1.46348 − 1.49040 = −0.02692
    # c on the free lane: min(8, 1.5) = 1.5, so the incentive = 1.5 − (−3.69143) + 0.3·(−0.02692) = 5.18335 m/s².
    events = decide(base, city, [C, LEADER, ("bg_o", L1, behind(50.0, 25.0), 3.5)])
    assert [(e["actor"], e["from_lane"], e["to_lane"], e["reason"]) for e in events] == [("bg_c", L1, L2, "mobil")]
    assert events[0]["incentive_mps2"] == pytest.approx(1.5 - A_C + POLITENESS * (1.46348 - 1.49040), abs=2e-5)
    assert events[0]["incentive_mps2"] == pytest.approx(5.18335, abs=2e-5)


@pytest.mark.parametrize("gap, change", [(20.4, False), (20.8, True)])
def test_incentive_against_the_threshold(base, city, gap, change):
    # A new leader m crawls at 3 m/s ``gap`` m ahead of c on lane-2 (no followers anywhere):
    #   gap 20.4: a_c' = 1.5·(1 − (37.20726/20.4)²) = 1.5·(1 − 3.32656) = −3.48984; gain 0.20159 < 0.3 → stay
    #   gap 20.8: a_c' = 1.5·(1 − (37.20726/20.8)²) = 1.5·(1 − 3.19984) = −3.29976; gain 0.39166 > 0.3 → change
    expected = {20.4: -3.48984, 20.8: -3.29976}[gap] - A_C
    assert (expected > THRESHOLD_MPS2) == change
    events = decide(base, city, [C, LEADER, ("bg_m", L2, ahead(50.0, gap), 3.0)])
    assert [e["actor"] for e in events] == (["bg_c"] if change else [])
    if change:
        assert events[0]["incentive_mps2"] == pytest.approx(expected, abs=2e-5)


def test_politeness_new_follower_holds_back_a_marginal_change(base, city):
    # The gap-20.8 change above (gain 0.39166) with a new follower n 8 m behind c's place on lane-2 at 8 m/s:
    #   n before, behind m 8 + 4.7 + 20.8 = 33.5 m ahead at 3 m/s: s* = 2 + 12 + 8·5/3.46410 = 25.54701;
    #     a_n = 1.5·(1 − (25.54701/33.5)²) = 1.5·(1 − 0.58155) = 0.62767
    #   n after, behind c 8 m ahead at 10 m/s: s* = 2 + 12 + 8·(−2)/3.46410 = 9.38120;
    #     a_n' = 1.5·(1 − (9.38120/8)²) = 1.5·(1 − 1.37512) = −0.56268  (safe: ≥ −4)
    #   incentive = 0.39166 + 0.3·(−0.56268 − 0.62767) = 0.39166 − 0.35711 = 0.03456 < 0.3 → stay
    incentive = 0.39166 + POLITENESS * (-0.56268 - 0.62767)
    assert incentive == pytest.approx(0.03456, abs=1e-5) and incentive < THRESHOLD_MPS2
    assert -0.56268 >= -SAFE_DECEL_MPS2
    m = ("bg_m", L2, ahead(50.0, 20.8), 3.0)
    assert decide(base, city, [C, LEADER, m, ("bg_n", L2, behind(50.0, 8.0), 8.0)]) == []


def test_politeness_old_follower_tips_a_marginal_change(base, city):
    # The gap-20.4 case above (gain 0.20159, stays) with an old follower o 8 m behind c on lane-1 at 8 m/s:
    #   o before, behind c at 10 m/s: s* = 9.38120, a_o = 1.5·(1 − (9.38120/8)²) = −0.56268
    #   o after, behind c's leader 8 + 4.7 + 20 = 32.7 m ahead at 3 m/s: s* = 25.54701,
    #     a_o' = 1.5·(1 − (25.54701/32.7)²) = 1.5·(1 − 0.61036) = 0.58446
    #   incentive = 0.20159 + 0.3·(0.58446 + 0.56268) = 0.20159 + 0.34414 = 0.54573 > 0.3 → change
    # (o would change to lane-2 too, but not within 30 m of c on the same tick.)
    events = decide(base, city, [C, LEADER, ("bg_m", L2, ahead(50.0, 20.4), 3.0), ("bg_o", L1, behind(50.0, 8.0), 8.0)])
    assert [e["actor"] for e in events] == ["bg_c"]
    assert events[0]["incentive_mps2"] == pytest.approx(0.54573, abs=2e-5)


@pytest.mark.parametrize("gap, change", [(20.0, False), (21.0, True)])
def test_safety_new_follower_deceleration_limit(base, city, gap, change):
    # A new follower n closing in at its cruise speed 14 m/s, ``gap`` m behind c's place on lane-2 (nothing ahead):
    #   n before: free, speed tracking 2·(14 − 14) = 0 → a_n = 0
    #   n after, behind c at 10 m/s: s* = 2 + 21 + 14·4/3.46410 = 39.16581
    #     gap 20: a_n' = 1.5·(1 − (39.16581/20)²) = 1.5·(1 − 3.83492) = −4.25235 < −4 → unsafe, stay
    #     gap 21: a_n' = 1.5·(1 − (39.16581/21)²) = 1.5·(1 − 3.47837) = −3.71755 ≥ −4 → safe
    #       incentive = 1.5 + 3.69143 + 0.3·(−3.71755 − 0) = 5.19143 − 1.11527 = 4.07616 > 0.3 → change
    a_n_new = {20.0: -4.25235, 21.0: -3.71755}[gap]
    assert (a_n_new >= -SAFE_DECEL_MPS2) == change
    events = decide(base, city, [C, LEADER, ("bg_n", L2, behind(50.0, gap), 14.0)])
    assert [e["actor"] for e in events] == (["bg_c"] if change else [])
    if change:
        assert events[0]["incentive_mps2"] == pytest.approx(1.5 - A_C + POLITENESS * a_n_new, abs=2e-5)
        assert events[0]["incentive_mps2"] == pytest.approx(4.07616, abs=2e-5)


@pytest.mark.parametrize("gap, change", [(5.9, False), (6.1, True)])
def test_gap_window_behind(base, city, gap, change):
    # A vehicle k crawling at 3.5 m/s ``gap`` m behind c's place on lane-2. The window behind is 6 m bumper to
    # bumper (c at 50: 50 − 2.35 − 6 − 2.35 = 39.3 < s_k), so at 5.9 m the lane is not free alongside even though
    # the change would pay:
    #   k after, behind c at 10 m/s: s* = 2 (closing in negative), a_k' = 1.5·(1 − (2/gap)²)
    #     gap 5.9: 1.5·(1 − 0.11491) = 1.32764; gap 6.1: 1.5·(1 − 0.10750) = 1.33875; before: free, 1.5
    #   incentive at 6.1 = 5.19143 + 0.3·(1.33875 − 1.5) = 5.14305
    events = decide(base, city, [C, LEADER, ("bg_k", L2, behind(50.0, gap), 3.5)])
    assert [e["actor"] for e in events] == (["bg_c"] if change else [])
    if change:
        assert events[0]["incentive_mps2"] == pytest.approx(5.14305, abs=2e-5)


@pytest.mark.parametrize("gap, change", [(3.9, False), (4.1, True)])
def test_gap_window_ahead(base, city, gap, change):
    # A vehicle k ``gap`` m ahead of c's place on lane-2 at 14 m/s. The window ahead is 4 m bumper to bumper
    # (c at 50: 50 + 2.35 + 4 + 2.35 = 58.7 > s_k refuses).
    #   c after, behind k: s* = 2 + 15 + 10·(10 − 14)/3.46410 = 5.45299
    #     gap 3.9: a_c' = 1.5·(1 − (5.45299/3.9)²) = −1.43246 (it would pay 2.25897, but the window refuses)
    #     gap 4.1: a_c' = 1.5·(1 − (5.45299/4.1)²) = −1.15334; incentive = −1.15334 + 3.69143 = 2.53809 > 0.3
    events = decide(base, city, [C, LEADER, ("bg_k", L2, ahead(50.0, gap), 14.0)])
    assert [e["actor"] for e in events] == (["bg_c"] if change else [])
    if change:
        assert events[0]["incentive_mps2"] == pytest.approx(2.53809, abs=2e-5)


def test_road_marks_forbid_the_change(base, city, monkeypatch):
    # The free-lane case that pays 5.18 m/s² (first test) where lane-1 has a solid line on its right: the map's
    # ``change_right: false`` (the template's road marks) read through the lane network the decision consults.
    # (The network is patched in place rather than rebuilt for a copied map: same decision, 15 s less.)
    from simready.world.lane_graph import change_permission, lane_network

    lane = next(x for x in city.lanes if x.id == L1)
    assert change_permission(lane, "right") and not change_permission(lane.model_copy(update={"change_right": False}),
                                                                       "right")
    cars = [C, LEADER, ("bg_o", L1, behind(50.0, 25.0), 3.5)]
    assert [e["actor"] for e in decide(base, city, cars)] == ["bg_c"]
    net = lane_network(city)
    monkeypatch.setitem(net.change_allowed, (L1, "right"), False)
    assert city.lane_graph.right[L1] == L2 and net.neighbour(L1, "right") is None
    assert decide(base, city, cars) == []
