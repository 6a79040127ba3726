"""``simready template import-scene`` (issue 16 item 10): a multi-object scene becomes a template's static world.

Scenes are written by other libraries (trimesh's glTF exporter, usd-core) or as OBJ text, with node names that
carry the identities; nothing is mocked. Each import runs on a copy of the project's catalog, so the base
template's procedural assets are certified beside the imported ones.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import trimesh
from pxr import Usd, UsdGeom, Vt

from simready.common import paths
from simready.catalog.catalog import ensure_catalog, load_catalog
from simready.catalog.certify import certify_catalog
from simready.catalog.contract import load_contract
from simready.catalog.generate import generate_entry
from simready.cli import main
from simready.world.template import canonical_dict, load_template, template_hash
from simready.world.template_build import validate_template_file

BASE = paths.TEMPLATES_DIR / "two_lane_arterial.yaml"

#: The scene, in our frame (metres, z up): object -> [(part, size xyz, centre of its footprint, bottom z)].
SCENE = {
    "bench_01": [("bench_01", (2.0, 0.6, 0.8), (30.0, 8.0), 0.0)],
    "kiosk": [("body", (3.0, 2.5, 2.4), (45.0, -11.0), 0.0), ("roof", (3.4, 2.9, 0.2), (45.0, -11.0), 2.4)],
    "bollard.001": [("bollard.001", (0.25, 0.25, 1.0), (50.0, 5.0), 0.15)],
}
#: Where each instance lands (the object's footprint centre on its lowest point).
POSES = {"bench_01": (30.0, 8.0, 0.0), "kiosk": (45.0, -11.0, 0.0), "bollard.001": (50.0, 5.0, 0.15)}
CLASSES = ["--class", "street_furniture", "--class-of", "kiosk=building", "--density", "400"]


def _box(size: tuple[float, float, float], centre: tuple[float, float], bottom: float) -> trimesh.Trimesh:
    box = trimesh.creation.box(extents=size)
    box.apply_translation((centre[0], centre[1], bottom + size[2] / 2))
    return box


def write_gltf(path: Path, reverse: bool = False) -> Path:
    """A glTF (y up, as the format requires) with a node per object; the kiosk is a node with two mesh children."""
    to_y_up = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, -1, 0, 0], [0, 0, 0, 1]], dtype=float)  # ours -> glTF
    scene = trimesh.Scene()
    objects = sorted(SCENE.items(), reverse=reverse)
    for obj, parts in objects:
        if obj == "kiosk":
            scene.graph.update(frame_to=obj, frame_from=scene.graph.base_frame, matrix=np.eye(4))
            for part, size, centre, bottom in sorted(parts, reverse=reverse):
                mesh = _box(size, centre, bottom).apply_transform(to_y_up)
                scene.add_geometry(mesh, node_name=part, geom_name=f"g_{part}", parent_node_name=obj)
        else:
            (part, size, centre, bottom), = parts
            scene.add_geometry(_box(size, centre, bottom).apply_transform(to_y_up), node_name=obj, geom_name=f"g_{obj}")
    path.parent.mkdir(parents=True, exist_ok=True)
    scene.export(path)
    return path


def write_obj(path: Path, reverse: bool = False) -> Path:
    """An OBJ with one ``o`` group per object (the kiosk's two boxes in one group), z up, metres."""
    lines, base = [], 0
    for obj, parts in sorted(SCENE.items(), reverse=reverse):
        lines.append(f"o {obj}")
        for _, size, centre, bottom in parts:
            box = _box(size, centre, bottom)
            lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in box.vertices]
            lines += [f"f {a + 1 + base} {b + 1 + base} {c + 1 + base}" for a, b, c in box.faces]
            base += len(box.vertices)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_usd(path: Path, reverse: bool = False) -> Path:
    """A USD stage in centimetres, z up, objects under /World (kiosk parts under /World/kiosk)."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.Xform.Define(stage, "/World")
    for obj, parts in sorted(SCENE.items(), reverse=reverse):
        prim_name = obj.replace(".", "_")
        for part, size, centre, bottom in sorted(parts, reverse=reverse):
            where = f"/World/{prim_name}" if len(parts) == 1 else f"/World/{prim_name}/{part}"
            if len(parts) > 1:
                UsdGeom.Xform.Define(stage, f"/World/{prim_name}")
            box = _box(size, centre, bottom)
            mesh = UsdGeom.Mesh.Define(stage, where)
            mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy((box.vertices * 100).astype(np.float32)))
            mesh.CreateFaceVertexCountsAttr([3] * len(box.faces))
            mesh.CreateFaceVertexIndicesAttr(box.faces.reshape(-1).tolist())
    stage.GetRootLayer().Save()
    return path


@pytest.fixture(scope="module")
def project_catalog() -> Path:
    ensure_catalog()
    return paths.CATALOG_DIR


@pytest.fixture()
def catalog(tmp_path: Path, project_catalog: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(project_catalog, dest, ignore=shutil.ignore_patterns(".*"))
    return dest


def run(capsys: pytest.CaptureFixture[str], scene: Path, catalog: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    rc = main(["template", "import-scene", str(scene), "--template", str(BASE), "--id", out.stem, "--family",
               "plaza", "--license", "CC0-1.0", "--catalog", str(catalog), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def entry_files(catalog: Path) -> dict[str, bytes]:
    """Every file of the imported family; in entry.json the source file's own sha256 (which a reordered file's bytes
    change: provenance) and the hash of the contract that records it are left out, nothing else."""
    out = {}
    for rel, data in files_under(catalog / "generated" / "plaza").items():
        if rel.endswith("entry.json"):
            doc = json.loads(data)
            doc["import"].pop("source_sha256")
            doc["generator"]["params"].pop("source_sha256")
            doc.pop("contract_sha256")
            data = json.dumps(doc, sort_keys=True).encode()
        out[rel] = data
    return out


def test_gltf_scene_becomes_certified_static_instances(capsys, tmp_path, catalog) -> None:
    out = tmp_path / "templates" / "arterial_plaza.yaml"
    out.parent.mkdir()
    rc, stdout, err = run(capsys, write_gltf(tmp_path / "src" / "plaza.glb"), catalog, out, *CLASSES)
    assert rc == 0, err
    template = load_template(out)
    base = load_template(BASE)
    added = {i.name: i for i in template.instances if i.asset.startswith("asset:plaza/")}
    assert sorted(added) == sorted(SCENE)
    for name, (x, y, z) in POSES.items():
        inst = added[name]
        assert inst.asset == f"asset:plaza/{name}"
        assert (inst.pose.x, inst.pose.y, inst.pose.z, inst.pose.yaw_deg) == pytest.approx((x, y, z, 0.0), abs=1e-5)
        assert template.instance_id(name) == f"arterial_plaza/instance:{name}"
    # The base template's world is kept as it was, instance for instance.
    assert ({i.name: i.model_dump() for i in template.instances if i.name not in added}
            == {i.name: i.model_dump() for i in base.instances})
    mine, theirs = canonical_dict(template), canonical_dict(base)
    for key in ("id", "description", "instances"):
        mine.pop(key), theirs.pop(key)
    assert mine == theirs  # regions, lanes, ego, rig, … as the base has them

    # Every imported entry certifies in the catalog, with its parts named below its node and its true size.
    report = {c.id: c for c in certify_catalog(catalog / "generated").entries}
    assert all(c.passed for c in report.values())
    loaded = load_catalog(catalog / "generated")
    kiosk = loaded.entry("asset:plaza/kiosk")
    assert [p.name for p in kiosk.parts] == ["body", "roof"]
    assert kiosk.semantic_class == "building" and kiosk.body_type == "static"
    lo, hi = np.asarray(kiosk.render_bounds_m)
    assert hi - lo == pytest.approx([3.4, 2.9, 2.6], abs=1e-5)  # glTF holds float32
    assert lo[:2] == pytest.approx([-1.7, -1.45], abs=1e-5) and lo[2] == pytest.approx(0.0, abs=1e-9)
    bench = loaded.entry("asset:plaza/bench_01")
    assert bench.mass_kg == pytest.approx(400 * 2.0 * 0.6 * 0.8, rel=1e-6)
    assert [p.name for p in bench.parts] == ["bench_01"]
    # Validates as `simready template validate` would, against the copied catalog.
    certified = {c.id for c in report.values() if c.passed}
    build = validate_template_file(out, certified, loaded.contracts())
    assert build.valid, build.errors
    assert stdout.strip().splitlines()[-1] == f"arterial_plaza  {template_hash(template)}  ({out})"

    # Regeneration from the contract (the catalog's rebuild) repeats the object's import byte for byte.
    contract_path = catalog / "contracts" / "plaza__kiosk.yaml"
    contract, sha = load_contract(contract_path)
    assert contract.generator.params["scene_object"] == "kiosk"
    regen = tmp_path / "regen"
    generate_entry(regen, contract_path, contract, sha)
    assert files_under(regen / "plaza" / "kiosk") == files_under(catalog / "generated" / "plaza" / "kiosk")


@pytest.mark.slow
@pytest.mark.parametrize("writer", [write_gltf, write_obj, write_usd], ids=["gltf", "obj", "usd"])
def test_reordered_nodes_change_nothing_downstream(capsys, tmp_path, project_catalog, writer) -> None:
    results = []
    for reverse in (False, True):
        root = tmp_path / ("reversed" if reverse else "forward")
        catalog = root / "catalog"
        shutil.copytree(project_catalog, catalog, ignore=shutil.ignore_patterns(".*"))
        scene = writer(root / "src" / f"plaza{'.glb' if writer is write_gltf else '.obj' if writer is write_obj else '.usda'}",
                       reverse)
        out = root / "arterial_plaza.yaml"
        extra = ["--units", "meter"] if writer is write_obj else []
        rc, _, err = run(capsys, scene, catalog, out, *CLASSES, *extra)
        assert rc == 0, err
        results.append((scene.read_bytes(), template_hash(load_template(out)), entry_files(catalog),
                        [i.model_dump() for i in load_template(out).instances]))
    (src_a, hash_a, files_a, inst_a), (src_b, hash_b, files_b, inst_b) = results
    assert src_a != src_b  # the two files list their nodes in other orders
    assert hash_a == hash_b
    assert inst_a == inst_b
    assert files_a == files_b
    names = {i["name"] for i in inst_a if i["asset"].startswith("asset:plaza/")}
    # USD prim names cannot hold "."; the USD scene names that node bollard_001.
    assert names == ({n.replace(".", "_") for n in SCENE} if writer is write_usd else set(SCENE))


def test_units_and_axes_are_converted_and_placement_applies(capsys, tmp_path, project_catalog) -> None:
    """The same scene in glTF (metres, y up) and USD (centimetres, z up) lands at the same poses; --at turns it."""
    poses = {}
    for name, writer in (("gltf", write_gltf), ("usd", write_usd)):
        catalog = tmp_path / name / "catalog"
        shutil.copytree(project_catalog, catalog, ignore=shutil.ignore_patterns(".*"))
        scene = writer(tmp_path / name / ("plaza.glb" if name == "gltf" else "plaza.usda"))
        out = tmp_path / name / "arterial_plaza.yaml"
        rc, _, err = run(capsys, scene, catalog, out, *CLASSES, "--at", "100,2,0.5,90")
        assert rc == 0, err
        poses[name] = {i.name.replace(".", "_"): i.pose for i in load_template(out).instances
                       if i.asset.startswith("asset:plaza/")}
    assert poses["gltf"] == poses["usd"]
    for name, (x, y, z) in POSES.items():
        pose = poses["gltf"][name.replace(".", "_")]
        # T_world_scene = (100, 2, 0.5) with 90° yaw: scene (x, y, z) -> world (100 - y, 2 + x, 0.5 + z).
        assert (pose.x, pose.y, pose.z, pose.yaw_deg) == pytest.approx((100 - y, 2 + x, 0.5 + z, 90.0), abs=1e-5)


def test_root_names_the_node_whose_children_are_the_objects(capsys, tmp_path, catalog) -> None:
    out = tmp_path / "arterial_kiosk.yaml"
    rc, _, err = run(capsys, write_gltf(tmp_path / "src" / "plaza.glb"), catalog, out, "--root", "kiosk",
                     "--class", "street_furniture", "--class-of", "body=building", "--density", "400")
    assert rc == 0, err
    added = {i.name: i.pose for i in load_template(out).instances if i.asset.startswith("asset:plaza/")}
    assert sorted(added) == ["body", "roof"]
    assert (added["body"].x, added["body"].y, added["body"].z) == pytest.approx((45.0, -11.0, 0.0), abs=1e-5)
    assert (added["roof"].x, added["roof"].y, added["roof"].z) == pytest.approx((45.0, -11.0, 2.4), abs=1e-5)
    contract, _ = load_contract(catalog / "contracts" / "plaza__roof.yaml")
    assert contract.generator.params["scene_object"] == "kiosk/roof"


def test_an_open_ground_plane_is_refused_unless_excluded(capsys, tmp_path, catalog) -> None:
    scene = write_obj(tmp_path / "src" / "plaza.obj")
    n = sum(1 for line in scene.read_text().splitlines() if line.startswith("v "))
    scene.write_text(scene.read_text() + "o ground\nv 0 -20 0\nv 100 -20 0\nv 100 20 0\nv 0 20 0\n"
                     f"f {n + 1} {n + 2} {n + 3}\nf {n + 1} {n + 3} {n + 4}\n")
    out = tmp_path / "arterial_plaza.yaml"
    before = files_under(catalog)
    rc, _, err = run(capsys, scene, catalog, out, *CLASSES, "--units", "meter")
    assert rc == 1 and "parts.ground" in err and "not closed" in err and err.count("\n") == 1
    assert files_under(catalog) == before and not out.exists()
    rc, _, err = run(capsys, scene, catalog, out, *CLASSES, "--units", "meter", "--exclude", "ground")
    assert rc == 0, err
    added = sorted(i.name for i in load_template(out).instances if i.asset.startswith("asset:plaza/"))
    assert added == sorted(SCENE)
    regen = tmp_path / "regen"  # the excluded object is no obstacle to regenerating the others from the scene
    contract_path = catalog / "contracts" / "plaza__kiosk.yaml"
    generate_entry(regen, contract_path, *load_contract(contract_path))
    assert files_under(regen / "plaza" / "kiosk") == files_under(catalog / "generated" / "plaza" / "kiosk")


@pytest.mark.parametrize(("extra", "field"), [
    (["--class", "car"], "--class: object 'bench_01': 'car' is not a static class"),
    (["--class", "street_furniture", "--class-of", "kiosk=building"], "is not certified: mass"),
    (CLASSES + ["--class-of", "fountain=building"], "--class-of: the scene has no object 'fountain'"),
    (CLASSES + ["--root", "nowhere"], "--root: no mesh below node 'nowhere'"),
    (CLASSES + ["--exclude", "bench_01", "--exclude", "kiosk", "--exclude", "bollard.001"], "--exclude: leaves no object"),
    (["--class-of", "kiosk=building"], "--class: object 'bench_01' has no class"),
])
def test_bad_input_is_one_line_and_writes_nothing(capsys, tmp_path, catalog, extra, field) -> None:
    scene = write_gltf(tmp_path / "src" / "plaza.glb")
    before = files_under(catalog)
    out = tmp_path / "arterial_plaza.yaml"
    rc, stdout, err = run(capsys, scene, catalog, out, *extra)
    assert rc == 1 and stdout == ""
    assert err.count("\n") == 1 and field in err, err
    assert files_under(catalog) == before
    assert not out.exists() and list(tmp_path.iterdir()) == [tmp_path / "catalog", tmp_path / "src"]


def test_name_clash_with_the_base_template_and_one_asset_files_are_refused(capsys, tmp_path, catalog) -> None:
    scene = tmp_path / "src" / "plaza.obj"
    write_obj(scene)
    scene.write_text(scene.read_text().replace("o bench_01", "o road_wb_3"))
    before = files_under(catalog)
    rc, _, err = run(capsys, scene, catalog, tmp_path / "arterial_plaza.yaml", *CLASSES, "--units", "meter")
    assert rc == 1 and "object 'road_wb_3' has the name of an instance of template two_lane_arterial" in err
    urdf = Path(__import__("pybullet_data").getDataPath()) / "cube.urdf"
    rc, _, err = run(capsys, urdf, catalog, tmp_path / "arterial_plaza.yaml", *CLASSES)
    assert rc == 1 and "is one asset, not a scene" in err
    assert files_under(catalog) == before and not (tmp_path / "arterial_plaza.yaml").exists()


def test_an_open_object_is_repaired_on_request(capsys, tmp_path, catalog) -> None:
    """A 1 × 1 × 0.5 m tray without its top (issue 30): refused with the --repair hint, then measured on its
    hole-filled solid, the repair recorded in its entry."""
    scene = write_obj(tmp_path / "src" / "plaza.obj")
    n = sum(1 for line in scene.read_text().splitlines() if line.startswith("v "))
    box = trimesh.creation.box(extents=(1.0, 1.0, 0.5))
    box.apply_translation((60.0, 0.0, 0.25))
    top = box.triangles_center[:, 2] > 0.49
    lines = ["o tray"] + [f"v {x:g} {y:g} {z:g}" for x, y, z in box.vertices]
    lines += [f"f {a + n + 1} {b + n + 1} {c + n + 1}" for a, b, c in box.faces[~top]]
    scene.write_text(scene.read_text() + "\n".join(lines) + "\n")
    out = tmp_path / "arterial_plaza.yaml"
    rc, _, err = run(capsys, scene, catalog, out, *CLASSES, "--units", "meter")
    assert rc == 1 and "parts.tray" in err and "rerun with --repair to measure a watertight solid" in err
    rc, _, err = run(capsys, scene, catalog, out, *CLASSES, "--units", "meter", "--repair")
    assert rc == 0, err
    entry = json.loads((catalog / "generated" / "plaza" / "tray" / "entry.json").read_text())
    assert entry["volume_geometry"]["file"] == "volume.obj" and entry["render_volume_m3"] == pytest.approx(0.5)
    assert [r["what"] for r in entry["import"]["repairs"]] == ["watertight solid"]
    assert entry["mass_kg"] == pytest.approx(400 * 0.5)
