"""Where a command writes its ``--out``: one rule for every output folder and file.

The rule, checked before any work and held until the result is in place:

* an existing non-empty folder, a file where a folder is wanted, a folder where
  a file is wanted, any existing file, and a symbolic link are refused with a
  one-line :class:`~simready.common.errors.OutputExistsError`;
* an exclusive ``flock`` on ``.<name>.lock`` beside the destination is held
  while the command works, so a second command into the same destination
  fails at once with a one-line reason instead of mixing its files in;
* the result is built in a temporary sibling
  (:func:`~simready.common.atomic.temp_sibling`, owned by this process) and published
  by one rename (a folder) or one hard link (a file), neither of which
  replaces anything that appeared meanwhile;
* nothing the command did not create is deleted: on failure only the
  temporary sibling and the lock file go.

Why a lock as well as the no-clobber publish: without it two commands both
do all their work and the loser learns only at the end; with it the loser is
told before it starts.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from simready.common.atomic import owned_temp
from simready.common.errors import OutputExistsError


def check_folder(out: str | Path) -> Path:
    """``out`` as a folder to write: new or empty, not a file, not a symbolic link."""
    out = Path(out)
    if out.is_symlink():
        raise OutputExistsError(out, "", "output is a symbolic link; name a real folder")
    if out.exists():
        if not out.is_dir():
            raise OutputExistsError(out, "", "output is a file; a folder is wanted")
        if any(out.iterdir()):
            raise OutputExistsError(out, "", "output folder exists and is not empty; choose a new or empty folder")
    return out


def check_file(out: str | Path) -> Path:
    """``out`` as a file to write: new, not a folder, not a symbolic link."""
    out = Path(out)
    if out.is_symlink():
        raise OutputExistsError(out, "", "output is a symbolic link; name a new file")
    if out.is_dir():
        raise OutputExistsError(out, "", "output is a folder; a file is wanted")
    if out.exists():
        raise OutputExistsError(out, "", "output file exists; choose a new file name")
    return out


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out`` (``.<name>.lock`` beside it), or fail at once."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputExistsError(out.parent, "", f"cannot create the output's folder: {exc.strerror or exc}") from None
    lock = out.with_name(f".{out.name}.lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise OutputExistsError(lock, "", f"cannot open the lock file: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputExistsError(out, "", "another command is writing this output now") from None
        # The holder before us unlinks the lock file when it is done; a lock on that old file guards nothing.
        try:
            same = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            raise OutputExistsError(out, "", "another command has just written this output")
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _staged(out: Path, check: Callable[[Path], Path]) -> Iterator[Path]:
    """Check ``out``, lock it, and yield a temporary sibling that is removed afterwards unless published."""
    check(out)
    with _locked(out), owned_temp(out) as tmp:
        check(out)
        yield tmp


@contextlib.contextmanager
def output_folder(out: str | Path) -> Iterator[Path]:
    """Check ``out``, lock it and yield an empty folder to build in; on success it becomes ``out``."""
    out = Path(out)
    with _staged(out, check_folder) as tmp:
        yield tmp
        check_folder(out)
        try:
            # A rename replaces at most an empty folder; one with files in it makes it fail.
            os.rename(tmp, out)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                raise OutputExistsError(out, "", "output appeared while this command ran; nothing written") from None
            raise


@contextlib.contextmanager
def output_file(out: str | Path) -> Iterator[Path]:
    """Check ``out``, lock it and yield a path to write; on success that file becomes ``out``."""
    out = Path(out)
    with _staged(out, check_file) as tmp:
        staged = tmp / out.name
        yield staged
        try:
            # A hard link never replaces an existing name, unlike a rename.
            os.link(staged, out, follow_symlinks=False)
        except FileExistsError:
            raise OutputExistsError(out, "", "output appeared while this command ran; nothing written") from None
