"""The geometric and timing helpers programs compose (SPEC §19), each over what the ladder itself uses.

Every helper here is a thin face over the module that owns the concept — the
occlusion stage's ray test, the walkable graph, the timing solver, the
support stage's surfaces — so a program that samples with a helper is judged
by the same geometry afterwards. Frames: the template's world frame (x east,
y north, metres); times in seconds of scenario time (0 = end of warm-up).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from shapely.geometry import LineString, Polygon

from simready.scenario.context import ProgramContext
from simready.scenario.coverage import Cell
from simready.scenario.draws import Draws
from simready.scenario.environment import conditions, correlated_environment, independent_environment
from simready.scenario.geometry import VEHICLE_SURFACES, CoarsePath, Motion, SpeedProfile, rect_polygon
from simready.scenario.ladder import Body, Proposal, ProposalScene
from simready.scenario.program_base import (
    EgoRoute,
    IntentProgram,
    actor,
    assemble,
    ego_vehicle,
    family_of,
    lwh,
    rules,
    seconds_on_grid,
    vehicle_families,
)
from simready.scenario.realization import Realization
from simready.scenario.static_checks import OcclusionSpec, camera_view, occlusion_area, visible_fractions
from simready.scenario.streams import StreamSet
from simready.scenario.timing import time_to_conflict, ttc
from simready.world.walkable import WalkGraph

if TYPE_CHECKING:
    from simready.world.template import WorldTemplate

Point = tuple[float, float]


# --- occlusion ------------------------------------------------------------------------------------


def footprint(x_m: float, y_m: float, yaw_rad: float, length_m: float, width_m: float) -> Polygon:
    """A body's rectangle on the ground (world frame)."""
    return rect_polygon(x_m, y_m, yaw_rad, length_m, width_m)


def behind(occluder: Polygon, target: Point | Polygon, seen_from: Point) -> bool:
    """Whether ``occluder`` hides ``target`` from ``seen_from`` in plan view: every sight line from the eye to
    the target (to each corner of a polygon target) crosses the occluder's interior."""
    points = [target] if not isinstance(target, Polygon) else list(target.exterior.coords)[:-1]
    if occluder.contains(shapely.Point(seen_from)):
        return False
    return all(LineString([seen_from, p]).crosses(occluder) or occluder.contains(shapely.Point(p)) for p in points)


def visible_fraction(ctx: ProgramContext, scene: ProposalScene, target: str, *, seen_from: str,
                     t_s: Sequence[float] | np.ndarray, occluders: Sequence[str] = ()) -> np.ndarray:
    """Visible fraction of actor ``target`` to the camera of actor ``seen_from`` (the rig's first camera) at each
    time in ``t_s``: the occlusion stage's ray test, against the map's static obstacles and ``occluders``' boxes."""
    t = np.asarray(t_s, dtype=np.float64)
    spec = OcclusionSpec(target, seen_from, camera_view(ctx.template), tuple(occluders), 0.0, 0.0, 0.0, 0.0, 0, 0, 0.0)
    boxes = ctx.geometry.obstacle_boxes(occlusion_area(scene.bodies, spec, t)) if len(t) else []
    return visible_fractions(scene.bodies, spec, t, boxes)


# --- reachability, timing, gaps ---------------------------------------------------------------


def walk_route(ctx: ProgramContext, start: Point, goal: Point) -> list[Point] | None:
    """The shortest walk on the template's walkable graph (sidewalks, crosswalks) from the node nearest
    ``start`` to the node nearest ``goal``, as points; None when they are not connected."""
    walk: WalkGraph = ctx.template.walk_graph
    path = walk.shortest_path(walk.nearest_node(*start), walk.nearest_node(*goal))
    return None if path is None else walk.path_points(path)


def reachable(ctx: ProgramContext, start: Point, goal: Point) -> bool:
    """Whether the walkable graph connects the nodes nearest ``start`` and ``goal``."""
    return walk_route(ctx, start, goal) is not None


def arrival_time(d_m: float, v_mps: float) -> float:
    """Seconds to cover ``d_m`` at constant ``v_mps`` (``math.inf`` at rest): the time-to-conflict solver's unit."""
    return time_to_conflict(d_m, v_mps)


def start_for_ttc(d_conflict_m: float, v_mps: float, ttc_target_s: float, t_event_s: float) -> float:
    """Solve for where an actor at constant ``v_mps`` must be at time 0 so that, at ``t_event_s``, it is
    ``ttc_target_s`` from a conflict point ``d_conflict_m`` along its path from that start (returns the
    distance before the conflict point at time 0, m)."""
    if not (math.isfinite(v_mps) and v_mps >= 0 and ttc_target_s >= 0 and t_event_s >= 0):
        raise ValueError(f"start_for_ttc: bad arguments ({d_conflict_m}, {v_mps}, {ttc_target_s}, {t_event_s})")
    return v_mps * (ttc_target_s + t_event_s)


def time_headway(gap_m: float, follower_speed_mps: float) -> float:
    """Bumper gap over the follower's speed (s); ``math.inf`` at rest."""
    return math.inf if follower_speed_mps <= 0 else gap_m / follower_speed_mps


def gap_for_headway(headway_s: float, follower_speed_mps: float) -> float:
    """The bumper gap (m) that makes ``headway_s`` at ``follower_speed_mps``."""
    return headway_s * follower_speed_mps


def time_to_collision(s_a_m: float, v_a_mps: float, s_b_m: float, v_b_mps: float, *,
                      clearance_m: float = 0.0) -> float:
    """Constant-speed time-to-collision of two actors on one path (see :func:`simready.scenario.timing.ttc`)."""
    return ttc(s_a_m, v_a_mps, s_b_m, v_b_mps, clearance_m=clearance_m)


# --- lanes ------------------------------------------------------------------------------------------


def oncoming_lane(template: WorldTemplate, lane: str, within_m: tuple[float, float] = (2.0, 8.0)) -> str | None:
    """The driving lane beside ``lane`` that runs the other way — its centre ``within_m`` of ``lane``'s, heading
    more than 2.6 rad away, checked at ``lane``'s midpoint — or None (a road with one lane each way has one)."""
    graph = template.lane_graph
    x, y, yaw = graph.pose_at(lane, graph.lane(lane).length_m / 2)
    for other in sorted(graph.lanes):
        if other == lane or graph.lane(other).kind != "driving":
            continue
        s, t = graph.project(other, x, y)
        _, _, other_yaw = graph.pose_at(other, min(max(s, 0.0), graph.lane(other).length_m))
        turned = abs((other_yaw - yaw + math.pi) % (2 * math.pi) - math.pi)
        if 0.0 < s < graph.lane(other).length_m and within_m[0] <= abs(t) <= within_m[1] and turned > 2.6:
            return other
    return None


# --- supported poses ----------------------------------------------------------------------------


def supports(ctx: ProgramContext, pose: tuple[float, float, float], length_m: float, width_m: float,
             surfaces: Sequence[str] = VEHICLE_SURFACES) -> bool:
    """Whether a ``length_m`` × ``width_m`` body at ``pose`` (x, y, yaw) stands wholly on ``surfaces`` — the
    support stage's test, without its tolerance."""
    return bool(ctx.geometry.surface(tuple(surfaces)).covers(footprint(*pose, length_m, width_m)))


def supported_region(ctx: ProgramContext, region: shapely.Geometry, surfaces: Sequence[str]) -> shapely.Geometry:
    """The part of ``region`` lying on ``surfaces``: where a draw (``GroupDraws.point_in``) may land a point."""
    return region.intersection(ctx.geometry.surface(tuple(surfaces)))


# --- paths and the decision -------------------------------------------------------------------------


def lane_change_path(ctx: ProgramContext, src: str, dst: str, s_start_m: float, length_m: float) -> CoarsePath:
    """The source lane's centreline, blended sinusoidally into the destination lane over ``length_m`` from
    ``s_start_m`` (source-lane arc length), then the destination lane to its end."""
    a, b = ctx.geometry.route_path((src,)), ctx.geometry.route_path((dst,))
    s = np.unique(np.concatenate([np.arange(0.0, a.length_m, 2.0), [a.length_m],
                                  np.linspace(s_start_m, s_start_m + length_m, 25)]))
    s = s[(s >= 0) & (s <= a.length_m)]
    ax, ay, _ = a.xy_yaw(s)
    pa = np.stack([ax, ay], axis=1)
    sb, _ = b.lateral(pa)
    bx, by, _ = b.xy_yaw(np.clip(sb, 0.0, b.length_m))
    pb = np.stack([bx, by], axis=1)
    u = np.clip((s - s_start_m) / max(length_m, 1e-6), 0.0, 1.0)
    w = 0.5 - 0.5 * np.cos(math.pi * u)
    return CoarsePath.from_points((1 - w)[:, None] * pa + w[:, None] * pb)


#: The realized key the simulation reads the decision (the checkpoint of the matched branches) from.
DECISION_KEY = "t_decision_s"


def decide_at(r: Realization, t_s: float, *, parents: Sequence[str], rule: str) -> float:
    """Declare the decision event: the scenario time (s, on the tick grid) where the simulation checkpoints and
    the matched brake / coast branches begin; realized as ``t_decision_s``."""
    return r.set(DECISION_KEY, seconds_on_grid(t_s), source="derived", parents=list(parents), rule=rule)


# --- the shared baseline of vehicle intents ---------------------------------------------------------


# --- the vehicle intents' common frame ---------------------------------------------------------


@dataclass(frozen=True)
class VehicleIntentParams:
    """What every vehicle intent's parameters open with (a program's own dataclass adds its fields after these,
    and may give them other defaults)."""

    #: Scenario length after the warm-up (s).
    clip_s: float = 12.0
    #: Driving before scenario time 0, every vehicle already at speed (s).
    warmup_s: float = 2.0
    #: The ego's speed range (m/s); a coverage cell's ``ego_speed_mps`` bin narrows it.
    ego_speed_mps: tuple[float, float] = (9.0, 13.9)


def scripted_vehicle_rules(*, aggression: float, speed_mps: float, limit_mps: float) -> dict[str, Any]:
    """Behaviour rules of a scripted vehicle: it obeys signals but neither yields nor avoids a collision (the
    event is its to make), driving at ``speed_mps`` against a lane limit of ``limit_mps``."""
    return rules(obey_signals=True, yield_=False, collision_avoidance=False, aggression=aggression,
                 speed_factor=speed_mps / limit_mps)


def ego_under_conditions(ctx: ProgramContext, draws: Draws, r: Realization, cell: Cell | None, ego_speed_mps: float,
                         warmup_s: float, ego_route: EgoRoute) -> tuple[dict[str, Any], dict[str, Any], Body]:
    """The last draws of a vehicle intent and its ego: the environment (illumination and weather in the cell,
    the rest correlated with them), then the ego driving ``ego_route`` at ``ego_speed_mps``.

    Returns ``(environment, ego actor, ego body)``.
    """
    illumination, weather = conditions(draws, r, ctx.template, cell)
    env = correlated_environment(draws, r, illumination, weather)
    ego, ego_body = ego_vehicle(ctx, ego_speed_mps, warmup_s, ego_route)
    return env, ego, ego_body


def pair_proposal(program: IntentProgram, ctx: ProgramContext, sample_id: str, index: int, streams: StreamSet,
                  draws: Draws, r: Realization, *, cell: Cell | None, attempt: int,
                  ego: tuple[dict[str, Any], Body], other: tuple[dict[str, Any], Body],
                  interactions: list[dict[str, Any]], environment: dict[str, Any], event: Any,
                  refs: dict[str, Any], clip_s: float, warmup_s: float,
                  stop_lines: Sequence[tuple[str, float, str]] = (), with_signals: bool = False) -> Proposal:
    """The proposal of an intent staged between the ego and one other actor, each given as ``(actor, body)``:
    the manifest draft (no occluders), the scene the ladder judges (both bodies, ``event``, the stop lines
    they must cross on green) and the draws made."""
    (ego_actor, ego_body), (other_actor, other_body) = ego, other
    draft, _ = assemble(ctx, sample_id=sample_id, streams=streams, program=program, cell=cell,
                        actors=[ego_actor, other_actor], interactions=interactions, occluders=[],
                        environment=environment, realization=r, clip_s=clip_s, warmup_s=warmup_s,
                        with_signals=with_signals)
    scene = ProposalScene({"ego": ego_body, other_actor["id"]: other_body}, warmup_s, clip_s, event=event,
                          stop_lines=list(stop_lines))
    return Proposal(sample_id, index, attempt, program.name, ctx.template, cell, draft, scene, refs, [],
                    draws.record)


def independent_vehicle_baseline(program: IntentProgram, ctx: ProgramContext, sample_id: str, index: int,
                                 streams: StreamSet, other: str, *, p_clip: float, warmup_s: float,
                                 ego_speed: tuple[float, float], event: Any) -> Proposal:
    """Shared baseline of the vehicle intents: the other vehicle's pose, heading, speed, action time and
    magnitude, and the environment, each drawn on its own over its full range — no relation, no solve."""
    t = ctx.template
    draws = Draws(streams)
    r = Realization()
    g = draws.group("baseline", "layout")
    a = draws.group("assets", "actors")
    b = draws.group("behavior", "behavior")
    xmin, ymin, xmax, ymax = t.bounds
    family = r.set(f"{other}.family", a.choice("family", vehicle_families(ctx, [family_of(t.ego.asset)])),
                   source="actors", rule="uniform")
    asset = r.set(f"{other}.asset", a.choice("asset", ctx.variants(family)), source="actors", rule="uniform")
    x, y, yaw = g.uniform("x", xmin, xmax), g.uniform("y", ymin, ymax), g.uniform("yaw", -math.pi, math.pi)
    r.set(f"{other}.pose", [round(x, 4), round(y, 4), round(yaw, 6)], source="layout", rule="uniform over the map")
    v_ego = r.set("ego.speed_mps", round(b.uniform("ego_speed", *ego_speed), 4), source="behavior", rule="uniform")
    v = r.set(f"{other}.speed_mps", round(b.uniform("speed", 0.0, 14.0), 4), source="behavior", rule="uniform")
    t_action = r.set("t_action_s", seconds_on_grid(b.uniform("t_action", 0.0, p_clip)), source="timing", rule="uniform")
    decel = round(b.uniform("decel", 0.5, 8.0), 4)
    env = independent_environment(draws, r, t)
    ego, ego_body = ego_vehicle(ctx, v_ego, warmup_s)
    lanes = (t.lane_graph.nearest(x, y)[0],)
    far = (x + 500 * math.cos(yaw), y + 500 * math.sin(yaw))
    length, width, height = lwh(ctx, asset)
    motion = Motion(CoarsePath.from_points([(x, y), far]),
                    SpeedProfile.from_phases(-warmup_s, 0.0, v, [(t_action + warmup_s, 0.0), (0.0, -decel)]))
    other_actor = actor(ctx, other, kind="vehicle", role="agent", asset_id=asset, pose=(x, y, yaw), speed_mps=v,
                        cruise_mps=v, route=lanes, tags=[other],
                        behavior_rules=scripted_vehicle_rules(aggression=0.5, speed_mps=1.0, limit_mps=1.0))
    body = Body(other, "vehicle", "agent", asset, family, length, width, height, motion, VEHICLE_SURFACES, lanes=lanes)
    interactions = [{"id": f"{other}_action", "actor_id": other, "trigger": {"kind": "at", "t_s": t_action},
                     "speed": {"mode": "stop"}, "dynamics": {"shape": "linear", "constraint": "rate", "value": decel}}]
    return pair_proposal(program, ctx, sample_id, index, streams, draws, r, cell=None, attempt=0,
                         ego=(ego, ego_body), other=(other_actor, body), interactions=interactions, environment=env,
                         event=event(t_action, body), refs={}, clip_s=p_clip, warmup_s=warmup_s)
