"""Coverage over causes (SPEC §13): cells declared before generation, counts kept per cell.

A coverage file ``data/coverage/<intent>.yaml`` declares the dimensions
that change the decision and the target count per cell; the cells are the
cross product of the dimensions, in declared order. Each dimension reads one
realized value of a sample (``key``) and is either categorical (``values``)
or binned (``bins`` of ``[lo, hi)``; the last bin is closed, ``[lo, hi]``,
so a threshold like "visible fraction ≤ 0.1" can be a bin edge; ``labels``
optionally name the bins). Example::

    intent: pedestrian_emerges_behind_van
    template: residential_crosswalk_v3
    target_per_cell: 2
    max_proposals_per_cell: 40
    dimensions:
      - {name: ttc_s, key: ttc_s, bins: [[1.0, 2.0], [2.0, 3.0]]}
      - {name: illumination, key: env.illumination, values: [day, dusk, night]}
    targets:
      - {where: {illumination: night}, target: 4}

Background traffic (SPEC §20) gives three coverage dimensions the suite
fixes, not the program, one per density of :class:`~simready.scenario.traffic_spec.TrafficSpec`
(:data:`TRAFFIC_DIMENSIONS`): ``traffic`` (vehicles per lane km; the name
kept from when it was the only one), ``pedestrians`` (per 100 m of
sidewalk) and ``cyclists`` (per km of kerbside lane), each bucketed light,
moderate, heavy. :meth:`CoverageSpec.with_traffic` adds, for every density a
suite asks for above 0, its dimension with the one bucket the density falls
in to every cell of the template × intent (``…|traffic=moderate|pedestrians=light``);
a cell without one is ``none`` on it (:func:`traffic_label`), so a sample
without traffic keeps its cell id. Each dimension reads the density the
sample *realized* (``traffic.realized_<density>``; the request stands in
until the traffic is spawned): an accepted sample whose realized density is
in another bucket is counted in that bucket's cell, untargeted
(:meth:`CoverageSpec.realized_cell`).

A cell id joins ``<dim>=<value>`` in dimension order with ``|``
(``ttc_s=1.0..2.0|illumination=day``); a bin reads ``lo..hi`` or its label.
A *cell spec* (the CLI's ``--cell``) is any subset of those terms and
selects every declared cell that agrees with it.

The file is read by :mod:`simready.scenario.coverage_file`; the counts kept per cell while generating are
:mod:`simready.scenario.coverage_counts`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simready.common import paths
from simready.common.errors import SimreadyError


COVERAGE_DIR = paths.DATA_DIR / "coverage"
DEFAULT_TARGET_PER_CELL = 1
DEFAULT_MAX_PROPOSALS_PER_CELL = 50
#: The coverage dimension of the suite's vehicle density (SPEC §20) and the realized value it reads.
TRAFFIC_DIMENSION = "traffic"
#: Vehicle density buckets (vehicles per lane km, ``[lo, hi)``, the last closed); no traffic at all is ``none``.
#: Light: free flow, a car every 50 m or more; moderate: up to the density where a lane's flow peaks (about
#: 2000 veh/h at 35 km/h ≈ 60 veh/km, the highway-capacity critical density); heavy: queues up to the spawner's
#: jam density (:data:`~simready.scenario.traffic_spec.MAX_VEHICLES_PER_LANE_KM`).
TRAFFIC_BUCKETS = ((0.0, 20.0, "light"), (20.0, 60.0, "moderate"), (60.0, 120.0, "heavy"))
#: Pedestrian density buckets (per 100 m of sidewalk). On a 2.5 m sidewalk, 5 per 100 m is 50 m² each (walkers do
#: not meet; HCM walkway level of service A is > 5.6 m²), 20 per 100 m is 12.5 m² each (they pass one another and
#: wait in groups at a kerb); heavy up to the spawner's 1.5 m spacing in file (60).
PEDESTRIAN_BUCKETS = ((0.0, 5.0, "light"), (5.0, 20.0, "moderate"), (20.0, 60.0, "heavy"))
#: Cyclist density buckets (per km of kerbside lane). At 15 km/h, 10 per km is 150 bicycles/h (a quiet street),
#: 40 per km is 600/h (a busy commuter route; one cycle lane carries ~1500/h); heavy up to the spawner's spacing
#: (150 per km: a bicycle and 4 m).
CYCLIST_BUCKETS = ((0.0, 10.0, "light"), (10.0, 40.0, "moderate"), (40.0, 150.0, "heavy"))
#: The traffic dimensions in cell-id order: (name, the TrafficSpec density it buckets, the realized key, buckets).
#: The realized key is the density placed (``traffic.realized_<density>``, written by the spawner); until the
#: traffic is spawned the suite's request stands in for it (:attr:`CoverageSpec.fixed`).
TRAFFIC_DIMENSIONS = (
    (TRAFFIC_DIMENSION, "vehicles_per_lane_km", "traffic.realized_vehicles_per_lane_km", TRAFFIC_BUCKETS),
    ("pedestrians", "pedestrians_per_sidewalk_100m", "traffic.realized_pedestrians_per_sidewalk_100m",
     PEDESTRIAN_BUCKETS),
    ("cyclists", "cyclists_per_km", "traffic.realized_cyclists_per_km", CYCLIST_BUCKETS),
)
#: Names of the traffic dimensions (a coverage table's columns).
TRAFFIC_DIMENSION_NAMES = tuple(d[0] for d in TRAFFIC_DIMENSIONS)
TRAFFIC_FIELDS = tuple(d[1] for d in TRAFFIC_DIMENSIONS)
TRAFFIC_NONE = "none"


class CoverageError(SimreadyError):
    """A coverage file or a cell spec is wrong (unknown dimension or value, empty range, …)."""

    kind = "coverage"


@dataclass(frozen=True)
class Coord:
    """One cell's coordinate on one dimension: a category, or a bin ``[lo, hi)`` (``[lo, hi]`` when ``closed``)."""

    dim: str
    value: str | None = None
    lo: float | None = None
    hi: float | None = None
    closed: bool = False
    label: str | None = None

    @property
    def is_bin(self) -> bool:
        return self.lo is not None

    def text(self) -> str:
        if not self.is_bin:
            return str(self.value)
        return self.label if self.label is not None else f"{_num(self.lo)}..{_num(self.hi)}"

    def contains(self, value: Any) -> bool:
        if not self.is_bin:
            return bool(value == self.value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        assert self.lo is not None and self.hi is not None
        return self.lo <= value <= self.hi if self.closed else self.lo <= value < self.hi

    def manifest_dims(self) -> dict[str, Any]:
        if not self.is_bin:
            return {self.dim: self.value}
        out: dict[str, Any] = {f"{self.dim}.lo": self.lo, f"{self.dim}.hi": self.hi}
        if self.label is not None:
            out[self.dim] = self.label
        return out


def _num(x: float | None) -> str:
    return repr(float(x)) if x is not None else "?"


@dataclass(frozen=True)
class Dimension:
    """A declared dimension: ``name``, the realized ``key`` it reads, and its coordinates in order."""

    name: str
    key: str
    coords: tuple[Coord, ...]

    def locate(self, value: Any) -> Coord | None:
        return next((c for c in self.coords if c.contains(value)), None)

    def find(self, text: str, source: str) -> Coord:
        """The coordinate a cell-spec term names (a value, a label or ``lo..hi``)."""
        for c in self.coords:
            if c.text() == text or (c.is_bin and c.label is None and _same_range(text, c)):
                return c
        if ".." in text:
            _parse_range(text, self.name, source)  # an empty or malformed range is its own error
            if not any(c.is_bin for c in self.coords):
                raise CoverageError(source, self.name, f"{self.name} is categorical; {text!r} is a range")
        declared = ", ".join(c.text() for c in self.coords)
        raise CoverageError(source, self.name, f"no declared {self.name} {text!r} (declared: {declared})")


def _parse_range(text: str, dim: str, source: str) -> tuple[float, float]:
    lo_text, _, hi_text = text.partition("..")
    try:
        lo, hi = float(lo_text), float(hi_text)
    except ValueError:
        raise CoverageError(source, dim, f"range {text!r} is not lo..hi with numbers") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise CoverageError(source, dim, f"range {text!r} is not finite")
    if lo >= hi:
        raise CoverageError(source, dim, f"empty range {text!r}: lo must be below hi")
    return lo, hi


def _same_range(text: str, c: Coord) -> bool:
    lo_text, sep, hi_text = text.partition("..")
    try:
        return bool(sep) and float(lo_text) == c.lo and float(hi_text) == c.hi
    except ValueError:
        return False


@dataclass(frozen=True)
class Cell:
    """One coverage cell: its id, coordinates by dimension name (declared order) and target count."""

    id: str
    coords: Mapping[str, Coord]
    target: int

    def value(self, dim: str) -> str | None:
        """The category (or bin label) on ``dim``; None when the coverage does not declare ``dim``."""
        c = self.coords.get(dim)
        if c is None:
            return None
        return c.label if c.is_bin else c.value

    def bin(self, dim: str) -> tuple[float, float] | None:
        """``(lo, hi)`` on a binned ``dim``; None when not declared."""
        c = self.coords.get(dim)
        if c is None or not c.is_bin:
            return None
        assert c.lo is not None and c.hi is not None
        return c.lo, c.hi

    def manifest_dict(self) -> dict[str, Any]:
        dims: dict[str, Any] = {}
        for c in self.coords.values():
            dims.update(c.manifest_dims())
        return {"id": self.id, "dims": dims}


def cell_id(coords: Iterable[Coord]) -> str:
    return "|".join(f"{c.dim}={c.text()}" for c in coords)


@dataclass(frozen=True)
class CoverageSpec:
    """Declared coverage of one intent: dimensions, cells (cross product, declared order), budgets."""

    intent: str
    template: str | None
    dimensions: tuple[Dimension, ...]
    cells: tuple[Cell, ...]
    max_proposals_per_cell: int
    source: str
    #: Realized values the suite fixes for every sample (``(key, value)``): what :meth:`locate` and
    #: :meth:`mismatch` read when a proposal does not carry them yet.
    fixed: tuple[tuple[str, Any], ...] = ()

    def with_traffic(self, densities: float | Mapping[str, float]) -> CoverageSpec:
        """This coverage with the traffic dimensions of a suite asking for ``densities`` (a mapping of
        :class:`~simready.scenario.traffic_spec.TrafficSpec` density names to values; a bare number is
        ``vehicles_per_lane_km``): for each density above 0, every cell gains its bucket (its id
        ``…|traffic=<bucket>|pedestrians=<bucket>|cyclists=<bucket>``, its target unchanged); all 0 is the spec itself."""
        if not isinstance(densities, Mapping):
            densities = {"vehicles_per_lane_km": float(densities)}
        unknown = sorted(set(densities) - {d[1] for d in TRAFFIC_DIMENSIONS})
        if unknown:
            raise CoverageError(self.source, "traffic", f"unknown density {', '.join(unknown)}")
        spec = self
        for name, field_, key, buckets in TRAFFIC_DIMENSIONS:
            density = float(densities.get(field_, 0.0))
            if density <= 0.0 or any(d.name == name for d in spec.dimensions):
                continue
            coord = _bucket_coord(name, buckets, density)
            if coord is None:
                raise CoverageError(self.source, name, f"density {density} is in no bucket")
            dim = Dimension(name, key, (coord,))
            cells = tuple(Cell(f"{c.id}|{cell_id([coord])}", {**c.coords, name: coord}, c.target) for c in spec.cells)
            spec = CoverageSpec(spec.intent, spec.template, (*spec.dimensions, dim), cells,
                                spec.max_proposals_per_cell, spec.source, (*spec.fixed, (key, density)))
        return spec

    def realized_cell(self, cell: Cell, values: Mapping[str, Any]) -> Cell:
        """The cell an accepted sample holds: ``cell`` (the one targeted, with the buckets of the densities the suite
        asked for) with each traffic dimension's bucket that of the density realized (``values``: the sample's
        ``realized``), so a sample is counted where its traffic is, not where it was asked to be; a bucket other
        than the asked one is a cell the suite did not target (target 0). A density above the last bucket (a
        short edge's rounding up) is in the last."""
        coords = dict(cell.coords)
        moved = False
        for name, _field, key, buckets in TRAFFIC_DIMENSIONS:
            value = values.get(key)
            if name not in coords or not isinstance(value, (int, float)) or coords[name].contains(value):
                continue
            coord = _bucket_coord(name, buckets, float(value))
            if coord is None:
                last = len(buckets) - 1
                coord = Coord(name, lo=buckets[last][0], hi=buckets[last][1], closed=True, label=buckets[last][2])
            coords[name] = coord
            moved = True
        if not moved:
            return cell
        return Cell(cell_id(coords.values()), coords, 0)

    def targeted_cell(self, cell_id_: str) -> Cell:
        """The declared cell a sample of ``cell_id_`` was generated for (:meth:`realized_cell` undone: each traffic
        term back to the suite's bucket)."""
        terms = []
        for term in cell_id_.split("|"):
            name = term.partition("=")[0]
            dim = next((d for d in self.dimensions if d.name == name), None)
            if name in TRAFFIC_DIMENSION_NAMES and dim is not None and len(dim.coords) == 1:
                term = cell_id(dim.coords)
            terms.append(term)
        return self.cell("|".join(terms))

    def _values(self, values: Mapping[str, Any]) -> Mapping[str, Any]:
        return {**dict(self.fixed), **values} if self.fixed else values

    def cell(self, cell_id_: str) -> Cell:
        for c in self.cells:
            if c.id == cell_id_:
                return c
        raise CoverageError(self.source, "cells", f"unknown cell {cell_id_!r}")

    def dimension(self, name: str) -> Dimension:
        for d in self.dimensions:
            if d.name == name:
                return d
        known = ", ".join(d.name for d in self.dimensions)
        raise CoverageError(self.source, "dimensions", f"unknown dimension {name!r} (declared: {known})")

    def select(self, spec: str) -> list[Cell]:
        """Cells matching a cell spec ``dim=value|dim=lo..hi`` (``,`` also separates terms)."""
        terms = [t.strip() for t in spec.replace(",", "|").split("|") if t.strip()]
        if not terms:
            raise CoverageError(self.source, "cell", "empty cell spec")
        wanted: dict[str, Coord] = {}
        for term in terms:
            name, sep, text = term.partition("=")
            if not sep or not text:
                raise CoverageError(self.source, "cell", f"cell term {term!r} is not dim=value")
            dim = self.dimension(name.strip())
            if dim.name in wanted:
                raise CoverageError(self.source, dim.name, f"dimension {dim.name} given twice in the cell spec")
            wanted[dim.name] = dim.find(text.strip(), self.source)
        return [c for c in self.cells if all(c.coords[d] == coord for d, coord in wanted.items())]

    def locate(self, values: Mapping[str, Any]) -> Cell | None:
        """The declared cell that realized ``values`` fall in, or None."""
        values = self._values(values)
        coords = []
        for dim in self.dimensions:
            c = dim.locate(values.get(dim.key))
            if c is None:
                return None
            coords.append(c)
        return self.cell(cell_id(coords))

    def mismatch(self, cell: Cell, values: Mapping[str, Any]) -> tuple[str, Any] | None:
        """First ``(dimension, value)`` where ``values`` leave ``cell``, or None."""
        values = self._values(values)
        for dim in self.dimensions:
            if not cell.coords[dim.name].contains(values.get(dim.key)):
                return dim.name, values.get(dim.key)
        return None


def _bucket_coord(name: str, buckets: Sequence[tuple[float, float, str]], density: float) -> Coord | None:
    last = len(buckets) - 1
    for k, (lo, hi, label) in enumerate(buckets):
        c = Coord(name, lo=lo, hi=hi, closed=k == last, label=label)
        if c.contains(density):
            return c
    return None


def traffic_bucket(name: str, density: float) -> str:
    """The bucket label of ``density`` on traffic dimension ``name`` (``none`` at 0 or below)."""
    if density <= 0.0:
        return TRAFFIC_NONE
    buckets = next(d[3] for d in TRAFFIC_DIMENSIONS if d[0] == name)
    coord = _bucket_coord(name, buckets, density)
    if coord is None:
        raise CoverageError("<traffic>", name, f"density {density} is in no bucket")
    assert coord.label is not None
    return coord.label


def traffic_label(cell_id_: str, dim: str = TRAFFIC_DIMENSION) -> str:
    """The bucket on traffic dimension ``dim`` of a cell id: its ``<dim>=`` term, or ``none`` without one."""
    for term in cell_id_.split("|"):
        name, _, value = term.partition("=")
        if name == dim:
            return value
    return TRAFFIC_NONE


def without_traffic(cell_id_: str) -> str:
    """A cell id without its traffic terms: the declared cell it extends."""
    return "|".join(t for t in cell_id_.split("|") if t.partition("=")[0] not in TRAFFIC_DIMENSION_NAMES)
