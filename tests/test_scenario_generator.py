"""Generation end to end: valid manifests per intent, determinism, declaration order, counts, timing, streams."""

from __future__ import annotations

import json

import pytest
import yaml

from simready.common import paths
from simready.catalog.catalog import ensure_catalog
from simready.scenario.coverage_counts import UNASSIGNED
from simready.scenario.generator import generate, make_context, resolve_template
from simready.scenario.manifest import manifest_bytes, parse_manifest
from simready.scenario.programs import PROGRAMS, program
from simready.scenario.realization import CAUSAL_ORDER_KEY, CAUSE_PREFIX, parse_cause
from simready.scenario.streams import StreamSet
from simready.world.template import parse_template, template_hash

INTENTS = sorted(PROGRAMS)


@pytest.fixture(scope="module")
def catalog():
    return ensure_catalog()


@pytest.fixture(scope="module")
def runs(catalog):
    """A few manifests of every intent on its default template (shared by the tests below)."""
    return {i: generate(PROGRAMS[i].default_template, i, 6, catalog=catalog) for i in INTENTS}


@pytest.mark.parametrize("intent", INTENTS)
def test_each_intent_yields_valid_manifests_on_its_template(runs, intent) -> None:
    result = runs[intent]
    assert len(result.manifests) == 6
    prog = PROGRAMS[intent]
    for m in result.manifests:
        assert m.template_id == prog.default_template
        assert m.sample_id.split("-")[1] == prog.abbrev
        assert m.coverage_cell.id != UNASSIGNED and m.coverage_cell.id in result.coverage.cells
        assert m.actor("ego").role == "ego" and m.metric_subject == "ego"
        assert all(a.asset_id in m.asset_versions for a in m.actors)
        for i in m.interactions:
            if i.verb in ("speed", "gap", "change_lane", "lane_offset"):
                assert i.dynamics is not None


@pytest.mark.parametrize("intent", INTENTS)
def test_generated_manifests_round_trip_through_the_schema(runs, intent) -> None:
    for m in runs[intent].manifests:
        data = manifest_bytes(m)
        again = parse_manifest(json.loads(data), m.sample_id)
        assert again == m
        assert manifest_bytes(again) == data


def test_every_realized_variable_names_its_cause(runs) -> None:
    m = runs["pedestrian_emerges_behind_van"].manifests[0]
    r = m.realized
    order = r[CAUSAL_ORDER_KEY]
    assert "ped.spawn" in order and "ttc_target_s" in order and "env.road_friction" in order
    for name in order:
        source, parents, rule = parse_cause(r[CAUSE_PREFIX + name])
        assert source and (rule or source.startswith("measured") or source == "generator"), name
    assert parse_cause(r["cause/env.road_friction"])[1] == ["env.wetness"]
    assert "cell.ped_family" in parse_cause(r["cause/ped.family"])[1]


def test_timing_lands_inside_the_requested_ttc_cell(catalog) -> None:
    for cell in ("ttc_s=1.0..2.0", "ttc_s=3.0..4.0"):
        result = generate("residential_crosswalk_v3", "pedestrian_emerges_behind_van", 5, cell=cell, catalog=catalog)
        lo, hi = (float(v) for v in cell.split("=")[1].split(".."))
        assert result.manifests
        for m in result.manifests:
            r = m.realized
            assert lo <= r["ttc_s"] < hi
            assert abs(r["ttc_s"] - r["ttc_target_s"]) < 0.05  # the solve's target, up to the tick grid
            assert r["t_trigger_s"] < r["t_emerge_s"] < r["t_enter_path_s"] < r["t_conflict_s"] <= m.clip_s
            assert r["occlusion.max_visible_before"] <= 0.1


def test_same_root_same_bytes_and_another_root_other_draws(catalog) -> None:
    a = generate("two_lane_arterial", "lead_vehicle_brakes", 4, catalog=catalog)
    b = generate("two_lane_arterial", "lead_vehicle_brakes", 4, catalog=catalog)
    c = generate("two_lane_arterial", "lead_vehicle_brakes", 4, catalog=catalog, root="another-root")
    assert [manifest_bytes(m) for m in a.manifests] == [manifest_bytes(m) for m in b.manifests]
    assert [r.as_dict() for r in a.rejections] == [r.as_dict() for r in b.rejections]
    assert [manifest_bytes(m) for m in a.manifests] != [manifest_bytes(m) for m in c.manifests]


def _reordered(template_id: str):
    data = yaml.safe_load((paths.TEMPLATES_DIR / f"{template_id}.yaml").read_text())
    for key in ("regions", "lanes", "relations", "affordances", "instances", "signals"):
        if key in data:
            data[key] = list(reversed(data[key]))
    data["walkable"]["nodes"] = dict(reversed(list(data["walkable"]["nodes"].items())))
    data["walkable"]["edges"] = [list(reversed(e)) for e in reversed(data["walkable"]["edges"])]
    return parse_template(data, "reordered")


@pytest.mark.parametrize("intent", ["pedestrian_emerges_behind_van", "signalized_left_turn"])
def test_template_declaration_order_does_not_change_a_byte(catalog, intent) -> None:
    tid = PROGRAMS[intent].default_template
    original, reordered = resolve_template(tid), _reordered(tid)
    assert template_hash(original) == template_hash(reordered)
    a = generate(tid, intent, 4, catalog=catalog, template=original)
    b = generate(tid, intent, 4, catalog=catalog, template=reordered)
    assert [manifest_bytes(m) for m in a.manifests] == [manifest_bytes(m) for m in b.manifests]


def test_counts_add_up_per_cell_and_in_total(catalog) -> None:
    result = generate("two_lane_arterial", "cut_in", 10, catalog=catalog)
    report = result.coverage
    for stats in report.cells.values():
        assert stats.proposals == stats.accepted + stats.rejected
        assert sum(stats.by_stage.values()) == stats.rejected == sum(stats.by_reason.values())
    assert report.proposals == report.accepted + report.rejected
    assert report.accepted == len(result.manifests)
    assert report.rejected == len(result.rejections)
    per_cell = {}
    for row in result.rejections:
        per_cell[row.cell] = per_cell.get(row.cell, 0) + 1
    assert per_cell == {c: s.rejected for c, s in report.cells.items() if s.rejected}
    assert all(r.reason and r.detail and r.stage for r in result.rejections)
    d = report.as_dict()
    assert d["proposals"] == sum(c["proposals"] for c in d["cells"])


def test_a_cell_the_template_cannot_realize_is_reported_infeasible_with_its_reason(catalog) -> None:
    """two_lane_arterial has no lane right of the ego lane: cut-ins from the right cannot happen there."""
    result = generate("two_lane_arterial", "cut_in", 3, cell="side=right|gap_s=0.6..1.2", catalog=catalog)
    assert result.manifests == []
    infeasible = result.coverage.infeasible()
    assert infeasible and all(s.status == "infeasible" for s in result.coverage.cells.values() if s.proposals)
    assert "sampling:sampling.no_neighbour_lane" in infeasible[0].dominant_reasons()[0]
    assert result.coverage.proposals < 3 * len(result.coverage.cells) + 1  # closed after a few structural refusals


def test_generator_targets_under_filled_cells(catalog) -> None:
    """With one manifest per cell wanted, the first manifests land in distinct cells."""
    result = generate("urban_signalized_intersection", "signalized_left_turn", 12, catalog=catalog)
    cells = [m.coverage_cell.id for m in result.manifests]
    assert len(set(cells)) == len(cells)


def test_changing_the_environment_streams_draws_leaves_layout_draws_unchanged(catalog) -> None:
    """Advance only the environment stream: every non-environment variable stays, the environment moves."""
    ctx = make_context(resolve_template("residential_crosswalk_v3"), "pedestrian_emerges_behind_van", catalog=catalog)
    prog = program("pedestrian_emerges_behind_van")
    cell = ctx.coverage.cells[0]
    plain = StreamSet("test/rc3-ped-000007")
    shifted = StreamSet("test/rc3-ped-000007")
    shifted.stream("environment").random(5)
    a = prog.propose(ctx, cell, "rc3-ped-000007", 7, plain).draft["realized"]
    b = prog.propose(ctx, cell, "rc3-ped-000007", 7, shifted).draft["realized"]
    layout = [k for k in a[CAUSAL_ORDER_KEY] if not k.startswith("env.")]
    assert layout and all(a[k] == b[k] for k in layout)
    assert a["env.sun_elevation_deg"] != b["env.sun_elevation_deg"]
    assert a["env.illumination"] == b["env.illumination"]  # fixed by the cell, not drawn


def test_repair_redraws_only_the_named_group(catalog) -> None:
    ctx = make_context(resolve_template("residential_crosswalk_v3"), "pedestrian_emerges_behind_van", catalog=catalog)
    prog = program("pedestrian_emerges_behind_van")
    streams = StreamSet("test/rc3-ped-000011")
    first = prog.propose(ctx, ctx.coverage.cells[0], "rc3-ped-000011", 11, streams)
    again = prog.propose(ctx, ctx.coverage.cells[0], "rc3-ped-000011", 11, streams, attempt=1,
                         previous=first.choice, redraw={"spawn"})
    assert again.attempt == 1
    assert again.choice["van_pose"] == first.choice["van_pose"]
    assert again.choice["ttc_target"] == first.choice["ttc_target"]
    assert again.choice["spawn"] != first.choice["spawn"]
    assert "layout/repair1" in again.draft["streams"]


def test_replay_reproduces_accepted_manifests_and_catches_edits(runs) -> None:
    from simready.scenario.generator import replay

    for intent in INTENTS:
        m = runs[intent].manifests[0]
        assert replay(m) == (True, ""), intent
        assert m.intent == intent
    m = runs["lead_vehicle_brakes"].manifests[0]
    edited = m.model_copy(update={"clip_s": 11.0})
    ok, why = replay(edited)
    assert not ok and "differs" in why
