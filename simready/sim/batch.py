"""The simulation stage over one sample folder: trace, checkpoint, matched branches.

Files written beside ``manifest.json`` in ``<batch>/<sample>/`` (paths from
:class:`simready.artifacts.layout.SampleDir`)::

    trace.parquet                 the uninterrupted rollout (SPEC §7)
    verdict.json                  evaluate_trace result and rollout issues
    rollout.png                   top-down picture (with both branches once they exist)
    checkpoint/<sha>.ckpt         the decision-time checkpoint, content-addressed (SPEC §9)
    branches/<label>/trace.parquet  one trace per matched branch
    branches/outcomes.json        the branch-outcome table, parent checkpoint, decision time

Every file is written atomically; the stage's summary is the last write.

Integrity: the trace's sha256 is recorded in ``verdict.json``, each branch
trace's in ``outcomes.json``, the manifest's (:func:`manifest_hash`) in the
batch's ``batch.json``, and a checkpoint's is its file name. The integrity
checks (:func:`sample_intact`, :func:`restore_reproduces`,
:func:`branches_share_history`) compare them before trusting a byte, so a
changed value in a finished file fails the check with the file and both hashes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simready.common.atomic import write_json_atomic
from simready.common.errors import IntegrityError, SimreadyError
from simready.common.hashing import content_hash, file_sha256
from simready.artifacts.layout import BatchDir, SampleDir
from simready.artifacts.records import Outcomes, Verdict
from simready.scenario.manifest import ScenarioManifest, load_manifest, manifest_hash
from simready.sim.core import constants as C
from simready.sim.branch import run_branches, shared_prefix
from simready.sim.storage.checkpoint import DYNAMIC_REPLAY_TOLERANCE as TOL
from simready.sim.storage.checkpoint import Checkpoint, CheckpointError
from simready.sim.engine import Engine
from simready.sim.evaluation.evaluate import evaluate_trace
from simready.sim.evaluation.plot import plot_rollout
from simready.sim.run import finish, run_simulation
from simready.scenario.traffic import BACKGROUND_TAG
from simready.sim.evaluation.plot import BACKGROUND_ROLE
from simready.sim.core.scene import build_scene
from simready.sim.storage.trace import Trace, read_trace, write_trace
from simready.world.template import WorldTemplate

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

def sample_dirs(batch_dir: Path) -> list[Path]:
    """The batch's sample folders (those holding a manifest), sorted by sample id."""
    return [s.root for s in BatchDir(batch_dir).samples()]


def warm_world(template: WorldTemplate, catalog: Catalog) -> None:
    """Compute the template's per-process world caches here (the ground-height raster, the dynamic world's plan of
    its statics), so that the processes forked after it (a stage's per-sample workers, the main job's runs) inherit
    them instead of each building them again: on an imported street (thousands of statics) about 0.5 CPU-s a
    process. The same objects a scene would build: the bytes of every rollout are unchanged."""
    from simready.sim.backends.dynamic.plan import TemplateWorld, world_plan
    from simready.sim.core.scene.ground import cached_ground_model
    from simready.world.template import template_hash

    t_hash = template_hash(template)
    cached_ground_model(template, t_hash, catalog)
    world_plan(TemplateWorld(template, t_hash, template.bounds, catalog))


def _roles_and_dims(manifest: ScenarioManifest) -> tuple[dict[str, str], dict[str, tuple[float, float]]]:
    # Background traffic is drawn as one layer of the picture (simready.sim.evaluation.plot), not actor by actor.
    roles = {a.id: BACKGROUND_ROLE if BACKGROUND_TAG in a.tags else a.role for a in manifest.actors}
    dims = {a.id: (a.dims.l, a.dims.w) for a in manifest.actors}
    return roles, dims


class SampleRollout(NamedTuple):
    """What :func:`rollout_sample` wrote, kept in memory: the summary row (``verdict.json``), the manifest it read
    and the trace (the bytes of ``trace.parquet``)."""

    row: dict[str, Any]
    manifest: ScenarioManifest
    trace: Trace


def simulate_sample(sample_dir: Path, template: WorldTemplate, catalog: Catalog, backend: str = C.DEFAULT_BACKEND, *,
                    plot: bool = True) -> dict[str, Any]:
    """Roll out the sample's manifest; write trace, verdict and (``plot``) the top-down picture; return a summary
    row. The picture is half the cost of a rollout; the realism reference pool's draws go without it."""
    return rollout_sample(sample_dir, template, catalog, backend, plot=plot).row


def rollout_sample(sample_dir: Path, template: WorldTemplate, catalog: Catalog, backend: str = C.DEFAULT_BACKEND, *,
                   plot: bool = True) -> SampleRollout:
    """:func:`simulate_sample`, returning the manifest and trace too, for a caller that reads them next (the
    realism reference pool's features) rather than reading the files back."""
    sample = SampleDir(sample_dir)
    manifest = load_manifest(sample.manifest)
    result = run_simulation(manifest, template, backend=backend, catalog=catalog)
    trace_path = write_trace(result.trace, sample.trace)
    verdict = evaluate_trace(result.trace)
    roles, dims = _roles_and_dims(manifest)
    if plot:
        plot_rollout(template, result.trace, sample.rollout_plot, roles=roles, dims=dims, title=manifest.sample_id)
    metrics = result.trace.metrics
    row = {
        "sample": manifest.sample_id,
        "intent": manifest.intent,
        "verdict": verdict.verdict,
        "findings": [f if isinstance(f, dict) else str(f) for f in verdict.findings],
        "issues": result.issues,
        "min_ttc_s": (metrics.get("min_ttc") or {}).get("value"),
        "collisions": len(metrics.get("collisions") or []),
        "trace_sha256": file_sha256(str(trace_path)),
    }
    write_json_atomic(sample.verdict, row)
    return SampleRollout(row, manifest, result.trace)


#: When the scenario has no reveal (nothing is hidden), the decision is taken at
#: the onset of the causal event the intent recorded: the lead's brake onset,
#: the cut-in's lane change start, or 1 s before the turning conflict enters the
#: ego's path. Keys in order of preference, with the lead subtracted.
DECISION_ONSETS = (("t_brake_s", 0.0), ("t_lane_change_s", 0.0), ("t_enter_path_s", 1.0))


def decision_at(manifest: ScenarioManifest) -> tuple[float | None, str | None]:
    """``(t_s, source)`` for manifests without ``t_reveal_s``; ``(None, None)`` lets the branch module use the reveal."""
    if isinstance(manifest.realized.get("t_reveal_s"), (int, float)):
        return None, None
    declared = manifest.realized.get("t_decision_s")
    if isinstance(declared, (int, float)) and not isinstance(declared, bool):
        # A program's declared decision (simready.scenario.api.decide_at) or an imported scenario's.
        return max(float(declared), manifest.dt), "realized.t_decision_s"
    for key, lead_s in DECISION_ONSETS:
        value = manifest.realized.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return max(float(value) - lead_s, manifest.dt), f"realized.{key}" + (f" - {lead_s:g} s" if lead_s else "")
    return None, None


def branch_sample(sample_dir: Path, template: WorldTemplate, catalog: Catalog, backend: str = C.DEFAULT_BACKEND) -> dict[str, Any]:
    """Checkpoint at the decision time, roll out the matched branches, write them and the outcome table.

    Returns ``branches/outcomes.json`` as written (:class:`simready.artifacts.records.Outcomes`, dumped).
    """
    sample = SampleDir(sample_dir)
    manifest = load_manifest(sample.manifest)
    at_s, at_source = decision_at(manifest)
    branch_set = run_branches(manifest, template, at_s=at_s, backend=backend, catalog=catalog)
    ckpt = branch_set.checkpoint
    ckpt_path = ckpt.write(sample.checkpoint(ckpt.id))
    traces = {}
    for branch in branch_set.branches:
        path = write_trace(branch.trace, sample.branch(branch.label).trace)
        traces[branch.label] = file_sha256(str(path))
    outcomes = Outcomes(
        sample=manifest.sample_id,
        checkpoint=ckpt.id,
        checkpoint_file=str(ckpt_path.relative_to(sample.root)),
        checkpoint_tick=ckpt.tick,
        decision_t_s=branch_set.decision_t_s,
        decision_source=at_source or branch_set.decision_source,
        split=manifest.split,
        branches=branch_set.table,
        trace_sha256=traces,
    )
    if sample.trace.exists():
        roles, dims = _roles_and_dims(manifest)
        plot_rollout(template, read_trace(sample.trace), sample.rollout_plot, roles=roles, dims=dims,
                     branches={b.label: b.trace for b in branch_set.branches}, title=manifest.sample_id)
    summary = outcomes.dump()
    write_json_atomic(sample.outcomes, summary)
    return summary


def verify_sha256(path: Path, expected: str, recorded_in: Path) -> None:
    """``path`` must hash to ``expected``, the sha256 ``recorded_in`` holds for it."""
    actual = file_sha256(str(path))
    if actual != expected:
        raise IntegrityError(path, "sha256", f"expected {expected} (recorded in {recorded_in}), got {actual}")


def verify_trace(sample: SampleDir) -> None:
    """The base trace is the one ``verdict.json`` judged."""
    verify_sha256(sample.trace, Verdict.read(sample.verdict).trace_sha256, sample.verdict)


def verify_branch_traces(sample: SampleDir, outcomes: Outcomes) -> None:
    """Every branch trace is the one ``outcomes.json`` recorded."""
    for label, sha in sorted(outcomes.trace_sha256.items()):
        verify_sha256(sample.branch(label).trace, sha, sample.outcomes)


def verify_manifest(sample: SampleDir) -> None:
    """The manifest is the one its batch's ``batch.json`` recorded (checked where the batch record exists)."""
    record = BatchDir(sample.root.parent).record
    if not record.is_file():
        return
    manifest = load_manifest(sample.manifest)
    expected = json.loads(record.read_text(encoding="utf-8")).get("samples", {}).get(manifest.sample_id)
    actual = manifest_hash(manifest)
    if expected != actual:
        raise IntegrityError(sample.manifest, "sha256", f"expected {expected} (recorded in {record}), got {actual}")


def sample_intact(sample_dir: Path) -> tuple[bool, str]:
    """The sample's manifest and trace are the ones recorded for them."""
    sample = SampleDir(sample_dir)
    try:
        verify_manifest(sample)
        verify_trace(sample)
    except SimreadyError as exc:
        return False, exc.one_line()
    return True, "manifest and trace match their recorded sha256"


def restore_reproduces(sample_dir: Path, template: WorldTemplate, catalog: Catalog, backend: str = C.DEFAULT_BACKEND) -> tuple[bool, str]:
    """Restore the checkpoint in a fresh engine, continue without intervening, compare with the uninterrupted trace.

    kinematic-v1 must match bit for bit. dynamic-v1 must match ids, ticks and
    event order exactly and poses/velocities within the declared
    ``DYNAMIC_REPLAY_TOLERANCE`` (PyBullet keeps solver warm-start state a
    snapshot cannot carry).
    """
    sample = SampleDir(sample_dir)
    try:
        verify_trace(sample)
        ckpt = Checkpoint.read(sample.checkpoint(Outcomes.read(sample.outcomes).checkpoint))
    except (IntegrityError, CheckpointError) as exc:
        return False, exc.one_line()
    manifest = load_manifest(sample.manifest)
    scene = build_scene(manifest, template, backend=backend, catalog=catalog)
    engine = Engine.restore(scene, ckpt)
    try:
        engine.run()
        resumed = finish(engine)
    finally:
        engine.close()
    base = read_trace(sample.trace)
    if backend == "kinematic-v1":
        same = shared_prefix(base, resumed, int(max(base.column("tick"))) + 1)
        return same, "bit-identical continuation" if same else "restored continuation differs (bit-exact backend)"
    return within_replay_tolerance(base, resumed)


def within_replay_tolerance(base: Trace, resumed: Trace) -> tuple[bool, str]:
    for name in ("tick", "actor_id", "present"):
        if not np.array_equal(base.column(name), resumed.column(name)):
            return False, f"column {name} differs"
    def order(trace: Trace) -> list[tuple[object, object]]:
        # The restored engine logs the checkpoint it came from; that marker is not a world event.
        return [(e.get("type"), e.get("t")) for e in trace.events if e.get("type") != "checkpoint"]

    if order(base) != order(resumed):
        return False, "event order differs"
    groups = {"position_m": ("x", "y", "z"), "velocity_mps": ("vx", "vy", "vz"), "quaternion": ("qx", "qy", "qz", "qw")}
    worst = {}
    for key, cols in groups.items():
        worst[key] = max(float(np.nanmax(np.abs(base.column(c) - resumed.column(c)))) for c in cols)
        if worst[key] > TOL[key]:
            return False, f"{key} differs by {worst[key]:.3g} > tolerance {TOL[key]}"
    return True, "within replay tolerance: " + ", ".join(f"{k} {v:.2g}" for k, v in worst.items())


def branches_share_history(sample_dir: Path) -> tuple[bool, str]:
    """Every branch has the parent's pre-decision rows bit for bit (and so do siblings), all traces as recorded."""
    sample = SampleDir(sample_dir)
    outcomes = Outcomes.read(sample.outcomes)
    try:
        verify_trace(sample)
        verify_branch_traces(sample, outcomes)
    except IntegrityError as exc:
        return False, exc.one_line()
    base = read_trace(sample.trace)
    tick = outcomes.checkpoint_tick
    bad = [label for label in sorted(outcomes.trace_sha256)
           if not shared_prefix(base, read_trace(sample.branch(label).trace), tick)]
    return not bad, "branches share the pre-decision history" if not bad else f"history differs before tick {tick}: {bad}"


def batch_version(rows: list[dict[str, Any]], key: str) -> str:
    return content_hash({r["sample"]: r[key] for r in rows})
