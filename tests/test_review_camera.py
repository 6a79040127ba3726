"""The camera overlay of the review page (issue 28 item 8), against an observed street: LiDAR points and truth boxes
derived from the published files land where the camera's own id pass shows their owners."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from simready.artifacts.layout import ObservationDir
from simready.measurement.observe import ObserveOptions, observe
from simready.artifacts.records import Legend, LidarSweep, Results
from simready.review.camera import (BEV_CELL_M, BEV_Z_FLOOR_M, BEV_Z_STEP_M, DEPTH_STEP_M, POINT_CELL_PX, CameraView,
                                    SweepPoints, _Scene, _sweep_for, camera_overlay, folder_drawings,
                                    lidar_world_points, overlay_script)
from simready.sensors_hw.camera import decode_depth, decode_id_rgb, read_depth_file
from simready.sensors_hw.trace_input import trace_from_ticks
from simready.testing.street import ACTORS, street_sample

SMALL = {"width_px": 160, "height_px": 96, "line_time_s": 2e-4, "azimuth_steps": 512, "channels": 16}
CAMERA, LIDAR, EGO = "front_camera", "roof_lidar", "ego"


@pytest.fixture(scope="module")
def street(tmp_path_factory):
    """An observed street (rolling shutter, a distorted RGB, moving cars and a pedestrian) and its trace, with the
    actors' sizes in the header as the simulator writes them."""
    built, rig, trace = street_sample(0.42, **SMALL)
    out = tmp_path_factory.mktemp("camera") / "obs"
    observe(built, rig, trace, out, options=ObserveOptions(video=False))
    header = {**trace.header, "actor_dims": {a[0]: list(a[4]) for a in ACTORS},
              "actor_kinds": {a[0]: "pedestrian" if a[0] == "ped" else "vehicle" for a in ACTORS}}
    return ObservationDir(out), trace_from_ticks(trace.ticks, header)


def _ids(obs: ObservationDir, tick: int) -> np.ndarray:
    return decode_id_rgb(np.asarray(Image.open(obs.root / CAMERA / f"{tick:08d}.id.png").convert("RGB")))


def _pinhole(obs: ObservationDir, tick: int) -> CameraView:
    """The frame's view without the RGB's lens distortion: the id pass's geometry."""
    results = Results.read(obs.results)
    with np.load(io.BytesIO(obs.file(ObservationDir.camera_poses_name(CAMERA)).read_bytes())) as npz:
        rows = dict(zip(npz["tick"].tolist(), npz["T_world_camera"]))
    return dataclasses.replace(CameraView.of(results.cameras[CAMERA], rows[tick]), k1=0.0, k2=0.0)


def test_the_lidar_is_placed_as_the_published_sweep_pose_says(street):
    """The ego's pose from the trace and the rig's mount give each sweep's published mid-sweep pose."""
    obs, trace = street
    results = Results.read(obs.results)
    from simready.artifacts.records import Render
    from simready.sensors_hw.models import Rig

    rig = Rig.from_settings(Render.read(obs.render).rig)
    sweeps = [f for f in results.files if f.pass_name == "lidar"]
    assert sweeps
    for f in sweeps:
        T = trace.tracks()[EGO].pose_at(f.t, clamp=True) @ rig.T_body_sensor(LIDAR)
        assert np.allclose(T, np.asarray(f.T_world_sensor), atol=1e-6), f.path


def test_projected_points_land_on_their_own_instance_in_the_id_pass(street):
    """Each LiDAR point with an instance id projects (pinhole, the row's pose, actors moved to the frame's time) onto
    a pixel of that instance: on the cars and the pedestrian too, though the sweep fires up to 0.1 s from the
    frame."""
    obs, trace = street
    results = Results.read(obs.results)
    from simready.artifacts.records import Render
    from simready.sensors_hw.models import Rig

    rig = Rig.from_settings(Render.read(obs.render).rig)
    legend = Legend.read(obs.legend)
    actors = {e.compact_id: e.entity.rsplit("actor:", 1)[-1] for e in legend.entries if "actor:" in e.entity}
    scene = _Scene(trace, EGO, {c: a for c, a in actors.items() if a in trace.tracks()})
    sweeps = [s for s in results.sweeps[LIDAR] if isinstance(s, LidarSweep)]
    plys = {f.tick: obs.file(f.path) for f in results.files if f.pass_name == "lidar"}
    on_actor = agree = near_actor = total = 0
    depth_errors = []
    for frame in results.cameras[CAMERA].frames:
        sweep = _sweep_for(sweeps, frame.t0_s)
        assert sweep is not None
        world, ids = lidar_world_points(plys[sweep.tick], sweep, rig, LIDAR, scene, frame.t0_s)
        view = _pinhole(obs, frame.tick)
        uv, p_cam = view.project(world)
        keep = view.inside(uv) & (ids > 0)
        u, v = np.rint(uv[keep]).astype(int).T
        image = _ids(obs, frame.tick)
        same = image[v, u] == ids[keep]
        # The camera's depth pass at the point's pixel is the point's own depth, up to what a pixel spans (on the
        # road seen at a grazing angle, a few per cent at this resolution).
        depth = decode_depth(read_depth_file(obs.root / CAMERA / f"{frame.tick:08d}.depth.f32.bin"),
                             frame.projection.near_m).reshape(view.height_px, view.width_px)
        static = ~np.isin(ids[keep], list(scene.actor_of_id))
        depth_errors.append((np.abs(depth[v, u] - p_cam[keep, 2]) / p_cam[keep, 2])[static & same])
        total, agree = total + len(same), agree + int(same.sum())
        # A point on a moving actor: its pixel or a neighbour shows that actor (the actors are a few pixels wide).
        for uu, vv, i in zip(u, v, ids[keep]):
            if scene.actor_of_id.get(int(i), EGO) != EGO:
                on_actor += 1
                near_actor += bool((image[max(vv - 1, 0):vv + 2, max(uu - 1, 0):uu + 2] == i).any())
    assert total > 1000 and agree / total > 0.95, (agree, total)
    assert on_actor > 100 and near_actor / on_actor > 0.97, (near_actor, on_actor)
    errors = np.concatenate(depth_errors)
    assert np.median(errors) < 0.02 and np.quantile(errors, 0.9) < 0.06, np.quantile(errors, [0.5, 0.9, 0.99])


def test_each_beam_is_placed_by_the_ego_pose_at_its_own_time(street):
    """A point fired ``t`` into its sweep goes to the world by the sensor's pose at ``sampleTime + t`` (results.json's
    rule), point by point; a point on an actor then moves with it to the frame's time."""
    from simready.artifacts.records import Render
    from simready.sensors_hw.lidar import read_ply
    from simready.sensors_hw.models import Rig
    from simready.world.frames import invert

    obs, trace = street
    results = Results.read(obs.results)
    rig = Rig.from_settings(Render.read(obs.render).rig)
    legend = Legend.read(obs.legend)
    actor_of_id = {e.compact_id: e.entity.rsplit("actor:", 1)[-1] for e in legend.entries if "actor:" in e.entity}
    scene = _Scene(trace, EGO, actor_of_id)
    sweep = [s for s in results.sweeps[LIDAR] if isinstance(s, LidarSweep)][-1]
    ply = next(obs.file(f.path) for f in results.files if f.pass_name == "lidar" and f.tick == sweep.tick)
    t_frame = sweep.t0_s + 0.03
    world, ids = lidar_world_points(ply, sweep, rig, LIDAR, scene, t_frame)
    cols = read_ply(ply)
    late = np.flatnonzero(cols["t"] > 0.6 * sweep.sweep_s)  # fired well after the sweep's start
    picks = np.concatenate([late[:: max(1, len(late) // 40)], np.flatnonzero(np.isin(ids, [c for c, a in actor_of_id.items()
                                                                                          if a != EGO]))[:20]])
    assert len(picks) > 40
    for i in picks:
        t = sweep.t0_s + float(cols["t"][i])
        p = np.array([cols["x"][i], cols["y"][i], cols["z"][i], 1.0], np.float64)
        want = trace.tracks()[EGO].pose_at(t, clamp=True) @ rig.T_body_sensor(LIDAR) @ p
        actor = actor_of_id.get(int(ids[i]))
        if actor is not None:
            track = trace.tracks()[actor]
            want = track.pose_at(t_frame, clamp=True) @ invert(track.pose_at(t, clamp=True)) @ want
        assert np.allclose(world[i], want[:3], atol=1e-6), (i, world[i], want)


def test_each_box_centre_lies_on_its_actor_and_the_drawing_round_trips(street):
    obs, trace = street
    drawing = camera_overlay(obs, trace, EGO, CAMERA)
    assert drawing is not None
    legend = Legend.read(obs.legend)
    compact = {e.entity.rsplit("actor:", 1)[-1]: e.compact_id for e in legend.entries if "actor:" in e.entity}
    results = Results.read(obs.results)
    k1 = results.cameras[CAMERA].projection.distortion.k1
    assert k1 != 0.0  # the drawing is distorted as the RGB is; the id pass is not
    centres = 0
    for record in drawing.meta["frames"]:
        assert record["n"] > 100 and EGO not in {b["id"] for b in record["boxes"]}
        ids = _ids(obs, record["tick"])
        view = _pinhole(obs, record["tick"])
        for box in record["boxes"]:
            assert len(box["e"]) % 4 == 0 and box["e"]
            if box["c"] is None or not box["visible"]:
                continue
            # Undistort the drawn centre to the id pass's pixel (Brown, inverted by fixed-point iteration).
            from simready.sensors_hw.camera import undistort_normalized

            xy = (np.array(box["c"]) - [view.cx, view.cy]) / [view.fx, view.fy]
            u, v = np.rint(undistort_normalized(xy[None], k1, 0.0)[0] * [view.fx, view.fy] + [view.cx, view.cy]).astype(int)
            patch = ids[max(v - 2, 0):v + 3, max(u - 2, 0):u + 3]
            assert (patch == compact[box["id"]]).any(), (record["tick"], box)
            centres += 1
    assert centres >= 3

    # The script unpacks to the same drawing: a JSON head and each frame's columns, rows and depths.
    script = overlay_script({f"base/{CAMERA}": drawing})
    assert script == overlay_script({f"base/{CAMERA}": drawing})  # the same files give the same bytes
    blob = gzip.decompress(base64.b64decode(json.loads(script.split("=", 1)[1].strip().rstrip(";"))))
    size = int.from_bytes(blob[:4], "little")
    head = json.loads(blob[4:4 + size])[f"base/{CAMERA}"]
    body = blob[4 + size:]
    assert head["cell_px"] == POINT_CELL_PX and head["depth_step_m"] == DEPTH_STEP_M
    for record, points in zip(head["frames"], drawing.points):
        n, o = record["n"], record["offset"]
        assert body[o:o + 5 * n] == points
        u = np.frombuffer(points[:2 * n], "<u2")
        v = np.frombuffer(points[2 * n:4 * n], "<u2")
        assert u.max() < head["width"] / POINT_CELL_PX and v.max() < head["height"] / POINT_CELL_PX
        assert len(set(zip(u.tolist(), v.tolist()))) == n  # one point per square


def test_a_folder_without_camera_frames_draws_nothing(street, tmp_path):
    obs, trace = street
    assert camera_overlay(obs, trace, EGO, "no_such_camera") is None
    assert camera_overlay(ObservationDir(Path(obs.root)), trace, EGO, LIDAR) is None


def test_the_bev_cloud_is_the_highest_point_per_square_of_the_placed_sweep_and_lies_under_the_boxes(street):
    """Issue 28 item 8: the bird's-eye view's LiDAR is each sweep placed by the camera overlay's code (one authority),
    actors' points moved to the sweep's start: one square per :data:`BEV_CELL_M` inside the view's box with its
    highest point, and every actor in the box has raised points inside its footprint there. The cameras' drawings
    are the same with or without it."""
    from simready.artifacts.records import Render
    from simready.sensors_hw.models import Rig

    obs, trace = street
    results = Results.read(obs.results)
    rig = Rig.from_settings(Render.read(obs.render).rig)
    legend = Legend.read(obs.legend)
    scene = _Scene(trace, EGO, {e.compact_id: e.entity.rsplit("actor:", 1)[-1] for e in legend.entries
                                if "actor:" in e.entity and e.entity.rsplit("actor:", 1)[-1] in trace.tracks()})
    ego = trace.tracks()[EGO].pose_at(0.42, clamp=True)[:3, 3]
    box = (float(ego[0]) - 20.0, float(ego[0]) + 45.0, float(ego[1]) - 12.0, float(ego[1]) + 12.0)
    drawn = folder_drawings(obs, trace, EGO, [CAMERA], box)
    assert drawn.cameras[CAMERA] == camera_overlay(obs, trace, EGO, CAMERA)
    cloud = drawn.cloud
    assert cloud is not None and cloud.meta["box"] == [round(v, 3) for v in box] and cloud.meta["cell_m"] == BEV_CELL_M
    sweeps = {s.tick: s for s in results.sweeps[LIDAR] if isinstance(s, LidarSweep)}
    plys = {f.tick: obs.file(f.path) for f in results.files if f.pass_name == "lidar"}
    assert [r["tick"] for r in cloud.meta["sweeps"]] == sorted(sweeps)
    n_cols = int(np.ceil((box[1] - box[0]) / BEV_CELL_M))
    actors_seen = 0
    for record, packed in zip(cloud.meta["sweeps"], cloud.points):
        sweep, n = sweeps[record["tick"]], record["n"]
        assert len(packed) == 5 * n and n > 500
        u = np.frombuffer(packed[:2 * n], "<u2").astype(int)
        v = np.frombuffer(packed[2 * n:4 * n], "<u2").astype(int)
        z = BEV_Z_FLOOR_M + np.frombuffer(packed[4 * n:], np.uint8) * BEV_Z_STEP_M
        # The squares are those of the placed points inside the box, each with its highest point.
        world = SweepPoints.read(plys[sweep.tick], sweep, rig, LIDAR, scene).at(scene, sweep.t0_s)
        ground = trace.tracks()[EGO].pose_at(sweep.t0_s, clamp=True)[2, 3]
        inside = (world[:, 0] >= box[0]) & (world[:, 0] < box[1]) & (world[:, 1] >= box[2]) & (world[:, 1] < box[3])
        cols = np.floor((world[inside, 0] - box[0]) / BEV_CELL_M).astype(int)
        rows = np.floor((world[inside, 1] - box[2]) / BEV_CELL_M).astype(int)
        cells = rows * n_cols + cols
        assert np.array_equal(v * n_cols + u, np.unique(cells))  # row then column order, one per square
        highest = {c: -np.inf for c in cells.tolist()}
        for c, h in zip(cells.tolist(), (world[inside, 2] - ground).tolist()):
            highest[c] = max(highest[c], h)
        want = np.array([highest[c] for c in (v * n_cols + u).tolist()])
        assert np.all(np.abs(np.clip(want, BEV_Z_FLOOR_M, None) - z) <= BEV_Z_STEP_M / 2 + 1e-9)
        # Every other actor in the box at the sweep's start has raised points inside its footprint.
        x, y = box[0] + (u + 0.5) * BEV_CELL_M, box[2] + (v + 0.5) * BEV_CELL_M
        for name, dims in ((a[0], a[4]) for a in ACTORS):
            T = trace.tracks()[name].pose_at(sweep.t0_s, clamp=True)
            local = (np.stack([x, y], axis=1) - T[:2, 3]) @ T[:2, :2]
            if name == EGO or not (box[0] + 3 < T[0, 3] < box[1] - 3 and box[2] + 3 < T[1, 3] < box[3] - 3):
                continue
            on = (np.abs(local[:, 0]) <= dims[0] / 2 + BEV_CELL_M) & (np.abs(local[:, 1]) <= dims[1] / 2 + BEV_CELL_M)
            assert (on & (z > 0.3)).sum() >= 1, (record["tick"], name)
            actors_seen += 1
    assert actors_seen >= 3
