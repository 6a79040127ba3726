"""What the OpenDRIVE import hands around: lane keys and their template names, one sampled lane, the report and
the imported map."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from simready.maps.opendrive import RoadMark
from simready.maps.refline import Array


LaneKey = tuple[str, int, int]


def lane_name(key: LaneKey) -> str:
    """Template id of lane ``(road id, section index, lane id)``."""
    road, k, lane = key
    return f"road{safe_id(road)}_sec{k}_lane{lane}"


def safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", text)


@dataclass
class ImportReport:
    """What the import did: counts, defaults applied, and everything skipped (one line each)."""

    template_id: str
    source: str
    source_sha256: str
    version: str
    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)
    link_mismatches: list[str] = field(default_factory=list)
    #: One line per lane repaired (its outline refined or cut to its valid part) or left out.
    repairs: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"imported {self.source} (OpenDRIVE {self.version}, sha256 {self.source_sha256[:12]}) as {self.template_id}: "
               + ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))]
        out += [f"default: {line}" for line in self.defaults]
        out += [f"skipped: {line}" for line in self.skipped]
        out += [f"repair: {line}" for line in self.repairs]
        out += [f"links: {line}" for line in self.link_mismatches]
        return out


@dataclass(frozen=True)
class SampledLane:
    """One lane of one lane section, sampled at road arc lengths ``s`` ((N,), metres, increasing).

    ``inner``, ``outer``, ``centre``: (N, 2) world points (metres) of the border
    nearer the reference line, the far border and the centreline, in road-s
    order (not travel order); ``width``: (N,) metres; ``forward``: the lane is
    driven along s; ``junction``: its road lies in a junction; ``speed_mps``:
    its speed record (−1 when the map has none).
    """

    key: LaneKey
    type: str
    s: Array
    inner: Array
    outer: Array
    centre: Array
    width: Array
    forward: bool
    junction: bool
    speed_mps: float
    #: Heights (m) of the inner border, outer border and centre at each sample; None where the road is flat.
    z: tuple[Array, Array, Array] | None = None
    #: The road mark along the outer border that covers most of the section (None: the map gives none).
    mark: RoadMark | None = None
    line: int = 0
    section_line: int = 0
    #: The same lane sampled ``factor`` times finer (used to repair a folded outline), over ``s_full``.
    resample: Callable[[int], dict[str, Any]] | None = field(default=None, compare=False, repr=False)
    #: The section's samples the lane was sampled on before any trimming (what ``resample`` refines).
    s_full: Array | None = field(default=None, compare=False, repr=False)


@dataclass
class ImportedMap:
    """The template as plain data (ready for YAML) and the report."""

    data: dict[str, Any]
    report: ImportReport
    lanes: dict[str, SampledLane]
    file_successors: dict[str, tuple[str, ...]]
