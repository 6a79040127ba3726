"""Reading the text files a user hands us: bounded, strict, one-line errors.

Every loader (templates, suites, catalog contracts and entries, manifests,
the ontology) reads its bytes through :func:`read_text` and parses through
:func:`load_yaml` / :func:`load_json`, so that every one refuses the same
things with the same words:

* a directory or unreadable path, a file over :data:`MAX_FILE_BYTES`;
* bytes that are not UTF-8 (the error names the byte offset);
* YAML duplicate keys (PyYAML keeps the last one silently), aliases and
  anchors (an alias bomb expands exponentially; no input of ours needs them),
  nesting deeper than :data:`MAX_DEPTH` (Python would hit its recursion limit);
* JSON duplicate keys, ``NaN``/``Infinity``, the same nesting bound;
* a truncated file: the parser's error, with its line; and a YAML file whose
  last line has no newline (editors and our writers end every line, a cut
  file almost never ends on one — YAML would otherwise fill the missing
  fields with defaults).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import yaml

from simready.common.errors import SimreadyError

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64


def read_text(path: str | Path, error: type[SimreadyError] = SimreadyError, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The file's text; ``error`` (one line) for a missing/directory/oversized/non-UTF-8 file."""
    return decode_utf8(read_bytes(path, error, max_bytes), path, error)


def read_bytes(path: str | Path, error: type[SimreadyError] = SimreadyError, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes; ``error`` (one line) for a missing/directory/oversized file."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            raw = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(path, "", "file not found") from None
    except IsADirectoryError:
        raise error(path, "", "is a directory, expected a file") from None
    except OSError as exc:
        raise error(path, "", f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise error(path, "", f"file is larger than the limit of {max_bytes} bytes")
    return raw


def decode_utf8(raw: bytes, source: str | Path, error: type[SimreadyError] = SimreadyError) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise error(source, "", f"not UTF-8 text: invalid byte 0x{raw[exc.start]:02x} at offset {exc.start} (line {line})") from None


class StrictLoader(yaml.SafeLoader):
    """Safe YAML that refuses duplicate keys, aliases/anchors and nesting beyond :data:`MAX_DEPTH`.

    Raises ``yaml.constructor.ConstructorError`` / ``ComposerError`` (marked
    errors) so that :func:`yaml_error_line` can name the line.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(None, None, "anchors and aliases are not allowed", event.start_mark)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # unhashable key: the base class raises its own marked error
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def yaml_error_line(exc: yaml.YAMLError) -> str:
    """A YAML error as one line: what, and where."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = exc.problem or exc.context or "malformed"
        return f"malformed YAML{where}: {what}".replace("\n", " ")
    return f"malformed YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"


#: Texts up to this size are remembered with what they parse to (:func:`parse_yaml`), at most
#: :data:`PARSED_KEPT` of them, the least recently read leaving first.
PARSED_MAX_CHARS = 64 * 1024
PARSED_KEPT = 512


@functools.lru_cache(maxsize=PARSED_KEPT)
def _parsed(text: str) -> Any:
    """What ``text`` parses to, remembered by the text (a refused text raises and is not remembered); never handed
    out itself (:func:`parse_yaml` gives copies)."""
    return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - StrictLoader is a SafeLoader


def parse_yaml(text: str, source: str | Path, error: type[SimreadyError] = SimreadyError) -> Any:
    """The data of ``text``, read by :class:`StrictLoader`; ``error`` (one line, naming ``source``) when it refuses.

    What a small text parses to is remembered by the text itself (the pure-Python strict parser takes ~2 ms for a
    catalog contract, and a process reads the same contracts again on every catalog load): each read gives a deep
    copy of its data, so no caller sees another's changes. A text that is refused is not remembered and is refused
    again, with the same line.
    """
    small = len(text) <= PARSED_MAX_CHARS
    try:
        data = _parsed(text) if small else yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise error(source, "", yaml_error_line(exc)) from None
    except RecursionError:
        raise error(source, "", f"nested deeper than {MAX_DEPTH} levels") from None
    return copy.deepcopy(data) if small else data


def read_yaml_text(path: str | Path, error: type[SimreadyError] = SimreadyError) -> str:
    """:func:`read_text` for a YAML file, refusing one whose last line is cut (see the module docstring)."""
    text = read_text(path, error)
    if text and not text.endswith("\n"):
        line = text.count("\n") + 1
        raise error(path, "", f"file ends without a newline at line {line}: truncated? (if the file is complete, end its last line "
                    f"with a newline)")
    return text


def load_yaml(path: str | Path, error: type[SimreadyError] = SimreadyError) -> Any:
    return parse_yaml(read_yaml_text(path, error), path, error)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def depth_exceeds(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether lists/dicts nest deeper than ``limit`` (iterative: no recursion limit)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return False


def parse_json(text: str, source: str | Path, error: type[SimreadyError] = SimreadyError, allow_nan: bool = False) -> Any:
    """JSON ``text``; ``allow_nan`` leaves ``NaN``/``Infinity`` to a model that names the field they are in."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=None if allow_nan else _refuse_constant)
    except json.JSONDecodeError as exc:
        raise error(source, "", f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:
        raise error(source, "", f"malformed JSON: {exc}") from None
    except RecursionError:
        raise error(source, "", f"nested deeper than {MAX_DEPTH} levels") from None
    if depth_exceeds(data):
        raise error(source, "", f"nested deeper than {MAX_DEPTH} levels")
    return data


def load_json(path: str | Path, error: type[SimreadyError] = SimreadyError, allow_nan: bool = False) -> Any:
    return parse_json(read_text(path, error), path, error, allow_nan)
