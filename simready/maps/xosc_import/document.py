"""The OpenSCENARIO document as read: safe XML, the import's error, element paths and ids, parameter-resolved attributes.

Reading is safe: lxml with no entity expansion, no DTD, no network (the parser :mod:`simready.maps.opendrive`
uses); every attribute goes through the declared parameters and ``${…}`` expressions
(:mod:`simready.maps.xosc_params`, never ``eval``), and every failure is one line naming the element's path and
its line.
"""

from __future__ import annotations

import math
import re
from typing import Any

from lxml import etree

from simready.maps.errors import MapError
from simready.maps.xosc_params import ExpressionError, Parameters


class XoscError(MapError):
    """An OpenSCENARIO file that cannot be imported: the field names the element path, the reason ends with its line."""


def parse_xml(raw: bytes, source: str) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise XoscError(source, "", f"malformed XML at line {exc.lineno or '?'}: {exc.msg}") from None
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.startswith("{"):
            el.tag = etree.QName(el).localname
    if root.tag != "OpenSCENARIO":
        raise XoscError(source, "", f"root element is <{root.tag}>, not <OpenSCENARIO> (line {root.sourceline})")
    return root


def element_path(el: etree._Element) -> str:
    """``Storyboard/Story[s1]/Act[a1]/…``: tags with their name where they have one."""
    parts = []
    node: Any = el
    while node is not None and node.tag != "OpenSCENARIO":
        name = node.get("name")
        parts.append(f"{node.tag}[{name}]" if name else node.tag)
        node = node.getparent()
    return "/".join(reversed(parts))


def identifier(name: str) -> str:
    out = re.sub(r"[^A-Za-z0-9_.:\-]", "_", name)[:128]
    return out if out and out[0] not in ".:-" else f"x{out}"[:128]


class Reader:
    """Attribute access with parameters resolved and every failure one line with the element and its line."""

    def __init__(self, source: str, params: Parameters) -> None:
        self.source = source
        self.params = params

    def error(self, el: etree._Element, reason: str) -> XoscError:
        return XoscError(self.source, element_path(el), f"{reason} (line {el.sourceline})")

    def text(self, el: etree._Element, name: str, default: str | None = None) -> str:
        raw = el.get(name)
        if raw is None:
            if default is not None:
                return default
            raise self.error(el, f"<{el.tag}> has no {name!r} attribute")
        try:
            return self.params.resolve(raw)
        except ExpressionError as exc:
            raise self.error(el, f"{name}={raw!r}: {exc}") from None

    def num(self, el: etree._Element, name: str, default: float | None = None) -> float:
        if el.get(name) is None and default is not None:
            return default
        text = self.text(el, name)
        try:
            value = float(text)
        except ValueError:
            raise self.error(el, f"{name}={text!r} is not a number") from None
        if not math.isfinite(value):
            raise self.error(el, f"{name}={text!r} is not finite")
        return value

    def declare(self, el: etree._Element | None) -> None:
        if el is None:
            return
        for p in el.findall("ParameterDeclaration"):
            name = p.get("name")
            if not name:
                raise self.error(p, "<ParameterDeclaration> has no name")
            self.params.declare(name, p.get("value", ""))
