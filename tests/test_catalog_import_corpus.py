"""Third-party files through ``catalog import --repair`` (issue 30): each pybullet_data file of the corpus
imports certified with its repairs listed, or is refused with one line naming a reason no repair covers.

The files and their expected outcomes are :data:`simready.bench.import_corpus.CORPUS` (``make bench import``
prints the same table with timings; the files that take minutes on one core are checked there only).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from simready.bench.import_corpus import CORPUS, CorpusFile, import_one, steady_turn_radius

pytestmark = pytest.mark.slow
TESTED = [c for c in CORPUS if not c.bench_only]


@pytest.mark.parametrize("item", TESTED, ids=[c.path for c in TESTED])
def test_corpus_file_imports_with_repair_or_is_refused_in_one_line(tmp_path: Path, item: CorpusFile) -> None:
    row = import_one(item, tmp_path / "catalog", repair=True)
    assert row.outcome.startswith(item.expect), row.outcome
    assert "\n" not in row.outcome
    assert set(item.repairs) <= {r.split(" (")[0] for r in row.repairs}, row.repairs
    if item.wheels is not None:
        assert row.wheels is not None and row.wheels[:3] == pytest.approx(item.wheels, abs=2e-3), row.wheels
        # It drives in dynamic-v1 on its own wheelbase: the steady turn at δ = 0.1 rad is wheelbase / tan δ.
        assert steady_turn_radius(row.entry, 0.1) == pytest.approx(row.wheels[0] / math.tan(0.1), rel=0.03)
