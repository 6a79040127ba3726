"""Sites on an imported map: the ego routes an intent can use (issue 17, scenarios on imported maps).

A template names one ego route, and each intent states what it needs along
it (:meth:`simready.scenario.program_base.Program.check_template`: a lane
beside it for a cut-in, a parking strip before a crosswalk for the occluded
crossing, a signalised left turn with oncoming traffic, ...). A hand-written
template is authored for its intents; an imported map is not, so the import
can be asked for an intent: every candidate ego route is tried in a fixed
order — each non-junction driving lane alone, then continued by one
successor, or through a junction lane to the lane after it — and the first the
intent accepts becomes the template's ego route. The report says which
candidate fitted, or, when none does, why the first one failed.
"""

from __future__ import annotations

import copy
from typing import Any

from shapely.geometry import LineString

from simready.common.errors import SimreadyError
from simready.maps.errors import MapError
from simready.scenario.generator import prepare
from simready.world.template import parse_template

__all__ = ["candidate_routes", "fit_intent"]


def candidate_routes(data: dict[str, Any]) -> list[list[str]]:
    """Ego routes to try, in order: single lanes, then two-lane and three-lane (through a junction lane) chains."""
    template = parse_template(data, "<import>")
    graph = template.lane_graph
    junction = {lane.id for lane in template.lanes if template.region_by_id[lane.region].type == "intersection"}
    starts = [lane.id for lane in sorted(template.lanes, key=lambda lane: lane.id)
              if lane.kind == "driving" and lane.id not in junction]
    singles = [[a] for a in starts]
    longer = []
    for a in starts:
        for b in graph.successors[a]:
            if b not in junction:
                longer.append([a, b])
            else:
                longer += [[a, b, c] for c in graph.successors[b] if c not in junction]
    return singles + sorted(longer)


def with_ego_route(data: dict[str, Any], route: list[str]) -> dict[str, Any]:
    """A copy of template ``data`` whose ego drives ``route`` (start 5 m in, or a tenth of a short first lane)."""
    out = copy.deepcopy(data)
    first = next(lane for lane in out["lanes"] if lane["id"] == route[0])
    start = round(min(5.0, 0.1 * LineString(first["polyline"]).length), 4)
    out["ego"]["route"] = list(route)
    out["ego"]["start_s_m"] = start
    for a in out["affordances"]:
        if a["type"] == "ego_start":
            a["lane"], a["s_m"] = route[0], start
    return out


def fit_intent(data: dict[str, Any], intent: str) -> tuple[dict[str, Any], list[str]]:
    """``data`` with the first candidate ego route ``intent`` accepts (tried in order, the first fit wins), and report lines.

    Raises:
        MapError: no candidate route fits the intent (with the first reason given).
    """
    candidates = candidate_routes(data)
    first_reason = ""
    for k, route in enumerate(candidates):
        trial = with_ego_route(data, route)
        try:
            prepare(parse_template(trial, "<import>"), intent)
        except SimreadyError as exc:
            first_reason = first_reason or exc.reason
            continue
        return trial, [f"intent {intent}: candidate ego route {k + 1} of {len(candidates)} fits: {' -> '.join(route)}"]
    raise MapError(data["id"], "ego.route", f"none of {len(candidates)} candidate ego routes fits intent {intent!r} "
                                            f"(first reason: {first_reason})")
