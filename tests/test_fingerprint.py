"""Restructuring changes no byte (issue 13): two samples through every stage hash as recorded.

See :mod:`tests.fingerprint` for what is fingerprinted and how to record it again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import fingerprint

pytestmark = pytest.mark.slow


def test_every_stage_writes_the_recorded_bytes(fingerprinted: tuple[Path, dict[str, str]]) -> None:
    want = json.loads(fingerprint.RECORD.read_text())
    _, got = fingerprinted  # built once per run (tests/conftest.py), test_release's suite reads the same samples
    assert sorted(got) == sorted(want)
    differ = sorted(k for k in want if got[k] != want[k])
    assert not differ, differ
