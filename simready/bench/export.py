"""Export benchmark (issue 18): a dataset release of the materialized suite, and seconds and bytes per sample of
``simready export mcap`` and ``export nuscenes`` reading it.

``python -m simready.bench export`` on an artifacts folder holding a materialized suite (``make run``'s default
suite): builds the suite's release from nothing in a linked copy of the artifacts (so the user's ``releases/`` is
left alone) — every blocking check re-evaluated, every file hashed and stored once by content — verifies it,
checks out the first ``limit`` samples (objects verified as they are read) and exports them: MCAP one file per base
and branch, nuScenes one dataset of the sample folders with their branches. Without a materialized suite, one
synthetic street sample observed at the default suite's settings (2 s, camera 480×270 — at the street rig's
20 Hz, twice the suite's rate — LiDAR 32 × 512, radar), observed first into a temporary folder, is exported.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from pathlib import Path

from simready.common import paths
from simready.catalog.catalog import load_catalog
from simready.export.mcap_file import export_mcap
from simready.export.nuscenes import export_nuscenes
from simready.artifacts.layout import ArtifactLayout, SampleDir
from simready.measurement.options import ObserveOptions
from simready.release import build_release, checkout, verify_release
from simready.scenario.suite import load_suite
from simready.sim.core.constants import DEFAULT_BACKEND
from simready.store import LocalStore
from simready.testing.observed import observed_street_sample
from simready.world.template import load_template


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _linked_copy(root: Path, into: Path) -> int:
    """The stages' records and samples of ``root`` hard-linked under ``into`` (no bytes copied); files linked."""
    layout, n = ArtifactLayout(root), 0
    for folder in (layout.catalog_dir, layout.root / "templates", layout.samples_dir, layout.split_assignments.parent,
                   layout.coverage_dir):
        for path in folder.rglob("*"):
            if path.is_file():
                target = into / path.relative_to(root)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(path, target)
                n += 1
    return n


def _release_samples(root: Path, scratch: Path, limit: int) -> tuple[list[tuple[SampleDir, str | None]], str]:
    """Build, verify and check out the release of the suite under ``root``; print its figures."""
    with warnings.catch_warnings():  # Dagster's beta notes on the definitions are not the bench's figures
        warnings.simplefilter("ignore")
        from simready.assets.release import stage_versions  # the datasheet's versions live with the Dagster assets

    store = LocalStore(scratch / "artifacts")
    t0 = time.perf_counter()
    files = _linked_copy(root, store.root)
    link_s = time.perf_counter() - t0
    rows = store.read_json(ArtifactLayout(Path()).split_assignments)["rows"]
    templates = {t: load_template(paths.TEMPLATES_DIR / f"{t}.yaml") for t in sorted({r["template"] for r in rows})}
    t0 = time.perf_counter()
    suite_id = load_suite().suite_id
    release, results = build_release(store, suite_id=suite_id, versions=stage_versions(), templates=templates,
                                     catalog=load_catalog(paths.CATALOG_GENERATED_DIR), backend=DEFAULT_BACKEND)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_release(store, suite_id=suite_id, versions=stage_versions(), templates=templates,
                  catalog=load_catalog(paths.CATALOG_GENERATED_DIR), backend=DEFAULT_BACKEND)
    rebuild_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    problems = verify_release(store, release)
    verify_s = time.perf_counter() - t0
    n = sum(1 for _ in release.samples())
    print(f"[release of {root} ({files} files linked for the bench in {link_s:.1f} s)]")
    print(f"  build {build_s:6.1f} s ({build_s / n:.2f} s/sample; {len(results)} checks re-evaluated), again from the "
          f"same inputs {rebuild_s:.1f} s (same id), verify {verify_s:.1f} s ({'ok' if not problems else 'FAILED'}); "
          f"{n} samples, {release.files} files, {release.bytes / 1e9:.2f} GB, {release.release_id[:19]}")
    wanted = {s["sample"] for s in release.samples()}
    wanted = set(sorted(wanted)[:limit])
    t0 = time.perf_counter()
    folders = checkout(store, release, scratch / "checkout", wanted)
    checkout_s = time.perf_counter() - t0
    print(f"  checkout {checkout_s / len(folders):.2f} s/sample (every object hashed as it is read)")
    found = []
    for _, sample in folders:
        if sample.observations.results.is_file():
            found.append((sample, None))
        found += [(sample, obs.root.parent.name) for obs in sample.branch_observations() if obs.results.is_file()]
    return found, f"release {release.release_id[:19]}: {len(folders)} samples and their branches"


def run(limit: int = 8) -> dict[str, float]:
    """Export and print seconds and MB per exported sample (MCAP: per base or branch; nuScenes: per sample
    folder with its branches), and the observations' MB beside."""
    root = paths.artifacts_dir()
    layout = ArtifactLayout(root)
    with LocalStore(root).scratch() if layout.suite_weights.is_file() else tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if layout.suite_weights.is_file() and layout.split_assignments.is_file():
            found, label = _release_samples(root, tmp, limit)
        else:
            options = ObserveOptions(passes=("rgb", "depth", "lidar", "radar"), video=False)
            found = [(observed_street_sample(tmp / "in", 2.0, options, width_px=480, height_px=270,
                                             line_time_s=1e-4, azimuth_steps=512, channels=32), None)]
            label = "one synthetic street sample (2 s, 480x270 at 20 Hz, LiDAR 32x512, radar)"
        seconds, written, observed = 0.0, 0, 0
        for k, (sample, branch) in enumerate(found):
            obs = sample.branch(branch).observations if branch else sample.observations
            t0 = time.perf_counter()
            result = export_mcap(sample.root, tmp / f"{k}.mcap", branch=branch)
            seconds += time.perf_counter() - t0
            written += result.bytes
            observed += _folder_bytes(obs.root)
        folders = sorted({sample.root for sample, _ in found})
        t0 = time.perf_counter()
        export_nuscenes(folders, tmp / "nuscenes")
        nusc_seconds = time.perf_counter() - t0
        nusc_bytes = _folder_bytes(tmp / "nuscenes")
    n, m = len(found), len(folders)
    print(f"[MCAP export, {label}]")
    print(f"  {seconds / n:6.2f} s/sample, {written / n / 1e6:6.1f} MB/sample "
          f"(the observation folders: {observed / n / 1e6:.1f} MB/sample)")
    print(f"[nuScenes export of the same {m} sample folder(s), branches included]")
    print(f"  {nusc_seconds / m:6.2f} s/sample, {nusc_bytes / m / 1e6:6.1f} MB/sample")
    return {"seconds_per_sample": seconds / n, "bytes_per_sample": written / n,
            "nuscenes_seconds_per_sample": nusc_seconds / m, "nuscenes_bytes_per_sample": nusc_bytes / m}
