"""S3 over HTTP: moto's server mode (``python -m moto.server``), every object in memory."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from simready.testing.servers.process import HOST, ManagedProcess, Server, http_answers, start_on_free_port


def s3_env(endpoint_url: str) -> dict[str, str]:
    """Environment for boto3 (>= 1.28 reads AWS_ENDPOINT_URL) to use the endpoint with dummy keys."""
    return {
        "AWS_ENDPOINT_URL": endpoint_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


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
        self.process.wait_ready(lambda: http_answers(self.endpoint_url), self.timeout_s)
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

    proc, port = start_on_free_port(launch, lambda port: http_answers(url(port)), timeout_s)
    with proc:
        yield S3Server(host=HOST, port=port, process=proc, startup_s=time.monotonic() - t0,
                       endpoint_url=url(port), timeout_s=timeout_s)
