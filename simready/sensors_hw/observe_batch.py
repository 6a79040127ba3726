"""The measurement stage over one batch folder: each sample's base rollout observed into ``observations/``.

The default suite observes a review window at reduced resolution (the suite's
``observation`` block), so the whole DAG fits in minutes on two cores; full
clips at the template's resolution are one ``simready sense`` away.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from simready.hashing import content_hash

OBSERVATIONS_DIR = "observations"
TRUTH_DIR = "truth"


def observe_sample_dir(sample_dir: Path, template: Any, catalog: Any, *, until_s: float | None,
                       overrides: list[str], video: bool) -> dict[str, Any]:
    """Observe the sample's base rollout into ``<sample>/observations/`` (replaced whole)."""
    from simready.scenario.manifest import load_manifest
    from simready.sensors_hw.observe import ObserveOptions, observe_sample
    from simready.sensors_hw.trace_input import read_trace_input

    out = sample_dir / OBSERVATIONS_DIR
    if out.exists():
        shutil.rmtree(out)
    manifest = load_manifest(sample_dir / "manifest.json")
    trace = read_trace_input(sample_dir / "trace.parquet")
    result = observe_sample(template, catalog, manifest, trace, out,
                            options=ObserveOptions(until_s=until_s, video=video), overrides=overrides)
    return {"sample": sample_dir.name, "files": result.files, "frames": result.frames,
            "timings_s": result.timings_s, "peak_rss_mb": result.peak_rss_mb}


def results_versions(sample_dirs: list[Path]) -> tuple[str, str]:
    """(observations version, truth version): hashes over results.json entries, split by truth vs sensor files."""
    import json

    obs, truth = {}, {}
    for d in sample_dirs:
        results = json.loads((d / OBSERVATIONS_DIR / "results.json").read_text())
        for f in results.get("files", []):
            target = truth if str(f.get("path", "")).startswith(TRUTH_DIR + "/") else obs
            target[f"{d.name}/{f['path']}"] = f.get("sha256")
    return content_hash(obs), content_hash(truth)
