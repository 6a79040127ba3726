"""The independent-sampling baseline: the same variables, drawn from their full ranges, through the same ladder.

Each program's :meth:`~simready.scenario.program_base.IntentProgram.baseline`
draws every variable on its own — the occluding van anywhere on the map
facing anywhere, the pedestrian anywhere, the start delay uniform over the
clip, the environment's nine values each over its range — with no
relations, no timing solve and no target cell. The proposals then face the
*same* ladder as the conditional program (without local repair, which is
part of the conditional program); the coverage stage assigns each survivor
the declared cell it happens to land in. :func:`compare` puts the two
yields side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from simready.catalog.catalog import Catalog
from simready.scenario.coverage import CoverageSpec
from simready.scenario.coverage_counts import CoverageReport
from simready.scenario.generator import (
    DEFAULT_ROOT,
    GenerationResult,
    close_cells,
    RunState,
    default_stages,
    generate,
    make_context,
    resolve_template,
)
from simready.scenario.ladder import Ladder, Stage
from simready.scenario.programs import program as get_program
from simready.scenario.program_base import sample_id_prefix
from simready.scenario.splits import SplitConfig
from simready.scenario.streams import StreamSet
from simready.world.template import WorldTemplate


def run_baseline(template_id: str | Path, intent: str, n_proposals: int, *, root: str = DEFAULT_ROOT,
                 catalog: Catalog | None = None, template: WorldTemplate | None = None,
                 stages: Sequence[Stage] | None = None, extra_stages: Iterable[Stage] = (),
                 coverage: CoverageSpec | None = None, splits: SplitConfig | None = None,
                 progress: Callable[[int, int], None] | None = None) -> GenerationResult:
    """``n_proposals`` independent proposals (sample ids ``<prefix>-base-<index>``) through the ladder."""
    prog = get_program(intent)
    tpl = template if template is not None else resolve_template(template_id)
    ctx = make_context(tpl, intent, catalog=catalog, coverage=coverage, splits=splits)
    report = CoverageReport.start(ctx.coverage, tpl.id, "baseline")
    run = RunState(ctx, Ladder(list(stages if stages is not None else default_stages(ctx)) + list(extra_stages)), report,
               root, 0)
    prefix = f"{sample_id_prefix(tpl.id, prog.abbrev)}-base"
    for index in range(n_proposals):
        sample_id = f"{prefix}-{index:06d}"
        stream_root = f"{root}/{sample_id}"
        streams = StreamSet(stream_root)
        run.judge(prog, prog.baseline(ctx, sample_id, index, streams), streams, stream_root, repair=False)
        if progress is not None:
            progress(len(run.manifests), report.proposals)
    close_cells(report, ctx.coverage.cells)  # the baseline targets no cell, so none is ever closed as infeasible
    return GenerationResult(run.manifests, run.rejections, report, {"samples": n_proposals})


@dataclass(frozen=True)
class YieldComparison:
    """Conditional vs baseline yield of one intent on one template."""

    intent: str
    template_id: str
    conditional: CoverageReport
    baseline: CoverageReport

    @property
    def conditional_yield(self) -> float:
        c = self.conditional
        return c.accepted / c.proposals if c.proposals else 0.0

    @property
    def baseline_yield(self) -> float:
        b = self.baseline
        return b.accepted / b.proposals if b.proposals else 0.0


def compare(intent: str, n_accepted: int, n_baseline: int, *, template_id: str | None = None,
            root: str = DEFAULT_ROOT, catalog: Catalog | None = None) -> YieldComparison:
    """Run the conditional program to ``n_accepted`` and the baseline for ``n_baseline`` proposals."""
    prog = get_program(intent)
    tpl = resolve_template(template_id or prog.default_template)
    cond = generate(tpl.id, intent, n_accepted, root=root, catalog=catalog, template=tpl)
    base = run_baseline(tpl.id, intent, n_baseline, root=root, catalog=catalog, template=tpl)
    return YieldComparison(intent, tpl.id, cond.coverage, base.coverage)
