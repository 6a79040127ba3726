"""The :class:`Scene`: everything fixed about one rollout, with its paths built (and cached) from their keys."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from shapely.geometry import LineString, Point

from simready.scenario.manifest import AtTrigger, LaneWindow, ScenarioManifest
from simready.sim.core.reference_paths import PathKey, ReferencePath, fixed_path, lane_path, split_walk_key, walk_path
from simready.world.template import WorldTemplate
from simready.sim.core.scene.actors import ActorTable
from simready.sim.core.scene.ground import GroundModel
from simready.sim.core.scene.signals import SignalTable

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

F = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Scene:
    """Everything fixed about one rollout. Build with :func:`build_scene`."""

    manifest: ScenarioManifest
    template: WorldTemplate
    backend: str
    input_hash: str
    template_hash: str
    actors: ActorTable
    lane_ids: tuple[str, ...]
    lane_widths: F
    initial_paths: tuple[ReferencePath, ...]
    initial_u: F
    initial_d: F
    signals: SignalTable
    static_edges: tuple[F, F]
    ground: GroundModel
    bounds: tuple[float, float, float, float]
    conflict_points: dict[str, tuple[float, float]]
    kerb_regions: Any
    catalog: Catalog | None
    config: dict[str, Any]
    config_hash: str
    _paths: dict[PathKey, ReferencePath] = field(default_factory=dict, repr=False)
    #: Per (actor, path key), the actor's rows of a route table on that path
    #: (:func:`simready.sim.controllers.planner.route_table._route_row`).
    _route_rows: dict[tuple[int, PathKey], tuple[ReferencePath, tuple[Any, ...]]] = field(default_factory=dict, repr=False)

    # Cached: the manifest never changes under a scene, and the tick loop reads these several times a tick.
    @cached_property
    def dt(self) -> float:
        return float(self.manifest.dt)

    @cached_property
    def warmup_ticks(self) -> int:
        return self.manifest.warmup_ticks

    @cached_property
    def total_ticks(self) -> int:
        """Ticks stepped in a full rollout (warm-up plus clip)."""
        return self.manifest.warmup_ticks + self.manifest.clip_ticks

    @cached_property
    def lane_index(self) -> dict[str, int]:
        return {lane: i for i, lane in enumerate(self.lane_ids)}

    def path(self, key: PathKey) -> ReferencePath:
        """The path with this key (cached; built deterministically from the key)."""
        p = self._paths.get(key)
        if p is None:
            p = path_from_key(self, key)
            self._paths[key] = p
        return p

    def lane_path(self, lanes: tuple[str, ...]) -> ReferencePath:
        p = lane_path(self.template.lane_graph, lanes, self.lane_index)
        return self._paths.setdefault(p.key, p)

    def walk_path(self, start_xy: tuple[float, float], nodes: tuple[str, ...]) -> ReferencePath:
        p = walk_path(start_xy, expand_walk(self.template, nodes), self.template.walk_graph.nodes)
        return self._paths.setdefault(p.key, p)

    def kerb_u(self, path: ReferencePath) -> float:
        """Arc length at which a walk path first enters the roadway (inf if it never does)."""
        if self.kerb_regions is None or path.key[0] != "walk":
            return math.inf
        line = LineString(path.points)
        inside = line.intersection(self.kerb_regions)
        if inside.is_empty:
            return math.inf
        if Point(path.points[0]).within(self.kerb_regions):
            return 0.0
        return float(min(line.project(Point(c)) for g in getattr(inside, "geoms", [inside]) for c in g.coords))


def path_from_key(scene: Scene, key: PathKey) -> ReferencePath:
    if key[0] == "lanes":
        return lane_path(scene.template.lane_graph, key[1:], scene.lane_index)
    if key[0] == "walk":
        start, via, nodes = split_walk_key(key)
        return walk_path(start, nodes, scene.template.walk_graph.nodes, via)
    if key[0] == "fixed":
        return fixed_path(key[1], key[2], key[3])
    raise KeyError(key)


def expand_walk(template: WorldTemplate, nodes: tuple[str, ...]) -> tuple[str, ...]:
    """Consecutive walk nodes joined through the walkable graph where they are not adjacent."""
    g = template.walk_graph
    out = [nodes[0]]
    for a, b in zip(nodes, nodes[1:]):
        if g.has_edge(a, b) or a == b:
            out.append(b)
        else:
            out.extend((g.shortest_path(a, b) or [a, b])[1:])
    return tuple(out)


def lane_window_contains(scene: Scene, window: LaneWindow, xy: tuple[float, float]) -> bool:
    geom = scene.template.lane_graph.lanes[window.lane]
    s, t = geom.project(*xy)
    return window.s_from <= s < window.s_to and abs(t) <= geom.width_m / 2


def at_tick(scene: Scene, trigger: AtTrigger) -> int:
    """The tick an ``at`` trigger fires: the first tick whose scenario time reaches ``t_s``."""
    return scene.warmup_ticks + int(math.ceil(trigger.t_s / scene.dt - 1e-9))
