"""The causal record of a scenario program (SPEC §19): every realized variable with the stream it came from, the
variables or cell coordinates it was derived from, and the rule in words — the causal story ``simready scenario
explain`` prints. The record lives in the manifest's ``realized`` block: ``realized[name]`` is the value,
``realized["cause/" + name]`` is ``"<source> | <parents> | <rule>"`` and ``realized["causal_order"]`` lists the
names in sampling order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np


CAUSE_PREFIX = "cause/"
CAUSAL_ORDER_KEY = "causal_order"
_V = TypeVar("_V")


class Realization:
    """Realized variables in sampling order, each with its source, parents and rule."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.causes: dict[str, str] = {}

    def set(self, name: str, value: _V, *, source: str, parents: Sequence[str] = (), rule: str) -> _V:
        """Record ``name = value``; ``source`` is a stream, ``cell``, ``template``, ``derived`` or ``solve``."""
        if name in self.values:
            raise ValueError(f"{name} realized twice")
        self.values[name] = _plain(value)
        self.causes[name] = f"{source} | {','.join(parents)} | {rule}"
        return value

    def realized(self) -> dict[str, Any]:
        out = dict(self.values)
        out.update({CAUSE_PREFIX + k: v for k, v in self.causes.items()})
        out[CAUSAL_ORDER_KEY] = list(self.values)
        return out


def _plain(value: Any) -> Any:
    """JSON scalars for the manifest: numpy numbers to Python, floats rounded by the manifest itself."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def parse_cause(text: str) -> tuple[str, list[str], str]:
    """``(source, parents, rule)`` of a ``cause/<name>`` entry."""
    source, _, rest = text.partition(" | ")
    parents, _, rule = rest.partition(" | ")
    return source, [p for p in parents.split(",") if p], rule
