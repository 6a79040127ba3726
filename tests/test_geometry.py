"""SceneGeometry: the one geometric authority (SPEC §11) — analytic hits, time, nearest, ids."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from simready.testing.street import EGO_ID, box_body, linear_track, street_scene
from simready.raycast import Body, SceneGeometry, read_obj_triangles
from simready.world import frames as F
from simready.world.motion import PoseTrack

CUBE = trimesh.creation.box((1.0, 1.0, 1.0))
T_CUBE = F.make_transform(F.rotation_from_rpy(0.2, -0.15, 0.5), [5.0, 2.0, 1.0])


def cube_scene() -> SceneGeometry:
    body = Body("t/instance:cube", CUBE.vertices, CUBE.faces, "sha256:cube", "render.obj", 7, track=PoseTrack.constant(T_CUBE))
    return SceneGeometry([body])


def triangle_containing(vertices: np.ndarray, faces: np.ndarray, p: np.ndarray) -> int:
    """Independent float64 point-in-triangle search (the test's own geometry)."""
    for i, (a, b, c) in enumerate(vertices[faces]):
        n = np.cross(b - a, c - a)
        if abs(np.dot(n / np.linalg.norm(n), p - a)) > 1e-9:
            continue
        m = np.array([b - a, c - a]).T
        uv = np.linalg.lstsq(m, p - a, rcond=None)[0]
        if uv.min() >= 0 and uv.sum() <= 1:
            return i
    raise AssertionError("no triangle contains the point")


# Body-frame targets on four faces, off both face diagonals, and incoming body-frame directions.
TARGETS = [
    ((0.5, 0.1, -0.3), (-1.0, 0.2, 0.1)),
    ((-0.2, 0.5, 0.35), (0.1, -1.0, -0.3)),
    ((0.15, -0.4, 0.5), (0.2, 0.1, -1.0)),
    ((-0.5, -0.05, 0.3), (1.0, 0.3, -0.2)),
]


def test_cube_hits_at_analytic_distance_triangle_and_barycentrics():
    scene = cube_scene()
    R, t = T_CUBE[:3, :3], T_CUBE[:3, 3]
    lengths = np.array([3.0, 7.5, 12.25, 4.0])
    targets_body = np.array([p for p, _ in TARGETS])
    dirs = np.array([R @ (np.array(d) / np.linalg.norm(d)) for _, d in TARGETS])
    targets = targets_body @ R.T + t
    origins = targets - lengths[:, None] * dirs
    hits = scene.cast(origins, dirs, 0.0, 100.0, exact=True)
    assert hits.hit.all()
    np.testing.assert_allclose(hits.distance_m, lengths, atol=1e-9)
    np.testing.assert_allclose(hits.point_world, targets, atol=1e-9)
    np.testing.assert_allclose(hits.point_body, targets_body, atol=1e-9)
    expected = [triangle_containing(CUBE.vertices, CUBE.faces, p) for p in targets_body]
    np.testing.assert_array_equal(hits.triangle_index, expected)
    # The barycentrics reproduce the hit point from the source triangle, in float64.
    tri = (CUBE.vertices[CUBE.faces[hits.triangle_index]] @ R.T) + t
    u, v = hits.barycentric_uv[:, 0:1], hits.barycentric_uv[:, 1:2]
    np.testing.assert_allclose((1 - u - v) * tri[:, 0] + u * tri[:, 1] + v * tri[:, 2], targets, atol=1e-6)
    # Geometric normals are the outward face normals, rotated into world.
    face_n = CUBE.face_normals[hits.triangle_index] @ R.T
    np.testing.assert_allclose(hits.normal_world, face_n, atol=1e-6)
    assert set(hits.entity_id) == {"t/instance:cube"} and set(hits.semantic) == {7}
    assert set(hits.geometry_hash) == {"sha256:cube"} and set(hits.element) == {"render.obj"}


def test_float32_hits_are_close_and_refine_makes_them_exact():
    scene = cube_scene()
    o = np.array([[0.0, 0.0, 1.0]])
    d = T_CUBE[:3, 3] - o + [0.0, 0.1, 0.05]
    rough = scene.cast(o, d, 0.0, 100.0)
    exact = scene.cast(o, d, 0.0, 100.0, exact=True)
    assert not rough.exact and exact.exact
    assert abs(rough.distance_m[0] - exact.distance_m[0]) < 1e-5
    assert rough.refine().distance_m[0] == exact.distance_m[0]


def test_min_and_max_range_bound_the_segment():
    scene = cube_scene()
    o = np.array([T_CUBE[:3, 3] - [4.0, 0.0, 0.0]])
    d = np.array([[1.0, 0.0, 0.0]])
    assert not scene.cast(o, d, 0.0, 3.0).hit[0]
    near = scene.cast(o, d, 0.0, 10.0).distance_m[0]
    far = scene.cast(o, d, 0.0, 10.0, min_range_m=near + 0.01).distance_m[0]  # skips the entry face
    assert 3.0 < near < 4.0 < far < 5.0


def crossing_scene(present: np.ndarray | None = None) -> SceneGeometry:
    """A wall 20 m ahead (x = 20) and a 1 m box crossing at x = 10, y = −5 + 10·t."""
    wall = box_body("t/instance:wall", (0.2, 40.0, 4.0), PoseTrack.constant(F.make_transform(np.eye(3), [20.1, 0, 0])),
                    3, (0.5, 0.5, 0.5), 0.5, centre_body_m=(0.0, 0.0, 0.0))
    track = linear_track((10.0, -5.0, 0.0), (0.0, 10.0, 0.0), t_end_s=1.0)
    if present is not None:
        track = PoseTrack(track.t_s, track.position_m, track.quat_xyzw, track.velocity_mps,
                          track.angular_velocity_rps, present)
    box = box_body("t/actor:box", (1.0, 1.0, 1.0), track, 10, (0.5, 0.5, 0.5), 0.5, centre_body_m=(0.0, 0.0, 0.0))
    return SceneGeometry([wall, box])


def test_moving_body_is_hit_at_each_rays_own_time_and_nearest_wins():
    scene = crossing_scene()
    times = np.array([0.0, 0.3, 0.5, 0.54, 0.56, 0.7, 1.0])
    o = np.zeros((len(times), 3))
    d = np.tile([1.0, 0.0, 0.0], (len(times), 1))
    hits = scene.cast(o, d, times, 100.0, exact=True)
    y = -5.0 + 10.0 * times
    on_box = np.abs(y) < 0.5
    np.testing.assert_array_equal(hits.entity_id == "t/actor:box", on_box)
    np.testing.assert_allclose(hits.distance_m, np.where(on_box, 9.5, 20.0), atol=1e-9)
    np.testing.assert_allclose(hits.point_body[on_box], np.stack([np.full(on_box.sum(), -0.5), -y[on_box], 0 * y[on_box]], 1),
                               atol=1e-9)


def test_absent_body_has_no_geometry():
    present = np.ones(51, bool)
    present[24:27] = False  # t = 0.48 .. 0.52
    scene = crossing_scene(present)
    hits = scene.cast(np.zeros((2, 3)), [[1.0, 0, 0]] * 2, [0.5, 0.54], 100.0)
    assert list(hits.entity_id) == ["t/instance:wall", "t/actor:box"]


def random_rays(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    o = np.column_stack([rng.uniform(-5, 60, n), rng.uniform(-6, 6, n), rng.uniform(0.5, 3.0, n)])
    d = rng.normal(size=(n, 3))
    d[:, 2] = -np.abs(d[:, 2]) * 0.3
    return o, d


def test_per_ray_times_agree_with_the_world_frozen_at_each_time():
    """Casting rays at time t equals casting against every body posed at t (a bare Embree scene)."""
    scene, _ = street_scene()
    rng = np.random.default_rng(7)
    o, d = random_rays(rng, 4000)
    times = rng.choice([0.2, 0.7, 1.3], size=len(o))
    hits = scene.cast(o, d, times, 150.0)
    for t in (0.2, 0.7, 1.3):
        sel = times == t
        dn = d[sel] / np.linalg.norm(d[sel], axis=1, keepdims=True)
        ref = scene.embree_scene_at(t).run(o[sel].astype(np.float32), dn.astype(np.float32),
                                           dists=np.full(sel.sum(), 150.0, np.float32), output=1)
        bodies_at_t = [b.entity_id for b in scene.bodies]  # embree_scene_at adds every present body in order
        ref_ids = np.array([bodies_at_t[g] if g >= 0 else None for g in ref["geomID"]], dtype=object)
        agree = ref_ids == hits.entity_id[sel]
        ref_dist = np.where(ref["geomID"] >= 0, ref["tfar"], np.inf)
        # Where the entity differs it must be a tie between coincident surfaces (ego floor on the road).
        np.testing.assert_allclose(hits.distance_m[sel], ref_dist, atol=1e-3)
        assert agree.mean() > 0.99


def test_swept_bounds_contain_the_body_throughout():
    scene, _ = street_scene()
    for b in scene.moving:
        lo, hi = scene.swept_bounds(b, 0.31, 0.47)
        body = scene.bodies[b]
        for T in body.track.poses_at(np.linspace(0.31, 0.47, 200)):
            w = body.mesh_vertices @ T[:3, :3].T + T[:3, 3]
            assert np.all(w >= lo) and np.all(w <= hi)


def test_swept_boxes_of_a_cast_are_each_bodys_swept_bounds_bit_for_bit():
    """The casts' batch (planar tracks sampled together) gives what swept_bounds gives body by body: windows at
    and across track ticks, a one-instant window, the track's start (the one-by-one path), a never-present
    reserve and one that enters at its last tick."""
    scene, _ = street_scene()
    reserve, entering = crossing_scene(present=np.zeros(51, bool)), crossing_scene(present=np.arange(51) == 50)
    rng = np.random.default_rng(5)
    windows = [(0.31, 0.47), (0.0, 0.1), (0.3, 0.3), (0.5, 0.5000001), (0.2, 0.6), (0.2, 1.0)]
    windows += [tuple(sorted(rng.uniform(0.0, 1.0, 2))) for _ in range(30)]
    for geo in (scene, reserve, entering):
        for w in windows:
            got = geo._swept_boxes(geo.moving, *w)
            for b in geo.moving:
                ref = geo.swept_bounds(b, *w)
                assert (got[b] is None) == (ref is None), (b, w)
                if ref is not None:
                    assert got[b][0].tobytes() == ref[0].tobytes() and got[b][1].tobytes() == ref[1].tobytes()


def test_a_body_never_present_has_no_swept_bounds_and_its_range_is_still_checked():
    from simready.world.motion import TrackRangeError

    scene = crossing_scene(present=np.zeros(51, bool))  # a reserve that never enters (51 ticks, 0 … 1 s)
    (b,) = scene.moving
    assert scene.swept_bounds(b, 0.2, 0.6) is None
    with pytest.raises(TrackRangeError):  # what sampling the window says, shortcut or not
        scene.swept_bounds(b, 0.5, 1.5)
    assert scene.cast(np.zeros((1, 3)), [[1.0, 0.0, 0.0]], 0.5, 100.0).entity_id[0] == "t/instance:wall"
    entering = crossing_scene(present=np.arange(51) == 50)  # present at its last tick only
    (b,) = entering.moving
    assert entering.swept_bounds(b, 0.2, 0.6) is None and entering.swept_bounds(b, 0.2, 1.0) is not None


def test_body_order_does_not_change_anything():
    scene, bodies = street_scene()
    shuffled = SceneGeometry(list(bodies.values())[::-1], separate=[EGO_ID])
    o, d = random_rays(np.random.default_rng(1), 2000)
    a, b = scene.cast(o, d, 0.4, 150.0), shuffled.cast(o, d, 0.4, 150.0)
    np.testing.assert_array_equal(a.entity_id, b.entity_id)
    np.testing.assert_array_equal(a.compact_id, b.compact_id)
    np.testing.assert_array_equal(a.distance_m, b.distance_m)


def test_ignore_needs_a_separately_cast_body():
    scene, _ = street_scene()
    with pytest.raises(ValueError, match="separate"):
        scene.cast(np.zeros((1, 3)), [[1.0, 0, 0]], 0.0, 10.0, ignore=["bench/instance:road"])
    o = np.array([[0.0, 0.0, 0.75]])  # inside the ego's box
    assert scene.cast(o, [[1.0, 0, 0]], 0.0, 200.0).entity_id[0] == EGO_ID
    assert scene.cast(o, [[1.0, 0, 0]], 0.0, 200.0, ignore=[EGO_ID]).entity_id[0] != EGO_ID


def test_occluded_agrees_with_cast():
    scene, _ = street_scene()
    o, d = random_rays(np.random.default_rng(4), 3000)
    hits = scene.cast(o, d, 0.9, 30.0)
    np.testing.assert_array_equal(scene.occluded(o, d, 0.9, 30.0), hits.hit)


def test_read_obj_keeps_source_order_and_triangulates_polygons(tmp_path):
    path = tmp_path / "m.obj"
    path.write_text("# quad and a triangle\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\n"
                    "f 1/1/1 2/1/1 3/1/1 4/1/1\nf -4 -2 -1\n")
    v, f = read_obj_triangles(path)
    assert v.shape == (4, 3)
    np.testing.assert_array_equal(f, [[0, 1, 2], [0, 2, 3], [0, 2, 3]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_refine_is_the_numpy_refine_bit_for_bit(dtype):
    """Static hits refined by the compiled kernel, in one step or after a distances-only refinement, give
    exactly the numpy passes' distances and barycentrics (moving hits go through numpy either way)."""
    scene, _ = street_scene(subdivisions=1)
    rng = np.random.default_rng(7)
    o = np.tile([0.0, 0.0, 1.6], (20000, 1)) + rng.normal(0.0, 0.5, (20000, 3))
    d = rng.normal(0.0, 1.0, (20000, 3)) + [3.0, 0.0, -0.3]
    if dtype == np.float64:
        d /= np.linalg.norm(d, axis=1, keepdims=True)
    cast = scene.cast(o.astype(dtype), d.astype(dtype), rng.uniform(0.0, 1.5, 20000), 150.0,
                      normalized=dtype == np.float64)
    assert cast.hit.sum() > 10000 and (~np.take(scene._is_static_ext, cast.body_index) & cast.hit).any()
    for steps in ((True,), (False, True)):
        fast, ref = (scene.cast(o.astype(dtype), d.astype(dtype), cast.time_s, 150.0,
                                normalized=dtype == np.float64) for _ in range(2))
        for bary in steps:
            held = fast.distance_m
            fast.refine(barycentrics=bary, copy=bary)  # a distances-only step refines in place
            ref.refine(barycentrics=bary, compiled=False)
            assert (fast.distance_m is held) == (not bary)
        np.testing.assert_array_equal(fast.distance_m, ref.distance_m)
        np.testing.assert_array_equal(fast.barycentric_uv, ref.barycentric_uv)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_hit_points_are_the_numpy_ones_bit_for_bit(dtype):
    scene, _ = street_scene(subdivisions=1)
    rng = np.random.default_rng(8)
    o = np.tile([0.0, 0.0, 1.6], (5000, 1)) + rng.normal(0.0, 0.5, (5000, 3))
    d = rng.normal(0.0, 1.0, (5000, 3)) + [3.0, 0.0, -0.3]
    if dtype == np.float64:
        d /= np.linalg.norm(d, axis=1, keepdims=True)
    hits = scene.cast(o.astype(dtype), d.astype(dtype), 0.5, 150.0, normalized=dtype == np.float64).refine()
    idx = hits.hit_index[::3]
    np.testing.assert_array_equal(hits.point_world_of(idx), hits.point_world_of(idx, compiled=False))


def test_the_scenes_of_one_template_share_its_static_bodies(tmp_path) -> None:
    """A sample's base and branches are built from one template: its static instances' bodies (and their world
    vertices) are built once and shared, and a scene from them casts the bits a scene built afresh casts."""
    from simready.raycast import meshes
    from simready.sensors_hw import scene_build as SB
    from simready.sensors_hw.trace_input import read_trace_input
    from simready.sim.run import run_simulation
    from simready.sim.storage.trace import write_trace
    from tests.fixtures.sim import catalog, crossing, template

    tpl, cat, manifest = template(), catalog(), crossing(clip_s=1.0)
    path = write_trace(run_simulation(manifest, tpl, backend="kinematic-v1", catalog=cat).trace, tmp_path / "t.parquet")
    trace = read_trace_input(path)
    instances = {tpl.instance_id(i.name) for i in tpl.instances}

    def statics(built: SB.BuiltScene) -> list[Body]:
        return [b for b in built.scene.bodies if b.entity_id in instances]

    a, b = SB.build_scene(tpl, cat, manifest, trace), SB.build_scene(tpl, cat, manifest, trace)
    assert len(statics(a)) == len(instances)
    assert all(x is y for x, y in zip(statics(a), statics(b)))
    SB._STATICS.clear()
    meshes._WORLD_VERTICES.clear()
    fresh = SB.build_scene(tpl, cat, manifest, trace)
    assert not any(x is y for x, y in zip(statics(a), statics(fresh)))
    rng = np.random.default_rng(3)
    origins = np.array([0.0, 0.0, 1.5]) + rng.normal(0.0, 15.0, (4000, 3)) * [1.0, 1.0, 0.0]
    dirs = rng.normal(size=(4000, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    times = np.full(4000, 0.5)
    shared, new = (built.scene.cast(origins, dirs, times, 100.0, exact=True) for built in (b, fresh))
    assert shared.hit.any()
    for name in ("hit", "distance_m", "body_index", "triangle_index", "barycentric_uv"):
        assert np.array_equal(getattr(shared, name), getattr(new, name), equal_nan=True), name
    # prepare_statics (what a stage calls before forking its workers) computes the static bodies' world vertices,
    # so the workers read them instead of each computing its own.
    SB._STATICS.clear()
    meshes._WORLD_VERTICES.clear()
    assert SB.prepare_statics(tpl, cat) == len(instances)
    assert len(meshes._WORLD_VERTICES) >= len(instances)
    # body_indices: every body of the named entities, ascending, unknown names ignored, from the entity index.
    scene = fresh.scene
    names = [scene.entity_ids_of_body[-1], "nobody", scene.entity_ids_of_body[0]]
    assert scene.body_indices(names) == [i for i, e in enumerate(scene.entity_ids_of_body) if e in set(names)]
    assert scene.body_indices([]) == []


def test_scenes_of_the_same_static_bodies_share_one_static_embree_scene():
    # A sample's base and branches are built from the template's kept static bodies: the static scene is built once.
    # A static body built again with the same arrays matches too; a moved one gets a scene of its own.
    T_other = F.make_transform(np.eye(3), [0.0, 6.0, 0.5])
    cube = Body("t/instance:cube", CUBE.vertices, CUBE.faces, "sha256:cube", "render.obj", 7,
                track=PoseTrack.constant(T_CUBE))

    def parked(T: np.ndarray) -> Body:
        return Body("s/actor:parked", CUBE.vertices, CUBE.faces, "sha256:cube", "render.obj", 7,
                    track=PoseTrack.constant(T))

    first, again = SceneGeometry([cube, parked(T_other)]), SceneGeometry([cube, parked(T_other)])
    moved = SceneGeometry([cube, parked(F.make_transform(np.eye(3), [0.0, 6.5, 0.5]))])
    assert again._static_scene is first._static_scene
    assert moved._static_scene is not first._static_scene
    rng = np.random.default_rng(3)
    o = rng.normal(size=(500, 3)) * 0.2 + [0.0, 0.0, 0.8]
    d = np.array([5.0, 2.0, 1.0]) - o + rng.normal(size=(500, 3)) * 0.8
    d[::2] = np.array([0.0, 6.0, 0.5]) - o[::2] + rng.normal(size=(250, 3)) * 0.5
    hits = [s.cast(o, d, np.zeros(500), 100.0) for s in (first, again, moved)]
    np.testing.assert_array_equal(hits[0].body_index, hits[1].body_index)
    np.testing.assert_array_equal(hits[0].distance_m, hits[1].distance_m)
    assert (hits[0].body_index >= 0).sum() > 100
    assert not np.array_equal(hits[0].distance_m, hits[2].distance_m)
