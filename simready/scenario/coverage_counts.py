"""Counts kept per cell while generating (SPEC §13).

The generator keeps :class:`CellStats` per cell: proposals (ladder
evaluations, repairs included) = accepted + rejected, rejections by stage
and by reason, and a status once generation stops.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from simready.scenario.coverage import Cell, CoverageSpec


#: Dominant rejection reasons reported for a cell that could not be filled.
DOMINANT_REASONS = 3


@dataclass
class CellStats:
    """Counts for one cell. ``proposals`` = ``accepted`` + ``rejected`` always."""

    cell: str
    target: int
    proposals: int = 0
    accepted: int = 0
    rejected: int = 0
    by_stage: Counter[str] = field(default_factory=Counter)
    by_reason: Counter[str] = field(default_factory=Counter)
    status: str = "untargeted"

    def record(self, accepted: bool, stage: str = "", reason: str = "") -> None:
        self.proposals += 1
        if accepted:
            self.accepted += 1
        else:
            self.rejected += 1
            self.by_stage[stage] += 1
            self.by_reason[f"{stage}:{reason}"] += 1

    @property
    def yield_(self) -> float:
        return self.accepted / self.proposals if self.proposals else 0.0

    def dominant_reasons(self, k: int = DOMINANT_REASONS) -> list[str]:
        return [f"{reason} x{n}" for reason, n in sorted(self.by_reason.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "target": self.target,
            "proposals": self.proposals,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "yield": round(self.yield_, 6),
            "rejected_by_stage": dict(sorted(self.by_stage.items())),
            "rejected_by_reason": dict(sorted(self.by_reason.items())),
            "status": self.status,
            "dominant_reasons": self.dominant_reasons() if self.rejected else [],
        }


#: Bucket for proposals rejected before any cell was known (the baseline's, which pick no cell).
UNASSIGNED = "(unassigned)"


@dataclass
class CoverageReport:
    """Per-cell counts of one generation run, in declared cell order (plus the unassigned bucket)."""

    intent: str
    template_id: str
    program: str
    cells: dict[str, CellStats]

    @classmethod
    def start(cls, spec: CoverageSpec, template_id: str, program: str, cells: Sequence[Cell] | None = None) -> CoverageReport:
        chosen = spec.cells if cells is None else cells
        stats = {c.id: CellStats(c.id, c.target) for c in chosen}
        return cls(spec.intent, template_id, program, stats)

    def stats(self, cell: str) -> CellStats:
        if cell not in self.cells:
            self.cells[cell] = CellStats(cell, 0)
        return self.cells[cell]

    @property
    def proposals(self) -> int:
        return sum(s.proposals for s in self.cells.values())

    @property
    def accepted(self) -> int:
        return sum(s.accepted for s in self.cells.values())

    @property
    def rejected(self) -> int:
        return sum(s.rejected for s in self.cells.values())

    def infeasible(self) -> list[CellStats]:
        return [s for s in self.cells.values() if s.status == "infeasible"]

    def as_dict(self) -> dict[str, Any]:
        total_stage: Counter[str] = Counter()
        total_reason: Counter[str] = Counter()
        for s in self.cells.values():
            total_stage.update(s.by_stage)
            total_reason.update(s.by_reason)
        return {
            "intent": self.intent,
            "template_id": self.template_id,
            "program": self.program,
            "proposals": self.proposals,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "yield": round(self.accepted / self.proposals, 6) if self.proposals else 0.0,
            "rejected_by_stage": dict(sorted(total_stage.items())),
            "rejected_by_reason": dict(sorted(total_reason.items())),
            "infeasible_cells": [{"cell": s.cell, "dominant_reasons": s.dominant_reasons()} for s in self.infeasible()],
            "cells": [s.as_dict() for s in self.cells.values()],
        }
