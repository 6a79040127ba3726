"""One bucket under a prefix, object by object (:class:`S3Objects`): artifact keys to object names, each request
counted and its failure named in one line (:mod:`.client`), the raw object I/O (get, put, upload, server-side
copy, delete, list) and parallel transfers; and what this store moved and how long its public calls took
(:func:`timed`), for the figures. No index and no cache here: those are :mod:`.index` and :mod:`.cache`.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from simready.common.errors import StoreError
from simready.store.base import key_parts
from simready.store.s3.client import request

#: Parallel transfers per store (S3 latency, not bandwidth, bounds small objects).
TRANSFER_THREADS = 8

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """One object as a reader sees it: indexed (``sha256`` known) or a lone object (``etag`` only)."""

    key: str
    size: int
    sha256: str | None = None
    etag: str | None = None
    #: The object holding the bytes when it is not ``key`` (a changed object waiting to be copied into place).
    source: str | None = None

    @property
    def location(self) -> str:
        return self.source or self.key


def join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


def timed(method: Callable[..., T]) -> Callable[..., T]:
    """Add the wall time of a public call (not of the calls it makes) to ``store.transfer["seconds"]``."""

    @functools.wraps(method)
    def timed_call(self: S3Objects, *args: Any, **kwargs: Any) -> T:
        depth = self._calls.depth = getattr(self._calls, "depth", 0) + 1
        t0 = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._calls.depth = depth - 1
            if depth == 1:
                with self._lock:
                    self.transfer["seconds"] += time.perf_counter() - t0

    return timed_call


class S3Objects:
    """The objects of one S3 bucket under a prefix, with the transfer figures of the calls made on them.

    Attributes:
        client: a boto3 S3 client (:func:`~.client.s3_client`).
        bucket: the bucket name.
        prefix: the key prefix of this deployment's artifacts inside the bucket ("" for the bucket's root).
        endpoint: the endpoint's URL, for messages (the AWS default when ``None``).
        transfer: what this store moved and how long its calls took (wall time of the outermost call).
    """

    def __init__(self, client: Any, bucket: str, prefix: str = "", endpoint: str | None = None) -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = "/".join(key_parts(prefix, prefix=True))
        self.endpoint = endpoint or getattr(getattr(client, "meta", None), "endpoint_url", None)
        #: What this store moved and how long its calls took (wall time of the outermost call), for the figures.
        self.transfer = {"seconds": 0.0, "bytes_up": 0, "bytes_down": 0, "requests": 0}
        #: Public calls in progress on each thread (a caller may use the store from several threads).
        self._calls = threading.local()
        self._lock = threading.Lock()

    # -- keys and errors -------------------------------------------------------------------------

    def _object(self, key: str) -> str:
        return join(self.prefix, key)

    def _s3_url(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._object(key)}"

    def _call(self, what: str, key: str, fn: Callable[[], T]) -> T:
        """Run one S3 request (counted); a failure of the endpoint or the bucket is one line naming the object."""
        with self._lock:
            self.transfer["requests"] += 1
        return request(what, self._s3_url(key), self.bucket, self._where(), fn)

    @contextlib.contextmanager
    def _about(self, what: str, key: str) -> Iterator[None]:
        """Name the artifact a failing request was for (``what`` of ``key``), beside the object it touched."""
        try:
            yield
        except StoreError as exc:
            target = self._s3_url(key)
            if exc.source == target:
                raise
            raise StoreError(target, "", f"{what} failed at {exc.source}: {exc.reason}") from exc

    def _where(self) -> str:
        return self.endpoint or "AWS S3"

    # -- raw objects -------------------------------------------------------------------------------

    def _get(self, key: str) -> bytes:
        data: bytes = self._call("read", key, lambda: self.client.get_object(Bucket=self.bucket, Key=self._object(key))["Body"].read())
        with self._lock:
            self.transfer["bytes_down"] += len(data)
        return data

    def _put(self, key: str, data: bytes) -> None:
        self._call("write", key, lambda: self.client.put_object(Bucket=self.bucket, Key=self._object(key), Body=data))
        with self._lock:
            self.transfer["bytes_up"] += len(data)

    def _upload(self, key: str, path: Path) -> None:
        self._call("write", key, lambda: self.client.upload_file(str(path), self.bucket, self._object(key)))
        with self._lock:
            self.transfer["bytes_up"] += path.stat().st_size

    def _copy(self, source: str, target: str) -> None:
        self._call("write", target, lambda: self.client.copy_object(
            Bucket=self.bucket, Key=self._object(target), CopySource={"Bucket": self.bucket, "Key": self._object(source)}))

    def _delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            chunk = keys[start:start + 1000]
            self._call("delete", chunk[0], lambda: self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": [{"Key": self._object(k)} for k in chunk], "Quiet": True}))

    def _list_objects(self, prefix: str) -> list[Entry]:
        """Every object under the folder ``prefix`` (hidden ones too), as raw entries."""
        start = self._object(prefix) + "/" if prefix else (self.prefix + "/" if self.prefix else "")
        cut = len(self.prefix) + 1 if self.prefix else 0
        out: list[Entry] = []

        def pages() -> list[dict[str, Any]]:
            paginator = self.client.get_paginator("list_objects_v2")
            return list(paginator.paginate(Bucket=self.bucket, Prefix=start))

        for page in self._call("list", prefix or ".", pages):
            for obj in page.get("Contents", []):
                out.append(Entry(obj["Key"][cut:], obj["Size"], etag=obj["ETag"]))
        return out

    def _parallel(self, fn: Callable[[Any], None], items: list[Any]) -> None:
        """``fn`` on every item, :data:`TRANSFER_THREADS` at a time; the first failure is raised. Once one has failed,
        no item starts: on an endpoint that does not answer, the requests under way all fail together after their
        time limits, and each thread would otherwise start the next item and wait them out again before the failure
        is raised (a step saving a folder to a stalled endpoint failed after two rounds of time limits, not one)."""
        if len(items) <= 1:
            for item in items:
                fn(item)
            return
        failed = threading.Event()

        def unless_failed(item: Any) -> None:
            if failed.is_set():
                return
            try:
                fn(item)
            except BaseException:
                failed.set()
                raise

        with ThreadPoolExecutor(TRANSFER_THREADS) as pool:
            for _ in pool.map(unless_failed, items):
                pass


def check_bucket(store: S3Objects) -> None:
    """Fail in one line when the bucket cannot be reached (wrong endpoint, bucket or credentials)."""
    try:
        store._call("reach the bucket", ".", lambda: store.client.head_bucket(Bucket=store.bucket))
    except FileNotFoundError as exc:
        raise StoreError(f"s3://{store.bucket}", "", f"bucket {store.bucket!r} does not exist at {store._where()} "
                         "(create it, or set SIMREADY_S3_BUCKET)") from exc
