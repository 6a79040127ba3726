"""A suite checked in full when it loads (issue 27): intents that exist and belong to their templates, a non-empty
intent map, ``observation.set`` keys that reach a field. Each of these loaded and ``simready status`` exited 0;
the error came at materialization."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from simready.common import paths
from simready.scenario.suite import SuiteError, load_suite
from simready.runner.suite_check import check_suite

SUITE = paths.DATA_DIR / "suites" / "default.yaml"


def _suite(tmp_path: Path, edit: Callable[[dict], None]) -> Path:
    doc = yaml.safe_load(SUITE.read_text())
    edit(doc)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_default_suite_checks() -> None:
    assert check_suite(SUITE).suite_id == "default"


LOAD = {
    "unknown intent": (lambda d: d["templates"]["two_lane_arterial"].update(no_such_intent=1),
                       "templates.two_lane_arterial.no_such_intent",
                       "unknown intent (known: child_between_parked_cars, cut_in, "),
    "empty intent map": (lambda d: d["templates"].update(two_lane_arterial={}),
                         "templates.two_lane_arterial", "at least 1 item"),
}


@pytest.mark.parametrize("edit,field,says", LOAD.values(), ids=LOAD.keys())
def test_a_suite_naming_what_does_not_exist_does_not_load(tmp_path: Path, edit, field: str, says: str) -> None:
    with pytest.raises(SuiteError) as err:
        load_suite(_suite(tmp_path, edit))
    assert err.value.field == field and says in err.value.reason and "\n" not in err.value.one_line()


CHECK = {
    "intent of another template": (lambda d: d["templates"]["two_lane_arterial"].update(signalized_left_turn=1),
                                   "templates.two_lane_arterial.signalized_left_turn",
                                   "cannot run on two_lane_arterial: no junction joining ≥ 3 roads with traffic lights"),
    "set key of no sensor": (lambda d: d["observation"].update(set=["camera.no_such_field=3"]), "observation.set",
                             "camera.no_such_field: matches no sensor field"),
    "set value refused": (lambda d: d["observation"].update(set=["camera.width_px=1000000000000"]), "observation.set",
                          "width_px"),
    "set without '='": (lambda d: d["observation"].update(set=["camera.width_px"]), "observation.set",
                        "expected key=value"),
    "atmosphere field unknown": (lambda d: d["observation"].update(set=["atmosphere.bogus=1"]), "observation.set",
                                 "unknown atmosphere field"),
}


@pytest.mark.parametrize("edit,field,says", CHECK.values(), ids=CHECK.keys())
def test_a_suite_that_cannot_work_on_its_templates_is_refused(tmp_path: Path, edit, field: str, says: str) -> None:
    path = _suite(tmp_path, edit)
    load_suite(path)  # the file alone is well formed
    with pytest.raises(SuiteError) as err:
        check_suite(path)
    assert err.value.source == str(path) and err.value.field == field, err.value.one_line()
    assert says in err.value.reason and "\n" not in err.value.one_line(), err.value.one_line()


@pytest.mark.parametrize("edit,says", [
    (LOAD["unknown intent"][0], "templates.two_lane_arterial.no_such_intent: unknown intent"),
    (CHECK["intent of another template"][0], "templates.two_lane_arterial.signalized_left_turn: signalized_left_turn cannot run on two_lane_arterial"),
    (CHECK["set key of no sensor"][0], "observation.set: "),
], ids=["unknown intent", "intent of another template", "bogus observation.set"])
@pytest.mark.slow
def test_simready_status_refuses_such_a_suite_in_one_line(tmp_path: Path, edit, says: str) -> None:
    """Was: exit 0 and a status report; the error came when the stage materialized."""
    path = _suite(tmp_path, edit)
    env = {**os.environ, "PYTHONPATH": str(paths.PROJECT_ROOT), "SIMREADY_SUITE": str(path),
           "DAGSTER_HOME": str(tmp_path / "home"), "SIMREADY_ARTIFACTS": str(tmp_path / "artifacts")}
    done = subprocess.run([sys.executable, "-m", "simready.cli", "status"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"error: {path}: {says}"), done.stderr
