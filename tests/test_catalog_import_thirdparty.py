"""Third-party assets from ``pybullet_data`` through ``simready catalog import`` (issue 16).

Each file is imported with the conventions it really has; the certified sizes are checked against what its
authors state (a URDF's primitives and mesh scales) or what its geometry shows; what certification finds
wrong in them (placeholder inertias, a collider that leaves the table legs out) is asserted with its numbers.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pybullet_data
import pytest

from simready.catalog.add import ImportRequest, import_asset
from simready.catalog.catalog import ensure_catalog
from simready.catalog.certify import certify_catalog
from simready.catalog.generate import generate_catalog
from simready.catalog.importers.assemble import ImportOptions

PD = Path(pybullet_data.getDataPath())
pytestmark = pytest.mark.slow


def size_m(entry_bounds: tuple) -> np.ndarray:
    return np.subtract(entry_bounds[1], entry_bounds[0])


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.startswith(".")}


def test_table_urdf_freezes_its_mesh_scales_and_certifies_with_a_decomposed_collider(tmp_path: Path) -> None:
    """table.urdf: five visuals of one unit-cube OBJ with non-uniform scales (1.5 × 1 × 0.05 top, 0.1 × 0.1 × 0.58
    legs), mass 0 (PyBullet's fixed base), a box collider for the top only."""
    cat = tmp_path / "cat"
    req = ImportRequest(PD / "table" / "table.urdf", "asset:cafe_table/pybullet", "street_furniture",
                        ImportOptions(collider="decompose"), mass_kg=25.0, license="Zlib")
    result = import_asset(req, cat)
    assert result.published and result.certification.passed, result.certification.reasons
    e = result.entry
    assert np.allclose(size_m(e.render_bounds_m), [1.5, 1.0, 0.625], atol=1e-6)  # as the URDF states
    assert e.scale == (1.0, 1.0, 1.0) and e.body_type == "static" and e.friction == 1.0  # <lateral_friction>
    assert [p.name for p in e.parts] == ["baseLink"]
    assert e.import_ is not None and e.import_.source_inertial is None  # mass 0: nothing to check it against
    assert e.import_.collider.origin == "decomposition" and abs(e.import_.collider.volume_error or 1) < 0.05
    # The sources travel with the entry, and the catalog regenerates byte for byte from its contract.
    assert sorted(p.name for p in (cat / "sources" / "cafe_table__pybullet").rglob("*")) == ["table.mtl", "table.obj", "table.png", "table.urdf"]
    before = digests(cat / "generated")
    generate_catalog(cat / "contracts", cat / "generated")
    assert digests(cat / "generated") == before
    assert ensure_catalog(cat / "contracts", cat / "generated").entries.keys() == {"asset:cafe_table/pybullet"}
    assert certify_catalog(cat / "generated").all_passed


def test_table_urdf_own_collider_leaves_the_legs_out(tmp_path: Path) -> None:
    req = ImportRequest(PD / "table" / "table.urdf", "asset:cafe_table/pybullet", "street_furniture",
                        mass_kg=25.0, license="Zlib")
    result = import_asset(req, tmp_path / "cat")
    assert not result.published and not (tmp_path / "cat" / "contracts").exists()
    messages = [r.message for r in result.certification.reasons if r.code == "collider_mismatch"]
    assert "collider z-min face 0.575 m vs render 0.000 m (off 57.5 cm > 5 cm)" in messages
    assert any(m.startswith("collider leaves 0.023 m³ of the render volume uncovered") for m in messages)


@pytest.mark.parametrize(("urdf", "scale"), [("teddy_vhacd.urdf", 0.1), ("teddy_large.urdf", 3.0)])
def test_teddy_sizes_follow_the_mesh_scale_and_its_placeholder_inertia_is_caught(tmp_path: Path, urdf: str, scale: float) -> None:
    """Both teddies use teddy2_VHACD_CHs.obj (15 convex hulls, 0.761 × 0.932 × 0.627 units) as visual and
    collider, at <mesh scale> 0.1 and 3, with mass 0.1 kg and the placeholder inertia diag(1, 1, 1)."""
    req = ImportRequest(PD / urdf, f"asset:teddy/{urdf[:-5]}", "road_object", license="Zlib")
    result = import_asset(req, tmp_path / "cat", allow_uncertified=True)
    e = result.entry
    assert np.allclose(size_m(e.render_bounds_m), np.array([0.7607, 0.9321, 0.6273]) * scale, rtol=2e-3)
    assert e.import_ is not None and e.import_.collider.origin == "source" and e.import_.collider.pieces == 15
    assert e.mass_kg == 0.1  # the URDF's, no --mass-kg needed
    assert {r.code for r in result.certification.reasons} == {"source_inertia"}
    assert any("diagonal [1.0, 1.0, 1.0] vs [" in r.message for r in result.certification.reasons)
    # Written on request, and `catalog certify` says the same.
    (report,) = certify_catalog(tmp_path / "cat" / "generated").entries
    assert not report.passed and report.codes == {"source_inertia"}


def test_duck_urdf_placeholder_inertia_and_loose_vhacd_collider(tmp_path: Path) -> None:
    """duck_vhacd.urdf: duck.obj at scale 0.05 (a 8 cm duck), collider duck_vhacd.obj (5 V-HACD hulls)."""
    result = import_asset(ImportRequest(PD / "duck_vhacd.urdf", "asset:duck/urdf", "road_object", license="Zlib"),
                          tmp_path / "cat")
    assert not result.published
    assert np.allclose(size_m(result.entry.render_bounds_m), np.array([1.655, 1.540, 1.153]) * 0.05, atol=1e-4)
    codes = {r.code for r in result.certification.reasons}
    assert codes == {"source_inertia", "collider_mismatch"}  # the authors' hulls stick out 5.7 % beyond the duck


def test_collada_centimetres_y_up_are_read_from_the_file(tmp_path: Path) -> None:
    """duck.dae declares <unit meter="0.01"> and Y_UP; its texture is laid out where the file names it."""
    src = tmp_path / "src"
    (src / "images").mkdir(parents=True)
    shutil.copyfile(PD / "duck.dae", src / "duck.dae")
    shutil.copyfile(PD / "duckCM.png", src / "images" / "duckCM.png")
    result = import_asset(ImportRequest(src / "duck.dae", "asset:duck/dae", "road_object", mass_kg=3.0,
                                        license="Zlib"), tmp_path / "cat")
    assert result.certification.passed, result.certification.reasons
    rec = result.entry.import_
    assert rec is not None and rec.units.declared == "centimeter" and rec.up_axis.declared == "y"
    assert np.allclose(np.asarray(rec.conversion)[:3, :3], [[0.01, 0, 0], [0, 0, -0.01], [0, 0.01, 0]])
    # 165.5 × 154.0 × 115.3 cm in the file's (x, y up, z): 1.655 m long, 1.540 m tall here.
    assert np.allclose(size_m(result.entry.render_bounds_m), [1.655, 1.153, 1.540], atol=1e-3)
    assert (tmp_path / "cat" / "sources" / "duck__dae" / "images" / "duckCM.png").is_file()
    assert json.loads((result.entry_dir / "entry.json").read_text())["import"]["collider"]["pieces"] >= 2


BOX_URDF = """<?xml version="1.0"?>
<robot name="crate">
  <link name="crate">
    <inertial><origin xyz="0 0 0.2"/><mass value="12"/>
      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>
    <visual><origin xyz="0 0 0.2"/><geometry><box size="0.6 0.4 0.4"/></geometry></visual>
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.6 0.4 0.4"/></geometry></collision>
  </link>
</robot>
"""


@pytest.mark.parametrize(("factor", "passes"), [(1.0, True), (1e4, False)])
def test_urdf_inertial_is_checked_against_its_geometry(tmp_path: Path, factor: float, passes: bool) -> None:
    """A 12 kg 0.6 × 0.4 × 0.4 m crate: I = m(h² + d²)/12; the same numbers in kg·cm² are 10 000× off."""
    m, (a, b, c) = 12.0, (0.6, 0.4, 0.4)
    ixx, iyy, izz = (m * (b * b + c * c) / 12 * factor, m * (a * a + c * c) / 12 * factor, m * (a * a + b * b) / 12 * factor)
    (tmp_path / "crate.urdf").write_text(BOX_URDF.format(ixx=ixx, iyy=iyy, izz=izz))
    result = import_asset(ImportRequest(tmp_path / "crate.urdf", "asset:crate/box", "road_object", license="Zlib"),
                          tmp_path / "cat")
    assert result.certification.passed is passes, result.certification.reasons
    if not passes:
        (reason,) = result.certification.reasons
        assert reason.code == "source_inertia" and "diagonal [3200.0, 5200.0, 5200.0] vs [0.32, 0.52, 0.52]" in reason.message


@pytest.mark.parametrize(("urdf", "size", "parts"), [
    # Five 5 cm spheres on a chain of joints 0.5 m apart along y; the link masses (1 to 2.16 kg) and their
    # parallel-axis sum agree with the geometry within tolerance.
    ("pendulum5.urdf", [0.1, 2.1, 0.1], ["link0", "link1", "link2", "link3", "link4"]),
    # textured_sphere_smooth.obj at <mesh scale> 0.5: a 1 m, 10 kg ball with I = 2/5 m r² = 1 kg·m², as stated.
    ("sphere2.urdf", [1.0, 1.0, 1.0], ["baseLink"]),
])
def test_urdfs_whose_inertial_agrees_with_their_geometry_certify(tmp_path: Path, urdf: str, size: list[float],
                                                                  parts: list[str]) -> None:
    result = import_asset(ImportRequest(PD / urdf, "asset:thing/x", "road_object", license="Zlib"), tmp_path / "cat")
    assert result.certification.passed, result.certification.reasons
    e = result.entry
    assert [p.name for p in e.parts] == parts  # URDF links with visuals; the geometry-less "world" link is none
    assert np.allclose(size_m(e.render_bounds_m), size, atol=2e-3)
    assert e.import_ is not None and e.import_.source_inertial is not None
    assert e.mass_kg == pytest.approx(e.import_.source_inertial.mass_kg)
