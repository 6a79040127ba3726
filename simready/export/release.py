"""Exports of a dataset release (SPEC §17): the release's samples are checked out of the store — every object
verified against its sha256 as it is read (:func:`simready.release.checkout`) — into a scratch folder beside the
artifacts (so a checkout is hard links, not copies), and exported from there.

MCAP: one file per observed sample and branch, ``<split>/<sample>.mcap`` and ``<split>/<sample>.<branch>.mcap``,
and ``foxglove-layout.json`` for them (:mod:`simready.export.foxglove_layout`).
nuScenes: one dataset of every released sample (each base and branch a scene).
"""

from __future__ import annotations

from pathlib import Path

from simready.export.foxglove_layout import LAYOUT_FILE, layout_bytes
from simready.export.mcap_file import McapExport, export_mcap
from simready.export.nuscenes import export_nuscenes
from simready.release import Release, checkout, load_release
from simready.store import Store


def export_release_mcap(store: Store, release: Release, out_dir: Path) -> list[McapExport]:
    """Every observed base and branch of the release as one MCAP file each under ``out_dir``."""
    written = []
    with store.scratch() as scratch:
        for split, sample in checkout(store, release, scratch):
            target = Path(out_dir) / split
            target.mkdir(parents=True, exist_ok=True)
            if sample.observations.results.is_file():
                written.append(export_mcap(sample.root, target / f"{sample.sample_id}.mcap"))
            for obs in sample.branch_observations():
                if obs.results.is_file():
                    label = obs.root.parent.name
                    written.append(export_mcap(sample.root, target / f"{sample.sample_id}.{label}.mcap", branch=label))
    # Foxglove's layout for these files beside them (3-D scene, camera with annotations, plots; issue 28).
    (Path(out_dir) / LAYOUT_FILE).write_bytes(layout_bytes(t for w in written for t in w.messages))
    return written


def export_release_nuscenes(store: Store, release: Release, out_dir: Path) -> dict[str, int]:
    """The release's observed samples as one nuScenes dataset in ``out_dir``; rows per table."""
    with store.scratch() as scratch:
        folders = [s.root for _, s in checkout(store, release, scratch) if s.observations.results.is_file()]
        return export_nuscenes(folders, out_dir)


__all__ = ["export_release_mcap", "export_release_nuscenes", "load_release"]
