"""Dagster's webserver (``python -m dagster_webserver``) on a free port, for the browser tests."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from simready.testing.servers.process import HOST, ManagedProcess, http_answers, start_on_free_port


@contextlib.contextmanager
def dagster_webserver(workspace: str | os.PathLike[str], env: Mapping[str, str], log_path: str | os.PathLike[str],
                      timeout_s: float = 60.0) -> Iterator[str]:
    """``python -m dagster_webserver -w workspace`` on ``127.0.0.1:<free port>`` with ``env`` (its
    ``DAGSTER_HOME``), run from the workspace file's folder; yields the UI's base URL; stopped on exit."""
    workspace = Path(workspace).resolve()

    def launch(port: int) -> ManagedProcess:
        argv = [sys.executable, "-m", "dagster_webserver", "-h", HOST, "-p", str(port), "-w", str(workspace)]
        return ManagedProcess(argv, log_path=log_path, env=env, cwd=workspace.parent, name="dagster-webserver")

    proc, port = start_on_free_port(launch, lambda port: http_answers(f"http://{HOST}:{port}/server_info"),
                                    timeout_s)
    with proc:
        yield f"http://{HOST}:{port}"
