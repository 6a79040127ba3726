"""The window in which a multi-asset step records an asset that its own second asset reads.

``checkpoints`` → ``action_branches`` and ``sensor_observations`` → ``perception_truth`` are each one step with
two assets, the second depending on the first. Dagster records the second's input provenance (the input's data
version and event pointer) from the *asset's* latest materialization, not the partition's: with two runs of
the same job side by side (``simready run`` runs them so, and so does a backfill), another partition's
materialization landing between the two yields was recorded as this partition's input (seen: ``action_branches``
of ``b0000|city_crossing`` recording ``b0001|city_crossing``'s checkpoint version; Dagster warns "Data version
mismatch"). :func:`recorded_together` holds an exclusive lock on the instance's folder from before the first
result is yielded until the second's event is stored, so the latest materialization Dagster reads is this
step's own.

It is a file lock: it covers every run of one machine's instance (the embedded default, where ``simready run``
puts its runs side by side). Runs of the production deployment on different machines are not covered by it.
"""
# No `from __future__ import annotations`: kept like the other Dagster modules.

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg


@contextmanager
def recorded_together(context: dg.AssetExecutionContext, asset: str) -> Iterator[None]:
    """Hold ``<instance root>/.provenance-<asset>.lock`` for the ``with`` block: wrap both yields in it (the
    generator resumes after the second yield only once Dagster has stored its event)."""
    root = Path(context.instance.root_directory)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".provenance-{asset}.lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
