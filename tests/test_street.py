"""The street on an imported map (issue 24 item 5): road, markings, raised sidewalks with kerbs and building
blocks from an OpenDRIVE map's lanes and regions, as certified static instances every sensor sees.

The maps are written by scenariogeneration (``simready.testing.opendrive_maps``). The straight map's
cross-section (y, metres; the road runs east along y = 0 from x = 0 to 100):
sidewalk 2 (3.5 .. 5.5), lane 1 westbound (0 .. 3.5), lane -1 eastbound (-3.5 .. 0),
parking lane -2 (-6 .. -3.5), sidewalk -3 (-8 .. -6).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pandas as pd
import pytest
from shapely.geometry import Point, Polygon
from shapely.ops import unary_union

from simready.common import paths
from simready.catalog.catalog import ensure_catalog
from simready.catalog.certify import certify_entry
from simready.cli import main
from simready.common.hashing import file_sha256
from simready.artifacts.layout import ObservationDir
from simready.maps.sites import fit_intent
from simready.maps.xodr_import import import_opendrive
from simready.measurement.inputs import observe_sample
from simready.measurement.options import ObserveOptions
from simready.artifacts.records import Legend
from simready.scenario.generator import generate
from simready.scenario.manifest import parse_manifest
from simready.sensors_hw.camera import decode_id_rgb, decode_semantic_rgb
from simready.sensors_hw.lidar import read_ply
from simready.sensors_hw.trace_input import trace_from_ticks
from simready.sim.backends.dynamic.plan import world_plan
from simready.sim.run import run_simulation
from simready.sim.core.scene import build_scene
from simready.testing import opendrive_maps as maps
from simready.world import street as st
from simready.world.street import policy as sp
from simready.world.street.markings import map_markings
from simready.world.street.tiles import fill_grid, strip_borders
from simready.world.frames import quat_from_yaw
from simready.world.ontology import load_ontology
from simready.world.template import load_template, parse_template, template_hash
from tests.fixtures.manifests import manifest_dict

ASSETS = {"ego": "asset:shuttle/standard", "van": "asset:delivery_van/white", "ped": "asset:pedestrian_adult/standard"}
#: Camera 640x360, 90° horizontal: 0.15 m lines are ~4 px wide at 13 m.
WIDTH, HEIGHT, HFOV = 640, 360, 90.0
EGO_X, EGO_Y = 10.0, -1.75  # eastbound lane -1's centre
STREET_ASSETS = sorted({a for _, a in sp.ROAD_TILES} | {a for _, a in sp.SIDEWALK_TILES} | {a for a, *_ in sp.BUILDINGS}
                       | {sp.KERB_ASSET, sp.SOLID_ASSET, sp.DASH_ASSET, sp.TERRAIN_ASSET, sp.ZEBRA_ASSET})


@pytest.fixture(scope="module")
def catalog():
    return ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)


@pytest.fixture(scope="module")
def map_files(tmp_path_factory) -> dict[str, Path]:
    return maps.write_all(tmp_path_factory.mktemp("xodr"))


@pytest.fixture(scope="module")
def imported(map_files, tmp_path_factory):
    """``simready template import`` of each test map: ``{name: (template file, template)}``."""
    out = {}
    folder = tmp_path_factory.mktemp("templates")
    for name in ("straight", "junction", "curved"):
        path = folder / f"street_{name}.yaml"
        assert main(["template", "import", str(map_files[name]), "--id", f"street_{name}", "--out", str(path)]) == 0
        out[name] = (path, load_template(path))
    return out


def _by_kind(template) -> dict[str, list]:
    out: dict[str, list] = {}
    for inst in template.instances:
        if inst.name.startswith(sp.STREET_PREFIX):
            out.setdefault(inst.name[len(sp.STREET_PREFIX):].split("_")[0], []).append(inst)
    return out


# --- the instances -------------------------------------------------------------------------------------------------


def test_every_street_asset_is_certified_and_its_declared_size_is_what_the_module_assumes(catalog):
    ontology = load_ontology()
    for asset in STREET_ASSETS:
        verdict = certify_entry(catalog.entry_dir(asset), ontology)
        assert verdict.passed, (asset, verdict.reasons)
    dims = catalog.footprints()
    for width, asset in (*sp.ROAD_TILES, *sp.SIDEWALK_TILES):
        assert dims[asset] == (sp.TILE_LENGTH_M, width)
    for asset, length, depth in sp.BUILDINGS:
        assert dims[asset] == (length, depth)
    assert dims[sp.KERB_ASSET] == (sp.TILE_LENGTH_M, sp.KERB_WIDTH_M)
    assert dims[sp.SOLID_ASSET][0] == sp.TILE_LENGTH_M and dims[sp.DASH_ASSET][0] == sp.DASH_M
    assert catalog.entry(sp.SOLID_ASSET).semantic_class == catalog.entry(sp.DASH_ASSET).semantic_class == "lane_marking"
    tops = {a: catalog.entry(a).render_bounds_m[1][2] for a in STREET_ASSETS}
    assert {tops[a] for _, a in sp.SIDEWALK_TILES} == {tops[sp.KERB_ASSET]} == {sp.KERB_HEIGHT_M}
    assert {tops[a] for _, a in sp.ROAD_TILES} == {0.0}
    assert tops[sp.TERRAIN_ASSET] < 0.0  # under the road everywhere, never level with it
    assert dims[sp.TERRAIN_ASSET] == (sp.TERRAIN_TILE_M, sp.TERRAIN_TILE_M)


def test_open_ground_lies_under_the_street_and_the_blocks(imported):
    for name in ("straight", "junction"):
        _, template = imported[name]
        kinds = _by_kind(template)
        ground = unary_union([_footprint(i, sp.TERRAIN_TILE_M, sp.TERRAIN_TILE_M) for i in kinds["terrain"]])
        covered = unary_union([r.shape for r in template.regions])  # street and blocks
        assert covered.difference(ground).area < 1e-6, name
        assert {i.pose.yaw_deg for i in kinds["terrain"]} == {0.0}


def test_the_road_is_covered_where_its_regions_are_and_nowhere_else(imported):
    _, template = imported["straight"]
    kinds = _by_kind(template)
    roads = unary_union([r.shape for r in template.regions if r.type in sp.ROAD_REGION_TYPES])
    tiles = unary_union([_footprint(i, sp.TILE_LENGTH_M, dict((a, w) for w, a in sp.ROAD_TILES)[i.asset])
                         for i in kinds["road"]])
    assert tiles.intersection(roads).area / roads.area > 0.999
    assert tiles.difference(roads.buffer(0.01)).area < 0.5
    for name in ("curved", "junction"):
        _, t = imported[name]
        roads = unary_union([r.shape for r in t.regions if r.type in sp.ROAD_REGION_TYPES])
        tiles = unary_union([_footprint(i, sp.TILE_LENGTH_M, dict((a, w) for w, a in sp.ROAD_TILES)[i.asset])
                             for i in _by_kind(t)["road"]])
        assert tiles.intersection(roads).area / roads.area > 0.99, name


def _footprint(inst, length: float, width: float) -> Polygon:
    return _rectangle(inst.pose.x, inst.pose.y, inst.pose.yaw_rad, length, width)


def _rectangle(x: float, y: float, yaw_rad: float, length: float, width: float) -> Polygon:
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    return Polygon([(x + c * a * length / 2 - s * b * width / 2, y + s * a * length / 2 + c * b * width / 2)
                    for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))])


def test_markings_follow_the_lane_borders_with_the_right_kind(imported):
    _, template = imported["straight"]
    marks = _by_kind(template)["marking"]
    # The map's own road marks (the test map gives every lane border a solid mark and the centre a broken one):
    # solid at each lane's outer border (-3.5, -6 the parking lane's kerb side, -8 and 5.5 the sidewalks' outer
    # edges, 3.5), broken on the centre line.
    solid = sorted({round(m.pose.y, 3) for m in marks if m.asset == sp.SOLID_ASSET})
    broken = sorted({round(m.pose.y, 3) for m in marks if m.asset == sp.DASH_ASSET})
    assert solid == [-8.0, -6.0, -3.5, 3.5, 5.5] and broken == [0.0]
    crossing = (maps.STRAIGHT["crosswalk_s"] - 1.5, maps.STRAIGHT["crosswalk_s"] + 1.5)  # the 3 m crosswalk
    for y in (-3.5, 3.5):
        xs = np.array(sorted(m.pose.x for m in marks if round(m.pose.y, 3) == y))
        assert xs[0] == pytest.approx(sp.TILE_LENGTH_M / 2) and xs[-1] == pytest.approx(100 - sp.TILE_LENGTH_M / 2)
        # Continuous but for the crosswalk, which no line enters.
        gaps = np.diff(xs)
        assert sorted(gaps)[-2] <= sp.TILE_STEP_M + 1e-9
        before, after = xs[xs < crossing[0]].max(), xs[xs > crossing[1]].min()
        assert before + sp.TILE_LENGTH_M / 2 <= crossing[0] and after - sp.TILE_LENGTH_M / 2 >= crossing[1]


def test_a_crosswalk_gets_zebra_bars_over_the_carriageway(imported):
    _, template = imported["straight"]
    bars = _by_kind(template)["zebra"]
    assert {b.asset for b in bars} == {sp.ZEBRA_ASSET}
    assert {round(b.pose.x, 3) for b in bars} == {maps.STRAIGHT["crosswalk_s"]}
    assert {round(b.pose.yaw_deg % 180.0, 3) for b in bars} == {0.0}  # bars run with the traffic (east-west)
    ys = sorted(b.pose.y for b in bars)
    # From the south kerb (y = -6, the parking lane's edge) to the north one (y = 3.5), 0.5 m bars every metre.
    assert np.allclose(np.diff(ys), sp.ZEBRA_PITCH_M)
    assert ys[0] - sp.ZEBRA_BAR_M / 2 >= -6.0 - 1e-9 and ys[-1] + sp.ZEBRA_BAR_M / 2 <= 3.5 + 1e-9
    assert len(ys) == 10


def test_same_direction_neighbours_get_a_broken_line(map_files):
    data = import_opendrive(map_files["split"], "split").data
    data.pop("markings", None)  # a template without the map's marks: kinds derived from the lanes
    template = parse_template(data, "split.yaml")
    street = st.street_static(template)
    dashes = [i for i in street.instances if i["asset"] == sp.DASH_ASSET]
    assert dashes, "the split road's two right lanes share a border"
    for d in dashes:
        # Every dash lies on the border between lane -1 and the lane -2 that opens beside it (t = -3.5 m,
        # y = -3.5 where the road runs east), wholly inside the stretch where lane -2 exists.
        assert d["pose"]["y"] == pytest.approx(-maps.SPLIT["width"], abs=0.05)
        assert maps.SPLIT["from"] <= d["pose"]["x"] - sp.DASH_M / 2 - 1.0
    xs = sorted(d["pose"]["x"] for d in dashes)
    assert np.allclose(np.diff(xs), sp.DASH_M + sp.GAP_M)


def test_sidewalks_are_raised_with_a_kerb_on_their_road_side(imported):
    _, template = imported["straight"]
    kinds = _by_kind(template)
    assert {round(i.pose.y, 3) for i in kinds["sidewalk"]} == {4.5, -7.0}
    assert {round(i.pose.y, 4) for i in kinds["kerb"]} == {3.5 + sp.KERB_WIDTH_M / 2, -6.0 - sp.KERB_WIDTH_M / 2}


def test_buildings_stand_back_from_the_street_and_from_each_other(imported):
    for name in ("straight", "junction", "curved"):
        _, template = imported[name]
        blocks = {r.id: r.shape for r in template.regions if r.type == "building"}
        assert len(blocks) >= 4, name
        street = unary_union([r.shape for r in template.regions if r.type != "building"])
        for rid, shape in blocks.items():
            assert shape.distance(street) >= sp.CLEARANCE_M - 1e-6, (name, rid)
            inst = template.instance_by_name[rid]
            assert Point(inst.pose.x, inst.pose.y).distance(shape.centroid) < 1e-3
        ids = sorted(blocks)
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                assert blocks[a].distance(blocks[b]) >= sp.CLEARANCE_M - 1e-6


def test_the_same_map_gives_the_same_street_and_another_map_hash_other_buildings(map_files):
    data = import_opendrive(map_files["straight"], "s").data
    a, b = st.with_street(data), st.with_street(json.loads(json.dumps(data)))
    assert a == b
    other = json.loads(json.dumps(data))
    other["provenance"]["source_sha256"] = "0" * 64
    c = st.with_street(other)
    blocks = lambda d: [(i["asset"], i["pose"]) for i in d["instances"] if "building" in i["name"]]  # noqa: E731
    assert blocks(a) != blocks(c)
    rest = lambda d: [i for i in d["instances"] if "building" not in i["name"]]  # noqa: E731
    assert rest(a) == rest(c)
    assert template_hash(parse_template(a, "a")) == template_hash(parse_template(b, "b"))


def test_a_dynamic_rollout_drives_on_the_street_without_road_strip_colliders(map_files, catalog):
    """Road strips and markings lie in the floor slab (no collider seams for the tyres); sidewalks, kerbs and
    buildings are bodies; the shuttle rolls along the imported street as on a hand-written one."""
    data, _ = fit_intent(import_opendrive(map_files["straight"], "street_dyn").data, "pedestrian_emerges_behind_van")
    template = parse_template(st.with_street(data), "street_dyn.yaml")
    manifest = generate(template.id, "pedestrian_emerges_behind_van", 1, template=template).manifests[0]
    scene = build_scene(manifest, template, backend="dynamic-v1", catalog=catalog)
    names = set(world_plan(scene).names)
    kinds = _by_kind(template)
    for kind, present in (("road", False), ("marking", False), ("kerb", True), ("building", True)):
        assert all((template.instance_id(i.name) in names) is present for i in kinds[kind]), kind
    # The sidewalk strips here run east (right-angle yaw): merged into raised ground boxes beside the floor slab.
    assert len([n for n in names if n.startswith(f"{template.id}/ground:")]) >= 3
    sim = run_simulation(manifest, template, backend="dynamic-v1", catalog=catalog)
    assert sim.issues == []
    df = sim.trace.df
    ego = df[df["actor_id"] == "ego"]
    assert float(np.hypot(ego["x"].iloc[-1] - ego["x"].iloc[0], ego["y"].iloc[-1] - ego["y"].iloc[0])) > 20.0
    assert float(ego["z"].abs().max()) < 0.05


# --- the sensors ---------------------------------------------------------------------------------------------------


def _ticks(n: int = 8, dt: float = 0.02) -> pd.DataFrame:
    """Ego eastbound in lane -1 at 8 m/s from x = 10; the van parked in the parking lane far behind; the
    pedestrian on the south sidewalk behind the ego (both out of the camera's way)."""
    rows = []
    for actor, (x, y, vx, yaw) in {"ego": (EGO_X, EGO_Y, 8.0, 0.0), "van": (3.0, -4.75, 0.0, 0.0),
                                   "ped": (2.0, -7.0, 0.0, math.pi / 2)}.items():
        q = quat_from_yaw(yaw)
        for i in range(n):
            t = i * dt
            rows.append({"tick": i, "t": t, "actor_id": actor, "x": x + vx * t, "y": y, "z": 0.0 if actor != "ped" else 0.15,
                         "qx": q[0], "qy": q[1], "qz": q[2], "qw": q[3], "vx": vx, "vy": 0.0, "vz": 0.0,
                         "wx": 0.0, "wy": 0.0, "wz": 0.0, "speed_mps": abs(vx), "lane": None, "s": 0.0, "present": True})
    return pd.DataFrame(rows).sort_values(["tick", "actor_id"], kind="stable").reset_index(drop=True)


def _manifest(template, catalog):
    d = manifest_dict()
    d.update(template_id=template.id, template_hash=template_hash(template), sample_id=f"{template.id}-000001")
    for a in d["actors"]:
        a["asset_id"] = ASSETS[a["id"]]
    d["asset_versions"] = {a: file_sha256(str(catalog.entry_dir(a) / "entry.json")) for a in ASSETS.values()}
    return parse_manifest(d, "test")


def _project(world_xyz, cam_xyz) -> tuple[int, int]:
    """Pixel (column, row) of a world point for the front camera looking east (x forward, y left, z up)."""
    dx, dy, dz = np.subtract(world_xyz, cam_xyz)
    f = (WIDTH / 2) / math.tan(math.radians(HFOV / 2))
    return int(WIDTH / 2 - f * dy / dx), int(HEIGHT / 2 - f * dz / dx)


@pytest.fixture(scope="module")
def observed(imported, catalog, tmp_path_factory):
    _, template = imported["straight"]
    out = tmp_path_factory.mktemp("obs") / "obs"
    overrides = [f"front_camera.width_px={WIDTH}", f"front_camera.height_px={HEIGHT}", "front_camera.line_time_s=0",
                 "lens.distortion=0", "roof_lidar.azimuth_steps=512", "roof_lidar.channels=32"]
    header = {"dt": 0.02, "clip_s": 0.14, "template_id": template.id, "actor_ids": ["ego", "ped", "van"],
              "metric_subject": "ego"}
    observe_sample(template, catalog, _manifest(template, catalog), trace_from_ticks(_ticks(), header), out,
                   options=ObserveOptions(passes=("rgb", "id", "semantic", "lidar"), video=False, until_s=0.1),
                   overrides=overrides)
    return template, ObservationDir(out)


def test_the_camera_sees_road_marking_kerb_sidewalk_and_building_where_they_are(observed):
    template, obs = observed
    semantic = decode_semantic_rgb(iio.imread(obs.file(obs.frame_name("front_camera", 0, "semantic"))))
    ids = decode_id_rgb(iio.imread(obs.file(obs.frame_name("front_camera", 0, "id"))))
    legend = {e.compact_id: e for e in Legend.read(obs.legend).entries}
    ontology = load_ontology()
    cam = (EGO_X + 1.8, EGO_Y, 1.45)  # the shuttle's camera mount, the ego at rest at tick 0
    block = next(r for r in sorted(template.regions, key=lambda r: r.id)
                 if r.type == "building" and r.shape.centroid.y > 0 and 25 < r.shape.centroid.x < 60)
    bx, by = block.shape.centroid.x, block.shape.bounds[1]  # the middle of its street-side face
    expected = {
        "road": (25.0, EGO_Y, 0.0),  # the ego's lane ahead
        "lane_marking": (28.5, 0.0, 0.005),  # a dash of the broken centre line (27-30 m)
        "curb": (25.0, 3.5 + 0.01, 0.075),  # the north kerb's face towards the road
        "sidewalk": (25.0, 4.6, sp.KERB_HEIGHT_M),
        "building": (bx, by, 4.0),
        "terrain": (25.0, 6.8, -0.02),  # the verge between the north sidewalk and the blocks
    }
    for cls, point in expected.items():
        col, row = _project(point, cam)
        assert 0 <= col < WIDTH and 0 <= row < HEIGHT, cls
        assert semantic[row, col] == ontology.class_id(cls), (cls, col, row, int(semantic[row, col]))
        entry = legend[int(ids[row, col])]
        assert entry.semantic_class == cls and entry.entity.startswith(f"{template.id}/instance:{sp.STREET_PREFIX}")
    # Every id in the frame resolves in legend.json; the sky above the horizon is nothing (0).
    assert set(np.unique(ids).tolist()) - {0} <= set(legend)
    assert ids[0, WIDTH // 2] == 0 and semantic[0, WIDTH // 2] == 0
    rgb = iio.imread(obs.file(obs.frame_name("front_camera", 0, "rgb")))
    col, row = _project(expected["lane_marking"], cam)
    rc, rr = _project(expected["road"], cam)
    assert int(rgb[row, col].astype(int).sum()) > int(rgb[rr, rc].astype(int).sum()) + 150  # white paint on asphalt


def test_lidar_returns_from_the_ground_and_the_buildings(observed):
    template, obs = observed
    legend = {e.compact_id: e for e in Legend.read(obs.legend).entries}
    cloud = read_ply(obs.file(obs.frame_name("roof_lidar", 0, "lidar")))
    classes = [legend[int(i)].semantic_class if int(i) else None for i in cloud["instance_id"]]
    counts = pd.Series([c for c in classes if c]).value_counts()
    assert counts.get("road", 0) > 500 and counts.get("building", 0) > 100
    assert counts.get("sidewalk", 0) > 50 and counts.get("lane_marking", 0) > 0 and counts.get("terrain", 0) > 0
    assert set(int(i) for i in cloud["instance_id"]) - {0} <= set(legend)


def test_a_region_that_is_no_strip_is_covered_by_a_grid_of_tiles():
    ell = Polygon([(0, 0), (30, 0), (30, 8), (8, 8), (8, 25), (0, 25)])
    assert strip_borders(ell.exterior.coords) is None  # 6 points, but not two paired borders within 30 m
    tiles = fill_grid(ell, sp.ROAD_TILES, 0.0)
    assert all(ell.contains(Point(x, y)) for _, x, y, _, _ in tiles)
    width = sp.ROAD_TILES[0][0]
    cover = unary_union([_rectangle(x, y, math.radians(yaw), sp.TILE_LENGTH_M, width) for _, x, y, _, yaw in tiles])
    assert cover.intersection(ell).area / ell.area > 0.9


def test_a_hand_written_template_gets_the_same_kinds_of_lines():
    """The rules do not depend on the importer: on the shipped arterial (two eastbound lanes sharing one region,
    one westbound) the eastbound lanes are split by a broken line and the directions by a solid one."""
    template = load_template(paths.TEMPLATES_DIR / "two_lane_arterial.yaml")
    marks = [i for i in st.street_static(template).instances if i["name"].startswith("street_marking")]
    by_y = {}
    for m in marks:
        by_y.setdefault(round(m["pose"]["y"], 3), set()).add(m["asset"])
    assert by_y == {-7.0: {sp.SOLID_ASSET}, -3.5: {sp.DASH_ASSET}, 0.0: {sp.SOLID_ASSET}, 3.5: {sp.SOLID_ASSET}}


# --- the map's own road marks -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mark", ["solid", "broken", "solid broken"])
def test_the_maps_road_marks_are_drawn_with_their_own_kind_where_the_map_put_them(mark):
    from simready.testing.opendrive_cases import marked_road

    template = parse_template(import_opendrive_bytes(marked_road(mark)))
    assert template.markings, "the importer gives this map's road marks"
    lines = [(a, x, y) for a, x, y, _z, _yaw in map_markings(template.markings)]
    # The marked line lies between lanes -1 and -2 of a 100 m road along +x: y = -3.5.
    between = [(a, y) for a, x, y in lines if -4.0 < y < -3.0]
    if mark == "solid":
        assert {a for a, _ in between} == {sp.SOLID_ASSET}
        assert {round(y, 3) for _, y in between} == {-3.5}
    elif mark == "broken":
        assert {a for a, _ in between} == {sp.DASH_ASSET}
        xs = sorted(x for a, x, y in lines if -4.0 < y < -3.0)
        assert np.allclose(np.diff(xs), sp.DASH_M + sp.GAP_M)  # the documented 3 m on / 6 m off
    else:  # solid broken: two lines 0.1 m either side of the mark, one of each kind
        kinds = {round(y, 3): {a for a, yy in between if round(yy, 3) == round(y, 3)} for _, y in between}
        assert sorted(kinds) == [-3.6, -3.4]
        assert sorted(next(iter(v)) for v in kinds.values()) == sorted([sp.SOLID_ASSET, sp.DASH_ASSET])
    # The street takes the map's marks, not derived kinds: the broken mark gives no solid line at y = -3.5.
    street_marks = [i for i in st.street_static(template).instances if "marking" in i["name"]]
    assert len(street_marks) == len(lines)


def import_opendrive_bytes(xml: bytes) -> dict:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.xodr"
        path.write_bytes(xml)
        return import_opendrive(path, "marked").data


def test_a_template_without_markings_keeps_the_derived_kinds():
    data = import_opendrive_bytes(maps.straight_road())
    data.pop("markings", None)
    template = parse_template(data)
    placed = [i for i in st.street_static(template).instances if "marking" in i["name"]]
    assert placed and {i["asset"] for i in placed} == {sp.SOLID_ASSET}
