"""Release stage: ``dataset_release``, the suite's accepted samples as an immutable, content-addressed snapshot with
its datasheet and QA checklist (SPEC §17); :mod:`simready.checks.release` checks every object still hashes right.

The release is domain code (:mod:`simready.release`); this asset hands it the stages' code versions (the
datasheet's), the sources the replay and restore checks simulate with, and reports what it built.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import dagster as dg

from simready.assets.automation import EAGER
from simready.assets.catalog import CATALOG_CODE_VERSION
from simready.assets.measurement import MEASUREMENT_CODE_VERSION
from simready.assets.metadata import artifact_link, table
from simready.assets.scenario import SCENARIO_CODE_VERSION, scenario_manifests
from simready.assets.simulation import SIM_CODE_VERSION
from simready.assets.stage_io import source_catalog, source_template
from simready.assets.suite import coverage_report, split_assignments
from simready.assets.validity import VALIDITY_CODE_VERSION, validity_reports
from simready.assets.world import TEMPLATES_CODE_VERSION
from simready.release import ReleaseError, build_release
from simready.release.build import DEFAULT_TAG, SPLITS
from simready.resources import ArtifactStore, SourceData
from simready.scenario.suite import load_suite
from simready.sim.core.constants import DEFAULT_BACKEND
from simready.validity.policy import POLICY_VERSION

#: release-1: issue 18 item 5 (release.json, datasheet, checklist; objects by sha256; tag latest).
RELEASE_CODE_VERSION = "release-1"


def stage_versions() -> dict[str, str]:
    """The datasheet's versions: the generator's, the engine's, each stage's code version and the gate's policy."""
    return {"generator": SCENARIO_CODE_VERSION, "simulation": SIM_CODE_VERSION, "engine": DEFAULT_BACKEND,
            "measurement": MEASUREMENT_CODE_VERSION, "validity": VALIDITY_CODE_VERSION, "policy": POLICY_VERSION,
            "templates": TEMPLATES_CODE_VERSION, "catalog": CATALOG_CODE_VERSION, "release": RELEASE_CODE_VERSION}


@dg.asset(
    group_name="suite",
    kinds={"python"},
    deps=[scenario_manifests, validity_reports, split_assignments, coverage_report],
    code_version=RELEASE_CODE_VERSION,
    automation_condition=EAGER,
    description="Immutable, content-addressed snapshot of the accepted samples per split with a datasheet and the "
    "world-trajectory QA checklist; refused when a blocking check fails (SPEC §17). Tagged 'latest'.",
)
def dataset_release(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    suite = load_suite(source.suite_file, source.templates_dir)
    rows = store.read_json(store.layout.split_assignments)["rows"]
    templates = {t: source_template(source, t) for t in sorted({r["template"] for r in rows})}
    try:
        release, results = build_release(store, suite_id=suite.suite_id, versions=stage_versions(), templates=templates,
                                         catalog=source_catalog(source),
                                         backend=DEFAULT_BACKEND)
    except ReleaseError as exc:
        raise dg.Failure(exc.one_line()) from exc
    counts = release.datasheet["counts"]
    folder = store.layout.release(release.hex)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(release.release_id),
        metadata={
            "release": release.release_id,
            "tag": DEFAULT_TAG,
            "files": release.files,
            "gigabytes": round(release.bytes / 1e9, 2),
            "splits": table([{"split": s, **{k: counts[s][k] for k in ("samples", "branches", "weight")}} for s in SPLITS],
                            [("split", "string"), ("samples", "int"), ("branches", "int"), ("weight", "float")]),
            "checklist": table([{"item": i["item"], "passed": i["passed"],
                                 "checks": "; ".join(f"{c['check']} {c['result']}"
                                                     f"{'' if c['blocking'] else ' (scored, not required)'}"
                                                     for c in i["checks"])}
                                for i in release.checklist],
                               [("item", "string"), ("passed", "bool"), ("checks", "string")]),
            "checks_evaluated": len(results),
            "datasheet": artifact_link(store, folder.datasheet_html),  # the Markdown beside it: datasheet.md
            "record": artifact_link(store, folder.record),
        },
    )
