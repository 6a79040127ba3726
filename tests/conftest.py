"""Fixtures every test shares."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def _user_programs_forgotten():
    """Programs loaded from files are registered per process by intent id (a second file defining the same id is
    refused): each test starts without those an earlier test in the same worker loaded."""
    yield
    module = sys.modules.get("simready.scenario.program_files")
    if module is not None:
        module.USER_PROGRAMS.clear()
