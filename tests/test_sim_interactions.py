"""Triggers, conditions, verbs, preemption and events (SPEC §6, §7), executed on the real templates."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.sim.core.profiles import Profile, taking_over
from simready.sim.run import run_simulation
from simready.testing import demo
from tests.fixtures.sim import INTERSECTION, catalog, edit, ego_only, template, two_lane_template

LIN = {"shape": "linear", "constraint": "time", "value": 0.5}


def _run(m, tpl=None, backend: str = "kinematic-v1"):  # type: ignore[no-untyped-def]
    return run_simulation(m, tpl or template(), backend=backend, catalog=catalog())


def _events(result, kind: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    return [e for e in result.trace.events if e["type"] == kind]


def _actor(result, actor: str):  # type: ignore[no-untyped-def]
    df = result.trace.df
    return df[df.actor_id == actor].reset_index(drop=True)


def _crossing_with(interactions: list[dict[str, Any]], **kwargs: Any):  # type: ignore[no-untyped-def]
    cat = catalog()
    return demo.assemble(template(), cat, "crossing-test", demo.crossing_actors(cat), interactions,
                         occluders=[{"id": "occ_van", "kind": "actor", "actor_id": "van"}], **kwargs)


def test_at_after_stop_and_standstill() -> None:
    m = _crossing_with([
        {"id": "go", "actor_id": "ped", "trigger": {"kind": "at", "t_s": 1.0},
         "speed": {"mode": "absolute", "value": 1.4}, "dynamics": LIN},
        {"id": "halt", "actor_id": "ped", "trigger": {"kind": "after", "id": "go", "delay_s": 1.5},
         "speed": {"mode": "stop"}, "dynamics": {"shape": "linear", "constraint": "rate", "value": 2.0}},
        {"id": "still", "actor_id": "van", "trigger": {"kind": "when", "by_latest_s": 5.0, "if_never": "skip",
         "condition": {"kind": "and", "of": [
             {"kind": "standstill", "actor": "ped", "for_s": 0.5},
             {"kind": "reaches", "actor": "ped", "region": {"shape": "polygon", "points": [
                 {"x": 59.0, "y": -6.7}, {"x": 61.0, "y": -6.7}, {"x": 61.0, "y": -5.0}, {"x": 59.0, "y": -5.0}]}}]}},
         "set": {"key": "lights.hazard", "value": True}},
    ], clip_s=5.0, warmup_s=1.0)
    r = _run(m)
    fired = {e["interaction"]: e for e in _events(r, "trigger_fired")}
    w = r.trace.header["warmup_ticks"]
    assert fired["go"]["tick"] == w + 50 and fired["halt"]["tick"] == w + 125
    ped = _actor(r, "ped")
    # Stopping at 2 m/s² from 1.4 m/s takes 0.7 s: at rest from t = 3.2 s, so 'still' fires 0.5 s later.
    assert ped.speed_mps[ped.t > 3.25].max() == 0.0
    assert fired["still"]["t"] == pytest.approx(3.2 + 0.5, abs=0.041)
    assert r.trace.metrics["trigger_never_fired"] == []


def test_when_by_latest_skip_fire_and_skipped_after() -> None:
    never = {"kind": "speed", "actor": "ego", "op": "gt", "value_mps": 50.0}
    m = _crossing_with([
        {"id": "a_never", "actor_id": "ped", "trigger": {"kind": "when", "condition": never, "by_latest_s": 1.0, "if_never": "skip"},
         "speed": {"mode": "absolute", "value": 1.0}, "dynamics": LIN},
        {"id": "b_after_never", "actor_id": "ped", "trigger": {"kind": "after", "id": "a_never", "delay_s": 0.0},
         "speed": {"mode": "absolute", "value": 1.0}, "dynamics": LIN},
        {"id": "c_late", "actor_id": "ped", "trigger": {"kind": "when", "condition": never, "by_latest_s": 2.0, "if_never": "fire"},
         "speed": {"mode": "absolute", "value": 1.2}, "dynamics": LIN},
    ], clip_s=3.0, warmup_s=1.0)
    r = _run(m)
    skipped = {e["interaction"]: e for e in _events(r, "trigger_skipped")}
    assert skipped["a_never"]["t"] == 1.0 and skipped["a_never"]["reason"] == "by_latest"
    assert skipped["b_after_never"]["t"] == 1.0 and "a_never was skipped" in skipped["b_after_never"]["reason"]
    (late,) = _events(r, "trigger_fired")
    assert late["interaction"] == "c_late" and late["t"] == 2.0 and late["reason"] == "by_latest"
    assert r.trace.metrics["trigger_never_fired"] == ["a_never", "b_after_never"]


def test_preemption_and_until_release() -> None:
    step = {"shape": "step", "constraint": "time", "value": 0.0}
    m = ego_only(clip_s=5.0, interactions=[
        {"id": "slow", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 0.5}, "speed": {"mode": "absolute", "value": 4.0},
         "dynamics": step, "until": {"kind": "at", "t_s": 2.0}},
        {"id": "slower", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 3.0}, "speed": {"mode": "factor", "value": 0.5},
         "dynamics": {"shape": "cubic", "constraint": "time", "value": 1.0}},
        {"id": "faster", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 3.5}, "speed": {"mode": "delta", "value": 2.0},
         "dynamics": {"shape": "sinusoidal", "constraint": "rate", "value": 2.0}},
    ])
    r = _run(m)
    (released,) = _events(r, "released")
    assert released["interaction"] == "slow" and released["t"] == 2.0 and released["axis"] == "longitudinal"
    (pre,) = _events(r, "preemption")
    assert pre == {**pre, "actor": "ego", "axis": "longitudinal", "preempted": "slower", "by": "faster", "t": 3.5}
    ego = _actor(r, "ego")
    # After release the ego returns towards its cruise speed (10 m/s).
    assert ego.speed_mps[(ego.t > 1.9) & (ego.t < 2.0)].max() < 4.5
    assert ego.speed_mps[ego.t == 3.0].iloc[0] > ego.speed_mps[ego.t == 2.0].iloc[0]


def test_exist_spawn_and_despawn() -> None:
    cat = catalog()
    walker = demo.pedestrian(cat, "walker", (40.0, 4.6, 0.0), ["sn_40", "sn_60"], speed=1.0, cruise=1.0)
    walker["present_at_start"] = False
    m = ego_only(clip_s=3.0, extra=[walker], interactions=[
        {"id": "appear", "actor_id": "walker", "trigger": {"kind": "at", "t_s": 1.0}, "exist": {"state": "present"}},
        {"id": "vanish", "actor_id": "walker", "trigger": {"kind": "at", "t_s": 2.0}, "exist": {"state": "absent"}},
    ])
    r = _run(m)
    assert [(e["type"], e["t"]) for e in r.trace.events if e["type"] in ("spawn", "despawn")] == [("spawn", 1.0), ("despawn", 2.0)]
    w = _actor(r, "walker")
    assert not w.present[w.t < 1.0].any() and w.present[(w.t >= 1.02) & (w.t <= 2.0)].all() and not w.present[w.t > 2.01].any()
    moving = w[w.present]
    assert moving.x.iloc[-1] > moving.x.iloc[0]


def test_set_env_friction_caps_braking() -> None:
    m = ego_only(clip_s=4.0, interactions=[
        {"id": "ice", "actor_id": None, "trigger": {"kind": "at", "t_s": 0.5}, "set": {"key": "env.road_friction", "value": 0.3}},
        {"id": "stop", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 1.0}, "speed": {"mode": "stop"},
         "dynamics": {"shape": "step", "constraint": "time", "value": 0.0}},
    ])
    r = _run(m)
    (st,) = _events(r, "state_set")
    assert st["key"] == "env.road_friction" and st["value"] == 0.3 and st["actor"] is None
    ego = _actor(r, "ego")
    assert ego.accel_mps2.min() == pytest.approx(-0.3 * 9.81)


def test_visible_condition_agrees_with_reveal_metric() -> None:
    m = _crossing_with(demo.crossing_interactions() + [
        {"id": "seen", "actor_id": "van", "trigger": {"kind": "when", "by_latest_s": 9.0, "if_never": "skip",
         "condition": {"kind": "visible", "a": "ped", "to": "ego"}}, "set": {"key": "doors.sliding", "value": "open"}},
        {"id": "near", "actor_id": "van", "trigger": {"kind": "when", "by_latest_s": 9.0, "if_never": "skip",
         "condition": {"kind": "and", "of": [{"kind": "distance", "a": "ego", "b": "van", "metric": "euclidean", "op": "lt", "value_m": 10.0},
                                             {"kind": "reaches", "actor": "ego", "region": {"shape": "circle", "x": 40.0, "y": -1.75, "r": 3.0}}]}},
         "set": {"key": "lights.brake", "value": True}},
        {"id": "close_call", "actor_id": "van", "trigger": {"kind": "when", "by_latest_s": 9.0, "if_never": "skip",
         "condition": {"kind": "ttc", "a": "ego", "b": "ped", "op": "lt", "value_s": 3.0}}, "set": {"key": "lights.indicator_left", "value": True}},
    ], clip_s=9.0)
    r = _run(m)
    fired = {e["interaction"]: e for e in _events(r, "trigger_fired")}
    reveal = r.trace.metrics["reveal_to_conflict"]
    assert reveal["actor"] == "ped" and fired["seen"]["t"] == reveal["t_reveal"]
    ego = _actor(r, "ego")
    x_near = ego.x[ego.t == fired["near"]["t"]].iloc[0]
    assert 37.0 <= x_near <= 43.0 and abs(x_near - 47.0) < 10.0
    assert fired["close_call"]["t"] == pytest.approx(1.46, abs=0.2)


def test_arrival_trigger_synchronises_with_the_ego() -> None:
    m = _crossing_with([
        {"id": "go", "actor_id": "ped", "trigger": {"kind": "arrival", "of": "ped", "conflict_point": "cw_s", "sync_with": "ego", "ttc_s": 1.5},
         "speed": {"mode": "absolute", "value": 1.4}, "dynamics": LIN},
    ], clip_s=8.0)
    r = _run(m)
    (go,) = _events(r, "trigger_fired")
    assert go["reason"] == "arrival" and 0.0 < go["t"] < 3.0


def test_collision_event_and_condition() -> None:
    cat = catalog()
    actors = demo.crossing_actors(cat)
    actors[0]["behavior"]["rules"] = dict(demo.RULES, collision_avoidance=False, **{"yield": False})
    m = demo.assemble(template(), cat, "collide", actors, demo.crossing_interactions() + [
        {"id": "after_hit", "actor_id": "van", "trigger": {"kind": "when", "by_latest_s": 9.0, "if_never": "skip",
         "condition": {"kind": "collision", "a": "ego", "b": "ped"}}, "set": {"key": "lights.hazard", "value": False}},
    ], clip_s=9.0)
    r = _run(m)
    (hit,) = _events(r, "collision")
    assert {hit["a"], hit["b"]} == {"ego", "ped"} and hit["relative_speed_mps"] > 1.0
    fired = {e["interaction"]: e for e in _events(r, "trigger_fired")}
    assert fired["after_hit"]["tick"] == hit["tick"]
    assert r.trace.metrics["collisions"][0]["t"] == hit["t"]
    assert r.trace.metrics["min_ttc"]["value"] == 0.0


def test_obey_signals_stop_line_and_signal_condition() -> None:
    tpl = template(INTERSECTION)
    m = edit(demo.signal_manifest(tpl, catalog(), red_s=8.0), lambda d: d["interactions"].append(
        {"id": "on_green", "actor_id": "ego", "trigger": {"kind": "when", "by_latest_s": 14.0, "if_never": "skip",
         "condition": {"kind": "signal", "signal": "south", "state": "green"}}, "set": {"key": "lights.indicator_left", "value": True}}))
    r = _run(m, tpl)
    (green,) = _events(r, "trigger_fired")
    assert green["t"] == 8.0
    ego = _actor(r, "ego")
    front = ego.y + 2.3
    stop_line_y = -60.0 + 44.5
    assert front[ego.t < 8.0].max() <= stop_line_y + 0.05
    assert ego.speed_mps[(ego.t > 7.2) & (ego.t <= 8.0)].max() == 0.0
    assert ego.speed_mps.iloc[-1] > 3.0 and front.iloc[-1] > stop_line_y


def test_lane_change_left_then_rejected_right() -> None:
    tpl = two_lane_template()
    m = ego_only(tpl, clip_s=6.0, interactions=[
        {"id": "left", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 1.0}, "change_lane": {"mode": "left"},
         "dynamics": {"shape": "cubic", "constraint": "time", "value": 3.0}},
        {"id": "right_again", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 1.5}, "change_lane": {"mode": "left"},
         "dynamics": {"shape": "linear", "constraint": "time", "value": 2.0}},
    ])
    r = _run(m, tpl)
    (lc,) = _events(r, "lane_change")
    assert lc["from_lane"] == "lane_eb" and lc["to_lane"] == "lane_wb" and lc["t"] == 1.0
    (rej,) = _events(r, "lane_change_rejected")
    assert rej["interaction"] == "right_again" and "no left neighbour" in rej["reason"]
    (rel,) = _events(r, "released")
    assert rel["interaction"] == "left" and rel["t"] == pytest.approx(4.0, abs=0.021)
    ego = _actor(r, "ego")
    assert ego.y.iloc[-1] == pytest.approx(1.75, abs=1e-6) and ego.lane.iloc[-1] == "lane_wb"
    mid = ego[(ego.t > 2.0) & (ego.t < 3.0)]
    assert (np.diff(mid.y) > 0).all() and (ego.qz[(ego.t > 1.1) & (ego.t < 3.9)] > 0).all()


def test_lane_change_into_an_occupied_lane_is_rejected() -> None:
    tpl = two_lane_template()
    cat = catalog()
    blocker = demo.vehicle(cat, "blocker", demo.SEDAN, "lane_wb", 6.0, (6.0, 1.75, 0.0), 10.0)
    m = ego_only(tpl, clip_s=3.0, extra=[blocker], interactions=[
        {"id": "left", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 0.5}, "change_lane": {"mode": "left"},
         "dynamics": {"shape": "linear", "constraint": "time", "value": 2.0}}])
    r = _run(m, tpl)
    (rej,) = _events(r, "lane_change_rejected")
    assert "blocker occupies" in rej["reason"]
    assert _actor(r, "ego").lane.iloc[-1] == "lane_eb"


def test_lane_offset_held_then_released_and_gap_verb() -> None:
    cat = catalog()
    lead = demo.vehicle(cat, "lead", demo.SEDAN, "lane_eb", 30.0, (30.0, -1.75, 0.0), 6.0)
    m = ego_only(clip_s=12.0, extra=[lead], interactions=[
        {"id": "nudge", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 0.5}, "lane_offset": {"value": 0.4, "unit": "metres"},
         "dynamics": {"shape": "linear", "constraint": "rate", "value": 0.4}, "until": {"kind": "at", "t_s": 3.0}},
        {"id": "follow", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 0.0}, "gap": {"target": "lead", "value": 2.0, "unit": "time"},
         "dynamics": {"shape": "linear", "constraint": "time", "value": 3.0}},
    ])
    r = _run(m)
    ego, lead_df = _actor(r, "ego"), _actor(r, "lead")
    assert ego.y[ego.t == 2.0].iloc[0] == pytest.approx(-1.75 + 0.4, abs=1e-6)
    assert ego.y.iloc[-1] == pytest.approx(-1.75, abs=1e-6)
    gap = (lead_df.x - ego.x - (lead_df.x * 0 + 2.35 + 2.3)).iloc[-1]
    assert gap / ego.speed_mps.iloc[-1] == pytest.approx(2.0, abs=0.15)


def test_pedestrian_with_stop_tendency_waits_at_the_kerb() -> None:
    cat = catalog()
    actors = demo.crossing_actors(cat)
    actors[2]["walk"]["stop_tendency"] = 1.0
    actors[2]["walk"]["reaction_delay_s"] = 0.3
    m = demo.assemble(template(), cat, "kerb", actors, demo.crossing_interactions(),
                      occluders=[{"id": "occ_van", "kind": "actor", "actor_id": "van"}], clip_s=10.0)
    r = _run(m)
    ped = _actor(r, "ped")
    kerb_y = -3.5
    waiting = ped[(ped.speed_mps < 0.05) & (ped.t > 1.0)]
    assert len(waiting) > 10 and waiting.y.max() < kerb_y
    assert ped.y.iloc[-1] > 0.0
    assert r.trace.metrics["collisions"] == []


def test_speed_match_follows_the_target() -> None:
    cat = catalog()
    lead = demo.vehicle(cat, "lead", demo.SEDAN, "lane_eb", 40.0, (40.0, -1.75, 0.0), 7.0)
    m = ego_only(clip_s=5.0, extra=[lead], interactions=[
        {"id": "match", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 0.0}, "speed": {"mode": "match", "target": "lead"},
         "dynamics": {"shape": "linear", "constraint": "time", "value": 1.0}}])
    r = _run(m)
    assert _actor(r, "ego").speed_mps.iloc[-1] == pytest.approx(7.0, abs=0.05)


@pytest.mark.parametrize("yields", [True, False])
def test_left_turn_yields_to_oncoming_straight_traffic(yields: bool) -> None:
    tpl = template(INTERSECTION)
    cat = catalog()
    rules = dict(demo.RULES, **{"yield": yields})
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "s_in", 30.0, (1.75, -30.0, 1.5707963268), 6.0, role="ego",
                       route=["s_in", "s_to_w", "w_out"], rules=rules)
    oncoming = demo.vehicle(cat, "oncoming", demo.SEDAN, "n_in", 30.0, (-1.75, 30.0, -1.5707963268), 8.0,
                            route=["n_in", "n_to_s", "s_out"])
    r = _run(demo.assemble(tpl, cat, "junction", [ego, oncoming], [], clip_s=12.0, warmup_s=0.5), tpl)
    hits = r.trace.metrics["collisions"]
    ego_df = _actor(r, "ego")
    if yields:
        assert hits == [] and ego_df.speed_mps.min() < 2.0
        assert ego_df.lane.iloc[-1] == "w_out"
    else:
        assert [(h["a"], h["b"]) for h in hits] == [("ego", "oncoming")]


def test_route_verb_reroutes_a_pedestrian() -> None:
    m = _crossing_with(demo.crossing_interactions() + [
        {"id": "turn_back", "actor_id": "ped", "trigger": {"kind": "at", "t_s": 0.5}, "route": {"nodes": ["ss_40", "ss_20"]}}],
        clip_s=4.0)
    r = _run(m)
    ped = _actor(r, "ped")
    assert ped.x.iloc[-1] < 58.0 and ped.y.max() < -6.0  # walks west along the sidewalk instead of crossing
    assert [e["interaction"] for e in _events(r, "trigger_fired")][-1] == "turn_back"


@pytest.mark.parametrize("dynamics", [
    {"shape": "sinusoidal", "constraint": "time", "value": 2.0},
    {"shape": "cubic", "constraint": "rate", "value": 0.6},
    {"shape": "linear", "constraint": "rate", "value": 0.3},
], ids=lambda d: d["shape"])
def test_lane_offset_preempting_a_lane_change_takes_over_the_lateral_motion(dynamics: dict[str, Any]) -> None:
    """The offset moves on from where the lane change left it, at the rate it had, under its own dynamics.

    Restarting from rest stopped 1.5 m/s of sideways motion in one tick (~70 m/s² from positions); a linear
    shape then still stepped its own declared rate (15 m/s² here). Every shape now stays smooth.
    """
    tpl = two_lane_template()
    m = ego_only(tpl, clip_s=10.0, interactions=[
        {"id": "left", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 1.0}, "change_lane": {"mode": "left"},
         "dynamics": {"shape": "cubic", "constraint": "time", "value": 3.0}},
        {"id": "nudge", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 2.0}, "lane_offset": {"value": 0.3, "unit": "metres"},
         "dynamics": dynamics}])
    r = _run(m, tpl)
    (pre,) = _events(r, "preemption")
    assert pre == {**pre, "axis": "lateral", "preempted": "left", "by": "nudge", "t": 2.0}
    ego = _actor(r, "ego")
    dt = r.trace.header["dt"]
    y = ego.y.to_numpy()  # both lanes run east: the lateral offset is y
    vy_from_positions = np.diff(y) / dt
    assert abs(ego.vy[ego.t == 2.0].iloc[0]) > 1.0  # the change was well under way
    jump = np.abs(np.diff(vy_from_positions))
    assert jump.max() / dt < 5.0
    assert y.max() <= 1.75 + 0.3 + 1e-6  # no swing past the offset and back
    assert y[-1] == pytest.approx(1.75 + 0.3, abs=1e-6)
    # Positions agree with the recorded lateral speed.
    assert np.allclose(vy_from_positions, 0.5 * (ego.vy.to_numpy()[1:] + ego.vy.to_numpy()[:-1]), atol=0.01)


@pytest.mark.parametrize("change_shape,offset_shape", [
    ("sinusoidal", "linear"), ("linear", "linear"), ("cubic", "sinusoidal"), ("linear", "cubic")])
def test_a_lane_offset_preempting_a_lane_change_keeps_the_lateral_acceleration_bounded(change_shape: str,
                                                                                      offset_shape: str) -> None:
    """Issue 26's held case: an offset of 0.5 m over 2 s preempts a 3 s lane change 2.1 s into it, then is released.

    Measured from positions alone (the lanes run east, so the lateral offset is y): the offset's second
    difference stays within 5 m/s² through the change, the takeover, both corners of a linear shape and the
    linear return after the release (25–58 m/s² when a linear shape stepped its rate).
    """
    tpl = two_lane_template()
    m = ego_only(tpl, clip_s=10.0, interactions=[
        {"id": "left", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 1.0}, "change_lane": {"mode": "left"},
         "dynamics": {"shape": change_shape, "constraint": "time", "value": 3.0}},
        {"id": "nudge", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 3.1},
         "lane_offset": {"value": 0.5, "unit": "metres"},
         "dynamics": {"shape": offset_shape, "constraint": "time", "value": 2.0}, "until": {"kind": "at", "t_s": 6.0}}])
    r = _run(m, tpl)
    (pre,) = _events(r, "preemption")
    assert pre == {**pre, "axis": "lateral", "preempted": "left", "by": "nudge", "t": 3.1}
    ego = _actor(r, "ego")
    dt = r.trace.header["dt"]
    y = ego.y.to_numpy()
    t = ego.t.to_numpy()
    lateral_accel = np.abs(np.diff(y, 2)) / dt**2
    assert lateral_accel.max() <= 5.0
    assert abs(ego.vy[ego.t == 3.1].iloc[0]) > 0.5  # the change was still moving sideways
    assert y[np.searchsorted(t, 5.9)] == pytest.approx(1.75 + 0.5, abs=1e-6)  # the offset reached, then held
    assert y[-1] == pytest.approx(1.75, abs=1e-6)  # and returned to the lane centre after the release


def test_a_linear_lane_change_from_rest_rounds_its_corners() -> None:
    """A linear lane change keeps its declared 3 s, its two corners parabolic at 2 m/s² (58 m/s² in one tick
    when the rate stepped to 3.5/3 m/s)."""
    tpl = two_lane_template()
    m = ego_only(tpl, clip_s=6.0, interactions=[
        {"id": "left", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 1.0}, "change_lane": {"mode": "left"},
         "dynamics": {"shape": "linear", "constraint": "time", "value": 3.0}}])
    r = _run(m, tpl)
    ego = _actor(r, "ego")
    dt = r.trace.header["dt"]
    y, t = ego.y.to_numpy(), ego.t.to_numpy()
    assert np.abs(np.diff(y, 2)).max() / dt**2 <= 2.0 + 1e-6
    moving = t[1:][np.abs(np.diff(y)) > 1e-9]
    assert moving.min() == pytest.approx(1.0 + dt) and moving.max() == pytest.approx(4.0, abs=1e-9)
    assert y[-1] == pytest.approx(1.75, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(shape=st.sampled_from(["linear", "sinusoidal", "cubic"]), constraint=st.sampled_from(["time", "rate"]),
       q0=st.integers(-3000, 3000).map(lambda mm: mm / 1000), q1=st.integers(-3000, 3000).map(lambda mm: mm / 1000),
       rate0=st.integers(-2000, 2000).map(lambda mm: mm / 1000))
def test_a_taken_over_profile_starts_from_the_current_value_and_rate(shape: str, constraint: str, q0: float, q1: float,
                                                                     rate0: float) -> None:
    """Shared by every lateral verb: value and rate continuous at the takeover, the target reached at rest."""
    dt, accel = 0.02, 2.0
    p = taking_over(shape, constraint, 1.5 if constraint == "time" else 0.5, q0, rate0, q1, 10, accel)
    assert p.at(10, dt)[:2] == pytest.approx((q0, rate0), abs=1e-12)
    # One tick on, the offset has moved at the inherited rate plus at most the declared transition's peak rate.
    peak_f = {"linear": 1.0, "sinusoidal": math.pi / 2, "cubic": 1.5}[shape]
    declared_peak = abs(q1 - q0 - p.coast) * peak_f / p.duration_s if p.duration_s > 0 else math.inf
    assert abs(p.at(11, dt)[0] - q0 - rate0 * dt) <= declared_peak * dt + accel * dt * dt + 1e-12
    end = 10 + int(math.ceil(max(p.duration_s, p.carry_s) / dt)) + 1
    assert p.done(end, dt) and p.at(end, dt) == pytest.approx((q1, 0.0, 0.0), abs=1e-9)
    # The inherited rate is shed at the stated acceleration, at most.
    carry_only = replace(p, q1=q0 + p.coast)
    assert max(abs(carry_only.at(k, dt)[2]) for k in range(10, end)) <= accel + 1e-9
    assert Profile.from_json(p.to_json()) == p
    assert Profile.from_json(p.to_json()[:5]) == replace(p, rate0_per_s=0.0, carry_s=0.0)


@settings(max_examples=60, deadline=None)
@given(constraint=st.sampled_from(["time", "rate"]), value=st.integers(1, 40).map(lambda x: x / 10),
       q0=st.integers(-3000, 3000).map(lambda mm: mm / 1000), q1=st.integers(-3000, 3000).map(lambda mm: mm / 1000),
       rate0=st.integers(-2000, 2000).map(lambda mm: mm / 1000))
def test_a_linear_lateral_profile_has_rounded_corners(constraint: str, value: float, q0: float, q1: float,
                                                      rate0: float) -> None:
    """Parabolic blends at the corner acceleration: a ``time`` constraint keeps its duration, a ``rate`` one its
    peak rate; value and rate are continuous everywhere and the acceleration never exceeds the two bounds."""
    dt, shed, corner = 0.02, 2.0, 2.0
    p = taking_over("linear", constraint, value, q0, rate0, q1, 10, shed, corner_accel_per_s2=corner)
    sharp = taking_over("linear", constraint, value, q0, rate0, q1, 10, shed)
    span = abs(q1 - q0 - p.coast)
    assert p.at(10, dt)[:2] == pytest.approx((q0, rate0), abs=1e-12)
    declared = replace(p, q0=q0 + p.coast, rate0_per_s=0.0, carry_s=0.0)  # the declared transition alone
    if constraint == "time":
        assert p.duration_s == sharp.duration_s == value
        bound = max(corner, 4.0 * span / value**2)  # the corners meet when the time is too short
    else:
        bound = corner
        peak = max(abs(declared.at(k, dt)[1]) for k in range(10, 10 + int(p.duration_s / dt) + 2))
        assert peak <= value + 1e-9
        if span * corner > value**2:  # long enough to reach the declared rate
            assert p.duration_s == pytest.approx(span / value + value / corner)
    assert max(abs(declared.at(k, dt)[2]) for k in range(10, 10 + int(p.duration_s / dt) + 2)) <= bound + 1e-9
    # Sampled finely: no step in the rate anywhere (the acceleration is bounded by shedding plus the corners).
    fine = 1e-3
    end = 10_000 + int(math.ceil(max(p.duration_s, p.carry_s) / fine)) + 2
    q = np.array([q0 - rate0 * fine] + [replace(p, start_tick=10_000).at(k, fine)[0] for k in range(10_000, end)])
    assert np.abs(np.diff(q, 2)).max() / fine**2 <= shed + bound + 1e-6
    done = 10 + int(math.ceil(max(p.duration_s, p.carry_s) / dt)) + 1
    assert p.at(done, dt) == pytest.approx((q1, 0.0, 0.0), abs=1e-9)
    assert Profile.from_json(p.to_json()) == p
    assert len(sharp.to_json()) == 7 and Profile.from_json(sharp.to_json()) == sharp
