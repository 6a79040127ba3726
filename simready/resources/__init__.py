"""Dagster resources, chosen by deployment in one place.

``local`` (the embedded default): inputs from the project's ``data/`` folder,
artifacts in a :class:`~simready.store.LocalStore` under ``artifacts/`` (or
``SIMREADY_ARTIFACTS``). Other deployments plug in here.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import dagster as dg

from simready import paths
from simready.layout import ArtifactLayout
from simready.store import Key, LocalStore, Store


class ArtifactStore(dg.ConfigurableResource, Store):
    """The deployment's artifact store as a resource: every asset and check reads and writes artifacts through it.

    Assets name artifacts by key: ``store.layout`` is the layout under an empty
    root, so ``store.layout.batch(t, b).record`` is the key ``samples/<t>/<b>/batch.json``;
    stages that work on files get the local folder of the prefix they work on
    (``local_dir(prefix)``) and ``save`` it when they have written it.

    Attributes:
        root: base folder of all artifacts; empty (the local default) means
            ``SIMREADY_ARTIFACTS`` or ``./artifacts``, read each time the store
            is used — not when the code location is imported — so a run launched
            later in the same process honours the environment it runs in.
    """

    root: str = ""

    def _store(self) -> Store:
        return LocalStore(self.root) if self.root else LocalStore.from_environment()

    @property
    def layout(self) -> ArtifactLayout:
        return ArtifactLayout(Path())

    def open(self, key: Key) -> BinaryIO:
        return self._store().open(key)

    def read_bytes(self, key: Key) -> bytes:
        return self._store().read_bytes(key)

    def write_bytes(self, key: Key, data: bytes) -> None:
        self._store().write_bytes(key, data)

    def exists(self, key: Key) -> bool:
        return self._store().exists(key)

    def list(self, prefix: Key = "") -> list[str]:
        return self._store().list(prefix)

    def url(self, key: Key) -> str:
        return self._store().url(key)

    def remove(self, key: Key) -> None:
        self._store().remove(key)

    def local_dir(self, prefix: Key) -> Path:
        return self._store().local_dir(prefix)

    def save(self, prefix: Key) -> None:
        self._store().save(prefix)

    def publish(self, prefix: Key, staging_dir: Path) -> None:
        self._store().publish(prefix, staging_dir)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        with self._store().scratch() as tmp:
            yield tmp


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
