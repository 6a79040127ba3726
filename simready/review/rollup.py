"""Acceptance per template and batch: the suite's counts split the way a reviewer drills into them (issue 19).

One row per template × batch partition, counting what ``validity_reports`` counts on that partition (bases and
branches the gate accepted or rejected) beside what the scenario ladder did (proposals, samples it accepted).
Summed over the rows they are the suite's numbers: the run summary's, ``coverage_report``'s ``bases_accepted``,
``bases_rejected`` and branches table, the review index's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simready.review.summary import SampleSummary

#: The roll-up's columns and their types (Dagster table schema names).
ROLLUP_COLUMNS = [("template", "string"), ("batch", "string"), ("proposed", "int"), ("samples", "int"),
                  ("bases_accepted", "int"), ("bases_rejected", "int"), ("branches_accepted", "int"),
                  ("branches_rejected", "int")]


def acceptance_by_batch(judged: Iterable[SampleSummary], ladder: dict[tuple[str, str], dict[str, int]]
                        ) -> list[dict[str, Any]]:
    """Rows sorted by template and batch. ``ladder``: ``{(template, batch): {"proposals", "accepted"}}`` from each
    batch's record (``proposed`` and ``samples``); ``judged``: every gated sample's summary."""
    rows = {key: _row(*key, c["proposals"], c["accepted"]) for key, c in ladder.items()}
    for s in judged:
        row = rows.setdefault((s.template, s.batch), _row(s.template, s.batch, 0, 0))
        row["bases_accepted" if s.accepted else "bases_rejected"] += 1
        for _, accepted in s.branches:
            row["branches_accepted" if accepted else "branches_rejected"] += 1
    return [rows[k] for k in sorted(rows)]


def _row(template: str, batch: str, proposed: int, samples: int) -> dict[str, Any]:
    return {"template": template, "batch": batch, "proposed": proposed, "samples": samples, "bases_accepted": 0,
            "bases_rejected": 0, "branches_accepted": 0, "branches_rejected": 0}
