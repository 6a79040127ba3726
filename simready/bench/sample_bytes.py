"""Bytes per full-resolution sample (issue 29 item 3): the published files, then each one's opt-in compressed variant.

``python -m simready.bench bytes`` observes the first ``frames`` camera frames of the street sample at full
resolution (camera 1280×720 rolling shutter, LiDAR 64×1024, radar, perception truth, review videos) twice into
temporary folders, with the published files (SPEC §10) and with :meth:`ObserveOptions.compressed
<simready.measurement.options.ObserveOptions.compressed>`, and prints the bytes per file kind scaled to the
200-camera-frame sample of ``make bench observe`` — each kind per frame of its own sensor (camera frames, LiDAR
sweeps, radar frames) times that sensor's frames in 20 s at its rate; whole-clip files (videos, records, tracks)
per camera frame — beside the figure measured before issue 29 and the 1.5 GB target. Truth tables are the same
bytes in both folders: their precision is declared (:mod:`simready.truth.precision`), not an option.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from pathlib import Path
from typing import Any

from simready.artifacts.layout import REVIEW_DIR, ObservationDir
from simready.artifacts.records import Results
from simready.measurement.observe import observe
from simready.measurement.options import ObserveOptions
from simready.testing.street import street_sample

#: The full-resolution sample of ``make bench observe``: this many camera frames at the street rig's 20 Hz.
SAMPLE_CAMERA_FRAMES = 200
#: Measured before issue 29 (NOTES: main at 6caf452, ``make bench observe``): 27.8 MB per camera frame.
BEFORE_GB = 5.56
#: The issue's target for a full-resolution sample (lossless, or within the declared precision).
TARGET_GB = 1.5
FULL_RESOLUTION = {"width_px": 1280, "height_px": 720, "line_time_s": 3.0e-5, "azimuth_steps": 1024, "channels": 64}


def _kind(entry: Any) -> str:
    """A file's kind: its pass (``rgb``, ``truth.surface``, ``lidar``, ...), else its name without the sensor."""
    return entry.pass_name if entry.tick is not None else Path(entry.path).name.split(".", 1)[-1]


def observe_bytes(frames: int, compressed: bool) -> tuple[dict[str, float], dict[str, int]]:
    """``(bytes per kind scaled to the 200-frame sample, frames per sensor observed)`` of one observation of the
    first ``frames`` camera frames."""
    built, rig, trace = street_sample((frames - 1) / 20.0 + 0.03, **FULL_RESOLUTION)
    options = ObserveOptions.compressed() if compressed else ObserveOptions()
    with tempfile.TemporaryDirectory() as tmp:
        obs = ObservationDir(Path(tmp) / "obs")
        observed = observe(built, rig, trace, obs.root, options=options).frames
        entries = Results.read(obs.results).files
        results_bytes = obs.results.stat().st_size  # results.json lists every file but itself
    clip_s = SAMPLE_CAMERA_FRAMES / rig.sensors["front_camera"].rate_hz
    per_camera_frame = SAMPLE_CAMERA_FRAMES / observed["front_camera"]
    # A sensor's file of one tick: its kind's mean size times that sensor's frames in the sample (a pair's
    # truth counts one file per camera frame); the review pictures are one per folder; the rest grows with the clip.
    files = collections.Counter((e.sensor, _kind(e)) for e in entries if e.tick is not None)
    out: dict[str, float] = collections.defaultdict(float)
    out["results.json"] = results_bytes * per_camera_frame
    for e in entries:
        kind = _kind(e)
        if e.tick is not None and e.sensor is not None:
            out[kind] += e.bytes * clip_s * rig.sensors[e.sensor].rate_hz / files[e.sensor, kind]
        else:
            out[kind] += e.bytes * (1.0 if e.path.startswith(REVIEW_DIR + "/") else per_camera_frame)
    return dict(out), observed


def run(frames: int = 10) -> dict[str, Any]:
    """Print the bytes per full-resolution sample per file kind, published and compressed; return the figures."""
    plain, observed = observe_bytes(frames, compressed=False)
    packed, _ = observe_bytes(frames, compressed=True)
    total = {"published": sum(plain.values()), "compressed": sum(packed.values())}
    print(f"[bytes per full-resolution sample: {SAMPLE_CAMERA_FRAMES} camera frames 1280x720 + LiDAR 64x1024 + radar "
          f"+ truth + videos, scaled from {observed}]")
    print(f"  {'file kind':<22} {'published':>11} {'compressed':>11}")
    for kind in sorted(plain, key=lambda k: -plain[k]):
        if plain[kind] >= 1e6 or packed.get(kind, 0.0) >= 1e6:
            print(f"  {kind:<22} {plain[kind] / 1e6:8.0f} MB {packed.get(kind, 0.0) / 1e6:8.0f} MB")
    rest = [k for k in plain if plain[k] < 1e6 and packed.get(k, 0.0) < 1e6]
    print(f"  {'(' + str(len(rest)) + ' smaller kinds)':<22} {sum(plain[k] for k in rest) / 1e6:8.0f} MB "
          f"{sum(packed.get(k, 0.0) for k in rest) / 1e6:8.0f} MB")
    truth = sum(v for k, v in plain.items() if k.startswith("truth."))
    print(f"  before issue 29 {BEFORE_GB:.2f} GB -> published files {total['published'] / 1e9:.2f} GB "
          f"(truth {truth / 1e9:.2f} GB at its declared precision) -> compressed variants "
          f"{total['compressed'] / 1e9:.2f} GB  [target <= {TARGET_GB} GB]")
    return {"frames": observed, "published": plain, "compressed": packed, "total": total, "before_gb": BEFORE_GB}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10, help="camera frames observed (scaled to 200)")
    run(parser.parse_args().frames)


if __name__ == "__main__":
    main()
