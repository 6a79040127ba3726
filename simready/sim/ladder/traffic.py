"""The ladder's check of a sample with background traffic (SPEC §20): the whole street rolled out, kinematic-v1.

:class:`simready.scenario.traffic.TrafficSpawnStage` adds the background
vehicles; this stage rolls the sample out with the simulator (every
background vehicle reacting to every actor ahead of it, signals and right of
way) and rejects it when

* a collision involves a background vehicle (``traffic.collision``): the
  traffic must not crash by itself, nor into the scenario's actors;
* the rollout stops early (``traffic.rollout``: non-finite, exploding, out of bounds);
* the background traffic makes the scenario's relation impossible
  (``traffic.relation``): a trigger of the scenario's interactions that fires
  (or is skipped) in a rollout of the scenario alone does not, or fires more
  than :data:`RELATION_TOLERANCE_S` apart, or the metric subject's closest
  approach to a scenario actor moves by more than
  :data:`RELATION_DISTANCE_M` plus :data:`RELATION_DISTANCE_FRACTION` of it
  (a background vehicle between the ego and the lead, standing in the ego's
  way before the conflict, …);
* a background vehicle stands (below 0.1 m/s for :data:`BLOCKING_STANDSTILL_S`)
  with its centre in a crosswalk that a scenario pedestrian walks through in
  the scenario alone (``traffic.blocks_crossing``: a car parked in the crossing).

A collision between the scenario's own actors is the scenario's business
(the branches decide it) and passes. Nothing is written to the proposal's
measurements, so an accepted manifest is the same with or without this check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.path import Path as MplPath

from simready.common.errors import ManifestError
from simready.scenario.ladder import PASS, Fail, Proposal, Verdict
from simready.scenario.manifest import ScenarioManifest, parse_manifest
from simready.scenario.traffic import BACKGROUND_TAG
from simready.sim.run import run_simulation

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.sim.storage.trace import Trace
    from simready.world.template import WorldTemplate


#: A scenario trigger firing this much later or earlier with the traffic than without it changes the relation (s).
RELATION_TOLERANCE_S = 0.5
#: The subject's closest approach to a scenario actor may move this much with the traffic (m), plus a fraction of it.
RELATION_DISTANCE_M = 1.0
RELATION_DISTANCE_FRACTION = 0.25
#: A background vehicle standing this long in a crosswalk the scenario's pedestrian uses blocks the crossing (s).
BLOCKING_STANDSTILL_S = 2.0
#: Below this speed a vehicle stands (m/s).
STANDING_MPS = 0.1


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
    alone = manifest.model_copy(update={"actors": [a for a in manifest.actors if a.id not in background]})
    alone_trace = run_simulation(alone, template, backend="kinematic-v1", catalog=catalog).trace
    return relation_issue(trace, alone_trace) or crossing_issue(manifest, template, trace, alone_trace, background)


def _triggers(trace: Trace) -> dict[str, tuple[str, float]]:
    out: dict[str, tuple[str, float]] = {}
    for ev in trace.events:
        if ev["type"] in ("trigger_fired", "trigger_skipped") and ev["interaction"] not in out:
            out[ev["interaction"]] = (ev["type"].removeprefix("trigger_"), float(ev["t"]))
    return out


def relation_issue(trace: Trace, alone: Trace) -> tuple[str, str] | None:
    """``traffic.relation`` when a trigger of the scenario fires (or is skipped) differently with the traffic."""
    with_bg, without = _triggers(trace), _triggers(alone)
    for inter, (what, t) in sorted(without.items(), key=lambda kv: (kv[1][1], kv[0])):
        got = with_bg.get(inter)
        if got is None:
            return "traffic.relation", f"{inter} is {what} at t = {t} s alone, never with the background traffic"
        if got[0] != what or abs(got[1] - t) > RELATION_TOLERANCE_S:
            return "traffic.relation", (f"{inter} is {what} at t = {t} s alone, {got[0]} at t = {got[1]} s with the "
                                        "background traffic")
    extra = sorted(set(with_bg) - set(without))
    if extra:
        inter = extra[0]
        return "traffic.relation", f"{inter} is {with_bg[inter][0]} at t = {with_bg[inter][1]} s only with the traffic"
    closest = {e["actor"]: float(e["value"]) for e in trace.metrics.get("min_distance", [])}
    subject = trace.header.get("metric_subject")
    for e in alone.metrics.get("min_distance", []):
        d0, d1 = float(e["value"]), closest.get(e["actor"])
        if d1 is not None and abs(d1 - d0) > RELATION_DISTANCE_M + RELATION_DISTANCE_FRACTION * d0:
            return "traffic.relation", (f"{subject} comes within {d0:.2f} m of {e['actor']} alone, {d1:.2f} m with "
                                        "the background traffic")
    return None


def crossing_issue(manifest: ScenarioManifest, template: WorldTemplate, trace: Trace, alone: Trace, background: set[str]) -> tuple[str, str] | None:
    """``traffic.blocks_crossing`` when a background vehicle stands in a crosswalk a scenario pedestrian walks through."""
    peds = [a.id for a in manifest.actors if a.kind == "pedestrian" and a.id not in background]
    crosswalks = [r for r in template.regions if r.type == "crosswalk"]
    if not peds or not crosswalks:
        return None
    walked = alone.df[alone.df.actor_id.isin(peds) & alone.df.present.astype(bool)]
    ped_xy = walked[["x", "y"]].to_numpy()
    used = [r for r in crosswalks if MplPath(np.asarray(r.polygon)).contains_points(ped_xy).any()]
    if not used:
        return None
    df = trace.df
    bg = df[df.actor_id.isin(background) & df.present.astype(bool) & (df.speed_mps < STANDING_MPS)]
    if bg.empty:
        return None
    need = int(round(BLOCKING_STANDSTILL_S / manifest.dt))
    xy = bg[["x", "y"]].to_numpy()
    for r in used:
        inside = bg[MplPath(np.asarray(r.polygon)).contains_points(xy)]
        for actor_id, rows in inside.groupby("actor_id", sort=True):
            ticks = np.sort(rows.tick.to_numpy())
            # The longest run of consecutive ticks standing inside.
            breaks = np.flatnonzero(np.diff(ticks) != 1)
            starts = np.concatenate([[0], breaks + 1])
            ends = np.concatenate([breaks, [len(ticks) - 1]])
            k = int(np.argmax(ends - starts))
            if ends[k] - starts[k] + 1 >= need:
                t0 = round(float(rows.t[rows.tick == ticks[starts[k]]].iloc[0]), 3)
                return "traffic.blocks_crossing", (f"{actor_id} stands in crosswalk {r.id} from t = {t0} s, where "
                                                   f"{', '.join(peds)} crosses")
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
