"""Two runs of one two-asset step side by side: the second asset's recorded input is its own partition's first.

Dagster reads a step-internal input's provenance from the asset's latest materialization, of any partition;
:func:`simready.assets.provenance.recorded_together` keeps another run's from landing between the two yields.
The two runs are ordered by signal files, not by sleeps, so the race happens every time without the lock:
b's step starts once a's first is recorded, and a's second waits for b's whole run (unlocked) or for b to
be waiting at the lock (locked).
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
WAIT_S = 60.0


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path.name} did not appear within {WAIT_S:.0f} s")
        time.sleep(0.02)


def _assets(locked: bool, signals: Path) -> dg.AssetsDefinition:
    @dg.multi_asset(partitions_def=PARTS, specs=[dg.AssetSpec("first"), dg.AssetSpec("second", deps=["first"])])
    def step(context: dg.AssetExecutionContext):
        key = context.partition_key
        if key == "b":  # b's step begins inside a's window
            _wait_for(signals / "a-first")
            (signals / "b-entering").touch()
        window = recorded_together(context, "first") if locked else contextlib.nullcontext()
        with window:
            yield dg.MaterializeResult(asset_key="first", data_version=dg.DataVersion(f"first-{key}"))
            if key == "a":  # a's first is recorded once the generator resumes
                (signals / "a-first").touch()
                if locked:  # b is at the lock (or about to be); give it time to try
                    _wait_for(signals / "b-entering")
                    time.sleep(0.5)
                else:  # without the lock, b's whole run lands in the window
                    _wait_for(signals / "b-done")
            yield dg.MaterializeResult(asset_key="second", data_version=dg.DataVersion(f"second-{key}"))
    return step


def _run(home: str, key: str, locked: bool, signals: Path) -> None:
    os.environ["DAGSTER_HOME"] = home  # a forked child: its own environment
    instance = dg.DagsterInstance.get()
    dg.materialize([_assets(locked, signals)], partition_key=key, instance=instance, raise_on_error=True)
    (signals / f"{key}-done").touch()


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
    signals = tmp_path / "signals"
    signals.mkdir()
    dg.DagsterInstance.from_config(home).dispose()  # the storage's tables made once, before the two runs race
    ctx = mp.get_context("fork")
    runs = [ctx.Process(target=_run, args=(home, key, locked, signals)) for key in ("a", "b")]
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
