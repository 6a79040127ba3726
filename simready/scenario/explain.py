"""``simready scenario explain``: the causal story of a manifest, from its own ``realized`` block.

Programs record every variable with its source (a named stream, the
coverage cell, the template, a derivation or the timing solve), the
variables it was derived from and the rule; the ladder adds what it
measured. This module prints that record in sampling order, followed by the
timeline of the planned event and what each interaction does — everything
read from the manifest, so the story is reproducible from the file alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simready.scenario.manifest import ScenarioManifest, load_manifest
from simready.scenario.realization import CAUSAL_ORDER_KEY, CAUSE_PREFIX, parse_cause

#: Realized times shown on the timeline, in the order events happen.
TIMELINE_KEYS = (
    ("t_trigger_s", "the pedestrian starts walking"),
    ("t_lane_change_s", "the cutter starts its lane change"),
    ("t_brake_s", "the lead starts braking"),
    ("t_emerge_s", "the pedestrian steps off the kerb"),
    ("t_reveal_s", "first camera frame showing >= 50 % of it"),
    ("t_cut_in_s", "the cutter's centre enters the ego lane"),
    ("t_enter_path_s", "{entrant} enters {passer}'s path"),
    ("t_lane_change_end_s", "the lane change completes"),
    ("t_conflict_s", "{passer} would reach the conflict point (no reaction)"),
    ("t_contact_nominal_s", "contact if the ego does not react"),
    ("t_contact_s", "first contact in the coarse rollout (no reaction)"),
)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


def _interaction_text(i: Any) -> str:
    trig = i.trigger
    if trig.kind == "at":
        when = f"at t={trig.t_s:g} s"
    elif trig.kind == "after":
        when = f"{trig.delay_s:g} s after {trig.id}"
    elif trig.kind == "arrival":
        when = f"so that {trig.of} arrives in sync with {trig.sync_with}"
    else:
        leaf = trig.condition
        if leaf.kind == "reaches" and leaf.region.shape == "lane_window":
            cond = f"{leaf.actor} reaches {leaf.region.lane} s in [{leaf.region.s_from:g}, {leaf.region.s_to:g}) m"
        else:
            cond = leaf.kind
        when = f"when {cond} (by t={trig.by_latest_s:g} s, else {trig.if_never})"
    action = i.action
    what = i.verb
    if i.verb == "speed":
        what = f"speed {action.mode}" + (f" {action.value:g} m/s" if action.value is not None else "")
    elif i.verb == "set":
        what = f"set {action.key} = {action.value}"
    elif i.verb == "change_lane":
        what = f"change lane to {action.lane or action.mode}"
    if i.dynamics is not None:
        what += f" ({i.dynamics.shape}, {i.dynamics.constraint} {i.dynamics.value:g})"
    return f"{i.id}: {i.actor_id or 'world'} {what} {when}"


def causal_story(m: ScenarioManifest) -> list[str]:
    """The story as lines of text."""
    r = m.realized
    lines = [f"{m.sample_id} - {m.intent}: {r.get('intent.description', '')}",
             f"  template {m.template_id} ({m.template_hash[:19]}...), split {m.split}, "
             f"lineage families {', '.join(m.lineage.asset_families)}",
             f"  coverage cell {m.coverage_cell.id}",
             "  streams " + ", ".join(f"{k}={v}" for k, v in sorted(m.streams.items()) if "/" not in k),
             "", "Causes, in sampling order (source | from | rule):"]
    order = r.get(CAUSAL_ORDER_KEY)
    names: Iterable[object] = order if isinstance(order, list) else sorted(k for k in r if not k.startswith(CAUSE_PREFIX))
    measured = []
    for name in names:
        name = str(name)
        cause = r.get(CAUSE_PREFIX + name)
        source, parents, rule = parse_cause(str(cause)) if isinstance(cause, str) else ("?", [], "")
        if source.startswith("measured:") or source == "generator":
            measured.append((name, source, rule))
            continue
        arrow = f" <- {', '.join(parents)}" if parents else ""
        lines.append(f"  [{source:<11}] {name} = {_fmt(r.get(name))}{arrow}")
        if rule:
            lines.append(f"                {rule}")
    if measured:
        lines += ["", "Measured by the ladder:"]
        for name, source, _ in measured:
            lines.append(f"  [{source.removeprefix('measured:'):<11}] {name} = {_fmt(r.get(name))}")
    pair = r.get("conflict_pair")
    entrant, passer = pair if isinstance(pair, list) and len(pair) == 2 else ("the entrant", "the other")
    timeline = sorted((float(v), k, text.format(entrant=entrant, passer=passer))
                      for k, text in TIMELINE_KEYS if isinstance(v := r.get(k), (int, float)))
    if timeline:
        lines += ["", "Timeline (scenario time, s):"]
        lines += [f"  {t:7.2f}  {k:<20} {text}" for t, k, text in timeline]
    lines += ["", "Actors:"]
    for a in m.actors:
        p = a.initial.pose
        lines.append(f"  {a.id:<9} {a.role:<6} {a.asset_id:<32} at ({p.x:.2f}, {p.y:.2f}) yaw {p.yaw:.3f} rad, "
                     f"{a.initial.speed_mps:.2f} m/s")
    if m.interactions:
        lines += ["", "Interactions:"] + [f"  {_interaction_text(i)}" for i in m.interactions]
    env = m.environment
    lines += ["", f"Environment: {env.illumination} (sun {env.sun_elevation_deg:g} deg), headlights "
              f"{'on' if env.headlights else 'off'}; {env.weather} (wetness {env.wetness:g}, friction "
              f"{env.road_friction:g}, reflectance {env.road_reflectance:g}, rain {env.rain_rate_mmph:g} mm/h)"]
    return lines


def explain(path: str | Path) -> str:
    """Load and validate a manifest file and return its causal story (ManifestError if it is invalid)."""
    return "\n".join(causal_story(load_manifest(path)))
