"""Repair-aware draws: unit variates grouped by the local variables a repair may resample (``spawn``,
``ttc_target``, …), drawn from named streams. Each draw stores its unit variate, so a repair that redraws only
``spawn`` (from the fresh stream ``layout/repair<k>``) keeps every other group's draws exactly, re-mapped through
whatever ranges the new draws imply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import shapely
from numpy.random import Generator

from simready.scenario.streams import StreamSet


_V = TypeVar("_V")


class Draws:
    """Unit variates per variable group, drawn from named streams; a repair redraws only some groups.

    ``group(name, stream)`` returns a :class:`GroupDraws`. On attempt 0 every
    group draws from its stream. On a repair (``attempt`` k > 0) a group in
    ``redraw`` draws from ``<stream>/repair<k>``; every other group replays
    its previous unit variates.
    """

    def __init__(self, streams: StreamSet, *, attempt: int = 0, previous: Mapping[str, Mapping[str, Any]] | None = None,
                 redraw: Iterable[str] = ()) -> None:
        self.streams = streams
        self.attempt = attempt
        self.previous = previous or {}
        self.redraw = frozenset(redraw)
        self.record: dict[str, dict[str, Any]] = {}

    def group(self, name: str, stream: str) -> GroupDraws:
        fresh = self.attempt == 0 or name in self.redraw or name not in self.previous
        stream_name = stream if self.attempt == 0 else f"{stream}/repair{self.attempt}"
        values: dict[str, Any] = {}
        self.record[name] = values
        return GroupDraws(name, stream, lambda: self.streams.stream(stream_name),
                          {} if fresh else dict(self.previous[name]), values)


@dataclass
class GroupDraws:
    """Draws of one group: replayed from ``replay`` when recorded there, else fresh; every unit variate is recorded.

    A replayed group that lacks a draw (its earlier attempt stopped before
    making it) draws it fresh from the attempt's repair stream.
    """

    name: str
    stream: str
    rng_factory: Callable[[], Generator]
    replay: dict[str, Any]
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def rng(self) -> Generator:
        gen = self.__dict__.get("_rng")
        if gen is None:
            gen = self.__dict__["_rng"] = self.rng_factory()
        return gen

    def unit(self, key: str) -> float:
        u = float(self.replay[key]) if key in self.replay else float(self.rng.random())
        self.record[key] = u
        return u

    def uniform(self, key: str, lo: float, hi: float) -> float:
        return lo + (hi - lo) * self.unit(key)

    def choice(self, key: str, options: Sequence[_V]) -> _V:
        if not options:
            raise ValueError(f"group {self.name}: nothing to choose for {key}")
        return options[min(int(self.unit(key) * len(options)), len(options) - 1)]

    def point_where(self, key: str, bounds: tuple[float, float, float, float],
                    inside: Callable[[np.ndarray, np.ndarray], np.ndarray], tries: int = 64) -> tuple[float, float] | None:
        """A uniform point of the region ``inside`` accepts, by rejection on ``bounds``; None if ``tries`` draws miss.

        Replayed, the recorded unit pair is mapped into the new bounds as is
        (the ladder judges whether it still fits).
        """
        xmin, ymin, xmax, ymax = bounds
        if f"{key}.ux" in self.replay:
            return xmin + (xmax - xmin) * self.unit(f"{key}.ux"), ymin + (ymax - ymin) * self.unit(f"{key}.uy")
        u = self.rng.random((tries, 2))
        x = xmin + (xmax - xmin) * u[:, 0]
        y = ymin + (ymax - ymin) * u[:, 1]
        ok = inside(x, y)
        if not ok.any():
            return None
        k = int(np.argmax(ok))
        self.record[f"{key}.ux"], self.record[f"{key}.uy"] = float(u[k, 0]), float(u[k, 1])
        return float(x[k]), float(y[k])

    def point_in(self, key: str, region: shapely.Geometry, tries: int = 64) -> tuple[float, float] | None:
        """A uniform point in a shapely ``region`` (see :meth:`point_where`)."""
        if region.is_empty:
            return None
        return self.point_where(key, region.bounds, lambda x, y: shapely.contains_xy(region, x, y), tries)
