"""A cache that exists only within a ``with`` block: what one reader computes there, the next reader of the same
thing takes instead of computing it again (a sample's validity gate and review page read the same files in turn);
outside the block nothing is kept. Process-wide and nestable (an inner block shares the outer one's entries)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class ScopedCache:
    """``entries``: the cache within :meth:`scope` (a dict), None outside it."""

    def __init__(self) -> None:
        self.entries: dict[Any, Any] | None = None

    @contextmanager
    def scope(self) -> Iterator[None]:
        outer = self.entries
        self.entries = {} if outer is None else outer
        try:
            yield
        finally:
            self.entries = outer
