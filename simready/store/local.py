"""Artifacts as files under one local folder: the local deployment's :class:`~simready.store.base.Store`.

Only this module (and :mod:`simready.store.deployment`, which builds the deployment's store) reads
``SIMREADY_ARTIFACTS``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

from simready.common import paths
from simready.common.hashing import remember_link, remembered_sha256
from simready.common.atomic import owned_temp, remove_orphans, temp_sibling, write_bytes_atomic
from simready.store.base import Key, Store, key_parts


def _hidden(parts: tuple[str, ...]) -> bool:
    """The store's own in-flight entries (atomic-write temp files, staging folders) start with a dot."""
    return any(p.startswith(".") for p in parts)


#: In a local artifacts folder: the base URL its links (asset pages' pictures and links) were last written for.
SERVED_AT_FILE = ".artifacts-url"


def served_at(root: Path) -> str | None:
    """The base URL the links into the local artifacts folder ``root`` were last written for; None if none."""
    try:
        return (Path(root) / SERVED_AT_FILE).read_text().strip() or None
    except OSError:
        return None


class LocalStore(Store):
    """Artifacts as files under one local folder; a key is the file's path relative to it.

    ``base_url``: where a browser loads that folder from (a static file server over it), so that links in
    the Dagster UI open and pictures load; None when the artifacts are only files on this machine.
    """

    def __init__(self, root: str | Path, base_url: str | None = None) -> None:
        self.root = Path(root)
        self.base_url = base_url.rstrip("/") if base_url else None

    @classmethod
    def from_environment(cls, *, must_exist: bool = False) -> LocalStore:
        """The deployment's folder: ``SIMREADY_ARTIFACTS``, else ``artifacts/`` in the project, and
        ``SIMREADY_ARTIFACTS_URL`` if it is served, read now (one line when the setting names no usable folder;
        ``must_exist``: for a reader, a missing folder too)."""
        return cls(paths.artifacts_dir(must_exist=must_exist), paths.artifacts_url())

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def _path(self, key: Key, *, prefix: bool = False) -> Path:
        return self.root.joinpath(*key_parts(key, prefix=prefix))

    def open(self, key: Key) -> BinaryIO:
        return self._path(key).open("rb")

    def is_link(self, key: Key) -> bool:
        parts = key_parts(key)
        return any(self.root.joinpath(*parts[:i]).is_symlink() for i in range(1, len(parts) + 1))

    def links(self, prefix: Key = "") -> list[str]:
        path = self._path(prefix, prefix=True)
        if path.is_symlink():
            return [path.relative_to(self.root).as_posix()]
        if not path.is_dir():
            return []
        return sorted(p.relative_to(self.root).as_posix() for p in path.rglob("*")
                      if p.is_symlink() and not _hidden(p.relative_to(self.root).parts))

    def read_bytes(self, key: Key) -> bytes:
        return self._path(key).read_bytes()

    def write_bytes(self, key: Key, data: bytes) -> None:
        write_bytes_atomic(self._path(key), data)

    def exists(self, key: Key) -> bool:
        path = self._path(key, prefix=True)
        return path.is_file() or any(True for _ in self._keys(path))

    def list(self, prefix: Key = "") -> list[str]:
        path = self._path(prefix, prefix=True)
        if path.is_file():
            return [path.relative_to(self.root).as_posix()]
        return sorted(self._keys(path))

    def _keys(self, folder: Path) -> Iterator[str]:
        """The keys of the files under ``folder`` (a symbolic link to a file counts; one to a folder is not entered;
        hidden names are left out), as ``rglob`` and ``is_file`` found them: by ``os.scandir``'s entries, whose
        types come with the listing (a release's ~25 000 objects took a second through ``Path`` objects)."""
        parts = folder.relative_to(self.root).parts
        if _hidden(parts) or not folder.is_dir():
            return
        stack = [(str(folder), "".join(f"{p}/" for p in parts))]
        while stack:
            where, above = stack.pop()
            try:
                with os.scandir(where) as entries:
                    found = list(entries)
            except PermissionError:  # as rglob: a folder it may not list holds nothing for it
                continue
            for entry in found:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, f"{above}{entry.name}/"))
                elif entry.is_file():
                    yield f"{above}{entry.name}"

    def copy(self, source: Key, target: Key) -> None:
        """A hard link (the bytes are stored once); a copy where the two lie on different filesystems. A new name is
        linked in place (a link appears whole); one already there is replaced by a link or copy made beside it and
        renamed into place. Every stage replaces a file rather than rewriting it in place
        (:mod:`simready.common.atomic`), so a link keeps the bytes it was made with when the source is written again."""
        src, final = self._path(source), self._path(target)
        final.parent.mkdir(parents=True, exist_ok=True)
        known = remembered_sha256(src)
        try:
            os.link(src, final)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.EXDEV):
                raise
            _replace_with_link_or_copy(src, final)
        if known is not None:  # the source's bytes, hashed already (a link only moves their change time)
            remember_link(known, final)

    def url(self, key: Key) -> str:
        return str(self._path(key, prefix=True).absolute())

    def share_url(self, key: Key, *, folder: bool = False) -> str | None:
        """The object's (or ``folder``'s) address on the server over the folder, if one serves it (the base is
        recorded in the folder, :data:`SERVED_AT_FILE`, so the server can listen where the links point)."""
        if self.base_url is None:
            return None
        if served_at(self.root) != self.base_url:
            self.root.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.root / SERVED_AT_FILE, (self.base_url + "\n").encode())
        parts = key_parts(key, prefix=folder)
        return "/".join([self.base_url, *(quote(p) for p in parts)]) + ("/" if folder and parts else "")

    def remove(self, key: Key) -> None:
        path = self._path(key)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)

    def local_dir(self, prefix: Key) -> Path:
        return self._path(prefix, prefix=True)

    def save(self, prefix: Key) -> None:
        """Nothing to do: the stage wrote in place, each file atomically."""
        key_parts(prefix, prefix=True)

    def publish(self, prefix: Key, staging_dir: Path) -> None:
        """Rename ``staging_dir`` into place (copied first next to the target when it is on another filesystem).

        The old folder is renamed aside, the new one renamed in, the old one
        removed: two renames, so a reader never sees a half-copied folder (between
        the renames, for an instant, it sees none).
        """
        final = self._path(prefix)
        staging_dir = Path(staging_dir)
        if not staging_dir.is_dir():
            raise NotADirectoryError(f"{staging_dir}: not a folder to publish as {final}")
        final.parent.mkdir(parents=True, exist_ok=True)
        remove_orphans(final)
        ready = self._beside(final, staging_dir)
        old = temp_sibling(final, ".old") if final.exists() else None
        try:
            if old is not None:
                os.replace(final, old)
            try:
                os.replace(ready, final)
            except BaseException:
                if old is not None:
                    os.replace(old, final)
                    old = None
                raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            if ready != staging_dir:
                shutil.rmtree(ready, ignore_errors=True)
        if ready != staging_dir:
            shutil.rmtree(staging_dir, ignore_errors=True)

    @staticmethod
    def _beside(final: Path, staging_dir: Path) -> Path:
        """``staging_dir`` when a rename can move it to ``final``; else a copy of it in ``final``'s folder."""
        if os.stat(staging_dir).st_dev == os.stat(final.parent).st_dev:
            return staging_dir
        copy = temp_sibling(final)
        try:
            shutil.copytree(staging_dir, copy, dirs_exist_ok=True)
        except BaseException:
            shutil.rmtree(copy, ignore_errors=True)
            raise
        return copy

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        """Inside the root (a hidden folder ``list`` skips), so publishing from it is a rename.

        Named for this process (:func:`~simready.common.atomic.temp_sibling`); the scratch folders of killed runs go first.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        with owned_temp(self.root / "scratch") as tmp:
            yield tmp


def _replace_with_link_or_copy(src: Path, final: Path) -> None:
    """``final`` replaced by a hard link to ``src`` (a copy across filesystems), made beside it and renamed."""
    tmp = temp_sibling(final)
    try:
        try:
            os.link(src, tmp / final.name)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            shutil.copyfile(src, tmp / final.name)
        os.replace(tmp / final.name, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
