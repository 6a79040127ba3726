"""The ladder's check of a sample with background traffic (SPEC §20): the whole street rolled out, kinematic-v1.

:class:`simready.scenario.traffic.TrafficSpawnStage` adds the background
vehicles; this stage rolls the sample out with the simulator (every
background vehicle reacting to every actor ahead of it, signals and right of
way) and rejects it when

* a collision involves a background vehicle (``traffic.collision``): the
  traffic must not crash by itself, nor into the scenario's actors;
* the rollout stops early (``traffic.rollout``: non-finite, exploding, out of bounds).

A collision between the scenario's own actors is the scenario's business
(the branches decide it) and passes. Nothing is written to the proposal's
measurements, so an accepted manifest is the same with or without this check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simready.errors import ManifestError
from simready.scenario.ladder import PASS, Fail, Proposal, Verdict
from simready.scenario.manifest import ScenarioManifest, parse_manifest
from simready.scenario.traffic import BACKGROUND_TAG
from simready.sim.run import run_simulation

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.world.template import WorldTemplate


def background_issue(manifest: ScenarioManifest, template: WorldTemplate, catalog: Catalog | None = None) -> tuple[str, str] | None:
    """``(reason, detail)`` of the first thing wrong with the background traffic's rollout, None when clean."""
    background = {a.id for a in manifest.actors if BACKGROUND_TAG in a.tags}
    if not background:
        return None
    trace = run_simulation(manifest, template, backend="kinematic-v1", catalog=catalog).trace
    for ev in trace.events:
        if ev["type"] == "collision" and {ev["a"], ev["b"]} & background:
            return "traffic.collision", f"{ev['a']} and {ev['b']} collide at t = {ev['t']} s"
        if ev["type"] == "termination":
            return "traffic.rollout", f"rollout stopped at t = {ev['t']} s: {ev['reason']}"
    return None


class TrafficRolloutStage:
    """Ladder stage: :func:`background_issue` on the proposal's manifest (after the spawn, before the physics settle)."""

    name = "traffic_rollout"
    cost_rank = 46
    level = 3

    def __init__(self, catalog: Catalog | None = None) -> None:
        self.catalog = catalog

    def check(self, proposal: Proposal) -> Verdict:
        try:
            manifest = proposal.manifest or parse_manifest(proposal.draft, proposal.sample_id)
            issue = background_issue(manifest, proposal.template, self.catalog)
        except ManifestError as exc:
            return Fail("traffic.invalid_input", exc.one_line())
        return PASS if issue is None else Fail(*issue)
