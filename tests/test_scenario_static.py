"""Static geometry stage: occlusion on hand-built geometry, support, non-penetration, reachability."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simready.catalog.catalog import ensure_catalog
from simready.scenario.generator import make_context, resolve_template
from simready.scenario.geometry import Box, CoarsePath, Motion, SpeedProfile, stationary
from simready.scenario.ladder import Body
from simready.scenario.programs import program
from simready.scenario.static_checks import (
    CameraView,
    NonPenetrationStage,
    OcclusionSpec,
    SupportStage,
    blocked_by_boxes,
    visible_fractions,
)
from simready.scenario.streams import StreamSet
from simready.world.frames import mount_transform

CAMERA = CameraView(mount_transform([1.8, 0.0, 1.45], [0, 0, 0]), math.radians(90), math.radians(60), 0.1, 200.0,
                    20.0, 0.0)


def _standing(actor, x, y, l=0.24, w=0.5, h=1.75, kind="pedestrian"):  # noqa: E741
    return Body(actor, kind, "agent", f"asset:{actor}/a", actor, l, w, h, stationary(x, y, 0.0, -1.0), ("sidewalk",))


def _scene(ped_xy, van_xy=(10.0, 0.0)):
    ego = Body("ego", "vehicle", "ego", "asset:shuttle/a", "shuttle", 4.6, 2.1, 2.5,
               Motion(CoarsePath.from_points([(0, 0), (100, 0)]), SpeedProfile.constant(-1.0, 0.0, 0.0)), ("drivable",))
    van = Body("van", "vehicle", "parked", "asset:van/a", "van", 5.9, 2.05, 2.6, stationary(*van_xy, 0.0, -1.0),
               ("parking",))
    return {"ego": ego, "van": van, "ped": _standing("ped", *ped_xy)}


def _spec():
    return OcclusionSpec("ped", "ego", CAMERA, ("van",), 1.0, 2.0, 0.1, 0.5, 1, 1, 1.0)


def test_pedestrian_right_behind_the_van_is_hidden() -> None:
    """Camera at (1.8, 0, 1.45); van 5.9 x 2.05 x 2.6 centred at x = 10; pedestrian at x = 14 on the axis."""
    vis = visible_fractions(_scene((14.0, 0.0)), _spec(), np.array([0.0, 0.5]), [])
    assert vis.tolist() == [0.0, 0.0]


def test_pedestrian_in_the_open_is_fully_visible() -> None:
    """Same pedestrian 6 m to the side of the van's shadow, well inside the 90 deg field of view."""
    vis = visible_fractions(_scene((14.0, 6.0)), _spec(), np.array([0.0]), [])
    assert vis.tolist() == [1.0]


def test_half_hidden_pedestrian_is_partly_visible() -> None:
    """The van's side face at y = -1.025 seen from the axis: a body straddling the shadow edge is part visible."""
    # The shadow edge through the van's near corner (7.05, -1.025) reaches y = -1.025 * 12.2 / 5.25 at x = 14.
    edge_y = -1.025 * (14.0 - 1.8) / (7.05 - 1.8)
    vis = visible_fractions(_scene((14.0, edge_y)), _spec(), np.array([0.0]), [])
    assert 0.2 < vis[0] < 0.8


def test_behind_the_camera_or_out_of_range_is_not_visible() -> None:
    assert visible_fractions(_scene((-10.0, 0.0), van_xy=(50, 20)), _spec(), np.array([0.0]), []).tolist() == [0.0]
    far = CameraView(CAMERA.T_body_mount, CAMERA.hfov_rad, CAMERA.vfov_rad, 0.1, 20.0, 20.0, 0.0)
    spec = OcclusionSpec("ped", "ego", far, ("van",), 1.0, 2.0, 0.1, 0.5, 1, 1, 1.0)
    assert visible_fractions(_scene((40.0, 0.0), van_xy=(50, 20)), spec, np.array([0.0]), []).tolist() == [0.0]


def test_a_ray_passing_over_a_low_box_is_not_blocked() -> None:
    """2.5D: a 1 m high box 4-6 m out, between an eye at 1.45 m and a target 10 m away.

    The ray to a head at 1.7 m is 1.55-1.6 m up over the box: clear. The ray to the feet (0.1 m) is
    0.91-0.64 m up there: blocked.
    """
    low = np.array([[5.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]])
    origin = np.array([[0.0, 0.0, 1.45]])
    head = np.array([[[10.0, 0.0, 1.7]]])
    feet = np.array([[[10.0, 0.0, 0.1]]])
    assert not blocked_by_boxes(origin, head, low)[0, 0]
    assert blocked_by_boxes(origin, feet, low)[0, 0]


def test_a_box_beyond_the_target_does_not_block() -> None:
    box = np.array([Box(20.0, 0.0, 0.0, 2.0, 2.0, 0.0, 3.0).as_row()])
    assert not blocked_by_boxes(np.array([[0.0, 0.0, 1.0]]), np.array([[[10.0, 0.0, 1.0]]]), box)[0, 0]


@pytest.fixture(scope="module")
def ctx():
    return make_context(resolve_template("residential_crosswalk_v3"), "pedestrian_emerges_behind_van",
                        catalog=ensure_catalog())


def _proposal(ctx):
    sample_id = "rc3-ped-000002"
    return program("pedestrian_emerges_behind_van").propose(ctx, ctx.coverage.cells[0], sample_id, 2,
                                                            StreamSet(f"test/{sample_id}"))


def _move(body, x, y, yaw=0.0):
    import dataclasses

    return dataclasses.replace(body, motion=stationary(x, y, yaw, -1.0))


def test_support_rejects_a_van_off_its_parking_strip(ctx) -> None:
    proposal = _proposal(ctx)
    assert SupportStage(ctx).check(proposal).ok
    proposal.scene.bodies["van"] = _move(proposal.scene.bodies["van"], 47.5, -4.0)
    proposal.scene.cache.clear()
    verdict = SupportStage(ctx).check(proposal)
    assert not verdict.ok and verdict.reason in ("support.off_surface", "support.outside_region")


def test_support_rejects_wheels_off_the_road(ctx) -> None:
    """Turned 90 degrees in its slot the van's footprint leaves the strip and its wheels the road."""
    proposal = _proposal(ctx)
    proposal.scene.bodies["van"] = _move(proposal.scene.bodies["van"], 47.5, -4.65, math.pi / 2)
    proposal.scene.cache.clear()
    verdict = SupportStage(ctx).check(proposal)
    assert not verdict.ok


def test_non_penetration_finds_overlapping_actors_and_static_instances(ctx) -> None:
    proposal = _proposal(ctx)
    assert NonPenetrationStage(ctx).check(proposal).ok
    ego = proposal.scene.bodies["ego"]
    proposal.scene.bodies["ego"] = _move(ego, *proposal.scene.bodies["van"].motion.pose(-1.0)[:2])
    proposal.scene.cache.clear()
    verdict = NonPenetrationStage(ctx).check(proposal)
    assert not verdict.ok and verdict.reason == "non_penetration.actors"
    proposal = _proposal(ctx)
    # A pedestrian inside the street-light pole at (40, -6.3).
    proposal.scene.bodies["ped"] = _move(proposal.scene.bodies["ped"], 40.0, -6.3)
    proposal.scene.cache.clear()
    verdict = NonPenetrationStage(ctx).check(proposal)
    assert not verdict.ok and verdict.reason == "non_penetration.static"


def test_hidden_stretch_of_a_path_matches_brute_force_ray_casting() -> None:
    """The analytic wedge test (used to keep the kerb hidden) agrees with casting a ray at every path point."""
    import shapely

    from simready.scenario.programs.pedestrian.shadow import last_hidden_s
    from simready.world.frames import footprint_corners

    rng = np.random.default_rng(7)
    path = CoarsePath.from_points([(0.0, 0.0), (40.0, 0.0), (60.0, 8.0)])
    s = np.linspace(0.0, path.length_m, 2001)
    x, y, _ = path.xy_yaw(s)
    for _ in range(40):
        corners = footprint_corners(rng.uniform(10, 50), rng.uniform(-6, -2), rng.uniform(-0.5, 0.5), 5.9 / 2, 2.05 / 2)
        eye = (float(rng.uniform(5, 60)), float(rng.uniform(-12, -7)))
        van = shapely.Polygon(corners)
        hidden = np.array([van.intersects(shapely.LineString([eye, (a, b)])) for a, b in zip(x, y)])
        expected = s[hidden].max() if hidden.any() else -math.inf
        got = last_hidden_s(path, eye, corners)
        assert got == pytest.approx(expected, abs=path.length_m / 2000 + 1e-6) or (
            expected == -math.inf and got == -math.inf)
