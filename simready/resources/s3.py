"""The production deployment's artifact store resource: artifacts in S3 through dagster-aws's ``S3Resource``.

Its own module because dagster-aws takes about a second to import: the local deployment (and ``simready
status``) never loads it; :func:`simready.resources.production_resources` does.
"""

from __future__ import annotations

import json
from typing import Any

import dagster as dg
from dagster_aws.s3 import S3Resource
from pydantic import PrivateAttr

from simready.deployment import s3_client as deployment_s3_client
from simready.resources import ArtifactStore
from simready.store import Store


class S3ArtifactStore(ArtifactStore):
    """The production store: artifacts in ``s3://<bucket>/<prefix>/`` (:class:`~simready.s3store.S3Store`).

    Attributes:
        s3: dagster-aws's S3 resource (region, endpoint, credentials; unset fields fall back to boto3's
            own environment, e.g. ``AWS_ENDPOINT_URL``).
        bucket: the bucket (``SIMREADY_S3_BUCKET``).
        prefix: the key prefix of this deployment's artifacts (``SIMREADY_S3_PREFIX``).
        timeout_s: connect and read time limit of one S3 request: a stalled endpoint fails the step
            (with the object's name) instead of hanging it.
    """

    s3: S3Resource
    bucket: str
    prefix: str = ""
    timeout_s: int = 30
    _s3store: Any = PrivateAttr(default=None)

    def _store(self) -> Store:
        if self._s3store is None:
            from simready.s3store import S3Store, cache_dir_from_environment

            self._s3store = S3Store(s3_client(self.s3, self.timeout_s), self.bucket, self.prefix,
                                    cache_dir_from_environment(self.bucket))
        return self._s3store

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """Log what the step moved to and from S3 (one JSON line, ``simready-s3 {...}``: bytes, requests, seconds)."""
        if self._s3store is not None and context.log is not None:
            context.log.info("simready-s3 " + json.dumps(self._s3store.transfer, sort_keys=True))


def s3_client(s3, timeout_s: int):
    """A boto3 S3 client from dagster-aws's ``S3Resource`` settings, with explicit time limits
    (:func:`simready.deployment.s3_client`: ``S3Resource.get_client()`` would leave botocore's 60 s read timeout)."""
    return deployment_s3_client(timeout_s, s3.max_attempts, profile_name=s3.profile_name, region_name=s3.region_name,
                                endpoint_url=s3.endpoint_url, use_ssl=s3.use_ssl, verify=s3.verify,
                                aws_access_key_id=s3.aws_access_key_id, aws_secret_access_key=s3.aws_secret_access_key,
                                aws_session_token=s3.aws_session_token)
