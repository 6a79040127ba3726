"""The published observation layout, read the way its users read it (issue 18).

The reader below is written only from SPEC §10's description: JSON, PNG and raw float32 read with json,
Pillow and numpy, no simready code. It loads every pass of an observed sample and must get depths equal to
the truth's (SPEC §11 surface table, written by the same pass) within float rounding, ids that resolve in
``legend.json`` and equal the truth's, and classes that match the ontology.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

from simready.common import paths
from simready.measurement.observe import observe
from simready.testing.street import street_sample

SMALL = {"width_px": 80, "height_px": 48, "line_time_s": 2e-4, "azimuth_steps": 256, "channels": 16}


class SpecReader:
    """SPEC §10, and nothing else."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.results = json.loads((folder / "results.json").read_text())
        self.legend = {e["compact_id"]: e for e in json.loads((folder / "legend.json").read_text())["entries"]}
        self.render = json.loads((folder / "render.json").read_text())

    def artifacts(self, pass_name: str) -> list[dict]:
        return [a for a in self.results["artifacts"] if a["pass"] == pass_name]

    def frame(self, camera: str, tick: int) -> dict:
        return next(f for f in self.results["cameras"][camera]["frames"] if f["tick"] == tick)

    def depth_m(self, artifact: dict, shape: tuple[int, int]) -> np.ndarray:
        near_m = self.frame(artifact["sensorId"], artifact["tick"])["projection"]["nearM"]
        raw = np.fromfile(self.folder / artifact["path"], "<f4").reshape(shape).astype(np.float64)
        with np.errstate(divide="ignore"):
            return np.where(raw > 0, near_m / raw, np.inf)

    def instances(self, artifact: dict) -> np.ndarray:
        rgb = np.asarray(Image.open(self.folder / artifact["path"])).astype(np.int64)
        return rgb[..., 0] + 256 * rgb[..., 1] + 65536 * rgb[..., 2]

    def classes(self, artifact: dict) -> np.ndarray:
        image = Image.open(self.folder / artifact["path"])
        assert image.mode in ("RGB", "RGBA")  # 8-bit RGB(A)
        return np.asarray(image)[..., 2].astype(np.int64)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    built, rig, trace = street_sample(0.3, **SMALL)
    out = tmp_path_factory.mktemp("published") / "obs"
    observe(built, rig, trace, out)
    return out


def test_every_artifact_is_listed_with_the_published_fields(folder):
    r = SpecReader(folder)
    for a in r.results["artifacts"]:
        assert {"sensorId", "tick", "pass", "path", "bytes", "sha256"} <= set(a)
        data = (folder / a["path"]).read_bytes()
        assert len(data) == a["bytes"] and a["sha256"].endswith(hashlib.sha256(data).hexdigest())
    for camera, info in r.results["cameras"].items():
        for f in info["frames"]:
            p = f["projection"]
            assert p["kind"] == "pinhole" and p["nearM"] > 0 and p["farM"] > p["nearM"] and 0 < p["fovYDeg"] < 180
            assert "near_m / z_depth" in p["depth"]
            assert f["sampleTime"]["seconds"] == f["t0_s"] == f["sample_times_s"]["first_row"]


def test_depths_ids_and_classes_read_from_the_spec_agree_with_the_truth_and_the_ontology(folder):
    r = SpecReader(folder)
    ontology = yaml.safe_load((paths.DATA_DIR / "ontology.yaml").read_text())
    class_ids = {name: spec["id"] for name, spec in ontology["classes"].items()}
    ignore_8bit = 255  # the ontology's ignore class (65535) in the blue channel, as SPEC §10 documents
    checked = 0
    for depth_art in r.artifacts("depth"):
        camera, tick = depth_art["sensorId"], depth_art["tick"]
        same = {a["pass"]: a for a in r.results["artifacts"] if a["sensorId"] == camera and a["tick"] == tick}
        ids = r.instances(same["id"])
        classes = r.classes(same["semantic"])
        depth = r.depth_m(depth_art, ids.shape)
        truth = pq.read_table(folder / same["truth.surface"]["path"]).to_pandas()
        flat_depth, flat_ids = depth.reshape(-1), ids.reshape(-1)
        pix = truth["pixel"].to_numpy()
        np.testing.assert_allclose(flat_depth[pix], truth["depth_m"].to_numpy(np.float64), rtol=2e-7)
        np.testing.assert_array_equal(flat_ids[pix], truth["compact_id"].to_numpy())
        nothing = np.ones(flat_ids.shape, bool)
        nothing[pix] = False
        assert np.all(np.isinf(flat_depth[nothing])) and np.all(flat_ids[nothing] == 0)
        for cid in np.unique(ids[ids > 0]):
            entry = r.legend[int(cid)]  # every id resolves
            want = class_ids.get(entry["class"], 65535)
            assert entry["class_id"] == want
            got = np.unique(classes[ids == cid])
            assert got.tolist() == [ignore_8bit if want == 65535 else want]
        assert np.all(classes[ids == 0] == 0)
        checked += len(pix)
    assert checked > 1000


def test_lidar_and_radar_files_declare_their_frame_and_columns(folder):
    r = SpecReader(folder)
    for a in r.artifacts("lidar"):
        text = (folder / a["path"]).read_text()
        header, body = text.split("end_header\n")
        props = [line.split()[-1] for line in header.splitlines() if line.startswith("property")]
        assert props == ["x", "y", "z", "intensity", "instance_id", "t"]  # t by default (issue 26)
        assert "x forward, y left, z up" in header and "right-handed" in header
        assert "seconds since the sweep's sampleTime" in header and "counter-clockwise" in header
        t = np.array([float(line.split()[5]) for line in body.splitlines()])
        sweep_s = 1.0 / r.render["rig"]["roof_lidar"]["model"]["rotation_hz"]
        assert a["sampleTime"]["seconds"] <= a["t"] and 0.0 <= t.min() and t.max() < sweep_s
        ids = np.array([int(line.split()[4]) for line in body.splitlines()])
        assert set(ids.tolist()) <= set(r.legend)
    assert "x forward, y left, z up" in r.render["sensor_frames"]["roof_lidar"]
    for a in r.artifacts("radar"):
        header = (folder / a["path"]).read_text().splitlines()[0].split(",")
        assert header[:4] == ["range_m", "azimuth_rad", "elevation_rad", "radial_velocity_mps"]


def test_legend_states_the_semantic_value_of_nothing_hit_and_the_row_time_rule(folder):
    """Issue 26 item 6: semantic 0 (sky) is stated in legend.json beside the ignore value and the rolling shutter's
    row-time rule, and it is what the semantic pass holds where the id pass holds nothing."""
    legend = json.loads((folder / "legend.json").read_text())
    assert legend["nothing_hit_class"] == 0 and legend["semantic_ignore_8bit"] == 255
    assert "line_time_s" in legend["row_time"] and "target row" in legend["row_time"]
    r = SpecReader(folder)
    for a in r.artifacts("semantic"):
        same = {b["pass"]: b for b in r.results["artifacts"] if b["sensorId"] == a["sensorId"] and b["tick"] == a["tick"]}
        ids = r.instances(same["id"])
        assert np.all(r.classes(a)[ids == 0] == legend["nothing_hit_class"])


def test_the_datasheet_states_the_observation_conventions():
    from simready.release.datasheet import conventions, datasheet_markdown

    conv = conventions()
    assert conv["semantic_nothing_hit_class"] == 0 and conv["semantic_ignore_8bit"] == 255
    gate = {"policy_version": ["p"], "bases_accepted": 1, "bases_rejected": 0, "matched_sets_whole": "1/1",
            "branches": {}, "low_fidelity_share": 0.0, "scale_factor": 1.0, "released_mean": {}}
    counts = {s: {"samples": 0, "branches": 0, "weight": 0.0, "files": 0, "bytes": 0} for s in ("train", "val", "test")}
    sheet = {"suite_id": "s", "counts": counts, "by_intent": {}, "by_cell": {}, "by_branch": {}, "gate": gate,
             "versions": {}, "conventions": conv}
    page = datasheet_markdown("r", sheet, [])
    assert "## Observation conventions" in page and "`semantic.png`: 0 where nothing was hit (sky" in page
    assert "sampleTime + v * line_time_s" in page and "seconds since the sweep's sampleTime" in page
    assert "counter-clockwise from +x" in page and "target row" in page
    from simready.sensors_hw.radar import CONTRIBUTOR_COLUMNS

    (line,) = [x for x in page.splitlines() if x.startswith("- radar contributors: ")]
    assert ", ".join(CONTRIBUTOR_COLUMNS) in line and "power_share" in line.split("(", 1)[1]
    # A sheet stored before the contributor table still renders, without the line.
    old = {**sheet, "conventions": {k: v for k, v in conv.items() if k != "radar_contributors"}}
    assert "radar contributors" not in datasheet_markdown("r", old, [])
    (line,) = [x for x in page.splitlines() if x.startswith("- truth stored at a declared step")]
    assert "`surface.bary_u` 9.54e-07 (±4.77e-07)" in line and "`forward.flow_du_px` 0.000977 (±0.000488)" in line
    (line,) = [x for x in page.splitlines() if x.startswith("- truth layout: ")]
    assert "`<tick>.surface.parquet` only" in line and "bit 0 valid, 1 occluded / disoccluded" in line
    assert "entity, geometry_hash, element as the int32 column `body`" in line
    assert "int32 differences of their multiples" in line and "`step_differences`" in line
    old = {**sheet, "conventions": {k: v for k, v in conv.items() if k != "truth_layout"}}
    assert "truth layout" not in datasheet_markdown("r", old, [])
