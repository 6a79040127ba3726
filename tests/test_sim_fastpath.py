"""The per-tick fast paths (compiled kernels, scalar loops, cursors) return exactly what the plain vectorized forms do."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simready.sim.controllers import longitudinal
from simready.sim.engine import Engine
from simready.sim.core.reference_paths import PathTable
from simready.sim.core.scene import build_scene
from tests.fixtures.sim import catalog, crossing, template


def _scene(backend: str = "kinematic-v1"):  # type: ignore[no-untyped-def]
    return build_scene(crossing(clip_s=4.0), template(), backend=backend, catalog=catalog())


def test_lanes_at_matches_full_search() -> None:
    """The compiled lane lookup gives the full search's lane and s = u − u0 on it, forwards and backwards."""
    scene = _scene()
    table = PathTable.build(scene.initial_paths, scene.lane_ids, scene.actors.chord)
    rng = np.random.default_rng(7)
    u = np.zeros(len(scene.actors))
    rows = np.arange(len(u))
    for step in range(200):
        u = u + rng.uniform(0.0, 3.0, len(u)) if step != 100 else u * 0.5
        k = table.locate(u)
        lane, s = table.lanes_at(u)
        want_lane = table.seg_lane[k]
        want_s = np.where(want_lane >= 0, u - table.lane_u0[rows, np.maximum(want_lane, 0)], np.nan)
        assert lane.tolist() == want_lane.tolist()
        assert s.tobytes() == want_s.tobytes()


def test_scalar_idm_matches_vectorized() -> None:
    """The planner's scalar IDM/limits equal the vectorized laws bit for bit along a real rollout."""
    scene = _scene()
    engine = Engine(scene)
    a = scene.actors
    while engine.step():
        v = engine.state.coords.v
        gap = np.where(np.arange(len(v)) % 2 == 0, 12.5, np.inf)
        want = longitudinal.idm_interaction(v, np.zeros(len(v)), gap, a.s0, a.time_gap, a.accel_max, a.decel_comfort)
        py = a.py
        for i, vi in enumerate(v.tolist()):
            x = vi * py.time_gap[i] + vi * (vi - 0.0) / py.idm_root2[i]
            s_star = py.s0[i] + (0.0 if 0.0 > x else x)
            ratio = s_star / gap[i] if gap[i] > 0.0 else 1e3
            ratio = ratio if ratio < 1e3 else 1e3
            assert py.accel_max[i] * (1.0 - ratio * ratio) == want[i]
    engine.close()


def _rollout_states(scene, every: int = 7):  # type: ignore[no-untyped-def]
    engine = Engine(scene)
    out = []
    while engine.step():
        if engine.state.tick % every == 0:
            out.append((engine.state, engine.route.paths))
    engine.close()
    return out


def test_compiled_path_bodies_match_vectorized_bits() -> None:
    """path_bodies' compiled kernels give the vectorized form's bits, lateral motion, rest and odd inputs included."""
    from simready.sim.core.kinematics import path_bodies, path_bodies_np

    scene = _scene()
    rng = np.random.default_rng(3)
    for state, table in _rollout_states(scene):
        c = state.coords
        n = len(c.u)
        cases = [(c.d, c.d_rate, np.zeros(n), c.v, c.a),
                 (c.d + rng.normal(0, 0.5, n), rng.normal(0, 0.8, n), rng.normal(0, 2.0, n), c.v * rng.uniform(0, 2, n),
                  rng.normal(0, 3, n)),
                 (c.d, np.where(np.arange(n) % 2 == 0, -0.0, 0.0), np.zeros(n), np.zeros(n), np.zeros(n))]
        for d, d_rate, d_acc, v, a in cases:
            want = path_bodies_np(scene, table, c.u, d, d_rate, d_acc, v, a, state.bodies.present)
            got = path_bodies(scene, table, c.u, d, d_rate, d_acc, v, a, state.bodies.present)
            for w, g in zip((*want[0].__dict__.values(), *want[1:]), (*got[0].__dict__.values(), *got[1:])):
                assert np.asarray(w).tobytes() == np.asarray(g).tobytes()


def _step_whole_arrays(scene, table, prev, prev_yaw, u, v, accel, d, d_rate, d_acc):  # type: ignore[no-untyped-def]
    """What the backends did before the step was fused: integrate, mask absent actors, place, restore, contacts."""
    from simready.sim.core.kinematics import footprint_contacts, path_bodies_np

    present = prev.present
    u1, v1 = longitudinal.integrate(u, v, accel, scene.dt)
    u1, v1, a1 = np.where(present, u1, u), np.where(present, v1, v), np.where(present, accel, 0.0)
    bodies, yaw, slip = path_bodies_np(scene, table, u1, d, d_rate, d_acc, v1, a1, present)
    pos, quat, vel, omega = (np.array(x) for x in (bodies.pos, bodies.quat, bodies.vel, bodies.omega))
    keep = ~present
    pos[keep], quat[keep], vel[keep], omega[keep] = prev.pos[keep], prev.quat[keep], 0.0, 0.0
    yaw = np.where(keep, prev_yaw, yaw)
    return (pos, quat, vel, omega, yaw, slip, u1, v1, a1), footprint_contacts(scene, pos, yaw, present)


@pytest.mark.parametrize("compiled", [True, False], ids=["one-call", "numpy-arctan2"])
def test_fused_step_matches_whole_array_step(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """step_on_paths gives the bits of the whole-array step, with absent actors and lateral motion: in one compiled
    call (numpy's arctan2 loop called from it), and where that loop is not found (two kernels around numpy's
    arctan2)."""
    from dataclasses import replace

    from simready.sim.core import kinematics
    from simready.sim.core.kinematics import step_on_paths

    if not compiled:
        monkeypatch.setattr(kinematics.numpy_loops, "numpy_loop", lambda uf: 0)
    assert bool(kinematics.numpy_loops.numpy_loop(np.arctan2)) == compiled

    scene = _scene()
    rng = np.random.default_rng(17)
    checked = 0
    for state, table in _rollout_states(scene, every=5):
        c, b = state.coords, state.bodies
        n = len(c.u)
        for trial in range(4):
            present = b.present if trial == 0 else rng.uniform(0, 1, n) > 0.3
            prev = replace(b, present=np.array(present, dtype=bool))
            lateral = trial % 2 == 1
            d_rate = rng.normal(0, 0.6, n) if lateral else np.zeros(n)
            d = c.d + (rng.normal(0, 0.3, n) if lateral else 0.0)
            d_acc = rng.normal(0, 1.5, n) if lateral else np.zeros(n)
            accel = rng.normal(0, 4.0, n) if trial else np.array(c.a)
            want, want_contacts = _step_whole_arrays(scene, table, prev, c.yaw, c.u, c.v, accel, d, d_rate, d_acc)
            got = step_on_paths(scene, table, prev, c.yaw, c.u, c.v, accel, d, d_rate, d_acc)
            g = got.bodies
            for w, x in zip(want, (g.pos, g.quat, g.vel, g.omega, got.yaw, got.slip, got.u, got.v, got.accel)):
                assert np.asarray(w).tobytes() == np.asarray(x).tobytes()
            assert got.contacts == want_contacts
            checked += 1
    assert checked > 20


def _overlap(dx: float, dy: float, yaw_i: float, hl_i: float, hw_i: float, yaw_j: float, hl_j: float, hw_j: float) -> bool:
    """Reference separating-axis test of two rectangles in plain Python (j offset by (dx, dy) from i)."""
    ci, si, cj, sj = math.cos(yaw_i), math.sin(yaw_i), math.cos(yaw_j), math.sin(yaw_j)
    for ax, ay in ((ci, si), (-si, ci), (cj, sj), (-sj, cj)):
        ri = hl_i * abs(ci * ax + si * ay) + hw_i * abs(-si * ax + ci * ay)
        rj = hl_j * abs(cj * ax + sj * ay) + hw_j * abs(-sj * ax + cj * ay)
        if abs(dx * ax + dy * ay) >= ri + rj:
            return False
    return True


def test_contact_kernel_matches_all_pairs() -> None:
    from simready.sim.core.kinematics import footprint_contacts

    scene = _scene()
    a = scene.actors
    rng = np.random.default_rng(5)
    n = len(a)
    for trial in range(300):
        xy = rng.uniform(0.0, 12.0 if trial % 2 else 40.0, (n, 2))
        yaw = rng.uniform(-np.pi, np.pi, n)
        present = rng.uniform(0, 1, n) > (0.0 if trial % 3 else 0.3)
        want = set()
        for i in range(n):
            for j in range(i + 1, n):
                dx, dy = float(xy[j, 0] - xy[i, 0]), float(xy[j, 1] - xy[i, 1])
                if (present[i] and present[j] and dx * dx + dy * dy < float((a.radius[i] + a.radius[j]) ** 2)
                        and _overlap(dx, dy, float(yaw[i]), float(a.hl[i]), float(a.hw[i]), float(yaw[j]),
                                     float(a.hl[j]), float(a.hw[j]))):
                    want.add((i, j))
        assert footprint_contacts(scene, xy, yaw, present) == frozenset(want)


def test_divergence_fast_path_agrees_with_full_check() -> None:
    """The compiled predicate clears exactly the states the full check finds nothing wrong with.

    On perception ticks the answer is the full check's; between them bounds
    are not checked, so a state is cleared iff it is finite and no horizontal
    speed exceeds the limit — including a diagonal 130 × 130 m/s (184 m/s),
    which an earlier per-component shortcut let through.
    """
    from dataclasses import replace

    from simready.sim.engine.divergence import divergence, divergence_reason

    scene = _scene()
    for state, _ in _rollout_states(scene, every=40):
        b = state.bodies
        variants = [b]
        for name, k, value in (("pos", 0, 1e6), ("vel", 1, 120.0), ("vel", 0, np.nan), ("quat", 2, np.inf),
                               ("pos", 2, 60.0), ("omega", 2, -np.inf)):
            arr = np.array(getattr(b, name))
            arr[1, k] = value
            variants.append(replace(b, **{name: arr}))
        diagonal = np.array(b.vel)
        diagonal[1, :2] = 130.0
        variants.append(replace(b, vel=diagonal))
        for bodies in variants:
            s = state.evolve(bodies=bodies)
            full = divergence_reason(scene, s)
            assert divergence(scene, s, True) == full
            arrays = (bodies.pos, bodies.quat, bodies.vel, bodies.omega)
            sound = all(np.isfinite(x).all() for x in arrays) and np.hypot(bodies.vel[:, 0], bodies.vel[:, 1]).max() <= 150.0
            assert divergence(scene, s, False) == (None if sound else full)


def test_first_seen_matches_visibility_series() -> None:
    from simready.sim.evaluation import metrics as M

    scene = _scene()
    engine = Engine(scene)
    engine.run()
    arrays = engine.recorder.arrays()
    engine.close()
    a = scene.actors
    subj = a.index[scene.manifest.metric_subject]
    targets = [j for j in range(len(a)) if j != subj]
    seen = M.visibility_series(scene, arrays, subj, targets)
    want = [int(np.argmax(seen[:, c])) if seen[:, c].any() else -1 for c in range(len(targets))]
    for chunk in (1, 5, 64, 10_000):
        assert M.first_seen(scene, arrays, subj, targets, chunk=chunk) == want


def test_kernel_integrate_matches_vectorized_bits() -> None:
    """The compiled constant-acceleration step equals the numpy law bit for bit (stops, −0.0 and NaN included)."""
    from simready.sim.core import kernels

    rng = np.random.default_rng(11)
    for _ in range(50):
        n = 12
        u = rng.uniform(0.0, 100.0, n)
        v = np.abs(rng.normal(5.0, 5.0, n))
        a = rng.normal(0.0, 6.0, n)
        v[0], a[0] = 0.0, -0.0
        v[1], a[1] = 0.1, -8.0
        a[2] = np.nan
        pairs = [kernels.integrate_one(ui, vi, ai, 0.02) for ui, vi, ai in zip(u.tolist(), v.tolist(), a.tolist())]
        u1, v1 = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        want_u, want_v = longitudinal.integrate(u, v, a, 0.02)
        assert u1.tobytes() == want_u.tobytes() and v1.tobytes() == want_v.tobytes()


def test_kernel_segment_search_matches_full_search() -> None:
    """The kernels' binary segment search lands where the full search does: inside, past both ends, at vertices, NaN."""
    from simready.sim.core import kernels

    scene = _scene()
    table = PathTable.build(scene.initial_paths, scene.lane_ids, scene.actors.chord)
    cum, base, last = table.kernel_arrays[:3]
    rng = np.random.default_rng(13)
    for trial in range(200):
        u = rng.uniform(-20.0, table.lengths.max() + 20.0, len(base))
        if trial % 4 == 0:
            # Exactly on vertices (where ``≤`` decides), and NaN.
            u = np.array([cum[b + min(int(rng.integers(0, k + 1)), k)] for b, k in zip(base, last)])
            u[0] = np.nan
        got = [b + kernels._segment(cum, b, k, x) for b, k, x in zip(base.tolist(), last.tolist(), u.tolist())]
        assert got == (table.base + table.segments(u)).tolist()


def _ref_swept(p1, v1, yaw1, hl1, hw1, p2, v2, yaw2, hl2, hw2, horizon_s):  # type: ignore[no-untyped-def]
    """The former vectorized swept test (numpy over pairs × four axes): the bit reference of the kernel."""
    def axes(yaw):  # type: ignore[no-untyped-def]
        c, s = np.cos(yaw), np.sin(yaw)
        return np.stack([c, s], -1), np.stack([-s, c], -1)

    u1, n1 = axes(yaw1)
    u2, n2 = axes(yaw2)
    ax = np.stack(np.broadcast_arrays(u1, n1, u2, n2), -2)
    r1 = hl1[..., None] * np.abs(np.sum(ax * u1[..., None, :], -1)) + hw1[..., None] * np.abs(np.sum(ax * n1[..., None, :], -1))
    r2 = hl2[..., None] * np.abs(np.sum(ax * u2[..., None, :], -1)) + hw2[..., None] * np.abs(np.sum(ax * n2[..., None, :], -1))
    r = r1 + r2
    c0 = np.sum((p2 - p1)[..., None, :] * ax, -1)
    sep = np.max(np.abs(c0) - r, -1)
    cd = np.sum((v2 - v1)[..., None, :] * ax, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_a = (-r - c0) / cd
        t_b = (r - c0) / cd
    moving, inside = cd != 0.0, np.abs(c0) < r
    lo = np.where(moving, np.minimum(t_a, t_b), np.where(inside, -np.inf, np.inf))
    hi = np.where(moving, np.maximum(t_a, t_b), np.where(inside, np.inf, -np.inf))
    start = np.maximum(np.max(lo, -1), 0.0)
    end = np.minimum(np.min(hi, -1), horizon_s)
    return np.where(start <= end, start, np.inf), sep


def test_swept_kernel_matches_vectorized_bits() -> None:
    """TTC and separation from the compiled kernel equal the numpy form bit for bit: apart, touching, overlapping,
    parallel and at-rest pairs, right-angle headings, NaN velocities."""
    from simready.sim.core import geometry as geo

    rng = np.random.default_rng(17)
    k = 4000
    p1, p2 = rng.uniform(-20, 20, (k, 2)), rng.uniform(-20, 20, (k, 2))
    v1, v2 = rng.normal(0, 8, (k, 2)), rng.normal(0, 8, (k, 2))
    yaw1, yaw2 = rng.uniform(-np.pi, np.pi, k), rng.uniform(-np.pi, np.pi, k)
    hl1, hw1, hl2, hw2 = (rng.uniform(0.2, 3.0, k) for _ in range(4))
    p2[:400] = p1[:400] + rng.uniform(-2, 2, (400, 2))  # overlapping or touching
    v2[400:800] = v1[400:800]  # no relative motion
    v1[800:1200] = 0.0
    v2[800:1200] = 0.0  # both at rest
    yaw1[1200:1600] = np.round(yaw1[1200:1600] / (np.pi / 2)) * (np.pi / 2)
    yaw2[1200:1600] = 0.0
    v1[1600:1700, 0] = np.nan
    p2[1700:1800, 1] = np.nan
    args = (p1, v1, yaw1, hl1, hw1, p2, v2, yaw2, hl2, hw2, 6.0)
    ttc, sep = geo.ttc_and_separation(*args)
    want_ttc, want_sep = _ref_swept(*args)
    assert ttc.tobytes() == want_ttc.tobytes()
    assert sep.tobytes() == want_sep.tobytes()
    assert geo.swept_ttc(*args).tobytes() == want_ttc.tobytes()
    # Broadcast shapes as the metrics pass them: one subject against (rows, others).
    grid = [x[:600].reshape(60, 10, *x.shape[1:]) for x in args[:10]]
    ttc_g, _ = geo.ttc_and_separation(grid[0][:, :1], *grid[1:], 6.0)
    want_g, _ = _ref_swept(np.broadcast_to(grid[0][:, :1], grid[0].shape), *grid[1:], 6.0)
    assert ttc_g.tobytes() == want_g.tobytes()
    assert np.isfinite(ttc).any() and np.isinf(ttc).any() and (ttc == 0.0).any()


def test_goal_index_memo_follows_each_tuple() -> None:
    """set_indices answers per tuple object: a new tuple (even an equal one) is read afresh, never a stale list."""
    from simready.sim.core.state import set_indices

    goals = (None, "g", None, "h")
    assert set_indices(goals) == [1, 3]
    assert set_indices(goals) is set_indices(goals)
    assert set_indices((None,) * 4) == []
    assert set_indices(("x", None, None, None)) == [0]
    assert set_indices(goals) == [1, 3]


def test_waiting_interactions_follow_the_status_dict() -> None:
    """The pending / fired-with-until lists are rebuilt when a state carries a new status dict."""
    from types import SimpleNamespace

    from simready.sim.behavior.interactions.quiet import waiting

    inters = (SimpleNamespace(id="a", until=None), SimpleNamespace(id="b", until="u"), SimpleNamespace(id="c", until="u"))
    first = {"a": ("pending", -1), "b": ("fired", 3), "c": ("pending", -1)}
    assert [[i.id for i in x] for x in waiting(inters, first)] == [["a", "c"], ["b"]]
    later = {"a": ("fired", 9), "b": ("released", 9), "c": ("fired", 9)}
    assert [[i.id for i in x] for x in waiting(inters, later)] == [[], ["c"]]
    assert [[i.id for i in x] for x in waiting(inters, first)] == [["a", "c"], ["b"]]


@pytest.mark.parametrize("backend", ["kinematic-v1", "dynamic-v1"])
def test_recorded_rows_are_the_states_bits(backend: str) -> None:
    """The recorder's compiled row copy (record_kernels.record_row) holds each recorded state's bodies, presence, lane and
    s (a walker's s: its u along the walk route) bit for bit, as whole-array copies would."""
    scene = _scene(backend)
    engine = Engine(scene)
    states = []
    while engine.step():
        if engine.state.tick >= scene.warmup_ticks:
            states.append((engine.state, engine.route.paths))
    arrays = engine.recorder.arrays()
    walk = np.array([key[0] == "walk" for key in engine.state.coords.path_keys])
    assert walk.any()
    assert len(arrays["pos"]) == len(states)
    for state, table in states:
        k = state.tick - scene.warmup_ticks
        b = state.bodies
        for name in ("pos", "quat", "vel", "omega", "present"):
            assert arrays[name][k].tobytes() == np.asarray(getattr(b, name)).tobytes()
        lane, s = table.lanes_at(state.coords.u)
        assert arrays["lane"][k].tolist() == lane.tolist()
        assert arrays["s"][k].tobytes() == np.where(walk, state.coords.u, s).tobytes()
        # The extras (record_kernels.record_row_x5 for kinematic-v1's five, record_row_x6 for dynamic-v1's six): each
        # state's rows, bit for bit.
        assert state.extras or k == 0
        for name, row in state.extras.items():
            assert arrays[f"x:{name}"][k].tobytes() == np.asarray(row, dtype=np.float64).tobytes()
    fused = engine.recorder._fused6 if backend == "dynamic-v1" else engine.recorder._fused
    assert fused and not np.all(arrays["x:accel_mps2"] == 0.0)
    if backend == "dynamic-v1":
        assert not np.all(arrays["x:tyre_util"] == 0.0)
    engine.close()


def test_quiet_ticks_fire_the_same_events(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Skipping the trigger checks until the first ``at`` / ``after`` tick (interactions.quiet.quiet_until_of) fires and
    releases every interaction at the tick the checks would: the same events and the same trace bits."""
    from simready.sim.behavior.interactions import quiet as quiet_checks
    from simready.sim.run import finish
    from simready.testing.demo import bench_manifest

    scene = build_scene(bench_manifest(template(), catalog(), clip_s=13.0), template(), backend="kinematic-v1",
                        catalog=catalog())

    def rollout():  # type: ignore[no-untyped-def]
        engine = Engine(scene)
        engine.run()
        arrays = {k: v.tobytes() for k, v in engine.recorder.arrays().items()}
        events = list(engine.events)
        engine.close()
        return events, arrays

    quiet = rollout()
    assert {(e["type"], e.get("interaction")) for e in quiet[0]} >= {("trigger_fired", "lead_slow"), ("released", "lead_slow"),
                                                                     ("trigger_fired", "bike_offset")}
    monkeypatch.setattr(quiet_checks, "quiet_until_of", lambda *args: -1)
    quiet_checks.QUIET[0] = None
    assert rollout() == quiet


def test_fused_divergence_verdict_matches_the_engine_check() -> None:
    """The step's verdict (kernels.pack_step_walk_ok, PathStep.ok) is the engine's divergence predicate
    (kernels.state_ok) of the stepped bodies, with and without the bounds, and its despawn test: on a rollout's
    states, on bodies outside a map moved away from them, on a speed past the explosion limit and past the paths'
    ends."""
    from dataclasses import replace

    from simready.sim.core import constants as C
    from simready.sim.core import kernels as K
    from simready.sim.core.kinematics import step_on_paths

    scene = _scene()
    _x0, _y0, x1, y1 = scene.bounds
    shrunk = replace(scene, bounds=(x1 + 1e3, y1 + 1e3, x1 + 1e3 + 1.0, y1 + 1e3 + 1.0))  # every body off the map
    seen = set()
    for state, table in _rollout_states(scene, every=9):
        c = state.coords
        for sc, boost, du in ((scene, 0.0, 0.0), (shrunk, 0.0, 0.0), (scene, C.EXPLOSION_SPEED_MPS, 0.0),
                              (scene, 0.0, 500.0)):
            got = step_on_paths(sc, table, state.bodies, c.yaw, c.u + du, c.v + boost, np.array(c.a), c.d, c.d_rate,
                                np.zeros(len(c.u)))
            b = got.bodies
            xmin, ymin, xmax, ymax = sc.bounds
            mgn = C.OUT_OF_BOUNDS_MARGIN_M
            want = 0
            for bit, bounds in ((K.OK_STATE, False), (K.OK_BOUNDS, True)):
                if K.state_ok(b.pos, b.quat, b.vel, b.omega, b.present, C.EXPLOSION_SPEED_MPS, bounds, xmin - mgn,
                              xmax + mgn, ymin - mgn, ymax + mgn, mgn):
                    want |= bit
            # The engine's despawn test (Engine._leave_map) on the same u and presence.
            hl, lengths, u = scene.actors.hl.tolist(), table.lengths.tolist(), got.u.tolist()
            if not any(table.leaves[i] and b.present[i] and u[i] + hl[i] > lengths[i] for i in range(len(u))):
                want |= K.OK_STAYS
            assert got.ok == want
            seen.add(want)
    # Each bit both set and cleared: exploding (no OK_STATE), off the map (no OK_BOUNDS), past the ends (no OK_STAYS).
    assert {K.OK_STAYS, K.OK_STATE | K.OK_STAYS, K.OK_STATE | K.OK_BOUNDS | K.OK_STAYS, K.OK_STATE} <= seen
