"""Asset check for the release stage: the latest release verifies (every object hashes as recorded)."""

import dagster as dg

from simready.assets.metadata import table
from simready.assets.release import dataset_release
from simready.release import ReleaseError, load_release, verify_release
from simready.release.build import DEFAULT_TAG
from simready.resources import ArtifactStore


@dg.asset_check(asset=dataset_release, description="Every object of the latest release hashes to its recorded "
                "sha256 and the release's records hash to its id.")
def release_verifies(store: ArtifactStore) -> dg.AssetCheckResult:
    try:
        release = load_release(store, DEFAULT_TAG)
    except ReleaseError as exc:
        return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.ERROR, metadata={"error": exc.one_line()})
    problems = verify_release(store, release)
    return dg.AssetCheckResult(passed=not problems, severity=dg.AssetCheckSeverity.ERROR,
                               metadata={"release": release.release_id, "files": release.files,
                                         "problems": table([{"problem": p} for p in problems[:20]], [("problem", "string")])})
