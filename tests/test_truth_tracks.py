"""Tracks (SPEC §11): lives, world facts apart from camera facts, lifecycle events, inclusive pixel boxes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.testing.street import box_body, linear_track
from simready.sensors_hw.camera import render_frame
from simready.sensors_hw.models import Rig
from simready.raycast import SceneGeometry
from simready.truth.correspondence import FrameView
from simready.truth.kernels.tracks import body_pixel_boxes, body_pixel_boxes_numpy
from simready.truth.tracks import TrackBuilder, inclusive_box
from simready.world import frames as F
from simready.world.motion import PoseTrack

W, H = 64, 48
CAR = "t/actor:car"
PED = "t/actor:ped"


def at(x, y, z=0.0) -> PoseTrack:
    return PoseTrack.constant(F.make_transform(np.eye(3), [x, y, z]))


def blinking(x: float, y: float, present: list[bool], dt: float = 0.5) -> PoseTrack:
    t = np.arange(len(present)) * dt
    n = len(t)
    return PoseTrack(t, np.tile([x, y, 0.0], (n, 1)), np.tile([0, 0, 0, 1.0], (n, 1)), np.zeros((n, 3)),
                     np.zeros((n, 3)), present=present)


@pytest.fixture(scope="module")
def tracked():
    """A car drives left to right at 30 m behind a pillar at 15 m; a pedestrian blinks out and back."""
    bodies = [
        box_body("t/instance:pillar", (1.0, 3.0, 6.0), at(15.0, 0.0, -1.0), 6, (0.5,) * 3, 0.5),
        box_body("t/instance:far_box", (2.0, 2.0, 2.0), at(300.0, 0.0), 5, (0.5,) * 3, 0.5),
        box_body("t/instance:behind_box", (2.0, 2.0, 2.0), at(-10.0, 0.0), 5, (0.5,) * 3, 0.5),
        box_body(CAR, (4.5, 1.9, 1.5), linear_track((30.0, -50.0, 0.0), (0.0, 20.0, 0.0), t_end_s=5.0), 10,
                 (0.5,) * 3, 0.5),
        box_body(PED, (0.5, 0.6, 1.8), blinking(10.0, 3.0, [True] * 4 + [False] * 3 + [True] * 4), 20, (0.5,) * 3, 0.5),
    ]
    scene = SceneGeometry(bodies)
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [0.0, 0.0, 1.0]}},
                         "sensors": {"cam": {"width_px": W, "height_px": H, "hfov_deg": 90.0, "near_m": 0.1,
                                             "far_m": 200.0, "rate_hz": 10.0, "phase_s": 0.0, "shutter": "global",
                                             "line_time_s": 0.0, "distortion_k1": 0.0}}})
    builder = TrackBuilder(scene, "cam")
    ids = {}
    for k, t in enumerate(np.round(np.arange(0.0, 5.0 + 1e-9, 0.1), 9)):
        frame = render_frame(scene, rig, "cam", float(t), ("id",))
        builder.add(FrameView.of_frame(frame, rig.sensors["cam"], k), frame.hits)
        ids[k] = frame.id
    return scene, builder, ids


def events_of(builder: TrackBuilder, entity: str) -> list[tuple[str, str]]:
    return [(e["track_id"], e["event"]) for e in builder.events if e["entity"] == entity]


def test_car_lifecycle_in_frame_order(tracked):
    _, builder, _ = tracked
    names = [e for _, e in events_of(builder, CAR)]
    assert names == ["born", "entered_frame", "became_visible", "became_occluded", "became_visible", "exited_frame"]
    assert {tid for tid, _ in events_of(builder, CAR)} == {f"{CAR}#0"}
    assert builder.events[0]["status"] in ("visible", "out_of_frame")


def test_absence_ends_a_life_and_a_new_one_begins(tracked):
    _, builder, _ = tracked
    ev = events_of(builder, PED)
    assert [e for _, e in ev] == ["born", "died", "born"]
    assert [tid for tid, _ in ev] == [f"{PED}#0", f"{PED}#0", f"{PED}#1"]
    table = builder.tracks_table().to_pandas()
    ped = table[table["entity"] == PED]
    assert set(ped["track_id"]) == {f"{PED}#0", f"{PED}#1"}
    assert ped["present"].all()  # an absent entity has no observation
    assert not ((ped["t_s"] > 1.5 + 1e-9) & (ped["t_s"] < 3.0 - 1e-9)).any()


def test_camera_facts_are_one_status_each_and_world_facts_stay(tracked):
    scene, builder, _ = tracked
    table = builder.tracks_table().to_pandas()
    flags = table[["visible", "occluded", "beyond_range", "out_of_frame", "behind_camera"]].to_numpy()
    assert np.all(flags.sum(axis=1) == 1)
    assert set(table.loc[table["entity"] == "t/instance:far_box", "status"]) == {"beyond_range"}
    assert set(table.loc[table["entity"] == "t/instance:behind_box", "status"]) == {"behind_camera"}
    hidden = table[(table["entity"] == CAR) & table["occluded"]]
    assert len(hidden) > 0 and (hidden["visible_pixels"] == 0).all() and (hidden["box_u_min"] == -1).all()
    expected = scene.bodies[scene.body_indices([CAR])[0]].track.sample(hidden["t_s"].to_numpy())
    np.testing.assert_allclose(hidden[["x", "y", "z"]].to_numpy(), expected.position_m)  # world facts, while hidden
    np.testing.assert_allclose(hidden[["vx", "vy", "vz"]].to_numpy(), expected.velocity_mps)
    assert (hidden["amodal_u_min"] >= 0).all()  # where it would be: behind the pillar


def test_visible_boxes_are_the_inclusive_bounds_of_the_id_pass(tracked):
    scene, builder, ids = tracked
    table = builder.tracks_table().to_pandas()
    visible = table[table["visible"]]
    assert len(visible) > 20
    for row in visible.itertuples():
        v, u = np.nonzero(ids[row.tick] == row.compact_id)
        assert (row.box_u_min, row.box_v_min, row.box_u_max, row.box_v_max) == (u.min(), v.min(), u.max(), v.max())
        assert row.visible_pixels == len(u)
        assert row.amodal_u_min <= row.box_u_min and row.amodal_v_min <= row.box_v_min
        assert row.amodal_u_max >= row.box_u_max and row.amodal_v_max >= row.box_v_max


def test_inclusive_box_uses_integer_pixel_centres():
    box = inclusive_box(np.array([-0.5, 0.4, -5.0]), np.array([-0.5, 0.49, 10.0]), np.array([0.49, 2.6, 100.0]),
                        np.array([0.49, 0.51, 11.0]), 64, 48)
    np.testing.assert_array_equal(box, [[0, 0, 0, 0], [0, 0, 3, 1], [0, 10, 63, 11]])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(1, 7), st.integers(1, 4),
       st.sampled_from(["ascending", "shuffled", "repeated"]))
def test_body_pixel_boxes_walks_runs_as_the_numpy_scatters(seed, width, height, n_bodies, order):
    """The compiled pass (one update per run of a body's pixels along a row) gives the counts and boxes of the
    per-pixel numpy scatters, whatever the order of the hit pixels."""
    rng = np.random.default_rng(seed)
    body_index = rng.integers(0, n_bodies, width * height).astype(np.int32)
    body_index[rng.random(width * height) < 0.2] = 0  # runs of one body
    hit = np.flatnonzero(rng.random(width * height) < 0.8)
    if order == "shuffled":
        hit = rng.permutation(hit)
    elif order == "repeated":
        hit = np.concatenate([hit, hit[::-1], hit[: len(hit) // 2]])
    got = body_pixel_boxes(hit.astype(np.int64), body_index, width, height, n_bodies + 1)
    want = body_pixel_boxes_numpy(hit, body_index, width, height, n_bodies + 1)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
