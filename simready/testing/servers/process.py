"""Processes the test servers run as: :class:`ManagedProcess` (its own process group, a log file,
readiness with a one-line error naming the log tail, kill / stop / pause / resume, cleanup at interpreter exit),
free ports, and the :class:`Server` every server below is."""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


HOST = "127.0.0.1"
LOG_TAIL_LINES = 5
PORT_ATTEMPTS = 4


class ServerError(RuntimeError):
    """A managed process died or never became ready; the message is one line with its log tail."""


# Every process started and not yet killed, so that an interpreter exit (a failed test, Ctrl-C)
# leaves no server behind, even one whose ManagedProcess was dropped without stop().
_LIVE: set[ManagedProcess] = set()


@atexit.register
def _kill_all_at_exit() -> None:
    for proc in list(_LIVE):
        proc.kill()


def _log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last non-empty lines of a log, joined into one line."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 8192))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    tail = [ln.strip() for ln in text.splitlines() if ln.strip()][-lines:]
    return " | ".join(tail) if tail else "(empty log)"


class ManagedProcess:
    """A subprocess in its own process group, with its stdout and stderr appended to ``log_path``.

    Started on construction. Signals go to the whole group, so a server's children (Postgres
    backends, a Celery worker's pool) are paused, stopped and killed with it. ``stop_signal`` is
    what :meth:`stop` sends first (Postgres wants SIGINT, its "fast" shutdown). ``user`` runs the
    process as that system user (Postgres refuses root).
    """

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        log_path: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        user: str | None = None,
        stop_signal: int = signal.SIGTERM,
    ) -> None:
        self.argv = [str(a) for a in argv]
        self.log_path = Path(log_path)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.name = name or Path(self.argv[0]).name
        self.user = user
        self.stop_signal = stop_signal
        self._popen: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        """Launch the process (again, after it exited: :meth:`restart`)."""
        if self._popen is not None and self.alive:
            raise RuntimeError(f"{self.name} (pid {self.pid}) is already running")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        ids: dict[str, object] = {}
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            ids = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        with self.log_path.open("ab") as log:
            self._popen = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self.env, cwd=self.cwd, start_new_session=True, **ids,
            )
        _LIVE.add(self)

    @property
    def popen(self) -> subprocess.Popen[bytes]:
        assert self._popen is not None
        return self._popen

    @property
    def pid(self) -> int:
        """The leader's PID, which is also the process group's id."""
        return self.popen.pid

    @property
    def alive(self) -> bool:
        """True until the leader exits (a paused process is alive)."""
        return self.popen.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The log's last non-empty lines, as one line."""
        return _log_tail(self.log_path, lines)

    def read_log(self) -> str:
        """The whole log so far (every start of this process appends to it)."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def _describe(self) -> str:
        return f"{self.name} (pid {self.pid})"

    def wait_ready(self, predicate: Callable[[], bool], timeout_s: float, poll_s: float = 0.05) -> float:
        """Poll ``predicate`` until it returns True; returns the seconds waited.

        An exception from ``predicate`` counts as not ready yet. Raises :class:`ServerError` (one
        line, with the log tail and the predicate's last exception) if the process exits first or
        ``timeout_s`` passes; on a timeout the process is killed.
        """
        t0 = time.monotonic()
        last_error = ""
        while True:
            try:
                if predicate():
                    return time.monotonic() - t0
            except Exception as exc:  # noqa: BLE001 - any failure means "not ready yet"
                first_line = (str(exc).strip().splitlines() or [""])[0]
                last_error = f"; last check: {type(exc).__name__}: {first_line}"
            if not self.alive:
                raise ServerError(
                    f"{self._describe()} exited with code {self.returncode} before it was ready "
                    f"(log {self.log_path}: {self.log_tail()})")
            if time.monotonic() - t0 > timeout_s:
                self.kill()
                raise ServerError(
                    f"{self._describe()} not ready after {timeout_s:g} s{last_error} "
                    f"(log {self.log_path}: {self.log_tail()})")
            time.sleep(poll_s)

    def _signal_group(self, sig: int) -> None:
        # The group outlives its leader when children linger (Postgres backends after the
        # postmaster is SIGKILLed), so signal it even when the leader has exited.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def kill(self) -> None:
        """SIGKILL the whole group and reap the leader."""
        if self._popen is None:
            return
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        _LIVE.discard(self)

    def stop(self, timeout_s: float = 10.0) -> int | None:
        """``stop_signal`` to the group, SIGKILL if the leader is still there after ``timeout_s``.

        Returns the exit code. A paused group is resumed first, or it could not act on the signal.
        """
        if self._popen is None:
            return None
        if self.alive:
            self._signal_group(self.stop_signal)
            self._signal_group(signal.SIGCONT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=timeout_s)
        self.kill()
        return self.returncode

    def restart(self, timeout_s: float = 10.0) -> None:
        """Stop, then start the same command; the log is appended to; the PID changes."""
        self.stop(timeout_s)
        self.start()

    def pause(self) -> None:
        """SIGSTOP the group: it holds its sockets but answers nothing (a hung server)."""
        self._signal_group(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT the group."""
        self._signal_group(signal.SIGCONT)

    def __enter__(self) -> ManagedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "alive" if self._popen is not None and self.alive else f"exited {self.returncode}"
        return f"ManagedProcess({self.name}, pid={self.pid if self._popen else None}, {state})"


def stop_all(procs: Sequence[ManagedProcess], timeout_s: float = 10.0) -> None:
    """:meth:`ManagedProcess.stop` for several processes at once: each gets its stop signal at once, then all share one
    ``timeout_s`` before the ones still there are killed (one after the other, a stack of slow stoppers would wait
    ``timeout_s`` each)."""
    for proc in procs:
        if proc._popen is not None and proc.alive:
            proc._signal_group(proc.stop_signal)
            proc._signal_group(signal.SIGCONT)
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        if proc._popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=max(deadline - time.monotonic(), 0.0))
            proc.kill()


def free_port(host: str = HOST) -> int:
    """A TCP port nobody listens on right now: bind port 0, read it, close.

    Another process can take it before our server binds it; :func:`start_on_free_port` retries.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def start_on_free_port(
    launch: Callable[[int], ManagedProcess],
    ready: Callable[[int], bool],
    timeout_s: float,
    attempts: int = PORT_ATTEMPTS,
) -> tuple[ManagedProcess, int]:
    """``launch(port)`` on a fresh free port until ``ready(port)``; returns the process and port.

    A process that exits with "in use" in its log lost the port to someone else and is started
    again on another; any other failure is raised at once.
    """
    for attempt in range(attempts):
        port = free_port()
        proc = launch(port)
        try:
            proc.wait_ready(lambda: ready(port), timeout_s)
            return proc, port
        except ServerError:
            proc.kill()
            if "in use" not in proc.log_tail().lower() or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@dataclass
class Server:
    """What every server here shares: where it listens, its process, how long it took to start.

    ``startup_s``: seconds from the call to the first successful client request (for Postgres,
    initdb included). :meth:`pause` / :meth:`resume` / :meth:`kill` act on its whole process group:
    a paused server accepts connections in the kernel and answers nothing (a hung server); a
    killed one refuses them.
    """

    host: str
    port: int
    process: ManagedProcess
    startup_s: float

    @property
    def pid(self) -> int:
        """The server's main process (its process group's id)."""
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.alive

    def pause(self) -> None:
        self.process.pause()

    def resume(self) -> None:
        self.process.resume()

    def kill(self) -> None:
        self.process.kill()

def http_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP status is an answer
