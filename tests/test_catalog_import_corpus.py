"""Third-party files through ``catalog import --repair`` (issue 30): each pybullet_data file of the corpus
imports certified with its repairs listed, or is refused with one line naming a reason no repair covers.

The files and their expected outcomes are :data:`simready.bench.import_corpus.CORPUS` (``make bench import``
prints the same table with timings).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simready.bench.import_corpus import CORPUS, CorpusFile, import_one

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("item", CORPUS, ids=[c.path for c in CORPUS])
def test_corpus_file_imports_with_repair_or_is_refused_in_one_line(tmp_path: Path, item: CorpusFile) -> None:
    row = import_one(item, tmp_path / "catalog", repair=True)
    assert row.outcome.startswith(item.expect), row.outcome
    assert "\n" not in row.outcome
    assert set(item.repairs) <= {r.split(" (")[0] for r in row.repairs}, row.repairs
