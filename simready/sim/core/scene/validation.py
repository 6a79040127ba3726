"""The manifest checked against its template and catalog before any stepping: every reference resolves and every
trigger can be evaluated; one :class:`~simready.common.errors.ManifestError` (field path and reason) otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from simready.common.errors import ManifestError
from simready.scenario.manifest import (
    ArrivalTrigger,
    DistanceCondition,
    HeadwayCondition,
    LaneWindow,
    ReachesCondition,
    ScenarioManifest,
    WhenTrigger,
    condition_leaves,
)
from simready.world.routing import route_issue
from simready.world.template import WorldTemplate

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog


def manifest_error(m: ScenarioManifest, field_path: str, reason: str) -> ManifestError:
    return ManifestError(m.sample_id, field_path, reason)


def _walk_floats(value: Any, path: str) -> Iterator[tuple[str, float]]:
    if isinstance(value, float):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _walk_floats(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk_floats(v, f"{path}[{i}]")


def _check_finite(m: ScenarioManifest) -> None:
    for where, value in _walk_floats(m.model_dump(mode="python", by_alias=True), ""):
        if not math.isfinite(value):
            raise manifest_error(m, where, f"non-finite number {value!r}")


def check_template(m: ScenarioManifest, template: WorldTemplate, t_hash: str) -> None:
    if m.template_id != template.id:
        raise manifest_error(m, "template_id", f"manifest is for template {m.template_id!r}, got template {template.id!r}")
    if m.template_hash != t_hash:
        raise manifest_error(m, "template_hash", f"{m.template_hash} does not match template {template.id}'s hash {t_hash}")


def _check_route(m: ScenarioManifest, template: WorldTemplate, where: str, lanes: list[str]) -> None:
    issue = route_issue(template.lane_graph, lanes)
    if issue is None:
        return
    if issue.code == "unknown_lane":
        raise manifest_error(m, f"{where}[{issue.index}]", f"unknown lane {issue.lane!r} in template {template.id}")
    raise manifest_error(m, f"{where}[{issue.index}]", f"lane {issue.lane!r} does not follow {issue.previous!r} on the lane graph")


def _check_nodes(m: ScenarioManifest, template: WorldTemplate, where: str, nodes: list[str]) -> None:
    g = template.walk_graph
    for k, node in enumerate(nodes):
        if node not in g.nodes:
            raise manifest_error(m, f"{where}[{k}]", f"unknown walkable node {node!r} in template {template.id}")
        if k and g.shortest_path(nodes[k - 1], node) is None:
            raise manifest_error(m, f"{where}[{k}]", f"walkable node {node!r} is not reachable from {nodes[k - 1]!r}")


def _check_lane(m: ScenarioManifest, template: WorldTemplate, where: str, lane: str) -> None:
    if lane not in template.lane_graph.lanes:
        raise manifest_error(m, where, f"unknown lane {lane!r} in template {template.id}")


def _resolve_conflict_point(template: WorldTemplate, name: str) -> tuple[float, float] | None:
    """A template place named ``name``: a walkable node, a region (its centroid) or an instance."""
    if name in template.walk_graph.nodes:
        return template.walk_graph.nodes[name]
    if name in template.region_by_id:
        c = template.region_by_id[name].shape.centroid
        return float(c.x), float(c.y)
    if name in template.instance_by_name:
        pose = template.instance_by_name[name].pose
        return float(pose.x), float(pose.y)
    return None


def validate(m: ScenarioManifest, template: WorldTemplate, catalog: Catalog | None) -> dict[str, tuple[float, float]]:
    """Every reference resolves and every trigger can be evaluated; returns the resolved conflict points."""
    _check_finite(m)
    actors = {a.id: a for a in m.actors}
    for i, a in enumerate(m.actors):
        where = f"actors[{i}]"
        if catalog is not None and a.asset_id not in catalog.entries:
            raise manifest_error(m, f"{where}.asset_id", f"unknown asset {a.asset_id} (not in the catalog)")
        if a.initial.lane_ref is not None:
            _check_lane(m, template, f"{where}.initial.lane_ref.lane", a.initial.lane_ref.lane)
        _check_route(m, template, f"{where}.behavior.route", list(a.behavior.route))
        ref = a.initial.lane_ref
        if ref is not None and a.behavior.route and ref.lane not in a.behavior.route:
            raise manifest_error(m, f"{where}.initial.lane_ref.lane", f"lane {ref.lane!r} is not on behavior.route")
        if a.walk is not None:
            _check_nodes(m, template, f"{where}.walk.route", list(a.walk.route))
    for k, prog in enumerate(m.signal_programs):
        for j, lane in enumerate(prog.controls):
            _check_lane(m, template, f"signal_programs[{k}].controls[{j}]", lane)
    points: dict[str, tuple[float, float]] = {}
    lane_bound = {a.id for a in m.actors if a.kind != "pedestrian" and a.role != "parked"}
    for i, inter in enumerate(m.interactions):
        where = f"interactions[{i}]"
        actor = actors.get(inter.actor_id) if inter.actor_id is not None else None
        if actor is not None and actor.role == "parked" and inter.verb in ("speed", "gap", "change_lane", "lane_offset", "route"):
            raise manifest_error(m, f"{where}.{inter.verb}", f"actor {actor.id!r} is parked: it never moves")
        if actor is not None and actor.kind == "pedestrian" and inter.verb in ("gap", "change_lane", "lane_offset"):
            raise manifest_error(m, f"{where}.{inter.verb}", f"a pedestrian has no lane for verb {inter.verb}")
        if inter.change_lane is not None and inter.change_lane.lane is not None:
            _check_lane(m, template, f"{where}.change_lane.lane", inter.change_lane.lane)
        if inter.route is not None:
            if inter.route.lanes is not None:
                for j, lane in enumerate(inter.route.lanes):
                    _check_lane(m, template, f"{where}.route.lanes[{j}]", lane)
            else:
                _check_nodes(m, template, f"{where}.route.nodes", list(inter.route.nodes or []))
        for name, trig in (("trigger", inter.trigger), ("until", inter.until)):
            if isinstance(trig, ArrivalTrigger):
                if trig.conflict_point is not None:
                    p = _resolve_conflict_point(template, trig.conflict_point)
                    if p is None:
                        raise manifest_error(m, f"{where}.{name}.conflict_point",
                                     f"unknown conflict point {trig.conflict_point!r}: not a walkable node, region or instance of {template.id}")
                    points[trig.conflict_point] = p
                if actors[trig.sync_with].role == "parked":
                    raise manifest_error(m, f"{where}.{name}.sync_with", "a parked actor never arrives: the trigger can never be evaluated")
            if not isinstance(trig, WhenTrigger):
                continue
            for leaf_path, leaf in condition_leaves(trig.condition, f"{where}.{name}.condition"):
                if isinstance(leaf, DistanceCondition) and leaf.metric == "along_lane" or isinstance(leaf, HeadwayCondition):
                    for role in ("a", "b"):
                        if getattr(leaf, role) not in lane_bound:
                            what = "headway" if isinstance(leaf, HeadwayCondition) else "along_lane distance"
                            raise manifest_error(m, f"{leaf_path}.{role}",
                                         f"{what} needs actors on the lane graph; {getattr(leaf, role)!r} is not: the condition can never be evaluated")
                if isinstance(leaf, ReachesCondition) and isinstance(leaf.region, LaneWindow):
                    _check_lane(m, template, f"{leaf_path}.region.lane", leaf.region.lane)
    return points
