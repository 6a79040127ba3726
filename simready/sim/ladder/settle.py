"""Physics settle and rollout checks: ladder stage 5 (SPEC §0.4, §8), after the scenario stage's static checks.

:func:`settle_check` places every body of a manifest in a ``dynamic-v1``
world exactly as the manifest puts it at the start of the warm-up, with
no actuation and the ego at rest, and steps :data:`SETTLE_S`. Then, unless
told not to, it rolls the scenario out in full. Each problem is a
rejection reason, cheap before expensive:

``physics.non_finite``     a pose or twist became NaN/inf
``physics.out_of_bounds``  a body left the map (beyond the margin)
``physics.tunnelling``     the ego's centre crossed a collider between ticks, or fell below the ground
``physics.energy_gain``    kinetic + potential energy rose without actuation (a body spawned interpenetrating)
``physics.unsettled``      the resting ego drifted more than :data:`SETTLE_DRIFT_M`
``physics.explosion``      angular rates beyond 10 rad/s
``physics.rollout``        the full rollout stopped (its termination reason)

:class:`PhysicsSettleStage` wraps it as a :class:`simready.scenario.ladder.Stage`
(``name`` ``physics_settle``, ``cost_rank`` 50, ``level`` 5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pybullet as p

from simready.catalog.catalog import Catalog, ensure_catalog
from simready.common.errors import ManifestError
from simready.scenario.ladder import PASS, Fail, Proposal
from simready.scenario.manifest import ScenarioManifest, parse_manifest
from simready.sim.core import constants as C
from simready.sim.backends.dynamic.backend import DynamicBackend
from simready.sim.engine import Engine, initial_state
from simready.sim.run import run_simulation
from simready.sim.core.scene import build_scene
from simready.world.template import WorldTemplate

SETTLE_S = 0.5
#: A body at rest may drift this far while settling (m).
SETTLE_DRIFT_M = 0.05
#: Energy may rise by this much while settling (J, plus 0.5 %): contact slop, not a pop.
SETTLE_ENERGY_SLACK_J = 100.0


@dataclass(frozen=True)
class SettleReport:
    """``reasons``: ``(code, detail)`` per failed check, in check order; empty means passed."""

    reasons: list[tuple[str, str]] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.reasons


def _settle(manifest: ScenarioManifest, template: WorldTemplate, catalog: Catalog) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    scene = build_scene(manifest, template, backend="dynamic-v1", catalog=catalog)
    state0 = initial_state(scene)
    rest = state0.coords.v * 0.0
    state0 = state0.evolve(coords=replace(state0.coords, v=rest), bodies=replace(state0.bodies, vel=state0.bodies.vel * 0.0))
    engine = Engine(scene, state0)
    reasons: list[tuple[str, str]] = []
    measured: dict[str, Any] = {}
    try:
        backend = engine.backend
        assert isinstance(backend, DynamicBackend)  # the scene is built for dynamic-v1
        e = scene.actors.ego
        if e is None:
            return reasons, measured
        backend.hold_agents()
        pos0 = backend._read_ego()[0]
        energy0 = backend._energy_now()
        n = int(round(SETTLE_S / backend.h))
        peak = energy0
        for _ in range(n):
            backend._tyre_forces(0.0, 0.0, engine.state.world.friction)
            backend.world.call(p.stepSimulation)
            pos, q, vel, om, R, _ = backend._read_ego()
            if not (np.isfinite(pos).all() and np.isfinite(vel).all() and np.isfinite(om).all()):
                reasons.append(("physics.non_finite", "the ego's state became non-finite while settling"))
                return reasons, measured
            peak = max(peak, backend._energy_now())
        drift = float(math.hypot(*(pos[:2] - pos0[:2])))
        measured = {"settle_drift_m": round(drift, 6), "settle_energy_gain_j": round(peak - energy0, 3),
                    "settle_z_m": round(float(pos[2]), 6)}
        ground = float(scene.ground.at(pos[None, :2])[0])
        xmin, ymin, xmax, ymax = scene.bounds
        mgn = C.OUT_OF_BOUNDS_MARGIN_M
        if not (xmin - mgn <= pos[0] <= xmax + mgn and ymin - mgn <= pos[1] <= ymax + mgn and abs(pos[2]) <= mgn):
            reasons.append(("physics.out_of_bounds", f"the ego settled at ({pos[0]:.1f}, {pos[1]:.1f}, {pos[2]:.1f})"))
        if pos[2] < ground - 0.3:
            reasons.append(("physics.tunnelling", f"the ego sank to z = {pos[2]:.2f} m below the ground ({ground:.2f} m)"))
        if peak > energy0 * 1.005 + SETTLE_ENERGY_SLACK_J:
            reasons.append(("physics.energy_gain", f"energy rose {peak - energy0:.0f} J with no actuation: the ego starts interpenetrating something"))
        if drift > SETTLE_DRIFT_M:
            reasons.append(("physics.unsettled", f"the resting ego drifted {drift:.3f} m in {SETTLE_S} s"))
        if float(np.abs(om).max()) > 10.0:
            reasons.append(("physics.explosion", f"angular rate {float(np.abs(om).max()):.1f} rad/s while settling"))
    finally:
        engine.close()
    return reasons, measured


def settle_check(manifest: ScenarioManifest, template: WorldTemplate, *, catalog: Catalog | None = None, rollout: bool = True) -> SettleReport:
    """Settle for :data:`SETTLE_S` and (``rollout``) roll out with ``dynamic-v1``; every failure is a reason."""
    if catalog is None:
        catalog = ensure_catalog()
    reasons, measured = _settle(manifest, template, catalog)
    if reasons or not rollout:
        return SettleReport(reasons, measured)
    result = run_simulation(manifest, template, backend="dynamic-v1", catalog=catalog)
    term = result.trace.header.get("termination")
    if term:
        code = "physics.non_finite" if "non-finite" in term["reason"] else (
            "physics.out_of_bounds" if "out of bounds" in term["reason"] else "physics.rollout")
        reasons.append((code, f"rollout stopped at t = {term['t']} s: {term['reason']}"))
    for c in result.trace.metrics.get("rollout_checks", []):
        if not c["passed"]:
            reasons.append((f"physics.{c['check']}", c["detail"]))
    measured["rollout_ticks"] = result.trace.metrics.get("ticks_simulated")
    return SettleReport(reasons, measured)


class PhysicsSettleStage:
    """Ladder stage 5: :func:`settle_check` on the proposal's manifest (its draft validated if need be)."""

    name = "physics_settle"
    cost_rank = 50
    level = 5

    def __init__(self, catalog: Catalog | None = None, *, rollout: bool = True, record: bool = True) -> None:
        self.catalog = catalog
        self.rollout = rollout
        #: Whether the settle's measurements go into the proposal (and so into an accepted manifest's ``realized``).
        self.record = record

    def check(self, proposal: Proposal) -> Any:
        try:
            manifest = proposal.manifest or parse_manifest(proposal.draft, proposal.sample_id)
            report = settle_check(manifest, proposal.template, catalog=self.catalog, rollout=self.rollout)
        except ManifestError as exc:
            return Fail("physics.invalid_input", exc.one_line())
        if self.record:
            proposal.measured.update({f"physics.{k}": v for k, v in report.measured.items()})
        if report.passed:
            return PASS
        code, detail = report.reasons[0]
        return Fail(code, detail)
