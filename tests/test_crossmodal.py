"""Cross-modal consistency (issue 5 item 8): camera, LiDAR, radar and truth agree through one world, real Embree.

* LiDAR range equals camera depth for the same surface point, within the range noise;
* the id pass, LiDAR instance ids and radar ids name the same entities through ``legend.json``;
* a static scene under a moving camera: scene displacement exactly zero, flow = analytic ego-motion flow;
* radar radial velocity = the trace's relative velocity along the line of sight.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from simready.testing.street import SAMPLE_ID, street_sample
from simready.testing.street import box_body, linear_track
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import Legend, Render, Results
from simready.sensors_hw.camera import decode_id_rgb, pinhole, render_frame
from simready.sensors_hw.lidar import read_ply, scan
from simready.sensors_hw.models import Rig, apply_overrides
from simready.measurement.observe import ObserveOptions, observe
from simready.sensors_hw.scene_build import ego_track
from simready.raycast import SceneGeometry
from simready.truth.correspondence import FrameView, Samples, correspond, project_body_points, static_bodies
from simready.truth.flow import flow_px, scene_displacement_world_m
from simready.world import frames as F
from simready.world.motion import PoseTrack

RIG_KW = {"width_px": 192, "height_px": 108, "line_time_s": 1e-4, "azimuth_steps": 720, "channels": 32}


@pytest.fixture(scope="module")
def street():
    built, rig, trace = street_sample(0.5, **RIG_KW)
    return built, rig.on_body(ego_track(built)), trace


@pytest.fixture(scope="module")
def observed(street, tmp_path_factory) -> Path:
    built, rig, trace = street
    out = tmp_path_factory.mktemp("xmodal") / "obs"
    observe(built, rig, trace, out, options=ObserveOptions(passes=("depth", "id", "lidar", "radar"), video=False))
    return out


def lidar_world_points(rig: Rig, sweep) -> np.ndarray:
    """Each return back in the world, with the LiDAR's pose at its own firing time."""
    T = rig.T_world_sensor("roof_lidar", sweep.t_s)
    return np.einsum("nij,nj->ni", T[:, :3, :3], sweep.points_sensor) + T[:, :3, 3]


def bilinear(img: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    u0, v0 = np.floor(u).astype(int), np.floor(v).astype(int)
    fu, fv = u - u0, v - v0
    return ((1 - fu) * (1 - fv) * img[v0, u0] + fu * (1 - fv) * img[v0, u0 + 1]
            + (1 - fu) * fv * img[v0 + 1, u0] + fu * fv * img[v0 + 1, u0 + 1])


@pytest.mark.parametrize("noise_m", [0.0, 0.02])
def test_lidar_range_equals_camera_depth_for_the_same_surface_point(street, noise_m):
    """The LiDAR (moving ego, each beam at its own time) and the rolling-shutter camera see the same static
    surface: a return's camera z equals the depth pass where it projects, up to the LiDAR's own range noise.

    A return displaced by n along its beam b sits off the surface (normal N); seen along the camera ray c
    (optical axis a) its z exceeds the surface's by n·(c·a)(b·N)/(c·N). Dividing that factor out of the
    camera-vs-LiDAR difference must give back n, the noise, and nothing else.
    """
    built, rig, _ = street
    rig, _ = apply_overrides(rig, {"roof_lidar.range_noise_m": noise_m, "roof_lidar.dropout.probability": 0.0})
    scene = built.scene
    sweep = scan(scene, rig, "roof_lidar", 0.2, np.random.default_rng(1), ignore=built.ignore)
    frame = render_frame(scene, rig, "front_camera", 0.25, ("depth",), ignore=built.ignore)
    view = FrameView.of_frame(frame, rig.sensors["front_camera"], 0)
    body = sweep.hits.body_index[sweep.beam]
    keep = np.flatnonzero(static_bodies(scene)[body])
    world = lidar_world_points(rig, sweep)[keep]
    proj = project_body_points(scene, view, body[keep], np.full_like(world, np.nan), world_static=world)
    k = pinhole(view.model)
    u, v = proj.uv[:, 0], proj.uv[:, 1]
    ok = proj.in_view & (u >= 0) & (u < k.width_px - 1) & (v >= 0) & (v < k.height_px - 1)
    inv = 1.0 / frame.depth.astype(np.float64)  # 1/z is affine on a plane: bilinear 1/z is exact there (0 = sky)
    # Only returns whose four neighbouring pixels all see one plane (same body, same face normal).
    u0 = np.nan_to_num(np.floor(u)).astype(int).clip(0, k.width_px - 2)
    v0 = np.nan_to_num(np.floor(v)).astype(int).clip(0, k.height_px - 2)
    corners = np.stack([v0 * k.width_px + u0 + du + dv * k.width_px for dv in (0, 1) for du in (0, 1)])
    owner = frame.hits.body_index[corners]
    normal = frame.hits.normals_or_zero()[corners]
    ok &= np.all(owner == owner[0], axis=0) & (owner[0] >= 0) & np.all(np.abs(normal - normal[0]) < 1e-5, axis=(0, 2))
    # Per-return geometry: surface normal, beam direction, camera ray and axis at the row that sees it.
    beam = sweep.beam[keep]
    n_surf = sweep.hits.normals_of(beam).astype(np.float64)
    b = sweep.hits.dir_world[beam]
    g = view.row_table[proj.row]
    c = world - g[:, 9:12]
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    axis = g[:, [2, 5, 8]]
    cn = np.einsum("ij,ij->i", c, n_surf)
    ok &= np.abs(cn) > 0.3  # not seen edge-on by the camera
    factor = np.einsum("ij,ij->i", c, axis) * np.einsum("ij,ij->i", b, n_surf) / cn
    ok = np.flatnonzero(ok)
    z_camera = 1.0 / bilinear(inv, u[ok], v[ok])
    noise = (sweep.range_m - sweep.hits.distance_m[sweep.beam])[keep][ok]
    assert len(ok) > 500
    # Up to a millimetre: the camera moves 0.8 mm from row to row, which interpolating across rows ignores.
    np.testing.assert_allclose(proj.depth_m[ok] - z_camera, noise * factor[ok], atol=1e-3)
    recovered = (proj.depth_m[ok] - z_camera) / factor[ok]
    if noise_m:
        assert np.std(recovered) == pytest.approx(noise_m, rel=0.1)
        assert np.all(np.abs(recovered) < 6 * noise_m)


def test_id_pass_lidar_and_radar_ids_agree_through_the_legend(observed, street):
    built, rig, _ = street
    obs = ObservationDir(observed)
    legend = {e.compact_id: e for e in Legend.read(obs.legend).entries}
    car = next(c for c, e in legend.items() if e.entity == f"{SAMPLE_ID}/actor:car_2")
    assert legend[car].semantic_class == "car" and legend[car].class_id == 10
    cam = set(np.unique(decode_id_rgb(np.array(Image.open(obs.file(obs.frame_name("front_camera", 4, "id"))))))
              .tolist())
    lid = set(read_ply(obs.file(obs.frame_name("roof_lidar", 2, "lidar")))["instance_id"].tolist())
    with open(obs.file(obs.frame_name("front_radar", 3, "radar"))) as f:
        rad = {int(r["instance_id"]) for r in csv.DictReader(f)}
    assert car in cam and car in lid and car in rad  # the car ahead, by every sensor, under one id
    assert (cam - {0}) | lid | rad <= set(legend)
    assert built.scene.compact_ids[f"{SAMPLE_ID}/actor:ego"] not in cam | lid | rad  # nobody sees its carrier


def test_lidar_points_land_on_pixels_of_the_same_entity(street):
    """Static returns projected into the id pass (each at its row's time) carry the LiDAR's instance id."""
    built, rig, _ = street
    scene = built.scene
    sweep = scan(scene, rig, "roof_lidar", 0.2, np.random.default_rng(2), ignore=built.ignore)
    frame = render_frame(scene, rig, "front_camera", 0.25, ("id", "depth"), ignore=built.ignore)
    view = FrameView.of_frame(frame, rig.sensors["front_camera"], 0)
    body = sweep.hits.body_index[sweep.beam]
    keep = static_bodies(scene)[body]
    world = sweep.hits.point_world[sweep.beam][keep]  # noise-free points: identity, not range, is compared
    proj = project_body_points(scene, view, body[keep], np.full_like(world, np.nan), world_static=world)
    ok = proj.in_view
    u, v = np.rint(proj.uv[ok, 0]).astype(int), np.rint(proj.uv[ok, 1]).astype(int)
    lidar_ids = sweep.instance_id[keep][ok]
    seen_from_camera = np.abs(frame.depth[v, u] - proj.depth_m[ok]) < 0.05 * proj.depth_m[ok]
    assert seen_from_camera.sum() > 500
    assert np.mean(frame.id[v, u][seen_from_camera] == lidar_ids[seen_from_camera]) > 0.99


def test_static_scene_under_a_moving_camera_has_zero_displacement_and_ego_motion_flow():
    """Forward motion by d along the optical axis: u_B − c = (u − c)·Z / (Z − d), exactly for every pixel."""
    static = [
        box_body("s/instance:wall", (1.0, 60.0, 40.0), PoseTrack.constant(F.make_transform(np.eye(3), [30, 0, -10])),
                 5, (0.5,) * 3, 0.5),
        box_body("s/instance:ground", (80.0, 60.0, 0.2), PoseTrack.constant(F.make_transform(np.eye(3), [20, 0, -0.2])),
                 1, (0.3,) * 3, 0.2),
        box_body("s/instance:box", (2.0, 2.0, 3.0), PoseTrack.constant(F.make_transform(F.rot_z(0.4), [12, 2, 0])),
                 5, (0.5,) * 3, 0.5),
    ]
    speed, dt = 10.0, 0.05
    ego = linear_track((0.0, 0.0, 0.0), (speed, 0.0, 0.0), t_end_s=1.0)
    cam = {"width_px": 120, "height_px": 80, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 200.0, "rate_hz": 20.0,
           "phase_s": 0.0, "shutter": "global", "line_time_s": 0.0, "distortion_k1": 0.0}
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [1.0, 0.0, 1.5]}},
                         "sensors": {"cam": cam}}, body=ego)
    scene = SceneGeometry(static)
    fa = render_frame(scene, rig, "cam", 0.1, ("depth",))
    fb = render_frame(scene, rig, "cam", 0.1 + dt, ("depth",))
    model = rig.sensors["cam"]
    va, vb = FrameView.of_frame(fa, model, 0), FrameView.of_frame(fb, model, 1)
    sa, sb = Samples.of_hits(scene, va, fa.hits), Samples.of_hits(scene, vb, fb.hits)
    fwd, bwd = correspond(scene, sa, vb, "forward"), correspond(scene, sb, va, "backward")
    assert np.all(scene_displacement_world_m(fwd) == 0.0) and np.all(scene_displacement_world_m(bwd) == 0.0)
    k = pinhole(model)
    z = fa.depth.reshape(-1)[sa.pixel].astype(np.float64)  # the depth pass, not the truth's own geometry
    d = speed * dt
    analytic = np.stack([(sa.u - k.cx) * (z / (z - d) - 1.0), (sa.v - k.cy) * (z / (z - d) - 1.0)], axis=1)
    front = z > d + 0.5
    np.testing.assert_allclose(flow_px(fwd)[front], analytic[front], atol=2e-3)
    assert np.abs(analytic[front]).max() > 3.0  # real motion, not a trivial zero
    # Backward: moving away, u_A − c = (u_B − c)·Z_B / (Z_B + d).
    zb = fb.depth.reshape(-1)[sb.pixel].astype(np.float64)
    back = np.stack([(sb.u - k.cx) * (zb / (zb + d) - 1.0), (sb.v - k.cy) * (zb / (zb + d) - 1.0)], axis=1)
    np.testing.assert_allclose(flow_px(bwd), back, atol=2e-3)


def test_static_displacement_is_exactly_zero_under_a_turning_rolling_shutter_camera(street):
    built, rig, _ = street
    yaw = 0.6
    t = np.arange(0, 26) * 0.02
    turning = PoseTrack(t, np.stack([8.0 * t, -1.75 + 0 * t, 0 * t], 1), F.quat_from_yaw(yaw * t),
                        np.tile([8.0, 0.0, 0.0], (len(t), 1)), np.tile([0.0, 0.0, yaw], (len(t), 1)))
    rig = rig.on_body(turning)
    scene = built.scene
    fa = render_frame(scene, rig, "front_camera", 0.1, ("id",), ignore=built.ignore)
    fb = render_frame(scene, rig, "front_camera", 0.15, ("id",), ignore=built.ignore)
    model = rig.sensors["front_camera"]
    sa = Samples.of_hits(scene, FrameView.of_frame(fa, model, 0), fa.hits)
    fwd = correspond(scene, sa, FrameView.of_frame(fb, model, 1), "forward", ignore=built.ignore)
    disp = scene_displacement_world_m(fwd)
    static = fwd.static
    assert static.sum() > 1000 and np.all(disp[static] == 0.0)
    assert np.all(np.linalg.norm(disp[~static], axis=1) > 0.05)  # the actors did move (slowest: 1.3 m/s)


def test_radar_radial_velocity_matches_the_trace_relative_velocity(observed, street):
    built, _, trace = street
    obs = ObservationDir(observed)
    legend = {e.compact_id: e.entity for e in Legend.read(obs.legend).entries}
    results = Results.read(obs.results)
    mount = np.array(Render.read(obs.render).rig["front_radar"]["T_body_mount"])
    df = trace.ticks
    checked = 0
    for frame in results.sweeps["front_radar"]:
        t = frame.t_s
        with open(obs.file(obs.frame_name("front_radar", frame.tick, "radar"))) as f:
            rows = list(csv.DictReader(f))
        ego = df[(df["actor_id"] == "ego")].set_index("t")
        # The trace's state at t (constant velocities here, so the nearest tick's twist is the twist at t).
        row_e = ego.iloc[int(np.argmin(np.abs(ego.index.to_numpy() - t)))]
        R_e = F.matrix_from_quat(row_e[["qx", "qy", "qz", "qw"]].to_numpy(float))
        v_e = row_e[["vx", "vy", "vz"]].to_numpy(float)
        R_s = R_e @ mount[:3, :3]
        for r in rows:
            entity = legend[int(r["instance_id"])]
            if "/actor:" not in entity:
                v_t = np.zeros(3)
            else:
                actor = entity.split("/actor:")[1]
                a = df[df["actor_id"] == actor].set_index("t")
                v_t = a.iloc[int(np.argmin(np.abs(a.index.to_numpy() - t)))][["vx", "vy", "vz"]].to_numpy(float)
            az, el = float(r["azimuth_rad"]), float(r["elevation_rad"])
            los = R_s @ np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
            expected = float((v_t - v_e) @ los)
            # Velocity noise 0.05 m/s (1σ) and the azimuth noise's tilt of the line of sight.
            assert float(r["radial_velocity_mps"]) == pytest.approx(expected, abs=0.25), (entity, t)
            checked += "/actor:" in entity
    assert checked >= 5
