"""What every scenario program shares: the program interface, actors and vehicles on lanes, manifest assembly.

A program samples *causes in dependency order* (relations before
coordinates) from named streams and writes every realized variable through
:class:`~simready.scenario.realization.Realization` (the causal record). Draws go through
:class:`~simready.scenario.draws.Draws`, grouped by the local variables a repair may resample.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from simready.common.errors import SimreadyError
from simready.scenario.context import ProgramContext
from simready.scenario.coverage import Cell
from simready.scenario.draws import Draws, GroupDraws
from simready.scenario.geometry import VEHICLE_SURFACES, CoarsePath, Motion, SpeedProfile
from simready.scenario.ladder import Body, Fail, Proposal, ProposalScene
from simready.scenario.manifest import SCHEMA_VERSION
from simready.scenario.realization import Realization
from simready.scenario.splits import SplitDecision, assign_split
from simready.scenario.streams import StreamSet
from simready.world.affordances import missing
from simready.world.template import WorldTemplate


#: Placeholder cell of a proposal that targets none (the baseline): the coverage stage assigns one.
UNASSIGNED_CELL = {"id": "(unassigned)", "dims": {}}
_V = TypeVar("_V")


class ScenarioError(SimreadyError):
    """Bad generation input: unknown intent or template, or a template lacking what the intent needs."""

    kind = "scenario"


# --- actors and the manifest -------------------------------------------------------------


def rules(*, obey_signals: bool, yield_: bool, collision_avoidance: bool, aggression: float,
          speed_factor: float) -> dict[str, Any]:
    return {"obey_signals": obey_signals, "yield": yield_, "collision_avoidance": collision_avoidance,
            "aggression": round(float(aggression), 6), "speed_factor": round(min(max(speed_factor, 0.05), 3.0), 6)}


def dims_of(ctx: ProgramContext, asset_id: str) -> dict[str, float]:
    d = ctx.catalog.entry(asset_id).dimensions_m
    return {"l": d.length, "w": d.width, "h": d.height}


def family_of(asset_id: str) -> str:
    return asset_id.removeprefix("asset:").split("/", 1)[0]


def actor(ctx: ProgramContext, actor_id: str, *, kind: str, role: str, asset_id: str, pose: tuple[float, float, float],
          speed_mps: float, behavior_rules: dict[str, Any], route: Sequence[str] = (), cruise_mps: float | None = None,
          lane_ref: dict[str, Any] | None = None, walk: dict[str, Any] | None = None, tags: Sequence[str] = (),
          present: bool = True) -> dict[str, Any]:
    """A manifest actor (JSON-like); dims come from the catalog entry."""
    x, y, yaw = pose
    return {
        "id": actor_id,
        "kind": kind,
        "role": role,
        "asset_id": asset_id,
        "dims": dims_of(ctx, asset_id),
        "initial": {"lane_ref": lane_ref, "pose": {"x": float(x), "y": float(y), "yaw": _wrap(float(yaw))},
                    "speed_mps": float(speed_mps)},
        "behavior": {"rules": behavior_rules, "route": list(route), "cruise_speed_mps": cruise_mps},
        "walk": walk,
        "present_at_start": present,
        "tags": list(tags),
    }


def _wrap(yaw: float) -> float:
    w = (yaw + math.pi) % (2 * math.pi) - math.pi
    return round(w, 9)


def wheel_points(ctx: ProgramContext, asset_id: str) -> tuple[tuple[float, float], ...]:
    """Body-frame (x, y) of the asset's ``wheel_*`` mounts, sorted by mount name."""
    mounts = ctx.catalog.entry(asset_id).mounts
    return tuple((m.translation_m[0], m.translation_m[1]) for n, m in sorted(mounts.items()) if n.startswith("wheel"))


def signal_programs(template: WorldTemplate) -> list[dict[str, Any]]:
    """The template's fixed-time signals as manifest signal programs.

    The template reads a signal at ``(t - offset) mod cycle``; a manifest
    program cycles from scenario time ``-offset``, i.e. reads ``(t + offset)
    mod cycle`` — so the manifest offset is ``(-offset) mod cycle``. Yellow
    is the manifest's ``amber``.
    """
    out = []
    for sig in sorted(template.signals, key=lambda s: s.id):
        phases = [{"state": "amber" if p.state == "yellow" else p.state, "duration_s": p.duration_s} for p in sig.program]
        out.append({"id": sig.id, "controls": list(sig.controls), "phases": phases,
                    "offset_s": round((-sig.offset_s) % sig.cycle_s, 9)})
    return out


def sample_id_prefix(template_id: str, abbrev: str) -> str:
    """``rc3-ped`` from ``residential_crosswalk_v3`` and ``ped``: each word's initial, a version word's digits."""
    letters = ""
    for word in template_id.split("_"):
        digits = word.lstrip("abcdefghijklmnopqrstuvwxyz")
        letters += digits if digits.isdigit() and len(word) - len(digits) <= 1 else word[0]
    return f"{letters}-{abbrev}"


def assemble(ctx: ProgramContext, *, sample_id: str, streams: StreamSet, program: IntentProgram, cell: Cell | None,
             actors: list[dict[str, Any]], interactions: list[dict[str, Any]], occluders: list[dict[str, Any]],
             environment: dict[str, Any], realization: Realization, clip_s: float, warmup_s: float,
             dt_s: float = 0.02, with_signals: bool = False) -> tuple[dict[str, Any], SplitDecision]:
    """The manifest draft (JSON-like) and the split decision behind its ``split``.

    The manifest's ``intent`` is the intent id; its sentence is ``realized["intent.description"]``.
    """
    ego = next((a for a in actors if a["role"] == "ego"), actors[0])
    families = sorted({family_of(a["asset_id"]) for a in actors})
    others = sorted({family_of(a["asset_id"]) for a in actors if a is not ego})
    decision = assign_split(ctx.splits, base_template=ctx.template.id, families=others, checkpoint_group=sample_id)
    used_assets = {a["asset_id"] for a in actors} | ctx.instance_assets
    realization.set("intent.description", program.description, source="program", rule="what the intent asks for")
    draft = {
        "schema_version": SCHEMA_VERSION,
        "template_id": ctx.template.id,
        "template_hash": ctx.template_hash,
        "sample_id": sample_id,
        "seed": streams.root_seed,
        "streams": streams.seeds(),
        "clip_s": clip_s,
        "warmup_s": warmup_s,
        "dt": dt_s,
        "metric_subject": ego["id"],
        "actors": actors,
        "interactions": interactions,
        "signal_programs": signal_programs(ctx.template) if with_signals else [],
        "occluders": occluders,
        "environment": environment,
        "coverage_cell": cell.manifest_dict() if cell is not None else dict(UNASSIGNED_CELL),
        "split": decision.split or "train",
        "realized": realization.realized(),
        "lineage": {"asset_families": families, "base_template": ctx.template.id, "checkpoint_group": sample_id},
        "asset_versions": {a: ctx.asset_hashes[a] for a in sorted(used_assets) if a in ctx.asset_hashes},
        "intent": program.name,
    }
    return draft, decision


def seconds_on_grid(t_s: float, dt_s: float = 0.02) -> float:
    """``t_s`` rounded to the tick grid (trigger times land on ticks)."""
    return round(round(t_s / dt_s) * dt_s, 9)


# --- the program interface ------------------------------------------------------------------


class IntentProgram(ABC):
    """One intent's conditional program and its independent baseline over the same variables.

    Subclasses set ``name`` (the intent id), ``abbrev`` (sample-id infix),
    ``default_template``, ``description`` (the manifest's ``intent`` text),
    ``needs`` (the map affordances it samples on, names of
    :data:`simready.world.affordances.AFFORDANCES`) and ``local_groups`` (draw
    groups a repair may resample), and implement :meth:`check_template`,
    :meth:`propose` and :meth:`baseline`.
    """

    name: str = ""
    abbrev: str = ""
    default_template: str = ""
    description: str = ""
    needs: tuple[str, ...] = ("route",)
    local_groups: frozenset[str] = frozenset()

    def feasibility(self, template: WorldTemplate) -> str | None:
        """Why the map cannot support this intent, in one line (the first affordance it lacks); None if it can."""
        return missing(template, self.needs)

    def require_affordances(self, ctx: ProgramContext) -> None:
        """Raise the feasibility line as a :class:`ScenarioError` when the template lacks an affordance."""
        line = self.feasibility(ctx.template)
        if line is not None:
            raise ScenarioError(ctx.template.source, "affordances", f"{ctx.template.id}: {line} ({self.name} needs it)")

    @abstractmethod
    def check_template(self, ctx: ProgramContext) -> None:
        """Raise :class:`ScenarioError` naming what the template lacks for this intent."""

    @abstractmethod
    def propose(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, streams: StreamSet, *,
                attempt: int = 0, previous: Mapping[str, Mapping[str, Any]] | None = None,
                redraw: Iterable[str] = ()) -> Any:
        """A :class:`~simready.scenario.ladder.Proposal` for ``cell``: causes in dependency order."""

    @abstractmethod
    def baseline(self, ctx: ProgramContext, sample_id: str, index: int, streams: StreamSet) -> Any:
        """A proposal from independent draws of the same variables over their full ranges (no cell, no solve)."""

    def repair(self, ctx: ProgramContext, proposal: Proposal, failure: Fail, streams: StreamSet) -> Any | None:
        """Resample only the local groups the failure names; None when it names none of this program's."""
        groups = self.local_groups & set(failure.repair)
        if not groups or proposal.choice is None:
            return None
        return self.propose(ctx, proposal.cell, proposal.sample_id, proposal.index, streams,
                            attempt=proposal.attempt + 1, previous=proposal.choice, redraw=groups)

    def refused(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, attempt: int, draws: Draws,
                failure: Fail) -> Proposal:
        """A proposal the program could not complete: it carries only the defect (the sampling stage rejects it)
        and the draws made so far (a repair replays them)."""
        return Proposal(sample_id, index, attempt, self.name, ctx.template, cell, {}, ProposalScene({}, 0.0, 0.0),
                        defects=[failure], choice=draws.record)

    def memo(self, ctx: ProgramContext, key: Hashable, build: Callable[[], _V]) -> _V:
        """A value computed once per (template, key): the parts of a layout every proposal shares."""
        store = self.__dict__.setdefault("_memo", {})
        full = (id(ctx.template), ctx.template_hash, key)
        hit = store.get(full)
        if hit is None or hit[0] is not ctx.template:
            hit = (ctx.template, build())
            store[full] = hit
        value: _V = hit[1]
        return value

    def require(self, ctx: ProgramContext, ok: bool, field_: str, reason: str) -> None:
        if not ok:
            raise ScenarioError(ctx.template.source, field_, f"{ctx.template.id} {reason} ({self.name} needs it)")


# --- vehicles on lanes ------------------------------------------------------------------------


def lwh(ctx: ProgramContext, asset_id: str) -> tuple[float, float, float]:
    d = ctx.catalog.entry(asset_id).dimensions_m
    return d.length, d.width, d.height


def vehicle_on_route(ctx: ProgramContext, actor_id: str, *, role: str, asset_id: str, lanes: Sequence[str],
                     s0_m: float, speed_mps: float, warmup_s: float, behavior_rules: dict[str, Any],
                     tags: Sequence[str], path: CoarsePath | None = None, profile: SpeedProfile | None = None,
                     cruise_mps: float | None = None, offset_m: float = 0.0) -> tuple[dict[str, Any], Any]:
    """A vehicle starting at route arc length ``s0_m`` (at t = -warmup_s): its manifest actor and its Body.

    ``path`` defaults to the route's centreline (``offset_m`` to its left, +,
    or right, -: a vehicle holding a lateral offset, which the simulator keeps
    from the initial pose) and ``profile`` to constant ``speed_mps``; both are
    the plan the ladder replays (arc length on ``path``). The manifest route
    starts at the lane holding ``s0_m``; its ``t_frac`` is the offset as a
    fraction of the lane's half-width, at most ±1 (the pose is exact).
    """
    lanes = tuple(lanes)
    route = ctx.geometry.route_path(lanes, offset_m)
    path = path if path is not None else route
    x, y, yaw = (float(v) for v in path.xy_yaw(s0_m))
    lane, lane_s = ctx.geometry.route_lane_at(lanes, s0_m)
    ahead = lanes[lanes.index(lane):]
    motion = Motion(path, profile if profile is not None else SpeedProfile.constant(-warmup_s, s0_m, speed_mps))
    length, width, height = lwh(ctx, asset_id)
    half = ctx.template.lane_graph.lane(lane).width_m / 2
    t_frac = round(max(-1.0, min(1.0, offset_m / half)), 6) if offset_m else 0.0
    manifest_actor = actor(ctx, actor_id, kind="vehicle", role=role, asset_id=asset_id, pose=(x, y, yaw),
                           speed_mps=speed_mps, route=ahead, lane_ref={"lane": lane, "s": round(lane_s, 6), "t_frac": t_frac},
                           cruise_mps=speed_mps if cruise_mps is None else cruise_mps, behavior_rules=behavior_rules,
                           tags=tags)
    body = Body(actor_id, "vehicle", role, asset_id, family_of(asset_id), length, width, height, motion,
                VEHICLE_SURFACES, lanes=ahead, lane_offset_m=offset_m)
    return manifest_actor, body


def ego_vehicle(ctx: ProgramContext, speed_mps: float, warmup_s: float,
                route: EgoRoute | None = None) -> tuple[dict[str, Any], Any]:
    """The ego shuttle on its route (the template's unless a drawn one is given) at constant speed, holding the
    route's lateral offset."""
    t = ctx.template
    route = route or EgoRoute(tuple(t.ego.route), t.ego.start_s_m)
    limit = t.lane_graph.lane(route.lanes[0]).speed_limit_mps
    return vehicle_on_route(ctx, "ego", role="ego", asset_id=t.ego.asset, lanes=route.lanes, s0_m=route.start_s_m,
                            speed_mps=speed_mps, warmup_s=warmup_s, tags=["ego"], offset_m=route.offset_m,
                            behavior_rules=rules(obey_signals=True, yield_=True, collision_avoidance=True,
                                                 aggression=0.2, speed_factor=speed_mps / limit))


@dataclass(frozen=True)
class EgoRoute:
    """The ego's lanes for one sample, where it starts on the first (m), and the lateral offset it holds from the
    lanes' centreline (m, + left: passing a vehicle parked at the kerb)."""

    lanes: tuple[str, ...]
    start_s_m: float
    offset_m: float = 0.0


#: A drawn ego route starts this far into its first lane, or a tenth of a shorter lane (m).
DRAWN_START_M = 20.0
#: The ego starts this far before the junction on a drawn route through one (m), or at its first lane's start.
DRAWN_APPROACH_M = 45.0


def draw_ego_route(ctx: ProgramContext, r: Realization, draws: Draws, candidates: Sequence[tuple[str, ...]],
                   holds: Callable[[tuple[str, ...]], bool], relation: str, *, before_junction: bool = False) -> EgoRoute:
    """The ego route of one sample (SPEC §18): the template's ``ego.route`` when the intent's relation holds on it,
    else one of ``candidates`` (routes on which it holds) drawn from the ``route`` stream.

    Realized as ``ego.route`` (and, when drawn, ``ego.start_s_m``: :data:`DRAWN_APPROACH_M` before the first
    junction lane with ``before_junction``, else :data:`DRAWN_START_M` in).
    """
    t = ctx.template
    own = tuple(t.ego.route)
    if holds(own):
        r.set("ego.route", list(own), source="template", rule="the template's ego route")
        return EgoRoute(own, t.ego.start_s_m)
    if not candidates:
        raise ScenarioError(t.source, "ego.route", f"{t.id}: no route {relation}")
    lanes = tuple(draws.group("route", "route").choice("ego_route", list(candidates)))
    r.set("ego.route", list(lanes), source="route", rule=f"uniform over the lane graph's routes {relation}")
    first = t.lane_graph.lane(lanes[0]).length_m
    start = max(0.0, first - DRAWN_APPROACH_M) if before_junction else min(DRAWN_START_M, 0.1 * first)
    r.set("ego.start_s_m", round(start, 4), source="derived", parents=["ego.route"],
          rule=f"{DRAWN_APPROACH_M:g} m before the junction" if before_junction else
          f"{DRAWN_START_M:g} m into the first lane, or a tenth of it")
    return EgoRoute(lanes, round(start, 4))


@dataclass(frozen=True)
class LaneSpawn:
    """A vehicle start range on a lane the template declares no spawn on: the whole lane (id ``<lane>/lane``)."""

    id: str
    lane: str
    s_range_m: tuple[float, float]


def lane_as_spawn(template: WorldTemplate, lane: str) -> LaneSpawn:
    return LaneSpawn(f"{lane}/lane", lane, (0.0, round(template.lane_graph.lane(lane).length_m, 4)))


def spawn_affordances(template: WorldTemplate, lane: str) -> list[Any]:
    """Vehicle-spawn affordances on ``lane``, sorted by id."""
    return sorted((a for a in template.affordances if a.type == "vehicle_spawn" and a.lane == lane), key=lambda a: a.id)


def vehicle_families(ctx: ProgramContext, exclude: Iterable[str] = ()) -> list[str]:
    """Catalog families whose class is a vehicle (ontology category), sorted, minus ``exclude``."""
    skip = set(exclude)
    out = set()
    for e in ctx.catalog.entries.values():
        cls = ctx.ontology.classes.get(e.semantic_class)
        if cls is not None and cls.category == "vehicle" and e.family not in skip:
            out.add(e.family)
    return sorted(out)


# --- draws that read the cell ------------------------------------------------------------------


def cell_or_choice(r: Realization, group: GroupDraws, cell: Cell | None, dim: str, name: str,
                   options: Sequence[str], what: str) -> str:
    """The cell's value on ``dim`` when it declares one, else a uniform choice; realized as ``name``."""
    value = cell.value(dim) if cell is not None else None
    if value is not None:
        return r.set(name, value, source="cell", parents=[f"cell.{dim}"], rule=f"the coverage cell's {dim}")
    return r.set(name, group.choice(dim, list(options)), source=group.stream, rule=f"uniform over {what}")


def in_cell_bin(r: Realization, group: GroupDraws, cell: Cell | None, dim: str, name: str,
                default: tuple[float, float], *, inset: float = 1e-3, parents: Sequence[str] = (),
                digits: int = 4) -> float:
    """Uniform inside the cell's bin on ``dim`` (``default`` when the cell does not bin it), ``inset`` from
    its edges so rounding cannot push the value out; realized as ``name``."""
    lo, hi = (cell.bin(dim) if cell is not None else None) or default
    value = round(group.uniform(name, lo + inset, hi - inset), digits)
    from_cell = [f"cell.{dim}"] if cell is not None and cell.bin(dim) else []
    return r.set(name, value, source=group.stream, parents=[*from_cell, *parents],
                 rule=f"uniform in [{lo}, {hi}) inside the cell")


def other_vehicle(ctx: ProgramContext, draws: Draws, r: Realization, cell: Cell | None, role: str) -> str:
    """Family (the cell's ``<role>_family``, or any vehicle family but the ego's) and variant of a non-ego vehicle."""
    assets = draws.group("assets", "actors")
    family = cell_or_choice(r, assets, cell, f"{role}_family", f"{role}.family",
                            vehicle_families(ctx, [family_of(ctx.template.ego.asset)]), "vehicle families but the ego's")
    return r.set(f"{role}.asset", assets.choice(role, ctx.variants(family)), source="actors",
                 parents=[f"{role}.family"], rule="uniform over the family's variants")
