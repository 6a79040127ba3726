"""Atomic artifact writes: temp file in the same folder, fsync, ``os.replace``.

Why: a crash or a validation error must never leave a half-written artifact
that a later stage would read as complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


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


@contextlib.contextmanager
def atomic_directory(final: str | Path) -> Iterator[Path]:
    """Build a directory under a temporary sibling name; move it into place on success.

    The final directory must not exist or be empty. On any exception the
    temporary directory is removed and ``final`` is left as it was.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        yield tmp
        if final.exists():
            if any(final.iterdir()):
                old = final.with_name(f".{final.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                os.replace(final, old)
                os.replace(tmp, final)
                shutil.rmtree(old, ignore_errors=True)
                return
            final.rmdir()
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
