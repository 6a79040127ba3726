"""The constraint ladder (SPEC §0.4): small stage objects, one loop, cheap → expensive.

A scenario program proposes; the ladder judges. Each stage is an object
with a ``name``, a ``cost_rank`` and ``check(proposal) -> Pass | Fail``;
:class:`Ladder` sorts its stages by rank once and runs them in order,
stopping at the first failure, so a proposal failing stage k never reaches
stage k+1. A :class:`Fail` carries a short machine-readable ``reason``
(``occlusion.visible_before_emergence``) and a human ``detail`` with the
numbers; rejections are data (:class:`RejectionRow`), never log noise.

Stage ranks used by this package (``level`` groups them as the issue does):

====  ==================  =====  ==========================================
rank  name                level  what it judges
====  ==================  =====  ==========================================
0     sampling            0      the program could realize every relation
10    semantics           1      ids exist, regions fit the intent, license, split
11    schema              1      the manifest validates (SPEC §6)
20    bounds              2      footprints inside the map
21    support             2      footprints on their surface, wheels on the road
22    non_penetration     2      no two bodies (or static obstacles) overlap
23    reachability        2      routes exist on the lane / walkable graph
24    occlusion           2      ray-cast visibility before and after emergence
30    rollout             3      coarse kinematic rollout shows the event
35    coverage_cell       3      the realized values lie in the targeted cell
40    capture             4      the sensor schedule covers the event context
50    (physics settle)    5      the simulation's hook: pass it in ``stages``
====  ==================  =====  ==========================================

Stages may publish measurements (a reveal time, a visible fraction) into
``proposal.measured``; later stages and the accepted manifest's
``realized`` read them there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from simready.common.errors import ManifestError
from simready.scenario.coverage_counts import UNASSIGNED
from simready.scenario.geometry import Motion
from simready.scenario.manifest import parse_manifest
from simready.scenario.splits import assign_split
from simready.world.affordances import ParkingSite, parking_sites

if TYPE_CHECKING:
    from simready.scenario.context import ProgramContext
    from simready.scenario.coverage import Cell
    from simready.scenario.manifest import ScenarioManifest
    from simready.world.template import WorldTemplate


@dataclass(frozen=True)
class Pass:
    """A stage's verdict: the proposal satisfies it."""

    ok: ClassVar[bool] = True


PASS = Pass()


@dataclass(frozen=True)
class Fail:
    """A stage's verdict: rejected, with a short ``reason`` code and a ``detail`` sentence.

    ``repair`` names the local variable groups whose resampling may fix it
    (empty: not locally repairable). ``structural`` marks a refusal no draw
    can change (the template lacks the relation the cell asks for). The
    ladder fills ``stage``.
    """

    reason: str
    detail: str
    repair: tuple[str, ...] = ()
    stage: str = ""
    structural: bool = False
    ok: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if not self.reason or not self.detail:
            raise ValueError("a rejection needs a non-empty reason and detail")


Verdict = Pass | Fail


@runtime_checkable
class Stage(Protocol):
    """One rung of the ladder."""

    name: str
    cost_rank: int
    level: int

    def check(self, proposal: Proposal) -> Verdict: ...


@dataclass(frozen=True)
class LadderResult:
    """Outcome of one evaluation: ``failure`` is None when every stage passed; ``ran`` lists stage names run."""

    failure: Fail | None
    ran: tuple[str, ...]

    @property
    def accepted(self) -> bool:
        return self.failure is None


class Ladder:
    """Stages sorted by ``(cost_rank, name)``; :meth:`evaluate` stops at the first failure."""

    def __init__(self, stages: Iterable[Stage]) -> None:
        ordered = sorted(stages, key=lambda s: (s.cost_rank, s.name))
        names = [s.name for s in ordered]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names repeat: {names}")
        self.stages: tuple[Stage, ...] = tuple(ordered)

    def evaluate(self, proposal: Proposal) -> LadderResult:
        ran = []
        for stage in self.stages:
            ran.append(stage.name)
            before = set(proposal.measured)
            verdict = stage.check(proposal)
            for key in proposal.measured.keys() - before:
                proposal.measured_by[key] = stage.name
            if not verdict.ok:
                assert isinstance(verdict, Fail)
                return LadderResult(Fail(verdict.reason, verdict.detail, verdict.repair, stage.name, verdict.structural),
                                    tuple(ran))
        return LadderResult(None, tuple(ran))


# --- what the stages look at ---------------------------------------------------


@dataclass(frozen=True)
class Body:
    """One sampled actor's geometry, as the static checks and the rollout see it.

    ``motion`` gives the planned pose at any scenario time (its profile
    starts at ``-warmup_s``). ``surface`` names the region types the
    footprint must lie on; ``site`` (optional) the parking site it must lie
    inside (a parked van's parking strip or kerb site,
    :class:`~simready.world.affordances.ParkingSite`). ``wheels`` are body-frame (x, y)
    contact points that must lie on ``wheel_surface``. ``lanes`` / ``walk``
    are its route on the lane graph / walkable graph (node ids), for the
    reachability check; ``lane_offset_m`` the lateral offset from its lanes'
    centreline it holds (+ left; the ego passing a van parked at the kerb):
    it starts on its first lane when its centre, less that offset, does.
    ``via`` (a pedestrian's mid-block crossing, the manifest's ``walk.via``)
    are the points it walks through before ``walk``'s first node, off the
    walkable graph; while it moves such a pedestrian may stand on the
    carriageway too (:data:`~simready.scenario.geometry.CROSSING_SURFACES`).
    """

    actor_id: str
    kind: str
    role: str
    asset_id: str
    family: str
    length_m: float
    width_m: float
    height_m: float
    motion: Motion
    surface: tuple[str, ...]
    site: ParkingSite | None = None
    wheels: tuple[tuple[float, float], ...] = ()
    wheel_surface: tuple[str, ...] = ()
    lanes: tuple[str, ...] = ()
    walk: tuple[str, ...] = ()
    lane_offset_m: float = 0.0
    via: tuple[tuple[float, float], ...] = ()

    @property
    def radius_m(self) -> float:
        """Half the larger horizontal extent: a disc that a pedestrian's body fits in."""
        return max(self.length_m, self.width_m) / 2


@dataclass
class ProposalScene:
    """Bodies, the clip, and the intent's geometric requirements (occlusion, event)."""

    bodies: dict[str, Body]
    warmup_s: float
    clip_s: float
    occlusion: Any = None  # simready.scenario.static_checks.OcclusionSpec | None
    event: Any = None  # simready.scenario.coarse_rollout.Event | None
    #: ``(actor id, arc length of its stop line on its path, signal id)``: it must cross on green.
    stop_lines: list[tuple[str, float, str]] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Proposal:
    """One candidate scenario: what the program sampled, and what the stages measured.

    ``draft`` is the manifest as JSON-like data (``realized`` included);
    ``refs`` holds the semantic choices stage 1 checks (``{"regions":
    {actor: region id}, "families": {...}}``); ``defects`` are relations the
    program could not realize (the ``sampling`` stage reports the first).
    ``choice`` is the program's own record of its draws (for local repair).
    """

    sample_id: str
    index: int
    attempt: int
    intent: str
    template: WorldTemplate
    cell: Cell | None
    draft: dict[str, Any]
    scene: ProposalScene
    refs: dict[str, Any] = field(default_factory=dict)
    defects: list[Fail] = field(default_factory=list)
    choice: Any = None
    measured: dict[str, Any] = field(default_factory=dict)
    measured_by: dict[str, str] = field(default_factory=dict)
    manifest: ScenarioManifest | None = None

    @property
    def cell_id(self) -> str:
        return self.cell.id if self.cell is not None else UNASSIGNED


# --- the rejection log ---------------------------------------------------------

REJECTION_FIELDS = ("sample_id", "template_id", "intent", "cell", "stage", "reason", "detail", "attempt", "proposal_index")


@dataclass(frozen=True)
class RejectionRow:
    """One rejected proposal (one ladder evaluation) — a row of the rejection log."""

    sample_id: str
    template_id: str
    intent: str
    cell: str
    stage: str
    reason: str
    detail: str
    attempt: int
    proposal_index: int

    def __post_init__(self) -> None:
        if not self.stage or not self.reason or not self.detail:
            raise ValueError("a rejection row needs a stage, a reason and a detail")

    @classmethod
    def of(cls, proposal: Proposal, failure: Fail) -> RejectionRow:
        return cls(proposal.sample_id, proposal.template.id, proposal.intent, proposal.cell_id, failure.stage,
                   failure.reason, failure.detail, proposal.attempt, proposal.index)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in REJECTION_FIELDS}


# --- the first rungs: sampling, semantics, schema; and the cell check ------------------------

#: Which ontology class categories / classes an actor kind may use.
KIND_CLASSES = {"vehicle": ("category", "vehicle"), "pedestrian": ("class", "pedestrian"), "cyclist": ("class", "cyclist")}


class SamplingStage:
    """Rank 0: the program could realize every relation it needed (a parking slot, a timing solution, …)."""

    name = "sampling"
    cost_rank = 0
    level = 0

    def __init__(self, ctx: ProgramContext | None = None) -> None:
        pass

    def check(self, proposal: Proposal) -> Verdict:
        return proposal.defects[0] if proposal.defects else PASS


class SemanticsStage:
    """Ids exist, kinds match asset classes, regions fit the intent, license and split are legal, conditions allowed."""

    name = "semantics"
    cost_rank = 10
    level = 1

    def __init__(self, ctx: ProgramContext) -> None:
        self.ctx = ctx

    def check(self, proposal: Proposal) -> Verdict:
        ctx, template, draft = self.ctx, proposal.template, proposal.draft
        onto = ctx.ontology
        ego_family = None
        for a in draft["actors"]:
            asset = a["asset_id"]
            entry = ctx.catalog.entries.get(asset)
            if entry is None:
                return Fail("semantics.unknown_asset", f"{a['id']} uses {asset}, which is not in the catalog", ())
            if entry.license not in onto.licenses_allowed:
                return Fail("semantics.license", f"{asset} has license {entry.license!r}, not one of "
                            f"{', '.join(onto.licenses_allowed)}", ())
            how, what = KIND_CLASSES[a["kind"]]
            cls = onto.classes.get(entry.semantic_class)
            got = (cls.category if cls is not None else None) if how == "category" else entry.semantic_class
            if got != what:
                return Fail("semantics.kind_mismatch", f"{a['id']} is a {a['kind']} but {asset} is a "
                            f"{entry.semantic_class}", ())
            if a["kind"] not in template.actor_types:
                return Fail("semantics.actor_type", f"{template.id} allows no {a['kind']} actors", ())
            if a["role"] == "ego":
                ego_family = entry.family
        for actor_id, (region_id, types) in sorted(proposal.refs.get("regions", {}).items()):
            region = template.region_by_id.get(region_id)
            if region is None or region.type not in types:
                found = "missing" if region is None else f"a {region.type}"
                return Fail("semantics.region", f"{actor_id} needs a {'/'.join(types)} region; {region_id} is {found}", ())
        for actor_id, site in sorted(proposal.refs.get("sites", {}).items()):
            if site not in parking_sites(template):
                return Fail("semantics.site", f"{actor_id} stands at {site.id}, which is no parking site of {template.id} "
                            f"(a parking lane or region, or a kerb by the kerbside rule)", ())
        controls = template.environment_controls
        env = draft["environment"]
        if env.get("illumination") not in controls.illumination or env.get("weather") not in controls.weather:
            return Fail("semantics.environment", f"{template.id} does not offer {env.get('illumination')} / "
                        f"{env.get('weather')} (controls: {list(controls.illumination)} / {list(controls.weather)})", ())
        others = {a["asset_id"].removeprefix("asset:").split("/")[0] for a in draft["actors"] if a["role"] != "ego"}
        decision = assign_split(ctx.splits, base_template=template.id, families=others,
                                checkpoint_group=draft["lineage"]["checkpoint_group"])
        if decision.conflict is not None:
            return Fail("semantics.split_conflict", decision.conflict, ("assets",))
        if draft["split"] != decision.split:
            return Fail("semantics.split_mismatch", f"split {draft['split']} but the lineage decides "
                        f"{decision.split} ({decision.decided_by})", ())
        if ego_family is not None and ego_family in ctx.splits.families and ctx.splits.families[ego_family] not in (
                "shared", decision.split):
            return Fail("semantics.split_conflict", f"ego family {ego_family} is pinned to "
                        f"{ctx.splits.families[ego_family]}, the sample is {decision.split}", ())
        return PASS


class SchemaStage:
    """The draft validates as a :class:`~simready.scenario.manifest.ScenarioManifest`; the model is kept."""

    name = "schema"
    cost_rank = 11
    level = 1

    def __init__(self, ctx: ProgramContext | None = None) -> None:
        pass

    def check(self, proposal: Proposal) -> Verdict:
        try:
            proposal.manifest = parse_manifest(proposal.draft, proposal.sample_id)
        except ManifestError as exc:
            return Fail("schema.invalid", f"{exc.field or '(root)'}: {exc.reason}", ())
        return PASS


class CoverageCellStage:
    """The realized (and measured) values lie in the targeted cell; a proposal without one gets its cell here."""

    name = "coverage_cell"
    cost_rank = 35
    level = 3

    def __init__(self, ctx: ProgramContext) -> None:
        self.spec = ctx.coverage

    def check(self, proposal: Proposal) -> Verdict:
        values = {**proposal.draft["realized"], **proposal.measured}
        if proposal.cell is None:
            cell = self.spec.locate(values)
            if cell is None:
                dims = ", ".join(f"{d.name}={values.get(d.key)!r}" for d in self.spec.dimensions
                                 if d.locate(values.get(d.key)) is None)
                return Fail("coverage_cell.outside_declared", f"no declared cell holds {dims}", ())
            proposal.cell = cell
            return PASS
        miss = self.spec.mismatch(proposal.cell, values)
        if miss is None:
            return PASS
        dim, value = miss
        repairs = proposal.refs.get("cell_repairs", {}).get(dim, ())
        return Fail(f"coverage_cell.{dim}", f"{dim} = {value!r} is outside the cell's "
                    f"{proposal.cell.coords[dim].text()}", tuple(repairs))
