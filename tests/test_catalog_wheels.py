"""Vehicles as vehicles (issue 30 item 2): wheels found on an imported asset, recorded, and driven with in dynamic-v1.

The crafted car: a 4.5 × 1.8 × 1.2 m body 0.17 m above the ground and four cylinders of radius 0.32 m and width
0.22 m whose axes lie along y, centred at x = ±wheelbase/2, y = ±0.78 m (track 1.56 m), z = 0.32 m.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import trimesh

from simready.bench.import_corpus import steady_turn_radius
from simready.catalog.add import ImportRequest, import_asset
from simready.catalog.certify import certify_entry
from simready.catalog.meshio import ObjMesh
from simready.catalog.wheels import vehicle_record
from simready.sim.backends.dynamic.chassis import Chassis

RADIUS, WIDTH, TRACK, CLEARANCE = 0.32, 0.22, 1.56, 0.17
BODY = (4.5, 1.8, 1.2)
CORNERS = {"fl": (1, 1), "fr": (1, -1), "rl": (-1, 1), "rr": (-1, -1)}


def car_parts(wheelbase: float, names: dict[str, str] | None = None) -> dict[str, trimesh.Trimesh]:
    """Body box and four y-axis cylinders in our body frame (x forward, y left, z up), by part name."""
    names = names or {}
    body = trimesh.creation.box(extents=BODY)
    body.apply_translation([0, 0, CLEARANCE + BODY[2] / 2])
    parts = {names.get("body", "body"): body}
    for corner, (sx, sy) in CORNERS.items():
        wheel = trimesh.creation.cylinder(radius=RADIUS, height=WIDTH, sections=32)
        wheel.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
        wheel.apply_translation([sx * wheelbase / 2, sy * TRACK / 2, RADIUS])
        parts[names.get(corner, f"wheel_{corner}")] = wheel
    return parts


def obj_mesh(parts: dict[str, trimesh.Trimesh]) -> ObjMesh:
    vertices, faces, groups, offset, first = [], [], [], 0, 0
    for name, mesh in parts.items():
        vertices.append(np.round(mesh.vertices, 6))
        faces.append(mesh.faces + offset)
        groups.append((name, first, len(mesh.faces)))
        offset += len(mesh.vertices)
        first += len(mesh.faces)
    return ObjMesh(np.concatenate(vertices), np.concatenate(faces), tuple(groups))


def test_four_named_cylinders_at_the_corners_give_exact_wheelbase_track_radius_clearance() -> None:
    rec = vehicle_record(obj_mesh(car_parts(2.8)))
    assert rec is not None and rec.found_by == "names"
    assert [w.parts for w in rec.wheels] == [["wheel_fl"], ["wheel_fr"], ["wheel_rl"], ["wheel_rr"]]
    assert rec.wheelbase_m == pytest.approx(2.8, abs=1e-6)
    assert rec.track_m == pytest.approx(TRACK, abs=1e-6)
    assert rec.wheel_radius_m == pytest.approx(RADIUS, abs=1e-6)
    assert all(w.width_m == pytest.approx(WIDTH, abs=1e-6) for w in rec.wheels)
    assert (rec.front_axle_x_m, rec.rear_axle_x_m) == pytest.approx((1.4, -1.4), abs=1e-6)
    assert rec.ground_clearance_m == pytest.approx(CLEARANCE, abs=1e-6)


def test_unnamed_round_parts_at_the_corners_are_found_by_shape() -> None:
    names = {"body": "shell", "fl": "mesh_3", "fr": "mesh_1", "rl": "mesh_4", "rr": "mesh_2"}
    rec = vehicle_record(obj_mesh(car_parts(3.1, names)))
    assert rec is not None and rec.found_by == "shape"
    assert (rec.wheelbase_m, rec.track_m, rec.wheel_radius_m) == pytest.approx((3.1, TRACK, RADIUS), abs=1e-6)
    assert rec.ground_clearance_m == pytest.approx(CLEARANCE, abs=1e-6)


def test_a_tyre_and_its_rim_are_one_wheel_and_a_steering_wheel_is_none() -> None:
    parts = car_parts(2.8)
    rim = trimesh.creation.cylinder(radius=0.2, height=0.18, sections=32)
    rim.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    rim.apply_translation([1.4, 0.78, RADIUS])
    steering = trimesh.creation.cylinder(radius=0.19, height=0.03, sections=32)
    steering.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    steering.apply_translation([0.4, 0.4, 1.0])
    rec = vehicle_record(obj_mesh({**parts, "tire_rim_fl": rim, "steering_wheel": steering}))
    assert rec is not None
    assert [w.parts for w in rec.wheels][0] == ["tire_rim_fl", "wheel_fl"]
    assert len(rec.wheels) == 4 and rec.wheelbase_m == pytest.approx(2.8, abs=1e-6)


def test_three_round_parts_or_one_axle_are_not_a_vehicle() -> None:
    parts = car_parts(2.8, {"fl": "a", "fr": "b", "rl": "c", "rr": "d"})
    del parts["d"]
    assert vehicle_record(obj_mesh(parts)) is None
    front_only = {k: v for k, v in car_parts(2.8).items() if k in ("body", "wheel_fl", "wheel_fr")}
    assert vehicle_record(obj_mesh(front_only)) is None


def write_gltf(parts: dict[str, trimesh.Trimesh], path: Path) -> Path:
    """glTF axes: X left, Y up, Z front; ours → glTF is (x, y, z) → (y, z, x)."""
    to_gltf = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1]], dtype=float)
    scene = trimesh.Scene()
    for name, mesh in parts.items():
        scene.add_geometry(mesh.copy().apply_transform(to_gltf), node_name=name, geom_name=f"g_{name}")
    path.parent.mkdir(parents=True, exist_ok=True)
    scene.export(path)
    return path


@pytest.mark.slow
def test_imported_car_certifies_with_its_wheels_and_turns_on_its_own_wheelbase(tmp_path: Path) -> None:
    src = write_gltf(car_parts(2.8), tmp_path / "car.gltf")
    result = import_asset(ImportRequest(src, "asset:sedan/imported", "car", mass_kg=1500.0, license="CC0-1.0"),
                          tmp_path / "catalog")
    assert result.certification.passed, result.certification.reasons
    entry = result.entry
    veh = entry.vehicle
    assert veh is not None and veh.found_by == "names"
    assert (veh.wheelbase_m, veh.track_m, veh.wheel_radius_m) == pytest.approx((2.8, TRACK, RADIUS), abs=1e-6)
    assert veh.ground_clearance_m == pytest.approx(CLEARANCE, abs=1e-6)
    ch = Chassis.of(entry)
    assert ch.wheelbase == veh.wheelbase_m
    assert ch.lf == pytest.approx(1.4 - entry.center_of_mass_m[0]) and ch.lr == pytest.approx(1.4 + entry.center_of_mass_m[0])
    # Steady state at δ = 0.1 rad (about 5 m/s): R = wheelbase / tan δ (neutral steer: cornering stiffness ∝ axle load).
    steer = 0.1
    assert steady_turn_radius(entry, steer) == pytest.approx(2.8 / math.tan(steer), rel=0.03)
    # The same body on a 3.4 m wheelbase turns wider, by the wheelbase ratio: the chassis reads the asset's wheels.
    longer = entry.model_copy(update={"vehicle": veh.model_copy(update={"wheelbase_m": 3.4, "front_axle_x_m": 1.7,
                                                                         "rear_axle_x_m": -1.7})})
    assert steady_turn_radius(longer, steer) == pytest.approx(3.4 / math.tan(steer), rel=0.03)
    # Certification recomputes the record from render.obj: an edited wheelbase is refused.
    path = result.entry_dir / "entry.json"
    data = json.loads(path.read_text())
    data["vehicle"]["wheelbase_m"] = 3.0
    path.write_text(json.dumps(data))
    verdict = certify_entry(result.entry_dir)
    assert any(r.code == "geometry_hash" and "entry.json vehicle wheelbase 3 m differs from the wheels found on "
               "render.obj: wheelbase 2.8 m, track 1.56 m" in r.message for r in verdict.reasons), verdict.reasons
