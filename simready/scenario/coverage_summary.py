"""Suite-wide coverage over causes: per-cell counts summed over batches, targets, flags, heatmap.

Per-batch cell counts (``cells.json`` written by :mod:`simready.scenario.batch`)
add up to the suite's; a cell below its target is flagged with its dominant
rejection reason, so a reviewer sees *why* it is empty, not only that it is.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from simready.scenario.coverage import load_coverage


def merge_cells(cell_files: Iterable[Path]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"proposals": 0, "accepted": 0, "rejected": 0, "by_stage": Counter(), "by_reason": Counter()}
    )
    for path in sorted(cell_files):
        for key, c in json.loads(path.read_text()).items():
            m = merged[key]
            for field in ("proposals", "accepted", "rejected"):
                m[field] += c[field]
            m["by_stage"].update(c["by_stage"])
            m["by_reason"].update(c["by_reason"])
    return dict(sorted(merged.items()))


def coverage_table(merged: dict[str, dict[str, Any]], intents: Iterable[str]) -> list[dict[str, Any]]:
    """One row per declared cell of each intent (declared before generation), filled or not."""
    rows = []
    for intent in sorted(set(intents)):
        spec = load_coverage(intent)
        for cell in spec.cells:
            c = merged.get(f"{intent}/{cell.id}")
            accepted = c["accepted"] if c else 0
            reasons = c["by_reason"].most_common(1) if c else []
            rows.append(
                {
                    "intent": intent,
                    "cell": cell.id,
                    "target": cell.target,
                    "proposals": c["proposals"] if c else 0,
                    "accepted": accepted,
                    "rejected": c["rejected"] if c else 0,
                    "fill": round(min(1.0, accepted / cell.target), 4) if cell.target else 1.0,
                    "under_target": accepted < cell.target,
                    "dominant_rejection": reasons[0][0] if reasons else ("" if c else "never proposed"),
                }
            )
    return rows


def coverage_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_intent: dict[str, dict[str, int]] = defaultdict(lambda: {"cells": 0, "filled": 0, "proposals": 0, "accepted": 0})
    for r in rows:
        b = by_intent[r["intent"]]
        b["cells"] += 1
        b["filled"] += 0 if r["under_target"] else 1
        b["proposals"] += r["proposals"]
        b["accepted"] += r["accepted"]
    cells = len(rows)
    touched = sum(1 for r in rows if r["accepted"] > 0)
    return {
        "cells": cells,
        "cells_with_samples": touched,
        "cells_filled": sum(1 for r in rows if not r["under_target"]),
        "fill_fraction": round(sum(r["fill"] for r in rows) / cells, 4) if cells else 0.0,
        "by_intent": dict(sorted(by_intent.items())),
    }


def plot_coverage_heatmap(rows: list[dict[str, Any]], out_png: Path) -> Path:
    """Heatmap per intent: accepted / target over the intent's first two cell dimensions."""
    intents = sorted({r["intent"] for r in rows})
    fig = Figure(figsize=(4.2 * max(1, len(intents)), 3.6))
    FigureCanvasAgg(fig)
    for i, intent in enumerate(intents):
        ax = fig.add_subplot(1, len(intents), i + 1)
        spec = load_coverage(intent)
        dims = [d.name for d in spec.dimensions][:2]
        labels = [[c.text() for c in d.coords] for d in spec.dimensions[:2]]
        grid_acc = np.zeros([len(labels[0]), len(labels[1]) if len(labels) > 1 else 1])
        grid_tgt = np.zeros_like(grid_acc)
        for r in (r for r in rows if r["intent"] == intent):
            cell = spec.cell(r["cell"])
            a = labels[0].index(cell.coords[dims[0]].text())
            b = 0 if len(dims) < 2 else labels[1].index(cell.coords[dims[1]].text())
            grid_acc[a, b] += r["accepted"]
            grid_tgt[a, b] += r["target"]
        fill = np.divide(grid_acc, grid_tgt, out=np.zeros_like(grid_acc), where=grid_tgt > 0)
        im = ax.imshow(np.clip(fill, 0, 1), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_yticks(range(len(labels[0])), labels[0], fontsize=7)
        ax.set_ylabel(dims[0])
        if len(dims) > 1:
            ax.set_xticks(range(len(labels[1])), labels[1], fontsize=7, rotation=30)
            ax.set_xlabel(dims[1])
        for (y, x), v in np.ndenumerate(grid_acc):
            ax.text(x, y, f"{int(v)}/{int(grid_tgt[y, x])}", ha="center", va="center", fontsize=7, color="w")
        ax.set_title(intent, fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046, label="fill (accepted / target)")
    fig.tight_layout()
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=110)
    return out_png

