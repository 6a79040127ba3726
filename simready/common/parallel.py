"""One stage's per-sample work on every core this process may use: :func:`map_samples`.

A stage's samples are independent (each its own folder and its own seeded streams), so they can be worked on
side by side and give the same bytes: each worker is a fork of the calling process (the loaded template,
catalog and code come along, nothing is pickled but the item's index and its result), results come back in the
items' order. ``SIMREADY_WORKERS`` sets how many processes (1: in this process, one item after the other);
unset, one per core this process may run on (``os.sched_getaffinity``), never more than there are items.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import multiprocessing as mp
import multiprocessing.util as mp_util
import os
import pickle
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import IO, Any, TypeVar

from simready.common.errors import SimreadyError
from simready.common.hashing import known_count, learn_digests, learned_digests

T = TypeVar("T")
R = TypeVar("R")

#: The environment variable that sets the number of worker processes.
WORKERS_ENV = "SIMREADY_WORKERS"

#: What the forked workers run: (function, items, stop), set by :func:`map_samples` just before it forks them;
#: once ``stop`` is set, a worker starts no further item.
_JOB: tuple[Callable[[Any], Any], Sequence[Any], Any] | None = None

#: The cores shared by several processes that each run stages (:func:`share_cores`): one token per core; a process
#: computes only while it holds one. None: this process and its workers have the cores to themselves.
_CORES: Any = None


def share_cores(n: int) -> None:
    """Let the processes this one forks from now on share ``n`` cores: each holds a token while it computes
    (:func:`holding_core`), and :func:`map_samples` lends the caller's to its workers, which take one per item.
    So two runs side by side keep every core busy, one's workers filling the other's idle moments, without more
    processes computing at once than there are cores (a core's caches shared by two renders cost each ~10 % more
    CPU)."""
    global _CORES
    _CORES = mp.get_context("fork").Semaphore(n) if n > 1 and "fork" in mp.get_all_start_methods() else None


@contextlib.contextmanager
def holding_core() -> Iterator[None]:
    """This process computes: one of the shared cores' tokens held meanwhile (none to hold where the cores are not
    shared)."""
    if _CORES is None:
        yield
        return
    _CORES.acquire()
    try:
        yield
    finally:
        _CORES.release()


@contextlib.contextmanager
def _lending_core() -> Iterator[None]:
    """The caller waits for its workers: its token is theirs meanwhile."""
    if _CORES is None:
        yield
        return
    _CORES.release()
    try:
        yield
    finally:
        _CORES.acquire()


class _Skipped(Exception):
    """An item a worker did not start: another failed, or the caller was interrupted."""


def worker_count(n_items: int | None = None) -> int:
    """Processes for a stage: ``SIMREADY_WORKERS`` if set, else the cores this process may run on; at most
    ``n_items``, at least 1."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            raise SimreadyError(WORKERS_ENV, "", f"{raw!r} is not a whole number of worker processes") from None
        if n < 1:
            raise SimreadyError(WORKERS_ENV, "", f"{n} worker processes; name at least 1")
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n_items is not None:
        n = min(n, n_items)
    return max(1, n)


class WorkerError(RuntimeError):
    """An item failed in a worker with an exception that cannot travel back as itself (its text does)."""


def _run(index: int) -> Any:
    assert _JOB is not None
    fn, items, stop = _JOB
    if stop.is_set():
        raise _Skipped(index)
    try:
        mark = known_count()
        with holding_core():
            result = fn(items[index])
        # The files the item hashed or wrote, with their sha256, go back with its result: the caller's later
        # readers (and the workers it forks next) find them hashed (simready.common.hashing).
        return result, learned_digests(mark)
    except BaseException as exc:
        sent = _travelling(exc)
        if sent is exc:
            raise
        raise sent from None


def _travelling(exc: BaseException) -> BaseException:
    """``exc`` if it comes back from another process as itself (pickled), else a :class:`WorkerError` with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return WorkerError("".join(traceback.format_exception_only(type(exc), exc)).strip())
    return exc


def map_samples(fn: Callable[[T], R], items: Sequence[T], workers: int | None = None) -> list[R]:
    """``[fn(item) for item in items]``, on ``workers`` forked processes (default :func:`worker_count`).

    ``fn`` and ``items`` reach the workers by the fork, not by pickling (a closure is fine); each result comes
    back pickled. The first failure in the items' order is raised: the items not yet started are dropped and
    those under way end first. On Ctrl-C (or a SIGTERM turned into an exception) the workers get a SIGINT, so
    they unwind as the caller does (every ``finally`` runs). Where fork is not available, one worker is asked
    for, or this is already a worker, the items run here, one after the other.
    """
    global _JOB
    n = worker_count(len(items)) if workers is None else max(1, min(workers, len(items)))
    if n <= 1 or _JOB is not None or "fork" not in mp.get_all_start_methods():
        return [fn(item) for item in items]
    context = mp.get_context("fork")
    stop = context.Event()
    _JOB = (fn, items, stop)
    pool = ProcessPoolExecutor(max_workers=n, mp_context=context, initializer=_in_worker)
    try:
        with _lending_core():
            futures = [pool.submit(_run, i) for i in range(len(items))]
            results = []
            for f in futures:
                result, digests = f.result()
                learn_digests(digests)
                results.append(result)
    except BaseException as exc:
        stop.set()
        if not isinstance(exc, Exception):
            # Ctrl-C, a SIGTERM made an exception, Dagster's interrupt of the step: the workers stop too.
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                if process.is_alive():
                    os.kill(process.pid, signal.SIGINT)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        _JOB = None
    pool.shutdown(wait=True)
    return results


@contextlib.contextmanager
def beside(fn: Callable[[], R], workers: int | None = None) -> Iterator[Callable[[], R]]:
    """``fn()`` in a forked process of its own while the body of the ``with`` goes on; the callable it yields
    returns ``fn``'s result (or raises its exception) once the ``with`` has ended, which waits for the process.

    For a step's serial parts that do not read each other's files: the second core works on one while the caller
    works on the other (its own :func:`map_samples` included). The process takes one of the shared cores' tokens
    while it computes (:func:`share_cores`), so no more processes compute at once than there are cores. ``fn``
    reaches the process by the fork; its result comes back pickled, with the digests of the files it hashed or
    wrote. If the body raises, the process gets a SIGINT and unwinds before the exception goes on. Where fork is
    not available, one worker is asked for (``workers``, default :func:`worker_count`), or this is already a worker,
    ``fn`` runs here first.
    """
    if (worker_count() if workers is None else workers) <= 1 or _JOB is not None or "fork" not in mp.get_all_start_methods():
        value = fn()
        yield lambda: value
        return

    def work() -> bytes:
        forked_child()
        mark = known_count()
        try:
            with holding_core():
                record: tuple[bool, Any] = (True, fn())
        except Exception as exc:  # noqa: BLE001 - it travels back and is raised there
            record = (False, _travelling(exc))
        atexit._run_exitfuncs()
        return pickle.dumps((*record, learned_digests(mark)))

    pid, out = fork_writing(work)
    done: list[tuple[bool, Any]] = []
    with out:
        try:
            yield lambda: _outcome(done)
        except BaseException:
            signal_if_alive(pid, signal.SIGINT)
            _wait(pid)
            raise
        _wait(pid)
        out.seek(0)
        text = out.read()
    try:
        ok, value, digests = pickle.loads(text)
    except Exception:
        raise WorkerError(f"the process beside (pid {pid}) ended without its result") from None
    learn_digests(digests)
    done.append((ok, value))


def fork_writing(work: Callable[[], bytes]) -> tuple[int, IO[bytes]]:
    """Fork a process that runs ``work`` and writes the bytes it returns into an unnamed temporary file; (its pid, the
    file), read once it has ended. A file, not a pipe: a pipe's buffer fills and the writer waits for a reader that
    waits for it to end. The process never returns into the caller's frames: it exits 0 once the bytes are written,
    1 otherwise (a ``KeyboardInterrupt`` quietly: it unwound as asked; another failure with its traceback)."""
    out = tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid, out
    code = 1
    try:
        out.write(work())
        out.flush()
        code = 0
    except KeyboardInterrupt:
        pass
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _outcome(done: list[tuple[bool, Any]]) -> Any:
    if not done:
        raise RuntimeError("beside()'s result is asked for before its `with` has ended")
    ok, value = done[0]
    if not ok:
        raise value
    return value


def signal_if_alive(pid: int, sig: int) -> None:
    """``os.kill`` of a process that may have ended already (then nothing)."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait(pid: int) -> None:
    """Wait for a forked process to end; a Ctrl-C meanwhile is passed on to it (a SIGINT), and raised here once it
    has ended."""
    interrupted = False
    while True:
        try:
            os.waitpid(pid, 0)
            break
        except ChildProcessError:
            break
        except KeyboardInterrupt:
            interrupted = True
            signal_if_alive(pid, signal.SIGINT)
    if interrupted:
        raise KeyboardInterrupt


def _in_worker() -> None:
    """In a worker, Ctrl-C raises ``KeyboardInterrupt`` (whatever handler the parent had installed for it), and
    the exit handlers the work registers (``atexit``: a per-process temporary folder) run when the worker ends,
    as they would at a process's exit; the caller's, inherited by the fork, stay the caller's.

    What the fork brought (the loaded template, catalog and code) is moved out of the cyclic garbage collector's
    view (``gc.freeze``): it outlives the worker, and a full collection walked all of it. On an imported street
    (~250 000 objects) one took ~60 ms, about one per three dynamic-v1 samples of a reference pool, and each walk
    also copied the parent's pages. Reference counting still frees what the work drops; results do not depend on it.
    """
    forked_child()
    mp_util.Finalize(None, atexit._run_exitfuncs, exitpriority=0)


def forked_child() -> None:
    """What a forked child of this project does first (a stage's worker, ``simready run``'s run processes): what the
    fork brought out of the cyclic collector's walks (``gc.freeze``), Ctrl-C raising ``KeyboardInterrupt`` whatever
    handler the parent had, and the parent's exit handlers dropped (the child's own, registered later, run when it
    ends)."""
    gc.freeze()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    atexit._clear()
