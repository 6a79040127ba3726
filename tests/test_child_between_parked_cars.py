"""A child running out between parked cars (issue 25 item 4, issue 24's mid-block gap): a program on the public
interface alone (data/programs/child_between_parked_cars.py) over the domain core's mid-block crossing — the
manifest's ``walk.via``, walked by the simulator and checked by the ladder — sampled on a shipped template with a
parking strip and kerbs, rolled out and branched brake / coast; the feasibility line where the map has no footways.
Through the whole DAG (observed, gated) it runs in tests/test_user_programs_dag.py (data/suites/programs.yaml)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from shapely.geometry import LineString, Point

from simready.common import paths
from simready.maps.xodr_import import import_opendrive
from simready.scenario.generator import generate, prepare, resolve_template
from simready.scenario.manifest import ScenarioManifest
from simready.scenario.manifest.loader import manifest_bytes
from simready.scenario.programs import load_programs, program
from simready.scenario.static_checks import ReachabilityStage
from simready.scenario.streams import StreamSet
from simready.sim.branch import run_branches
from simready.sim.core.reference_paths import split_walk_key, walk_path
from simready.testing import opendrive_maps as maps
from simready.validity.policy import CLASS_LIMITS
from simready.world.affordances import AFFORDANCES, kerb_gap_sites
from simready.world.frames import footprint_corners
from simready.world.template import parse_template

PROGRAM_FILE = paths.DATA_DIR / "programs" / "child_between_parked_cars.py"
RC = "residential_crosswalk_v3"


@pytest.fixture
def intent() -> str:
    """The program file, registered for this test (each test starts without the files an earlier one loaded)."""
    (name,) = load_programs([PROGRAM_FILE])
    return name


@pytest.fixture(scope="module")
def rc_samples():
    (name,) = load_programs([PROGRAM_FILE])
    template = resolve_template(RC)
    return template, generate(RC, name, 3, template=template)


@pytest.fixture(scope="module")
def close_calls():
    """Samples of the close cells (the child enters the ego's path 0.6-1.1 s ahead of it)."""
    (name,) = load_programs([PROGRAM_FILE])
    template = resolve_template(RC)
    return template, generate(RC, name, 3, template=template, cell="ttc_s=close", root="close")


def test_the_feasibility_line_where_the_street_has_no_footways(intent, tmp_path) -> None:
    (tmp_path / "bare.xodr").write_bytes(maps.kerb_road(sidewalks=False))
    bare = parse_template(import_opendrive(tmp_path / "bare.xodr", "imported_bare").data, "imported_bare.yaml")
    assert kerb_gap_sites(bare) == []
    assert program(intent).feasibility(bare) == AFFORDANCES["kerb_gap"][1]
    assert program(intent).feasibility(resolve_template(RC)) is None


def test_the_child_crosses_mid_block_through_the_gap_between_two_parked_cars(rc_samples) -> None:
    template, result = rc_samples
    assert len(result.manifests) == 3
    for m in result.manifests:
        child = next(a for a in m.actors if a.id == "child")
        assert child.asset_id == "asset:pedestrian_child/standard"
        assert child.walk is not None and len(child.walk.via) == 1
        rear = next(a for a in m.actors if a.id == "rear")
        front = next(a for a in m.actors if a.id == "front")
        assert rear.role == front.role == "parked"
        # The crossing line (start -> via) runs between the two parked footprints, touching neither, and crosses
        # the ego's lane: it leaves one footway and ends on the other.
        line = LineString([(child.initial.pose.x, child.initial.pose.y), (child.walk.via[0].x, child.walk.via[0].y)])
        for car in (rear, front):
            corners = footprint_corners(car.initial.pose.x, car.initial.pose.y, car.initial.pose.yaw,
                                        car.dims.l / 2, car.dims.w / 2)
            assert line.distance(LineString([*corners, corners[0]])) > 0.1
        sidewalks = {r.id: r.shape for r in template.regions if r.type == "sidewalk"}
        start = [i for i, s in sidewalks.items() if s.contains(line.interpolate(0.0))]
        end = [i for i, s in sidewalks.items() if s.contains(line.interpolate(1.0, normalized=True))]
        assert start and end and start != end
        # The gap is as drawn, between the bumpers.
        gap = math.dist((rear.initial.pose.x, rear.initial.pose.y), (front.initial.pose.x, front.initial.pose.y))
        assert gap - (rear.dims.l + front.dims.l) / 2 == pytest.approx(m.realized["gap.width_m"], abs=1e-3)
        # The decision is declared: the child emerging from between the cars.
        assert m.realized["t_decision_s"] == pytest.approx(m.realized["t_emerge_s"], abs=0.011)
        assert 0.6 <= m.realized["ttc_s"] <= 1.8
        assert m.realized["program_sha256"]


def test_a_manifest_without_via_dumps_as_before_and_one_with_via_round_trips(rc_samples) -> None:
    _, result = rc_samples
    m = result.manifests[0]
    data = json.loads(manifest_bytes(m))
    child = next(a for a in data["actors"] if a["id"] == "child")
    assert child["walk"]["via"] == [{"x": m.realized["child.via"][0], "y": m.realized["child.via"][1]}]
    assert ScenarioManifest.model_validate(data) == m
    child["walk"].pop("via")
    plain = ScenarioManifest.model_validate(data)
    assert "via" not in json.dumps(json.loads(manifest_bytes(plain))["actors"])


def test_the_simulator_walks_the_via_points_and_its_path_key_survives_json() -> None:
    nodes = {"a": (10.0, 0.0), "b": (20.0, 0.0)}
    p = walk_path((0.0, -5.0), ("a", "b"), nodes, via=((0.0, 0.0),))
    assert [tuple(pt) for pt in p.points[:1]] == [(0.0, -5.0)]
    assert p.key[:5] == ("walk", 0.0, -5.0, 0.0, 0.0) and p.key[5:] == ("a", "b")
    again = tuple(json.loads(json.dumps(list(p.key))))
    assert split_walk_key(again) == ((0.0, -5.0), ((0.0, 0.0),), ("a", "b"))
    # Without via points the key is what it always was.
    assert walk_path((0.0, -5.0), ("a", "b"), nodes).key == ("walk", 0.0, -5.0, "a", "b")


@pytest.mark.slow
def test_the_child_runs_across_the_road_and_the_branches_are_matched(rc_samples, close_calls) -> None:
    template, result = rc_samples
    coast_hits = {}
    for m in result.manifests + close_calls[1].manifests:
        branches = {b.label: b for b in run_branches(m, template, backend="kinematic-v1").branches}
        assert set(branches) == {"brake", "coast"}
        brake = branches["brake"]
        assert not brake.outcome["collision"], (m.sample_id, brake.outcome)
        # Coasting, the ego runs into the child exactly when it reaches the child's path before the child has
        # crossed its corridor (the ego's width and the child's): TTC below the child's time to clear it.
        ego, child_actor = m.actor("ego"), m.actor("child")
        t_clear = (ego.dims.w + max(child_actor.dims.l, child_actor.dims.w)) / m.realized["child.speed_mps"]
        hit = branches["coast"].outcome["collision_with"] == "child"
        if m.realized["ttc_s"] < t_clear - 0.1:
            assert hit, (m.sample_id, m.realized["ttc_s"], t_clear, branches["coast"].outcome)
            coast_hits[m.sample_id] = hit
        elif m.realized["ttc_s"] > t_clear + 0.1:
            assert not hit, (m.sample_id, m.realized["ttc_s"], t_clear, branches["coast"].outcome)
        # Braking, the ego lets the child cross: it walks the straight via leg and reaches the far footway.
        df = brake.trace.df
        child = df[df.actor_id == "child"]
        sx, sy = m.realized["child.spawn"]
        vx, vy = m.realized["child.via"]
        leg = LineString([(sx, sy), (vx, vy)])
        on_leg = [leg.distance(Point(x, y)) for x, y in zip(child["x"], child["y"])
                  if math.dist((x, y), (sx, sy)) < leg.length - 1.0]  # the corner onto the footway is rounded
        assert on_leg and max(on_leg) < 0.02
        # Physically plausible for a pedestrian the whole run (the gate's second differences of positions): it
        # slows to a walk before it turns along the far footway.
        x, y, t = child["x"].to_numpy(), child["y"].to_numpy(), child["t"].to_numpy()
        h = t[1:] - t[:-1]
        ax = 2 * ((x[2:] - x[1:-1]) / h[1:] - (x[1:-1] - x[:-2]) / h[:-1]) / (h[1:] + h[:-1])
        ay = 2 * ((y[2:] - y[1:-1]) / h[1:] - (y[1:-1] - y[:-2]) / h[:-1]) / (h[1:] + h[:-1])
        assert (ax ** 2 + ay ** 2).max() ** 0.5 < CLASS_LIMITS["pedestrian"].max_accel_mps2, m.sample_id
        sidewalks = [r.shape for r in template.regions if r.type == "sidewalk"]
        (near,) = [k for k, sh in enumerate(sidewalks) if sh.contains(Point(sx, sy))]
        end = Point(child["x"].iloc[-1], child["y"].iloc[-1])
        assert any(sh.contains(end) for k, sh in enumerate(sidewalks) if k != near)
    assert coast_hits  # the close cells have such samples


def test_the_ladder_refuses_a_crossing_through_a_building(intent, rc_samples) -> None:
    template, _ = rc_samples
    ctx, cells = prepare(template, intent)
    prop = program(intent).propose(ctx, cells[0], "x-000000", 0, StreamSet("t/x-000000"))
    k = 1
    while prop.defects:
        prop = program(intent).propose(ctx, cells[0], f"x-{k:06d}", k, StreamSet(f"t/x-{k:06d}"))
        k += 1
    stage = ReachabilityStage(ctx)
    assert stage.check(prop).ok
    body = prop.scene.bodies["child"]
    building = next(r for r in template.regions if r.type == "building").shape.centroid
    bad = replace(body, via=((building.x, building.y),) + body.via)
    prop.scene.bodies["child"] = bad
    verdict = stage.check(prop)
    assert not verdict.ok and verdict.reason == "reachability.no_crossing_path", verdict


def test_export_xosc_then_import_keeps_the_mid_block_crossing(rc_samples, tmp_path) -> None:
    from simready.maps.xosc_import import import_xosc
    from tests.fixtures.xosc import _export, assert_same_manifest

    template, result = rc_samples
    m = result.manifests[0]
    path = tmp_path / "m.json"
    path.write_bytes(manifest_bytes(m))
    back = import_xosc(_export(path, tmp_path / "x")).manifest
    assert_same_manifest(m, back, template)
    assert len(next(a for a in back.actors if a.id == "child").walk.via) == 1
