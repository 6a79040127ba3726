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

* how long a sample's review page takes to load from a local server (issue 28: ≤ 1 s): Debian's chromium (or the one
  ``SIMREADY_CHROMIUM`` names), driven by Playwright, opens the first :data:`PAGES` review pages of the run from
  :mod:`simready.review.serve` (as ``make ui`` serves them), each in a fresh context (nothing cached); the load
  time is the browser's own, from navigation start to the end of the load event, and beside it when the camera
  overlay (``review-camera.js``, loaded after the page) is drawn; and the bytes the page and its overlay weigh.

Nothing is run here but the page loads; with no run recorded it says so.
"""

from __future__ import annotations

import os
import shutil
import statistics
import threading
import warnings
from pathlib import Path

from simready.artifacts.layout import ArtifactLayout
from simready.artifacts.records import ObservedFrame, Outcomes
from simready.common import paths
from simready.review.serve import make_server
from simready.scenario.suite import load_suite

TARGET_SHARE = 0.15
#: The review page's load target (s) and how many of the run's pages are timed.
TARGET_LOAD_S = 1.0
PAGES = 6
ASSETS = ("sensor_observations", "validity_reports", "coverage_report")


def _latest_metadata(instance, asset: str) -> list[tuple[str, dict]]:
    """(run id, metadata) of the latest materialization of each partition of ``asset``."""
    import dagster as dg  # dagster after run() silences its import warnings

    records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset)),
                                              limit=10_000, ascending=False).records
    seen: dict[str | None, tuple[str, dict]] = {}
    for r in records:
        m = r.event_log_entry.asset_materialization
        if m is not None and m.partition not in seen:
            seen[m.partition] = (r.run_id, {k: v.value for k, v in m.metadata.items()})
    return list(seen.values())


def _run_seconds(instance) -> float:
    """Wall seconds of the last ``simready run``: its successful runs from the last ``catalog_job`` on, the time
    covered by at least one of them (the runs go side by side, so their durations' sum would count it twice)."""
    import dagster as dg  # dagster after run() silences its import warnings

    runs = instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS]), ascending=False)
    spans = []
    for r in runs:
        if r.start_time is not None and r.end_time is not None:
            spans.append((r.start_time, r.end_time))
        if r.dagster_run.job_name == "catalog_job":
            break
    return covered_seconds(spans)


def covered_seconds(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of the (start, end) spans."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def outcome_frames(artifacts: Path, post_s: float) -> tuple[int, int]:
    """(camera frames observed after ``post_s`` past the decision in branch folders, every observed frame)."""
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


def page_loads(artifacts: Path, pages: int = PAGES) -> list[tuple[str, float, float | None, int]] | str:
    """(page key, load s, overlay drawn s or None, page + overlay bytes) of the first ``pages`` review pages under
    ``artifacts``, opened from a local server in a fresh browser context each; a sentence instead when it cannot."""

    found = sorted(ArtifactLayout(artifacts).samples_dir.glob("*/*/*/review.html"))[:pages]
    if not found:
        return f"no review page under {artifacts} (make run first)"
    chromium = os.environ.get("SIMREADY_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        return "chromium is missing (make browser)"
    from playwright.sync_api import sync_playwright  # optional dependency (dev extra): playwright

    server = make_server(artifacts)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    out = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium)
            for page_file in found:
                key = page_file.relative_to(artifacts).as_posix()
                context = browser.new_context()
                page = context.new_page()
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/{key}", wait_until="load")
                load_ms = page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd")
                ready = None
                if page.locator("#cameras").count() and page_file.with_name("review-camera.js").is_file():
                    page.wait_for_function("() => document.getElementById('cameras').dataset.ready === '1'",
                                           timeout=30_000)
                    ready = page.evaluate("() => performance.now()") / 1000.0
                size = page_file.stat().st_size + sum(f.stat().st_size for f in [page_file.with_name("review-camera.js")]
                                                      if f.is_file())
                out.append((key, load_ms / 1000.0, ready, size))
                context.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return out


def print_page_loads(artifacts: Path) -> None:
    """The ``make bench`` lines of :func:`page_loads`."""
    loads = page_loads(artifacts)
    if isinstance(loads, str):
        print(f"             review page load: {loads}")
        return
    times = [t for _, t, _, _ in loads]
    ready = [r for _, _, r, _ in loads if r is not None]
    print(f"             review page load from a local server ({len(loads)} pages, fresh cache): median "
          f"{statistics.median(times):.2f} s, max {max(times):.2f} s (target ≤ {TARGET_LOAD_S:.0f} s)"
          + (f"; camera overlay drawn at {statistics.median(ready):.2f} s (after the load)" if ready else "")
          + f"; page + overlay {statistics.median(b for *_, b in loads) / 1024:.0f} KB")


def run() -> None:
    warnings.simplefilter("ignore")
    import dagster as dg  # after simplefilter: Dagster warns on import


    home = os.environ.get("DAGSTER_HOME") or str(paths.PROJECT_ROOT / ".dagster_home")
    if not (Path(home) / "dagster.yaml").is_file():
        print(f"review       no run recorded in {home} (make run first)")
        print_page_loads(paths.artifacts_dir())
        return
    instance = dg.DagsterInstance.from_config(home)
    try:
        wall = _run_seconds(instance)
        parts = {a: sum(float(m.get("review_assets_s", 0.0)) for _, m in _latest_metadata(instance, a)) for a in ASSETS}
        camera_s = sum(float(m.get("review_camera_s", 0.0)) for _, m in _latest_metadata(instance, "validity_reports"))
        stages = {}
        for _, m in _latest_metadata(instance, "sensor_observations"):
            for row in getattr(m.get("seconds_by_stage"), "records", []):
                stages[row.data["stage"]] = stages.get(row.data["stage"], 0.0) + float(row.data["seconds"])
    finally:
        instance.dispose()
    artifacts = paths.artifacts_dir()
    if wall <= 0:
        print(f"review       no successful run in {home} (make run first)")
        print_page_loads(artifacts)
        return
    review = sum(parts.values())
    print(f"review       the last make run: {wall:.0f} s of runs; review assets {review:.1f} s "
          f"({100 * review / wall:.1f} %, target ≤ {100 * TARGET_SHARE:.0f} %): "
          + ", ".join(f"{a} {s:.1f} s" for a, s in parts.items()))
    observe_s = stages.pop("total", None) or sum(stages.values())  # the observe calls' own total, if recorded
    if stages:
        print("             observation stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(stages.items()))
              + f" (observation {observe_s:.0f} s)")
    overlays = sorted((artifacts / "samples").glob("*/*/*/review-camera.js"))
    if overlays:
        size = sum(f.stat().st_size for f in overlays)
        print(f"             camera overlays and BEV clouds (review-camera.js): {len(overlays)} files, {size / 1e6:.1f} MB "
              f"({size / len(overlays) / 1024:.0f} KB a sample), built in {camera_s:.1f} s of the review assets' "
              f"{review:.1f} s")
    print_page_loads(artifacts)
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
