"""Background traffic (SPEC §20, issue 31): spawning, car following, signals, determinism, branches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simready.scenario.generator import generate, resolve_template
from simready.scenario.manifest import manifest_bytes
from simready.scenario.suite import SuiteError, load_suite
from simready.scenario.traffic import BACKGROUND_TAG, TrafficSpec
from simready.sim.core import planner_kernels as pk
from simready.sim.branch import run_branches
from simready.sim.engine import Engine
from simready.sim.run import finish, run_simulation
from simready.sim.core.scene import build_scene

from tests.fixtures.traffic import DENSITY, city, lead  # noqa: F401 - module-scoped fixtures


def background(m) -> list:
    return [a for a in m.actors if BACKGROUND_TAG in a.tags]


# --- car following ----------------------------------------------------------------------------


def _one_follower(v: float, v_lead: float, gap: float, v_ref: float, idm: dict[str, float]) -> float:
    """The planner kernel's acceleration of actor 0 following actor 1 ``gap`` m ahead (bumper to bumper)."""
    hl = 2.0
    consts = np.zeros((9, 2))
    consts[pk.HL] = hl
    consts[pk.S0] = idm["s0"]
    consts[pk.TIME_GAP] = idm["T"]
    consts[pk.ACCEL_MAX] = idm["a"]
    consts[pk.IDM_ROOT2] = 2.0 * math.sqrt(idm["a"] * idm["b"])
    consts[pk.DECEL_COMFORT] = idm["b"]
    consts[pk.DECEL_MAX] = 8.0
    refs = np.full((5, 2), np.inf)
    refs[pk.V_REF], refs[pk.A_FF] = v_ref, 0.0
    u = np.array([0.0, gap + 2 * hl])
    lane_u0 = np.zeros((2, 1))
    a_des, accel = np.empty(2), np.empty(2)
    pk.accelerations(consts, refs, u, np.array([v, v_lead]), np.array([True, True]), np.array([0, 0]), u.copy(),
                     lane_u0, np.array([1 if math.isfinite(gap) else -1, -1]), np.zeros((0, 2), dtype=np.int64),
                     np.zeros((2, 2)), np.zeros(2), np.zeros((2, 0)), np.zeros((2, 0), dtype=np.int64),
                     np.zeros(1, dtype=np.int8), 0.02, 9.81, 0.05, 2.0, 0.0, 1.0, 0.3, a_des, accel)
    return float(a_des[0])


IDM = {"s0": 2.0, "T": 1.5, "a": 1.5, "b": 2.0}


def test_idm_closing_in_matches_hand_computation():
    # s* = s0 + v·T + v·Δv / (2·√(a·b)) = 2 + 15 + 10·5 / (2·√3) = 31.4338 m; a = a_max·(1 − (s*/g)²) at g = 20 m.
    s_star = 2.0 + 10.0 * 1.5 + 10.0 * 5.0 / (2.0 * math.sqrt(3.0))
    assert s_star == pytest.approx(31.43376, abs=1e-5)
    expected = 1.5 * (1.0 - (s_star / 20.0) ** 2)
    assert expected == pytest.approx(-2.20530, abs=1e-5)
    assert _one_follower(10.0, 5.0, 20.0, 14.0, IDM) == pytest.approx(expected, rel=1e-12)


def test_idm_free_road_and_equilibrium():
    # Free road: speed tracking 2·(14 − 10) = 8 m/s² capped at a_max.
    assert _one_follower(10.0, 0.0, math.inf, 14.0, IDM) == pytest.approx(1.5)
    # At the equilibrium gap of equal speeds (s* = s0 + v·T = 17 m) the IDM term is zero.
    assert _one_follower(10.0, 10.0, 17.0, 14.0, IDM) == pytest.approx(0.0, abs=1e-12)


def test_background_vehicles_recorded_in_full_and_used(lead, city):
    bg = background(lead)
    assert len(bg) >= 20
    assert "traffic" in lead.streams
    assert lead.realized["traffic.vehicles"] == sum(a.present_at_start for a in bg)
    scene = build_scene(lead, city, backend="kinematic-v1")
    a = scene.actors
    for actor in bg:
        assert actor.initial.lane_ref is not None and actor.behavior.route[0] == actor.initial.lane_ref.lane
        assert actor.behavior.idm is not None and actor.behavior.cruise_speed_mps is not None
        i = a.index[actor.id]
        assert a.background[i]
        assert (a.s0[i], a.time_gap[i], a.accel_max[i], a.decel_comfort[i]) == (
            actor.behavior.idm.s0_m, actor.behavior.idm.time_gap_s, actor.behavior.idm.accel_max_mps2,
            actor.behavior.idm.decel_comfort_mps2)
    # The scenario's own actors are untouched: the same as the sample without traffic, less the traffic's fields.
    (plain,) = generate(city.id, "lead_vehicle_brakes", 1, template=city).manifests
    assert [x for x in lead.actors if BACKGROUND_TAG not in x.tags] == list(plain.actors)
    assert not background(plain) and "traffic" not in plain.streams


def test_spawn_is_deterministic_and_no_traffic_is_the_old_manifest(lead, city):
    (again,) = generate(city.id, "lead_vehicle_brakes", 1, template=city,
                        traffic=TrafficSpec(vehicles_per_lane_km=DENSITY)).manifests
    assert manifest_bytes(again) == manifest_bytes(lead)
    (none,) = generate(city.id, "lead_vehicle_brakes", 1, template=city, traffic=TrafficSpec()).manifests
    (plain,) = generate(city.id, "lead_vehicle_brakes", 1, template=city).manifests
    assert manifest_bytes(none) == manifest_bytes(plain)
    assert b'"idm"' not in manifest_bytes(plain)


def test_mobil_decision_against_hand_values():
    """A vehicle at 10 m/s 10 m behind one at 5 m/s, the lane beside it empty: MOBIL's incentive by hand."""
    from types import SimpleNamespace

    from simready.sim.behavior.lane_changes import THRESHOLD_MPS2, _accel

    p = SimpleNamespace(time_gap=[1.5], s0=[2.0], accel_max=[1.5], decel_max=[8.0],
                        idm_root2=[2.0 * math.sqrt(1.5 * 2.0)])
    # Before: s* = 2 + 15 + 10·5/(2·√3) = 31.434 m, a = 1.5·(1 − (31.434/10)²) = −13.32 → the braking limit −8.
    assert _accel(p, 0, 10.0, 10.0, 5.0, 14.0) == pytest.approx(-8.0)
    # After, free lane: speed tracking 2·(14 − 10) = 8 capped at a_max = 1.5.
    assert _accel(p, 0, 10.0, math.inf, 0.0, 14.0) == pytest.approx(1.5)
    # Closing in from 40 m: a = 1.5·(1 − (31.434/40)²) = 0.5736; on the equilibrium gap (17 m at equal speeds) 0.
    assert _accel(p, 0, 10.0, 40.0, 5.0, 14.0) == pytest.approx(1.5 * (1 - (31.43376 / 40.0) ** 2), abs=1e-5)
    assert _accel(p, 0, 10.0, 17.0, 10.0, 14.0) == pytest.approx(0.0, abs=1e-12)
    # The change pays: 1.5 − (−8) = 9.5 m/s² > the threshold, with no follower on either lane.
    assert 1.5 - (-8.0) > THRESHOLD_MPS2


# --- a minute of a living street ------------------------------------------------------------


@pytest.fixture(scope="module")
def minute(lead, city):
    m = lead.model_copy(update={"clip_s": 60.0})
    scene = build_scene(m, city, backend="kinematic-v1")
    engine = Engine(scene)
    engine.run()
    return m, scene, finish(engine)


@pytest.mark.slow
def test_minute_without_background_collisions(minute):
    m, scene, trace = minute
    bg = {a.id for a in background(m)}
    assert len(bg) >= 40
    assert not [e for e in trace.events if e["type"] == "termination"]
    crashes = [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} & bg]
    assert crashes == []


@pytest.mark.slow
def test_mobil_lane_changes_where_the_marks_allow(minute, city):
    from simready.world.lane_graph import lane_network

    m, scene, trace = minute
    net = lane_network(city)
    changes = [e for e in trace.events if e["type"] == "lane_change" and e.get("reason") == "mobil"]
    assert changes, "no discretionary lane change in a minute of a busy two-lane street"
    bg = {a.id for a in background(m)}
    for e in changes:
        assert e["actor"] in bg
        assert e["to_lane"] in (net.neighbour(e["from_lane"], "left"), net.neighbour(e["from_lane"], "right"))
        assert net.kinds[e["to_lane"]] == "driving" and e["incentive_mps2"] > 0.3


@pytest.mark.slow
def test_queue_at_red_discharges_on_green(minute):
    m, scene, trace = minute
    df = trace.df
    a = scene.actors
    stops = scene.signals.stop_lines
    states = scene.signals.states
    warm = scene.warmup_ticks
    queued, discharged = set(), set()
    for actor in background(m):
        rows = df[df.actor_id == actor.id]
        hl = float(a.hl[a.index[actor.id]])
        for lane, (s_stop, col) in [*stops.items(), *scene.signals.side_stop_lines.items()]:
            on = rows[(rows.lane == lane) & rows.present.astype(bool)]
            if on.empty:
                continue
            front = on.s.to_numpy() + hl
            ticks = on.tick.to_numpy()
            crossed = np.flatnonzero((front[:-1] <= s_stop) & (front[1:] > s_stop))
            for k in crossed:  # never across a stop line on red
                assert states[ticks[k + 1], col] != 2, f"{actor.id} runs the red light on {lane} at tick {ticks[k + 1]}"
            waiting = (on.speed_mps.to_numpy() < 0.1) & (front <= s_stop) & (states[ticks, col] == 2)
            if waiting.any():
                queued.add(actor.id)
                last_wait = int(ticks[np.flatnonzero(waiting)[-1]])
                green = np.flatnonzero(states[last_wait:, col] == 0)
                if len(green) and last_wait + green[0] < warm + int(round(50.0 / scene.dt)):
                    # Green with at least 10 s of clip left: the queue moves and this vehicle crosses the line, or
                    # (the tail of a queue longer than a green discharges, fed by the vehicles spawned at the map's
                    # entries) moves up by 5 m at least.
                    if len(crossed) and ticks[crossed[-1] + 1] > last_wait:
                        discharged.add(actor.id)
                    else:
                        after = front[ticks > last_wait]
                        assert len(after) and after.max() - front[ticks == last_wait][0] > 5.0, \
                            f"{actor.id} never leaves the queue"
    assert len(queued) >= 3, "no queue formed at a red light"
    assert len(discharged) >= 3, "no queue discharged on green"


@pytest.mark.slow
def test_dynamic_backend_without_background_collisions(lead, city):
    """The same street with force-driven bodies: the traffic slows for its turns and does not crash."""
    trace = run_simulation(lead, city, backend="dynamic-v1").trace
    bg = {a.id for a in background(lead)}
    assert not [e for e in trace.events if e["type"] == "termination"]
    assert [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} & bg] == []
    assert set(trace.df.actor_id) >= bg


def test_dynamic_far_background_is_kinematic_and_restores(lead, city):
    """dynamic-v1: a background vehicle is a force-driven body only near an anchor (the ego, a moving scenario vehicle);
    far ones are hidden bodies driven by the kinematic step. Which ones is a function of the state, and a body handed
    back to physics starts from the tick's state: a restored engine continues within the declared replay tolerance
    (as without traffic), across the hand-overs."""
    from simready.sim.storage.checkpoint import DYNAMIC_REPLAY_TOLERANCE
    from simready.catalog.catalog import ensure_catalog
    from simready.sim.backends.dynamic.backend import PHYSICS_RADIUS_M

    scene = build_scene(lead, city, backend="dynamic-v1", catalog=ensure_catalog())
    a = scene.actors
    engine = Engine(scene)
    half = scene.warmup_ticks + int(round(4.0 / scene.dt))
    far_seen, near_seen = set(), set()
    while engine.state.tick < half:
        state = engine.state
        engine.step()
        b = engine.backend
        anchors = [i for i in b.vehicles if not a.background[i] and not a.parked[i] and state.bodies.present[i]]
        for i in b.background_idx.tolist():
            if not state.bodies.present[i]:
                continue
            dist = min(math.dist(state.bodies.pos[i, :2], state.bodies.pos[j, :2]) for j in anchors)
            assert (i in b._hidden) == (dist > PHYSICS_RADIUS_M), (i, dist)
            (far_seen if dist > PHYSICS_RADIUS_M else near_seen).add(i)
    assert len(far_seen) > 10 and near_seen and far_seen & near_seen  # some handed over while this ran
    ckpt = engine.checkpoint()
    engine.run(until_tick=half + int(round(4.0 / scene.dt)))
    restored = Engine.restore(scene, ckpt)
    restored.run(until_tick=half + int(round(4.0 / scene.dt)))
    x, y = finish(engine), finish(restored)
    assert [(e["type"], e["tick"]) for e in x.events] == [(e["type"], e["tick"]) for e in y.events]
    assert x.column("actor_id").tolist() == y.column("actor_id").tolist()
    pos = np.stack([x.column(c) - y.column(c) for c in ("x", "y", "z")], 1)
    vel = np.stack([x.column(c) - y.column(c) for c in ("vx", "vy", "vz")], 1)
    assert np.abs(pos).max() <= DYNAMIC_REPLAY_TOLERANCE["position_m"]
    assert np.abs(vel).max() <= DYNAMIC_REPLAY_TOLERANCE["velocity_mps"]


def test_static_colliders_asleep_change_nothing(lead, city, monkeypatch):
    """The static colliders are put to sleep (PyBullet then skips their bounding boxes each step): the rollout is the
    same bit for bit as with them awake."""
    from simready.sim.backends.dynamic import world as dyn_world
    from simready.sim.backends.dynamic import pool

    plain = lead.model_copy(update={"actors": [x for x in lead.actors if BACKGROUND_TAG not in x.tags], "clip_s": 4.0})
    asleep = run_simulation(plain, city, backend="dynamic-v1").trace.to_bytes()
    pool.release_built()  # a new world, built with the statics awake
    monkeypatch.setattr(dyn_world, "_still", lambda body, cid: None)
    assert run_simulation(plain, city, backend="dynamic-v1").trace.to_bytes() == asleep
    pool.release_built()


# --- determinism, checkpoints and branches ------------------------------------------------------


@pytest.mark.slow
def test_replay_and_checkpoint_bit_identical(lead, city):
    first = run_simulation(lead, city, backend="kinematic-v1").trace.to_bytes()
    assert run_simulation(lead, city, backend="kinematic-v1").trace.to_bytes() == first
    scene = build_scene(lead, city, backend="kinematic-v1")
    engine = Engine(scene)
    engine.run(until_tick=scene.warmup_ticks + int(round(2.0 / scene.dt)))
    ckpt = engine.checkpoint()
    engine.run()
    restored = Engine.restore(scene, ckpt)
    restored.run()
    assert finish(restored).to_bytes() == finish(engine).to_bytes()


def test_brake_branch_changes_the_follower_and_nothing_before(city):
    # The left turn's ego starts 105 m into its lane: room for background vehicles behind it.
    (m,) = generate(city.id, "signalized_left_turn", 1, template=city,
                    traffic=TrafficSpec(vehicles_per_lane_km=DENSITY)).manifests
    ego = m.actor("ego")
    behind = [a for a in background(m) if a.initial.lane_ref.lane == ego.initial.lane_ref.lane
              and a.initial.lane_ref.s < ego.initial.lane_ref.s]
    assert behind, "no background vehicle behind the ego"
    follower = max(behind, key=lambda a: a.initial.lane_ref.s).id
    out = run_branches(m, city, at_s=2.0, actions=("brake", "coast"), backend="kinematic-v1")
    t_d = out.decision_t_s
    brake, coast = (b.trace.df for b in out.branches)
    cols = ["tick", "actor_id", "x", "y", "speed_mps"]
    before_b, before_c = brake[brake.t <= t_d][cols], coast[coast.t <= t_d][cols]
    assert before_b.reset_index(drop=True).equals(before_c.reset_index(drop=True))
    fb = brake[(brake.actor_id == follower) & (brake.t > t_d)].speed_mps.to_numpy()
    fc = coast[(coast.actor_id == follower) & (coast.t > t_d)].speed_mps.to_numpy()
    assert np.abs(fb - fc).max() > 0.5, "the follower does not react to the ego's brake"
    first = int(np.flatnonzero(np.abs(fb - fc) > 0.1)[0])
    assert fb[first] < fc[first], "the follower's first reaction to the brake is not to slow down"


# --- bad input --------------------------------------------------------------------------------


def test_suite_traffic_bad_input(tmp_path):
    base = "suite_id: s\nbatches: 1\ntemplates:\n  city_crossing:\n    lead_vehicle_brakes: 1\n"
    for body, field in (
        ("traffic:\n  city_crossing:\n    lead_vehicle_brakes: {vehicles_per_lane_km: 500}\n", "vehicles_per_lane_km"),
        ("traffic:\n  city_crossing:\n    lead_vehicle_brakes: {vehicles_per_lane_kms: 5}\n", "vehicles_per_lane_kms"),
        ("traffic:\n  city_crossing:\n    lead_vehicle_brakes: {pedestrians_per_sidewalk_100m: 200}\n",
         "pedestrians_per_sidewalk_100m"),
        ("traffic:\n  city_crossing:\n    cut_in: {vehicles_per_lane_km: 5}\n", "traffic.city_crossing.cut_in"),
    ):
        path = tmp_path / "suite.yaml"
        path.write_text(base + body)
        with pytest.raises(SuiteError) as err:
            load_suite(path)
        line = str(err.value)
        assert "\n" not in line and field in line and "suite.yaml" in line
    path.write_text(base + "traffic:\n  city_crossing:\n    lead_vehicle_brakes: {vehicles_per_lane_km: 12.5}\n")
    suite = load_suite(path)
    assert suite.traffic_for("city_crossing", "lead_vehicle_brakes") == TrafficSpec(vehicles_per_lane_km=12.5)
    assert suite.traffic_for("city_crossing", "cut_in") is None


# --- the pipeline's batch ------------------------------------------------------------------------


def test_batch_with_traffic_through_the_pipeline_ladder(tmp_path, city):
    """The scenario asset's ladder (physics settle, traffic rollout) with a suite that asks for traffic on one
    intent: its samples carry the traffic and pass; the other intent's are those of a suite without traffic."""
    from simready.catalog.catalog import ensure_catalog
    from simready.scenario.batch import build_batch
    from simready.sim.ladder.settle import PhysicsSettleStage
    from simready.sim.ladder.traffic import TrafficRolloutStage

    catalog = ensure_catalog()
    body = ("suite_id: s\nbatches: 1\ntemplates:\n  city_crossing:\n    lead_vehicle_brakes: 1\n    cut_in: 1\n")
    (tmp_path / "plain.yaml").write_text(body)
    (tmp_path / "busy.yaml").write_text(body + "traffic:\n  city_crossing:\n    lead_vehicle_brakes: "
                                        "{vehicles_per_lane_km: 25}\n")
    stages = [PhysicsSettleStage(catalog, rollout=False, record=False), TrafficRolloutStage(catalog)]
    busy = build_batch(load_suite(tmp_path / "busy.yaml"), city, "b0000", catalog, extra_stages=stages)
    plain = build_batch(load_suite(tmp_path / "plain.yaml"), city, "b0000", catalog, extra_stages=stages[:1])
    by_intent = {m.intent: m for m in busy.manifests}
    assert background(by_intent["lead_vehicle_brakes"])
    assert manifest_bytes(by_intent["cut_in"]) == manifest_bytes(next(m for m in plain.manifests if m.intent == "cut_in"))


def test_cli_sample_with_traffic(tmp_path, capsys):
    from simready.cli import main

    out = tmp_path / "out"
    assert main(["scenario", "sample", "--template", "city_crossing", "--intent", "lead_vehicle_brakes", "--n", "1",
                 "--out", str(out), "--vehicles-per-lane-km", "20", "--quiet"]) == 0
    (path,) = out.glob("cc-lead-*.json")
    assert b'"background"' in path.read_bytes() and b'"idm"' in path.read_bytes()
    with pytest.raises(SystemExit) as exc:
        main(["scenario", "sample", "--template", "city_crossing", "--intent", "lead_vehicle_brakes", "--n", "1",
              "--out", str(tmp_path / "bad"), "--vehicles-per-lane-km", "500"])
    assert exc.value.code == 2 and not (tmp_path / "bad").exists()
    assert "outside [0, 120]" in capsys.readouterr().err


def test_a_background_vehicle_waits_clear_of_earlier_conflict_areas():
    from simready.sim.controllers.planner import BOX_STANDOFF_M, clear_of_boxes

    # Boxes on its path: lane 3 from u = 55.5 to 60.5, lane 8 from 56.5 to 60, lane 14 (the conflict it yields at,
    # u_x = 62) from 59.5 to 64.5. Waiting with its nose at 59.5 (5 m long) it would stand in lanes 3's and 8's areas:
    # it waits 1 m before the first, at 54.5.
    boxes = ((55.5, 60.5, 3, 6.0, 11.0), (56.5, 60.0, 8, 10.0, 13.5), (59.5, 64.5, 14, 6.5, 11.5))
    assert clear_of_boxes(59.5, 62.0, 14, 2.5, boxes) == 55.5 - BOX_STANDOFF_M
    # Its body past an area (rear beyond its end), or the areas after the conflict: it waits where it was.
    assert clear_of_boxes(66.0, 70.0, 14, 2.5, boxes) == 66.0
    assert clear_of_boxes(54.0, 62.0, 14, 2.5, boxes) == 54.0
    # The conflict's own area never moves it.
    assert clear_of_boxes(59.0, 62.0, 14, 2.5, ((58.0, 64.5, 14, 6.5, 11.5),)) == 59.0
