"""Scenario programs, one module per intent, and the registry that names them.

``PROGRAMS`` maps an intent id to its program; :func:`program` looks one up
and raises :class:`~simready.scenario.program_base.ScenarioError` for an
unknown intent.
"""

from __future__ import annotations

from simready.scenario.program_base import IntentProgram, ScenarioError
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


def program(intent: str) -> IntentProgram:
    if intent not in PROGRAMS:
        raise ScenarioError("intent", "", f"unknown intent {intent!r} (known: {', '.join(sorted(PROGRAMS))})")
    return PROGRAMS[intent]


__all__ = ["PROGRAMS", "IntentProgram", "ScenarioError", "program"]
