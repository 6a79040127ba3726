"""``simready sense`` on files: real template, catalog and manifest, a Parquet trace; bad input writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from simready.common import paths
from simready.catalog.catalog import ensure_catalog
from simready.cli import main
from simready.common.hashing import file_sha256
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import Legend, Render, Results
from simready.scenario.manifest import parse_manifest
from simready.sensors_hw.scene_build import build_scene
from simready.sensors_hw.trace_input import read_trace_input
from simready.world.frames import quat_from_yaw
from simready.world.template import load_template, template_hash
from tests.fixtures.manifests import manifest_dict

TEMPLATE = "residential_crosswalk_v3"
SAMPLE = "residential_crosswalk_v3-obs"
ASSETS = {"ego": "asset:shuttle/standard", "van": "asset:delivery_van/white", "ped": "asset:pedestrian_adult/standard"}
SMALL = ["front_camera.width_px=128", "front_camera.height_px=72", "front_camera.line_time_s=2e-4",
         "roof_lidar.azimuth_steps=256", "roof_lidar.channels=16"]


@pytest.fixture(scope="module")
def world():
    template = load_template(paths.TEMPLATES_DIR / f"{TEMPLATE}.yaml")
    catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    d = manifest_dict()
    d.update(template_id=TEMPLATE, template_hash=template_hash(template), sample_id=SAMPLE)
    for a in d["actors"]:
        a["asset_id"] = ASSETS[a["id"]]
    d["asset_versions"] = {a: file_sha256(str(catalog.entry_dir(a) / "entry.json")) for a in ASSETS.values()}
    return template, catalog, parse_manifest(d, "test")


def ticks(duration_s: float = 0.4, dt: float = 0.02) -> pd.DataFrame:
    """Ego east along lane y = −1.75 at 8 m/s, the van parked, the pedestrian walking north at 1.5 m/s."""
    n = int(round(duration_s / dt)) + 1
    t = np.arange(n) * dt
    rows = []
    for actor, start, vel, yaw in (("ego", (10.0, -1.75), (8.0, 0.0), 0.0), ("van", (44.0, -4.6), (0.0, 0.0), 0.0),
                                   ("ped", (47.5, -6.5), (0.0, 1.5), np.pi / 2)):
        q = quat_from_yaw(yaw)
        for i in range(n):
            rows.append({"tick": 250 + i, "t": t[i], "actor_id": actor, "x": start[0] + vel[0] * t[i],
                         "y": start[1] + vel[1] * t[i], "z": 0.0, "qx": q[0], "qy": q[1], "qz": q[2], "qw": q[3],
                         "vx": vel[0], "vy": vel[1], "vz": 0.0, "wx": 0.0, "wy": 0.0, "wz": 0.0,
                         "speed_mps": float(np.hypot(*vel)), "lane": None, "s": 0.0, "present": True})
    return pd.DataFrame(rows).sort_values(["tick", "actor_id"], kind="stable").reset_index(drop=True)


def write_trace(path: Path, df: pd.DataFrame, duration_s: float = 0.4) -> Path:
    header = {"dt": 0.02, "clip_s": duration_s, "template_id": TEMPLATE, "template_hash": "sha256:x",
              "actor_ids": sorted(df["actor_id"].unique()), "metric_subject": "ego"}
    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(
        {b"simready.header": json.dumps(header).encode()})
    pq.write_table(table, path, compression="zstd")
    return path


@pytest.fixture(scope="module")
def inputs(world, tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("sense")
    _, _, manifest = world
    manifest_path = tmp / "manifest.json"
    manifest_path.write_text(manifest.model_dump_json(by_alias=True))
    return write_trace(tmp / "trace.parquet", ticks()), manifest_path


def test_scene_has_every_instance_and_actor_with_spec_identifiers(world, inputs):
    template, catalog, manifest = world
    built = build_scene(template, catalog, manifest, read_trace_input(inputs[0]))
    assert len(built.entities) == len(template.instances) + 3
    assert f"{TEMPLATE}/instance:road_0" in built.entities
    ego = built.entities[f"{SAMPLE}/actor:ego"]
    assert ego.actor == "ego" and built.ego_entity == ego.entity_id and built.ignore == (ego.entity_id,)
    road = built.entities[f"{TEMPLATE}/instance:road_0"]
    assert (road.semantic_class, road.class_id, road.family) == ("road", 1, "road_surface")
    assert road.geometry_hash == catalog.entry("asset:road_surface/tile_10x10").render_geometry.sha256
    legend = {r.entity: r.compact_id for r in built.legend()}
    assert legend == built.scene.compact_ids
    van = built.track(f"{SAMPLE}/actor:van")
    np.testing.assert_allclose(van.pose_at(0.2)[:3, 3], [44.0, -4.6, 0.0])


def test_sense_writes_the_layout_and_records_the_overrides(inputs, tmp_path, capsys):
    trace, manifest = inputs
    out = tmp_path / "obs"
    args = ["sense", str(trace), "--manifest", str(manifest), "--out", str(out), "--until", "0.12", "--quiet"]
    assert main(args + sum((["--set", s] for s in SMALL + ["lens.distortion=0"]), [])) == 0
    assert capsys.readouterr().out.startswith(str(out))
    obs = ObservationDir(out)
    render = Render.read(obs.render)
    assert render.rig["front_camera"]["model"]["width_px"] == 128
    assert render.rig["front_camera"]["model"]["distortion_k1"] == 0.0
    assert [o.key for o in render.overrides][-1] == "lens.distortion"
    job = json.loads(obs.render_job.read_text())
    assert job["inputs"]["template"]["id"] == TEMPLATE and job["inputs"]["trace"]["sha256"].startswith("sha256:")
    assert job["inputs"]["files"]["trace"] == str(trace)
    assert job["inputs"]["geometry"][f"{TEMPLATE}/instance:road_0"].startswith("sha256:")
    classes = {e.entity: e.semantic_class for e in Legend.read(obs.legend).entries}
    assert classes[f"{SAMPLE}/actor:ped"] == "pedestrian" and classes[f"{TEMPLATE}/instance:zebra_main"] == \
        "crosswalk_marking"
    files = {e.pass_name for e in Results.read(obs.results).files}
    assert {"rgb", "depth", "id", "semantic", "lidar", "radar", "truth.forward", "video"} <= files


def test_a_rig_file_replaces_the_templates_rig(inputs, tmp_path):
    trace, manifest = inputs
    rig = tmp_path / "rig.yaml"
    rig.write_text(yaml.safe_dump({"mounts": {"m": {"type": "camera", "parent": "ego", "translation_m": [1, 0, 2]}},
                                   "sensors": {"cam": {"type": "camera", "mount": "m", "width_px": 64, "height_px": 48,
                                                       "hfov_deg": 60.0, "near_m": 0.1, "far_m": 100.0,
                                                       "rate_hz": 10.0, "phase_s": 0.0, "shutter": "global",
                                                       "line_time_s": 0.0, "distortion_k1": 0.0}}}))
    out = tmp_path / "obs"
    assert main(["sense", str(trace), "--manifest", str(manifest), "--out", str(out), "--rig", str(rig),
                 "--passes", "id,depth", "--no-video", "--quiet"]) == 0
    render = Render.read(ObservationDir(out).render)
    assert list(render.rig) == ["cam"] and render.frames == {"cam": 5}


def test_sense_writes_each_points_time_by_default_and_lidar_time_off_drops_it(inputs, tmp_path):
    """Issue 26 item 5: the PLY's ``t`` (seconds since the sweep's ``sampleTime``, its start) is on by default and
    its header says so; ``--lidar-time off`` writes the five SPEC columns only."""
    from simready.sensors_hw.lidar import TIME_COMMENT, read_ply

    trace, manifest = inputs
    heads = {}
    for mode in ("on", "off"):
        out = tmp_path / mode
        extra = [] if mode == "on" else ["--lidar-time", "off"]
        assert main(["sense", str(trace), "--manifest", str(manifest), "--out", str(out), "--until", "0.12",
                     "--passes", "lidar", "--no-video", "--quiet", *extra]
                    + sum((["--set", s] for s in SMALL), [])) == 0
        obs = ObservationDir(out)
        (entry, *_) = [e for e in Results.read(obs.results).files if e.pass_name == "lidar"]
        ply = obs.file(entry.path)
        heads[mode] = ply.read_bytes().split(b"end_header")[0].decode()
        cols = read_ply(ply)
        if mode == "on":
            assert entry.sample_time is not None and entry.t is not None
            assert 0.0 <= cols["t"].min() and entry.sample_time.seconds + cols["t"].max() < entry.t + 0.5 * 0.1
        else:
            assert "t" not in cols
    assert "property double t" in heads["on"] and TIME_COMMENT in heads["on"]
    assert "property double t" not in heads["off"] and "comment t:" not in heads["off"]


def test_sense_compressed_writes_each_files_compressed_variant(inputs, tmp_path):
    """Issue 29 item 3: ``--compressed`` writes ``depth.f32.bin.zst`` and ``<tick>.ply.zst`` (PNGs keep their names, at
    zlib level 6) and records the choice in render.json; ``--lidar-format binary`` compresses the binary PLY."""
    from simready.artifacts.records import Render
    from simready.sensors_hw.lidar import read_ply

    trace, manifest = inputs
    out = tmp_path / "packed"
    assert main(["sense", str(trace), "--manifest", str(manifest), "--out", str(out), "--until", "0.12",
                 "--passes", "depth,id,lidar", "--no-video", "--quiet", "--compressed", "--lidar-format", "binary"]
                + sum((["--set", s] for s in SMALL), [])) == 0
    obs = ObservationDir(out)
    paths = {e.pass_name: e.path for e in Results.read(obs.results).files if e.tick is not None}
    assert paths["depth"].endswith(".depth.f32.bin.zst") and paths["lidar"].endswith(".ply.zst")
    assert paths["id"].endswith(".id.png")
    settings = Render.read(obs.render).settings
    assert (settings.depth_format, settings.lidar_format, settings.png_compress_level) == ("f32.zst", "binary.zst", 6)
    assert len(read_ply(obs.file(paths["lidar"]))["x"]) > 0


# --- bad input: one line, exit 1, nothing written -------------------------------------------------


def refused(args: list[str], out: Path, capsys, match: str) -> None:
    before = sorted(p.name for p in out.parent.iterdir())
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and match in err, err
    assert sorted(p.name for p in out.parent.iterdir()) == before  # no output, no temporary sibling


def test_output_folder_that_exists_and_is_not_empty_is_refused(inputs, tmp_path, capsys):
    trace, manifest = inputs
    out = tmp_path / "obs"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    refused(["sense", str(trace), "--manifest", str(manifest), "--out", str(out)], out, capsys, "not empty")
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_unknown_pass_names_are_refused(inputs, tmp_path, capsys):
    trace, manifest = inputs
    out = tmp_path / "obs"
    refused(["sense", str(trace), "--manifest", str(manifest), "--out", str(out), "--passes", "rgb,normals,flow"],
            out, capsys, "flow,normals")


def test_a_rig_referencing_a_missing_mount_is_refused(inputs, tmp_path, capsys):
    trace, manifest = inputs
    rig = tmp_path / "rig.yaml"
    rig.write_text(yaml.safe_dump({"mounts": {"front": {"type": "camera", "parent": "ego", "translation_m": [1, 0, 2]}},
                                   "sensors": {"cam": {"type": "camera", "mount": "roof", "width_px": 64}}}))
    out = tmp_path / "obs"
    refused(["sense", str(trace), "--manifest", str(manifest), "--out", str(out), "--rig", str(rig)], out, capsys,
            "missing mount 'roof'")


def test_a_trace_without_twists_is_refused(inputs, tmp_path, capsys):
    _, manifest = inputs
    trace = write_trace(tmp_path / "no-twist.parquet", ticks().drop(columns=["wx", "wy", "wz"]))
    out = tmp_path / "obs"
    refused(["sense", str(trace), "--manifest", str(manifest), "--out", str(out)], out, capsys, "motion field")


def test_null_twists_are_refused_too(inputs, tmp_path, capsys):
    _, manifest = inputs
    df = ticks()
    df.loc[5, "vx"] = np.nan
    trace = write_trace(tmp_path / "nan-twist.parquet", df)
    out = tmp_path / "obs"
    refused(["sense", str(trace), "--manifest", str(manifest), "--out", str(out)], out, capsys, "twist")


def test_a_bad_override_is_refused(inputs, tmp_path, capsys):
    trace, manifest = inputs
    out = tmp_path / "obs"
    refused(["sense", str(trace), "--manifest", str(manifest), "--out", str(out), "--set", "lens.nothing=1"],
            out, capsys, "matches no sensor field")
