"""A value computed once per live object: :func:`once_per_object`.

Why by identity: the objects these values derive from (a template, its lane graph) are frozen, and comparing two
of them costs as much as the value itself (a canonical dump of an imported map); a stage builds many scenes on one
loaded template. The owner is held beside its value and checked with ``is``, so a freed owner's reused ``id`` never
returns another object's value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def once_per_object(cache: dict[int, tuple[object, T]], owner: object, build: Callable[[], T], *,
                    limit: int = 64) -> T:
    """``build()`` the first time ``owner`` is asked for in ``cache``, the kept value after that (the cache is
    emptied when it holds more than ``limit`` owners)."""
    hit = cache.get(id(owner))
    if hit is None or hit[0] is not owner:
        if len(cache) > limit:
            cache.clear()
        hit = cache[id(owner)] = (owner, build())
    return hit[1]
