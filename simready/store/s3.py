"""Artifacts in S3: the production deployment's :class:`~simready.store.base.Store` (issue 15).

Same keys and bytes as :class:`~simready.store.local.LocalStore`; an artifact key ``k``
is the object ``s3://<bucket>/<prefix>/k``.

**Publication is atomic per folder.** A stage writes a folder (a batch, a
template, a reference pool) locally, then :meth:`S3Store.save` uploads the
files that changed and writes the folder's *index* last: the object
``<folder>/.index.json`` listing every file of the folder with its sha256 and
size. Readers trust only the index: a file under an indexed folder that the
index does not list does not exist for them (it is the debris of a step that
failed before its index was written), and a file whose bytes do not hash to
the index's sha256 is an :class:`~simready.common.errors.IntegrityError`. So a step
killed half-way through an upload leaves the previous index — the previous,
complete folder — in place. Single objects written with :meth:`write_bytes`
are atomic by S3's own semantics (a PUT is all or nothing); one written into an
indexed folder is added to that folder's index after its PUT.

**Workers share no disk.** Every process keeps a private local cache
(``cache_dir``); :meth:`S3Store.local_dir` brings a folder's indexed objects
into it (only those whose bytes it does not already hold) and removes cached
files the index no longer lists, so a stage sees exactly the published folder.

Network failures become one line naming the object and the endpoint
(:class:`~simready.common.errors.StoreError`), never a botocore traceback from deep in
a step; the client's time limits are explicit so a stalled endpoint fails a
step in seconds rather than hanging it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import quote

import boto3
import botocore.config
import botocore.exceptions

from simready.common.atomic import owned_temp, write_bytes_atomic
from simready.common.errors import IntegrityError, StoreError
from simready.common.hashing import file_sha256, sha256_bytes
from simready.store.base import Key, Store, key_parts

#: The index object of an indexed folder (hidden: a dot name is the store's own, never an artifact).
INDEX_NAME = ".index.json"
INDEX_FORMAT = "simready-index-1"
#: Where a changed object waits (hidden, under its folder) until the index that points at it is written.
PENDING = ".pending"
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


#: (path, size, mtime_ns) -> sha256 of files this process has hashed or written, so a cache is not re-hashed.
_KNOWN: dict[tuple[str, int, int], str] = {}


def _cached_sha(path: Path) -> str:
    st = path.stat()
    memo = (str(path), st.st_size, st.st_mtime_ns)
    sha = _KNOWN.get(memo)
    if sha is None:
        sha = _KNOWN[memo] = file_sha256(str(path))
    return sha


def _remember(path: Path, sha: str) -> None:
    st = path.stat()
    _KNOWN[(str(path), st.st_size, st.st_mtime_ns)] = sha


def _timed(method: Callable[..., T]) -> Callable[..., T]:
    """Add the wall time of a public call (not of the calls it makes) to ``store.transfer["seconds"]``."""

    @functools.wraps(method)
    def timed(self: S3Store, *args: Any, **kwargs: Any) -> T:
        depth = self._calls.depth = getattr(self._calls, "depth", 0) + 1
        t0 = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._calls.depth = depth - 1
            if depth == 1:
                with self._lock:
                    self.transfer["seconds"] += time.perf_counter() - t0

    return timed


def _indexed(folder: str, rel: str, meta: dict[str, Any]) -> Entry:
    at = meta.get("at")
    return Entry(_join(folder, rel), int(meta["size"]), sha256=meta["sha256"], source=_join(folder, at) if at else None)


def _hidden(rel: str) -> bool:
    return any(p.startswith(".") for p in rel.split("/"))


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


class S3Store(Store):
    """Artifacts as objects of one S3 bucket under a prefix, with a local cache per process.

    Attributes:
        client: a boto3 S3 client (:func:`s3_client`).
        bucket: the bucket name.
        prefix: the key prefix of this deployment's artifacts inside the bucket ("" for the bucket's root).
        cache_dir: this process's local cache folder.
        endpoint: the endpoint's URL, for messages (the AWS default when ``None``).
    """

    def __init__(self, client: Any, bucket: str, prefix: str = "", cache_dir: str | Path | None = None,
                 endpoint: str | None = None) -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = "/".join(key_parts(prefix, prefix=True))
        self.cache_dir = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "simready-cache" / bucket
        self.endpoint = endpoint or getattr(getattr(client, "meta", None), "endpoint_url", None)
        #: Folders brought into the cache by this store: a stage's writes there are not undone by another sync.
        self._synced: set[tuple[str, ...]] = set()
        #: What this store moved and how long its calls took (wall time of the outermost call), for the figures.
        self.transfer = {"seconds": 0.0, "bytes_up": 0, "bytes_down": 0, "requests": 0}
        #: Public calls in progress on each thread (a caller may use the store from several threads).
        self._calls = threading.local()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"S3Store(s3://{self.bucket}/{self.prefix})"

    # -- keys and errors -------------------------------------------------------------------------

    def _object(self, key: str) -> str:
        return _join(self.prefix, key)

    def _s3_url(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._object(key)}"

    def _call(self, what: str, key: str, fn: Callable[[], T]) -> T:
        """Run one S3 request; a failure of the endpoint or the bucket is one line naming the object."""
        with self._lock:
            self.transfer["requests"] += 1
        try:
            return fn()
        except botocore.exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in ("NoSuchKey", "404", "NotFound"):
                raise FileNotFoundError(self._s3_url(key)) from exc
            if code == "NoSuchBucket":
                raise StoreError(self._s3_url(key), "", f"bucket {self.bucket!r} does not exist at {self._where()} "
                                 "(create it, or set SIMREADY_S3_BUCKET)") from exc
            if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403"):
                raise StoreError(self._s3_url(key), "", f"{what} refused by {self._where()}: {code} (check "
                                 "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)") from exc
            raise StoreError(self._s3_url(key), "", f"{what} failed at {self._where()}: {code or exc}") from exc
        except botocore.exceptions.NoCredentialsError as exc:
            raise StoreError(self._s3_url(key), "", "no AWS credentials (set AWS_ACCESS_KEY_ID and "
                             "AWS_SECRET_ACCESS_KEY, or an AWS profile)") from exc
        except (botocore.exceptions.EndpointConnectionError, botocore.exceptions.ConnectTimeoutError,
                botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectionClosedError) as exc:
            raise StoreError(self._s3_url(key), "", f"{what} failed: the S3 endpoint {self._where()} did not answer "
                             f"({type(exc).__name__}); is it up? (AWS_ENDPOINT_URL)") from exc
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError(self._s3_url(key), "", f"{what} failed at {self._where()}: {exc}") from exc

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

    # -- indexes -----------------------------------------------------------------------------------

    def _read_index(self, folder: str) -> dict[str, dict[str, Any]] | None:
        """The folder's index (relative name -> sha256, size), or ``None`` when the folder has none."""
        key = _join(folder, INDEX_NAME)
        try:
            record: dict[str, Any] = json.loads(self._get(key))
        except FileNotFoundError:
            return None
        except ValueError as exc:
            raise IntegrityError(self._s3_url(key), "", f"not a JSON index ({exc})") from exc
        if record.get("format") != INDEX_FORMAT or not isinstance(record.get("objects"), dict):
            raise IntegrityError(self._s3_url(key), "format", f"not a {INDEX_FORMAT} index")
        objects: dict[str, dict[str, Any]] = record["objects"]
        return objects

    def _write_index(self, folder: str, objects: dict[str, dict[str, Any]]) -> None:
        record = {"format": INDEX_FORMAT, "folder": folder, "objects": dict(sorted(objects.items()))}
        self._put(_join(folder, INDEX_NAME), json.dumps(record, indent=1, sort_keys=True).encode("utf-8"))

    def _index_above(self, parts: tuple[str, ...]) -> tuple[str, dict[str, dict[str, Any]]] | None:
        """The nearest indexed folder among ``parts`` and its ancestors (longest first), with its index."""
        for n in range(len(parts), 0, -1):
            folder = "/".join(parts[:n])
            index = self._read_index(folder)
            if index is not None:
                return folder, index
        return None

    def _entries(self, prefix: str) -> dict[str, Entry]:
        """What readers see under the folder ``prefix``: indexed files by their index, lone objects as they are."""
        parts = key_parts(prefix, prefix=True)
        above = self._index_above(parts)
        if above is not None:
            folder, index = above
            out = {}
            for rel, meta in index.items():
                key = _join(folder, rel)
                if not prefix or key.startswith(prefix + "/"):
                    out[key] = _indexed(folder, rel, meta)
            return out
        raw = self._list_objects(prefix)
        folders = sorted(e.key[: -len(INDEX_NAME) - 1] for e in raw if e.key.rsplit("/", 1)[-1] == INDEX_NAME)
        out = {}
        for folder in folders:
            for rel, meta in (self._read_index(folder) or {}).items():
                out[_join(folder, rel)] = _indexed(folder, rel, meta)
        for e in raw:
            if _hidden(e.key) or any(e.key.startswith(f + "/") for f in folders):
                continue
            out[e.key] = e
        return dict(sorted(out.items()))

    # -- the Store interface -----------------------------------------------------------------------

    def open(self, key: Key) -> BinaryIO:
        return self.local_path(key).open("rb")

    @_timed
    def read_bytes(self, key: Key) -> bytes:
        parts = key_parts(key)
        text = "/".join(parts)
        above = self._index_above(parts[:-1])
        if above is None:
            return self._get(text)
        folder, index = above
        meta = index.get(text[len(folder) + 1:])
        if meta is None:
            raise FileNotFoundError(f"{self._s3_url(text)} (not in the index of {folder}/)")
        data = self._get(_indexed(folder, text[len(folder) + 1:], meta).location)
        if sha256_bytes(data) != meta["sha256"]:
            raise IntegrityError(self._s3_url(text), "", f"its bytes do not hash to the sha256 in {folder}/{INDEX_NAME}")
        return data

    @_timed
    def write_bytes(self, key: Key, data: bytes) -> None:
        """One PUT; into an indexed folder (a template's rig beside its record) through the folder's index."""
        parts = key_parts(key)
        text = "/".join(parts)
        sha = sha256_bytes(data)
        with self._about("write", text):
            above = self._index_above(parts[:-1])
            if above is None:
                self._put(text, data)
            else:
                folder, old = above
                rel = text[len(folder) + 1:]
                self._commit(folder, old, {**old, rel: {"sha256": sha, "size": len(data)}}, {rel: data})
        self._keep(text, data, sha)

    @_timed
    def copy(self, source: Key, target: Key) -> None:
        """A server-side copy of the object's bytes as its folder's index lists them (no download); the target
        is a lone object, atomic by S3's own semantics."""
        parts = key_parts(source)
        text = "/".join(parts)
        target_text = "/".join(key_parts(target))
        above = self._index_above(parts[:-1])
        location = text
        if above is not None:
            folder, index = above
            meta = index.get(text[len(folder) + 1:])
            if meta is None:
                raise FileNotFoundError(f"{self._s3_url(text)} (not in the index of {folder}/)")
            location = _indexed(folder, text[len(folder) + 1:], meta).location
        self._copy(location, target_text)

    @_timed
    def exists(self, key: Key) -> bool:
        parts = key_parts(key, prefix=True)
        text = "/".join(parts)
        above = self._index_above(parts)
        if above is not None:
            folder, index = above
            if folder == text:
                return bool(index)
            rel = text[len(folder) + 1:]
            return rel in index or any(r.startswith(rel + "/") for r in index)
        if parts and not _hidden(text):
            try:
                self._call("read", text, lambda: self.client.head_object(Bucket=self.bucket, Key=self._object(text)))
                return True
            except FileNotFoundError:
                pass
        return bool(self._entries(text))

    @_timed
    def list(self, prefix: Key = "") -> list[str]:
        text = "/".join(key_parts(prefix, prefix=True))
        return sorted(self._entries(text))

    def url(self, key: Key) -> str:
        return self._s3_url("/".join(key_parts(key, prefix=True)))

    def share_url(self, key: Key, *, folder: bool = False, expires_s: int = 7 * 24 * 3600) -> str:
        """A link for a reviewer off the server: a presigned HTTPS URL of one object (valid ``expires_s``, at
        most S3's 7 days), or for a folder the AWS console's view of it (the endpoint's listing elsewhere)."""
        text = "/".join(key_parts(key, prefix=folder))
        if folder:
            listed = quote(self._object(text) + "/")
            if self.endpoint is None or self.endpoint.endswith(".amazonaws.com"):
                return f"https://s3.console.aws.amazon.com/s3/buckets/{self.bucket}?prefix={listed}"
            return f"{self.endpoint.rstrip('/')}/{self.bucket}?list-type=2&prefix={listed}"
        url: str = self._call("sign", text, lambda: self.client.generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": self._object(text)}, ExpiresIn=expires_s))
        return url

    @_timed
    def remove(self, key: Key) -> None:
        text = "/".join(key_parts(key))
        raw = [e.key for e in self._list_objects(text)]
        self._delete([*raw, text])
        cached = self.cache_dir / text
        if cached.is_dir():
            shutil.rmtree(cached, ignore_errors=True)
        else:
            cached.unlink(missing_ok=True)
        self._synced = {p for p in self._synced if p[: len(key_parts(text))] != key_parts(text)}

    @_timed
    def local_path(self, key: Key) -> Path:
        """One object brought into the cache (verified against its index), for a library that reads files."""
        parts = key_parts(key)
        text = "/".join(parts)
        path = self.cache_dir / text
        if self._is_synced(parts):
            return path
        return self._keep(text, self.read_bytes(text))

    def _keep(self, key: str, data: bytes, sha: str | None = None) -> Path:
        """Write ``data`` as the cached copy of ``key`` (atomically) and remember its sha256; its path."""
        path = self.cache_dir / key
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data)
        _remember(path, sha or sha256_bytes(data))
        return path

    def _is_synced(self, parts: tuple[str, ...]) -> bool:
        return any(parts[: len(p)] == p for p in self._synced)

    @_timed
    def local_dir(self, prefix: Key) -> Path:
        """The folder in this process's cache, made equal to the published folder once per store.

        Files whose cached bytes already hash to the index's are kept; others are downloaded (and
        verified); cached files the store does not list are removed. Later calls for the same folder
        (or one inside it) return it as the stage left it, so its writes stand until :meth:`save`.
        """
        parts = key_parts(prefix, prefix=True)
        text = "/".join(parts)
        folder = self.cache_dir.joinpath(*parts)
        if self._is_synced(parts):
            return folder
        entries = self._entries(text)
        wanted = {e.key for e in entries.values()}

        def fetch(entry: Entry) -> None:
            path = self.cache_dir / entry.key
            if entry.sha256 is not None and path.is_file() and _cached_sha(path) == entry.sha256:
                return
            data = self._get(entry.location)
            sha = sha256_bytes(data)
            if entry.sha256 is not None and sha != entry.sha256:
                raise IntegrityError(self._s3_url(entry.key), "", "its bytes do not hash to the sha256 in its folder's index")
            self._keep(entry.key, data, sha)

        self._parallel(fetch, sorted(entries.values(), key=lambda e: e.key))
        if folder.is_dir():
            for path in sorted(folder.rglob("*"), reverse=True):
                rel = path.relative_to(self.cache_dir).as_posix()
                if path.is_file() and not _hidden(rel) and rel not in wanted:
                    path.unlink()
                elif path.is_dir() and not _hidden(rel) and not any(path.iterdir()):
                    path.rmdir()
        self._synced.add(parts)
        return folder

    @_timed
    def save(self, prefix: Key) -> None:
        """Upload what the stage changed in ``local_dir(prefix)`` and write the folder's index last."""
        parts = key_parts(prefix, prefix=True)
        if not parts:
            raise ValueError("save('') would index the whole store; save the folder a stage wrote")
        if not self._is_synced(parts):
            raise RuntimeError(f"save({'/'.join(parts)!r}) without local_dir() first: the cache may hold another step's files")
        with self._about("save", "/".join(parts)):
            self._publish_folder("/".join(parts), self.cache_dir.joinpath(*parts))

    def _publish_folder(self, folder: str, local: Path) -> None:
        files = sorted(p for p in local.rglob("*") if p.is_file() and not _hidden(p.relative_to(local).as_posix())) \
            if local.is_dir() else []
        index = {p.relative_to(local).as_posix(): {"sha256": _cached_sha(p), "size": p.stat().st_size} for p in files}
        old = self._read_index(folder) or {}
        changed = {rel: local / rel for rel, meta in index.items() if old.get(rel, {}).get("sha256") != meta["sha256"]}
        self._commit(folder, old, index, changed)

    def _commit(self, folder: str, old: dict[str, dict[str, Any]], index: dict[str, dict[str, Any]],
                sources: Mapping[str, Path | bytes]) -> None:
        """Make ``index`` the folder's index, uploading ``sources`` (relative name -> file or bytes) first.

        Readers hold the old index until the new one is written, so no object it lists may change before then:
        a new name is uploaded to its key directly (no index lists it yet), a changed one to a pending key
        (``.pending/<token>/<name>``) that an intermediate index points at (``at``), and only then copied onto
        its key. A step that dies at any point leaves an index whose every entry hashes right.
        """
        token = uuid.uuid4().hex
        pending = {rel: f"{PENDING}/{token}/{rel}" for rel in sources if rel in old}

        def upload(rel: str) -> None:
            key = _join(folder, pending.get(rel, rel))
            source = sources[rel]
            if isinstance(source, bytes):
                self._put(key, source)
            else:
                self._upload(key, source)

        self._parallel(upload, sorted(sources))
        if pending:
            self._write_index(folder, {rel: {**meta, **({"at": pending[rel]} if rel in pending else {})}
                                       for rel, meta in index.items()})
            self._parallel(lambda rel: self._copy(_join(folder, pending[rel]), _join(folder, rel)), sorted(pending))
        self._write_index(folder, index)
        stale = [_join(folder, rel) for rel in sorted(set(old) - set(index))]
        # Every pending object goes: this commit's, and those a step killed between its two indexes left behind
        # (the index just written points at none of them).
        stale += sorted({_join(folder, at) for at in pending.values()}
                        | {e.key for e in self._list_objects(_join(folder, PENDING))})
        if stale:
            self._delete(stale)

    @_timed
    def publish(self, prefix: Key, staging_dir: Path) -> None:
        """Upload the finished folder, write its index last, and make it this process's cached copy."""
        parts = key_parts(prefix)
        text = "/".join(parts)
        staging_dir = Path(staging_dir)
        if not staging_dir.is_dir():
            raise NotADirectoryError(f"{staging_dir}: not a folder to publish as {self._s3_url(text)}")
        with self._about("publish", text):
            self._publish_folder(text, staging_dir)
        cached = self.cache_dir.joinpath(*parts)
        if cached.exists():
            shutil.rmtree(cached)
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging_dir), str(cached))
        self._synced.add(parts)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        """Inside the cache (a hidden folder), so publishing from it moves the folder into the cache."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with owned_temp(self.cache_dir / ".scratch") as tmp:
            yield tmp


def check_bucket(store: S3Store) -> None:
    """Fail in one line when the bucket cannot be reached (wrong endpoint, bucket or credentials)."""
    try:
        store._call("reach the bucket", ".", lambda: store.client.head_bucket(Bucket=store.bucket))
    except FileNotFoundError as exc:
        raise StoreError(f"s3://{store.bucket}", "", f"bucket {store.bucket!r} does not exist at {store._where()} "
                         "(create it, or set SIMREADY_S3_BUCKET)") from exc


def cache_dir_from_environment(bucket: str) -> Path:
    """``SIMREADY_CACHE`` (a worker's private folder), else a folder under the system's temporary directory."""
    base = os.environ.get("SIMREADY_CACHE")
    return Path(base) if base else Path(tempfile.gettempdir()) / "simready-cache" / bucket


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
