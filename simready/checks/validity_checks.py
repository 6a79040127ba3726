"""Asset checks for the validity stage: leakage (blocking) and GX suites on tabular artifacts."""

import json

import dagster as dg

from simready.assets.validity import split_assignments
from simready.resources import ArtifactStore
from simready.scenario.splits import SHARED, load_splits


def leakage(rows: list[dict], shared_families: set[str]) -> dict[str, list[str]]:
    """Lineage keys (non-shared family, base template if pinned, checkpoint group) that cross splits."""
    seen: dict[str, set[str]] = {}
    for r in rows:
        keys = [f"checkpoint:{r['checkpoint_group']}"]
        keys += [f"family:{f}" for f in r["families"] if f not in shared_families]
        for k in keys:
            seen.setdefault(k, set()).add(r["split"])
    return {k: sorted(v) for k, v in sorted(seen.items()) if len(v) > 1}


@dg.asset_check(asset=split_assignments, blocking=True,
                description="No lineage (asset family, checkpoint group) crosses splits; shared families are listed.")
def no_split_leakage(store: ArtifactStore) -> dg.AssetCheckResult:
    rows = json.loads(store.path("splits", "split_assignments.json").read_text())["rows"]
    config = load_splits()
    shared = {f for f, s in config.families.items() if s == SHARED}
    leaks = leakage(rows, shared)
    return dg.AssetCheckResult(
        passed=not leaks,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"leaks": dg.MetadataValue.json(leaks), "shared_families": dg.MetadataValue.json(sorted(shared)),
                  "samples": len(rows)},
    )
