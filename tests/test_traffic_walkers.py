"""Background pedestrians and cyclists (SPEC §20, issue 31): spawn, the kerb on phase or gap, following, determinism."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from shapely.geometry import LineString, Point

from simready.common.errors import ManifestError
from simready.scenario.generator import generate, replay, resolve_template
from simready.scenario.manifest import manifest_bytes, parse_manifest
from simready.scenario.suite import SuiteError, load_suite
from simready.scenario.traffic import BACKGROUND_TAG, TrafficSpec
from simready.scenario.traffic_walkers import PED_KEEP_RIGHT_M, PED_RANGES, kerbside_lanes
from simready.sim.controllers.planner import RouteTable
from simready.sim.engine import Engine
from simready.sim.core.reference_paths import split_walk_key
from simready.sim.run import finish, run_simulation
from simready.sim.core.scene import expand_walk, build_scene
from simready.sim.behavior.walkers import TURN_AT_END_M

BUSY = TrafficSpec(vehicles_per_lane_km=30.0, pedestrians_per_sidewalk_100m=25.0, cyclists_per_km=40.0)


def background(m, kind: str | None = None) -> list:
    return [a for a in m.actors if BACKGROUND_TAG in a.tags and (kind is None or a.kind == kind)]


@pytest.fixture(scope="module")
def signalized():
    """A left turn at the signalised crossroads (four crosswalks, signals) with vehicles, pedestrians and cyclists."""
    tpl = resolve_template("urban_signalized_intersection")
    (m,) = generate(tpl.id, "signalized_left_turn", 1, template=tpl, traffic=BUSY).manifests
    return tpl, m, run_simulation(m, tpl, backend="kinematic-v1").trace


@pytest.fixture(scope="module")
def unsignalized():
    """The unsignalised crossroads with more pedestrians: the reserves keep the vehicles' density up all clip long
    (simready.sim.behavior.respawn), so gaps long enough to cross are rarer than on a street that empties."""
    tpl = resolve_template("urban_unsignalized_intersection")
    spec = TrafficSpec(vehicles_per_lane_km=25.0, pedestrians_per_sidewalk_100m=25.0, cyclists_per_km=40.0)
    (m,) = generate(tpl.id, "unprotected_left_turn", 1, template=tpl, traffic=spec).manifests
    return tpl, m, run_simulation(m, tpl, backend="kinematic-v1").trace


def test_walkers_recorded_in_full_after_the_vehicles(signalized):
    tpl, m, _ = signalized
    peds, cyclists = background(m, "pedestrian"), background(m, "cyclist")
    assert len(peds) >= 30 and len(cyclists) >= 2
    assert m.realized["traffic.pedestrians"] == len(peds) and m.realized["traffic.cyclists"] == len(cyclists)
    assert m.realized["traffic.pedestrians_per_sidewalk_100m"] == 25.0 and m.realized["traffic.cyclists_per_km"] == 40.0
    graph = tpl.walk_graph
    for p in peds:
        assert p.id.startswith("bg_p") and p.role == "agent" and p.asset_family.startswith("pedestrian")
        assert p.walk.stop_tendency == 1.0 and p.walk.keep_right_m == PED_KEEP_RIGHT_M
        assert PED_RANGES["reaction_delay_s"][0] <= p.walk.reaction_delay_s <= PED_RANGES["reaction_delay_s"][1]
        assert PED_RANGES["speed_mps"][0] <= p.behavior.cruise_speed_mps <= PED_RANGES["speed_mps"][1]
        route = p.walk.route
        assert len(route) >= 2 and all(graph.has_edge(a, b) for a, b in zip(route, route[1:]))
        assert len(set(route)) == len(route), "a route walks a node twice"
    kerbside = set(kerbside_lanes_of(tpl, m))
    for c in cyclists:
        ref = c.initial.lane_ref
        assert ref.lane in kerbside and ref.t_frac < 0 and c.behavior.route[0] == ref.lane
        assert c.behavior.idm is not None and c.behavior.cruise_speed_mps <= 6.5
    # The vehicles are drawn first from the stream: the same as a sample asking for vehicles alone.
    (alone,) = generate(tpl.id, "signalized_left_turn", 1, template=tpl,
                        traffic=TrafficSpec(vehicles_per_lane_km=BUSY.vehicles_per_lane_km)).manifests
    assert background(alone) == background(m, "vehicle")
    assert b'"keep_right_m"' not in manifest_bytes(alone)


def kerbside_lanes_of(tpl, m):
    from simready.scenario.generator import make_context

    return kerbside_lanes(make_context(tpl, m.intent))


def _crossings(tpl, m, trace):
    """Per background pedestrian that steps into the roadway in the clip: (id, its crossing, entry tick, exit tick)."""
    scene = build_scene(m, tpl, backend="kinematic-v1")
    route = RouteTable.build(scene, scene.initial_paths)
    roads = scene.kerb_regions
    df = trace.df
    out = []
    for i, cross in sorted(route.walking.items()):
        if cross is None:
            continue
        rows = df[df.actor_id == scene.actors.ids[i]]
        inside = np.array([roads.contains(Point(x, y)) for x, y in zip(rows.x, rows.y)])
        if not inside.any() or inside[0]:
            continue  # never steps off in the clip, or already on the crossing at t = 0
        k = int(np.argmax(inside))
        gone = np.flatnonzero(~inside[k:])
        out.append((scene.actors.ids[i], cross, int(rows.tick.iloc[k]),
                    int(rows.tick.iloc[k + gone[0]]) if len(gone) else int(rows.tick.iloc[-1])))
    return scene, out


def _no_vehicle_on_the_crossing(scene, trace, crossings) -> None:
    """No vehicle or cyclist comes within 1 m of a crossing's line while the pedestrian who took it is in the road."""
    df = trace.df
    a = scene.actors
    lane_bound = [a.ids[j] for j in np.flatnonzero(a.lane_bound)]
    for ped, cross, enter, leave in crossings:
        line = LineString(cross[2])
        during = df[(df.tick >= enter) & (df.tick <= leave) & df.actor_id.isin(lane_bound) & df.present.astype(bool)]
        for row in during.itertuples():
            j = a.index[row.actor_id]
            assert line.distance(Point(row.x, row.y)) > float(a.hl[j]) - 1.0 or row.speed_mps < 0.5, (
                f"{row.actor_id} drives over {ped}'s crossing at tick {row.tick} while it is on it")


def test_pedestrians_cross_only_on_their_phase(signalized):
    tpl, m, trace = signalized
    scene, crossings = _crossings(tpl, m, trace)
    signalised = [c for c in crossings if c[1][0]]
    assert len(signalised) >= 2, "too few pedestrians cross a signalised crosswalk in the clip"
    for ped, (cols, *_), enter, _ in signalised:
        assert (scene.signals.states[enter, list(cols)] == 2).all(), f"{ped} steps off against its phase"
    # The north and south arms are green all clip long: their pedestrians wait, none crosses there.
    green = {c for c in range(scene.signals.states.shape[1]) if (scene.signals.states[scene.warmup_ticks:, c] == 0).all()}
    assert green and not [c for c in signalised if set(c[1][0]) & green]
    _no_vehicle_on_the_crossing(scene, trace, crossings)


def test_pedestrians_cross_only_in_a_gap(unsignalized):
    tpl, m, trace = unsignalized
    scene, crossings = _crossings(tpl, m, trace)
    assert len(crossings) >= 2 and not any(c[1][0] for c in crossings)
    _no_vehicle_on_the_crossing(scene, trace, crossings)
    bg = {a.id for a in background(m)}
    assert not [e for e in trace.events if e["type"] in ("collision", "termination") and
                ({e.get("a"), e.get("b")} & bg or e["type"] == "termination")]


def test_pedestrians_wait_at_the_kerb_and_keep_apart(signalized):
    tpl, m, trace = signalized
    bg = {a.id for a in background(m)}
    assert not [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} & bg]
    scene = build_scene(m, tpl, backend="kinematic-v1")
    route = RouteTable.build(scene, scene.initial_paths)
    df = trace.df
    waiting = 0
    for i, cross in route.walking.items():
        if cross is None:
            continue
        rows = df[df.actor_id == scene.actors.ids[i]]
        kerb = scene.kerb_u(route.paths.paths[i])
        # Standing still within a metre before its kerb on a red-for-it crossing (its phase not open).
        at_kerb = [(r.speed_mps < 0.05) and 0.0 < kerb - route.paths.paths[i].project(r.x, r.y)[0] < 1.5
                   for r in rows.itertuples()]
        waiting += any(at_kerb)
    assert waiting >= 2, "no pedestrian waits at a kerb"
    # Walking on the right: a pedestrian's body is keep_right_m to the right of its route's line.
    p = background(m, "pedestrian")[0]
    i = scene.actors.index[p.id]
    row = df[df.actor_id == p.id].iloc[0]
    u, d = scene.initial_paths[i].project(row.x, row.y)
    assert d == pytest.approx(-PED_KEEP_RIGHT_M, abs=0.05)


def test_vehicles_follow_cyclists():
    tpl = resolve_template("city_crossing")
    (m,) = generate(tpl.id, "cut_in", 1, template=tpl,
                    traffic=TrafficSpec(vehicles_per_lane_km=30.0, cyclists_per_km=40.0)).manifests
    scene = build_scene(m, tpl, backend="kinematic-v1")
    engine = Engine(scene)
    from simready.sim.core.sight import TickView

    trace = run_simulation(m, tpl, backend="kinematic-v1").trace
    bg = {a.id for a in background(m)}
    assert not [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} & bg]
    view = TickView(scene, engine.state, engine.route.paths)
    a = scene.actors
    followers = [(i, int(j)) for i, j in enumerate(view.leaders.tolist())
                 if j >= 0 and a.is_vehicle[i] and a.background[i] and a.kinds[j] == "cyclist"]
    assert followers, "no vehicle starts behind a cyclist"
    df = trace.df
    for i, j in followers:
        v_i = df[df.actor_id == a.ids[i]].speed_mps.to_numpy()
        assert v_i.min() < float(a.cruise[i]) - 1.0, f"{a.ids[i]} never slows behind cyclist {a.ids[j]}"
    cyclists = [x for x in background(m, "cyclist")]
    assert cyclists and all(e["actor"] not in {c.id for c in cyclists}
                            for e in trace.events if e["type"] == "lane_change")


# --- determinism, checkpoints ------------------------------------------------------------------


@pytest.mark.slow
def test_replay_and_checkpoint_bit_identical_with_walkers(signalized):
    tpl, m, trace = signalized
    assert run_simulation(m, tpl, backend="kinematic-v1").trace.to_bytes() == trace.to_bytes()
    (again,) = generate(tpl.id, "signalized_left_turn", 1, template=tpl, traffic=BUSY).manifests
    assert manifest_bytes(again) == manifest_bytes(m)
    assert replay(m, template=tpl) == (True, "")
    scene = build_scene(m, tpl, backend="kinematic-v1")
    engine = Engine(scene)
    engine.run(until_tick=scene.warmup_ticks + int(round(3.0 / scene.dt)))
    ckpt = engine.checkpoint()
    engine.run()
    restored = Engine.restore(scene, ckpt)
    restored.run()
    assert finish(restored).to_bytes() == finish(engine).to_bytes()


@pytest.mark.slow
def test_matched_branches_share_the_walkers_until_the_action(signalized):
    from simready.sim.branch import run_branches

    tpl, m, _ = signalized
    out = run_branches(m, tpl, at_s=2.0, actions=("brake", "coast"), backend="kinematic-v1")
    t_d = out.decision_t_s
    brake, coast = (b.trace.df for b in out.branches)
    walkers = {a.id for a in background(m) if a.kind != "vehicle"}
    cols = ["tick", "actor_id", "x", "y", "speed_mps"]
    before_b = brake[(brake.t <= t_d) & brake.actor_id.isin(walkers)][cols].reset_index(drop=True)
    before_c = coast[(coast.t <= t_d) & coast.actor_id.isin(walkers)][cols].reset_index(drop=True)
    assert len(before_b) and before_b.equals(before_c)
    assert set(brake.actor_id) >= walkers


# --- bad input -----------------------------------------------------------------------------------


def test_walker_bad_input(tmp_path, capsys, signalized):
    base = "suite_id: s\nbatches: 1\ntemplates:\n  city_crossing:\n    lead_vehicle_brakes: 1\n"
    for body, field in (
        ("{pedestrians_per_sidewalk_100m: 61}", "pedestrians_per_sidewalk_100m"),
        ("{cyclists_per_km: 151}", "cyclists_per_km"),
        ("{cyclists_per_kilometre: 5}", "cyclists_per_kilometre"),
    ):
        path = tmp_path / "suite.yaml"
        path.write_text(base + "traffic:\n  city_crossing:\n    lead_vehicle_brakes: " + body + "\n")
        with pytest.raises(SuiteError) as err:
            load_suite(path)
        line = str(err.value)
        assert "\n" not in line and field in line and "suite.yaml" in line
    path.write_text(base + "traffic:\n  city_crossing:\n    lead_vehicle_brakes: {pedestrians_per_sidewalk_100m: 5, "
                    "cyclists_per_km: 10}\n")
    assert load_suite(path).traffic_for("city_crossing", "lead_vehicle_brakes") == TrafficSpec(
        pedestrians_per_sidewalk_100m=5.0, cyclists_per_km=10.0)

    from simready.cli import main

    for flag, value, unit in (("--pedestrians-per-sidewalk-100m", "80", "[0, 60]"), ("--cyclists-per-km", "-1", "[0, 150]")):
        with pytest.raises(SystemExit) as exc:
            main(["scenario", "sample", "--template", "city_crossing", "--intent", "lead_vehicle_brakes", "--n", "1",
                  "--out", str(tmp_path / "bad"), flag, value])
        assert exc.value.code == 2 and not (tmp_path / "bad").exists()
        assert unit in capsys.readouterr().err

    # An unknown behaviour parameter in a manifest's walker: one line naming the field.
    _, m, _ = signalized
    data = json.loads(manifest_bytes(m))
    k = next(n for n, a in enumerate(data["actors"]) if a["id"].startswith("bg_p"))
    data["actors"][k]["walk"]["gap_s"] = 3.0
    with pytest.raises(ManifestError) as err:
        parse_manifest(data, "m.json")
    assert "\n" not in err.value.one_line() and f"actors[{k}].walk.gap_s" in err.value.one_line()


def test_cli_sample_with_walkers(tmp_path):
    from simready.cli import main

    out = tmp_path / "out"
    assert main(["scenario", "sample", "--template", "urban_signalized_intersection", "--intent",
                 "signalized_left_turn", "--n", "1", "--out", str(out), "--pedestrians-per-sidewalk-100m", "5",
                 "--cyclists-per-km", "20", "--quiet"]) == 0
    (path,) = out.glob("usi-*.json")
    data = json.loads(path.read_bytes())
    kinds = {a["kind"] for a in data["actors"] if "background" in a["tags"]}
    assert kinds == {"pedestrian", "cyclist"} and data["realized"]["traffic.vehicles"] == 0
    assert math.isclose(data["realized"]["traffic.pedestrians_per_sidewalk_100m"], 5.0)


# --- yielding to the scenario's pedestrians --------------------------------------------------------------


@pytest.fixture(scope="module")
def crossing_ped():
    """The pedestrian-behind-van sample on the residential crosswalk with a few background pedestrians: its
    pedestrian ``ped`` crosses from (58.9, −6.9) over the crosswalk at x = 60 (t ≈ 2.2 s to 10 s, 1.46 m/s)."""
    tpl = resolve_template("residential_crosswalk_v3")
    (m,) = generate(tpl.id, "pedestrian_emerges_behind_van", 1, template=tpl,
                    traffic=TrafficSpec(pedestrians_per_sidewalk_100m=5.0)).manifests
    return tpl, m, run_simulation(m, tpl, backend="kinematic-v1").trace


def _with_walker(tpl, m, start, route, speed, keep):
    """``m`` with one more background pedestrian (a copy of its first) starting at ``start`` on ``route``."""
    data = json.loads(manifest_bytes(m))
    bg = dict(json.loads(json.dumps(next(a for a in data["actors"] if a["id"].startswith("bg_p")))))
    tx, ty = tpl.walk_graph.nodes[route[0]]
    yaw = math.atan2(ty - start[1], tx - start[0])
    bg["id"] = "bg_p900"
    bg["initial"]["pose"].update(x=start[0] + keep * math.sin(yaw), y=start[1] - keep * math.cos(yaw), yaw=yaw)
    bg["initial"]["speed_mps"] = speed
    bg["behavior"]["cruise_speed_mps"] = speed
    bg["walk"].update(route=route, keep_right_m=keep)
    data["actors"].append(bg)
    return parse_manifest(data, m.sample_id)


@pytest.mark.parametrize("start, route, speed, keep", [
    ((60.0, 2.0), ["cw_s", "ss_60"], 1.2, 0.3),  # head-on on the crosswalk
    ((60.0, -3.0), ["cw_n", "sn_60", "sn_80"], 0.7, 0.45),  # overtaken on the crosswalk (and standing for the van)
], ids=["head_on", "overtaken"])
def test_background_pedestrians_give_way_to_the_scenarios(crossing_ped, start, route, speed, keep):
    # Without giving way these two walk into the scenario's pedestrian (contact at t = 4.44 s and 5.2 s).
    tpl, m, alone = crossing_ped
    busy = _with_walker(tpl, m, start, route, speed, keep)
    trace = run_simulation(busy, tpl, backend="kinematic-v1").trace
    assert not [e for e in trace.events if e["type"] == "collision"]
    df, d0 = trace.df, alone.df
    cols = ["tick", "x", "y", "speed_mps"]
    mine = df[df.actor_id == "ped"][cols].reset_index(drop=True)
    assert mine.equals(d0[d0.actor_id == "ped"][cols].reset_index(drop=True)), "the scenario's pedestrian changed"
    assert [e for e in trace.events if e["type"] != "collision"] == [e for e in alone.events if e["type"] != "collision"]
    me, ped = df[df.actor_id == "bg_p900"], df[df.actor_id == "ped"]
    gap = np.hypot(me.x.to_numpy() - ped.x.to_numpy(), me.y.to_numpy() - ped.y.to_numpy())
    assert gap.min() > 0.6
    # It stepped sideways: off its route's line by more than it keeps right.
    scene = build_scene(busy, tpl, backend="kinematic-v1")
    path = scene.initial_paths[scene.actors.index["bg_p900"]]
    offsets = [path.project(x, y)[1] for x, y in zip(me.x, me.y)]
    assert min(offsets) < -keep - 0.2 or max(offsets) > -keep + 0.2


def test_the_gap_counts_only_vehicles_the_pedestrian_sees(unsignalized):
    from simready.sim.behavior import walkers
    from simready.sim.core.sight import TickView

    tpl, m, _ = unsignalized
    scene = build_scene(m, tpl, backend="kinematic-v1")
    engine = Engine(scene)
    view = TickView(scene, engine.state, engine.route.paths)
    a = scene.actors
    found = None
    for i, cross in sorted(engine.route.walking.items()):
        if cross is None:
            continue
        horizon = 8.0
        # Vehicles due at its crossing and not yet on it (walkers.gap_hazard's rule without the sight line).
        due = []
        for j in np.flatnonzero(a.lane_bound & view.present).tolist():
            u_c = walkers.crossing_u(view.table.paths[j], cross[2])
            if u_c is None:
                continue
            front = float(view.u[j] + a.hl[j])
            if front < u_c - 1.5 and view.v[j] > walkers.GAP_MIN_SPEED_MPS and (u_c - 1.5 - front) / view.v[j] < horizon:
                due.append(j)
            elif front >= u_c - 1.5 and float(view.u[j] - a.hl[j]) <= u_c + 1.5:
                due = None
                break
        if due and view.visible(np.full(len(due), i), np.array(due)).any():
            found = (i, cross, due)
            break
    assert found, "no pedestrian sees a vehicle due at its crossing at t = 0"
    i, cross, due = found
    assert walkers.gap_hazard(view, i, cross, 8.0)
    # A wall (a box occluder 3 m wide) 1 m from the pedestrian towards each of them hides them: the gap is clear.
    data = json.loads(manifest_bytes(m))
    for k, j in enumerate(due):
        dx, dy = view.xy[j] - view.xy[i]
        yaw = math.atan2(dy, dx)
        x, y = view.xy[i] + np.array([math.cos(yaw), math.sin(yaw)]) * 1.0
        data["occluders"].append({"id": f"wall{k}", "kind": "structure", "pose": {"x": float(x), "y": float(y), "yaw": yaw},
                                  "dims": {"l": 0.2, "w": 3.0, "h": 2.0}})
    hidden = build_scene(parse_manifest(data, m.sample_id), tpl, backend="kinematic-v1")
    assert not walkers.gap_hazard(TickView(hidden, engine.state, engine.route.paths), i, cross, 8.0)


def test_a_lane_changing_vehicle_looks_along_its_path_for_pedestrians(unsignalized):
    """A background vehicle moving sideways (a lane change towards the kerb, its body turned 0.35 rad to the
    right) does not take a pedestrian walking beside its path, 8 m ahead and 3 m to the right, for one in its
    corridor: its corridor runs along its path. (Turned towards the kerb, it braked for such a pedestrian and,
    stopping with its lateral profile still running, swung its nose onto the sidewalk: a background crash.)"""
    from dataclasses import replace

    from simready.sim.controllers.planner import perceive_pedestrians
    from simready.sim.core.sight import TickView

    tpl, m, _ = unsignalized
    scene = build_scene(m, tpl, backend="kinematic-v1")
    engine = Engine(scene)
    state = engine.state
    a = scene.actors
    i = next(k for k in np.flatnonzero(a.background & a.is_vehicle & state.bodies.present).tolist())
    j = next(k for k in np.flatnonzero(a.background & a.is_ped).tolist())
    path = engine.route.paths.paths[i]
    u = float(state.coords.u[i])
    x, y, heading = path.xy_yaw(u)
    ahead = path.point_at(u + 8.0, -3.0)

    def with_vehicle(yaw: float, d_rate: float) -> TickView:
        pos = state.bodies.pos.copy()
        pos[j, :2] = ahead
        pos[i, :2] = (x, y)
        present = state.bodies.present.copy()
        present[:] = False
        present[[i, j]] = True
        yaws, rates, v = state.coords.yaw.copy(), state.coords.d_rate.copy(), state.coords.v.copy()
        yaws[i], rates[i], v[i] = yaw, d_rate, 5.0
        s = replace(state, bodies=replace(state.bodies, pos=pos, present=present),
                    coords=replace(state.coords, yaw=yaws, d_rate=rates, v=v))
        return TickView(scene, s, engine.route.paths)

    turned = float(heading) - 0.35
    # Held straight on its lane, or turned without moving sideways (a bend): the body's heading, the pedestrian in it.
    assert (i, j) in perceive_pedestrians(with_vehicle(turned, 0.0))
    assert (i, j) not in perceive_pedestrians(with_vehicle(float(heading), 0.0))
    # Moving sideways: along its path, the pedestrian beside it.
    assert (i, j) not in perceive_pedestrians(with_vehicle(turned, -1.0))


def test_no_background_actor_starts_past_its_stop_line(signalized):
    from simready.scenario.generator import make_context
    from simready.scenario.traffic import STOP_LINE_CLEAR_M, stop_line_s

    tpl, m, _ = signalized
    ctx = make_context(tpl, m.intent)
    # Each approach's signal stops it at s = 44.5 m of its 50 m lane; lanes without a signal have none.
    assert stop_line_s(ctx, "w_in") == 44.5 and stop_line_s(ctx, "w_out") == math.inf
    longest = {"vehicle": 0.0, "cyclist": 0.0}
    placed = []
    for a in background(m):
        if a.kind in longest and a.initial.lane_ref is not None:
            longest[a.kind] = max(longest[a.kind], a.dims.l)
            placed.append(a)
    assert len(placed) >= 10
    for a in placed:
        ref = a.initial.lane_ref
        assert ref.s + longest[a.kind] / 2 <= stop_line_s(ctx, ref.lane) - STOP_LINE_CLEAR_M, a.id


def test_a_pedestrian_at_its_route_end_turns_onto_a_new_route():
    """Routes are sized for the generated clip; in a longer one a background pedestrian turns at its route's end onto
    a walkable route from the old route's last node, its kerb memory afresh, and walks on (no one stands)."""
    tpl = resolve_template("two_lane_arterial")
    spec = TrafficSpec(vehicles_per_lane_km=10.0, pedestrians_per_sidewalk_100m=5.0)
    (m,) = generate(tpl.id, "lead_vehicle_brakes", 1, template=tpl, traffic=spec).manifests
    m = parse_manifest({**m.model_dump(mode="json", by_alias=True), "clip_s": 45.0}, m.sample_id)
    scene = build_scene(m, tpl, backend="kinematic-v1")
    engine = Engine(scene)
    peds = [i for i in range(len(scene.actors)) if scene.actors.background[i] and scene.actors.is_ped[i]]
    graph = tpl.walk_graph
    seen = 0
    before = engine.state
    while engine.step():
        after = engine.state
        for i in peds:
            k0, k1 = before.coords.path_keys[i], after.coords.path_keys[i]
            if k0 == k1:
                continue
            seen += 1
            old, new = expand_walk(tpl, split_walk_key(k0)[2]), expand_walk(tpl, split_walk_key(k1)[2])
            assert scene.path(k0).length_m - float(before.coords.u[i]) <= TURN_AT_END_M + 0.1
            # From the old route's last node on; or, turning back at a dead end, from the node behind it on the way
            # back (it walks back from where it is, not on to the dead end and back over its own steps).
            folded = new[0] != old[-1]
            assert not folded or new[0] in old[-4:-1], (old, new)
            assert all(graph.has_edge(a, b) for a, b in zip(new, new[1:]))
            mem0, mem1 = before.control.peds[i], after.control.peds[i]
            assert mem1.turns == mem0.turns + 1 and mem1.mode == "walk" and mem1.hazard_since is None
            assert mem1.kerb_u == scene.kerb_u(scene.path(k1)) and mem1.stop_draw == mem0.stop_draw
        before = after
    assert seen >= 8, (seen, len(peds))  # 11 of 26 routes end within the 45 s
    trace = finish(engine)
    late = trace.df[trace.df.actor_id.isin([scene.actors.ids[i] for i in peds]) & (trace.df.t > 40.0)]
    assert (late.speed_mps > 0.3).mean() > 0.9
