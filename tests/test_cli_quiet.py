"""The command line speaks for itself: no library banner or beta warning ahead of what a command prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _simready(*args: str, artifacts: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIMREADY_ARTIFACTS": str(artifacts)}
    return subprocess.run([sys.executable, "-m", "simready.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.slow
def test_pybullet_banner_is_not_printed(tmp_path: Path) -> None:
    # PyBullet's C extension prints "pybullet build time: ..." on stderr when imported; the nuScenes export imports it.
    bare = subprocess.run([sys.executable, "-c", "import pybullet"], capture_output=True, text=True, timeout=60)
    assert "pybullet build time" in bare.stderr + bare.stdout  # the banner this test is about exists
    done = _simready("export", "nuscenes", "--release", "nope", "--out", str(tmp_path / "out"), artifacts=tmp_path)
    assert done.returncode == 1
    assert "build time" not in done.stderr + done.stdout
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
