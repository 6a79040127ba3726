"""Suite-wide coverage over causes: per-cell counts summed over batches, targets, flags, heatmap.

Per-batch cell counts (``cells.json`` written by :mod:`simready.scenario.batch`)
add up to the suite's; a cell below its target is flagged with its dominant
rejection reason, so a reviewer sees *why* it is empty, not only that it is.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from simready.scenario.coverage import (TRAFFIC_DIMENSION_NAMES, TRAFFIC_FIELDS, TRAFFIC_NONE, CoverageSpec, traffic_label,
                                       without_traffic)
from simready.scenario.programs import coverage_of


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


def _densities(d: float | Mapping[str, float]) -> dict[str, float]:
    return dict(d) if isinstance(d, Mapping) else {TRAFFIC_FIELDS[0]: float(d)}


def coverage_table(merged: dict[str, dict[str, Any]], intents: Iterable[str],
                   traffic: Mapping[str, Iterable[float | Mapping[str, float]]] | None = None) -> list[dict[str, Any]]:
    """One row per declared cell of each intent (declared before generation), filled or not.

    ``traffic``: per intent, the background traffic the suite asks for it, each
    a mapping of density names to values (a bare number: vehicles per lane km;
    all 0: none; an intent not named has none); each density is a coverage
    dimension (SPEC §20), so each combination of buckets has its own cells
    (:meth:`~simready.scenario.coverage.CoverageSpec.with_traffic`). Each row
    names its bucket on each traffic dimension (columns ``traffic``,
    ``pedestrians``, ``cyclists``).
    """
    rows = []
    for intent in sorted(set(intents)):
        base = coverage_of(intent)
        asked = [_densities(d) for d in (traffic or {}).get(intent, ())] or [{}]
        specs: dict[str, CoverageSpec] = {}
        for d in sorted(asked, key=lambda d: tuple(d.get(f, 0.0) for f in TRAFFIC_FIELDS)):
            spec = base.with_traffic(d)
            specs.setdefault(spec.cells[0].id, spec)
        declared = [(c.id, c.target) for spec in specs.values() for c in spec.cells]
        known = {cid for cid, _ in declared}
        # Samples whose realized traffic fell in a bucket the suite did not ask for (a request near a bucket's edge,
        # fewer placed around the scenario's actors): their cells, untargeted (target 0), after the declared ones.
        prefix = f"{intent}/"
        landed = [(k[len(prefix):], 0) for k in sorted(merged) if k.startswith(prefix) and k[len(prefix):] not in known
                  and without_traffic(k[len(prefix):]) != k[len(prefix):]]
        # A declared cell whose samples all realized another bucket was proposed, not never.
        shape = {(without_traffic(cid), tuple(traffic_label(cid, d) == TRAFFIC_NONE for d in TRAFFIC_DIMENSION_NAMES)): cid
                 for cid, _ in declared}
        moved = {}
        for cid, _ in landed:
            home = shape.get((without_traffic(cid),
                              tuple(traffic_label(cid, d) == TRAFFIC_NONE for d in TRAFFIC_DIMENSION_NAMES)))
            if home is not None:
                moved[home] = f"realized another traffic bucket: {cid}"
        for cell_id_, target in declared + landed:
            c = merged.get(f"{intent}/{cell_id_}")
            accepted = c["accepted"] if c else 0
            reasons = c["by_reason"].most_common(1) if c else []
            rows.append(
                {
                    "intent": intent,
                    "cell": cell_id_,
                    **{dim: traffic_label(cell_id_, dim) for dim in TRAFFIC_DIMENSION_NAMES},
                    "target": target,
                    **({} if target or cell_id_ in known else {"untargeted": True}),
                    "proposals": c["proposals"] if c else 0,
                    "accepted": accepted,
                    "rejected": c["rejected"] if c else 0,
                    "fill": round(min(1.0, accepted / target), 4) if target else 1.0,
                    "under_target": accepted < target,
                    "dominant_rejection": reasons[0][0] if reasons else ("" if c else moved.get(cell_id_, "never proposed")),
                }
            )
    return rows


def coverage_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Suite-wide and per-intent counts. Cells: declared (``cells``), holding at least one accepted sample
    (``cells_with_samples``, ``with_samples``), holding their target's worth (``cells_filled``, ``filled``);
    samples: ``proposals``, ``accepted`` and ``target`` (the cells' targets summed)."""
    by_intent: dict[str, dict[str, int]] = defaultdict(
        lambda: {"cells": 0, "with_samples": 0, "filled": 0, "proposals": 0, "accepted": 0, "target": 0})
    declared = [r for r in rows if not r.get("untargeted")]
    for r in rows:
        b = by_intent[r["intent"]]
        b["proposals"] += r["proposals"]
        b["accepted"] += r["accepted"]
        if r.get("untargeted"):
            continue  # samples counted, no declared cell
        b["cells"] += 1
        b["with_samples"] += 1 if r["accepted"] > 0 else 0
        b["filled"] += 0 if r["under_target"] else 1
        b["target"] += r["target"]
    cells = len(declared)
    touched = sum(1 for r in declared if r["accepted"] > 0)
    # Per bucket of each traffic dimension: ``by_traffic`` (vehicles), ``by_pedestrians``, ``by_cyclists``.
    by_dim: dict[str, dict[str, dict[str, int]]] = {}
    for dim in TRAFFIC_DIMENSION_NAMES:
        per: dict[str, dict[str, int]] = defaultdict(lambda: {"cells": 0, "accepted": 0, "target": 0})
        for r in rows:
            t = per[r.get(dim, TRAFFIC_NONE)]
            t["cells"] += 0 if r.get("untargeted") else 1
            t["accepted"] += r["accepted"]
            t["target"] += r["target"]
        by_dim[f"by_{dim}"] = dict(sorted(per.items()))
    return {
        "cells": cells,
        "cells_with_samples": touched,
        "cells_filled": sum(1 for r in declared if not r["under_target"]),
        "fill_fraction": round(sum(r["fill"] for r in declared) / cells, 4) if cells else 0.0,
        "by_intent": dict(sorted(by_intent.items())),
        **by_dim,
    }


def plot_coverage_heatmap(rows: list[dict[str, Any]], out_png: Path) -> Path:
    """Heatmap per intent over its first two cell dimensions; a square sums the cells it stands for: accepted
    samples / target samples. The titles count cells as ``coverage_totals`` does (with a sample, filled to target),
    so the picture, the asset's metadata and the run summary say the same numbers."""
    intents = sorted({r["intent"] for r in rows})
    totals = coverage_totals(rows)
    fig = Figure(figsize=(4.2 * max(1, len(intents)), 4.0))
    FigureCanvasAgg(fig)
    fig.suptitle(f"{totals['cells']} cells: {totals['cells_with_samples']} with a sample, {totals['cells_filled']} "
                 f"filled to target.  A square: accepted samples / target samples of the cells it holds", fontsize=9)
    for i, intent in enumerate(intents):
        ax = fig.add_subplot(1, len(intents), i + 1)
        spec = coverage_of(intent)
        dims = [d.name for d in spec.dimensions][:2]
        labels = [[c.text() for c in d.coords] for d in spec.dimensions[:2]]
        grid_acc = np.zeros([len(labels[0]), len(labels[1]) if len(labels) > 1 else 1])
        grid_tgt = np.zeros_like(grid_acc)
        for r in (r for r in rows if r["intent"] == intent):
            # A traffic bucket's cell squares with the declared cell it extends (SPEC §20).
            cell = spec.cell(without_traffic(r["cell"]))
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
        t = totals["by_intent"][intent]
        ax.set_title(f"{intent}\n{t['cells']} cells: {t['with_samples']} with a sample, {t['filled']} filled to target",
                     fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046, label="accepted samples / target samples")
    fig.tight_layout()
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=110)
    return out_png

