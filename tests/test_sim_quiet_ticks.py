"""kinematic-v1's quiet ticks in one compiled call (:mod:`simready.sim.core.tick_kernels`) give the Python tick's bits.

Each rollout runs twice — with the compiled quiet ticks and with every tick
in Python (:meth:`Engine._quiet_setup` returning None) — and the traces must
be the same bytes; the compiled path must also have stepped most ticks, so
a silently disabled path fails here rather than passing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from simready.sim.backends.dynamic import capi
from simready.sim.backends.dynamic import ticks as dynamic_ticks
from simready.sim.engine import quiet_ticks
from simready.sim.controllers import actuation
from simready.sim.core import constants as C
from simready.sim.core import numpy_loops, tick_kernels
from simready.sim.core.scene import build_scene
from simready.sim.engine import Engine
from simready.sim.run import finish, run_simulation, verify_continuation
from simready.scenario.generator import generate
from simready.testing import demo
from tests.fixtures.sim import catalog, crossing, ego_only, template
from tests.test_dynamic_capi import _rear_end


def _python_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Engine, "_quiet_setup", lambda self: None)


def _both(m, template_id: str,  # type: ignore[no-untyped-def]
          monkeypatch: pytest.MonkeyPatch, backend: str = "kinematic-v1") -> tuple[bytes, bytes, int]:
    """The trace bytes with the compiled quiet ticks, without them, and how many ticks the compiled path stepped."""
    stepped = [0]
    quiet = Engine._quiet_ticks

    def counting(self: Engine, end: int) -> int:
        k = quiet(self, end)
        stepped[0] += k
        return k

    with monkeypatch.context() as mp:
        mp.setattr(Engine, "_quiet_ticks", counting)
        fast = run_simulation(m, template(template_id), backend=backend, catalog=catalog()).trace.to_bytes()
    with monkeypatch.context() as mp:
        _python_ticks(mp)
        slow = run_simulation(m, template(template_id), backend=backend, catalog=catalog()).trace.to_bytes()
    return fast, slow, stepped[0]


def _manifest(name: str):  # type: ignore[no-untyped-def]
    if name == "bench":  # ten actors, a crossing pedestrian, a lateral offset, despawns: the bench's rollout
        return demo.bench_manifest(template(), catalog())
    if name == "crossing":
        return crossing(clip_s=5.0)
    if name == "speeds":  # profiles of three shapes, an until, a preemption, ice and a stop
        step = {"shape": "step", "constraint": "time", "value": 0.0}
        return ego_only(clip_s=6.0, interactions=[
            {"id": "slow", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 0.5},
             "speed": {"mode": "absolute", "value": 4.0}, "dynamics": step, "until": {"kind": "at", "t_s": 2.0}},
            {"id": "slower", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 3.0},
             "speed": {"mode": "factor", "value": 0.5},
             "dynamics": {"shape": "cubic", "constraint": "time", "value": 1.0}},
            {"id": "faster", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 3.5},
             "speed": {"mode": "delta", "value": 2.0},
             "dynamics": {"shape": "sinusoidal", "constraint": "rate", "value": 2.0}},
            {"id": "ice", "actor_id": None, "trigger": {"kind": "at", "t_s": 4.5},
             "set": {"key": "env.road_friction", "value": 0.3}},
            {"id": "stop", "actor_id": "ego", "trigger": {"kind": "at", "t_s": 5.0}, "speed": {"mode": "stop"},
             "dynamics": step}])
    if name in ("left_turn", "emerges"):  # the default suite's first samples of two intents (junction waits; a
        # pedestrian's kerb decision under a `when` trigger)
        template_id, intent = (("urban_signalized_intersection", "signalized_left_turn") if name == "left_turn" else
                               ("residential_crosswalk_v3", "pedestrian_emerges_behind_van"))
        (m,) = generate(template_id, intent, 1, catalog=catalog(), template=template(template_id)).manifests
        return m
    walker = demo.pedestrian(catalog(), "walker", (40.0, 4.6, 0.0), ["sn_40", "sn_60"], speed=1.0, cruise=1.0)
    walker["present_at_start"] = False
    return ego_only(clip_s=3.0, extra=[walker], interactions=[  # a walker spawned and despawned
        {"id": "appear", "actor_id": "walker", "trigger": {"kind": "at", "t_s": 1.0}, "exist": {"state": "present"}},
        {"id": "vanish", "actor_id": "walker", "trigger": {"kind": "at", "t_s": 2.0}, "exist": {"state": "absent"}}])


@pytest.mark.parametrize("name", ["bench", "crossing", "speeds", "exist", "left_turn", "emerges"])
def test_compiled_quiet_ticks_are_the_python_ticks_bits(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _manifest(name)
    fast, slow, stepped = _both(m, m.template_id, monkeypatch)
    assert fast == slow
    ticks = m.warmup_ticks + m.clip_ticks
    assert stepped > 0.6 * ticks, f"only {stepped} of {ticks} ticks compiled"


@pytest.mark.parametrize("name", ["bench", "crossing", "speeds", "exist", "left_turn", "emerges", "rear_end"])
def test_dynamic_compiled_quiet_ticks_are_the_python_ticks_bits(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """dynamic-v1's quiet ticks (:mod:`simready.sim.backends.dynamic.ticks`) give the Python ticks' trace, events and
    rollout checks, bit for bit: a crash stops the compiled run after a tick's physics (its reads pending for the
    Python tick), a parked car woken by it, despawns, triggers, a pedestrian's kerb decision."""
    if not capi.available() or not capi.gemv_address() or not capi.pow_address():
        pytest.skip("the C API, numpy's dgemv or the C library's pow is not found here (every tick in Python)")
    m = _rear_end() if name == "rear_end" else _manifest(name)
    fast, slow, stepped = _both(m, m.template_id, monkeypatch, "dynamic-v1")
    assert fast == slow
    ticks = m.warmup_ticks + m.clip_ticks
    assert stepped > (0.3 if name == "rear_end" else 0.6) * ticks, f"only {stepped} of {ticks} ticks compiled"


def test_dynamic_branches_after_a_crash_are_the_python_ticks_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default suite's fourth signalized left turn, branched at its decision: the coast branch crashes, the
    compiled run stops after the physics of a tick with a contact (its delay line and standstill counts put back
    for the Python tick), the brake branch does not; both branches' traces are the Python ticks' bytes."""
    if not capi.available() or not capi.gemv_address() or not capi.pow_address():
        pytest.skip("the C API, numpy's dgemv or the C library's pow is not found here (every tick in Python)")
    from simready.sim.batch import decision_at
    from simready.sim.branch import run_branches

    tid = "urban_signalized_intersection"
    m = generate(tid, "signalized_left_turn", 4, catalog=catalog(), template=template(tid)).manifests[3]
    at_s, _ = decision_at(m)
    stops: list[int] = []
    compiled = dynamic_ticks.run_dynamic_ticks

    def counting(*args):  # type: ignore[no-untyped-def]
        out = compiled(*args)
        stops.append(int(out[1]))
        return out

    def traces() -> list[bytes]:
        bs = run_branches(m, template(tid), at_s=at_s, backend="dynamic-v1", catalog=catalog())
        return [b.trace.to_bytes() for b in bs.branches]

    with monkeypatch.context() as mp:
        mp.setattr(quiet_ticks.dynamic_ticks, "run_dynamic_ticks", counting)
        fast = traces()
    assert dynamic_ticks.STOP_AFTER in stops
    with monkeypatch.context() as mp:
        _python_ticks(mp)
        assert traces() == fast


def test_dynamic_despawns_are_committed_by_the_compiled_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's rollout despawns five vehicles at their paths' ends: the compiled run commits each such tick, the
    actors leaving before its row is recorded (:data:`~simready.sim.backends.dynamic.ticks.STOP_LEFT`), and the engine
    logs their ``despawn`` events; the trace is the Python ticks' bytes."""
    if not capi.available() or not capi.gemv_address() or not capi.pow_address():
        pytest.skip("the C API, numpy's dgemv or the C library's pow is not found here (every tick in Python)")
    m = _manifest("bench")
    compiled = dynamic_ticks.run_dynamic_ticks
    stops: list[int] = []

    def counting(*args):  # type: ignore[no-untyped-def]
        out = compiled(*args)
        stops.append(int(out[1]))
        return out

    with monkeypatch.context() as mp:
        mp.setattr(quiet_ticks.dynamic_ticks, "run_dynamic_ticks", counting)
        fast = run_simulation(m, template(m.template_id), backend="dynamic-v1", catalog=catalog())
    assert stops.count(dynamic_ticks.STOP_LEFT) == sum(e["type"] == "despawn" for e in fast.trace.events) == 5
    with monkeypatch.context() as mp:
        _python_ticks(mp)
        slow = run_simulation(m, template(m.template_id), backend="dynamic-v1", catalog=catalog())
    assert fast.trace.to_bytes() == slow.trace.to_bytes()


def test_dynamic_thrown_body_stays_in_the_compiled_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's coast branch strikes the crossing pedestrian (a thrown body, :mod:`~simready.sim.backends.dynamic
    .thrown`): the compiled ticks read the body and step on while it slides in contact with the ego (the strike's tick,
    its delta-v's and its rest's are Python's) and after it (the kinematic step's overlap with its old pose stops
    nothing); both branches' traces, events and checks are the Python ticks' bytes."""
    if not capi.available() or not capi.gemv_address() or not capi.pow_address():
        pytest.skip("the C API, numpy's dgemv or the C library's pow is not found here (every tick in Python)")
    import inspect

    from simready.sim.branch import run_branches

    m = demo.bench_manifest(template(), catalog())
    k_thrown = list(inspect.signature(dynamic_ticks.run_dynamic_ticks.py_func).parameters).index("thrown")
    compiled = dynamic_ticks.run_dynamic_ticks
    with_body = [0]

    def counting(*args):  # type: ignore[no-untyped-def]
        out = compiled(*args)
        if len(args[k_thrown]):
            with_body[0] += int(out[0]) - int(args[0][tick_kernels.I_TICK])
        return out

    def traces() -> list[bytes]:
        bs = run_branches(m, template(m.template_id), at_s=0.28, actions=("brake", "coast"), backend="dynamic-v1",
                          catalog=catalog())
        return [b.trace.to_bytes() for b in bs.branches]

    with monkeypatch.context() as mp:
        mp.setattr(quiet_ticks.dynamic_ticks, "run_dynamic_ticks", counting)
        fast = traces()
    assert b'"type":"collision"' in fast[1] or b'"type": "collision"' in fast[1], "the coast branch struck nobody"
    assert with_body[0] > 750, f"only {with_body[0]} ticks compiled with a thrown body"
    with monkeypatch.context() as mp:
        _python_ticks(mp)
        assert traces() == fast


def test_dynamic_checkpoint_between_compiled_ticks_continues_as_the_python_ticks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A dynamic-v1 checkpoint in the middle of a compiled run of ticks, restored into a new engine, continues within
    :func:`verify_continuation`'s bounds, and to the same bytes as the same restore stepped in Python (a restored
    PyBullet world is not the uninterrupted one bit for bit, either way)."""
    if not capi.available() or not capi.gemv_address() or not capi.pow_address():
        pytest.skip("the C API, numpy's dgemv or the C library's pow is not found here (every tick in Python)")
    m = demo.bench_manifest(template(), catalog())
    scene = build_scene(m, template(), backend="dynamic-v1", catalog=catalog())

    def continued() -> bytes:
        engine = Engine(scene)
        engine.run(until_tick=scene.warmup_ticks + 437)
        ckpt = engine.checkpoint()
        engine.close()
        restored = Engine.restore(scene, ckpt)
        restored.run()
        trace = finish(restored)
        restored.close()
        ok, detail = verify_continuation(ckpt, scene, trace)
        assert ok, detail
        return trace.to_bytes()

    fast = continued()
    with monkeypatch.context() as mp:
        _python_ticks(mp)
        assert continued() == fast


def test_checkpoint_between_compiled_ticks_continues_bit_for_bit() -> None:
    """A checkpoint taken in the middle of what would be one compiled run of ticks, restored, runs on to the
    uninterrupted trace's bytes (the checkpoint tick is where the compiled call stops)."""
    m = demo.bench_manifest(template(), catalog())
    scene = build_scene(m, template(), backend="kinematic-v1", catalog=catalog())
    engine = Engine(scene)
    engine.run(until_tick=scene.warmup_ticks + 437)
    ckpt = engine.checkpoint()
    engine.run()
    trace = finish(engine)
    engine.close()
    ok, detail = verify_continuation(ckpt, scene, trace)
    assert ok, detail
    plain = run_simulation(m, template(), backend="kinematic-v1", catalog=catalog()).trace
    assert trace.ticks.to_pandas().equals(plain.ticks.to_pandas())  # (NaN s of absent rows compare equal here)


def test_numpy_loops_are_found_and_give_numpys_bits() -> None:
    fp, sin_fp, cos_fp = quiet_ticks._numpy_loops()
    assert fp and sin_fp and cos_fp, "numpy's float64 loops were not found: every kinematic tick would stay in Python"
    rng = np.random.default_rng(3)
    for n in (1, 2, 9, 10, 33):
        y, x = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6, n), rng.normal(size=n)
        out = np.empty(n)
        numpy_loops.atan2_rows(fp, y, x, out)
        assert out.tobytes() == np.arctan2(y, x).tobytes()
        for f, uf in ((sin_fp, np.sin), (cos_fp, np.cos)):
            numpy_loops.unary_rows(f, y, out)
            assert out.tobytes() == uf(y).tobytes()


def test_compiled_actuation_is_the_python_actuation() -> None:
    values = [math.nan, -12.0, -9.0, -3.0, -0.5, -0.0, 0.0, 0.3, 1.0, 2.5, 8.0]
    speeds = [0.0, 0.005, C.STANDSTILL_MPS, 0.5, 7.3, 19.9, 33.0]
    for cmd in values:
        for v in speeds:
            for friction in (0.3, 0.9):
                want = actuation.net_command(cmd, v, 1430.0, friction, 7.5, 2.6)
                got = tick_kernels._net_command(cmd, v, 1430.0, friction, 7.5, 2.6, C.STANDSTILL_MPS,
                                                C.ROLLING_RESISTANCE * C.GRAVITY_MPS2, C.AIR_DENSITY_KG_M3,
                                                C.DRAG_AREA_M2, C.GRAVITY_MPS2)
                assert np.array(got).tobytes() == np.array(want, dtype=np.float64).tobytes(), (cmd, v, friction)


def test_trigger_guards_hold_every_point_of_their_regions() -> None:
    """A ``when`` trigger's guard circle holds every point its ``reaches`` counts as in the region (so outside every
    circle the compiled ticks may skip asking it), and ``by_latest`` bounds the run at the tick the Python tick
    would fire it."""
    from simready.scenario.manifest import Circle, LaneWindow
    from simready.sim.behavior.interactions import quiet
    from simready.sim.core.scene import lane_window_contains

    scene = build_scene(crossing(clip_s=5.0), template(), backend="kinematic-v1", catalog=catalog())
    rng = np.random.default_rng(5)
    for lane, s_from, s_to in (("lane_eb", 29.79, 31.79), ("lane_eb", 0.0, 12.0), ("lane_wb", 80.0, 400.0)):
        window = LaneWindow(shape="lane_window", lane=lane, s_from=s_from, s_to=s_to)
        cx, cy, r = quiet.region_circle(scene, window)
        geom = scene.template.lane_graph.lanes[lane]
        s = rng.uniform(s_from - 5.0, s_to + 5.0, 4000)
        t = rng.uniform(-geom.width_m, geom.width_m, 4000)
        inside = 0
        for si, ti in zip(s.tolist(), t.tolist()):
            x, y = geom.point_at(si, ti)
            if lane_window_contains(scene, window, (x, y)):
                inside += 1
                assert math.hypot(x - cx, y - cy) <= r - quiet.GUARD_MARGIN_M + 1e-9
        assert inside > 100
    cx, cy, r = quiet.region_circle(scene, Circle(shape="circle", x=3.0, y=4.0, r=2.0))
    assert (cx, cy, r) == (3.0, 4.0, 2.0 + quiet.GUARD_MARGIN_M)
    for t_s in (0.0, 0.02, 0.5, 1.23, 3.12, 3.1200000001, 7.0):
        tick = quiet.first_tick_at(scene, t_s - 1e-9)
        t_of = lambda k: (k - scene.warmup_ticks) * scene.dt  # noqa: E731 - TickView.t_s
        assert t_of(tick) >= t_s - 1e-9 and (tick == scene.warmup_ticks or t_of(tick - 1) < t_s - 1e-9)
