"""Dagster resources and executor, chosen by deployment in one place (``SIMREADY_DEPLOYMENT``).

The store itself is :mod:`simready.store`'s: :func:`~simready.store.deployment.artifact_store`
opens the deployment's store, and :class:`ArtifactStore` only wraps it for Dagster (a resource, and a
store's failure as a step's one-line failure).

``local`` (the embedded default): inputs from the project's ``data/`` folder,
artifacts in a :class:`~simready.store.local.LocalStore` under ``artifacts/`` (or
``SIMREADY_ARTIFACTS``), steps in the run's own process.

``production`` (issue 15, ``docs/deploy.md``): artifacts in S3
(:class:`~simready.store.s3.S3Store`, bucket and prefix from ``SIMREADY_S3_BUCKET`` and
``SIMREADY_S3_PREFIX``), step outputs through dagster-aws's S3 pickle IO
manager, and every step on a Celery worker (dagster-celery, Redis broker) that
shares no disk with the run; the instance (``deploy/production/dagster.yaml``)
keeps runs, events and schedules in Postgres and compute logs in S3. What the
deployment needs is checked when the definitions load: a missing variable or
a server that does not answer is one line naming it and how to set it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import dagster as dg
from pydantic import PrivateAttr

from simready.common import paths
from simready.common.errors import StoreError
from simready.artifacts.layout import ArtifactLayout
from simready.store import Key, LocalStore, Store
from simready.store.deployment import PRODUCTION_ENV, DeploymentError, artifact_store, deployment_name, s3_settings


def _one_line_failures(method):
    """A store that cannot reach its objects fails the step with the store's one line (the object and the
    endpoint), not with a traceback from inside boto3; the step may be retried (its RetryPolicy)."""

    @functools.wraps(method)
    def reach(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except StoreError as exc:
            raise dg.Failure(description=exc.one_line(), allow_retries=True) from None

    return reach


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
        return LocalStore(self.root) if self.root else artifact_store("local")

    @property
    def layout(self) -> ArtifactLayout:
        return ArtifactLayout(Path())

    @_one_line_failures
    def open(self, key: Key) -> BinaryIO:
        return self._store().open(key)

    @_one_line_failures
    def read_bytes(self, key: Key) -> bytes:
        return self._store().read_bytes(key)

    @_one_line_failures
    def write_bytes(self, key: Key, data: bytes) -> None:
        self._store().write_bytes(key, data)

    @_one_line_failures
    def exists(self, key: Key) -> bool:
        return self._store().exists(key)

    @_one_line_failures
    def list(self, prefix: Key = "") -> list[str]:
        return self._store().list(prefix)

    @_one_line_failures
    def copy(self, source: Key, target: Key) -> None:
        self._store().copy(source, target)

    @_one_line_failures
    def url(self, key: Key) -> str:
        return self._store().url(key)

    @_one_line_failures
    def remove(self, key: Key) -> None:
        self._store().remove(key)

    @_one_line_failures
    def local_dir(self, prefix: Key) -> Path:
        return self._store().local_dir(prefix)

    @_one_line_failures
    def local_path(self, key: Key) -> Path:
        return self._store().local_path(key)

    @_one_line_failures
    def share_url(self, key: Key, *, folder: bool = False) -> str | None:
        return self._store().share_url(key, folder=folder)

    @_one_line_failures
    def save(self, prefix: Key) -> None:
        self._store().save(prefix)

    @_one_line_failures
    def publish(self, prefix: Key, staging_dir: Path) -> None:
        self._store().publish(prefix, staging_dir)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        with self._store().scratch() as tmp:
            yield tmp


class S3ArtifactStore(ArtifactStore):
    """The production deployment's store (:func:`~simready.store.deployment.artifact_store`), opened once per
    step: its cache of the folders it brought local lasts the step, and the step's transfers are logged."""

    _opened: Any = PrivateAttr(default=None)

    def _store(self) -> Store:
        if self._opened is None:
            self._opened = artifact_store("production")
        return self._opened

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """Log what the step moved to and from S3 (one JSON line, ``simready-s3 {...}``: bytes, requests, seconds)."""
        if self._opened is not None and context.log is not None:
            context.log.info("simready-s3 " + json.dumps(self._opened.transfer, sort_keys=True))


class SourceData(dg.ConfigurableResource):
    """Hand-authored inputs the DAG reads (templates) and the generated catalog.

    Configurable so that tests (and forks of the data) can point the same
    definitions at another copy of ``data/``.
    """

    templates_dir: str = str(paths.TEMPLATES_DIR)
    catalog_contracts_dir: str = str(paths.CATALOG_CONTRACTS_DIR)
    catalog_generated_dir: str = str(paths.CATALOG_GENERATED_DIR)
    suite_file: str = str(paths.SUITE_FILE)

    def template_file(self, template_id: str) -> Path:
        return Path(self.templates_dir) / f"{template_id}.yaml"


#: Celery settings shared by the executor (the run) and the workers (``simready.resources.celery_app``): a task is
#: acknowledged when it has finished, and given back to the broker when its worker process dies, so a step whose
#: worker is killed runs again on a live one; one task at a time per worker process.
CELERY_CONFIG_SOURCE = {
    "task_acks_late": True,
    "task_reject_on_worker_lost": True,
    "worker_prefetch_multiplier": 1,
    "worker_max_tasks_per_child": 50,
    "broker_connection_retry_on_startup": True,
}


def local_resources() -> dict[str, object]:
    return {"store": ArtifactStore(), "source": SourceData()}


def production_resources() -> dict[str, object]:
    # dagster-aws takes ~1 s to import: only the production deployment pays it.
    from dagster_aws.s3 import S3PickleIOManager, S3Resource

    settings = s3_settings()
    prefix = settings.prefix
    s3 = S3Resource(max_attempts=settings.max_attempts)
    store = S3ArtifactStore()
    # Step outputs (none today: assets return MaterializeResult) under a dot name, which is never an artifact key.
    io_manager = S3PickleIOManager(s3_resource=s3, s3_bucket=dg.EnvVar("SIMREADY_S3_BUCKET"),
                                   s3_prefix=f"{prefix}/.dagster-io" if prefix else ".dagster-io")
    return {"store": store, "source": SourceData(), "io_manager": io_manager}


def resources_for_deployment(name: str | None = None) -> dict[str, object]:
    """Resources for ``SIMREADY_DEPLOYMENT`` (default ``local``)."""
    name = name or deployment_name()
    if name == "local":
        return local_resources()
    check_production()
    return production_resources()


def deployment_store(name: str | None = None) -> ArtifactStore:
    """The deployment's artifact store, typed (:func:`resources_for_deployment`'s ``store``)."""
    store = resources_for_deployment(name)["store"]
    assert isinstance(store, ArtifactStore)
    return store


def deployment_source(name: str | None = None) -> SourceData:
    """The deployment's source files, typed (:func:`resources_for_deployment`'s ``source``)."""
    source = resources_for_deployment(name)["source"]
    assert isinstance(source, SourceData)
    return source


def executor_for_deployment(name: str | None = None) -> dg.ExecutorDefinition:
    """Where a run's steps execute: in the run's process locally; on Celery workers in production."""
    name = name or deployment_name()
    if name == "local":
        return dg.in_process_executor
    from dagster_celery import celery_executor  # production only: dagster-celery off the definitions' load

    return celery_executor.configured(
        {"broker": {"env": "SIMREADY_CELERY_BROKER"}, "backend": {"env": "SIMREADY_CELERY_BROKER"},
         "config_source": CELERY_CONFIG_SOURCE, "retries": {"enabled": {}}},
        name="simready_celery",
    )


def check_production(timeout_s: float = 3.0) -> None:
    """Every setting the production deployment needs is set and every server it names answers; else one line."""
    for var, what in PRODUCTION_ENV.items():
        if not os.environ.get(var):
            raise DeploymentError(var, "", f"not set; the production deployment needs {what}")
    _check_postgres(os.environ["SIMREADY_POSTGRES_URL"], timeout_s)
    _check_broker(os.environ["SIMREADY_CELERY_BROKER"], timeout_s)
    _check_bucket(os.environ["SIMREADY_S3_BUCKET"], timeout_s)


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        parts = parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@"))
    return parts.geturl()


def _check_postgres(url: str, timeout_s: float) -> None:
    import psycopg2  # production only: psycopg2 off the definitions' load

    try:
        # SQLAlchemy (which Dagster's storage uses) names the driver in the scheme; libpq takes the plain URL.
        psycopg2.connect(url.replace("postgresql+psycopg2://", "postgresql://", 1),
                         connect_timeout=max(1, round(timeout_s))).close()
    except psycopg2.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DeploymentError("SIMREADY_POSTGRES_URL", "", f"Postgres at {_redacted(url)} refused or did not answer "
                              f"({reason}); start it or set SIMREADY_POSTGRES_URL") from exc


def _check_broker(url: str, timeout_s: float) -> None:
    import redis  # production only: redis off the definitions' load

    try:
        redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s).ping()
    except (redis.RedisError, ValueError) as exc:
        raise DeploymentError("SIMREADY_CELERY_BROKER", "", f"the Celery broker at {_redacted(url)} did not answer "
                              f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); start it or set "
                              "SIMREADY_CELERY_BROKER") from exc


def _check_bucket(bucket: str, timeout_s: float) -> None:
    from simready.store.s3 import S3Store, check_bucket, s3_client  # production only: boto3 off the definitions' load

    client = s3_client(max(1, round(timeout_s)), max_attempts=1)
    try:
        check_bucket(S3Store(client, bucket))
    except StoreError as exc:
        raise DeploymentError("SIMREADY_S3_BUCKET", "", exc.one_line()) from exc
