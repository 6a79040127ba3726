"""Asset checks for the measurement stage: files intact, parity with the trace, every frame complete."""

import json
from collections import defaultdict
from pathlib import Path

import dagster as dg

from simready.assets.partitions import sample_partitions
from simready.assets.scenario import batch_sample_dirs
from simready.hashing import file_sha256
from simready.layout import ObservationDir
from simready.records import Results
from simready.resources import ArtifactStore


def _obs_dirs(context, store: ArtifactStore) -> list[Path]:
    """Every observation folder of the batch: each sample's base, its branches and its dry sibling."""
    from simready.measurement.batch import observation_dirs

    return [obs for d in batch_sample_dirs(context, store) for obs in observation_dirs(d).values()]


def missing_or_corrupt(obs: Path) -> list[str]:
    """Files listed in results.json that are absent or whose sha256 differs."""
    folder = ObservationDir(obs)
    bad = []
    for f in Results.read(folder.results).files:
        path = folder.file(f.path)
        if not path.exists():
            bad.append(f"{path}: missing")
        elif file_sha256(str(path)) != f.sha256:
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


@dg.asset_check(asset="sensor_observations", partitions_def=sample_partitions, blocking=True,
                description="Every file in results.json exists with its sha256, and every camera frame has all its passes.")
def observations_complete(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    problems = []
    for obs in _obs_dirs(context, store):
        problems += missing_or_corrupt(obs) + incomplete_frames(obs)
    return dg.AssetCheckResult(passed=not problems, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"problems": dg.MetadataValue.json(problems[:20]), "count": len(problems)})


@dg.asset_check(asset="sensor_observations", partitions_def=sample_partitions, blocking=True,
                description="Observed poses match the trace within the declared parity tolerance.")
def observations_parity(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    worst_m, worst_rad, failed = 0.0, 0.0, []
    for obs in _obs_dirs(context, store):
        p = json.loads(ObservationDir(obs).parity.read_text())
        worst_m, worst_rad = max(worst_m, p["max_position_error_m"]), max(worst_rad, p["max_angle_error_rad"])
        if not p["passed"]:
            failed.append(str(obs))
    return dg.AssetCheckResult(passed=not failed, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"max_position_error_m": worst_m, "max_angle_error_rad": worst_rad,
                                         "failed": dg.MetadataValue.json(failed)})
