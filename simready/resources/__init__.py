"""Dagster resources, chosen by deployment in one place.

``local`` (the embedded default): inputs from the project's ``data/`` folder,
artifacts on the local filesystem under ``artifacts/`` (or
``SIMREADY_ARTIFACTS``). Other deployments plug in here.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from simready import paths


class ArtifactStore(dg.ConfigurableResource):
    """Where every asset writes its files; assets address them by relative path.

    Attributes:
        root: base folder of all artifacts; empty (the local default) means
            ``SIMREADY_ARTIFACTS`` or ``./artifacts``, read each time a path is
            made — not when the code location is imported — so a run launched
            later in the same process honours the environment it runs in.
    """

    root: str = ""

    def path(self, *parts: str) -> Path:
        return Path(self.root or paths.artifacts_dir()).joinpath(*parts)

    def ensure_dir(self, *parts: str) -> Path:
        p = self.path(*parts)
        p.mkdir(parents=True, exist_ok=True)
        return p


class SourceData(dg.ConfigurableResource):
    """Hand-authored inputs the DAG reads (templates) and the generated catalog.

    Configurable so that tests (and forks of the data) can point the same
    definitions at another copy of ``data/``.
    """

    templates_dir: str = str(paths.TEMPLATES_DIR)
    catalog_contracts_dir: str = str(paths.CATALOG_CONTRACTS_DIR)
    catalog_generated_dir: str = str(paths.CATALOG_GENERATED_DIR)
    suite_file: str = str(paths.DATA_DIR / "suites" / "default.yaml")

    def template_file(self, template_id: str) -> Path:
        return Path(self.templates_dir) / f"{template_id}.yaml"


def local_resources() -> dict[str, object]:
    return {"store": ArtifactStore(), "source": SourceData()}


def resources_for_deployment(name: str | None = None) -> dict[str, object]:
    """Resources for ``SIMREADY_DEPLOYMENT`` (default ``local``)."""
    name = name or os.environ.get("SIMREADY_DEPLOYMENT", "local")
    if name == "local":
        return local_resources()
    raise ValueError(f"SIMREADY_DEPLOYMENT={name!r} is not a known deployment (known: local)")
