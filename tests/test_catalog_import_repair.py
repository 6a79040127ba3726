"""``simready catalog import --repair`` (issue 30): one crafted file per quirk, imported with and without it.

Without ``--repair`` each quirk is a refusal whose one line says "rerun with --repair to …"; with it the entry
certifies, the repair is in entry.json's ``import.repairs`` (what, where, before → after), and the entry's mass
properties are within 2 % of the analytic values of the shape the file describes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simready.catalog.add import ImportRequest, import_asset
from simready.catalog.certify import certify_catalog
from simready.catalog.generate import generate_catalog
from simready.catalog.importers.assemble import COLLIDER_VOLUME_REL_TOL, ImportOptions
from simready.catalog.importers.closing import VOXELS, close
from simready.cli import main
from simready.common.errors import CatalogError

pytestmark = pytest.mark.slow

M, SIZE = 12.0, (0.6, 0.4, 0.4)  # a 12 kg crate, 0.6 × 0.4 × 0.4 m
REL = 0.02


def box_inertia(m: float, a: float, b: float, c: float) -> np.ndarray:
    return np.diag([m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12])


def crate_urdf(xyz: str = "0 0 0.2", size: str = "0.6 0.4 0.4", factor: float = 1.0, head: str = "",
               extra: str = "") -> str:
    i = np.diag(box_inertia(M, *SIZE)) * factor
    return f"""<?xml version="1.0"?>
<robot name="crate" xmlns:xacro="http://www.ros.org/wiki/xacro">{head}
  <link name="crate">
    <inertial><origin xyz="0 0 0.2"/><mass value="{M}"/>
      <inertia ixx="{i[0]}" ixy="0" ixz="0" iyy="{i[1]}" iyz="0" izz="{i[2]}"/></inertial>
    <visual><origin xyz="{xyz}"/><geometry><box size="{size}"/></geometry></visual>
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.6 0.4 0.4"/></geometry></collision>
  </link>{extra}
</robot>
"""


def imported(path: Path, tmp: Path, repair: bool, mass_kg: float | None = None, cls: str = "road_object",
             **options: object):
    req = ImportRequest(path, "asset:crate/x", cls, ImportOptions(repair=repair, **options),  # type: ignore[arg-type]
                        mass_kg=mass_kg, license="Zlib")
    return import_asset(req, tmp / ("fixed" if repair else "asis"))


def assert_box(result, m: float, size: tuple[float, float, float], centre_z: float) -> None:
    """Certified, and mass, centre of mass and inertia within 2 % of a solid box's."""
    assert result.certification.passed, result.certification.reasons
    e = result.entry
    assert e.mass_kg == pytest.approx(m)
    expected = box_inertia(m, *size)
    assert np.linalg.norm(np.asarray(e.inertia_kg_m2) - expected) <= REL * np.linalg.norm(expected)
    assert np.allclose(e.center_of_mass_m, [0, 0, centre_z], atol=REL * max(size))


def repairs(result) -> list[dict]:
    return json.loads((result.entry_dir / "entry.json").read_text())["import"]["repairs"]


def test_urdf_commas_in_vectors(tmp_path: Path) -> None:
    (tmp_path / "crate.urdf").write_text(crate_urdf(xyz="0, 0,  0.2"))
    with pytest.raises(CatalogError, match=r"visual\[0\]\.origin\.xyz: '0, 0,  0.2' separates its numbers with "
                                           r"commas; rerun with --repair to read the commas as spaces"):
        imported(tmp_path / "crate.urdf", tmp_path, repair=False)
    result = imported(tmp_path / "crate.urdf", tmp_path, repair=True)
    assert_box(result, M, SIZE, 0.2)
    (r,) = repairs(result)
    assert r == {"what": "vector separators", "where": "link[crate].visual[0].origin.xyz", "before": "0, 0,  0.2",
                 "after": "0 0 0.2"}


COLLADA = """<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="1" name="meter"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="g" name="cube"><mesh>
    <source id="pos"><float_array id="pos-a" count="24">{positions}</float_array>
      <technique_common><accessor source="#pos-a" count="8" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
      </accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#pos"/></vertices>
    <triangles count="12"><input semantic="VERTEX" source="#v" offset="0"/><p>{triangles}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n" name="cube">
    <instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""
CUBE_TRIANGLES = [[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4], [1, 2, 6], [1, 6, 5],
                  [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]]


def cube_vertices(a: float, b: float, c: float) -> np.ndarray:
    return np.array([[0, 0, 0], [a, 0, 0], [a, b, 0], [0, b, 0], [0, 0, c], [a, 0, c], [a, b, c], [0, b, c]], float)


def test_collada_commas_in_number_lists(tmp_path: Path) -> None:
    positions = ", ".join(f"{x:g}" for x in cube_vertices(*SIZE).ravel())
    tris = " ".join(str(i) for t in CUBE_TRIANGLES for i in t)
    (tmp_path / "crate.dae").write_text(COLLADA.format(positions=positions, triangles=tris))
    with pytest.raises(CatalogError, match=r"<float_array>: 1 number lists separate their numbers with commas .*"
                                           r"rerun with --repair to read the commas as spaces"):
        imported(tmp_path / "crate.dae", tmp_path, repair=False, mass_kg=M)
    result = imported(tmp_path / "crate.dae", tmp_path, repair=True, mass_kg=M)
    assert_box(result, M, SIZE, 0.2)
    (r,) = repairs(result)
    assert r["what"] == "vector separators" and r["where"] == "<float_array>" and "," in r["before"]


def test_xacro_defaults_are_taken_and_other_substitutions_refused(tmp_path: Path) -> None:
    head = '\n  <xacro:arg name="crate_size" default="0.6 0.4 0.4"/>'
    (tmp_path / "crate.urdf").write_text(crate_urdf(xyz="$(optenv CRATE_XYZ 0 0 0.2)", size="$(arg crate_size)",
                                                    head=head))
    with pytest.raises(CatalogError, match=r"<origin>\.xyz: '\$\(optenv CRATE_XYZ 0 0 0\.2\)' is an unexpanded "
                                           r"xacro substitution; rerun with --repair to take its default"):
        imported(tmp_path / "crate.urdf", tmp_path, repair=False)
    result = imported(tmp_path / "crate.urdf", tmp_path, repair=True)
    assert_box(result, M, SIZE, 0.2)
    assert [(r["what"], r["before"], r["after"]) for r in repairs(result)] == [
        ("xacro substitution", "$(optenv CRATE_XYZ 0 0 0.2)", "0 0 0.2"),
        ("xacro substitution", "$(arg crate_size)", "0.6 0.4 0.4")]
    (tmp_path / "find.urdf").write_text(crate_urdf(xyz="$(find crate_description)/0 0 0.2"))
    with pytest.raises(CatalogError, match=r"xacro substitution '\$\(find crate_description\)' has no default to "
                                           r"take; expand the file with xacro first$"):
        imported(tmp_path / "find.urdf", tmp_path / "find", repair=True)


def test_links_without_geometry_are_kept_as_frames(tmp_path: Path) -> None:
    extra = """
  <link name="imu"><visual><geometry/></visual></link>
  <joint name="imu_joint" type="fixed"><parent link="crate"/><child link="imu"/>
    <origin xyz="0.1 0 0.45" rpy="0 0 1.5707963267948966"/></joint>"""
    (tmp_path / "crate.urdf").write_text(crate_urdf(extra=extra))
    with pytest.raises(CatalogError, match=r"link\[imu\]\.visual\[0\]\.geometry: missing: every <visual> needs a "
                                           r"geometry; rerun with --repair to drop the <visual> and keep its link as "
                                           r"a frame"):
        imported(tmp_path / "crate.urdf", tmp_path, repair=False)
    result = imported(tmp_path / "crate.urdf", tmp_path, repair=True)
    assert_box(result, M, SIZE, 0.2)
    assert [p.name for p in result.entry.parts] == ["crate"]
    frame = result.entry.mounts["frame_imu"]
    assert np.allclose(frame.translation_m, [0.1, 0, 0.45]) and np.allclose(frame.rpy_deg, [0, 0, 90])
    assert [r["what"] for r in repairs(result)] == ["element without geometry", "frame"]


def test_placeholder_inertia_replaced_by_the_geometrys(tmp_path: Path) -> None:
    (tmp_path / "crate.urdf").write_text(crate_urdf(factor=1e4))  # kg·cm² written as kg·m²
    result = imported(tmp_path / "crate.urdf", tmp_path, repair=False)
    assert not result.published
    (reason,) = result.certification.reasons
    assert reason.code == "source_inertia" and reason.message.endswith(
        "rerun the import with --repair to use the geometry's mass properties")
    result = imported(tmp_path / "crate.urdf", tmp_path, repair=True)
    assert_box(result, M, SIZE, 0.2)
    (r,) = repairs(result)
    assert r["what"] == "source inertia" and r["where"] == "inertial" and "[3200.0, 5200.0, 5200.0]" in r["before"]
    assert result.entry.import_ is not None and result.entry.import_.source_inertial is None


def test_mass_kg_overrides_the_files_mass(tmp_path: Path) -> None:
    (tmp_path / "crate.urdf").write_text(crate_urdf())
    with pytest.raises(CatalogError, match=r"--mass-kg 20 contradicts the file: its <inertial> masses add up to 12 "
                                           r"kg; rerun with --repair to let --mass-kg override it"):
        imported(tmp_path / "crate.urdf", tmp_path, repair=False, mass_kg=20.0)
    result = imported(tmp_path / "crate.urdf", tmp_path, repair=True, mass_kg=20.0)
    assert_box(result, 20.0, SIZE, 0.2)
    (r,) = repairs(result)
    assert r["what"] == "source mass" and r["before"].startswith("12 kg") and r["after"].startswith("--mass-kg 20 kg")


def write_obj_box(path: Path, size: tuple[float, float, float], drop: tuple[int, ...] = (), mtl: str = "") -> None:
    v = cube_vertices(*size)
    faces = [t for i, t in enumerate(CUBE_TRIANGLES) if i not in drop]
    lines = ([f"mtllib {mtl}", "usemtl crate"] if mtl else []) + ["o crate"]
    lines += [f"v {x:g} {y:g} {z:g}" for x, y, z in v] + ["vt 0 0", "vt 1 0", "vt 1 1"]
    lines += [f"f {a + 1}/1 {b + 1}/2 {c + 1}/3" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def test_missing_texture_draws_the_materials_base_colour(tmp_path: Path) -> None:
    (tmp_path / "crate.mtl").write_text("newmtl crate\nKd 0.8 0.2 0.1\nmap_Kd textures/crate_albedo.png\n")
    write_obj_box(tmp_path / "crate.obj", SIZE, mtl="crate.mtl")
    with pytest.raises(CatalogError, match=r"referenced file: 'textures/crate_albedo.png' is missing .*; rerun with "
                                           r"--repair to draw its parts in their material's base colour"):
        imported(tmp_path / "crate.obj", tmp_path, repair=False, mass_kg=M, units="meter")
    result = imported(tmp_path / "crate.obj", tmp_path, repair=True, mass_kg=M, units="meter")
    assert_box(result, M, SIZE, 0.2)
    (r,) = repairs(result)
    assert r["what"] == "missing texture" and r["before"] == "textures/crate_albedo.png"
    look = result.entry.appearance
    assert look is not None and look.parts[0].texture is None
    assert np.allclose(look.parts[0].base_color_rgb, [0.8, 0.2, 0.1], atol=0.01)


def test_open_mesh_measured_on_a_watertight_solid(tmp_path: Path) -> None:
    """A 2 × 1 × 0.5 m box whose top (two triangles) is missing: the hole is closed where the surface stops."""
    size = (2.0, 1.0, 0.5)
    write_obj_box(tmp_path / "tray.obj", size, drop=(2, 3))
    with pytest.raises(CatalogError, match=r"parts\.crate: render geometry is not closed \(4 open edges\); the asset "
                                           r"contract measures its volume; rerun with --repair to measure a "
                                           r"watertight solid made from it"):
        imported(tmp_path / "tray.obj", tmp_path, repair=False, mass_kg=10.0, units="meter",
                 cls="street_furniture")
    result = imported(tmp_path / "tray.obj", tmp_path, repair=True, mass_kg=10.0, units="meter",
                      cls="street_furniture")
    assert_box(result, 10.0, size, 0.25)
    e = result.entry
    assert sum(p.triangle_count for p in e.parts) == 10  # render.obj as drawn
    assert e.volume_geometry is not None and e.render_volume_m3 == pytest.approx(1.0, rel=REL)
    (r,) = repairs(result)
    assert r["what"] == "watertight solid" and r["where"] == "parts.crate" and r["after"].startswith("hole fill")
    assert "volume error" in r["after"]
    # The repair is recorded in the contract: the catalog regenerates byte for byte, and certifies.
    cat = tmp_path / "fixed"
    before = {p: p.read_bytes() for p in sorted((cat / "generated").rglob("*")) if p.is_file()}
    generate_catalog(cat / "contracts", cat / "generated")
    assert {p: p.read_bytes() for p in sorted((cat / "generated").rglob("*")) if p.is_file()} == before
    assert certify_catalog(cat / "generated").all_passed


def test_non_manifold_surface_closed_by_voxels() -> None:
    """A box with a fin (an edge of three triangles): no hole fill and no shells (the fin is one open triangle);
    the voxel solid holds the box and overestimates it by about half a cell (2 m / 64) over its 7 m² surface, plus
    the fin's cells."""
    v = np.vstack([cube_vertices(2.0, 1.0, 0.5), [[1.0, 0.5, 1.5]]])
    faces = np.array([*CUBE_TRIANGLES, [4, 5, 8]])
    closed = close(v, faces)
    assert closed.method.startswith("voxel closing")
    pitch = 2.0 / VOXELS
    assert 1.0 < closed.volume_m3 < 1.0 + pitch * 7.0 + 0.05


def test_solids_glued_at_an_edge_are_split_into_shells() -> None:
    """Two unit cubes touching along one edge (shared by four triangles): each shell closed, their union 2 m³."""
    v = np.vstack([cube_vertices(1, 1, 1), cube_vertices(1, 1, 1) + [1, 1, 0]])
    faces = np.array([*CUBE_TRIANGLES, *(np.array(CUBE_TRIANGLES) + 8)])
    _, first, inverse = np.unique(v, axis=0, return_index=True, return_inverse=True)
    closed = close(v[first], inverse.reshape(-1)[faces])
    assert closed.method.startswith("shells") and closed.volume_m3 == pytest.approx(2.0, rel=1e-9)


def test_collider_decomposition_retried_until_within_tolerance(tmp_path: Path) -> None:
    """An L of two 1 × 0.5 × 0.5 m blocks; threshold 1 gives one convex hull (a third too much)."""
    a = cube_vertices(1.0, 0.5, 0.5)
    b = cube_vertices(0.5, 0.5, 0.5) + [0, 0, 0.5]
    lines = [f"v {x:g} {y:g} {z:g}" for x, y, z in np.vstack([a, b])] + ["o ell_base"]
    lines += [f"f {p + 1} {q + 1} {r + 1}" for p, q, r in CUBE_TRIANGLES] + ["o ell_top"]
    lines += [f"f {p + 9} {q + 9} {r + 9}" for p, q, r in CUBE_TRIANGLES]
    (tmp_path / "ell.obj").write_text("\n".join(lines) + "\n")
    result = imported(tmp_path / "ell.obj", tmp_path, repair=False, mass_kg=15.0, units="meter", threshold=1.0)
    assert not result.certification.passed
    assert any(r.code == "collider_mismatch" and r.message.endswith(
        "rerun the import with --repair to decompose again with tighter settings") for r in result.certification.reasons)
    result = imported(tmp_path / "ell.obj", tmp_path, repair=True, mass_kg=15.0, units="meter", threshold=1.0)
    assert result.certification.passed, result.certification.reasons
    retried = [r for r in repairs(result) if r["what"] == "decomposition retried"]
    assert retried and retried[0]["before"].startswith("threshold 1:") and retried[0]["after"] == "threshold 0.7, up to 64 pieces"
    col = result.entry.import_.collider  # type: ignore[union-attr]
    assert abs(col.volume_error or 0) <= COLLIDER_VOLUME_REL_TOL
    # 0.375 m³ of solid: the centre of mass of the L and its inertia about it, from the two blocks.
    e = result.entry
    com = (0.25 * np.array([0.5, 0.25, 0.25]) + 0.125 * np.array([0.25, 0.25, 0.75])) / 0.375
    lo = np.asarray(e.render_bounds_m[0])
    assert np.allclose(np.asarray(e.center_of_mass_m) - lo, com, atol=REL * 1.0)


def test_repair_tolerance_is_certifications() -> None:
    from simready.catalog.certification import policy

    assert COLLIDER_VOLUME_REL_TOL == policy.COLLIDER_VOLUME_REL_TOL


def test_cli_repair_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "crate.urdf").write_text(crate_urdf(xyz="0,0,0.2"))
    rc = main(["catalog", "import", str(tmp_path / "crate.urdf"), "--id", "asset:crate/x", "--class", "road_object",
               "--license", "Zlib", "--out", str(tmp_path / "cat"), "--repair"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "repaired vector separators at link[crate].visual[0].origin.xyz: 0,0,0.2 → 0 0 0.2" in out
    assert "certified" in out
