"""The dynamic-v1 PyBullet world: batched static bodies named by instance, results independent of in-process caches."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from simready.sim.backends.dynamic import pieces, pool
from simready.sim.backends.dynamic import plan as static_plan
from simready.sim.backends.dynamic.chassis import heading_xy
from simready.sim.engine import Engine
from simready.sim.run import run_simulation
from simready.sim.core.scene import build_scene
from tests.fixtures.sim import catalog, crossing, ego_only, template

ROOT = Path(__file__).resolve().parents[1]


def _dynamic_bytes() -> bytes:
    return run_simulation(crossing(clip_s=2.0), template(), backend="dynamic-v1", catalog=catalog()).trace.to_bytes()


def test_every_static_instance_is_one_named_body() -> None:
    scene = build_scene(ego_only(clip_s=1.0), template(), backend="dynamic-v1", catalog=catalog())
    engine = Engine(scene)
    try:
        b = engine.backend
        plan = static_plan.world_plan(scene)
        # One body per static collider (instances, then ground boxes), each named once; batching only merged calls.
        assert sorted(b.static_key.values()) == list(range(len(plan.names)))
        assert sorted(b.static_names.values()) == sorted(plan.names)
        assert sum(len(g.positions) for g in plan.groups) == len(plan.names)
        assert len(plan.groups) < len(plan.names) // 2
        # Every body sits where its instance is (the poles, say).
        tpl = template()
        poles = {tpl.instance_id(i.name): i for i in tpl.instances if i.asset.startswith("asset:pole/")}
        assert poles
        for body, name in b.static_names.items():
            if name in poles:
                pos, _ = b.world.call(p.getBasePositionAndOrientation, body)
                inst = poles[name].pose
                assert pos == pytest.approx((inst.x, inst.y, inst.z), abs=1e-9)
    finally:
        engine.close()


def test_ego_contact_with_a_static_names_that_instance() -> None:
    """Drop the ego's body onto a pole: the contact key maps back to the pole's instance id."""
    scene = build_scene(ego_only(clip_s=1.0), template(), backend="dynamic-v1", catalog=catalog())
    engine = Engine(scene)
    try:
        b = engine.backend
        tpl = template()
        pole = next(i for i in sorted(tpl.instances, key=lambda i: i.name) if i.asset.startswith("asset:pole/"))
        pos = np.array(engine.state.bodies.pos)
        pos[b.ego] = (pole.pose.x, pole.pose.y, pole.pose.z)
        bodies = engine.state.bodies
        b._place_ego(type(bodies)(pos, bodies.quat, bodies.vel * 0.0, bodies.omega * 0.0, bodies.present))
        b.world.call(p.stepSimulation)
        contacts, _ = b._contacts(engine.state, pos, np.asarray(engine.state.coords.yaw), bodies.present)
        names = {b.static_contact_names[k] for k in contacts if k[1] < 0}
        assert tpl.instance_id(pole.name) in names
        assert all(k[0] == b.ego for k in contacts if k[1] < 0)
    finally:
        engine.close()


def test_trace_bytes_do_not_depend_on_warm_caches() -> None:
    """Cold caches (world plans, collision pieces) and a new PyBullet client give the bytes a warm, pooled run gives."""
    static_plan._PLANS.clear()
    pieces._PIECES.clear()
    held = [pool.World() for _ in range(pool.MAX_IDLE_CLIENTS + 1)]  # drain the pool: the next run connects anew
    try:
        cold = _dynamic_bytes()
    finally:
        for w in held:
            w.close()
    assert pool._IDLE_CLIENTS and static_plan._PLANS
    warm = _dynamic_bytes()
    assert warm == cold


_CHILD = """
import hashlib, sys
sys.path.insert(0, {root!r})
from tests.test_sim_world import _dynamic_bytes
print(hashlib.sha256(_dynamic_bytes()).hexdigest())
"""


@pytest.mark.slow
def test_fresh_process_matches_warm_in_process_run() -> None:
    _dynamic_bytes()
    here = hashlib.sha256(_dynamic_bytes()).hexdigest()
    out = subprocess.run([sys.executable, "-c", _CHILD.format(root=str(ROOT))], capture_output=True, text=True, check=True,
                         cwd=str(ROOT))
    assert out.stdout.strip().splitlines()[-1] == here


def test_heading_matches_pybullet_matrix_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    for k in range(5000):
        q = rng.normal(size=4)
        if k % 2:
            q = q / np.linalg.norm(q)
        R = p.getMatrixFromQuaternion(q.tolist())
        assert heading_xy(q.tolist()) == (R[0], R[3])


def test_reduced_hull_file_lists_each_used_vertex_once(tmp_path: Path) -> None:
    """The reduced copy of a collision mesh keeps the vertices its faces use, once each and in file order;
    files with anything PyBullet would split or misread are left alone (None)."""
    cube = "\n".join(f"v {x} {y} {z}" for x in (0, 1) for y in (0, 1) for z in (0, 1))
    faces = "\nf 1 2 4\nf 1 4 3\nf 5 6 8\nf 5 8 7\nf 1 2 6\nf 1 6 5\nf 3 4 8\nf 3 8 7\n"
    text = pieces._reduced_obj("# cube\n" + cube + "\nv 9 9 9" + faces)
    assert text is not None
    verts = [line for line in text.splitlines() if line.startswith("v ")]
    assert verts == cube.splitlines()  # the unused ninth vertex is dropped, the order kept
    assert pieces._reduced_obj("o part\n" + cube + faces) is None
    assert pieces._reduced_obj(cube + "\nf -1 -2 -3\n") is None
    assert pieces._reduced_obj(cube + "\nf 1 2 x\n") is None


def test_reduced_hulls_are_used_only_where_pybullet_builds_the_same_hull() -> None:
    """Every catalog mesh given a reduced copy has the catalog file's hull (vertices, order, bounds) in PyBullet."""
    cat = catalog()
    files = sorted({piece[1] for asset in sorted(cat.entries) for piece in pieces.asset_pieces(cat, asset)
                    if piece[0] == "mesh"})
    reduced = pieces._reduced_hulls(files)
    assert sum(r is not None for r in reduced) > len(files) // 2
    client = p.connect(p.DIRECT)
    try:
        for source, copy in zip(files, reduced):
            if copy is None:
                continue
            hulls = []
            for f in (source, copy):
                body = p.createMultiBody(0.0, p.createCollisionShape(p.GEOM_MESH, fileName=f, physicsClientId=client),
                                         physicsClientId=client)
                hulls.append((p.getMeshData(body, physicsClientId=client), p.getAABB(body, physicsClientId=client)))
            assert hulls[0] == hulls[1], source
    finally:
        p.disconnect(client)


def test_tunnelling_ray_sees_the_statics_it_crosses() -> None:
    """A centre of mass that jumps through a building between ticks is reported by name; a jump along open
    road is not. (The ray used to see nothing: rays carry collision group 1, which the statics' mask lacked.)"""
    scene = build_scene(ego_only(clip_s=1.0), template(), backend="dynamic-v1", catalog=catalog())
    engine = Engine(scene)
    try:
        b = engine.backend
        cid = b.world.client
        building = next(body for body, name in sorted(b.static_names.items())
                        if body not in b.ground_bodies and "building" in name)
        lo, hi = p.getAABB(building, physicsClientId=cid)
        mid_y, mid_z = (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2
        state = engine.state
        e = scene.actors.ego
        plan = type("P", (), {"throttle": np.ones(len(scene.actors)), "accel": np.ones(len(scene.actors))})()

        def jump(x0: float, x1: float, y: float, z: float) -> list[dict]:
            b._prev_com, b._prev_tick = [x0, y, z], state.tick
            pos = np.array([x1, y, z]) - b.com
            b._check(state, pos, np.zeros(3), np.zeros(3), tuple(b.com.tolist()), None, plan)
            return [c for c in b.rollout_checks() if c["check"] == "tunnelling"]

        (clean,) = jump(-10.0, -9.0, scene.bounds[1] - 1.0, mid_z)
        assert clean["passed"]
        (crossed,) = jump(lo[0] - 1.0, hi[0] + 1.0, mid_y, mid_z)
        assert not crossed["passed"] and b.static_names[building] in crossed["detail"]
    finally:
        engine.close()


def test_a_kept_world_gives_the_bits_of_a_new_one() -> None:
    """Branches restored into a world kept for their scene (statics standing; a thrown body and a woken parked car
    left by the branch before) give the bytes they give in a new world."""
    from simready.common import paths
    from simready.sim.branch import _run_branch
    from simready.testing import demo
    from simready.world.template import load_template

    tpl = load_template(paths.TEMPLATES_DIR / "residential_crosswalk_v3.yaml")
    scene = build_scene(demo.bench_manifest(tpl, catalog(), clip_s=6.5), tpl, backend="dynamic-v1", catalog=catalog())
    parent = Engine(scene)
    parent.run(until_tick=scene.warmup_ticks + 14)  # the coast branch strikes the crossing pedestrian at 4.04 s
    ckpt = parent.checkpoint()
    parent.close()

    def branch(action: str, new_world: bool) -> tuple[bytes, list[str]]:
        if new_world:
            pool.release_built()
        b = _run_branch(scene, ckpt, action, "common", None, action, 0.28)
        return b.trace.to_bytes(), [e["type"] for e in b.trace.events]

    coast_new = branch("coast", True)
    assert "collision" in coast_new[1]
    assert pool._BUILT and pool._BUILT[-1][0]() is scene  # kept, with the thrown body and the woken car in it
    brake_kept = branch("brake", False)
    coast_kept = branch("coast", False)
    brake_new = branch("brake", True)
    assert coast_kept == coast_new
    assert brake_kept == brake_new


def test_a_world_kept_for_another_scene_of_the_plan_gives_the_bits_of_a_new_one() -> None:
    """A scene whose statics are another scene's (the same world plan, the same substep) takes that scene's kept world
    instead of building its statics, and rolls out the bytes it gives in a new world, whichever scene came before."""
    from simready.sim.run import finish

    tpl, cat = template(), catalog()
    lone = build_scene(ego_only(clip_s=1.0), tpl, backend="dynamic-v1", catalog=cat)
    busy = build_scene(crossing(clip_s=2.0), tpl, backend="dynamic-v1", catalog=cat)
    assert static_plan.world_plan(lone) is static_plan.world_plan(busy)

    def roll(scene, new_world: bool) -> tuple[bytes, bool]:
        """The rollout's trace bytes, and whether its engine took the world kept before it."""
        if new_world:
            pool.release_built()
        before = [entry[1] for entry in pool._BUILT]
        engine = Engine(scene)
        took = engine.backend.world in before
        try:
            engine.run()
            return finish(engine).to_bytes(), took
        finally:
            engine.close()

    try:
        busy_new, took = roll(busy, True)
        assert not took
        lone_new, took = roll(lone, True)
        assert not took
        busy_kept, took = roll(busy, False)  # the lone ego's world: its one vehicle removed, the crossing's built
        assert took
        lone_kept, took = roll(lone, False)  # the crossing's world, its vehicles removed
        assert took
        assert busy_kept == busy_new
        assert lone_kept == lone_new
    finally:
        pool.release_built()



def test_a_warmed_template_gives_its_scenes_the_same_plan_and_ground() -> None:
    """warm_world (run before a stage forks its workers) builds the very caches a scene of the template reads."""
    from simready.sim.batch import warm_world
    from simready.sim.core.scene import ground

    tpl, cat = template(), catalog()
    static_plan._PLANS.clear()
    ground._GROUND_CACHE.clear()
    warm_world(tpl, cat)
    (planned,) = static_plan._PLANS.values()
    (raster,) = ground._GROUND_CACHE.values()
    scene = build_scene(ego_only(clip_s=1.0), tpl, backend="dynamic-v1", catalog=cat)
    assert static_plan.world_plan(scene) is planned
    assert scene.ground is raster
