"""The compiled sensor passes of issue 29 are bit for bit the numpy steps they replace: world rays from the
poses (np.matmul's float32 products, np.repeat), a LiDAR sweep's returns (noise on and off, dry and in rain,
dark and grazing dropout), and a camera frame's RGB with shading and tone map fused in one pass."""

from __future__ import annotations

import numpy as np
import pytest

from simready.sensors_hw.models import Rig
from simready.testing.street import EGO_ID, street_scene


@pytest.fixture(scope="module")
def street():
    return street_scene()


def lidar_rig(ego, rpy_deg=(1.0, 2.0, 30.0), **kw) -> Rig:
    lidar = {"channels": 16, "vertical_fov_deg": [-25.0, 15.0], "rotation_hz": 10.0, "azimuth_steps": 360,
             "max_range_m": 120.0, "phase_s": 0.0, **kw}
    return Rig.from_dict({"mounts": {"lid": {"type": "lidar", "translation_m": [0.0, 0.0, 1.9], "rpy_deg": list(rpy_deg)}},
                          "sensors": {"lid": lidar}}, body=ego)


def test_sensor_rays_are_the_matmul_and_repeat():
    from simready.raycast.kernels import sensor_rays

    rng = np.random.default_rng(11)
    g, k = 37, 53
    local = rng.standard_normal((g, k, 3)).astype(np.float32)
    local /= np.linalg.norm(local, axis=2, keepdims=True)
    T = np.tile(np.eye(4), (g, 1, 1))
    q, _ = np.linalg.qr(rng.standard_normal((g, 3, 3)))
    T[:, :3, :3] = q
    T[:, :3, 3] = rng.uniform(-500.0, 500.0, (g, 3))
    times = rng.uniform(0.0, 10.0, g)
    for r_min in (np.full(1, np.float32(0.3)), rng.uniform(0.1, 0.5, g * k).astype(np.float32)):
        o, d, t, s = sensor_rays(local, T, times, r_min, True)
        ref_d = np.matmul(local, np.transpose(T[:, :3, :3], (0, 2, 1)).astype(np.float32)).reshape(-1, 3)
        ref_o = np.repeat(T[:, :3, 3].astype(np.float32), k, axis=0)
        ref_s = np.multiply(ref_d, r_min[:, None] if len(r_min) > 1 else r_min[0])
        ref_s += ref_o
        assert d.tobytes() == ref_d.tobytes() and o.tobytes() == ref_o.tobytes()
        assert t.tobytes() == np.repeat(times, k).tobytes() and s.tobytes() == ref_s.tobytes()


@pytest.mark.parametrize("rain_mmph", [None, 40.0])
@pytest.mark.parametrize("kw", [{}, {"noise": False},
                                {"dropout": {"probability": 0.7, "dark_reflectance_below": 0.35,
                                             "grazing_incidence_deg_above": 60.0}}])
def test_compiled_returns_are_the_numpy_returns(street, kw, rain_mmph):
    from simready.sensors_hw.atmosphere import Atmosphere
    from simready.sensors_hw.lidar import scan

    scene, bodies = street
    rig = lidar_rig(bodies[EGO_ID].track, **kw)
    atmo = None if rain_mmph is None else Atmosphere(rain_mmph)
    fast_rng, ref_rng = np.random.default_rng(5), np.random.default_rng(5)
    fast_rng.random(3, dtype=np.float32)  # a buffered half word: the returns pass's own uniforms start from it
    ref_rng.random(3, dtype=np.float32)
    fast = scan(scene, rig, "lid", 0.4, fast_rng, ignore=[EGO_ID], atmosphere=atmo)
    ref = scan(scene, rig, "lid", 0.4, ref_rng, ignore=[EGO_ID], atmosphere=atmo, compiled=False)
    assert fast_rng.bit_generator.state == ref_rng.bit_generator.state  # the generator left as numpy leaves it
    assert 0 < len(fast) < len(fast.hits)
    for name in ("points_sensor", "intensity", "instance_id", "t_s", "range_m", "channel", "azimuth_index", "beam"):
        a, b = getattr(fast, name), getattr(ref, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == \
            np.ascontiguousarray(b).tobytes(), name


def test_a_sweep_does_not_depend_on_the_sweeps_before_it(street):
    """The sweeps' temporaries are reused work arrays: a sweep after others (another size, rain, noise off) is
    the sweep alone, and its derived columns are its beams' (firing time, channel, column)."""
    from simready.sensors_hw.atmosphere import Atmosphere
    from simready.sensors_hw.lidar import scan

    scene, bodies = street
    rig = lidar_rig(bodies[EGO_ID].track)
    first = scan(scene, rig, "lid", 0.4, np.random.default_rng(5), ignore=[EGO_ID])
    scan(scene, lidar_rig(bodies[EGO_ID].track, channels=8, noise=False), "lid", 0.3, np.random.default_rng(1),
         ignore=[EGO_ID], atmosphere=Atmosphere(40.0))
    again = scan(scene, rig, "lid", 0.4, np.random.default_rng(5), ignore=[EGO_ID])
    for name in ("points_sensor", "intensity", "instance_id", "range_m", "beam", "t_s"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
    assert np.array_equal(again.t_s, 0.4 + (again.beam // 16) / 3600.0)
    assert np.array_equal(again.channel, again.beam % 16) and again.channel.dtype == np.int32
    assert np.array_equal(again.azimuth_index, again.beam // 16) and again.azimuth_index.dtype == np.int32


def test_lidar_poses_are_the_rigs_products():
    """A sweep's column poses: the rig's ``T_world_body @ T_body_sensor`` (np.matmul) bit for bit, and the
    compiled product is np.matmul's on arbitrary poses too."""
    from simready.sensors_hw.lidar import lidar_poses
    from simready.sensors_hw.lidar.beams import beam_table
    from simready.sensors_hw.lidar_kernels import mount_poses
    from simready.testing.street import street_scene

    _, bodies = street_scene(subdivisions=0)
    rig = lidar_rig(bodies[EGO_ID].track)
    assert rig.body._planar and not rig.body.is_constant  # the planar pass, inside the track; its start: the sample
    for t0 in (0.4, 1.37, rig.body.t_start):
        ref = rig.T_world_sensor("lid", t0 + beam_table(rig.lidar("lid")).time_offset_s)
        assert lidar_poses(rig, "lid", t0).tobytes() == ref.tobytes()
    rng = np.random.default_rng(3)
    P, M = rng.standard_normal((5000, 4, 4)), rng.standard_normal((4, 4))
    assert mount_poses(P.copy(), M).tobytes() == (P @ M).tobytes()


def test_a_grouped_cast_is_the_cast_of_its_rays(street):
    """A LiDAR's rays from its angle tables are its beam table's rays, and cast with one origin and one time per
    column (what a sweep does) hit exactly what the same rays with an origin and a time each hit, moving bodies
    included, and read back the same rays."""
    from simready.sensors_hw.lidar import lidar_rays
    from simready.sensors_hw.lidar.beams import azimuth_prefilter, beam_table, lidar_poses

    scene, bodies = street
    rig = lidar_rig(bodies[EGO_ID].track)
    model = rig.lidar("lid")
    T = lidar_poses(rig, "lid", 0.4)
    o, d, t = lidar_rays(rig, "lid", 0.4, T)
    from simready.raycast.kernels import spin_rays_into

    table = beam_table(model)
    d_spin, starts = np.empty_like(d), np.empty_like(d)  # from the angle tables: the table's directions
    spin_rays_into(table.cos_el, table.sin_el, table.cos_az, table.sin_az, T, np.full(1, np.float32(0.3)), d_spin,
                   starts)
    ref_starts = np.multiply(d, np.float32(0.3))
    ref_starts += o
    assert d_spin.tobytes() == d.tobytes() and starts.tobytes() == ref_starts.tobytes()
    kw = dict(ignore=[EGO_ID], normalized=True, incidence=True, prefilter=azimuth_prefilter(model, T))
    full = scene.cast(o, d, t, 120.0, 0.3, **kw)
    col_t = 0.4 + table.time_offset_s
    grouped = scene.cast(T[:, :3, 3].astype(np.float32), d, col_t, 120.0, 0.3, group_size=model.channels, **kw)
    assert np.isin(np.flatnonzero(~scene._is_static), full.body_index).any()  # a moving body was hit
    assert np.array_equal(grouped.times_of(grouped.hit_index), t[grouped.hit_index])
    assert grouped._time_s is None and grouped._o32 is None  # not expanded until read
    for name in ("hit", "distance_m", "body_index", "triangle_index", "cos_incidence", "time_s", "_origin32",
                 "_dir32", "_u32", "_v32", "point_world", "normal_world"):
        assert getattr(grouped, name).tobytes() == getattr(full, name).tobytes(), name
    full.refine()
    grouped.refine()
    assert grouped.distance_m.tobytes() == full.distance_m.tobytes()
    assert grouped.barycentric_uv.tobytes() == full.barycentric_uv.tobytes()
    with pytest.raises(ValueError, match="grouped rays"):
        scene.cast(T[:, :3, 3].astype(np.float32), d[:-1], col_t, 120.0, group_size=model.channels, normalized=True)


def test_a_query_whose_check_fails_to_run_is_not_taken(monkeypatch):
    """Where the self-check itself cannot run (its kernel does not compile, say), the query is not taken and the
    casts go through embreex's run: 0, not the error."""
    import simready.raycast.kernels as kernels
    from simready.raycast.embree_direct import PACKET, query_address

    def broken(*args):
        raise RuntimeError("the check's kernel did not compile")

    monkeypatch.setattr(kernels, "intersect_rows", broken)
    assert query_address.__wrapped__(PACKET) == 0


def test_a_query_that_writes_past_its_packet_is_not_taken(monkeypatch):
    """An Embree whose ray-hit structure is longer than the packet's words (more instance levels) writes past the
    packet: the words after it, checked by the self-check, refuse that query (0), while the query as it is passes."""
    import simready.raycast.kernels as kernels
    from simready.raycast.embree_direct import PACKET, query_address

    real = kernels.intersect_rows
    assert query_address.__wrapped__(PACKET)

    def longer(address, handle, valid, f, w, *rest):
        real(address, handle, valid, f, w, *rest)
        tail = np.frombuffer(f.base, np.float32)[(f.ctypes.data - f.base.ctypes.data) // 4 + len(f):]
        tail[0] = 0.0  # the first word past the packet, as a 25th word of ray 0 would be with one ray a packet

    monkeypatch.setattr(kernels, "intersect_rows", longer)
    assert query_address.__wrapped__(PACKET) == 0


@pytest.mark.parametrize("r_min", [0.3, 0.0])
def test_a_spinning_cast_is_the_grouped_cast_of_its_rays(street, monkeypatch, r_min):
    """The sweep's cast, its rays made and cast against the static scene in one pass through Embree's own query
    (:mod:`simready.raycast.embree_direct`: 8-ray packets, or one ray at a time), hits what the rays made first
    and cast through embreex hit, moving bodies included, bit for bit; and so does its fallback where that query is
    not at hand."""
    import simready.raycast.geometry as geometry
    from simready.raycast.embree_direct import PACKET, intersect_query, query_address, scene_handle
    from simready.raycast.kernels import spin_rays_into
    from simready.sensors_hw.lidar.beams import azimuth_prefilter, beam_table, lidar_poses

    scene, bodies = street
    assert intersect_query() == (query_address(PACKET), PACKET) and query_address(1)  # at hand here
    assert scene_handle(scene._static_scene)
    rig = lidar_rig(bodies[EGO_ID].track)
    model = rig.lidar("lid")
    table = beam_table(model)
    T = lidar_poses(rig, "lid", 0.4)
    col_t = 0.4 + table.time_offset_s
    d = np.empty((len(table.beam_offset_s), 3), np.float32)
    starts = np.empty_like(d)
    spin_rays_into(table.cos_el, table.sin_el, table.cos_az, table.sin_az, T, np.full(1, np.float32(r_min)), d, starts)
    kw = dict(ignore=[EGO_ID], incidence=True, prefilter=azimuth_prefilter(model, T))
    ref = scene.cast(T[:, :3, 3].astype(np.float32), d, col_t, 120.0, r_min, group_size=model.channels,
                     normalized=True, starts=starts if r_min else None, **kw)
    assert np.isin(np.flatnonzero(~scene._is_static), ref.body_index).any()  # a moving body was hit
    angles = (table.cos_el, table.sin_el, table.cos_az, table.sin_az)
    for query in ((query_address(PACKET), PACKET), (query_address(1), 1), (0, 0)):
        monkeypatch.setattr(geometry, "intersect_query", lambda: query)
        hits = scene.cast_spinning(angles, T, col_t, 120.0, r_min, **kw)
        for name in ("hit", "distance_m", "body_index", "triangle_index", "cos_incidence", "time_s", "_origin32",
                     "_dir32", "_u32", "_v32", "_tfar", "_r_min", "point_world", "normal_world"):
            assert getattr(hits, name).tobytes() == getattr(ref, name).tobytes(), (query[1], name)
        assert hits._rotations.keys() == ref._rotations.keys()
        for b, (sel, poses, pose) in ref._rotations.items():
            assert all(np.array_equal(x, y) for x, y in zip(hits._rotations[b], (sel, poses, pose)))


@pytest.mark.parametrize("grouped", [False, True])
def test_a_cast_through_embree_packets_is_the_cast_through_embreex(street, monkeypatch, grouped):
    """The general cast's static scene through Embree's own query (:func:`~simready.raycast.kernels.cast_static_rows`:
    8 consecutive rays a packet, or one at a time) hits what embreex's ``run`` hits, moving bodies included, bit for
    bit: rays one by one (ranges per ray and one for all, with and without incidence) and a LiDAR's grouped rays."""
    import simready.raycast.geometry as geometry
    from simready.raycast.embree_direct import PACKET, query_address
    from simready.sensors_hw.lidar import lidar_rays
    from simready.sensors_hw.lidar.beams import azimuth_prefilter, beam_table, lidar_poses

    scene, bodies = street
    rig = lidar_rig(bodies[EGO_ID].track)
    model = rig.lidar("lid")
    T = lidar_poses(rig, "lid", 0.4)
    o, d, t = lidar_rays(rig, "lid", 0.4, T)
    kw = dict(ignore=[EGO_ID], normalized=True, prefilter=azimuth_prefilter(model, T))
    r_near = np.linspace(0.0, 2.0, len(d)).astype(np.float32)  # per ray, some 0
    if grouped:
        calls = [((T[:, :3, 3].astype(np.float32), d, 0.4 + beam_table(model).time_offset_s, 120.0, 0.3),
                  dict(group_size=model.channels, incidence=True))]
    else:
        calls = [((o, d, t, 120.0, 0.3), dict(incidence=True)), ((o, d, t, 60.0 + r_near, r_near), {}),
                 ((o, d, t, 80.0, 0.0), dict(exact=True))]
    names = ("hit", "distance_m", "body_index", "triangle_index", "time_s", "_origin32", "_dir32", "_u32", "_v32",
             "point_world", "normal_world")
    for args, extra in calls:
        monkeypatch.setattr(geometry, "intersect_query", lambda: (0, 0))
        ref = scene.cast(*args, **kw, **extra)
        assert np.isin(np.flatnonzero(~scene._is_static), ref.body_index).any()  # a moving body was hit
        for query in ((query_address(PACKET), PACKET), (query_address(1), 1)):
            assert query[0]  # at hand here
            monkeypatch.setattr(geometry, "intersect_query", lambda: query)
            hits = scene.cast(*args, **kw, **extra)
            for name in names + (("cos_incidence",) if "incidence" in extra else ()) + (
                    ("_tfar", "_r_min") if grouped else ()):
                assert getattr(hits, name).tobytes() == getattr(ref, name).tobytes(), (query[1], name)
            assert hits._rotations.keys() == ref._rotations.keys()
            for b, (sel, poses, pose) in ref._rotations.items():
                assert all(np.array_equal(x, y) for x, y in zip(hits._rotations[b], (sel, poses, pose)))


@pytest.mark.parametrize("kw", [{}, {"vignette": 0.0, "tone_map": "clip", "exposure_ev": 0.7},
                                {"distortion_k1": 0.1, "distortion_k2": -0.03, "exposure_ev": -1.3}])
def test_fused_rgb_is_shade_then_finish(street, kw):
    from simready.sensors_hw.camera import Lighting, finish_rgb, render_frame, shade

    scene, bodies = street
    cam = {"width_px": 160, "height_px": 90, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 300.0, "rate_hz": 20.0,
           "phase_s": 0.0, "shutter": "rolling", "line_time_s": 1e-4, "distortion_k1": 0.0, **kw}
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [1.5, 0.0, 1.6]}},
                         "sensors": {"cam": cam}}, body=bodies[EGO_ID].track)
    lighting = Lighting(headlights=True)
    frame = render_frame(scene, rig, "cam", 0.5, ("rgb",), lighting=lighting, ignore=[EGO_ID])
    radiance = shade(scene, rig, rig.sensors["cam"], frame.hits, lighting, frame.T_world_camera, ignore=[EGO_ID])
    np.testing.assert_array_equal(frame.rgb, finish_rgb(rig.sensors["cam"], radiance.reshape(90, 160, 3)))


def test_one_direction_shadow_rays_are_not_copied_and_agree(street):
    """Shadow rays toward one sun: the broadcast direction (Embree reads its one row) blocks exactly the rays
    the same direction written out per ray blocks, moving bodies included."""
    scene, _ = street
    rng = np.random.default_rng(2)
    o = np.column_stack([rng.uniform(-10.0, 60.0, 4000), rng.uniform(-12.0, 12.0, 4000),
                         rng.uniform(0.0, 2.0, 4000)]).astype(np.float32)
    sun = np.array([0.4, -0.3, 0.5], np.float32)
    t = rng.uniform(0.2, 0.8, 4000)
    for normalized in (False, True):
        d = sun / np.linalg.norm(sun) if normalized else sun
        one = scene.occluded(o, np.broadcast_to(d, o.shape), t, 500.0, normalized=normalized)
        full = scene.occluded(o, np.repeat(d[None], len(o), axis=0), t, 500.0, normalized=normalized)
        assert one.any() and not one.all() and np.array_equal(one, full)


def test_shadow_rays_culled_by_the_boxes_grid_are_the_ones_embree_leaves_unblocked(street):
    """Shadow rays along one direction: the static scene's cull (only rays meeting a static body's widened box go to
    Embree) blocks exactly what Embree over every ray blocks: rays leaving lit surfaces (a frame's hits, a shadow
    bias off them), random rays, rays with a non-finite origin, and suns with zero components (straight up, along
    an axis), moving bodies included."""
    from simready.sensors_hw.camera import Lighting, render_frame
    from simready.sensors_hw.camera.shading import SHADOW_BIAS_M, SHADOW_RANGE_M

    scene, bodies = street
    cam = {"width_px": 320, "height_px": 180, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 300.0, "rate_hz": 20.0,
           "phase_s": 0.0, "shutter": "rolling", "line_time_s": 1e-4, "distortion_k1": 0.0}
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [1.5, 0.0, 1.6]}},
                         "sensors": {"cam": cam}}, body=bodies[EGO_ID].track)
    hits = render_frame(scene, rig, "cam", 0.5, ("id",), lighting=Lighting(), ignore=[EGO_ID]).hits
    rows = np.flatnonzero(hits.hit)
    n = hits.normals_of(rows)
    n *= -np.sign(np.einsum("ij,ij->i", n, hits.rays32[1][rows]))[:, None]
    surface = (hits.point_world_of(rows) + SHADOW_BIAS_M * n).astype(np.float32)
    rng = np.random.default_rng(5)
    loose = np.column_stack([rng.uniform(-70.0, 150.0, 5000), rng.uniform(-30.0, 30.0, 5000),
                             rng.uniform(-1.0, 30.0, 5000)]).astype(np.float32)
    loose[:3] = np.nan
    loose[3, 1] = np.inf
    # Rays from just off the static boxes' corners, edges and faces (millimetres either side): the grazing cases of
    # the boxes' widening and of the box-shaped bodies' narrowed boxes.
    lo, hi, solid, _, _ = scene._static_boxes_padded()
    assert solid.any()
    corner = np.where(rng.random((6000, 3)) < 0.5, lo[rng.integers(0, len(lo), 6000)],
                      hi[rng.integers(0, len(hi), 6000)])
    edge = corner + rng.normal(0.0, 3e-3, corner.shape) * (rng.random(corner.shape) < 0.7)
    o = np.concatenate([surface, loose, edge.astype(np.float32)])
    t = np.full(len(o), 0.5)
    for sun in ([0.45, -0.45, 0.77], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [-0.3, 0.0, 0.6], [0.2, 0.7, -0.1],
                [0.577, 0.577, 0.577]):
        d = np.asarray(sun, np.float32) / np.float32(np.linalg.norm(sun))
        rays = (o, np.broadcast_to(d, o.shape), t, SHADOW_RANGE_M)
        culled = scene.occluded(*rays, ignore=[EGO_ID], normalized=True)
        every = scene.occluded(*rays, ignore=[EGO_ID], normalized=True, cull=False)
        assert culled.any() and not culled.all()
        np.testing.assert_array_equal(culled, every)
    # No static body at all: only the moving one blocks.
    from simready.raycast import SceneGeometry

    movers = SceneGeometry([bodies[k] for k in bodies if not bodies[k].track.is_static])
    rays = (loose, np.broadcast_to(d, loose.shape), np.full(len(loose), 0.5), SHADOW_RANGE_M)
    np.testing.assert_array_equal(movers.occluded(*rays, normalized=True),
                                  movers.occluded(*rays, normalized=True, cull=False))


def test_box_surfaces_are_told_from_other_meshes():
    """``is_box_surface`` and the compiled pass over many bodies (``static_box_shapes``, its float32 boxes too): a
    box's twelve triangles, either winding, and a box with subdivided faces are; a box missing a triangle, with one
    triangle flipped, a degenerate one added, turned about z, a wedge (a triangle off the face planes) or a sphere
    are not."""
    import trimesh

    from simready.raycast.kernels import static_box_shapes
    from simready.raycast.meshes import is_box_surface

    box = trimesh.creation.box((2.0, 1.0, 0.5))
    v, f = np.asarray(box.vertices) + [1.0, 2.0, 3.0], np.asarray(box.faces, np.int64)
    flipped = f.copy()
    flipped[0] = flipped[0, ::-1]
    c, s_ = np.cos(0.3), np.sin(0.3)
    wedge = v.copy()
    wedge[np.argmax(wedge[:, 0] + wedge[:, 1] + wedge[:, 2])] -= 0.1
    sphere = trimesh.creation.icosphere(1)
    fine = trimesh.remesh.subdivide(v, f)
    meshes = [(v, f, True), (v, f[:, ::-1], True), (*fine, True), (v, f[1:], False), (v, flipped, False),
              (v, np.concatenate([f, [[0, 0, 1]]]), False),
              (v @ np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]]).T, f, False), (wedge, f, False),
              (np.asarray(sphere.vertices), np.asarray(sphere.faces, np.int64), False)]
    for vm, fm, want in meshes:
        assert is_box_surface(np.asarray(vm, np.float32).astype(np.float64), fm) is want
    lo, hi, solid = static_box_shapes(np.concatenate([np.asarray(m[0], np.float64) for m in meshes]),
                                      np.cumsum([0] + [len(m[0]) for m in meshes]).astype(np.int64),
                                      np.concatenate([np.asarray(m[1], np.int64) for m in meshes]),
                                      np.cumsum([0] + [len(m[1]) for m in meshes]).astype(np.int64))
    assert solid.tolist() == [m[2] for m in meshes]
    for k, (vm, _, _) in enumerate(meshes):
        v32 = np.asarray(vm, np.float32).astype(np.float64)
        assert np.array_equal(lo[k], v32.min(axis=0)) and np.array_equal(hi[k], v32.max(axis=0))
    scene, _ = street_scene(subdivisions=2)
    assert scene._static_boxes_padded()[2].all()


def test_compiled_slab_test_and_merge_lookup_are_the_numpy_ones():
    from simready.raycast.rays import slab_candidates
    from simready.raycast.kernels import positions_in, slab_select

    rng = np.random.default_rng(8)
    n = 20000
    o = rng.uniform(-30.0, 30.0, (n, 3)).astype(np.float32)
    d = rng.standard_normal((n, 3)).astype(np.float32)
    d[::7, 0] = 0.0
    d[::11, 2] = 0.0
    t_max = rng.uniform(0.0, 60.0, n).astype(np.float32)
    lo, hi = np.array([-3.0, -2.0, -1.0]), np.array([4.0, 2.5, 1.5])
    with np.errstate(divide="ignore"):
        inv = np.float32(1.0) / np.where(d.T == 0.0, np.float32(1e-30), d.T)
    ref = np.flatnonzero(slab_candidates(o.T, inv, lo, hi, t_max))
    assert 0 < len(ref) < n and np.array_equal(slab_select(o, d, np.zeros(0, np.int64), True, lo, hi, t_max), ref)
    idx = np.sort(rng.choice(n, 5000, replace=False)).astype(np.int64)
    assert np.array_equal(slab_select(o, d, idx, False, lo, hi, t_max), np.intersect1d(idx, ref))
    keys = np.sort(rng.choice(100000, 30000, replace=False)).astype(np.int64)
    values = np.sort(rng.choice(100000, 8000, replace=False)).astype(np.int64)
    pos = np.minimum(np.searchsorted(keys, values), len(keys) - 1)
    assert np.array_equal(positions_in(keys, values), pos[keys[pos] == values])
    # A box's candidates: a few runs of consecutive pixels among dense receivers (the walk gallops between runs).
    keys = np.flatnonzero(rng.random(200000) < 0.6).astype(np.int64)
    values = np.concatenate([np.arange(s, s + 700) for s in (5, 40000, 41000, 199600)]).astype(np.int64)
    pos = np.minimum(np.searchsorted(keys, values), len(keys) - 1)
    assert np.array_equal(positions_in(keys, values), pos[keys[pos] == values])


@pytest.mark.parametrize("rpy", [[1.0, 2.0, 30.0], [0.0, 0.0, 30.0]])  # tilted; level (corner pairs shared)
def test_compiled_azimuth_prefilter_keeps_the_numpy_columns(street, rpy):
    from simready.sensors_hw.lidar import azimuth_prefilter, lidar_poses

    scene, bodies = street
    rig = lidar_rig(bodies[EGO_ID].track, rpy_deg=rpy)
    T = lidar_poses(rig, "lid", 0.4)
    assert (np.all(T[:, 2, :2] == 0.0)) == (rpy[0] == rpy[1] == 0.0)
    from simready.sensors_hw.lidar_kernels import column_axes

    for k, got in enumerate(column_axes(T)[:2]):  # the frames the compiled filter reads are the numpy ones
        axis = np.ascontiguousarray(T[:, :3, k].T)
        assert got.tobytes() == axis.tobytes()
        assert column_axes(T)[2 + k].tobytes() == np.einsum("si,is->s", T[:, :3, 3], axis).tobytes()
    fast, ref = azimuth_prefilter(rig.sensors["lid"], T), azimuth_prefilter(rig.sensors["lid"], T, compiled=False)
    rng = np.random.default_rng(4)
    kept = 0
    for k in range(400):  # near and far boxes, small and large (the compiled pass's quick rejection)
        lo = rng.uniform(-30.0, 60.0, 3) * (1.0 if k % 2 else 4.0)
        hi = lo + rng.uniform(0.2, 8.0, 3) * (1.0 if k % 3 else 0.01)
        a, b = fast(lo, hi), ref(lo, hi)
        assert np.array_equal(a, b)
        kept += 0 < len(a) < 360 * 16
    assert kept > 50


def test_unique_of_ascending_times_in_one_pass():
    from simready.raycast.kernels import unique_sorted

    rng = np.random.default_rng(0)
    t = np.sort(rng.choice(np.linspace(0.0, 1.0, 50), 1000))
    values, inverse, ok = unique_sorted(t)
    ref_values, ref_inverse = np.unique(t, return_inverse=True)
    assert ok and np.array_equal(values, ref_values) and np.array_equal(inverse, ref_inverse)
    assert not unique_sorted(t[::-1])[2]


@pytest.mark.parametrize("seed, before, n", [(1, 0, 600_000), (7, 3, 1_001), (9, 1, 1), (5, 0, 0)])
def test_sweep_draws_are_numpys_draws_and_leave_its_state(seed, before, n):
    """The compiled PCG64 draws: numpy's float32 normals then uniforms bit for bit (the ziggurat's tail and
    wedges included), from a state with and without a buffered half word, and the generator left as numpy leaves it."""
    from simready.sensors_hw.lidar import normals_then_uniforms

    ref, ours = np.random.default_rng(seed), np.random.default_rng(seed)
    for g in (ref, ours):
        g.integers(0, 2**32, size=before, dtype=np.uint32)  # an odd count leaves half a 64-bit output buffered
    ref_noise, ref_draw = ref.standard_normal(n, dtype=np.float32), ref.random(n, dtype=np.float32)
    noise, draw = np.empty(n, np.float32), np.empty(n, np.float32)
    normals_then_uniforms(ours, noise, draw)
    assert np.array_equal(noise.view(np.uint32), ref_noise.view(np.uint32))
    assert np.array_equal(draw.view(np.uint32), ref_draw.view(np.uint32))
    assert ours.bit_generator.state == ref.bit_generator.state
    assert ours.random() == ref.random()
    if n >= 600_000:  # the tail beyond the ziggurat's last layer was drawn (~2.6e-4 of the normals)
        assert np.sum(np.abs(ref_noise) > 3.6541528853610088) > 50


def test_sweep_draws_of_another_bit_generator_go_through_numpy():
    from simready.sensors_hw.lidar import normals_then_uniforms

    ref, ours = (np.random.Generator(np.random.Philox(3)) for _ in range(2))
    noise, draw = np.empty(100, np.float32), np.empty(100, np.float32)
    normals_then_uniforms(ours, noise, draw)
    assert np.array_equal(noise, ref.standard_normal(100, dtype=np.float32))
    assert np.array_equal(draw, ref.random(100, dtype=np.float32))
