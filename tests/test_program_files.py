"""Programs from the user's files: load, bad input as one line, provenance, the new-intent scaffold."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from simready.common import paths
from simready.scenario.program_files import ProgramError, load_program_file
from simready.scenario.programs import load_programs, program
from simready.scenario.scaffold import scaffold_text

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simready.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("prog") / "pulls_out.py"
    r = _cli("scenario", "new-intent", "pulls_out", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


BAD = {
    "syntax": ("from simready.scenario.api import IntentProgram\n\nclass X(IntentProgram:\n    pass\n",
               "line 3", "syntax error"),
    "nothing": ("import math\nVALUE = math.pi\n", "exports", "nothing usable exported"),
    "raises": ("from simready.scenario.api import IntentProgram\nraise RuntimeError('boom')\n", "line 2",
               "raised RuntimeError while importing: boom"),
    "abstract": ("from simready.scenario.api import IntentProgram\n\nclass X(IntentProgram):\n    name = 'x'\n",
                 "exports", "nothing usable exported"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_program_file_is_one_line_nonzero_and_writes_nothing(case: str, tmp_path: Path) -> None:
    text, where, reason = BAD[case]
    f = tmp_path / f"{case}.py"
    f.write_text(text)
    out = tmp_path / "out"
    r = _cli("scenario", "sample", "--programs", str(f), "--intent", "x", "--template", "two_lane_arterial",
             "--n", "1", "--out", str(out), "--quiet")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(f) in lines[0] and where in lines[0] and reason in lines[0]
    assert not out.exists() or not any(out.iterdir())


def test_contract_declarations_are_checked(scaffold: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad_needs.py"
    bad.write_text(scaffold.read_text().replace('needs = ("multi_lane",)', 'needs = ("helipad",)'))
    with pytest.raises(ProgramError, match=r"pulls_out\.needs: unknown affordance 'helipad'"):
        load_program_file(bad)
    clash = tmp_path / "clash.py"
    clash.write_text(scaffold.read_text().replace('name = "pulls_out"', 'name = "cut_in"')
                     .replace('"intent": "pulls_out"', '"intent": "cut_in"'))
    with pytest.raises(ProgramError, match="built-in intent"):
        load_programs([clash])


@pytest.mark.slow
def test_a_program_that_raises_while_sampling_names_program_and_stage(scaffold: Path, tmp_path: Path) -> None:
    f = tmp_path / "raising.py"
    f.write_text(scaffold.read_text().replace('name = "pulls_out"', 'name = "raising_one"')
                 .replace('"intent": "pulls_out"', '"intent": "raising_one"')
                 .replace("        gap = in_cell_bin(", "        1 / 0\n        gap = in_cell_bin("))
    r = _cli("scenario", "sample", "--programs", str(f), "--intent", "raising_one", "--template", "two_lane_arterial",
             "--n", "1", "--out", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert f"{f}: raising_one.propose: raised ZeroDivisionError (line" in line


@pytest.mark.slow
def test_scaffold_samples_with_its_provenance(scaffold: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = _cli("scenario", "sample", "--programs", str(scaffold), "--intent", "pulls_out", "--template",
             "two_lane_arterial", "--n", "4", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    manifests = sorted(out.glob("tla-po-*.json"))
    assert len(manifests) == 4
    sha = hashlib.sha256(scaffold.read_bytes()).hexdigest()
    for m in manifests:
        realized = json.loads(m.read_text())["realized"]
        assert realized["program_sha256"] == sha and realized["program_file"] == "pulls_out.py"
        assert realized["intent_id"] == "pulls_out" and realized["t_decision_s"] > 0
    cells = json.loads((out / "coverage.json").read_text())["cells"]
    assert sum(c["accepted"] for c in cells) == 4 and len(cells) == 4


def test_scaffold_is_a_real_program_on_the_interface_only(scaffold: Path) -> None:
    text = scaffold.read_text()
    imports = [ln for ln in text.splitlines() if ln.startswith(("from simready", "import simready"))]
    assert imports == ["from simready.scenario.api import ("]
    compile(text, str(scaffold), "exec")
    with pytest.raises(ProgramError, match="not \\[a-z\\]"):
        scaffold_text("Bad-Name")


@pytest.mark.slow
def test_new_intent_never_overwrites(scaffold: Path) -> None:
    before = scaffold.read_bytes()
    r = _cli("scenario", "new-intent", "other", "--out", str(scaffold))
    assert r.returncode == 1 and "exists" in r.stderr
    assert scaffold.read_bytes() == before


def test_program_lookup_after_load(scaffold: Path) -> None:
    assert load_programs([scaffold]) == ["pulls_out"]
    assert program("pulls_out").name == "pulls_out"
    assert paths.PROJECT_ROOT.is_dir()


def test_a_suite_names_program_files_and_a_bad_one_is_one_line(scaffold: Path, tmp_path: Path) -> None:
    import yaml

    from simready.scenario.suite import SuiteError, load_suite

    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({"suite_id": "s", "batches": 1, "programs": [str(scaffold)],
                                     "templates": {"two_lane_arterial": {"pulls_out": 2}}}))
    assert load_suite(suite).intents_for("two_lane_arterial") == {"pulls_out": 2}
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    suite.write_text(yaml.safe_dump({"suite_id": "s", "batches": 1, "programs": [str(scaffold), str(broken)],
                                     "templates": {"two_lane_arterial": {"pulls_out": 2}}}))
    with pytest.raises(SuiteError) as err:
        load_suite(suite)
    line = err.value.one_line()
    assert line.startswith(f"{suite}: programs[1]: {broken}: line 1: syntax error") and "\n" not in line
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(yaml.safe_dump({"suite_id": "s", "batches": 1, "templates": {"two_lane_arterial": {"nope": 1}}}))
    with pytest.raises(SuiteError, match="unknown intent"):
        load_suite(unknown)


def test_shipped_programs_sample_on_their_templates() -> None:
    from simready.scenario.generator import generate

    files = sorted((ROOT / "data" / "programs").glob("*.py"))
    assert files
    for intent in load_programs(files):
        result = generate(program(intent).default_template, intent, 2)
        assert len(result.manifests) == 2, intent
        assert all(m.realized["program_sha256"] for m in result.manifests)


@pytest.mark.slow
def test_a_program_looping_past_its_budget_is_one_line(scaffold: Path, tmp_path: Path) -> None:
    f = tmp_path / "looping.py"
    f.write_text(scaffold.read_text().replace('name = "pulls_out"', 'name = "looping_one"')
                 .replace('"intent": "pulls_out"', '"intent": "looping_one"')
                 .replace("        gap = in_cell_bin(",
                          "        while timing.unit('spin') >= 0:\n            timing.record.clear()\n"
                          "        gap = in_cell_bin("))
    r = _cli("scenario", "sample", "--programs", str(f), "--intent", "looping_one", "--template", "two_lane_arterial",
             "--n", "1", "--out", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert f"{f}: looping_one.propose: drew from its random streams more than" in line and "budget" in line
