"""Signal states per tick: the template's signals and the manifest's signal programs, one column each, with the stop
lines of the lanes they control.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from simready.scenario.manifest import ScenarioManifest
from simready.world.template import WorldTemplate
from simready.world.template_model.signals import PedestrianSignal, Signal


SIGNAL_CODES = {"green": 0, "amber": 1, "yellow": 1, "red": 2, "red_amber": 3, "off": 4}
SIGNAL_NAMES = ("green", "amber", "red", "red_amber", "off")


@dataclass(frozen=True, eq=False)
class SignalTable:
    """Signal states per tick (codes of :data:`SIGNAL_NAMES`) and the stop line of each controlled lane.

    ``states``: (ticks + 1, S) for ticks 0..warmup+clip; ``ids``: template
    signal ids, then manifest program ids; ``stop_lines``: lane id →
    ``(s of the stop line on that lane, signal column)``.
    """

    ids: tuple[str, ...]
    states: NDArray[np.int8]
    stop_lines: dict[str, tuple[float, int]]
    #: The other lanes a template signal controls, with its stop line carried across onto each (the station of
    #: the stop line's point on that lane): background traffic stops there too (SPEC §20); the scenario's actors
    #: keep the one stop line they always had.
    side_stop_lines: dict[str, tuple[float, int]] = field(default_factory=dict)

    def column(self, signal_id: str) -> int:
        return self.ids.index(signal_id)


def state_codes(sig: Signal | PedestrianSignal, t: NDArray[np.floating[Any]]) -> NDArray[np.int8]:
    """``SIGNAL_CODES[sig.state_at(x)]`` for every ``x`` of ``t``: the same float arithmetic, element by element
    (numpy's float remainder is Python's ``%``), without a Python call per tick."""
    u = np.remainder(t - sig.offset_s, sig.cycle_s)
    codes = np.full(len(t), SIGNAL_CODES[sig.program[-1].state], dtype=np.int8)
    open_ = np.ones(len(t), dtype=bool)
    for phase in sig.program:
        hit = open_ & (u < phase.duration_s)
        codes[hit] = SIGNAL_CODES[phase.state]
        open_ &= ~hit
        u = u - phase.duration_s
    return codes


def signal_table(m: ScenarioManifest, template: WorldTemplate) -> SignalTable:
    ticks = m.warmup_ticks + m.clip_ticks
    t = (np.arange(ticks + 1) - m.warmup_ticks) * m.dt
    cols: list[NDArray[np.int8]] = []
    ids: list[str] = []
    stop_lines: dict[str, tuple[float, int]] = {}
    side_stop_lines: dict[str, tuple[float, int]] = {}
    template_stop: dict[str, float] = {}
    for sig in sorted(template.signals, key=lambda s: s.id):
        col = len(ids)
        ids.append(sig.id)
        cols.append(state_codes(sig, t))
        template_stop[sig.stop_line.lane] = sig.stop_line.s_m
        stop_xy = template.lane_graph.lanes[sig.stop_line.lane].point_at(sig.stop_line.s_m)
        for lane in sig.controls:
            if lane == sig.stop_line.lane:
                stop_lines[lane] = (sig.stop_line.s_m, col)
            elif lane in template.lane_graph.lanes:
                side_stop_lines[lane] = (template.lane_graph.lanes[lane].project(*stop_xy)[0], col)
    graph = template.lane_graph
    for prog in sorted(m.signal_programs, key=lambda s: s.id):
        col = len(ids)
        ids.append(prog.id)
        edges = np.cumsum([0.0] + [p.duration_s for p in prog.phases])
        codes = np.array([SIGNAL_CODES[p.state] for p in prog.phases], dtype=np.int8)
        phase_t = np.mod(t + prog.offset_s, prog.cycle_s)
        k = np.clip(np.searchsorted(edges, phase_t, side="right") - 1, 0, len(codes) - 1)
        cols.append(codes[k])
        for lane in prog.controls:
            s_stop = template_stop.get(lane, max(graph.lanes[lane].length_m - 1.0, 0.0))
            stop_lines[lane] = (s_stop, col)
    states = np.stack(cols, 1) if cols else np.zeros((ticks + 1, 0), dtype=np.int8)
    states.setflags(write=False)
    return SignalTable(tuple(ids), states, stop_lines,
                       {k: v for k, v in sorted(side_stop_lines.items()) if k not in stop_lines})
