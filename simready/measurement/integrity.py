"""Whether an observation folder is whole: every file ``results.json`` lists is there with its sha256, and every
camera frame has each pass ``render.json`` says was rendered.

Plain functions over the folder, so that the measurement stage's asset check and a dataset release
(:mod:`simready.release`) prove the same thing the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from simready.common.hashing import file_sha256
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import Results


def missing_or_corrupt(obs: Path, hashes: Mapping[str, str] | None = None) -> list[str]:
    """Files listed in results.json that are absent or whose sha256 differs.

    ``hashes``: the sha256 of the folder's files by their name in it, where the caller has hashed them already
    (a release hashes every file it stores); the files are hashed here otherwise
    (:func:`~simready.common.hashing.file_sha256`: a file version this process hashed or wrote already, or learned
    from the workers that wrote it, is not read again).
    """
    folder = ObservationDir(obs)
    bad = []
    listed = Results.read(folder.results).files
    for f, path in zip(listed, folder.files(f.path for f in listed)):
        if not path.exists():
            bad.append(f"{path}: missing")
        elif (hashes[f.path] if hashes is not None and f.path in hashes else file_sha256(str(path))) != f.sha256:
            bad.append(f"{path}: sha256 differs from results.json")
    return bad


def incomplete_frames(obs: Path) -> list[str]:
    """Camera frames lacking one of the passes render.json says were rendered."""
    results = Results.read(ObservationDir(obs).results)
    cameras = set(results.cameras)
    wanted = set(results.passes) & {"rgb", "depth", "id", "semantic"}
    have: dict[tuple[str, int], set[str]] = defaultdict(set)
    for f in results.files:
        if f.sensor in cameras and f.tick is not None:
            have[(f.sensor, f.tick)].add(f.pass_name)
    return [f"{obs}: {cam} tick {tick} lacks {sorted(wanted - p)}" for (cam, tick), p in sorted(have.items()) if wanted - p]
