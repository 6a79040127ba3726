"""Each background-traffic density is a coverage dimension (SPEC §20), and a density beyond what the map can hold
is refused in one line before anything is written."""

from __future__ import annotations

from collections import Counter

import pytest

from simready.scenario.coverage import CoverageError, traffic_bucket, traffic_label
from simready.scenario.coverage_summary import coverage_table, coverage_totals
from simready.scenario.generator import generate, make_context, resolve_template
from simready.scenario.programs import coverage_of
from simready.scenario.traffic import TrafficError, TrafficSpec, check_capacity, map_capacity
from simready.scenario.traffic_walkers import _lane_slots


@pytest.fixture(scope="module")
def city():  # type: ignore[no-untyped-def]
    return resolve_template("city_crossing")


@pytest.mark.parametrize("dim, density, bucket", [
    ("traffic", 0.0, "none"), ("traffic", 19.9, "light"), ("traffic", 20.0, "moderate"), ("traffic", 59.9, "moderate"),
    ("traffic", 60.0, "heavy"), ("traffic", 120.0, "heavy"),
    ("pedestrians", 0.0, "none"), ("pedestrians", 4.9, "light"), ("pedestrians", 5.0, "moderate"),
    ("pedestrians", 19.9, "moderate"), ("pedestrians", 20.0, "heavy"), ("pedestrians", 60.0, "heavy"),
    ("cyclists", 0.0, "none"), ("cyclists", 9.9, "light"), ("cyclists", 10.0, "moderate"), ("cyclists", 39.9, "moderate"),
    ("cyclists", 40.0, "heavy"), ("cyclists", 150.0, "heavy"),
])
def test_each_density_has_its_buckets(dim, density, bucket):
    assert traffic_bucket(dim, density) == bucket


def test_a_density_past_the_last_bucket_is_an_error():
    with pytest.raises(CoverageError, match="in no bucket"):
        traffic_bucket("pedestrians", 61.0)


def test_with_traffic_adds_one_dimension_per_density_asked():
    base = coverage_of("lead_vehicle_brakes")
    walkers = base.with_traffic({"pedestrians_per_sidewalk_100m": 5.0})
    assert [d.name for d in walkers.dimensions] == [*(d.name for d in base.dimensions), "pedestrians"]
    cell = walkers.cells[0]
    assert cell.id == f"{base.cells[0].id}|pedestrians=moderate" and cell.value("traffic") is None
    assert traffic_label(cell.id) == "none" and traffic_label(cell.id, "pedestrians") == "moderate"
    every = base.with_traffic({"vehicles_per_lane_km": 40.0, "pedestrians_per_sidewalk_100m": 2.0,
                               "cyclists_per_km": 45.0})
    assert every.cells[0].id == f"{base.cells[0].id}|traffic=moderate|pedestrians=light|cyclists=heavy"
    assert len(every.cells) == len(base.cells)
    assert base.with_traffic({"vehicles_per_lane_km": 0.0, "cyclists_per_km": 0.0}) is base
    assert base.with_traffic(40.0).cells[0].id == f"{base.cells[0].id}|traffic=moderate"


def test_the_coverage_table_has_a_column_and_totals_per_density():
    base = coverage_of("lead_vehicle_brakes")
    asked = [{"vehicles_per_lane_km": 40.0}, {"pedestrians_per_sidewalk_100m": 25.0, "cyclists_per_km": 5.0}]
    first = base.cells[0].id
    merged = {f"lead_vehicle_brakes/{first}|pedestrians=heavy|cyclists=light":
              {"proposals": 3, "accepted": 2, "rejected": 1, "by_stage": Counter(), "by_reason": Counter({"x": 1})}}
    rows = coverage_table(merged, ["lead_vehicle_brakes"], {"lead_vehicle_brakes": asked})
    assert len(rows) == 2 * len(base.cells)
    row = next(r for r in rows if r["cell"] == f"{first}|pedestrians=heavy|cyclists=light")
    assert (row["traffic"], row["pedestrians"], row["cyclists"], row["accepted"]) == ("none", "heavy", "light", 2)
    totals = coverage_totals(rows)
    n = len(base.cells)
    assert totals["by_traffic"] == {"moderate": {"cells": n, "accepted": 0, "target": sum(c.target for c in base.cells)},
                                    "none": {"cells": n, "accepted": 2, "target": sum(c.target for c in base.cells)}}
    assert totals["by_pedestrians"]["heavy"]["accepted"] == 2 and totals["by_pedestrians"]["none"]["accepted"] == 0
    assert totals["by_cyclists"]["light"]["cells"] == n


def test_a_sample_is_counted_in_the_bucket_of_the_density_it_realized():
    base = coverage_of("lead_vehicle_brakes")
    spec = base.with_traffic({"vehicles_per_lane_km": 40.0, "pedestrians_per_sidewalk_100m": 5.0})
    asked = spec.cells[0]
    assert asked.id.endswith("|traffic=moderate|pedestrians=moderate")
    same = spec.realized_cell(asked, {"traffic.realized_vehicles_per_lane_km": 31.0,
                                      "traffic.realized_pedestrians_per_sidewalk_100m": 5.0})
    assert same is asked
    moved = spec.realized_cell(asked, {"traffic.realized_vehicles_per_lane_km": 31.0,
                                       "traffic.realized_pedestrians_per_sidewalk_100m": 4.2})
    assert moved.id == f"{base.cells[0].id}|traffic=moderate|pedestrians=light" and moved.target == 0
    assert spec.targeted_cell(moved.id) == asked
    top = spec.realized_cell(asked, {"traffic.realized_pedestrians_per_sidewalk_100m": 61.0})
    assert top.value("pedestrians") == "heavy"  # above the last bucket: in the last
    # Counted there by the coverage table too, as an untargeted cell; the asked one says where its samples went.
    merged = {f"lead_vehicle_brakes/{moved.id}": {"proposals": 1, "accepted": 1, "rejected": 0,
                                                  "by_stage": Counter(), "by_reason": Counter()}}
    rows = coverage_table(merged, ["lead_vehicle_brakes"],
                          {"lead_vehicle_brakes": [{"vehicles_per_lane_km": 40.0, "pedestrians_per_sidewalk_100m": 5.0}]})
    (extra,) = [r for r in rows if r.get("untargeted")]
    assert (extra["cell"], extra["target"], extra["accepted"], extra["pedestrians"]) == (moved.id, 0, 1, "light")
    home = next(r for r in rows if r["cell"] == asked.id)
    assert home["dominant_rejection"].startswith("realized another traffic bucket")
    totals = coverage_totals(rows)
    assert totals["cells"] == len(base.cells) and totals["by_intent"]["lead_vehicle_brakes"]["accepted"] == 1
    assert totals["by_pedestrians"]["light"] == {"cells": 0, "accepted": 1, "target": 0}


def test_a_pedestrians_only_sample_lands_in_its_pedestrians_bucket(city):
    (m,) = generate(city.id, "lead_vehicle_brakes", 1, template=city,
                    traffic=TrafficSpec(pedestrians_per_sidewalk_100m=12.0)).manifests
    assert "traffic=" not in m.coverage_cell.id and "traffic" not in m.coverage_cell.dims
    # The realized density: the pedestrians placed over the map's sidewalk length, beside the request; its bucket
    # is the cell's.
    length, _ = map_capacity(make_context(city, "lead_vehicle_brakes"))["pedestrians_per_sidewalk_100m"]
    count = m.realized["traffic.pedestrians"]
    realized = m.realized["traffic.realized_pedestrians_per_sidewalk_100m"]
    assert count > 0 and realized == round(count * 100.0 / length, 4)
    assert m.realized["traffic.pedestrians_per_sidewalk_100m"] == 12.0
    assert 5.0 <= realized < 20.0  # asked 12: fewer placed around the scenario's actors, still moderate
    assert m.coverage_cell.id.endswith("|pedestrians=moderate") and m.coverage_cell.dims["pedestrians"] == "moderate"


def test_lane_slots_by_hand():
    assert _lane_slots(25.0, 3.5, 10.0) == 2  # 18 m free: at 0 and 10 m
    assert _lane_slots(27.0, 3.5, 10.0) == 3  # 20 m free: at 0, 10 and 20 m
    assert _lane_slots(6.0, 3.5, 10.0) == 0  # shorter than its margins


def test_a_density_beyond_the_map_is_one_line(city):
    ctx = make_context(city, "lead_vehicle_brakes")
    capacity = map_capacity(ctx)
    length, most = capacity["vehicles_per_lane_km"]
    assert length > 0 and 40.0 < most < 120.0  # the default suite's 40 fits, the global cap does not
    check_capacity(ctx, TrafficSpec(vehicles_per_lane_km=40.0, pedestrians_per_sidewalk_100m=25.0, cyclists_per_km=60.0))
    for key in ("vehicles_per_lane_km", "pedestrians_per_sidewalk_100m", "cyclists_per_km"):
        # Past the map's capacity (past the schema's global cap too for some: built unvalidated to reach the check).
        over = TrafficSpec.model_construct(**{**TrafficSpec().model_dump(), key: capacity[key][1] + 1.0})
        with pytest.raises(TrafficError) as exc:
            check_capacity(ctx, over)
        line = exc.value.one_line()
        assert "\n" not in line and f"traffic.{key}" in line and "city_crossing.yaml" in line


def test_the_cli_refuses_a_density_beyond_the_map_and_writes_nothing(tmp_path, capsys):
    from simready.cli import main

    out = tmp_path / "out"
    code = main(["scenario", "sample", "--template", "city_crossing", "--intent", "lead_vehicle_brakes", "--n", "1",
                 "--out", str(out), "--vehicles-per-lane-km", "110", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and not out.exists()
    assert len(err.splitlines()) == 1 and "traffic.vehicles_per_lane_km" in err and "beyond what city_crossing" in err


def test_a_suite_asking_beyond_the_map_is_refused_before_generation(tmp_path):
    from simready.common import paths
    from simready.scenario.suite import SuiteError, check_intents, load_suite

    path = tmp_path / "suite.yaml"
    path.write_text("suite_id: s\nbatches: 1\ntemplates:\n  city_crossing:\n    lead_vehicle_brakes: 1\n"
                    "traffic:\n  city_crossing:\n    lead_vehicle_brakes: {vehicles_per_lane_km: 110}\n")
    suite = load_suite(path)
    with pytest.raises(SuiteError) as exc:
        check_intents(suite, path, paths.TEMPLATES_DIR)
    assert str(path) in exc.value.one_line()
    assert exc.value.field == "traffic.city_crossing.lead_vehicle_brakes.vehicles_per_lane_km"


def test_a_sample_realized_below_its_asked_bucket_is_counted_there_and_replays(city):
    from simready.scenario.generator import replay

    # 5 per 100 m is the moderate bucket's edge: fewer are placed around the scenario's actors, so the sample is light.
    result = generate(city.id, "lead_vehicle_brakes", 1, template=city,
                      traffic=TrafficSpec(pedestrians_per_sidewalk_100m=5.0))
    (m,) = result.manifests
    assert m.realized["traffic.realized_pedestrians_per_sidewalk_100m"] < 5.0
    assert m.coverage_cell.id.endswith("|pedestrians=light")
    assert result.coverage.cells[m.coverage_cell.id].accepted == 1
    assert replay(m, template=city) == (True, "")
