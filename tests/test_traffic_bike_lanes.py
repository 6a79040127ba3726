"""Bike lanes and pedestrian lights (issue 31): an OpenDRIVE map with both, imported; cyclists ride the bike lanes,
background pedestrians cross on their light's green."""

from __future__ import annotations

import numpy as np
import pytest
from shapely.geometry import Point

from simready.maps import defaults
from simready.maps.xodr_import import import_opendrive
from simready.scenario.generator import generate
from simready.scenario.manifest import parse_manifest
from simready.scenario.traffic import BACKGROUND_TAG, TrafficSpec
from simready.sim.behavior import walkers
from simready.sim.controllers.planner import RouteTable
from simready.sim.run import run_simulation
from simready.sim.core.scene import build_scene
from simready.testing.opendrive_maps import BIKE, bike_road
from simready.world.template import parse_template

#: Every light's program read from 25 s in at t = 0: the vehicles' yellow until t = 3 s, red after; the
#: pedestrians' light red until t = 4 s (the vehicles' yellow and an all-red second), green after.
OFFSET_S = 35.0
TRAFFIC = TrafficSpec(vehicles_per_lane_km=20.0, pedestrians_per_sidewalk_100m=20.0, cyclists_per_km=60.0)


@pytest.fixture(scope="module")
def bike(tmp_path_factory):
    path = tmp_path_factory.mktemp("bike") / "bike.xodr"
    path.write_bytes(bike_road())
    data = import_opendrive(path, "bike").data
    for sig in data["signals"] + data["pedestrian_signals"]:
        sig["offset_s"] = OFFSET_S
    return data, parse_template(data)


@pytest.fixture(scope="module")
def busy(bike):
    _, tpl = bike
    (m,) = generate(tpl.id, "lead_vehicle_brakes", 1, template=tpl, traffic=TRAFFIC).manifests
    return tpl, m, run_simulation(m, tpl, backend="kinematic-v1").trace


def test_bike_lanes_and_pedestrian_lights_imported(bike):
    data, tpl = bike
    w = BIKE["widths"]
    lanes = {lane.id: lane for lane in tpl.lanes}
    assert {k: v.kind for k, v in lanes.items()} == {"road1_sec0_lane-1": "driving", "road1_sec0_lane-2": "biking",
                                                      "road1_sec0_lane1": "driving", "road1_sec0_lane2": "biking"}
    # The bike lane's centre: beyond the driving lane, half its own width further out.
    assert lanes["road1_sec0_lane-2"].polyline[0] == (0.0, -(w[-1] + w[-2] / 2))
    assert lanes["road1_sec0_lane2"].polyline[0] == (BIKE["length"], w[1] + w[2] / 2)  # against s
    assert lanes["road1_sec0_lane-2"].width_m == w[-2]
    # No lane change between a driving lane and a bike lane; the traffic light holds the bike lane too.
    assert lanes["road1_sec0_lane-1"].change_right is None and lanes["road1_sec0_lane-2"].change_left is None
    signals = {s.id: s for s in tpl.signals}
    assert signals["signal_11"].controls == ("road1_sec0_lane-1", "road1_sec0_lane-2")
    assert signals["signal_11"].stop_line.lane == "road1_sec0_lane-1"
    assert signals["signal_11"].stop_line.s_m == BIKE["light_s"]["+"]
    (ped,) = tpl.pedestrian_signals
    assert ped.id == "ped_signal_21" and ped.crosswalks == ("crosswalk_1_cw1",)
    assert [(p.state, p.duration_s) for p in ped.program] == [("red", 29.0), ("green", 25.0), ("red", 6.0)]
    assert sum(p["duration_s"] for p in defaults.PEDESTRIAN_SIGNAL_PROGRAM) == \
        sum(p["duration_s"] for p in defaults.DEFAULT_SIGNAL_PROGRAM)
    # Walk only while the vehicles have red: at program time 25 s (t = 0 here) yellow and red, 29 s red and green.
    assert (ped.state_at(0.0), signals["signal_11"].state_at(0.0)) == ("red", "yellow")
    assert (ped.state_at(4.0), signals["signal_11"].state_at(4.0)) == ("green", "red")
    assert "pedestrian lights: imported as pedestrian signals over their crosswalks" in tpl.provenance.skipped


def test_cyclists_ride_the_bike_lanes(busy):
    tpl, m, trace = busy
    cyclists = [a for a in m.actors if a.kind == "cyclist" and BACKGROUND_TAG in a.tags]
    assert len(cyclists) >= 10
    for c in cyclists:
        assert c.initial.lane_ref.lane in ("road1_sec0_lane-2", "road1_sec0_lane2") and c.initial.lane_ref.t_frac == 0.0
        assert set(c.behavior.route) <= {"road1_sec0_lane-2", "road1_sec0_lane2"}
    vehicles = [a for a in m.actors if a.kind == "vehicle" and BACKGROUND_TAG in a.tags]
    assert vehicles and all(v.initial.lane_ref.lane in ("road1_sec0_lane-1", "road1_sec0_lane1") for v in vehicles)
    df = trace.df
    ride = df[df.actor_id.isin({c.id for c in cyclists}) & df.present.astype(bool)]
    # Every cyclist's centre stays in its bike lane (|y| within 3.5 to 5.0 m) all clip long.
    w = BIKE["widths"]
    assert ride.y.abs().between(w[1], w[1] + w[2]).all()
    assert not [e for e in trace.events if e["type"] in ("collision", "termination")]
    # Cyclists stop at the red light's stop line carried across to the bike lane (x = 105 eastbound; red from
    # t = 3 s): an eastbound one 5 m or more before it then never passes it.
    line = BIKE["light_s"]["+"]
    east = ride[ride.y < 0]
    before = set(east[(east.t == 3.0) & (east.x < line - 5.0)].actor_id)
    assert before, "no eastbound cyclist approaches the red light"
    assert (east[east.actor_id.isin(before)].x < line).all()
    stopped = east[east.actor_id.isin(before) & (east.x > line - 10.0)]
    assert (stopped.speed_mps < 0.05).any(), "no cyclist stands at the stop line"


def test_pedestrians_cross_on_their_light(busy):
    tpl, m, trace = busy
    scene = build_scene(m, tpl, backend="kinematic-v1")
    route = RouteTable.build(scene, scene.initial_paths)
    states = walkers.pedestrian_states(scene)
    assert states.shape[1] == 1
    df = trace.df
    roads = scene.kerb_regions
    crossed = waited = 0
    for i, cross in sorted(route.walking.items()):
        if cross is None:
            continue
        assert cross[3] == (0,), "a crossing over the crosswalk without its pedestrian light"
        rows = df[df.actor_id == scene.actors.ids[i]]
        inside = np.array([roads.contains(Point(x, y)) for x, y in zip(rows.x, rows.y)])
        if inside.any() and not inside[0]:
            tick = int(rows.tick.iloc[int(np.argmax(inside))])
            assert states[tick, 0] == 2 - 2, f"{scene.actors.ids[i]} steps off on red"  # green is 0
            crossed += 1
        waited += bool(((rows.speed_mps < 0.05) & (rows.t < 4.0) & ~inside).any())
    assert crossed >= 1 and waited >= 1


def test_cyclists_re_enter_in_the_bike_lanes(tmp_path):
    """With ``recycle``, a cyclist that left re-enters where bike-lane cyclists started (the driving lanes here have
    a bike lane at their kerb, so no reserve entry is a kerbside one), and the cyclists' count stays up."""
    path = tmp_path / "bike.xodr"
    path.write_bytes(bike_road())
    tpl = parse_template(import_opendrive(path, "bike").data)  # the lights' own programs: the bike lanes flow
    # Pedestrians only share the road here (6 per 100 m of sidewalk, 17 of them: a quarter of the 40 s rollout's time
    # that 20 per 100 m took); the cyclists still re-enter seven times, into both bike lanes.
    spec = TrafficSpec(vehicles_per_lane_km=20.0, pedestrians_per_sidewalk_100m=6.0, cyclists_per_km=60.0,
                       recycle=True)
    (m,) = generate(tpl.id, "lead_vehicle_brakes", 1, template=tpl, traffic=spec).manifests
    m = parse_manifest({**m.model_dump(mode="json", by_alias=True), "clip_s": 40.0}, m.sample_id)
    trace = run_simulation(m, tpl, backend="kinematic-v1").trace
    cyc = {a.id for a in m.actors if a.kind == "cyclist" and BACKGROUND_TAG in a.tags}
    n = sum(a.present_at_start for a in m.actors if a.id in cyc)
    df = trace.df
    count = df[df.actor_id.isin(cyc) & df.present].groupby("tick").size()
    again = [e for e in trace.events if e["type"] == "spawn" and e["actor"] in cyc]
    assert len(again) >= 5 and count.max() <= n and count.min() >= 0.7 * n, (len(again), count.min(), n)
    rows = df.set_index(["tick", "actor_id"])
    assert {rows.loc[(e["tick"] + 1, e["actor"])].lane for e in again} <= {"road1_sec0_lane-2", "road1_sec0_lane2"}
    bg = {a.id for a in m.actors if BACKGROUND_TAG in a.tags}
    assert [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} <= bg] == []


def _dense_walkers_rollout(tmp_path):
    """28 s on the bike road with 12 background pedestrians per 100 m of sidewalk: several turn back at the
    sidewalk's dead end (x = 0), one after the other."""
    path = tmp_path / "bike.xodr"
    path.write_bytes(bike_road())
    tpl = parse_template(import_opendrive(path, "bike").data)
    spec = TrafficSpec(vehicles_per_lane_km=20.0, pedestrians_per_sidewalk_100m=12.0, cyclists_per_km=60.0,
                       recycle=True)
    (m,) = generate(tpl.id, "lead_vehicle_brakes", 1, template=tpl, traffic=spec).manifests
    m = parse_manifest({**m.model_dump(mode="json", by_alias=True), "clip_s": 28.0}, m.sample_id)
    trace = run_simulation(m, tpl, backend="kinematic-v1").trace
    return m, trace


def test_walkers_turned_back_at_a_dead_end_keep_apart(tmp_path):
    """Two background pedestrians turning back one after the other at the sidewalk's dead end: the new path starts
    with a stub running on to the end node, and the one behind still sees the one ahead on the walk back (it used
    to project it onto the stub's backward extension, behind its path's start, and walked into it at t = 25.9 s)."""
    m, trace = _dense_walkers_rollout(tmp_path)
    df = trace.df
    for who in ("bg_p013", "bg_p014"):  # both walk towards x = 0 (the dead end), then back
        x = df[df.actor_id == who].set_index("t").x
        assert x.loc[21.0:22.0].diff().max() < 0 < x.loc[27.0:28.0].diff().min(), f"{who} no longer turns: moot"
    bg = {a.id for a in m.actors if BACKGROUND_TAG in a.tags}
    assert [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} <= bg] == []
    # The one behind followed: it never came nearer than the bodies plus the gap it keeps (each waits while the
    # one that turned first drifts back to its side of the line, then turns back in its turn and walks behind).
    p13 = df[df.actor_id == "bg_p013"].set_index("tick")
    p14 = df[df.actor_id == "bg_p014"].set_index("tick")
    late = p13.index[(p13.t > 26.5) & (p13.t < 28.0)]
    gap = (p13.loc[late].x - p14.loc[late].x).to_numpy()
    assert (gap > 0.24 + walkers.FOLLOW_GAP_M - 1e-6).all(), gap.min()


def test_walkers_turned_back_at_a_dead_end_move_sideways_gradually(tmp_path):
    """A background pedestrian turning back at the sidewalk's dead end walks back from where it is and drifts to its
    own side of the line at a bounded lateral speed: it used to walk on to the end node and jump ~0.9 m across the
    line in one tick (its offset kept right of a line that now ran the other way)."""
    m, trace = _dense_walkers_rollout(tmp_path)
    df = trace.df
    walkers_bg = sorted(a.id for a in m.actors if BACKGROUND_TAG in a.tags and a.kind == "pedestrian")
    turned, worst = 0, 0.0
    for who in walkers_bg:
        d = df[df.actor_id == who].sort_values("tick")
        run = np.diff(d.tick.to_numpy()) == 1  # consecutive ticks (not across a despawn and respawn)
        dx, dy = np.diff(d.x.to_numpy())[run], np.diff(d.y.to_numpy())[run]
        if not len(dx):
            continue
        yaw = (2.0 * np.arctan2(d.qz.to_numpy(), d.qw.to_numpy()))[:-1][run]
        lateral = np.abs(np.cos(yaw) * dy - np.sin(yaw) * dx)  # across its heading before the step
        worst = max(worst, float(lateral.max()))
        turned += int(((np.cos(yaw) * dx + np.sin(yaw) * dy) < 0.0).any() or (np.diff(np.sign(dx)) != 0).any())
    assert turned, "no walker turned back: moot"
    assert worst <= walkers.RETURN_RATE_MPS * m.dt + 1e-6, worst
    bg = {a.id for a in m.actors if BACKGROUND_TAG in a.tags}
    assert [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} <= bg] == []
