"""The per-tick fast paths (scalar loops, cursors) return exactly what the plain vectorized forms do."""

from __future__ import annotations

import numpy as np

from simready.sim.controllers import longitudinal
from simready.sim.engine import Engine
from simready.sim.paths import PathTable
from simready.sim.scene import build_scene
from tests.test_sim_fixtures import catalog, crossing, template


def _scene():  # type: ignore[no-untyped-def]
    return build_scene(crossing(clip_s=4.0), template(), backend="kinematic-v1", catalog=catalog())


def test_cursor_locate_matches_full_search() -> None:
    scene = _scene()
    table = PathTable.build(scene.initial_paths, scene.lane_ids, scene.actors.chord)
    rng = np.random.default_rng(7)
    u = np.zeros(len(scene.actors))
    for _ in range(200):
        u = u + rng.uniform(0.0, 3.0, len(u))
        want = table.base + table.segments(u)
        assert table.locate(u).tolist() == want.tolist()
        lane, s = table.lanes_at(u)
        k = want
        assert lane.tolist() == table.seg_lane[k].tolist()
    # Going backwards falls back to the full search.
    u = u * 0.5
    assert table.locate(u).tolist() == (table.base + table.segments(u)).tolist()


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
