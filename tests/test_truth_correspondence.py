"""Correspondence A→B and B→A (SPEC §11): rolling-shutter projection, exact re-cast, flags, flow, displacement."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from simready.testing.street import box_body, linear_track
from simready.sensors_hw.camera import render_frame
from simready.sensors_hw.models import Rig
from simready.raycast import SceneGeometry
from simready.truth.correspondence import (FrameView, Samples, correspond, project_body_points,
                                            project_body_points_numpy)
from simready.truth.precision import BARYCENTRIC_STEP, FLOW_STEP_PX, quantized
from simready.truth.stored import expanded, stored
from simready.truth.flow import (bool_column, dense, distorted_flow, flow_px, flow_px_distorted, flow_table,
                                 flow_table_of, scene_displacement_world_m)
from simready.truth.kernels.tables import quantized32
from simready.truth.motion_field import motion_field
from simready.world import frames as F
from simready.world.motion import PoseTrack

W, H = 96, 64
EGO = "t/actor:ego"


def camera(**kw) -> dict:
    base = {"width_px": W, "height_px": H, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 200.0, "rate_hz": 20.0,
            "phase_s": 0.0, "shutter": "global", "line_time_s": 0.0, "distortion_k1": 0.0, "vignette": 0.0}
    return {**base, **kw}


def rig_on(body: PoseTrack, **cam) -> Rig:
    return Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [0.0, 0.0, 1.5]}},
                          "sensors": {"cam": camera(**cam)}}, body=body)


def static(x, y, z=0.0, yaw=0.0) -> PoseTrack:
    return PoseTrack.constant(F.make_transform(F.rot_z(yaw), [x, y, z]))


def wall(distance_m: float = 20.0) -> object:
    return box_body("t/instance:wall", (1.0, 80.0, 60.0), static(distance_m + 0.5, 0.0, -20.0), 5, (0.6, 0.6, 0.6), 0.5)


def frames(scene: SceneGeometry, rig: Rig, t_a: float, t_b: float):
    fa = render_frame(scene, rig, "cam", t_a, ("depth", "id"), ignore=[EGO])
    fb = render_frame(scene, rig, "cam", t_b, ("depth", "id"), ignore=[EGO])
    model = rig.sensors["cam"]
    va, vb = FrameView.of_frame(fa, model, 0), FrameView.of_frame(fb, model, 1)
    return fa, fb, va, vb, Samples.of_hits(scene, va, fa.hits), Samples.of_hits(scene, vb, fb.hits)


def test_box_moving_across_a_static_camera_moves_by_its_velocity():
    car = box_body("t/actor:car", (4.0, 2.0, 1.5), linear_track((8.0, -3.0, 0.0), (0.0, 6.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5)
    scene = SceneGeometry([wall(), car])
    rig = rig_on(PoseTrack.constant())
    fa, fb, va, vb, sa, sb = frames(scene, rig, 0.2, 0.25)
    fwd = correspond(scene, sa, vb, "forward")
    car_idx = scene.body_indices(["t/actor:car"])[0]
    on_car = sa.body == car_idx
    disp = scene_displacement_world_m(fwd)
    np.testing.assert_allclose(disp[on_car], np.tile([0.0, 0.3, 0.0], (on_car.sum(), 1)), atol=1e-9)
    assert np.all(disp[~on_car] == 0.0)
    # The car's visible points project where the car is at B: B's id pass shows the car there.
    ok = fwd.valid & on_car
    u = np.rint(fwd.projection.uv[ok, 0]).astype(int)
    v = np.rint(fwd.projection.uv[ok, 1]).astype(int)
    assert ok.sum() > 100
    assert np.mean(fb.id[v, u] == scene.compact_ids["t/actor:car"]) > 0.97


def test_occlusion_forward_and_disocclusion_backward_are_computed_each_from_its_own_frame():
    """A car crosses in front of the wall: wall seen at A is hidden at B (occluded), wall seen at B was hidden at A."""
    car = box_body("t/actor:car", (4.0, 2.0, 3.0), linear_track((10.0, -2.0, 0.0), (0.0, 20.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5)
    scene = SceneGeometry([wall(), car])
    rig = rig_on(PoseTrack.constant())
    fa, fb, va, vb, sa, sb = frames(scene, rig, 0.2, 0.3)
    fwd = correspond(scene, sa, vb, "forward")
    bwd = correspond(scene, sb, va, "backward")
    wall_idx = scene.body_indices(["t/instance:wall"])[0]
    car_id = scene.compact_ids["t/actor:car"]
    occluded = fwd.hidden & (sa.body == wall_idx)
    disoccluded = bwd.hidden & (sb.body == wall_idx)
    assert occluded.sum() > 50 and disoccluded.sum() > 50
    # Wall points occluded at B lie where B sees the car; those disoccluded at B were behind the car at A.
    u = np.rint(fwd.projection.uv[occluded, 0]).astype(int)
    v = np.rint(fwd.projection.uv[occluded, 1]).astype(int)
    assert np.all(fb.id[v, u] == car_id)
    u = np.rint(bwd.projection.uv[disoccluded, 0]).astype(int)
    v = np.rint(bwd.projection.uv[disoccluded, 1]).astype(int)
    assert np.all(fa.id[v, u] == car_id)
    # Different pixel sets in different frames: not one the negation of the other.
    assert set(sa.pixel[occluded]) != set(sb.pixel[disoccluded])
    assert flow_table(fwd).column_names.count("occluded") == 1 and "disoccluded" in flow_table(bwd).column_names
    assert fwd.hidden_name == "occluded" and bwd.hidden_name == "disoccluded"


def test_camera_turning_sends_points_out_of_frame_and_behind():
    yaw_rate = 3.2  # rad/s
    t = np.arange(0, 51) * 0.02
    ego = PoseTrack(t, np.zeros((len(t), 3)), F.quat_from_yaw(yaw_rate * t), np.zeros((len(t), 3)),
                    np.tile([0.0, 0.0, yaw_rate], (len(t), 1)))
    scene = SceneGeometry([wall(5.0)])
    rig = rig_on(ego)
    _, _, va, vb, sa, _ = frames(scene, rig, 0.0, 0.2)  # turned 37° left: the right part leaves the frame
    fwd = correspond(scene, sa, vb, "forward")
    p = fwd.projection
    assert p.out_of_frame.any() and fwd.valid.any()
    assert not (fwd.valid & p.out_of_frame).any()
    _, _, _, vc, _, _ = frames(scene, rig, 0.0, 1.0)  # turned 183°: the wall is behind the camera
    back = correspond(scene, sa, vc, "forward").projection
    assert back.behind_camera.all() and np.all(np.isnan(back.uv))


def test_rolling_shutter_target_pixel_is_sampled_at_the_points_own_row_time():
    """Fast sideways ego, rolling shutter: a projection at B's first-row pose would miss by pixels; the
    fixed point lands on the row whose time saw the point, so B's depth pass agrees to float precision."""
    ego = linear_track((0.0, 0.0, 0.0), (0.0, 15.0, 0.0), t_end_s=1.0)
    scene = SceneGeometry([wall(10.0)])
    rig = rig_on(ego, shutter="rolling", line_time_s=5e-4)  # 32 ms readout
    fa, fb, va, vb, sa, _ = frames(scene, rig, 0.1, 0.15)
    fwd = correspond(scene, sa, vb, "forward")
    p = fwd.projection
    ok = fwd.valid
    assert ok.mean() > 0.5
    np.testing.assert_array_equal(p.time_s[ok], vb.row_times_s[p.row[ok]])
    assert np.all(np.abs(p.uv[ok, 1] - p.row[ok]) <= 0.5 + 1e-9)
    u, v = np.rint(p.uv[ok, 0]).astype(int), p.row[ok]
    np.testing.assert_allclose(p.depth_m[ok], fb.depth[v, u], rtol=1e-5)  # a wall facing the camera: depth = 10
    # The start of the iteration changes nothing.
    again = project_body_points(scene, vb, sa.body, sa.point_body, world_static=sa.point_world, row_guess=None)
    np.testing.assert_array_equal(again.row[ok], p.row[ok])


def test_static_displacement_is_exactly_zero_and_flow_is_target_minus_pixel():
    ego = linear_track((0.0, 0.0, 0.0), (5.0, 1.0, 0.0), t_end_s=1.0)
    scene = SceneGeometry([wall(), box_body("t/instance:box", (2, 2, 2), static(12.0, 2.0), 5, (0.5,) * 3, 0.5)])
    rig = rig_on(ego, shutter="rolling", line_time_s=3e-4)
    _, _, va, vb, sa, sb = frames(scene, rig, 0.0, 0.05)
    fwd, bwd = correspond(scene, sa, vb, "forward"), correspond(scene, sb, va, "backward")
    for corr in (fwd, bwd):
        assert np.all(scene_displacement_world_m(corr) == 0.0)
        np.testing.assert_array_equal(flow_px(corr), corr.projection.uv - np.stack([corr.source.u, corr.source.v], 1))
        tab = flow_table(corr)
        assert set(tab.column("disp_x_m").to_numpy()) == {0.0}
    img = dense(sa.pixel, flow_px(fwd), H, W)
    assert img.shape == (H, W, 2) and np.isnan(img).sum() == 0  # the wall fills the frame


def test_samples_carry_surface_identity_in_float64_and_store_float32_barycentrics():
    scene = SceneGeometry([wall()])
    rig = rig_on(PoseTrack.constant())
    fa, _, va, _, sa, _ = frames(scene, rig, 0.0, 0.05)
    tab = expanded("surface", sa.table(scene), bodies=sa.legend(scene))  # the strings through the frame's legend
    assert tab.num_rows == W * H and "body" not in tab.column_names
    assert tab.schema.field("bary_u").type == "float" and tab.schema.field("triangle").type == "int32"
    assert sa.barycentric_uv.dtype == np.float64
    stored = np.stack([tab.column("bary_u").to_numpy(), tab.column("bary_v").to_numpy()], axis=1)
    assert np.abs(stored - sa.barycentric_uv).max() <= BARYCENTRIC_STEP / 2  # the declared bound
    assert set(tab.column("entity").to_pylist()) == {"t/instance:wall"}
    assert set(tab.column("geometry_hash").to_pylist()) == {scene.bodies[0].geometry_hash}
    np.testing.assert_allclose(sa.depth_m, fa.depth.reshape(-1), rtol=1e-6)
    with pytest.raises(ValueError, match="same camera"):
        other = FrameView("other", va.model, 0, va.t0_s, va.row_times_s, va.T_world_camera)
        correspond(scene, sa, other, "forward")


@pytest.mark.parametrize("shutter", ["global", "rolling"])
def test_visibility_from_the_target_buffers_equals_the_exact_recast(shutter):
    """Occlusion read from the target frame's own id/depth buffers (re-casting only the undecided) gives the
    exact re-cast's answer, point for point, and most points need no re-cast."""
    car = box_body("t/actor:car", (4.0, 2.0, 3.0), linear_track((10.0, -2.0, 0.0), (0.0, 20.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5, subdivisions=1)
    scene = SceneGeometry([wall(), car])
    rig = rig_on(linear_track((0.0, 0.0, 0.0), (3.0, 0.5, 0.0), t_end_s=1.0), shutter=shutter,
                 line_time_s=0.0 if shutter == "global" else 2e-4)
    fa, fb, va, vb, sa, sb = frames(scene, rig, 0.2, 0.3)
    for src, view, samples, d in ((sa, vb, sb, "forward"), (sb, va, sa, "backward")):
        exact = correspond(scene, src, view, d)
        fast = correspond(scene, src, samples, d)
        in_view = exact.projection.in_view
        assert exact.hidden.sum() > 50
        np.testing.assert_array_equal(fast.visible, exact.visible)
        assert exact.recast == in_view.sum() and 0 < fast.recast < 0.5 * in_view.sum()


def test_distorted_flow_is_derived_from_the_stored_pinhole_flow_and_the_lens():
    """The RGB image's flow is not stored: from the table's float32 pinhole flow and the lens model it is the
    correspondence's own distorted flow to well under a thousandth of a pixel."""
    car = box_body("t/actor:car", (4.0, 2.0, 1.5), linear_track((8.0, -3.0, 0.0), (0.0, 6.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5)
    scene = SceneGeometry([wall(), car])
    rig = rig_on(linear_track((0.0, 0.0, 0.0), (4.0, 0.0, 0.0), t_end_s=1.0), distortion_k1=-0.2, distortion_k2=0.05)
    _, _, _, vb, sa, _ = frames(scene, rig, 0.2, 0.3)
    fwd = correspond(scene, sa, vb, "forward")
    tab = flow_table(fwd)
    assert not any("distorted" in c for c in tab.column_names)
    derived = distorted_flow(vb.model, tab.column("pixel").to_numpy(), tab.column("flow_du_px").to_numpy(),
                             tab.column("flow_dv_px").to_numpy())
    exact = flow_px_distorted(fwd)
    assert np.abs(exact - flow_px(fwd)).max() > 0.1  # the lens matters here
    front = np.isfinite(exact[:, 0])
    np.testing.assert_allclose(derived[front], exact[front], atol=2 * FLOW_STEP_PX)
    # The stored pinhole flow is within half the declared step of the computed one.
    stored = np.stack([tab.column("flow_du_px").to_numpy(), tab.column("flow_dv_px").to_numpy()], axis=1)
    assert np.nanmax(np.abs(stored - flow_px(fwd))) <= FLOW_STEP_PX / 2


@pytest.mark.parametrize("shutter", ["global", "rolling"])
def test_compiled_projection_is_the_numpy_projection_bit_for_bit(shutter):
    """The compiled row iteration repeats the numpy reference's operations per point: identical rows, points,
    camera coordinates and flags (moving, static, behind the camera, out of frame), whatever the guess."""
    car = box_body("t/actor:car", (4.0, 2.0, 3.0), linear_track((10.0, -2.0, 0.0), (0.0, 20.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5)
    scene = SceneGeometry([wall(), car])
    turning = PoseTrack(t_s=np.array([0.0, 1.0]), position_m=np.array([[0.0, 0.0, 0.0], [2.0, 0.5, 0.0]]),
                        quat_xyzw=np.array([F.quat_from_yaw(0.0), F.quat_from_yaw(1.2)]),
                        velocity_mps=np.array([[2.0, 0.5, 0.0]] * 2), angular_velocity_rps=np.array([[0, 0, 1.2]] * 2))
    rig = rig_on(turning, shutter=shutter, line_time_s=0.0 if shutter == "global" else 1e-3)
    _, _, va, vb, sa, _ = frames(scene, rig, 0.2, 0.6)
    for guess in (None, sa.v, np.zeros(len(sa), np.int64)):
        fast = project_body_points(scene, vb, sa.body, sa.point_body, world_static=sa.point_world, row_guess=guess)
        ref = project_body_points_numpy(scene, vb, sa.body, sa.point_body, world_static=sa.point_world,
                                        row_guess=guess)
        assert fast.out_of_frame.any() and fast.in_view.any()
        for name in ("row", "point_world", "point_camera", "uv", "present", "behind_camera", "out_of_frame",
                     "beyond_range"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name), err_msg=name)


def test_flow_table_columns_are_the_numpy_expressions_bit_for_bit():
    """The compiled flow columns are ``quantized(flow_px)`` and ``scene_displacement_world_m`` as float32, exactly."""
    car = box_body("t/actor:car", (4.0, 2.0, 1.5), linear_track((8.0, -3.0, 0.0), (0.0, 6.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5)
    scene = SceneGeometry([wall(), car])
    rig = rig_on(linear_track((0.0, 0.0, 0.0), (4.0, 0.3, 0.0), t_end_s=1.0), shutter="rolling", line_time_s=2e-4)
    _, _, _, vb, sa, sb = frames(scene, rig, 0.2, 0.3)
    fwd = correspond(scene, sa, sb, "forward")
    tab = flow_table(fwd)
    flow = quantized(flow_px(fwd), FLOW_STEP_PX)
    disp = scene_displacement_world_m(fwd).astype(np.float32)
    for i, name in enumerate(("flow_du_px", "flow_dv_px")):
        np.testing.assert_array_equal(tab.column(name).to_numpy(), flow[:, i])
    for i, name in enumerate(("disp_x_m", "disp_y_m", "disp_z_m")):
        np.testing.assert_array_equal(tab.column(name).to_numpy(), disp[:, i])
    assert (disp[:, 1] != 0).any()  # the car moved


@pytest.mark.parametrize("shutter", ["global", "rolling"])
def test_compiled_samples_are_the_numpy_samples_bit_for_bit(shutter):
    """``Samples.of_hits`` (one compiled pass over the static hits, the moving ones refined apart, the buffers
    from the hits) repeats ``of_hits_numpy``'s operations: identical identity, barycentrics, points, buffers;
    and the surface table's compiled columns are ``table_numpy``'s."""
    car = box_body("t/actor:car", (4.0, 2.0, 3.0), linear_track((10.0, -2.0, 0.0), (0.0, 20.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5, subdivisions=1)
    scene = SceneGeometry([wall(), car])
    rig = rig_on(linear_track((0.0, 0.0, 0.0), (3.0, 0.5, 0.0), t_end_s=1.0), shutter=shutter,
                 line_time_s=0.0 if shutter == "global" else 2e-4)
    for passes in (("depth", "id"), ("id",)):  # distances refined by the depth pass, or here
        fa = render_frame(scene, rig, "cam", 0.2, passes, ignore=[EGO])
        fb = render_frame(scene, rig, "cam", 0.2, passes, ignore=[EGO])
        view = FrameView.of_frame(fa, rig.sensors["cam"], 0)
        fast, ref = Samples.of_hits(scene, view, fa.hits), Samples.of_hits_numpy(scene, view, fb.hits)
        assert (~np.isnan(fast.point_body[:, 0])).sum() > 100  # samples on the moving car
        for name in ("pixel", "u", "v", "body", "triangle", "barycentric_uv", "point_body", "time_s",
                     "point_world", "point_camera"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name), err_msg=name)
        for a, b in zip(fast.buffers, ref.buffers):
            np.testing.assert_array_equal(a, b)
        # the surface table's columns in one compiled pass, bitwise the numpy gathers and roundings
        table, table_ref = fast.table(scene), ref.table_numpy(scene)
        assert table.equals(table_ref) and table.schema == table_ref.schema
        # the body index; its strings come back through the frame's legend, each sample its body's
        np.testing.assert_array_equal(table.column("body").to_numpy(), ref.body)
        assert fast.legend(scene) == ref.legend(scene)
        strings = expanded("surface", table, bodies=fast.legend(scene))
        assert strings.column_names == ["pixel", "compact_id", "entity", "geometry_hash", "element", "triangle",
                                        "bary_u", "bary_v", "depth_m"]
        assert strings.column("entity").to_pylist() == [scene.entity_ids_of_body[b] for b in ref.body]
        assert strings.column("element").to_pylist() == [scene.bodies[b].element for b in ref.body]
        assert set(strings.column("geometry_hash").to_pylist()) == {b.geometry_hash for b in scene.bodies}


@pytest.mark.parametrize("shutter", ["global", "rolling"])
def test_flow_table_of_is_the_correspondence_table_bit_for_bit(shutter):
    """The observation's one-pass flow table (row guess, row iteration, flags, buffer visibility and columns
    compiled together; only the undecided points re-cast, from the pass's projection) is ``flow_table(correspond(...))``
    with the same row guess, column for column, with the same visibility counts: a car crossing the wall
    (occluded and disoccluded points, samples on a moving body), a turning camera (out of frame), and guesses
    from the motion field, from nothing, and from non-finite or absurd image velocities."""
    car = box_body("t/actor:car", (4.0, 2.0, 3.0), linear_track((10.0, -2.0, 0.0), (0.0, 20.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5, subdivisions=1)
    scene = SceneGeometry([wall(), car])
    turning = PoseTrack(t_s=np.array([0.0, 1.0]), position_m=np.array([[0.0, 0.0, 0.0], [2.0, 0.5, 0.0]]),
                        quat_xyzw=np.array([F.quat_from_yaw(0.0), F.quat_from_yaw(1.2)]),
                        velocity_mps=np.array([[2.0, 0.5, 0.0]] * 2), angular_velocity_rps=np.array([[0, 0, 1.2]] * 2))
    rig = rig_on(turning, shutter=shutter, line_time_s=0.0 if shutter == "global" else 5e-4)
    _, _, _, _, sa, sb = frames(scene, rig, 0.2, 0.3)
    dt = sb.view.t0_s - sa.view.t0_s
    odd = motion_field(scene, rig, sa).dv_dt_pxps.copy()
    odd[::7], odd[1::7], odd[2::7], odd[3::7] = np.nan, np.inf, -np.inf, 1e300
    cases = [(sa, sb, "forward", motion_field(scene, rig, sa).dv_dt_pxps, dt),
             (sb, sa, "backward", motion_field(scene, rig, sb).dv_dt_pxps, -dt), (sa, sb, "forward", None, 0.0),
             (sa, sb, "forward", odd, dt)]
    for src, dst, direction, dv_dt, step_s in cases:
        guess = src.v if dv_dt is None else np.rint(src.v + np.nan_to_num(dv_dt * step_s, posinf=0.0, neginf=0.0))
        with np.errstate(invalid="ignore"):  # the absurd guesses overflow int64, as the observation's did
            guess = guess.astype(np.int64)
        corr = correspond(scene, src, dst, direction, row_guess=guess)
        ref = flow_table(corr)
        packed, counts = flow_table_of(scene, src, dst, direction, dv_dt_pxps=dv_dt, dt_s=step_s)
        # as the file stores it: no pixel (the surface table's), the booleans one bit field; put back, the same table
        assert "pixel" not in packed.column_names and packed.column("flags").type == pa.uint8()
        assert packed.equals(stored(direction, ref))
        tab = expanded(direction, packed, src.pixel32)
        assert tab.schema == ref.schema
        for name in ref.column_names:
            assert tab.column(name).equals(ref.column(name)), name
        assert counts == {"in_view": int(corr.projection.in_view.sum()), "recast": corr.recast}
        assert corr.hidden.any() and corr.projection.out_of_frame.any() and 0 < corr.recast
    with pytest.raises(ValueError, match="direction"):
        flow_table_of(scene, sa, sb, "sideways")


def test_compiled_quantization_is_the_numpy_one_bit_for_bit():
    """``quantized32`` multiplies by the step's exact inverse where ``quantized`` divides: the same bits, NaN and
    infinities included, strided input too."""
    rng = np.random.default_rng(29)
    x = np.concatenate([rng.normal(0.0, 1.0, 5000), rng.normal(0.0, 1e4, 5000), 10.0 ** rng.uniform(-12, 30, 2000),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -1.5, 2.0 ** -11, 3 * 2.0 ** -11]])
    for step in (BARYCENTRIC_STEP, FLOW_STEP_PX, 2.0 ** -8):
        np.testing.assert_array_equal(quantized32(x, step).view(np.uint32), quantized(x, step).view(np.uint32))
    pairs = np.stack([x, -x], axis=1)
    np.testing.assert_array_equal(quantized32(pairs[:, 1], FLOW_STEP_PX), quantized(pairs[:, 1], FLOW_STEP_PX))


def test_bool_column_is_pyarrows_conversion():
    """The flow tables' boolean columns, packed by numpy, are the arrays pyarrow's own conversion makes (any length,
    the last byte's padding included; no nulls), so the Parquet files hold the same values."""
    rng = np.random.default_rng(7)
    for n in (0, 1, 7, 8, 9, 1000, 4099):
        for p in (0.0, 0.3, 1.0):
            values = rng.random(n) < p
            column = bool_column(values)
            assert column.equals(pa.array(values)) and column.null_count == 0 and column.type == pa.bool_()
    strided = (rng.random(64) < 0.5)[::3]  # a view with a stride
    assert bool_column(strided).equals(pa.array(strided))
