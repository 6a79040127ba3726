"""Identifiers that become path components, and paths read from files.

Every name a user (or a file) supplies that ends up in a path — catalog
family and variant, template id, sample id, batch key, sensor name, branch
label — matches one pattern: ASCII letters, digits, ``_``, ``-`` and ``.``,
starting with a letter or digit, at most :data:`MAX_IDENTIFIER_CHARS`
characters. The first character rules out ``.``, ``..`` and hidden files;
ASCII-only rules out look-alikes (Cyrillic ``а``, fullwidth ``．``) that
would name a different file than the one the user reads.

A relative path read from a file (the mesh an ``entry.json`` names) is
resolved against its root and must stay inside it: no absolute path, no
``..`` part, no symlink that leads out.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated

from pydantic import AfterValidator, StringConstraints, WithJsonSchema

from simready.common.errors import SimreadyError

MAX_IDENTIFIER_CHARS = 128
IDENTIFIER_PATTERN = rf"[A-Za-z0-9][A-Za-z0-9_.\-]{{0,{MAX_IDENTIFIER_CHARS - 1}}}"
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN, re.ASCII)


def is_identifier(value: object) -> bool:
    return isinstance(value, str) and _IDENTIFIER.fullmatch(value) is not None


def check_identifier(
    value: object, source: str | Path, field: str, error: type[SimreadyError] = SimreadyError
) -> str:
    """``value`` when it is a safe path component; otherwise ``error`` (one line)."""
    if not is_identifier(value):
        raise error(
            source, field,
            f"{value!r} is not an identifier (ASCII letters, digits, '_', '-', '.', starting with a letter "
            f"or digit, at most {MAX_IDENTIFIER_CHARS} characters)",
        )
    return value  # type: ignore[return-value]


def plain_name(name: str) -> bool:
    """A file name that stays in its folder: not empty, no separator, not ``.`` or ``..``, no NUL."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\x00" not in name


def confine(
    root: str | Path, relative: object, source: str | Path, field: str, error: type[SimreadyError] = SimreadyError
) -> Path:
    """``root / relative`` resolved, refused unless it stays inside ``root`` (symlinks followed). The refusal names
    ``root`` as resolved (its full path: a bare folder name reads as ``/`` for a root of ``.`` or ``/``)."""
    shown = Path(root).resolve()
    if not isinstance(relative, str) or not relative or "\x00" in relative:
        raise error(source, field, f"{relative!r} is not a relative path")
    pure = PurePosixPath(relative)
    if pure.is_absolute() or PureWindowsPath(relative).is_absolute() or PureWindowsPath(relative).drive:
        raise error(source, field, f"{relative!r} is absolute; only paths inside {shown} are allowed")
    if ".." in pure.parts or ".." in PureWindowsPath(relative).parts:
        raise error(source, field, f"{relative!r} has a '..' part; only paths inside {shown} are allowed")
    target = (shown / pure).resolve()
    if not target.is_relative_to(shown):
        raise error(source, field, f"{relative!r} leads outside {shown} (through a symlink)")
    return target



def _identifier(value: str) -> str:
    if not is_identifier(value):
        raise ValueError(f"{value!r} is not an identifier (ASCII letters, digits, '_', '-', '.', starting with a "
                         f"letter or digit, at most {MAX_IDENTIFIER_CHARS} characters)")
    return value


Identifier = Annotated[str, StringConstraints(strict=True), AfterValidator(_identifier),
                       WithJsonSchema({"type": "string", "pattern": f"^{IDENTIFIER_PATTERN}$"})]
"""A pydantic field type for a name that becomes a path component: the error says what an identifier is
(pydantic's own pattern error only quotes the regular expression); the pattern shows in JSON schemas."""
