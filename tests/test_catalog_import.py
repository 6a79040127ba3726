"""``simready catalog import`` (issue 16): conventions, identity, round trips and bad input.

Sources are real third-party files from ``pybullet_data`` (shipped in the pybullet wheel), or files that
another library (trimesh's glTF exporter, usd-core) wrote from them; nothing here is mocked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pybullet_data
import pygltflib
import pytest
import trimesh
from pxr import Gf, Usd, UsdGeom, Vt

from simready.catalog.importers.conventions import Declared, Flags, axes_rotation, resolve
from simready.cli import main
from simready.common.errors import CatalogError

PD = Path(pybullet_data.getDataPath())
SOCCERBALL = PD / "soccerball.obj"  # Blender export by Erwin Coumans; soccerball.urdf states it in metres (r 0.5)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["catalog", "import", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def entry_json(catalog: Path, family: str, variant: str) -> dict:
    return json.loads((catalog / "generated" / family / variant / "entry.json").read_text())


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def zup_to_gltf(vertices: np.ndarray) -> np.ndarray:
    """What a glTF exporter does to a z-up, x-forward mesh: y up, front towards +Z (the inverse rotation)."""
    return vertices @ axes_rotation("y", "-y")  # rows: R^T v


def write_glb(path: Path, named_meshes: list[tuple[str, trimesh.Trimesh]]) -> Path:
    """A glTF written by trimesh; a name ``parent/child`` becomes a child node under a parent node."""
    scene = trimesh.Scene()
    for name, mesh in named_meshes:
        parent, _, leaf = name.rpartition("/")
        if parent:
            scene.graph.update(frame_to=parent, frame_from=scene.graph.base_frame, matrix=np.eye(4))
        scene.add_geometry(mesh, node_name=leaf, geom_name=leaf, parent_node_name=parent or None)
    path.write_bytes(scene.export(file_type="glb"))
    return path


def soccerball_mesh() -> trimesh.Trimesh:
    return trimesh.load(SOCCERBALL, force="mesh", process=False)


# --- conventions ---------------------------------------------------------------


def test_y_up_source_converts_as_spec_says_and_gltf_front_becomes_x() -> None:
    r_up = axes_rotation("y", "x")
    assert np.array_equal(r_up @ [1, 2, 3], [1, -3, 2])  # SPEC §2: world = (x, -z, y)
    r = axes_rotation("y", "-y")
    assert np.array_equal(r @ [0, 0, 1], [1, 0, 0])  # glTF's front (+Z) is our forward (+x)
    assert np.array_equal(r @ [0, 1, 0], [0, 0, 1])  # glTF's up (+Y) is our up
    assert np.linalg.det(r) == 1.0


def test_flag_contradicting_the_file_is_refused_naming_both() -> None:
    gltf = Declared(meters_per_unit=1.0, up="y", forward="-y", by="the glTF 2.0 specification")
    with pytest.raises(CatalogError) as exc:
        resolve(gltf, Flags(units="centimeter"), "car.glb")
    assert exc.value.one_line() == "car.glb: --units: --units centimeter contradicts the file: the glTF 2.0 specification declares meter"
    with pytest.raises(CatalogError, match="--up z contradicts the file: .* declares up axis y"):
        resolve(gltf, Flags(up="z"), "car.glb")
    agreed = resolve(gltf, Flags(units="meter", up="y"), "car.glb")
    assert (agreed.units_from, agreed.up_from, agreed.forward_from) == ("file+flag", "file+flag", "file")


def test_a_file_without_units_needs_the_flag() -> None:
    with pytest.raises(CatalogError, match="declares no units; say which with --units"):
        resolve(Declared(), Flags(), "ball.obj")
    applied = resolve(Declared(), Flags(units="inch"), "ball.obj")
    assert applied.meters_per_unit == 0.0254 and (applied.up, applied.forward) == ("z", "x")
    assert (applied.up_from, applied.forward_from) == ("default", "default")


# --- real files through the command --------------------------------------------


def test_obj_in_metres_imports_certified_with_its_stated_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cat = tmp_path / "cat"
    rc, out, err = run(capsys, str(SOCCERBALL), "--id", "asset:ball/soccer", "--class", "road_object",
                       "--units", "meter", "--mass-kg", "0.43", "--license", "Zlib", "--out", str(cat))
    assert rc == 0, err
    e = entry_json(cat, "ball", "soccer")
    size = np.subtract(e["render_bounds_m"][1], e["render_bounds_m"][0])
    assert np.allclose(size, [1.0, 1.0, 1.0], atol=0.01)  # soccerball.urdf: collision sphere radius 0.5 m
    imp = e["import"]
    assert imp["units"] == {"declared": None, "applied": "meter", "decided_by": "flag"}
    assert imp["collider"]["origin"] == "decomposition" and imp["collider"]["settings"]["threshold"] == 0.05
    assert abs(imp["collider"]["volume_error"]) < 0.05
    assert np.allclose(np.asarray(imp["conversion"])[:3, :3], np.eye(3))
    assert (cat / "sources" / "ball__soccer" / "soccerball.obj").read_bytes() == SOCCERBALL.read_bytes()
    assert (cat / "sources" / "ball__soccer" / "soccerball.mtl").is_file()  # what the OBJ references comes along
    assert main(["catalog", "certify", str(cat / "generated")]) == 0
    assert "1/1 entries certified" in capsys.readouterr().out


@pytest.mark.parametrize("units", ["centimeter", "inch"])
def test_wrong_units_are_rejected_by_plausibility_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], units: str
) -> None:
    cat = tmp_path / "cat"
    rc, out, _ = run(capsys, str(SOCCERBALL), "--id", "asset:ball/soccer", "--class", "road_object",
                     "--units", units, "--mass-kg", "0.43", "--license", "Zlib", "--out", str(cat))
    assert rc == 1
    assert "NOT certified: plausibility: length (x) 0.0" in out and "outside class 'road_object' range [0.03, 3] m" in out
    assert "nothing written" in out
    assert sorted(tmp_path.iterdir()) == []  # no catalog folder, no staging folder left beside it


def test_gltf_written_by_trimesh_imports_to_the_same_geometry_hash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ball = soccerball_mesh()
    glb = write_glb(tmp_path / "soccerball.glb",
                    [("Icosphere.001", trimesh.Trimesh(zup_to_gltf(ball.vertices), ball.faces, process=False))])
    cat = tmp_path / "cat"
    common = ["--class", "road_object", "--mass-kg", "0.43", "--license", "Zlib", "--out", str(cat)]
    assert run(capsys, str(SOCCERBALL), "--id", "asset:ball/obj", "--units", "meter", *common)[0] == 0
    rc, out, err = run(capsys, str(glb), "--id", "asset:ball/glb", *common)
    assert rc == 0, err + out
    obj, gltf = entry_json(cat, "ball", "obj"), entry_json(cat, "ball", "glb")
    assert gltf["import"]["up_axis"] == {"declared": "y", "applied": "y", "decided_by": "file"}
    assert gltf["import"]["forward_axis"]["declared"] == "-y"
    assert gltf["import"]["geometry_sha256"] == obj["import"]["geometry_sha256"]
    assert gltf["render_geometry"]["sha256"] == obj["render_geometry"]["sha256"]  # same part name here too


@pytest.mark.slow
def test_reordered_nodes_keep_identifiers_and_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ball = soccerball_mesh()
    cube = trimesh.load(PD / "cube.obj", force="mesh", process=False)
    a = ("ball", trimesh.Trimesh(zup_to_gltf(ball.vertices) * 0.3, ball.faces, process=False))
    b = ("crate/lid", trimesh.Trimesh(zup_to_gltf(cube.vertices) * 0.4 + [0, 0.2, 0.5], cube.faces, process=False))
    cat = tmp_path / "cat"
    common = ["--class", "road_object", "--mass-kg", "3", "--license", "Zlib", "--out", str(cat)]
    assert run(capsys, str(write_glb(tmp_path / "ab.glb", [a, b])), "--id", "asset:pair/ab", *common)[0] == 0
    assert run(capsys, str(write_glb(tmp_path / "ba.glb", [b, a])), "--id", "asset:pair/ba", *common)[0] == 0
    ab, ba = entry_json(cat, "pair", "ab"), entry_json(cat, "pair", "ba")
    assert [p["name"] for p in ab["parts"]] == ["ball", "crate/lid"] == [p["name"] for p in ba["parts"]]
    for key in ("render_geometry", "collision_geometry", "inertia_kg_m2"):
        assert ab[key] == ba[key]
    assert ab["import"]["geometry_sha256"] == ba["import"]["geometry_sha256"]


def _two_meshes() -> list[tuple[str, trimesh.Trimesh]]:
    ball, cube = soccerball_mesh(), trimesh.load(PD / "cube.obj", force="mesh", process=False)
    return [("ball", trimesh.Trimesh(ball.vertices * 0.3, ball.faces, process=False)),
            ("lid", trimesh.Trimesh(cube.vertices * 0.4 + [0.2, 0, 0.5], cube.faces, process=False))]


def _write_obj(path: Path, meshes: list[tuple[str, trimesh.Trimesh]]) -> Path:
    scene = trimesh.Scene()
    for name, mesh in meshes:
        scene.add_geometry(mesh, node_name=name, geom_name=name)
    path.write_text(trimesh.exchange.obj.export_obj(scene, include_normals=False, include_texture=False))
    return path


def _write_unnamed_glb(path: Path, meshes: list[tuple[str, trimesh.Trimesh]]) -> Path:
    write_glb(path, [(n, trimesh.Trimesh(zup_to_gltf(m.vertices), m.faces, process=False)) for n, m in meshes])
    g = pygltflib.GLTF2().load(str(path))
    for item in [*g.nodes, *g.meshes]:
        item.name = None
    g.save(str(path))
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("writer", "names"), [(_write_obj, ["ball", "lid"]), (_write_unnamed_glb, None)],
                         ids=["obj_groups", "unnamed_gltf_nodes"])
def test_parts_are_named_by_source_names_or_content_never_load_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], writer, names: list[str] | None
) -> None:
    """OBJ ``o`` groups name parts; a glTF node without a name gets its geometry's hash, not its index."""
    meshes = _two_meshes()
    suffix = ".obj" if writer is _write_obj else ".glb"
    cat = tmp_path / "cat"
    common = ["--class", "road_object", "--mass-kg", "3", "--license", "Zlib", "--units", "meter", "--out", str(cat)]
    for variant, order in (("ab", meshes), ("ba", meshes[::-1])):
        rc, out, err = run(capsys, str(writer(tmp_path / f"{variant}{suffix}", order)), "--id", f"asset:pair/{variant}", *common)
        assert rc == 0, err + out
    ab, ba = entry_json(cat, "pair", "ab"), entry_json(cat, "pair", "ba")
    part_names = [p["name"] for p in ab["parts"]]
    assert part_names == [p["name"] for p in ba["parts"]]
    if names is not None:
        assert part_names == names
    else:
        assert all(n.startswith("mesh-") for n in part_names) and len(set(part_names)) == 2
    assert ab["render_geometry"] == ba["render_geometry"] and ab["collision_geometry"] == ba["collision_geometry"]


def test_usd_stage_in_centimetres_y_up_imports_to_the_same_geometry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ball = soccerball_mesh()
    stage = Usd.Stage.CreateNew(str(tmp_path / "ball.usda"))
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    mesh = UsdGeom.Mesh.Define(stage, "/World/Icosphere_001")
    y_up = ball.vertices @ axes_rotation("y", "x") * 100.0  # rows: R^T v, centimetres, front still +x
    mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(np.asarray(y_up, dtype=np.float32)))
    mesh.CreateFaceVertexCountsAttr([3] * len(ball.faces))
    mesh.CreateFaceVertexIndicesAttr(np.asarray(ball.faces).reshape(-1).tolist())
    mesh.CreateDisplayColorAttr([Gf.Vec3f(0.9, 0.9, 0.2)])
    stage.GetRootLayer().Save()
    cat = tmp_path / "cat"
    common = ["--class", "road_object", "--mass-kg", "0.43", "--license", "Zlib", "--out", str(cat)]
    assert run(capsys, str(SOCCERBALL), "--id", "asset:ball/obj", "--units", "meter", *common)[0] == 0
    rc, out, err = run(capsys, str(tmp_path / "ball.usda"), "--id", "asset:ball/usd", *common)
    assert rc == 0, err + out
    usd = entry_json(cat, "ball", "usd")
    assert usd["import"]["units"] == {"declared": "centimeter", "applied": "centimeter", "decided_by": "file"}
    assert [p["name"] for p in usd["parts"]] == ["World/Icosphere_001"]
    assert usd["appearance"]["parts"][0]["base_color_rgb"] == [0.9, 0.9, 0.2]  # primvars:displayColor
    assert usd["import"]["geometry_sha256"] == entry_json(cat, "ball", "obj")["import"]["geometry_sha256"]
    rc, _, err = run(capsys, str(tmp_path / "ball.usda"), "--id", "asset:ball/usd2", "--units", "meter", *common)
    assert rc == 1 and "--units meter contradicts the file: USD stage (metersPerUnit 0.01" in err


# --- bad input: one line, non-zero exit, nothing written ------------------------


def _truncated_glb(tmp: Path) -> Path:
    full = write_glb(tmp / "full.glb", [("ball", soccerball_mesh())]).read_bytes()
    (tmp / "cut.glb").write_bytes(full[: len(full) // 2])
    return tmp / "cut.glb"


def _unsupported_extension(tmp: Path) -> Path:
    shutil.copyfile(SOCCERBALL, tmp / "soccerball.fbx")
    return tmp / "soccerball.fbx"


def _draco_required(tmp: Path) -> Path:
    glb = write_glb(tmp / "draco.glb", [("ball", soccerball_mesh())])
    g = pygltflib.GLTF2().load(str(glb))
    g.extensionsUsed = g.extensionsRequired = ["KHR_draco_mesh_compression"]
    g.save(str(glb))
    return glb


def _urdf_without_its_mesh(tmp: Path) -> Path:
    shutil.copyfile(PD / "duck_vhacd.urdf", tmp / "duck_vhacd.urdf")  # duck.obj left behind
    return tmp / "duck_vhacd.urdf"


def _urdf_visual_without_geometry(tmp: Path) -> Path:
    text = (PD / "cube.urdf").read_text()
    start, end = text.index("<visual>"), text.index("</visual>")
    body = text[start:end]
    (tmp / "cube.urdf").write_text(text.replace(body, body[: body.index("<geometry>")] + "\n    "))
    shutil.copyfile(PD / "cube.obj", tmp / "cube.obj")
    return tmp / "cube.urdf"


def _truncated_collada(tmp: Path) -> Path:
    data = (PD / "racecar" / "meshes" / "chassis.dae").read_bytes()
    (tmp / "chassis.dae").write_bytes(data[: len(data) // 3])
    return tmp / "chassis.dae"


def _truncated_usdc(tmp: Path) -> Path:
    stage = Usd.Stage.CreateNew(str(tmp / "full.usdc"))
    mesh = UsdGeom.Mesh.Define(stage, "/Ball")
    ball = soccerball_mesh()
    mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(np.asarray(ball.vertices, dtype=np.float32)))
    stage.GetRootLayer().Save()
    data = (tmp / "full.usdc").read_bytes()
    (tmp / "cut.usdc").write_bytes(data[: len(data) // 2])
    return tmp / "cut.usdc"


BAD_INPUTS = {
    # builder: (extra flags, what the one line must say)
    "truncated_glb": (_truncated_glb, [], "cut.glb: buffers[0].byteLength: declares 232240 bytes, and its data has 115450"),
    "truncated_usdc": (_truncated_usdc, [], "cut.usdc: cannot be read as USD: Sdf crate file corrupt, possibly truncated"),
    "truncated_collada": (_truncated_collada, [], "chassis.dae: cannot be read as COLLADA"),
    "unsupported_extension": (_unsupported_extension, [], "unsupported extension '.fbx'"),
    "unsupported_gltf_extension": (_draco_required, [], "extensionsRequired: extension KHR_draco_mesh_compression is not supported"),
    "missing_referenced_mesh": (_urdf_without_its_mesh, [], "link[baseLink].visual[0].geometry.mesh.filename: 'duck.obj' is missing"),
    # A real third-party file: duck.dae names images/duckCM.png, which pybullet_data does not ship there.
    "missing_texture": (lambda tmp: PD / "duck.dae", [], "duck.dae: referenced file: 'images/duckCM.png' is missing"),
    "urdf_link_without_geometry": (_urdf_visual_without_geometry, [], "link[baseLink].visual[0].geometry: missing"),
    "contradictory_units": (lambda tmp: PD / "table" / "table.urdf", ["--units", "centimeter"],
                            "--units centimeter contradicts the file: URDF (ROS REP 103) declares meter"),
    # A real third-party file: cube.obj names cube.mtl, which pybullet_data does not ship.
    "missing_material_library": (lambda tmp: PD / "cube.obj", ["--units", "meter"], "cube.obj: referenced file: 'cube.mtl' is missing"),
    # A real open mesh (the RACECAR cone's base is open): its volume cannot be measured.
    "open_mesh": (lambda tmp: PD / "racecar" / "meshes" / "cone.dae", [], "render geometry is not closed"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_nonzero_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    build, flags, expected = BAD_INPUTS[case]
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    source = build(src_dir)
    cat = tmp_path / "cat"
    rc, out, err = run(capsys, str(source), "--id", "asset:bad/input", "--class", "road_object", "--mass-kg", "1",
                       "--license", "Zlib", "--out", str(cat), *flags)
    assert rc == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {source}"), err
    assert expected in lines[0]
    assert not cat.exists()


def test_obj_without_units_flag_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, str(SOCCERBALL), "--id", "asset:ball/x", "--class", "road_object", "--mass-kg", "1",
                       "--out", str(tmp_path / "cat"))
    assert rc == 1 and err.strip() == f"error: {SOCCERBALL}: --units: the file declares no units; say which with --units meter|centimeter|millimeter|inch|foot"
    assert not (tmp_path / "cat").exists()


def test_an_existing_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(SOCCERBALL), "--id", "asset:ball/soccer", "--class", "road_object", "--units", "meter",
            "--mass-kg", "0.43", "--license", "Zlib", "--out", str(tmp_path / "cat")]
    assert run(capsys, *args)[0] == 0
    before = {p: p.read_bytes() for p in files_under(tmp_path / "cat")}
    rc, _, err = run(capsys, *args)
    assert rc == 1 and "asset:ball/soccer is already in this catalog" in err
    assert {p: p.read_bytes() for p in files_under(tmp_path / "cat")} == before
