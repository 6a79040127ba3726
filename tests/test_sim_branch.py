"""Matched branches (SPEC §9): one checkpoint, siblings share their history exactly and differ by the action."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from simready.common.errors import ManifestError
from simready.sim.branch import outcome, run_branches, shared_prefix
from simready.testing import demo
from tests.fixtures.sim import catalog, crossing, edit, template


@pytest.fixture(scope="module")
def crn():  # type: ignore[no-untyped-def]
    return run_branches(crossing(clip_s=8.0), template(), backend="kinematic-v1", catalog=catalog())


def test_decision_one_second_before_the_reveal(crn) -> None:  # type: ignore[no-untyped-def]
    reveal = crn.base.trace.metrics["reveal_to_conflict"]["t_reveal"]
    assert crn.decision_source == "base rollout reveal"
    assert crn.decision_t_s == pytest.approx(reveal - 1.0)
    assert crn.checkpoint.tick == 250 + round(crn.decision_t_s / 0.02)


def test_siblings_share_history_and_differ_by_action(crn) -> None:  # type: ignore[no-untyped-def]
    brake, coast = crn.branches
    assert (brake.label, coast.label) == ("brake", "coast")
    assert shared_prefix(brake.trace, coast.trace, crn.checkpoint.tick)
    assert shared_prefix(brake.trace, crn.base.trace, crn.checkpoint.tick)
    assert not shared_prefix(brake.trace, coast.trace, crn.checkpoint.tick + 20)
    pre = [e for e in brake.trace.events if e["tick"] < crn.checkpoint.tick]
    assert pre == [e for e in coast.trace.events if e["tick"] < crn.checkpoint.tick]
    for b in crn.branches:
        h = b.trace.header["branch"]
        assert h["parent_checkpoint"] == crn.checkpoint.id and h["disturbance"] == "common"
        kinds = [e["type"] for e in b.trace.events if e["tick"] == crn.checkpoint.tick]
        assert kinds[:2] == ["checkpoint", "branch"]
    assert not brake.outcome["collision"] and coast.outcome["collision"]
    # Coasting into the pedestrian, the ego's driver brakes to a standstill only after the impact (post-crash).
    assert coast.outcome["collision_relative_speed_mps"] > 1.0 and coast.outcome["collision_delta_v_mps"]
    assert coast.outcome["stopping_distance_m"] > brake.outcome["stopping_distance_m"] > 0.0
    assert brake.outcome["min_distance_m"] > coast.outcome["min_distance_m"] == 0.0


def test_outcome_table_side_by_side(crn) -> None:  # type: ignore[no-untyped-def]
    rows = crn.table
    assert [r["label"] for r in rows] == ["brake", "coast"]
    for key in ("collision", "min_ttc_s", "stopping_distance_m", "min_distance_m", "parent_checkpoint", "disturbance"):
        assert all(key in r for r in rows)


def test_independent_repeats_redraw_and_are_labelled() -> None:
    cat = catalog()
    actors = demo.crossing_actors(cat)
    actors[2]["walk"]["stop_tendency"] = 0.5
    m = demo.assemble(template(), cat, "repeats", actors, demo.crossing_interactions(), clip_s=6.0,
                      occluders=[{"id": "occ_van", "kind": "actor", "actor_id": "van"}], realized={"t_reveal_s": 1.5})
    res = run_branches(m, template(), actions=("coast",), independent=2, backend="kinematic-v1", catalog=cat)
    assert res.decision_source == "realized.t_reveal_s" and res.decision_t_s == pytest.approx(0.5)
    labels = [b.label for b in res.branches]
    assert labels == ["coast", "coast-independent-1", "coast-independent-2"]
    draws = []
    for b in res.branches:
        (ev,) = [e for e in b.trace.events if e["type"] == "branch"]
        assert ev["disturbance"] == ("common" if b.repeat is None else "independent")
        draws.append((ev["friction"], ev["disturbances"]["ped"]["reaction_delay_s"], ev["disturbances"]["ped"]["stop_draw"]))
        assert shared_prefix(b.trace, res.branches[0].trace, res.checkpoint.tick)
    assert draws[0][1] == 0.4
    assert len(set(draws)) == 3


def test_unknown_action_and_missing_reveal_are_input_errors() -> None:
    with pytest.raises(ManifestError, match="unknown action"):
        run_branches(crossing(clip_s=3.0), template(), actions=("swerve",), backend="kinematic-v1", catalog=catalog())
    hidden = edit(crossing(clip_s=3.0), lambda d: d["actors"].__setitem__(2, {**d["actors"][2], "tags": []}))
    lonely = edit(hidden, lambda d: (d["actors"].pop(2), d["interactions"].pop(0), d["lineage"]["asset_families"].remove("pedestrian_adult"),
                                    d["asset_versions"].pop("asset:pedestrian_adult/standard")))
    with pytest.raises(ManifestError, match="pass --at"):
        run_branches(lonely, template(), backend="kinematic-v1", catalog=catalog())


@pytest.mark.slow
def test_dynamic_branches_brake_avoids_coast_hits() -> None:
    from simready.sim.evaluation.evaluate import evaluate_trace

    res = run_branches(crossing(clip_s=7.0), template(), at_s=0.5, backend="dynamic-v1", catalog=catalog())
    brake, coast = res.branches
    assert shared_prefix(brake.trace, coast.trace, res.checkpoint.tick)
    assert not brake.outcome["collision"] and coast.outcome["collision"]
    # Hand check of the brake branch: 6 m/s, 0.2 s delay, 6 m/s² → 1.2 + 3.0 = 4.2 m (tyre model, so ±2 cm).
    assert brake.outcome["stopping_distance_m"] == pytest.approx(4.2, abs=0.02)
    # The struck pedestrian is a body (issue 26): at the bus's surface, never inside its box, thrown ahead of it,
    # falling (tilted) and sliding to rest; its contact with the bus lasts until it is at rest.
    df = coast.trace.df
    ego = df[df.actor_id == "ego"]
    assert ego.speed_mps.iloc[-1] < 0.1
    (hit,) = [e for e in coast.trace.events if e["type"] == "collision"]
    assert [e["actor"] for e in coast.trace.events if e["type"] == "post_crash"] == ["ego"]
    ped_id = hit["b"] if hit["a"] == "ego" else hit["a"]
    ped = df[(df.actor_id == ped_id) & (df.t >= hit["t"] - 1e-9)]
    moving = ego[ego.t >= hit["t"] - 1e-9]
    dims = {a.id: (a.dims.l, a.dims.w) for a in crossing(clip_s=7.0).actors}
    depth = [_penetration(e, q, dims["ego"], dims[ped_id]) for (_, e), (_, q) in zip(moving.iterrows(), ped.iterrows())]
    assert max(depth) <= 0.01, max(depth)
    gap = np.hypot(ped.x.to_numpy() - moving.x.to_numpy(), ped.y.to_numpy() - moving.y.to_numpy())
    assert gap[-1] > gap[0] + 1.0  # thrown ahead of the braking bus
    assert np.hypot(ped.qx, ped.qy).max() > 0.3  # it falls: no longer upright
    assert ped.speed_mps.iloc[-1] < 0.05 and abs(ped.vz.iloc[-1]) < 0.05  # at rest
    rest_t = float(ped.t[ped.speed_mps.to_numpy() >= 0.05].max())
    assert hit["t_end"] == pytest.approx(rest_t + 0.02, abs=0.1)
    # The bus's momentum change follows the mass ratio: small against a pedestrian.
    assert hit["delta_v_mps"]["ego"] < 0.1 * hit["relative_speed_mps"]
    for b in (brake, coast):
        assert evaluate_trace(b.trace).verdict == "accept"
        assert all(c["passed"] for c in b.trace.metrics["rollout_checks"])


def _penetration(a: Any, b: Any, dims_a: tuple[float, float], dims_b: tuple[float, float]) -> float:
    """How deep two footprint rectangles (rows with x, y, qz, qw) overlap (m): the separating-axis test's least overlap."""
    rects = []
    for row, (length, width) in ((a, dims_a), (b, dims_b)):
        yaw = 2.0 * math.atan2(row.qz, row.qw)
        c, s = math.cos(yaw), math.sin(yaw)
        rects.append(np.array([[row.x + c * u * length / 2 - s * v * width / 2, row.y + s * u * length / 2 + c * v * width / 2]
                               for u, v in ((1, 1), (-1, 1), (-1, -1), (1, -1))]))
    best = math.inf
    for r in rects:
        for k in range(4):
            e = r[(k + 1) % 4] - r[k]
            n = np.array([-e[1], e[0]]) / math.hypot(*e)
            pa, pb = rects[0] @ n, rects[1] @ n
            best = min(best, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
    return max(best, 0.0)


def test_stopping_distance_counts_from_the_checkpoint_tick(crn) -> None:  # type: ignore[no-untyped-def]
    """An off-grid decision time rounds to the checkpoint tick, where braking begins: the first braking tick counts."""
    brake = crn.branches[0]
    t0 = (crn.checkpoint.tick - 250) * 0.02
    off_grid = t0 + 0.009
    assert brake.outcome["stopping_from_t_s"] == pytest.approx(t0)
    df = brake.trace.df
    ego = df[(df.actor_id == brake.trace.header["metric_subject"]) & (df.t >= t0 - 1e-9)]
    stop = int(np.flatnonzero(ego.speed_mps.to_numpy() < 0.1)[0])
    xy = ego[["x", "y"]].to_numpy()
    while stop + 1 < len(ego) and ego.speed_mps.iloc[stop + 1] < ego.speed_mps.iloc[stop]:
        stop += 1
    by_hand = float(np.hypot(*np.diff(xy[: stop + 1], axis=0).T).sum())
    assert outcome(brake.trace, off_grid, t0)["stopping_distance_m"] == pytest.approx(by_hand, abs=1e-6)
    # Measured from the first tick at or after the off-grid time, the first braking tick would be missing.
    first_step = float(np.hypot(*(xy[1] - xy[0])))
    assert outcome(brake.trace, off_grid)["stopping_distance_m"] == pytest.approx(by_hand - first_step, abs=1e-6)
    assert first_step > 0.05
