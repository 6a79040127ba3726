"""Asset checks for the measurement stage: files intact, parity with the trace, every frame complete."""

import json
from pathlib import Path

import dagster as dg

from simready.assets.partitions import sample_partitions
from simready.assets.stage_io import batch_sample_dirs
from simready.checks.findings import findings
from simready.artifacts.layout import ObservationDir
from simready.measurement.integrity import incomplete_frames, missing_or_corrupt
from simready.resources import ArtifactStore


def _obs_dirs(context, store: ArtifactStore) -> list[Path]:
    """Every observation folder of the batch: each sample's base, its branches and its dry sibling."""
    from simready.measurement.batch import observation_dirs  # definitions stay light: pandas, numba

    return [obs for d in batch_sample_dirs(context, store) for obs in observation_dirs(d).values()]


@dg.asset_check(asset="sensor_observations", partitions_def=sample_partitions, blocking=True,
                description="Every file in results.json exists with its sha256, and every camera frame has all its passes.")
def observations_complete(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    from simready.common.parallel import map_samples  # the folders hashed side by side, one per core

    found = map_samples(lambda obs: missing_or_corrupt(obs) + incomplete_frames(obs), _obs_dirs(context, store))
    problems = [p for folder in found for p in folder]
    return dg.AssetCheckResult(passed=not problems, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"problems": findings(problems[:20], column="problem"), "count": len(problems)})


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
                               # Rounded to 0.1 mm and 1 µrad: finer is the float arithmetic, not the observation.
                               metadata={"max_position_error_m": round(worst_m, 4), "max_angle_error_rad": round(worst_rad, 6),
                                         "failed": findings(failed, column="observation")})
