"""Left turns across oncoming traffic under dynamic-v1: the ground has no tile seams, the yielding ego waits clear.

Two causes made every ``signalized_left_turn`` manifest fail ``evaluate_trace``
under dynamic-v1: the shuttle's faceted wheel colliders caught the top edge of
the junction slab where an approach arm's road tile met it (an internal edge
of two coplanar colliders), hopping with 11–17 m/s² spikes; and the junction
waiting point, a fixed 2 m along the path before the centreline crossing, left
the front corner of the turning ego inside the oncoming lane, where the
immovable kinematic oncoming car struck and pushed it (acceleration spikes and
"energy gain without actuation").
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from simready.sim.behavior import junctions
from simready.sim.evaluation.evaluate import evaluate_trace
from simready.sim.core.reference_paths import lane_path
from simready.sim.run import run_simulation
from simready.testing import demo
from tests.fixtures.sim import INTERSECTION, catalog, template


def _ego_accel(trace) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    ids = trace.header["actor_ids"]
    n, e = len(ids), ids.index("ego")
    r = len(trace.ticks) // n
    vx, vy, vz = (trace.column(c).reshape(r, n)[:, e] for c in ("vx", "vy", "vz"))
    return np.hypot(np.diff(vx), np.diff(vy)) / trace.header["dt"], vz


def test_ego_drives_across_the_junction_slab_seam_without_a_hop() -> None:
    """Straight north from the south arm's tiles onto the junction slab (seam at y = −10) at 6 m/s, no actuation.

    Before the ground floor slab the shuttle's front wheel met the junction tile's edge at the seam:
    |v_z| ≈ 0.28 m/s and a 20 ms acceleration of 11–13 m/s²; on one flat surface nothing happens.
    """
    tpl = template(INTERSECTION)
    cat = catalog()
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "s_in", 40.0, (1.75, -20.0, math.pi / 2), 6.0, role="ego",
                       route=["s_in", "s_to_n", "n_out"], rules=dict(demo.RULES, obey_signals=False))
    m = demo.assemble(tpl, cat, "seam", [ego], [], clip_s=4.0, warmup_s=0.2)
    r = run_simulation(m, tpl, backend="dynamic-v1", catalog=cat)
    assert evaluate_trace(r.trace).accepted, r.issues
    acc, vz = _ego_accel(r.trace)
    assert r.trace.df[r.trace.df.actor_id == "ego"].y.max() > 0.0  # crossed the seam and the junction
    assert np.abs(vz).max() < 0.02
    assert acc.max() < 1.0


def test_waiting_point_keeps_the_turning_footprint_out_of_the_oncoming_lane() -> None:
    """s_to_w crosses n_to_s at ~45°: 2 m before the centreline crossing the shuttle's front-left corner is inside
    the oncoming lane; at the waiting point its footprint grown by the margin is just outside it."""
    tpl = template(INTERSECTION)
    graph = tpl.lane_graph
    lane_index = {lane: i for i, lane in enumerate(graph.lanes)}
    path = lane_path(graph, ["s_in", "s_to_w", "w_out"], lane_index)
    conflict = next(c for c in junctions.lane_conflicts(graph)["s_to_w"] if c.other == "n_to_s")
    u_x = path.lane_offset("s_to_w") + conflict.s
    hl, hw, chord = 2.3, 1.05, 2.8
    u_wait = junctions.waiting_point(graph, path, u_x, "n_to_s", hl, hw, chord)
    lane = shapely.LineString(graph.lanes["n_to_s"].points).buffer(0.5 * graph.lanes["n_to_s"].width_m, cap_style="flat")

    def footprint(u_front: float, grow: float) -> shapely.Polygon:
        u_c = u_front - hl
        (x0, y0), (x1, y1) = path.point_at(u_c - chord / 2), path.point_at(u_c + chord / 2)
        yaw = math.atan2(y1 - y0, x1 - x0)
        cx, cy = path.point_at(u_c)
        c, s = math.cos(yaw), math.sin(yaw)
        pts = [(cx + c * a * (hl + grow) - s * b * (hw + grow), cy + s * a * (hl + grow) + c * b * (hw + grow))
               for a, b in ((1, 1), (1, -1), (-1, -1), (-1, 1))]
        return shapely.Polygon(pts)

    assert footprint(u_x - junctions.STOP_BEFORE_M, 0.0).intersects(lane)  # the old waiting point
    assert u_wait < u_x - junctions.STOP_BEFORE_M
    assert not footprint(u_wait, junctions.WAIT_MARGIN_M).intersects(lane)
    assert footprint(u_wait + junctions.WAIT_STEP_M, junctions.WAIT_MARGIN_M).intersects(lane)


@pytest.mark.slow
def test_signalized_left_turn_manifests_are_accepted_by_both_backends() -> None:
    from simready.scenario.generator import generate

    tpl = template(INTERSECTION)
    result = generate(INTERSECTION, "signalized_left_turn", 4, template=tpl)
    assert len(result.manifests) == 4
    for m in result.manifests:
        for backend in ("kinematic-v1", "dynamic-v1"):
            r = run_simulation(m, tpl, backend=backend, catalog=catalog())
            verdict = evaluate_trace(r.trace)
            assert verdict.accepted, (m.sample_id, backend, verdict.reasons())
            assert r.trace.metrics["collisions"] == [], (m.sample_id, backend)
            acc, vz = _ego_accel(r.trace)
            # The hardest thing the ego does is its 8 m/s² stop at the waiting point (plus, under dynamic-v1,
            # the little lateral acceleration of the turn it is in).
            assert acc.max() < 8.5 and np.abs(vz).max() < 0.05, (m.sample_id, backend)
