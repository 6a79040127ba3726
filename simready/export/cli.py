"""``simready export mcap`` (one observed sample, or one of its branches, as an MCAP file for Foxglove) and
``simready export nuscenes`` (observed samples as a nuScenes dataset); either from a dataset release
(``--release TAG``, :mod:`simready.export.release`) instead of sample folders.

Registered by :mod:`simready.cli` through :func:`register`; the export's imports stay inside the handler so
``simready --help`` does not load them. ``--out`` follows :mod:`simready.common.outdir`: checked and locked before the
work, written to a temporary sibling and published by one hard link (a file) or one rename (a folder) when
complete.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from simready.common.errors import SimreadyError
from simready.common.outdir import output_file, output_folder
from simready.store.deployment import artifact_store


def _source(args: argparse.Namespace, samples: object) -> None:
    """Exactly one of sample folders and ``--release``: one line otherwise."""
    if bool(samples) == bool(args.release):
        raise SimreadyError("simready export", "--release", "give sample folder(s) or --release TAG, not both or neither")


def _release(args: argparse.Namespace, fmt: str) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.export.release import export_release_mcap, export_release_nuscenes, load_release

    started = time.perf_counter()
    store = artifact_store(must_exist=True)
    release = load_release(store, args.release)
    with output_folder(Path(args.out)) as staged:
        if fmt == "mcap":
            files = export_release_mcap(store, release, staged)
            what = f"{len(files)} MCAP files, {sum(f.bytes for f in files) / 1e6:.1f} MB"
        else:
            rows = export_release_nuscenes(store, release, staged)
            what = f"nuScenes, {rows['scene']} scenes, {rows['sample']} samples, {rows['sample_annotation']} annotations"
    print(f"{args.out}: release {release.release_id[:19]} ({args.release}), {what}; {time.perf_counter() - started:.1f} s")
    return 0


def _mcap(args: argparse.Namespace) -> int:
    _source(args, args.sample_dir)
    if args.release:
        if args.branch:
            raise SimreadyError("simready export mcap", "--branch", "a release exports every branch; drop --branch")
        return _release(args, "mcap")
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.export.mcap_file import export_mcap

    started = time.perf_counter()
    with output_file(Path(args.out)) as staged:
        result = export_mcap(args.sample_dir, staged, branch=args.branch)
    total = sum(result.messages.values())
    print(f"{args.out}: {total} messages on {len(result.messages)} topics, {result.bytes / 1e6:.1f} MB, "
          f"{(result.end_ns - result.start_ns) / 1e9:.2f} s of scenario time; {time.perf_counter() - started:.1f} s")
    return 0


def _nuscenes(args: argparse.Namespace) -> int:
    _source(args, args.sample_dirs)
    if args.release:
        return _release(args, "nuscenes")
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.export.nuscenes import VERSION, export_nuscenes

    started = time.perf_counter()
    with output_folder(Path(args.out)) as staged:
        rows = export_nuscenes(args.sample_dirs, staged)
    print(f"{args.out}: nuScenes {VERSION}, {rows['scene']} scenes, {rows['sample']} samples, "
          f"{rows['sample_data']} sample_data, {rows['sample_annotation']} annotations; "
          f"{time.perf_counter() - started:.1f} s")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = subparsers.add_parser("export", help="exports of observed samples (MCAP for Foxglove, nuScenes)")
    formats = export.add_subparsers(dest="action", required=True)
    mcap = formats.add_parser(
        "mcap", help="one sample's observations, boxes, transforms and events as MCAP with Foxglove schemas",
        description="Write one MCAP file of a sample folder's observations (or of one of its branches'); or, with "
                    "--release, one file per observed sample and branch of a dataset release into a new folder "
                    "(<split>/<sample>.mcap, <split>/<sample>.<branch>.mcap).")
    mcap.add_argument("sample_dir", nargs="?", help="a sample folder (manifest.json, trace.parquet, observations/)")
    mcap.add_argument("--branch", default=None, metavar="LABEL", help="export the branch's observations instead")
    mcap.add_argument("--release", default=None, metavar="TAG",
                      help="export a dataset release (a tag such as latest, or its sha256 id) instead of a sample folder")
    mcap.add_argument("--out", required=True,
                      help="the MCAP file to write (must not exist); with --release, a new or empty folder")
    mcap.set_defaults(handler=_mcap)
    nusc = formats.add_parser(
        "nuscenes", help="observed samples (each with its branches) as a nuScenes dataset the devkit loads",
        description="Write a nuScenes v1.0 dataset (tables, camera JPEGs, LiDAR .pcd.bin, radar .pcd) of sample "
                    "folders, or of a dataset release's samples (--release), into a new or empty folder.")
    nusc.add_argument("sample_dirs", nargs="*", metavar="SAMPLE_DIR", help="sample folders")
    nusc.add_argument("--release", default=None, metavar="TAG",
                      help="export a dataset release (a tag such as latest, or its sha256 id) instead of sample folders")
    nusc.add_argument("--out", required=True, help="output folder (must be new or empty)")
    nusc.set_defaults(handler=_nuscenes)
