"""No contact without an event, across every rollout of the default suite (issue 12).

Every base rollout and every branch of the suite ``make run`` materializes
(its templates, intents and both batches, dynamic-v1) is scanned tick by tick
for footprints that overlap (shapely, independent of the engine's own
footprint kernel); each overlap must lie inside a recorded ``collision`` event
of that pair (from one tick before it began to its end). The same rollouts
are held to the contact-aware plausibility checks: a vehicle–vehicle crash is
accepted by ``evaluate_trace`` and by the gate's physical and temporal checks.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pytest
import shapely

from simready import paths
from simready.catalog.catalog import ensure_catalog
from simready.scenario.generator import generate
from simready.scenario.suite import load_suite
from simready.sim.batch import decision_at
from simready.sim.branch import run_branches
from simready.sim.evaluate import evaluate_trace
from simready.sim.run import run_simulation
from simready.sim.trace import Trace
from simready.validity import gate, policy
from simready.validity.evidence import ScenarioEvidence, collisions_from_events
from simready.world.template import load_template

pytestmark = pytest.mark.slow

#: Footprints overlapping by less than this (m²) touch rather than overlap (the gate's own threshold).
MIN_AREA_M2 = policy.OVERLAP_MIN_AREA_M2


@functools.cache
def _suite_rollouts() -> list[tuple[str, Any, Trace]]:
    """``(label, manifest, trace)`` of every base rollout and branch of the default suite (both batches)."""
    suite = load_suite()
    catalog = ensure_catalog()
    out = []
    for template_id, intents in sorted(suite.templates.items()):
        template = load_template(paths.TEMPLATES_DIR / f"{template_id}.yaml")
        for intent, n in sorted(intents.items()):
            for m in generate(template_id, intent, suite.batches * n, catalog=catalog, template=template).manifests:
                out.append((f"{m.sample_id} base", m, run_simulation(m, template, catalog=catalog).trace))
                for b in run_branches(m, template, at_s=decision_at(m)[0], catalog=catalog).branches:
                    out.append((f"{m.sample_id} {b.label}", m, b.trace))
    return out


def _rectangles(x: np.ndarray, y: np.ndarray, yaw: np.ndarray, length_m: float, width_m: float) -> Any:
    c, s = np.cos(yaw), np.sin(yaw)
    sl = np.array([1.0, -1.0, -1.0, 1.0])
    sw = np.array([1.0, 1.0, -1.0, -1.0])
    px = x[:, None] + c[:, None] * 0.5 * length_m * sl - s[:, None] * 0.5 * width_m * sw
    py = y[:, None] + s[:, None] * 0.5 * length_m * sl + c[:, None] * 0.5 * width_m * sw
    return shapely.polygons(np.stack([px, py], axis=-1))


def _unrecorded_overlaps(manifest: Any, trace: Trace) -> tuple[list[str], int]:
    """``pair @ t: area`` for every tick two footprints overlap outside that pair's recorded contacts, and the
    number of (pair, tick) overlaps seen in all."""
    h = trace.header
    ids = h["actor_ids"]
    n, dt = len(ids), h["dt"]
    r = len(trace.ticks) // n
    col = {k: trace.column(k).reshape(r, n) for k in ("x", "y", "qz", "qw", "t")}
    present = trace.column("present").astype(bool).reshape(r, n)
    yaw = 2.0 * np.arctan2(col["qz"], col["qw"])
    dims = {a.id: (a.dims.l, a.dims.w) for a in manifest.actors}
    windows: dict[frozenset[str], list[tuple[float, float]]] = {}
    for ev in trace.events:
        if ev["type"] == "collision":
            windows.setdefault(frozenset((ev["a"], ev["b"])), []).append((ev["t"] - dt, ev.get("t_end", math.inf)))
    found = []
    seen = 0
    for i in range(n):
        for j in range(i + 1, n):
            (li, wi), (lj, wj) = dims[ids[i]], dims[ids[j]]
            both = present[:, i] & present[:, j]
            near = both & (np.hypot(col["x"][:, i] - col["x"][:, j], col["y"][:, i] - col["y"][:, j])
                           < 0.5 * (math.hypot(li, wi) + math.hypot(lj, wj)))
            rows = np.flatnonzero(near)
            if len(rows) == 0:
                continue
            area = shapely.area(shapely.intersection(
                _rectangles(col["x"][rows, i], col["y"][rows, i], yaw[rows, i], li, wi),
                _rectangles(col["x"][rows, j], col["y"][rows, j], yaw[rows, j], lj, wj)))
            seen += int((area > MIN_AREA_M2).sum())
            for k, a in zip(rows[area > MIN_AREA_M2], area[area > MIN_AREA_M2]):
                t = float(col["t"][k, 0])
                spans = windows.get(frozenset((ids[i], ids[j])), [])
                if not any(lo - 1e-9 <= t <= hi + 1e-9 for lo, hi in spans):
                    found.append(f"{ids[i]}-{ids[j]} @ {t:.2f} s: {a:.3f} m²")
    return found, seen


def test_no_footprint_overlap_without_a_collision_event() -> None:
    rollouts = _suite_rollouts()
    assert len(rollouts) >= 80  # 32 samples, each a base and two branches
    scans = {label: _unrecorded_overlaps(m, tr) for label, m, tr in rollouts}
    assert sum(seen for _, seen in scans.values()) > 100  # crashes overlap footprints: the scan sees them
    bad = {label: found for label, (found, _) in scans.items() if found}
    assert not bad, bad


def test_vehicle_crashes_pass_the_contact_aware_checks() -> None:
    """Every rollout with a vehicle–vehicle collision: evaluate_trace accepts it, the gate's physical and temporal
    checks pass it (and the suite has such crashes, so the test is not vacuous)."""
    crashes = 0
    problems = {}
    for label, m, tr in _suite_rollouts():
        kinds = {a.id: a.kind for a in m.actors}
        if not any(ev["type"] == "collision" and kinds.get(ev["a"]) == kinds.get(ev["b"]) == "vehicle" for ev in tr.events):
            continue
        crashes += 1
        verdict = evaluate_trace(tr)
        ev = ScenarioEvidence(sample_id=m.sample_id, ticks=tr.df, dt=tr.header["dt"], actor_classes={a.id: a.kind for a in m.actors},
                              actor_dims={a.id: (a.dims.l, a.dims.w) for a in m.actors},
                              collisions=collisions_from_events(tr.events))
        report = gate.validate_scenario(ev)
        failed = [c.check for c in report.checks if c.check in ("physical", "temporal") and not c.passed]
        if not verdict.accepted or failed:
            problems[label] = verdict.reasons() + [str(report.check(c).detail) for c in failed]
    assert crashes >= 5, crashes
    assert not problems, problems
