"""The public program interface: the built-in intents import nothing of simready's but ``simready.scenario.api``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from shapely.geometry import box

from simready.scenario import api

PROGRAMS_DIR = Path(api.__file__).parent / "programs"
#: Every built-in program, rewritten on the interface (issue 25): a module, or a package whose modules import the
#: interface and one another.
ON_THE_INTERFACE = ("cut_in.py", "lead_vehicle.py", "left_turn.py", "pedestrian")


def simready_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("simready"):
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("simready")]
    return out


@pytest.mark.parametrize("name", ON_THE_INTERFACE)
def test_builtin_programs_import_only_the_interface(name: str) -> None:
    path = PROGRAMS_DIR / name
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    own = f"simready.scenario.programs.{name}"
    imports = {m for f in files for m in simready_imports(f) if not (path.is_dir() and m.startswith(own + "."))}
    assert imports == {"simready.scenario.api"}


def test_shipped_user_programs_import_only_the_interface() -> None:
    files = sorted((Path(__file__).parents[1] / "data" / "programs").glob("*.py"))
    for f in files:
        assert set(simready_imports(f)) <= {"simready.scenario.api"}, f


def test_every_exported_name_exists() -> None:
    missing = [n for n in api.__all__ if not hasattr(api, n)]
    assert not missing


def test_behind_in_plan_view() -> None:
    van = box(4.0, -1.0, 9.0, 1.0)
    assert api.behind(van, (12.0, 0.0), (0.0, 0.0))
    assert not api.behind(van, (12.0, 5.0), (0.0, 0.0))
    assert not api.behind(van, box(11.0, -3.0, 12.0, 0.0), (0.0, 0.0))  # one corner peeks out
    assert api.behind(van, box(11.0, -0.5, 12.0, 0.5), (0.0, 0.0))


def test_gap_and_headway_are_inverse() -> None:
    assert api.time_headway(api.gap_for_headway(1.5, 12.0), 12.0) == pytest.approx(1.5)
    assert api.time_headway(5.0, 0.0) == float("inf")
    assert api.arrival_time(20.0, 10.0) == 2.0


@pytest.mark.parametrize("intent", ["cut_in", "lead_vehicle_brakes", "signalized_left_turn", "unprotected_left_turn"])
def test_every_rewritten_program_proposes_and_baselines(intent: str) -> None:
    from simready.scenario.baseline import run_baseline
    from simready.scenario.generator import generate
    from simready.scenario.programs import program

    template = program(intent).default_template
    assert generate(template, intent, 1).manifests
    assert run_baseline(template, intent, 5).coverage.proposals == 5
