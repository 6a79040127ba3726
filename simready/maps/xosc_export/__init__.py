"""Scenario manifest → ASAM OpenSCENARIO 1.3 (+ its road network as OpenDRIVE), written with ``scenariogeneration``.

Time: OpenSCENARIO simulation time starts at the manifest's initial poses,
which are the poses at the start of the warm-up, so manifest time ``t`` is
simulation time ``t + warmup_s``. Frames: the template's world frame is the
OpenDRIVE inertial frame the road network is written in (metres, radians).
Lanes: the road network is :func:`simready.maps.xodr_export.export_xodr`'s,
where template lane ``L`` is road ``road_of_lane[L]``, lane −1.

What maps to what (the report lists, per interaction, what was written and
what could not be):

* actors → Vehicle (car, van, bicycle for cyclists) or Pedestrian with the
  manifest's catalog dimensions; initial pose (TeleportAction) and speed;
  behaviour rules as entity properties (OpenSCENARIO has no action for them);
  an actor absent at start is made invisible (VisibilityAction);
* triggers → start triggers: ``at`` a SimulationTimeCondition, ``after`` a
  StoryboardElementStateCondition on the other event with its delay, ``when``
  its condition (distance, ttc, headway, reaches, speed, standstill, signal,
  collision; and/or as condition groups; ``not`` by the inverted rule) with
  ``by_latest`` as a time condition (``fire``: an alternative group;
  ``skip``: a bound in every group); ``arrival`` approximated by the
  partner's time-to-collision with the point; ``visible`` is not expressible;
* verbs → actions: speed (Absolute/RelativeSpeedAction), gap
  (LongitudinalDistanceAction), lane_offset (LaneOffsetAction), route
  (AssignRouteAction), exist (VisibilityAction), set lights.* (LightStateAction),
  doors.* (AnimationAction of the door component; a sliding door has none)
  and env.road_friction / env.rain_rate_mmph (EnvironmentAction), change_lane
  an AbsoluteLaneOffsetAction onto the target lane's centre (each template
  lane is its own road in the exported network, so a LaneChangeAction would
  find no neighbouring lane); doors.sliding, env.wetness, env.road_reflectance
  and ``until`` are not expressible;
* signal programs → traffic signal controllers whose phases are rotated so
  that simulation time 0 shows the state the manifest has at −warmup.

The package: :mod:`.vocabulary` (the version, header date and the OpenSCENARIO names each manifest word
becomes), :mod:`.base` (the report and what every part reads), :mod:`.scene` (entities, Init, environment,
routes, signal controllers), :mod:`.triggers`, :mod:`.actions`; the storyboard here puts them together.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from scenariogeneration import xosc

from simready.common import paths
from simready.common.atomic import json_bytes
from simready.common.hashing import sha256_bytes
from simready.maps.errors import MapError
from simready.maps.xodr_export import export_xodr
from simready.maps.xosc_export.actions import Actions
from simready.maps.xosc_export.base import XoscReport
from simready.maps.xosc_export.triggers import Triggers
from simready.maps.xosc_export.vocabulary import HEADER_DATE, OSC_MINOR_VERSION, VERBS
from simready.scenario.manifest import ScenarioManifest, load_manifest
from simready.world.template import WorldTemplate, load_template, template_hash


__all__ = ["VERBS", "XoscReport", "build_scenario", "export_xosc", "scenario_bytes"]


class _Builder(Actions, Triggers):
    """The scenario's parts put together into the storyboard."""

    def storyboard(self) -> xosc.StoryBoard:
        act = xosc.Act("simready", xosc.ValueTrigger("act_start", 0.0, xosc.ConditionEdge.none,
                                                       xosc.SimulationTimeCondition(0.0, xosc.Rule.greaterOrEqual)))
        groups: dict[str, xosc.ManeuverGroup] = {}
        maneuvers: dict[str, xosc.Maneuver] = {}
        for inter in sorted(self.m.interactions, key=lambda i: i.id):
            actions = self.actions(inter)
            if not actions:
                continue
            owner = inter.actor_id or "world"
            if owner not in groups:
                groups[owner] = xosc.ManeuverGroup(f"group_{owner}")
                if inter.actor_id is not None:
                    groups[owner].add_actor(inter.actor_id)
                maneuvers[owner] = xosc.Maneuver(f"maneuver_{owner}")
            event = xosc.Event(inter.id, xosc.Priority.parallel)
            for k, (action, _private) in enumerate(actions):
                event.add_action(f"{inter.id}_action{k}", action)
            event.add_trigger(self.start_trigger(inter))
            maneuvers[owner].add_event(event)
            self.report.written.append(f"interaction {inter.id}: {', '.join(type(a).__name__ for a, _ in actions)}")
        for owner in sorted(groups):
            groups[owner].add_maneuver(maneuvers[owner])
            act.add_maneuver_group(groups[owner])
        if not groups:
            # The schema wants at least one maneuver group in an act: an empty one for a manifest without events.
            act.add_maneuver_group(xosc.ManeuverGroup("group_none"))
        story = xosc.Story("simready")
        story.add_act(act)
        stop = xosc.ValueTrigger("stop", 0.0, xosc.ConditionEdge.none,
                                 xosc.SimulationTimeCondition(self.time(self.m.clip_s), xosc.Rule.greaterOrEqual),
                                 "stop")
        board = xosc.StoryBoard(self.init(), stop)
        board.add_story(story)
        return board


def header_properties(m: ScenarioManifest, map_source: tuple[str, str] | None = None) -> xosc.Properties:
    """The manifest's clock and the environment fields OpenSCENARIO has no place for, as file header properties
    (``simready.*``), so that the import is this export's inverse: simulation time 0 is manifest time
    ``-warmup_s``, which the file's times alone cannot tell. ``map_source`` — ``(template hash, sha256 of the
    OpenDRIVE written beside)`` — lets the import recognise the map as the template's export without exporting
    the template again (both must still hold when it reads them)."""
    props = xosc.Properties()
    if map_source is not None:
        props.add_property("simready.template_hash", map_source[0])
        props.add_property("simready.map_sha256", map_source[1])
    env = m.environment
    for key, value in (("sample_id", m.sample_id), ("template_id", m.template_id), ("warmup_s", m.warmup_s),
                       ("clip_s", m.clip_s), ("dt", m.dt), ("metric_subject", m.metric_subject),
                       ("weather", env.weather), ("wetness", env.wetness), ("road_reflectance", env.road_reflectance),
                       ("headlights", env.headlights), ("sun_elevation_deg", env.sun_elevation_deg),
                       ("sun_azimuth_deg", env.sun_azimuth_deg)):
        props.add_property(f"simready.{key}", str(value).lower() if isinstance(value, bool) else
                           repr(value) if isinstance(value, float) else str(value))
    return props


def build_scenario(m: ScenarioManifest, t: WorldTemplate, road_file: str, road_of_lane: dict[str, int],
                   map_sha256: str | None = None) -> tuple[xosc.Scenario, XoscReport]:
    """The OpenSCENARIO object of manifest ``m`` on template ``t`` (road network ``road_file``, whose sha256 is
    ``map_sha256`` when known) and its report."""
    if m.template_id != t.id:
        raise MapError(m.sample_id, "template_id", f"manifest is on template {m.template_id!r}, not {t.id!r}")
    report = XoscReport()
    b = _Builder(m, t, road_of_lane, report)
    network = xosc.RoadNetwork(roadfile=road_file)
    b.controllers(network)
    for occ in m.occluders:
        if occ.kind != "actor":
            report.not_expressed.append(f"occluder {occ.id} ({occ.kind}): static world, held by the template")
    scenario = xosc.Scenario(f"{m.sample_id}", "simready", xosc.ParameterDeclarations(), b.entities(), b.storyboard(),
                             network, xosc.Catalog(), osc_minor_version=OSC_MINOR_VERSION, creation_date=HEADER_DATE,
                             header_properties=header_properties(
                                 m, None if map_sha256 is None else (template_hash(t), map_sha256)))
    return scenario, report


def scenario_bytes(scenario: xosc.Scenario) -> bytes:
    """The scenario's XML, with the one fix the schema needs: scenariogeneration 0.16.7 writes a
    LightStateAction's LightState before its LightType; the schema's sequence is the other way round."""
    root: ET.Element = scenario.get_element()
    for action in root.iter("LightStateAction"):
        light_type = action.find("LightType")
        if light_type is not None:
            action.remove(light_type)
            action.insert(0, light_type)
    ET.indent(root, space="    ")
    xml: bytes = ET.tostring(root, encoding="utf-8")
    return b"<?xml version='1.0' encoding='utf-8'?>\n" + xml + b"\n"


def export_xosc(manifest: Path, template: Path | None, out: Path) -> XoscReport:
    """Write ``<sample_id>.xosc``, ``<template_id>.xodr`` and ``export_report.json`` into folder ``out``."""
    m = load_manifest(manifest)
    t = load_template(template or paths.TEMPLATES_DIR / f"{m.template_id}.yaml")
    xodr_bytes, xodr_report = export_xodr(t)
    road_file = f"{t.id}.xodr"
    scenario, report = build_scenario(m, t, road_file, xodr_report.road_of_lane, sha256_bytes(xodr_bytes))
    (out / road_file).write_bytes(xodr_bytes)
    (out / f"{m.sample_id}.xosc").write_bytes(scenario_bytes(scenario))
    report.not_expressed += [f"road network: {line}" for line in xodr_report.not_expressed]
    (out / "export_report.json").write_bytes(json_bytes(report.to_json()))
    return report
