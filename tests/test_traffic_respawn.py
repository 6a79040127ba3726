"""Background traffic out of range despawns, spent reserves and departed cyclists recycle, pedestrians keep walking
(SPEC §20, issue 31)."""

from __future__ import annotations

import numpy as np
import pytest

from simready.common.errors import ManifestError
from simready.scenario.generator import generate, make_context, resolve_template
from simready.scenario.manifest import manifest_bytes, parse_manifest
from simready.scenario.suite import SuiteError, load_suite
from simready.scenario.traffic import BACKGROUND_TAG, RESERVE_TAG, TrafficSpec, with_traffic
from simready.scenario.traffic_walkers import kerbside_lanes
from simready.sim.branch import run_branches
from simready.sim.engine import Engine
from simready.sim.run import finish, run_simulation
from simready.sim.core.scene import build_scene

from tests.fixtures.traffic import DENSITY, city, lead  # noqa: F401 - module-scoped fixtures


def _living(lead, city, *, clip_s: float, range_m: float, reserves: int):
    """``lead`` with a despawn range and recycling, its clip ``clip_s`` and only its first ``reserves`` reserves
    (so the reserves run out and recycling has to keep the density)."""
    ctx = make_context(city, "lead_vehicle_brakes")
    draft = lead.model_dump(mode="json", by_alias=True)
    draft["clip_s"] = clip_s
    spec = TrafficSpec(vehicles_per_lane_km=DENSITY, despawn_range_m=range_m, recycle=True)
    draft = with_traffic(ctx, draft, spec, lead.realized["stream_root"])
    spare = [a["id"] for a in draft["actors"] if RESERVE_TAG in a["tags"]][reserves:]
    draft["actors"] = [a for a in draft["actors"] if a["id"] not in spare]
    return parse_manifest(draft, lead.sample_id)


def _kinds(trace, *reasons):
    return [e for e in trace.events if e["type"] in ("spawn", "despawn") and e.get("reason") in reasons]


@pytest.fixture(scope="module")
def short(lead, city):
    """12 s with a 60 m range and two reserves: despawns and recycled spawns within seconds."""
    return _living(lead, city, clip_s=12.0, range_m=60.0, reserves=2)


def test_rules_recorded_only_when_asked(lead, short):
    assert "despawn" not in manifest_bytes(lead).decode() and "traffic.recycle" not in lead.realized
    assert short.realized["traffic.despawn_range_m"] == 60.0 and short.realized["traffic.recycle"] is True
    assert short.realized["cause/traffic.despawn_range_m"].startswith("suite |")


def test_density_kept_over_a_minute_with_despawn_and_recycling(lead, city):
    m = _living(lead, city, clip_s=60.0, range_m=150.0, reserves=6)
    bg = {a.id for a in m.actors if BACKGROUND_TAG in a.tags}
    n0 = m.realized["traffic.vehicles"]
    trace = run_simulation(m, city, backend="kinematic-v1").trace
    assert not [e for e in trace.events if e["type"] == "termination"]
    out = _kinds(trace, "out of range")
    recycled = _kinds(trace, "recycled")
    assert len(out) >= 10, "nothing left the range"
    assert len(recycled) >= 20, "the six reserves were not enough: recycling must have kept the density"
    assert {e["actor"] for e in recycled} - {a.id for a in m.actors if RESERVE_TAG in a.tags}, "only reserves recycled"
    df = trace.df
    count = df[df.actor_id.isin(bg) & df.present].groupby("t").size()
    assert count.index.max() == pytest.approx(60.0)
    assert count.max() <= n0 and count.min() >= 0.9 * n0, (count.min(), n0)
    assert [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} & bg] == []
    # A despawned vehicle's trace ends: absent from the tick after its despawn until it re-enters, elsewhere.
    ev = recycled[0]
    rows = df[df.actor_id == ev["actor"]].set_index("tick")
    tick0 = int(rows.index.min()) - 1
    gone = max(e["tick"] for e in out + _kinds(trace, "left the map") if e["actor"] == ev["actor"] and e["tick"] < ev["tick"])
    if gone > tick0:
        # Present at its despawn's tick, absent from the next one until it re-enters, elsewhere.
        assert rows.loc[gone, "present"] and not rows.loc[gone + 1:ev["tick"], "present"].any()
        moved = rows.loc[ev["tick"] + 1, ["x", "y"]].to_numpy(float) - rows.loc[gone, ["x", "y"]].to_numpy(float)
        assert np.hypot(*moved) > 5.0
    assert rows.loc[ev["tick"] + 1, "present"] and not rows.loc[ev["tick"], "present"]
    without = _living(lead, city, clip_s=60.0, range_m=150.0, reserves=6)
    off = parse_manifest({**without.model_dump(mode="json", by_alias=True),
                          "realized": {k: v for k, v in without.realized.items() if "recycle" not in k}}, m.sample_id)
    # (the causal order still names it: harmless for the simulator, which reads the value only)
    sparse = run_simulation(off, city, backend="kinematic-v1").trace.df
    c_off = sparse[sparse.actor_id.isin(bg) & sparse.present].groupby("t").size()
    assert c_off.min() < 0.7 * n0, "without recycling the six reserves would not keep the density"


def test_replay_checkpoint_and_branches_share_the_respawns(short, city):
    first = run_simulation(short, city, backend="kinematic-v1").trace
    assert run_simulation(short, city, backend="kinematic-v1").trace.to_bytes() == first.to_bytes()
    scene = build_scene(short, city, backend="kinematic-v1")
    engine = Engine(scene)
    engine.run(until_tick=scene.warmup_ticks + int(round(4.0 / scene.dt)))
    ckpt = engine.checkpoint()
    assert engine.state.world.recycled > 0, "no recycled spawn before the checkpoint"
    engine.run()
    restored = Engine.restore(scene, ckpt)
    assert restored.state.world.recycled == ckpt.state().world.recycled
    restored.run()
    full = finish(engine)
    assert [e for e in _kinds(full, "recycled", "out of range") if e["t"] > 4.0], "nothing after the checkpoint"
    assert finish(restored).to_bytes() == full.to_bytes()
    out = run_branches(short, city, at_s=5.0, actions=("brake", "coast"), backend="kinematic-v1")
    t_d = out.decision_t_s
    brake, coast = (b.trace for b in out.branches)
    churn = ("density", "recycled", "out of range", "left the map")
    assert [e for e in _kinds(brake, *churn) if e["t"] <= t_d] == [e for e in _kinds(coast, *churn) if e["t"] <= t_d]
    assert [e for e in _kinds(brake, *churn) if e["t"] <= t_d], "no respawn before the decision"
    cols = ["tick", "actor_id", "x", "y", "present"]
    b, c = brake.df, coast.df
    assert b[b.t <= t_d][cols].reset_index(drop=True).equals(c[c.t <= t_d][cols].reset_index(drop=True))


def test_bad_parameters_one_line(tmp_path, short):
    base = "suite_id: s\nbatches: 1\ntemplates:\n  city_crossing:\n    lead_vehicle_brakes: 1\n"
    for body, field in (("{vehicles_per_lane_km: 5, despawn_range_m: -10}", "despawn_range_m"),
                        ("{vehicles_per_lane_km: 5, despawn_range_m: 10}", "despawn_range_m"),
                        ("{vehicles_per_lane_km: 5, despawn_range: 150}", "despawn_range"),
                        ("{vehicles_per_lane_km: 5, recycle: maybe}", "recycle")):
        path = tmp_path / "suite.yaml"
        path.write_text(base + f"traffic:\n  city_crossing:\n    lead_vehicle_brakes: {body}\n")
        with pytest.raises(SuiteError) as err:
            load_suite(path)
        line = str(err.value)
        assert "\n" not in line and field in line and "suite.yaml" in line, line
    d = short.model_dump(mode="json", by_alias=True)
    for key, value in (("traffic.despawn_range_m", -1.0), ("traffic.despawn_range_m", "far"), ("traffic.recycle", 1)):
        with pytest.raises(ManifestError) as err:
            parse_manifest({**d, "realized": {**d["realized"], key: value}}, "m.json")
        line = err.value.one_line()
        assert "\n" not in line and key in line and "m.json" in line, line


# --- every kind keeps its density: cyclists re-enter, pedestrians keep walking --------------------------------


@pytest.fixture(scope="module")
def street():
    """A minute on the arterial with vehicles, pedestrians and cyclists and recycling (walk routes sized for the
    generated 12 s clip, so every pedestrian reaches its route's end, and the cyclists leave the map)."""
    tpl = resolve_template("two_lane_arterial")
    spec = TrafficSpec(vehicles_per_lane_km=10.0, pedestrians_per_sidewalk_100m=5.0, cyclists_per_km=10.0,
                       recycle=True)
    (m,) = generate(tpl.id, "lead_vehicle_brakes", 1, template=tpl, traffic=spec).manifests
    long = parse_manifest({**m.model_dump(mode="json", by_alias=True), "clip_s": 60.0}, m.sample_id)
    return tpl, long, run_simulation(long, tpl, backend="kinematic-v1").trace


def _present(m, trace, kind: str):
    ids = {a.id for a in m.actors if BACKGROUND_TAG in a.tags and a.kind == kind}
    start = sum(a.present_at_start for a in m.actors if a.id in ids)
    df = trace.df
    count = df[df.actor_id.isin(ids) & df.present].groupby("tick").size().reindex(sorted(df.tick.unique()), fill_value=0)
    return ids, start, count


def test_each_kind_keeps_its_density_over_a_minute(street):
    tpl, m, trace = street
    _, n_v, vehicles = _present(m, trace, "vehicle")
    cyc, n_c, cyclists = _present(m, trace, "cyclist")
    peds, n_p, walking = _present(m, trace, "pedestrian")
    assert n_v >= 3 and n_c >= 2 and n_p >= 10
    # Per kind: a departed cyclist is replaced by a cyclist, never by a vehicle reserve (nor the reverse).
    assert vehicles.max() <= n_v and cyclists.max() <= n_c
    assert vehicles.min() >= n_v - 2 and cyclists.min() >= n_c - 1 and (cyclists == n_c).mean() > 0.7
    again = [e for e in _kinds(trace, "recycled") if e["actor"] in cyc]
    assert again, "no cyclist re-entered"
    kerbside = set(kerbside_lanes(make_context(tpl, m.intent)))
    df = trace.df.set_index(["tick", "actor_id"])
    for e in again:
        row = df.loc[(e["tick"] + 1, e["actor"])]
        assert row.present and row.lane in kerbside, (e, row.lane)
    # Pedestrians never leave and never stand for good: at the route's end they turn onto a new route.
    assert (walking == n_p).all()
    late = trace.df[trace.df.actor_id.isin(peds) & (trace.df.t > 40.0)]
    assert (late.speed_mps > 0.3).mean() > 0.9
    bg = {a.id for a in m.actors if BACKGROUND_TAG in a.tags}
    assert [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} <= bg] == []


@pytest.mark.slow  # three rollouts of the minute on top of the fixture's (replay, checkpointed run, restored run)
def test_turns_and_cyclist_reentries_replay_and_restore(street):
    tpl, m, trace = street
    assert run_simulation(m, tpl, backend="kinematic-v1").trace.to_bytes() == trace.to_bytes()
    scene = build_scene(m, tpl, backend="kinematic-v1")
    engine = Engine(scene)
    engine.run(until_tick=scene.warmup_ticks + int(round(8.0 / scene.dt)))
    ckpt = engine.checkpoint()
    turned = [p.turns for p in engine.state.control.peds if p is not None]
    engine.run()
    after = [p.turns for p in engine.state.control.peds if p is not None]
    assert sum(after) > sum(turned) + len(after) // 2, "the pedestrians did not turn after the checkpoint"
    restored = Engine.restore(scene, ckpt)
    restored.run()
    full = finish(engine)
    # Checkpointing changes nothing but its own event.
    cols = ["tick", "actor_id", "x", "y", "speed_mps", "present"]
    assert full.df[cols].equals(trace.df[cols])
    assert [e for e in full.events if e["type"] != "checkpoint"] == trace.events
    cyc = {a.id for a in m.actors if a.kind == "cyclist"}
    assert [e for e in _kinds(full, "recycled") if e["t"] > 8.0 and e["actor"] in cyc], "no re-entry after it"
    assert finish(restored).to_bytes() == full.to_bytes()
    assert [p.turns for p in restored.state.control.peds if p is not None] == after
