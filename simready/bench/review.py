"""What the review assets cost in the last ``make run`` (issue 28: ≤ 15 % of the run), from its own records.

``python -m simready.bench review`` reads the Dagster instance in ``DAGSTER_HOME`` (default ``.dagster_home``) and
the artifacts folder (``SIMREADY_ARTIFACTS``, default ``artifacts/``) of the last ``make run`` and prints:

* the run's wall time: every successful run from its last ``catalog_job`` (the first job ``simready run``
  launches) on, summed;
* the review assets' seconds, as the stages measured them (``review_assets_s`` in the asset metadata, the latest
  of each partition): the review videos and pictures of every observation folder (``sensor_observations``), the
  sample pages (``validity_reports``) and the suite index with its pictures (``coverage_report``); and their
  share of the run;
* what following colliding branches to their outcome costs (issue 28 item 1): the camera frames observed after
  ``post_s`` past the decision, out of every observed frame, and that share of the observation stage's seconds.

Nothing is run here; with no run recorded it says so.
"""

from __future__ import annotations

import os
from pathlib import Path

from simready import paths

TARGET_SHARE = 0.15
ASSETS = ("sensor_observations", "validity_reports", "coverage_report")


def _latest_metadata(instance, asset: str) -> list[tuple[str, dict]]:
    """(run id, metadata) of the latest materialization of each partition of ``asset``."""
    import dagster as dg

    records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset)),
                                              limit=10_000, ascending=False).records
    seen: dict[str | None, tuple[str, dict]] = {}
    for r in records:
        m = r.event_log_entry.asset_materialization
        if m is not None and m.partition not in seen:
            seen[m.partition] = (r.run_id, {k: v.value for k, v in m.metadata.items()})
    return list(seen.values())


def _run_seconds(instance) -> float:
    """Wall seconds of the last ``simready run``: its successful runs from the last ``catalog_job`` on."""
    import dagster as dg

    runs = instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS]), ascending=False)
    total = 0.0
    for r in runs:
        if r.start_time is not None and r.end_time is not None:
            total += r.end_time - r.start_time
        if r.dagster_run.job_name == "catalog_job":
            break
    return total


def outcome_frames(artifacts: Path, post_s: float) -> tuple[int, int]:
    """(camera frames observed after ``post_s`` past the decision in branch folders, every observed frame)."""
    from simready.layout import ArtifactLayout
    from simready.records import ObservedFrame, Outcomes

    layout = ArtifactLayout(artifacts)
    extra = total = 0
    batches = sorted(p for t in layout.samples_dir.iterdir() if t.is_dir() for p in t.iterdir() if p.is_dir())
    for sample in (s for b in batches for s in layout.batch(b.parent.name, b.name).samples()):
        folders = [sample.observations.observed_frames, *(o.observed_frames for o in sample.branch_observations())]
        t_d = Outcomes.read(sample.outcomes).decision_t_s if sample.outcomes.is_file() else None
        for path in folders:
            if not path.is_file():
                continue
            times = [f.t_s for f in ObservedFrame.read_lines(path)]
            total += len(times)
            if t_d is not None and path != sample.observations.observed_frames:
                extra += sum(1 for t in times if t > t_d + post_s + 1e-9)
    return extra, total


def run() -> None:
    import warnings

    warnings.simplefilter("ignore")
    import dagster as dg

    from simready.scenario.suite import load_suite

    home = os.environ.get("DAGSTER_HOME") or str(paths.PROJECT_ROOT / ".dagster_home")
    if not (Path(home) / "dagster.yaml").is_file():
        print(f"review       no run recorded in {home} (make run first)")
        return
    instance = dg.DagsterInstance.from_config(home)
    try:
        wall = _run_seconds(instance)
        parts = {a: sum(float(m.get("review_assets_s", 0.0)) for _, m in _latest_metadata(instance, a)) for a in ASSETS}
        stages = {}
        for _, m in _latest_metadata(instance, "sensor_observations"):
            for row in getattr(m.get("seconds_by_stage"), "records", []):
                stages[row.data["stage"]] = stages.get(row.data["stage"], 0.0) + float(row.data["seconds"])
    finally:
        instance.dispose()
    if wall <= 0:
        print(f"review       no successful run in {home} (make run first)")
        return
    review = sum(parts.values())
    print(f"review       the last make run: {wall:.0f} s of runs; review assets {review:.1f} s "
          f"({100 * review / wall:.1f} %, target ≤ {100 * TARGET_SHARE:.0f} %): "
          + ", ".join(f"{a} {s:.1f} s" for a, s in parts.items()))
    observe_s = stages.pop("total", None) or sum(stages.values())  # the observe calls' own total, if recorded
    if stages:
        print("             observation stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(stages.items()))
              + f" (observation {observe_s:.0f} s)")
    artifacts = paths.artifacts_dir()
    if (artifacts / "samples").is_dir():
        plan = load_suite().observation
        extra, total = outcome_frames(artifacts, plan.post_s)
        if total:
            share = extra / total
            print(f"             following collisions to their outcome (+{plan.outcome_tail_s} s after settling): "
                  f"{extra} of {total} observed frames ({100 * share:.1f} %), ≈ {share * observe_s:.0f} s of the "
                  f"observation stages, {100 * share * observe_s / wall:.1f} % of the run")


if __name__ == "__main__":
    run()
