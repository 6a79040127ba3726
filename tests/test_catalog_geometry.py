"""Procedural geometry, mass properties and the URDF as pybullet sees it."""

from __future__ import annotations

from pathlib import Path

import manifold3d
import numpy as np
import pybullet as p
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.catalog.catalog import load_catalog
from simready.catalog.contract import GeneratorSpec
from simready.catalog.meshio import mass_properties, obj_text, parse_obj, to_manifold
from simready.catalog.procedural import RecipeError, box, build
from simready.world.frames import transform_points
from simready.world.ontology import load_ontology
from tests.fixtures.catalog import VAN

VEHICLES = ["asset:delivery_van/white", "asset:sedan/grey", "asset:shuttle/standard"]


def _inertia_of_box(mass_kg: float, lo_m: np.ndarray, hi_m: np.ndarray) -> np.ndarray:
    """Inertia of a box measured the way the generator measures: through the OBJ text."""
    solid = box(lo_m, hi_m)
    return mass_properties(parse_obj(obj_text(solid.vertices, solid.faces)), mass_kg).inertia_kg_m2


def test_box_inertia_worked_numbers() -> None:
    """2 kg box, 1 m along x, 2 m along y, 3 m along z: Ixx = m(y² + z²)/12 = 2·13/12, etc."""
    inertia = _inertia_of_box(2.0, np.array([-0.5, -1.0, -1.5]), np.array([0.5, 1.0, 1.5]))
    np.testing.assert_allclose(np.diag(inertia), [13 / 6, 10 / 6, 5 / 6], rtol=1e-12)
    np.testing.assert_allclose(inertia - np.diag(np.diag(inertia)), 0.0, atol=1e-12)


_UM = 1e-6  # corners drawn on the file's 1 µm grid, so rounding does not move them


@settings(max_examples=30, deadline=None)
@given(
    st.floats(0.1, 5000.0),
    st.tuples(*[st.integers(50_000, 20_000_000)] * 3),
    st.tuples(*[st.integers(-10_000_000, 10_000_000)] * 3),
)
def test_box_inertia_formula_anywhere(mass: float, size_um: tuple[int, int, int], lo_um: tuple[int, int, int]) -> None:
    """About its own COM, a box's inertia is m(b² + c²)/12 … wherever the box sits."""
    lo, hi = np.array(lo_um) * _UM, (np.array(lo_um) + np.array(size_um)) * _UM
    a, b, c = hi - lo
    expected = mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    np.testing.assert_allclose(np.diag(_inertia_of_box(mass, lo, hi)), expected, rtol=1e-6)


def test_every_render_mesh_is_watertight_with_ontology_parts(generated_catalog: Path) -> None:
    cat, ont = load_catalog(generated_catalog), load_ontology()
    for asset_id, entry in cat.entries.items():
        render = cat.render_mesh(asset_id)
        assert render.trimesh().is_watertight, asset_id
        assert [g[0] for g in render.groups] == list(ont.families[entry.family].parts), asset_id
        assert all(piece.trimesh().is_convex for piece in cat.collision_meshes(asset_id)), asset_id


def test_space_under_the_chassis_is_open(generated_catalog: Path) -> None:
    """Between the wheels, under the body: nothing in the render mesh, nothing in the collider."""
    cat = load_catalog(generated_catalog)
    for asset_id in VEHICLES:
        params = cat.entry(asset_id).generator.params
        probe = manifold3d.Manifold.cube([0.4, 0.4, 0.05], center=True).translate([0.0, 0.0, params["ground_clearance"] / 2])
        render = to_manifold(cat.render_mesh(asset_id))
        assert (render ^ probe).volume() == 0.0, asset_id
        for piece in cat.collision_meshes(asset_id):
            assert (to_manifold(piece) ^ probe).volume() == 0.0, asset_id
        assert cat.entry(asset_id).render_bounds_m[0][2] == 0.0  # wheels stand on z = 0


def test_ground_conventions(generated_catalog: Path) -> None:
    cat = load_catalog(generated_catalog)
    z = lambda i: (cat.entry(i).render_bounds_m[0][2], cat.entry(i).render_bounds_m[1][2])  # noqa: E731
    assert z("asset:road_surface/tile_10x3p5") == (-0.1, 0.0)
    assert z("asset:road_surface/tile_10x10") == (-0.1, 0.0)
    assert z("asset:sidewalk/tile_10x2") == (0.0, 0.15)
    assert z("asset:curb/segment_10m") == (0.0, 0.15)
    assert z("asset:crosswalk_marking/zebra_3x7") == (0.0, 0.005)
    assert z("asset:pedestrian_adult/standard") == (0.0, 1.75)
    assert z("asset:pedestrian_child/standard") == (0.0, 1.2)
    zebra = cat.render_mesh("asset:crosswalk_marking/zebra_3x7")
    assert len(cat.collision_meshes("asset:crosswalk_marking/zebra_3x7")) == 7
    assert np.ptp(zebra.vertices[:, 0]) == 3.0 and np.ptp(zebra.vertices[:, 1]) == 7.0


def test_shuttle_mounts(generated_catalog: Path) -> None:
    cat = load_catalog(generated_catalog)
    cam = cat.mount("asset:shuttle/standard", "front_camera")
    np.testing.assert_allclose(transform_points(cam, [0.0, 0.0, 0.0]), [1.8, 0.0, 1.45])
    assert {"front_camera", "roof_lidar", "front_radar", "wheel_fl", "wheel_rr"} <= set(cat.entry("asset:shuttle/standard").mounts)
    np.testing.assert_allclose(cat.mount("asset:shuttle/standard", "wheel_fl")[:3, 3], [1.6, 0.9, 0.35])


def test_mass_properties_from_disk(generated_catalog: Path) -> None:
    """entry.json's numbers are those of the file re-read from disk."""
    cat = load_catalog(generated_catalog)
    entry = cat.entry(VAN)
    props = mass_properties(cat.render_mesh(VAN), entry.mass_kg)
    np.testing.assert_allclose(entry.inertia_kg_m2, props.inertia_kg_m2, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(entry.center_of_mass_m, props.center_of_mass_m, atol=1e-8)
    assert entry.render_volume_m3 == pytest.approx(props.volume_m3, rel=1e-11)
    assert entry.collision_volume_m3 == pytest.approx(entry.render_volume_m3, rel=1e-6)


def test_bad_recipe_names_its_field() -> None:
    with pytest.raises(RecipeError) as err:
        build(GeneratorSpec(kind="slab", params={"part": "slab", "length": 1, "width": 1, "z_min": 0}))
    assert err.value.field == "params.z_max"
    with pytest.raises(RecipeError, match="unknown generator kind"):
        build(GeneratorSpec(kind="teapot"))


@pytest.fixture
def bullet():
    client = p.connect(p.DIRECT)
    yield client
    p.disconnect(client)


def test_urdf_loads_in_pybullet_with_entry_mass_properties(generated_catalog: Path, bullet: int) -> None:
    cat = load_catalog(generated_catalog)
    for asset_id, entry in cat.entries.items():
        body = p.loadURDF(str(cat.urdf_path(asset_id)), flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=bullet)
        mass, friction, diagonal, com, _, restitution = p.getDynamicsInfo(body, -1, physicsClientId=bullet)[:6]
        assert mass == pytest.approx(entry.mass_kg), asset_id
        assert friction == pytest.approx(entry.friction) and restitution == pytest.approx(entry.restitution)
        np.testing.assert_allclose(com, entry.center_of_mass_m, atol=1e-9)
        inertia = np.asarray(entry.inertia_kg_m2)
        # Bullet stores the principal moments (it diagonalizes a tensor with products of inertia).
        np.testing.assert_allclose(sorted(diagonal), np.linalg.eigvalsh(inertia), rtol=1e-6, atol=1e-9)
        if not (inertia - np.diag(np.diag(inertia))).any():
            np.testing.assert_allclose(diagonal, np.diag(inertia), rtol=1e-9)
