"""The measurement stage over one batch folder: each sample observed around its decision, branches too.

Per sample folder (``simready.sim.batch`` layout)::

    observations/                       the base rollout over [t_d − pre_s, t_d + post_s] (SPEC §10 layout)
    branches/<label>/observations/      each matched branch over [t_d, t_d + post_s] (same rig, overrides, truth);
                                        a branch whose subject collides, until that collision is over
                                        (its ``t_settled``) + ``outcome_tail_s``, if that is later
    observations_dry/                   rain samples only: the base's LiDAR alone, same trace and window, rain
                                        removed (``atmosphere.rain_rate_mmph=0``): the dry reference of the
                                        validity gate's rain expectation

``t_d`` is ``decision_t_s`` from ``branches/outcomes.json`` (where the
branches leave the base trace; identical history before it). Why a window
around the decision rather than the clip start: the matched branches differ
only after ``t_d``, so that is where observations carry counterfactual
information; the pre-roll gives trackers and the validity gate history. A colliding
branch is followed to its outcome: the collision is what the matched pair
exists to show, and it often comes seconds after the review window.

The default suite observes at reduced resolution (the suite's
``observation`` block), so the whole DAG fits in minutes on two cores; full
clips at the template's resolution are one ``simready sense`` away.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simready.common.hashing import content_hash
from simready.common.parallel import map_samples
from simready.artifacts.layout import ObservationDir, SampleDir
from simready.artifacts.records import Outcomes, Results
from simready.scenario.manifest import ScenarioManifest, load_manifest
from simready.measurement.inputs import observe_sample
from simready.measurement.options import PASSES, ObserveOptions
from simready.sensors_hw.trace_input import read_trace_input
from simready.sim.storage.trace import read_trace

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.world.template import WorldTemplate

#: The override that removes the weather from a LiDAR (simready.sensors_hw.atmosphere).
DRY_OVERRIDE = "atmosphere.rain_rate_mmph=0"


@dataclass(frozen=True)
class ObservationWindow:
    """Which stretch of a sample is observed, relative to its decision time ``t_d`` (seconds).

    Attributes:
        pre_s: seconds of base-trace history before ``t_d`` (≥ 0).
        post_s: seconds after ``t_d`` (≥ 0), for the base trace and every branch.
        branches: also observe each matched branch over [t_d, t_d + post_s].
        branch_truth: derive perception truth for the branches too (the base always gets it).
            Off in the default suite: truth is about half an observation's cost, and the
            branches' sensor evidence for the gate (observed-frames, LiDAR) does not need it.
        outcome_tail_s: a branch whose subject collides is observed until that collision's ``t_settled``
            plus this many seconds (at least ``post_s`` after the decision; clamped to the clip);
            None: every branch stops ``post_s`` after the decision.
    """

    pre_s: float
    post_s: float
    branches: bool = True
    branch_truth: bool = True
    outcome_tail_s: float | None = None

    def __post_init__(self) -> None:
        if not (self.pre_s >= 0.0 and self.post_s >= 0.0):
            raise ValueError(f"pre_s and post_s must be >= 0 s, got {self.pre_s}, {self.post_s}")
        if self.outcome_tail_s is not None and not self.outcome_tail_s >= 0.0:
            raise ValueError(f"outcome_tail_s must be >= 0 s or None, got {self.outcome_tail_s}")

    def base_span(self, decision_t_s: float | None, clip_s: float) -> tuple[float, float]:
        """[from, until] of the base trace, clamped to [0, clip_s]; without a decision, the clip's first
        ``pre_s + post_s`` seconds."""
        if decision_t_s is None:
            return 0.0, min(clip_s, self.pre_s + self.post_s)
        return max(0.0, decision_t_s - self.pre_s), min(clip_s, decision_t_s + self.post_s)

    def branch_span(self, decision_t_s: float, clip_s: float, settled_s: float | None = None) -> tuple[float, float]:
        """[from, until] of a branch trace: from the decision on (before it the branch is the base); with
        ``settled_s`` (when the branch's collision is over) and ``outcome_tail_s``, until ``outcome_tail_s``
        after it if that is later."""
        until = decision_t_s + self.post_s
        if settled_s is not None and self.outcome_tail_s is not None:
            until = max(until, settled_s + self.outcome_tail_s)
        return max(0.0, decision_t_s), min(clip_s, until)


def collision_settled_s(trace_path: Path, decision_t_s: float) -> float | None:
    """When the first collision of the trace's subject at or after ``decision_t_s`` is over: the event's
    ``t_settled`` (else its ``t_end``, else its start; SPEC §8); None when the subject does not collide."""
    trace = read_trace(trace_path)
    subject = trace.header.get("metric_subject")
    hits = sorted((c for c in trace.metrics.get("collisions", [])
                   if subject in (c.get("a"), c.get("b")) and c["t"] >= decision_t_s - 1e-9), key=lambda c: c["t"])
    if not hits:
        return None
    first = hits[0]
    ends = [e for e in (first.get("t_settled"), first.get("t_end")) if isinstance(e, (int, float)) and e >= first["t"]]
    return float(ends[0]) if ends else float(first["t"])


def decision_and_branches(sample_dir: Path) -> tuple[float | None, list[str]]:
    """``(decision_t_s, branch labels with a trace)`` from ``branches/outcomes.json``; ``(None, [])`` if absent."""
    sample = SampleDir(sample_dir)
    if not sample.outcomes.is_file():
        return None, []
    outcomes = Outcomes.read(sample.outcomes)
    # The rows carry the decision as the branch traces record it (rounded to 1e-9 s).
    t_d = outcomes.branches[0].decision_t_s if outcomes.branches else outcomes.decision_t_s
    labels = [r.label for r in outcomes.branches if sample.branch(r.label).trace.is_file()]
    return t_d, labels


def _clear_observations(sample: SampleDir) -> None:
    """Drop every earlier observation folder of the sample (base and branches), so what remains is this run's."""
    for out in [sample.observations, sample.dry_observations, *sample.branch_observations()]:
        if out.root.is_dir():
            shutil.rmtree(out.root)


Span = tuple[float | None, float | None]


def passes_without_truth() -> tuple[str, ...]:
    """Every pass but the SPEC §11 truth (for branches when ``ObservationWindow.branch_truth`` is off)."""
    return tuple(p for p in PASSES if p != "truth")


def _observe_one(template: WorldTemplate, catalog: Catalog, manifest: ScenarioManifest, trace_path: Path, out: Path,
                 span: Span, overrides: list[str], video: bool, passes: tuple[str, ...] | None = None,
                 compressed: bool = False) -> dict[str, Any]:
    """One observation folder over ``span`` = (from_s, until_s) (None: that end of the clip); ``compressed``:
    each published file's opt-in compressed variant (:meth:`ObserveOptions.compressed`)."""
    trace = read_trace_input(trace_path)
    chosen = dict(passes=passes or PASSES, from_s=span[0], until_s=span[1], video=video)
    options = ObserveOptions.compressed(**chosen) if compressed else ObserveOptions(**chosen)
    result = observe_sample(template, catalog, manifest, trace, out, options=options, overrides=overrides)
    return {"files": result.files, "frames": result.frames, "window_s": result.render.settings.window_s,
            "timings_s": result.timings_s, "peak_rss_mb": result.peak_rss_mb}


@dataclass(frozen=True)
class FolderJob:
    """One observation folder of a sample to write: which trace, where, over which span, with which passes.

    A sample's folders (base, branches, dry sibling) are independent of each other once the sample's earlier
    folders are cleared, so a batch's folders can be observed side by side (:func:`observe_batch`).
    """

    sample_dir: Path
    variant: str  # "base", "dry", or the branch's label
    trace: Path
    out: Path
    span: Span
    overrides: tuple[str, ...]
    video: bool
    passes: tuple[str, ...] | None
    compressed: bool

    def weight(self) -> float:
        """A rough relative cost for ordering (the longest first): the span, twice with perception truth
        (about half an observation's cost), a tenth for the LiDAR-only dry sibling."""
        lo, hi = self.span
        length = (hi if hi is not None else 1e3) - (lo or 0.0)
        passes = self.passes or PASSES
        return length * (2.0 if "truth" in passes else 1.0) * (1.0 if len(passes) > 1 else 0.1)

    def run(self, template: WorldTemplate, catalog: Catalog) -> dict[str, Any]:
        return _observe_one(template, catalog, load_manifest(SampleDir(self.sample_dir).manifest), self.trace,
                            self.out, self.span, list(self.overrides), self.video, passes=self.passes,
                            compressed=self.compressed)


def folder_jobs(sample_dir: Path, *, window: ObservationWindow | None = None, overrides: list[str], video: bool,
                until_s: float | None = None, compressed: bool = False) -> tuple[float | None, list[FolderJob]]:
    """Clear the sample's earlier observation folders and plan this run's: ``(decision_t_s, jobs)``, the base
    first, then each branch in the outcomes' order, then the dry sibling (:func:`observe_sample_dir`)."""
    sample = SampleDir(sample_dir)
    _clear_observations(sample)
    manifest = load_manifest(sample.manifest)
    base_trace = sample.trace
    t_d, labels = decision_and_branches(sample_dir)
    span: Span
    if window is None:
        t_d, labels, span = None, [], (None, until_s)
    else:
        span = window.base_span(t_d, read_trace_input(base_trace).clip_s)
        labels = labels if (window.branches and t_d is not None) else []
    fixed = tuple(overrides)
    jobs = [FolderJob(sample_dir, "base", base_trace, sample.observations.root, span, fixed, video, None, compressed)]
    for label in labels:
        branch = sample.branch(label)
        settled = collision_settled_s(branch.trace, t_d) if window.outcome_tail_s is not None else None  # type: ignore[union-attr, arg-type]
        b_span = window.branch_span(t_d, read_trace_input(branch.trace).clip_s, settled)  # type: ignore[union-attr, arg-type]
        jobs.append(FolderJob(sample_dir, label, branch.trace, branch.observations.root, b_span, fixed, video,
                              None if window.branch_truth else passes_without_truth(), compressed))  # type: ignore[union-attr]
    if manifest.environment.weather == "rain":
        jobs.append(FolderJob(sample_dir, "dry", base_trace, sample.dry_observations.root, span,
                              (*fixed, DRY_OVERRIDE), False, ("lidar",), compressed))
    return t_d, jobs


def _sample_row(sample_dir: Path, t_d: float | None, jobs: list[FolderJob], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`observe_sample_dir`'s row from its folders' rows (in ``jobs``' order)."""
    by_variant = {job.variant: row for job, row in zip(jobs, rows)}
    branches = {job.variant: row for job, row in zip(jobs, rows) if job.variant not in ("base", "dry")}
    return {"sample": SampleDir(sample_dir).sample_id, **by_variant["base"], "decision_t_s": t_d,
            "branches": branches, "dry": by_variant.get("dry")}


def observe_sample_dir(sample_dir: Path, template: WorldTemplate, catalog: Catalog, *,
                       window: ObservationWindow | None = None, overrides: list[str], video: bool,
                       until_s: float | None = None, compressed: bool = False) -> dict[str, Any]:
    """Observe one sample folder: the base trace around its decision and, with ``window.branches``, each branch.

    Every earlier observation folder of the sample is replaced. ``window`` None keeps the former behaviour
    (the base trace over [0, ``until_s``], no branches) for callers not yet given a window. ``compressed``:
    every folder in the published files' opt-in compressed variants (the suite's ``observation.compressed``).

    A sample whose manifest's weather is ``rain`` also gets ``observations_dry/``: LiDAR only (no camera,
    truth or video), the base trace over the base's window with the rain removed (``DRY_OVERRIDE`` after
    ``overrides``).

    Returns a row: ``sample``, the base's ``files`` / ``frames`` / ``window_s`` / ``timings_s`` /
    ``peak_rss_mb``, ``decision_t_s`` (None without outcomes), ``branches``: ``{label: {files, frames,
    window_s, timings_s, peak_rss_mb}}`` and ``dry``: the same figures of the dry sibling (None if not rain).
    """
    t_d, jobs = folder_jobs(sample_dir, window=window, overrides=overrides, video=video, until_s=until_s,
                            compressed=compressed)
    return _sample_row(sample_dir, t_d, jobs, [job.run(template, catalog) for job in jobs])


def observe_batch(sample_dirs: list[Path], template: WorldTemplate, catalog: Catalog, *,
                  window: ObservationWindow, overrides: list[str], video: bool,
                  compressed: bool = False) -> list[dict[str, Any]]:
    """:func:`observe_sample_dir` of every sample, its rows in ``sample_dirs``' order, with every observation
    folder of the batch (bases, branches, dry siblings) one item of :func:`~simready.common.parallel.map_samples`,
    the longest first (:meth:`FolderJob.weight`).

    Why folders rather than samples: a sample's base, with perception truth, costs about as much as its two
    branches together, and a batch has four to six samples of unequal cost (one with background traffic): with
    a sample per item the cores waited for the last sample's folders one after the other. Each folder is written
    by one process as before, so the bytes are the same.
    """
    planned = [folder_jobs(d, window=window, overrides=overrides, video=video, compressed=compressed)
               for d in sample_dirs]
    jobs = [job for _, sample_jobs in planned for job in sample_jobs]
    # Longest first (ties in the batch's order): the cores finish together rather than one waiting on a late base.
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i].weight())
    done = map_samples(lambda i: jobs[i].run(template, catalog), order)
    rows: list[dict[str, Any]] = [{}] * len(jobs)
    for i, row in zip(order, done):
        rows[i] = row
    out, k = [], 0
    for d, (t_d, sample_jobs) in zip(sample_dirs, planned):
        out.append(_sample_row(d, t_d, sample_jobs, rows[k:k + len(sample_jobs)]))
        k += len(sample_jobs)
    return out


def observation_dirs(sample_dir: Path) -> dict[str, Path]:
    """Every observation folder of a sample that holds a results.json, keyed by its prefix in the versions
    (``<sample>`` for the base, ``<sample>/branches/<label>`` for a branch, ``<sample>/observations_dry``
    for the dry sibling)."""
    sample = SampleDir(sample_dir)
    batch = sample.root.parent
    found = {sample.sample_id: sample.observations,
             sample.dry_observations.root.relative_to(batch).as_posix(): sample.dry_observations}
    for obs in sample.branch_observations():
        found[obs.root.parent.relative_to(batch).as_posix()] = obs
    return {k: obs.root for k, obs in found.items() if obs.results.is_file()}


def results_versions(sample_dirs: list[Path]) -> tuple[str, str]:
    """(observations version, truth version): hashes over results.json entries of every observation folder
    (base, branches, dry sibling), split by truth vs sensor files. Keys are ``<sample>/<path>`` for the base,
    ``<sample>/branches/<label>/<path>`` for a branch and ``<sample>/observations_dry/<path>`` for the dry
    sibling."""
    obs, truth = {}, {}
    for d in sample_dirs:
        for prefix, folder in observation_dirs(d).items():
            for f in Results.read(ObservationDir(folder).results).files:
                target = truth if ObservationDir.is_truth(f.path) else obs
                target[f"{prefix}/{f.path}"] = f.sha256
    return content_hash(obs), content_hash(truth)
