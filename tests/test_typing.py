"""The domain packages listed in ``[tool.mypy]`` (pyproject.toml) type-check under ``mypy --strict``, and the central
types stay typed: no ``catalog`` parameter is ``Any`` and the backend interface names its scene, route and plan."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "simready"


@pytest.mark.slow
def test_domain_packages_are_mypy_strict_clean() -> None:
    # The file list, strictness and the untyped libraries are pyproject.toml's; the cache is .mypy_cache (ignored).
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "", result.stdout


def _loose(annotation: ast.expr | None) -> bool:
    """``Any``, ``object`` or either ``| None``: an annotation that says nothing about a catalog."""
    if annotation is None:
        return True
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = (annotation.left, annotation.right)
        return any(isinstance(s, ast.Constant) and s.value is None for s in sides) and any(_loose(s) for s in sides
                                                                                            if not isinstance(s, ast.Constant))
    return isinstance(annotation, ast.Name) and annotation.id in ("Any", "object")


def test_every_catalog_parameter_is_a_catalog() -> None:
    loose = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "catalog" not in text:
            continue
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                loose += [f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({a.arg})" for a in args
                          if a.arg == "catalog" and _loose(a.annotation)]
    assert not loose, "annotate these with simready.catalog.catalog.Catalog:\n" + "\n".join(loose)


def test_backend_interface_names_scene_route_and_plan() -> None:
    from typing import get_type_hints

    from simready.catalog.catalog import Catalog
    from simready.sim.backend import Backend
    from simready.sim.controllers.planner import Plan, RouteTable
    from simready.sim.core.scene import Scene
    from simready.sim.core.state import SimState

    namespace = {"Scene": Scene, "RouteTable": RouteTable, "Plan": Plan, "Catalog": Catalog}
    assert get_type_hints(Backend.__init__, localns=namespace)["scene"] is Scene
    hints = get_type_hints(Backend.advance, localns=namespace)
    assert (hints["state"], hints["route"], hints["plan"]) == (SimState, RouteTable, Plan)
