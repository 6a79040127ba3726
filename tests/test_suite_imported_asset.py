"""An imported asset through the whole pipeline (issue 16 item 9), on a copy of ``data/``.

The suite variant: ``residential_crosswalk_v3 / pedestrian_emerges_behind_van`` with the parked occluder drawn from a
catalog whose only ``delivery_van`` is a van imported from a glTF (written by trimesh's exporter, y up, front +Z as
the format declares) by ``simready catalog import``, in the template's next version whose static world adds an OBJ
scene of street furniture (``simready template import-scene``). Dagster's ``materialize`` runs certified_assets, the template,
sampling, dynamic-v1 rollouts with the imported colliders and inertia, checkpoints and branches, sensors, truth and
the gate; the test checks that the van in every artifact is the imported one. The default suite, templates and
catalog are not touched.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow.parquet as pq
import pytest
import trimesh
import yaml
from PIL import Image

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.measurement import observations_and_truth
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import scenario_manifests
from simready.assets.simulation import checkpoints_and_branches, trajectories
from simready.assets.validity import reference_pools, validity_reports
from simready.assets.world import sensor_rigs, world_templates
from simready.catalog.catalog import ensure_catalog, load_catalog
from simready.catalog.generate import generate_catalog
from simready.checks.simulation import branches_share_parent_history, checkpoint_restore_reproduces, trajectories_accepted
from simready.cli import main
from simready.artifacts.layout import ArtifactLayout
from simready.artifacts.records import Legend, LegendEntry, ValidityRecord
from simready.resources import ArtifactStore, SourceData
from simready.sensors_hw.camera import decode_id_rgb, decode_semantic_rgb
from simready.world.template import load_template

pytestmark = pytest.mark.slow

RC = "residential_crosswalk_v3"
#: The suite's template: RC's next version, with a prebuilt street-furniture scene added to its static world by
#: ``template import-scene`` (same id: template partitions are the ids in data/templates, which stay as they are).
PLAZA = RC
VAN = "asset:delivery_van/imported_box"
#: The van in our body frame (x forward, y left, z up): part -> (size, centre).
VAN_PARTS = {
    "body": ((5.2, 2.0, 2.1), (0.0, 0.0, 1.45)),
    "wheel_fl": ((0.7, 0.25, 0.7), (1.7, 0.85, 0.35)),
    "wheel_fr": ((0.7, 0.25, 0.7), (1.7, -0.85, 0.35)),
    "wheel_rl": ((0.7, 0.25, 0.7), (-1.7, 0.85, 0.35)),
    "wheel_rr": ((0.7, 0.25, 0.7), (-1.7, -0.85, 0.35)),
}


def _write_scene(path: Path) -> Path:
    """An OBJ scene (metres, z up) of two objects: a bench at its origin and a bollard 3 m east of it."""
    lines, base = [], 0
    for name, size, centre in (("bench_01", (2.0, 0.6, 0.8), (0.0, 0.0)), ("bollard_01", (0.25, 0.25, 1.0), (3.0, -0.6))):
        box = trimesh.creation.box(extents=size)
        box.apply_translation((centre[0], centre[1], size[2] / 2))
        lines += [f"o {name}", *(f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in box.vertices),
                  *(f"f {a + 1 + base} {b + 1 + base} {c + 1 + base}" for a, b, c in box.faces)]
        base += len(box.vertices)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_van(path: Path) -> Path:
    """glTF axes: X left, Y up, Z front; ours → glTF is (x, y, z) → (y, z, x)."""
    to_gltf = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1]], dtype=float)
    scene = trimesh.Scene()
    for name, (size, centre) in VAN_PARTS.items():
        if name == "body":
            part = trimesh.creation.box(extents=size)
        else:
            part = trimesh.creation.cylinder(radius=size[0] / 2, height=size[1], sections=24)
            part.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
        part.apply_translation(centre)
        scene.add_geometry(part.apply_transform(to_gltf), node_name=name, geom_name=f"g_{name}")
    path.parent.mkdir(parents=True, exist_ok=True)
    scene.export(path)
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("imported")
    ensure_catalog()
    templates, catalog = tmp / "templates", tmp / "catalog"
    shutil.copytree(paths.TEMPLATES_DIR, templates)
    shutil.copytree(paths.CATALOG_CONTRACTS_DIR, catalog / "contracts")
    for procedural_van in (catalog / "contracts").glob("delivery_van__*.yaml"):
        procedural_van.unlink()  # the imported van is the only one the sampler can draw
    generate_catalog(catalog / "contracts", catalog / "generated")
    rc = main(["catalog", "import", str(_write_van(tmp / "src" / "van.glb")), "--id", VAN, "--class", "van",
               "--mass-kg", "2600", "--license", "CC0-1.0", "--out", str(catalog)])
    assert rc == 0
    # On the north sidewalk (top at z 0.15), east of the crosswalk, in view of the ego's camera.
    base = tmp / "base" / f"{RC}.yaml"
    base.parent.mkdir()
    (templates / f"{RC}.yaml").rename(base)
    rc = main(["template", "import-scene", str(_write_scene(tmp / "src" / "furniture.obj")), "--template",
               str(base), "--id", PLAZA, "--family", "furniture", "--units", "meter",
               "--class", "street_furniture", "--density", "600", "--license", "CC0-1.0", "--at", "85,5.2,0.15,0",
               "--catalog", str(catalog), "--out", str(templates / f"{PLAZA}.yaml")])
    assert rc == 0
    suite = tmp / "suite.yaml"
    suite.write_text(yaml.safe_dump({"suite_id": "imported", "batches": 1, "reference_per_intent": 2, "templates": {
        PLAZA: {"pedestrian_emerges_behind_van": 1}},
        "observation": {"pre_s": 0.2, "post_s": 0.3, "set": ["camera.width_px=320", "camera.height_px=180",
                                                             "lidar.azimuth_steps=256"], "video": False}}))
    resources = {"store": ArtifactStore(root=str(tmp / "artifacts")),
                 "source": SourceData(templates_dir=str(templates), suite_file=str(suite),
                                      catalog_contracts_dir=str(catalog / "contracts"),
                                      catalog_generated_dir=str(catalog / "generated"))}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    assert dg.materialize([certified_assets], instance=instance, resources=resources).success
    assert dg.materialize([world_templates, sensor_rigs, reference_pools], partition_key=PLAZA, instance=instance,
                          resources=resources).success
    key = dg.MultiPartitionKey({"template": PLAZA, "batch": "b0000"})
    result = dg.materialize(
        [scenario_manifests, trajectories, checkpoints_and_branches, observations_and_truth, validity_reports,
         trajectories_accepted, checkpoint_restore_reproduces, branches_share_parent_history],
        partition_key=key, instance=instance, resources=resources,
        selection=[scenario_manifests, trajectories, checkpoints_and_branches, observations_and_truth,
                   validity_reports])
    return tmp, catalog, result


def _pixels(camera: Path, entity: LegendEntry) -> tuple[int, int]:
    """Pixels of ``entity`` in every id image of the camera, and how many of them its class has in the semantic one."""
    hits = classed = 0
    for frame in sorted(camera.glob("*.id.png")):
        ids = decode_id_rgb(np.asarray(Image.open(frame).convert("RGB")))
        sem = decode_semantic_rgb(np.asarray(Image.open(str(frame).replace(".id.png", ".semantic.png")).convert("RGB")))
        hits += int((ids == entity.compact_id).sum())
        classed += int(((ids == entity.compact_id) & (sem == entity.class_id)).sum())
    return hits, classed


def test_imported_van_is_the_occluder_through_the_whole_pipeline(run) -> None:
    tmp, catalog, result = run
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"trajectories_accepted": True, "checkpoint_restore_reproduces": True,
                      "branches_share_parent_history": True}
    entry = load_catalog(catalog / "generated").entry(VAN)
    assert entry.import_ is not None and entry.import_.format.startswith("glTF")
    lo, hi = np.asarray(entry.render_bounds_m)
    assert hi - lo == pytest.approx([5.2, 2.0, 2.5], abs=1e-5)  # length along x: the front was turned to +x

    sample = ArtifactLayout(tmp / "artifacts").batch(PLAZA, "b0000").samples()[0]
    manifest = json.loads(sample.manifest.read_text())
    van = next(a for a in manifest["actors"] if a["id"] == "van")
    assert van["asset_id"] == VAN and van["role"] == "parked" and "occluder" in van["tags"]
    assert (van["dims"]["l"], van["dims"]["w"], van["dims"]["h"]) == pytest.approx((5.2, 2.0, 2.5), abs=1e-5)

    # dynamic-v1 rolled the imported van out as a body resting on its imported collider: it stays where it was
    # parked, neither sinking nor drifting, for the whole trace.
    trace = pq.read_table(sample.trace).to_pydict()
    rows = [i for i, a in enumerate(trace["actor_id"]) if a == "van"]
    assert len(rows) > 10
    for axis in ("x", "y", "z"):
        values = [trace[axis][i] for i in rows]
        assert max(values) - min(values) < 0.01, axis
    assert trace["x"][rows[0]] == pytest.approx(van["initial"]["pose"]["x"], abs=0.01)
    assert trace["y"][rows[0]] == pytest.approx(van["initial"]["pose"]["y"], abs=0.01)

    # Sensors and truth: the legend names the imported van with its class, and the camera's id and semantic
    # images hit it (it is the occluder in front of the ego's camera).
    legend = Legend.read(sample.observations.root / "legend.json")
    entry_van = next(e for e in legend.entries if e.entity.endswith("/actor:van"))
    assert (entry_van.semantic_class, entry_van.family) == ("van", "delivery_van")
    camera = sample.observations.root / "front_camera"
    id_pixels, sem_pixels = _pixels(camera, entry_van)
    assert id_pixels > 100 and sem_pixels == id_pixels
    tracks = pq.read_table(sample.observations.root / "truth" / "front_camera" / "tracks.parquet").to_pydict()
    assert any(str(v).endswith("actor:van") for column in tracks.values() for v in column)
    # The scene's static instances (template import-scene) are in the observed world with their class.
    statics = {e.entity: e for e in legend.entries if e.family == "furniture"}
    assert {k: (e.semantic_class, e.family) for k, e in statics.items()} == {
        f"{PLAZA}/instance:bench_01": ("street_furniture", "furniture"),
        f"{PLAZA}/instance:bollard_01": ("street_furniture", "furniture")}
    bench = statics[f"{PLAZA}/instance:bench_01"]
    bench_pixels, bench_classed = _pixels(camera, bench)
    assert bench_pixels > 20 and bench_classed == bench_pixels
    template = load_template(tmp / "templates" / f"{PLAZA}.yaml")
    assert template.version == load_template(tmp / "base" / f"{RC}.yaml").version + 1
    bench_instance = template.instance_by_name["bench_01"]
    assert (bench_instance.pose.x, bench_instance.pose.y, bench_instance.pose.z) == pytest.approx((85, 5.2, 0.15))

    # The gate ran on it, with the sensor evidence of those observations.
    validity = ValidityRecord.read(sample.validity)
    assert validity.sensor_evidence is True and set(validity.branches) == {"brake", "coast"}
