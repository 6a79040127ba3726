"""One SQLAlchemy engine per SQLite database file for Dagster's SQLite storages, per process.

Why: Dagster 1.13's SQLite run, event-log and schedule storages open every connection through a new
``create_engine(..., poolclass=NullPool)`` and dispose of it after. An engine is cheap to hold but costs
~0.6 ms to make, and SQLAlchemy keeps its cache of compiled statements on the engine, so every statement
was compiled again on every connection too: an empty sample batch's run (its steps and checks, no sample)
spent about half its CPU there. Here the same engine is handed back for the same database file and
arguments, with ``NullPool`` still, so every connection is as before a fresh one, opened and closed around
its statements (nothing is pooled across a fork or between processes; the storages' locking and SQLite's own
are unchanged), and ``dispose`` after each use only recreates the empty pool. The database files get the same
rows; only the statements' compilation and the engines' construction are no longer repeated.

Applied by :class:`simready.assets.partitions.SimreadyInstance` (the ``instance_class`` of the project's
``dagster.yaml``) when an instance opens; a storage module or an argument this does not know is left to Dagster.
"""

from __future__ import annotations

import importlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from sqlalchemy.pool import NullPool

#: Dagster's modules whose ``create_engine`` makes an engine per connection to a SQLite file.
STORAGE_MODULES = (
    "dagster._core.storage.event_log.sqlite.sqlite_event_log",
    "dagster._core.storage.runs.sqlite.sqlite_run_storage",
    "dagster._core.storage.schedules.sqlite.sqlite_schedule_storage",
)
#: Engines kept per process: the instance's index, runs and schedules files and the latest runs' own event-log
#: files (one each); the oldest is dropped beyond this (a long-lived daemon sees a new run file per run).
MAX_ENGINES = 32

_LOCK = threading.Lock()
_ENGINES: OrderedDict[tuple[str, str], Any] = OrderedDict()


def _key(url: object, kwargs: dict[str, Any]) -> tuple[str, str] | None:
    """What identifies a reusable engine: a SQLite URL with ``NullPool`` and nothing else but plain connect
    arguments; None for anything else (made by Dagster's own call each time)."""
    text = str(url)
    if not text.startswith("sqlite:") or kwargs.get("poolclass") is not NullPool:
        return None
    rest = {k: v for k, v in kwargs.items() if k != "poolclass"}
    if set(rest) - {"connect_args"}:
        return None
    args = rest.get("connect_args", {})
    if not isinstance(args, dict) or not all(isinstance(v, (str, int, float, bool)) for v in args.values()):
        return None
    return text, repr(sorted(args.items()))


def reusing(create: Callable[..., Any]) -> Callable[..., Any]:
    """``create`` (SQLAlchemy's ``create_engine``), returning the engine it made before for the same SQLite
    database and arguments (:func:`_key`)."""
    if getattr(create, "simready_reuses_engines", False):
        return create

    def create_engine(url: object, **kwargs: Any) -> Any:
        key = _key(url, kwargs)
        if key is None:
            return create(url, **kwargs)
        with _LOCK:
            engine = _ENGINES.get(key)
            if engine is not None:
                _ENGINES.move_to_end(key)
                return engine
        engine = create(url, **kwargs)
        with _LOCK:
            engine = _ENGINES.setdefault(key, engine)
            _ENGINES.move_to_end(key)
            while len(_ENGINES) > MAX_ENGINES:
                _ENGINES.popitem(last=False)
        return engine

    create_engine.simready_reuses_engines = True  # type: ignore[attr-defined]
    return create_engine


def reuse_sqlite_engines() -> None:
    """Dagster's SQLite storages given :func:`reusing` engines (once per process; idempotent)."""
    for name in STORAGE_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # a Dagster without this storage: nothing to do for it
            continue
        create = getattr(module, "create_engine", None)
        if create is not None:
            module.create_engine = reusing(create)  # type: ignore[attr-defined]
