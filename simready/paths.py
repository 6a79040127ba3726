"""Where the project's inputs and outputs live.

Inputs (hand-authored, in git) are under ``data/``; generated artifacts go to
``artifacts/`` (git-ignored) unless ``SIMREADY_ARTIFACTS`` points elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("SIMREADY_DATA", PROJECT_ROOT / "data"))
TEMPLATES_DIR = DATA_DIR / "templates"
CATALOG_DIR = DATA_DIR / "catalog"
CATALOG_CONTRACTS_DIR = CATALOG_DIR / "contracts"
CATALOG_GENERATED_DIR = CATALOG_DIR / "generated"
#: The suite the DAG materializes (``SIMREADY_SUITE`` selects another, e.g. a small one in a deployment's tests).
SUITE_FILE = Path(os.environ.get("SIMREADY_SUITE", DATA_DIR / "suites" / "default.yaml"))
ONTOLOGY_FILE = DATA_DIR / "ontology.yaml"
SCHEMAS_DIR = DATA_DIR / "schemas"


def artifacts_dir() -> Path:
    """Root of generated artifacts; read at call time so tests can redirect it.

    Only the artifact store reads it (:meth:`simready.store.LocalStore.from_environment`); everything else
    reaches artifacts through a store.
    """
    return Path(os.environ.get("SIMREADY_ARTIFACTS", PROJECT_ROOT / "artifacts"))


def artifacts_url() -> str | None:
    """Where a browser loads the artifacts folder from (``SIMREADY_ARTIFACTS_URL``, e.g. the server ``make ui``
    starts beside the Dagster UI), read at call time; None when they are only files on this machine."""
    return os.environ.get("SIMREADY_ARTIFACTS_URL") or None


def portable(path: str | os.PathLike[str]) -> str:
    """``path`` as an artifact records it: relative to the project root when it lies under it (``data/…``), so a
    record is the same bytes in every checkout and on every worker (a release's hash with it); else as given."""
    resolved = Path(path).resolve()
    return resolved.relative_to(PROJECT_ROOT).as_posix() if resolved.is_relative_to(PROJECT_ROOT) else str(path)
