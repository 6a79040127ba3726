"""Worked physics, with the numbers computed by hand in the docstrings."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from simready.sim.core import geometry as geo
from simready.sim.backends.dynamic.chassis import principal_axes
from simready.sim.branch import run_branches
from simready.sim.engine import Engine
from simready.sim.core.scene import build_scene
from tests.fixtures.sim import catalog, ego_only, template


@pytest.mark.parametrize(
    ("friction", "expected_m"),
    [
        # v0 = 10 m/s, delay τ = 0.2 s, brake demand 6 m/s² (μ·g = 8.83 does not cap it):
        # d = v0·τ + v0²/(2b) = 2.0 + 100/12 = 10.333333 m
        (0.9, 2.0 + 100.0 / 12.0),
        # μ = 0.5 caps the deceleration at μ·g = 4.905 m/s²: d = 2.0 + 100/9.81 = 12.193680 m
        (0.5, 2.0 + 100.0 / 9.81),
    ],
)
def test_stopping_distance_after_actuation_delay(friction: float, expected_m: float) -> None:
    m = ego_only(speed=10.0, clip_s=6.0, friction=friction)
    result = run_branches(m, template(), at_s=1.0, actions=("brake",), backend="kinematic-v1", catalog=catalog())
    (branch,) = result.branches
    assert branch.outcome["stopping_distance_m"] == pytest.approx(expected_m, abs=1e-6)
    df = branch.trace.df
    ego = df[df.actor_id == "ego"]
    # During the delay the ego still cruises: 0.2 s after the decision it has covered exactly 2.0 m.
    x = dict(zip(np.round(ego.t, 6), ego.x))
    assert x[1.2] - x[1.0] == pytest.approx(2.0, abs=1e-9)
    assert ego.accel_mps2[(ego.t > 1.2 + 1e-9) & (ego.speed_mps > 0.5)].max() == pytest.approx(-min(6.0, friction * 9.81))


def test_box_inertia_by_hand() -> None:
    """A uniform 12 kg box, 1 × 2 × 3 m (x, y, z): I = m(b² + c²)/12 → Ixx = 12·13/12 = 13, Iyy = 10, Izz = 5 kg·m²."""
    client = p.connect(p.DIRECT)
    try:
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.5, 1.0, 1.5], physicsClientId=client)
        body = p.createMultiBody(12.0, shape, -1, [0, 0, 5], [0, 0, 0, 1], useMaximalCoordinates=True, physicsClientId=client)
        assert p.getDynamicsInfo(body, -1, physicsClientId=client)[2] == pytest.approx((13.0, 10.0, 5.0))
    finally:
        p.disconnect(client)
    # The same tensor seen from axes turned 30° about z has products of inertia; the principal
    # axes recover the moments in body order and the 30° rotation.
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    moments, quat = principal_axes(R @ np.diag([13.0, 10.0, 5.0]) @ R.T)
    assert moments == pytest.approx([13.0, 10.0, 5.0])
    assert quat == pytest.approx([0.0, 0.0, math.sin(math.radians(15)), math.cos(math.radians(15))])


def test_dynamic_ego_carries_catalog_mass_properties() -> None:
    scene = build_scene(ego_only(clip_s=1.0), template(), backend="dynamic-v1", catalog=catalog())
    engine = Engine(scene)
    try:
        b = engine.backend
        mass, _, inertia = b.world.call(p.getDynamicsInfo, b.ego_body, -1)[:3]
        entry = catalog().entry("asset:shuttle/standard")
        assert mass == entry.mass_kg
        assert inertia == pytest.approx(np.diag(entry.inertia_kg_m2))
        # PyBullet reports the centre-of-mass frame; the engine reports the body origin on the ground.
        com, _ = b.world.call(p.getBasePositionAndOrientation, b.ego_body)
        assert com[2] - engine.state.bodies.pos[0, 2] == pytest.approx(entry.center_of_mass_m[2])
    finally:
        engine.close()


def test_constant_speed_time_to_conflict() -> None:
    """Ego 4 × 2 m at x = 0 going +x at 10 m/s; a 0.5 m pedestrian footprint.

    Standing at x = 30 on the ego's line: overlap when 30 − 10τ = 2 + 0.25, τ = 2.775 s.
    Crossing from (30, −5) at 1.25 m/s (+y): x overlaps for τ ∈ [2.775, 3.225] s, y for
    |−5 + 1.25τ| ≤ 1.25, τ ∈ [3.0, 5.0] s; both first at τ = 3.0 s.
    """
    z = np.array(0.0)

    def ttc(ped_xy: tuple[float, float], ped_v: tuple[float, float]) -> float:
        return float(geo.swept_ttc(np.array([0.0, 0.0]), np.array([10.0, 0.0]), z, np.array(2.0), np.array(1.0),
                                   np.array(ped_xy), np.array(ped_v), z, np.array(0.25), np.array(0.25), 10.0))

    assert ttc((30.0, 0.0), (0.0, 0.0)) == pytest.approx(2.775)
    assert ttc((30.0, -5.0), (0.0, 1.25)) == pytest.approx(3.0)
    assert ttc((30.0, -5.0), (0.0, -1.25)) == math.inf
    assert ttc((1.0, 0.5), (0.0, 0.0)) == 0.0
    # Separation along the best axis: 30 − 2 − 0.25 = 27.75 m apart.
    rest = np.array([0.0, 0.0])
    _, sep = geo.ttc_and_separation(np.array([0.0, 0.0]), rest, z, np.array(2.0), np.array(1.0), np.array([30.0, 0.0]),
                                    rest, z, np.array(0.25), np.array(0.25), 10.0)
    assert float(sep) == pytest.approx(27.75)
