"""A template's source: its YAML read with line locations, and errors that name the file, field and line.

The fast path builds the data straight from the parser's events (:func:`fast_yaml`) and keeps a
:class:`LazyRoot` whose node tree is composed only when an error needs a line; anything it does not
take (anchors, aliases, tags, a key given twice, …) goes the full path (:func:`read_yaml`), which
refuses it with the line. :mod:`simready.world.template` parses the data into the models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property
from typing import Any

import yaml

from simready.common.errors import TemplateError, pydantic_reason
from simready.common.loading import MAX_DEPTH, yaml_error_line
from simready.world.template_checks import Loc


def _format_loc(loc: Loc) -> str:
    out = ""
    for item in loc:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def _yaml_line(root: YamlRoot, loc: Loc) -> int | None:
    """1-based line of the deepest YAML node on ``loc``."""
    node: yaml.Node | None = root.node if isinstance(root, LazyRoot) else root
    line = None
    for item in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        node = _yaml_child(node, item)
    if node is not None:
        line = node.start_mark.line + 1
    return line


def _yaml_child(node: yaml.Node, item: str | int) -> Any:
    if isinstance(node, yaml.SequenceNode) and isinstance(item, int) and 0 <= item < len(node.value):
        return node.value[item]
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == item:
                return value
    return None


def located_error(source: str, root: YamlRoot | None, loc: Loc, reason: str) -> TemplateError:
    """A :class:`TemplateError` at ``loc`` in ``source``, with the YAML line when ``root`` holds it."""
    line = _yaml_line(root, loc) if root is not None else None
    return TemplateError(source, _format_loc(loc), f"{reason} (line {line})" if line else reason)


def pydantic_loc(loc: tuple[Any, ...], data: Any) -> Loc:
    """Drop pydantic's discriminated-union tags (``relations.0.adjacent.a``) from a location."""
    out: list[str | int] = []
    node = data
    for item in loc:
        if isinstance(node, Mapping) and isinstance(item, str) and item not in node and node.get("type") == item:
            continue
        out.append(item)
        if isinstance(node, Mapping):
            node = node.get(item)
        elif isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            node = node[item]
        else:
            node = None
    return tuple(out)


_REASONS = {"missing": "required field missing", "extra_forbidden": "unknown field (not in the template schema)"}


def schema_reason(err: Mapping[str, Any]) -> str:
    reason = _REASONS.get(err["type"], pydantic_reason(err))
    reason = re.sub(r"^(Value|Assertion) error, ", "", reason)
    if err["type"] in ("literal_error", "string_pattern_mismatch", "string_type", "float_type", "int_type", "float_parsing"):
        reason += f" (got {err['input']!r})"
    return reason


class TemplateLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML loader: libyaml's parser when built in (10× faster on instance-heavy templates).

    Also reads YAML 1.2 exponent floats without a dot (``3e-5``): YAML 1.1,
    which PyYAML implements, would make them strings and the user would see a
    baffling "not a number" for a number.
    """


TemplateLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _check_node_tree(root: yaml.Node, source: str) -> None:
    """Refuse a mapping key given twice (PyYAML would keep the last one), an alias, nesting beyond MAX_DEPTH.

    The composer turns an alias into the node it names, so a node met twice
    is an alias: refused before construction, an alias bomb costs nothing.
    Iterative, so no input reaches Python's recursion limit.
    """
    seen_nodes: set[int] = set()
    stack: list[tuple[Any, Loc]] = [(root, ())]
    while stack:
        node, loc = stack.pop()
        line = f"line {node.start_mark.line + 1}"
        if len(loc) >= MAX_DEPTH:
            raise TemplateError(source, _format_loc(loc), f"nested deeper than {MAX_DEPTH} levels ({line})")
        if id(node) in seen_nodes:
            raise TemplateError(source, _format_loc(loc), f"anchors and aliases are not allowed ({line})")
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[Any] = set()
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    raise TemplateError(source, _format_loc(loc), f"mapping keys must be plain names ({line})")
                if key.value in keys:
                    where = _format_loc(loc + (key.value,))
                    raise TemplateError(source, where, f"duplicate key {key.value!r} (line {key.start_mark.line + 1})")
                keys.add(key.value)
                stack.append((value, loc + (key.value,)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, loc + (i,)) for i, item in enumerate(node.value))


#: Plain scalars read without PyYAML's resolver: floats as PyYAML writes them (``repr``, lower-case exponent with
#: a sign) and decimal integers without leading zeros; both resolve exactly so in YAML 1.1.
_PLAIN_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+(?:e[-+][0-9]+)?")


_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")


class LazyRoot:
    """The YAML node tree of a template read by :func:`fast_yaml`, composed only when an error needs a line."""

    def __init__(self, text: str) -> None:
        self._text = text

    @cached_property
    def node(self) -> Any:
        loader = TemplateLoader(self._text)
        try:
            return loader.get_single_node()
        finally:
            loader.dispose()


#: A template's YAML root: the node tree, or the fast path's lazily composed one.
YamlRoot = yaml.Node | LazyRoot


def fast_yaml(text: str) -> Any:
    """The data of ``text`` built straight from the parser's events, or None where anything needs the full path.

    Why: composing every node (and resolving every scalar in Python) is most
    of reading a city map's template (~13 MB: 19 s of 20). The events carry
    what the data needs; numbers are matched by two patterns and every other
    plain scalar resolves and constructs as the loader would. Anything the
    full path checks or refuses — an anchor, an alias, a tag, a key given
    twice, a key that is not a plain value, nesting at the depth limit, more
    or less than one document, malformed YAML — returns None, and the full
    path (:func:`read_yaml`) reads the file and says what is wrong, as before.
    """
    loader = TemplateLoader(text)
    nokey = object()
    scalar, map_start, map_end = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.MappingEndEvent
    seq_start, seq_end = yaml.SequenceStartEvent, yaml.SequenceEndEvent
    is_float, is_int = _PLAIN_FLOAT.fullmatch, _PLAIN_INT.fullmatch
    try:
        get = loader.get_event
        if not isinstance(get(), yaml.StreamStartEvent) or not isinstance(get(), yaml.DocumentStartEvent):
            return None
        stack: list[list[Any]] = []  # [container, the key awaiting its value (nokey: none), a mapping's key texts]
        root = None
        while True:
            ev = get()
            kind = type(ev)
            if kind is scalar:
                if ev.anchor is not None or ev.tag is not None:
                    return None
                v = raw = ev.value
                if ev.style:  # quoted or block: a string
                    value = v
                elif is_float(v):
                    value = float(v)
                elif is_int(v):
                    value = int(v)
                else:
                    node = yaml.ScalarNode(loader.resolve(yaml.ScalarNode, v, ev.implicit), v, ev.start_mark,
                                           ev.end_mark, ev.style)
                    value = loader.construct_object(node, deep=True)
            elif kind is map_start or kind is seq_start:
                if ev.anchor is not None or ev.tag is not None or len(stack) + 1 >= MAX_DEPTH:
                    return None
                stack.append([{} if kind is map_start else [], nokey, set()])
                continue
            elif kind is map_end or kind is seq_end:
                container, pending, _ = stack.pop()
                if pending is not nokey:
                    return None
                value, raw = container, None
            elif kind is yaml.DocumentEndEvent:
                break
            else:
                return None  # an alias
            if not stack:
                root = value
                continue
            top = stack[-1]
            container = top[0]
            if type(container) is list:
                container.append(value)
            elif top[1] is nokey:
                # The full path refuses a key text given twice ('1' and 1 too) and keeps the last of two keys
                # that construct equal (1 and 1.0): both are left to it.
                if raw is None or raw in top[2] or value is None or not isinstance(value, (str, int, float)) \
                        or value in container:
                    return None
                top[2].add(raw)
                top[1] = value
            else:
                container[top[1]] = value
                top[1] = nokey
        if root is None or not isinstance(get(), yaml.StreamEndEvent):
            return None
        return root
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def read_yaml(text: str, source: str) -> tuple[Any, Any]:
    """(data, root node); malformed YAML raises a TemplateError with the line.

    The root may be a :class:`LazyRoot` (the fast path, :func:`fast_yaml`): its ``node`` composes the tree.
    """
    data = fast_yaml(text)
    if data is not None:
        return data, LazyRoot(text)
    try:
        loader = TemplateLoader(text)
        try:
            root = loader.get_single_node()
            if root is not None:
                _check_node_tree(root, source)
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise TemplateError(source, "", f"malformed YAML{where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise TemplateError(source, "", yaml_error_line(exc)) from None
    return data, root
