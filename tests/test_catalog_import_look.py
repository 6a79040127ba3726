"""Materials reach the camera (issue 16): an imported textured asset's texture is sampled by the RGB pass at the
barycentrics Embree reports, and the depth, id and semantic passes do not change.

The texture is a real third-party image (``pybullet_data/checker_blue.png``, two colours); the board carrying it
is written as glTF by trimesh and imported with ``simready catalog import``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pybullet_data
import pytest
import trimesh
from PIL import Image

from simready.catalog.catalog import load_catalog
from simready.catalog.certify import certify_catalog
from simready.catalog.importers.conventions import axes_rotation
from simready.cli import main
from simready.raycast import SceneGeometry
from simready.raycast.geometry import Body
from simready.sensors_hw.camera import Lighting, render_frame
from simready.sensors_hw.models import Rig
from simready.world import frames as F
from simready.world.motion import PoseTrack

CHECKER = Path(pybullet_data.getDataPath()) / "checker_blue.png"
ASSET = "asset:board/checker"
W, H = 320, 240


def board_glb(path: Path) -> Path:
    """A 0.1 × 2 × 2 m board (x, y, z; body frame, on the ground) whose uv spans the texture: u = (1 − y)/2 runs
    left to right as a camera on −x sees it, v (glTF, 0 at the top) = (2 − z)/2."""
    board = trimesh.creation.box(extents=(0.1, 2.0, 2.0))
    board.apply_translation((0.0, 0.0, 1.0))
    v = board.vertices
    uv_obj = np.stack([(1.0 - v[:, 1]) / 2.0, v[:, 2] / 2.0], axis=1)  # trimesh holds OBJ's v-up convention
    material = trimesh.visual.material.SimpleMaterial(image=Image.open(CHECKER))
    gltf_vertices = v @ axes_rotation("y", "-y")  # our frame → glTF's (y up, front +Z)
    mesh = trimesh.Trimesh(gltf_vertices, board.faces, process=False,
                           visual=trimesh.visual.TextureVisuals(uv=uv_obj, material=material))
    scene = trimesh.Scene()
    scene.add_geometry(mesh, node_name="board", geom_name="board")
    path.write_bytes(scene.export(file_type="glb"))
    return path


@pytest.fixture(scope="module")
def catalog_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("look")
    rc = main(["catalog", "import", str(board_glb(tmp / "board.glb")), "--id", ASSET, "--class", "road_object",
               "--mass-kg", "8", "--license", "Zlib", "--out", str(tmp / "cat")])
    assert rc == 0
    return tmp / "cat"


def frame(catalog_dir: Path, textured: bool):
    catalog = load_catalog(catalog_dir / "generated")
    entry = catalog.entry(ASSET)
    mesh = catalog.render_mesh(ASSET)
    body = Body("t/instance:board", mesh.vertices, mesh.faces, entry.render_geometry.sha256, "render.obj", 30,
                entry.material.albedo_rgb, 0.5, PoseTrack.constant(F.make_transform(np.eye(3), [5.0, 0.0, 0.5])),
                catalog.look(ASSET) if textured else None)
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [0.0, 0.0, 1.5]}},
                         "sensors": {"cam": {"width_px": W, "height_px": H, "hfov_deg": 40.0, "near_m": 0.1,
                                             "far_m": 100.0, "rate_hz": 10.0, "phase_s": 0.0, "shutter": "global",
                                             "line_time_s": 0.0, "distortion_k1": 0.0, "vignette": 0.0}}})
    return render_frame(SceneGeometry([body]), rig, "cam", 0.0, ("rgb", "depth", "id", "semantic"),
                        lighting=Lighting(sun_elevation_deg=-1.0))


def test_the_entry_carries_the_texture_and_its_coordinates(catalog_dir: Path) -> None:
    catalog = load_catalog(catalog_dir / "generated")
    entry = catalog.entry(ASSET)
    assert entry.appearance is not None and entry.appearance.uv is not None
    (part,) = entry.appearance.parts
    assert part.part == "board" and part.texture is not None
    image = iio.imread(catalog.entry_file(ASSET, part.texture.file))
    assert np.array_equal(image, iio.imread(CHECKER)[..., :3])
    look = catalog.look(ASSET)
    assert look is not None and look.uv.shape == (len(catalog.render_mesh(ASSET).faces), 3, 2)


def test_rgb_shows_the_texture_pattern_where_the_board_is_seen(catalog_dir: Path) -> None:
    passes = frame(catalog_dir, textured=True)
    hits = passes.hits
    on_board = np.flatnonzero(hits.body_index == 0)
    front = on_board[hits.point_body[on_board, 0] < -0.049]  # the face towards the camera (x = −0.05)
    assert len(front) > 0.3 * W * H
    p = hits.point_body[front]
    u, v = (1.0 - p[:, 1]) / 2.0, (2.0 - p[:, 2]) / 2.0
    texture = iio.imread(CHECKER)[..., 0]
    rows, cols = (v * texture.shape[0]).astype(int).clip(0, 511), (u * texture.shape[1]).astype(int).clip(0, 511)
    expected_white = texture[rows, cols] == 255
    assert 0.2 < expected_white.mean() < 0.8  # both colours of the checker are in view
    red = passes.rgb.reshape(-1, 3)[front, 0].astype(int)
    seen_white = red > (red[expected_white].mean() + red[~expected_white].mean()) / 2
    assert red[expected_white].mean() > red[~expected_white].mean() + 20
    assert (seen_white == expected_white).mean() > 0.99
    # Without the look the board is one colour: the pattern came from the texture.
    plain = frame(catalog_dir, textured=False).rgb.reshape(-1, 3)[front, 0]
    assert plain.min() == plain.max()


def test_depth_id_and_semantic_passes_do_not_see_the_texture(catalog_dir: Path) -> None:
    textured, plain = frame(catalog_dir, textured=True), frame(catalog_dir, textured=False)
    assert np.array_equal(textured.depth, plain.depth)
    assert np.array_equal(textured.id, plain.id)
    assert np.array_equal(textured.semantic, plain.semantic)


def test_certification_checks_the_appearance_files(catalog_dir: Path, tmp_path: Path) -> None:
    assert certify_catalog(catalog_dir / "generated").all_passed
    copy = tmp_path / "generated"
    shutil.copytree(catalog_dir / "generated", copy)
    uv = copy / "board" / "checker" / "uv.f32.bin"
    uv.write_bytes(uv.read_bytes()[:-8])
    (report,) = certify_catalog(copy).entries
    messages = [r.message for r in report.reasons if r.code == "geometry_hash"]
    assert any(m.startswith("uv.f32.bin sha256") for m in messages)
    assert any("not 288 (3 corners × (u, v) float32 per triangle)" in m for m in messages)
