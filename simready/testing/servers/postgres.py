"""PostgreSQL from the ``pgserver`` wheel's bundled binaries, ``fsync=off`` (a crash loses the test's data)."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from simready.testing.servers.process import HOST, ManagedProcess, Server, ServerError, start_on_free_port


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
