"""Walkable graph (SPEC §5): where pedestrians may walk, as an undirected graph.

Nodes are world points (metres, x east, y north) inside sidewalk or crosswalk
regions; edges are straight walkable segments between them, weighted by
length. The pedestrian navigation controller follows a node path from
:meth:`WalkGraph.shortest_path`; a crossing is a path through a crosswalk.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from simready.world.graph_search import shortest_path


@dataclass(frozen=True)
class WalkGraph:
    """Undirected walkable graph.

    Attributes:
        nodes: id -> (x, y) in world metres, sorted by id.
        adjacency: id -> sorted ids of nodes one edge away.
    """

    nodes: dict[str, tuple[float, float]]
    adjacency: dict[str, tuple[str, ...]]

    @classmethod
    def build(cls, nodes: Mapping[str, Sequence[float]], edges: Iterable[Sequence[str]]) -> WalkGraph:
        """Graph from ``{id: [x, y]}`` and ``[[a, b], ...]``; unknown nodes raise KeyError."""
        pts = {n: (float(nodes[n][0]), float(nodes[n][1])) for n in sorted(nodes)}
        adj: dict[str, set[str]] = {n: set() for n in pts}
        for a, b in edges:
            for n in (a, b):
                if n not in pts:
                    raise KeyError(f"edge names unknown node {n!r}")
            adj[a].add(b)
            adj[b].add(a)
        return cls(pts, {n: tuple(sorted(adj[n])) for n in pts})

    def edge_length_m(self, a: str, b: str) -> float:
        (ax, ay), (bx, by) = self.nodes[a], self.nodes[b]
        return math.hypot(bx - ax, by - ay)

    def has_edge(self, a: str, b: str) -> bool:
        return b in self.adjacency.get(a, ())

    def shortest_path(self, start: str, goal: str) -> list[str] | None:
        """Shortest node path by walked length; ``None`` if the nodes are not connected."""
        for n in (start, goal):
            if n not in self.nodes:
                raise KeyError(f"unknown walkable node {n!r}")
        return shortest_path(start, goal, lambda a: ((b, self.edge_length_m(a, b)) for b in self.adjacency[a]))

    def path_length_m(self, path: Sequence[str]) -> float:
        return sum(self.edge_length_m(a, b) for a, b in zip(path, path[1:]))

    def path_points(self, path: Sequence[str]) -> list[tuple[float, float]]:
        return [self.nodes[n] for n in path]

    def nearest_node(self, x_m: float, y_m: float) -> str:
        """Closest node to a point; ties go to the smaller id."""
        return min(self.nodes, key=lambda n: (math.hypot(self.nodes[n][0] - x_m, self.nodes[n][1] - y_m), n))

    def components(self) -> list[list[str]]:
        """Connected components, each sorted, ordered by their smallest id."""
        seen: set[str] = set()
        out = []
        for start in self.nodes:
            if start in seen:
                continue
            stack, comp = [start], []
            seen.add(start)
            while stack:
                n = stack.pop()
                comp.append(n)
                for m in self.adjacency[n]:
                    if m not in seen:
                        seen.add(m)
                        stack.append(m)
            out.append(sorted(comp))
        return out
