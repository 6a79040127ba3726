"""Canonical content hashing.

Why: a world template or manifest must hash the same whatever its key order,
whitespace or float spelling (``1``, ``1.0``, ``1.000``, ``1e0``), and differently
as soon as a value really changes (a curb moved by 1 cm). Floats are rounded to
``FLOAT_DECIMALS`` decimals (1 nm in metres) and printed in Python's shortest
round-trip repr, so equal values always serialize to equal bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable
from typing import Any

FLOAT_DECIMALS = 9
HASH_PREFIX = "sha256:"


def _canonical_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite float {value!r} cannot be hashed canonically")
        rounded = round(value, FLOAT_DECIMALS)
        if rounded == int(rounded) and abs(rounded) < 2**53:
            # 1.0 and 1 are the same quantity: hash them identically.
            return int(rounded)
        return rounded
    if isinstance(value, dict):
        return {str(k): _canonical_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical_value(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _canonical_value(value.tolist())
    raise TypeError(f"cannot hash value of type {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """Serialize ``value`` to canonical JSON: sorted keys, no spaces, rounded floats."""
    return json.dumps(
        _canonical_value(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def sha256_bytes(data: bytes) -> str:
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()


def content_hash(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return sha256_bytes(canonical_json(value).encode("utf-8"))


#: A file's version as the file system states it, under the absolute path it was reached by: (path, device, inode,
#: bytes, modified ns, changed ns). Any write to the file, in place or by a replacement, gives another (the inode's
#: change time moves with every write, link and rename onto it), except on a file system with coarse timestamps two
#: writes of one size within one tick of its clock; the files hashed here are written once and replaced, never
#: rewritten in place. The path is part of it because a deleted file's inode is soon given to a new file, which can
#: have the same size and, within one tick of the clock, the same times: under another name, not the same version.
FileVersion = tuple[str, int, int, int, int, int]

#: The sha256 of the file versions this process has hashed or written, or learned from its workers
#: (:func:`learned_digests`). Why: a run hashes each observation file when it writes it, and its checks and its
#: release hashed them again, 6 GB each time; a version hashed once is not read again.
_KNOWN: dict[FileVersion, str] = {}

#: Versions remembered at most; past it the memory starts afresh (a process that hashes files without end). About
#: 600 bytes each (measured), so ~120 MB at most; the default suite's release holds 24 495 files.
KNOWN_MAX = 200_000


def file_version(path: str | os.PathLike[str]) -> FileVersion:
    st = os.stat(path)
    return os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of the file's bytes: remembered for this version of the file (:func:`remember_sha256`),
    else read and hashed (and remembered when the file did not change while it was read)."""
    before = file_version(path)
    known = _KNOWN.get(before)
    if known is not None:
        return known
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    digest = HASH_PREFIX + h.hexdigest()
    if file_version(path) == before:
        _remember(before, digest)
    return digest


def remember_sha256(path: str | os.PathLike[str], digest: str) -> None:
    """``digest`` is the sha256 of the file at ``path`` as it is now: its writer hashed the bytes it wrote."""
    _remember(file_version(path), digest)


def remembered_sha256(path: str | os.PathLike[str]) -> tuple[FileVersion, str] | None:
    """The file's version now and its remembered sha256; None when this version was not hashed here."""
    version = file_version(path)
    digest = _KNOWN.get(version)
    return None if digest is None else (version, digest)


def remember_link(source: tuple[FileVersion, str], path: str | os.PathLike[str]) -> None:
    """``path`` is a hard link just made to the file whose version and sha256 ``source`` names: the same bytes
    under the inode's new change time, remembered for both names when it is still that file (same device, inode, size
    and modification time)."""
    version = file_version(path)
    if version[1:5] == source[0][1:5]:
        _remember(version, source[1])
        _remember((source[0][0], *version[1:]), source[1])


def remember_moved(old_root: str | os.PathLike[str], new_root: str | os.PathLike[str]) -> None:
    """The folder ``old_root`` was just renamed to ``new_root``: the files in it that were remembered under the old
    name are remembered under the new one too. A rename of a folder leaves each file inside it as it was (the same
    device, inode, size, modification and change times), so only the path of their versions moves; a file whose
    version is not remembered under the old name is left to be hashed when read.

    Why: a stage builds a folder under a temporary name and renames it into place when complete
    (:func:`~simready.common.atomic.atomic_directory`); its writer hashed each file as it wrote it, and without this
    the checks and the release read all of them again (the observation folders: every camera frame's files).
    """
    if not _KNOWN:
        return
    old, new = os.path.abspath(old_root), os.path.abspath(new_root)
    for folder, _, names in os.walk(new):
        before = os.path.join(old, os.path.relpath(folder, new)) if folder != new else old
        for name in names:
            path = os.path.join(folder, name)
            try:
                version = file_version(path)
            except OSError:
                continue
            digest = _KNOWN.get((os.path.normpath(os.path.join(before, name)), *version[1:]))
            if digest is not None:
                _remember(version, digest)


def _remember(version: FileVersion, digest: str) -> None:
    if len(_KNOWN) >= KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN[version] = digest


def known_count() -> int:
    """How many file versions are remembered now (a mark for :func:`learned_digests`)."""
    return len(_KNOWN)


def learned_digests(mark: int) -> list[tuple[FileVersion, str]]:
    """The versions remembered since :func:`known_count` returned ``mark`` (a forked worker's, sent back to its
    parent: :func:`learn_digests`)."""
    known = list(_KNOWN.items())  # one copy under the GIL: a thread may be remembering meanwhile
    return known[mark:] if mark <= len(known) else known


def learn_digests(entries: Iterable[tuple[Iterable[str | int], str]]) -> None:
    """Remember what a worker hashed or wrote (:func:`learned_digests`)."""
    for version, digest in entries:
        v = tuple(version)
        if len(v) == 6:
            _remember((str(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), int(v[5])), digest)
