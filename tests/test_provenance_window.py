"""Two runs of one two-asset step side by side: the second asset's recorded input is its own partition's first.

Dagster reads a step-internal input's provenance from the asset's latest materialization, of any partition;
:func:`simready.assets.provenance.recorded_together` keeps another run's from landing between the two yields.
The window is widened here (a sleep between the yields) so the race happens every time without the lock.
"""

# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import contextlib
import multiprocessing as mp
import os
import time
from pathlib import Path

import dagster as dg
import pytest

from simready.assets.provenance import recorded_together

PARTS = dg.StaticPartitionsDefinition(["a", "b"])


def _assets(locked: bool) -> dg.AssetsDefinition:
    @dg.multi_asset(partitions_def=PARTS, specs=[dg.AssetSpec("first"), dg.AssetSpec("second", deps=["first"])])
    def step(context: dg.AssetExecutionContext):
        key = context.partition_key
        window = recorded_together(context, "first") if locked else contextlib.nullcontext()
        with window:
            yield dg.MaterializeResult(asset_key="first", data_version=dg.DataVersion(f"first-{key}"))
            time.sleep(1.5 if key == "a" else 0.0)  # the window the other run lands in without the lock
            yield dg.MaterializeResult(asset_key="second", data_version=dg.DataVersion(f"second-{key}"))
    return step


def _run(home: str, key: str, locked: bool, delay_s: float) -> None:
    time.sleep(delay_s)
    os.environ["DAGSTER_HOME"] = home  # a forked child: its own environment
    instance = dg.DagsterInstance.get()
    dg.materialize([_assets(locked)], partition_key=key, instance=instance, raise_on_error=True)


def _recorded_inputs(home: str) -> dict[str, str]:
    instance = dg.DagsterInstance.from_config(home)
    out = {}
    for record in instance.fetch_materializations(dg.AssetKey("second"), limit=10).records:
        m = record.asset_materialization
        assert m is not None and m.partition is not None
        out[m.partition] = (m.tags or {})["dagster/input_data_version/first"]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("locked", [True, False])
def test_the_second_asset_records_its_own_partitions_first(tmp_path: Path, locked: bool) -> None:
    home = str(tmp_path / "home")
    Path(home).mkdir()
    ctx = mp.get_context("fork")
    runs = [ctx.Process(target=_run, args=(home, "a", locked, 0.0)),
            ctx.Process(target=_run, args=(home, "b", locked, 0.6))]
    for p in runs:
        p.start()
    for p in runs:
        p.join(120)
        assert p.exitcode == 0
    recorded = _recorded_inputs(home)
    if locked:
        assert recorded == {"a": "first-a", "b": "first-b"}
    else:  # the race the lock prevents: a's second recorded b's first
        assert recorded["a"] == "first-b"
