"""``simready sense``: observe a trace with a rig and write the SPEC §10 layout.

Registered by :mod:`simready.cli` through :func:`register`; imports stay
inside the handler so ``simready --help`` does not load the measurement stack.
``--out`` follows :mod:`simready.common.outdir`: checked and locked before the work,
published by one rename when complete.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simready.common.outdir import output_folder


def _sense(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from tqdm import tqdm

    from simready.measurement.inputs import observe_files  # --help stays light: pandas, numba

    def bar(total: int) -> tqdm:
        return tqdm(total=total, unit="sample", desc="sense", disable=args.quiet, file=sys.stderr)

    out = Path(args.out)
    with output_folder(out) as tmp:
        result = observe_files(args.trace, args.manifest, tmp, rig_spec=args.rig, passes=args.passes,
                               overrides=args.set or [], lidar_format=args.lidar_format,
                               depth_format=args.depth_format, lidar_time=args.lidar_time == "on",
                               video=not args.no_video, compressed=args.compressed,
                               from_s=args.from_s, until_s=args.until, progress=bar)
    frames = ", ".join(f"{n} {k}" for n, k in sorted(result.frames.items()))
    print(f"{out}: {result.files} files; {frames}; {result.timings_s['total']:.1f} s, "
          f"peak {result.peak_rss_mb:.0f} MiB")
    for warning in result.render.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    sense = subparsers.add_parser(
        "sense", help="observe a trace: camera, LiDAR, radar and perception truth (SPEC §10, §11)",
        description="Render every sensor of the rig over the trace into a new or empty folder.")
    sense.add_argument("trace", help="trace file (Parquet, SPEC §7)")
    sense.add_argument("--manifest", required=True, help="the sample's scenario manifest (JSON)")
    sense.add_argument("--out", required=True, help="output folder (must be new or empty)")
    sense.add_argument("--rig", default=None,
                       help="template id, template file or rig file (default: the manifest's template's rig)")
    sense.add_argument("--passes", default=None,
                       help="comma-separated subset of rgb,depth,id,semantic,lidar,radar,truth (default: all)")
    sense.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="override a rig setting, e.g. lens.distortion=0 or front_camera.width_px=640; "
                            "noise=off turns every stochastic sensor effect off (repeatable)")
    sense.add_argument("--lidar-format", choices=("ascii", "binary", "ascii.zst", "binary.zst"), default="ascii",
                       help="PLY encoding (ascii as SPEC §10; binary little-endian is faster; .zst: the same PLY "
                            "as <tick>.ply.zst, one zstd frame)")
    sense.add_argument("--depth-format", choices=("f32", "f32.zst"), default="f32",
                       help="depth.f32.bin as SPEC 10 publishes it (default) or the lossless compressed "
                            "depth.f32.bin.zst (byte planes + zstd, ~15x smaller; the exports read both)")
    sense.add_argument("--compressed", action="store_true",
                       help="each published file's lossless compressed variant: depth.f32.bin.zst, <tick>.ply.zst "
                            "and PNGs at zlib level 6 (the exports, review pages and releases read both)")
    sense.add_argument("--lidar-time", choices=("on", "off"), default="on",
                       help="each LiDAR point's firing time t (s since the sweep's sampleTime) as a PLY column "
                            "(default on, SPEC §10)")
    sense.add_argument("--from", dest="from_s", type=float, default=None, metavar="SECONDS",
                       help="observe only samples that start at or after this time (ticks keep their numbers)")
    sense.add_argument("--until", type=float, default=None, metavar="SECONDS",
                       help="observe only samples that end by this time")
    sense.add_argument("--no-video", action="store_true", help="skip the review videos")
    sense.add_argument("--quiet", action="store_true", help="no progress bar")
    sense.set_defaults(handler=_sense)
