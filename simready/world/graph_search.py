"""Deterministic shortest-path search shared by the lane graph and the walkable graph.

Why one function: both graphs need "cheapest path from a to b" with the same
tie-breaking rule, so that two equally long routes always resolve to the same
one (lexicographically smallest node sequence) whatever the declaration order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable


def shortest_path(
    start: str,
    goal: str,
    neighbours: Callable[[str], Iterable[tuple[str, float]]],
) -> list[str] | None:
    """Dijkstra from ``start`` to ``goal``; ``None`` when ``goal`` is unreachable.

    Args:
        start, goal: node ids.
        neighbours: ``node -> [(next node, non-negative step cost), ...]``.

    Returns:
        The node sequence including both ends (``[start]`` when they are equal).
        Ties in total cost go to the lexicographically smallest sequence.
    """
    frontier: list[tuple[float, tuple[str, ...]]] = [(0.0, (start,))]
    settled: set[str] = set()
    while frontier:
        cost, path = heapq.heappop(frontier)
        node = path[-1]
        if node == goal:
            return list(path)
        if node in settled:
            continue
        settled.add(node)
        for nxt, step in neighbours(node):
            if nxt not in settled:
                heapq.heappush(frontier, (cost + step, path + (nxt,)))
    return None
