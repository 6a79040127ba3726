"""dynamic-v1's substeps through PyBullet's C API (:mod:`simready.sim.backends.dynamic.capi`) against the binding's
path: the same trace bytes, events and rollout checks."""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pybullet as p
import pytest

from simready.scenario.manifest import ScenarioManifest
from simready.sim.backends.dynamic import capi
from simready.sim.core import constants as C
from simready.sim.run import run_simulation
from simready.testing import demo
from tests.fixtures.sim import catalog, crossing, template
from tests.fixtures.traffic import city, lead  # noqa: F401 (fixtures)


def _rollout(m: ScenarioManifest, enabled: bool, monkeypatch: pytest.MonkeyPatch,
             tpl: Any = None) -> tuple[bytes, list[dict[str, Any]]]:
    monkeypatch.setattr(capi, "ENABLED", enabled)
    r = run_simulation(m, tpl or template(), backend="dynamic-v1", catalog=catalog())
    return r.trace.to_bytes(), r.trace.metrics["rollout_checks"]


def _rear_end() -> ScenarioManifest:
    """The ego at rest, a sedan 10 m behind at 15 m/s that runs into it (vehicle-vehicle contact, post-crash stops),
    and a parked car ahead of the ego that the shoved ego wakes and strikes."""
    cat = catalog()
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "lane_eb", 40.0, (40.0, -1.75, 0.0), 0.0, role="ego", cruise=0.0)
    car = demo.vehicle(cat, "car", demo.SEDAN, "lane_eb", 30.0, (30.0, -1.75, 0.0), 15.0)
    parked = demo.parked(cat, "parked", demo.SEDAN, (45.8, -1.75, 0.0))
    return demo.assemble(template(), cat, "capi-rear-end", [ego, car, parked], [], clip_s=1.5, warmup_s=0.2, dt=0.02)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the C API path is found through the ELF symbol table")
def test_the_client_handle_is_found_here() -> None:
    """On Linux with the pinned PyBullet the fast path is on (a silent fallback would pass every other test)."""
    cid = p.connect(p.DIRECT)
    try:
        assert capi.client_handle(cid) is not None
        # No such client (the lowest id not connected: earlier tests may leave pooled clients above this one).
        free = next(k for k in range(1024) if not p.getConnectionInfo(physicsClientId=k)["isConnected"])
        assert capi.client_handle(free) is None
    finally:
        p.disconnect(cid)


@pytest.mark.skipif(not capi.available(), reason="the C API path is found through the ELF symbol table")
def test_base_quaternions_are_the_bindings_multiply_transforms() -> None:
    """capi.base_quats: the rows that have an inertial frame get the binding's multiplyTransforms quaternion, bit for
    bit; the others and the other columns stay as they were."""
    rng = np.random.default_rng(7)
    raw = rng.normal(size=(400, 13))
    raw[:, 3:7] /= np.linalg.norm(raw[:, 3:7], axis=1)[:, None]
    inv = rng.normal(size=(400, 4))
    inv /= np.linalg.norm(inv, axis=1)[:, None]
    has = rng.random(400) < 0.6
    want = raw.copy()
    for k in np.flatnonzero(has).tolist():
        want[k, 3:7] = p.multiplyTransforms((0.0, 0.0, 0.0), want[k, 3:7].tolist(), (0.0, 0.0, 0.0), inv[k].tolist())[1]
    got = raw.copy()
    capi.base_quats(got, inv, has)
    assert got.tobytes() == want.tobytes()
    assert not np.array_equal(got[has], raw[has]) and np.array_equal(got[~has], raw[~has])


@pytest.mark.parametrize("scenario", [pytest.param(lambda: crossing(clip_s=2.0), id="crossing"),
                                      pytest.param(_rear_end, id="rear-end")])
def test_c_api_substeps_give_the_bindings_bytes(scenario: Callable[[], ScenarioManifest],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    m = scenario()
    fast = _rollout(m, True, monkeypatch)
    binding = _rollout(m, False, monkeypatch)
    assert fast == binding


def test_c_api_substeps_with_background_traffic(lead: ScenarioManifest, city: Any,  # noqa: F811 (fixtures)
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Background vehicles handed between the kinematic step and physics (hidden and shown bodies, a changing list
    of moved bodies): the same bytes through either path."""
    m = lead.model_copy(update={"clip_s": 4.0})
    assert _rollout(m, True, monkeypatch, city) == _rollout(m, False, monkeypatch, city)


@pytest.mark.skipif(not capi.available(), reason="the C API path is found through the ELF symbol table")
def test_contact_points_are_the_bindings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backend's contact points through the C API (:func:`capi.contact_points`) are the binding's
    ``getContactPoints`` rows it keeps, in order, bit for bit, tick after tick of a rear-end crash (vehicle-vehicle
    contacts; ground contacts left out by both)."""
    from simready.sim.core.scene import build_scene
    from simready.sim.engine import Engine

    scene = build_scene(_rear_end(), template(), backend="dynamic-v1", catalog=catalog())
    engine = Engine(scene)
    try:
        backend: Any = engine.backend
        seen = 0
        while engine.step():
            monkeypatch.setattr(capi, "ENABLED", True)
            fast = backend._contact_points()
            monkeypatch.setattr(capi, "ENABLED", False)
            assert fast == backend._contact_points()
            seen += len(fast)
        assert seen > 0
    finally:
        engine.close()


@pytest.mark.skipif(not capi.available(), reason="the C API path is found through the ELF symbol table")
def test_tick_step_commands_nothing_where_the_ground_under_an_agent_is_unknown() -> None:
    """capi.tick_step returns -2.0 before any PyBullet command (so the backend takes the drive model's fallback and
    the plain substeps) where an agent's coordinates are not finite: the client handle given here is never used."""
    z1, z3, z4 = np.zeros(1), np.zeros((2, 3)), np.zeros((2, 4))
    pos = z3.copy()
    pos[1, 0] = np.nan
    none = np.zeros(0, dtype=np.int64)
    f1, i1 = np.zeros(1), np.zeros(1, dtype=np.int64)
    got = capi.tick_step(0, 4, 0.005, p.WORLD_FRAME, np.array([5]), -1, -1, False, 0.0, 0.8, np.zeros(15), np.zeros(2),
                         np.zeros(2), np.zeros(2), f1, i1, i1, np.zeros((1, 2)), np.zeros((1, 2)), 0.0, np.zeros(11),
                         0.5, 0.1, none, np.empty((0, 13)), np.zeros((4, 4)), 0.0, 0.0, 1.0, np.array([1]),
                         np.zeros(1, dtype=np.bool_), np.zeros(2, dtype=np.bool_), np.zeros(2), pos, z3, z3, z4, z3, z3,
                         z3, np.zeros(2), np.zeros(2), z1, z1, np.zeros((1, 9)), np.zeros((1, 3)), 9.0, 9.81, 0.02,
                         0.25, 0.25, 0.1, np.zeros((0, 4)), np.zeros(0, dtype=np.bool_), False, np.empty((0, 4)),
                         np.empty((0, 9)), 0, np.empty((0, 3, 1)), np.empty((0, 3, 1)), np.empty(0))
    assert got == (-2.0, 0.0)


def test_lever_arms_are_numpys_product() -> None:
    """The lever arms through the CBLAS ``dgemv`` numpy's ``matmul`` calls (:func:`capi.lever_arms`) are numpy's
    stacked product, bit for bit, on rotation matrices of real quaternions and awkward arms."""
    fp = capi.gemv_address()
    if not fp:
        pytest.skip("numpy's OpenBLAS dgemv is not found here (the backend keeps numpy's product)")
    rng = np.random.default_rng(4)
    q = rng.normal(size=(300, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    rot = np.array([p.getMatrixFromQuaternion(row) for row in q.tolist()])
    coms = (rng.normal(size=(300, 3, 1)) * rng.choice([1e-6, 0.01, 0.4, 3.0], size=(300, 3, 1)))
    got = np.empty_like(coms)
    capi.lever_arms(fp, rot, coms, got)
    assert got.tobytes() == (rot.reshape(-1, 3, 3) @ coms).tobytes()


def test_ego_energy_is_body_energys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ego's energy from one compiled read (:func:`capi.ego_energy`, Python's ``**`` by the C library's ``pow``)
    is :func:`~simready.sim.backends.dynamic.checks.body_energy`'s, bit for bit, tick after tick of a crash; and so is
    the energy of the ego's row of a read (:func:`capi.state_energy`, as the compiled quiet ticks take it from the
    tick's reads instead of a state request of their own)."""
    from simready.sim.backends.dynamic.checks import body_energy
    from simready.sim.core.scene import build_scene
    from simready.sim.engine import Engine

    if capi.pow_address() == 0 or not capi.available():
        pytest.skip("the C library's pow or the C API handle is not found here")
    scene = build_scene(_rear_end(), template(), backend="dynamic-v1", catalog=catalog())
    engine = Engine(scene)
    try:
        b: Any = engine.backend
        sm, (ix, iy, iz) = capi.client_handle(b.world.client), b._inertia_list
        raw, ptrs = np.empty((1, 13)), np.zeros(2, dtype=np.int64)
        seen = 0
        while engine.step():
            fast = b._energy_now()
            want = body_energy(b.world.client, b.ego_body, b.mass, b._inertia_list)
            assert struct.pack("<d", fast) == struct.pack("<d", want)
            assert capi.read_states(sm, np.array([b.ego_body], dtype=np.int64), raw, ptrs)
            row = raw[0].tolist()
            of_row = capi.state_energy(row[2], *row[3:13], b.mass, ix, iy, iz, C.GRAVITY_MPS2,
                                        capi.pow_address())
            assert struct.pack("<d", of_row) == struct.pack("<d", want)
            seen += 1
        assert seen > 50
    finally:
        engine.close()


def test_the_pow_lookup_falls_back_where_the_c_library_cannot_be_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where ``find_library("m")`` names nothing and ``ctypes.CDLL(None)`` raises (Windows: CPython's ``CDLL`` reads
    the name as a string there, a TypeError for None), :func:`capi.pow_address` is 0 (the binding's path), not an
    exception out of every dynamic-v1 rollout's quiet ticks."""
    import ctypes
    import ctypes.util

    def windows_cdll(name: Any, *args: Any, **kwargs: Any) -> Any:
        path_like = "/" in name or "\\" in name  # CPython's CDLL.__init__ on Windows, before it loads anything
        raise OSError(f"{name}: not loadable here ({path_like})")

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(ctypes, "CDLL", windows_cdll)
    capi.pow_address.cache_clear()
    try:
        assert capi.pow_address() == 0
    finally:
        monkeypatch.undo()
        capi.pow_address.cache_clear()


def test_a_rollout_without_the_pointer_lookups_is_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where numpy's dgemv or the C library's pow is not found (another platform or numpy build: the lookups give 0),
    dynamic-v1 falls back to numpy's product, Python's ``**`` and Python ticks: a crash's trace and rollout checks,
    the same bytes as with both found."""
    if not capi.available() or not capi.gemv_address() or not capi.pow_address():
        pytest.skip("the C API, numpy's dgemv or the C library's pow is not found here (nothing to compare with)")
    m = _rear_end()
    found = _rollout(m, True, monkeypatch)
    for gemv, pw in ((0, capi.pow_address()), (capi.gemv_address(), 0), (0, 0)):
        with monkeypatch.context() as mp:
            mp.setattr(capi, "gemv_address", lambda g=gemv: g)
            mp.setattr(capi, "pow_address", lambda q=pw: q)
            assert _rollout(m, True, mp) == found
