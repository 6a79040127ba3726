"""Export benchmark (issue 18): seconds and bytes per sample of ``simready export mcap`` and ``export nuscenes``.

``python -m simready.bench export`` exports the observed samples of the artifacts folder (``make run``'s
default suite: each base and each branch is one file) when there are any, the first ``limit`` of them;
otherwise one synthetic street sample observed at the default suite's settings (2 s, camera 480×270 — at
the street rig's 20 Hz, twice the suite's rate — LiDAR 32 × 512, radar), observed first into a temporary folder.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from simready import paths
from simready.export.mcap_file import export_mcap
from simready.export.nuscenes import export_nuscenes
from simready.layout import ArtifactLayout, SampleDir
from simready.measurement.options import ObserveOptions
from simready.testing.observed import observed_street_sample


def suite_samples(root: Path) -> Iterator[tuple[SampleDir, str | None]]:
    """Every observed base and branch under an artifacts folder, in name order."""
    layout = ArtifactLayout(root)
    if not layout.samples_dir.is_dir():
        return
    for template in sorted(p.name for p in layout.samples_dir.iterdir() if p.is_dir()):
        for batch in sorted(p.name for p in (layout.samples_dir / template).iterdir() if p.is_dir()):
            for sample in layout.batch(template, batch).samples():
                if sample.observations.results.is_file():
                    yield sample, None
                for branch in sample.branch_observations():
                    if branch.results.is_file():
                        yield sample, branch.root.parent.name


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run(limit: int = 8) -> dict[str, float]:
    """Export and print seconds and MB per exported sample (MCAP: per base or branch; nuScenes: per sample
    folder with its branches), and the observations' MB beside."""
    with tempfile.TemporaryDirectory() as tmp:
        found = list(suite_samples(paths.artifacts_dir()))[:limit]
        label = f"{len(found)} samples of {paths.artifacts_dir()}"
        if not found:
            options = ObserveOptions(passes=("rgb", "depth", "lidar", "radar"), video=False)
            found = [(observed_street_sample(Path(tmp) / "in", 2.0, options, width_px=480, height_px=270,
                                             line_time_s=1e-4, azimuth_steps=512, channels=32), None)]
            label = "one synthetic street sample (2 s, 480x270 at 20 Hz, LiDAR 32x512, radar)"
        seconds, written, observed = 0.0, 0, 0
        for k, (sample, branch) in enumerate(found):
            obs = sample.branch(branch).observations if branch else sample.observations
            t0 = time.perf_counter()
            result = export_mcap(sample.root, Path(tmp) / f"{k}.mcap", branch=branch)
            seconds += time.perf_counter() - t0
            written += result.bytes
            observed += _folder_bytes(obs.root)
        folders = sorted({sample.root for sample, _ in found})
        t0 = time.perf_counter()
        export_nuscenes(folders, Path(tmp) / "nuscenes")
        nusc_seconds = time.perf_counter() - t0
        nusc_bytes = _folder_bytes(Path(tmp) / "nuscenes")
    n, m = len(found), len(folders)
    print(f"[MCAP export, {label}]")
    print(f"  {seconds / n:6.2f} s/sample, {written / n / 1e6:6.1f} MB/sample "
          f"(the observation folders: {observed / n / 1e6:.1f} MB/sample)")
    print(f"[nuScenes export of the same {m} sample folder(s), branches included]")
    print(f"  {nusc_seconds / m:6.2f} s/sample, {nusc_bytes / m / 1e6:6.1f} MB/sample")
    return {"seconds_per_sample": seconds / n, "bytes_per_sample": written / n,
            "nuscenes_seconds_per_sample": nusc_seconds / m, "nuscenes_bytes_per_sample": nusc_bytes / m}
