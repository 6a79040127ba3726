"""Dagster's SQLite storages reuse one engine per database file (issue 29: the runs' event-log writes), with the
same rows stored, in forked run processes too."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.pool import NullPool, StaticPool

from simready.assets.partitions import SimreadyInstance
from simready.assets.sqlite_engines import reusing

ROOT = Path(__file__).resolve().parent.parent


def test_one_engine_per_sqlite_file_and_arguments(tmp_path):
    made = []

    def create(url, **kwargs):
        made.append(url)
        return sa.create_engine(url, **kwargs)

    engine = reusing(create)
    a = f"sqlite:///{tmp_path / 'a.db'}"
    b = f"sqlite:///{tmp_path / 'b.db'}"
    first = engine(a, poolclass=NullPool, connect_args={"timeout": 30})
    assert engine(a, poolclass=NullPool, connect_args={"timeout": 30}) is first
    assert engine(a, poolclass=NullPool, connect_args={"timeout": 5}) is not first  # other arguments: its own
    assert engine(b, poolclass=NullPool) is not first
    # What it does not know is Dagster's own call every time: another pool, other arguments.
    for kwargs in ({"poolclass": StaticPool}, {"poolclass": NullPool, "echo": True}):
        n = len(made)
        assert engine(a, **kwargs) is not engine(a, **kwargs)
        assert len(made) == n + 2
    assert reusing(engine) is engine
    # A reused engine still opens a fresh connection each time (NullPool): a disposed engine works on.
    with first.connect() as conn:
        conn.execute(sa.text("create table t (x int)"))
        conn.commit()
    first.dispose()
    with first.connect() as conn:
        assert conn.execute(sa.text("select count(*) from t")).scalar() == 0


@dg.asset
def one() -> int:
    return 1


@dg.asset_check(asset=one)
def one_is_one() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


def test_runs_in_this_process_and_forked_ones_are_stored(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    instance = dg.DagsterInstance.from_config(str(home))
    assert isinstance(instance, SimreadyInstance)
    defs = dg.Definitions(assets=[one], asset_checks=[one_is_one])
    job = defs.resolve_implicit_global_asset_job_def()
    first = job.execute_in_process(instance=instance)
    pid = os.fork()
    if pid == 0:  # a run in a forked process, as `simready run` runs them
        try:
            os._exit(0 if job.execute_in_process(instance=instance).success else 1)
        except BaseException:
            os._exit(2)
    assert os.waitpid(pid, 0)[1] == 0
    third = job.execute_in_process(instance=instance)
    runs = instance.get_runs()
    assert len(runs) == 3 and all(r.is_success for r in runs)
    for result in (first, third):
        assert result.success
        events = {e.dagster_event.event_type for e in instance.all_logs(result.run_id) if e.dagster_event}
        assert {dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_CHECK_EVALUATION,
                dg.DagsterEventType.RUN_SUCCESS} <= events
    materializations = instance.fetch_materializations(dg.AssetKey("one"), limit=10).records
    assert len(materializations) == 3  # the forked run's too, in the instance's index
    assert instance.get_latest_materialization_event(dg.AssetKey("one")).run_id == third.run_id
