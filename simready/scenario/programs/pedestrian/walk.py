"""The pedestrian's walk: its path sampled along the walkable graph, where it leaves the kerb and where it meets the
ego's corridor and route, and the node it starts walking from."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import shapely

from simready.scenario.api import WALKABLE_SURFACES, CoarsePath, ProgramContext, WorldTemplate
from simready.scenario.programs.pedestrian.layouts import Layout
from simready.scenario.programs.pedestrian.params import PATH_STEP_M


@dataclass(frozen=True)
class PedGeometry:
    """The pedestrian's path sampled every :data:`PATH_STEP_M`: kerb exit and the ego-route crossing."""

    path: CoarsePath
    s: np.ndarray
    xy: np.ndarray
    s_kerb: float | None

    @classmethod
    def of(cls, ctx: ProgramContext, spawn: tuple[float, float], nodes: Iterable[str], sidewalk: str | None,
           ped_r: float) -> PedGeometry:
        t = ctx.template
        path = CoarsePath.from_points([spawn] + [t.walk_graph.nodes[n] for n in nodes])
        s = np.arange(0.0, path.length_m + PATH_STEP_M / 2, PATH_STEP_M)
        x, y, _ = path.xy_yaw(s)
        xy = np.stack([x, y], axis=1)
        s_kerb = None
        if sidewalk is None:
            regions = [rg.shape for rg in t.regions if rg.type == "sidewalk"]
            inside_any = [rg for rg in regions if rg.contains(shapely.Point(spawn))]
            shape = inside_any[0] if inside_any else None
        else:
            shape = t.region_by_id[sidewalk].shape
        if shape is not None:
            inside = shapely.contains_xy(shape, x, y)
            if inside[0] and not inside.all():
                s_kerb = float(s[int(np.argmin(inside))])
        return cls(path, s, xy, s_kerb)

    def conflict(self, route: CoarsePath, corridor_half_m: float) -> Conflict | None:
        """Where the path enters the ego's corridor and crosses its route; None if it never does."""
        s_route, t_lat = route.lateral(self.xy)
        inside = (np.abs(t_lat) <= corridor_half_m) & (s_route > 0) & (s_route < route.length_m)
        if not inside.any():
            return None
        k_enter = int(np.argmax(inside))
        cross = np.nonzero(np.sign(t_lat[k_enter:]) != np.sign(t_lat[k_enter]))[0]
        k_x = k_enter + (int(cross[0]) if len(cross) else 0)
        return Conflict(float(s_route[k_x]), float(self.s[k_x]), float(self.s[k_enter]),
                         self.s_kerb if self.s_kerb is not None else 0.0)

    def point_at(self, s_m: float) -> tuple[float, float]:
        x, y, _ = self.path.xy_yaw(s_m)
        return float(x), float(y)


@dataclass(frozen=True)
class Conflict:
    """Arc lengths (m): on the ego route at the crossing point; on the pedestrian path at it, at corridor entry, at the kerb."""

    s_route_m: float
    s_path_m: float
    s_enter_m: float
    s_kerb_m: float


def first_crosswalk_node(template: WorldTemplate, layout: Layout) -> str:
    """The first node of the crossing path that lies on its crosswalk (where the walk leaves the kerb)."""
    shape = template.region_by_id[layout.crosswalk].shape.buffer(0.05)
    return next((n for n in layout.path if shape.contains(shapely.Point(template.walk_graph.nodes[n]))), layout.path[0])


def path_s_of(template: WorldTemplate, path: tuple[str, ...], node: str) -> float:
    """Walked length along ``path`` from its first node to ``node``."""
    return template.walk_graph.path_length_m(path[: path.index(node) + 1])


def walk_start(ctx: ProgramContext, spawn: tuple[float, float], path: tuple[str, ...]) -> tuple[str, ...]:
    """The crossing path from the furthest node (up to the first one on the crosswalk) walkable in a straight line."""
    t = ctx.template
    surface = ctx.geometry.surface(WALKABLE_SURFACES)
    sidewalks = ctx.geometry.surface(("sidewalk",))
    last = 0
    for k, node in enumerate(path[:-1]):
        xy = t.walk_graph.nodes[node]
        if surface.covers(shapely.LineString([spawn, xy])):
            last = k
        if not sidewalks.contains(shapely.Point(xy)):
            break
    return tuple(path[last:])
