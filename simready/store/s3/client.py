"""The S3 endpoint as the project talks to it: the one boto3 client factory (:func:`s3_client`, with explicit
time limits and tries, so a stalled endpoint fails a step in seconds rather than hanging it) and how a request
that fails reads (:func:`request`: one line naming the object and the endpoint, never a botocore traceback from
deep in a step)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import boto3
import botocore.config
import botocore.exceptions

from simready.common.errors import StoreError

T = TypeVar("T")


def request(what: str, url: str, bucket: str, where: str, fn: Callable[[], T]) -> T:
    """Run one S3 request ``fn`` (``what``: read, write, …, of the object ``url`` in ``bucket`` at the endpoint
    ``where``): a missing object is :class:`FileNotFoundError` of ``url``; a failure of the endpoint, the bucket or
    the credentials is one :class:`~simready.common.errors.StoreError` line naming the object."""
    try:
        return fn()
    except botocore.exceptions.ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code in ("NoSuchKey", "404", "NotFound"):
            raise FileNotFoundError(url) from exc
        if code == "NoSuchBucket":
            raise StoreError(url, "", f"bucket {bucket!r} does not exist at {where} "
                             "(create it, or set SIMREADY_S3_BUCKET)") from exc
        if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403"):
            raise StoreError(url, "", f"{what} refused by {where}: {code} (check "
                             "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)") from exc
        raise StoreError(url, "", f"{what} failed at {where}: {code or exc}") from exc
    except botocore.exceptions.NoCredentialsError as exc:
        raise StoreError(url, "", "no AWS credentials (set AWS_ACCESS_KEY_ID and "
                         "AWS_SECRET_ACCESS_KEY, or an AWS profile)") from exc
    except (botocore.exceptions.EndpointConnectionError, botocore.exceptions.ConnectTimeoutError,
            botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectionClosedError) as exc:
        raise StoreError(url, "", f"{what} failed: the S3 endpoint {where} did not answer "
                         f"({type(exc).__name__}); is it up? (AWS_ENDPOINT_URL)") from exc
    except botocore.exceptions.BotoCoreError as exc:
        raise StoreError(url, "", f"{what} failed at {where}: {exc}") from exc


def s3_client(timeout_s: int, max_attempts: int, **session: Any) -> Any:
    """A boto3 S3 client with explicit time limits and tries: the one place the project makes one.

    ``session``: ``profile_name`` and the client's own settings (``region_name``, ``endpoint_url``, ``use_ssl``,
    ``verify``, keys); what is not given falls back to boto3's environment (``AWS_ENDPOINT_URL``,
    ``AWS_DEFAULT_REGION``, credentials or a profile). botocore's own 60 s read timeout, with retries, holds a
    reader on a stalled endpoint for minutes."""
    profile = session.pop("profile_name", None)
    session.setdefault("use_ssl", True)
    return boto3.session.Session(profile_name=profile).client(
        "s3", **session, config=botocore.config.Config(connect_timeout=timeout_s, read_timeout=timeout_s,
                                                       retries={"max_attempts": max_attempts, "mode": "standard"}))
