"""Where the project's inputs and outputs live.

Inputs (hand-authored, in git) are under ``data/``; generated artifacts go to
``artifacts/`` (git-ignored) unless ``SIMREADY_ARTIFACTS`` points elsewhere.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from simready.common.errors import SimreadyError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("SIMREADY_DATA", PROJECT_ROOT / "data"))
TEMPLATES_DIR = DATA_DIR / "templates"
CATALOG_DIR = DATA_DIR / "catalog"
CATALOG_CONTRACTS_DIR = CATALOG_DIR / "contracts"
CATALOG_GENERATED_DIR = CATALOG_DIR / "generated"
#: The suite the DAG materializes (``SIMREADY_SUITE`` selects another, e.g. a small one in a deployment's tests).
SUITE_FILE = Path(os.environ.get("SIMREADY_SUITE", DATA_DIR / "suites" / "default.yaml"))
ONTOLOGY_FILE = DATA_DIR / "ontology.yaml"
SCHEMAS_DIR = DATA_DIR / "schemas"


def artifacts_dir(*, must_exist: bool = False) -> Path:
    """Root of generated artifacts; read at call time so tests can redirect it.

    Only the artifact store reads it (:meth:`simready.store.local.LocalStore.from_environment`); everything else
    reaches artifacts through a store. One line (:class:`SimreadyError` on ``SIMREADY_ARTIFACTS``) when it is
    set empty, names a file, a dangling symbolic link or a link loop, or (``must_exist``: a command that only
    reads artifacts) a folder that does not exist, rather than reading an empty store or the current folder.
    """
    value = os.environ.get("SIMREADY_ARTIFACTS")
    if value is None:
        root = PROJECT_ROOT / "artifacts"
    elif not value.strip():
        raise SimreadyError("SIMREADY_ARTIFACTS", "", "set but empty; name the artifacts folder or unset it")
    else:
        root = Path(value)
    try:
        os.stat(root)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SimreadyError("SIMREADY_ARTIFACTS", "", f"{root} is a symbolic link loop") from None
        if root.is_symlink():
            raise SimreadyError("SIMREADY_ARTIFACTS", "", f"{root} is a symbolic link to nothing") from None
        if exc.errno == errno.ENOTDIR:
            raise SimreadyError("SIMREADY_ARTIFACTS", "", f"{root} lies under a file, not a folder") from None
        if must_exist or exc.errno != errno.ENOENT:
            raise SimreadyError("SIMREADY_ARTIFACTS", "", f"{root} does not exist ({exc.strerror}); "
                                "materialize the assets (make run) or name the artifacts folder") from None
        return root
    if not root.is_dir():
        raise SimreadyError("SIMREADY_ARTIFACTS", "", f"{root} is a file; name the artifacts folder")
    return root


def artifacts_url() -> str | None:
    """Where a browser loads the artifacts folder from (``SIMREADY_ARTIFACTS_URL``, e.g. the server ``make ui``
    starts beside the Dagster UI), read at call time; None when they are only files on this machine."""
    return os.environ.get("SIMREADY_ARTIFACTS_URL") or None


def portable(path: str | os.PathLike[str]) -> str:
    """``path`` as an artifact records it: relative to the project root when it lies under it (``data/…``), so a
    record is the same bytes in every checkout and on every worker (a release's hash with it); else as given."""
    resolved = Path(path).resolve()
    return resolved.relative_to(PROJECT_ROOT).as_posix() if resolved.is_relative_to(PROJECT_ROOT) else str(path)


def dagster_home() -> Path:
    """The instance's folder: ``DAGSTER_HOME`` (made if missing), else ``.dagster_home`` in the project (and set
    so). One line (:class:`SimreadyError`) when it is empty, relative, a file, or cannot be made."""
    value = os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / ".dagster_home"))
    home = Path(value)
    if not value.strip() or not home.is_absolute():
        raise SimreadyError("DAGSTER_HOME", "", f"{value!r} is not an absolute folder path (Dagster needs one)")
    if home.exists() and not home.is_dir():
        raise SimreadyError("DAGSTER_HOME", "", f"{home} is not a folder; name a folder for the Dagster instance")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SimreadyError("DAGSTER_HOME", "", f"cannot make the folder {home}: {exc.strerror}") from None
    return home
