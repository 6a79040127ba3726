"""Atomic artifact writes: temp file in the same folder, fsync, ``os.replace``.

Why: a crash or a validation error must never leave a half-written artifact
that a later stage would read as complete.

Temporary folders carry their owner's process id in the name
(``.<final>.<pid>.<random>.tmp``), so that a later run can tell the
leftovers of a killed process (owner gone: removed) from the work of a live
one (left alone).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simready.common.hashing import remember_moved


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def json_bytes(value: Any, *, indent: int | None = 2) -> bytes:
    """The bytes of every JSON record written here: sorted keys, no NaN, a final newline."""
    return (json.dumps(value, indent=indent, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")


def write_json_atomic(path: str | Path, value: Any, *, indent: int | None = 2) -> Path:
    return write_bytes_atomic(path, json_bytes(value, indent=indent))


_OWNED_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.(?:tmp|old)$")


def temp_sibling(final: Path, suffix: str = ".tmp") -> Path:
    """A new empty hidden folder beside ``final`` whose name records this process as its owner."""
    return Path(tempfile.mkdtemp(prefix=f".{final.name}.{os.getpid()}.", suffix=suffix, dir=final.parent))


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one we may not signal exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owners(name: str, final_name: str) -> list[int] | None:
    """The owner pids recorded in a temporary sibling's name (a temporary sibling of a temporary sibling
    of ``final_name`` has two), or None when the name is not one of ``final_name``'s."""
    pids = []
    while (m := _OWNED_TEMP.match(name)) is not None:
        pids.append(int(m["pid"]))
        name = m["name"]
        if name == final_name:
            return pids
    return None


def remove_orphans(final: Path) -> list[Path]:
    """Remove the temporary siblings of ``final`` whose owner processes are all gone; return what went.

    Only names this module gives (``temp_sibling``, nested too: a command's
    folder built by a stage that builds atomically itself) are considered,
    never one of this process's own, never a symbolic link.
    """
    removed: list[Path] = []
    try:
        entries = list(final.parent.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for entry in entries:
        pids = _owners(entry.name, final.name)
        if not pids or entry.is_symlink() or not entry.is_dir():
            continue
        if any(pid == os.getpid() or pid_alive(pid) for pid in pids):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


@contextlib.contextmanager
def owned_temp(final: Path) -> Iterator[Path]:
    """A temporary sibling of ``final`` for this process (removed afterwards unless moved); killed runs' go first."""
    remove_orphans(final)
    tmp: Path | None = None
    try:
        # Named first, created inside the ``try``: a signal raised as an exception (Ctrl-C, the CLI's SIGTERM) at any
        # point leaves no folder or one the ``finally`` removes; between ``mkdtemp``'s creation and its return it
        # left an empty one behind.
        while tmp is None or not _made(tmp):
            tmp = final.parent / f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        yield tmp
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _made(folder: Path) -> bool:
    """Create ``folder`` (owner-only, as ``mkdtemp``); False where the name is taken."""
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        return False
    return True


@contextlib.contextmanager
def atomic_directory(final: str | Path) -> Iterator[Path]:
    """Build a directory under a temporary sibling name; move it into place on success.

    The final directory must not exist or be empty. On any exception the
    temporary directory is removed and ``final`` is left as it was; the
    leftovers of a killed earlier build of ``final`` are removed first.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    with owned_temp(final) as tmp:
        yield tmp
        if final.exists():
            if any(final.iterdir()):
                old = temp_sibling(final, ".old")
                os.replace(final, old)
                os.replace(tmp, final)
                remember_moved(tmp, final)
                shutil.rmtree(old, ignore_errors=True)
                return
            final.rmdir()
        os.replace(tmp, final)
        remember_moved(tmp, final)
