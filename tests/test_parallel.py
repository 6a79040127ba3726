"""simready.common.parallel: a stage's samples on forked workers, results in the items' order, failures raised."""

from __future__ import annotations

import os

import pytest

from simready.common.errors import SimreadyError
from simready.common.parallel import WORKERS_ENV, WorkerError, beside, map_samples, worker_count
from tests.fixtures.dagster_jobs import AS_A_TERMINAL_STARTS_IT, interrupt


class _Odd(Exception):
    """An exception whose constructor does not take its args back: it cannot be unpickled as itself."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a}/{b}")


def test_results_in_order_from_other_processes() -> None:
    offset = 10  # reaches the workers through the fork (a closure), not by pickling
    out = map_samples(lambda i: (i + offset, os.getpid()), list(range(6)), workers=2)
    assert [v for v, _ in out] == list(range(10, 16))
    assert os.getpid() not in {pid for _, pid in out}


def test_a_worker_keeps_what_the_fork_brought_out_of_the_collector() -> None:
    import gc

    assert all(map_samples(lambda _: gc.get_freeze_count() > 0, [0, 1], workers=2))


def test_the_files_a_worker_hashed_come_back_hashed(tmp_path) -> None:
    from simready.common.hashing import file_sha256, remembered_sha256

    files = [tmp_path / f"{i}.bin" for i in range(4)]
    for i, f in enumerate(files):
        f.write_bytes(bytes([i]) * 100)
    digests = map_samples(lambda f: file_sha256(f), files, workers=2)
    assert [remembered_sha256(f)[1] for f in files] == digests  # type: ignore[index]


def test_one_worker_runs_here() -> None:
    assert {pid for pid in map_samples(lambda _: os.getpid(), [1, 2, 3], workers=1)} == {os.getpid()}


def test_first_failure_in_order_is_raised() -> None:
    def fn(i: int) -> int:
        if i in (2, 4):
            raise ValueError(f"item {i}")
        return i

    with pytest.raises(ValueError, match="item 2"):
        map_samples(fn, list(range(6)), workers=2)


def test_unpicklable_failure_comes_back_as_its_text() -> None:
    def fn(i: int) -> int:
        raise _Odd(i, 7)

    with pytest.raises(WorkerError, match="_Odd: 3/7"):
        map_samples(fn, [3, 4], workers=2)


def test_a_worker_does_not_fork_again() -> None:
    nested = map_samples(lambda i: map_samples(lambda _: os.getpid(), [0, 1], workers=2), [0, 1], workers=2)
    for pids in nested:
        assert len(set(pids)) == 1 and os.getpid() not in pids


def test_beside_runs_in_another_process_while_the_caller_goes_on(tmp_path) -> None:
    import time

    from simready.common.hashing import file_sha256, remembered_sha256

    def side() -> tuple[int, str, float]:
        (tmp_path / "side.start").write_text(repr(time.time()))
        f = tmp_path / "side.bin"
        f.write_bytes(b"x" * 100)
        return os.getpid(), file_sha256(f), time.time()

    with beside(side, workers=2) as got:
        while not (tmp_path / "side.start").exists():  # the caller goes on meanwhile (here: it waits to see it)
            time.sleep(0.01)
        here = map_samples(lambda _: os.getpid(), [0, 1], workers=2)  # the caller's own workers, as usual
    pid, digest, _ = got()
    assert pid != os.getpid() and pid not in here and os.getpid() not in here
    assert remembered_sha256(tmp_path / "side.bin")[1] == digest  # type: ignore[index]  # the file comes back hashed


def test_beside_raises_its_failure_after_the_with_and_runs_here_on_one_worker(monkeypatch) -> None:
    def fails() -> int:
        raise _Odd(1, 2)

    with beside(fails, workers=2) as got:
        pass
    with pytest.raises(WorkerError, match="_Odd: 1/2"):
        got()
    with beside(lambda: ValueError("kept"), workers=2) as value:
        pass
    assert str(value()) == "kept"
    monkeypatch.setenv(WORKERS_ENV, "1")
    with beside(os.getpid) as got:
        pass
    assert got() == os.getpid()


def test_beside_is_interrupted_when_the_body_fails(tmp_path) -> None:
    import time

    def side() -> None:
        try:
            (tmp_path / "started").write_text("")
            time.sleep(30)
        finally:
            (tmp_path / "unwound").write_text("")

    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="body"):
        with beside(side, workers=2):
            while not (tmp_path / "started").exists():
                time.sleep(0.01)
            raise RuntimeError("body")
    assert (tmp_path / "unwound").exists() and time.perf_counter() - t0 < 20


def test_worker_count_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert worker_count() == 3 and worker_count(2) == 2 and worker_count(0) == 1
    monkeypatch.delenv(WORKERS_ENV)
    assert worker_count() == len(os.sched_getaffinity(0))
    for bad in ("two", "0"):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(SimreadyError, match=WORKERS_ENV):
            worker_count()


def test_ctrl_c_stops_the_workers_and_starts_no_further_item(tmp_path) -> None:
    import subprocess
    import sys
    import textwrap

    code = AS_A_TERMINAL_STARTS_IT + textwrap.dedent(f"""
        import os, time
        from pathlib import Path
        from simready.common.parallel import map_samples

        def fn(i):
            try:
                Path({str(tmp_path)!r}, f"started-{{i}}").touch()
                sys.stdout.write("started\\n"); sys.stdout.flush()  # one write: the two lines do not interleave
                time.sleep(60)
            finally:
                Path({str(tmp_path)!r}, f"unwound-{{i}}").touch()

        try:
            map_samples(fn, list(range(6)), workers=2)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert [child.stdout.readline().strip() for _ in range(2)] == ["started"] * 2  # both workers busy
        status = interrupt(child, 30, "the caller")  # to the caller only
        assert status == 130, child.communicate()[1]
    finally:
        child.kill()
        child.communicate()
    started = sorted(p.name for p in tmp_path.glob("started-*"))
    assert len(started) == 2  # no item started after the interrupt
    assert sorted(p.name for p in tmp_path.glob("unwound-*")) == [s.replace("started", "unwound") for s in started]


def test_a_workers_exit_handlers_run_when_it_ends_and_the_callers_stay_its_own(tmp_path) -> None:
    import atexit
    from pathlib import Path

    def fn(i: int) -> int:
        atexit.register(Path(tmp_path, f"exit-{os.getpid()}").touch)
        return os.getpid()

    def callers() -> None:  # must not run in the workers
        Path(tmp_path, "caller-exit").touch()

    atexit.register(callers)
    try:
        pids = set(map_samples(fn, list(range(4)), workers=2))
    finally:
        atexit.unregister(callers)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"exit-{pid}" for pid in pids)


def test_shared_cores_bound_what_computes_at_once_across_processes(tmp_path) -> None:
    """Two "runs" (forked processes), each a serial part and then a stage on two workers, sharing two cores: every
    item and serial part ran, never more than two of them at once, and the runs overlapped (the cores were shared,
    not taken in turn)."""
    import multiprocessing as mp
    import time

    from simready.common import parallel

    log = tmp_path / "spans"
    log.mkdir()

    def span(name: str) -> None:
        start = time.time()
        time.sleep(0.15)
        (log / name).write_text(f"{start} {time.time()}")

    def run(lane: int) -> None:
        with parallel.holding_core():
            span(f"{lane}-serial")
            map_samples(lambda i: span(f"{lane}-item{i}"), [0, 1, 2], workers=2)

    parallel.share_cores(2)
    try:
        lanes = [mp.get_context("fork").Process(target=run, args=(k,)) for k in (0, 1)]
        for p in lanes:
            p.start()
        for p in lanes:
            p.join(30)
        assert [p.exitcode for p in lanes] == [0, 0]
    finally:
        parallel.share_cores(1)
    spans = {f.name: tuple(map(float, f.read_text().split())) for f in log.iterdir()}
    assert set(spans) == {f"{k}-{n}" for k in (0, 1) for n in ("serial", "item0", "item1", "item2")}
    edges = sorted([(a, 1) for a, _ in spans.values()] + [(b, -1) for _, b in spans.values()], key=lambda e: (e[0], e[1]))
    busy = peak = 0
    for _, step in edges:
        busy += step
        peak = max(peak, busy)
    assert peak == 2
    first = {k: min(a for n, (a, _) in spans.items() if n.startswith(f"{k}-")) for k in (0, 1)}
    last = {k: max(b for n, (_, b) in spans.items() if n.startswith(f"{k}-")) for k in (0, 1)}
    assert first[1] < last[0] and first[0] < last[1]  # side by side
    assert parallel._CORES is None
