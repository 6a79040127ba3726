"""Generation: programs propose, the ladder judges, coverage steers (SPEC §0.4, §13).

:func:`generate` runs one intent on one template until ``n`` manifests are
accepted or every targeted cell is closed:

* the next sample targets the open cell with the lowest accepted / target
  ratio (ties: fewer proposals, then declared order);
* its sample id is ``<template initials>-<intent abbrev>-<index:06d>``
  (``rc3-ped-000042``), its streams derive from ``<root>/<sample id>``, so
  the same root gives byte-identical manifests;
* a rejected proposal may be repaired locally up to ``max_repairs`` times
  (only the variable groups the failure names are redrawn); every
  evaluation is a proposal and every rejection a :class:`RejectionRow`;
* a cell closes after ``max_proposals_per_cell`` rejections in a row, or
  after :data:`STRUCTURAL_STRIKES` samples the program refused structurally
  (the template cannot realize the cell's relation); it is then reported
  infeasible (none accepted) or underfilled, with its dominant rejection
  reasons.

The stages default to :func:`default_stages`; pass ``stages`` to replace
them or ``extra_stages`` to add one (the simulation's physics settle check
plugs in here as rank 50).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from simready.common import paths
from simready.catalog.catalog import Catalog, ensure_catalog
from simready.scenario.capture import CaptureStage
from simready.scenario.coarse_rollout import RolloutStage
from simready.scenario.context import ProgramContext
from simready.scenario.coverage import TRAFFIC_FIELDS, Cell, CoverageError, CoverageSpec
from simready.scenario.coverage_counts import UNASSIGNED, CoverageReport
from simready.scenario.ladder import (
    CoverageCellStage,
    Fail,
    Ladder,
    Proposal,
    RejectionRow,
    SamplingStage,
    SchemaStage,
    SemanticsStage,
    Stage,
)
from simready.scenario.manifest import CoverageCell, ScenarioManifest, canonicalize, manifest_bytes, parse_manifest
from simready.scenario.manifest.base import ParamName, ParamValue
from simready.scenario.programs import coverage_of, provenance
from simready.scenario.programs import program as get_program
from simready.scenario.program_base import IntentProgram, ScenarioError, sample_id_prefix
from simready.scenario.realization import CAUSAL_ORDER_KEY, CAUSE_PREFIX
from simready.scenario.splits import SplitConfig, load_splits
from simready.scenario.static_checks import (
    BoundsStage,
    NonPenetrationStage,
    OcclusionStage,
    ReachabilityStage,
    SupportStage,
)
from simready.scenario.streams import StreamSet
from simready.scenario.traffic import TrafficSpawnStage, TrafficSpec, check_capacity, densities_of
from simready.world.template import WorldTemplate, list_template_files, load_template

DEFAULT_ROOT = "simready-v1"
MAX_REPAIRS = 3
#: A cell closes after this many samples in a row that the program refused structurally (the template cannot
#: realize the cell's relation at all, e.g. no lane on that side): more proposals could not change that.
STRUCTURAL_STRIKES = 3


def default_stages(ctx: ProgramContext) -> list[Stage]:
    """The full ladder: sampling, semantics, schema, static geometry, rollout, cell, capture."""
    return [SamplingStage(ctx), SemanticsStage(ctx), SchemaStage(ctx), BoundsStage(ctx), SupportStage(ctx),
            NonPenetrationStage(ctx), ReachabilityStage(ctx), OcclusionStage(ctx), RolloutStage(ctx),
            CoverageCellStage(ctx), CaptureStage(ctx)]


@dataclass
class GenerationResult:
    """Accepted manifests (canonical order), every rejection, and the per-cell counts."""

    manifests: list[ScenarioManifest]
    rejections: list[RejectionRow]
    coverage: CoverageReport
    stats: dict[str, Any] = field(default_factory=dict)


def resolve_template(template: str | Path, directory: str | Path = paths.TEMPLATES_DIR) -> WorldTemplate:
    """A template by id (``data/templates/<id>.yaml``) or by path; unknown ids raise :class:`ScenarioError`."""
    candidate = Path(template)
    if candidate.suffix in (".yaml", ".yml", ".json") and candidate.is_file():
        return load_template(candidate)
    files = list_template_files(directory)
    if str(template) not in files:
        raise ScenarioError("template", "", f"unknown template {str(template)!r} (known: {', '.join(files)})")
    return load_template(files[str(template)])


def make_context(template: WorldTemplate, intent: str, *, catalog: Catalog | None = None,
                 coverage: CoverageSpec | None = None, splits: SplitConfig | None = None) -> ProgramContext:
    prog = get_program(intent)
    spec = coverage if coverage is not None else coverage_of(intent)
    ctx = ProgramContext.build(template, catalog if catalog is not None else ensure_catalog(), splits or load_splits(),
                               spec)
    prog.require_affordances(ctx)
    prog.check_template(ctx)
    return ctx


def prepare(template: WorldTemplate, intent: str, cell: str | None = None, *, catalog: Catalog | None = None,
            coverage: CoverageSpec | None = None, splits: SplitConfig | None = None) -> tuple[ProgramContext, list[Cell]]:
    """Check a request before any work: the intent exists, the template has what it needs, the cell spec selects
    declared cells. Returns the context and the targeted cells; raises the one-line user errors."""
    ctx = make_context(template, intent, catalog=catalog, coverage=coverage, splits=splits)
    spec = ctx.coverage
    cells = list(spec.cells) if cell is None else spec.select(cell)
    if not cells:
        raise CoverageError(spec.source, "cell", f"cell spec {cell!r} matches no declared cell")
    return ctx, cells


def finalize(proposal: Proposal, stream_root: str) -> ScenarioManifest:
    """The accepted manifest: the draft plus the ladder's measurements (each with its stage as cause), canonical order.

    The schema stage already validated the draft; only the two blocks that
    change here (``realized``, ``coverage_cell``) are validated again, with
    the manifest's own field types.
    """
    realized = dict(proposal.draft["realized"])
    order = list(realized[CAUSAL_ORDER_KEY])
    extra = {k: v for k, v in sorted(proposal.measured.items()) if _is_param_value(v)}
    extra["stream_root"] = stream_root
    extra["intent_id"] = proposal.intent
    extra["repair_attempts"] = proposal.attempt
    origin = provenance(proposal.intent)
    if origin is not None:
        # A user program's file is part of the sample's provenance (SPEC §19); built-ins' manifests are unchanged.
        extra["program_file"] = Path(origin.file).name
        extra["program_sha256"] = origin.sha256
    for key, value in extra.items():
        stage = proposal.measured_by.get(key)
        realized[key] = value
        realized[CAUSE_PREFIX + key] = (f"measured:{stage} |  | measured by the {stage} stage" if stage else
                                        "generator |  | recorded by the generator")
        order.append(key)
    realized[CAUSAL_ORDER_KEY] = order
    assert proposal.cell is not None
    cell = proposal.cell.manifest_dict()
    base = proposal.manifest if proposal.manifest is not None else parse_manifest(proposal.draft, proposal.sample_id)
    try:
        update = {"realized": _REALIZED.validate_python(realized), "coverage_cell": CoverageCell.model_validate(cell)}
    except ValidationError:
        # Report it the way the manifest would, with the field path.
        return canonicalize(parse_manifest({**proposal.draft, "realized": realized, "coverage_cell": cell},
                                           proposal.sample_id))
    return canonicalize(base.model_copy(update=update))


# The type of ``ScenarioManifest.realized``.
_REALIZED = TypeAdapter(dict[ParamName, ParamValue], config=ConfigDict(strict=True, allow_inf_nan=False))


def _is_param_value(value: Any) -> bool:
    """What ``realized`` can hold: a scalar or a flat list of scalars (None and nested data stay out)."""
    scalar = (bool, int, float, str)
    return isinstance(value, scalar) or (isinstance(value, list) and all(isinstance(v, scalar) for v in value))


class RunState:
    """Bookkeeping of one generation run (conditional, baseline or replay): the ladder, counts, outputs."""

    def __init__(self, ctx: ProgramContext, ladder: Ladder, report: CoverageReport, root: str, max_repairs: int) -> None:
        self.ctx, self.ladder, self.report, self.root, self.max_repairs = ctx, ladder, report, root, max_repairs
        self.manifests: list[ScenarioManifest] = []
        self.rejections: list[RejectionRow] = []

    def judge(self, prog: IntentProgram, proposal: Proposal, streams: StreamSet, stream_root: str,
              repair: bool = True) -> tuple[bool, Fail | None]:
        """Evaluate, repairing locally; returns (accepted, the last failure).

        Counts go to the cell the proposal holds after evaluation (a baseline
        proposal gets its cell from the coverage stage, or stays unassigned).
        """
        while True:
            result = self.ladder.evaluate(proposal)
            if result.failure is None and proposal.cell is not None:
                # Counted, and recorded, in the bucket of the traffic it realized (SPEC §20).
                proposal.cell = self.ctx.coverage.realized_cell(proposal.cell, proposal.draft["realized"])
            stats = self.report.stats(proposal.cell_id)
            if result.failure is None:
                stats.record(True)
                self.manifests.append(finalize(proposal, stream_root))
                return True, None
            failure = result.failure
            stats.record(False, failure.stage, failure.reason)
            self.rejections.append(RejectionRow.of(proposal, failure))
            if not repair or proposal.attempt >= self.max_repairs:
                return False, failure
            repaired = prog.repair(self.ctx, proposal, failure, streams)
            if repaired is None:
                return False, failure
            proposal = repaired


def generate(template_id: str | Path, intent: str, n: int, *, cell: str | None = None, root: str = DEFAULT_ROOT,
             catalog: Catalog | None = None, template: WorldTemplate | None = None,
             stages: Sequence[Stage] | None = None, extra_stages: Iterable[Stage] = (),
             coverage: CoverageSpec | None = None, splits: SplitConfig | None = None, max_repairs: int = MAX_REPAIRS,
             max_proposals_per_cell: int | None = None,
             progress: Callable[[int, int], None] | None = None, traffic: TrafficSpec | None = None) -> GenerationResult:
    """Generate up to ``n`` accepted manifests of ``intent`` on a template (see the module docstring).

    Args:
        template_id: template id or YAML path (ignored when ``template`` is given, except as a label).
        cell: a cell spec (:meth:`CoverageSpec.select`) restricting the targeted cells.
        root: root id of the run's random streams.
        progress: called as ``progress(accepted, proposals)`` after every sample.
        traffic: background traffic to add to every proposal (:class:`~simready.scenario.traffic.TrafficSpawnStage`);
            None or an empty spec adds none, and the manifests are those of a run without it.

    Raises:
        ScenarioError: unknown intent or template, or a template lacking what the intent needs.
        CoverageError: unknown cell, empty range, bad coverage file.
    """
    if n < 0:
        raise ScenarioError("n", "", f"n must be >= 0, got {n}")
    prog = get_program(intent)
    tpl = template if template is not None else resolve_template(template_id)
    if traffic is not None and not traffic.empty:
        # Each density the suite asks for is a coverage dimension (SPEC §20): its bucket joins every cell.
        coverage = (coverage if coverage is not None else coverage_of(intent)).with_traffic(densities_of(traffic))
    ctx, cells = prepare(tpl, intent, cell, catalog=catalog, coverage=coverage, splits=splits)
    spec = ctx.coverage
    budget = max_proposals_per_cell or spec.max_proposals_per_cell
    report = CoverageReport.start(spec, tpl.id, "conditional", cells)
    chosen = list(stages if stages is not None else default_stages(ctx)) + list(extra_stages)
    if traffic is not None and not traffic.empty:
        # A density beyond what the map can hold is one line before anything is drawn or written.
        check_capacity(ctx, traffic)
        chosen.append(TrafficSpawnStage(ctx, traffic, lambda sample_id: f"{root}/{sample_id}"))
    run = RunState(ctx, Ladder(chosen), report, root, max_repairs)
    prefix = sample_id_prefix(tpl.id, prog.abbrev)
    order = {c.id: k for k, c in enumerate(cells)}
    misses = {c.id: 0 for c in cells}
    strikes = {c.id: 0 for c in cells}
    open_cells: list[Cell] = list(cells)
    index = 0
    while len(run.manifests) < n and open_cells:
        target = min(open_cells, key=lambda c: (report.cells[c.id].accepted / c.target, report.cells[c.id].proposals,
                                                order[c.id]))
        sample_id = f"{prefix}-{index:06d}"
        stream_root = f"{root}/{sample_id}"
        streams = StreamSet(stream_root)
        before = report.cells[target.id].rejected
        accepted, failure = run.judge(prog, prog.propose(ctx, target, sample_id, index, streams), streams, stream_root)
        misses[target.id] = 0 if accepted else misses[target.id] + report.cells[target.id].rejected - before
        strikes[target.id] = strikes[target.id] + 1 if failure is not None and failure.structural else 0
        if misses[target.id] >= budget or strikes[target.id] >= STRUCTURAL_STRIKES:
            open_cells.remove(target)
        index += 1
        if progress is not None:
            progress(len(run.manifests), report.proposals)
    close_cells(report, open_cells)
    return GenerationResult(run.manifests, run.rejections, report, {"samples": index})


def replay(manifest: ScenarioManifest, *, template: WorldTemplate | None = None, catalog: Catalog | None = None,
           stages: Sequence[Stage] | None = None, extra_stages: Iterable[Stage] = (),
           coverage: CoverageSpec | None = None, splits: SplitConfig | None = None) -> tuple[bool, str]:
    """Re-run one accepted sample from its recorded stream root: ``(True, "")`` when the program and the ladder
    accept it again and produce the same bytes; else ``(False, why)``.

    Why this is the check "no accepted manifest violates a ladder stage": the
    ladder judges proposals, not files, and a sample's proposal is a pure
    function of (template, intent, cell, index, stream root). A template or
    catalog change, a new stage, or an edited manifest all show up here.
    """
    r = manifest.realized
    intent, stream_root = r.get("intent_id"), r.get("stream_root")
    if not isinstance(intent, str) or not isinstance(stream_root, str):
        return False, "the manifest records no intent_id / stream_root to replay from"
    prog = get_program(intent)
    tpl = template if template is not None else resolve_template(manifest.template_id)
    recorded = {k: float(v) for k in TRAFFIC_FIELDS if isinstance(v := r.get(f"traffic.{k}"), (int, float))}
    if any(v > 0 for v in recorded.values()):
        coverage = (coverage if coverage is not None else coverage_of(intent)).with_traffic(recorded)
    ctx = make_context(tpl, intent, catalog=catalog, coverage=coverage, splits=splits)
    chosen = list(stages if stages is not None else default_stages(ctx)) + list(extra_stages)
    densities = {k: float(v) for k in TrafficSpec.model_fields
                 if isinstance(v := r.get(f"traffic.{k}"), (int, float))}
    if densities and not TrafficSpec(**densities).empty:
        # The sample's background traffic, from the densities it records and its own stream root.
        chosen.append(TrafficSpawnStage(ctx, TrafficSpec(**densities), lambda _: stream_root))
    ladder = Ladder(chosen)
    run = RunState(ctx, ladder, CoverageReport.start(ctx.coverage, tpl.id, "replay", []), "", MAX_REPAIRS)
    index = int(manifest.sample_id.rsplit("-", 1)[1])
    streams = StreamSet(stream_root)
    baseline = "-base-" in manifest.sample_id
    if baseline:
        proposal = prog.baseline(ctx, manifest.sample_id, index, streams)
    else:
        proposal = prog.propose(ctx, ctx.coverage.targeted_cell(manifest.coverage_cell.id), manifest.sample_id, index,
                                streams)
    accepted, failure = run.judge(prog, proposal, streams, stream_root, repair=not baseline)
    if not accepted:
        assert failure is not None
        return False, f"rejected on replay at {failure.stage}: {failure.reason}: {failure.detail}"
    if manifest_bytes(run.manifests[0]) != manifest_bytes(canonicalize(manifest)):
        return False, "the replayed manifest differs from the file (template, catalog or code changed, or edited)"
    return True, ""


def close_cells(report: CoverageReport, still_open: Sequence[Cell]) -> None:
    """Set each cell's final status: filled, underfilled, infeasible (closed with none), open, untargeted."""
    open_ids = {c.id for c in still_open}
    for stats in report.cells.values():
        if stats.cell == UNASSIGNED:
            stats.status = "unassigned"
        elif stats.accepted >= stats.target:
            stats.status = "filled"
        elif stats.proposals == 0:
            stats.status = "untargeted"
        elif stats.cell in open_ids:
            stats.status = "open"
        else:
            stats.status = "infeasible" if stats.accepted == 0 else "underfilled"
