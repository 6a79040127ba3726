"""The loopback servers of simready.testing.servers are real processes reachable over TCP (issue 15)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from simready.testing import servers
from simready.testing.servers import (
    ManagedProcess,
    ServerError,
    postgres_server,
    redis_server,
    s3_env,
    s3_server,
    sqlalchemy_url,
)


def _wait_dead(proc: ManagedProcess, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while proc.alive and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not proc.alive, f"{proc} still alive"


def _wait_status(pid: int, status: str, timeout_s: float = 5.0) -> None:
    """Signals are delivered asynchronously: poll the process state."""
    def current() -> str:
        try:
            return psutil.Process(pid).status()
        except psutil.NoSuchProcess:
            return psutil.STATUS_ZOMBIE  # dead and already reaped

    deadline = time.monotonic() + timeout_s
    while current() != status and time.monotonic() < deadline:
        time.sleep(0.01)
    assert current() == status


# --- ManagedProcess ---------------------------------------------------------------------------


def test_process_death_before_ready_is_one_line_with_log_tail(tmp_path: Path) -> None:
    proc = ManagedProcess(["sh", "-c", "echo starting; echo 'bind: Address in use' >&2; exit 3"],
                          log_path=tmp_path / "p.log", name="fake")
    with proc, pytest.raises(ServerError) as err:
        proc.wait_ready(lambda: False, timeout_s=10)
    msg = str(err.value)
    assert "\n" not in msg
    assert f"fake (pid {proc.pid}) exited with code 3 before it was ready" in msg
    assert "starting | bind: Address in use" in msg


def test_process_timeout_kills_and_names_last_check(tmp_path: Path) -> None:
    def never() -> bool:
        raise ConnectionRefusedError("nobody home")

    proc = ManagedProcess(["sleep", "30"], log_path=tmp_path / "p.log")
    with proc, pytest.raises(ServerError, match=r"sleep \(pid \d+\) not ready after 0.3 s; last check: "
                                               r"ConnectionRefusedError: nobody home \(log .*: \(empty log\)\)"):
        proc.wait_ready(never, timeout_s=0.3)
    assert not proc.alive


def test_process_group_signals_reach_children(tmp_path: Path) -> None:
    child_file = tmp_path / "child"
    proc = ManagedProcess(["sh", "-c", f"sleep 30 & echo $! > {child_file}; wait"], log_path=tmp_path / "p.log")
    proc.wait_ready(lambda: child_file.exists() and child_file.read_text().strip() != "", timeout_s=5)
    child = psutil.Process(int(child_file.read_text()))
    proc.pause()
    _wait_status(proc.pid, psutil.STATUS_STOPPED)
    _wait_status(child.pid, psutil.STATUS_STOPPED)
    proc.resume()
    _wait_status(child.pid, psutil.STATUS_SLEEPING)
    proc.kill()
    assert not proc.alive and proc.returncode == -signal.SIGKILL
    _wait_status(child.pid, psutil.STATUS_ZOMBIE)  # the grandchild died with the group


def test_stop_escalates_to_sigkill_and_restart_gets_new_pid(tmp_path: Path) -> None:
    # An ignored signal stays ignored across exec, so the whole group shrugs off SIGTERM.
    proc = ManagedProcess(["sh", "-c", "trap '' TERM; echo up; sleep 30"], log_path=tmp_path / "p.log")
    proc.wait_ready(lambda: "up" in proc.log_tail(), timeout_s=5)
    first = proc.pid
    t0 = time.monotonic()
    assert proc.stop(timeout_s=0.3) == -signal.SIGKILL
    assert time.monotonic() - t0 < 3
    proc.start()
    assert proc.alive and proc.pid != first
    proc.stop(timeout_s=0.3)


# --- Servers ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_postgres_over_tcp_with_a_dagster_instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dagster as dg
    import psycopg2
    import yaml

    with postgres_server(tmp_path / "pg") as pg:
        assert pg.url == f"postgresql://postgres@127.0.0.1:{pg.port}/postgres"
        conn = psycopg2.connect(pg.url, connect_timeout=5)
        with conn, conn.cursor() as cur:
            cur.execute("SELECT inet_server_addr()::text, inet_server_port()")
            assert cur.fetchone() == ("127.0.0.1/32", pg.port)  # TCP, not the unix socket
            cur.execute("CREATE TABLE t (k text PRIMARY KEY, v int)")
            cur.execute("INSERT INTO t VALUES ('a', 1), ('b', 2)")
            cur.execute("SELECT k, v FROM t ORDER BY k")
            assert cur.fetchall() == [("a", 1), ("b", 2)]
        conn.close()

        # A Dagster instance on its own database of this server (SQLAlchemy's form of its URL).
        db_url = pg.create_database("dagster_test")
        assert sqlalchemy_url(db_url) == f"postgresql+psycopg2://postgres@127.0.0.1:{pg.port}/dagster_test"
        home = tmp_path / "dagster_home"
        home.mkdir()
        storage = {"postgres": {"postgres_url": sqlalchemy_url(db_url)}}
        (home / "dagster.yaml").write_text(yaml.safe_dump({"storage": storage}))
        monkeypatch.setenv("DAGSTER_HOME", str(home))

        @dg.asset
        def answer() -> int:
            return 42

        with dg.DagsterInstance.get() as instance:
            result = dg.materialize([answer], instance=instance)
            assert result.success
            run = instance.get_run_by_id(result.run_id)
            assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
            assert instance.get_latest_materialization_event(dg.AssetKey("answer")) is not None
        conn = psycopg2.connect(db_url, connect_timeout=5)
        with conn, conn.cursor() as cur:
            cur.execute("SELECT status FROM runs WHERE run_id = %s", (result.run_id,))
            assert cur.fetchone() == ("SUCCESS",)
        conn.close()

        os.kill(pg.pid, signal.SIGKILL)
        _wait_dead(pg.process)
        with pytest.raises(psycopg2.OperationalError):
            psycopg2.connect(pg.url, connect_timeout=2)


@pytest.mark.slow
def test_redis_over_tcp(tmp_path: Path) -> None:
    import redis

    with redis_server(tmp_path / "redis") as server:
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        client = redis.Redis.from_url(server.url, socket_timeout=2)
        client.set("k", b"v")
        assert client.get("k") == b"v"
        assert client.config_get("save") == {"save": ""} and client.config_get("appendonly")["appendonly"] == "no"
        client.close()

        os.kill(server.pid, signal.SIGKILL)
        _wait_dead(server.process)
        with pytest.raises(redis.ConnectionError):
            redis.Redis.from_url(server.url, socket_connect_timeout=1).ping()


@pytest.mark.slow
def test_s3_over_http_pause_resume_restart_kill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3
    import botocore.config
    import botocore.exceptions

    with s3_server(tmp_path / "s3") as server:
        for key, value in s3_env(server.endpoint_url).items():  # the client finds the endpoint by env alone
            monkeypatch.setenv(key, value)
        s3 = boto3.client("s3", config=botocore.config.Config(
            connect_timeout=1, read_timeout=1, retries={"max_attempts": 1, "mode": "standard"}))
        s3.create_bucket(Bucket="bucket")
        s3.put_object(Bucket="bucket", Key="x/y.bin", Body=b"\x00payload")
        assert s3.get_object(Bucket="bucket", Key="x/y.bin")["Body"].read() == b"\x00payload"
        assert [o["Key"] for o in s3.list_objects_v2(Bucket="bucket")["Contents"]] == ["x/y.bin"]

        server.pause()
        with pytest.raises(botocore.exceptions.ReadTimeoutError):
            s3.get_object(Bucket="bucket", Key="x/y.bin")
        server.resume()
        assert s3.get_object(Bucket="bucket", Key="x/y.bin")["Body"].read() == b"\x00payload"

        first = server.pid
        server.restart()  # same URL, new process, empty
        assert server.pid != first
        assert s3.list_buckets()["Buckets"] == []

        os.kill(server.pid, signal.SIGKILL)
        _wait_dead(server.process)
        with pytest.raises(botocore.exceptions.EndpointConnectionError):
            s3.list_buckets()


@pytest.mark.slow
def test_a_port_taken_before_the_server_binds_it_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        ports = iter([taken, servers.free_port()])
        monkeypatch.setattr(servers.process, "free_port", lambda: next(ports))
        with redis_server(tmp_path / "redis") as server:
            assert server.port != taken
            assert "Address already in use" in server.process.read_log()
