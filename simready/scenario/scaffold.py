"""``simready scenario new-intent NAME --out FILE.py``: a working, commented program to start an intent from.

The file (``templates/intent_program.py.txt``, ``str.format`` fields ``name``,
``abbrev``, ``class_name``) is a small real intent — a car standing beside the
ego's lane pulls out in front of it — written on :mod:`simready.scenario.api`
alone, so it samples on every template with a same-direction lane pair, shipped
or imported. It is written atomically and never over an existing file.
"""

from __future__ import annotations

from pathlib import Path

from simready.common.atomic import write_text_atomic
from simready.common.errors import OutputExistsError
from simready.scenario.program_files import INTENT_ID, ProgramError

TEMPLATE = Path(__file__).parent / "templates" / "intent_program.py.txt"


def scaffold_text(name: str) -> str:
    """The program file for intent ``name``."""
    if not INTENT_ID.match(name):
        raise ProgramError("NAME", "", f"intent id {name!r} is not [a-z][a-z0-9_]* (≤ 64 characters)")
    abbrev = "".join(w[0] for w in name.split("_") if w)[:12]
    class_name = "".join(w.capitalize() for w in name.split("_") if w)
    return TEMPLATE.read_text(encoding="utf-8").format(name=name, abbrev=abbrev, class_name=class_name)


def write_scaffold(name: str, out: Path) -> Path:
    text = scaffold_text(name)
    if out.suffix != ".py":
        raise ProgramError(out, "", "a program file ends in .py")
    if out.exists():
        raise OutputExistsError(out, "", "exists; new-intent never overwrites a file")
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(out, text)
