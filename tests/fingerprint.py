"""Byte fingerprints of a handful of samples through every stage (issue 13: restructuring changes no byte).

Two samples of the default suite (an occluded pedestrian crossing and a
signalized left turn, the first of each intent's generator sequence) are taken
through the pipeline's own stage functions: manifest, base trajectory and
verdict, checkpoint and matched branches, observations (the base window and the
branches, at a reduced camera and LiDAR resolution) with perception truth, and
the validity gate. Every file written is hashed (sha256), except the review
videos (an encoder's output, not ours) and render logs and timings (wall clock).

``python -m tests.fingerprint --write`` records the fingerprints in
``tests/fingerprints.json`` (do it only for a change that is meant to change
bytes, and say so in the commit); the test compares against them. Bytes are
the same across processes on one machine kind; a different CPU kind may need
its own recording.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from simready.artifacts import layout

RECORD = Path(__file__).with_name("fingerprints.json")
SAMPLES = (("residential_crosswalk_v3", "pedestrian_emerges_behind_van"),
           ("urban_signalized_intersection", "signalized_left_turn"))
#: The observation settings of the fingerprint (smaller than the default suite's, the same code paths).
OVERRIDES = ["camera.width_px=160", "camera.height_px=90", "camera.rate_hz=10", "lidar.azimuth_steps=128"]
#: Files whose bytes carry wall-clock time or an encoder's choices: their presence is checked, not their bytes.
#: (render.json and the render job are hashed: since issue 15 they hold neither timings nor the run's folder.)
UNHASHED_SUFFIXES = (".mp4", ".log")
UNHASHED_NAMES = (layout.BATCH_RECORD,)


def build(root: Path) -> dict[str, str]:
    """Run the two samples through every stage under ``root``; ``{relative path: sha256 or "present"}``."""
    from simready.common import paths
    from simready.catalog.catalog import ensure_catalog
    from simready.scenario.generator import generate
    from simready.scenario.manifest import canonicalize, manifest_bytes
    from simready.measurement.batch import ObservationWindow, observe_sample_dir
    from simready.sim.batch import branch_sample, simulate_sample
    from simready.validity.batch import validate_sample_dir
    from simready.world.template import load_template

    catalog = ensure_catalog()
    for template_id, intent in SAMPLES:
        template = load_template(paths.TEMPLATES_DIR / f"{template_id}.yaml")
        (manifest,) = generate(template_id, intent, 1, catalog=catalog, template=template).manifests
        d = root / manifest.sample_id
        d.mkdir(parents=True)
        layout.SampleDir(d).manifest.write_bytes(manifest_bytes(canonicalize(manifest)))
        simulate_sample(d, template, catalog)
        branch_sample(d, template, catalog)
        observe_sample_dir(d, template, catalog, window=ObservationWindow(0.2, 0.6, branches=True, branch_truth=False),
                           overrides=OVERRIDES, video=False)
        validate_sample_dir(d, None)
    out = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        unhashed = f.suffix in UNHASHED_SUFFIXES or f.name in UNHASHED_NAMES
        out[rel] = "present" if unhashed else hashlib.sha256(_comparable(f, root)).hexdigest()
    return out


def _comparable(f: Path, root: Path) -> bytes:
    """A file's bytes, less what differs between two identical runs: in ``results.json`` the entries of the unhashed
    files (their sizes and hashes may carry the wall clock or the encoder's choices)."""
    data = f.read_bytes()
    if f.name == layout.RESULTS:
        doc = json.loads(data)
        for key in ("files", "artifacts"):
            if isinstance(doc.get(key), list):
                doc[key] = [e for e in doc[key] if not (isinstance(e, dict) and Path(str(e.get("path", ""))).name.endswith(
                    UNHASHED_SUFFIXES + UNHASHED_NAMES))]
        return json.dumps(doc, sort_keys=True).encode("utf-8")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Byte fingerprints of two samples through every stage.")
    parser.add_argument("--write", action="store_true", help=f"record them in {RECORD.name}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        prints = build(Path(tmp))
    if args.write:
        RECORD.write_text(json.dumps(prints, indent=1, sort_keys=True) + "\n")
        print(f"{len(prints)} files recorded in {RECORD}")
        return 0
    want = json.loads(RECORD.read_text())
    diff = sorted(k for k in set(want) | set(prints) if want.get(k) != prints.get(k))
    for k in diff:
        print(f"{k}: recorded {want.get(k, 'absent')}, now {prints.get(k, 'absent')}")
    print(f"{len(prints)} files, {len(diff)} differ")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
