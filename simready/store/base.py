"""The artifact store's interface: every artifact byte is read and written through :class:`Store` (SPEC §16).

Keys are relative POSIX paths (``samples/<template>/<batch>/batch.json``), the
paths :class:`simready.artifacts.layout.ArtifactLayout` spells under an empty root; a key
never starts with ``/`` and has no ``.``, ``..`` or empty part, so no key
reaches outside the store (:class:`~simready.common.errors.StoreKeyError` otherwise).
A *prefix* is a folder key; ``""`` is the whole store.

Why an interface: the local deployment keeps artifacts in a folder
(:class:`~simready.store.local.LocalStore`); production keeps them in S3
(:class:`~simready.store.s3.S3Store`), where workers share no filesystem
(issue 15). Stages still work on local folders — ``local_dir`` gives the
folder a stage reads and writes, ``publish`` puts a finished folder in place
as a whole — so the domain code never knows which store it runs on.
"""

from __future__ import annotations

import abc
import builtins
import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any, BinaryIO

from simready.common.errors import StoreKeyError

#: A key as text or as a relative path (what ``ArtifactLayout(Path())`` returns).
Key = str | PurePath


def key_parts(key: Key, *, prefix: bool = False) -> tuple[str, ...]:
    """The parts of a valid key; a prefix may be the empty key (``""`` or ``"."``), a file key may not."""
    text = key.as_posix() if isinstance(key, PurePath) else str(key)
    if text in ("", "."):
        if prefix:
            return ()
        raise StoreKeyError(repr(text), "", "an artifact key names a file; the empty key is the store itself")
    if text.startswith("/") or "\\" in text:
        raise StoreKeyError(text, "", "an artifact key is a relative POSIX path, not absolute and without backslashes")
    parts = tuple(text.removesuffix("/").split("/") if prefix else text.split("/"))
    if any(p in ("", ".", "..") for p in parts):
        raise StoreKeyError(text, "", "an artifact key has no '..', '.' or empty part (it may not leave the store)")
    return parts


class Store(abc.ABC):
    """Where artifacts live, addressed by key."""

    @abc.abstractmethod
    def open(self, key: Key) -> BinaryIO:
        """The object's bytes as a binary file to read (close it, or use ``with``)."""

    @abc.abstractmethod
    def read_bytes(self, key: Key) -> bytes:
        """The object's bytes; ``FileNotFoundError`` when there is none."""

    @abc.abstractmethod
    def write_bytes(self, key: Key, data: bytes) -> None:
        """Write the object atomically: a reader sees the old bytes or the new ones, never part of them."""

    @abc.abstractmethod
    def exists(self, key: Key) -> bool:
        """An object at ``key``, or a prefix holding at least one."""

    @abc.abstractmethod
    def list(self, prefix: Key = "") -> list[str]:
        """Keys of every object under ``prefix`` (a folder key; ``""`` for all), sorted."""

    @abc.abstractmethod
    def url(self, key: Key) -> str:
        """Where a person or a tool finds the object or prefix: a local path here, an S3 URL in production."""

    @abc.abstractmethod
    def remove(self, key: Key) -> None:
        """Remove the object, or everything under a (non-empty) prefix; nothing there is not an error."""

    @abc.abstractmethod
    def local_dir(self, prefix: Key) -> Path:
        """The local folder a stage reads and writes for ``prefix`` (it may not exist yet).

        A stage that works on files (a Parquet writer, an observation folder) asks for the folder of the
        prefix it reads and writes, works in it, and calls :meth:`save` when it has finished writing. A
        remote store brings the prefix's objects into a local cache here; this one hands out the folder
        under its root itself.
        """

    @abc.abstractmethod
    def save(self, prefix: Key) -> None:
        """The stage has finished writing in ``local_dir(prefix)``: its files are the prefix's objects from now on.

        A remote store uploads the new and changed files and writes the prefix's index last (issue 15);
        for a local folder there is nothing left to do.
        """

    @abc.abstractmethod
    def publish(self, prefix: Key, staging_dir: Path) -> None:
        """Put the finished local folder ``staging_dir`` in place as ``prefix``, replacing what was there.

        Readers see the old folder or the new one, never a mix; ``staging_dir``
        is consumed.
        """

    def copy(self, source: Key, target: Key) -> None:
        """Make ``target`` (a key outside any published folder) hold the bytes of ``source``, atomically.

        For content-addressed copies (dataset releases): a backend that can avoid moving the bytes does (a hard
        link in a local folder, a server-side copy in S3); this default reads and writes them.
        """
        self.write_bytes(target, self.read_bytes(source))

    def local_path(self, key: Key) -> Path:
        """The local path of one object to read with a library that reads files (only it is brought local)."""
        parts = key_parts(key)
        return self.local_dir("/".join(parts[:-1])) / parts[-1]

    def share_url(self, key: Key, *, folder: bool = False) -> str | None:
        """A link to an object (or a ``folder``) that works off the server, e.g. a presigned HTTPS URL in S3;
        ``None`` where :meth:`url` (a local path) is the link."""
        return None

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        """A fresh empty local folder to build in (and ``publish`` from), removed afterwards."""
        with tempfile.TemporaryDirectory(prefix="simready-", ignore_cleanup_errors=True) as tmp:
            yield Path(tmp)

    def read_json(self, key: Key) -> Any:
        return json.loads(self.read_bytes(key))

    def is_link(self, key: Key) -> bool:
        """Whether the key reaches its bytes through a symbolic link inside the store (only a local folder has
        them): a reader that must not follow one (a release tag) refuses it without reading the target."""
        return False

    def links(self, prefix: Key = "") -> builtins.list[str]:
        """The keys under ``prefix`` that are symbolic links (to a file, a folder or nothing), sorted: ``list``
        shows only those reaching a file, and a reader that refuses links must see them all."""
        return []
