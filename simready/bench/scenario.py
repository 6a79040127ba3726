"""Scenario-generation benchmark: conditional yield vs the independent baseline, and the rate, per intent.

``python -m simready.bench.scenario`` prints, per intent on its default
template: proposals and accepted manifests of a conditional run over the
whole declared coverage (every cell to its target, full ladder), the yield
overall and over the cells the template can realize, the baseline's yield
over the same variables and the same ladder, and accepted manifests per
second on one core (process CPU time; the run is single-threaded). A
baseline that accepts nothing is printed with its 95 % upper bound (3 / N).
User programs (``data/programs/*.py`` and a fresh ``simready scenario
new-intent`` scaffold, SPEC §19) follow, each marked ``(file)``, on their own
default templates — the same templates as the built-ins beside them — so their
rate reads against the built-ins'.
Figures are measured, not asserted: the cores are shared.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from simready.catalog.catalog import ensure_catalog
from simready.scenario.baseline import run_baseline
from simready.scenario.generator import generate
from simready.common import paths
from simready.scenario.programs import PROGRAMS, coverage_of, load_programs, program
from simready.scenario.scaffold import write_scaffold

#: Baseline proposals per intent.
BASELINE_PROPOSALS = 3000


def _pct(x: float) -> str:
    return f"{100 * x:6.2f} %"


def bench_intent(intent: str, baseline_proposals: int = BASELINE_PROPOSALS) -> dict[str, float]:
    prog = program(intent)
    catalog = ensure_catalog()
    generate(prog.default_template, intent, 2, catalog=catalog)  # warm the template and catalog caches
    wanted = sum(c.target for c in coverage_of(intent).cells)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    cond = generate(prog.default_template, intent, wanted, catalog=catalog)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    base = run_baseline(prog.default_template, intent, baseline_proposals, catalog=catalog)
    c, b = cond.coverage, base.coverage
    infeasible = c.infeasible()
    feasible_props = c.proposals - sum(s.proposals for s in infeasible)
    return {
        "template": prog.default_template,
        "proposals": c.proposals,
        "accepted": c.accepted,
        "yield": c.accepted / c.proposals if c.proposals else 0.0,
        "yield_feasible": c.accepted / feasible_props if feasible_props else 0.0,
        "cells": len(c.cells),
        "infeasible": len(infeasible),
        "infeasible_example": infeasible[0].cell + ": " + "; ".join(infeasible[0].dominant_reasons(2)) if infeasible
        else "",
        "baseline_proposals": b.proposals,
        "baseline_accepted": b.accepted,
        "baseline_yield": b.accepted / b.proposals if b.proposals else 0.0,
        "rate_cpu": c.accepted / cpu if cpu > 0 else 0.0,
        "rate_wall": c.accepted / wall if wall > 0 else 0.0,
    }


def user_programs(folder: Path) -> list[str]:
    """Load ``data/programs/*.py`` and a scaffold written into ``folder``; their intent ids."""
    files = [*sorted((paths.DATA_DIR / "programs").glob("*.py")),
             write_scaffold("scaffold_pull_out", folder / "scaffold_pull_out.py")]
    return load_programs(files)


def run(intents: list[str] | None = None, baseline_proposals: int = BASELINE_PROPOSALS) -> None:
    with tempfile.TemporaryDirectory(prefix="simready-bench-programs-") as tmp:
        users = set(user_programs(Path(tmp)))
        chosen = intents or [*sorted(PROGRAMS), *sorted(users)]
        rows = sorted(((program(i).default_template, i in users, i) for i in chosen))
        _table(rows, users, baseline_proposals)


def _table(rows: list[tuple[str, bool, str]], users: set[str], baseline_proposals: int) -> None:
    print("scenario     template                       intent                                  proposals accepted  "
          "yield(all) yield(feasible)  baseline             manifests/s (cpu, wall)")
    for template, _, intent in rows:
        r = bench_intent(intent, baseline_proposals)
        label = f"{intent} (file)" if intent in users else intent
        if r["baseline_accepted"]:
            base = f"{_pct(r['baseline_yield'])} ({r['baseline_accepted']}/{r['baseline_proposals']})"
        else:
            base = f"0/{r['baseline_proposals']} (< {100 * 3 / r['baseline_proposals']:.2f} %)"
        print(f"scenario     {template:<30} {label:<39} {r['proposals']:9d} {r['accepted']:8d}   {_pct(r['yield'])}   "
              f"{_pct(r['yield_feasible'])}     {base:<20} {r['rate_cpu']:6.0f}, {r['rate_wall']:6.0f}")
        if r["infeasible"]:
            print(f"             {r['infeasible']} of {r['cells']} cells infeasible, e.g. {r['infeasible_example']}")


if __name__ == "__main__":
    run(sys.argv[1:] or None)
