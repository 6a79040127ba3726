"""The street on a map with heights (issue 24 item 1, "the ground is no longer flat where the map is not").

The map (:func:`simready.testing.opendrive_cases.crest_road`, written with scenariogeneration): a 100 m road
running east along y = 0 over a crest, z(s) = 1 + 0.1·s − 0.001·s² (highest at s = 50 m), a constant
superelevation of 0.04 rad (z rises by t·tan 0.04 to the left), lanes 1 (west) and −1 (east) 3.5 m wide, and a
2 m sidewalk (lane −2) raised 0.15 m by the map's own lane height. Its street's tiles follow the surface within a
centimetre, and a vehicle driven over the crest in kinematic-v1 and dynamic-v1 stays on it, nose up before the
top and nose down after.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from simready.common import paths
from simready.catalog.catalog import ensure_catalog
from simready.common.hashing import file_sha256
from simready.maps.xodr_import import import_opendrive
from simready.scenario.manifest import parse_manifest
from simready.sim.run import run_simulation
from simready.testing import opendrive_cases as cases
from simready.world import street as st
from simready.world.street import policy as sp
from simready.world.template import parse_template, template_hash
from simready.world.template_model import Pose
from tests.fixtures.manifests import manifest_dict

A, B, C = cases.CREST["elevation"][:3]
SUPER = cases.CREST["superelevation"]
KERB = cases.CREST["kerb"]
EGO = "asset:shuttle/standard"


def surface_z(x: float | np.ndarray, y: float | np.ndarray) -> float | np.ndarray:
    """The map's road surface: elevation along the reference line (s = x) plus superelevation across (t = y)."""
    return A + B * x + C * x * x + y * math.tan(SUPER)


def slope(x: float | np.ndarray) -> float | np.ndarray:
    return B + 2 * C * x


@pytest.fixture(scope="module")
def crest(tmp_path_factory):
    path = tmp_path_factory.mktemp("xodr") / "crest.xodr"
    path.write_bytes(cases.crest_road())
    data = import_opendrive(path, "crest").data
    return data, parse_template(st.derived_street(data), "crest.yaml")


def _kind(template, kind: str) -> list:
    return [i for i in template.instances if i.name.startswith(f"{sp.STREET_PREFIX}{kind}_")]


def _world(pose: Pose, local: tuple[float, float, float]) -> np.ndarray:
    return np.array([pose.x, pose.y, pose.z]) + pose.rotation() @ np.asarray(local, dtype=float)


def test_road_tiles_lie_on_the_elevation_within_a_centimetre(crest):
    _, template = crest
    tiles = _kind(template, "road")
    assert len(tiles) > 50
    worst = 0.0
    for tile in tiles:
        for lx in (-1.25, 0.0, 1.25):
            for ly in (-0.5, 0.0, 0.5):
                w = _world(tile.pose, (lx, ly, 0.0))  # a point of the tile's top face
                if 0.0 <= w[0] <= 100.0 and -3.5 <= w[1] <= 3.5:
                    worst = max(worst, abs(w[2] - surface_z(w[0], w[1])))
    assert worst < 0.01
    # The tiles pitch with the crest (nose up before the top, down after) and roll with the superelevation.
    for tile in tiles:
        want_pitch = -math.degrees(math.atan(slope(tile.pose.x) * math.cos(tile.pose.yaw_rad)))
        assert tile.pose.pitch_deg == pytest.approx(want_pitch, abs=0.2)
        assert (tile.pose.roll_deg or 0.0) * math.cos(tile.pose.yaw_rad) == pytest.approx(math.degrees(SUPER), abs=0.2)


def test_markings_sidewalks_kerbs_terrain_and_blocks_follow_the_heights(crest):
    _, template = crest
    marks = [m for m in _kind(template, "marking") if 0.0 <= m.pose.x <= 100.0]
    assert {round(m.pose.y, 3) for m in marks} == {3.5, 0.0, -3.5, -5.5}  # edges, centre, the sidewalk's outer edge
    for mark in marks:
        raised = KERB if mark.pose.y < -3.6 else 0.0  # the map's mark on the sidewalk's edge lies on its top
        assert mark.pose.z == pytest.approx(surface_z(mark.pose.x, mark.pose.y) + raised, abs=0.01)
    for kind in ("sidewalk", "kerb"):
        parts = _kind(template, kind)
        assert parts, kind
        for part in parts:
            top = _world(part.pose, (0.0, 0.0, sp.KERB_HEIGHT_M))
            if 0.0 <= top[0] <= 100.0:
                # The sidewalk's top is the map's: the road's surface continued across it, plus its 0.15 m height.
                assert top[2] == pytest.approx(surface_z(top[0], top[1]) + KERB, abs=0.01), kind
    road = [t.pose for t in _kind(template, "road")]
    for tile in _kind(template, "terrain"):
        near = [p for p in road if abs(p.x - tile.pose.x) <= 10 and abs(p.y - tile.pose.y) <= 10]
        for p in near:  # open ground never rises through the road
            assert _world(tile.pose, (p.x - tile.pose.x, p.y - tile.pose.y, -0.02))[2] < p.z + 1e-3
    blocks = _kind(template, "building")
    assert blocks and len({b.pose.z for b in blocks}) > 1  # standing at their ground's height, not all at 0
    assert all(b.pose.level for b in blocks)


def test_a_flat_map_gets_the_level_street_it_always_had(crest):
    data, _ = crest
    flat = {**data, "regions": [{k: v for k, v in r.items() if k != "z"} for r in data["regions"]]}
    street = st.street_static(parse_template(flat, "flat.yaml"))
    assert all(set(i["pose"]) == {"x", "y", "z", "yaw_deg"} for i in street.instances)
    assert {i["pose"]["z"] for i in street.instances} == {0.0}


def _manifest(template, catalog, backend_speed: float = 8.0):
    d = manifest_dict()
    ego = d["actors"][0]
    ego.update(asset_id=EGO)
    ego["initial"] = {"lane_ref": {"lane": "road1_sec0_lane-1", "s": 6.0, "t_frac": 0.0},
                      "pose": {"x": 6.0, "y": -1.75, "yaw": 0.0}, "speed_mps": backend_speed}
    ego["behavior"].update(route=["road1_sec0_lane-1"], cruise_speed_mps=backend_speed)
    d.update(template_id=template.id, template_hash=template_hash(template), sample_id=f"{template.id}-000001",
             actors=[ego], interactions=[], occluders=[], warmup_s=1.0, clip_s=9.0)
    d["asset_versions"] = {EGO: file_sha256(str(catalog.entry_dir(EGO) / "entry.json"))}
    return parse_manifest(d, "crest")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["kinematic-v1", "dynamic-v1"])
def test_a_vehicle_driven_over_the_crest_stays_on_the_road_and_pitches_with_it(crest, backend):
    _, template = crest
    catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    sim = run_simulation(_manifest(template, catalog), template, backend=backend, catalog=catalog)
    assert sim.issues == []
    ego = sim.trace.df[sim.trace.df["actor_id"] == "ego"]
    ego = ego[(ego["x"] > 15.0) & (ego["x"] < 85.0)]
    assert ego["x"].max() > 60.0, "the ego passed the crest"
    x, y = ego["x"].to_numpy(), ego["y"].to_numpy()
    # z of the body origin (the footprint centre on the ground) against the road under it.
    gap = ego["z"].to_numpy() - surface_z(x, y)
    assert np.abs(gap).max() < 0.05, (backend, float(np.abs(gap).max()))
    # The body's x axis points up the slope: its z component is −sin(pitch) = slope / √(1 + slope²).
    qx, qy, qz, qw = (ego[c].to_numpy() for c in ("qx", "qy", "qz", "qw"))
    x_axis_z = 2.0 * (qx * qz - qw * qy)
    want = slope(x) / np.sqrt(1.0 + slope(x) ** 2)
    far = np.abs(slope(x)) > 0.03  # away from the top, where the sign is plain
    assert np.all(np.sign(x_axis_z[far]) == np.sign(want[far])), backend
    # Kinematic bodies are placed on the ground; dynamic ones ride on it and rock on their tyres (~1°).
    tol = 0.01 if backend == "kinematic-v1" else 0.03
    assert np.abs(x_axis_z - want).max() < tol, (backend, float(np.abs(x_axis_z - want).max()))
