"""This process's local cache of the bucket (:class:`FolderCache`): workers share no disk, so every process keeps
a private folder (``cache_dir``) and brings a folder's indexed objects into it (only those whose bytes it does not
already hold), removing cached files the index no longer lists, so a stage sees exactly the published folder.

The sha256 of each file this process hashed or wrote is remembered for its version
(:func:`simready.common.hashing.file_sha256`), so a cache is not hashed again to tell what changed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simready.common.atomic import owned_temp, write_bytes_atomic
from simready.common.errors import IntegrityError
from simready.common.hashing import file_sha256, remember_sha256, sha256_bytes
from simready.store.base import Key, key_parts
from simready.store.s3.index import IndexedFolders, hidden
from simready.store.s3.objects import Entry, timed

def default_cache_dir(bucket: str) -> Path:
    """The cache of ``bucket`` when none is named: a folder under the system's temporary directory."""
    return Path(tempfile.gettempdir()) / "simready-cache" / bucket


def cache_dir_from_environment(bucket: str) -> Path:
    """``SIMREADY_CACHE`` (a worker's private folder), else :func:`default_cache_dir`."""
    base = os.environ.get("SIMREADY_CACHE")
    return Path(base) if base else default_cache_dir(bucket)


class FolderCache(IndexedFolders):
    """The bucket's folders as this process's cache holds them.

    Attributes:
        cache_dir: this process's local cache folder.
    """

    def __init__(self, client: Any, bucket: str, prefix: str = "", cache_dir: str | Path | None = None,
                 endpoint: str | None = None) -> None:
        super().__init__(client, bucket, prefix, endpoint)
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir(bucket)
        #: Folders brought into the cache by this store: a stage's writes there are not undone by another sync.
        self._synced: set[tuple[str, ...]] = set()

    def _keep(self, key: str, data: bytes, sha: str | None = None) -> Path:
        """Write ``data`` as the cached copy of ``key`` (atomically) and remember its sha256; its path."""
        path = self.cache_dir / key
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data)
        remember_sha256(path, sha or sha256_bytes(data))
        return path

    def _is_synced(self, parts: tuple[str, ...]) -> bool:
        return any(parts[: len(p)] == p for p in self._synced)

    @timed
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
            if entry.sha256 is not None and path.is_file() and file_sha256(path) == entry.sha256:
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
                if path.is_file() and not hidden(rel) and rel not in wanted:
                    path.unlink()
                elif path.is_dir() and not hidden(rel) and not any(path.iterdir()):
                    path.rmdir()
        self._synced.add(parts)
        return folder

    def _adopt(self, parts: tuple[str, ...], staging_dir: Path) -> None:
        """Make a published folder's staging copy the cached folder (moved, not copied), synced."""
        cached = self.cache_dir.joinpath(*parts)
        if cached.exists():
            shutil.rmtree(cached)
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging_dir), str(cached))
        self._synced.add(parts)

    def _forget(self, key: str) -> None:
        """Drop the cached copy of a removed object or folder, and that it was synced."""
        cached = self.cache_dir / key
        if cached.is_dir():
            shutil.rmtree(cached, ignore_errors=True)
        else:
            cached.unlink(missing_ok=True)
        self._synced = {p for p in self._synced if p[: len(key_parts(key))] != key_parts(key)}

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        """Inside the cache (a hidden folder), so publishing from it moves the folder into the cache."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with owned_temp(self.cache_dir / ".scratch") as tmp:
            yield tmp
