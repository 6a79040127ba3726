"""``certified_assets``: the asset catalog entries that passed the asset contract."""
# No `from __future__ import annotations` here: Dagster inspects the context annotation at runtime.

from pathlib import Path

import dagster as dg

from simready.assets.inputs import catalog_contracts
from simready.assets.metadata import artifact_link, table
from simready.resources import ArtifactStore, SourceData

CATALOG_CODE_VERSION = "catalog-1"


@dg.asset(
    group_name="world",
    kinds={"python"},
    deps=[catalog_contracts],
    code_version=CATALOG_CODE_VERSION,
    description="Procedural asset catalog, generated from data/catalog/contracts and certified (SPEC §4).",
)
def certified_assets(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    from simready.catalog.build import build_certified_catalog  # definitions stay light: trimesh, USD

    build = build_certified_catalog(
        store.local_dir(store.layout.catalog_dir), Path(source.catalog_contracts_dir), Path(source.catalog_generated_dir)
    )
    store.save(store.layout.catalog_dir)
    rows = [
        {"id": e["id"], "passed": e["passed"], "reasons": "; ".join(r["message"] for r in e["reasons"])}
        for e in build.report["entries"]
    ]
    context.log.info(f"{build.report['n_passed']}/{build.report['n_entries']} catalog entries certified")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(build.data_version),
        metadata={
            "entries": build.report["n_entries"],
            "certified": build.report["n_passed"],
            "report": artifact_link(store, store.layout.certification),
            "dvc_md5": build.report["dvc_md5"] or "(no dvc.lock)",
            "certification": table(rows, [("id", "string"), ("passed", "bool"), ("reasons", "string")]),
        },
    )
