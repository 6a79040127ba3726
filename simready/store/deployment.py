"""Which deployment is active (``SIMREADY_DEPLOYMENT``) and its artifact store, without Dagster.

The one place that reads the deployment's name and its S3 settings, and the one switch from a deployment to its
store (:func:`artifact_store`): the Dagster resources (:mod:`simready.resources`) wrap the store it opens, and
the command line (``simready release``, ``simready export --release``) opens the same store with it, without
importing Dagster or dagster-aws (about 3 s).

``local``: a :class:`~simready.store.local.LocalStore` (``SIMREADY_ARTIFACTS``, else ``artifacts/``).
``production``: an :class:`~simready.store.s3.S3Store` on ``s3://$SIMREADY_S3_BUCKET/$SIMREADY_S3_PREFIX``,
through boto3's own environment (``AWS_ENDPOINT_URL``, ``AWS_DEFAULT_REGION``, credentials or a profile), with
this process's cache in ``SIMREADY_CACHE``. Reading artifacts needs only the bucket; the code location also
needs Postgres and the broker (:func:`simready.resources.check_production`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from simready.common.errors import SimreadyError
from simready.store.base import Store
from simready.store.local import LocalStore


class DeploymentError(SimreadyError):
    """The deployment cannot start: a setting is missing or a server it names does not answer.
    The source is the environment variable to set."""

    kind = "deployment"


DEPLOYMENTS = ("local", "production")

#: The production deployment's environment: variable -> what it is, for the one-line error when missing.
PRODUCTION_ENV = {
    "SIMREADY_S3_BUCKET": "the S3 bucket of the artifacts, e.g. export SIMREADY_S3_BUCKET=my-simready-artifacts",
    "SIMREADY_POSTGRES_URL": "the Dagster instance's Postgres, e.g. export "
                             "SIMREADY_POSTGRES_URL=postgresql+psycopg2://user:password@host:5432/dagster",
    "SIMREADY_CELERY_BROKER": "the Celery broker the workers listen to, e.g. export "
                              "SIMREADY_CELERY_BROKER=redis://host:6379/0",
}


def deployment_name() -> str:
    name = os.environ.get("SIMREADY_DEPLOYMENT", "local")
    if name not in DEPLOYMENTS:
        raise DeploymentError("SIMREADY_DEPLOYMENT", "", f"{name!r} is not a deployment (known: {', '.join(DEPLOYMENTS)})")
    return name


@dataclass(frozen=True)
class S3Settings:
    """The production store's settings from the environment.

    Attributes:
        bucket: ``SIMREADY_S3_BUCKET``.
        prefix: ``SIMREADY_S3_PREFIX`` ("" for the bucket's root).
        timeout_s: ``SIMREADY_S3_TIMEOUT_S`` (default 30): connect and read limit of one request.
        max_attempts: ``SIMREADY_S3_MAX_ATTEMPTS`` (default 3): tries of one request.
    """

    bucket: str
    prefix: str
    timeout_s: int
    max_attempts: int


def _positive_int(var: str, default: int) -> int:
    text = os.environ.get(var, str(default))
    if not text.isdigit() or int(text) < 1:
        raise DeploymentError(var, "", f"{text!r} is not a positive whole number")
    return int(text)


def s3_settings(*, bucket_required: bool = True) -> S3Settings:
    """The S3 settings; a missing bucket (when required) or a bad number is one line naming the variable."""
    bucket = os.environ.get("SIMREADY_S3_BUCKET", "")
    if bucket_required and not bucket:
        raise DeploymentError("SIMREADY_S3_BUCKET", "", f"not set; the production deployment needs "
                              f"{PRODUCTION_ENV['SIMREADY_S3_BUCKET']}")
    return S3Settings(bucket, os.environ.get("SIMREADY_S3_PREFIX", ""), _positive_int("SIMREADY_S3_TIMEOUT_S", 30),
                      _positive_int("SIMREADY_S3_MAX_ATTEMPTS", 3))


def artifact_store(name: str | None = None, *, must_exist: bool = False) -> Store:
    """The artifact store of the deployment ``name`` (default: ``SIMREADY_DEPLOYMENT``), as a plain store.
    ``must_exist``: the caller only reads (a local artifacts folder that does not exist is one line)."""
    name = name or deployment_name()
    if name == "local":
        return LocalStore.from_environment(must_exist=must_exist)
    # boto3 takes about a second to import: only the production deployment pays it.
    from simready.store.s3 import S3Store, cache_dir_from_environment, s3_client

    s = s3_settings()
    return S3Store(s3_client(s.timeout_s, s.max_attempts), s.bucket, s.prefix, cache_dir_from_environment(s.bucket))
