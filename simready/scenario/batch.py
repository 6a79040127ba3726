"""One sample batch of one template: the manifests, rejections and cell counts it owns.

Why batches are slices of one sequence: the generator steers toward
under-filled cells, so sample *i* depends on what samples *< i* filled. Batch
``b<k>`` of a template is defined as accepted samples ``[k·n, (k+1)·n)`` of the
single deterministic sequence the generator produces for (template, intent,
root) — computed by generating ``(k+1)·n`` and keeping the last ``n``. So a
batch's content depends only on its key, coverage steering spans batches, and
adding batch ``k+1`` never changes batch ``k``. Generation costs milliseconds a
sample, so regenerating the prefix is cheap.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simready.common.atomic import write_bytes_atomic, write_json_atomic
from simready.catalog.catalog import Catalog
from simready.common.hashing import content_hash
from simready.common.parallel import map_samples
from simready.artifacts.layout import BatchDir
from simready.scenario.generator import DEFAULT_ROOT, generate
from simready.scenario.ladder import Proposal, RejectionRow, Stage
from simready.scenario.manifest import ScenarioManifest, canonicalize, manifest_bytes, manifest_hash
from simready.scenario.programs import program as get_program
from simready.scenario.suite import Suite, SuiteError, batch_index
from simready.world.template import WorldTemplate


@dataclass
class IntentSlice:
    intent: str
    manifests: list[ScenarioManifest]
    rejections: list[RejectionRow]
    requested: int
    #: Background traffic of this intent (SPEC §20): density, vehicles, reserves, the ladder's traffic CPU time.
    traffic: dict[str, Any] | None = None


#: The ladder stage whose CPU time is background traffic's cost (the street rolled out once per proposal).
TRAFFIC_ROLLOUT_STAGE = "traffic_rollout"


class ClockedStage:
    """A ladder stage whose checks' CPU time and count add up (what the run summary prints as traffic's cost)."""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self.name, self.cost_rank, self.level = stage.name, stage.cost_rank, stage.level
        self.cpu_s = 0.0
        self.calls = 0

    def check(self, proposal: Proposal) -> Any:
        t0 = time.process_time()
        try:
            return self.stage.check(proposal)
        finally:
            self.cpu_s += time.process_time() - t0
            self.calls += 1


@dataclass
class BatchResult:
    """What one (template, batch) partition holds.

    Attributes:
        slices: per intent, the accepted manifests and the rejections of the
            proposals made between the previous batch's last acceptance and this
            batch's last acceptance.
        cells: per (intent, cell) counts: proposals = accepted + rejected.
    """

    template_id: str
    batch: str
    slices: list[IntentSlice]
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def manifests(self) -> list[ScenarioManifest]:
        return [m for s in self.slices for m in s.manifests]

    @property
    def rejections(self) -> list[RejectionRow]:
        return [r for s in self.slices for r in s.rejections]

    @property
    def data_version(self) -> str:
        return content_hash({m.sample_id: manifest_hash(m) for m in self.manifests})

    def summary(self) -> dict[str, Any]:
        accepted = len(self.manifests)
        rejected = len(self.rejections)
        return {
            "template_id": self.template_id,
            "batch": self.batch,
            "accepted": accepted,
            "rejected": rejected,
            "proposals": accepted + rejected,
            "requested": sum(s.requested for s in self.slices),
            "by_intent": {s.intent: {"accepted": len(s.manifests), "requested": s.requested,
                                     "rejected": len(s.rejections)} for s in self.slices},
            "samples": {m.sample_id: manifest_hash(m) for m in self.manifests},
            "data_version": self.data_version,
            **({"traffic": {s.intent: s.traffic for s in self.slices if s.traffic}}
               if any(s.traffic for s in self.slices) else {}),
        }


def _sample_index(sample_id: str) -> int:
    return int(sample_id.rsplit("-", 1)[1])


def _realized_count(manifest: ScenarioManifest, key: str) -> int:
    """A count the traffic stage realized (0 when the sample has none)."""
    value = manifest.realized.get(key, 0)
    if not isinstance(value, (int, float)):
        raise TypeError(f"{manifest.sample_id}: realized {key} is not a number: {value!r}")
    return int(value)


def _slice(manifests: list[ScenarioManifest], rejections: list[RejectionRow], k: int,
           n: int) -> tuple[list[ScenarioManifest], list[RejectionRow]]:
    ordered = sorted(manifests, key=lambda m: _sample_index(m.sample_id))
    mine = ordered[k * n:(k + 1) * n]
    if not mine:
        return [], []
    lo = _sample_index(ordered[k * n - 1].sample_id) + 1 if k > 0 else 0
    hi = _sample_index(mine[-1].sample_id)
    return mine, [r for r in rejections if lo <= r.proposal_index <= hi]


def cell_counts(slices: list[IntentSlice]) -> dict[str, dict[str, Any]]:
    """Per ``intent/cell``: proposals, accepted, rejected, rejected by stage and by reason."""
    cells: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"proposals": 0, "accepted": 0, "rejected": 0, "by_stage": Counter(), "by_reason": Counter()}
    )
    for s in slices:
        for m in s.manifests:
            c = cells[f"{s.intent}/{m.coverage_cell.id}"]
            c["accepted"] += 1
            c["proposals"] += 1
        for r in s.rejections:
            c = cells[f"{s.intent}/{r.cell}"]
            c["rejected"] += 1
            c["proposals"] += 1
            c["by_stage"][r.stage] += 1
            c["by_reason"][r.reason] += 1
    return {
        k: {**v, "by_stage": dict(sorted(v["by_stage"].items())), "by_reason": dict(sorted(v["by_reason"].items()))}
        for k, v in sorted(cells.items())
    }


def build_batch(
    suite: Suite, template: WorldTemplate, batch: str, catalog: Catalog, root: str = DEFAULT_ROOT,
    extra_stages: Sequence[Stage] = (),
) -> BatchResult:
    """Generate the batch's manifests for every intent the suite names for this template, with the background traffic
    it asks for; ``extra_stages`` join the ladder (the pipeline's physics settle and, with traffic, its rollout check
    :class:`simready.sim.ladder.traffic.TrafficRolloutStage`)."""
    k = batch_index(batch)
    for intent in suite.intents_for(template.id):
        line = get_program(intent).feasibility(template)
        if line is not None:
            raise SuiteError(template.source, f"templates.{template.id}.{intent}", f"{intent} cannot run on "
                             f"{template.id}: {line}")
    def one_intent(item: tuple[str, int]) -> IntentSlice:
        intent, n = item
        traffic = suite.traffic_for(template.id, intent)
        stages = [ClockedStage(s) if s.name == TRAFFIC_ROLLOUT_STAGE and traffic else s for s in extra_stages]
        t0 = time.process_time()
        result = generate(template.id, intent, (k + 1) * n, root=root, catalog=catalog, template=template,
                          extra_stages=stages, traffic=traffic)
        cpu_s = time.process_time() - t0
        mine, rejections = _slice(result.manifests, result.rejections, k, n)
        cost = None
        if traffic:
            clock = next((s for s in stages if isinstance(s, ClockedStage)), None)
            cost = {"vehicles_per_lane_km": traffic.vehicles_per_lane_km,
                    "samples": len(mine),
                    "vehicles": sum(_realized_count(m, "traffic.vehicles") for m in mine),
                    "reserves": sum(_realized_count(m, "traffic.reserves") for m in mine),
                    "generate_cpu_s": round(cpu_s, 3),
                    "rollout_cpu_s": round(clock.cpu_s, 3) if clock else 0.0,
                    "rollouts": clock.calls if clock else 0}
        return IntentSlice(intent, mine, rejections, n, cost)

    # The intents side by side, one per core: each its own generator sequence and streams (the same manifests);
    # the CPU seconds are each intent's worker's own.
    slices = map_samples(one_intent, list(suite.intents_for(template.id).items()))
    out = BatchResult(template.id, batch, slices)
    out.cells = cell_counts(slices)
    return out


def rejection_lines(rows: list[RejectionRow]) -> str:
    """The rejections as JSON lines (``rejections.jsonl``), one row a line, keys sorted."""
    return "".join(json.dumps(r.as_dict(), sort_keys=True) + "\n" for r in rows)


def write_batch(result: BatchResult, out_dir: Path) -> Path:
    """Write <sample>/manifest.json, rejections.jsonl, cells.json and, last, batch.json.

    Inside the batch folder (:class:`simready.artifacts.layout.BatchDir`): one folder per
    sample (later stages add their files beside the manifest), plus the
    batch's rejections, cell counts and summary. Each file is replaced
    atomically and ``batch.json`` (the batch's record) goes last, so a crash
    leaves either the old batch or the new one. The batch folder itself is not
    replaced: later stages keep their files in the sample folders. Sample
    folders no longer in the batch are removed.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    batch = BatchDir(out_dir)
    keep = {m.sample_id for m in result.manifests}
    for stale in batch.samples():
        if stale.sample_id not in keep:
            shutil.rmtree(stale.root)
    for m in result.manifests:
        write_bytes_atomic(batch.sample(m.sample_id).manifest, manifest_bytes(canonicalize(m)))
    write_bytes_atomic(batch.rejections, rejection_lines(result.rejections).encode("utf-8"))
    write_json_atomic(batch.cells, result.cells)
    write_json_atomic(batch.record, result.summary())
    return out_dir


def read_batch_manifest_paths(batch_dir: Path) -> list[Path]:
    return [s.manifest for s in BatchDir(batch_dir).samples()]


def read_batch_requested(batch_dir: Path) -> int:
    """How many samples the suite asked of this batch (0 for a template the suite does not sample)."""
    return int(json.loads(BatchDir(batch_dir).record.read_text())["requested"])


def read_rejections(batch_dir: Path) -> list[dict[str, Any]]:
    path = BatchDir(batch_dir).rejections
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
