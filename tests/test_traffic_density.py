"""Background traffic keeps its density (SPEC §20, issue 31): reserves spawned at the map's entries."""

from __future__ import annotations

import pytest

from simready.scenario.generator import generate, make_context, resolve_template
from simready.scenario.manifest import manifest_bytes, parse_manifest
from simready.scenario.traffic import BACKGROUND_TAG, RESERVE_TAG, TrafficSpec, entry_lanes, with_traffic
from simready.sim.behavior import respawn
from simready.sim.engine import Engine
from simready.sim.run import finish
from simready.sim.core.scene import build_scene

from tests.fixtures.traffic import DENSITY, city, lead  # noqa: F401 - module-scoped fixtures


def _present_background(trace, ids):
    df = trace.df
    return df[df.actor_id.isin(ids) & df.present].groupby("t").size()


def test_reserves_recorded_at_entries(lead, city):
    assert respawn.RESERVE_TAG == RESERVE_TAG
    bg = [a for a in lead.actors if BACKGROUND_TAG in a.tags]
    reserves = [a for a in bg if RESERVE_TAG in a.tags]
    assert reserves and all(not a.present_at_start for a in reserves)
    assert all(a.present_at_start for a in bg if a not in reserves)
    assert lead.realized["traffic.vehicles"] == len(bg) - len(reserves)
    assert lead.realized["traffic.reserves"] == len(reserves)
    entries = set(entry_lanes(make_context(city, "lead_vehicle_brakes")))
    assert {a.initial.lane_ref.lane for a in reserves} <= entries
    # Reserves are drawn after the vehicles present at start: those are what they were without reserves.
    ids = sorted(a.id for a in bg)
    assert ids == [f"bg_v{k:03d}" for k in range(len(bg))]
    assert [a.id for a in reserves] == ids[len(bg) - len(reserves):]


@pytest.mark.slow
def test_respawn_keeps_the_density_over_a_minute(lead, city):
    ctx = make_context(city, "lead_vehicle_brakes")
    draft = lead.model_dump(mode="json", by_alias=True)
    draft["clip_s"] = 60.0
    draft = with_traffic(ctx, draft, TrafficSpec(vehicles_per_lane_km=DENSITY), lead.realized["stream_root"])
    m = parse_manifest(draft, lead.sample_id)
    bg = {a.id for a in m.actors if BACKGROUND_TAG in a.tags}
    n0 = m.realized["traffic.vehicles"]
    assert m.realized["traffic.reserves"] > lead.realized["traffic.reserves"], "a longer clip carries more reserves"
    scene = build_scene(m, city, backend="kinematic-v1")
    engine = Engine(scene)
    engine.run()
    trace = finish(engine)
    assert not [e for e in trace.events if e["type"] == "termination"]
    left = [e for e in trace.events if e["type"] == "despawn" and e["actor"] in bg]
    spawned = [e for e in trace.events if e["type"] == "spawn" and e.get("reason") == "density"]
    assert len(left) >= 10 and len(spawned) >= 10
    count = _present_background(trace, bg)
    assert count.index.max() == pytest.approx(60.0)
    # Without respawning the street would have lost every vehicle that left; with it the count stays near n0.
    assert count.max() <= n0
    assert count.min() >= 0.85 * n0, f"density fell to {count.min()} of {n0}"
    assert [e for e in trace.events if e["type"] == "collision" and {e["a"], e["b"]} & bg] == []


def test_checkpoint_restore_continues_the_respawns(lead, city):
    scene = build_scene(lead, city, backend="kinematic-v1")
    engine = Engine(scene)
    engine.run(until_tick=scene.warmup_ticks + int(round(4.0 / scene.dt)))
    ckpt = engine.checkpoint()
    assert engine.state.world.spawned, "no reserve spawned before the checkpoint"
    engine.run()
    restored = Engine.restore(scene, ckpt)
    assert restored.state.world.spawned == ckpt.state().world.spawned
    restored.run()
    full = finish(engine)
    later = [e for e in full.events if e["type"] == "spawn" and e["t"] > 4.0]
    assert later, "no respawn after the checkpoint"
    assert finish(restored).to_bytes() == full.to_bytes()


def test_no_traffic_no_reserves(city):
    (plain,) = generate(city.id, "lead_vehicle_brakes", 1, template=city).manifests
    assert b"reserve" not in manifest_bytes(plain)


# --- the scenario's relation -----------------------------------------------------------------------


def _standing(m, template, lane, s):
    """``m`` with its first background vehicle standing on ``lane`` at arc length ``s`` (cruise 0)."""
    from simready.world.lane_graph import lane_network

    d = m.model_dump(mode="json", by_alias=True)
    x, y, yaw = lane_network(template).graph.lanes[lane].pose_at(s)
    a = next(a for a in d["actors"] if BACKGROUND_TAG in a["tags"] and a["present_at_start"])
    a["initial"].update(lane_ref={"lane": lane, "s": s, "t_frac": 0.0}, pose={"x": x, "y": y, "yaw": yaw}, speed_mps=0.0)
    a["behavior"].update(cruise_speed_mps=0.0, route=[lane])
    return parse_manifest(d, m.sample_id), a["id"]


@pytest.mark.slow
def test_ladder_rejects_traffic_that_breaks_the_relation(city):
    """A car standing in the pedestrian's crosswalk, or in the ego's way before it: the scenario cannot happen."""
    from simready.sim.run import run_simulation
    from simready.sim.ladder.traffic import background_issue, crossing_issue

    (m,) = generate(city.id, "pedestrian_emerges_behind_van", 1, template=city,
                    traffic=TrafficSpec(vehicles_per_lane_km=DENSITY)).manifests
    ego = m.actor("ego").initial.lane_ref
    # The crosswalk the pedestrian uses is 48–52 m along the ego's lane.
    parked, vid = _standing(m, city, ego.lane, 50.0)
    bg = {a.id for a in parked.actors if BACKGROUND_TAG in a.tags}
    alone = parked.model_copy(update={"actors": [a for a in parked.actors if a.id not in bg]})
    with_bg = run_simulation(parked, city, backend="kinematic-v1").trace
    issue = crossing_issue(parked, city, with_bg, run_simulation(alone, city, backend="kinematic-v1").trace, bg)
    assert issue is not None and issue[0] == "traffic.blocks_crossing" and vid in issue[1]
    # Standing 20 m before the crosswalk: the ego stops behind it and the pedestrian's trigger fires late.
    blocking, _ = _standing(m, city, ego.lane, 20.0)
    issue = background_issue(blocking, city)
    assert issue is not None and issue[0] == "traffic.relation", issue
    # 30 m: every trigger on time, but the ego never comes near the pedestrian.
    blocking, _ = _standing(m, city, ego.lane, 30.0)
    issue = background_issue(blocking, city)
    assert issue is not None and issue[0] == "traffic.relation" and "comes within" in issue[1], issue


# --- coverage --------------------------------------------------------------------------------------


def test_density_is_a_coverage_dimension(lead):
    from simready.scenario.coverage import TRAFFIC_BUCKETS, traffic_label
    from simready.scenario.coverage_summary import coverage_table, coverage_totals
    from simready.scenario.programs import coverage_of

    base = coverage_of("lead_vehicle_brakes")
    assert lead.coverage_cell.id.endswith("|traffic=moderate")
    assert lead.coverage_cell.dims["traffic"] == "moderate"
    assert [b[2] for b in TRAFFIC_BUCKETS] == ["light", "moderate", "heavy"]
    spec = base.with_traffic(DENSITY)
    assert len(spec.cells) == len(base.cells) and base.with_traffic(0.0) is base
    assert spec.cell(lead.coverage_cell.id).value("traffic") == "moderate"
    assert [c.value("traffic") for c in base.with_traffic(5.0).cells][:1] == ["light"]
    assert traffic_label(base.cells[0].id) == "none"
    # The suite-wide table: the intent's cells once per bucket the suite asks for, each row naming its bucket.
    merged = {f"lead_vehicle_brakes/{lead.coverage_cell.id}": {"proposals": 3, "accepted": 1, "rejected": 2,
                                                               "by_stage": {}, "by_reason": __import__("collections").Counter()}}
    rows = coverage_table(merged, ["lead_vehicle_brakes"], {"lead_vehicle_brakes": [0.0, DENSITY]})
    assert len(rows) == 2 * len(base.cells)
    totals = coverage_totals(rows)
    assert totals["by_traffic"]["moderate"]["accepted"] == 1 and totals["by_traffic"]["none"]["accepted"] == 0
    assert totals["by_traffic"]["none"]["cells"] == totals["by_traffic"]["moderate"]["cells"] == len(base.cells)
    # Without traffic the table is what it was: one bucket, none.
    assert {r["traffic"] for r in coverage_table({}, ["lead_vehicle_brakes"])} == {"none"}
    from simready.scenario.coverage_summary import plot_coverage_heatmap

    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        assert plot_coverage_heatmap(rows, Path(tmp) / "h.png").stat().st_size > 0


# --- the default suite ----------------------------------------------------------------------------


@pytest.mark.slow
def test_default_suite_traffic_sample_passes(tmp_path):
    """The default suite's one template × intent with moderate traffic: batch b0000 through the pipeline's ladder,
    its cost recorded for the run summary, its dynamic-v1 rollout accepted and gated."""
    from simready.common import paths
    from simready.catalog.catalog import ensure_catalog
    from simready.artifacts.layout import BatchDir
    from simready.scenario.batch import build_batch, write_batch
    from simready.scenario.suite import load_suite
    from simready.sim.batch import simulate_sample
    from simready.sim.ladder.settle import PhysicsSettleStage
    from simready.sim.ladder.traffic import TrafficRolloutStage
    from simready.validity.batch import validate_sample_dir
    from simready.world.template import load_template

    suite = load_suite()
    asked = [(t, i) for t, intents in sorted(suite.templates.items()) for i in intents if suite.traffic_for(t, i)]
    assert len(asked) == 1
    template_id, intent = asked[0]
    spec = suite.traffic_for(template_id, intent)
    only = suite.model_copy(update={"templates": {template_id: {intent: suite.templates[template_id][intent]}}})
    catalog = ensure_catalog()
    template = load_template(paths.TEMPLATES_DIR / f"{template_id}.yaml")
    result = build_batch(only, template, "b0000", catalog,
                         extra_stages=[PhysicsSettleStage(catalog, rollout=False, record=False), TrafficRolloutStage(catalog)])
    cost = result.summary()["traffic"][intent]
    assert cost["vehicles_per_lane_km"] == spec.vehicles_per_lane_km
    assert cost["samples"] == len(result.manifests) >= 1 and cost["vehicles"] >= 20 and cost["reserves"] >= 1
    assert cost["rollouts"] >= 1 and 0.0 < cost["rollout_cpu_s"] <= cost["generate_cpu_s"]
    (m,) = result.manifests
    assert m.coverage_cell.dims["traffic"] == "moderate"
    write_batch(result, tmp_path)
    d = BatchDir(tmp_path).sample(m.sample_id).root
    row = simulate_sample(d, template, catalog, plot=False)
    assert row["verdict"] == "accept", row
    v = validate_sample_dir(d, None)
    assert v["base"]["accepted"], v["base"]


def test_run_summary_prints_the_traffic_cost(tmp_path, capsys):
    import json

    from simready.runner.main_job import _print_traffic
    from simready.resources import ArtifactStore

    store = ArtifactStore(root=str(tmp_path / "artifacts"))
    cost = {"vehicles_per_lane_km": 40.0, "samples": 1, "vehicles": 52, "reserves": 46, "generate_cpu_s": 5.5,
            "rollout_cpu_s": 3.25, "rollouts": 2}
    for batch in ("b0000", "b0001"):
        store.write_bytes(store.layout.batch("city_crossing", batch).record,
                          json.dumps({"traffic": {"lead_vehicle_brakes": cost}}).encode())
    store.write_bytes(store.layout.batch("two_lane_arterial", "b0000").record, json.dumps({}).encode())
    _print_traffic(store, ["city_crossing", "two_lane_arterial"], ["b0000", "b0001"])
    out = capsys.readouterr().out.splitlines()
    assert out == ["  traffic     city_crossing × lead_vehicle_brakes: 40 vehicles/lane km, 2 samples with 52 vehicles "
                   "(+46 reserves) each; ladder 11.0 s CPU, of it 6.5 s in 4 street rollouts"]


def test_batched_projection_has_project_near_bits(lead, city):
    """dynamic-v1 projects every body back onto its path in one compiled call: the bits of the per-body method."""
    import numpy as np

    from simready.sim.core import kernels
    from simready.sim.core.reference_paths import PathTable

    scene = build_scene(lead, city, backend="dynamic-v1")
    table = PathTable.build(scene.initial_paths, scene.lane_ids, scene.actors.chord)
    rng = np.random.default_rng(7)
    rows = np.repeat(np.arange(len(table.paths)), 40)
    hints = np.array([rng.uniform(-5.0, table.paths[r].length_m + 5.0) for r in rows])
    pts = np.array([table.paths[r].point_at(h, rng.uniform(-3.0, 3.0)) for r, h in zip(rows, hints)])
    xs = pts[:, 0] + rng.normal(0.0, 2.0, len(rows))
    ys = pts[:, 1] + rng.normal(0.0, 2.0, len(rows))
    hints = hints + rng.normal(0.0, 3.0, len(rows))
    u, d = np.empty(len(rows)), np.empty(len(rows))
    cum, base, last, p, dirs = table.kernel_arrays[:5]
    kernels.project_near(cum, base, last, p, dirs, rows, xs, ys, hints, 6, u, d)
    want = [table.paths[r].project_near(float(x), float(y), float(h)) for r, x, y, h in zip(rows, xs, ys, hints)]
    assert u.tolist() == [w[0] for w in want] and d.tolist() == [w[1] for w in want]
