"""The occluded pedestrian at a kerb (issue 24 item 4, docs/lane_graph.md "The kerbside rule"): on an imported street
with sidewalks and kerbs but no parking lane the van parks at the kerb edge of the outermost driving lane, the ego
passes it with the rule's width, the pedestrian steps out from the sidewalk behind it; the ego route is drawn from
the lane graph when the template's does not pass the chosen site; a street without sidewalks gets the feasibility
line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import Point

from simready.maps.xodr_import import import_opendrive
from simready.scenario.generator import generate, prepare
from simready.scenario.programs import PROGRAMS
from simready.scenario.programs.pedestrian.params import PedestrianParams
from simready.sim.run import run_simulation
from simready.testing import opendrive_maps as maps
from simready.world.affordances import (
    AFFORDANCES,
    KERB_GAP_M,
    PARKED_WIDTH_M,
    PASSABLE_WIDTH_M,
    parking_sites,
)
from simready.world.frames import footprint_corners
from simready.world.template import parse_template

INTENT = "pedestrian_emerges_behind_van"
W = maps.KERB["widths"]


@pytest.fixture(scope="module")
def kerb_street(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kerb")
    (folder / "kerb.xodr").write_bytes(maps.kerb_road())
    data = import_opendrive(folder / "kerb.xodr", "imported_kerb").data
    return parse_template(data, "imported_kerb.yaml")


@pytest.fixture(scope="module")
def samples(kerb_street):
    return generate(kerb_street.id, INTENT, 4, template=kerb_street)


def test_the_street_has_kerb_sites_and_no_parking(kerb_street) -> None:
    sites = parking_sites(kerb_street)
    assert [(s.lane, s.kind, s.s0_m, s.s1_m) for s in sites] == [
        ("road1_sec0_lane-1", "kerb", 0.0, maps.KERB["length"]), ("road1_sec0_lane1", "kerb", 0.0, maps.KERB["length"])]
    assert not AFFORDANCES["parking"][0](kerb_street) and AFFORDANCES["kerbside"][0](kerb_street)
    assert PROGRAMS[INTENT].feasibility(kerb_street) is None
    # The strip: KERB_GAP_M to KERB_GAP_M + PARKED_WIDTH_M in from the eastbound lane's kerb (y = -3.5 on this road).
    y = sorted({round(c[1], 4) for c in sites[0].outline})
    assert y == pytest.approx([-W[-1] + KERB_GAP_M, -W[-1] + KERB_GAP_M + PARKED_WIDTH_M])


def test_the_van_parks_at_the_kerb_and_the_pedestrian_comes_from_behind_it(kerb_street, samples) -> None:
    ctx, _ = prepare(kerb_street, INTENT)
    params = PedestrianParams()
    sites = {s.id: s for s in parking_sites(kerb_street)}
    assert len(samples.manifests) == 4
    ego_l, ego_w = ctx.footprints[kerb_street.ego.asset]
    for m in samples.manifests:
        r = m.realized
        site = sites[r["parking.site"]]
        assert site.kind == "kerb" and "parking.affordance" not in r
        van = next(a for a in m.actors if a.id == "van")
        ego = next(a for a in m.actors if a.id == "ego")
        ped = next(a for a in m.actors if a.kind == "pedestrian")
        van_l, van_w = ctx.footprints[van.asset_id]
        corners = footprint_corners(van.initial.pose.x, van.initial.pose.y, van.initial.pose.yaw, van_l / 2, van_w / 2)
        # Inside the kerb strip, on the driving lane it stands at the kerb of.
        assert all(site.shape.buffer(0.01).covers(Point(c)) for c in corners)
        assert all(kerb_street.region_by_id[site.lane].shape.buffer(0.01).covers(Point(c)) for c in corners)
        # The ego holds its offset left of its lane's centre: the van's inner side and the ego's right side are
        # at least the clearance apart; what is left of the carriageway beside the van is the rule's width.
        lane = kerb_street.lane_graph.lane(site.lane)
        _, t_ego = lane.project(ego.initial.pose.x, ego.initial.pose.y)
        _, t_van = lane.project(van.initial.pose.x, van.initial.pose.y)
        assert t_ego == pytest.approx(r["ego.offset_m"], abs=1e-3)
        assert (t_ego - ego_w / 2) - (t_van + van_w / 2) >= params.pass_clearance_m - 0.1
        carriageway = W[1] + W[-1]
        assert carriageway - (W[-1] / 2 + t_van + van_w / 2) >= PASSABLE_WIDTH_M
        assert ego.initial.lane_ref.lane in m.realized["ego.route"] and site.lane in m.realized["ego.route"]
        # The pedestrian waits on the sidewalk beside that kerb, hidden, and is revealed before the conflict: the
        # ladder's occlusion stage measured it (its thresholds are the intent's parameters).
        sidewalk = kerb_street.region_by_id[r["ped.sidewalk"]].shape
        assert sidewalk.buffer(0.05).contains(Point(ped.initial.pose.x, ped.initial.pose.y))
        assert sidewalk.distance(site.shape) <= KERB_GAP_M + 0.01
        assert r["occlusion.max_visible_before"] <= params.max_visible_before
        assert r["occlusion.frames_visible_after"] >= params.min_frames_after
        assert r["t_reveal_s"] < r["t_conflict_s"]


def test_the_route_is_drawn_when_the_templates_does_not_pass_the_site(kerb_street, samples) -> None:
    own = tuple(kerb_street.ego.route)
    kinds = set()
    for m in samples.manifests:
        site_lane = next(s.lane for s in parking_sites(kerb_street) if s.id == m.realized["parking.site"])
        source = m.realized["cause/ego.route"].split(" | ")[0]
        if site_lane in own:
            assert source == "template" and tuple(m.realized["ego.route"]) == own
        else:
            assert source == "route" and "route" in m.streams and site_lane in m.realized["ego.route"]
            assert m.realized["ego.start_s_m"] > 0
        kinds.add(source)
    assert kinds == {"template", "route"}
    again = generate(kerb_street.id, INTENT, 4, template=kerb_street)
    assert [m.realized for m in again.manifests] == [m.realized for m in samples.manifests]


def test_the_ego_passes_the_van_in_the_simulator(kerb_street, samples) -> None:
    ctx, _ = prepare(kerb_street, INTENT)
    m = samples.manifests[0]
    sim = run_simulation(m, kerb_street, backend="kinematic-v1")
    assert sim.issues == []
    df = sim.trace.df
    ego, van = df[df.actor_id == "ego"], df[df.actor_id == "van"]
    ego_w = ctx.footprints[kerb_street.ego.asset][1]
    van_w = ctx.footprints[next(a for a in m.actors if a.id == "van").asset_id][1]
    # The street runs along x: the ego keeps its lateral offset, clear of the van's side, the whole clip.
    gap = np.abs(ego["y"].to_numpy() - van["y"].to_numpy()[0]) - (ego_w + van_w) / 2
    assert gap.min() >= PedestrianParams().pass_clearance_m - 0.1
    assert math.hypot(ego["x"].iloc[-1] - ego["x"].iloc[0], ego["y"].iloc[-1] - ego["y"].iloc[0]) > 20.0


def test_a_street_without_sidewalks_gets_the_feasibility_line(tmp_path) -> None:
    (tmp_path / "bare.xodr").write_bytes(maps.kerb_road(sidewalks=False))
    template = parse_template(import_opendrive(tmp_path / "bare.xodr", "imported_bare").data, "imported_bare.yaml")
    assert [s.kind for s in parking_sites(template)] == []
    assert PROGRAMS[INTENT].feasibility(template) == (
        "no parking lane, parking region or passable kerb with a sidewalk beside a driving lane")


def test_the_simulators_heading_cache_tells_like_named_lanes_of_two_maps_apart(kerb_street, tmp_path) -> None:
    """Every imported map names its lanes ``road1_sec0_lane<id>``: the kerb street's lane is 120 m, the straight
    road's 100 m; each path gets the headings of its own vertices whichever was simulated first."""
    from simready.sim.core.reference_paths import chord_headings, lane_path

    (tmp_path / "straight.xodr").write_bytes(maps.straight_road())
    straight = parse_template(import_opendrive(tmp_path / "straight.xodr", "s").data, "s.yaml")
    for template in (straight, kerb_street, straight):
        graph = template.lane_graph
        path = lane_path(graph, ["road1_sec0_lane1"], {lane: i for i, lane in enumerate(graph.lanes)})
        assert len(chord_headings(path, 2.0)) == len(path.cum_s)


def test_the_ladder_checks_the_van_against_its_kerb_site(kerb_street) -> None:
    """The support stage keeps the van inside the site's strip; the semantics stage refuses a site the map lacks."""
    import dataclasses

    from simready.catalog.catalog import ensure_catalog
    from simready.scenario.generator import make_context
    from simready.scenario.geometry import stationary
    from simready.scenario.ladder import SemanticsStage
    from simready.scenario.programs import program
    from simready.scenario.static_checks import SupportStage
    from simready.scenario.streams import StreamSet

    ctx = make_context(kerb_street, INTENT, catalog=ensure_catalog())
    proposal = next(p for k in range(20) if not (p := program(INTENT).propose(
        ctx, ctx.coverage.cells[0], f"ik-ped-{k:06d}", k, StreamSet(f"test/{k}"))).defects)
    site = proposal.refs["sites"]["van"]
    assert site.kind == "kerb" and proposal.scene.bodies["van"].site == site
    assert SupportStage(ctx).check(proposal).ok and SemanticsStage(ctx).check(proposal).ok
    # On the same lane but across its centre: still on the road, no longer in the kerb strip.
    van = proposal.scene.bodies["van"]
    lane = kerb_street.lane_graph.lane(site.lane)
    s = site.s0_m + 20.0
    cx, cy = lane.point_at(s, 0.0)
    proposal.scene.bodies["van"] = dataclasses.replace(van, motion=stationary(cx, cy, lane.pose_at(s)[2], -1.0))
    proposal.scene.cache.clear()
    verdict = SupportStage(ctx).check(proposal)
    assert not verdict.ok and verdict.reason == "support.outside_region" and "kerb site" in verdict.detail
    proposal.refs["sites"]["van"] = dataclasses.replace(site, s1_m=site.s1_m - 1.0)
    verdict = SemanticsStage(ctx).check(proposal)
    assert not verdict.ok and verdict.reason == "semantics.site"
