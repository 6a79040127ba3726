"""Scenario programs: the built-in intents, one module per intent, and the registry that names them.

``PROGRAMS`` maps a built-in intent id to its program; :func:`load_programs`
adds the programs of user files (:mod:`simready.scenario.program_files`);
:func:`program` looks either up and raises
:class:`~simready.scenario.program_base.ScenarioError` for an unknown
intent; :func:`coverage_of` gives an intent's coverage (a built-in's
``data/coverage/<intent>.yaml``, a user program's own declaration).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from simready.scenario.coverage import CoverageSpec
from simready.scenario.coverage_file import load_coverage
from simready.scenario.program_base import IntentProgram, ScenarioError
from simready.scenario.program_files import USER_PROGRAMS, Provenance, register_program_files
from simready.scenario.programs.cut_in import CutIn
from simready.scenario.programs.lead_vehicle import LeadVehicleBrakes
from simready.scenario.programs.left_turn import SignalizedLeftTurn, UnprotectedLeftTurn
from simready.scenario.programs.pedestrian import PedestrianEmergesBehindVan

PROGRAMS: dict[str, IntentProgram] = {
    p.name: p
    for p in (
        PedestrianEmergesBehindVan(),
        LeadVehicleBrakes(),
        CutIn(),
        SignalizedLeftTurn(),
        UnprotectedLeftTurn(),
    )
}


def known() -> list[str]:
    """Every intent id this process can sample: the built-ins and the loaded program files', sorted."""
    return sorted({*PROGRAMS, *USER_PROGRAMS})


def program(intent: str) -> IntentProgram:
    found = PROGRAMS.get(intent) or USER_PROGRAMS.get(intent)
    if found is None:
        raise ScenarioError("intent", "", f"unknown intent {intent!r} (known: {', '.join(known())})")
    return found


def load_programs(files: Iterable[str | Path]) -> list[str]:
    """Load and register program files (see :func:`~simready.scenario.program_files.register_program_files`)."""
    return register_program_files(files, PROGRAMS)


def provenance(intent: str) -> Provenance | None:
    """The file and content hash of a user program; None for a built-in."""
    user = USER_PROGRAMS.get(intent)
    return None if user is None else user.provenance


def coverage_of(intent: str) -> CoverageSpec:
    user = USER_PROGRAMS.get(intent)
    return user.coverage_spec if user is not None else load_coverage(intent)


__all__ = ["PROGRAMS", "IntentProgram", "ScenarioError", "coverage_of", "known", "load_programs", "program",
           "provenance"]
