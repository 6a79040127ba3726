"""The observation folder being written: every file goes through :class:`OutputFolder`, so ``results.json``
lists each exactly once, with its size and hash (:class:`simready.artifacts.records.FileEntry`)."""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from simready.common.hashing import file_sha256, remember_sha256
from simready.common.identifiers import plain_name
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import FileEntry


class OutputFolder:
    """The folder being written, with the file entries of everything written into it.

    Files are named relative to the folder (:class:`simready.artifacts.layout.ObservationDir` names them).
    With ``writer_thread``, ``put_later`` / ``write_later`` encode and write on one background thread
    (Parquet and zlib release the GIL, so encoding overlaps the next frame's casting) with at most
    ``MAX_PENDING`` files waiting; without, they write at once. ``drain`` waits for them and re-raises
    the first failure.
    """

    MAX_PENDING = 2

    def __init__(self, root: Path, writer_thread: bool) -> None:
        self.layout = ObservationDir(root)
        self.entries: list[FileEntry] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="observe-writer") if writer_thread else None
        self._pending: deque[Future[None]] = deque()
        #: Folders (relative, ``""`` the root) already confined to the root and made: a name in one of them is
        #: checked as a plain file name (the folder is this writer's own new folder, no link is made in it).
        self._folders: set[str] = set()

    @property
    def root(self) -> Path:
        return self.layout.root

    def _register(self, rel: str, sensor: str | None, tick: int | None, pass_name: str, size: int, digest: str,
                  **extra: Any) -> None:
        self.entries.append(FileEntry(path=rel, sensor=sensor, tick=tick, pass_name=pass_name, bytes=size,
                                      sha256=digest, **extra))

    def put(self, rel: str, data: bytes | memoryview, sensor: str | None, tick: int | None, pass_name: str,
            **extra: Any) -> None:
        path = self.path(rel)
        path.write_bytes(data)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        remember_sha256(path, digest)  # the file's checks and the release read it, not hash it again
        self._register(rel, sensor, tick, pass_name, memoryview(data).nbytes, digest, **extra)

    def put_later(self, rel: str, encode: Callable[[], bytes | memoryview], sensor: str | None, tick: int | None,
                  pass_name: str, **extra: Any) -> None:
        """Like :meth:`put`, with the bytes made by ``encode()`` on the writer thread (at once when
        ``MAX_PENDING`` is 0)."""
        self._later(lambda: self.put(rel, encode(), sensor, tick, pass_name, **extra))

    def write_later(self, rel: str, write: Callable[[Path], Any], sensor: str | None, tick: int | None,
                    pass_name: str, **extra: Any) -> None:
        """``write(path)`` on the writer thread (a writer that streams to the file holds no copy of it)."""
        def job() -> None:
            write(self.path(rel))
            self.add_written(rel, sensor, tick, pass_name, **extra)

        self._later(job)

    def _later(self, job: Callable[[], None]) -> None:
        if self._pool is None:
            job()
            return
        while len(self._pending) >= self.MAX_PENDING:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(job))

    def drain(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def close(self) -> None:
        """Stop the writer (after :meth:`drain`, or on failure: queued work is dropped)."""
        for f in self._pending:
            f.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def add_written(self, rel: str, sensor: str | None, tick: int | None, pass_name: str, **extra: Any) -> None:
        """Register a file a writer of its own put at ``rel``."""
        path = self._file(rel)
        self._register(rel, sensor, tick, pass_name, path.stat().st_size, file_sha256(str(path)), **extra)

    def name_of(self, path: Path) -> str:
        """The name of a file under the folder, relative to it (as results.json lists it)."""
        return path.relative_to(self.root).as_posix()

    def path(self, rel: str) -> Path:
        """Where ``rel`` goes, its parent folder made."""
        folder, _, name = rel.rpartition("/")
        if folder in self._folders and plain_name(name):
            return self.root / rel
        p = self.layout.file(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        self._folders.add(folder)
        return p

    def _file(self, rel: str) -> Path:
        """:meth:`ObservationDir.file` of ``rel``, without resolving again a folder already confined."""
        folder, _, name = rel.rpartition("/")
        if folder in self._folders and plain_name(name):
            return self.root / rel
        return self.layout.file(rel)
