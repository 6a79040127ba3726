"""Asset checks for the suite stage: no lineage leaks across splits (blocking, SPEC §13)."""

import dagster as dg

from simready.assets.suite import split_assignments
from simready.checks.findings import findings
from simready.resources import ArtifactStore
from simready.scenario.splits import SHARED, leakage, load_splits


@dg.asset_check(asset=split_assignments, blocking=True,
                description="No lineage (asset family, checkpoint group) crosses splits; shared families are listed.")
def no_split_leakage(store: ArtifactStore) -> dg.AssetCheckResult:
    rows = store.read_json(store.layout.split_assignments)["rows"]
    config = load_splits()
    shared = {f for f, s in config.families.items() if s == SHARED}
    leaks = leakage(rows, shared)
    return dg.AssetCheckResult(
        passed=not leaks,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"leaks": findings(leaks, key="lineage", column="split"),
                  "shared_families": findings(sorted(shared), column="family"),
                  "samples": len(rows)},
    )
